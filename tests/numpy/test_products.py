"""matmul/@, dot, vdot, inner, outer, tensordot and einsum, against NumPy."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cofactor as cf
from conftest import ALL_DTYPES, check, check_raises, check_unsupported, dtype_id, sample

# Pairs of shapes NumPy's matmul accepts: vectors, matrices, stacks that broadcast.
MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                 ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (4, 3, 2)), ((1, 3), (3, 1)), ((3,), (2, 3, 4)),
                 ((2, 2, 3), (3,))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_shapes(shapes):
    a, b = sample(shapes[0]), sample(shapes[1], seed=1)
    check(lambda a, b: (a @ b, np.matmul(a, b)), a, b)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_products_by_dtype(dtype):
    # float16 accumulation order differs from NumPy's; keep its sums short.
    a, b, v = sample((2, 3), dtype, "unit"), sample((3, 2), dtype, "unit", seed=1), sample((3,), dtype, "unit", 2)
    check(lambda a, b, v: (a @ b, np.dot(a, b), a.dot(v), np.vdot(a, b.T), np.inner(a, b.T), np.outer(v, v),
                           np.tensordot(a, b, 1), np.einsum("ij,jk->ik", a, b), v @ v),
          a, b, v, rtol=1e-2 if dtype is np.float16 else None)


@pytest.mark.parametrize("pair", [(np.int8, np.float32), (np.bool_, np.int32), (np.float32, np.float64),
                                  (np.float32, np.complex128), (np.uint8, np.int8)],
                         ids=lambda p: "-".join(dtype_id(d) for d in p))
def test_products_promote(pair):
    a, b = sample((2, 3), pair[0], "unit"), sample((3, 2), pair[1], "unit", seed=1)
    check(lambda a, b: (a @ b, np.dot(a, b), np.inner(a, b.T), np.outer(a, b), np.tensordot(a, b, 1),
                        np.einsum("ij,jk", a, b), np.vdot(a, b.T)), a, b)


def test_matmul_dtype_argument():
    a, b = sample((2, 3), np.int8), sample((3, 2), np.int8, seed=1)
    check(lambda a, b: (np.matmul(a, b, dtype=np.float64), np.matmul(a, b, dtype=np.int64)), a, b)


def test_integer_matmul_wraps_like_numpy():
    a = np.full((2, 40), 100, np.int8)
    check(lambda a: (a @ a.T, np.dot(a, a.T), np.einsum("ij,kj->ik", a, a)), a)


def test_matmul_with_constants_and_reflected():
    a = sample((2, 3))
    w = sample((3, 3), seed=3)
    check(lambda a: (a @ w, w @ a.T, np.matmul(a, [1.0, 2.0, 3.0]), [[1.0, 0.0]] @ a), a)


def test_dot():
    x, m, t = sample((3,)), sample((3, 4), seed=1), sample((2, 4, 3), seed=2)
    check(lambda x, m, t: (np.dot(x, x), np.dot(x, m), np.dot(m.T, x), np.dot(m, m.T), np.dot(t, x),
                           np.dot(t, m), np.dot(x, t.transpose(1, 2, 0)), np.dot(2.0, m), np.dot(x[0], m),
                           np.dot(m, 3)), x, m, t)


def test_vdot_conjugates_and_flattens():
    a, b = sample((2, 3), np.complex128), sample((3, 2), np.complex128, seed=1)
    check(lambda a, b: (np.vdot(a, b), np.vdot(b, a), np.vdot(a[0], a[0]), np.vdot(a, b.real)), a, b)


def test_inner_outer():
    x, m, t = sample((3,)), sample((4, 3), seed=1), sample((2, 5, 3), seed=2)
    check(lambda x, m, t: (np.inner(x, x), np.inner(m, x), np.inner(m, m), np.inner(t, m), np.inner(2.0, m),
                           np.outer(x, m), np.outer(m, x), np.outer(x[0], x), np.outer(t, x)), x, m, t)


def test_tensordot():
    a, b = sample((2, 3, 4)), sample((3, 4, 5), seed=1)
    check(lambda a, b: (np.tensordot(a, b), np.tensordot(a, b, 0).shape, np.tensordot(a, b, axes=([1, 2], [0, 1])),
                        np.tensordot(a, b, axes=(1, 0)), np.tensordot(a, b, axes=([-1], [1])),
                        np.tensordot(a, a, axes=([0, 1, 2], [0, 1, 2])), np.tensordot(a, b, axes=([2, 1], [1, 0]))),
          a, b)
    check(lambda a: np.tensordot(a, a, 0), sample((2, 2)))


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ij", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("i,i->", [(3,), (3,)]),
    ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
    ("i...->...", [(3, 2, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ab,bc,ca->", [(2, 3), (3, 4), (4, 2)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
    (" ij , jk -> ki ", [(2, 3), (3, 4)]),
    ("ij,j->i", [(2, 1), (4,)]),
    ("i,->i", [(3,), ()]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUMS, ids=[s for s, _ in EINSUMS])
def test_einsum(subscripts, shapes):
    operands = [sample(s, seed=k) for k, s in enumerate(shapes)]
    check(lambda *ops: np.einsum(subscripts, *ops), *operands)


def test_einsum_dtype_and_bool():
    a, b = sample((2, 3), np.int8), sample((3, 2), np.int8, seed=1)
    check(lambda a, b: (np.einsum("ij,jk->ik", a, b, dtype=np.float64), np.einsum("ij->i", a > 0),
                        np.einsum("ij,jk", a > 0, b > 0)), a, b)


def test_einsum_optimize_argument_is_accepted():
    a, b, c = sample((2, 3)), sample((3, 4), seed=1), sample((4, 2), seed=2)
    check(lambda a, b, c: np.einsum("ij,jk,kl->il", a, b, c, optimize=True), a, b, c)


ERRORS = {
    "matmul_core": (lambda a, b: a @ b, (2, 3), (4, 2)),
    "matmul_vectors": (lambda a, b: a @ b, (3,), (4,)),
    "matmul_batch": (lambda a, b: a @ b, (2, 2, 3), (3, 3, 2)),
    "matmul_scalar": (lambda a, b: np.matmul(a[0, 0], b), (2, 3), (3, 2)),
    "dot": (np.dot, (2, 3), (2, 3)),
    "inner": (np.inner, (2, 3), (2, 4)),
    "tensordot": (lambda a, b: np.tensordot(a, b, axes=([0], [0])), (2, 3), (3, 2)),
    "tensordot_lengths": (lambda a, b: np.tensordot(a, b, axes=([0, 1], [0])), (2, 3), (2, 3)),
    "einsum_operands": (lambda a, b: np.einsum("ij->i", a, b), (2, 3), (2, 3)),
    "einsum_too_few": (lambda a, b: np.einsum("ij,jk,kl", a, b), (2, 3), (3, 2)),
    "einsum_sizes": (lambda a, b: np.einsum("ij,jk", a, b), (2, 3), (4, 2)),
    "einsum_subscripts": (lambda a, b: np.einsum("ijk,jk", a, b), (2, 3), (3, 2)),
    "einsum_output": (lambda a, b: np.einsum("ij,jk->iz", a, b), (2, 3), (3, 2)),
    "dot_out_strided": (lambda a, b: np.dot(a, b, out=a[::-1]), (2, 2), (2, 2)),
    "dot_out_dtype": (lambda a, b: np.dot(a, b, out=np.zeros((2, 2), np.float32)), (2, 2), (2, 2)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_numpy(name):
    f, sa, sb = ERRORS[name]
    error = check(f, sample(sa), sample(sb, seed=1))
    assert isinstance(error, Exception), f"NumPy raised nothing for {name}"


def test_matmul_error_names_the_user_line():
    error = check_raises(ValueError, lambda a, b: a @ b, sample((2, 3)), sample((2, 3)))
    assert isinstance(error, cf.CofactorError)
    assert "mismatch in its core dimension" in str(error) and "test_products.py:" in str(error)


def test_unsupported():
    a = sample((3, 3))
    check_unsupported(lambda a: np.einsum(a, [0, 1], [1]), a, name="einsum")


@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.booleans())
@settings(max_examples=10, deadline=None)
def test_random_batched_matmul(batch, n, k, m, broadcast):
    a = sample((batch, n, k))
    b = sample((1 if broadcast else batch, k, m), seed=1)
    check(lambda a, b: (a @ b, np.einsum("bnk,bkm->bnm", a, b), np.tensordot(a, b[0], axes=(2, 0))), a, b)


@pytest.mark.parametrize("casting", ["safe", "same_kind", "unsafe"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
def test_einsum_casts_to_its_dtype_by_its_casting_rule(dtype, casting):
    """(einsum's default casting='safe' was ignored: float64 operands summed as float32 or int32.)"""
    check(lambda a: np.einsum("i,i->", a, a, dtype=dtype, casting=casting), np.array([1.5, 2.0, 3.0]))
