"""Reductions and scans, against NumPy: axes, keepdims, dtype=, ddof, NaN, empty arrays."""
import numpy as np
import pytest

import cofactor as cf
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import array_shapes

from conftest import ALL_DTYPES, INEXACT, check, check_many, check_unsupported, dtype_id, sample

SHAPE = (2, 3, 4)

# Reductions that take axis (None, int, negative, tuple) and keepdims.
AXIS_REDUCTIONS = [np.sum, np.prod, np.max, np.min, np.any, np.all, np.mean, np.var, np.std, np.ptp,
                   np.count_nonzero]


def _axis_variants(f):
    return lambda x: (f(x), f(x, axis=1), f(x, axis=-1), f(x, axis=(0, 2)), f(x, axis=(-1, 0, 1)),
                      f(x, axis=0, keepdims=True), f(x, keepdims=True), f(x, axis=(), keepdims=False))


# Each test covers every dtype in one compile (conftest.check_many).

@pytest.mark.parametrize("f", AXIS_REDUCTIONS, ids=lambda f: f.__name__)
def test_reduction_axes(f):
    # Small values keep int8 products and float16 sums exact enough to compare.
    check_many({dtype_id(t): (_axis_variants(f), sample(SHAPE, t, "unit" if f is np.prod else "any"))
                for t in ALL_DTYPES})


@pytest.mark.parametrize("f", [np.argmax, np.argmin], ids=lambda f: f.__name__)
def test_arg_extrema(f):
    def variants(x):
        return f(x), f(x, axis=0), f(x, axis=-1), f(x, axis=1, keepdims=True), f(x, keepdims=True)
    check_many({dtype_id(t): (variants, sample(SHAPE, t)) for t in ALL_DTYPES})


@pytest.mark.parametrize("f", [np.argmax, np.argmin], ids=lambda f: f.__name__)
def test_arg_extrema_of_ties_nans_and_extreme_values(f):
    """The first of equal extremes, the first NaN, and values at the ends of the dtype's range (the
    reduction's starting value) along every axis."""
    rng = np.random.default_rng(5)

    def variants(x):
        return f(x), f(x, axis=0), f(x, axis=1), f(x, axis=2)

    cases = {}
    for t in [np.float64, np.float32, np.int64, np.int8, np.uint8]:
        if np.dtype(t).kind == "f":
            values = [-1.0, 0.0, 1.0, np.inf, -np.inf, np.nan]
        else:
            values = [np.iinfo(t).min, np.iinfo(t).max, 0, 1]
        cases[dtype_id(t)] = (variants, rng.choice(values, size=(3, 4, 5)).astype(t))
    cases["all_nan"] = (variants, np.full((2, 3, 2), np.nan))
    cases["all_inf"] = (variants, np.full((2, 3, 2), np.inf if f is np.argmin else -np.inf))
    check_many(cases)


@pytest.mark.parametrize("f", [np.cumsum, np.cumprod], ids=lambda f: f.__name__)
def test_scans(f):
    def variants(x):
        return f(x), f(x, axis=0), f(x, axis=-1), f(x[0])
    check_many({dtype_id(t): (variants, sample((3, 5), t, "unit" if f is np.cumprod else "any"))
                for t in ALL_DTYPES})


def test_amax_amin_are_max_min():
    check(lambda x: (np.amax(x), np.amin(x, axis=1), np.amax(x, axis=(0, 2), keepdims=True), np.amin(x, initial=-1)),
          sample(SHAPE, np.int32))


def test_scan_lengths():
    # The scan doubles its stride: lengths around powers of two.
    for n in (1, 2, 3, 4, 7, 8, 9):
        check(lambda x: (np.cumsum(x), np.cumprod(x, axis=0)), sample((n,), np.float64, "unit"))


@pytest.mark.parametrize("shape, axis", [((17,), 0), ((256,), 0), ((257,), 0), ((5000,), 0), ((300, 3), 0),
                                         ((3, 300), 1), ((2, 37, 3), 1)])
def test_long_scans_in_blocks(shape, axis):
    """Past 16 lanes a scan goes by blocks (blocks, blocks of their totals, ...): every lane, with
    blocks that do not fill the axis, along any axis, integer exact, for each kind of scan."""
    def scans(i, f, b):
        return (np.cumsum(i, axis=axis), np.maximum.accumulate(i, axis=axis), np.cumsum(f, axis=axis),
                np.cumprod(1 + f / shape[axis], axis=axis), np.minimum.accumulate(f, axis=axis),
                np.cumsum(b, axis=axis), np.logical_or.accumulate(b, axis=axis))
    check(scans, sample(shape, np.int64), sample(shape, np.float64, "unit"), sample(shape, np.bool_),
          rtol=1e-12)


