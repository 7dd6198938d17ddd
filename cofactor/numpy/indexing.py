"""Indexing: reading and writing with integers (also traced), slices, None and Ellipsis,
and boolean masks for writes.

Basic indexing returns a view (a ``BasicIndex`` lens), so ``a[1:-1] += b`` and
``row = a[0]; row *= 2`` update ``a``, as in NumPy.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, numpy_rules
from ..ir import ops
from ..ir.core import Value
from ..tracing import checks, python_ints
from ..tracing.context import in_reverse_mode
from ..tracing.array import TracedArray
from ..tracing.dispatch import implements
from ..tracing.views import BasicIndex, DynamicBlock, Run, assignment_order, elementwise_assignment
from ._core import (asarray, axis_index, broadcast_to, convert_like_numpy, full, is_weak, known_value,
                    traced_sequence, value, value_bounds, view, wrap)
from .creation import check_stored
from .extent import (Bounded, _unsupported, bounded, fixed_length, has_traced_slice, valid_lanes,
                     without_derivatives_outside)
from .extent_ops import aligned
from .selection import (assign_masked, assign_masked_among, assign_strided_slice, assign_traced_slice, fitted, masked,
                        masked_among, strided_traced_slice,
                        traced_slice)


def _is_traced_integer(item) -> bool:
    return isinstance(item, TracedArray) and item.ndim == 0 and item.dtype.kind in "iu"


def _is_basic(item) -> bool:
    if item is None or item is Ellipsis or isinstance(item, (slice, DynamicBlock, Run)) or _is_traced_integer(item):
        return True
    if isinstance(item, (bool, np.bool_)) or isinstance(item, (TracedArray, list)):
        return False
    return np.ndim(item) == 0 and hasattr(item, "__index__")


def _expand(index, ndim):
    """The index as a tuple with its Ellipsis replaced by full slices."""
    index = index if isinstance(index, tuple) else (index,)
    ellipses = [i for i, item in enumerate(index) if item is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for item in index if item is not None and item is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed")
    if ellipses:
        i = ellipses[0]
        return index[:i] + (slice(None),) * (ndim - used) + index[i + 1:]
    return index + (slice(None),) * (ndim - used)


def basic_lens(shape, index) -> BasicIndex:
    items, out_shape = [], []
    axis = 0
    for item in _expand(index, len(shape)):
        if item is None:
            out_shape.append(1)
            continue
        n = shape[axis]
        if isinstance(item, DynamicBlock):
            items.append(("slice", item.start, item.size, 1))
            out_shape.append(item.size)
        elif isinstance(item, Run):
            items.append(("run", item.start, item.count, item.step))
            out_shape.append(item.count)
        elif isinstance(item, slice):
            with numpy_rules():  # a zero step, or bounds that are not integers
                lo, hi, step = item.indices(n)
            count = len(range(lo, hi, step))
            items.append(("slice", lo, count, step))
            out_shape.append(count)
        elif isinstance(item, TracedArray):
            _check_index(item, n, axis)
            items.append(("index", _wrapped(item, n)))
        else:
            i = item.__index__()
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            items.append(("index", i % n))
        axis += 1
    return BasicIndex(items, out_shape)


def _wrapped(index: TracedArray, n: int):
    """A traced integer index into an axis of length ``n`` as an int64 with negatives wrapped as
    NumPy does, without the select where its bounds show it is not negative (a loop's counter: the
    loop raising sees the counter itself)."""
    i = ops.convert(index.value, np.int64)
    if python_ints.within(index, 0, n - 1):
        return i
    zero = ops.constant(np.zeros((), np.int64))
    return ops.select(ops.compare(i, zero, "LT"),
                      ops.binary("stablehlo.add", i, ops.constant(np.array(n, np.int64))), i)


def _check_index(index: TracedArray, n: int, axis: int):
    """NumPy's IndexError, after the call, where the traced integer ``index`` is outside [-n, n)
    when the program runs (the read or write itself clamps it, as XLA does); none where its bounds
    are known to fit (a loop's counter over the axis)."""
    if python_ints.within(index, -n, n - 1):
        return
    outside = python_ints.outside_of(ops.convert(index.value, np.int64), -n, n - 1)
    checks.error_if(outside, lambda: IndexError(f"index {index} is out of bounds for axis {axis} with size {n}"))


def _check_indices(indices: TracedArray, n: int, axis: int, valid: TracedArray | None = None):
    """NumPy's IndexError, after the call, where an element of the traced integer array ``indices``
    (in its ``valid`` lanes) is outside [-n, n) when the program runs (the gather or scatter clamps
    it), naming the first."""
    if indices.ndim == 0 and valid is None:
        return _check_index(indices, n, axis)
    check_range(indices, -n, n - 1,
                lambda first: IndexError(f"index {first} is out of bounds for axis {axis} with size {n}"), valid)


def check_range(values, low: int, high: int, make, valid: TracedArray | None = None):
    """NumPy's error ``make(first)``, after the call, where an element of the traced integer array
    ``values`` (in its ``valid`` lanes) is outside [low, high] when the program runs, ``first``
    the first such (a traced value the message shows as it was then)."""
    values = asarray(values)
    bounds = value_bounds(values)
    if python_ints.within(values, low, high) or values.size == 0 or bounds and low <= bounds[0] <= bounds[1] <= high:
        return
    outside = np.logical_or(values < low, values > high)
    if valid is not None:
        outside = outside & valid
    outside = np.ravel(outside)
    k = np.min(np.where(outside, np.arange(outside.size), outside.size))  # the first outside, or the size:
    first = np.take(np.ravel(values), k, mode="clip")                     # one reduction says if and which
    checks.error_if((k < outside.size).value, lambda: make(first))


def _index_count(item) -> int:
    """How many axes of the indexed array an index item consumes."""
    if item is None or item is Ellipsis:
        return 0
    if isinstance(item, (TracedArray, np.ndarray)) and item.dtype == np.bool_:
        return max(item.ndim, 1)
    return 1


def _check_mask(mask, shape, first):
    """NumPy's IndexError for a boolean index whose shape differs from the axes it covers."""
    for axis, (m, n) in enumerate(zip(mask.shape, shape[first:]), first):
        if m != n:
            raise IndexError(f"boolean index did not match indexed array along axis {axis}; size of axis is "
                             f"{n} but size of corresponding boolean axis is {m}")


class _Advanced:
    """NumPy's advanced indexing, planned as a basic view (slices on the other axes) and one
    gather/scatter over the advanced axes, whose broadcast index shape lands where NumPy puts it."""

    def __init__(self, a, index):
        index = index if isinstance(index, tuple) else (index,)
        index, self.valid, windows = _run_time_lengths(index)
        index = tuple(item if known_value(item) is None else known_value(item) for item in index)
        if any(item is None for item in index):
            raise UnsupportedError("combining None (np.newaxis) with advanced indexing is not supported")
        ndim = a.ndim
        used = sum(_index_count(item) for item in index)
        if used > ndim:
            raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed")
        if any(item is Ellipsis for item in index):
            i = next(k for k, item in enumerate(index) if item is Ellipsis)
            index = index[:i] + (slice(None),) * (ndim - used) + index[i + 1:]
        else:
            index = index + (slice(None),) * (ndim - used)
        slices, arrays, axes = [], [], []
        for item in index:
            if isinstance(item, list) and traced_sequence(item) is not None:  # A[[k, p]] with a traced p
                item = traced_sequence(item)
            if isinstance(item, slice):
                slices.append(item)
                continue
            if isinstance(item, TracedArray) and item.dtype == np.bool_:
                raise UnsupportedError("reading x[mask] with a traced boolean mask has a data-dependent shape; "
                                       "use np.where(mask, x, other), e.g. np.where(mask, x, 0).sum() for "
                                       "x[mask].sum()")
            if not isinstance(item, TracedArray):
                # (an empty list is an empty integer index, as NumPy takes it: hits = []; x[hits])
                item = np.asarray(item, dtype=np.intp) if type(item) in (list, tuple) and not np.size(item) \
                    else np.asarray(item)
                if item.dtype == np.bool_:  # a constant mask: its positions are known now
                    _check_mask(item, a.shape, len(slices))
                    for positions in np.nonzero(item) if item.ndim else [np.arange(int(item))]:
                        slices.append(slice(None))
                        arrays.append(positions)
                        axes.append(len(slices) - 1)
                    continue
                if item.dtype.kind not in "iu":
                    raise IndexError("arrays used as indices must be of integer (or boolean) type")
            elif item.dtype.kind not in "iu":
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            slices.append(slice(None))
            arrays.append(item)
            axes.append(len(slices) - 1)
        self.view = view(a, basic_lens(a.shape, tuple(slices)))
        shape = self.view.shape
        self.axes = axes
        try:
            self.batch = np.broadcast_shapes(*[np.shape(x) for x in arrays])
        except ValueError:
            raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                             + " ".join(str(np.shape(x)) for x in arrays)) from None
        self.indices = self._index_tensor(arrays, [shape[d] for d in axes])
        adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
        rest = [d for d in range(len(shape)) if d not in axes]
        first = self.first = axes[0] if adjacent else 0
        nb = len(self.batch)
        self.offset_dims = [i if i < first else i + nb for i in range(len(rest))]
        rest_shape = [shape[d] for d in rest]
        self.result_shape = tuple(rest_shape[:first]) + self.batch + tuple(rest_shape[first:])
        self.windows = None if windows is None else [None] * first + windows + [None] * (len(rest) - first)

    def _index_tensor(self, arrays, sizes):
        columns = []
        self.known_indices = None if any(isinstance(x, TracedArray) for x in arrays) else np.stack(
            [np.broadcast_to(np.where(x < 0, x + n, x), self.batch) for x, n in zip(arrays, sizes)], -1)
        for x, n in zip(arrays, sizes):
            if isinstance(x, TracedArray):
                if self.valid is not None:
                    x = wrap(broadcast_to(x.value, self.batch))
                _check_indices(x, n, self.axes[len(columns)], self.valid)
                v = ops.convert(x.value, np.int64)
                zero = full(v.shape, 0, np.int64)
                v = ops.select(ops.compare(v, zero, "LT", "SIGNED"),
                               ops.binary("stablehlo.add", v, full(v.shape, n, np.int64)), v)
            else:
                bad = (x < -n) | (x >= n)
                if np.any(bad):
                    raise IndexError(f"index {x[bad].flat[0]} is out of bounds for axis "
                                     f"{self.axes[len(columns)]} with size {n}")
                v = ops.constant(np.where(x < 0, x + n, x).astype(np.int64))
            v = broadcast_to(v, self.batch)
            columns.append(ops.reshape(v, self.batch + (1,)))
        return ops.concatenate(columns, len(self.batch))

    def read(self):
        """The selected elements: a TracedArray, or a Bounded where index arrays have run-time lengths."""
        if 0 in self.result_shape or 0 in self.view.shape:  # nothing to gather (and gather rejects it)
            result = full(self.result_shape, 0, self.view.dtype)
        else:
            v = self.view.value
            sizes = [1 if d in self.axes else n for d, n in enumerate(v.shape)]
            result = ops.gather(v, self.indices, self.offset_dims, self.axes, self.axes, len(self.batch),
                                sizes, self.result_shape)
        if self.windows is None:
            return wrap(result)
        return bounded(without_derivatives_outside(self.valid.value, wrap(result), self._batch_dims()), self.windows)

    def _batch_dims(self):
        """Where the index arrays' broadcast axes are in the selection's shape."""
        return range(self.first, self.first + len(self.batch))

    def updates(self, a, v) -> Value:
        """``v`` as the values to write: cast to ``a``'s dtype, broadcast to the selection's shape, and
        lined up with its valid lanes where index arrays have run-time lengths."""
        if self.windows is not None:
            (_, v), _ = aligned([Bounded(wrap(full(self.result_shape, 0, a.dtype)), self.windows), v])
        elif isinstance(v, Bounded):
            v = fitted(v, self.result_shape)
        return _assigned(a, v, self.result_shape)

    def write(self, updates, combine=None):
        """Scatter ``updates``; invalid lanes of index arrays with run-time lengths, and (without
        ``combine``) every write to an element but its last (NumPy's: ``x[[0, 0]] = v`` writes v[1]),
        point past the axis, where the scatter drops them, and carry no derivative back."""
        if 0 in self.result_shape:
            return
        indices = self.indices
        written = self.valid.value if self.valid is not None else None
        if combine is None:
            last = self._last_writes()
            written = last if written is None else ops.binary("stablehlo.and", written, last) if last is not None \
                else written
        if written is not None:
            past = ops.constant(np.array([self.view.shape[d] for d in self.axes], np.int64))
            past = ops.broadcast_in_dim(past, indices.shape, (len(self.batch),))
            indices = ops.select(ops.broadcast_in_dim(written, indices.shape, range(len(self.batch))), indices, past)
            updates = without_derivatives_outside(written, wrap(updates), self._batch_dims()).value
        self.view.value = ops.scatter(self.view.value, indices, updates, self.offset_dims, self.axes,
                                      self.axes, len(self.batch), combine)

    def _last_writes(self) -> Value | None:
        """Where the index arrays point at an element no later lane points at (an i1 array of their broadcast
        shape): None where every lane does, known now, or traced indices outside reverse mode (XLA's
        scatter writes the last of repeated lanes already; only their derivatives need the mask)."""
        n = int(np.prod(self.batch))
        if n < 2:
            return None
        sizes = [self.view.shape[d] for d in self.axes]
        if self.known_indices is not None:
            keys = np.ravel_multi_index(self.known_indices.reshape(n, -1).T, sizes)
            last = np.zeros(n, bool)
            last[n - 1 - np.unique(keys[::-1], return_index=True)[1]] = True  # (each key's first lane from the end)
            return None if last.all() else ops.constant(last.reshape(self.batch))
        if not in_reverse_mode():
            return None
        flat = wrap(ops.reshape(self.indices, (n, len(self.axes))))
        keys = flat[:, 0]
        for k in range(1, len(sizes)):
            keys = keys * sizes[k] + flat[:, k]
        order = np.argsort(keys, kind="stable")   # each key's lanes together, in order: the last before another key
        ordered = keys[order]
        last_in_order = np.concatenate([ordered[1:] != ordered[:-1], np.ones(1, bool)])
        return ops.reshape(last_in_order[np.argsort(order)].value, self.batch)


