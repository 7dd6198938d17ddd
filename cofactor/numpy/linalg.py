"""numpy.linalg on traced arrays.

The factorizations are LAPACK calls: jaxlib registers LAPACK kernels with XLA:CPU as typed-FFI
custom-call targets (``lapack_dgetrf_ffi``, ...), and cofactor emits the same
``stablehlo.custom_call``s jax lowers to: column-major matrices, leading batch dimensions.
Everything around them (pivots, signs, norms, pseudo-inverses) is NumPy code on traced arrays,
so NumPy's dtype rules hold throughout.

NumPy raises LinAlgError for a singular or non-positive-definite matrix, or when LAPACK does not
converge.  Those are facts about values, which a compiled function only learns when it runs, and
it cannot raise then: the results hold inf or nan instead (each function's docstring says which),
and an ``except LinAlgError`` clause around such a call, which would never run, is a TracingError
(``_may_fail``).
Shape errors are raised at trace time, with NumPy's messages.  float32 and complex64 inputs are
computed in single precision (NumPy computes in double and rounds the result).

eig and eigvals are not provided: for real input, NumPy's result dtype (real or complex) depends
on the eigenvalues, which a trace cannot know.
"""
from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple
from numpy.linalg import LinAlgError
# NumPy's result types, and its multi_dot ordering (which only reads shapes and calls np.dot).
from numpy.linalg._linalg import (EighResult, QRResult, SlogdetResult, SVDResult, _multi_dot,
                                  _multi_dot_matrix_chain_order, _multi_dot_three)

from ..errors import UnsupportedError, user_location
from ..ir import loops, ops
from ..ir.types import TensorType
from ..runtime.devices import default_device
from ..tracing import checks, context
from ..tracing.context import is_differentiating
from ..tracing.derivatives import custom_jvp
from ..tracing.dispatch import implements
from ._core import axis_index, broadcast_shapes, reject, value, wrap

_NO = np._NoValue
_SINGLE = {np.dtype(np.float32), np.dtype(np.complex64)}
_DOUBLE = {np.dtype(np.float64), np.dtype(np.complex128)}


def linalg_dtype(*dtypes) -> np.dtype:
    """The dtype NumPy's linalg returns (its ``_commonType``): single precision stays single,
    integers and bools become float64, float16 is refused."""
    for dtype in dtypes:
        if dtype.kind in "fc" and dtype not in _SINGLE | _DOUBLE:
            raise TypeError(f"array type {dtype.name} is unsupported in linalg")
    real = np.float32 if all(dtype in _SINGLE for dtype in dtypes) else np.float64
    return np.result_type(real, *[dtype for dtype in dtypes if dtype.kind == "c"])


def _real(dtype) -> np.dtype:
    return np.empty(0, dtype).real.dtype


def _stacked(a, square=True):
    """``a`` as a traced array, after NumPy's checks that it is a (square) matrix or a stack of them."""
    x = wrap(value(a))
    if x.ndim < 2:
        raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be at least two-dimensional")
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return x


def _converted(a, square=True):
    """``_stacked(a)`` in the dtype NumPy's linalg computes and returns."""
    x = _stacked(a, square)
    return x.astype(linalg_dtype(x.dtype))


def _matrix(a):
    """``a`` as a traced 2-d array, after NumPy's check."""
    x = wrap(value(a))
    if x.ndim != 2:
        raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be two-dimensional")
    return x


# --- LAPACK -----------------------------------------------------------------------------------

def _layout(rank: int, matrix: bool):
    """Minor-to-major order: column-major for the matrices, row-major for vectors and flags."""
    return [rank - 2, rank - 1, *range(rank - 3, -1, -1)] if matrix else list(range(rank - 1, -1, -1))


_WITHOUT_ADJOINTS = {"gesdd_ffi", "geqrf_ffi", "orgqr_ffi", "ungqr_ffi"}  # LAPACK kernels Enzyme cannot differentiate