def test_gradient_of_a_long_scan():
    n, eps = 40, 1e-6
    x = np.random.default_rng(3).random(n)

    def loss(x):
        return np.sum(np.cumsum(x) ** 2) + np.sum(np.cumprod(1 + x / n))

    g = np.asarray(cf.grad(loss)(x))
    for i in (0, 15, 16, 39):
        e = np.eye(n)[i] * eps
        assert g[i] == pytest.approx((loss(x + e) - loss(x - e)) / (2 * eps), rel=1e-6)


@pytest.mark.parametrize("f", [np.sum, np.prod, np.mean, np.cumsum, np.cumprod, np.var, np.std],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8, np.uint32, np.complex128, np.bool_],
                         ids=dtype_id)
def test_dtype_argument(f, dtype):
    x = sample((2, 3), np.int16 if dtype is np.bool_ else np.float32, "unit")
    if f in (np.mean, np.var, np.std) and np.dtype(dtype).kind not in "fc":
        check_unsupported(lambda x: f(x, dtype=dtype), x, name=f"numpy.{f.__name__}")
        return
    check(lambda x: (f(x, dtype=dtype), f(x, axis=0, dtype=dtype)), x)


@pytest.mark.parametrize("f", [np.var, np.std], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float16, np.float32, np.float64, np.complex64,
                                   np.complex128], ids=dtype_id)
def test_ddof(f, dtype):
    x = sample((3, 4), dtype)
    check(lambda x: (f(x, ddof=1), f(x, axis=0, ddof=2), f(x, axis=1, ddof=1, keepdims=True),
                     f(x, correction=1), f(x, ddof=3, axis=0)), x)


def test_mean_of_float16_accumulates_in_float32():
    x = np.full((64,), 0.1, np.float16) + sample((64,), np.float16, "unit")
    check(lambda x: (np.mean(x), np.mean(x, dtype=np.float16), np.mean(x, keepdims=True)), x)


def test_integer_sums_widen():
    for dtype in (np.int8, np.uint8, np.int32, np.uint32, np.bool_):
        check(lambda x: (np.sum(x), np.prod(x, axis=0), np.cumsum(x), x.sum(axis=1)),
              np.full((3, 4), 100 if dtype is not np.bool_ else True, dtype))


@pytest.mark.parametrize("dtype", INEXACT, ids=dtype_id)
def test_nan_propagates(dtype):
    x = np.array([[1.0, np.nan, 3.0, -1.0], [2.0, 0.5, -4.0, 7.0], [np.nan, np.nan, 1.0, 2.0]], dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * np.array([1.0, 2.0, np.nan, 0.0], dtype=x.real.dtype)
    check(lambda x: (np.max(x, axis=1), np.min(x, axis=0), np.argmax(x, axis=1), np.argmin(x, axis=0),
                     np.argmax(x), np.ptp(x, axis=1), np.sum(x, axis=0), np.mean(x, axis=1), np.max(x)), x)


def test_infinities_in_extrema():
    x = np.array([[np.inf, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf], [0.0, -0.0, 0.0]])
    # Which zero min(0.0, -0.0) gives depends on NumPy's SIMD loops, not on a rule.
    check(lambda x: (np.max(x, axis=1), np.min(x, axis=1), np.argmax(x, axis=1), np.argmin(x, axis=1)), x,
          signed_zeros=False)


def test_ties_pick_the_first_index():
    x = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [0, -1, -1, 5]], np.int32)
    check(lambda x: (np.argmax(x, axis=1), np.argmin(x, axis=1), np.argmax(x, axis=0), np.argmin(x)), x)


def test_initial():
    x = sample((2, 3), np.float64)
    check(lambda x: (np.sum(x, initial=10.0), np.prod(x, axis=0, initial=2), np.max(x, axis=1, initial=1.5),
                     np.min(x, initial=-5), np.max(x, initial=100)), x)
    check(lambda x: (np.max(x, initial=3), np.sum(x, axis=1, initial=7)), sample((2, 3), np.int8))


def test_empty_arrays():
    empty = np.zeros((0, 3))
    check(lambda x: (np.sum(x), np.sum(x, axis=0), np.prod(x, axis=0), np.any(x, axis=0), np.all(x),
                     np.cumsum(x), np.count_nonzero(x), np.max(x, axis=1), np.min(x, axis=1, initial=0.0),
                     np.max(x, initial=-1.0)), empty)
    check(lambda x: (np.mean(x, axis=0), np.var(x, axis=0)), empty)
    for f in (np.max, np.min, np.argmax, np.argmin, np.ptp):
        check(lambda x: f(x, axis=0), empty)
    check(np.argmin, empty)


@pytest.mark.parametrize("f", [np.sum, np.max, np.mean, np.argmax, np.cumsum, np.any, np.var, np.count_nonzero],
                         ids=lambda f: f.__name__)
