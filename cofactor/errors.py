"""cofactor's exceptions, and how they point at the user's line of code.

Errors in the user's program subclass both ``CofactorError`` and the exception
NumPy raises in the same situation (ValueError for shape mismatches, TypeError
for bad dtypes, ...), so code that catches NumPy's errors keeps working.
"""
from __future__ import annotations

import linecache
import os
import sys

import numpy as np

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))


class CofactorError(Exception):
    """Base class of every error cofactor raises on purpose."""


class CompilationError(CofactorError):
    """An internal failure in Enzyme-JAX or XLA; ``diagnostic`` holds their words and
    ``mlir`` the module that caused it."""

    def __init__(self, message, diagnostic="", mlir=None):
        self.diagnostic = diagnostic
        self.mlir = mlir
        text = message + (f"\n{diagnostic}" if diagnostic else "")
        if mlir is not None:
            text += "\n(the failing MLIR module is in this exception's .mlir attribute)"
        super().__init__(text)


class UnrolledLoopWarning(UserWarning):
    """A loop with a static trip count could not stay one rolled loop (its body needs the loop
    variable as a Python number, or changes a variable's shape), so it was unrolled: traced once
    per iteration, after one failed attempt to trace it rolled."""


class TracingError(CofactorError):
    """A mistake or unsupported construct found while tracing the user's function."""


class UnsupportedError(TracingError, NotImplementedError):
    """A NumPy function, argument or feature cofactor does not support."""


class ConcretizationError(TracingError, TypeError):
    """A traced value was used where Python needs a concrete value (bool(), float(), ...)."""


class ShapeError(TracingError, ValueError):
    pass


class DTypeError(TracingError, TypeError):
    pass


class TracedIndexError(TracingError, IndexError):
    pass


class AxisError(TracingError, np.exceptions.AxisError):
    def __init__(self, message):
        np.exceptions.AxisError.__init__(self, message)

    def __str__(self):
        return self.args[0]


class TracedOverflowError(TracingError, OverflowError):
    pass


class LinAlgError(TracingError, np.linalg.LinAlgError):
    """A matrix of the wrong shape for a numpy.linalg function (found at trace time)."""


# NumPy exception type -> the cofactor class that stands for it (most specific first).
_EQUIVALENTS = [
    (np.exceptions.AxisError, AxisError),
    (np.linalg.LinAlgError, LinAlgError),
    (IndexError, TracedIndexError),
    (OverflowError, TracedOverflowError),
    (ValueError, ShapeError),
    (TypeError, DTypeError),
    (NotImplementedError, UnsupportedError),
]


def _is_internal(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_PACKAGE_DIR + os.sep) or path.startswith(_NUMPY_DIR + os.sep) \
        or filename.startswith("<frozen")


def user_location() -> str | None:
    """``file:line: source`` of the innermost stack frame outside cofactor and NumPy."""
    frame = sys._getframe(1)
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    source = linecache.getline(filename, lineno).strip()
    return f"{filename}:{lineno}" + (f": {source}" if source else "")


def located(error: Exception) -> Exception:
    """``error`` as a cofactor error that names the user's line (idempotent)."""
    if isinstance(error, CofactorError) and getattr(error, "location", None):
        return error
    where = user_location()
    message = str(error) + (f"\n  in user code at {where}" if where else "")
    if isinstance(error, CofactorError):
        cls = type(error)
    else:
        cls = next((c for base, c in _EQUIVALENTS if isinstance(error, base)), TracingError)
    new = cls(message)
    new.location = where
    return new
