"""Statistics against NumPy: NaN-ignoring reductions, average, median, quantiles, cov, corrcoef,
histogram, bincount."""
import numpy as np
import pytest

import cofactor as cf
from conftest import check, check_unsupported, dtype_id, sample


def with_nans(dtype=np.float64):
    """A (3, 4) sample with scattered NaNs and one all-NaN row."""
    x = sample((3, 4), dtype).copy()
    x[0, 1] = x[1, 3] = np.nan
    x[2] = np.nan
    return x


NAN_REDUCTIONS = lambda x: (  # noqa: E731
    np.nansum(x), np.nansum(x, axis=0), np.nanprod(x, axis=1, keepdims=True), np.nanmean(x), np.nanmean(x, axis=1),
    np.nanvar(x, axis=0), np.nanvar(x, axis=1, ddof=1), np.nanstd(x, keepdims=True), np.nanstd(x, axis=0, ddof=2),
    np.nanmax(x), np.nanmax(x, axis=1), np.nanmin(x, axis=0, keepdims=True), np.nanmin(x, initial=-1.0),
    np.nancumsum(x), np.nancumsum(x, axis=1), np.nancumprod(x, axis=0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128], ids=dtype_id)
def test_nan_reductions(dtype):
    check(NAN_REDUCTIONS, with_nans(dtype))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int64], ids=dtype_id)
def test_nan_reductions_of_types_without_nan(dtype):
    check(lambda x: (*NAN_REDUCTIONS(x), np.nanargmax(x, axis=1), np.nanargmin(x), np.nanmedian(x, axis=0)),
          sample((3, 4), dtype, "unit"))


def test_nan_arguments():
    check(lambda x: (np.nansum(x, dtype=np.float32), np.nanmean(x, dtype=np.float32), np.nanvar(x, correction=1),
                     np.nancumsum(x, dtype=np.float32), np.nanprod(x, axis=(0, 1), initial=2.0)), with_nans()[:2])


def test_nanargmax_and_nanargmin():
    x = with_nans()[:2]
    check(lambda x: (np.nanargmax(x), np.nanargmax(x, axis=1), np.nanargmin(x, axis=0), np.nanargmin(x, axis=1,
                                                                                                 keepdims=True)), x)


@pytest.mark.parametrize("f", [lambda x: np.nanmax(x[:, :0], axis=1), lambda x: np.nanargmin(x[:0]),
                               lambda x: np.nanmean(x, dtype=int), lambda x: np.nanvar(x, ddof=1, correction=1)])
def test_nan_reduction_errors(f):
    check(f, with_nans())


def test_average():
    check(lambda x, w: (np.average(x), np.average(x, axis=1), np.average(x, axis=(0, 1), keepdims=True),
                        np.average(x, weights=x + 4), np.average(x, axis=1, weights=w), np.average(x, 0, x + 4, True),
                        np.average(x, axis=1, weights=w, returned=True, keepdims=True), np.average(x, returned=True)),
          sample((3, 4)), sample((4,), np.int32, "pos"))
    check(lambda x: (np.average(x), np.average(x, axis=0, weights=[1, 2, 3], returned=True)), sample((3, 2), np.int8))


@pytest.mark.parametrize("f", [lambda x: np.average(x, weights=x[0]), lambda x: np.average(x, axis=0, weights=x[0]),
                               lambda x: np.average(x, axis=3)])
def test_average_errors(f):
    check(f, sample((3, 4)))


@pytest.mark.parametrize("f", [lambda x: np.average(x, axis=0, weights=[1, -1]), lambda x: np.average(x[:0], axis=1)])
def test_average_zero_division(f):
    # NumPy's ZeroDivisionError, for known weights summing to zero and for empty averages.
    with pytest.raises(ZeroDivisionError):
        cf.jit(f)(sample((2, 3)))


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.float64], ids=dtype_id)
def test_median(dtype):
    check(lambda x: (np.median(x), np.median(x, axis=0), np.median(x, axis=-1, keepdims=True), np.median(x[:, :3]),
                     np.median(x, axis=(0, 2)), np.median(x[0, 0, 0]), np.median(x[:, :0], axis=1)),
          sample((2, 4, 3), dtype))


