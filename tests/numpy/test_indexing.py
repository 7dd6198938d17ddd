"""Reading with basic indices (integers, slices with any step, None, Ellipsis), against NumPy."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cofactor as cf
from conftest import ALL_DTYPES, assert_same, check, check_raises, dtype_id, sample

X = sample((4, 5, 3))
V = sample((6,), seed=1)

READS = {
    "int": lambda x: (x[0], x[3], x[-1], x[-4], x[1, 2], x[1, -1, 2], x[np.int64(2)], x[np.uint8(1), np.int32(-2)]),
    "slice": lambda x: (x[1:3], x[:, 1:], x[:-1, :2], x[::2], x[1::2, ::3], x[:, :, 1:2], x[2:2], x[3:1],
                        x[-100:100], x[5:], x[:, -2:, :-1]),
    "negative_step": lambda x: (x[::-1], x[::-2], x[3:0:-1], x[-1:-5:-2], x[:, ::-3], x[1::-1, 4:1:-2, ::-1],
                                x[::-100], x[100:-100:-1]),
    "none": lambda x: (x[None], x[:, None], x[..., None], x[None, 1, None, ::2], x[None, None, ...], x[1, None, -1]),
    "ellipsis": lambda x: (x[...], x[..., 0], x[1, ...], x[..., 1:, ::-1], x[0, ..., 2], x[..., 0, 1, 2],
                           x[Ellipsis, None]),
    "mixed": lambda x: (x[1][2], x[:, 2][::-1][1], x[1:, ::2][-1, 1:], x[..., ::-1][0][None]),
}


@pytest.mark.parametrize("name", list(READS))
def test_basic_reads(name):
    check(READS[name], X)


def test_reads_of_1d_and_0d():
    check(lambda v: (v[0], v[-1], v[::-1], v[1:5:2], v[None, :, None], v[...], v[0][...], v[0][None],
                     v[2][()], v[()], v[:0]), V)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_reads_keep_dtype(dtype):
    check(lambda x: (x[1], x[:, ::-1], x[0, 2], x[None, ..., 1]), sample((3, 4), dtype))


def test_reads_of_zero_size_arrays():
    check(lambda x: (x[1:], x[:, 0], x[::-1], x[None]), np.zeros((3, 0)))


def test_empty_slices_with_negative_step():
    check(lambda x: (x[0:3:-1], x[:, 1:4:-2], np.flip(x[:, :0], 1)), X)


def test_traced_integer_index():
    check(lambda x, i: (x[i], x[i, 1:], x[:, i], x[i][::-1]), X, np.int64(2))
    check(lambda x, i: (x[i], x[i, -1]), X, np.int32(-1))


def test_iteration_and_unpacking():
    def f(x):
        a, b, c = x[:3]
        return [row.sum() for row in x], a + b * c
    check(f, sample((3, 4)))


ERRORS = {
    "out_of_bounds": lambda x: x[4],
    "negative_out_of_bounds": lambda x: x[-5],
    "out_of_bounds_inner": lambda x: x[0, 5],
    "out_of_bounds_after_ellipsis": lambda x: x[..., 3],
    "too_many_indices": lambda x: x[0, 0, 0, 0],
    "too_many_with_ellipsis": lambda x: x[0, ..., 0, 0, 0],
    "two_ellipses": lambda x: x[..., 0, ...],
    "float_index": lambda x: x[1.0],
    "float_in_tuple": lambda x: x[0, 1.5],
    "string_index": lambda x: x["a"],
    "index_0d": lambda x: x[0, 0, 0][0],
    "zero_step": lambda x: x[::0],
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_index_errors_match_numpy(name):
    error = check(ERRORS[name], X)
    assert isinstance(error, Exception), f"NumPy raised nothing for {name}"


def test_index_error_names_the_user_line():
    error = check_raises(IndexError, lambda x: x[7], X)
    assert isinstance(error, cf.CofactorError)
    assert "index 7 is out of bounds for axis 0 with size 4" in str(error)
    assert "test_indexing.py:" in str(error)


def test_traced_boolean_mask_read_matches_numpy():
    check(lambda x: (x[x > 0], x[x[:, 0] > 0], x[x > 0].sum()), X)


_bound = st.one_of(st.none(), st.integers(-7, 7))
_slices = st.builds(slice, _bound, _bound, st.one_of(st.none(), st.integers(-4, 4).filter(bool)))
_items = st.one_of(_slices, st.integers(-3, 2), st.none(), st.just(Ellipsis))


@given(st.lists(_items, min_size=1, max_size=4).filter(lambda items: items.count(Ellipsis) <= 1))
@settings(max_examples=15, deadline=None)
def test_random_basic_indices(items):
    index = tuple(items)  # too many indices: the same IndexError
    check(lambda x: x[index], X)


_traced_positions = st.lists(st.one_of(_slices, st.just("k"), st.none()), min_size=1, max_size=3).filter(
    lambda items: "k" in items and sum(item is not None for item in items) <= 2)


@given(_traced_positions, st.integers(-3, 2), st.booleans())
@settings(max_examples=25, deadline=None)
def test_traced_integer_beside_strided_slices(items, k, loop):
    """A traced integer with slices of any step around it reads and writes what NumPy does (the
    step was dropped: x[k, ::2] read consecutive elements)."""
    def index(i):
        return tuple(i if item == "k" else item for item in items)

    def f(x, i):
        got = x[index(i)] * 1.0
        x[index(i)] = x[index(i)] * 2.0 + 1.0
        if loop:
            for j in range(9):          # rolled: a traced integer of the loop's
                x[index(i if j % 2 else -1 - i)] += 1.0
        return got, x
    assert_same(cf.jit(f)(X.copy(), np.int64(k)), f(X.copy(), k))


def gaussian_elimination_with_row_swaps(A, b):
    n = A.shape[0]
    for k in range(n - 1):                     # rolled past 8 rows: k and p are traced
        p = k + np.argmax(np.abs(A[k:, k]))
        A[[k, p]] = A[[p, k]]                  # a list of traced integers as an index
        b[[k, p]] = b[[p, k]]
        for i in range(k + 1, n):
            factor = A[i, k] / A[k, k]
            A[i, k:] -= factor * A[k, k:]
            b[i] -= factor * b[k]
    return A[[0, n - 1], [n - 1, 0]], b


@pytest.mark.parametrize("n", [4, 11])
def test_lists_of_traced_integers_index_as_arrays(n):
    """A[[k, p]] = A[[p, k]], the pivoting row swap, with p traced (a ConcretizationError: a traced
    array cannot become a NumPy array)."""
    rng = np.random.default_rng(n)
    A, b = rng.standard_normal((n, n)), rng.standard_normal(n)
    want_A, want_b = A.copy(), b.copy()
    want = gaussian_elimination_with_row_swaps(want_A, want_b)
    got_A, got_b = A.copy(), b.copy()
    got = cf.jit(gaussian_elimination_with_row_swaps)(got_A, got_b)
    assert_same(got, want, rtol=1e-10, atol=1e-12)     # (eliminated entries: 0 or a rounding error)
    np.testing.assert_allclose(got_A, want_A, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_b, want_b, rtol=1e-10, atol=1e-12)


def _sum_at(x, idx):
    s = 0.0
    for j in range(idx.shape[0]):       # rolled: each index read from data
        s += x[idx[j]]
    return s


def _shift_left(x):
    for i in range(x.shape[0]):         # x[i + 1] passes the end at the last i, as NumPy says
        x[i] = x[i] + x[i + 1]
    return x


OUT_OF_BOUNDS = {
    "data_index_in_a_loop": (_sum_at, X[:, 0, 0], np.array([1, 2, 4, 3])),
    "negative_data_index": (_sum_at, X[:, 0, 0], np.array([1, -5, 3])),
    "counter_plus_one": (_shift_left, X[:, 0, 0]),
    "traced_scalar": (lambda x, k: (x[k], x[-k]), X, np.int64(4)),
    "integer_array": (lambda x, i: x[i] * 2, X, np.array([[1, -3], [3, 4]])),
    "integer_array_written": (lambda x, i: np.add.at(x, i, 1.0) or x, X, np.array([0, -5])),
    "second_axis": (lambda x, i: x[:, i], X, np.array([0, 2, 5])),
    "take": (lambda x, i: np.take(x, i), X, np.array([1, 60])),
    "in_range": (lambda x, i, k: (x[i], x[k], x[-4], x[i, k]), X, np.array([0, 3, -4]), np.int64(-3)),
    "narrow_index_dtype": (lambda x, i: (x[i[0]], x[i[1]]), np.arange(300.0), np.array([5, -1], np.int8)),
}


@pytest.mark.parametrize("name", OUT_OF_BOUNDS)
def test_traced_indices_out_of_bounds_raise_numpys_index_error(name):
    """NumPy's IndexError (with the index, at run time), where a traced index passes the axis: the
    read clamped it, silently."""
    fn, *args = OUT_OF_BOUNDS[name]
    try:
        want = fn(*[np.copy(a) for a in args])
    except IndexError as error:
        with pytest.raises(IndexError, match=str(error)):
            cf.jit(fn)(*[np.copy(a) for a in args])
        return
    assert_same(cf.jit(fn)(*[np.copy(a) for a in args]), want)


def test_a_loop_counter_over_the_axis_is_not_checked():
    def f(x):
        for i in range(x.shape[0]):
            x[i] = x[i] * x[-1 - i] + x[i % 2]
        return x
    assert cf.jit(f).lower(X[:, 0, 0].copy()).trace.checks is None


# --- advanced indexing reads, take, take_along_axis, ix_ -------------------------------------

I = np.array([[0, -1], [2, 1]])      # constant integer indices, with a negative one
ADVANCED = {
    "int_array": lambda x: (x[I], x[[0, 3, -2]], x[:, [4, 0]], x[..., [2, 2, 0]], x[np.array(1)]),
    "several_arrays": lambda x: (x[[0, 1], [2, 3]], x[I, I], x[[0, 2], :, [1, 0]], x[:, [1, 2], [0, 2]],
                                 x[[[0], [1]], [1, 2, 3]]),
    "with_slices": lambda x: (x[1:, [0, 2]], x[[3, 1], ::-1], x[::2, [1], 1:], x[[0, 1], 1, :2]),
    "constant_masks": lambda x: (x[np.array([True, False, True, False])], x[:, [True, False, True, True, False]],
                                 x[x.shape[0] * [True]], x[np.ones((4, 5), bool)]),
}


@pytest.mark.parametrize("name", list(ADVANCED))
def test_advanced_reads(name):
    check(ADVANCED[name], X)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64], ids=dtype_id)
def test_traced_integer_array_indices(dtype):
    i = np.array([[3, 0], [1, 2]], dtype)
    check(lambda x, i: (x[i], x[:, i], x[i, i[::-1]], x[i, 1:], x[..., i[0] % 3]), X, i)
    check(lambda x, i: x[i], X, np.array([-1, -4, 2], np.int64))


def test_take():
    i = np.array([[0, 4], [-1, 2]])
    check(lambda x, i: (np.take(x, i), np.take(x, i, axis=1), np.take(x, [2, 0], axis=-1), x.take([1, 3]),
                        np.take(x, 7, axis=1, mode="clip"), np.take(x, [-7, 9], axis=1, mode="wrap"),
                        np.take(x, [[1]], axis=0)), X, i)


def test_take_along_axis():
    x = sample((3, 4))
    order = np.argsort(x, axis=1)
    check(lambda x, o: (np.take_along_axis(x, o, axis=1), np.take_along_axis(x, o[:, :2], axis=-1),
                        np.take_along_axis(x, np.argsort(x, axis=0), axis=0),
                        np.take_along_axis(x, np.argmax(x, axis=1, keepdims=True), axis=1),
                        np.take_along_axis(x[0], o[0], axis=None)), x, order)


def test_ix_():
    check(lambda x: (x[np.ix_([0, 2], [1, 3, 4])], x[np.ix_([1], [0, 0], [2, 1])], np.ix_([0, 1], [2])), X)


ADVANCED_ERRORS = {
    "out_of_bounds": lambda x: x[[0, 4]],
    "negative_out_of_bounds": lambda x: x[:, [-6]],
    "float_array": lambda x: x[np.array([0.0, 1.0])],
    "shapes_do_not_broadcast": lambda x: x[[0, 1], [0, 1, 2]],
    "mask_length": lambda x: x[np.array([True, False])],
    "too_many": lambda x: x[[0], [0], [0], [0]],
    "take_out_of_bounds": lambda x: np.take(x, [24 * 5]),
    "take_mode": lambda x: np.take(x, [0], mode="bad"),
    "take_along_ndim": lambda x: np.take_along_axis(x, np.zeros((2,), int), axis=0),
    "ix_2d": lambda x: np.ix_(x[0]),
}


@pytest.mark.parametrize("name", list(ADVANCED_ERRORS))
def test_advanced_index_errors_match_numpy(name):
    error = check(ADVANCED_ERRORS[name], X)
    assert isinstance(error, Exception), f"NumPy raised nothing for {name}"


def _stores_through_a_bool(index):
    def store(x):
        x[index] = 5.0
        return x
    return store


@pytest.mark.parametrize("index", [True, False, np.True_, np.False_, (True, 1), (Ellipsis, True), (slice(1, None), False),
                                   (True, True)], ids=str)
def test_a_python_or_numpy_bool_in_an_index_is_a_0_d_mask(index):
    """``x[True]`` adds an axis of length 1, ``x[False]`` one of length 0 (reads and writes), as NumPy's
    0-d boolean mask does."""
    x = sample((3, 2))
    check(lambda x: x[index], x)
    want, got = x.copy(), x.copy()
    _stores_through_a_bool(index)(want)
    cf.jit(_stores_through_a_bool(index))(got)
    np.testing.assert_array_equal(got, want)
