"""astype, copy, the *_like constructors, fill, and array constructors called inside traced code."""
import platform
import warnings

import numpy as np
import pytest

import cofactor as cf
from conftest import (ALL_DTYPES, FLOATS, INTS, check, check_raises, check_unsupported, dtype_id, numpy_error_class,
                      run_numpy, sample)

TARGETS = ALL_DTYPES + [np.int16, np.uint16, np.uint64]


@pytest.mark.parametrize("source", ALL_DTYPES, ids=dtype_id)
def test_astype_to_every_dtype(source):
    # Values every target can hold (float -> unsigned of a negative number is undefined in C).
    x = sample((2, 3), source, "pos")
    check(lambda x: tuple(x.astype(t) for t in TARGETS), x)


@pytest.mark.parametrize("source", [np.float16, np.float32, np.float64, np.complex64, np.complex128],
                         ids=dtype_id)
def test_astype_of_negative_and_special_values(source):
    x = np.array([-2.7, -0.5, -0.0, 0.0, 0.5, 2.5, 1e-3], source)
    if np.dtype(source).kind == "c":
        x = x + 1j * np.array([0, 1, -0.0, 0, 0, 2, 0])
    check(lambda x: tuple(x.astype(t) for t in [np.int8, np.int32, np.int64, np.bool_, np.float16,
                                                 np.float32, np.float64]), x)
    check(lambda x: (x.astype(bool), x.astype(np.float64)), np.array([np.nan, np.inf, -np.inf], source))


OUT_OF_RANGE = [-1.7, -1.0, -3.0, 300.0, -200.0, 2.5e9, -2.5e9, 5e9, 1e19, -1e19, 9.3e18, 1.8e19, 2e19, np.nan,
                np.inf, -np.inf, 127.9, -128.9, 65535.5, 4294967295.5, -0.0]


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="C's cast is the host's")
@pytest.mark.parametrize("source", [np.float32, np.float64], ids=dtype_id)
def test_float_to_int_casts_of_values_out_of_range_are_numpys(source):
    """As NumPy on x86-64 (the C cast it compiles to): (img * 1.5).astype(np.uint8) wraps around,
    where XLA's convert saturates."""
    x = np.array(OUT_OF_RANGE, source)
    check(lambda x: tuple(x.astype(t) for t in [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                                 np.int64, np.uint64]), x)

    def stored(x):
        out = np.zeros(x.shape, np.uint8)
        out[:] = x                      # assignment casts as astype does
        return out
    check(stored, x)


def test_a_float16_cast_to_wide_integers_compiles_without_numpys_overflow_warning():
    """Its bounds past float16's range are infinities; NumPy's warning for making them came from cofactor's line."""
    x = np.array([1.0, 2.0, 60000.0, -3.0], np.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cf.jit(lambda x: (x.astype(np.uint32), x.astype(np.int64)))(x)
    np.testing.assert_array_equal(np.asarray(got[1]), x.astype(np.int64))


@pytest.mark.parametrize("source", INTS, ids=dtype_id)
def test_integer_narrowing_wraps(source):
    info = np.iinfo(source)
    x = np.array([info.min, info.max, 0, 1, info.max // 3], source)
    check(lambda x: tuple(x.astype(t) for t in [np.int8, np.uint8, np.int16, np.int32, np.uint32]), x)


def test_astype_casting_rules():
    x = sample((3,), np.float64)
    check(lambda x: x.astype(np.int32, casting="safe"), x)
    check(lambda x: x.astype(np.float32, casting="same_kind"), x)
    check(lambda x: x.astype(np.complex128, casting="safe"), x)
    check(lambda x: x.astype(np.float16, casting="safe"), x)
    check(lambda x: (x.astype("f4"), x.astype(float), x.astype(int), x.astype(complex), x.astype(bool)), x)


def test_astype_function():
    x = sample((2, 3), np.int32)
    check(lambda x: (np.astype(x, np.float32), np.astype(x, np.int32), np.astype(x, np.bool_)), x)


def test_astype_to_unsupported_dtype():
    # NumPy makes strings; cofactor has no such dtype and says so.
    check_raises(TypeError, lambda x: x.astype(np.str_), sample((3,), np.float64), match="not supported")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_like_constructors(dtype):
    x = sample((2, 3), dtype)
    check(lambda x: (np.zeros_like(x), np.ones_like(x), np.full_like(x, 3), np.full_like(x, 1.5),
                     np.zeros_like(x, dtype=np.float32), np.ones_like(x, np.int8), np.full_like(x, 2, np.uint8),
                     np.zeros_like(x, shape=(4,)), np.ones_like(x, shape=(2, 2, 1)), np.full_like(x, 7, shape=5),
                     np.full_like(x, fill_value=True), np.full_like(x, x[0]), np.full_like(x, x[0, 0], np.float64)),
          x)


def test_empty_like_gives_zeros():
    # NumPy's empty_like is uninitialised; cofactor's is zeros, with NumPy's shape and dtype.
    x = sample((2, 3), np.int32)
    got = cf.jit(lambda x: (np.empty_like(x), np.empty_like(x, dtype=np.float32, shape=(4,))))(x)
    np.testing.assert_array_equal(np.asarray(got[0]), np.zeros((2, 3), np.int32))
    assert np.asarray(got[0]).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got[1]), np.zeros(4, np.float32))
    assert np.asarray(got[1]).dtype == np.float32


def test_like_constructors_of_constants():
    check(lambda x: x + np.zeros_like([1, 2, 3]) + np.ones_like(np.arange(3.0), dtype=np.float32) +
          np.full_like([1.0, 2.0, 3.0], 2), sample((3,), np.int8))


def test_copy():
    x = sample((2, 3))
    check(lambda x: (np.copy(x), x.copy(), np.copy(x[:, ::-1]), x.T.copy()), x)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint32, np.float16, np.float64, np.complex64],
                         ids=dtype_id)
