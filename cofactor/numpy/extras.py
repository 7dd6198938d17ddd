"""Smaller NumPy functions, most written in terms of functions cofactor already traces."""
from __future__ import annotations

import math
import operator

import numpy as np

from ..errors import UnsupportedError, numpy_rules, user_frame
from ..ir import ops
from ..tracing.array import TracedArray, defers_tracing, share_storage
from ..tracing.views import asked_of_arguments, in_one_memory
from ..tracing.dispatch import constructs, implements, implements_ufunc, indexed
from ..tracing.checks import numpy_error_if
from ..tracing.control import cond_value
from ..tracing.heap import Scope
from ._core import asarray, axis_index, is_weak, keeps_order, known_value, result_type, static, value
from .creation import array
from .extent import Bounded, Window, _unsupported, as_data, operation
from .indexing import check_range
from .selection import compress_traced
from .ufuncs import KERNELS, _compare, _isinf, _like, _register

# --- more ufuncs --------------------------------------------------------------------------------


def _fmod(a, b):
    """C fmod (sign of the dividend); integers: NumPy gives 0 for a zero divisor."""
    if a.dtype.kind in "fc":
        return ops.binary("stablehlo.remainder", a, b)
    zero = _like(a, 0)
    by_zero = _compare("EQ")(b, zero)
    return ops.select(by_zero, zero, ops.binary("stablehlo.remainder", a, ops.select(by_zero, _like(a, 1), b)))


def _gcd(a, b):
    """Euclid's algorithm, unrolled for the width of the integer type (enough steps for any pair)."""
    a, b = ops.unary("stablehlo.abs", a) if a.dtype.kind == "i" else a, \
        ops.unary("stablehlo.abs", b) if b.dtype.kind == "i" else b
    zero, one = _like(a, 0), _like(a, 1)
    for _ in range(int(a.dtype.itemsize * 8 * 1.5)):  # Fibonacci worst case: ~1.44 log2 steps
        done = _compare("EQ")(b, zero)
        r = ops.binary("stablehlo.remainder", a, ops.select(done, one, b))
        a, b = ops.select(done, a, b), ops.select(done, b, r)
    return a


def _lcm(a, b):
    """NumPy's |a| / gcd * |b|, which wraps past the dtype's range (to a negative number too)."""
    g = _gcd(a, b)
    zero = _like(a, 0)
    safe = ops.select(_compare("EQ")(g, zero), _like(a, 1), g)
    if a.dtype.kind == "i":
        a, b = ops.unary("stablehlo.abs", a), ops.unary("stablehlo.abs", b)
    r = ops.binary("stablehlo.multiply", ops.binary("stablehlo.divide", a, safe), b)
    return ops.select(_compare("EQ")(g, zero), zero, r)


def _heaviside(x, h0):
    zero = _like(x, 0)
    step = ops.select(_compare("LT")(x, zero), zero, _like(x, 1))
    result = ops.select(_compare("EQ")(x, zero), h0, step)
    return ops.select(_compare("NE")(x, x), x, result)  # NaN stays NaN


def _logaddexp2(x, y):
    big = ops.binary("stablehlo.maximum", x, y)
    diff = ops.unary("stablehlo.abs", ops.binary("stablehlo.subtract", x, y))
    tail = ops.binary("stablehlo.divide", ops.unary("stablehlo.log_plus_one", ops.binary(
        "stablehlo.power", _like(x, 2), ops.unary("stablehlo.negate", diff))), _like(x, math.log(2)))
    general = ops.binary("stablehlo.add", big, tail)
    return ops.select(_compare("EQ")(x, y), ops.binary("stablehlo.add", x, _like(x, 1)), general)


def _ldexp(x, e):
    return ops.binary("stablehlo.multiply", x, ops.binary("stablehlo.power", _like(x, 2), ops.convert(e, x.dtype)))


def _modf(x):
    whole = KERNELS[np.trunc](x)
    frac = ops.select(_isinf(x), _like(x, 0), ops.binary("stablehlo.subtract", x, whole))
    return KERNELS[np.copysign](frac, x), whole


NEW_KERNELS = {
    np.fmod: _fmod,
    np.gcd: _gcd,
    np.lcm: _lcm,
    np.heaviside: _heaviside,
    np.logaddexp2: _logaddexp2,
    np.ldexp: _ldexp,
    np.modf: _modf,
    # NumPy counts the bits of the absolute value.
    np.bitwise_count: lambda x: ops.convert(ops.unary("stablehlo.popcnt", ops.unary("stablehlo.abs", x) if x.dtype.kind == "i" else x), np.uint8),
}
KERNELS.update(NEW_KERNELS)
for _ufunc in NEW_KERNELS:
    _register(_ufunc)


# --- functions ------------------------------------------------------------------------------------

