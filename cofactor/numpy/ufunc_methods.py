"""The ufunc methods reduce, accumulate, reduceat, outer and at (out= for all: out.py)."""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import ops
from ..tracing.array import TracedArray
from ..tracing.derivatives import is_differentiating
from ..tracing.dispatch import UFUNCS, implements_ufunc
from ._core import axis_index, axis_tuple, convert_like_numpy, known_value, reject, value, wrap
from .extent import Bounded
from .indexing import _Advanced, _assigned
from .out import write_out
from .reductions import _keep, numpy_dtype, reduce_ufunc, scan
from .ufuncs import KERNELS, apply

# Ufuncs whose reduction XLA may reorder (associative and commutative).
_ASSOCIATIVE = [np.add, np.multiply, np.maximum, np.minimum, np.fmax, np.fmin, np.logical_and, np.logical_or,
                np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.gcd, np.lcm]


def _associative(ufunc, method):
    if ufunc not in _ASSOCIATIVE:
        raise UnsupportedError(f"numpy.{ufunc.__name__}.{method} is not supported: only the reductions of "
                               "associative ufuncs (add, multiply, maximum, minimum, fmax, fmin, gcd, lcm, logical and bitwise "
                               "and/or/xor) are supported")


def _reduce(ufunc):
    @implements_ufunc(ufunc, "reduce")
    def reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        _associative(ufunc, "reduce")
        reject(f"numpy.{ufunc.__name__}.reduce", where=(where, True))
        v = value(array)
        axes = axis_tuple(axis, v.type.rank)
        target = numpy_dtype(ufunc.reduce, v.dtype, dtype=dtype)
        if initial is np._NoValue and any(v.shape[d] == 0 for d in axes) and ufunc.identity is None:
            raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} which has no identity")
        r = reduce_ufunc(convert_like_numpy(v, target), axes, ufunc)
        if initial is not np._NoValue:
            r = convert_like_numpy(value(apply(ufunc, wrap(r), initial)), target)
        result = wrap(_keep(r, axes, keepdims, v.type.rank))
        return result if out is None else write_out(out, result, ufunc.__name__, casting="unsafe")

    @implements_ufunc(ufunc, "accumulate")
    def accumulate(array, axis=0, dtype=None, out=None):
        _associative(ufunc, "accumulate")
        v = value(array)
        target = numpy_dtype(ufunc.accumulate, v.dtype, dtype=dtype)
        result = wrap(scan(convert_like_numpy(v, target), axis_index(axis, v.type.rank), ufunc))
        return result if out is None else write_out(out, result, ufunc.__name__, casting="unsafe")


def _reduceat(ufunc):
    @implements_ufunc(ufunc, "reduceat")
    def reduceat(array, indices, axis=0, dtype=None, out=None):
        """Each segment array[indices[i]:indices[i + 1]] along ``axis`` reduced (the last one to the
        end; the element at indices[i] where the next index is not larger), for indices known at
        trace time."""
        _associative(ufunc, "reduceat")
        known = known_value(indices)
        if known is None:
            raise UnsupportedError(f"numpy.{ufunc.__name__}.reduceat with traced indices is not supported")
        starts = np.asarray(known)
        if starts.ndim != 1:
            raise ValueError("setting an array element with a sequence. The requested array would exceed the "
                             "maximum number of dimension of 1.")
        v = value(array)
        axis = axis_index(axis, v.type.rank)
        n = v.shape[axis]
        target = numpy_dtype(lambda x, **kw: ufunc.reduceat(x, [0], **kw), v.dtype, dtype=dtype)
        segments = []
        for k, start in enumerate(starts.tolist()):
            if not 0 <= start < n:
                raise IndexError(f"index {start} out-of-bounds in {ufunc.__name__}.reduceat [0, {n})")
            stop = n if k + 1 == len(starts) else starts[k + 1] if starts[k + 1] > start else start + 1
            lo, hi = [0] * v.type.rank, list(v.shape)
            lo[axis], hi[axis] = start, stop
            segment = convert_like_numpy(ops.slice(v, lo, hi), target)
            segments.append(_keep(reduce_ufunc(segment, (axis,), ufunc), (axis,), True, v.type.rank))
        shape = list(v.shape)
        shape[axis] = 0
        result = wrap(ops.concatenate(segments, axis) if segments else ops.constant(np.zeros(shape, target)))
        return result if out is None else write_out(out, result, ufunc.__name__, casting="unsafe")