def test_median_and_nanmedian_with_nans():
    x = with_nans()
    check(lambda x: (np.median(x), np.median(x, axis=1), np.median(x, axis=0), np.nanmedian(x),
                     np.nanmedian(x, axis=1), np.nanmedian(x, axis=0, keepdims=True), np.nanmedian(x[:2, :3], axis=1),
                     np.nanmedian(x[:, :0], axis=1)), x)


METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
           "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64], ids=dtype_id)
def test_quantile_methods(dtype):
    q = [0.0, 0.1, 0.25, 0.5, 0.8, 1.0]
    check(lambda x: tuple(np.quantile(x, q, axis=1, method=m) for m in METHODS), sample((2, 5), dtype))


def test_quantile_and_percentile_forms():
    x = sample((3, 4))
    check(lambda x, q: (np.quantile(x, 0.3), np.quantile(x, [0.3]), np.quantile(x, np.float32(0.25), axis=0),
                        np.quantile(x.astype(np.float32), 0.5), np.quantile(x.astype(np.float32), [0.5]),
                        np.quantile(x, 1), np.quantile(x, [0, 1], axis=0), np.quantile(x, [[0.2, 0.4]], axis=1),
                        np.quantile(x, 0.4, axis=(0, 1), keepdims=True), np.quantile(x, q, axis=1, keepdims=True),
                        np.percentile(x, 30), np.percentile(x, [10, 90], axis=1), np.percentile(x, q * 100),
                        np.percentile(x.astype(int), 50)),
          x, np.array([0.0, 0.35, 1.0]))


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=dtype_id)
def test_a_python_float_q_given_to_the_function_is_weak(dtype):
    """np.quantile(x, q) with q a Python float argument (traced) keeps x's dtype, as a literal does (it was float64:
    a bootstrap's np.percentile(means, 100 * alpha / 2))."""
    x = sample((3, 5), dtype)
    check(lambda x, q, alpha: (np.quantile(x, q), np.percentile(x, 100 * alpha / 2, axis=1),
                               np.quantile(x, q, axis=0, method="midpoint", keepdims=True)), x, 0.3, 0.05)


def test_a_q_given_to_the_function_outside_its_range_raises_numpys_error():
    """(It gave a number: clamped, NaN, or for method='lower' with q < 0 the maximum.)"""
    x = sample((4,))
    for f, q in [(lambda x, q: np.percentile(x, q), 150.0), (lambda x, q: np.percentile(x, q), np.array([50.0, -10.0])),
                 (lambda x, q: np.quantile(x, q), np.nan), (lambda x, q: np.percentile(x, q, method="lower"), -3.0)]:
        with pytest.raises(ValueError, match="must be in the range"):
            cf.jit(f)(x, q)
    np.testing.assert_allclose(np.asarray(cf.jit(lambda x, q: np.percentile(x, q))(x, 30.0)), np.percentile(x, 30.0))


def test_quantile_with_nans():
    x = with_nans()
    check(lambda x: (np.quantile(x, 0.5, axis=1), np.percentile(x, [20, 70], axis=0),
                     np.quantile(x, 0.3, axis=1, method="nearest")), x)


@pytest.mark.parametrize("f", [lambda x: np.quantile(x, 1.5), lambda x: np.percentile(x, -1),
                               lambda x: np.quantile(x, 0.5, method="best"), lambda x: np.quantile(x + 1j, 0.5),
                               lambda x: np.quantile(x, np.zeros((1, 1, 1))), lambda x: np.quantile(x[:0], 0.5)])
def test_quantile_errors(f):
    check(f, sample((4,)))