def _lapack(name, routine, operands, result_types, aliases, **flags):
    """Call jaxlib's LAPACK kernel ``routine`` (e.g. "getrf_ffi") for the dtype of the first
    operand; ``flags`` are its one-character options (uplo="L", ...)."""
    platform = default_device().platform
    if platform != "cpu":
        raise UnsupportedError(f"{name} on {platform.upper()} is not supported yet (cofactor calls LAPACK, "
                               "which only XLA:CPU provides)")
    from jaxlib import lapack  # the LAPACK kernels XLA:CPU calls; this also binds them to SciPy's LAPACK

    if routine in _WITHOUT_ADJOINTS and is_differentiating():  # (named if Enzyme then fails on it: compiler.py)
        context.current().without_adjoints.append((name, user_location()))

    values = [value(x) for x in operands]
    target = lapack.prepare_lapack_call(routine, values[0].dtype)
    rank = max(v.type.rank for v in values)
    results = ops.custom_call(
        target, values, result_types, attributes={k: f"{ord(c)} : ui8" for k, c in flags.items()},
        operand_layouts=[_layout(v.type.rank, v.type.rank == rank) for v in values],
        result_layouts=[_layout(t.rank, t.rank == rank) for t in result_types], aliases=aliases)
    return [wrap(r) for r in results]


def _nan_unless_ok(info, *results):
    """Where LAPACK reported failure (``info != 0``), the results become nan."""
    ok = info == 0
    return [np.where(np.reshape(ok, ok.shape + (1,) * (r.ndim - ok.ndim)), r, np.nan) for r in results]


def _info_type(x) -> TensorType:
    """LAPACK's int32 status, one per matrix of the stack ``x``."""
    return TensorType(x.shape[:-2], np.int32)


def _lu(name, x):
    """getrf: the packed L\\U factors and LAPACK's row swaps, 0-based (row i was swapped with
    row swaps[i]).  An exactly singular ``x`` still factors (U has a zero on its diagonal)."""
    m, n = x.shape[-2:]
    swaps_type = TensorType(x.shape[:-2] + (min(m, n),), np.int32)
    lu, swaps, _ = _lapack(name, "getrf_ffi", [x], [value(x).type, swaps_type, _info_type(x)], {0: 0})
    return lu, swaps - 1


def _permutation(swaps, m: int):
    """``perm`` with ``(P^T a)[..., i, :] == a[..., perm[i], :]``: LAPACK's swaps applied in turn,
    in a loop that runs on the device."""
    positions = wrap(ops.iota(swaps.shape[:-1] + (m,), np.int32, swaps.ndim - 1))
    if swaps.shape[-1] == 0:
        return positions

    def body(i, perm):
        i, perm = wrap(i), wrap(perm)
        there = swaps[..., i][..., None]
        here_value = perm[..., i][..., None]
        there_value = np.take_along_axis(perm, there, axis=-1)
        perm = np.where(positions == i, there_value, np.where(positions == there, here_value, perm))
        return [value(i + 1), value(perm)]

    count = ops.constant(np.int32(swaps.shape[-1]))
    start = ops.constant(np.int32(0))
    _, perm = loops.while_loop([start, value(positions)], lambda i, _: ops.compare(i, count, "LT", "SIGNED"), body)
    return wrap(perm)


def _triangular_solve(name, a, b, lower: bool, unit_diagonal=False):
    """trsm: ``a^-1 b`` reading only the ``lower`` (or upper) triangle of ``a``."""
    x, = _lapack(name, "trsm_ffi", [a, b], [value(b).type], {0: 1}, side="L", uplo="L" if lower else "U",
                 trans_x="N", diag="U" if unit_diagonal else "N")
    return x


def _may_fail(name):
    """``name`` raises LinAlgError in NumPy for some values, where compiled code gives inf or nan."""
    checks.unchecked(LinAlgError(f"{name}: a singular or non-positive-definite matrix, or LAPACK's failure to "
                                 "converge"))


@custom_jvp
def _solve(name, a, b):
    """``a^-1 b`` for stacks of equal batch shape, by LU with partial pivoting (as NumPy's gesv)."""
    if a.shape[-1] == 0:  # nothing to factor (and an empty gather is not valid StableHLO)
        return b
    lu, swaps = _lu(name, a)
    perm = _permutation(swaps, a.shape[-1])
    rows = np.take_along_axis(b, perm[..., None], axis=-2)
    lower = _triangular_solve(name, lu, rows, lower=True, unit_diagonal=True)
    return _triangular_solve(name, lu, lower, lower=False)


