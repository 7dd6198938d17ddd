"""Differential tests for cofactor/numpy/extras.py: one table row per NumPy function."""
import json
import math
import re
import statistics

import numpy as np
import pytest

import cofactor as cf
from conftest import check

rng = np.random.default_rng(21)
A = rng.standard_normal((3, 4))
V = rng.standard_normal(6)
I = rng.integers(-20, 20, size=(3, 4))
SPECIAL = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 3.0])

CASES = {
    "fmod": (lambda a: np.fmod(a, 0.7), A),
    "fmod_int": (lambda a: np.fmod(a, np.array([3, -3, 0, 5])), I),
    "gcd": (lambda a: np.gcd(a, 12), I),
    "lcm": (lambda a: np.lcm(a, np.array([4, 6, 0, 9])), I),
    "heaviside": (lambda a: np.heaviside(a, 0.5), SPECIAL),
    "logaddexp2": (lambda a: np.logaddexp2(a, 0.5 * a), A),
    "ldexp": (lambda a: np.ldexp(a, np.array([1, -2, 3, 0])), A),
    "modf": (lambda a: np.modf(a), SPECIAL),
    "bitwise_count": (lambda a: np.bitwise_count(a), I),
    "fix": (lambda a: np.fix(a * 3), A),
    "isposinf_isneginf": (lambda a: (np.isposinf(a), np.isneginf(a)), SPECIAL),
    "iscomplex_isreal": (lambda a: (np.iscomplex(a + 1j * (a > 0)), np.isreal(a)), A),
    "nan_to_num": (lambda a: np.nan_to_num(a, nan=7.0), SPECIAL),
    "nan_to_num_complex": (lambda a: np.nan_to_num(a + 1j * a[::-1]), SPECIAL),
    "sinc": (lambda a: np.sinc(a), np.array([0.0, 0.5, -1.25, 3.0])),
    "append": (lambda a: (np.append(a, [1.0, 2.0]), np.append(a, a[:1], axis=0)), A),
    "cumulative_sum": (lambda a: np.cumulative_sum(a, axis=1, include_initial=True), A),
    "cumulative_prod": (lambda a: np.cumulative_prod(a[0]), A),
    "splits": (lambda a: (np.hsplit(a, 2), np.vsplit(a, [1]), np.hsplit(a[0], 2)), A),
    "rot90": (lambda a: (np.rot90(a), np.rot90(a, 2), np.rot90(a, -1), np.rot90(a, 1, (1, 0))), A),
    "rollaxis": (lambda a: np.rollaxis(a[None], 2, 0), A),
    "select": (lambda a: np.select([a < -0.5, a > 0.5], [a * 10, a * 100], default=-1.0), A),
    "trapezoid": (lambda a: (np.trapezoid(a), np.trapezoid(a, dx=0.5, axis=0), np.trapezoid(a, x=np.arange(4.0) ** 2)), A),
    "vecdot_matvec_vecmat": (lambda a: (np.vecdot(a, a), np.matvec(a, a[0]), np.vecmat(a[:, 0], a)), A),
    "unstack": (lambda a: np.unstack(a, axis=1), A),
    "resize": (lambda a: (np.resize(a, (5, 3)), np.resize(a[0], 2)), A),
    "delete_insert": (lambda a: (np.delete(a, [0, 2], axis=1), np.delete(a, slice(1, 3)), np.insert(a, 1, 9.0, axis=1),
                                 np.insert(a[0], 2, [7.0, 8.0])), A),
    "choose": (lambda a: np.choose(np.array([[0, 1, 2, 1]] * 3), [a, -a, a * 0]), A),
    "compress": (lambda a: np.compress([True, False, True], a, axis=0), A),
    "polyval": (lambda a: np.polyval([1.5, -2.0, 0.5], a), A),
    "ediff1d": (lambda a: np.ediff1d(a, to_end=[0.0], to_begin=[-1.0, -2.0]), A),
    "gradient": (lambda a: (np.gradient(a), np.gradient(a[0], 0.5)), A),
    "lexsort": (lambda a: np.lexsort((a[0], np.round(a[1]))), A),
    "sort_complex": (lambda a: np.sort_complex(a[0]), A),
    "unravel_ravel": (lambda a: (np.unravel_index(np.array([1, 7, 11]), (3, 4)),
                                 np.ravel_multi_index((np.array([0, 2]), np.array([1, 3])), (3, 4))), A),
    "block": (lambda a: np.block([[a, a], [a, a]]), A),
    "piecewise": (lambda a: np.piecewise(a, [a < 0, a > 1], [lambda x: -x, lambda x: x * 2, 0.5]), A),
    "apply_along_axis": (lambda a: np.apply_along_axis(lambda r: r.sum() * r, 1, a), A),
    "unwrap": (lambda a: np.unwrap(np.cumsum(a * 2, axis=1)), A),
    "array_equiv": (lambda a: (np.array_equiv(a, a), np.array_equiv(a, a[0])), A),
    "logspace": (lambda a: a[0, 0] + np.logspace(0, 2, 4), A),
    "packbits": (lambda a: (np.packbits(a > 0), np.packbits(a, axis=1), np.packbits(a < 3, axis=0, bitorder="little"),
                            np.packbits(np.concatenate([a, a, a], axis=1).astype(bool), axis=-1)), I),
    "unpackbits": (lambda a: (np.unpackbits(a), np.unpackbits(a, axis=0, count=-3), np.unpackbits(a, axis=1, count=35),
                              np.unpackbits(a[0], bitorder="little", count=5)), I.astype(np.uint8)),
    "linalg_vecdot_cross": (lambda a: (np.linalg.vecdot(a, a), np.linalg.cross(a[:, :3], a[:, 1:])), A),
}


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