def test_quantile_weights_are_unsupported():
    check_unsupported(lambda x: np.quantile(x, 0.5, method="inverted_cdf", weights=x), sample((4,)),
                      name="numpy.quantile")


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex128], ids=dtype_id)
def test_cov_and_corrcoef(dtype):
    check(lambda x, y: (np.cov(x), np.cov(x, rowvar=False), np.cov(x, bias=True), np.cov(x, ddof=0), np.cov(x[0]),
                        np.cov(x, y), np.cov(x.T, y.T, rowvar=False), np.cov(x[0], y[0], dtype=np.float32),
                        np.cov(x[:1], rowvar=False), np.cov(x[:, :1]), np.cov(x[:0]),
                        np.corrcoef(x), np.corrcoef(x, rowvar=False), np.corrcoef(x[0], y[0]), np.corrcoef(x[0])),
          sample((3, 4), dtype), sample((2, 4), dtype))


@pytest.mark.parametrize("f", [lambda x: np.cov(x[None]), lambda x: np.cov(x, x[None]), lambda x: np.cov(x, ddof=1.5),
                               lambda x: np.cov(x, x[:, :2])])
def test_cov_errors(f):
    check(f, sample((3, 4)))


def test_cov_weights_are_unsupported():
    check_unsupported(lambda x: np.cov(x, fweights=[1, 2, 1, 1]), sample((3, 4)), name="numpy.cov")


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32, np.float64], ids=dtype_id)
def test_histogram(dtype):
    check(lambda x, w, edges: (np.histogram(x), np.histogram(x, bins=3), np.histogram(x, bins=4, range=(-2, 2)),
                               np.histogram(x, bins=[-5, -1, 0, 0.5, 2, 9]), np.histogram(x, bins=edges),
                               np.histogram(x, bins=3, density=True), np.histogram(x, bins=edges, weights=w),
                               np.histogram(x, bins=2, range=(0, 1), weights=w.astype(np.int32), density=True),
                               np.histogram(x[:0], bins=2), np.histogram(x[:1, :1], bins=2)),
          sample((3, 5), dtype), sample((3, 5), np.float64, "pos"), np.array([-2.0, -0.5, 0.0, 1.0, 3.0]))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
def test_histogram_of_values_on_its_edges_counts_as_numpy(dtype):
    """Edges from the data's range are NumPy's linspace to the last bit, so a value on an edge (data
    quantized to 0.1, as measurements are) falls into NumPy's bin: one histogram in twelve differed."""
    rng = np.random.default_rng(11)
    f = cf.jit(lambda x: np.histogram(x, bins=7))
    for _ in range(30):
        x = (np.round(rng.uniform(-3, 5, 40), 1) * (10 if dtype == np.int32 else 1)).astype(dtype)
        got, want = f(x), np.histogram(x, bins=7)
        np.testing.assert_array_equal(np.asarray(got[1]), want[1])
        np.testing.assert_array_equal(np.asarray(got[0]), want[0])


def test_histogram_edges_and_nans():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0, np.nan, 2.5, -1.0, 9.0])
    check(lambda x: (np.histogram(x, bins=4, range=(0, 4)), np.histogram(x, bins=[0, 1, 1, 3, 4]),
                     np.histogram(x[:5], bins=4), np.histogram(x[:5] * 0 + 1, bins=3)), x)


@pytest.mark.parametrize("f", [lambda x: np.histogram(x, bins=0), lambda x: np.histogram(x, bins=[1, 0]),
                               lambda x: np.histogram(x, bins=2, range=(3, 1)), lambda x: np.histogram(x, bins=2.5),
                               lambda x: np.histogram(x, bins=[[1, 2]]), lambda x: np.histogram(x, weights=x[0]),
                               lambda x: np.histogram(x, bins=2.5, range=(0, 1))])