def _outer(ufunc):
    @implements_ufunc(ufunc, "outer")
    def outer(a, b, **kwargs):
        a_shape = np.shape(a)
        return UFUNCS[(ufunc, "__call__")](np.reshape(a, a_shape + (1,) * np.ndim(b)), b, **kwargs)


def _known_positions(a, indices):
    """The flat positions in ``a`` of the elements ``a[indices]``, if the indices are constants; else None."""
    index = indices if isinstance(indices, tuple) else (indices,)
    known = tuple(known_value(item) for item in index)
    if any(isinstance(item, TracedArray) and k is None for item, k in zip(index, known)):
        return None
    return np.arange(a.size).reshape(a.shape)[known]


def _at_in_rounds(ufunc, a, positions, b):
    """``ufunc.at`` as scatters that set unique positions, which Enzyme 0.0.16 can differentiate (its
    reverse mode has no scatter that combines with another ufunc than add, subtract or multiply, nor
    with multiply at repeated positions).  Round k applies each position's k-th update, so updates of
    a repeated position happen in order, as in NumPy."""
    flat_positions = positions.ravel()
    updates = wrap(ops.reshape(_assigned(a, b, positions.shape), (flat_positions.size,)))
    order = np.argsort(flat_positions, kind="stable")
    ranked = flat_positions[order]
    occurrence = np.empty_like(order)
    occurrence[order] = np.arange(order.size) - np.searchsorted(ranked, ranked)
    flat = wrap(ops.reshape(value(a), (a.size,)))
    for k in range(occurrence.max(initial=-1) + 1):
        chosen = np.flatnonzero(occurrence == k)
        where = flat_positions[chosen]
        flat[where] = wrap(convert_like_numpy(KERNELS[ufunc](flat[where].value, updates[chosen].value), a.dtype))
    a.value = ops.reshape(flat.value, a.shape)


def _at(ufunc):
    @implements_ufunc(ufunc, "at")
    def at(a, indices, b=None):
        if ufunc.nin != 2 or b is None:
            raise UnsupportedError(f"numpy.{ufunc.__name__}.at is supported for binary ufuncs only")
        operand = np.asarray(b).dtype if not isinstance(b, (TracedArray, Bounded)) else \
            np.dtype({int: np.int64, float: np.float64, complex: np.complex128}.get(getattr(b, "weak", None), b.dtype))
        if np.result_type(a.dtype, operand).kind != a.dtype.kind:
            raise UnsupportedError(
                f"numpy.{ufunc.__name__}.at of {operand} values into a {a.dtype} array: NumPy computes each update in "
                f"{np.result_type(a.dtype, operand)} and casts it back, one at a time, which cofactor does not "
                "reproduce; cast the values first (.astype) or update a copy of another dtype")
        if is_differentiating() and a.dtype.kind == "f" and ufunc not in (np.add, np.subtract):
            positions = _known_positions(a, indices)
            if positions is not None:
                _at_in_rounds(ufunc, a, positions, b)
                return
        items = indices if isinstance(indices, tuple) else (indices,)
        if all(isinstance(i, (slice, int, np.integer)) or i is None or i is Ellipsis for i in items) or \
                len(items) == 1 and isinstance(items[0], TracedArray) and items[0].dtype == np.bool_:
            # (a basic index or a mask names each element once: np.subtract.at(x, slice(1, 4), v), np.add.at(x, m, 1))
            a[indices] = ufunc(a[indices], b)
            return
        plan = _Advanced(a, items)
        kernel = KERNELS[ufunc]
        # Every index, repeated or not, applies its update: a scatter that combines.
        plan.write(plan.updates(a, b), lambda old, new: convert_like_numpy(kernel(old, new), a.dtype))


for _ufunc in list(KERNELS):
    if _ufunc.nin == 2 and _ufunc.nout == 1:
        _reduce(_ufunc)
        _reduceat(_ufunc)
        _outer(_ufunc)
        _at(_ufunc)


