"""numpy.linalg against NumPy: values, dtypes and shapes on well-conditioned stacks of matrices;
invariants where a decomposition is unique only up to signs or phases; NumPy's shape errors."""
import numpy as np
import pytest

import cofactor as cf
import cofactor.numpy.linalg as cf_linalg
from conftest import check, check_raises, check_unsupported, dtype_id, sample

LA = np.linalg
LINALG_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
# Single precision: cofactor computes in float32 where NumPy computes in float64 and rounds.
TOLERANCE = {"f": (1e-4, 1e-5), "d": (1e-10, 1e-12)}


def tolerance(dtype):
    rtol, atol = TOLERANCE[np.empty(0, np.result_type(dtype, np.float32)).real.dtype.char]
    return {"rtol": rtol, "atol": atol}


def well_conditioned(shape, dtype, seed=0):
    """Random entries plus a dominant diagonal (integers: a larger one)."""
    n = shape[-1]
    x = sample(shape, dtype, "unit" if np.dtype(dtype).kind in "fc" else "any", seed) + \
        np.eye(n, dtype=np.int64) * (n + 1 if np.dtype(dtype).kind in "fc" else 30)
    return x.astype(dtype)


def positive_definite(shape, dtype):
    x = sample(shape, dtype, "unit")
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def allclose(got, want, dtype):
    np.testing.assert_allclose(np.asarray(got), want, **{k: 10 * v for k, v in tolerance(dtype).items()})


def adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


# --- solving, inverting, determinants ------------------------------------------------------------

@pytest.mark.parametrize("dtype", LINALG_DTYPES + [np.int64], ids=dtype_id)
def test_solve_inv_det(dtype):
    a, b, v = well_conditioned((2, 3, 3), dtype), sample((2, 3, 2), dtype), sample((3,), dtype)
    check(lambda a, b, v: (LA.solve(a, b), LA.solve(a, v), LA.solve(a[0], b), LA.inv(a), LA.det(a),
                           LA.slogdet(a), LA.slogdet(-a[0])), a, b, v, **tolerance(dtype))


def test_solve_broadcasts_and_mixes_dtypes():
    a, b = well_conditioned((2, 1, 3, 3), np.float32), sample((3, 3, 1), np.complex128)
    check(lambda a, b: (LA.solve(a, b), LA.solve(a[0, 0], b[0, :, 0]), LA.inv(a[1, 0].astype(np.int32))), a, b,
          **tolerance(np.float64))


def test_pivoting_permutes_rows():
    # Zeros on the diagonal force row swaps: every pivot sequence of a 4 x 4 is exercised.
    a = np.array([[0, 2, 1, 0], [1, 0, 0, 3], [0, 0, 4, 1], [2, 1, 0, 0.5]])
    stack = np.stack([a, a[::-1], a[[2, 0, 3, 1]]])
    check(lambda a, b: (LA.solve(a, b), LA.inv(a), LA.det(a), LA.slogdet(a)), stack, sample((3, 4, 2)),
          **tolerance(np.float64))


def test_singular_matrices_give_inf_or_nan():
    # NumPy raises LinAlgError at run time; a compiled function returns non-finite values instead.
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    inverse, solution, det, (sign, logdet) = cf.jit(
        lambda a: (LA.inv(a), LA.solve(a, np.ones(2)), LA.det(a), LA.slogdet(a)))(singular)
    assert not np.isfinite(np.asarray(inverse)).all() and not np.isfinite(np.asarray(solution)).all()
    assert float(np.asarray(det)) == 0.0 and float(np.asarray(sign)) == 0.0 and np.asarray(logdet) == -np.inf
    assert not np.signbit(np.asarray(det))  # (NumPy's +0.0, though the rows were swapped once)
    assert np.isnan(np.asarray(cf.jit(LA.cholesky)(-np.eye(2)))).all()


def _inverse_or_zeros(a):
    try:
        return LA.inv(a)
    except LA.LinAlgError:
        return np.zeros_like(a)


def _factor_or_itself(a):
    try:
        return LA.cholesky(a), LA.eigvalsh(a)
    except (ValueError, LA.LinAlgError):
        return a, a[0]


def _determinant_or_zero(a):
    try:
        return LA.det(a) + LA.solve(a, a[0]).sum()
    except Exception:  # (the program's guard against anything: the call runs, its result is inf or nan)
        return 0.0