def test_histogram_errors(f):
    check(f, sample((2, 3)))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_histogram_of_data_whose_range_is_not_finite_raises_numpys_error(bad):
    check(lambda x: np.histogram(x, bins=3), np.array([0.1, 0.5, bad, 0.9]))


def test_histogram_bin_estimators_are_unsupported():
    check_unsupported(lambda x: np.histogram(x, bins="auto"), sample((5,)), name="numpy.histogram")


def test_bincount():
    def counts(x, w):
        # np.array(...) in a compiled function is a compile-time constant: its length is known.
        return (np.bincount(x, minlength=12), np.bincount(x, weights=w, minlength=10),
                np.bincount(np.array([3, 1, 1, 0])), np.bincount(np.array([2, 0]), minlength=5),
                np.bincount(x[:0]), np.bincount(np.array([1, 1]), weights=w[:2]),
                np.bincount(x[:0], weights=w[:0], minlength=3))   # (NumPy's: int zeros, whatever the weights)

    check(counts, sample((6,), np.int64, "pos"), sample((6,)))
    check(lambda x: np.bincount(x, minlength=3), sample((4,), np.uint8, "unit"))


def test_bincount_with_weights_of_an_empty_selection_is_an_error_when_it_runs():
    """Its dtype would depend on the data: int64 where nothing is selected, float64 elsewhere."""
    def grouped(k, w, t):
        return np.bincount(k[w > t], weights=w[w > t], minlength=3)
    k, w = np.array([0, 1, 2, 1]), np.array([0.1, 0.5, 0.9, 0.3])
    check(grouped, k, w, 0.2)
    with pytest.raises(cf.UnsupportedError, match="NumPy's result is then int64"):
        cf.jit(grouped)(k, w, 5.0)


def test_bincount_of_negative_constants_is_an_error():
    def negative(x):
        return np.bincount(np.array([1, -1]))

    check(negative, sample((2,)))


@pytest.mark.parametrize("f", [lambda x: np.bincount(x.astype(float), minlength=9),
                               lambda x: np.bincount(x, minlength=-1), lambda x: np.bincount(x[None], minlength=9),
                               lambda x: np.bincount(x, x[:2], minlength=9), lambda x: np.bincount(x, minlength=None),
                               lambda x: np.bincount(x, x + 1j, minlength=9)])
def test_bincount_errors(f):
    check(f, sample((4,), np.int64, "pos"))


def test_bincount_of_traced_values_needs_a_minlength():
    check_unsupported(lambda x: np.bincount(x), sample((4,), np.int64, "pos"), name="numpy.bincount")


@pytest.mark.parametrize("axis", [None, 1])
def test_nanargmax_of_an_all_nan_slice_raises_numpys_error(axis):
    nan = np.nan
    check(lambda x: np.nanargmax(x, axis=axis), np.array([[nan, nan], [1.0, nan]]))
    check(lambda x: np.nanargmin(x, axis=axis), np.array([[nan, 2.0], [1.0, nan]]))


def test_average_with_traced_weights_that_sum_to_zero():
    check(lambda x, w: np.average(x, weights=w), np.ones(3), np.array([1.0, -1.0, 0.0]))
    check(lambda x, w: np.average(x, weights=w), np.ones(3), np.array([1.0, 1.0, 0.0]))


def test_piecewise_keeps_the_arrays_dtype():
    check(lambda x: np.piecewise(x, [x < 2], [-1.5]), np.array([1, 2, 3]))
    check(lambda x: np.piecewise(x, [x < 2, x > 2], [-1.5, lambda v: v * 2.5]), np.array([1, 2, 3]))