def _run_time_lengths(index):
    """Index arrays of which some have run-time lengths (``x[idx[:b]]``, ``x[np.nonzero(m)]``) as
    static-shaped arrays lined up lane for lane (their invalid lanes read element 0), the mask of
    their broadcast's valid lanes, and its windows; other indices as they are (None, None)."""
    if not any(isinstance(item, Bounded) for item in index):
        return index, None, None
    advanced = [k for k, item in enumerate(index) if not (isinstance(item, slice) or item is None or item is Ellipsis)]
    if any(isinstance(index[k], Bounded) and index[k].dtype.kind not in "iu" for k in advanced):
        _unsupported("indexing with a boolean mask")
    arrays, windows = aligned([index[k] for k in advanced])
    valid = wrap(valid_lanes(np.broadcast_shapes(*(np.shape(x) for x in arrays)), windows))
    index = list(index)
    for k, x in zip(advanced, arrays):
        if np.ndim(x):
            index[k] = np.where(valid, x, np.zeros((), x.dtype))
    return tuple(index), valid, windows


def _traced_mask(index):
    return isinstance(index, TracedArray) and index.dtype == np.bool_ and known_value(index) is None


def _traced_mask_among(items) -> bool:
    return len(items) > 1 and any(_traced_mask(item) for item in items)


