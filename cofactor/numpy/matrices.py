"""Matrix construction and diagonals: triu, tril, tri, diag, diagonal, trace, diagflat, fill_diagonal,
meshgrid, vander, kron, cross.

Triangles are an iota comparison (no dense mask constant); a diagonal matrix is a scatter of the
vector into zeros, the form the optimizer recognizes.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..ir import ops
from ..tracing.array import TracedArray
from ..tracing.dispatch import constructs, implements
from ..tracing.views import Lens, ReadOnly
from ._core import asarray, broadcast_shapes, full, operator_index, reject, value, view, wrap
from .creation import check_stored


def _lower_mask(n, m, k) -> TracedArray:
    """``np.tri(n, m, k, dtype=bool)``: True where column - row <= k (``k`` may be traced)."""
    offset = ops.binary("stablehlo.subtract", ops.iota((n, m), np.int64, 1), ops.iota((n, m), np.int64, 0))
    return np.less_equal(wrap(offset), k)


def _matrix_shape(m):
    shape = np.shape(m)[-2:]
    if not shape:
        raise TypeError("tri() missing 1 required positional argument: 'N'")
    return shape if len(shape) == 2 else shape * 2


@implements(np.triu)
def triu(m, k=0):
    m = asarray(m)
    return np.where(_lower_mask(*_matrix_shape(m), k - 1), np.zeros(1, m.dtype), m)


@implements(np.tril)
def tril(m, k=0):
    m = asarray(m)
    return np.where(_lower_mask(*_matrix_shape(m), k), m, np.zeros(1, m.dtype))


@constructs(np.tri)
def tri(N, M=None, k=0, dtype=float, *, like=None):
    n = operator_index(N, "N")
    m = n if M is None else operator_index(M, "M")
    return wrap(ops.convert(_lower_mask(n, m, k).value, np.dtype(dtype)))


def _diagonal_of(v, offset, axis1, axis2):
    """The diagonal as the last axis: move the two axes last, cut the offset band to a square,
    flatten it and take every (n+1)-th element."""
    rank = v.type.rank
    v = ops.transpose(v, [d for d in range(rank) if d not in (axis1, axis2)] + [axis1, axis2])
    batch = list(v.shape[:-2])
    row, col = min(max(-offset, 0), v.shape[-2]), min(max(offset, 0), v.shape[-1])
    n = max(0, min(v.shape[-2] - row, v.shape[-1] - col))
    square = ops.slice(v, [0] * len(batch) + [row, col], batch + [row + n, col + n])
    flat = ops.reshape(square, batch + [n * n])
    return ops.slice(flat, [0] * (len(batch) + 1), batch + [n * n], [1] * len(batch) + [n + 1])


class Diagonal(Lens):
    def __init__(self, offset, axis1, axis2):
        self.args = offset, axis1, axis2

    def read(self, base):
        return _diagonal_of(base, *self.args)

    def write(self, base, new):
        """(The writable diagonal np.einsum("ii->i", m) gives.)  The two axes moved last, ``new`` padded to
        one value per row and spread along the columns, kept where column - row is the offset."""
        offset, axis1, axis2 = self.args
        rank = base.type.rank
        perm = [d for d in range(rank) if d not in (axis1, axis2)] + [axis1, axis2]
        v = ops.transpose(base, perm)
        rows, columns = v.shape[-2:]
        if new.shape[-1] == 0:
            return base
        first = max(-offset, 0)
        by_row = ops.pad(new, ops.constant(np.zeros((), new.dtype)), [0] * (rank - 2) + [first],
                         [0] * (rank - 2) + [rows - first - new.shape[-1]])
        spread = ops.broadcast_in_dim(by_row, v.shape, list(range(rank - 1)))
        row, column = ops.iota(v.shape, np.int64, rank - 2), ops.iota(v.shape, np.int64, rank - 1)
        on_it = ops.compare(ops.binary("stablehlo.subtract", column, row),
                            ops.constant(np.full(v.shape, offset, np.int64)), "EQ")
        return ops.transpose(ops.select(on_it, spread, v), list(np.argsort(perm)))

    def on_numpy(self, array):
        return np.diagonal(array, *self.args)


@implements(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    """A read-only view, as in NumPy: writing into it raises NumPy's error."""
    ndim = np.ndim(a)
    if ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    axis1 = normalize_axis_index(operator_index(axis1, "axis1"), ndim, "axis1")
    axis2 = normalize_axis_index(operator_index(axis2, "axis2"), ndim, "axis2")
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 cannot be the same")
    lens = Diagonal(operator_index(offset, "offset"), axis1, axis2)
    return view(a, ReadOnly(lens, "assignment destination is read-only"))


