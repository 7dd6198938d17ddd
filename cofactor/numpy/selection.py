"""Where arrays with run-time lengths come from (numpy/extent.py): slices with traced bounds (a window
on a view of the whole axis), indexing with such index arrays, and the data-dependent selections,
which compact what they select to the front: ``x[mask]`` (and writes through it), ``np.nonzero`` and
its relatives, ``np.unique``, ``np.compress``, ``np.extract``."""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, located
from ..ir import ops
from ..tracing import python_ints
from ..tracing.array import TracedArray
from ..tracing.dispatch import implements
from ._core import asarray, axis_index, convert_like_numpy, known_value, value, value_bounds, with_value_bounds, wrap
from .extent import (Bounded, Selection, Window, _both, _check_lengths, _const, _same, _unsupported, add, as_data,
                     clamp, i64, operation, selected_positions, shifted, sub, traced_int, true_count, true_ranks,
                     without_derivatives_outside)
from .extent_ops import aligned, assign, resolved, transpose

_I64 = np.dtype(np.int64)


def traced_slice(a: TracedArray, index):
    """``a[index]`` where a slice has a bound known only at run time: a window on a view of the whole axis."""
    data_items, windows = resolved(a, [None] * a.ndim, index)
    return Bounded(a[data_items], windows)


def assign_traced_slice(a: TracedArray, index, v):
    assign(traced_slice(a, index), v)


def strided_traced_slice(items) -> bool:
    """Whether ``items`` hold a slice whose step is known only at run time (a sieve's ``flags[k * k::k] =
    False``)."""
    return any(isinstance(item, slice) and isinstance(item.step, TracedArray) for item in items)


def assign_strided_slice(a: TracedArray, index, v):
    """``a[start:stop:step] = v`` along one axis (the others whole) with the step known only at run time:
    the lanes NumPy's ``slice.indices`` selects take ``v`` (a value broadcast along that axis).  The
    step's sign must be known (a constant, or a counter's bounds).  Reading such a slice is not
    supported: its elements' distance apart, and so its view's lanes, would be known only at run time
    (a slice with a static step is a Run: extent_ops.py)."""
    from .indexing import _assigned, _expand
    items = _expand(index, a.ndim)
    strided = [k for k, item in enumerate(items)
               if isinstance(item, slice) and any(b is not None for b in (item.start, item.stop, item.step))]
    if len(strided) != 1 or any(not isinstance(item, slice) for item in items):
        _unsupported("a write through a slice with a step other than 1 or -1 and a bound known only at run time "
                     "beside other indices")
    axis = strided[0]
    item, n = items[axis], a.shape[axis]
    step = item.step
    within = python_ints.bounds_of(step)
    if within is None or within[0] <= 0 <= within[1]:
        raise located(UnsupportedError("a slice with a traced step whose sign is not known is not supported "
                                       "(a loop's counter, whose bounds are known, is)"))
    forward = within[0] > 0
    lane = ops.iota((n,), _I64, 0)
    size, zero, one = _const(n), _const(0), _const(1)

    def bound(x, default, lo, hi):
        if x is None:
            return default
        x = i64(x)
        return clamp(lo, ops.select(ops.compare(x, zero, "LT"), add(x, size), x), hi)
    k = i64(step)
    if forward:
        first, last = bound(item.start, zero, zero, size), bound(item.stop, size, zero, size)
        offset = ops.binary("stablehlo.subtract", lane, ops.broadcast_in_dim(first, (n,), ()))
        inside = _both(ops.compare(offset, ops.broadcast_in_dim(zero, (n,), ()), "GE"),
                       ops.compare(lane, ops.broadcast_in_dim(last, (n,), ()), "LT"))
    else:
        top, minus_one = sub(size, one), _const(-1)
        first, last = bound(item.start, top, minus_one, top), bound(item.stop, minus_one, minus_one, top)
        offset = ops.binary("stablehlo.subtract", ops.broadcast_in_dim(first, (n,), ()), lane)
        inside = _both(ops.compare(offset, ops.broadcast_in_dim(zero, (n,), ()), "GE"),
                       ops.compare(lane, ops.broadcast_in_dim(last, (n,), ()), "GT"))
        k = sub(zero, k)
    on_step = ops.compare(ops.binary("stablehlo.remainder", offset, ops.broadcast_in_dim(k, (n,), ())),
                          ops.broadcast_in_dim(zero, (n,), ()), "EQ")
    chosen = ops.broadcast_in_dim(_both(inside, on_step), a.shape, (axis,))
    place = np.ndim(v) - (a.ndim - axis)  # (v's axis that lands on the strided one, right-aligned)
    if place >= 0 and not (type(np.shape(v)[place]) is int and np.shape(v)[place] == 1):
        _unsupported("a write of an array along a slice with a step other than 1 or -1 and a bound known only at "
                     "run time (a number, or values broadcast along that axis, are supported)")
    a.value = ops.select(chosen, _assigned(a, v, a.shape), a.value)


