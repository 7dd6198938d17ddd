"""Reductions and scans: sum, prod, mean, var, std, max, min, argmax, argmin, any, all,
cumsum, cumprod, ptp.

Result dtypes are asked of NumPy itself (the function applied to a one-element
array of the input dtype), so integer upcasting and float16 rules match exactly.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from ..errors import UnsupportedError
from ..ir import ops
from ..tracing.derivatives import is_differentiating
from ..tracing.dispatch import implements
from ._core import axis_index, axis_tuple, compare, convert_like_numpy, full, reject, value, with_value_bounds, wrap
from .ufuncs import KERNELS, apply

_NO = np._NoValue


def numpy_dtype(func, input_dtype, **kwargs) -> np.dtype:
    """The dtype NumPy's ``func`` returns for an input of ``input_dtype``."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(func(np.ones(1, input_dtype), **kwargs)).dtype


def _keep(v, axes, keepdims, ndim):
    if not keepdims:
        return v
    shape = list(v.shape)
    for a in axes:
        shape.insert(a, 1)
    return ops.reshape(v, shape) if len(shape) == ndim else v


def _identity(ufunc, dtype):
    """The value that leaves ``ufunc``'s reduction unchanged, for ``dtype``."""
    dtype = np.dtype(dtype)
    if ufunc in (np.add, np.logical_or, np.bitwise_or, np.bitwise_xor, np.gcd):
        return 0
    if ufunc in (np.multiply, np.logical_and, np.lcm):
        return 1
    if ufunc is np.bitwise_and:
        return True if dtype.kind == "b" else ~np.zeros((), dtype)  # every bit set
    if ufunc in (np.fmax, np.fmin) and dtype.kind in "fc":
        return np.nan  # (fmax(nan, x) is x; of all NaNs, NaN, as NumPy's)
    larger = ufunc in (np.maximum, np.fmax)
    if dtype.kind == "b":
        return not larger
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if larger else info.max
    return -np.inf if larger else np.inf


def reduce_ufunc(v, axes, ufunc):
    """Reduce IR value ``v`` over ``axes`` with a binary ufunc's kernel (no dtype change)."""
    if not axes:
        return v
    if ufunc is np.multiply and v.dtype.kind in "fc" and is_differentiating():
        return _pairwise_product(v, axes)
    if ufunc in (np.fmax, np.fmin) and v.dtype.kind == "f":
        # maximum (minimum) of the values that are not NaN, NaN where all are: a reduction of a plain
        # maximum, which Enzyme differentiates (not fmax's NaN selects)
        plain = np.maximum if ufunc is np.fmax else np.minimum
        nan = ops.compare(v, v, "NE")
        kept = ops.select(nan, ops.broadcast_in_dim(ops.constant(np.array(_identity(plain, v.dtype), v.dtype)),
                                                    v.shape, ()), v)
        every = ops.reduce([nan], [ops.constant(np.array(True))], axes,
                           lambda acc, x: [ops.binary("stablehlo.and", acc, x)])[0]
        r = reduce_ufunc(kept, axes, plain)
        return ops.select(every, ops.broadcast_in_dim(ops.constant(np.array(np.nan, v.dtype)), r.shape, ()), r)
    init = ops.constant(np.array(_identity(ufunc, v.dtype), dtype=v.dtype))
    kernel = KERNELS[ufunc]
    if ufunc in (np.maximum, np.minimum) and v.dtype.kind == "f":  # (Enzyme differentiates a reduction of these;
        kernel = functools.partial(ops.binary, f"stablehlo.{ufunc.__name__}")  # NumPy's select of equals, not)
    return ops.reduce([v], [init], axes, lambda acc, x: [kernel(acc, x)])[0]