@implements(np.fix)
def fix(x, out=None):
    if out is not None:
        raise UnsupportedError("numpy.fix(..., out=...) is not supported")
    return np.trunc(x)


@implements(np.isposinf)
def isposinf(x, out=None):
    return np.logical_and(np.isinf(x), np.logical_not(np.signbit(x)))


@implements(np.isneginf)
def isneginf(x, out=None):
    return np.logical_and(np.isinf(x), np.signbit(x))


@implements(np.iscomplex)
def iscomplex(x):
    return np.imag(x) != 0 if np.iscomplexobj(x) else asarray(np.zeros(np.shape(x), dtype=bool))


@implements(np.isreal)
def isreal(x):
    return np.logical_not(iscomplex(x))


@implements(np.nan_to_num)
@keeps_order
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """With ``copy=False``, an array's own values are replaced, and it is returned, as in NumPy."""
    finite = _finite(asarray(x), nan, posinf, neginf)
    if copy or not isinstance(x, TracedArray):
        return finite
    if x.dtype.kind in "fc":
        x[...] = finite
    return x


def _finite(x, nan, posinf, neginf):
    if x.dtype.kind == "c":
        parts = [_finite(part, nan, posinf, neginf) for part in (np.real(x), np.imag(x))]
        return parts[0] + 1j * parts[1]
    if x.dtype.kind != "f":
        return TracedArray(x.value)
    info = np.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    x = np.where(np.isnan(x), nan, x)
    return np.where(np.isposinf(x), big, np.where(np.isneginf(x), small, x)).astype(x.dtype)


@implements(np.sinc)
def sinc(x):
    y = np.multiply(np.pi, np.where(x == 0, 1.0e-20, x))
    return np.sin(y) / y


@implements(np.append)
def append(arr, values, axis=None):
    if axis is None:
        return np.concatenate([np.ravel(arr), np.ravel(values)])
    return np.concatenate([arr, values], axis=axis)


@implements(np.cumulative_sum)
def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative(np.cumsum, 0, x, axis, dtype, out, include_initial)


@implements(np.cumulative_prod)
def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative(np.cumprod, 1, x, axis, dtype, out, include_initial)


def _cumulative(scan, identity, x, axis, dtype, out, include_initial):
    if out is not None:
        raise UnsupportedError("numpy.cumulative_sum/prod(..., out=...) is not supported")
    if axis is None:
        if np.ndim(x) > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument is required.")
        axis = 0
    result = scan(x, axis=axis, dtype=dtype)
    if not include_initial:
        return result
    shape = list(np.shape(result))
    shape[axis_index(axis, len(shape))] = 1
    return np.concatenate([np.full_like(result, identity, shape=shape), result], axis=axis)


def _split_along(name, axis, minimum):
    @implements(getattr(np, name))
    def split(ary, indices_or_sections):
        if np.ndim(ary) < minimum:
            raise ValueError(f"{name} only works on arrays of {minimum} or more dimensions")
        return np.split(ary, indices_or_sections, axis=0 if np.ndim(ary) == 1 else axis)
    return split


_split_along("hsplit", 1, 1)
_split_along("vsplit", 0, 2)
_split_along("dsplit", 2, 3)


@implements(np.rot90)
def rot90(m, k=1, axes=(0, 1)):
    k %= 4
    a0, a1 = axes
    if k == 0:
        return m
    if k == 2:
        return np.flip(np.flip(m, a0), a1)
    perm = list(range(np.ndim(m)))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return np.transpose(np.flip(m, a1), perm) if k == 1 else np.flip(np.transpose(m, perm), a1)


@implements(np.rollaxis)
def rollaxis(a, axis, start=0):
    n = np.ndim(a)
    axis = axis_index(axis, n)
    start = start + n if start < 0 else start
    if not 0 <= start <= n:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    return np.moveaxis(a, axis, start) if axis != start else a