@pytest.mark.parametrize("name", CASES)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's warnings for x % 0, inf * 0
def test_matches_numpy(name):
    f, arg = CASES[name]
    want = _leaves(f(arg.copy()))
    got = _leaves(cf.jit(f)(arg.copy()))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14, equal_nan=True)


def test_in_place_functions_update_their_argument():
    def f(a, b):
        np.putmask(a, a > 0, 0.0)
        np.copyto(b, 1.5, where=b < 0)
        np.put(a, [0, 5], [-1.0, -2.0])
        np.put_along_axis(b, np.array([[0], [1], [2]]), 9.0, axis=1)

    a, b, ea, eb = A.copy(), A.copy(), A.copy(), A.copy()
    f(ea, eb)
    cf.jit(f)(a, b)
    np.testing.assert_array_equal(a, ea)
    np.testing.assert_array_equal(b, eb)


def test_einsum_diagonal_of_empty_matrices():
    x = np.zeros((2, 0, 0))
    got = np.asarray(cf.jit(lambda a: np.einsum("...ii->...i", a))(x))
    assert got.shape == (2, 0) and got.dtype == np.float64


def test_delete_of_traced_positions_has_a_run_time_length():
    got = cf.jit(lambda a, i: np.delete(a, i))(A, np.array([1, 1, -1]))
    np.testing.assert_array_equal(np.asarray(got), np.delete(A, [1, 1, -1]))
    with pytest.raises(cf.UnsupportedError, match="numpy.delete"):  # (from an array of run-time length)
        cf.jit(lambda a: np.delete(a[a > 0], 0))(A[0])


def _sorted_by_keys_in_a_list(a, b):
    return np.lexsort([b, a]), np.lexsort((a, b)), np.stack([a, b]).sum(0)


def test_numpy_functions_given_traced_arrays_in_a_list_match_numpy():
    a, b = np.array([3, 1, 2, 1, 3]), np.array([1.0, 5.0, 2.0, 0.0, 0.0])
    got, want = cf.jit(_sorted_by_keys_in_a_list)(a, b), _sorted_by_keys_in_a_list(a, b)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


def _ravel(r, c):
    return np.ravel_multi_index((r, c), (4, 5)), np.ravel_multi_index((r, c), (4, 5), mode=("wrap", "clip"))


def _unravel(i):
    return np.unravel_index(i, (4, 5))


def _choose(i):
    return np.choose(i, [np.zeros(3), np.ones(3)])


def _histogram(x, b):
    return np.histogram(x, b)[0]