def _pairwise_product(v, axes):
    """The product over ``axes`` as log2(n) halving multiplications: Enzyme's forward mode has no
    rule for a multiplying stablehlo.reduce."""
    rank = v.type.rank
    kept = [d for d in range(rank) if d not in axes]
    rest = [v.shape[d] for d in kept]
    n = int(np.prod([v.shape[d] for d in axes]))
    x = ops.reshape(ops.transpose(v, kept + list(axes)), (*rest, n))
    one = ops.constant(np.ones((), v.dtype))
    while n > 1:
        if n % 2:
            x = ops.pad(x, one, [0] * len(rest) + [0], [0] * len(rest) + [1])
            n += 1
        half = n // 2
        x = ops.binary("stablehlo.multiply", ops.slice(x, [0] * len(rest) + [0], [*rest, half]),
                       ops.slice(x, [0] * len(rest) + [half], [*rest, n]))
        n = half
    if n == 0:
        return ops.broadcast_in_dim(one, tuple(rest), ())
    return ops.reshape(x, tuple(rest))


def _reduction(ufunc, name, empty_ok):
    func = getattr(np, name)

    def impl(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO, where=_NO):
        reject(f"numpy.{name}", out=(out, None))
        if where is not _NO and where is not True:  # (the masked-out elements: the identity, or initial)
            if initial is _NO and not empty_ok:
                raise ValueError(f"reduction operation '{ufunc.__name__}' does not have an identity, so to use a "
                                 "where mask one has to specify 'initial'")
            fill = initial if initial is not _NO and not empty_ok else (0 if ufunc is np.add else 1)
            a = np.where(where, a, np.asarray(fill, value(a).dtype))
        v = value(a)
        axes = axis_tuple(axis, v.type.rank)
        if not empty_ok and initial is _NO and any(v.shape[i] == 0 for i in axes):
            raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} which has no identity")
        result_dtype = numpy_dtype(func, v.dtype, dtype=dtype) if dtype is not None or ufunc in (np.add, np.multiply) \
            else v.dtype
        r = reduce_ufunc(convert_like_numpy(v, result_dtype), axes, ufunc)
        if initial is not _NO:
            r = value(apply(ufunc, wrap(r), initial))
            r = convert_like_numpy(r, result_dtype)
        return wrap(_keep(r, axes, keepdims, v.type.rank))
    return impl


implements(np.sum)(_reduction(np.add, "sum", empty_ok=True))
implements(np.prod)(_reduction(np.multiply, "prod", empty_ok=True))


def _extremum(name, ufunc):
    reduction = _reduction(ufunc, name, empty_ok=False)

    @implements(getattr(np, name), getattr(np, "a" + name))
    def impl(a, axis=None, out=None, keepdims=False, initial=_NO, where=_NO):
        return reduction(a, axis, None, out, keepdims, initial, where)
    return impl


_extremum("max", np.maximum)
_extremum("min", np.minimum)


def _logical(name, ufunc):
    @implements(getattr(np, name))
    def impl(a, axis=None, out=None, keepdims=False, *, where=_NO):
        reject(f"numpy.{name}", out=(out, None))
        v = value(a)
        truthy = KERNELS[np.not_equal](v, full(v.shape, 0, v.dtype)) if v.dtype.kind != "b" else v
        if where is not _NO and where is not True:  # (the masked-out elements: any's False, all's True)
            truthy = value(np.where(where, wrap(truthy), ufunc is np.logical_and))
        axes = axis_tuple(axis, v.type.rank)
        return wrap(_keep(reduce_ufunc(truthy, axes, ufunc), axes, keepdims, v.type.rank))
    return impl


_logical("any", np.logical_or)
_logical("all", np.logical_and)


def _require_inexact(name, dtype):
    """mean/var/std with an integer or bool ``dtype=`` truncate in ways not worth imitating."""
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise UnsupportedError(f"numpy.{name}(..., dtype={np.dtype(dtype)}) is not supported by cofactor; "
                               "only float and complex dtypes are")


def _count(shape, axes) -> int:
    return int(np.prod([shape[i] for i in axes], dtype=np.int64))