def _scalar_bools(index):
    """An index holding Python or NumPy bools (``x[True]``, ``x[..., False]``), each a 0-d mask that adds
    an axis of length 1 where true, 0 where false: the index with the axis made by None, and whether
    it is empty (None where the index holds none)."""
    items = index if isinstance(index, tuple) else (index,)
    at = [k for k, item in enumerate(items) if isinstance(item, (bool, np.bool_))]
    if not at:
        return None
    if at != list(range(at[0], at[-1] + 1)) or not all(_is_basic(item) for k, item in enumerate(items) if k not in at):
        raise UnsupportedError("an index that holds True or False beside array indices, or apart from one another, "
                               "is not supported by cofactor")
    return items[:at[0]] + (None,) + items[at[-1] + 1:], not all(items[k] for k in at)


@implements("ndarray.__getitem__")
def getitem(a, index):
    items = index if isinstance(index, tuple) else (index,)
    if a.scalar:
        return _index_scalar(a, items)
    bools = _scalar_bools(index)
    if bools is not None:
        index, empty = bools
        result = getitem(a, index)
        if not empty:
            return result
        shape = np.lib.stride_tricks.as_strided(np.zeros(1), a.shape, (0,) * a.ndim)[items].shape  # (NumPy's own)
        return TracedArray(full(shape, 0, a.dtype))
    if all(_is_basic(item) for item in items):
        if has_traced_slice(items):  # (a window of static length sliding with a counter: a DynamicBlock)
            index = items = fixed_length(_expand(index, a.ndim), a.shape)
        if has_traced_slice(items):
            return traced_slice(a, index)
        lens = basic_lens(a.shape, index)
        if not lens.shape and not any(item is Ellipsis for item in items):
            # Every axis indexed by an integer: NumPy returns a scalar, a copy (a[()] of a 0-d array too),
            # known while tracing where the array is (for size in 2 ** np.arange(3): np.arange(0, n, size)).
            known = a.known() if not lens.values() else None
            if known is not None:
                return TracedArray(ops.constant(np.asarray(lens.on_numpy(known))), scalar=True)
            return TracedArray(lens.read(a.value), scalar=True)
        return view(a, lens)
    if _traced_mask(index):
        return masked(a, index)  # a copy, as advanced indexing makes
    if _traced_mask_among(items):
        return masked_among(a, items)
    return _Advanced(a, index).read()  # advanced indexing copies, as in NumPy


