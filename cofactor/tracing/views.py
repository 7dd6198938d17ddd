"""Views: how an array made by basic slicing, reshape, transpose, ... reads from and writes
into the array it views.

A view holds its base and a lens.  Reading the view applies the lens to the
base's current value; writing the view writes the base, so later reads of
the base (and of every other view of it) see the write, as in NumPy.  The
writes are dynamic_update_slice on the whole buffer where the view is a
contiguous block, which XLA turns into in-place updates.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, located
from ..ir import ops
from ..ir.core import Value
from ..ir.types import TensorType
from . import context
from .array import Either, TracedArray


class Lens:
    def read(self, base: Value) -> Value:
        raise NotImplementedError

    def write(self, base: Value, new: Value) -> Value:
        """The base's new value after the view is overwritten with ``new`` (view shape, base dtype)."""
        raise NotImplementedError

    def type_of(self, base: TensorType) -> TensorType | None:
        """The view's type for a base of type ``base`` (None: known only by reading it)."""
        return None

    def on_numpy(self, array: np.ndarray) -> np.ndarray:
        """The same view of a NumPy array (to learn from NumPy what strides it has)."""
        raise NotImplementedError

    # A lens may hold traced values (a traced index): control flow carries them out of a region.
    def values(self) -> list:
        return []

    def with_values(self, values) -> "Lens":
        return self

    def same_template(self, other) -> bool:
        """Whether ``other`` is this lens up to its traced values."""
        return type(other) is type(self) and vars(other) == vars(self)


class Transpose(Lens):
    def __init__(self, perm):
        self.perm = list(perm)

    def read(self, base):
        return ops.transpose(base, self.perm)

    def type_of(self, base):
        return base.with_shape([base.shape[p] for p in self.perm])

    def on_numpy(self, array):
        return np.transpose(array, self.perm)

    def write(self, base, new):
        return ops.transpose(new, list(np.argsort(self.perm)))


class Reshape(Lens):
    def __init__(self, shape):
        self.shape = tuple(shape)

    def read(self, base):
        return ops.reshape(base, self.shape)

    def type_of(self, base):
        return base.with_shape(self.shape)

    def on_numpy(self, array):
        return np.reshape(array, self.shape, copy=False)

    def write(self, base, new):
        return ops.reshape(new, base.shape)


class ComplexPart(Lens):
    """``a.real`` / ``a.imag`` of a complex array."""

    def __init__(self, part):
        self.part = part

    def read(self, base):
        return ops.real(base) if self.part == "real" else ops.imag(base)

    def type_of(self, base):
        return base.with_dtype(np.finfo(base.dtype).dtype)

    def on_numpy(self, array):
        return array.real if self.part == "real" else array.imag

    def write(self, base, new):
        re, im = (new, ops.imag(base)) if self.part == "real" else (ops.real(base), new)
        return ops.complex(re, im)


class ReadOnly(Lens):
    """A view NumPy forbids writing (np.broadcast_to), or one cofactor cannot write through."""

    def __init__(self, inner: Lens, reason: str, error=ValueError):
        self.inner, self.reason, self.error = inner, reason, error

    def values(self):
        return self.inner.values()

    def type_of(self, base):
        return self.inner.type_of(base)

    def on_numpy(self, array):
        return self.inner.on_numpy(array)

    def with_values(self, values):
        return ReadOnly(self.inner.with_values(values), self.reason, self.error)

    def same_template(self, other):
        return type(other) is ReadOnly and (other.reason, other.error) == (self.reason, self.error) \
            and self.inner.same_template(other.inner)

    def read(self, base):
        return self.inner.read(base)

    def write(self, base, new):
        raise self.error(self.reason)


def _index_constant(i):
    return ops.constant(np.array(i, dtype=np.int64))


class DynamicBlock:
    """An index item: ``size`` elements from the traced int64 scalar Value ``start`` (moved back so
    that they fit, as stablehlo.dynamic_slice does)."""

    def __init__(self, start: Value, size: int):
        self.start, self.size = start, size


