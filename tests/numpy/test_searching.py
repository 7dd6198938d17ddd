"""Searching and comparing against NumPy: searchsorted, interp, convolve, correlate, isin, isclose,
allclose, array_equal, digitize; unique, nonzero, argwhere, flatnonzero of constants."""
import numpy as np
import pytest

import cofactor as cf
from conftest import check, check_unsupported, dtype_id, sample


def test_searchsorted():
    a = np.array([-1.0, 0.0, 0.0, 2.5, 3.0, np.inf, np.nan])
    v = np.array([[-2.0, 0.0, 1.0, 3.0], [np.inf, np.nan, -np.inf, 2.5]])
    check(lambda a, v: (np.searchsorted(a, v), np.searchsorted(a, v, side="right"), np.searchsorted(a, 0.0),
                        np.searchsorted(a[:5], v, "right"), a.searchsorted(v[0]), np.searchsorted(a[:0], v),
                        np.searchsorted(a[:1], v, "right")), a, v)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint32, np.float32], ids=dtype_id)
def test_searchsorted_dtypes(dtype):
    a = np.sort(sample((6,), dtype))
    check(lambda a, v: (np.searchsorted(a, v), np.searchsorted(a, v, side="right"), np.searchsorted(a, 2),
                        np.searchsorted(a, 1.5), np.searchsorted(a, v.astype(np.int64))), a, sample((3, 2), dtype))


def test_searchsorted_with_sorter():
    a = sample((5,), np.int32)
    check(lambda a, v: (np.searchsorted(a, v, sorter=np.argsort(a)), np.searchsorted(a, v, "right", np.argsort(a))),
          a, sample((4,), np.int32))


@pytest.mark.parametrize("f", [lambda a: np.searchsorted(a[None], 1.0), lambda a: np.searchsorted(a[0], 1.0),
                               lambda a: np.searchsorted(a, 1.0, side="middle"),
                               lambda a: np.searchsorted(a, 1.0, sorter=[0, 1])])
def test_searchsorted_errors(f):
    check(f, sample((3,)))


BINS = {"ascending": np.array([0.0, 1.0, 2.5, 4.0, 10.0]), "descending": np.array([10.0, 4.0, 2.5, 1.0, 0.0]),
        "repeated": np.array([1.0, 1.0, 3.0]), "one": np.array([2.0])}


@pytest.mark.parametrize("name", BINS)
def test_digitize(name):
    """Known bins (np.linspace inside) and bins passed in (traced: both directions, picked at run time)."""
    x = np.array([0.2, 6.4, 3.0, 1.6, -1.0, 10.0, 2.5, np.nan, 4.0])
    bins = BINS[name]
    check(lambda x, bins: (np.digitize(x, bins), np.digitize(x, bins, right=True), np.digitize(x[0], bins),
                           np.digitize(x, np.linspace(0.0, 5.0, 6)), np.digitize(x, [3.0, 1.0], right=True)), x, bins)


@pytest.mark.parametrize("f", [lambda x: np.digitize(x, [1.0, 0.0, 2.0]), lambda x: np.digitize(x, [[1.0, 2.0]])])
def test_digitize_errors(f):
    check(f, np.array([0.5, 1.0, 0.0]))


def test_digitize_into_traced_bins_that_are_not_monotonic():
    with pytest.raises(ValueError, match="monotonically"):   # known only when the program runs
        cf.jit(lambda x: np.digitize(x, x))(np.array([0.5, 1.0, 0.0]))


def test_interp():
    xp = np.array([-1.0, 0.0, 0.5, 0.5, 2.0, 3.0])
    fp = np.array([1.0, -1.0, 2.0, 3.0, 0.5, 0.5])
    x = np.array([[-2.0, -1.0, -0.5, 0.25, 0.5], [1.0, 2.0, 2.5, 3.0, 4.0]])
    check(lambda x, xp, fp: (np.interp(x, xp, fp), np.interp(x, xp, fp, left=-9.0, right=9), np.interp(0.75, xp, fp),
                             np.interp(x, xp[:1], fp[:1]), np.interp(x, xp[:2], fp[:2], left=np.float32(5)),
                             np.interp(x, xp, fp, period=2.5), np.interp(x, xp, fp, period=-4, left=100.0),
                             np.interp(x.astype(np.float32), xp.astype(int), fp.astype(np.int8)),
                             np.interp(x, xp, fp + 1j * xp), np.interp(x, xp, fp + 1j, left=2j, right=-1.0)),
          x, xp, fp)


def test_interp_with_special_values():
    xp = np.array([0.0, 1.0, 2.0, 3.0])
    fp = np.array([0.0, np.inf, 1.0, 4.0])
    check(lambda x: (np.interp(x, xp, fp), np.interp(x, xp, fp[::-1])),
          np.array([np.nan, 0.5, 1.0, 1.5, 2.5, np.inf, -np.inf]))


@pytest.mark.parametrize("f", [lambda x: np.interp(x, x[:0], x[:0]), lambda x: np.interp(x, x, x[:2]),
                               lambda x: np.interp(x, x[None], x), lambda x: np.interp(x, x, x[None]),
                               lambda x: np.interp(x, x, x, period=0), lambda x: np.interp(x, x, x, period=1,
                                                                                             left=x),
                               lambda x: np.interp(x, x[None], x, period=1), lambda x: np.interp(x, x, x, left=1j)])