@implements(np.mean)
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NO):
    reject("numpy.mean", out=(out, None))
    _require_inexact("mean", dtype)
    v = value(a)
    if where is not _NO and where is not True:  # the masked elements' sum over how many there are, as NumPy
        kept = np.broadcast_to(where, np.shape(a))  # (sums ints in float64, float16 in float32; casts back)
        summed = dtype if dtype is not None else np.float64 if v.dtype.kind in "biu" else \
            np.float32 if v.dtype == np.float16 else None
        total = np.sum(a, axis=axis, dtype=summed, keepdims=keepdims, where=kept)
        return np.true_divide(total, np.sum(kept, axis=axis, keepdims=keepdims)).astype(
            numpy_dtype(np.mean, v.dtype, dtype=dtype))
    axes = axis_tuple(axis, v.type.rank)
    result_dtype = numpy_dtype(np.mean, v.dtype, dtype=dtype)
    # NumPy accumulates float16 means in float32.
    acc_dtype = np.float32 if result_dtype == np.float16 and dtype is None else result_dtype
    total = reduce_ufunc(ops.convert(v, acc_dtype), axes, np.add)
    count = full(total.shape, _count(v.shape, axes), acc_dtype)
    r = convert_like_numpy(ops.binary("stablehlo.divide", total, count), result_dtype)
    return wrap(_keep(r, axes, keepdims, v.type.rank))


def _variance(v, axes, ddof, dtype, result_dtype):
    """As NumPy: in ``dtype`` if given, else in float64 for integers and bools."""
    acc = np.dtype(dtype if dtype is not None else np.float64 if v.dtype.kind in "biu" else v.dtype)
    x = ops.convert(v, acc)
    n = _count(v.shape, axes)
    total = reduce_ufunc(x, axes, np.add)
    mean_v = ops.binary("stablehlo.divide", total, full(total.shape, n, acc))
    dims = [d for d in range(v.type.rank) if d not in axes]
    centered = ops.binary("stablehlo.subtract", x, ops.broadcast_in_dim(mean_v, x.shape, dims))
    if acc.kind == "c":
        sq = ops.binary("stablehlo.add", *[ops.binary("stablehlo.multiply", p, p)
                                            for p in (ops.real(centered), ops.imag(centered))])
    else:
        sq = ops.binary("stablehlo.multiply", centered, centered)
    ssum = reduce_ufunc(sq, axes, np.add)
    var = ops.binary("stablehlo.divide", ssum, full(ssum.shape, max(n - ddof, 0), ssum.dtype))
    return convert_like_numpy(var, result_dtype)


def _spread(name, root):
    func = getattr(np, name)

    @implements(func)
    def impl(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NO, mean=_NO, correction=_NO):
        reject(f"numpy.{name}", out=(out, None), where=(where, _NO), mean=(mean, _NO))
        if correction is not _NO:
            ddof = correction
        _require_inexact(name, dtype)
        v = value(a)
        axes = axis_tuple(axis, v.type.rank)
        result_dtype = numpy_dtype(func, v.dtype, dtype=dtype)
        r = _variance(v, axes, ddof, dtype, result_dtype)
        if root:
            r = ops.unary("stablehlo.sqrt", r)
        return wrap(_keep(r, axes, keepdims, v.type.rank))
    return impl


_spread("var", root=False)
_spread("std", root=True)


