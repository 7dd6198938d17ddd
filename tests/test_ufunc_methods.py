"""ufunc out=, reduce, accumulate, outer."""
import numpy as np
import pytest

import cofactor as cf

rng = np.random.default_rng(5)
X = rng.standard_normal((3, 4))


def check(f, *args):
    got, want = cf.jit(f)(*args), f(*args)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_out_argument_writes_into_arrays_and_views():
    def f(a):
        c = np.zeros_like(a)
        np.add(a, 1, out=c)
        np.multiply(a[0], 2, out=c[0])
        q, r = np.zeros(4), np.zeros(4)
        np.divmod(a[1], 0.3, out=(q, r))
        return c, q, r

    check(f, X)


def test_out_of_the_ufunc_methods_writes_the_array():
    """NumPy's protocol hands reduce/accumulate their out= as a tuple of one: it is still the array."""
    def f(a):
        y, c = np.zeros(4), np.zeros(4)
        r = np.add.reduce(a, axis=0, out=y)
        np.maximum.accumulate(a[1], out=c)
        np.add.accumulate(a[2], out=a[2])
        return y, r, c

    got, want = X.copy(), X.copy()
    results, expected = cf.jit(f)(got), f(want)
    for g, w in zip(results + (got,), expected + (want,)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)


def test_out_casting_follows_same_kind():
    def f(a):
        c = np.zeros(a.shape, dtype=np.int64)
        np.add(a, 1, out=c)

    with pytest.raises(TypeError, match="same_kind"):
        cf.jit(f)(X)


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum])
@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
def test_reduce(ufunc, axis):
    check(lambda a: ufunc.reduce(a, axis=axis), X)


def test_reduce_dtypes_follow_numpy():
    check(lambda a: np.add.reduce(a > 0), X)
    check(lambda a: np.logical_or.reduce(a > 1, axis=1), X)
    check(lambda a: np.add.accumulate((a > 0).astype(np.int8), axis=1), X)
    check(lambda a: np.multiply.accumulate(a), X)
    check(lambda a: np.maximum.reduce(a, axis=1, keepdims=True, initial=0.5), X)


def test_nan_ignoring_extrema_reduce_and_accumulate():
    """A running peak that skips NaNs (np.fmax.accumulate): NaN is fmax's identity, so an all-NaN run stays NaN."""
    x = np.array([[np.nan, 1.0, np.nan, 3.0, 2.0, np.nan], [np.nan] * 6])
    for ufunc in (np.fmax, np.fmin):
        check(lambda a: (ufunc.accumulate(a, axis=1), ufunc.reduce(a, axis=1), ufunc.reduce(a, axis=0),
                         ufunc.accumulate(a > 1, axis=1), ufunc.reduce(np.arange(4) - 2)), x)


def test_gcd_and_lcm_reduce_and_accumulate():
    a = np.array([[12, 18, -24], [30, 6, 42]])
    check(lambda a: (np.gcd.reduce(a, axis=1), np.lcm.reduce(a[:, :2], axis=0), np.gcd.accumulate(a, axis=1),
                     np.gcd.reduce(a[:0], axis=0), np.gcd.reduce(a, axis=None)), a)
    with pytest.raises(ValueError, match="lcm which has no identity"):
        cf.jit(lambda a: np.lcm.reduce(a[:0], axis=0))(a)


def test_outer():
    check(lambda a: np.subtract.outer(a[0], a[1]), X)
    check(lambda a: np.multiply.outer(a, a[0, :2]), X)


def test_non_associative_reduce_is_refused():
    with pytest.raises(cf.UnsupportedError, match="numpy.subtract.reduce"):
        cf.jit(lambda a: np.subtract.reduce(a))(X)


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum])
def test_reduceat_with_indices_known_at_trace_time(ufunc):
    m = np.arange(12, dtype=np.int8).reshape(3, 4) - 5
    check(lambda x: (ufunc.reduceat(x, [0, 4, 1, 6, 6]), ufunc.reduceat(x[:3], np.array([2]))), X.ravel())
    check(lambda x: (ufunc.reduceat(x, [0, 2], axis=1), ufunc.reduceat(x, [2, 0], axis=0),
                     ufunc.reduceat(x, [1, 3], axis=-1, dtype=np.float32)), m)
    with pytest.raises(IndexError, match="out-of-bounds in"):
        cf.jit(lambda x: ufunc.reduceat(x, [0, 12]))(X.ravel())