def _index_scalar(a, items):
    """Indexing a NumPy scalar: ``s[()]`` is ``s``; ``s[...]``, ``s[None]`` index a new 0-d array;
    nothing else works."""
    if items == ():
        return a
    if all(item is None or item is Ellipsis for item in items):
        return getitem(TracedArray(a.value), items)
    raise IndexError("invalid index to scalar variable.")


def _assigned(a, v, shape):
    """``v`` cast to ``a``'s dtype (as NumPy's assignment casts) and broadcast to ``shape``."""
    new = value(v, a.dtype) if is_weak(v) else convert_like_numpy(value(v), a.dtype)
    extra = new.type.rank - len(shape)
    if extra > 0 and all(d == 1 for d in new.shape[:extra]):  # NumPy drops leading length-1 axes
        new = ops.reshape(new, new.shape[extra:])
    if new.type.rank > len(shape):
        raise ValueError(f"could not broadcast input array from shape {new.shape} into shape {tuple(shape)}")
    try:
        return broadcast_to(new, shape)
    except ValueError:
        raise ValueError(f"could not broadcast input array from shape {new.shape} into shape "
                         f"{tuple(shape)}") from None


def _assigned_as_numpy_does(target, v) -> bool:
    """Whether ``target[...] = v`` was done here: an assignment between overlapping views of one
    array that NumPy does element by element, so that its result is not a copy's."""
    owner, order = target.owners()[0], assignment_order(target, v)
    if order is not None:  # known now: a gather
        flat = TracedArray(ops.reshape(owner.value, (owner.size,)))
        owner.value = ops.reshape(getitem(flat, (order,)).value, owner.shape)
        return True
    flat = elementwise_assignment(target, v)  # through a traced index: element by element
    if flat is not None:
        owner.value = ops.reshape(flat, owner.shape)
    return flat is not None


