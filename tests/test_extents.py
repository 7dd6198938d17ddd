"""Run-time extents (numpy/extent.py): slices whose bounds depend on a loop's counter or on data, masks,
and data-dependent functions, against NumPy; their loops stay rolled; their errors are NumPy's."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import cofactor as cf
from tests.conftest import assert_same, check, check_many

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from extent_kernels import KERNELS, cholesky, durbin, forward_substitution, gram_schmidt  # noqa: E402

rng = np.random.default_rng(12)


@pytest.mark.parametrize("n", [5, 11])
@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_matches_numpy_with_its_loops_rolled(name, n):
    """Values, dtypes, and every argument after the call; no loop unrolled (an UnrolledLoopWarning fails)."""
    f, inputs = KERNELS[name]
    args = inputs(n, rng)
    want_args = [a.copy() for a in args]
    want = f(*want_args)
    got_args = [a.copy() for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("error", cf.UnrolledLoopWarning)
        got = cf.jit(f)(*got_args)
    if want is None:
        assert got is None
    else:
        assert_same(got, want, rtol=1e-9)
    for g, w in zip(got_args, want_args):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-9)


def test_a_triangular_loop_is_one_loop():
    text = cf.code_hlo(forward_substitution, np.eye(40) * 2, np.ones(40))
    assert text.count("stablehlo.while") == 1
    assert len(text) < 20_000  # not 40 copies of its body


def _sliced_by_the_counter(x, k):
    out = np.zeros_like(x)
    total = 0.0
    for i in range(x.shape[0]):
        out[i] = x[:i].sum() - x[i + 1:].max(initial=-1.0) + x[k:i].sum() + x[max(i - 3, 0):i + 2].mean()
        total += np.dot(x[:i], x[::-1][:i])
    for i in range(x.shape[0] - 1, -1, -1):
        out[i:] += x[:x.shape[0] - i] * 1e-3
    return out, total


def test_a_long_loop_that_slices_by_its_counter_runs_in_parts():
    """Each part's slices span the lanes its counters reach, not the whole axis (statements.for_)."""
    from cofactor.convert.statements import SEGMENTED_TRIPS
    n = SEGMENTED_TRIPS + 3  # two parts
    x = rng.standard_normal(n)
    for k in (np.int64(5), np.int64(-7)):
        assert_same(cf.jit(_sliced_by_the_counter)(x, k), _sliced_by_the_counter(x, k), rtol=1e-9)
    text = cf.compile(_sliced_by_the_counter, x, np.int64(5), optimize=False).mlir
    assert text.count("stablehlo.while") == 2 * 2
    assert f"tensor<{-(-n // 2)}xf64>" in text  # the first part's x[:i]


def test_a_long_loop_whose_slices_are_bounded_by_data_it_looks_up_stays_one_loop():
    """CSR rows, vals[rows[i]:rows[i + 1]]: parts would reach no fewer lanes, only compile more loops."""
    from cofactor.convert.statements import SEGMENTED_TRIPS
    args = KERNELS["csr_matvec"][1](SEGMENTED_TRIPS + 4, rng)
    compiled = cf.jit(KERNELS["csr_matvec"][0], max_slice=128)
    assert_same(compiled(*args), KERNELS["csr_matvec"][0](*args), rtol=1e-10)
    assert compiled.lower(*args).mlir.count("stablehlo.while") == 1


def _polybench_cholesky(A):
    """npbench's kernel as written: its inner loop's j has no value where the outer body goes on."""
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def test_a_long_loop_in_parts_around_an_inner_loop_whose_variable_may_have_no_value():
    """(Reading that variable after the first part's body refused the parts: the loop was unrolled
    past the op budget from 257 rows on.)"""
    from cofactor.convert.statements import SEGMENTED_TRIPS
    n = SEGMENTED_TRIPS + 1
    m = rng.random((n, n))
    m = m @ m.T + n * np.eye(n)
    want, got = m.copy(), m.copy()
    _polybench_cholesky(want)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no unrolled loop
        cf.jit(_polybench_cholesky)(got)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _binds_a_slice(x, k):
    s = np.zeros(3)
    for i in range(x.shape[0]):
        w = x[:i]          # a variable holding a run-time length after the body
        s[0] += w.sum()
        s[1] = max(s[1], np.max(w, initial=-np.inf))
        s[2] += np.cumsum(x[k:i])[-1] if i > k else 0.0
    return s, w * 2