def _outs(a, b, c):
    m = np.outer(a, b)
    y, z, iy = np.zeros(4), np.zeros(6), np.zeros(4, dtype=np.int64)
    np.clip(a, -0.5, 0.5, out=a)
    np.sum(m, axis=0, out=y)
    np.dot(m[:, :3], c, out=z[:3])
    np.matmul(m[:, :3], c, out=z[3:])
    np.cumsum(c, out=c)
    means = np.mean(m, axis=1, out=np.zeros(3))
    rounded = np.round(b * 10, 0, out=np.empty(4))
    np.argmax(m, axis=0, out=iy)
    joined = np.concatenate([b, c], out=np.zeros(7))
    e = np.zeros(3)
    np.einsum("ij,j->i", m, b, out=e)
    taken = np.take(b, [0, 2], out=np.zeros(2))
    s = m.sum(axis=1, out=np.zeros(3))
    b.clip(0, 1, out=b)
    q, r = np.zeros(4), np.zeros(4)
    np.divmod(b, 0.3, out=(q, r))
    return y, z, means, rounded, iy, joined, e, taken, s, q, r


def test_out_writes_every_function_and_ufunc_that_takes_one():
    """out= of NumPy functions (reductions, products, cumulative sums, clip, round, take, concatenate,
    einsum) and ufuncs (matmul, divmod): the array, views of it and the caller's arguments all get
    the result, as in NumPy."""
    args = [rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal(3)]
    got_args, want_args = [a.copy() for a in args], [a.copy() for a in args]
    results, expected = cf.jit(_outs)(*got_args), _outs(*want_args)
    for g, w in zip(results + tuple(got_args), expected + tuple(want_args)):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)


def test_out_of_the_wrong_shape_or_kind_raises_as_numpy_does():
    truncated = cf.jit(lambda a: np.sum(a, axis=0, out=np.zeros(4, dtype=np.int64)))(X)  # (a reduction casts unsafely)
    np.testing.assert_array_equal(np.asarray(truncated), np.sum(X, axis=0, out=np.zeros(4, dtype=np.int64)))
    with pytest.raises(TypeError, match="same_kind"):
        cf.jit(lambda a: np.std(a, axis=0, out=np.zeros(4, dtype=np.int64)))(X)
    with pytest.raises(ValueError):
        cf.jit(lambda a: np.sum(a, axis=0, out=np.zeros(3)))(X)


def _reduce_of_a_list(a, b, c):
    return np.maximum.reduce([a, b, c]), np.logical_and.reduce([a > 0, b > 0]), np.maximum.reduce([a[0], b[1], 0.2])


def _ufuncs_of_lists(a, b, c):
    return (np.maximum([a[0], a[1]], 0.5), np.exp([a, b]), np.clip([a[0], b[1]], 0, 0.3), np.isnan([a[0], b[0]]),
            np.multiply.outer([a[0], b[0]], c), np.add([a[0], 1.0], (b[0], c[0])))


@pytest.mark.parametrize("fn", [_reduce_of_a_list, _ufuncs_of_lists])
def test_a_ufunc_given_only_lists_of_traced_values_takes_the_array_numpy_makes(fn):
    """With no traced array among its arguments NumPy's ufunc machinery converted the list itself (a
    ConcretizationError that told the user to use np.stack)."""
    check(fn, np.array([0.1, 0.9, -0.3]), np.array([0.5, -0.2, 0.4]), np.array([0.3, 0.3, 0.2]))


def _scatter_at_pairs_of_indices(counts, rows, cols):
    np.add.at(counts, (rows, cols), 1.0)
    np.multiply.at(counts, (cols[:2] % 3, rows[:2]), 2.0)
    np.maximum.at(counts, (rows, slice(None)), 0.5)
    return counts


def test_ufunc_at_with_a_tuple_of_traced_index_arrays_indexes_one_axis_each():
    """(The tuple was stacked into one index array, as a list of lists would be: whole rows were updated,
    silently, or an index of axis 1 was checked against axis 0.)"""
    compiled = cf.jit(_scatter_at_pairs_of_indices)
    for rows, cols in ((np.array([0, 2, 0, 1]), np.array([3, 0, 1, 3])), (np.array([2, 2, 1, 0]), np.array([1, 1, 0, 2]))):
        got, want = np.zeros((3, 4)), np.zeros((3, 4))
        result = compiled(got, rows, cols)
        np.testing.assert_array_equal(np.asarray(result), _scatter_at_pairs_of_indices(want, rows, cols))
        np.testing.assert_array_equal(got, want)


def test_at_with_values_of_another_kind_is_a_clear_error():
    """NumPy computes each update of np.add.at(int_array, idx, 0.5) in float64 and casts it back, one at a time;
    cofactor cast 0.5 to 0 first (the updates vanished, silently)."""
    for ufunc in (np.add, np.subtract, np.floor_divide):
        with pytest.raises(cf.UnsupportedError, match=f"numpy.{ufunc.__name__}.at of float64 values into a int64 array"):
            cf.jit(lambda a, i: ufunc.at(a, i, 0.5))(np.array([-1, 2, 3]), np.array([0, 0]))
    with pytest.raises(cf.UnsupportedError, match="float32 values into a int32 array"):
        cf.jit(lambda a, i, w: np.add.at(a, i, w))(np.zeros(3, np.int32), np.array([0, 0]), np.ones(2, np.float32))