@_solve.defjvp
def _solve_jvp(primals, tangents):
    """d(A^-1 b) = A^-1 (db - dA x); A^-1 is computed (without a derivative) so that the tangent
    map is a product Enzyme can differentiate and transpose."""
    name, a, b = primals
    _, da, db = tangents
    x = _solve.fn(name, a, b)
    rhs = (0 if db is None else db) - (0 if da is None else da @ x)
    return x, None if da is None and db is None else _inverse(name, a) @ rhs


def _inverse(name, a):
    return _solve.fn(name, a, np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape))


def _trace_of_product(a, b):
    """trace(a @ b) for stacks of matrices, without forming the product."""
    return np.sum(np.swapaxes(a, -1, -2) * b, axis=(-2, -1))


def _symmetric_from(t, lower: bool):
    """The symmetric matrix that a function reading only one triangle of ``t`` sees."""
    triangle = _triangle(t, lower)
    return triangle + np.swapaxes(triangle, -1, -2) - triangle * np.eye(t.shape[-1], dtype=t.dtype)


def _householder(name, x):
    """geqrf: R in the upper triangle, the Householder reflectors below it, and their scales."""
    k = min(x.shape[-2:])
    return _lapack(name, "geqrf_ffi", [x], [value(x).type, TensorType(x.shape[:-2] + (k,), x.dtype)], {0: 0})


def _q_from_householder(name, reflectors, taus):
    """orgqr/ungqr: the first ``reflectors.shape[-1]`` columns of Q."""
    routine = "ungqr_ffi" if reflectors.dtype.kind == "c" else "orgqr_ffi"
    q, = _lapack(name, routine, [reflectors, taus], [value(reflectors).type], {0: 0})
    return q


@custom_jvp
def _eigh(name, x, lower: bool, vectors: bool):
    """syevd/heevd: ascending eigenvalues and (with ``vectors``) eigenvectors as columns."""
    routine = "heevd_ffi" if x.dtype.kind == "c" else "syevd_ffi"
    eigenvalues_type = TensorType(x.shape[:-1], _real(x.dtype))
    v, w, info = _lapack(name, routine, [x], [value(x).type, eigenvalues_type, _info_type(x)], {0: 0},
                         mode="V" if vectors else "N", uplo="L" if lower else "U")
    return _nan_unless_ok(info, w, v)


@_eigh.defjvp
def _eigh_jvp(primals, tangents):
    """With M = V^T dA V: dw = diag(M), dV = V (F * M), F_ij = 1 / (w_j - w_i) off the diagonal
    (distinct eigenvalues assumed, as in every first-order formula)."""
    name, x, lower, vectors = primals
    w, v = _eigh.fn(name, x, lower, True)
    dx = tangents[1]
    if dx is None:
        return [w, v], [None, None]
    m = np.swapaxes(v, -1, -2) @ _symmetric_from(dx, lower) @ v
    gaps = w[..., None, :] - w[..., :, None]
    off = ~np.eye(w.shape[-1], dtype=bool)
    scale = np.where(off, 1 / np.where(off, gaps, 1), 0)
    return [w, v], [diagonal(m), v @ (scale * m)]


def _svd(name, x, full_matrices: bool, compute_uv: bool):
    """gesdd: singular values (descending) and, with ``compute_uv``, U and V^H."""
    m, n = x.shape[-2:]
    k = min(m, n)
    batch = x.shape[:-2]
    u_cols, vt_rows = (m, n) if full_matrices and compute_uv else (k, k)
    if k == 0:  # gesdd refuses empty matrices; NumPy's U and V^H are then identities
        identities = [wrap(value(np.broadcast_to(np.eye(rows, cols, dtype=x.dtype), batch + (rows, cols))))
                      for rows, cols in ((m, u_cols), (vt_rows, n))]
        return [wrap(ops.constant(np.zeros(batch + (0,), _real(x.dtype)))), *identities][:3 if compute_uv else 1]
    _, s, u, vt, info = _lapack(name, "gesdd_ffi", [x], [
        value(x).type, TensorType(batch + (k,), _real(x.dtype)), TensorType(batch + (m, u_cols), x.dtype),
        TensorType(batch + (vt_rows, n), x.dtype), _info_type(x)],
        {0: 0}, mode=("A" if full_matrices else "S") if compute_uv else "N")
    return _nan_unless_ok(info, s, u, vt) if compute_uv else _nan_unless_ok(info, s)


