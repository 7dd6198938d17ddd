"""Matrices and diagonals against NumPy: triu, tril, tri, diag, diagonal, trace, diagflat,
fill_diagonal, meshgrid, vander, kron, cross."""
import numpy as np
import pytest

from conftest import check, dtype_id, sample

SOME_DTYPES = [np.bool_, np.int8, np.float32, np.float64, np.complex128]


@pytest.mark.parametrize("dtype", SOME_DTYPES, ids=dtype_id)
def test_triangles(dtype):
    check(lambda x: (np.triu(x), np.tril(x), np.triu(x, 1), np.tril(x, -2), np.triu(x, 9), np.tril(x, -9),
                     np.tril(x, 1.5), np.triu(x[0]), np.tril(x[:, :0])), sample((3, 4), dtype))


def test_triangles_of_stacks_with_a_traced_k():
    check(lambda x, k: (np.triu(x, k), np.tril(x, -k), np.triu(x)), sample((2, 3, 3)), np.int64(1))


def test_tri():
    check(lambda x: (x + np.tri(3, 4), x * np.tri(3, 4, -1, dtype=int), np.tri(2, dtype=bool)), sample((3, 4)))


def test_triangle_of_a_scalar_is_an_error():
    check(lambda x: np.triu(x[0, 0]), sample((2, 2)))


@pytest.mark.parametrize("dtype", SOME_DTYPES, ids=dtype_id)
def test_diag_and_diagflat(dtype):
    check(lambda v, m: (np.diag(v), np.diag(v, 2), np.diag(v, -1), np.diag(v[:0], 1), np.diag(m), np.diag(m, 2),
                        np.diag(m, -1), np.diag(m, 7), np.diagflat(m), np.diagflat(v, -2)),
          sample((4,), dtype), sample((3, 5), dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.float64], ids=dtype_id)
def test_diagonal_and_trace(dtype):
    check(lambda x: (np.diagonal(x), np.diagonal(x, 1, 1, 2), np.diagonal(x, -1, 2, 0), np.diagonal(x, 0, -1, -2),
                     x.diagonal(2), np.diagonal(x, 5), np.trace(x), np.trace(x, 1, 1, 2), x.trace(-1),
                     np.trace(x, dtype=np.float32)), sample((2, 3, 4), dtype))


def test_diagonal_is_a_read_only_view():
    def read_after_write(x):
        y = x.copy()
        d = np.diagonal(y)
        y[0, 0] = 5.0
        return d

    def write(x):
        y = x.copy()
        np.diagonal(y)[0] = 1.0
        return y

    check(read_after_write, sample((3, 3)))
    check(write, sample((3, 3)))


@pytest.mark.parametrize("f", [lambda x: np.diagonal(x[0]), lambda x: np.diagonal(x, 0, 1, -1),
                               lambda x: np.diagonal(x, 0, 0, 2), lambda x: np.diagonal(x, 1.5),
                               lambda x: np.diag(x[None]), lambda x: np.trace(x[0])])
def test_diagonal_errors(f):
    check(f, sample((2, 2)))


def test_fill_diagonal():
    def fill(x, v):
        a, b, c, d = x.copy(), x.copy(), np.zeros((7, 3)), np.zeros((3, 3, 3))
        np.fill_diagonal(a, v[0])
        np.fill_diagonal(b, v)
        np.fill_diagonal(c, v[:2], wrap=True)
        np.fill_diagonal(d, 2)
        e = x.copy()
        np.fill_diagonal(e[1:], v)  # through a view of e
        np.fill_diagonal(x.copy(), v[:0])
        return a, b, c, d, e

    check(fill, sample((4, 3)), sample((3,)))
    check(lambda x: np.fill_diagonal(x.copy(), 1), sample((3,)))
    check(lambda x: np.fill_diagonal(np.zeros((2, 3, 2)), x[0]), sample((3,)))
    check(lambda x: np.fill_diagonal(np.zeros((3, 3), np.uint8), -1), sample((3,)))  # NumPy's OverflowError
    check(lambda x: np.fill_diagonal(np.zeros((3, 3), np.int8), [1, 300]), sample((3,)))


def test_meshgrid():
    check(lambda x, y, z: (np.meshgrid(x, y), np.meshgrid(x, y, indexing="ij"), np.meshgrid(x, y, z, sparse=True),
                           np.meshgrid(x, y, z, indexing="ij", copy=False), np.meshgrid(x), np.meshgrid(x, [1, 2])),
          sample((3,)), sample((2,), np.int32), sample((2, 2)))
    check(lambda x: np.meshgrid(x, indexing="yx"), sample((3,)))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float32, np.complex128], ids=dtype_id)
def test_vander(dtype):
    check(lambda x: (np.vander(x), np.vander(x, 1), np.vander(x, 0), np.vander(x, 5, increasing=True)),
          sample((4,), dtype, "unit"))


@pytest.mark.parametrize("f", [lambda x: np.vander(x[None]), lambda x: np.vander(x, -1), lambda x: np.vander(x, 2.0)])
def test_vander_errors(f):
    check(f, sample((3,)))


def test_kron():
    check(lambda a, b: (np.kron(a, b), np.kron(b, a), np.kron(a[0], b), np.kron(a, 2), np.kron(a[0, 0], b[0]),
                        np.kron(a[:, None], b[0])), sample((2, 3), np.int8), sample((3, 2), np.float32))


def test_cross():
    check(lambda a, b: (np.cross(a, b), np.cross(a, b[0]), np.cross(a.T, b.T, axisa=0, axisb=0, axisc=0),
                        np.cross(a[:, :2], b), np.cross(a, b[:, :2]), np.cross(a[:, :2], b[:, :2]),
                        np.cross(a[:, None], b, axis=-1)), sample((2, 3)), sample((2, 3), np.int32))


@pytest.mark.parametrize("f", [lambda a: np.cross(a, a[:, :1]), lambda a: np.cross(a[0, 0], a),
                               lambda a: np.cross(a, a, axisc=2), lambda a: np.cross(a > 0, a < 0),
                               lambda a: np.cross(a, a, axisa=3)])
def test_cross_errors(f):
    check(f, sample((2, 3)))
