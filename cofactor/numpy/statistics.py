"""Statistics: the NaN-ignoring reductions and scans, average, median, quantile and percentile,
nanmedian, cov, corrcoef, histogram and bincount.

Most are NumPy's own algorithms written with NumPy functions on traced arrays.  The errors NumPy
raises from the values themselves (weights summing to zero, an all-NaN slice of nanargmax) are
raised after the call where the values are traced; histogram does not check that an autodetected
range is finite.
"""
from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..errors import UnsupportedError
from ..ir import ops
from ..tracing.array import TracedArray
from ..tracing.derivatives import is_differentiating
from ..tracing.checks import error_if, numpy_error_if
from ..tracing.dispatch import implements
from .creation import quotient, spaced
from ._core import array_like, asarray, axis_tuple, full, known_value, operator_index, reject, value, value_bounds, wrap
from .extent import Bounded, Window, _unsupported, as_data, operation
from .extent_ops import aligned
from .reductions import _identity, _keep, reduce_ufunc
from .searching import one_dimensional
from .ufuncs import KERNELS

_NO = np._NoValue


def _flag(keepdims) -> bool:
    return False if keepdims is _NO else keepdims


def _replace_nan(a, fill):
    """NumPy's _replace_nan: ``a`` with its NaNs replaced by ``fill`` and the NaN mask, or ``a`` and
    None for a dtype without NaN."""
    a = asarray(a)
    if a.dtype.kind not in "fc":
        return a, None
    mask = np.isnan(a)
    return np.where(mask, np.array(fill, a.dtype), a), mask


def _require_inexact(dtype):
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")


def _divide(total, count):
    """NumPy's _divide_by_count: the quotient, kept in the dtype of ``total``."""
    return np.astype(np.true_divide(total, count), total.dtype)


# --- NaN-ignoring reductions and scans -----------------------------------------------------------

def _nan_sum(name, fill):
    reduction = getattr(np, name[3:])

    @implements(getattr(np, name))
    def impl(a, axis=None, dtype=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
        reject(f"numpy.{name}", out=(out, None), where=(where, _NO))
        return reduction(_replace_nan(a, fill)[0], axis=axis, dtype=dtype, keepdims=_flag(keepdims),
                         initial=initial)


_nan_sum("nansum", 0)
_nan_sum("nanprod", 1)


def _nan_scan(name, fill):
    scan = getattr(np, name[3:])

    @implements(getattr(np, name))
    def impl(a, axis=None, dtype=None, out=None):
        reject(f"numpy.{name}", out=(out, None))
        return scan(_replace_nan(a, fill)[0], axis=axis, dtype=dtype)


_nan_scan("nancumsum", 0)
_nan_scan("nancumprod", 1)


@implements(np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=_NO, *, where=_NO):
    reject("numpy.nanmean", out=(out, None), where=(where, _NO))
    keepdims = _flag(keepdims)
    arr, mask = _replace_nan(a, 0)
    if mask is None:
        return np.mean(arr, axis=axis, dtype=dtype, keepdims=keepdims)
    _require_inexact(dtype)
    count = np.sum(~mask, axis=axis, dtype=np.intp, keepdims=keepdims)
    return _divide(np.sum(arr, axis=axis, dtype=dtype, keepdims=keepdims), count)


@implements(np.nanvar)
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, *, where=_NO, mean=_NO, correction=_NO):
    """NumPy's two passes: the mean of the non-NaN values, then the squared deviations, with NaN where
    fewer than ``ddof`` values remain."""
    reject("numpy.nanvar", out=(out, None), where=(where, _NO), mean=(mean, _NO))
    keepdims = _flag(keepdims)
    arr, mask = _replace_nan(a, 0)
    if mask is None:
        return np.var(arr, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, correction=correction)
    _require_inexact(dtype)
    if correction is not _NO:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    count = np.sum(~mask, axis=axis, dtype=np.intp, keepdims=True)
    avg = _divide(np.sum(arr, axis=axis, dtype=dtype, keepdims=True), count)
    centered = np.where(mask, 0, np.astype(arr - avg, arr.dtype))
    squares = np.real(centered * np.conj(centered)) if arr.dtype.kind == "c" else centered * centered
    dof = np.sum(~mask, axis=axis, dtype=np.intp, keepdims=keepdims) - ddof
    var = _divide(np.sum(squares, axis=axis, dtype=dtype, keepdims=keepdims), dof)
    return np.where(dof <= 0, np.nan, var)


