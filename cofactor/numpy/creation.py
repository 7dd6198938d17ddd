"""Arrays made from other arrays: astype, copy, and the *_like constructors."""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import ops
from ..ir.types import is_supported_dtype
from ..tracing.array import TracedArray
from ..tracing.dispatch import implements
from ._core import full, value, wrap
from .shape import resolve_shape


def _dtype(dtype, default):
    dtype = np.dtype(default if dtype is None else dtype)
    if not is_supported_dtype(dtype):
        raise TypeError(f"dtype {dtype} is not supported by cofactor")
    return dtype


@implements("ndarray.astype")
def astype(a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    v = value(a)
    target = _dtype(dtype, v.dtype)
    if not np.can_cast(v.dtype, target, casting=casting):
        raise TypeError(f"Cannot cast array data from {v.dtype!r} to {target!r} according to the rule '{casting}'")
    return wrap(convert_like_numpy(v, target))


def convert_like_numpy(v, target):
    """NumPy's casts: complex to real drops the imaginary part, anything to bool tests non-zero."""
    if v.dtype == target:
        return v
    if target == np.bool_:
        zero = full(v.shape, 0, v.dtype)
        return ops.compare(v, zero, "NE", "FLOAT" if v.dtype.kind in "fc" else
                           "SIGNED" if v.dtype.kind == "i" else "UNSIGNED")
    if v.dtype.kind == "c" and target.kind != "c":
        v = ops.real(v)
    return ops.convert(v, target)


@implements(np.astype)
def astype_function(x, dtype, /, *, copy=True, device=None):
    return astype(x, dtype)


@implements(np.copy)
def copy(a, order="K", subok=False):
    return TracedArray(value(a))


@implements("ndarray.copy")
def copy_method(a, order="C"):
    return TracedArray(value(a))


def _like(name, fill_value_of):
    @implements(getattr(np, name))
    def impl(a, *args, dtype=None, order="K", subok=True, shape=None, device=None, **kwargs):
        fill, args = fill_value_of(args, kwargs)
        if args:
            dtype = args[0]
        src = value(a) if isinstance(a, TracedArray) else None
        src_shape, src_dtype = (src.shape, src.dtype) if src is not None else (np.shape(a), np.asarray(a).dtype)
        target_shape = src_shape if shape is None else resolve_shape(shape, int(np.prod(shape, dtype=np.int64)))
        target = _dtype(dtype, src_dtype)
        if isinstance(fill, TracedArray):
            return wrap(ops.convert(np.broadcast_to(fill, target_shape).value, target))
        return wrap(full(target_shape, np.array(fill).astype(target), target))
    return impl


_like("zeros_like", lambda args, kwargs: (0, args))
_like("ones_like", lambda args, kwargs: (1, args))
_like("empty_like", lambda args, kwargs: (0, args))  # zeros: compiled code has no uninitialised memory
_like("full_like", lambda args, kwargs: (args[0], args[1:]) if args else (kwargs.pop("fill_value"), args))


@implements("ndarray.fill")
def fill(a, val):
    a.value = ops.broadcast_in_dim(convert_like_numpy(value(val), a.dtype), a.shape, ())


@implements("ndarray.view")
def view_method(a, *args, **kwargs):
    raise UnsupportedError("ndarray.view is not supported on traced arrays")