@pytest.mark.parametrize("fn", [
    lambda x: np.piecewise(x, [x < 0, x >= 0], [lambda v: v - v.mean(), lambda v: v - v.mean()]),
    lambda x: np.piecewise(x, [x < 2], [lambda v: v * 2, lambda v: v.mean()]),
    lambda x: np.piecewise(x, [x < 0, x > 2], [-1, lambda v: v ** 2 - v.min(), 7.5]),
    lambda x: np.piecewise(x, x > 1, [lambda v: v + v.sum(), 0]),
    lambda x: np.piecewise(x, [x > 0, x > 1], [lambda v: np.cumsum(v), lambda v: np.sort(v)[::-1]]),
    lambda x: np.piecewise(x, [x > 1], [1, 2, 3]),
    lambda x: np.piecewise(x, [x > 1, x < 0], [1]),
])
def test_piecewise_calls_each_function_on_the_elements_its_condition_selects(fn):
    """NumPy calls each function on x[cond] (a mean, a sum or a sort sees only those), and raises
    for a count of functions that fits no condition list."""
    for x in (np.array([5.0, 1, 0.5, 7, 1.5, -3]), np.array([-1.0, -2.0, 0.5]), np.array([3.0, 4.0, 0.5, -1.0])):
        check(fn, x)


_INT_SIGNAL = np.array([10, 200, 5, 0, 3, 250], np.uint8)
_PHASES = np.cumsum(np.random.default_rng(3).uniform(-3.0, 3.0, 12))


@pytest.mark.parametrize("fn, x", [
    (lambda x: np.select([x > 0.3, x > 0.8], [x, 1.0], default=0.0), _PHASES.astype(np.float32)),
    (lambda x: np.select([x > 20, x < 5], [x, 5]), _INT_SIGNAL.astype(np.int8)),
    (lambda x: np.select([x > 20, x < 5], [1, 2.5]), _INT_SIGNAL),
    (lambda x: np.select([x % 2], [x], -1), _INT_SIGNAL),
    (lambda x: np.select([], []), _INT_SIGNAL),
    (lambda x: np.choose((x > 20).astype(int), [x, 7]), _INT_SIGNAL),
    (lambda x: np.gradient(x), _INT_SIGNAL),
    (lambda x: np.gradient(x, 0.5), _INT_SIGNAL.astype(np.int8)),
    (lambda x: np.gradient(x.astype(np.float32), 0.1), _PHASES),
    (lambda x: np.gradient(x, 1.0, 2.0), _PHASES),
    (lambda x: np.gradient(x.reshape(3, 4), 1.0, 2.0), _PHASES),
    (lambda x: np.unwrap(x, period=6), _INT_SIGNAL.astype(np.int64) % 7),
    (lambda x: np.unwrap(x, period=5), (_INT_SIGNAL % 7).astype(np.int32)),
    (lambda x: np.unwrap(x, period=200), _INT_SIGNAL),
    (lambda x: np.unwrap(x, discont=1.0), _PHASES),
    (lambda x: np.unwrap(x.astype(np.float32).reshape(3, 4), axis=0), _PHASES),
])
def test_result_dtypes_and_argument_errors_of_selection_and_signal_helpers(fn, x):
    """Python numbers among np.select's / np.choose's choices are weak (NEP 50: a float32 image stays
    float32); np.gradient differences integers as floats (a uint8 signal wrapped) and keeps a float32
    array's dtype; np.unwrap of integers with an integer period stays integer (and raises NumPy's
    OverflowError where its period does not fit); NumPy's errors for bad arguments."""
    check(fn, x)


@pytest.mark.parametrize("fn", [
    lambda x: np.partition(x, 5), lambda x: np.partition(x, -6), lambda x: np.partition(x, 1.5),
    lambda x: np.argpartition(x, [1, 7]), lambda x: np.partition(x, 2, kind="foo"),
    lambda x: np.partition(x.reshape(5, 1), 5, axis=0), lambda x: np.argpartition(x, -2),
    lambda x: np.sort(x, kind="bogus"), lambda x: np.argsort(x, kind="st"), lambda x: np.sort(x, kind="Q"),
    lambda x: np.fft.fft(x, axis=1), lambda x: np.fft.rfft(x, axis=-2), lambda x: np.fft.fftshift(x, axes=1),
    lambda x: np.fft.irfft(x, axis=2),
])
def test_sort_partition_and_fft_check_their_arguments_as_numpy_does(fn):
    check(fn, np.array([0.3, -1.2, 2.0, 0.7, 0.1]))