def test_interp_errors(f):
    check(f, sample((3,)))


MODES = ["full", "same", "valid", 0, 1, 2]


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float32, np.float64, np.complex128], ids=dtype_id)
def test_convolve_and_correlate(dtype):
    def f(a, v):
        results = []
        for mode in MODES:
            for x, y in ((a, v), (v, a), (a, a), (v[:1], a)):
                results += [np.convolve(x, y, mode), np.correlate(x, y, mode)]
        return tuple(results)

    check(f, sample((5,), dtype), sample((3,), dtype))


def test_convolve_keeps_infinities_out_of_the_padding():
    check(lambda a, v: (np.convolve(a, v), np.correlate(a, v, "full"), np.convolve(a, 2.0), np.convolve(3, v)),
          np.array([1.0, np.inf, -2.0, 0.5]), np.array([2.0, -np.inf]))


def test_convolve_of_mixed_dtypes():
    check(lambda a, v: (np.convolve(a, v), np.correlate(a, v, "same"), np.convolve(a, [1.0, 2.0]),
                        np.correlate(a, [1, 2, 1]), np.correlate([1.0, 2.0, 3.0, 4.0, 5.0], v, "same")),
          sample((4,), np.int8), sample((3,), np.float32))


@pytest.mark.parametrize("f", [lambda a: np.convolve(a, a[:0]), lambda a: np.convolve(a[:0], a),
                               lambda a: np.correlate(a, a[:0]), lambda a: np.correlate(a[:0], a),
                               lambda a: np.convolve(a, a, mode="middle"), lambda a: np.convolve(a, a, mode=3),
                               lambda a: np.convolve(a, a, mode=True), lambda a: np.convolve(a[None], a),
                               lambda a: np.correlate(a[0], a)])
def test_convolve_errors(f):
    check(f, sample((3,)))


def test_isin():
    check(lambda x, t: (np.isin(x, t), np.isin(x, t, invert=True), np.isin(x, [1, 2]), np.isin(x[0, 0], t),
                        np.isin(x, t, kind="table"), np.isin(x.astype(float), t.astype(float) + 0.5),
                        np.isin(x, t[:0]), np.isin(x, t[:, None], kind="sort")),
          sample((3, 4), np.int32), sample((2, 3), np.int32))
    check(lambda x: (np.isin(x, [np.nan, 1.0]), np.isin(x, x)), np.array([np.nan, 1.0, 2.0]))


@pytest.mark.parametrize("f", [lambda x: np.isin(x, x, kind="hash"), lambda x: np.isin(x, x, kind="table")])
def test_isin_errors(f):
    check(f, sample((3,)))


def test_isclose_allclose_array_equal():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 100.0, 0.0])
    b = np.array([1.0 + 1e-6, np.nan, np.inf, np.inf, 0.0, 100.01, -0.0])
    check(lambda a, b: (np.isclose(a, b), np.isclose(a, b, equal_nan=True), np.isclose(a, b, rtol=1e-3, atol=0),
                        np.isclose(a, 1.0), np.isclose(1, b), np.isclose(a[0], b[0]), np.allclose(a, b),
                        np.allclose(a[4:], b[4:]), np.allclose(a, a, equal_nan=True), np.array_equal(a, b),
                        np.array_equal(a, a), np.array_equal(a, a, equal_nan=True), np.array_equal(a, a[:2]),
                        np.array_equal(a[:1], b[:1] - 1e-6), np.isclose(a.astype(np.float32), b)), a, b)
    check(lambda x, y: (np.isclose(x, y), np.allclose(x, y), np.array_equal(x, y), np.array_equal(x, x, True),
                        np.isclose(x, y.astype(np.int8))), sample((2, 3), np.int64), sample((3,), np.int64))


def test_unique_and_nonzero_of_constants():
    def f(x):
        c = np.array([[3, 0, 1], [1, 0, 7]])  # a compile-time constant
        return (x + np.unique(c).sum(), np.unique(c, return_index=True, return_inverse=True, return_counts=True),
                np.unique(c, axis=0), np.unique_values(c), np.unique_counts(c), np.unique_all(c), np.nonzero(c),
                c.nonzero(), np.argwhere(c), np.flatnonzero(c), x[np.nonzero(c)])

    check(f, sample((2, 3)))


def test_unique_values_order_is_numpys_hash_table_and_unsupported():
    check_unsupported(np.unique_values, sample((4,)), name="numpy.unique_values")


def test_unique_counts_inverse_and_all_match_numpy():
    def f(x):
        return (tuple(np.unique_counts(x)), tuple(np.unique_inverse(x)), tuple(np.unique_all(x)),
                tuple(np.unique_counts(x[x > 1])))
    check(f, np.array([[3.0, 1.0, np.nan], [2.0, np.nan, 3.0]]))
    assert type(cf.jit(np.unique_counts)(np.array([2.0, 1.0, 2.0]))).__name__ == "UniqueCountsResult"