def _triangle(x, lower: bool):
    """The lower (or upper) triangle of each matrix, zeros elsewhere."""
    m, n = x.shape[-2:]
    keep = np.tri(m, n, dtype=bool) if lower else ~np.tri(m, n, k=-1, dtype=bool)
    return np.where(keep, x, 0)


# --- solving and inverting ---------------------------------------------------------------------

@implements(np.linalg.solve)
def solve(a, b):
    """Where ``a`` is singular, NumPy raises LinAlgError; the compiled result holds inf or nan."""
    _may_fail("numpy.linalg.solve")
    x, y = _stacked(a), wrap(value(b))
    dtype = linalg_dtype(x.dtype, y.dtype)
    vector = y.ndim == 1
    name, signature = ("solve1", "(m,m),(m)->(m)") if vector else ("solve", "(m,m),(m,n)->(m,n)")
    if vector:
        y = y[:, None]
    if y.ndim < 2:
        raise ValueError(f"{name}: Input operand 1 does not have enough dimensions (has {y.ndim}, gufunc core "
                         f"with signature {signature} requires 2)")
    m = x.shape[-1]
    if y.shape[-2] != m:
        raise ValueError(f"{name}: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"{signature} (size {y.shape[-2]} is different from {m})")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
    x = np.broadcast_to(x, batch + (m, m)).astype(dtype)
    y = np.broadcast_to(y, batch + y.shape[-2:]).astype(dtype)
    result = _solve("numpy.linalg.solve", x, y)
    return result[..., 0] if vector else result


@implements(np.linalg.inv)
def inv(a):
    """Where ``a`` is singular, NumPy raises LinAlgError; the compiled result holds inf or nan."""
    _may_fail("numpy.linalg.inv")
    x = _converted(a)
    identity = np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape)
    return _solve("numpy.linalg.inv", x, identity)