@implements("ndarray.__setitem__")
def setitem(a, index, v):
    if isinstance(v, (list, tuple)):  # (out[:] = (x, y, z) of traced numbers: the array NumPy makes of them)
        traced = traced_sequence(v)
        v = v if traced is None else traced
    bools = _scalar_bools(index)
    if bools is not None:
        index, empty = bools
        if not empty:
            setitem(a, index, v)
        return
    items = index if isinstance(index, tuple) else (index,)
    if all(_is_basic(item) for item in items):
        check_stored(a, v)
        if strided_traced_slice(items):
            assign_strided_slice(a, index, v)
            return
        if has_traced_slice(items):  # (a window of static length sliding with a counter: a DynamicBlock)
            index = items = fixed_length(_expand(index, a.ndim), a.shape)
        if has_traced_slice(items):
            assign_traced_slice(a, index, v)
            return
        if len(items) == a.ndim and np.ndim(v) > 0 and not any(i is None or i is Ellipsis or
                                                               isinstance(i, (slice, DynamicBlock)) for i in items):
            raise ValueError("setting an array element with a sequence.")  # one element: v must be a scalar
        target = view(a, basic_lens(a.shape, index))
        v = fitted(v, target.shape) if isinstance(v, Bounded) else v
        new = _assigned(a, v, target.shape)
        if not (isinstance(target, TracedArray) and _assigned_as_numpy_does(target, v)):
            target.value = new
        return
    if _traced_mask(index):
        assign_masked(a, index, v)
        return
    if _traced_mask_among(items):
        assign_masked_among(a, items, v)
        return
    plan = _Advanced(a, index)
    plan.write(plan.updates(a, v))


