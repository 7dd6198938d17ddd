"""Searching and comparing: searchsorted, interp, convolve, correlate, isin, isclose, allclose,
array_equal; unique, nonzero, argwhere and flatnonzero of compile-time constants.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import ops
from ..tracing import checks
from ..tracing.array import TracedArray
from ..tracing.derivatives import is_differentiating
from ..tracing.dispatch import implements
from ._core import array_like, asarray, full, known_value, take_1d, value, with_value_bounds, wrap
from .shape import _sort_comparator


def one_dimensional(x):
    """NumPy's errors for an array that must be 1-d (searchsorted, interp, correlate, bincount)."""
    if np.ndim(x) != 1:
        raise ValueError("object of too small depth for desired array" if np.ndim(x) == 0
                         else "object too deep for desired array")


@implements(np.digitize)
def digitize(x, bins, right=False):
    x, bins = array_like(x), array_like(bins)
    return with_value_bounds(_digitize(x, bins, right), 0, np.shape(bins)[0])


def _digitize(x, bins, right):
    """The index of the bin each value falls in: a search in ``bins``, ascending or descending (when
    they are known only at run time, both searches, and the one their direction picks; bins that
    are neither raise NumPy's ValueError after the call)."""
    edges = asarray(bins)
    if edges.ndim != 1:
        raise ValueError("object too deep for desired array")
    side = "left" if right else "right"
    if edges.shape[0] < 2:
        return searchsorted(edges, x, side=side)
    known = known_value(edges)
    if known is not None:
        steps = np.diff(np.asarray(known))
        if not (np.all(steps >= 0) or np.all(steps <= 0)):
            raise ValueError("bins must be monotonically increasing or decreasing")
        if np.all(steps >= 0):
            return searchsorted(edges, x, side=side)
        return edges.shape[0] - searchsorted(edges[::-1], x, side)
    steps = np.diff(edges)
    ascending, descending = np.all(steps >= 0), np.all(steps <= 0)
    checks.error_if(value(~(ascending | descending)),
                    lambda: ValueError("bins must be monotonically increasing or decreasing"))
    return np.where(ascending, searchsorted(edges, x, side=side), edges.shape[0] - searchsorted(edges[::-1], x, side))