@implements(np.select)
def select(condlist, choicelist, default=0):
    """NumPy's select: the first choice whose condition holds, else ``default``, in the dtype of the
    choices and the default together (Python numbers among them weak, as NumPy's NEP 50 takes them)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    dtype = result_type(*choicelist, default)
    for i, cond in enumerate(condlist):
        if asarray(cond).dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    result = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        result = np.where(cond, choice, result)
    return asarray(result).astype(dtype, copy=False)


@implements(np.trapezoid)
def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = asarray(y)
    ax = axis_index(axis, y.ndim)
    n = y.shape[ax]
    lo = np.take(y, np.arange(0, n - 1), axis=ax)
    hi = np.take(y, np.arange(1, n), axis=ax)
    widths = dx if x is None else np.diff(x, axis=ax if np.ndim(x) > 1 else -1)
    if x is not None and np.ndim(x) == 1:
        shape = [1] * y.ndim
        shape[ax] = n - 1
        widths = np.reshape(widths, shape)
    return np.sum(np.multiply(widths, np.add(lo, hi)) / 2.0, axis=ax)


@implements_ufunc(np.vecdot)
def vecdot(x1, x2, /, *, axis=-1):
    return np.sum(np.multiply(np.conjugate(x1), x2), axis=axis)


@implements_ufunc(np.matvec)
def matvec(x1, x2, /):
    return np.squeeze(np.matmul(x1, np.expand_dims(x2, -1)), -1)


@implements_ufunc(np.vecmat)
def vecmat(x1, x2, /):
    return np.squeeze(np.matmul(np.expand_dims(np.conjugate(x1), -2), x2), -2)


@implements(np.unstack)
def unstack(x, /, *, axis=0):
    return tuple(np.moveaxis(x, axis, 0)[i] for i in range(np.shape(x)[axis]))


@implements(np.putmask)
def putmask(a, mask, values):
    _writable(a, "putmask")
    if np.ndim(values) != 0 and np.shape(values) != np.shape(a):
        raise UnsupportedError("numpy.putmask with values that are neither a scalar nor a's shape repeats them "
                               "in a data-dependent way")
    a[...] = np.where(mask, values, a)


_WEAK_INTO = {"b": "biufc", "i": "iufc", "f": "fc", "c": "c"}  # the kinds of array a Python number is cast into


@implements(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    _writable(dst, "copyto")
    if is_weak(src) and not isinstance(src, TracedArray):
        with numpy_rules():  # a Python number: NumPy's rules for it (NEP 50), and its OverflowError
            np.copyto(np.empty((), dst.dtype), src, casting=casting)
    weak = is_weak(src)  # (a Python number: its kind, not its dtype, decides; NEP 50)
    src = asarray(src)
    if not (weak and (casting == "unsafe" or dst.dtype.kind in _WEAK_INTO.get(src.dtype.kind, "")) or
            not weak and np.can_cast(src.dtype, dst.dtype, casting=casting)):
        raise TypeError(f"Cannot cast array data from {src.dtype!r} to {dst.dtype!r} according to the rule "
                        f"'{casting}'")
    dst[...] = np.where(where, src, dst) if where is not True else src


@implements(np.put)
def put(a, ind, v, mode="raise"):
    _writable(a, "put")
    flat = np.ravel(a)
    n = flat.shape[0]
    if mode == "wrap":
        ind = np.mod(ind, n)
    elif mode == "clip":
        ind = np.clip(ind, 0, n - 1)
    if np.ndim(v) not in (0, np.ndim(ind)) or np.ndim(v) and np.shape(v) != np.shape(ind):
        raise UnsupportedError("numpy.put supports a scalar or one value per index")
    flat[ind] = v
    a[...] = np.reshape(flat, np.shape(a))


@implements(np.put_along_axis)
def put_along_axis(arr, indices, values, axis):
    _writable(arr, "put_along_axis")
    if axis is None:  # (NumPy's: into the flattened array)
        if np.ndim(indices) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr.flat[indices] = values
        return
    ax = axis_index(axis, arr.ndim)
    grid = tuple(indices if d == ax else np.arange(n).reshape([-1 if k == d else 1 for k in range(arr.ndim)])
                 for d, n in enumerate(arr.shape))
    arr[grid] = values


def _writable(a, name):
    if not isinstance(a, TracedArray):
        raise UnsupportedError(f"numpy.{name} writes into its first argument, which must be an array created or "
                               "passed in the compiled function")


@implements(np.resize)
def resize(a, new_shape):
    new_shape = static(new_shape)
    if any(operator.index(d) < 0 for d in np.atleast_1d(new_shape).tolist()):
        raise ValueError("all elements of `new_shape` must be non-negative")
    flat = np.ravel(a)
    size = int(np.prod(new_shape, dtype=np.int64))
    n = np.shape(flat)[0]
    if n == 0 or size == 0:
        return np.zeros(new_shape, dtype=flat.dtype) if size else np.reshape(flat[:0], new_shape)
    repeated = np.tile(flat, -(-size // n))[:size]
    return np.reshape(repeated, new_shape)


@implements(np.delete)
@operation(np.delete)
def delete(arr, obj, axis=None):
    """Of traced positions: one (the rest gathered around it), or several (the rest selected by a mask:
    an array of run-time length, numpy/extent.py)."""
    if isinstance(arr, Bounded):
        _unsupported("numpy.delete")
    arr = asarray(arr) if axis is not None else np.ravel(arr)
    ax = 0 if axis is None else axis_index(axis, arr.ndim)
    n = arr.shape[ax]
    drop = known_value(obj)
    if drop is not None:
        keep = np.ones(n, dtype=bool)
        keep[drop] = False
        return np.take(arr, np.nonzero(keep)[0], axis=ax)
    if np.ndim(as_data(obj)) == 0 and as_data(obj).dtype.kind in "iu":
        numpy_error_if(value((obj < -n) | (obj >= n)),
                       lambda: IndexError(f"index {obj} is out of bounds for axis {ax} with size {n}"))
        lanes = np.arange(n - 1)
        return np.take(arr, lanes + (lanes >= np.where(obj < 0, obj + n, obj)), axis=ax)
    keep = asarray(np.ones(n, dtype=bool))
    keep[obj] = False
    return compress_traced(keep, arr, axis=ax)


@implements(np.trim_zeros)
def trim_zeros(filt, trim="fb", axis=None):
    """A view of the vector between its first and last non-zero elements (a window of run-time length,
    numpy/extent.py), as NumPy's slice is."""
    if not isinstance(filt, TracedArray):
        return np.trim_zeros(filt, trim, axis)
    if filt.ndim != 1 or axis not in (None, 0, -1):
        _unsupported("numpy.trim_zeros of other than a vector")
    trim = trim.lower()
    n = filt.shape[0]
    nonzero = filt != 0
    found = np.any(nonzero) if n else False
    first = np.where(found, np.argmax(nonzero), n) if "f" in trim and n else 0
    stop = np.where(found, n - np.argmax(nonzero[::-1]), 0) if "b" in trim and n else n
    start, length = (value(v, np.int64) for v in (first, np.maximum(stop - first, 0)))
    return Bounded(filt, [Window(start, length)])


