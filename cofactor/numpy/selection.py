"""Where arrays with run-time lengths come from (numpy/extent.py): slices with traced bounds (a window
on a view of the whole axis), indexing with such index arrays, and the data-dependent selections,
which compact what they select to the front: ``x[mask]`` (and writes through it), ``np.nonzero`` and
its relatives, ``np.unique``, ``np.compress``, ``np.extract``."""
from __future__ import annotations

import numpy as np

from ..errors import located
from ..ir import ops
from ..tracing.array import TracedArray
from ..tracing.dispatch import implements
from ._core import asarray, axis_index, known_value, value, wrap
from .creation import convert_like_numpy
from .extent import (Bounded, Window, _check_lengths, _const, _unsupported, as_data, selected_positions, shifted,
                     sub, true_ranks)
from .extent_ops import aligned, assign, resolved, transpose

_I64 = np.dtype(np.int64)


def traced_slice(a: TracedArray, index):
    """``a[index]`` where a slice has a bound known only at run time: a window on a view of the whole axis."""
    data_items, windows = resolved(a, [None] * a.ndim, index)
    return Bounded(a[data_items], windows)


def assign_traced_slice(a: TracedArray, index, v):
    assign(traced_slice(a, index), v)


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


def take_bounded(a: TracedArray, index):
    """``a[i]`` (or ``a[i, j]``, ``a[np.nonzero(m)]``) where the integer index arrays have a run-time extent:
    a gather of every lane, with the indices' windows.  Invalid lanes read element 0: what they hold
    may be any number (``idx[:b]`` of an index array whose later entries are out of range), and the
    gather's index check must not see it (NumPy's ``x[idx[:b]]`` raised IndexError for ``idx[b]``)."""
    items = index if isinstance(index, tuple) else (index,)
    arrays = [k for k, item in enumerate(items) if not (isinstance(item, slice) and item == slice(None))]
    if any(not isinstance(items[k], Bounded) or items[k].dtype.kind not in "iu" or items[k].ndim != 1 for k in arrays) \
            or arrays != list(range(arrays[0], arrays[-1] + 1)):
        _unsupported("indexing with integer arrays whose length is known only at run time, other than adjacent "
                     "vectors (a[i], a[:, i], a[i, j])")
    indices, windows = aligned([items[k] for k in arrays])
    valid = TracedArray(Bounded(indices[0], windows).valid())  # (the aligned vectors share their windows)
    for m, k in enumerate(arrays):
        if a.shape[k]:  # (an empty axis has no element 0: any valid lane is NumPy's IndexError there too)
            indices[m] = np.where(valid, indices[m], np.zeros((), indices[m].dtype))
    data = a[tuple(indices[arrays.index(k)] if k in arrays else item for k, item in enumerate(items))]
    return Bounded(data, [None] * arrays[0] + windows + [None] * (a.ndim - arrays[-1] - 1))


# --- compaction: masks and data-dependent functions ------------------------------------------------------