@implements(np.linalg.tensorinv)
def tensorinv(a, ind=2):
    shape = np.shape(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    rows = int(np.prod(shape[ind:], dtype=np.int64))
    return np.reshape(inv(np.reshape(a, (rows, -1))), shape[ind:] + shape[:ind])


@implements(np.linalg.tensorsolve)
def tensorsolve(a, b, axes=None):
    x = wrap(value(a))
    if axes is not None:
        order = [k for k in range(x.ndim) if k not in [operator.index(ax) % x.ndim for ax in axes]]
        x = np.transpose(x, order + list(axes))
    solution_shape = x.shape[-(x.ndim - np.ndim(b)):]
    size = int(np.prod(solution_shape, dtype=np.int64))
    if x.size != size ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement             "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return np.reshape(solve(np.reshape(x, (size, size)), np.ravel(b)), solution_shape)


@implements(np.linalg.lstsq)
def lstsq(a, b, rcond=None):
    """Least squares through the SVD, as NumPy's gelsd.  ``rcond=None`` uses the machine epsilon of
    the computing dtype (NumPy uses float64's even for float32 input, which it computes in float64).

    NumPy's residuals are empty when ``a`` turns out rank-deficient; a compiled function cannot
    change a shape at run time, so it returns nan residuals then.  If the SVD does not converge
    (NumPy raises LinAlgError), the results are nan.
    """
    x, y = wrap(value(a)), wrap(value(b))
    vector = y.ndim == 1
    if vector:
        y = y[:, None]
    x, y = _matrix(x), _matrix(y)
    m, n = x.shape
    if y.shape[0] != m:
        raise LinAlgError("Incompatible dimensions")
    dtype = linalg_dtype(x.dtype, y.dtype)
    x, y = x.astype(dtype), y.astype(dtype)
    eps = np.finfo(dtype).eps
    if rcond is None:
        rcond = eps * max(m, n)
    elif rcond < 0:
        rcond = eps
    s, u, vt = _svd("numpy.linalg.lstsq", x, full_matrices=False, compute_uv=True)
    large = s > rcond * np.max(s, axis=-1, initial=0)
    rank = np.count_nonzero(large, axis=-1).astype(np.int32)
    scaled = np.where(large, 1 / s, 0)[:, None] * (np.conj(u).T @ y)
    solution = np.conj(vt).T @ scaled
    if m > n:
        residuals = np.sum(np.square(np.abs(y - x @ solution)), axis=0)
        residuals = np.where(rank == n, residuals, np.nan)
    else:
        residuals = wrap(ops.constant(np.zeros(0, _real(dtype))))
    return solution[:, 0] if vector else solution, residuals, rank, s


# --- determinants ---------------------------------------------------------------------------------

def _lu_diagonal_and_parity(name, a):
    """The diagonal of U and whether the row permutation is odd, for det and slogdet."""
    lu, swaps = _lu(name, _converted(a))
    odd = np.sum(swaps != np.arange(swaps.shape[-1], dtype=np.int32), axis=-1) % 2 == 1
    return diagonal(lu), odd


@implements(np.linalg.det)
@custom_jvp
def det(a):
    """A singular ``a`` gives 0, as in NumPy (its sign times the exponential of -inf: +0.0, whatever the
    parity of the row swaps)."""
    pivots, odd = _lu_diagonal_and_parity("numpy.linalg.det", a)
    product = np.prod(pivots, axis=-1)
    return np.where(product == 0, np.zeros_like(product), np.where(odd, -product, product))


@det.defjvp
def _det_jvp(primals, tangents):
    """d det(A) = det(A) trace(A^-1 dA)."""
    a, = primals
    d = det.fn(a)
    return d, None if tangents[0] is None else d * _trace_of_product(_inverse("numpy.linalg.det", a), tangents[0])


@implements(np.linalg.slogdet)
@custom_jvp
def slogdet(a):
    """A singular ``a`` gives sign 0 and logabsdet -inf, as in NumPy."""
    pivots, odd = _lu_diagonal_and_parity("numpy.linalg.slogdet", a)
    magnitude = np.abs(pivots)
    # (pivots == 0, not magnitude == 0: Enzyme-JAX 0.0.16 rewrites abs(complex) == 0 into invalid IR)
    sign = np.prod(np.where(pivots == 0, 0, pivots / magnitude), axis=-1)
    return SlogdetResult(np.where(odd, -sign, sign), np.sum(np.log(magnitude), axis=-1))


@slogdet.defjvp
def _slogdet_jvp(primals, tangents):
    """d log|det(A)| = trace(A^-1 dA); the sign is constant."""
    a, = primals
    result = slogdet.fn(a)
    if tangents[0] is None:
        return result, SlogdetResult(None, None)
    change = _trace_of_product(_inverse("numpy.linalg.slogdet", a), tangents[0])
    return result, SlogdetResult(np.zeros_like(result.sign), change)


@implements(np.linalg.matrix_power)
def matrix_power(a, n):
    """Negative ``n`` inverts first: a singular ``a`` then gives inf or nan (NumPy raises LinAlgError)."""
    x = _stacked(a)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        return wrap(value(np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape)))
    if n < 0:
        x, n = inv(x), -n
    if n <= 3:
        return x if n == 1 else x @ x if n == 2 else (x @ x) @ x
    # NumPy's binary decomposition, so the products round as NumPy's do.
    square = result = None
    while n > 0:
        square = x if square is None else square @ square
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else result @ square
    return result


# --- factorizations ---------------------------------------------------------------------------------

@implements(np.linalg.cholesky)
def cholesky(a, /, *, upper=False):
    """Where ``a`` is not positive definite, NumPy raises LinAlgError; the compiled result is nan.
    Only the lower (``upper``: upper) triangle of ``a`` is read, as in NumPy."""
    _may_fail("numpy.linalg.cholesky")
    return _cholesky(_converted(a), upper)


@custom_jvp
def _cholesky(x, upper: bool):
    factor, info = _lapack("numpy.linalg.cholesky", "potrf_ffi", [x], [value(x).type, _info_type(x)], {0: 0},
                           uplo="U" if upper else "L")
    return _nan_unless_ok(info, _triangle(factor, lower=not upper))[0]