class Run:
    """An index item: ``count`` elements ``step`` apart (a static step, either sign) from the traced
    int64 scalar Value ``start`` in [0, n]: a strided slice with a bound known only at run time
    (numpy/extent.py), whose run-time length says how many of them are its own.  Those past either end
    of the axis read as zeros and take no writes."""

    def __init__(self, start: Value, count: int, step: int):
        self.start, self.count, self.step = start, count, step


class BasicIndex(Lens):
    """Integers, slices (any step), None and traced integer scalars, one entry per base axis.

    ``items`` holds per base axis either ``("slice", start, count, step)`` (already
    normalised, step may be negative; a traced start, a Value, has step 1: a DynamicBlock),
    ``("run", start, count, step)`` (a Run) or ``("index", i)`` with ``i`` an int in [0, n) or a
    traced 0-d int64 Value (negatives already wrapped: numpy/indexing.py); ``shape`` is the view's
    shape (with None axes inserted).
    """

    def __init__(self, items, shape):
        self.items = items
        self.shape = tuple(shape)

    def values(self):
        return [item[1] for item in self.items if isinstance(item[1], Value)]

    def type_of(self, base):
        return base.with_shape(self.shape)

    def on_numpy(self, array):
        index = []
        for item in self.items:
            if item[0] == "index":
                index.append(item[1] if isinstance(item[1], int) else 0)  # strides do not depend on it
            else:
                _, start, count, step = item
                if isinstance(start, Value):  # (a Run's count fits from either end: its strides are the point)
                    start = 0 if step > 0 else (count - 1) * -step
                start = start if count else 0  # (an empty reversed slice's is -1)
                stop = start + count * step
                index.append(slice(start, stop if stop >= 0 else None, step))
        return np.reshape(array[(*index, ...)], self.shape, copy=False)  # (a view, even of no axes)

    def with_values(self, values):
        values = iter(values)
        return BasicIndex([(item[0], next(values), *item[2:]) if isinstance(item[1], Value) else item
                           for item in self.items], self.shape)

    def same_template(self, other):
        def template(lens):
            return [(item[0], None, *item[2:]) if isinstance(item[1], Value) else item for item in lens.items]
        return type(other) is BasicIndex and other.shape == self.shape and template(other) == template(self)

    def _block(self, base):
        """Per axis: (start, size, step) in ascending base order, and the axes read backwards."""
        starts, sizes, steps, backwards = [], [], [], []
        for axis, item in enumerate(self.items):
            if item[0] == "index":
                starts.append(item[1])
                sizes.append(1)
                steps.append(1)
            else:
                _, start, count, step = item
                if not count:
                    start, step = 0, 1
                elif isinstance(start, Value):  # a DynamicBlock, or a Run (in its padded base)
                    start = ops.convert(start, np.int64)
                    if step < 0:
                        start = ops.binary("stablehlo.add", start, _index_constant((count - 1) * step))
                        step = -step
                        backwards.append(axis)
                elif step < 0:
                    start, step = start + (count - 1) * step, -step
                    backwards.append(axis)
                starts.append(start)
                sizes.append(count)
                steps.append(step)
        return starts, sizes, steps, backwards

    def _padded(self, base):
        """Where an item is a Run: the base padded with zeros by its span on both sides of its axis, the
        lens of the same elements in it (slices from traced starts), and the padding; else None."""
        if not any(item[0] == "run" for item in self.items):
            return None
        pads, items = [], []
        for item in self.items:
            if item[0] != "run":
                pads.append(0)
                items.append(item)
                continue
            _, start, count, step = item
            span = _spans([count], [abs(step)])[0]
            pads.append(span)
            items.append(("slice", ops.binary("stablehlo.add", start, _index_constant(span)), count, step))
        padded = ops.pad(base, ops.constant(np.zeros((), base.dtype)), pads, pads)
        return padded, BasicIndex(items, self.shape), pads

    def read(self, base):
        if 0 in base.type.shape:  # (x[i] of an empty array: NumPy's IndexError when it runs; no block to slice)
            return ops.broadcast_in_dim(ops.constant(np.zeros((), base.dtype)), self.shape, ())
        padded = self._padded(base)
        if padded is not None:
            return padded[1].read(padded[0])
        starts, sizes, steps, backwards = self._block(base)
        if any(isinstance(s, Value) for s in starts):  # the block the strided axes span, then their steps
            spans = _spans(sizes, steps)
            block = ops.dynamic_slice(base, _start_values(starts), spans)
            if any(st != 1 for st in steps):
                block = ops.slice(block, [0] * len(spans), spans, steps)
        else:
            limits = [s + span for s, span in zip(starts, _spans(sizes, steps))]
            block = ops.slice(base, starts, limits, steps)
        return ops.reshape(ops.reverse(block, backwards), self.shape)

    def write(self, base, new):
        if 0 in base.type.shape:  # (nothing to write into: an index into it fails NumPy's check)
            return base
        padded = self._padded(base)
        if padded is not None:
            padded_base, lens, pads = padded
            return ops.slice(lens.write(padded_base, new), pads, [p + n for p, n in zip(pads, base.shape)])
        starts, sizes, steps, backwards = self._block(base)
        if 0 in sizes:
            return base
        block = ops.reverse(ops.reshape(new, sizes), backwards)
        # XLA's CPU backend updates a computed buffer in place with what it reads from that same
        # buffer at other places when the two meet through a reshape (y = m[0] + m[1];
        # y[1:] = y[:-1] left y[0] everywhere, also under JAX; an argument or a loop's carried value
        # is copied first, and the optimized program never met it, but the unoptimized one does for
        # an argument too: c[1:] = c[:-1]; c.reshape(1, 5)[::-1] += 4): there a block of several
        # elements computed from the base is selected in instead (one element can only read itself
        # before it is written).
        static = not any(isinstance(s, Value) for s in starts)
        computed = _operands(base) is not None or context.current().options.unoptimized
        hazard = static and np.prod(sizes) > 1 and computed and _reads(block, base)
        if all(st == 1 for st in steps) and not hazard:
            return ops.dynamic_update_slice(base, block, _start_values(starts))
        if any(isinstance(s, Value) for s in starts):  # the strided block written into the block it spans
            at = _start_values(starts)
            spans = _spans(sizes, steps)
            spanned = ops.dynamic_slice(base, at, spans)
            return ops.dynamic_update_slice(base, _spread(block, spanned, [0] * len(spans), steps), at)
        return _spread(block, base, starts, steps)


