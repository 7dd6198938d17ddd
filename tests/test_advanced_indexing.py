"""Integer-array and boolean-constant indexing (gather/scatter), np.take, take_along_axis, ix_."""
import numpy as np
import pytest

import cofactor as cf

rng = np.random.default_rng(11)
X = rng.standard_normal((4, 5, 6))
IDX = np.array([0, 2, -1, 2])
J = np.array([[1, 3], [0, 3]])

READS = {
    "leading": lambda a, i: a[i],
    "middle": lambda a, i: a[:, i],
    "with_slices": lambda a, i: a[i, :, 1:3],
    "int_and_array": lambda a, i: a[1, i, ::2],
    "separated_arrays_go_first": lambda a, i: a[i, 1:4, i],
    "ellipsis": lambda a, i: a[..., i],
    "2d_index": lambda a, i: a[J],
    "2d_index_and_int": lambda a, i: a[J, 1],
    "broadcast_pair": lambda a, i: a[:, J, np.array([0, 5])],
    "constant_mask": lambda a, i: a[np.array([True, False, True, True])],
    "lists": lambda a, i: a[[0, 1], [2, 3]],
    "take": lambda a, i: np.take(a, [1, -1]),
    "take_axis": lambda a, i: np.take(a, i, axis=2),
    "take_wrap": lambda a, i: np.take(a, [7, -8], axis=1, mode="wrap"),
    "take_along_axis": lambda a, i: np.take_along_axis(a, np.argsort(a, axis=1), axis=1),
    "ix_": lambda a, i: a[np.ix_([0, 2], [1, 3], [5])],
}


@pytest.mark.parametrize("name", READS)
def test_reads_match_numpy(name):
    f = READS[name]
    got, want = np.asarray(cf.jit(f)(X, IDX)), f(X, IDX)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_writes_match_numpy():
    def f(a, i):
        a[i] = 0.5
        a[:, J] += 1
        a[1, [0, 1], 2:4] = np.arange(2.0)[:, None]
        a[np.array([True, False, True, True]), 0] = -7

    a, e = X.copy(), X.copy()
    f(e, IDX)
    cf.jit(f)(a, IDX)
    np.testing.assert_array_equal(a, e)


def test_ufunc_at_accumulates_duplicates():
    def f(d, i):
        np.add.at(d, i, 1.0)
        np.multiply.at(d, [0, 0], 3.0)

    d, e = np.ones(5), np.ones(5)
    i = np.array([0, 1, 1, 4, 1])
    f(e, i)
    cf.jit(f)(d, i)
    np.testing.assert_array_equal(d, e)


def test_empty_gathers_and_scatters():
    def f(a):
        empty = np.zeros((0, 3))
        a[np.array([], dtype=np.int64)] = 5.0
        return a[np.array([], dtype=np.int64)], np.take_along_axis(empty, np.zeros((0, 3), dtype=np.int64), axis=0), a

    for got, want in zip(cf.jit(f)(X[0].copy()), f(X[0].copy())):
        assert np.asarray(got).shape == want.shape and np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)


def test_out_of_bounds_constant_index_raises():
    with pytest.raises(IndexError, match="out of bounds"):
        cf.jit(lambda a: a[np.array([0, 9])])(np.ones(3))


def masked_uses(a):
    m = a > 0
    y = np.zeros_like(a)
    y[m] = a[m] * 2
    z = a.copy()
    z[m] += 1
    return (a[m].sum(), np.mean(a[m] ** 2), a[m].max(), a[~m].min(), np.std(a[m], ddof=1),
            (a[m] > 1).sum(), y, z, np.count_nonzero(a[m]), a[m].prod())


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_traced_mask_reads_in_shape_preserving_uses(dtype):
    x = (rng.standard_normal((3, 4)) * 5).astype(dtype)
    for got, want in zip(cf.jit(masked_uses)(x), masked_uses(x)):
        got = np.asarray(got)
        assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_traced_mask_read_keeps_its_run_time_length():
    def uses(a):
        s = a[a > 0]
        return s + np.ones(3), s.shape, s[0], s[::-1]

    got = cf.jit(uses)(np.ones(3))
    for g, w in zip(got, uses(np.ones(3))):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    with pytest.raises(ValueError, match="broadcast"):  # its length is not 3 at run time
        cf.jit(uses)(np.array([1.0, -1.0, 1.0]))
    assert cf.jit(lambda a: len(a[a > 0]))(np.array([1.0, -1.0, 1.0])) == 2  # len(): a traced int