@implements(np.insert)
def insert(arr, obj, values, axis=None):
    arr = asarray(arr) if axis is not None else np.ravel(arr)
    ax = 0 if axis is None else axis_index(axis, arr.ndim)
    where = known_value(obj) if isinstance(obj, TracedArray) else obj
    if where is None or np.ndim(where) != 0:
        raise UnsupportedError("numpy.insert supports one compile-time index")
    i = int(where)
    # As NumPy: values get leading 1s up to arr's rank, then their first axis moves to ``axis``.
    values = asarray(values).astype(arr.dtype)
    values = np.moveaxis(np.reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape), 0, ax)
    shape = list(arr.shape)
    shape[ax] = values.shape[ax]
    block = np.broadcast_to(values, shape)
    before = np.take(arr, np.arange(0, i), axis=ax)
    after = np.take(arr, np.arange(i, arr.shape[ax]), axis=ax)
    return np.concatenate([before, block, after], axis=ax)


@implements(np.choose)
def choose(a, choices, out=None, mode="raise"):
    if out is not None:
        raise UnsupportedError("numpy.choose(..., out=...) is not supported")
    n = len(choices)
    a = asarray(a)  # a nested list compares as a whole (``[[0, 1]] == 1`` is False)
    if mode == "raise":
        _in_range(a, n, "invalid entry in choice array")
    index = np.mod(a, n) if mode == "wrap" else np.clip(a, 0, n - 1) if mode == "clip" else a
    result = np.where(index == n - 1, choices[-1], choices[-1])  # broadcast against ``a`` as NumPy does
    for k in range(n - 2, -1, -1):
        result = np.where(index == k, choices[k], result)
    return result.astype(result_type(*choices), copy=False)  # (Python numbers among the choices weak)


@implements(np.compress)
def compress(condition, a, axis=None, out=None):
    known = known_value(condition) if isinstance(condition, TracedArray) else np.asarray(condition)
    if known is None:
        return compress_traced(condition, a, axis, out)
    arr = np.ravel(a) if axis is None else a
    return np.take(arr, np.nonzero(known)[0], axis=0 if axis is None else axis)


@implements(np.diag_indices_from)
def diag_indices_from(arr):
    shape = np.shape(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return np.diag_indices(shape[0], len(shape))


@implements(np.triu_indices_from)
def triu_indices_from(arr, k=0):
    return np.triu_indices(np.shape(arr)[-2], k=k, m=np.shape(arr)[-1])


@implements(np.tril_indices_from)
def tril_indices_from(arr, k=0):
    return np.tril_indices(np.shape(arr)[-2], k=k, m=np.shape(arr)[-1])


@implements(np.polyval)
def polyval(p, x):
    p, x = asarray(p), asarray(x)
    result = np.zeros_like(x)
    for i in range(len(p)):  # Horner's scheme from x's zeros, with p's elements as NumPy scalars, as NumPy
        result = result * x + p[i]
    return result


@implements(np.polyfit)
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """NumPy's least-squares fit, step for step (its Vandermonde matrix, columns scaled to unit norm,
    np.linalg.lstsq); NumPy's RankWarning for an ill-conditioned fit is not raised."""
    if full or cov:
        raise UnsupportedError("numpy.polyfit(full=True) and (cov=True) are not supported; the coefficients alone "
                               "(full=False, cov=False) are")
    order = operator.index(deg) + 1
    x, y = asarray(x) + 0.0, asarray(y) + 0.0
    if order < 1:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    rcond = x.shape[0] * np.finfo(x.dtype).eps if rcond is None else rcond
    lhs, rhs = np.vander(x, order), y
    if w is not None:
        w = asarray(w) + 0.0
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, np.newaxis]
        rhs = rhs * (w[:, np.newaxis] if rhs.ndim == 2 else w)
    scale = np.sqrt((lhs * lhs).sum(axis=0))
    c = np.linalg.lstsq(lhs / scale, rhs, rcond)[0]
    return (c.T / scale).T


