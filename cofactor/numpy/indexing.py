"""Reading with basic indices: integers, slices (any step), None and Ellipsis.

Basic indexing returns views in NumPy, so the results remember their base.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import ops
from ..tracing.array import TracedArray
from ..tracing.dispatch import implements
from ._core import value
from .shape import view


def _expand_index(index, ndim):
    """The index as a tuple with Ellipsis replaced by full slices."""
    index = index if isinstance(index, tuple) else (index,)
    for item in index:
        if isinstance(item, TracedArray) or isinstance(item, (list, np.ndarray)) and not np.ndim(item) == 0 \
                or isinstance(item, (bool, np.bool_)):
            raise UnsupportedError(
                "advanced indexing (integer or boolean arrays, traced indices) is not supported yet; "
                "only integers, slices, None and ... are")
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


def _integer(item):
    try:
        return item.__index__()
    except (AttributeError, TypeError):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                         "integer or boolean arrays are valid indices") from None


@implements("ndarray.__getitem__")
def getitem(a, index):
    v = value(a)
    index = _expand_index(index, v.type.rank)
    start, limit, strides, reverse, shape = [], [], [], [], []
    dim = 0
    for item in index:
        if item is None:
            shape.append(1)
            continue
        n = v.shape[dim]
        if isinstance(item, slice):
            lo, hi, step = item.indices(n)
            if step < 0:  # read the reversed axis forward
                reverse.append(dim)
                lo, hi, step = n - 1 - lo, n - 1 - hi, -step
            count = max(0, -(-(hi - lo) // step))
            start.append(lo)
            limit.append(lo + (count - 1) * step + 1 if count else lo)
            strides.append(step)
            shape.append(count)
        else:
            i = _integer(item)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
            i %= n
            start.append(i)
            limit.append(i + 1)
            strides.append(1)
        dim += 1
    result = ops.slice(ops.reverse(v, reverse), start, limit, strides)
    return view(a, ops.reshape(result, shape))


@implements("ndarray.__setitem__")
def setitem(a, index, val):
    raise UnsupportedError("assignment into a traced array (a[...] = v) is not supported yet")