@implements(np.take)
def take(a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        raise UnsupportedError("numpy.take(..., out=...) is not supported")
    arr = a if axis is not None else np.ravel(a)
    ax = 0 if axis is None else axis_index(axis, np.ndim(arr))
    n = np.shape(arr)[ax]
    if mode == "wrap":
        indices = np.mod(indices, n)
    elif mode == "clip":
        indices = np.clip(indices, 0, n - 1)
    elif mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got '{mode}')")
    return getitem(asarray(arr), (slice(None),) * ax + (indices,))


@implements(np.take_along_axis)
def take_along_axis(arr, indices, axis=-1):
    arr = asarray(arr)
    if axis is None:
        return getitem(np.ravel(arr), (indices,))
    ax = axis_index(axis, arr.ndim)
    if np.ndim(indices) != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    grid = tuple(indices if d == ax else np.arange(n).reshape([-1 if k == d else 1 for k in range(arr.ndim)])
                 for d, n in enumerate(arr.shape))
    return getitem(arr, grid)


@implements(np.ix_)
def ix_(*args):
    out = []
    for k, a in enumerate(args):
        if np.ndim(a) != 1:
            raise ValueError("Cross index must be 1 dimensional")
        shape = [1] * len(args)
        shape[k] = -1
        out.append(np.reshape(a, shape))
    return tuple(out)