@pytest.mark.parametrize("fn", [
    lambda x: np.fft.fft([x[0], x[1], 0.0, 1.0]),
    lambda x: np.fft.rfft2([[x[0], x[1]], [0.5, x[2]]]),
    lambda x: np.convolve([x[0], x[1]], x),
    lambda x: np.correlate(x, [x[0], 1.0]),
    lambda x: np.interp(0.5, [0.0, 1.0], [x[0], x[1]]),
    lambda x: np.digitize(x, [x[0], 0.5]),
    lambda x: np.searchsorted([x[0], x[1] + 1], 0.5),
    lambda x: np.average(x[:2], weights=[x[2], 1.0]),
])
def test_lists_of_traced_values_are_the_arrays_numpy_makes_of_them(fn):
    """(A ConcretizationError: NumPy's own np.shape / np.iscomplexobj converted the list.)"""
    check(fn, np.array([0.3, 0.9, 0.2, 0.7]))


@pytest.mark.parametrize("fn", [
    lambda x, y: np.polyfit(x, y, 2),
    lambda x, y: np.polyfit(x, y, 1, w=np.abs(y) + 1),
    lambda x, y: np.polyfit(x, np.stack([y, 2 * y], axis=1), 3),
    lambda x, y: y - np.polyval(np.polyfit(x, y, 1), x),
    lambda x, y: np.polyfit(x, y, -1),
    lambda x, y: np.polyfit(x, y[:3], 1),
])
def test_polyfit_fits_as_numpy(fn):
    """(Detrending with np.polyfit was refused.)"""
    x = np.linspace(0.0, 3.0, 12)
    check(fn, x, np.sin(x) + np.random.default_rng(0).normal(0, 0.1, 12))


def test_a_traced_number_of_bins_says_it_must_be_known_at_compile_time():
    """(It said "`bins` must be 1d, when an array".)"""
    with pytest.raises(cf.UnsupportedError, match="number of bins .* must be known at compile time"):
        cf.jit(lambda x, n: np.histogram(x, bins=n))(np.ones(4), np.int64(3))


@pytest.mark.parametrize("fn, x", [
    (lambda y: np.ediff1d(y, to_begin=0), np.array([1, 4, 9], np.int32)),
    (lambda y: np.ediff1d(y, to_end=[7, 8]), np.array([1, 4, 9], np.float32)),
    (lambda y: np.ediff1d(y, to_begin=np.array([1.5]), to_end=2), np.array([[1.0, 4.0], [9.0, 3.0]])),
    (lambda y: np.ediff1d(y, to_begin=1.5), np.array([1, 4, 9], np.int32)),
    (lambda y: np.ediff1d(y), np.array([True, False, True])),
    (lambda x: np.polyval([1.5, 2.0, 3.0], x), np.array([1.0, 2.0], np.float32)),
    (lambda x: np.polyval([1, 2, 3], x), np.array([1, 2], np.int32)),
    (lambda x: np.polyval(np.array([1, 2, 3], np.int8), x), np.array([1, 2], np.int8)),
    (lambda x: np.polyval([1, 2], x[0]), np.array([1.5, 2.0])),
    (lambda x: np.polyval([], x), np.array([1.5, 2.0])),
])
def test_ediff1d_and_polyval_have_numpys_dtypes_and_errors(fn, x):
    """(ediff1d's edges promoted the result, int32 to int64; polyval took x's dtype, not the promotion with
    its coefficients' array.)"""
    try:
        want = fn(x)
    except TypeError as error:
        with pytest.raises(TypeError, match=str(error).split(" ")[0]):
            cf.jit(fn)(x)
        return
    got = np.asarray(cf.jit(fn)(x))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