@pytest.mark.parametrize("fn", [_inverse_or_zeros, _factor_or_itself])
def test_an_except_clause_for_linalg_error_is_refused(fn):
    """It would never run: compiled code gives inf or nan where NumPy raises (the clause was silently skipped)."""
    with pytest.raises(cf.TracingError, match="LinAlgError may be raised here, .* an except clause"):
        cf.jit(fn)(np.array([[1.0, 2.0], [2.0, 4.0]]))


def test_a_broad_except_clause_around_linalg_still_compiles():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(np.asarray(cf.jit(_determinant_or_zero)(a)), _determinant_or_zero(a))


@pytest.mark.parametrize("f", [LA.inv, LA.det, LA.slogdet, LA.cholesky, LA.eigh, LA.eigvalsh, LA.matrix_power],
                         ids=lambda f: f.__name__)
def test_non_square_is_a_linalg_error(f):
    g = (lambda a: f(a, 2)) if f is LA.matrix_power else f
    check_raises(np.linalg.LinAlgError, g, np.ones((2, 3)), match="Last 2 dimensions of the array must be square")
    check_raises(np.linalg.LinAlgError, g, np.ones(3), match="1-dimensional array given")


NUMPY_ERRORS = {
    "solve1 mismatch": (lambda a: LA.solve(a, np.ones(2)), np.eye(3)),
    "solve mismatch": (lambda a: LA.solve(a, np.ones((2, 2))), np.eye(3)),
    "solve 0-d b": (lambda a: LA.solve(a, np.ones(())), np.eye(3)),
    "float16": (LA.inv, np.eye(2, dtype=np.float16)),
    "qr mode": (lambda a: LA.qr(a, "bad"), np.eye(2)),
    "UPLO": (lambda a: LA.eigh(a, "X"), np.eye(2)),
    "vector norm order": (lambda a: LA.norm(a, "fro"), np.ones(3)),
    "matrix norm order": (lambda a: LA.norm(a, 3), np.ones((2, 2))),
    "norm axes": (lambda a: LA.norm(a, axis=(0, 1, 2)), np.ones((2, 2, 2))),
    "duplicate norm axes": (lambda a: LA.norm(a, axis=(1, -1)), np.ones((2, 2))),
    "exponent": (lambda a: LA.matrix_power(a, 1.5), np.eye(2)),
    "multi_dot of one": (lambda a: LA.multi_dot([a]), np.eye(2)),
    "lstsq 3-d": (lambda a: LA.lstsq(a, np.ones(3)), np.ones((2, 3, 2))),
    "tensorinv ind": (lambda a: LA.tensorinv(a, 0), np.ones((2, 2))),
    "outer of matrices": (lambda a: LA.outer(a, np.ones(2)), np.ones((2, 2))),
    "rtol and rcond": (lambda a: LA.pinv(a, rcond=0.1, rtol=0.1), np.eye(2)),
}


@pytest.mark.parametrize("case", NUMPY_ERRORS)
def test_errors_match_numpy(case):
    check(*NUMPY_ERRORS[case])


def test_linalg_errors_keep_numpys_class():
    error = check_raises(np.linalg.LinAlgError, LA.lstsq, np.ones((3, 2)), np.ones(4), match="Incompatible")
    assert isinstance(error, cf.CofactorError)


def test_unsupported_is_named():
    check_unsupported(lambda a: LA.qr(a, mode="full"), np.eye(2), name="numpy.linalg.qr")
    check_unsupported(LA.eig, np.eye(2), name="numpy.linalg.eig")


def test_other_platforms_refuse_rather_than_miscompile(monkeypatch):
    class Gpu:
        platform = "gpu"
    monkeypatch.setattr(cf_linalg, "default_device", lambda: Gpu())
    check_unsupported(LA.inv, np.eye(2), name="numpy.linalg.inv on GPU is not supported yet")


@pytest.mark.parametrize("dtype", [np.float64, np.complex64], ids=dtype_id)
def test_matrix_power(dtype):
    a = well_conditioned((2, 3, 3), dtype) / 4
    check(lambda a: tuple(LA.matrix_power(a, n) for n in (0, 1, 2, 3, 5, 6, -1, -3)), a, **tolerance(dtype))


def test_matrix_power_of_integers_stays_integer():
    unimodular = np.array([[2, 1, 0], [1, 1, 0], [3, -1, 1]], np.int32)
    check(lambda a: (LA.matrix_power(a, 0), LA.matrix_power(a, 4), LA.matrix_power(a, -1)), unimodular)


