"""The registry of NumPy implementations, and the entry points NumPy's protocols call.

Adding a NumPy function is adding one decorated function in ``cofactor/numpy``:

    @implements(np.flip)
    def flip(m, axis=None): ...

Every entry point turns errors into cofactor errors that name the user's line.
"""
from __future__ import annotations

import functools

import sys

import numpy as np

from ..errors import UnsupportedError, internal, located, origin
from ..ir.core import OpBudgetExceeded, OutOfScope

FUNCTIONS: dict = {}   # numpy function (or method name "ndarray.x") -> implementation
UFUNCS: dict = {}      # (ufunc, method) -> implementation
CONSTRUCTORS: dict = {}  # numpy array constructor -> traced version, used by converted user code
INDEXED: dict = {}     # id of an object NumPy builds arrays by indexing (np.r_, np.c_) -> traced version of that
MAKERS: dict = {}      # what tracing builds of the NumPy layer's objects -> its constructor (a list of run-time length)


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


def indexed(*objects):
    """Register the traced version of ``obj[items]`` for objects such as np.r_ (converted code's subscripts)."""
    def register(impl):
        wrapped = with_user_location(impl)
        for obj in objects:
            INDEXED[id(obj)] = wrapped
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
        if getattr(np, func.__name__, None) is func:
            return f"numpy.{func.__name__}"
        return f"{_ufunc_module(func)}.{func.__name__}"
    module = getattr(func, "__module__", "numpy") or "numpy"
    module = module.replace("numpy._core.", "numpy.").replace("numpy.core.", "numpy.")
    if module in ("numpy.lib.scimath", "numpy.lib._scimath_impl"):
        module = "numpy.emath"  # (not numpy.sqrt: the real one is supported)
    elif module.startswith("numpy._") or module.startswith("numpy.lib"):
        module = "numpy"
    return f"{module}.{getattr(func, '__name__', func)}"


def _ufunc_module(ufunc) -> str:
    """The public module that holds a ufunc not NumPy's (scipy.special's erf): ufuncs do not say."""
    found = [name for name, module in list(sys.modules.items()) if module is not None
             and not name.startswith("numpy") and not any(part.startswith("_") for part in name.split("."))
             and getattr(module, "__dict__", {}).get(ufunc.__name__) is ufunc]
    return min(found, key=len, default="a library (not NumPy)")


def with_user_location(fn):
    """Errors from ``fn``: NumPy's errors (raised on purpose for the user's arguments) as cofactor
    errors naming the user's line; the user's own exceptions (from a function of theirs that
    ``fn`` called) as they are; anything else, a bug in cofactor, as an InternalError."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (OutOfScope, OpBudgetExceeded):
            raise  # about the whole trace: the trace reports them
        except Exception as e:
            kind = origin(e) if not _in_this_call(e) else "deliberate"
            if kind == "user":
                raise
            if kind == "internal":
                raise internal(e, f"tracing {numpy_name(getattr(fn, '__name__', fn))}") from e
            raise located(e) from None
    return wrapper


def _in_this_call(error) -> bool:
    """A TypeError raised by calling the implementation itself: its arguments do not fit its
    signature, which is the user's mistake (as NumPy says for its own functions)."""
    tb = error.__traceback__
    return isinstance(error, TypeError) and tb is not None and tb.tb_next is None


def _apply(impl, args, kwargs):
    try:
        return impl(*args, **kwargs)
    except TypeError as e:
        if _in_this_call(e):
            raise located(e) from None
        raise


def settled(name: str, ufunc, args, kwargs):
    """A number whose kind depends on the path taken (path_numbers.py) is read as the call needs."""
    for x in (*args, *kwargs.values()):
        for y in x if isinstance(x, (list, tuple)) else (x,):
            if getattr(y, "path_dependent", False):
                return type(y).settle(name, ufunc, args, kwargs)
    return args, kwargs


@with_user_location
def call_function(func, args, kwargs):
    impl = FUNCTIONS.get(func)
    if impl is None:
        raise UnsupportedError(f"{numpy_name(func)} is not supported by cofactor on traced arrays")
    return _apply(impl, *settled(numpy_name(func), None, args, kwargs))


@with_user_location
def call_ufunc(ufunc, method, inputs, kwargs):
    impl = UFUNCS.get((ufunc, method))
    what = numpy_name(ufunc) + ("" if method == "__call__" else f".{method}")
    if impl is None:
        raise UnsupportedError(f"{what} is not supported by cofactor on traced arrays")
    return _apply(impl, *settled(what, ufunc if method == "__call__" else None, inputs, kwargs))


def call_method(name, args, kwargs):
    """ndarray methods with no NumPy function of the same signature (astype, x.reshape(2, 3), ...)."""
    return call_function(f"ndarray.{name}", args, kwargs)