@_cholesky.defjvp
def _cholesky_jvp(primals, tangents):
    """dL = L Phi(L^-1 dA L^-T), Phi: the lower triangle with half the diagonal (U = L^T)."""
    x, upper = primals
    factor = _cholesky.fn(x, upper)
    if tangents[0] is None:
        return factor, None
    lower = np.swapaxes(factor, -1, -2) if upper else factor
    inverse = _inverse("numpy.linalg.cholesky", lower)
    s = inverse @ _symmetric_from(tangents[0], not upper) @ np.swapaxes(inverse, -1, -2)
    d = lower @ (_triangle(s, True) - 0.5 * s * np.eye(s.shape[-1], dtype=s.dtype))
    return factor, np.swapaxes(d, -1, -2) if upper else d


@implements(np.linalg.qr)
def qr(a, mode="reduced"):
    if mode not in ("reduced", "complete", "r", "raw"):
        if mode in ("f", "full", "e", "economic"):
            raise UnsupportedError(f"numpy.linalg.qr: the deprecated mode={mode!r} is not supported by cofactor")
        raise ValueError(f"Unrecognized mode '{mode}'")
    x = _converted(a, square=False)
    m, n = x.shape[-2:]
    k = min(m, n)
    reflectors, taus = _householder("numpy.linalg.qr", x)
    if mode == "r":
        return _triangle(reflectors[..., :k, :], lower=False)
    if mode == "raw":
        return np.swapaxes(reflectors, -1, -2), taus
    if mode == "complete" and m > n:
        widened = np.pad(reflectors, [(0, 0)] * (x.ndim - 1) + [(0, m - n)])
        return QRResult(_q_from_householder("numpy.linalg.qr", widened, taus), _triangle(reflectors, lower=False))
    q = _q_from_householder("numpy.linalg.qr", reflectors[..., :k], taus)
    return QRResult(q, _triangle(reflectors[..., :k, :], lower=False))


def _uplo(UPLO) -> bool:
    """Whether NumPy's ``UPLO`` argument asks for the lower triangle."""
    uplo = UPLO.upper()
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return uplo == "L"


@implements(np.linalg.eigh)
def eigh(a, UPLO="L"):
    """If LAPACK does not converge (NumPy raises LinAlgError), the compiled results are nan."""
    lower = _uplo(UPLO)  # checked first, as NumPy does
    _may_fail("numpy.linalg.eigh")
    w, v = _eigh("numpy.linalg.eigh", _converted(a), lower, True)
    return EighResult(w, v)


@implements(np.linalg.eigvalsh)
def eigvalsh(a, UPLO="L"):
    """If LAPACK does not converge (NumPy raises LinAlgError), the compiled result is nan."""
    lower = _uplo(UPLO)
    _may_fail("numpy.linalg.eigvalsh")
    return _eigh("numpy.linalg.eigvalsh", _converted(a), lower, False)[0]


@implements(np.linalg.svd)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """If LAPACK does not converge (NumPy raises LinAlgError), the compiled results are nan.
    ``hermitian=True`` goes through eigh, as NumPy does."""
    _may_fail("numpy.linalg.svd")
    if hermitian:
        return _hermitian_svd(a, compute_uv)
    x = _converted(a, square=False)
    if not compute_uv:
        return _svd("numpy.linalg.svd", x, full_matrices, compute_uv=False)[0]
    s, u, vt = _svd("numpy.linalg.svd", x, full_matrices, compute_uv=True)
    return SVDResult(u, s, vt)


def _hermitian_svd(a, compute_uv):
    """NumPy's: singular values are the eigenvalues' magnitudes, descending; their signs move into V^H."""
    if not compute_uv:
        return np.flip(np.sort(np.abs(eigvalsh(a))), axis=-1)
    w, v = eigh(a)
    order = np.flip(np.argsort(np.abs(w)), axis=-1)
    signs = np.take_along_axis(np.copysign(1.0, w), order, axis=-1)
    u = np.take_along_axis(v, order[..., None, :], axis=-1)
    vt = np.conj(np.swapaxes(u * signs[..., None, :], -1, -2))
    return SVDResult(u, np.take_along_axis(np.abs(w), order, axis=-1), vt)


