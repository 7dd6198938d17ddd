"""Shared helpers for the differential tests: run a function in NumPy and through
``cf.jit`` and require the same values, dtypes, shapes and errors.

Every new shape or dtype is an XLA compile, so inputs come from a small shared
pool (``sample``) and shapes stay tiny.
"""
from __future__ import annotations

import functools
import os
import warnings
import zlib

# The suite tests compiling, and must not write into the user's cache: no disk cache here, in the
# subprocesses the tests start too (tests/test_cache.py turns it on in a temporary directory).
os.environ["COFACTOR_CACHE_DIR"] = ""

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import cofactor as cf  # noqa: E402

BOOL = [np.bool_]
SIGNED = [np.int8, np.int32, np.int64]
UNSIGNED = [np.uint8, np.uint32]
INTS = SIGNED + UNSIGNED
FLOATS = [np.float16, np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]
INEXACT = FLOATS + COMPLEX
NUMERIC = INTS + INEXACT
ALL_DTYPES = BOOL + NUMERIC

# (rtol, atol) by result dtype; float16 loops may round once more or less than NumPy's.
TOLERANCES = {"e": (2e-3, 1e-3), "f": (1e-5, 1e-6), "d": (1e-12, 1e-14),
              "F": (1e-5, 1e-6), "D": (1e-12, 1e-14)}

# Value ranges of ``sample`` kinds: any sign, strictly positive, within (-1, 1), at least 1.
_RANGES = {"any": (-3.0, 3.0), "pos": (0.1, 4.0), "unit": (-0.9, 0.9), "ge1": (1.1, 4.0)}
_INT_RANGES = {"any": (-9, 10), "pos": (1, 10), "unit": (-1, 2), "ge1": (1, 10)}


def dtype_id(dtype) -> str:
    return np.dtype(dtype).name


@functools.lru_cache(maxsize=None)
def sample(shape=(2, 3), dtype=np.float64, kind="any", seed=0) -> np.ndarray:
    """A read-only random array, the same for the same arguments (``kind`` picks the range)."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng([seed, zlib.crc32(repr((shape, dtype.str, kind)).encode())])
    if dtype.kind == "b":
        x = rng.random(shape) < 0.5 if kind in ("any", "unit") else np.ones(shape, bool)
    elif dtype.kind in "iu":
        lo, hi = _INT_RANGES[kind]
        x = rng.integers(max(lo, 0) if dtype.kind == "u" else lo, hi, shape)
    else:
        lo, hi = _RANGES[kind]
        x = rng.uniform(lo, hi, shape)
        if dtype.kind == "c":
            x = x + 1j * rng.uniform(lo, hi, shape)
    x = np.asarray(x).astype(dtype)
    x.flags.writeable = False
    return x


def special_values(dtype=np.float64) -> np.ndarray:
    """Signed zeros, infinities, NaN and ordinary numbers, as a 1-d float array."""
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.5, -2.5, 1e-300 if
                     np.dtype(dtype) == np.float64 else 1e-3], dtype=dtype)


def numpy_error_class(error: Exception) -> type:
    """The public class of a NumPy error: AxisError, or its first builtin base class
    (NumPy's private UFuncTypeError subclasses count as TypeError)."""
    if isinstance(error, np.exceptions.AxisError):
        return np.exceptions.AxisError
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins")


def run_numpy(f, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


def assert_same(got, want, rtol=None, atol=None, signed_zeros=True, path="result"):
    """``got`` (ConcreteArrays) equals ``want`` (NumPy) in structure, dtype, shape and value
    (and in the signs of float zeros, unless ``signed_zeros`` is false)."""
    if isinstance(want, (tuple, list, dict)):
        assert type(got) is type(want), f"{path}: got a {type(got).__name__}, want a {type(want).__name__}"
        assert len(got) == len(want), f"{path}: got {len(got)} items, want {len(want)}"
        keys = want.keys() if isinstance(want, dict) else range(len(want))
        for k in keys:
            assert_same(got[k], want[k], rtol, atol, signed_zeros, f"{path}[{k!r}]")
        return
    assert isinstance(got, cf.ConcreteArray), f"{path}: got a {type(got).__name__}, want a ConcreteArray"
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype, f"{path}: dtype {g.dtype}, want {w.dtype}"
    assert g.shape == w.shape, f"{path}: shape {g.shape}, want {w.shape}"
    if w.dtype.kind in "fc":
        default_rtol, default_atol = TOLERANCES[w.dtype.char]
        np.testing.assert_allclose(g, w, rtol=default_rtol if rtol is None else rtol,
                                   atol=default_atol if atol is None else atol, equal_nan=True,
                                   err_msg=path)
        if w.dtype.kind == "f" and signed_zeros:
            zeros = (w == 0) & (g == 0)
            np.testing.assert_array_equal(np.signbit(g[zeros]), np.signbit(w[zeros]),
                                          err_msg=f"{path}: signs of zeros differ")
    else:
        np.testing.assert_array_equal(g, w, err_msg=path)


def check(f, *args, rtol=None, atol=None, signed_zeros=True):
    """Run ``f(*args)`` in NumPy and through ``cf.jit``: the same results, or the same error.

    Returns cofactor's result, or the exception it raised where NumPy raised.
    """
    try:
        want = run_numpy(f, *args)
    except Exception as error:  # noqa: BLE001  (any NumPy error must be matched)
        return check_raises(numpy_error_class(error), f, *args)
    got = cf.jit(f)(*args)
    assert_same(got, want, rtol, atol, signed_zeros)
    return got


def check_many(cases, rtol=None, atol=None, signed_zeros=True):
    """``check`` for each ``name -> (f, *args)`` of ``cases``, with one compile for all that NumPy
    runs (the error cases are checked one by one: they fail while tracing, before compiling)."""
    runs, wants = [], {}
    for name, (f, *args) in cases.items():
        try:
            wants[name] = run_numpy(f, *args)
        except Exception as error:  # noqa: BLE001
            check_raises(numpy_error_class(error), f, *args)
            continue
        runs.append((name, f, len(args), args))
    if not runs:
        return

    def together(*flat):
        out, i = {}, 0
        for name, f, n, _ in runs:
            out[name] = f(*flat[i:i + n])
            i += n
        return out
    got = cf.jit(together)(*[a for *_, args in runs for a in args])
    assert_same(got, wants, rtol, atol, signed_zeros)


def check_raises(cls, f, *args, match=None):
    """``cf.jit(f)(*args)`` raises a cofactor error that is a ``cls`` (or NumPy's ``cls`` from a check it
    made when the compiled function ran, on values known only then); returns it."""
    with pytest.raises(cls, match=match) as info:
        cf.jit(f)(*args)
    checked = any("raised by the compiled function" in note for note in getattr(info.value, "__notes__", ()))
    assert isinstance(info.value, cf.CofactorError) or checked, \
        f"{type(info.value).__name__} is neither a CofactorError nor a check made when the compiled function ran"
    return info.value


def check_unsupported(f, *args, name):
    """``f`` raises cofactor.UnsupportedError, and its message names ``name``."""
    error = check_raises(cf.UnsupportedError, f, *args)
    assert name in str(error), f"{name!r} not in {str(error)!r}"
    return error