def test_a_long_loop_that_leaves_a_variable_holding_a_slice_by_its_counter_is_one_loop():
    """In parts, each part would carry w at its own reach: the next part's loop could not take it
    (it was unrolled past the op budget)."""
    from cofactor.convert.statements import SEGMENTED_TRIPS
    x = rng.standard_normal(SEGMENTED_TRIPS + 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no unrolled loop
        assert_same(cf.jit(_binds_a_slice)(x, np.int64(7)), _binds_a_slice(x, np.int64(7)), rtol=1e-9)
    assert cf.compile(_binds_a_slice, x, np.int64(7), optimize=False).mlir.count("stablehlo.while") == 1


def test_a_long_loop_that_slices_a_column_block_by_its_counter_stays_one_loop():
    """Only leading axes are narrowed: Gram-Schmidt's A[:, k + 1:] would meet its R[k, k + 1:] narrowed
    while it spans the axis, and each part pay a realignment of the whole block."""
    from cofactor.convert.statements import SEGMENTED_TRIPS
    A = rng.random((SEGMENTED_TRIPS + 2, SEGMENTED_TRIPS))
    got, want = cf.jit(gram_schmidt)(A), gram_schmidt(A)
    assert_same(got, want, rtol=1e-8, atol=1e-10)
    assert cf.code_hlo(gram_schmidt, A).count("stablehlo.while") == 1


def test_gradient_through_a_loop_in_parts():
    from cofactor.convert.statements import SEGMENTED_TRIPS
    n, eps = SEGMENTED_TRIPS + 5, 1e-6
    L, b = np.tril(rng.random((n, n))) + n * np.eye(n), rng.random(n)
    loss = lambda L, b: np.sum(forward_substitution(L, b) ** 2)  # noqa: E731
    dL, db = (np.asarray(g) for g in cf.grad(loss, argnums=(0, 1))(L, b))
    dirL, dirb = np.tril(rng.standard_normal((n, n))), rng.standard_normal(n)
    want = (loss(L + eps * dirL, b + eps * dirb) - loss(L - eps * dirL, b - eps * dirb)) / (2 * eps)
    assert np.sum(dL * dirL) + np.sum(db * dirb) == pytest.approx(want, rel=1e-5)


def test_gradient_through_a_triangular_loop():
    def loss(L, b):
        return np.sum(forward_substitution(L, b) ** 2) + np.sum(durbin(b * 0.1))

    n, eps = 7, 1e-6
    L, b = np.tril(rng.random((n, n))) + n * np.eye(n), rng.random(n)
    dL, db = (np.asarray(g) for g in cf.grad(loss, argnums=(0, 1))(L, b))
    for i, j in [(0, 0), (3, 1), (6, 5), (6, 6)]:
        E = np.zeros_like(L)
        E[i, j] = eps
        assert dL[i, j] == pytest.approx((loss(L + E, b) - loss(L - E, b)) / (2 * eps), rel=1e-5, abs=1e-9)
    for i in range(n):
        e = np.eye(n)[i] * eps
        assert db[i] == pytest.approx((loss(L, b + e) - loss(L, b - e)) / (2 * eps), rel=1e-5, abs=1e-9)


def test_derivatives_of_cholesky_both_ways():
    n, eps = 5, 1e-6
    M = rng.random((n, n))
    M, dM = M @ M.T + n * np.eye(n), rng.random((n, n))
    _, tangent = cf.jvp(cholesky, (M,), (dM,))
    np.testing.assert_allclose(np.asarray(tangent), (cholesky(M + eps * dM) - cholesky(M - eps * dM)) / (2 * eps),
                               rtol=1e-5, atol=1e-8)
    grad = np.asarray(cf.grad(lambda M: np.sum(cholesky(M) ** 2))(M))
    for i, j in [(0, 0), (2, 1), (1, 2), (4, 4)]:
        E = np.zeros_like(M)
        E[i, j] = eps
        want = (np.sum(cholesky(M + E) ** 2) - np.sum(cholesky(M - E) ** 2)) / (2 * eps)
        assert grad[i, j] == pytest.approx(want, rel=1e-5, abs=1e-8)


def test_reverse_mode_through_loops_that_start_late_or_count_down():
    def loss(r):
        y = np.zeros_like(r)
        for k in range(1, r.shape[0]):
            y[k] = y[k - 1] * 0.5 + r[k]
        for k in range(r.shape[0] - 1, 0, -2):
            y[k - 1] += y[k] * 0.25
        return np.sum(y * y)

    r, eps = rng.random(9), 1e-6
    got = np.asarray(cf.grad(loss)(r))
    want = [(loss(r + e) - loss(r - e)) / (2 * eps) for e in np.eye(9) * eps]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _windows_held_in_variables(x):
    s = 0.0
    for i in range(x.shape[0]):
        w = x[:i + 1]                 # (a variable the loop carries: its condition only reads it)
        s = s + np.sum(w * w)
        tail = x[i:]
        s = s + np.sum(tail[tail > 0])
    return s


def test_reverse_mode_through_a_loop_carrying_a_slice_of_traced_bounds():
    """The loop's condition re-flattened the slice's bounds as new leaves, which looked like a rebinding:
    the loop was rotated, and Enzyme found no trip count ("WhileOp does not have known iteration count")."""
    x, eps = np.linspace(-1, 1, 12), 1e-6
    got = np.asarray(cf.grad(_windows_held_in_variables)(x))
    want = [(_windows_held_in_variables(x + e) - _windows_held_in_variables(x - e)) / (2 * eps) for e in np.eye(12) * eps]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


# --- slices with bounds known only at run time: every bound NumPy allows ---------------------------------------

_BOUNDS = [-9, -4, -1, 0, 1, 3, 5, 6, 9]


def _window_uses(x, i, j):
    """Reads, reductions, flips, cumulative sums, writes and updates through slices with traced bounds."""
    s, r = x[i:j], x[j:i:-1]
    y = x.copy()
    y[i:j] = y[i:j][::-1] * 2
    y[j:i:-1] += 1
    z = x.copy()
    z[:j] -= np.cumsum(z[:j])
    w = np.zeros(6)
    w[i:] = np.sort(x[i:])
    return (s.sum(), r.sum(), np.max(x[i:j], initial=-7.0), np.dot(x[:i], x[:i]), np.prod(x[i:] + 1), y, z, w,
            np.mean(x[:j]) if x[:j].size else 0.0, x[i:j][::-1], np.argmax(x[i:]) if x[i:].size else -1)


@pytest.mark.parametrize("start,stop", [(True, True), (False, True), (True, False)])
def test_windows_of_traced_bounds_match_numpy(start, stop):
    """Every pair of bounds (negative, past the end, crossing) through one compiled function."""
    x = rng.standard_normal(6)
    f = cf.jit(lambda x, b: _window_uses(x, b[0] if start else None, b[1] if stop else None))
    for i in _BOUNDS:
        for j in _BOUNDS:
            want = _window_uses(x, i if start else None, j if stop else None)
            assert_same(f(x, np.array([i, j])), want)


# Operations on windows of a matrix, with i and j traced: reductions on either axis, contractions, order,
# nested slices, writes.  Each runs at every pair of bounds, for a float32 and an int32 matrix.
_MATRIX_USES = {
    "sum_keepdims": lambda x, i, j: np.sum(x[i:j], axis=0, keepdims=True),
    "mean_columns": lambda x, i, j: np.mean(x[:, i:j], axis=1),
    "var_ddof": lambda x, i, j: (np.var(x[i:j], axis=0, ddof=1), np.var(x[i:j], ddof=0.5)),
    "std_two_windows": lambda x, i, j: np.std(x[i:j, 1:j]),
    "argmax_argmin": lambda x, i, j: (np.argmax(x[:, i:j], axis=1), np.argmin(x[i:j], axis=0, keepdims=True)),
    "transpose": lambda x, i, j: x[i:j].T,
    "matmul": lambda x, i, j: (x[i:j, :] @ x[i:j, :].T, x[:, i:j] @ x[:, i:j].T, x[0, i:j] @ x[:, i:j].T),
    "sort": lambda x, i, j: (np.sort(x[:, i:j], axis=1), np.sort(x[i:j], axis=0)),
    "nested": lambda x, i, j: (x[i:j][1:], x[j:i:-1][1::-1], x[i:j, i:j], x[i:j, i:j].sum(axis=1)),
    "element": lambda x, i, j: x[i:j][::-1][0] if x[i:j].shape[0] > 0 else x[0],
    "cumprod": lambda x, i, j: np.cumprod(x[:, i:j] % 3, axis=1),
    "elementwise": lambda x, i, j: (np.where(x[i:j] > 0, x[i:j], -x[i:j]), np.clip(x[i:j], -1, 1), -abs(x[i:j]),
                                    x[i:j] > 1, np.round(x[i:j] / 3, 1), x[i:j].astype(np.float64)),
    "reductions": lambda x, i, j: (np.prod(x[i:j] % 3 + 1, axis=0), np.any(x[i:j] > 1), np.all(x[i:j] > -3, axis=1),
                                   np.count_nonzero(x[i:j] > 0), np.max(x[i:j, :], initial=-99),
                                   np.min(x[:, i:j], axis=1, initial=99)),
    "products": lambda x, i, j: (np.outer(x[0, i:j], x[1, :j]), np.inner(x[i:j], x[i:j]), np.vdot(x[0, i:j], x[1, i:j]),
                                 np.dot(x[:, i:j], np.arange(6)[i:j]), np.linalg.norm(x[0, i:j] * 1.0)),
    "writes": lambda x, i, j: (_written(x, lambda y: y.__setitem__((slice(i, j),), y[i:j] * 2)),
                               _written(x, lambda y: y[:, i:j].__imul__(3)), _written(x, lambda y: y[i:j].fill(7))),
}


def _written(x, write):
    y = x.copy()
    write(y)
    return y


@pytest.mark.parametrize("use", list(_MATRIX_USES))
def test_operations_on_windows_match_numpy(use):
    f = _MATRIX_USES[use]
    g = cf.jit(lambda x, b: f(x, b[0], b[1]))
    for x in (rng.standard_normal((5, 6)).astype(np.float32), rng.integers(-5, 6, (5, 6)).astype(np.int32)):
        for i in (-7, -2, 0, 1, 3, 6):
            for j in (-7, -2, 0, 1, 3, 6):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's mean of an empty slice
                        want = f(x, i, j)
                except ValueError:  # argmax of an empty slice: the compiled function raises it too
                    with pytest.raises(ValueError):
                        g(x, np.array([i, j]))
                    continue
                assert_same(g(x, np.array([i, j])), want, rtol=1e-5, signed_zeros=False)


def test_max_slice_bounds_slices_of_data_dependent_length():
    f, inputs = KERNELS["csr_matvec"]
    args = inputs(40, rng)
    longest = int(np.diff(args[2]).max())
    bounded_csr = cf.jit(f, max_slice=longest + 3)
    assert_same(bounded_csr(*args), f(*args), rtol=1e-12)
    assert f"tensor<{longest + 3}x" in bounded_csr.lower(*args).mlir  # blocks of max_slice lanes, not nnz
    with pytest.raises(cf.UnsupportedError, match="max_slice=3"):
        cf.jit(f, max_slice=3)(*args)
    g = cf.jit(lambda x, b: (x[b[0]:b[1]].sum(), x[b[1]:b[0]:-1], x[b[0]:b[0] + 3]), max_slice=4)
    x = np.arange(10.0)
    for lo, hi in [(0, 4), (7, 10), (8, 12), (-3, -1), (2, 1)]:
        assert_same(g(x, np.array([lo, hi])), (x[lo:hi].sum(), x[hi:lo:-1], x[lo:lo + 3]))


def test_window_lengths_that_differ_at_run_time_are_numpys_error():
    f = cf.jit(lambda x, k: x[:k] + x[1:])
    np.testing.assert_array_equal(np.asarray(f(np.arange(4.0), np.int64(3))), [1.0, 3.0, 5.0])
    with pytest.raises(ValueError, match="could not be broadcast"):
        f(np.arange(4.0), np.int64(2))


def test_a_run_time_length_of_one_is_not_broadcast_and_says_so():
    """NumPy broadcasts it; cofactor raises an UnsupportedError (not NumPy's error: NumPy has none)."""
    x, y = np.arange(6.0), np.arange(6.0) + 10
    for f, args in [(lambda x, k: x[k:k + 1] * x[:k], (x, np.int64(3))),
                    (lambda x, k, y: x[:k] - y, (x, np.int64(1), y)),
                    (lambda x, k, y: x[:k] - y[:k + 2], (x, np.int64(1), y)),
                    (lambda x, y, k: np.put(x, 0, 0) or x.__setitem__(x > 2, y[:k]), (x.copy(), y, np.int64(1)))]:
        with pytest.raises(cf.UnsupportedError, match=r"length of 1 known only at run time is not broadcast"):
            cf.jit(f)(*args)
    with pytest.raises(ValueError, match="shapes not aligned"):   # NumPy does not broadcast a dot's length
        cf.jit(lambda x, k: x[:k] @ x[1:])(x, np.int64(1))


def test_windows_of_windows_with_traced_bounds():
    x = np.array([1.0, -2.0, 3.0, 4.0, -5.0, 6.0, 7.0, -8.0, 2.0, 1.0])
    for k, j in [(2, 3), (0, 0), (4, 9), (9, 1)]:
        check(lambda x, k, j: (x[k:][:j], x[:k][:k - 1], x[x > 0][:j].sum(), np.nonzero(x)[0][k:],
                               np.unique(x)[k:], x[k:][::-1][:j], x[:j][k:] * 2),
              x, np.int64(k), np.int64(j))


def test_what_an_array_of_run_time_length_cannot_do_is_a_clear_error():
    x, k = np.array([3.0, -1.0, 4.0, 1.0, -5.0, 9.0]), np.int64(3)
    for f in [lambda x, k: x[:k].reshape(-1, 1), lambda x, k: x[:k].item(), lambda x, k: np.nanmedian(x[x > 0]),
              lambda x, k: float(x[:k]), lambda x, k: x[:k].real, lambda x, k: np.mean(x[:k], where=x[:k] > 0),
              lambda x, k: x[:k].sum(where=x[:k] > 0), lambda x, k: np.any(x[:k] > 0, where=x[:k] > 1),
              lambda x, k: np.std(x[x > 0], where=x[x > 0] > 1), lambda x, k: x[:k].max(out=np.empty(()))]:
        with pytest.raises(cf.UnsupportedError, match="known only at run time"):
            cf.jit(f)(x, k)


def test_windows_of_one_bound_need_no_run_time_length_check():
    """np.dot(A[i, :j], A[j, :j]) computes the length of :j twice: the same computation, so equal."""
    m = np.random.default_rng(3).random((12, 12))
    assert cf.compile(cholesky, m @ m.T + 12 * np.eye(12)).trace.checks is None
    shifted = cf.compile(lambda x, k: x[:k] + x[1:k + 1], np.arange(6.0), np.int64(3))
    assert shifted.trace.checks is not None   # lengths k and k + 1 - 1, which it cannot prove equal


def test_an_element_past_a_window_is_numpys_index_error():
    f = cf.jit(lambda x, k: x[:k][2])
    assert float(np.asarray(f(np.arange(5.0), np.int64(4)))) == 2.0
    with pytest.raises(IndexError, match="out of bounds"):
        f(np.arange(5.0), np.int64(2))


def _index_arrays_cut_short(x, idx, b):
    m = np.stack([x, 2 * x])
    return x[idx[0:b]].sum(), np.take(x, idx[1:b]), m[:, idx[:b]], x[idx[:b]][::-1].cumsum()


@pytest.mark.parametrize("b", [3, 4, 0])
def test_an_index_array_cut_at_run_time_is_checked_on_its_valid_lanes(b):
    """Lanes past idx[:b]'s length hold whatever idx holds there (99, -50: out of range): NumPy never
    reads them, and the gather's index check raised IndexError for them."""
    idx, x = np.array([0, 1, 2, 99, -50]), np.arange(5.0)
    try:
        want = _index_arrays_cut_short(x, idx, np.int64(b))
    except IndexError:
        with pytest.raises(IndexError, match="index 99 is out of bounds"):
            cf.jit(_index_arrays_cut_short)(x, idx, np.int64(b))
        return
    assert_same(cf.jit(_index_arrays_cut_short)(x, idx, np.int64(b)), want)


def test_an_empty_window_has_no_maximum():
    f = cf.jit(lambda x, k: x[k:].max())
    with pytest.raises(ValueError, match="zero-size array"):
        f(np.arange(5.0), np.int64(5))


def _sized_by_unique(x):
    return np.zeros(len(np.unique(x)))


def _sized_by_mask(x):
    return np.ones(x[x > 0].shape)


def _sized_by_slice(x):
    return np.full((2, x[:int(x[1])].size), 1.0)


def _broadcast_to_it(x):
    return np.broadcast_to(np.arange(3), (np.nonzero(x > 0.5)[0].shape[0], 3)).sum()  # (it said "index() of ...")


def test_argwhere_of_a_traced_0d_bool_has_numpys_shape():
    """(1, 0) where it holds, (0, 0) where not (it was (1, 0) whatever the value)."""
    f = cf.jit(lambda x: np.argwhere(x.sum() > 0))
    for x in (np.array([1.0, 2.0]), np.array([-1.0, -2.0])):
        assert_same(f(x), np.argwhere(x.sum() > 0))


def test_unique_in_numpys_hash_order_is_a_clear_error():
    """np.unique(x, sorted=False) gives NumPy's hash-table order, as np.unique_values does (it was sorted, silently)."""
    with pytest.raises(cf.UnsupportedError, match="sorted=False"):
        cf.jit(lambda x: np.unique(x, sorted=False))(np.array([5, 1, 4, 2, 5, 0, 1]))


def test_a_run_time_length_cannot_size_an_array():
    for f in [_sized_by_unique, _sized_by_mask, _sized_by_slice, _broadcast_to_it]:
        with pytest.raises(cf.UnsupportedError, match="shape known only at run time"):
            cf.jit(f)(np.arange(4.0))


# --- masks and data-dependent functions ---------------------------------------------------------------

x2 = rng.standard_normal((4, 5))
ints = rng.integers(-2, 4, 15)
with_nans = np.array([3.0, np.nan, 1.0, 3.0, np.nan, -0.0, 0.0])


@pytest.mark.parametrize("f,arg", [
    (lambda a: a[a > 0], x2),
    (lambda a: a[a[:, 0] > 0], x2),
    (lambda a: (a[a > 0].sum(), np.mean(a[a > 0] ** 2), a[a < 0].max(), np.std(a[a > 0], ddof=1)), x2),
    (lambda a: a[a[:, 1] > 0].mean(axis=0), x2),
    (lambda a: np.sort(a[a > -0.5])[::-1], x2),
    (lambda a: np.cumsum(a[a > 0]), x2),
    (lambda a: a[a > 0] @ a[a > 0], x2),
    (lambda a: np.nonzero(a > 0), x2),
    (lambda a: a.nonzero(), ints),
    (lambda a: np.argwhere(a > 0), x2),
    (lambda a: np.flatnonzero(a > 0), x2),
    (lambda a: np.where(a > 0), x2),
    (lambda a: a[np.nonzero(a > 0)], x2),
    (lambda a: np.unique(a), ints),
    (lambda a: np.unique(a, return_counts=True), ints),
    (lambda a: np.unique(a, return_index=True, return_inverse=True, return_counts=True), ints),
    (lambda a: np.unique(a, return_counts=True), with_nans),
    (lambda a: np.unique(a, return_inverse=True), np.round(x2)),
    (lambda a: np.compress(a[0] > 0, a, axis=1), x2),
    (lambda a: np.extract(a > 0, a), x2),
    (lambda a: np.unique(a * 2)[::-1], ints),
    (lambda a: a[a > 0].astype(np.int32), x2),
    (lambda a: (np.intersect1d(a, a[4:9] + 1), np.setdiff1d(a, a[:6]), np.union1d(a, a * 2)), ints),
    (lambda a: (np.setdiff1d(a, a[:6], assume_unique=True), np.isin(a, np.unique(a[:4])), np.isin(a[a > 0], a[:3])),
     ints),
    (lambda a: np.unique(a)[np.unique(a) > 1], ints),
    (lambda a: (np.ptp(a[a > -5]), np.nansum(a[a != 0]), np.nanmax(a[a != 0]), np.nanmin(a[a != 0]),
                np.nanmean(a[a != 0]), np.nanprod(a[a != 2])), with_nans),
    (lambda a: np.nanmax(a[a == 7]), with_nans),                                    # (NumPy's ValueError: empty)
    (lambda a: (np.transpose(np.nonzero(a > 0)), np.column_stack(np.nonzero(a > 0)),   # (argwhere's idioms)
                np.stack(np.nonzero(a > 0), axis=1), np.array(np.nonzero(a > 0)), np.vstack(np.nonzero(a > 0)),
                np.r_[np.flatnonzero(a > 0), a.size]), x2),                            # (scipy's rankdata)
    (lambda a: (np.intersect1d(np.unique(a)[::-1], np.unique(a) + 1, assume_unique=True),  # (sorted, as NumPy's)
                np.intersect1d(a, a[:5] * 0.5),                                # (of the two's common dtype)
                np.intersect1d(a[a > 0], a[3:], return_indices=True)), ints),
])
def test_data_dependent_results_match_numpy(f, arg):
    check(f, arg, signed_zeros=False)  # (which of -0.0 and 0.0 NumPy's unique keeps depends on its sort)


def test_masked_assignment_matches_numpy():
    def f(r, y):
        r[r > 0] = r[r > 0] ** -1.5
        y[y[:, 0] > 0] = y[y[:, 0] > 0] * 2
        z = np.zeros_like(r)
        z[r < 0] = np.arange(r.size)[r.ravel() < 0]
        y[y[:, 2] < 0] = y[0]  # one row for every selected row
        return z

    for seed in range(3):
        r, y = np.random.default_rng(seed).standard_normal((2, 3, 4))
        want_r, want_y = r.copy(), y.copy()
        want = f(want_r, want_y)
        got = cf.jit(f)(r, y)
        assert_same(got, want)
        np.testing.assert_allclose(r, want_r, rtol=1e-13)  # (XLA's power rounds its own way)
        np.testing.assert_array_equal(y, want_y)


def test_masked_assignment_of_the_wrong_count_is_numpys_error():
    def f(a):
        a[a > 0] = a[a > 1]
        return a

    with pytest.raises(ValueError, match="shape mismatch"):
        cf.jit(f)(np.array([0.5, 2.0, 3.0]))
    assert_same(cf.jit(f)(np.array([-0.5, 2.0, 3.0])), np.array([-0.5, 2.0, 3.0]))


def test_bincount_checks_its_bound_at_run_time():
    f = cf.jit(lambda x: np.bincount(x, minlength=4))
    assert_same(f(np.array([0, 3, 3])), np.bincount(np.array([0, 3, 3]), minlength=4))
    with pytest.raises(cf.UnsupportedError, match="minlength"):
        f(np.array([0, 4]))
    with pytest.raises(ValueError, match="negative"):
        f(np.array([0, -1]))


# --- what arrays with run-time lengths feed: order statistics, joins, selections of them, writes ------------

_ORDERED = {
    "median": lambda a: np.median(a[a > 0.3]),
    "median_keepdims": lambda a: np.median(a[2:a.size - 3], keepdims=True),
    "percentile": lambda a: np.percentile(a[a > 0.3], 30),
    "percentiles": lambda a: np.percentile(a[a > -0.3], [0, 10, 50, 90, 100]),
    "quantile_lower": lambda a: np.quantile(a[a > 0.3], 0.37, method="lower"),
    "quantile_nearest": lambda a: np.quantile(a[a > 0.3], 0.37, method="nearest"),
    "quantile_midpoint": lambda a: np.quantile(a[a > 0.3], 0.37, method="midpoint"),
    "quantile_hazen": lambda a: np.quantile(a[a > 0.3], 0.37, method="hazen"),
    "quantile_inverted_cdf": lambda a: np.quantile(a[a > 0.3], 0.37, method="inverted_cdf"),
    "argsort": lambda a: np.argsort(a[a > 0.3]),
    "argsort_slice": lambda a: a[2:a.size - 3].argsort(),
    "unique": lambda a: np.unique(np.round(a[a > -0.5]), return_index=True, return_inverse=True,
                                  return_counts=True),
    "nonzero": lambda a: np.nonzero(a[a > -0.5] > 0.5),
    "where": lambda a: np.where(a[1:] > 0.5),
    "concatenate": lambda a: np.concatenate([a[a > 0.3], a[:3], a[a < 0.3] * 2]),
    "append": lambda a: np.append(a[a > 0.3], 7.0),
    "hstack": lambda a: np.hstack([a[a < 0], a[a > 1]]),
    "diff": lambda a: np.diff(a[a > 0.3]),
    "diff_twice_prepend": lambda a: np.diff(a[a > 0.3], n=2, prepend=0.0),
    "setxor1d": lambda a: np.setxor1d(np.round(a), np.round(a[::2]) + 1),
    "union1d": lambda a: np.union1d(np.round(a[a > 0.3]), np.round(a[:4])),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", [0, 1])
def test_order_statistics_joins_and_selections_of_run_time_lengths_match_numpy(seed, dtype):
    a = np.random.default_rng(seed).standard_normal(13 + 4 * seed).astype(dtype)
    if seed:
        a[5] = np.nan  # (NaN: the order statistics are NaN, sorts put it last, unique keeps one)
    check_many({name: (f, a) for name, f in _ORDERED.items()}, signed_zeros=False)


def test_order_statistics_of_empty_and_integer_selections_match_numpy():
    ints = np.random.default_rng(3).integers(-3, 6, 14)
    check_many({"median_ints": (lambda a: np.median(a[a > 0]), ints),
                "percentile_ints": (lambda a: np.percentile(a[a > 0], [25, 75]), ints),
                "unique_ints": (lambda a: np.unique(a[a > 0], return_counts=True), ints),
                "bincount": (lambda a: np.bincount(a[a > 0], minlength=6), ints),
                "bincount_weights": (lambda a: np.bincount(a[a > 0], weights=np.arange(14.0)[a > 0], minlength=6),
                                     ints)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(lambda a: np.median(a[a > 9]), ints)  # NaN, as NumPy's
    with pytest.raises(IndexError):
        np.quantile(ints[ints > 9], 0.5)
    with pytest.raises(IndexError, match="out of bounds"):  # NumPy's, when it runs
        cf.jit(lambda a: np.quantile(a[a > 9], 0.5))(ints)


def test_masks_among_basic_indices_match_numpy_for_reads_and_writes():
    x, a = rng.standard_normal((6, 3)), rng.standard_normal((4, 5, 3))
    check_many({"rows_all_columns": (lambda x: x[x[:, 0] > 0, :], x),
                "rows_one_column": (lambda x: x[x[:, 0] > 0, 1], x),
                "columns": (lambda x: x[:, x[0] > 0], x),
                "columns_after_ellipsis": (lambda x: x[..., x[0] > 0], x),
                "columns_of_some_rows": (lambda x: x[1:, x[0] > 0], x),
                "last_axis_after_an_integer": (lambda a: a[:, 2, a[0, 0] > 0], a),
                "apart_from_an_integer": (lambda a: a[a[:, 0, 0] > 0, :, 2], a),
                "two_axes_then_an_integer": (lambda a: a[a[:, :, 0] > 0, 1], a),
                "after_new_axis": (lambda a: a[None, a[:, 0, 0] > 0], a)})

    def writes(x, a):
        x[x[:, 0] > 0, 1] = 0.0
        x[:, x[0] > 0] *= 2
        x[x[:, 2] > 0, :] += np.arange(3.0)
        a[:, 2, a[0, 0] > 0] = 5.0
        a[1, a[1, :, 0] > 0] = a[0, a[1, :, 0] > 0]
        x[:, x[1] > 0] = x[:, x[1] > 0][::-1]
        return x.sum()

    _check_writes(writes, x, a)


def _check_writes(f, *args):
    """``f`` against NumPy: its result and every argument after the call."""
    want_args, got_args = [a.copy() for a in args], [a.copy() for a in args]
    want = f(*want_args)
    assert_same(cf.jit(f)(*got_args), want)
    for got, w in zip(got_args, want_args):
        np.testing.assert_array_equal(got, w)


def test_writes_through_index_arrays_of_run_time_length_match_numpy():
    def writes(x, m, y):
        idx = np.where(x > 0)[0]
        x[idx] = 0.5 * x[idx]
        x[np.flatnonzero(x < -1)] += 1.0
        np.add.at(y, np.nonzero(x < 0)[0] % 3, 1.0)
        m[np.nonzero(m > 1)] = -1.0
        rows, cols = np.nonzero(m < -1)
        m[rows, cols] *= 3
        m[np.where(m[:, 0] > 0)[0], :] = 2.0
        m[:, np.where(m[0] < 0)[0]] = 7.0
        y[idx[:2]] = np.arange(2.0)[:idx[:2].size]
        return x.sum() + m.sum()

    for seed in range(3):
        x, y = np.random.default_rng(seed).standard_normal((2, 9))
        _check_writes(writes, x, np.random.default_rng(seed).standard_normal((4, 5)) * 2, y)


def test_a_write_through_an_index_array_of_run_time_length_checks_its_count():
    def f(x):
        x[np.nonzero(x > 0)[0]] = x[:2]
        return x

    check(f, np.array([1.0, 2.0, -1.0]))
    with pytest.raises(ValueError, match="broadcast"):
        cf.jit(f)(np.array([1.0, 2.0, 3.0]))


def _mean_of_positives(x):
    positive = x[x > 0]
    return positive.sum() / len(positive), len(positive)


def test_len_of_an_array_of_run_time_length_is_a_traced_int():
    x = np.array([1.0, -2.0, 3.0, 4.0, -1.0])
    got = cf.jit(_mean_of_positives)(x)
    assert [float(g) for g in got] == [float(w) for w in _mean_of_positives(x)]


def _labels(x, centers):
    return np.argmin(((x[:, None, :] - centers[None, :, :]) ** 2).sum(-1), axis=1)


def _counts_by_label(x, centers):
    labels = _labels(x, centers)
    edges = np.linspace(-1.0, 1.0, 5)
    return (np.bincount(labels), np.bincount(labels, weights=x[:, 0]), np.bincount(labels, minlength=2),
            np.bincount(labels, minlength=6), np.bincount(labels[x[:, 0] > 0]),
            np.bincount(np.digitize(x[:, 1], edges)), np.bincount(np.unique(labels * 2, return_inverse=True)[1]))


def _means_by_label(x, centers):
    labels = _labels(x, centers)
    sums = np.zeros_like(centers)
    np.add.at(sums, labels, x)
    return sums / np.bincount(labels)[:, None]


def _relabelled(x, centers):
    labels = _labels(x, centers)
    labels[0] = 7  # (argmin's bound no longer holds)
    return np.bincount(labels)


def test_bincount_of_values_with_a_known_bound_has_numpys_length():
    """argmin's labels lie below the number of centers: np.bincount(labels) has max(labels) + 1 slots,
    fewer when the last centers are nobody's nearest, as in NumPy."""
    x = rng.standard_normal((30, 2))
    far = np.array([[0.0, 0.0], [0.1, 0.1], [100.0, 100.0], [200.0, 200.0]])
    for centers in (x[:4].copy(), far):
        check(_counts_by_label, x, centers)
    check(_means_by_label, x, x[:4].copy())
    with pytest.raises(ValueError, match="broadcast"):  # NumPy's: 2 counts for 4 centers
        cf.jit(_means_by_label)(x, far)
    with pytest.raises(cf.UnsupportedError, match="minlength"):
        cf.jit(_relabelled)(x, far)


def _sorted_by_key(x):
    v = x[x > -0.5]
    order = np.argsort(v)
    return v[order], v[order[-3:]], v[np.array([-1, 0, -2])], v[[0, 1]], v[np.array([[0, 1], [1, 0]])]


def _rows_of_selected_rows(m):
    rows = m[m[:, 0] > -0.5]
    picked = rows[np.array([0, -1])], rows[np.array([0, -1]), 1:3], rows[:, np.array([0, 2])]
    rows[np.array([0, -1])] = 0.0
    return picked, rows


def _written_through_windows(m, k):
    m[:k][np.array([0, 1])] = 5.0
    m[:, :k][np.array([2, 3])] = -5.0
    return m.sum()


def test_arrays_of_run_time_length_indexed_by_index_arrays_match_numpy():
    x, m = rng.standard_normal(12), rng.standard_normal((6, 5))
    check(_sorted_by_key, x)
    check(_rows_of_selected_rows, m)
    _check_writes(_written_through_windows, m, np.int64(3))
    for index in ([0, 9], [-9]):
        with pytest.raises(IndexError, match="out of bounds for axis 0 with size"):
            cf.jit(lambda x, i: x[x > 0][i])(np.arange(4.0), np.array(index))


def _sum_of_squares_by_iteration(x, m):
    total = 0.0
    for v in x[x > 0]:
        total += v * v
    acc = np.zeros(m.shape[1])
    for row in m[m[:, 0] > 0]:
        acc += row
    return total, acc


def _enumerated(x):
    total, out = 0.0, np.zeros(x.size)
    for k, i in enumerate(np.where(x > 0)[0]):
        total += k * x[i]
    for k, v in enumerate(np.unique(np.round(x)), start=1):
        out[k] = v
    values, counts = np.unique(np.round(x), return_counts=True)
    weighted = 0.0
    for v, c in zip(values, counts):            # (the shortest's trips, as zip: x[x > 0] against x)
        weighted += v * c
    for p, q in zip(x[x > 0], x):
        weighted += p * q
    return total, out, weighted


def _first_positive_or(x):
    y = x[x > 0]
    if len(y) > 0:
        return y[0]
    t = -1.0
    for j in np.flatnonzero(x[3:]):    # (no lanes at all where x has 3 elements)
        t += x[j]
    return t


def _returned_early_if_short(x):
    a = x[x > 0]
    if len(a) < 2:
        return a
    b = x[:int(x[0]) % 4]
    if len(b) < 2:
        return b * a.sum()
    return a * 2 + b[1:].sum()


def test_an_array_of_run_time_length_returned_in_a_branch_is_still_the_variable_s_after_it():
    """(The if took the array returned as the only holder of its lanes, and the variable's next use was
    refused: "this array was replaced by a copy".)"""
    for x in (np.array([3.0, -1.0, 2.0, 5.0]), np.array([1.0, -1.0]), np.array([1.0, 2.0, -3.0])):
        check(_returned_early_if_short, x)


def test_an_element_of_an_array_of_no_lanes_is_read_only_where_guarded():
    """x[x > 0][0] of an empty x, in a branch its length guards (XLA refused the program: a slice of
    one element of an axis of none)."""
    for x in (np.zeros(0), np.array([-1.0, 0.0, -2.0]), np.array([-1.0, 2.0, 0.5, 0.0])):
        check(_first_positive_or, x)


def test_iterating_an_array_of_run_time_length_is_one_rolled_loop():
    x, m = rng.standard_normal(10), rng.standard_normal((6, 5))
    check(_sum_of_squares_by_iteration, x, m)
    check(_enumerated, x, signed_zeros=False)  # (which of -0.0 and 0.0 unique keeps depends on its sort)
    assert cf.compile(_sum_of_squares_by_iteration, x, m, optimize=False).mlir.count("stablehlo.while") == 2


def test_elementwise_functions_of_run_time_lengths_match_numpy():
    x = rng.standard_normal(12)
    edges = np.array([0.0, 0.5, 1.0])
    check_many({"isclose": (lambda a: np.isclose(a[a > 0], 0.5, atol=0.3), x),
                "isclose_both": (lambda a: np.isclose(a[a > 0], a[a > 0][::-1]), x),
                "interp": (lambda a: np.interp(a[a > 0], [0.0, 1.0, 2.0], [0.0, 10.0, 5.0]), x),
                "searchsorted": (lambda a: np.searchsorted(edges, a[a > 0]), x),
                "searchsorted_into": (lambda a: (np.searchsorted(np.unique(np.round(a)), np.round(a)),   # (encoding)
                                                 np.searchsorted(np.sort(a[a > 0]), [0.5, 9.0, np.nan], side="right"),
                                                 np.searchsorted(np.sort(a[a > 0]), a[a < 1])), x),
                "digitize": (lambda a: np.digitize(a[a > 0], edges), x),
                "polyval": (lambda a: np.polyval([1.0, 2.0, 3.0], a[a > 0]), x),
                "sinc_fix": (lambda a: (np.sinc(a[a > 0]), np.fix(a[a > -1] * 3)), x)})


# --- x[mask] read under its mask where the order of its elements does not matter ---------------------------

_MASKED_REDUCTIONS = {
    "mean_rows": lambda x, m: x[m > 0].mean(axis=0),
    "std_var": lambda x, m: (x[m > 0].std(axis=0, ddof=1), np.var(x[m > -0.5])),
    "sum_of_squares": lambda x, m: ((x[m > 0] - x[0]) ** 2).sum(axis=0, keepdims=True),
    "extremes": lambda x, m: (np.max(x[m > 0] * 2.0), x[m > 0].min(axis=0), np.prod(x[m > 1] + 1.0)),
    "truth": lambda x, m: (np.any(x[m > 0] > 1.0), np.all(x[m > 0] > -3.0, axis=0), np.count_nonzero(x[m > 0] > 0)),
    "vector": lambda x, m: (m[m > 0].sum(), np.mean(np.abs(m[m < 0])), m[m > 0].shape[0]),
    "along_rows": lambda x, m: x[m > 0].sum(axis=1).cumsum(),
    "empty_mean": lambda x, m: x[m > 9].mean(axis=0),
}


def test_reductions_of_a_mask_selection_match_numpy_and_build_no_compaction():
    x, m = rng.standard_normal((20, 3)), rng.standard_normal(20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's mean of an empty selection)
        check_many({name: (f, x, m) for name, f in _MASKED_REDUCTIONS.items()})
    with pytest.raises(ValueError, match="zero-size array"):
        cf.jit(lambda x, m: x[m > 9].max(axis=0))(x, m)
    hlo = cf.code_hlo(lambda x, m: (x[m > 0].mean(axis=0), x[m > 0].std(), x[m > 0].shape[0]), x, m)
    assert "scatter" not in hlo and "gather" not in hlo


def _selection_then_writes(x, m):
    s = x[m > 0]
    x[:] = 0.0  # (s is a copy: it keeps the values it selected)
    first = s.sum(axis=0)
    s[0] = 100.0
    second = s.sum(axis=0)
    t = s.T
    t[1] = -1.0  # (through a view of s)
    s += 1.0
    return first, second, s.mean(axis=0), s


def _selection_in_control_flow(x, m, c):
    s = x[m > 0]
    total = 0.0
    for _ in range(3):
        total += s.sum()
    if c > 0:
        first = s[0, 0]
    else:
        first = s.max()
    return total, first, s.mean(axis=0)


def test_a_mask_selection_written_or_used_in_control_flow_matches_numpy():
    x, m = rng.standard_normal((8, 3)), np.abs(rng.standard_normal(8))
    _check_writes(_selection_then_writes, x, m)
    for c in (1.0, -1.0):
        check(_selection_in_control_flow, x, m, c)


def _rewritten_under_masks(x, y, z):
    x[x > 0] = x[x > 0] ** -1.5
    y[y[:, 0] > 0] = y[y[:, 0] > 0] * 2 - 1
    z[z > 0.3] = z[z > 0.3] * 0 + z[z > 0.5].sum()  # (two thresholds: two selections)
    return x[x > 0.3].sum() + x[x > 0.5].sum()


def test_a_mask_selection_written_back_under_its_mask_matches_numpy_with_no_compaction():
    x, y, z = rng.standard_normal(10), rng.standard_normal((6, 3)), rng.standard_normal(10)
    _check_writes(_rewritten_under_masks, x, y, z)
    assert "scatter" not in cf.code_hlo(_first_rewrite, x)


def _first_rewrite(r):
    r[r > 0] = r[r > 0] ** -1.5
    return r


def test_row_selections_along_and_over_their_axes_match_numpy():
    x = rng.standard_normal((12, 3))
    rows = {"median_columns": lambda a: np.median(a[a[:, 0] > 0], axis=0),
            "median_columns_kept": lambda a: np.median(a[a[:, 0] > 0], axis=0, keepdims=True),
            "percentiles_columns": lambda a: np.percentile(a[a[:, 0] > -0.5], [10, 90], axis=0),
            "percentiles_kept": lambda a: np.percentile(a[a[:, 0] > -0.5], [10, 90], axis=0, keepdims=True),
            "quantile_nearest": lambda a: np.quantile(a[a[:, 0] > -0.5], 0.3, axis=0, method="nearest"),
            "median_all": lambda a: np.median(a[a[:, 0] > 0]),
            "ravel": lambda a: (np.ravel(a[a[:, 0] > 0]), a[a[:, 0] > 0].flatten()[::-1]),
            "sort_all": lambda a: np.sort(a[a[:, 0] > 0], axis=None),
            "argsort_all": lambda a: np.argsort(a[a[:, 0] > 0], axis=None),
            "cumsum_all": lambda a: np.cumsum(a[a[:, 0] > 0]),
            "argmax_all": lambda a: np.argmax(a[a[:, 0] > 0]),
            "unique_all": lambda a: np.unique(np.round(a[a[:, 0] > 0]), return_counts=True)}
    check_many({name: (f, x) for name, f in rows.items()})
    check(lambda a, k: np.quantile(a[:, :k], 0.5, axis=1), x, np.int64(2))


def test_delete_at_traced_positions_matches_numpy():
    x, m = rng.standard_normal(10), rng.standard_normal((4, 5))
    deletes = {"one": (lambda x, i: np.delete(x, i), x, np.int64(3)),
               "last": (lambda x, i: np.delete(x, i), x, np.int64(-1)),
               "row": (lambda m, i: np.delete(m, i, axis=0), m, np.int64(2)),
               "columns": (lambda m, idx: np.delete(m, idx, axis=1), m, np.array([0, 3, 3, -1])),
               "mask": (lambda x: np.delete(x, x > 0), x),
               "where": (lambda m: np.delete(m, np.where(m[:, 0] > 0)[0], axis=0), m)}
    check_many(deletes)
    for f, index in [(lambda x, i: np.delete(x, i), np.int64(10)), (lambda x, i: np.delete(x, i), np.array([1, -11]))]:
        with pytest.raises(IndexError, match="out of bounds for axis 0 with size 10"):
            cf.jit(f)(x, index)


def _trimmed_then_written(x):
    t = np.trim_zeros(x)
    t += 1.0  # (a view, as NumPy's slice)
    return np.trim_zeros(x, "f"), np.trim_zeros(x, "B").sum()


def test_trim_zeros_is_a_view_of_run_time_length_matching_numpy():
    for x in [np.array([0.0, 0.0, 1.0, 2.0, 0.0, 3.0, 0.0]), np.zeros(4), np.array([1.0, 0.0, 2.0])]:
        _check_writes(_trimmed_then_written, x)


def test_covariance_and_averages_of_selections_match_numpy():
    x, w = rng.standard_normal((12, 3)), rng.random(12)
    stats = {"cov_rows": (lambda a: np.cov(a[a[:, 0] > 0], rowvar=False), x),
             "cov_columns": (lambda a: np.cov(a[a[:, 0] > 0].T, bias=True), x),
             "cov_vector": (lambda a: np.cov(a[a[:, 1] > 0, 1], ddof=0), x),
             "corrcoef": (lambda a: np.corrcoef(a[a[:, 0] > 0], rowvar=False), x),
             "cov_window": (lambda a, k: np.cov(a.T[:, :k]), x, np.int64(7)),
             "average": (lambda a: (np.average(a[a[:, 0] > 0], axis=0), np.average(a[a[:, 0] > 0], returned=True)), x),
             "average_weighted": (lambda a, w: np.average(a[a[:, 0] > 0, 1], weights=w[a[:, 0] > 0], returned=True),
                                  x, w)}
    check_many(stats)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's: no degrees of freedom)
        check(lambda a: np.cov(a[a[:, 0] > 9], rowvar=False), x)


def _made_like_a_window(r, k):
    z, w = np.zeros_like(r[:k]), np.full_like(r[:k], 7.0)
    z += r[:k]
    return z, np.ones_like(r[:k], dtype=int).sum(), w, np.empty_like(r[:k]).shape


def test_arrays_made_like_an_array_of_run_time_length():
    r = rng.standard_normal(6)
    f = cf.jit(_made_like_a_window)
    for k in (np.int64(4), np.int64(0), np.int64(6)):
        assert_same(f(r, k)[:3], _made_like_a_window(r, k)[:3])


def sieve(n_arr):
    flags = np.ones(n_arr.shape[0], dtype=bool)
    flags[:2] = False
    for k in range(2, n_arr.shape[0]):
        if flags[k]:
            flags[k * k::k] = False       # a step and a start known only at run time
    return flags


def strided_writes(x, m):
    for k in range(1, 4):
        x[-k::-k] = k                     # backwards
        m[k:7:k + 1] = np.arange(3.0)[None, :] * 0.5 + k   # rows, a value broadcast along the strided axis
    return x, m


@pytest.mark.parametrize("n", [30, 64])
def test_a_write_through_a_slice_with_a_traced_step_keeps_the_loop_rolled(n):
    a = np.zeros(n)
    np.testing.assert_array_equal(np.asarray(cf.jit(sieve)(a)), sieve(a))
    assert cf.compile(sieve, a).mlir.count("stablehlo.while") == 1
    x, m = np.arange(10.0), np.zeros((8, 3))
    want, got = strided_writes(x.copy(), m.copy()), cf.jit(strided_writes)(x.copy(), m.copy())
    for w, g in zip(want, got):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_a_read_or_an_array_written_through_a_slice_with_a_traced_step_unrolls_the_loop_saying_why():
    def read(x):
        total = 0.0
        for k in range(1, 4):
            total += x[k::k].sum()
        return total

    def written(x):
        for k in range(1, 3):
            x[k::k] = x[:(x.shape[0] - 1) // k]
        return x
    for fn in (read, written):
        with pytest.warns(cf.UnrolledLoopWarning, match="step"):
            got = cf.jit(fn, unroll=1)(np.arange(6.0))
        np.testing.assert_array_equal(np.asarray(got), fn(np.arange(6.0)))


def _strided_by_the_counter(a, m, x):
    """Slices with a static step other than 1 and -1 and a bound known only at run time, read and written."""
    out = np.zeros((a.shape[0], 4))
    for i in range(a.shape[0]):
        out[i] = [a[i::3].sum(), a[i::-2].max(initial=-9.0), np.dot(a[:i:2], a[1:i + 1:2]), a[i:-1:4].size]
        view = a[-1 - i::-5]              # a view: written through
        view += 0.5
        a[i::3] = a[i::3][::-1] * 0.25    # an array of run-time length written through one
        m[i % m.shape[0], i % 3::2] -= x[i]
        m[i % 2::3, i % m.shape[1]] *= 0.5
    sums = [a[:k][::2].sum() + a[:k][::-3].sum() for k in range(a.shape[0])]  # strided slices of a window
    return a, m, out, np.array(sums), a[a.shape[0] // 3::2][1:], a[int(a.sum() > 0)::4]


@pytest.mark.parametrize("n", [0, 1, 13, 40])
def test_a_strided_slice_with_a_traced_bound_is_a_run_time_extent(n):
    """A Run (tracing/views.py): reads, writes through it and its views, strided slices of a window, returned;
    the loop stays rolled (it was unrolled: 'steps 1 and -1 are supported')."""
    a, m, x = rng.standard_normal(n), rng.standard_normal((4, 7)), rng.standard_normal(max(n, 1))
    cases = [(a, m, x)] + [(a.astype(np.float32), m.astype(np.float32), x)] * (n == 13)
    for args in cases:
        want = _strided_by_the_counter(*[v.copy() for v in args])  # (it returns the arrays it writes)
        with warnings.catch_warnings():
            warnings.simplefilter("error", cf.UnrolledLoopWarning)
            got = cf.jit(_strided_by_the_counter)(*[v.copy() for v in args])
        assert_same(got, want, rtol=1e-12 if args[0].dtype == np.float64 else 1e-5)
    if n == 40:
        assert 1 <= cf.compile(_strided_by_the_counter, a, m, x).mlir.count("stablehlo.while") <= 2


def test_a_strided_slice_with_a_traced_bound_within_max_slice_and_its_gradient():
    def phases(a):
        s = 0.0
        for i in range(a.shape[0]):
            s = s + (a[i::3] ** 2).sum() * i
        return s
    a = rng.standard_normal(30)
    got, eps = np.asarray(cf.grad(phases)(a)), 1e-6
    want = [(phases(a + eps * e) - phases(a - eps * e)) / (2 * eps) for e in np.eye(30)]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(cf.jit(phases, max_slice=10)(a)), phases(a), rtol=1e-12)
    with pytest.raises(cf.UnsupportedError, match="more than cf.jit's max_slice=4"):
        cf.jit(phases, max_slice=4)(a)


def _median_filter(img, k):
    p = np.pad(img, k // 2, mode="reflect")
    out = np.empty_like(img)
    for i in range(img.shape[0]):
        for j in range(img.shape[1]):
            out[i, j] = np.median(p[i:i + k, j:j + k])
    return out


def _sliding_windows(x, y):
    out = np.zeros((x.shape[0] - 2, 2))
    for i in range(1, x.shape[0] - 1):
        out[i - 1] = [x[i - 1:i + 2].mean(), np.dot(x[i - 1:i + 2], y[i:i + 3])]
        x[i:i + 1] += 0.5
        y[i + 1:i + 3] = y[i:i + 2] * 0.5 + x[i - 1:i + 1]
    q = int(np.argmax(x))  # (a bound whose range is not known: a run-time length, NumPy's clamp at the end)
    return out, x, y, x[q:q + 3].sum()


def test_a_window_sliding_with_a_counter_has_a_static_length():
    """x[i:i + k] and x[i - 1:i + 2] within the axis whatever i is are views of k elements that move (a
    DynamicBlock), not run-time extents: np.median of a 2-D window, which a run-time extent does not support,
    unrolled a 16x16 median filter into a 17 s compile."""
    img = rng.random((7, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error", cf.UnrolledLoopWarning)
        check(_median_filter, img, 3, rtol=1e-12)
        for n in (3, 9):
            x, y = rng.standard_normal(n), rng.standard_normal(n + 1)
            want = _sliding_windows(x.copy(), y.copy())
            assert_same(cf.jit(_sliding_windows)(x.copy(), y.copy()), want, rtol=1e-12)


def _otsu_threshold(p):
    """Otsu's threshold of a histogram p, as a newcomer writes it: np.arange(t) in a loop over t."""
    best_t, best_var = 0, -1.0
    total_mean = (np.arange(p.shape[0]) * p).sum()
    for t in range(1, p.shape[0]):
        w0 = p[:t].sum()
        if w0 == 0 or w0 == 1:
            continue
        m0 = (np.arange(t) * p[:t]).sum() / w0
        m1 = (total_mean - m0 * w0) / (1 - w0)
        var = w0 * (1 - w0) * (m0 - m1) ** 2
        if var > best_var:
            best_var, best_t = var, t
    return best_t, best_var


def _aranges_of_the_counter(p):
    out = np.zeros((p.shape[0], 5))
    for t in range(p.shape[0]):
        up, down = np.arange(t, p.shape[0], 3), np.arange(p.shape[0] - 1, t, -2, dtype=np.float32)
        out[t] = [up.sum() * 0.5 + up.size, down.sum() + len(down), np.dot(np.arange(t, dtype=float) / (t + 1), p[:t]),
                  p[np.arange(t)].sum(), (np.arange(1, t + 1) ** 2).max(initial=0)]
    return out, np.arange(p.shape[0] // 2, p.shape[0])


@pytest.mark.parametrize("fn", [_otsu_threshold, _aranges_of_the_counter])
def test_arange_of_a_loop_counter_keeps_the_loop_rolled(fn):
    """np.arange(t) of a loop's counter is a run-time extent of the counter's greatest value (it unrolled the
    loop: Otsu's threshold over 256 bins compiled for 36 s)."""
    p = rng.random(40)
    p /= p.sum()
    with warnings.catch_warnings():
        warnings.simplefilter("error", cf.UnrolledLoopWarning)
        check(fn, p, rtol=1e-12)
    assert cf.compile(fn, p).mlir.count("stablehlo.while") <= 1


def _arange_of_data(x):
    return np.arange(int((x > 0.5).sum())) * 2


def test_arange_of_a_length_from_data_takes_max_slice_as_its_bound():
    x = rng.random(30)
    with pytest.raises(cf.UnsupportedError, match="numpy.arange with a traced bound .* max_slice=N"):
        cf.jit(_arange_of_data)(x)
    assert_same(cf.jit(_arange_of_data, max_slice=32)(x), _arange_of_data(x))
    with pytest.raises(cf.UnsupportedError, match="more than cf.jit's max_slice=4"):
        cf.jit(_arange_of_data, max_slice=4)(x)


def test_gradient_through_an_arange_of_the_counter():
    def loss(p):
        return sum((np.arange(t) * p[:t] ** 2).sum() for t in range(1, 30))

    p, eps = rng.random(30), 1e-6
    grad = np.asarray(cf.grad(loss)(p))
    for i in (0, 7, 28, 29):
        e = np.eye(30)[i] * eps
        assert grad[i] == pytest.approx((loss(p + e) - loss(p - e)) / (2 * eps), rel=1e-6, abs=1e-8)


def _aranges_of_float_steps(x):
    out = np.zeros(20)
    for t in range(20):
        out[t] = np.arange(t, 20, 0.5).sum() + np.arange(t, 20, np.float64(1.5)).sum() * x[0]
    return out


def test_arange_of_a_counter_with_a_float_step_unrolls_saying_why():
    """(Its number of elements would be computed in floats: the loop runs as Python, with NumPy's values.)"""
    x = np.ones(1)
    with pytest.warns(cf.UnrolledLoopWarning, match="step that is not an integer"):
        got = cf.jit(_aranges_of_float_steps)(x)
    np.testing.assert_allclose(np.asarray(got), _aranges_of_float_steps(x))