def _start_values(starts) -> list:
    """The starts of a block as the Values dynamic_slice and dynamic_update_slice take."""
    return [s if isinstance(s, Value) else _index_constant(s) for s in starts]


def _spans(sizes, steps) -> list:
    """Per axis, how many elements a block of ``sizes`` elements ``steps`` apart spans."""
    return [(c - 1) * st + 1 if c else 0 for c, st in zip(sizes, steps)]


def _spread(block: Value, target: Value, starts, steps) -> Value:
    """``target`` with the strided ``block`` written at static ``starts``: the block spread with
    interior padding, and selected in."""
    spans = _spans(block.shape, steps)
    low, high = starts, [n - (s + span) for n, s, span in zip(target.shape, starts, spans)]
    interior = [st - 1 for st in steps]
    spread = ops.pad(block, ops.constant(np.zeros((), target.dtype)), low, high, interior)
    mask = ops.pad(ops.broadcast_in_dim(ops.constant(np.array(True)), block.shape, ()),
                   ops.constant(np.array(False)), low, high, interior)
    return ops.select(mask, spread, target)


def _reads(value: Value, base: Value, depth: int = 16) -> bool:
    """Whether ``value`` is computed from ``base`` (through at most ``depth`` operations)."""
    stack, seen = [(value, 0)], set()
    while stack:
        v, d = stack.pop()
        if v is base:
            return True
        operands = _operands(v)
        if operands is None or d >= depth or id(v) in seen:
            continue
        seen.add(id(v))
        stack.extend((o, d + 1) for o in operands if isinstance(o, Value))
    return False


def _operands(value: Value):
    """The operands of the operation that made ``value``; None for a block's argument."""
    return getattr(getattr(value, "owner", None), "operands", None)