def test_fill(dtype):
    def f(x):
        y = x.copy()
        y.fill(2)
        z = x.copy()
        z.fill(x[0, 0])
        w = x.copy()
        w.fill(True)
        return y, z, w
    check(f, sample((2, 3), dtype))


def test_fill_casts_like_numpy():
    def f(x):
        y = x.copy()
        y.fill(2.7)
        return y
    check(f, sample((3,), np.int32))


# --- constructors inside traced code ---------------------------------------------------------

def test_filled_constructors():
    # np.empty's values are undefined in NumPy: only its shape and dtype are compared.
    check(lambda x: (x + np.zeros(3), np.ones((2, 3), np.int8) * x[0], np.zeros((2,), dtype=bool),
                     np.empty((4, 1)).shape, np.empty(2, np.int8).dtype.itemsize, np.full((2, 2), 1.5),
                     np.full(3, x[1]), np.full((2, 3), x), np.full(2, 7, dtype=np.uint8), np.ones(()),
                     np.zeros((0, 2))), sample((3,), np.float32))


def test_range_constructors():
    check(lambda x: (x + np.arange(3), np.arange(2, 10, 3), np.arange(1.0, 2.0, 0.25), np.arange(5, dtype=np.int8),
                     np.eye(3), np.eye(2, 4, k=1, dtype=np.int32), np.identity(2), np.linspace(0, 1, 5),
                     np.linspace(-1.0, 3.0, 4, endpoint=False), np.linspace(0, 10, 3, dtype=np.int32)),
          sample((3,), np.float64))


def test_linspace_with_traced_bounds():
    lo, hi = np.float64(-1.5), np.float64(2.0)
    check(lambda lo, hi: (np.linspace(lo, hi, 7), np.linspace(lo, hi, 4, endpoint=False), np.linspace(0.0, hi, 1),
                          np.linspace(lo, 3, 5, dtype=np.float32)), lo, hi)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_linspace_with_traced_bounds_is_numpys_to_the_last_bit(dtype):
    """NumPy rounds the step's division, each product and each sum apart; XLA's CPU backend divides by the
    reciprocal and fuses a product with the sum after it (one point in a few an ulp off, the midpoint
    of -1 and 1 in 125 points -2.8e-17)."""
    rng = np.random.default_rng(5)
    bounds = rng.uniform(-5, 5, (40, 2)).astype(dtype)
    f = cf.jit(lambda lo, hi: (np.linspace(lo, hi, 125), np.linspace(lo, hi, 37, endpoint=False, retstep=True)))
    for lo, hi in [(dtype(-1), dtype(1)), *bounds]:
        got, want = f(lo, hi), (np.linspace(lo, hi, 125), np.linspace(lo, hi, 37, endpoint=False, retstep=True))
        np.testing.assert_array_equal(np.asarray(got[0]), want[0])
        np.testing.assert_array_equal(np.asarray(got[1][0]), want[1][0])
        assert np.asarray(got[1][1]) == want[1][1] and np.asarray(got[0]).dtype == want[0].dtype


def test_linspace_to_an_integer_dtype_floors_as_numpy():
    """(Traced ends to an int dtype were truncated toward zero: -3.7 gave -3, NumPy's -4.)"""
    for ends in (np.array([0.0, -3.7]), np.array([1.5, 2.5]), np.array([-2.2, 3.9])):
        check(lambda e: (np.linspace(e[0], e[1], 6, dtype=int), np.linspace(e[0], e[1], 4, dtype=np.int32)), ends)


