"""NumPy's order statistics and joins on arrays with run-time extents (``Bounded``, extent.py):
``argsort``, ``median`` / ``quantile`` / ``percentile``, ``concatenate`` and its relatives, ``diff``.
What each does with the invalid lanes:

- ``argsort`` sorts them after every valid lane (NaNs included), so the result is a window at lane 0;
- the order statistics sort the valid lanes to the front and read at most the first ``length``;
- a join writes its pieces one after another, each at the run-time end of those before it, so that
  a later piece overwrites the invalid lanes of an earlier one: the result is one window at lane 0;
- ``diff`` of a window is the window one lane shorter.
"""
from __future__ import annotations

import numpy as np

from ..ir import ops
from ..tracing.array import TracedArray
from ..tracing.checks import numpy_error_if
from ._core import asarray, axis_index, value
from .extent import (Bounded, Window, _binary, _const, _unsupported, add, as_data, bounded, operation, shifted, sub,
                     traced_int)
from .extent_ops import aligned, sort, transpose
from .statistics import _middle, _quantile_of_sorted, quantile_arguments


@operation(np.argsort)
def argsort(b, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        _unsupported("numpy.argsort with order=")
    if axis is None:
        b = np.ravel(b)
    ax = 0 if axis is None else axis_index(axis, b.ndim)
    w = b.windows[ax]
    first = np.argsort(b.data, axis=ax, kind=kind, stable=stable)
    if w is None:
        return Bounded(asarray(first), b.windows)
    invalid = np.take_along_axis(TracedArray(ops.unary("stablehlo.not", b.valid((ax,)))), first, axis=ax)
    order = np.take_along_axis(first, np.argsort(invalid, axis=ax, kind="stable"), axis=ax)
    windows = list(b.windows)
    windows[ax] = Window(_const(0), w.length)
    return Bounded(asarray(order - traced_int(w.start)), windows)


def _sorted_along(b, axis, name):
    """``b`` sorted along ``axis``, its only axis of run-time length (the valid lanes first, then what
    the sort fills with), that axis moved last; its length; the axis."""
    if axis is None:
        b = np.ravel(b)
    if not isinstance(axis, (type(None), int, np.integer)):
        _unsupported(f"numpy.{name} over several axes")
    ax = 0 if axis is None else axis_index(axis, b.ndim)
    if b.windows[ax] is None or any(w is not None for a, w in enumerate(b.windows) if a != ax):
        _unsupported(f"numpy.{name} along an axis other than the one of run-time length")
    return np.moveaxis(sort(b, axis=ax).data, ax, -1), traced_int(b.windows[ax].length), ax


def _kept(result, ax, leading=0):
    """``result`` with the reduced axis ``ax`` back, of length 1 (keepdims), after ``leading`` axes (q's)."""
    shape = np.shape(result)
    return np.reshape(result, shape[:leading + ax] + (1,) + shape[leading + ax:])


@operation(np.median)
def median(b, axis=None, out=None, overwrite_input=False, keepdims=False):
    if out is not None:
        _unsupported("numpy.median with out=")
    data, n, ax = _sorted_along(b, axis, "median")
    result = _middle(data, n)
    return _kept(result, ax) if keepdims else result


def _quantile(name, percent):
    def quantile(b, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                 weights=None):
        q, weak_q = quantile_arguments(name, b, q, out, method, weights, percent)
        data, n, ax = _sorted_along(b, axis, name)
        numpy_error_if(value(n == 0), lambda: IndexError(f"index -1 is out of bounds for axis {ax} with size 0"))
        result = _quantile_of_sorted(data, q, method, weak_q, n)
        return _kept(result, ax, np.ndim(q)) if keepdims else result
    return quantile


operation(np.quantile)(_quantile("quantile", percent=False))
operation(np.percentile)(_quantile("percentile", percent=True))


# --- joins ------------------------------------------------------------------------------------------------

def _rows_of(arrays):
    """An array of run-time length given where NumPy takes a sequence of arrays (``np.vstack(rows)`` of
    a list of run-time length of rows, numpy/extent_lists.py): the list of its rows, as NumPy reads it."""
    return isinstance(arrays, Bounded) and arrays.windows[0] is not None


@operation(np.concatenate)
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """The pieces one after another along ``axis``, where each may have a run-time length; a piece
    with a run-time length along another axis is lined up with the others there."""
    if out is not None:
        _unsupported("numpy.concatenate with out=")
    if _rows_of(arrays):  # (its rows joined along their first axis: its first two axes made one)
        if axis != 0 or arrays.ndim < 2 or any(w is not None for w in arrays.windows[1:]):
            _unsupported("numpy.concatenate of the rows of an array of run-time length, other than along axis 0")
        rows = arrays
        data = shifted(rows.data.value, 0, sub(_const(0), rows.windows[0].start), rows.data.shape[0])
        k = rows.data.shape[1]
        joined = TracedArray(ops.reshape(data, (rows.data.shape[0] * k, *rows.data.shape[2:])))
        result = Bounded(joined, [Window(_const(0), _binary("stablehlo.multiply", rows.windows[0].length, _const(k)))]
                         + [None] * (joined.ndim - 1))
        return result if dtype is None else result.astype(dtype)
    arrays = [np.ravel(a) for a in arrays] if axis is None else list(arrays)
    ax = axis_index(0 if axis is None else axis, np.ndim(as_data(arrays[0])))
    moved = [np.moveaxis(a, ax, 0) if isinstance(a, Bounded) else np.moveaxis(as_data(a), ax, 0) for a in arrays]
    others = [Bounded(a.data, [None] + a.windows[1:]) if isinstance(a, Bounded) else a for a in moved]
    lined_up, windows = aligned(others) if any(isinstance(a, Bounded) for a in others) else (others, None)
    joined = np.concatenate([as_data(a) for a in lined_up], axis=0, dtype=dtype, casting=casting)
    result, end = joined.value, _const(0)
    for piece, data in zip(moved, lined_up):
        w = piece.windows[0] if isinstance(piece, Bounded) else None
        data = ops.convert(value(data), joined.dtype)
        if w is not None:
            data = shifted(data, 0, sub(_const(0), w.start), data.shape[0])
        zeros = [_const(0)] * (joined.ndim - 1)
        result = ops.dynamic_update_slice(result, data, [end] + zeros)
        end = add(end, _const(data.shape[0]) if w is None else w.length)
    out_windows = [Window(_const(0), end)] + list((windows or [None] * joined.ndim)[1:])
    return np.moveaxis(Bounded(TracedArray(result), out_windows), 0, ax)


@operation(np.stack)
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Arrays of one run-time length (np.stack(np.nonzero(m), axis=1)) lined up lane for lane, side by side."""
    if out is not None:
        _unsupported("numpy.stack with out=")
    if _rows_of(arrays):  # (its rows side by side along ``axis``: the rows' axis moved there)
        stacked = np.moveaxis(np.copy(arrays), 0, axis_index(axis, arrays.ndim))
        return stacked if dtype is None else stacked.astype(dtype)
    lined_up, windows = aligned(list(arrays))
    result = np.stack([as_data(a) for a in lined_up], axis=axis, dtype=dtype, casting=casting)
    ax = axis_index(axis, result.ndim)
    return bounded(result, windows[:ax] + [None] + windows[ax:])


def _piece_rank(tup) -> int:
    """The rank of the pieces of a join (of a row, where ``tup`` is an array of run-time length of rows)."""
    return as_data(tup).ndim - 1 if _rows_of(tup) else np.ndim(as_data(tup[0]))


@operation(np.column_stack)
def column_stack(tup):
    return stack(tup, axis=1) if _piece_rank(tup) == 1 else concatenate(tup, axis=1)


@operation(np.vstack, np.row_stack)
def vstack(tup, *, dtype=None, casting="same_kind"):
    if _piece_rank(tup) == 1:
        return stack(tup, axis=0, dtype=dtype, casting=casting)
    return concatenate(tup, axis=0, dtype=dtype, casting=casting)


@operation(np.append)
def append(arr, values, axis=None):
    if axis is None:
        return concatenate([np.ravel(arr), np.ravel(values)])
    return concatenate([arr, values], axis=axis)


@operation(np.hstack)
def hstack(tup, *, dtype=None, casting="same_kind"):
    return concatenate(tup, axis=0 if _piece_rank(tup) == 1 else 1, dtype=dtype, casting=casting)


@operation(np.diff)
def diff(b, n=1, axis=-1, prepend=None, append=None):
    ax = axis_index(axis, b.ndim)
    if prepend is not None or append is not None:
        end_shape = b.data.shape[:ax] + (1,) + b.data.shape[ax + 1:]
        ends = [x if x is None or np.ndim(as_data(x)) else np.broadcast_to(x, end_shape) for x in (prepend, append)]
        b = concatenate([x for x in (ends[0], b, ends[1]) if x is not None], axis=ax)
    for _ in range(n):
        w = b.windows[ax]
        data = np.diff(b.data, axis=ax)
        windows = list(b.windows)
        if w is not None:
            windows[ax] = Window(w.start, ops.binary("stablehlo.maximum", sub(w.length, _const(1)), _const(0)))
        b = bounded(data, windows)
    return b


@operation(np.moveaxis)
def moveaxis(b, source, destination):
    if not all(isinstance(x, (int, np.integer)) for x in (source, destination)):
        _unsupported("numpy.moveaxis of several axes")
    order = [a for a in range(b.ndim) if a != axis_index(source, b.ndim)]
    order.insert(axis_index(destination, b.ndim), axis_index(source, b.ndim))
    return transpose(b, order)