def _arg_extremum(name, ufunc):
    @implements(getattr(np, name))
    def impl(a, axis=None, out=None, *, keepdims=False):
        reject(f"numpy.{name}", out=(out, None))
        v = value(a)
        if axis is None:
            v = ops.reshape(v, (v.type.size,))
            ax = 0
        else:
            ax = axis_index(axis, v.type.rank)
        if v.shape[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        index = ops.iota(v.shape, np.int64, ax)
        n = full(v.shape, v.shape[ax], np.int64)
        if v.dtype.kind in "iuf" and not is_differentiating():
            r = _first_extremum(v, index, ax, "LT" if ufunc is np.minimum else "GT")
        else:
            # First index of the extremum (or of the first NaN), as two single-operand reductions,
            # which Enzyme can differentiate through (a variadic reduce it cannot).
            best = ops.broadcast_in_dim(reduce_ufunc(v, (ax,), ufunc), v.shape,
                                        [d for d in range(v.type.rank) if d != ax])
            hit = compare(v, best, "EQ")
            if v.dtype.kind in "fc":
                hit = ops.binary("stablehlo.or", hit, KERNELS[np.isnan](v))
            r = reduce_ufunc(ops.select(hit, index, n), (ax,), np.minimum)
        if keepdims:
            ndim = np.ndim(a)
            r = ops.reshape(r, (1,) * ndim) if axis is None else _keep(r, (ax,), True, ndim)
        return with_value_bounds(wrap(r), 0, v.shape[ax] - 1)
    return impl


def _first_extremum(v, index, ax, better):
    """The index of the first extremum along ``ax`` (of the first NaN, if any), in one pass: a reduce
    of (value, index) pairs keeping the better value, NaN before any number, and of equals the first."""
    dtype = v.dtype
    worst = (np.inf if better == "LT" else -np.inf) if dtype.kind == "f" else \
        (np.iinfo(dtype).max if better == "LT" else np.iinfo(dtype).min)

    def keep(a, i, b, j):
        def pick(x):
            return ops.select(x, b, a), ops.select(x, j, i)
        earlier = compare(j, i, "LT")
        takes = ops.binary("stablehlo.or", compare(b, a, better),
                           ops.binary("stablehlo.and", compare(b, a, "EQ"), earlier))
        if dtype.kind == "f":
            a_nan, b_nan = compare(a, a, "NE"), compare(b, b, "NE")
            both = ops.binary("stablehlo.and", a_nan, b_nan)
            takes = ops.select(both, earlier, ops.select(a_nan, ops.constant(np.asarray(False)),
                                                          ops.binary("stablehlo.or", b_nan, takes)))
        return list(pick(takes))

    inits = [ops.constant(np.asarray(worst, dtype)), ops.constant(np.asarray(v.shape[ax], np.int64))]
    return ops.reduce([v, index], inits, [ax], keep)[1]


_arg_extremum("argmax", np.maximum)
_arg_extremum("argmin", np.minimum)


@implements(np.ptp)
def ptp(a, axis=None, out=None, keepdims=False):
    return np.subtract(np.max(a, axis=axis, keepdims=keepdims), np.min(a, axis=axis, keepdims=keepdims))


def scan(v, axis, ufunc):
    """Inclusive prefix scan of ``v`` along ``axis`` by ``ufunc`` (ops.prefix_scan)."""
    identity = ops.constant(np.array(_identity(ufunc, v.dtype), dtype=v.dtype))
    return ops.prefix_scan(v, axis, KERNELS[ufunc], identity)


def _cumulative(name, ufunc):
    func = getattr(np, name)

    @implements(func)
    def impl(a, axis=None, dtype=None, out=None):
        reject(f"numpy.{name}", out=(out, None))
        v = value(a)
        if axis is None:
            v = ops.reshape(v, (v.type.size,))
            axis = 0
        ax = axis_index(axis, v.type.rank)
        result_dtype = numpy_dtype(func, v.dtype, dtype=dtype)
        return wrap(scan(convert_like_numpy(v, result_dtype), ax, ufunc))
    return impl


_cumulative("cumsum", np.add)
_cumulative("cumprod", np.multiply)


@implements(np.count_nonzero)
def count_nonzero(a, axis=None, *, keepdims=False):
    v = value(a)
    truthy = KERNELS[np.not_equal](v, full(v.shape, 0, v.dtype)) if v.dtype.kind != "b" else v
    axes = axis_tuple(axis, v.type.rank)
    r = reduce_ufunc(ops.convert(truthy, np.int64), axes, np.add)
    return wrap(_keep(r, axes, keepdims, v.type.rank))