def test_linspace_with_its_step():
    lo, hi = np.float64(-1.5), np.float64(2.0)
    check(lambda lo, hi: (np.linspace(lo, hi, 5, retstep=True), np.linspace(lo, 3.0, 4, endpoint=False, retstep=True),
                          np.linspace(lo, hi, 1, retstep=True), np.linspace(0, 1, 5, retstep=True),
                          np.linspace(0, 1, 1, retstep=True)), lo, hi)


def test_array_constructors():
    x = sample((3,), np.float32)
    check(lambda x: (np.array([x[0], x[1], 1.0]), np.array([[x[0], 2], [3, x[2]]]), np.array(x),
                     np.array(x, dtype=np.float64), np.array([x, x]), np.array(2.5), np.array([1, 2]),
                     np.asarray(x), np.asarray(x, dtype=np.int32), np.ascontiguousarray(x[::-1]),
                     np.asanyarray([1.0, 2.0]), np.array(x, ndmin=3), np.copy(x)), x)


@pytest.mark.parametrize("f", FLOATS, ids=dtype_id)
def test_constructors_follow_numpy_default_dtypes(f):
    check(lambda x: (np.zeros(2), np.ones(2, dtype=f), np.full(2, 3), np.full(2, 3.0, dtype=f), np.arange(3.0),
                     np.array([1, 2, 3]), np.array([1.0, 2.0], dtype=f), np.eye(2, dtype=f)),
          sample((2,), f))


def test_constructors_with_traced_shapes_are_unsupported():
    check_unsupported(lambda n: np.arange(n), np.int64(3), name="numpy.arange")
    check_unsupported(lambda n: np.eye(n), np.int64(3), name="numpy.eye")


def _filled_u8(fill):
    return lambda x: np.full(2, fill, dtype=np.uint8) + x


@pytest.mark.parametrize("f", [
    _filled_u8(300),
    _filled_u8(-1),
    _filled_u8(7),
    lambda x: np.full_like(x, -1) + x,
    lambda x: np.full_like(x, 255) + x,
    lambda x: np.array([1, 300], dtype=np.uint8) + x,
    lambda x: np.array([[1, 2], [3]]),
    lambda x: np.int8(300) + x,
    lambda x: np.arange(-3, 3, dtype=np.uint8),
    lambda x: np.arange(0, 5, 0),
    lambda x: np.array([1, 2 ** 64]),
], ids=["full300", "full-1", "full7", "full_like-1", "full_like255", "array300", "ragged", "int8_300",
        "arange_u8", "arange_step0", "beyond_int64"])
def test_python_ints_out_of_a_dtypes_range_raise_numpys_errors(f):
    """NumPy's OverflowError (and ValueError, ZeroDivisionError) for constants it cannot hold, at the
    user's line, never an internal error; an object array NumPy would make is a clear refusal."""
    x = np.array([1, 2], np.uint8)
    try:
        want = run_numpy(f, x)
    except Exception as error:  # noqa: BLE001
        check_raises(numpy_error_class(error), f, x)
        return
    if np.asarray(want).dtype == object:
        check_unsupported(f, x, name="dtype=object")
    else:
        check(f, x)


def _stores_a_list(x):
    x[:] = [1, 300]
    return x


def _copies_a_number(x, v):
    np.copyto(x, v)
    return x


@pytest.mark.parametrize("case", [(_stores_a_list, ()), (_copies_a_number, (3,)), (_copies_a_number, (300,)),
                                  (_copies_a_number, (3.5,)), (_copies_a_number, (-1,))],
                         ids=["list300", "copyto3", "copyto300", "copyto3.5", "copyto-1"])
def test_python_numbers_stored_into_small_integer_arrays(case):
    """A list's items and a Python number given to np.copyto are NumPy's (NEP 50: weak, then range-checked)."""
    f, extra = case
    check(f, np.array([5, 6], np.uint8), *extra)


def test_linspace_computes_in_the_dtype_of_its_endpoints():
    check(lambda x: np.linspace(x[0], x[1], 4), np.array([1.0, 2.0], np.float32))
    check(lambda u: np.linspace(u[0], 300, 3), np.array([1, 2], np.uint8))


def _linspace_of_a_traced_count(x):
    return np.linspace(0.0, 1.0, int(x.sum()))


def test_linspace_with_a_traced_num_says_its_shape_depends_on_data():
    """(It said "float() of a traced array".)"""
    with pytest.raises(cf.UnsupportedError, match="numpy.linspace with a traced num has a data-dependent shape"):
        cf.jit(_linspace_of_a_traced_count)(np.array([1.0, 2.0]))
