"""Builders for StableHLO (and CHLO) ops, with shape and type inference.

Every builder takes and returns ``Value``s and appends to the current
insertion point.  Builders check what StableHLO requires (equal shapes for
elementwise ops, valid dimensions); NumPy semantics such as broadcasting and
promotion are the tracing layer's job, not this one's.
"""
from __future__ import annotations

import numpy as np

from .core import Block, Operation, Region, Value, current_block, emit, insertion_point, int_literal
from .types import TensorType, i64_array


def _i64_list(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _same_shapes(name, values):
    shapes = {v.shape for v in values}
    if len(shapes) != 1:
        raise ValueError(f"{name}: operand shapes differ: {[v.shape for v in values]}")


# --- constants and generators -------------------------------------------------

def dense_attr(array: np.ndarray) -> str:
    """A ``dense<...>`` attribute holding ``array`` (hex, splat when uniform)."""
    array = np.asarray(array)
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    flat = np.ascontiguousarray(little).reshape(-1)
    if flat.size > 1 and np.all(flat.view(np.uint8).reshape(flat.size, -1) == flat[:1].view(np.uint8)):
        flat = flat[:1]
    data = np.ascontiguousarray(flat).tobytes().hex()
    return f'dense<"0x{data}"> : {TensorType(array.shape, array.dtype).mlir()}'


def opaque(value: Value) -> Value:
    """``value`` behind an optimization_barrier: the optimizer cannot use what it is (a mask a select of
    a derivative takes stays that select, not folded into one whose other lanes are 0 * NaN)."""
    return emit("stablehlo.optimization_barrier", [value], [value.type])[0]


def constant(array) -> Value:
    array = np.asarray(array)
    result = emit("stablehlo.constant", [], [TensorType(array.shape, array.dtype)],
                  {"value": dense_attr(array)})[0]
    result.owner.literal = array
    return result


def iota(shape, dtype, dimension: int) -> Value:
    return emit("stablehlo.iota", [], [TensorType(shape, dtype)],
                {"iota_dimension": f"{int(dimension)} : i64"})[0]


# --- elementwise ----------------------------------------------------------------

def unary(name: str, x: Value, dtype=None) -> Value:
    """An elementwise op with one operand, e.g. ``unary("stablehlo.sine", x)``."""
    if name == "stablehlo.not" and x.dtype == np.bool_:
        # The same as a comparison with false, which Enzyme 0.0.16 can take through a reverse-mode
        # loop (it has no rule for stablehlo.not there).
        return compare(x, constant(np.zeros(x.shape, np.bool_)), "EQ")
    return emit(name, [x], [x.type.with_dtype(dtype if dtype is not None else x.dtype)])[0]


def binary(name: str, x: Value, y: Value) -> Value:
    _same_shapes(name, [x, y])
    if x.dtype != y.dtype:
        raise TypeError(f"{name}: operand dtypes differ: {x.dtype} vs {y.dtype}")
    return emit(name, [x, y], [x.type])[0]


def compare(x: Value, y: Value, direction: str, compare_type: str | None = None) -> Value:
    """``direction`` is EQ/NE/LT/LE/GT/GE; ``compare_type`` FLOAT/TOTALORDER/SIGNED/UNSIGNED,
    by default the one the operands' element type calls for."""
    _same_shapes("compare", [x, y])
    if compare_type is None:
        compare_type = {"f": "FLOAT", "c": "FLOAT", "i": "SIGNED"}.get(x.dtype.kind, "UNSIGNED")
    return emit("stablehlo.compare", [x, y], [x.type.with_dtype(np.bool_)], {
        "comparison_direction": f"#stablehlo<comparison_direction {direction}>",
        "compare_type": f"#stablehlo<comparison_type {compare_type}>",
    })[0]


def select(pred: Value, on_true: Value, on_false: Value) -> Value:
    _same_shapes("select", [pred, on_true, on_false])
    return emit("stablehlo.select", [pred, on_true, on_false], [on_true.type])[0]


def convert(x: Value, dtype) -> Value:
    dtype = np.dtype(dtype)
    if dtype == x.dtype:
        return x
    if dtype.kind in "iu" and dtype != np.int64 and x.dtype.kind in "iu" and _from_a_counter(x):
        x = opaque(x)
    return emit("stablehlo.convert", [x], [x.type.with_dtype(dtype)])[0]


def _from_a_counter(x: Value) -> bool:
    """Whether ``x`` is computed from the counter of a loop around the code being built, plus or times
    constants.  Enzyme-JAX's loop raising computes such a value for all trips at once, and in integer
    types other than int64 gets their wrapping wrong (np.uint8(i) + np.uint8(250) read row 294 for row
    250 - 6 + 300; np.int8(i) + np.int8(120) and uint32 likewise: a helper's adversarial sweep): the
    value is kept from it (an optimization_barrier) before it becomes such a type."""
    return any(_start_kind(x, body, {}) == _COUNTER for body in _loop_bodies_around())


def _loop_bodies_around() -> list:
    """The bodies of the loops around the code being built, innermost first."""
    bodies, block = [], current_block()
    while block is not None:
        if block.loop_body:
            bodies.append(block)
        block = block.parent
    return bodies


def bitcast_convert(x: Value, dtype) -> Value:
    """The same bits as ``dtype``: to a narrower one, a new last axis holds each element's pieces
    (lowest address first); from a narrower one, the last axis (of the width ratio) goes."""
    old, new = x.dtype.itemsize, np.dtype(dtype).itemsize
    shape = x.shape + (old // new,) if new < old else x.shape[:-1] if new > old else x.shape
    if new > old and x.shape[-1:] != (new // old,):
        raise ValueError("bitcast_convert to a wider dtype needs a last axis of the width ratio")
    return emit("stablehlo.bitcast_convert", [x], [x.type.with_shape(shape).with_dtype(dtype)])[0]


def real(x: Value) -> Value:
    return unary("stablehlo.real", x, np.empty(0, x.dtype).real.dtype)


def imag(x: Value) -> Value:
    return unary("stablehlo.imag", x, np.empty(0, x.dtype).real.dtype)


def complex(re: Value, im: Value) -> Value:
    _same_shapes("complex", [re, im])
    dtype = np.result_type(re.dtype, np.complex64)
    return emit("stablehlo.complex", [re, im], [re.type.with_dtype(dtype)])[0]


# --- shape manipulation -------------------------------------------------------------

def broadcast_in_dim(x: Value, shape, dims) -> Value:
    shape, dims = tuple(shape), tuple(dims)
    if len(dims) != x.type.rank or any(x.shape[i] not in (1, shape[d]) for i, d in enumerate(dims)):
        raise ValueError(f"broadcast_in_dim: cannot map {x.shape} into {shape} along {dims}")
    if shape == x.shape and dims == tuple(range(len(shape))):
        return x
    result = emit("stablehlo.broadcast_in_dim", [x], [x.type.with_shape(shape)],
                  {"broadcast_dimensions": i64_array(dims)})[0]
    literal = getattr(x.owner, "literal", None)  # (a block argument has none)
    if literal is not None and list(dims) == sorted(dims):  # np.ones(n, bool) is known too (a view: no copy)
        axes = iter(literal.shape)
        result.owner.literal = np.broadcast_to(
            literal.reshape([next(axes) if d in dims else 1 for d in range(len(shape))]), shape)
    return result


def reshape(x: Value, shape) -> Value:
    shape = tuple(shape)
    if int(np.prod(shape, dtype=np.int64)) != x.type.size:
        raise ValueError(f"reshape: cannot reshape {x.shape} into {shape}")
    if shape == x.shape:
        return x
    return emit("stablehlo.reshape", [x], [x.type.with_shape(shape)])[0]


def transpose(x: Value, perm) -> Value:
    perm = tuple(int(p) for p in perm)
    if sorted(perm) != list(range(x.type.rank)):
        raise ValueError(f"transpose: {perm} is not a permutation of {x.type.rank} axes")
    if perm == tuple(range(x.type.rank)):
        return x
    return emit("stablehlo.transpose", [x], [x.type.with_shape([x.shape[p] for p in perm])],
                {"permutation": i64_array(perm)})[0]


def slice(x: Value, start, limit, strides=None) -> Value:
    strides = strides or [1] * x.type.rank
    shape = [max(0, -(-(hi - lo) // st)) for lo, hi, st in zip(start, limit, strides)]
    if list(start) == [0] * x.type.rank and list(limit) == list(x.shape) and set(strides) <= {1}:
        return x
    return emit("stablehlo.slice", [x], [x.type.with_shape(shape)], {
        "start_indices": i64_array(start), "limit_indices": i64_array(limit),
        "strides": i64_array(strides)})[0]


def dynamic_slice(x: Value, starts, sizes) -> Value:
    if any(int(s) > n for s, n in zip(sizes, x.shape)):  # (a read of an empty axis, which never runs: a
        return constant(np.zeros(tuple(sizes), x.dtype))  # branch on its length guards it, or a check fails)
    single = all(int(s) == 1 for s in sizes)
    x, written = (_before_element_writes if single else _block_after_element_writes)(x, starts, sizes)
    return written if written is not None else _dynamic_slice_op(x, starts, sizes)


def _dynamic_slice_op(x: Value, starts, sizes) -> Value:
    starts = _shielded_starts(x, starts, sizes)
    return emit("stablehlo.dynamic_slice", [x, *starts], [x.type.with_shape(sizes)],
                {"slice_sizes": i64_array(sizes)})[0]


# How a start index inside a loop's body changes from trip to trip.
_FIXED, _COUNTER, _PER_TRIP = "fixed", "counter", "per trip"
_FOLLOWS_OPERAND = {"stablehlo.convert", "stablehlo.reshape", "stablehlo.negate"}


def _shielded_starts(x: Value, starts, sizes, write=False) -> list:
    """The starts of a dynamic_slice (``write``: a dynamic_update_slice) of ``x`` inside a loop's body,
    with those computed per trip of that loop or of one around it (read from data, or through a select:
    not a counter plus or times constants) behind an optimization_barrier, except in a one-lane read of
    a vector.  Enzyme-JAX's loop raising (greedy_while_loop_batch_fission, enzyme-ad 0.0.16) turns such
    a slice into a gather over all trips that reads the axes whose starts do not change from 0
    (``g[1, idx[j]]``, and ``g[-1:][0, j - 1]`` once folding moves the view's slice into the read, read
    row 0; an argument the loop passes on unchanged counts as not changing, and an outer loop sees an
    inner one's slices once that one is raised), and takes one lane along a changing start's axis where
    the slice spans more (``x[:i - 2]``: garbage).  Writes went wrong the same way (``out[2, j - 1] =
    x[j]`` wrote row 0), and a vector written one lane at a time (``y[j - 1] = x[j] + y[j]``) kept the
    pipeline busy past its time limit.  Behind the barrier the pattern leaves the slice in the loop and
    raises the rest (passes/pipelines.py)."""
    bodies = _loop_bodies_around()
    if not bodies or not write and x.type.rank == 1 and all(int(size) == 1 for size in sizes):
        return starts
    known = {id(body): {} for body in bodies}
    return [emit("stablehlo.optimization_barrier", [s], [s.type])[0]
            if any(_start_kind(s, body, known[id(body)]) == _PER_TRIP for body in bodies) else s
            for s in starts]


_KIND_DEPTH = 32  # an index computed through more operations than this counts as per trip


def _start_kind(index: Value, body: Block, known: dict, depth: int = 0) -> str:
    """_FIXED (the same on every trip of the loop whose body is ``body``), _COUNTER (an argument of
    the body or of a loop's inside it, plus or times constants) or _PER_TRIP; ``known`` memoizes."""
    if int_literal(index) is not None or not (index.block is not None and index.block.within(body)):
        return _FIXED
    op = index.owner
    if not isinstance(op, Operation):  # an argument of this loop's body, or of a loop inside it
        return _COUNTER if op.loop_body else _PER_TRIP
    if id(index) in known:
        return known[id(index)]
    if depth > _KIND_DEPTH:
        return _PER_TRIP
    kinds = [_start_kind(v, body, known, depth + 1) for v in op.operands]
    scaled = op.name == "stablehlo.multiply" and any(int_literal(v) is not None for v in op.operands)
    if all(k == _FIXED for k in kinds):
        kind = _FIXED
    elif op.name in _FOLLOWS_OPERAND:
        kind = kinds[0]
    elif (op.name in ("stablehlo.add", "stablehlo.subtract") or scaled) and all(
            k == _COUNTER or int_literal(v) is not None for k, v in zip(kinds, op.operands)):
        kind = _COUNTER
    else:
        kind = _PER_TRIP
    known[id(index)] = kind
    return kind


_ELEMENT_WRITES_LOOKED_THROUGH = 64  # (a read after many unrolled writes looks at the last ones only)


def _before_element_writes(x: Value, starts, sizes) -> tuple[Value, Value | None]:
    """One element read (``sizes`` all 1) from the result of dynamic_update_slices: (the array to read
    it from, or the element itself).  Past a write that misses the element at positions known at
    trace time, it is read from the array before that write; past a one-element write at a traced
    position, from the array before it, and a select takes the written value where the (clamped)
    positions are the same.
    So the write's result need not be materialized beside the array it updated, which XLA does by
    copying the whole array (an element loop that writes ``A[i, j]`` then reads ``A[j, j]``)."""
    if not sizes:
        return x, None
    wanted = None
    for _ in range(_ELEMENT_WRITES_LOOKED_THROUGH):
        write = x.owner
        if not (isinstance(write, Operation) and write.name == "stablehlo.dynamic_update_slice"):
            break
        wanted = wanted or [_clamped_index(q, dim) for q, dim in zip(starts, x.shape)]
        base, update, written_at = write.operands[0], write.operands[1], write.operands[2:]
        same, offsets, elsewhere, undecided = [], [], False, False
        for dim, width, p, q in zip(base.shape, update.shape, written_at, wanted):
            p = _clamped_index(p, dim - width + 1)  # (a block's start is clamped so that it fits)
            if isinstance(p, int) and isinstance(q, int):
                elsewhere |= not p <= q < p + width
                offsets.append(q - p)
            elif width == 1:
                same.append(compare(_index_value(p), _index_value(q), "EQ"))
                offsets.append(0)
            else:
                undecided = True
        if elsewhere:
            x = base
            continue
        if undecided:
            break
        written = reshape(slice(update, offsets, [k + 1 for k in offsets]), sizes)
        if not same:
            return x, written
        before = _dynamic_slice_op(base, starts, sizes)
        return x, select(broadcast_in_dim(all_of(*same), tuple(sizes), ()), written, before)
    return x, None


_BLOCK_PATCHES = 8  # (a block read after more one-element writes inside it is read from their result)


def _block_after_element_writes(x: Value, starts, sizes) -> tuple[Value, Value | None]:
    """A block read from the result of one-element writes (dynamic_update_slice): (the array to read
    it from, or the block).  It is read from the array before them, and each written element (of at
    most _BLOCK_PATCHES that may fall inside: writes at positions known at trace time to miss the
    block are passed over) put into the block, in order, where it falls inside.  As for an element
    read (``_before_element_writes``), the writes' results then need not be materialized beside the
    array they updated: Gram-Schmidt's ``R[k, k] = ...`` then a write through ``R[k, k + 1:]`` (which
    reads row k for the lanes it keeps) made XLA copy R on every step.  All the writes of a chain are
    looked through, not only the last: reading from the one before the last kept that one live, and
    XLA copied Nussinov's table (three writes to ``table[i, j]``, then its row and column read)."""
    wanted, patches, read_from = None, [], x
    for _ in range(_ELEMENT_WRITES_LOOKED_THROUGH):
        write = read_from.owner
        if not (isinstance(write, Operation) and write.name == "stablehlo.dynamic_update_slice"):
            break
        base, update, written_at = write.operands[0], write.operands[1], write.operands[2:]
        if any(int(w) != 1 for w in update.shape):
            break
        wanted = wanted or [_clamped_index(q, dim - int(size) + 1) for q, dim, size in zip(starts, x.shape, sizes)]
        offsets, inside, elsewhere = [], [], False
        for dim, size, p, q in zip(base.shape, sizes, written_at, wanted):
            p = _clamped_index(p, dim)
            if isinstance(p, int) and isinstance(q, int):
                elsewhere |= not q <= p < q + int(size)
                offsets.append(p - q)
                continue
            offset = binary("stablehlo.subtract", _index_value(p), _index_value(q))
            offsets.append(offset)
            if int(size) < dim:
                inside.append(binary("stablehlo.and", compare(offset, _index_value(0), "GE"),
                                     compare(offset, _index_value(int(size)), "LT")))
        if not elsewhere:
            if len(patches) == _BLOCK_PATCHES:
                return x, None
            patches.append((update, offsets, inside))
        read_from = base
    if not patches:
        return read_from, None
    block = _dynamic_slice_op(read_from, starts, sizes)
    for update, offsets, inside in reversed(patches):  # the earliest write first
        patched = dynamic_update_slice(block, update, [_index_value(o) for o in offsets])
        if inside:
            patched = select(broadcast_in_dim(all_of(*inside), tuple(sizes), ()), patched, block)
        block = patched
    return x, block


def all_of(*conditions: Value) -> Value:
    """The conjunction of i1 values (at least one)."""
    result = conditions[0]
    for other in conditions[1:]:
        result = binary("stablehlo.and", result, other)
    return result


def _clamped_index(index: Value, dim: int):
    """A start index as dynamic_slice clamps it into [0, dim - 1]: an int when known at trace time."""
    literal = getattr(index.owner, "literal", None)
    if literal is not None:
        return int(min(max(int(literal), 0), dim - 1))
    index = convert(index, np.int64)
    low, high = constant(np.asarray(0, np.int64)), constant(np.asarray(dim - 1, np.int64))
    return binary("stablehlo.minimum", binary("stablehlo.maximum", index, low), high)


def _index_value(index) -> Value:
    return constant(np.asarray(index, np.int64)) if isinstance(index, int) else index


def dynamic_update_slice(x: Value, update: Value, starts) -> Value:
    starts = _shielded_starts(x, starts, update.shape, write=True)
    return emit("stablehlo.dynamic_update_slice", [x, update, *starts], [x.type])[0]


def concatenate(values, dimension: int) -> Value:
    first = values[0]
    shape = list(first.shape)
    shape[dimension] = sum(v.shape[dimension] for v in values)
    return emit("stablehlo.concatenate", list(values), [first.type.with_shape(shape)],
                {"dimension": f"{int(dimension)} : i64"})[0]


def pad(x: Value, padding_value: Value, low, high, interior=None) -> Value:
    interior = interior or [0] * x.type.rank
    shape = [lo + hi + d + max(0, d - 1) * it for d, lo, hi, it in zip(x.shape, low, high, interior)]
    return emit("stablehlo.pad", [x, padding_value], [x.type.with_shape(shape)], {
        "edge_padding_low": i64_array(low), "edge_padding_high": i64_array(high),
        "interior_padding": i64_array(interior)})[0]


def reverse(x: Value, dims) -> Value:
    dims = [int(d) for d in dims]
    if not dims:
        return x
    return emit("stablehlo.reverse", [x], [x.type], {"dimensions": i64_array(dims)})[0]


# --- contractions and reductions ------------------------------------------------------

def dot_general(a: Value, b: Value, batch=((), ()), contract=((), ()), dtype=None) -> Value:
    """Result dims: batch dims, then a's free dims, then b's free dims (StableHLO order)."""
    (ba, bb), (ca, cb) = batch, contract
    free_a = [d for d in range(a.type.rank) if d not in ba and d not in ca]
    free_b = [d for d in range(b.type.rank) if d not in bb and d not in cb]
    for x, y in [*zip(ba, bb), *zip(ca, cb)]:
        if a.shape[x] != b.shape[y]:
            raise ValueError(f"dot_general: dimension {x} of {a.shape} does not match {y} of {b.shape}")
    shape = [a.shape[d] for d in ba] + [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    numbers = ", ".join(f"{k} = {_i64_list(v)}" for k, v in [
        ("lhs_batching_dimensions", ba), ("rhs_batching_dimensions", bb),
        ("lhs_contracting_dimensions", ca), ("rhs_contracting_dimensions", cb)] if v)
    return emit("stablehlo.dot_general", [a, b], [TensorType(shape, dtype or a.dtype)],
                {"dot_dimension_numbers": f"#stablehlo.dot<{numbers}>"})[0]


def _scalar_block(dtypes, count: int) -> Block:
    return Block([TensorType((), dt) for dt in dtypes] * count)


def region_op(name, operands, result_types, block_arg_dtypes, body, attributes=None, copies=2):
    """An op with one single-block region whose arguments are scalars.

    ``body(*block_args)`` builds the region's ops and returns the values for
    ``stablehlo.return``.  Used by reduce, sort and friends.
    """
    block = _scalar_block(block_arg_dtypes, copies)
    with insertion_point(block):
        emit_return(body(*block.arguments))
    return emit(name, operands, result_types, attributes, [Region([block])])


def reduce(inputs, inits, dims, body) -> list:
    """Reduce ``inputs`` over ``dims``; ``body(*accs, *elems)`` combines scalars."""
    dims = sorted(int(d) for d in dims)
    shape = [d for i, d in enumerate(inputs[0].shape) if i not in dims]
    dtypes = [v.dtype for v in inputs]
    # StableHLO orders region arguments as (acc_1..acc_n, elem_1..elem_n).
    return region_op("stablehlo.reduce", [*inputs, *inits], [TensorType(shape, dt) for dt in dtypes],
                     dtypes, body, {"dimensions": i64_array(dims)})


def sort(inputs, dimension: int, comparator, is_stable=True) -> list:
    """``comparator(a_0, b_0, a_1, b_1, ...)`` returns the scalar "a before b" predicate."""
    dtypes = [v.dtype for v in inputs]
    block = Block([TensorType((), dt) for dt in dtypes for _ in range(2)])
    with insertion_point(block):
        emit_return([comparator(*block.arguments)])
    return emit("stablehlo.sort", list(inputs), [v.type for v in inputs], {
        "dimension": f"{int(dimension)} : i64", "is_stable": "true" if is_stable else "false",
    }, [Region([block])])


def return_(values):
    emit("func.return", list(values), [])


def _dims_attr(kind, fields) -> str:
    body = ", ".join(f"{k} = {_i64_list(v) if isinstance(v, (list, tuple)) else v}"
                     for k, v in fields if not isinstance(v, (list, tuple)) or v)
    return f"#stablehlo.{kind}<{body}>"


def gather(operand: Value, indices: Value, offset_dims, collapsed, start_index_map, index_vector_dim,
           slice_sizes, result_shape) -> Value:
    return emit("stablehlo.gather", [operand, indices], [operand.type.with_shape(result_shape)], {
        "dimension_numbers": _dims_attr("gather", [
            ("offset_dims", offset_dims), ("collapsed_slice_dims", collapsed),
            ("start_index_map", start_index_map), ("index_vector_dim", index_vector_dim)]),
        "indices_are_sorted": "false",
        "slice_sizes": i64_array(slice_sizes)})[0]


def scatter(operand: Value, indices: Value, updates: Value, window_dims, inserted, to_operand,
            index_vector_dim, combine=None) -> Value:
    """Scatter ``updates`` into ``operand``; ``combine(old, new)`` (scalar values) defaults to replace."""
    block = _scalar_block([operand.dtype], 2)
    with insertion_point(block):
        old, new = block.arguments
        emit_return([combine(old, new) if combine else new])
    return emit("stablehlo.scatter", [operand, indices, updates], [operand.type], {
        "indices_are_sorted": "false",
        "scatter_dimension_numbers": _dims_attr("scatter", [
            ("update_window_dims", window_dims), ("inserted_window_dims", inserted),
            ("scatter_dims_to_operand_dims", to_operand), ("index_vector_dim", index_vector_dim)]),
        "unique_indices": "false"}, [Region([block])])[0]


# --- transforms, loops and foreign calls ------------------------------------------------------

def fft(x: Value, fft_type: str, lengths) -> Value:
    """``stablehlo.fft`` over the trailing ``len(lengths)`` dims.  ``fft_type`` is FFT or IFFT
    (complex to complex; IFFT includes the 1/n factor), RFFT (real to the n//2+1 non-negative
    frequencies) or IRFFT (those frequencies back to n reals, with the 1/n factor)."""
    lengths = [int(n) for n in lengths]
    shape, dtype = list(x.shape), x.dtype
    if fft_type == "RFFT":
        shape[-1], dtype = lengths[-1] // 2 + 1, np.result_type(x.dtype, np.complex64)
    elif fft_type == "IRFFT":
        shape[-1], dtype = lengths[-1], np.empty(0, x.dtype).real.dtype
    return emit("stablehlo.fft", [x], [TensorType(shape, dtype)], {
        "fft_type": f"#stablehlo<fft_type {fft_type}>", "fft_length": i64_array(lengths)})[0]


SCAN_BLOCK = 16  # lanes scanned together at each level of a long scan


def prefix_scan(v: Value, axis: int, combine, identity: Value) -> Value:
    """Inclusive prefix scan along ``axis`` by ``combine`` (an associative builder of two values, the
    earlier lanes' first), ``identity`` its 0-d neutral value.  A long axis is cut into blocks of SCAN_BLOCK lanes: each block
    is scanned, the blocks' totals are scanned the same way (one level up), and each block is combined
    with the total of the blocks before it.  That is about log2(SCAN_BLOCK) passes over the data where
    scanning the whole axis at once takes log2(n), each of which XLA fuses with all the passes before
    it (a 120,000-lane cumsum: 11 ms at once, NumPy 0.2 ms)."""
    n = v.shape[axis]
    if n <= SCAN_BLOCK:
        return _scan_in_steps(v, axis, combine, identity)
    rank, shape = v.type.rank, v.shape
    blocks = -(-n // SCAN_BLOCK)
    padded = pad(v, identity, [0] * rank, [blocks * SCAN_BLOCK - n if d == axis else 0 for d in range(rank)])
    cut = shape[:axis] + (blocks, SCAN_BLOCK) + shape[axis + 1:]
    within = _scan_in_steps(reshape(padded, cut), axis + 1, combine, identity)
    last = [SCAN_BLOCK - 1 if d == axis + 1 else 0 for d in range(rank + 1)]
    totals = reshape(slice(within, last, cut), shape[:axis] + (blocks,) + shape[axis + 1:])
    # block b: the total of blocks 0 .. b - 1
    before = shifted_up(prefix_scan(totals, axis, combine, identity), axis, 1, identity)
    spread = broadcast_in_dim(before, cut, [d if d <= axis else d + 1 for d in range(rank)])
    whole = reshape(combine(spread, within), padded.shape)
    return slice(whole, [0] * rank, shape)


def _scan_in_steps(v: Value, axis: int, combine, identity: Value) -> Value:
    """Inclusive prefix scan along ``axis`` in log2(n) shifted combines (Hillis-Steele);
    every step is a pad and an elementwise op, which both AD modes differentiate."""
    step = 1
    while step < v.shape[axis]:
        v = combine(shifted_up(v, axis, step, identity), v)
        step *= 2
    return v


def shifted_up(v: Value, axis: int, step: int, identity: Value) -> Value:
    """``v`` moved ``step`` lanes up along ``axis``, the lanes it leaves taking ``identity``."""
    rank = v.type.rank
    limit = [k - step if d == axis else k for d, k in enumerate(v.shape)]
    return pad(slice(v, [0] * rank, limit), identity, [step if d == axis else 0 for d in range(rank)], [0] * rank)


def _layout_list(layouts) -> str:
    return "[" + ", ".join(f"dense<{_i64_list(dims) if len(dims) else ''}> : tensor<{len(dims)}xindex>"
                           for dims in layouts) + "]"


def custom_call(target: str, operands, result_types, *, attributes=None, operand_layouts=None,
                result_layouts=None, aliases=None, opaque=None, has_side_effect=False) -> list:
    """A typed-FFI ``stablehlo.custom_call`` (api_version 4) of the handler ``target``, or with
    ``opaque``, an untyped one (api_version 3) that passes that string to the handler.

    ``attributes`` maps the handler's attribute names to MLIR attribute text (``backend_config``
    is then a dictionary, which XLA passes to the handler); layouts are minor-to-major dimension
    orders, one per operand or result; ``aliases`` maps a result index to the index of the
    operand whose buffer that result may reuse; ``has_side_effect`` keeps XLA from removing,
    merging or hoisting the call.
    """
    if opaque is None:
        config = ", ".join(f"{k} = {v}" for k, v in (attributes or {}).items())
        props = {"call_target_name": f'"{target}"', "api_version": "4 : i32", "backend_config": f"{{{config}}}"}
    else:
        props = {"call_target_name": f'"{target}"', "api_version": "3 : i32", "backend_config": f'"{opaque}"'}
    if has_side_effect:
        props["has_side_effect"] = "true"
    if operand_layouts is not None:
        props["operand_layouts"] = _layout_list(operand_layouts)
    if result_layouts is not None:
        props["result_layouts"] = _layout_list(result_layouts)
    if aliases:
        tuple_index = (lambda r: f"[{r}]") if len(result_types) > 1 else (lambda r: "[]")
        props["output_operand_aliases"] = "[" + ", ".join(
            f"#stablehlo.output_operand_alias<output_tuple_indices = {tuple_index(r)}, operand_index = {o}, "
            "operand_tuple_indices = []>" for r, o in aliases.items()) + "]"
    return emit("stablehlo.custom_call", list(operands), list(result_types), props)


def rng_bit_generator(state: Value, shape, dtype=np.uint64, algorithm="THREE_FRY"):
    """(next state, random bits of ``shape``): a counter-based generator, the same on every backend."""
    return emit("stablehlo.rng_bit_generator", [state], [state.type, TensorType(shape, dtype)],
                {"rng_algorithm": f"#stablehlo<rng_algorithm {algorithm}>"})


def if_(pred: Value, then_block: Block, else_block: Block, result_types) -> list:
    """stablehlo.if; each block already ends with its stablehlo.return."""
    return emit("stablehlo.if", [pred], list(result_types), None, [Region([then_block]), Region([else_block])])


def emit_return(values):
    """The terminator of a region of stablehlo.if, while, reduce, sort and scatter."""
    emit("stablehlo.return", list(values), [])


def ignore_derivatives(x: Value) -> Value:
    """``x`` with no derivative: Enzyme treats what depends on it through this value as
    constant (the op disappears once Enzyme has run)."""
    return emit("enzyme.ignore_derivatives", [x], [x.type])[0]