@pytest.mark.parametrize("fn, args", [
    (_ravel, ([3, 0], [0, 1])), (_ravel, ([4, 0], [0, 1])), (_ravel, ([-1, 0], [0, 1])),
    (_unravel, ([19, 3],)), (_unravel, ([20, 3],)), (_unravel, ([-1, 3],)),
    (_choose, ([0, 1, 1],)), (_choose, ([0, 2, 1],)),
    (_histogram, ([1.0, 2.0], [0.0, 1.0, 3.0])), (_histogram, ([1.0, 2.0], [0.0, 3.0, 1.0])),
])
def test_index_checks_numpy_makes_on_data(fn, args):
    """NumPy's ValueError where an index read from data is out of range (after the call), not a
    clipped or wrapped result."""
    args = [np.array(a) for a in args]
    try:
        want = fn(*args)
    except ValueError as e:
        with pytest.raises(ValueError, match=re.escape(str(e))):
            cf.jit(fn)(*args)
        return
    got = cf.jit(fn)(*args)
    for g, w in zip(got if isinstance(want, tuple) else [got], want if isinstance(want, tuple) else [want]):
        np.testing.assert_array_equal(np.asarray(g), w)


def _join_rows(a, b):
    return np.r_[a, 0.0, b, [7, 8]]


def _join_columns(a, b):
    return np.c_[a, b, np.ones((3, 2))]