class Broadcast(Lens):
    """``np.broadcast_to``: read-only in NumPy, so always wrapped in ReadOnly."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def read(self, base):
        lead = len(self.shape) - base.type.rank
        return ops.broadcast_in_dim(base, self.shape, range(lead, len(self.shape)))

    def type_of(self, base):
        return base.with_shape(self.shape)

    def on_numpy(self, array):
        return np.broadcast_to(array, self.shape)


class _PathLayout(Exception):
    """The strides of an array depend on the path a traced branch took (a variable bound to a view on
    one path and to another array on the other): NumPy's answer to a question about them is only
    known at run time."""


def strided_like(array) -> np.ndarray:
    """A NumPy array with the shape and strides of the traced ``array`` (a view of an array that
    owns its data), over one element of memory: NumPy's rules on it (may this reshape be a view?)
    are the rules for ``array``.  Never read its elements.  Strides that depend on the path taken
    are a clear error (``per_layout`` answers such a question on each path)."""
    try:
        return _strided(array)
    except _PathLayout:
        raise located(UnsupportedError(
            "this array's memory layout (its strides) depends on the path a traced branch took, and so does "
            "NumPy's answer here; make it one layout on every path (np.ascontiguousarray, or .copy())")) from None


def layout_of(x) -> tuple | None:
    """The strides of a NumPy array given to the function (an argument, a global's array) where it is
    not C-contiguous (a transpose, a column, Fortran order), which its views then follow as NumPy's
    do (a reshape of it is a copy); None where it is C-contiguous, as every array the function makes."""
    return x.strides if type(x) is np.ndarray and not x.flags.c_contiguous else None


def laid_out(traced, layout):
    """``traced`` stands for an array given to the function whose strides are ``layout`` (layout_of)."""
    if layout is not None:
        context.current().layouts[id(traced)] = (traced, layout)  # (held: its id stays its own)
    return traced


def ordered(result, order, *sources):
    """``result``, an array just made, laid out in memory as NumPy lays out one made in ``order`` from
    ``sources`` (its views follow: a reshape of a Fortran-order copy is a copy): "C" (and None) as
    made; "F" Fortran order; "A" Fortran where the sources of its shape are Fortran-contiguous and not
    C; "K" their axes in their memory order, where they agree on one (a ufunc's result of a transposed
    array is Fortran-contiguous, as NumPy's)."""
    if not isinstance(result, TracedArray) or result.scalar or result.ndim < 2 or order in ("C", None):
        return result
    axes = list(range(result.ndim))
    if order != "F":
        sources = [s for s in sources if isinstance(s, TracedArray) and not s.scalar and s.shape == result.shape]
        if not context.current().layouts and all(s.lens is None for s in sources):
            return result  # (C-contiguous, as every array the function makes)
        try:
            fakes = [_strided(s) for s in sources]
        except _PathLayout:
            return result
        if not fakes:
            return result
        if order == "A":
            axes = axes if not all(f.flags.f_contiguous and not f.flags.c_contiguous for f in fakes) else axes[::-1]
        else:
            orders = {tuple(sorted(axes, key=lambda k: -abs(f.strides[k]))) for f in fakes}
            axes = list(orders.pop()) if len(orders) == 1 else axes
    else:
        axes = axes[::-1]
    if axes == sorted(axes):
        return result
    strides, step = [0] * result.ndim, result.dtype.itemsize
    for k in reversed(axes):
        strides[k], step = step, step * result.shape[k]
    return laid_out(result, tuple(strides))


def in_one_memory(a, b):
    """NumPy arrays with the shapes and strides of ``a`` and ``b``, views of one owner, over one memory
    (np.shares_memory of them is NumPy's answer for ``a`` and ``b``); None where a lens is not a view
    known now (a traced index, a bitcast) or the owner is one of several arrays."""
    lenses = [lens.inner if isinstance(lens, ReadOnly) else lens for x in (a, b) for lens in _lens_chain(x)[0]]
    if any(isinstance(_lens_chain(x)[1], Either) for x in (a, b)) or any(
            not isinstance(lens, (BasicIndex, Transpose, Reshape, Broadcast, ComplexPart)) or lens.values()
            for lens in lenses):
        return None
    memory = np.zeros(1, _lens_chain(a)[1].dtype)
    return _strided(a, memory), _strided(b, memory)


def asked_of_arguments(a, b, question):
    """``question`` (np.shares_memory, np.may_share_memory) of views of two different arrays the caller
    passed, asked of the arrays themselves at every call: a traced bool (two arguments may view one
    array, which is not part of the signature); None where one is not such a view known now."""
    trace = context.current()
    chains = [_lens_chain(x) for x in (a, b)]
    leaves = [trace.argument_leaves.get(id(root)) for _, root in chains]
    lenses = [plain_lenses(x) for x in (a, b)]
    if None in leaves or None in lenses or leaves[0] == leaves[1] or any(
            lens.values() for chain in lenses for lens in chain):
        return None

    def asked(call_leaves):
        arrays = [call_leaves[k] for k in leaves]
        if not all(type(x) is np.ndarray for x in arrays):
            return np.asarray(False)  # (a ConcreteArray's buffer is its own)
        for k, chain in enumerate(lenses):
            for lens in chain:
                arrays[k] = lens.on_numpy(arrays[k])
        return np.asarray(bool(question(*arrays)))
    return TracedArray(trace.host_input(TensorType((), np.dtype(bool)), asked), scalar=True)


def _strided(array, memory=None) -> np.ndarray:
    lenses, root = _lens_chain(array)
    t = root.type
    strides = np.cumprod((1,) + t.shape[:0:-1])[::-1] * t.dtype.itemsize if t.shape else ()
    strides = context.current().layouts.get(id(root), (None, strides))[1]
    if isinstance(root, Either):
        layouts = {_strided(c).strides for c in root.arrays()}
        if len(layouts) > 1:
            raise _PathLayout
        strides = layouts.pop()
    memory = np.zeros(1, t.dtype) if memory is None else memory
    fake = np.lib.stride_tricks.as_strided(memory, t.shape, tuple(int(s) for s in strides))
    for lens in reversed(lenses):
        fake = lens.on_numpy(fake)
    return fake


def per_layout(array, fn):
    """``fn(array)`` (``fn`` asks NumPy's layout rules, as a reshape that is a view or a copy), or,
    where ``array``'s strides depend on the path a traced branch took, ``fn`` of the array on each
    path, chosen at run time as the branch chose: a reshape of a reversed view is a copy on one path
    and a view of the same owner on the other, and writes through it reach the owner only there."""
    try:
        _strided(array)
    except _PathLayout:
        lenses, root = _lens_chain(array)
        results = []
        for choice in root.choices:
            for lens in reversed(lenses):
                choice = TracedArray(None, choice, lens)
            results.append(per_layout(choice, fn))
        return Either(root.selector, results)
    return fn(array)


def _lens_chain(array):
    """The lenses from ``array`` to the array they view, ``array``'s side first, and that array."""
    lenses = []
    while array.lens is not None:
        lenses.append(array.lens)
        array = array.viewed
    return lenses, array


def positions_view(array, positions: np.ndarray):
    """The same view of ``positions`` (an array of the owner's shape) that ``array`` is of its owner,
    or None where a lens is not a plain NumPy view known now (a traced index, a bitcast, ...)."""
    lenses = plain_lenses(array)
    if lenses is None or any(lens.values() for lens in lenses):
        return None
    for lens in lenses:
        positions = lens.on_numpy(positions)
    return positions


def assignment_order(target, source):
    """``target[...] = source`` where both see one owner's storage.  NumPy assigns without a
    temporary copy where it judges that safe (a one-dimensional target whose strides run the same
    way as the source's), copying forwards or backwards as memmove would; where the two overlap
    with different strides its result is then not a copy's.  Doing NumPy's own assignment on an
    array of positions finds its result: the owner's flat positions after it (a gather of the old
    value gives the new one), or None where that is a copy's (no overlap, or NumPy copied)."""
    owner = _shared_owner(target, source)
    if owner is None or owner.size > 1 << 22:
        return None
    positions = np.arange(owner.size).reshape(owner.shape)
    copied = positions.copy()
    t, s, c = positions_view(target, positions), positions_view(source, positions), positions_view(target, copied)
    if t is None or s is None or not t.flags.writeable:
        return None
    c[...] = s.copy()
    t[...] = s
    return None if np.array_equal(positions, copied) else positions.ravel()


def _shared_owner(target, source):
    """The one owner whose storage both ``target`` and ``source`` (an array) see, or None."""
    if not hasattr(source, "owners") or source.scalar:
        return None
    owners, source_owners = target.owners(), source.owners()
    if len(owners) != 1 or len(source_owners) != 1 or source_owners[0] is not owners[0]:
        return None
    return owners[0]


_ELEMENTWISE_LIMIT = 256  # elements a run-time emulation of NumPy's element-by-element assignment copies


def plain_lenses(array) -> list | None:
    """The lenses from ``array``'s owner to it, owner side first, or None if one is not a plain
    NumPy view (a bitcast, windows, ...)."""
    lenses = [lens.inner if isinstance(lens, ReadOnly) else lens for lens in _lens_chain(array)[0]]
    if not all(isinstance(lens, (BasicIndex, Transpose, Reshape, Broadcast)) for lens in lenses):
        return None
    return lenses[::-1]


def _positions_now(lenses, owner) -> Value:
    """The owner's flat position of each element of the view ``lenses`` make, as the program
    computes it (traced indices included): an iota of the owner read through them."""
    positions = ops.reshape(ops.iota((owner.size,), np.dtype(np.int64), 0), owner.shape)
    for lens in lenses:
        positions = lens.read(positions)
    return positions


def elementwise_assignment(target, source):
    """``target[...] = source`` where both see one owner's storage through a traced index (so
    ``assignment_order`` cannot tell what NumPy does): the owner's new value, flat, or None where
    NumPy's result is a copy's whatever the index (no shared owner, a target of several axes,
    which NumPy copies through a temporary when they overlap, or strides the same for both).

    A one-dimensional target NumPy assigns element by element, last element first when the target
    starts inside the source after its start; this copies element by element in both orders and
    picks NumPy's at run time."""
    owner = _shared_owner(target, source)
    if owner is None or target.ndim != 1 or target.size < 2:
        return None
    target_lenses, source_lenses = plain_lenses(target), plain_lenses(source)
    if target_lenses is None or source_lenses is None or \
            not any(lens.values() for lens in target_lenses + source_lenses):
        return None  # not plain views, or known now: assignment_order's business
    target_strides = strided_like(target).strides
    source_layout = np.broadcast_to(strided_like(source), target.shape)
    if source_layout.strides == target_strides or target_strides[0] * source_layout.strides[0] < 0:
        return None  # memmove's order is a copy's; opposite directions NumPy copies through a temporary
    if target.size > _ELEMENTWISE_LIMIT:
        raise UnsupportedError(
            f"an assignment of {target.size} elements between overlapping views of one array with different strides, "
            "through a traced index: NumPy assigns them one by one, which cofactor emulates for at most "
            f"{_ELEMENTWISE_LIMIT}; assign a copy (x[...] = y.copy()) if that is what you mean")
    to = ops.reshape(_positions_now(target_lenses, owner), (target.size,))
    source_positions = _positions_now(source_lenses, owner)
    lead = target.ndim - source_positions.type.rank
    frm = ops.reshape(ops.broadcast_in_dim(source_positions, target.shape, range(lead, target.ndim)), (target.size,))
    flat = ops.reshape(owner.value, (owner.size,))

    def element(values, k):
        return ops.reshape(ops.slice(values, (k,), (k + 1,)), ())

    def copied(order):
        result = flat
        for k in order:
            piece = ops.dynamic_slice(result, [element(frm, k)], (1,))
            result = ops.dynamic_update_slice(result, piece, [element(to, k)])
        return result

    # NumPy goes backwards where the target starts after the source's start, before its end.
    n, step = target.size, source_layout.strides[0] // target.itemsize
    first_source, first_target = element(frm, 0), element(to, 0)
    source_end = ops.binary("stablehlo.add", first_source, ops.constant(np.asarray(n * step, np.int64)))
    backwards = ops.binary("stablehlo.and", ops.compare(first_source, first_target, "LT"),
                           ops.compare(first_target, source_end, "LT"))
    return ops.select(ops.broadcast_in_dim(backwards, (owner.size,), ()), copied(range(n - 1, -1, -1)),
                      copied(range(n)))


def full_slices(shape):
    """BasicIndex items selecting a whole array of ``shape`` (to be edited per axis)."""
    return [("slice", 0, n, 1) for n in shape]
