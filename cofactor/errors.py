"""cofactor's exceptions, and how they point at the user's line of code.

Errors in the user's program subclass both ``CofactorError`` and the exception
NumPy raises in the same situation (ValueError for shape mismatches, TypeError
for bad dtypes, ...), so code that catches NumPy's errors keeps working.
"""
from __future__ import annotations

import contextlib
import dis
import inspect
import linecache
import os
import sys
import sysconfig
import types
import warnings
import weakref

import numpy as np

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))
_STDLIB = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep


class CofactorError(Exception):
    """Base class of every error cofactor raises on purpose."""


class InternalError(CofactorError):
    """A bug in cofactor itself, not in the user's program: ``__cause__`` holds the original
    exception, and the message names the user's line that was being traced."""


class ArgumentError(CofactorError, ValueError, TypeError):
    """Arguments a compiled function cannot take: other shapes, dtypes or counts than a Compiled
    was compiled for, a ConcreteArray whose buffer is gone, arrays sharded over different meshes,
    shardings that do not fit the arrays."""


class DistributedError(CofactorError):
    """The processes of a multi-process run disagree: they compiled different programs, or one of
    them did not get to the program the others run."""


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


class SlowCompileWarning(UserWarning):
    """XLA took longer than its budget to compile a program (XLA's CPU backend compiles some small
    programs for minutes when it fuses their operations), so it was compiled again without fusion,
    which may run slower."""


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


class TracedZeroDivisionError(TracingError, ZeroDivisionError):
    pass


class TracedAttributeError(TracingError, AttributeError):
    """An attribute a traced array does not have (as NumPy's arrays have no such attribute)."""


class LinAlgError(TracingError, np.linalg.LinAlgError):
    """A matrix of the wrong shape for a numpy.linalg function (found at trace time)."""


# NumPy exception type -> the cofactor class that stands for it (most specific first).
_EQUIVALENTS = [
    (np.exceptions.AxisError, AxisError),
    (np.linalg.LinAlgError, LinAlgError),
    (IndexError, TracedIndexError),
    (OverflowError, TracedOverflowError),
    (ZeroDivisionError, TracedZeroDivisionError),
    (AttributeError, TracedAttributeError),
    (ValueError, ShapeError),
    (TypeError, DTypeError),
    (NotImplementedError, UnsupportedError),
]


def is_internal(filename: str) -> bool:
    """Code that is not the user's: cofactor's, NumPy's, the standard library's (contextlib's frames
    sit between the user's line and cofactor's when an error passes a ``with``)."""
    path = os.path.abspath(filename)
    return path.startswith((_PACKAGE_DIR + os.sep, _NUMPY_DIR + os.sep, _STDLIB)) or filename.startswith("<frozen")


def asked_by_user_code() -> bool:
    """Whether the caller of the function that calls this one is the user's code (converted, or a method
    Python calls by itself: a class's __str__ for an f-string), directly or through Python's operators,
    the standard library (logging) or code Python generated for it (a dataclass's __repr__); not
    cofactor's own code (its messages) or NumPy's, nor code cofactor could not read, which it runs as written
    (defined by exec or at a REPL: a print there shows the trace's text, as cofactor cannot see it)."""
    frame = sys._getframe(3)
    if frame.f_code not in _FORWARDERS and os.path.abspath(frame.f_code.co_filename).startswith(
            (_PACKAGE_DIR + os.sep, _NUMPY_DIR + os.sep)):
        return False  # (cofactor's messages, NumPy's own: the trace's text, as before)
    while frame is not None and (is_internal(frame.f_code.co_filename) or frame.f_code.co_filename == "<string>"):
        frame = frame.f_back
    return frame is not None and frame.f_code not in unconverted_code


