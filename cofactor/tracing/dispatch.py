"""The registry of NumPy implementations, and the entry points NumPy's protocols call.

Adding a NumPy function is adding one decorated function in ``cofactor/numpy``:

    @implements(np.flip)
    def flip(m, axis=None): ...

Every entry point turns errors into cofactor errors that name the user's line.
"""
from __future__ import annotations

import functools

import numpy as np

from ..errors import UnsupportedError, located

FUNCTIONS: dict = {}   # numpy function (or method name "ndarray.x") -> implementation
UFUNCS: dict = {}      # (ufunc, method) -> implementation
CONSTRUCTORS: dict = {}  # numpy array constructor -> traced version, used by converted user code


def implements(*numpy_functions):
    def register(impl):
        for f in numpy_functions:
            FUNCTIONS[f] = impl
        return impl
    return register


def constructs(*numpy_functions):
    """Register the traced version of an array constructor (np.zeros, np.array, ...)."""
    def register(impl):
        wrapped = with_user_location(impl)
        for f in numpy_functions:
            CONSTRUCTORS[f] = wrapped
        return impl
    return register


def implements_ufunc(ufunc, method="__call__"):
    def register(impl):
        UFUNCS[(ufunc, method)] = impl
        return impl
    return register


def numpy_name(func) -> str:
    if isinstance(func, str):
        return func
    if isinstance(func, np.ufunc):
        return f"numpy.{func.__name__}"
    module = getattr(func, "__module__", "numpy") or "numpy"
    module = module.replace("numpy._core.", "numpy.").replace("numpy.core.", "numpy.")
    if module.startswith("numpy._") or module.startswith("numpy.lib"):
        module = "numpy"
    return f"{module}.{getattr(func, '__name__', func)}"


def with_user_location(fn):
    """Re-raise any error from ``fn`` as a cofactor error naming the user's line."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError, IndexError, OverflowError, NotImplementedError) as e:
            raise located(e) from None
    return wrapper


@with_user_location
def call_function(func, args, kwargs):
    impl = FUNCTIONS.get(func)
    if impl is None:
        raise UnsupportedError(f"{numpy_name(func)} is not supported by cofactor on traced arrays")
    return impl(*args, **kwargs)


@with_user_location
def call_ufunc(ufunc, method, inputs, kwargs):
    impl = UFUNCS.get((ufunc, method))
    if impl is None:
        what = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        raise UnsupportedError(f"{what} is not supported by cofactor on traced arrays")
    return impl(*inputs, **kwargs)


def call_method(name, args, kwargs):
    """ndarray methods with no NumPy function of the same signature (astype, x.reshape(2, 3), ...)."""
    return call_function(f"ndarray.{name}", args, kwargs)