@pytest.mark.parametrize("f", [_join_rows, _join_columns])
def test_r_and_c_of_traced_arrays(f):
    a, b = np.arange(3.0), np.ones(3, np.float32)
    for args in ((a, b), (b, b)):
        got, want = np.asarray(cf.jit(f)(*args)), f(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_numpy_helpers_that_python_calls_on_traced_values():
    """np.isscalar of a traced NumPy scalar or Python number, a poly1d called on a traced array, and
    pow() with a modulus (a clear refusal)."""
    def scaled(x):
        return x / x.max() if np.isscalar(x.max()) and np.isscalar(float(x[0])) and not np.isscalar(x) else x

    x = np.array([1.0, 2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(cf.jit(scaled)(x)), scaled(x))
    np.testing.assert_array_equal(np.asarray(cf.jit(lambda x: np.poly1d([1.0, -2.0, 1.0])(x))(x)),
                                  np.poly1d([1.0, -2.0, 1.0])(x))
    with pytest.raises(cf.UnsupportedError, match="pow"):
        cf.jit(lambda x: pow(int(x[0]), 2, 5))(x)
    with pytest.raises(cf.UnsupportedError, match="numpy.vectorize"):
        cf.jit(lambda x: np.vectorize(abs)(x))(x)


def _appends_its_sum(x):
    return np.concatenate([x.astype(np.float32), [x.sum(), 1.0]])


def test_a_list_holding_traced_numbers_among_arrays():
    x = np.ones(2)
    got, want = np.asarray(cf.jit(_appends_its_sum)(x)), _appends_its_sum(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def _indices_then_write(a):
    z = np.indices((3,))[0]
    z[0] = a[1]
    return z


def _mgrid_then_write(a):
    z = np.mgrid[0:3]
    z[0] = a[1]
    return z + np.ogrid[0:3][::-1] * a[0]


def _r_of_numbers_then_write(a):
    z = np.r_[0, 1, 2]
    z[0] = a[1]
    return np.r_[z, 0:2, a]


def _from_a_function(a):
    z = np.fromfunction(lambda i, j: i + j * a[0], (2, 3))
    z[0, 0] = a[1]
    return z


@pytest.mark.parametrize("f", [_indices_then_write, _mgrid_then_write, _r_of_numbers_then_write, _from_a_function])
def test_index_grids_made_in_the_function_take_traced_values(f):
    a = np.array([5, 7])
    got, want = np.asarray(cf.jit(f)(a)), f(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def _palindromes(a):
    count = 0
    for i in range(len(a)):
        s = str(a[i])
        if s == s[::-1]:
            count += 1
    return count


def _counts_in_a_dict(x):
    counts = {}
    for v in x.tolist():
        counts[v] = counts.get(v, 0) + 1
    return len(counts)


@pytest.mark.parametrize("f, error", [
    (_palindromes, cf.ConcretizationError),
    (_counts_in_a_dict, cf.ConcretizationError),
    (lambda x: len({x[0], x[1]}), cf.ConcretizationError),
    (lambda x: len([0] * int(x[1])), cf.ConcretizationError),
    (lambda x: [1.0, 2.0] * x[1], TypeError),
    (lambda x: x.view(np.dtype((np.void, 16))), cf.UnsupportedError),
], ids=["str", "dict_key", "set", "list_repeated", "list_times_float", "void_view"])
def test_python_that_needs_a_traced_values_text_or_hash_is_a_clear_error(f, error):
    """str() of a traced number (its trace-time text), a traced number as a dict key or set element (hashed
    by identity) and a list repeated a traced number of times were silently wrong."""
    with pytest.raises(error):
        cf.jit(f)(np.array([121, 12, 7, 33]))


@pytest.mark.parametrize("f, name", [
    (lambda x: math.isclose(x[0], 3.0), "math.isclose"),
    (lambda x: math.fsum(x), "math.fsum"),
    (lambda x: statistics.mean(x.tolist()), "statistics.mean"),
    (lambda x: 2.0 in x, "in x"),
    (lambda x: np.poly1d(x)(2.0), "numpy.poly1d"),    # (it asked len() of an array of run-time length)
    (lambda x: math.gamma(float(x[0])), "math.gamma"),          # (math.erf is supported: test_python_ints.py)
    (lambda x: json.dumps({"a": float(x[0])}), "json.dumps"),   # (a raw TypeError from inside json)
], ids=["isclose", "fsum", "statistics", "in", "poly1d", "gamma", "json"])
def test_python_functions_that_need_traced_values_name_themselves(f, name):
    with pytest.raises((cf.UnsupportedError, cf.ConcretizationError), match=name):
        cf.jit(f)(np.array([3.25, 2.0, 1.0]))


def _from_iterables(x):
    squares = np.fromiter((v * v for v in x), dtype=float)
    firsts = np.fromiter((int(v) for v in x), dtype=np.int32, count=2)
    return squares, firsts, np.fromiter(range(4), dtype=float)


def _from_too_short_an_iterable(x):
    return np.fromiter((v for v in x), float, count=5)


def test_fromiter_of_a_generator_over_traced_elements():
    x = np.array([1.0, 2.0, 3.0])
    for got, want in zip(cf.jit(_from_iterables)(x), _from_iterables(x)):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(ValueError, match="iterator too short"):
        cf.jit(_from_too_short_an_iterable)(x)


def _grid_of_traced_size(n):
    i, j = np.mgrid[0:n, 0:n]
    return i * 10 + j


def test_index_grids_of_traced_bounds_are_a_clear_error():
    """(NumPy's mgrid got the traced bounds: "'tuple' object has no attribute 'step'".)"""
    with pytest.raises(cf.UnsupportedError, match="numpy.mgrid with traced bounds"):
        cf.jit(_grid_of_traced_size)(np.int64(2))


def _subtract_at_a_slice(x):
    np.subtract.at(x, slice(1, 4), 1.5)
    np.multiply.at(x, (Ellipsis,), 2.0)
    return x


def _add_at_a_mask(x):
    np.add.at(x, x > 2.5, 1)
    np.multiply.at(x, x < 1.5, 3.0)
    return x


def _add_at_no_positions(x):
    hits = []
    np.add.at(x, hits, 1)
    x[hits] = 7.0
    return x, x[hits], np.take(x, hits), x.reshape(2, 3)[[], :]


def _put_along_the_flattened_array(x):
    m = x.reshape(2, 3).copy()
    np.put_along_axis(m, np.array([0, 5]), 9.0, axis=None)
    return m


@pytest.mark.parametrize("fn", [
    lambda x: np.split(x, np.array([2, 4])),
    lambda x: np.array_split(x, np.array([1, 3])),
    lambda x: np.split(x, np.arange(2, 6, 2)),
    lambda x: np.repeat(x, np.array([1, 2, 0, 1, 1, 0])),
    lambda x: np.tile(x, np.array([2, 1])),
    lambda x: x.reshape(np.array([2, 3])),
    lambda x: np.pad(x, np.array([1, 2])),
    lambda x: np.unravel_index(4, np.array([2, 3])),
    lambda x: float(np.arange(3.0)[1]) + int(np.arange(4)[3]),
    lambda x: np.tile(x, x.shape[0] - 8),
    lambda x: np.tile(x, (2, -1)),
    lambda x: np.zeros(-1),
    lambda x: np.full(-2, x[0]),
    lambda x: np.resize(x, -1),
    lambda x: np.resize(x, np.array([2, 4])),
    _subtract_at_a_slice, _add_at_a_mask, _add_at_no_positions, _put_along_the_flattened_array,
])
def test_sizes_from_arrays_of_constants_and_numpys_edge_cases(fn):
    """Arrays made of constants are known while tracing where a size is needed (split points, repeat counts,
    reps, a shape, pad widths: an internal error or 'traced' before, as their __int__ returned None);
    negative sizes are NumPy's error; ufunc.at with a basic index, an empty list as an index, put_along_axis
    into the flattened array."""
    check(fn, np.arange(6.0))