def test_tensor_solve_and_inverse():
    a = well_conditioned((6, 6), np.float64).reshape(2, 3, 6)
    check(lambda a, b: (LA.tensorinv(a), LA.tensorsolve(a, b), LA.tensorsolve(np.moveaxis(a, 0, 2), b, axes=(2,))),
          a, sample((2, 3)), **tolerance(np.float64))


def test_empty_matrices():
    check(lambda a, b: (LA.inv(a), LA.det(a), LA.slogdet(a), LA.solve(a, b), LA.cholesky(a), LA.eigh(a)),
          np.ones((2, 0, 0)), np.ones((2, 0, 3)))
    check(lambda a: (LA.svd(a), LA.svd(a.T, full_matrices=False), LA.qr(a), LA.pinv(a)), np.ones((0, 3)))


# --- factorizations ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", LINALG_DTYPES, ids=dtype_id)
def test_cholesky(dtype):
    s = positive_definite((2, 3, 3), dtype)
    upper_noise = np.triu(sample((3, 3), dtype), 1)  # only the lower triangle is read
    check(lambda s, t: (LA.cholesky(s), LA.cholesky(s, upper=True), LA.cholesky(t)), s, s + upper_noise,
          **tolerance(dtype))


@pytest.mark.parametrize("dtype", LINALG_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 4)], ids=str)
def test_qr(shape, dtype):
    a = sample(shape, dtype)
    want = [LA.qr(a), LA.qr(a, mode="complete"), LA.qr(a, mode="r"), LA.qr(a, mode="raw")]
    got = cf.jit(lambda a: (LA.qr(a), LA.qr(a, mode="complete"), LA.qr(a, mode="r"), LA.qr(a, mode="raw")))(a)
    for (q, r), (wq, wr) in zip(got[:2], want[:2]):
        assert type(got[0]) is type(want[0])
        assert (q.dtype, q.shape, r.dtype, r.shape) == (wq.dtype, wq.shape, wr.dtype, wr.shape)
        q, r = np.asarray(q), np.asarray(r)
        allclose(q @ r, a, dtype)
        allclose(adjoint(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), dtype)
        assert (np.tril(r, -1) == 0).all()
    # R's rows are unique up to a sign (or phase) per row; Householder QR in LAPACK fixes them alike.
    allclose(np.abs(got[2]), np.abs(want[2]), dtype)
    h, tau = (np.asarray(x) for x in got[3])
    assert h.shape == want[3][0].shape and tau.shape == want[3][1].shape and h.dtype == want[3][0].dtype


@pytest.mark.parametrize("dtype", LINALG_DTYPES, ids=dtype_id)
def test_eigh(dtype):
    a = sample((2, 3, 3), dtype)
    hermitian = a + adjoint(a)
    check(lambda a, h: (LA.eigvalsh(h), LA.eigvalsh(a, UPLO="U"), LA.eigvalsh(a), LA.eigh(h)[0]), a, hermitian,
          **tolerance(dtype))
    w, v = cf.jit(LA.eigh)(hermitian)
    assert type(cf.jit(LA.eigh)(hermitian)) is type(LA.eigh(hermitian))
    v = np.asarray(v)
    assert v.dtype == dtype and np.asarray(w).dtype == np.empty(0, dtype).real.dtype
    allclose(hermitian @ v, v * np.asarray(w)[..., None, :], dtype)
    allclose(adjoint(v) @ v, np.broadcast_to(np.eye(3), v.shape), dtype)


@pytest.mark.parametrize("dtype", LINALG_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 4)], ids=str)
def test_svd(shape, dtype):
    a = sample(shape, dtype)
    check(lambda a: (LA.svd(a, compute_uv=False), LA.svdvals(a), LA.svd(a)[1]), a, **tolerance(dtype))
    m, n = shape[-2:]
    for full in (True, False):
        want = LA.svd(a, full_matrices=full)
        u, s, vh = got = cf.jit(lambda a: LA.svd(a, full_matrices=full))(a)
        assert type(got) is type(want)
        assert [(x.dtype, x.shape) for x in got] == [(x.dtype, x.shape) for x in want]
        u, s, vh = np.asarray(u), np.asarray(s), np.asarray(vh)
        k = min(m, n)
        allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype)
        allclose(adjoint(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2), dtype)
        allclose(vh @ adjoint(vh), np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] + (vh.shape[-2],) * 2),
                 dtype)