def masked(a, mask: TracedArray) -> Bounded:
    """``a[mask]`` for a traced boolean mask over ``a``'s leading axes: the selected elements (rows),
    compacted to the front."""
    a = asarray(a)
    k = mask.ndim
    _check_mask_shape(a, mask)
    size = int(np.prod(mask.shape, dtype=np.int64))
    flat = np.reshape(a, (size,) + a.shape[k:])
    positions, count = selected_positions(ops.reshape(mask.value, (size,)))
    return Bounded(flat[wrap(positions)], [Window(_const(0), count)] + [None] * (a.ndim - k))


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
    order, count = true_ranks(ops.reshape(mask.value, (size,)))
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
def nonzero(a):
    """The indices of the non-zero elements, one Bounded vector per axis (all with one window)."""
    if isinstance(a, Bounded):
        _unsupported("numpy.nonzero")
    known = known_value(a)
    if known is not None:
        return tuple(wrap(ops.constant(i)) for i in np.nonzero(known))
    a = asarray(a)
    if a.ndim == 0:
        raise located(ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() "
                                 "instead."))
    mask = a.value if a.dtype == np.bool_ else ops.compare(a.value, ops.broadcast_in_dim(
        ops.constant(np.zeros((), a.dtype)), a.shape, ()), "NE")
    positions, count = selected_positions(ops.reshape(mask, (a.size,)))
    window = Window(_const(0), count)
    strides = np.cumprod((1,) + a.shape[:0:-1])[::-1]
    flat = wrap(positions)
    return tuple(Bounded(asarray((flat // int(s)) % n), [window]) for s, n in zip(strides, a.shape))


@implements(np.flatnonzero)
def flatnonzero(a):
    known = known_value(a)
    return nonzero(np.ravel(a) if known is None else known.ravel())[0]


@implements(np.argwhere)
def argwhere(a):
    if np.ndim(a) == 0:
        return wrap(ops.constant(np.argwhere(known_value(a) if known_value(a) is not None else 1)))
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
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           sorted=True):
    """The sorted distinct values (a Bounded vector), and NumPy's optional index, inverse and counts."""
    known = known_value(ar)
    if known is None and (isinstance(ar, Bounded) or axis is not None):
        _unsupported("numpy.unique " + ("with axis=" if axis is not None else "of such an array"))
    if known is not None:
        results = np.unique(known, return_index, return_inverse, return_counts, axis, equal_nan=equal_nan)
        return tuple(wrap(ops.constant(r)) for r in results) if isinstance(results, tuple) else \
            wrap(ops.constant(results))
    flat = np.ravel(asarray(ar))
    size = flat.shape[0]
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    if size:
        later, earlier = ordered[1:], ordered[:-1]
        new = later != earlier
        if equal_nan and flat.dtype.kind in "fc":
            new = new & ~(np.isnan(later) & np.isnan(earlier))
        first = np.concatenate([np.ones(1, np.bool_), new])
    else:
        first = np.zeros(0, np.bool_)
    starts, count = selected_positions(value(first))
    window = Window(_const(0), count)
    results = [Bounded(ordered[wrap(starts)], [window])]
    if return_index:
        results.append(Bounded(order[wrap(starts)], [window]))
    if return_inverse:
        group = np.cumsum(first) - 1
        inverse = asarray(np.zeros(size, np.int64))
        inverse[order] = group
        results.append(inverse.reshape(np.shape(ar)) if np.ndim(ar) > 1 else inverse)
    if return_counts:
        lanes = wrap(ops.iota((size,), _I64, 0))
        following = np.concatenate([wrap(starts)[1:], np.full(1, size, np.int64)])
        following = np.where(lanes == TracedArray(sub(count, _const(1)), scalar=True, weak=int), size, following)
        results.append(Bounded(asarray(following - wrap(starts)), [window]))
    return results[0] if len(results) == 1 else tuple(results)


@implements(np.union1d)
def union1d(ar1, ar2):
    return np.unique(np.concatenate([np.ravel(ar1), np.ravel(ar2)]))


def _set_routine(func, combine):
    """A set routine on traced arrays: ``combine(ar1, ar2)`` of unique values and masks; of constants, NumPy's."""
    @implements(func)
    def routine(ar1, ar2, assume_unique=False, **kwargs):
        known = [known_value(a) for a in (ar1, ar2)]
        if all(k is not None for k in known):
            result = func(*known, assume_unique=assume_unique, **kwargs)
            return tuple(map(asarray, result)) if isinstance(result, tuple) else asarray(result)
        if kwargs.get("return_indices"):
            _unsupported(f"numpy.{func.__name__} with return_indices=True")
        return combine(ar1, ar2, assume_unique)
    return routine


_set_routine(np.intersect1d, lambda a, b, unique_a: (u := np.ravel(a) if unique_a else np.unique(a))[np.isin(u, b)])
_set_routine(np.setdiff1d, lambda a, b, unique_a: (u := np.ravel(a) if unique_a else np.unique(a))[~np.isin(u, b)])