@implements(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    """A branch-free binary search: ``position`` (how many elements come before the key) grows by
    descending powers of two while the element just below it still comes before the key, so
    ``bit_length(n)`` gathers and compares; in NumPy's sort order (NaN last), on both operands
    converted to their common dtype as NumPy does."""
    a, v = array_like(a), array_like(v)
    one_dimensional(a)
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    if sorter is not None:
        if np.size(sorter) != np.size(a):
            raise ValueError("sorter.size must equal a.size")
        a = np.take(a, sorter)
    dtype = np.result_type(*[x.dtype if isinstance(x, TracedArray) else np.asarray(x).dtype for x in (a, v)])
    sorted_values, keys = value(a, dtype), value(v, dtype)
    before = _sort_comparator(dtype)
    n, shape = sorted_values.shape[0], keys.shape
    position = full(shape, 0, np.int64)
    step = 1 << (n.bit_length() - 1) if n else 0
    while step:
        candidate = ops.binary("stablehlo.add", position, full(shape, step, np.int64))
        in_range = ops.compare(candidate, full(shape, n, np.int64), "LE", "SIGNED")
        below = ops.binary("stablehlo.minimum", candidate, full(shape, n, np.int64))
        pivot = take_1d(sorted_values, ops.binary("stablehlo.subtract", below, full(shape, 1, np.int64)))
        # left: a[i] < key; right: a[i] <= key, that is not key < a[i].
        goes = before(pivot, keys) if side == "left" else ops.unary("stablehlo.not", before(keys, pivot))
        position = ops.select(ops.binary("stablehlo.and", in_range, goes), candidate, position)
        step >>= 1
    return with_value_bounds(wrap(position), 0, n)


def _scalar_bound(bound, is_complex):
    """``left``/``right``: a scalar, real unless fp is complex (NumPy converts it to a C double)."""
    if bound is not None and (np.ndim(bound) != 0 or (np.iscomplexobj(bound) and not is_complex)):
        kind = "complex" if np.ndim(bound) == 0 else type(bound).__name__
        raise TypeError(f"must be {'complex' if is_complex else 'real'} number, not {kind}")
    return bound


def _interp_real(x, xp, fp, j, left, right):
    """NumPy's compiled_interp on float64: the slope formula, its two NaN fallbacks, exact hits."""
    first, last = fp[0], fp[-1]
    if xp.shape[0] == 1:
        inside = np.broadcast_to(first, x.shape)  # NumPy's one-point rule: NaN x gives fp[0] too
    else:
        x_lo, x_hi, f_lo, f_hi = np.take(xp, j), np.take(xp, j + 1), np.take(fp, j), np.take(fp, j + 1)
        slope = (f_hi - f_lo) / (x_hi - x_lo)
        inside = slope * (x - x_lo) + f_lo
        inside = np.where(np.isnan(inside), slope * (x - x_hi) + f_hi, inside)
        inside = np.where(np.isnan(inside) & (f_lo == f_hi), f_lo, inside)
        inside = np.where(x == x_lo, f_lo, inside)
        inside = np.where(x == xp[-1], last, inside)
    inside = np.where(x > xp[-1], last if right is None else right, inside)
    return np.where(x < xp[0], first if left is None else left, inside)


@implements(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    """In float64 (complex128 for complex fp) as NumPy; the interval comes from searchsorted."""
    x, xp, fp = array_like(x), array_like(xp), array_like(fp)
    is_complex = np.iscomplexobj(fp)
    x = np.astype(asarray(x), np.float64)
    xp = np.astype(asarray(xp), np.float64)
    fp = np.astype(asarray(fp), np.complex128 if is_complex else np.float64)
    if period is not None:
        if isinstance(period, TracedArray):
            raise UnsupportedError("numpy.interp: a traced period is not supported; it must be known at "
                                   "compile time")
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period, left, right = abs(period), None, None
        if xp.ndim != 1 or fp.ndim != 1:
            raise ValueError("Data points must be 1-D sequences")
        if xp.shape[0] != fp.shape[0]:
            raise ValueError("fp and xp are not of the same length")
        x, xp = x % period, xp % period
        order = np.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = np.concatenate((xp[-1:] - period, xp, xp[0:1] + period))
        fp = np.concatenate((fp[-1:], fp, fp[0:1]))
    one_dimensional(fp)
    one_dimensional(xp)
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if fp.shape[0] != xp.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    left, right = _scalar_bound(left, is_complex), _scalar_bound(right, is_complex)
    j = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, max(xp.shape[0] - 2, 0))
    if not is_complex:
        return _interp_real(x, xp, fp, j, left, right)
    parts = [_interp_real(x, xp, part(fp), j, None if left is None else part(left),
                          None if right is None else part(right)) for part in (np.real, np.imag)]
    return wrap(ops.complex(value(parts[0]), value(parts[1])))


_MODES = {"valid": 0, "same": 1, "full": 2}


def _mode(mode) -> int:
    if isinstance(mode, str):
        if mode not in _MODES:
            raise ValueError("Use one of 'valid', 'same', or 'full' for convolve/correlate mode")
        return _MODES[mode]
    if isinstance(mode, (bool, np.bool_)) or not isinstance(mode, (int, np.integer)):
        raise TypeError("convolve/correlate mode not understood")
    if mode not in (0, 1, 2):
        raise ValueError("integer convolve/correlate mode must be 0, 1, or 2")
    return int(mode)


def _correlate(x, y, mode):
    """``out[k] = sum_n x[k + n - left] * y[n]`` for a longer ``x``, summing only the overlapping terms
    (as NumPy, so an inf is never multiplied by a padding zero): windows of ``x`` gathered into an
    (output, len(y)) array, O(len(x) * len(y))."""
    n1, n2 = x.shape[0], y.shape[0]
    left = (0, n2 // 2, n2 - 1)[mode]
    length = (n1 - n2 + 1, n1, n1 + n2 - 1)[mode]
    right = length + n2 - 1 - n1 - left
    padded = ops.pad(x, ops.constant(np.zeros((), x.dtype)), [left], [right])
    source = np.arange(length)[:, None] + np.arange(n2) - left
    if is_differentiating():
        # Enzyme 0.0.16 transposes a gather of overlapping windows into a scatter that overwrites
        # (unique_indices = true), losing all but one contribution: gather element by element.
        windows = wrap(take_1d(padded, ops.constant(source + left)))
    else:
        starts = ops.iota((length, 1), np.int64, 0)
        windows = wrap(ops.gather(padded, starts, (1,), (), (0,), 1, (n2,), (length, n2)))
    overlap = (source >= 0) & (source < n1)
    return np.sum(np.where(overlap, windows * wrap(y), np.zeros((), x.dtype)), axis=1, dtype=x.dtype)


def _sequences(a, v, empty_messages):
    """``a`` and ``v`` as 1-d values of their common dtype, with NumPy's errors."""
    a, v = array_like(a), array_like(v)
    for x in (a, v):
        one_dimensional(x)
    dtype = np.result_type(*(x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype for x in (a, v)))
    values = value(a, dtype), value(v, dtype)
    for x, message in zip(values, empty_messages):
        if x.shape[0] == 0:
            raise ValueError(message)
    return values


@implements(np.convolve)
def convolve(a, v, mode="full"):
    a, v = _sequences(np.atleast_1d(array_like(a)), np.atleast_1d(array_like(v)),
                      ("a cannot be empty", "v cannot be empty"))
    mode = _mode(mode)
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    return _correlate(a, ops.reverse(v, [0]), mode)


@implements(np.correlate)
def correlate(a, v, mode="valid"):
    """NumPy's correlate2: conjugates ``v``; with ``v`` the longer, correlates the other way round
    and reverses."""
    a, v = _sequences(a, v, ("first array argument cannot be empty", "second array argument cannot be empty"))
    mode = _mode(mode)
    if v.dtype.kind == "c":
        v = value(np.conjugate(wrap(v)))
    if a.shape[0] < v.shape[0]:
        return np.flip(_correlate(v, a, mode))
    return _correlate(a, v, mode)


@implements(np.isin)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Every element against every test value (a broadcast comparison)."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    element, tests = asarray(element), np.ravel(asarray(test_elements))
    if kind == "table" and not all(x.dtype.kind in "uib" for x in (element, tests)):
        raise ValueError("The 'table' method is only supported for boolean or integer arrays. Please select "
                         "'sort' or None for kind.")
    found = np.any(np.equal(np.expand_dims(element, -1), tests), axis=-1)
    return np.logical_not(found) if invert else found


@implements(np.isclose)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's formula, with ``b`` made inexact first."""
    x, y, atol, rtol = (z if isinstance(z, (int, float, complex)) else asarray(z) for z in (a, b, atol, rtol))
    if isinstance(y, TracedArray):
        y = np.astype(y, np.result_type(y.dtype, 1.0))
    elif isinstance(y, int):
        y = float(y)
    result = np.less_equal(abs(x - y), atol + rtol * abs(y)) & np.isfinite(y) | (x == y)
    if equal_nan:
        result = result | (np.isnan(x) & np.isnan(y))
    return result


@implements(np.allclose)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """A traced 0-d bool (NumPy returns a Python bool, which needs the values now)."""
    return np.all(isclose(a, b, rtol, atol, equal_nan))


@implements(np.array_equal)
def array_equal(a1, a2, equal_nan=False):
    """A traced 0-d bool; a constant False for different shapes, as NumPy decides from shapes alone."""
    if a1 is a2 and equal_nan:
        return wrap(ops.constant(np.array(True)))
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return wrap(ops.constant(np.array(False)))
    equal = a1 == a2
    if equal_nan:
        equal = equal | (np.isnan(a1) & np.isnan(a2))
    return np.all(equal)
