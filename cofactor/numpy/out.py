"""``out=``: every NumPy function and ufunc that takes one writes its result into that array (its
storage, so every alias and view sees it) and returns it.  The implementations compute results;
wrapping them here, once all are registered, gives each one NumPy's ``out=`` (a keyword; an ``out``
passed by position reaches the implementation, which refuses it)."""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..errors import UnsupportedError
from ..tracing.array import TracedArray, share_storage
from ..tracing.dispatch import FUNCTIONS, UFUNCS
from ._core import axis_index
from .indexing import _assigned


def write_out(out, result, name, exact_shape=False, casting="same_kind", where=True):
    """Store ``result`` into the traced ``out`` array as NumPy's ``out=`` does (``casting``: the rule;
    ``where``: a ufunc's mask of the elements written); ``out`` may come as NumPy's ufunc protocol passes
    it, a tuple of one.  ``exact_shape``: a function's result (a reduction's, a product's) must have
    ``out``'s shape; a ufunc's broadcasts to it."""
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if not isinstance(out, TracedArray):
        raise UnsupportedError(f"numpy.{name}(..., out=...) needs out to be an array created or passed in "
                               "the compiled function")
    result = result if isinstance(result, TracedArray) else TracedArray(np.asarray(result))
    if exact_shape and out.shape != result.shape:
        raise ValueError(f"numpy.{name}: the out array has shape {out.shape}, but the result has shape "
                         f"{result.shape}")
    if not np.can_cast(result.dtype, out.dtype, casting=casting):
        raise TypeError(f"Cannot cast ufunc '{name}' output from {result.dtype!r} to {out.dtype!r} with "
                        f"casting rule '{casting}'")
    if where is not True:
        result = np.where(where, result.astype(out.dtype), out)
    out.value = _assigned(out, result, out.shape)
    return out


def _ufunc_with_out(ufunc, call):
    @functools.wraps(call)
    def call_with_out(*inputs, out=None, where=True, **kwargs):
        outs = out if isinstance(out, tuple) else (out,)
        if all(o is None for o in outs) and where is True:
            return call(*inputs, **kwargs)
        results = call(*inputs, **kwargs)
        results = results if isinstance(results, tuple) else (results,)
        if where is not True:  # (where it is False, the out array's own values; without one, NumPy's are
            shape = np.broadcast_shapes(*[np.shape(x) for x in (*inputs, where)])  # uninitialized: zeros)
            results = tuple(np.where(where, r, np.zeros((), r.dtype)) if o is None else np.broadcast_to(r, shape)
                            for o, r in zip(outs, results))
        casting = kwargs.get("casting", "same_kind")
        written = tuple(r if o is None else write_out(o, r, ufunc.__name__, casting=casting, where=where)
                        for o, r in zip(outs, results))
        return written if ufunc.nout > 1 else written[0]
    return call_with_out


# Functions that store their result into ``out`` whatever its dtype (NumPy's reductions and scans cast
# unsafely there: np.sum(x, out=ints) truncates); every other function's ``out`` takes a same-kind cast.
UNSAFE_OUT = {np.sum, np.prod, np.mean, np.var, np.max, np.min, np.amax, np.amin, np.cumsum, np.cumprod, np.any,
              np.all, np.argmax, np.argmin, np.median, np.trace, np.nansum, np.nanprod, np.nancumsum, np.nancumprod,
              np.nanmax, np.nanmin, np.nanmedian, np.nanpercentile, np.nanquantile}


def _function_with_out(func, impl):
    casting = "unsafe" if func in UNSAFE_OUT else "same_kind"

    @functools.wraps(impl)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return impl(*args, **kwargs)
        result = impl(*args, **kwargs)
        if func in _JOINS and isinstance(out, TracedArray) and any(share_storage(x, out) is True for x in args[0]):
            return _joined_in_order(func, args, kwargs, out, result)
        if func is np.dot and isinstance(out, TracedArray) and (
                out.dtype != result.dtype or out.ndim != result.ndim or not out.flags.c_contiguous):
            raise ValueError("output array is not acceptable (must have the right datatype, number of "
                             "dimensions, and be a C-Array)")
        return write_out(out, result, func.__name__, exact_shape=True, casting=casting)
    return with_out


_JOINS = {np.concatenate, np.stack}


def _joined_in_order(func, args, kwargs, out, result):
    """np.concatenate or np.stack into an ``out`` that some of the arrays view: NumPy copies them in one
    at a time, so a later one reads what the earlier ones wrote."""
    arrays, axis = args[0], kwargs.get("axis", args[1] if len(args) > 1 else 0)
    axis = axis_index(axis, result.ndim)
    if result.shape != out.shape:
        raise ValueError(f"numpy.{func.__name__}: the out array has shape {out.shape}, but the result has shape "
                         f"{result.shape}")
    start = 0
    for x in arrays:
        size = 1 if func is np.stack else np.shape(x)[axis]
        where = (slice(None),) * axis + ((start if func is np.stack else slice(start, start + size)),)
        out[where] = x
        start += size
    return out


def _takes_out(func) -> bool:
    try:
        return "out" in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def register():
    """Give every registered ufunc call, and every function whose NumPy signature has ``out``, NumPy's
    ``out=`` (called once, after all implementations are registered)."""
    for (ufunc, method), call in list(UFUNCS.items()):
        if method == "__call__":
            UFUNCS[(ufunc, method)] = _ufunc_with_out(ufunc, call)
    for func, impl in list(FUNCTIONS.items()):
        if callable(func) and _takes_out(func):
            FUNCTIONS[func] = _function_with_out(func, impl)