@implements(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    reject("numpy.trace", out=(out, None))
    return np.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _diagonal_matrix(v, k):
    """The square matrix with the 1-d ``v`` on its k-th diagonal."""
    k = operator_index(k, "k")
    size = v.shape[0]
    n = size + abs(k)
    zeros = full((n, n), 0, v.dtype)
    if size == 0:
        return wrap(zeros)
    rows = np.arange(size) + max(-k, 0)
    positions = ops.constant(np.stack([rows, rows + k], axis=1))
    return wrap(ops.scatter(zeros, positions, v, (), (0, 1), (0, 1), 1))


@implements(np.diag)
def diag(v, k=0):
    ndim = np.ndim(v)
    if ndim == 1:
        return _diagonal_matrix(value(v), k)
    if ndim == 2:
        return diagonal(v, k)
    raise ValueError("Input must be 1- or 2-d.")


@implements(np.diagflat)
def diagflat(v, k=0):
    return _diagonal_matrix(value(np.ravel(v)), k)


@implements(np.fill_diagonal)
def fill_diagonal(a, val, wrap=False):
    """In place, as NumPy: ``a.flat[:end:step] = val``, with ``val`` repeated to fill."""
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    end = None
    if a.ndim == 2:
        step = a.shape[1] + 1
        if not wrap:
            end = a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
    check_stored(a, val)  # (NumPy's OverflowError for -1 into uint8: a.flat[...] = val converts it as a[i] = val does)
    count = len(range(a.size)[:end:step])
    values = np.ravel(val)
    if count == 0 or np.size(values) == 0:  # NumPy assigns nothing from an empty val
        return
    values = np.tile(values, -(-count // np.size(values)))[:count]
    flat = TracedArray(ops.reshape(a.value, (a.size,)))
    flat[:end:step] = values
    a.value = ops.reshape(flat.value, a.shape)


@implements(np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """NumPy's own construction: reshapes, then broadcast (read-only) views unless copied."""
    if indexing not in ["xy", "ij"]:
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    s0 = (1,) * ndim
    output = [np.reshape(x, s0[:i] + (-1,) + s0[i + 1:]) for i, x in enumerate(xi)]
    if indexing == "xy" and ndim > 1:
        output[0] = np.reshape(output[0], (1, -1) + s0[2:])
        output[1] = np.reshape(output[1], (-1, 1) + s0[2:])
    if not sparse:
        output = np.broadcast_arrays(*output)
    if copy:
        output = [TracedArray(value(x)) for x in output]
    return tuple(output)


@implements(np.vander)
def vander(x, N=None, increasing=False):
    """Columns 1, x, x*x, ... as NumPy's running product (not np.power), in ``promote_types(x, int)``."""
    if np.ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = np.shape(x)[0]
    N = n if N is None else operator_index(N, "N")
    if N < 0:
        raise ValueError("negative dimensions are not allowed")
    dtype = np.promote_types(np.result_type(x), int)
    columns = np.broadcast_to(np.reshape(np.astype(asarray(x), dtype), (n, 1)), (n, max(N - 1, 0)))
    powers = np.concatenate([np.ones((n, min(N, 1)), dtype), np.cumprod(columns, axis=1)], axis=1)
    return powers if increasing else wrap(ops.reverse(value(powers), [1]))


@implements(np.kron)
def kron(a, b):
    """NumPy's construction: interleave the axes of a and b, multiply, merge the pairs."""
    b = asarray(b)
    a = asarray(a)
    if a.ndim < b.ndim:
        a = np.reshape(a, (1,) * (b.ndim - a.ndim) + a.shape)
    if a.ndim == 0 or b.ndim == 0:
        return np.multiply(a, b)
    nd = max(a.ndim, b.ndim)
    a_shape = (1,) * (nd - a.ndim) + a.shape
    b_shape = (1,) * (nd - b.ndim) + b.shape
    a_arr = np.reshape(a, [n for d in a_shape for n in (d, 1)])
    b_arr = np.reshape(b, [n for d in b_shape for n in (1, d)])
    return np.reshape(np.multiply(a_arr, b_arr), [x * y for x, y in zip(a_shape, b_shape)])


def _product(x, y):
    return None if x is None or y is None else np.multiply(x, y)


def _difference(p, q):
    """p - q where a missing term (the z of a 2-vector) is zero, without multiplying by zero."""
    if q is None:
        return p
    return np.negative(q) if p is None else np.subtract(p, q)


@implements(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    a, b = asarray(a), asarray(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    a = np.moveaxis(a, normalize_axis_index(axisa, a.ndim, "axisa"), -1)
    b = np.moveaxis(b, normalize_axis_index(axisb, b.ndim, "axisb"), -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    ndim = len(broadcast_shapes(a.shape[:-1], b.shape[:-1]))
    dtype = np.promote_types(a.dtype, b.dtype)
    a0, a1, a2 = [np.astype(a[..., i], dtype) if i < a.shape[-1] else None for i in range(3)]
    b0, b1, b2 = [np.astype(b[..., i], dtype) if i < b.shape[-1] else None for i in range(3)]
    z = _difference(_product(a0, b1), _product(a1, b0))  # every term has the broadcast shape
    if a2 is None and b2 is None:
        return z
    x = _difference(_product(a1, b2), _product(a2, b1))
    y = _difference(_product(a2, b0), _product(a0, b2))
    return np.stack([x, y, z], axis=normalize_axis_index(axisc, ndim + 1, "axisc"))