@implements(np.nanstd)
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, *, where=_NO, mean=_NO, correction=_NO):
    return np.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


def _nan_extremum(name, ufunc, ordinary):
    """NumPy's ``ufunc.reduce`` (fmax/fmin, for every dtype), from NaN, which any number replaces, so
    an all-NaN slice stays NaN; ``initial`` is cast to the array's dtype first, as NumPy does."""
    @implements(getattr(np, name))
    def impl(a, axis=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
        reject(f"numpy.{name}", out=(out, None), where=(where, _NO))
        v = value(a)
        axes = axis_tuple(axis, v.type.rank)
        if initial is _NO and any(v.shape[d] == 0 for d in axes):
            raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} which has no identity")
        if initial is not _NO:
            start = value(initial, v.dtype)
        else:
            start = ops.constant(np.array(np.nan if v.dtype.kind in "fc" else _identity(ordinary, v.dtype), v.dtype))
        if axes and is_differentiating() and v.dtype.kind == "f":
            v = KERNELS[ufunc](ops.broadcast_in_dim(start, _removed(v.shape, axes), ()),
                               _nan_skipping_extremum(v, axes, ordinary))
        elif axes:
            v = ops.reduce([v], [start], axes, lambda acc, x: [KERNELS[ufunc](acc, x)])[0]
        elif initial is not _NO:  # NumPy applies initial even when reducing no axes
            v = KERNELS[ufunc](ops.broadcast_in_dim(start, v.shape, ()), v)
        return wrap(_keep(v, axes, _flag(keepdims), np.ndim(a)))
    return impl


def _removed(shape, axes) -> tuple:
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _nan_skipping_extremum(v, axes, ordinary):
    """The fmax/fmin reduction of float ``v`` as Enzyme 0.0.16 can differentiate it (it has no
    derivative for a reduction whose body selects on NaN): a plain max/min of ``v`` with its NaNs
    replaced by the identity, and NaN where a slice is all NaN."""
    nan = KERNELS[np.isnan](v)
    skipped = ops.select(nan, full(v.shape, _identity(ordinary, v.dtype), v.dtype), v)
    result = reduce_ufunc(skipped, axes, ordinary)
    all_nan = reduce_ufunc(nan, axes, np.logical_and)
    return ops.select(all_nan, full(result.shape, np.nan, v.dtype), result)


_nan_extremum("nanmax", np.fmax, np.maximum)
_nan_extremum("nanmin", np.fmin, np.minimum)


def _nan_arg_extremum(name, fill):
    """argmax/argmin with NaNs as -inf/+inf; NumPy's ValueError for an all-NaN slice after the call."""
    plain = getattr(np, name[3:])

    @implements(getattr(np, name))
    def impl(a, axis=None, out=None, *, keepdims=_NO):
        reject(f"numpy.{name}", out=(out, None))
        keepdims = _flag(keepdims)
        arr, mask = _replace_nan(a, fill)
        index = plain(arr, axis=axis, keepdims=keepdims)
        if mask is None:
            return index
        all_nan = np.all(mask, axis=axis, keepdims=keepdims)
        error_if(np.any(all_nan).value, lambda: ValueError("All-NaN slice encountered"))
        return np.where(all_nan, -1, index)


_nan_arg_extremum("nanargmax", -np.inf)
_nan_arg_extremum("nanargmin", np.inf)


# --- averages, medians and quantiles ----------------------------------------------------------------