def user_frame():
    """The innermost stack frame outside cofactor and NumPy (None: there is none)."""
    frame = sys._getframe(2)
    while frame is not None and is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def in_user_try(stop: str) -> bool:
    """Whether user code running now (the frames above this call, up to the function named ``stop``
    of cofactor's, where the trace began) is inside a ``try`` or a ``with``, which may catch an
    exception raised here."""
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_code.co_name == stop and frame.f_code.co_filename.startswith(_PACKAGE_DIR)):
        if not is_internal(frame.f_code.co_filename) and any(
                entry.start <= frame.f_lasti < entry.end for entry in dis._parse_exception_table(frame.f_code)):
            return True
        frame = frame.f_back
    return False


def warn_in_user_code(message: str, category) -> None:
    """A warning shown at the innermost user frame (the call that led to it), not in cofactor."""
    frame = user_frame()
    if frame is None:
        warnings.warn(message, category)
        return
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__"),
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))


def user_location() -> str | None:
    """``file:line: source`` of the innermost stack frame outside cofactor and NumPy."""
    frame = user_frame()
    if frame is None:
        return None
    return location_at(frame.f_code.co_filename, frame.f_lineno)


def location_at(filename: str, lineno: int) -> str:
    """``file:line: source`` of that line."""
    source = linecache.getline(filename, lineno).strip()
    return f"{filename}:{lineno}" + (f": {source}" if source else "")


# Code objects of user functions cofactor runs as written because it cannot read their source
# (defined by exec or at a REPL, a lambda it cannot single out on its line, a file edited since the
# function was defined): filled by the source conversion, read by the errors a traced condition in
# them raises.
unconverted_code = weakref.WeakSet()
# The code objects of converted code (its functions, and the functions and comprehensions defined in
# them): filled by the source conversion; converting one again (a call to it) must not take its closure
# cells for the caller's state (convert/outer.py), and a traced value's text it asks for is refused.
converted_code = weakref.WeakSet()


def unconverted_caller() -> types.CodeType | None:
    """The innermost user function running now, if cofactor runs it unconverted."""
    frame = user_frame()
    return frame.f_code if frame is not None and frame.f_code in unconverted_code else None


# Exceptions only NumPy's own argument checks raise (often from C, with no Python frame of NumPy's).
_NUMPY_CHECKS = (np.exceptions.AxisError, np.exceptions.DTypePromotionError, np._core._exceptions.UFuncTypeError)
_RAISE = dis.opmap["RAISE_VARARGS"]
_DELIBERATE_DIRS = tuple(os.path.join(_PACKAGE_DIR, d) + os.sep for d in ("numpy", "tracing", "convert", "autodiff"))


def _raised_at(error: BaseException):
    """The innermost frame of ``error``'s traceback outside the standard library (which raises on
    behalf of whoever called it), and the opcode it stopped at."""
    tb, found = error.__traceback__, (None, None)
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_STDLIB):
            found = tb.tb_frame, tb.tb_frame.f_code.co_code[tb.tb_lasti]
        tb = tb.tb_next
    return found


@contextlib.contextmanager
def numpy_rules():
    """Errors raised inside are NumPy's own rules rejecting the user's arguments: NumPy's C checks
    (``ufunc.resolve_dtypes``, ``slice.indices``, ...) raise plain exceptions, with no frame of
    NumPy's to tell them from a bug in cofactor."""
    try:
        yield
    except Exception as e:
        e.cofactor_deliberate = True
        raise


_FORWARDERS: set = set()  # code objects of functions that call a function on the user's behalf
# (Python 3.11's specialized PRECALL of a builtin makes the call itself: an error it raises stops there.)
_CALLS = {dis.opmap[name] for name in ("CALL", "CALL_FUNCTION_EX", "PRECALL") if name in dis.opmap}


def forwards_calls(fn):
    """Mark ``fn`` as calling functions on the user's behalf (converted code's calls go through it):
    an exception the callee raises without a Python frame of its own (``len(5)``'s TypeError) is
    the user's, as if their line had made the call."""
    _FORWARDERS.add(fn.__code__)
    return fn