def fitted(v: Bounded, shape) -> TracedArray:
    """``v`` assigned to an array of the static ``shape`` (``out[k] = x[i:i + 3]``): each run-time length
    must be the extent it lands on, checked at run time, and the window moves to the front."""
    lead = len(shape) - v.ndim
    if lead < 0:
        raise located(ValueError(f"could not broadcast input array of {v.ndim} dimensions into shape {tuple(shape)}"))
    data = v.data.value
    for a, w in enumerate(v.windows):
        if w is not None:
            _check_lengths(w, shape[lead + a], "could not broadcast input array into the assigned shape")
            data = shifted(data, a, sub(_const(0), w.start), shape[lead + a])
    return TracedArray(data)


# --- compaction: masks and data-dependent functions ------------------------------------------------------

def masked(a, mask: TracedArray) -> Bounded:
    """``a[mask]`` for a traced boolean mask over ``a``'s leading axes: the selected elements (rows),
    compacted to the front."""
    a = asarray(a)
    k = mask.ndim
    _check_mask_shape(a, mask)
    size = int(np.prod(mask.shape, dtype=np.int64))
    flat = ops.reshape(a.value, (size,) + a.shape[k:])  # (the values now: x[mask] is a copy)
    lanes = ops.reshape(mask.value, (size,))
    # The rows left out carry no derivative (reverse mode): what is computed on the source under the mask
    # (extent_ops.py) has a derivative there that NumPy never computes, NaN for a NaN or a log's negative
    # argument, which 0 times would bring to the rows selected.  (value_bounds: what
    # np.bincount(labels[mask]) sizes its result by)
    source = without_derivatives_outside(lanes, wrap(flat))
    return Bounded.selected(Selection(source, lanes, true_count(lanes), value_bounds(a)))


def _with_basic_items(a, items):
    """For ``a[items]``, one traced boolean mask among basic items (``X[mask, 1]``, ``X[:, mask]``,
    ``A[i, mask, :]``): ``a`` indexed by the others, with the mask's axes moved to the front, the
    mask, and where NumPy puts the selection's axis (at the first of the mask and the integers if they
    are adjacent, else first)."""
    masks = [k for k, item in enumerate(items) if isinstance(item, TracedArray) and item.dtype == np.bool_]
    mask = items[masks[0]]
    if any(isinstance(item, (list, np.ndarray)) or isinstance(item, TracedArray) and item.ndim
           for k, item in enumerate(items) if k != masks[0]) or len(masks) != 1:
        _unsupported("a traced boolean mask combined with other index arrays")
    if any(item is Ellipsis for item in items):
        e = items.index(Ellipsis)
        used = sum(mask.ndim if k == masks[0] else item is not None for k, item in enumerate(items) if k != e)
        items = items[:e] + (slice(None),) * (a.ndim - used) + items[e + 1:]
        masks = [k for k, item in enumerate(items) if item is mask]
    p = masks[0]
    axes_before = [k for k, item in enumerate(items) if isinstance(item, slice) or item is None]
    q = sum(k < p for k in axes_before)
    view = a[items[:p] + (slice(None),) * mask.ndim + items[p + 1:]]
    if q:
        view = np.moveaxis(view, list(range(q, q + mask.ndim)), list(range(mask.ndim)))
    advanced = [k for k in range(len(items)) if k not in axes_before]
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    return view, mask, sum(k < advanced[0] for k in axes_before) if adjacent else 0


def masked_among(a, items):
    """``a[items]`` with one traced boolean mask among basic items."""
    view, mask, at = _with_basic_items(a, items)
    result = masked(view, mask)
    return np.moveaxis(result, 0, at) if at else result