@implements(np.average)
@operation(np.average)
def average(a, axis=None, weights=None, returned=False, *, keepdims=_NO):
    weights = array_like(weights)
    if isinstance(a, Bounded) or isinstance(weights, Bounded):
        return _average_of_run_time_length(a, axis, weights, returned, keepdims)
    a = asarray(a)
    if axis is not None:
        axis = normalize_axis_tuple(axis, a.ndim, argname="axis")
    keep = {} if keepdims is _NO else {"keepdims": keepdims}
    if weights is None:
        avg = np.mean(a, axis, **keep)
        if avg.size == 0:
            raise ZeroDivisionError("division by zero")  # NumPy's, from a.size / avg.size
        scale = wrap(full(avg.shape, a.size / avg.size, avg.dtype))
    else:
        # Known weights stay NumPy arrays, so that NumPy's zero-sum check can be made now.
        known = known_value(weights)
        wgt = weights if known is None else np.asarray(known)
        floating = ("f8",) if a.dtype.kind in "biu" else ()
        result_dtype = np.result_type(a.dtype, wgt.dtype, *floating)
        if a.shape != wgt.shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if wgt.shape != tuple(a.shape[ax] for ax in axis):
                raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
            wgt = np.transpose(wgt, np.argsort(axis))
            wgt = np.reshape(wgt, tuple(s if ax in axis else 1 for ax, s in enumerate(a.shape)))
        scale = np.sum(wgt, axis=axis, dtype=result_dtype, **keep)
        if not isinstance(scale, TracedArray) and np.any(scale == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        if isinstance(scale, TracedArray):  # (after the call)
            error_if(np.any(scale == 0.0).value, lambda: ZeroDivisionError("Weights sum to zero, can't be normalized"))
        avg = np.sum(np.multiply(a, wgt, dtype=result_dtype), axis, **keep) / scale
    if not returned:
        return avg
    return avg, wrap(value(np.broadcast_to(scale, avg.shape)))


def _average_of_run_time_length(a, axis, weights, returned, keepdims):
    """np.average where ``a`` or ``weights`` has a run-time length: their shapes must agree (NumPy's
    weights along an axis are not taken), and the sums leave out the invalid lanes."""
    keep = {} if keepdims is _NO else {"keepdims": keepdims}
    if weights is not None and np.shape(as_data(weights)) != np.shape(as_data(a)):
        _unsupported("numpy.average with weights of another shape than the array's")
    floating = ("f8",) if a.dtype.kind in "biu" else ()
    result_dtype = np.result_type(a.dtype, *([] if weights is None else [weights.dtype]), *floating)
    if weights is None:
        weights = a * 0 + 1  # (a's lanes, its windows)
    scale = np.sum(weights, axis=axis, dtype=result_dtype, **keep)
    avg = np.sum(np.multiply(a, weights, dtype=result_dtype), axis=axis, **keep) / scale
    if not returned:
        return avg
    return avg, np.broadcast_to(scale, np.shape(avg))


def _reduce_sorted(a, axis, keepdims, compute):
    """NumPy's _ureduce for order statistics: the reduced axes merged into one last axis and
    sorted; ``compute`` maps that to leading result axes (q's) followed by the kept axes."""
    a = asarray(a)
    axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
    kept = [d for d in range(a.ndim) if d not in axes]
    size = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
    merged = np.reshape(np.transpose(a, kept + list(axes)), [a.shape[d] for d in kept] + [size])
    result = compute(np.sort(merged, axis=-1))
    if keepdims:
        leading = np.shape(result)[:np.ndim(result) - len(kept)]
        result = np.reshape(result, leading + tuple(1 if d in axes else n for d, n in enumerate(a.shape)))
    return result


def _with_nan_slices(result, sorted_values, n):
    """NaN where a slice holds a NaN (sorted last, before lane ``n``), as NumPy's median and quantile
    report."""
    if sorted_values.dtype.kind not in "fc":
        return result
    last = np.take(sorted_values, n - 1, axis=-1)
    return np.where(np.isnan(last), last, result)


def _middle(sorted_values, n=None):
    """The median of the first ``n`` values (by default all) sorted along the last axis; ``n`` may be
    a traced int (an array of run-time length: numpy/extent_order.py)."""
    if n is None:
        n = sorted_values.shape[-1]
        half = n // 2
        middle = np.mean(sorted_values[..., half - 1 + n % 2:half + 1], axis=-1)
        return _with_nan_slices(middle, sorted_values, n) if n else middle
    low, high = (np.take(sorted_values, i, axis=-1)[None] for i in ((n - 1) // 2, n // 2))
    middle = np.where(n % 2 == 1, np.mean(low, axis=0), np.mean(np.concatenate([low, high]), axis=0))
    middle = np.where(n == 0, np.nan, middle)  # NumPy's mean of an empty slice
    return _with_nan_slices(middle, sorted_values, np.maximum(n, 1))


@implements(np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    reject("numpy.median", out=(out, None))
    return _reduce_sorted(a, axis, keepdims, _middle)


def _nan_middle(sorted_values):
    """The mean of the middle one or two non-NaN values (NaNs sort last); NaN if there are none."""
    count = np.sum(~np.isnan(sorted_values), axis=-1, keepdims=True)
    low = np.take_along_axis(sorted_values, (count - 1) // 2, axis=-1)
    high = np.take_along_axis(sorted_values, count // 2, axis=-1)
    return np.mean(np.concatenate([low, high], axis=-1), axis=-1)


@implements(np.nanmedian)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=_NO):
    reject("numpy.nanmedian", out=(out, None))
    a = asarray(a)
    if a.size == 0:
        return np.nanmean(a, axis, keepdims=keepdims)
    return _reduce_sorted(a, axis, _flag(keepdims), _nan_middle)


def _continuous(alpha, beta):
    return lambda n, q: n * q + (alpha + q * (1 - alpha - beta)) - 1


def _boundary(index, take_previous):
    """NumPy's _discrete_interpolation_to_boundaries."""
    previous = np.floor(index)
    chosen = np.where(take_previous(index - previous, index), previous, previous + 1).astype(np.intp)
    return np.where(chosen < 0, 0, chosen)


def _unchanged(gamma, index):
    return gamma


# method -> (virtual index from the sample size n and q, gamma correction or None for discrete
# methods), as NumPy's _QuantileMethods, in its order.
_METHODS = {
    "inverted_cdf": (lambda n, q: _boundary(n * q - 1, lambda gamma, index: gamma == 0), None),
    "averaged_inverted_cdf": (lambda n, q: n * q - 1, lambda gamma, index: np.where(gamma == 0, 0.5, 1.0)),
    "closest_observation": (lambda n, q: _boundary(n * q - 1 - 0.5, lambda gamma, index: (gamma == 0)
                                                    & (np.floor(index) % 2 == 1)), None),
    "interpolated_inverted_cdf": (_continuous(0, 1), _unchanged),
    "hazen": (_continuous(0.5, 0.5), _unchanged),
    "weibull": (_continuous(0, 0), _unchanged),
    "linear": (lambda n, q: (n - 1) * q, _unchanged),
    "median_unbiased": (_continuous(1 / 3.0, 1 / 3.0), _unchanged),
    "normal_unbiased": (_continuous(3 / 8.0, 3 / 8.0), _unchanged),
    "lower": (lambda n, q: np.floor((n - 1) * q).astype(np.intp), None),
    "higher": (lambda n, q: np.ceil((n - 1) * q).astype(np.intp), None),
    "midpoint": (lambda n, q: 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q)),
                 lambda gamma, index: np.where(index % 1 == 0, 0.0, 0.5)),
    "nearest": (lambda n, q: np.around((n - 1) * q).astype(np.intp), None),
}


def _take_leading(sorted_values, index):
    """``sorted_values`` at ``index`` along the last axis, with the index's axes first."""
    taken = np.take(sorted_values, index, axis=-1)
    kept = sorted_values.ndim - 1
    return np.moveaxis(taken, list(range(kept, np.ndim(taken))), list(range(np.ndim(index))))


def _lerp(a, b, t):
    """NumPy's _lerp: from the nearer end, so that t = 1 gives b exactly."""
    diff = b - a
    result = a + diff * t
    return np.where(t >= 0.5, np.subtract(b, diff * (1 - t), dtype=np.result_type(result), casting="unsafe"),
                    result)


def _quantile_of_sorted(sorted_values, q, method, weak_q, n=None):
    """NumPy's _quantile on the first ``n`` values (by default all; it may be a traced int) sorted along
    the last axis."""
    virtual_index, fix_gamma = _METHODS[method]
    n = sorted_values.shape[-1] if n is None else n
    index = virtual_index(n, q)
    is_integer = np.issubdtype(np.result_type(index), np.integer)
    if fix_gamma is None or (method == "linear" and is_integer):
        return _with_nan_slices(_take_leading(sorted_values, index), sorted_values, n)
    # NumPy's _get_indexes: clamp to the ends, NaN indices to the last (NaN) value.
    previous = np.floor(index)
    following = previous + 1
    outside = index >= n - 1
    if sorted_values.dtype.kind in "fc":
        outside = outside | np.isnan(index)
    previous, following = [np.where(index < 0, 0, np.where(outside, n - 1, i)).astype(np.intp)
                           for i in (previous, following)]
    gamma = fix_gamma(index - previous, index).astype(np.result_type(index))
    if weak_q:  # (a traced one where n is: an array of run-time length)
        gamma = TracedArray(gamma.value, scalar=True, weak=float) if isinstance(gamma, TracedArray) else float(gamma)
    else:
        gamma = np.reshape(gamma, np.shape(index) + (1,) * (sorted_values.ndim - 1))
    result = _lerp(_take_leading(sorted_values, previous), _take_leading(sorted_values, following), gamma)
    return _with_nan_slices(result, sorted_values, n)


def quantile_arguments(name, a, q, out, method, weights, percent):
    """NumPy's checks of a quantile's arguments; ``q`` as a fraction, and whether it is a Python number."""
    reject(f"numpy.{name}", out=(out, None), weights=(weights, None))
    if a.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    weak_q = type(q) in (int, float) or isinstance(q, TracedArray) and q.weak in (int, float)  # (an argument's)
    if percent:
        q = np.true_divide(q, 100)
    elif not isinstance(q, TracedArray):
        q = np.asanyarray(q)
    known = known_value(q)
    message = "Percentiles must be in the range [0, 100]" if percent else "Quantiles must be in the range [0, 1]"
    if known is not None and not np.all((known >= 0) & (known <= 1)):
        raise ValueError(message)
    if known is None and isinstance(q, TracedArray):  # (a q given to the function: NumPy's check when it runs)
        numpy_error_if(value(np.logical_not(np.all((q >= 0) & (q <= 1)))), lambda: ValueError(message))
    if np.ndim(q) > 2:
        raise ValueError("q must be a scalar or 1d")
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {_METHODS.keys()}")
    return q, weak_q


def _quantile(name, a, q, axis, out, method, keepdims, weights, percent):
    a = asarray(a)
    q, weak_q = quantile_arguments(name, a, q, out, method, weights, percent)
    return _reduce_sorted(a, axis, keepdims, lambda s: _quantile_of_sorted(s, q, method, weak_q))


@implements(np.quantile)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None):
    return _quantile("quantile", a, q, axis, out, method, keepdims, weights, percent=False)


@implements(np.percentile)
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None):
    return _quantile("percentile", a, q, axis, out, method, keepdims, weights, percent=True)


# --- covariance and correlation ----------------------------------------------------------------------

@implements(np.cov)
@operation(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """Of observations whose count is known only at run time too (``np.cov(X[labels == k], rowvar=False)``):
    the mean and the product exclude the invalid ones, and the count divides."""
    reject("numpy.cov", fweights=(fweights, None), aweights=(aweights, None))
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    if isinstance(y, Bounded):
        _unsupported("numpy.cov with y of run-time length")
    m = m if isinstance(m, Bounded) else asarray(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None:
        y = asarray(y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m.dtype, *([] if y is None else [y.dtype]), np.float64)
    if isinstance(m, Bounded):
        X = m.astype(dtype)
        X = Bounded(asarray(X.data[None]), [None] + X.windows) if X.ndim == 1 else X
    else:
        X = np.atleast_2d(np.astype(m, dtype))
    if not rowvar and m.ndim != 1:
        X = X.T
    if isinstance(X.shape[0], int) and X.shape[0] == 0:
        return np.array([]).reshape(0, 0)
    if y is not None:
        y = np.atleast_2d(np.astype(y, dtype))
        if not rowvar and y.shape[0] != 1:
            y = y.T
        X = np.concatenate((X, y), axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    fact = X.shape[1] - ddof
    X = X - np.mean(X, axis=1, keepdims=True)
    c = np.dot(X, np.conjugate(X.T))
    # NumPy multiplies by 1/fact (inf for no degrees of freedom) in float64 and casts back.
    if isinstance(fact, TracedArray):
        scale = np.astype(np.where(fact > 0, 1.0 / np.maximum(fact, 1), np.inf), np.float64)
    else:
        scale = np.float64(1 / fact) if fact > 0 else np.float64(np.inf)
    return np.squeeze(np.astype(c * scale, c.dtype))


@implements(np.corrcoef)
@operation(np.corrcoef)
def corrcoef(x, y=None, rowvar=True, bias=_NO, ddof=_NO, *, dtype=None):
    """``bias`` and ``ddof`` have no effect, as in NumPy (which deprecates them)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if np.ndim(c) != 2:
        return c / c
    stddev = np.sqrt(np.real(np.diag(c)))
    c = asarray(c / stddev[:, None] / stddev[None, :])
    c.real = np.clip(c.real, -1, 1)
    if np.iscomplexobj(c):
        c.imag = np.clip(c.imag, -1, 1)
    return c


# --- histogram and bincount -----------------------------------------------------------------------------

def _sum_into(index, updates, length):
    """Sums of ``updates`` by ``index`` into ``length`` slots; index ``length`` collects what is dropped."""
    slots = full((length + 1,), 0, updates.dtype)
    summed = ops.scatter(slots, ops.reshape(index, index.shape + (1,)), updates, (), (0,), (0,), 1,
                         lambda old, new: ops.binary("stablehlo.add", old, new))
    return ops.slice(summed, [0], [length])


def _require_cast(array, target):
    """bincount counts in intp and sums weights in float64 (NumPy lets uint64 values through too)."""
    dtype = np.result_type(array)
    if not np.can_cast(dtype, target, "same_kind"):
        raise TypeError(f"Cannot cast array data from {dtype!r} to {np.dtype(target)!r} according to the rule 'safe'")


@implements(np.bincount)
@operation(np.bincount)
def bincount(x, weights=None, minlength=0):
    """NumPy's result has max(x) + 1 slots, or ``minlength`` if more.  Where the values' greatest
    possible value is known (``np.argmin(d, axis=1)``, a search's positions, ``rng.integers``), the
    result has a run-time length up to it.  Where it is not, the result has ``minlength`` slots (the
    bound, as cofactor reads NumPy's idiom), which must exceed every value: a larger one is an error
    at run time, and so is a negative one, as in NumPy.  Of an ``x`` with a run-time length
    (``np.bincount(labels[mask], minlength=k)``), its valid lanes count."""
    if minlength is None:
        raise TypeError("use 0 instead of None for minlength")
    minlength = operator_index(minlength, "minlength")
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    one_dimensional(as_data(x))
    _require_cast(as_data(x), np.intp)
    bounds = value_bounds(as_data(x))
    valid = None
    if weights is not None:
        _require_cast(as_data(weights), np.float64)
        if np.shape(as_data(weights)) != np.shape(as_data(x)):
            raise ValueError("The weights and list don't have the same length.")
        if not as_data(x).size:  # (NumPy's: of no values, int zeros, whatever the weights)
            return wrap(full((minlength,), 0, np.intp))
        if isinstance(x, Bounded):
            numpy_error_if(ops.compare(x.windows[0].length, ops.constant(np.zeros((), np.int64)), "EQ"),
                           lambda: UnsupportedError(
                               "numpy.bincount with weights of no values (an empty selection): NumPy's result is then "
                               "int64 zeros, whatever the weights, which cofactor cannot give a result that is float64 "
                               "where there are values: test the length first"))
        if isinstance(x, Bounded) or isinstance(weights, Bounded):
            (x, weights), windows = aligned([x, weights])
            valid = Bounded(x, windows).valid()
    elif isinstance(x, Bounded):
        x, valid = x.data, x.valid()
    x = asarray(x)
    if bounds is not None and bounds[0] < 0:
        bounds = None
    known = known_value(x) if valid is None else None
    if known is not None and known.size:
        if known.min() < 0:
            raise ValueError("'list' argument must have no negative elements")
        minlength = max(minlength, int(known.max()) + 1)
    elif minlength == 0 and x.size and bounds is None:
        raise UnsupportedError("numpy.bincount of a traced array: the result's length (the largest value + 1) "
                               "depends on the data, so its shape is not known at compile time; pass a static "
                               "minlength larger than every value")
    index = np.astype(x, np.intp)
    if valid is not None:
        index = np.where(wrap(valid), index, 0)  # (invalid lanes count nowhere: below)
    slots = minlength if bounds is None or known is not None else max(minlength, bounds[1] + 1)
    if known is None and x.size and bounds is None:
        numpy_error_if(value(np.any(index < 0)),
                       lambda: ValueError("'list' argument must have no negative elements"))
        largest = np.max(index)
        numpy_error_if(value(largest >= minlength), lambda: UnsupportedError(
            f"numpy.bincount of a traced array: its largest value {largest} is not below minlength={minlength}, which "
            "cofactor takes as the result's length (NumPy would return a longer result): pass a larger minlength"))
    counted = (index >= 0) & (index < slots)
    if valid is not None:
        counted = counted & wrap(valid)
    updates = full(x.shape, 1, np.intp) if weights is None else value(weights, np.float64)
    counts = wrap(_sum_into(value(np.where(counted, index, slots)), updates, slots))
    if slots == minlength:
        return counts
    largest = np.max(np.where(counted, index, -1)) if x.size else np.int64(-1)
    length = np.maximum(largest + 1, minlength)
    return Bounded(counts, [Window(ops.constant(np.zeros((), np.int64)), value(length, np.int64))])


def _equal_bins_over_data(a, bins):
    """``bins`` equal bins from the traced data's min to max, with NumPy's linspace formula in
    NumPy's edge dtype, and NumPy's check that that range is finite, after the call."""
    try:
        count = operator.index(bins)
    except TypeError:
        raise TypeError("`bins` must be an integer, a string, or an array") from None
    if count < 1:
        raise ValueError("`bins` must be positive, when an integer")
    edge_dtype = a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)
    first, last = np.min(a), np.max(a)
    if a.dtype.kind in "fc":
        error_if(value(~(np.isfinite(first) & np.isfinite(last))),
                 lambda: ValueError(f"autodetected range of [{first}, {last}] is not finite"))
    same = first == last
    first = np.astype(np.where(same, first - 0.5, first), edge_dtype)
    last = np.astype(np.where(same, last + 0.5, last), edge_dtype)
    edges = spaced(first, quotient(last - first, count), count + 1)
    edges[-1] = last
    return edges


def _bin_edges(a, bins, range):
    if isinstance(bins, str):
        raise UnsupportedError(f"numpy.histogram(bins={bins!r}): estimators choose the number of bins from the "
                               "data, so the result's shape would not be known at compile time; pass an int "
                               "or the bin edges")
    if range is not None and any(isinstance(r, TracedArray) for r in range):
        raise UnsupportedError("numpy.histogram: a traced range is not supported; it must be known at compile "
                               "time")
    if isinstance(bins, TracedArray) and bins.ndim == 0:  # (np.int64(8) passed in, or a count from data)
        operator_index(bins, "number of bins (a NumPy integer passed in, or one computed from data)")
    if isinstance(bins, TracedArray):  # traced edges: NumPy's check that they increase, after the call
        if bins.ndim != 1:
            raise ValueError("`bins` must be 1d, when an array")
        error_if(value(np.any(bins[:-1] > bins[1:])),
                 lambda: ValueError("`bins` must increase monotonically, when an array"))
        return bins
    if np.ndim(bins) == 0 and range is None and a.size:
        return _equal_bins_over_data(a, bins)
    return asarray(np.histogram_bin_edges(np.zeros(0, a.dtype), bins, range))


@implements(np.histogram)
def histogram(a, bins=10, range=None, density=None, weights=None):
    """Each value's bin by searchsorted on the edges (the last bin includes its right edge), then a
    scatter-add: counts are int64, weighted sums in the weights' dtype, as NumPy."""
    a = asarray(a)
    if a.dtype == np.bool_:
        a = np.astype(a, np.uint8)
    if weights is not None and np.shape(weights) != a.shape:
        raise ValueError("weights should have the same shape as a.")
    a = np.ravel(a)
    edges = _bin_edges(a, bins, range)
    count = edges.shape[0] - 1
    index = np.searchsorted(edges, a, side="right") - 1
    index = np.where(a == edges[-1], count - 1, index)
    index = value(np.where((index >= 0) & (index < count), index, count))
    if weights is None:
        hist = wrap(_sum_into(index, full(index.shape, 1, np.intp), count))
    else:
        weights = np.ravel(weights)
        total_dtype = np.result_type(np.result_type(weights), np.float64)
        hist = np.astype(wrap(_sum_into(index, value(weights, total_dtype), count)), np.result_type(weights))
    if density:
        widths = np.astype(np.diff(edges), float)
        return hist / widths / np.sum(hist), edges
    return hist, edges