def origin(error: BaseException) -> str:
    """Who raised ``error``: "user" (the user's own code), "deliberate" (cofactor's NumPy layer
    rejecting the arguments with NumPy's error, or NumPy itself doing so), or "internal" (a bug
    in cofactor)."""
    if isinstance(error, (CofactorError, *_NUMPY_CHECKS)) or getattr(error, "cofactor_deliberate", False):
        return "deliberate"
    frame, opcode = _raised_at(error)
    if frame is None:
        return "internal"
    if frame.f_code in _FORWARDERS and opcode in _CALLS:
        return "user"
    filename = os.path.abspath(frame.f_code.co_filename)
    if filename.startswith(_NUMPY_DIR + os.sep):
        return "deliberate"
    if filename.startswith(_DELIBERATE_DIRS) and opcode == _RAISE and type(error) is not NotImplementedError:
        return "deliberate"  # a raise statement in the NumPy layer: NumPy's error, on purpose (an abstract
        #                      method's NotImplementedError is cofactor's bug)
    if not is_internal(filename):
        return "user"
    return "internal"


def internal(error: BaseException, what: str) -> InternalError:
    """``error`` (a bug in cofactor) as an InternalError naming the user's line."""
    where = location_of(error) or user_location()
    frame, _ = _raised_at(error)
    at = f" (raised at {os.path.relpath(frame.f_code.co_filename, os.path.dirname(_PACKAGE_DIR))}:" \
         f"{frame.f_lineno})" if frame is not None else ""
    new = InternalError(f"cofactor internal error while {what}: {type(error).__name__}: {error}{at}\n"
                        "  This is a bug in cofactor, not in your program; please report it."
                        + (f"\n  in user code at {where}" if where else ""))
    new.location = where
    new.__cause__ = error
    return new


def user_line_of(error: BaseException) -> tuple | None:
    """(file, line) of the innermost frame of ``error``'s traceback that is user code."""
    found, tb = None, error.__traceback__
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            found = tb.tb_frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next
    return found


def location_of(error: BaseException) -> str | None:
    """``file:line: source`` of the innermost frame of ``error``'s traceback that is user code."""
    found = user_line_of(error)
    if found is None:
        return None
    source = linecache.getline(*found).strip()
    return f"{found[0]}:{found[1]}" + (f": {source}" if source else "")


def located(error: Exception, where: str | None = None) -> Exception:
    """``error`` as a cofactor error that names the user's line (``where``, else the innermost
    user frame running now; idempotent)."""
    if isinstance(error, CofactorError) and getattr(error, "location", None):
        return error
    where = where or user_location()
    message = str(error) + (f"\n  in user code at {where}" if where else "")
    if isinstance(error, RecursionError):
        message = (f"{error} while tracing: a recursive function whose stop condition reads a traced value "
                   "recurses on both branches of that if when traced (each branch is traced), so it does not stop, "
                   "and a deep recursion needs more of Python's stack under cofactor's frames: write it as a loop, "
                   "or raise sys.setrecursionlimit") + message[len(str(error)):]
    if isinstance(error, CofactorError):
        cls = type(error)
    else:
        cls = next((c for base, c in _EQUIVALENTS if isinstance(error, base)), TracingError)
    new = cls(message)
    new.location = where
    return new


def signature_of(fn) -> inspect.Signature:
    """``fn``'s own signature: a function's, not that of the one a functools.wraps wrapper wraps
    (whose ``__wrapped__`` inspect follows), which may take other parameters."""
    return inspect.signature(fn, follow_wrapped=not isinstance(fn, types.FunctionType))


def check_call(fn, args, kwargs):
    """Arguments that do not match the function's parameters are the caller's mistake, as in Python
    (not a failure inside the trace)."""
    try:
        parameters = signature_of(fn)
    except (TypeError, ValueError):  # no signature to check (a builtin): the call itself will say
        return
    try:
        parameters.bind(*args, **kwargs)
    except TypeError as e:
        raise located(TypeError(f"{getattr(fn, '__qualname__', fn)}() called with arguments that do not match its "
                                f"parameters {parameters}: {e}")) from None