@implements(np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None):
    """NumPy's: ``ary[1:] - ary[:-1]`` of the flattened array, between its edges cast to its dtype."""
    ary = np.ravel(asarray(ary))
    diff = ary[1:] - ary[:-1]
    if to_begin is None and to_end is None:
        return diff

    def edge(name, values):
        if values is None:
            return []
        values = asarray(values)
        if not np.can_cast(values.dtype, ary.dtype, casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule.")
        return [np.ravel(values).astype(ary.dtype)]
    return np.concatenate(edge("to_begin", to_begin) + [diff.astype(ary.dtype)] + edge("to_end", to_end))


@implements(np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    if varargs and any(np.ndim(v) for v in varargs) or edge_order != 1:
        raise UnsupportedError("numpy.gradient supports scalar spacings and edge_order=1")
    f = asarray(f)
    axes = list(range(f.ndim)) if axis is None else [axis_index(a, f.ndim) for a in np.atleast_1d(axis)]
    if len(varargs) not in (0, 1, len(axes)):
        raise TypeError("invalid number of arguments")
    spacing = list(varargs) * len(axes) if len(varargs) == 1 else list(varargs) or [1.0] * len(axes)
    otype = f.dtype if f.dtype.kind in "fc" else np.dtype(np.float64)  # NumPy's: integers differenced as floats
    if f.dtype.kind in "iu":
        f = f.astype(np.float64)
    out = []
    for ax, h in zip(axes, spacing):
        n = f.shape[ax]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        take = lambda i: np.take(f, i, axis=ax)  # noqa: E731
        interior = (take(np.arange(2, n)) - take(np.arange(0, n - 2))) / (2.0 * h)
        first = (take(np.arange(1, 2)) - take(np.arange(0, 1))) / h
        last = (take(np.arange(n - 1, n)) - take(np.arange(n - 2, n - 1))) / h
        out.append(np.concatenate([first, interior, last], axis=ax).astype(otype, copy=False))
    return out[0] if len(out) == 1 else tuple(out)


def _kth_checked(a, kth, axis, kind):
    """NumPy's checks of a partition's ``kth`` (integers within the axis) and ``kind``."""
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    if isinstance(kth, TracedArray):
        if kth.dtype.kind not in "iu":
            raise TypeError("Partition index must be integer")
        kth = known_value(kth)
        if kth is None:
            return  # (a full sort partitions at every position)
    n = np.shape(a)[axis_index(axis, np.ndim(a))] if axis is not None else int(np.prod(np.shape(a)))
    for k in np.atleast_1d(kth):
        if not np.issubdtype(np.asarray(k).dtype, np.integer):
            raise TypeError("Partition index must be integer")
        if not -n <= k < n:
            raise ValueError(f"kth(={k + n if k < 0 else k}) out of bounds ({n})")


@implements(np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None):
    _kth_checked(a, kth, axis, kind)
    return np.sort(a, axis=axis)  # a full sort is one valid partition for every kth


@implements(np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    _kth_checked(a, kth, axis, kind)
    return np.argsort(a, axis=axis)


@implements(np.lexsort)
def lexsort(keys, axis=-1):
    keys = [asarray(k) for k in keys]
    order = np.argsort(keys[0], axis=axis, kind="stable")
    for key in keys[1:]:
        order = np.take_along_axis(order, np.argsort(np.take_along_axis(key, order, axis=axis), axis=axis,
                                                     kind="stable"), axis=axis)
    return order


@implements(np.sort_complex)
def sort_complex(a):
    return np.sort(a).astype(np.result_type(np.asarray(0, dtype=a.dtype), np.complex64))


@implements(np.can_cast)
def can_cast(from_, to, casting="safe"):
    return np.can_cast(from_.dtype if isinstance(from_, TracedArray) else from_, to, casting)


@implements(np.common_type)
def common_type(*arrays):
    return np.common_type(*[np.empty(0, a.dtype) if isinstance(a, TracedArray) else a for a in arrays])


def _memory_question(numpy_answer):
    def answer(a, b, max_work=None):
        """Whether ``a`` and ``b`` share memory: not unless they view one owner's storage, and then
        NumPy's own answer for their strides (interleaved or disjoint slices do not)."""
        shared = share_storage(a, b)
        both = isinstance(a, TracedArray) and isinstance(b, TracedArray)
        if shared is False and both:  # (views of two arguments: of one array or not, at every call)
            asked = asked_of_arguments(a, b, numpy_answer)
            return shared if asked is None else asked
        fakes = in_one_memory(a, b) if shared is True and both else None
        return shared if fakes is None else bool(numpy_answer(*fakes))
    return answer


implements(np.shares_memory)(_memory_question(np.shares_memory))
implements(np.may_share_memory)(_memory_question(np.may_share_memory))


@implements(np.array_equiv)
def array_equiv(a1, a2):
    try:
        np.broadcast_shapes(np.shape(a1), np.shape(a2))
    except ValueError:
        return False
    return np.all(np.equal(a1, a2))


def _in_range(values, n, message):
    """NumPy's ValueError(message) where an element of the integer array ``values`` is outside
    [0, n): now where they are known, after the call where they are traced."""
    known = known_value(values)
    if known is not None:
        if np.any((np.asarray(known) < 0) | (np.asarray(known) >= n)):
            raise ValueError(message)
        return
    check_range(values, 0, n - 1, lambda first: ValueError(message.format(first=first)))


@implements(np.unravel_index)
def unravel_index(indices, shape, order="C"):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    size = math.prod(shape)
    indices = asarray(indices)
    _in_range(indices, size, "index {first} is out of bounds for array with size " + str(size))
    dims = shape[::-1] if order == "C" else shape
    out, rest = [], indices
    for n in dims:
        out.append(np.mod(rest, n))
        rest = np.floor_divide(rest, n)
    return tuple(out[::-1] if order == "C" else out)


@implements(np.ravel_multi_index)
def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    strides = np.cumprod((1,) + tuple(dims[::-1]))[:-1][::-1] if order == "C" else np.cumprod((1,) + tuple(dims))[:-1]
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    total = 0
    for index, stride, n, how in zip(multi_index, strides, dims, modes):
        index = asarray(index)
        if how == "raise":
            _in_range(index, n, "invalid entry in coordinates array")
        index = np.mod(index, n) if how == "wrap" else np.clip(index, 0, n - 1) if how == "clip" else index
        total = np.add(total, np.multiply(index, int(stride)))
    return total


def _spaced(numpy_function, name):
    @constructs(numpy_function)
    def spaced(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
        if any(isinstance(v, TracedArray) for v in (start, stop, base)):
            raise UnsupportedError(f"numpy.{name} with traced bounds is not supported")
        return asarray(numpy_function(start, stop, num, endpoint, base, dtype, axis) if name == "logspace"
                       else numpy_function(start, stop, num, endpoint, dtype, axis))


_spaced(np.logspace, "logspace")
_spaced(np.geomspace, "geomspace")


@implements(np.block)
def block(arrays):
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0

    def assemble(x, level, total):
        if not isinstance(x, list):
            return asarray(x)
        parts = [assemble(p, level + 1, total) for p in x]
        ndim = max(total, max(p.ndim for p in parts))
        parts = [np.reshape(p, (1,) * (ndim - p.ndim) + p.shape) for p in parts]
        return np.concatenate(parts, axis=-(total - level))
    return assemble(arrays, 0, depth(arrays))


@implements(np.piecewise)
@keeps_order
def piecewise(x, condlist, funclist, *args, **kw):
    """NumPy's piecewise: each function is called on the elements its condition selects (``x[cond]``,
    an array of run-time length), as NumPy calls it, so one that reads several elements (a mean, a
    length) sees only those; later conditions win where they overlap."""
    x = asarray(x)
    first = None if np.isscalar(condlist) else condlist[0]
    if first is None or not (isinstance(first, (list, np.ndarray)) or isinstance(first, TracedArray) and first.ndim) \
            and x.ndim != 0:
        condlist = [condlist]
    conditions = [asarray(c).astype(np.bool_) for c in condlist]
    if len(funclist) == len(conditions) + 1:
        conditions.append(np.logical_not(np.any(np.stack([np.broadcast_to(c, x.shape) for c in conditions]), axis=0)))
    elif len(funclist) != len(conditions):
        raise ValueError(f"with {len(conditions)} condition(s), either {len(conditions)} or {len(conditions) + 1} "
                         "functions are expected")
    result = np.zeros_like(x)
    for cond, func in zip(conditions, funclist):
        if x.ndim == 0:  # (the one element, chosen or not)
            result = np.where(cond, func(x, *args, **kw) if callable(func) else func, result).astype(x.dtype)
        elif callable(func):
            result = _written_where_selected(result, x, cond, lambda v: func(v, *args, **kw))
        else:
            result[cond] = func
    return result


def _written_where_selected(result, x, cond, func):
    """``result`` with ``func(x[cond])`` written where ``cond`` holds; ``func`` runs only where some
    element is selected (a branch), as NumPy calls it, so its reduction of none raises nothing."""
    def written():
        out = result.copy()
        out[cond] = func(x[cond])
        return out
    frame = user_frame()
    return cond_value(np.any(cond), written, lambda: result, Scope(frame), frame.f_lineno if frame else 0)


@implements(np.apply_along_axis)
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    arr = asarray(arr)
    ax = axis_index(axis, arr.ndim)
    moved = np.moveaxis(arr, ax, -1)
    outer = moved.shape[:-1]
    results = [func1d(moved[index], *args, **kwargs) for index in np.ndindex(*outer)]
    stacked = np.stack([asarray(r) for r in results])
    out = np.reshape(stacked, outer + np.shape(results[0]))
    return np.moveaxis(out, list(range(len(outer), out.ndim)), list(range(ax, ax + out.ndim - len(outer)))) \
        if out.ndim > len(outer) else out


@implements(np.unwrap)
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """NumPy's unwrap, step for step: in the dtype of the differences and the period together, so an
    integer signal with an integer period stays an integer one (and an odd period has no ambiguous
    boundary)."""
    p = asarray(p)
    ax = axis_index(axis, p.ndim)
    dd = np.diff(p, axis=ax)
    discont = period / 2 if discont is None else discont
    dtype = result_type(dd, period)
    if dtype.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    ddmod = np.mod(dd - low, period) + low
    if ambiguous:  # (abs(dd) == period / 2: the sign of dd's own)
        ddmod = np.where((ddmod == low) & (dd > 0), high, ddmod)
    correction = np.where(np.abs(dd) < discont, 0, ddmod - dd)
    later = [slice(None)] * p.ndim
    later[ax] = slice(1, None)
    unwrapped = p.astype(dtype)
    unwrapped[tuple(later)] = p[tuple(later)] + np.cumsum(correction, axis=ax)
    return unwrapped


@implements(np.linalg.vecdot)
def linalg_vecdot(x1, x2, /, *, axis=-1):
    return np.vecdot(x1, x2, axis=axis)


@implements(np.linalg.cross)
def linalg_cross(x1, x2, /, *, axis=-1):
    if np.shape(x1)[axis] != 3 or np.shape(x2)[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, "
                         f"but they are {np.shape(x1)[axis]} and {np.shape(x2)[axis]} dimensional instead.")
    return np.cross(x1, x2, axis=axis)


@constructs(np.ndenumerate)
def ndenumerate(arr):
    """``np.ndenumerate`` of a traced array: each index with the element there, in C order."""
    if not isinstance(arr, TracedArray):
        return np.ndenumerate(arr)
    return ((index, arr[index]) for index in np.ndindex(arr.shape))


@implements(np.packbits)
def packbits(a, axis=None, bitorder="big"):
    """Each run of 8 elements along ``axis`` (nonzero: a 1 bit, zero-padded at the end) as a uint8."""
    a = asarray(a)
    if a.dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    if axis is None:
        a, axis = np.ravel(a), 0
    bits = np.moveaxis((a != 0).astype(np.uint8), axis_index(axis, a.ndim), -1)
    padded = -bits.shape[-1] % 8
    if padded:
        bits = np.concatenate([bits, np.zeros((*bits.shape[:-1], padded), np.uint8)], axis=-1)
    bits = bits.reshape(*bits.shape[:-1], bits.shape[-1] // 8, 8)
    weights = np.left_shift(np.uint8(1), _bit_positions(bitorder))
    return np.moveaxis((bits * weights).sum(axis=-1, dtype=np.uint8), -1, axis_index(axis, a.ndim))


@implements(np.unpackbits)
def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array along ``axis``, 8 elements for each (``count``: that many, or that
    many fewer if negative, zero-padded past the end)."""
    a = asarray(a)
    if a.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if not isinstance(bitorder, str) or bitorder[:1] not in ("l", "b"):
        raise ValueError("'order' must begin with 'l' or 'b'")
    if axis is None:
        a, axis = np.ravel(a), 0
    ax = axis_index(axis, a.ndim)
    bytes_last = np.moveaxis(a, ax, -1)
    bits = np.right_shift(bytes_last[..., None], _bit_positions(bitorder)) & np.uint8(1)
    bits = bits.reshape(*bits.shape[:-2], bits.shape[-2] * 8)
    total = bits.shape[-1]
    wanted = total if count is None else count if count >= 0 else total + count
    if wanted < 0:
        raise ValueError("-count larger than number of elements")
    if wanted > total:
        bits = np.concatenate([bits, np.zeros((*bits.shape[:-1], wanted - total), np.uint8)], axis=-1)
    return np.moveaxis(bits[..., :wanted], -1, ax)


def _bit_positions(bitorder) -> np.ndarray:
    """The bit of each of a byte's 8 elements, first element first."""
    return np.arange(8, dtype=np.uint8)[::-1 if bitorder[0] == "b" else 1]


def _traced_items(items) -> bool:
    """Whether ``items`` (an index: a tuple, or one item) holds a traced value, also as a slice's bound."""
    flat = []
    for item in items if isinstance(items, tuple) else (items,):
        flat += [item.start, item.stop, item.step] if isinstance(item, slice) else [item]
    return any(isinstance(item, TracedArray) for item in flat)


def _made_by_numpy(obj, name):
    """``obj[items]`` for an object NumPy indexes to make arrays (np.mgrid, np.ogrid), of items known now:
    NumPy's arrays, as arrays the function made (so that it can write traced values into them)."""
    def index(items):
        if _traced_items(items):
            raise UnsupportedError(f"numpy.{name} with traced bounds is not supported by cofactor (the shape would "
                                   "depend on them): use np.arange / np.linspace with known lengths")
        made = obj[items]
        return asarray(made) if isinstance(made, np.ndarray) else type(made)(asarray(m) for m in made)
    return index


indexed(np.mgrid)(_made_by_numpy(np.mgrid, "mgrid"))
indexed(np.ogrid)(_made_by_numpy(np.ogrid, "ogrid"))


@constructs(np.indices)
def indices(dimensions, dtype=int, sparse=False):
    made = np.indices(dimensions, dtype, sparse)
    return asarray(made) if isinstance(made, np.ndarray) else tuple(asarray(m) for m in made)


@constructs(np.fromfunction)
def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """NumPy's: ``function`` of the index arrays (made here, so that they are traced arrays)."""
    return function(*indices(shape, dtype=dtype), **kwargs)


@constructs(np.fromiter)
def fromiter(iterable, dtype, count=-1, *, like=None):
    """NumPy's, of the first ``count`` items (all where it is -1), which may be traced numbers (a
    generator over an array's elements): NumPy's array of them, and its errors for too few items
    or ones that are not numbers."""
    items = []
    for item in iterable:
        if len(items) == count:
            break
        if isinstance(item, TracedArray) and item.ndim:
            raise ValueError("setting an array element with a sequence.")
        items.append(item)
    if count >= 0 and len(items) < count:
        raise ValueError(f"iterator too short: Expected {count} but iterator had only {len(items)} items.")
    if not any(isinstance(item, TracedArray) for item in items):
        return asarray(np.fromiter(items, dtype, count))
    return array(items, dtype=dtype)


def _concatenator(axis: int, ndmin: int, transposed_1d: int):
    """``np.r_[...]`` and ``np.c_[...]`` of arrays and numbers (NumPy's AxisConcatenator): each item made
    an array of at least ``ndmin`` axes (a 1-d one made a column for np.c_), all in the dtype NumPy
    promotes them to, joined along ``axis``.  Slices and string directives are NumPy's only (of items
    known now: NumPy's result, as an array the function made)."""
    concatenator = np.r_ if axis == 0 else np.c_

    def index(items):
        items = items if isinstance(items, tuple) else (items,)
        if not _traced_items(items) and any(isinstance(item, (slice, str)) for item in items):
            return asarray(concatenator[items])
        if any(isinstance(item, str) or isinstance(item, slice) and _traced_items((item.start, item.stop, item.step))
               for item in items):
            raise UnsupportedError("numpy.r_ / numpy.c_ with string directives or traced slice bounds among traced "
                                   "arrays is not supported by cofactor: use np.concatenate and np.arange")
        items = tuple(np.r_[item] if isinstance(item, slice) else item for item in items)  # (a range, as NumPy's)
        dtype = result_type(*[item.data if defers_tracing(item) else item for item in items])
        parts = []
        for item in items:
            if defers_tracing(item):  # (of a run-time length, np.r_[np.flatnonzero(m), n]: already of ndmin axes)
                if item.ndim < ndmin:
                    raise UnsupportedError("numpy.c_ of a 1-d array whose length is known only at run time is not "
                                           "supported: use np.stack(..., axis=1)")
                parts.append(item.astype(dtype))
                continue
            part = array(item, dtype=dtype, copy=None, ndmin=ndmin)
            added = ndmin - np.ndim(item)
            if added > 0 and transposed_1d >= 0:  # (NumPy's axes for the item's own: np.c_ makes a 1-d item a column)
                axes = list(range(ndmin))
                part = np.transpose(part, axes[:transposed_1d] + axes[added:] + axes[transposed_1d:added])
            parts.append(part)
        return np.concatenate(parts, axis=axis)
    return index


indexed(np.r_)(_concatenator(0, 1, -1))
indexed(np.c_)(_concatenator(-1, 2, 0))