def assign_masked_among(a, items, v):
    """``a[items] = v`` with one traced boolean mask among basic items: through a view of ``a``."""
    view, mask, at = _with_basic_items(a, items)
    if at and np.ndim(as_data(v)) > at:
        rank = view.ndim - mask.ndim + 1
        v = v if np.ndim(as_data(v)) == rank else np.reshape(v, (1,) * (rank - np.ndim(v)) + np.shape(v))
        v = np.moveaxis(v, at, 0)
    assign_masked(view, mask, v)


def _check_mask_shape(a, mask):
    if mask.ndim > a.ndim or mask.shape != a.shape[:mask.ndim]:
        axis = next((d for d, (m, n) in enumerate(zip(mask.shape, a.shape)) if m != n), 0)
        n = a.shape[axis] if axis < a.ndim else 0
        m = mask.shape[axis] if axis < mask.ndim else 0
        raise located(IndexError(f"boolean index did not match indexed array along axis {axis}; size of axis is "
                                 f"{n} but size of corresponding boolean axis is {m}"))


def assign_masked(a: TracedArray, mask: TracedArray, v):
    """``a[mask] = v``: the k-th selected element (row) takes ``v``'s k-th (or its only one)."""
    _check_mask_shape(a, mask)
    k = mask.ndim
    full_mask = ops.broadcast_in_dim(mask.value, a.shape, range(k))
    selected_rank = a.ndim - k + 1  # the selection's axis, then the axes the mask does not cover
    static = not isinstance(v, Bounded)
    if static and (np.ndim(v) < selected_rank or np.ndim(v) == selected_rank and np.shape(v)[0] == 1):
        v = as_data(v)[0] if np.ndim(v) == selected_rank else v  # one value (row) for every selected one
        new = value(v, a.dtype) if not isinstance(v, TracedArray) and np.ndim(v) == 0 else \
            convert_like_numpy(value(v), a.dtype)
        new = ops.broadcast_in_dim(new, a.shape, range(a.ndim - new.type.rank, a.ndim))
        a.value = ops.select(full_mask, new, a.value)
        return
    size = int(np.prod(mask.shape, dtype=np.int64))
    lanes = ops.reshape(mask.value, (size,))
    if isinstance(v, Bounded) and v.pending is not None and v.ndim == selected_rank and _same(v.pending.mask, lanes):
        # x[m] = f(x[m]): the values are f of the source under the same mask, lane for lane
        new = convert_like_numpy(ops.reshape(v.pending.source.value, a.shape), a.dtype)
        a.value = ops.select(full_mask, new, a.value)
        return
    order, count = true_ranks(lanes)
    source = v if isinstance(v, Bounded) else Bounded(asarray(v), [Window(_const(0), _const(np.shape(v)[0]))]
                                                      + [None] * (np.ndim(v) - 1))
    if source.ndim != selected_rank:
        raise located(ValueError(f"shape mismatch: value array of {source.ndim} dimensions cannot be broadcast to "
                                 f"indexing result of {selected_rank} dimensions"))
    w = source.windows[0]
    if w is None:
        _unsupported("x[mask] = v with v of a static length")
    _check_lengths(w, Window(_const(0), count), "shape mismatch: value array cannot be broadcast to indexing result")
    where_from = ops.binary("stablehlo.add", order, ops.broadcast_in_dim(w.start, (size,), ()))
    rows = source.data[wrap(where_from)]  # (size, rest...): lane k's value (clamped where not selected)
    new = convert_like_numpy(ops.reshape(value(rows), a.shape[:k] + tuple(rows.shape[1:])), a.dtype)
    new = ops.broadcast_in_dim(new, a.shape, range(a.ndim - new.type.rank, a.ndim))
    a.value = ops.select(full_mask, new, a.value)