@implements(np.linalg.svdvals)
def svdvals(x, /):
    return svd(x, compute_uv=False)


# --- ranks, pseudo-inverses, condition numbers --------------------------------------------------

@implements(np.linalg.matrix_rank)
def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    if rtol is not None and tol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    x = wrap(value(A))
    if x.ndim < 2:
        return np.any(x != 0).astype(int)
    s = svd(x, compute_uv=False, hermitian=hermitian)
    if tol is None:
        rtol = max(x.shape[-2:]) * np.finfo(s.dtype).eps if rtol is None else wrap(value(rtol))[..., None]
        tol = np.max(s, axis=-1, keepdims=True, initial=0) * rtol
    else:
        tol = wrap(value(tol))[..., None]
    return np.count_nonzero(s > tol, axis=-1)


@implements(np.linalg.pinv)
def pinv(a, rcond=None, hermitian=False, *, rtol=_NO):
    x = wrap(value(a))
    if rcond is not None and rtol is not _NO:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    if rcond is None:
        if rtol is _NO:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(x.shape[-2:]) * np.finfo(x.dtype).eps
        else:
            rcond = rtol
    if x.size == 0 and np.prod(x.shape[-2:]) == 0:
        return wrap(ops.constant(np.empty(x.shape[:-2] + x.shape[-2:][::-1], x.dtype)))
    u, s, vt = svd(np.conj(x), full_matrices=False, hermitian=hermitian)
    large = s > wrap(value(rcond))[..., None] * np.max(s, axis=-1, keepdims=True)
    inverse = np.where(large, 1 / s, 0)
    return np.swapaxes(vt, -1, -2) @ (inverse[..., None] * np.swapaxes(u, -1, -2))


@implements(np.linalg.cond)
def cond(x, p=None):
    """A singular ``x`` gives inf, as in NumPy."""
    a = wrap(value(x))
    if a.size == 0 and np.prod(a.shape[-2:]) == 0:
        raise LinAlgError("cond is not defined on empty arrays")
    if p is None or p in {2, -2}:
        s = svd(a, compute_uv=False)
        r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    else:
        _stacked(a)  # NumPy's shape check
        r = norm(a, p, axis=(-2, -1)) * norm(inv(a), p, axis=(-2, -1))
        r = r.astype(_real(linalg_dtype(a.dtype)))
    # NumPy turns nan into inf, unless the input held a nan.
    return np.where(np.isnan(r) & ~np.any(np.isnan(a), axis=(-2, -1)), np.inf, r)


# --- norms and products ---------------------------------------------------------------------------

