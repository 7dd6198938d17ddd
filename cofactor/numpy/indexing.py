"""Indexing: reading and writing with integers (also traced), slices, None and Ellipsis,
and boolean masks for writes.

Basic indexing returns a view (a ``BasicIndex`` lens), so ``a[1:-1] += b`` and
``row = a[0]; row *= 2`` update ``a``, as in NumPy.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import ops
from ..tracing.array import TracedArray
from ..tracing.dispatch import implements
from ..tracing.views import BasicIndex
from ._core import broadcast_to, is_weak, value, view
from .creation import convert_like_numpy


def _is_traced_integer(item) -> bool:
    return isinstance(item, TracedArray) and item.ndim == 0 and item.dtype.kind in "iu"


def _is_basic(item) -> bool:
    if item is None or item is Ellipsis or isinstance(item, slice) or _is_traced_integer(item):
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
        if isinstance(item, slice):
            lo, hi, step = item.indices(n)
            count = len(range(lo, hi, step))
            items.append(("slice", lo, count, step))
            out_shape.append(count)
        elif isinstance(item, TracedArray):
            items.append(("index", item.value))
        else:
            i = item.__index__()
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            items.append(("index", i % n))
        axis += 1
    return BasicIndex(items, out_shape)


def _unsupported_index():
    return UnsupportedError("advanced indexing with integer or boolean arrays is not supported yet for reads; "
                            "only integers (also traced), slices, None and ... are (a boolean mask works in "
                            "writes: x[mask] = v, and as np.where(mask, a, b))")


@implements("ndarray.__getitem__")
def getitem(a, index):
    items = index if isinstance(index, tuple) else (index,)
    if not all(_is_basic(item) for item in items):
        raise _unsupported_index()
    return view(a, basic_lens(np.shape(a) if not isinstance(a, TracedArray) else a.shape, index))


def _assigned(a, v, shape):
    """``v`` cast to ``a``'s dtype (as NumPy's assignment casts) and broadcast to ``shape``."""
    new = value(v, a.dtype) if is_weak(v) else convert_like_numpy(value(v), a.dtype)
    extra = new.type.rank - len(shape)
    if extra > 0 and all(d == 1 for d in new.shape[:extra]):  # NumPy drops leading length-1 axes
        new = ops.reshape(new, new.shape[extra:])
    try:
        return broadcast_to(new, shape)
    except ValueError:
        raise ValueError(f"could not broadcast input array from shape {new.shape} into shape "
                         f"{tuple(shape)}") from None


@implements("ndarray.__setitem__")
def setitem(a, index, v):
    items = index if isinstance(index, tuple) else (index,)
    if all(_is_basic(item) for item in items):
        target = view(a, basic_lens(a.shape, index))
        target.value = _assigned(a, v, target.shape)
        return
    mask = value(index) if not isinstance(index, tuple) else None
    if mask is not None and mask.dtype == np.bool_:
        if mask.shape != a.shape[:mask.type.rank]:
            raise IndexError(f"boolean index did not match indexed array along axis 0; size of axis is "
                             f"{a.shape[0] if a.shape else 0} but size of corresponding boolean axis is "
                             f"{mask.shape[0] if mask.shape else 0}")
        if np.ndim(v) != 0:
            raise UnsupportedError("x[mask] = array assigns a data-dependent number of elements; assign a "
                                   "scalar, or use x = np.where(mask, values, x) with values of x's shape")
        full_mask = ops.broadcast_in_dim(mask, a.shape, range(mask.type.rank))
        a.value = ops.select(full_mask, _assigned(a, v, a.shape), a.value)
        return
    raise _unsupported_index()