@implements(np.nonzero)
@operation(np.nonzero)
def nonzero(a):
    """The indices of the non-zero elements (of the valid lanes, for an array with run-time extents),
    one Bounded vector per axis (all with one window)."""
    known = known_value(a)
    if known is not None:
        return tuple(wrap(ops.constant(i)) for i in np.nonzero(known))
    data = as_data(a)
    if data.ndim == 0:
        raise located(ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() "
                                 "instead."))
    mask = data.value if data.dtype == np.bool_ else ops.compare(data.value, ops.broadcast_in_dim(
        ops.constant(np.zeros((), data.dtype)), data.shape, ()), "NE")
    if isinstance(a, Bounded):
        mask = ops.binary("stablehlo.and", mask, a.valid())
    positions, count = selected_positions(ops.reshape(mask, (data.size,)))
    window = Window(_const(0), count)
    strides = np.cumprod((1,) + data.shape[:0:-1])[::-1]
    flat = wrap(positions)
    windows = a.windows if isinstance(a, Bounded) else [None] * data.ndim
    starts = [0 if w is None else traced_int(w.start) for w in windows]
    return tuple(Bounded(asarray((flat // int(s)) % n - start), [window])
                 for s, n, start in zip(strides, data.shape, starts))


@implements(np.flatnonzero)
@operation(np.flatnonzero)
def flatnonzero(a):
    known = known_value(a)
    return nonzero(np.ravel(a) if known is None else known.ravel())[0]


@implements(np.argwhere)
@operation(np.argwhere)
def argwhere(a):
    if np.ndim(a) == 0:
        known = known_value(a)
        if known is not None:
            return wrap(ops.constant(np.argwhere(known)))
        # One row of no columns where it holds, none where not: a run-time length of 0 or 1.
        holds = ops.convert(value(np.not_equal(a, 0)), _I64)
        return Bounded(wrap(ops.constant(np.zeros((1, 0), np.int64))), [Window(_const(0), holds), None])
    indices = nonzero(a)
    if not isinstance(indices[0], Bounded):
        return np.stack(indices, axis=1)
    return Bounded(asarray(np.stack([i.data for i in indices], axis=1)), [indices[0].windows[0], None])


def compress_traced(condition, a, axis=None, out=None):
    """``np.compress`` with a traced condition: the selected slices along ``axis``, compacted."""
    if out is not None:
        _unsupported("numpy.compress with out=")
    if np.ndim(condition) != 1:
        raise located(ValueError("condition must be a 1-d array"))
    a = asarray(a)
    if axis is None:
        a, ax = np.ravel(a), 0
    else:
        ax = axis_index(axis, a.ndim)
    condition = asarray(condition).astype(np.bool_)
    n = a.shape[ax]
    if condition.shape[0] > n:
        raise located(IndexError(f"index {n} is out of bounds for axis {ax} with size {n}"))
    if condition.shape[0] < n:
        condition = np.concatenate([condition, np.zeros(n - condition.shape[0], np.bool_)])
    moved = np.moveaxis(a, ax, 0)
    result = masked(moved, condition)
    return transpose(result, list(range(1, ax + 1)) + [0] + list(range(ax + 1, a.ndim))) if ax else result


@implements(np.extract)
def extract(condition, arr):
    known = known_value(condition)
    if known is not None:
        return np.take(np.ravel(arr), np.flatnonzero(known))
    return masked(np.ravel(arr), np.ravel(asarray(condition)).astype(np.bool_))


@implements(np.unique)
@operation(np.unique)
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           sorted=True):
    """The sorted distinct values (a Bounded vector), and NumPy's optional index, inverse and counts; of
    a vector with a run-time length, of its valid lanes."""
    known = known_value(ar)
    if not sorted:
        raise located(UnsupportedError("numpy.unique with sorted=False is not supported by cofactor: NumPy gives the "
                                       "values in its hash table's order; np.unique(x) gives them sorted"))
    if known is None and axis is not None:
        raise located(UnsupportedError("numpy.unique with axis= (distinct rows) of a traced array is not supported "
                                       "yet; np.unique of the rows packed into one value each (a dot with distinct "
                                       "weights) is, or call it outside the compiled function"))
    if known is not None:
        results = np.unique(known, return_index, return_inverse, return_counts, axis, equal_nan=equal_nan)
        return tuple(wrap(ops.constant(r)) for r in results) if isinstance(results, tuple) else \
            wrap(ops.constant(results))
    if isinstance(ar, Bounded):
        if ar.ndim != 1 and return_inverse:
            _unsupported("numpy.unique(..., return_inverse=True) of a multi-dimensional array")
        ar = np.ravel(ar)
        flat, start, total = ar.data, traced_int(ar.windows[0].start), traced_int(ar.windows[0].length)
        relative = np.argsort(ar, kind="stable").data  # (its valid lanes first)
        order = relative + start
    else:
        flat = np.ravel(asarray(ar))
        total = flat.shape[0]
        order = relative = np.argsort(flat, kind="stable")
    size = flat.shape[0]
    ordered = flat[order]
    lanes = wrap(ops.iota((size,), _I64, 0))
    if size:
        later, earlier = ordered[1:], ordered[:-1]
        new = later != earlier
        if equal_nan and flat.dtype.kind in "fc":
            new = new & ~(np.isnan(later) & np.isnan(earlier))
        first = np.concatenate([np.ones(1, np.bool_), new]) & (lanes < total)
    else:
        first = np.zeros(0, np.bool_)
    starts, count = selected_positions(value(first))
    window = Window(_const(0), count)
    results = [Bounded(ordered[wrap(starts)], [window])]
    if return_index:
        results.append(Bounded(relative[wrap(starts)], [window]))
    if return_inverse:
        group = np.cumsum(first) - 1
        inverse = asarray(np.zeros(size, np.int64))
        inverse[order] = group
        inverse = inverse if isinstance(ar, Bounded) or np.ndim(ar) <= 1 else inverse.reshape(np.shape(ar))
        inverse = with_value_bounds(inverse, 0, max(size - 1, 0))
        results.append(Bounded(inverse, ar.windows) if isinstance(ar, Bounded) else inverse)
    if return_counts:
        following = np.concatenate([wrap(starts)[1:], np.full(1, size, np.int64)])
        following = np.where(lanes == traced_int(sub(count, _const(1))), total, following)
        results.append(Bounded(asarray(following - wrap(starts)), [window]))
    return results[0] if len(results) == 1 else tuple(results)


def _unique_result(func, **returns):
    """NumPy 2's unique_counts / unique_inverse / unique_all: np.unique with NaNs kept apart, as a
    named tuple of NumPy's type."""
    result_type = type(func(np.zeros(1)))

    @implements(func)
    @operation(func)
    def impl(x):
        return result_type(*np.unique(x, equal_nan=False, **returns))


@implements(np.unique_values)
@operation(np.unique_values)
def unique_values(x):
    known = known_value(x)
    if known is not None:
        return asarray(np.unique_values(known))
    raise located(UnsupportedError("numpy.unique_values of a traced array is not supported: NumPy gives the values "
                                   "in the order of its hash table, which cofactor does not reproduce; np.unique(x) "
                                   "gives the same values, sorted"))


_unique_result(np.unique_counts, return_counts=True)
_unique_result(np.unique_inverse, return_inverse=True)
_unique_result(np.unique_all, return_index=True, return_inverse=True, return_counts=True)


@implements(np.union1d)
@operation(np.union1d)
def union1d(ar1, ar2):
    return np.unique(np.concatenate([np.ravel(ar1), np.ravel(ar2)]))


def _set_routine(func, combine):
    """A set routine on traced arrays: ``combine(ar1, ar2)`` of unique values and masks; of constants, NumPy's."""
    @implements(func)
    @operation(func)
    def routine(ar1, ar2, assume_unique=False, **kwargs):
        known = [known_value(a) for a in (ar1, ar2)]
        if all(k is not None for k in known):
            result = func(*known, assume_unique=assume_unique, **kwargs)
            return tuple(map(asarray, result)) if isinstance(result, tuple) else asarray(result)
        return combine(ar1, ar2, assume_unique, **kwargs)
    return routine


def _intersection(a, b, unique, return_indices=False):
    """The sorted values in both, of the two's common dtype (with ``assume_unique`` too, as NumPy's), and
    where each first is in ``a`` and ``b``."""
    def sorted_with_index(x):
        x = np.ravel(x)
        if not unique:
            return np.unique(x, return_index=True)
        order = np.argsort(x, kind="stable")
        return x[order], order
    (u1, i1), (u2, i2) = sorted_with_index(a), sorted_with_index(b)
    in_both = np.isin(u1, u2)
    values = u1[in_both].astype(np.result_type(*[getattr(x, "dtype", None) or np.asarray(x).dtype for x in (a, b)]))
    return (values, i1[in_both], i2[np.isin(u2, u1)]) if return_indices else values


_set_routine(np.intersect1d, _intersection)
_set_routine(np.setdiff1d, lambda a, b, unique_a: (u := np.ravel(a) if unique_a else np.unique(a))[~np.isin(u, b)])


def _exclusive_or(a, b, unique):
    """The values in exactly one of the two (NumPy's neighbour test keeps each NaN)."""
    values, counts = np.unique(np.concatenate([np.ravel(x) if unique else np.unique(x) for x in (a, b)]),
                               return_counts=True, equal_nan=False)
    return values[counts == 1]


_set_routine(np.setxor1d, _exclusive_or)