def _vector_norm(x, ord, axis, keepdims):
    if ord == np.inf:
        return np.max(np.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return np.min(np.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return np.sum((x != 0).astype(x.real.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return np.sum(np.abs(x), axis=axis, keepdims=keepdims)
    if ord is None or ord == 2:
        return np.sqrt(np.sum((np.conj(x) * x).real, axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    total = np.sum(np.power(np.abs(x), ord), axis=axis, keepdims=keepdims)
    return np.power(total, np.reciprocal(ord, dtype=total.dtype))


def _matrix_norm(x, ord, row_axis, col_axis):
    """The matrix norm over two distinct axes, both removed."""
    if ord in (2, -2, "nuc"):
        s = svd(np.moveaxis(x, (row_axis, col_axis), (-2, -1)), compute_uv=False)
        return np.max(s, axis=-1, initial=0) if ord == 2 else np.min(s, axis=-1) if ord == -2 else \
            np.sum(s, axis=-1)
    if ord in (1, -1, np.inf, -np.inf):
        # Sum over rows for the 1-norms, over columns for the inf-norms, then the extremum of the rest.
        summed, other = (row_axis, col_axis) if ord in (1, -1) else (col_axis, row_axis)
        sums = np.sum(np.abs(x), axis=summed)
        other -= other > summed
        return np.max(sums, axis=other, initial=0) if ord > 0 else np.min(sums, axis=other)
    if ord in (None, "fro", "f"):
        return np.sqrt(np.sum((np.conj(x) * x).real, axis=(row_axis, col_axis)))
    raise ValueError("Invalid norm order for matrices.")


@implements(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    a = wrap(value(x))
    if a.dtype.kind not in "fc":
        a = a.astype(float)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and a.ndim == 2) or (ord == 2 and a.ndim == 1):
            flat = np.ravel(a)
            squares = np.dot(flat.real, flat.real) + np.dot(flat.imag, flat.imag) if a.dtype.kind == "c" \
                else np.dot(flat, flat)
            result = np.sqrt(squares)
            return np.reshape(result, (1,) * a.ndim) if keepdims else result
        axis = tuple(range(a.ndim))
    elif not isinstance(axis, tuple):
        try:
            axis = (int(axis),)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
    if len(axis) == 1:
        return _vector_norm(a, ord, axis, keepdims)
    if len(axis) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    row_axis, col_axis = (axis_index(ax, a.ndim) for ax in axis)
    if row_axis == col_axis:
        raise ValueError("Duplicate axes given.")
    result = _matrix_norm(a, ord, row_axis, col_axis)
    if keepdims:
        shape = list(a.shape)
        shape[row_axis] = shape[col_axis] = 1
        result = np.reshape(result, shape)
    return result


@implements(np.linalg.vector_norm)
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    a = wrap(value(x))
    shape = list(a.shape)
    if axis is None:
        a, single_axis = np.ravel(a), 0
    elif isinstance(axis, tuple):
        axes = normalize_axis_tuple(axis, a.ndim)
        rest = [d for d in range(a.ndim) if d not in axes]
        a = np.reshape(np.transpose(a, list(axes) + rest), (-1, *[shape[d] for d in rest]))
        single_axis = 0
    else:
        single_axis = axis
    result = norm(a, axis=single_axis, ord=ord)
    if keepdims:
        for d in normalize_axis_tuple(range(len(shape)) if axis is None else axis, len(shape)):
            shape[d] = 1
        result = np.reshape(result, shape)
    return result


@implements(np.linalg.matrix_norm)
def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return norm(x, axis=(-2, -1), keepdims=keepdims, ord=ord)


@implements(np.linalg.multi_dot)
def multi_dot(arrays, *, out=None):
    """NumPy's evaluation order (chosen from the shapes alone), so the result rounds as NumPy's."""
    reject("numpy.linalg.multi_dot", out=(out, None))
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return np.dot(arrays[0], arrays[1])
    xs = [wrap(value(a)) for a in arrays]
    first_1d, last_1d = xs[0].ndim == 1, xs[-1].ndim == 1
    if first_1d:
        xs[0] = xs[0][None, :]
    if last_1d:
        xs[-1] = xs[-1][:, None]
    xs = [_matrix(x) for x in xs]
    if len(xs) == 3:
        result = _multi_dot_three(*xs)
    else:
        result = _multi_dot(xs, _multi_dot_matrix_chain_order(xs), 0, len(xs) - 1)
    if first_1d and last_1d:
        return result[0, 0]
    return np.ravel(result) if first_1d or last_1d else result


@implements(np.linalg.matmul)
def matmul(x1, x2, /):
    return np.matmul(x1, x2)


@implements(np.linalg.tensordot)
def tensordot(x1, x2, /, *, axes=2):
    return np.tensordot(x1, x2, axes=axes)


@implements(np.linalg.matrix_transpose)
def matrix_transpose(x, /):
    return np.matrix_transpose(x)


@implements(np.linalg.outer)
def outer(x1, x2, /):
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={np.ndim(x1)!r} and "
                         f"x2.ndim={np.ndim(x2)!r}.")
    return np.outer(x1, x2)


@implements(np.linalg.diagonal)
def diagonal(x, /, *, offset=0):
    a = _stacked(x, square=False)
    m, n = a.shape[-2:]
    offset = operator.index(offset)
    rows = np.arange(max(0, min(m + min(offset, 0), n - max(offset, 0))))
    if rows.size == 0:  # (an empty gather is not valid StableHLO)
        return wrap(ops.constant(np.zeros(a.shape[:-2] + (0,), a.dtype)))
    return a[..., rows - min(offset, 0), rows + max(offset, 0)]


@implements(np.linalg.trace)
def trace(x, /, *, offset=0, dtype=None):
    return np.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)