def test_axis_out_of_range(f):
    x = sample((2, 3), np.float64)
    check(lambda x: f(x, axis=2), x)
    check(lambda x: f(x, axis=-3), x)


def test_repeated_axis():
    check(lambda x: np.sum(x, axis=(0, 0)), sample((2, 3), np.float64))
    check(lambda x: np.max(x, axis=(1, -1)), sample((2, 3), np.float64))


def test_tuple_axis_for_argmax_is_an_error():
    check(lambda x: np.argmax(x, axis=(0, 1)), sample((2, 3), np.float64))


def test_zero_dimensional_input():
    x = np.asarray(sample((1,), np.float64)[0])
    check(lambda x: (np.sum(x), np.max(x), np.argmax(x), np.mean(x), np.cumsum(x), np.std(x), np.all(x)), x)


def test_python_scalars_and_lists():
    check(lambda x: x + np.sum([1.5, 2.5]) + np.max(3) + np.mean([[1, 2], [3, 5]], axis=0), sample((2,), np.float32))


def _masked_reductions(x, m):
    return (np.sum(x, where=m), np.sum(x, axis=0, where=m[0]), np.prod(x, where=m), x.sum(where=m),
            np.max(x, where=m, initial=-5.0), np.min(x, axis=1, where=m, initial=10.0), np.mean(x, where=m),
            np.mean(x, axis=1, where=m), np.any(x > 0, where=m), np.all(x > 0, axis=0, where=m))


def test_reductions_take_a_where_mask():
    """(They were refused.)"""
    x, m = sample((2, 3), np.float64), sample((2, 3), np.bool_)
    check(_masked_reductions, x, m)
    check(lambda x: np.max(x, where=x > 0), x)            # NumPy's ValueError: no identity, no initial
    check_unsupported(lambda x: np.var(x, mean=np.mean(x)), x, name="mean=")


@given(array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4), st.data())
@settings(max_examples=12, deadline=None)
def test_random_shapes_and_axes(shape, data):
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), unique_by=lambda a: a % len(shape),
                              max_size=len(shape)).map(tuple))
    keepdims = data.draw(st.booleans())
    x = sample(shape, np.float64)
    check(lambda x: (np.sum(x, axis=axes, keepdims=keepdims), np.max(x, axis=axes, keepdims=keepdims),
                     np.var(x, axis=axes, keepdims=keepdims), np.all(x > 0, axis=axes, keepdims=keepdims),
                     np.argmin(x, axis=axes[0] if axes else None)), x)


@pytest.mark.parametrize("f", [np.sum, np.mean, np.max, np.min, np.prod, np.any, np.argmax, np.cumsum, np.add.reduce,
                               np.add.accumulate, np.nansum, np.median, np.std, np.ptp, np.nanmean],
                         ids=lambda f: f.__name__)
def test_out_of_another_kind_casts_as_numpy_casts_there(f):
    """Reductions and scans store into ``out`` whatever its dtype (np.sum(x, out=ints) truncates); others
    (std, ptp) refuse a cast across kinds, as NumPy does."""
    def into(x, o):
        f(x, axis=0, out=o)
        return o
    x = np.array([[1.6, 2.7], [3.1, 0.2]])
    scan = f in (np.cumsum, np.add.accumulate)
    check(into, x, np.zeros((2, 2) if scan else 2, np.int64))


@pytest.mark.parametrize("f", [
    lambda a: np.sum(a, dtype=np.int8), lambda a: np.cumsum(a, dtype=np.int8), lambda a: np.cumprod(a, dtype=np.uint8),
    lambda a: np.add(a, 0.0, dtype=np.int8, casting="unsafe"), lambda a: np.add.reduce(a, dtype=np.int16),
    lambda a: np.trace(np.diag(a), dtype=np.int8), lambda a: np.round(a.astype(np.uint8), -1),
    lambda a: np.einsum("i->", a, dtype=np.int8, casting="unsafe"),
])
def test_floats_cast_to_narrow_ints_by_dtype_wrap_as_numpys(f):
    """(XLA's convert saturates: np.sum([300.0, 1.0, -200.0], dtype=np.int8) was 0, NumPy's is 101.)"""
    check(f, np.array([300.0, 1.0, -200.0, 255.0, 3e9]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.bool_])
def test_mean_where_has_numpys_dtype(dtype):
    """(np.mean(float32, where=mask) was float64: the sum divided by an int64 count, not cast back.)"""
    check(lambda x: (np.mean(x, axis=0, where=x > 0), x.mean(where=x > 0), np.mean(x, where=x > 0, dtype=np.float32)),
          np.array([[1.5, -2.0], [0.25, 3.0]]).astype(dtype))