def test_hermitian_svd():
    a = sample((2, 3, 3), np.complex128)
    h = a + adjoint(a)
    check(lambda h: (LA.svd(h, hermitian=True)[1], LA.svd(h, compute_uv=False, hermitian=True)), h)
    u, s, vh = (np.asarray(x) for x in cf.jit(lambda h: LA.svd(h, hermitian=True))(h))
    allclose((u * s[..., None, :]) @ vh, h, np.complex128)


# --- least squares, pseudo-inverse, rank, condition -----------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int64], ids=dtype_id)
def test_lstsq(dtype):
    tall, wide = sample((4, 3), dtype), sample((2, 3), dtype)
    check(lambda t, w, b: (LA.lstsq(t, b), LA.lstsq(t, b[:, :1]), LA.lstsq(t, b[:, 0]), LA.lstsq(w, b[:2]),
                           LA.lstsq(t, b, rcond=1e-3), LA.lstsq(t, b, rcond=-1)),
          tall, wide, sample((4, 2), dtype), **tolerance(dtype))


def test_lstsq_rank_deficient_gives_nan_residuals():
    # NumPy returns empty residuals then: a shape that only exists at run time.
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    x, residuals, rank, s = cf.jit(LA.lstsq)(a, np.ones(3))
    want = LA.lstsq(a, np.ones(3))
    np.testing.assert_allclose(np.asarray(x), want[0])
    assert int(np.asarray(rank)) == want[2] == 1 and np.isnan(np.asarray(residuals)).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128], ids=dtype_id)
def test_pinv_rank_cond(dtype):
    a = sample((2, 3, 4), dtype)
    deficient = np.stack([a[0], np.repeat(a[1, :1], 3, axis=0)])
    # Thresholds stay far from the rounding noise of the zero singular values.
    check(lambda a, d: (LA.pinv(a), LA.pinv(d, rcond=1e-3), LA.pinv(a, rtol=0.3), LA.pinv(a, rtol=None),
                        LA.matrix_rank(a), LA.matrix_rank(d, tol=0.5), LA.matrix_rank(d, rtol=0.1),
                        LA.matrix_rank(a[0, 0]), LA.cond(a), LA.cond(a, -2),
                        LA.cond(a[:, :, :3], 1), LA.cond(a[:, :, :3], "fro"), LA.cond(a[:, :, :3], -np.inf)),
          a, deficient, **tolerance(dtype))
    check(lambda a: LA.pinv(a, hermitian=True), a[0, :, :3] + adjoint(a[0, :, :3]), **tolerance(dtype))


# --- norms and products ------------------------------------------------------------------------------

VECTOR_ORDS = [None, 2, 1, 0, np.inf, -np.inf, 3, 0.5, -1]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128, np.int32], ids=dtype_id)
def test_norm(dtype):
    x = sample((2, 3, 4), dtype)
    check(lambda x: (LA.norm(x), LA.norm(x[0], "fro"), LA.norm(x[0, 0], 2), LA.norm(x, keepdims=True),
                     tuple(LA.norm(x, o, axis=-1) for o in VECTOR_ORDS),
                     tuple(LA.norm(x, o, axis=(2, 0), keepdims=True) for o in MATRIX_ORDS),
                     LA.norm(x[0], 1, axis=0, keepdims=True), LA.norm(x[0], np.inf), LA.norm(x, axis=(1, -1)),
                     LA.vector_norm(x), LA.vector_norm(x, axis=(0, 2), ord=3, keepdims=True),
                     LA.vector_norm(x, axis=1, ord=np.inf), LA.vector_norm(x, keepdims=True),
                     LA.matrix_norm(x), LA.matrix_norm(x, ord="nuc", keepdims=True)), x, **tolerance(dtype))


def test_products_and_aliases():
    a, b, c, d = sample((2, 3)), sample((3, 4)), sample((4, 2)), sample((2, 5))
    check(lambda a, b, c, d: (LA.multi_dot([a, b]), LA.multi_dot([a, b, c]), LA.multi_dot([a, b, c, d]),
                              LA.multi_dot([a[0], b, c, d[:, 0]]), LA.multi_dot([a[0], b, c[:, 0]]),
                              LA.matmul(a, b), LA.tensordot(a, b, axes=1), LA.matrix_transpose(b),
                              LA.outer(a[0], d[0]), LA.diagonal(b), LA.diagonal(b, offset=2), LA.diagonal(b, offset=-1),
                              LA.trace(b), LA.trace(b.astype(np.int8), offset=1)),
          a, b, c, d)
