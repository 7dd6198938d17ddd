"""Elementwise ufuncs.

NumPy's own type resolution (``ufunc.resolve_dtypes``, NEP 50 aware) picks
each call's loop dtypes; a kernel here only computes on operands already
converted and broadcast to that loop.  One table entry per ufunc.
"""
from __future__ import annotations

import math
import operator

import warnings

import numpy as np

from ..errors import UnsupportedError, numpy_rules
from ..ir import ops
from ..ir.core import Value
from ..tracing import checks
from ..tracing.array import TracedArray
from ..tracing.derivatives import is_differentiating
from ..tracing.dispatch import implements, implements_ufunc
from ..tracing.python_ints import divided_exactly
from ..tracing.views import ComplexPart, ReadOnly, Reshape, ordered
from ._core import (array_like, broadcast_values, compare, convert_like_numpy, dtype_of, full, is_weak, keeps_order,
                    known_value, reject, result_type, take_1d, value, value_bounds, view, wrap)

# --- building blocks on IR values -------------------------------------------------------


def _op(name):
    return lambda *vs: ops.unary(name, vs[0]) if len(vs) == 1 else ops.binary(name, *vs)


def _like(x, fill):
    return full(x.shape, fill, x.dtype)


def _is(kind, x):
    return x.dtype.kind in kind


def signbit(x):
    """The sign bit of a float (set for -0.0 and negative NaNs too)."""
    as_int = ops.bitcast_convert(x, np.dtype(f"i{x.dtype.itemsize}"))
    return compare(as_int, full(x.shape, 0, as_int.dtype), "LT")


def _copysign(x, y):
    """|x| with the sign bit of y."""
    ax = ops.unary("stablehlo.abs", x)
    return ops.select(signbit(y), ops.unary("stablehlo.negate", ax), ax)


def _isnan(x):
    if _is("c", x):
        return ops.binary("stablehlo.or", _isnan(ops.real(x)), _isnan(ops.imag(x)))
    if not _is("f", x):
        return full(x.shape, False, np.bool_)
    return compare(x, x, "NE")


def _isinf(x):
    if _is("c", x):
        return ops.binary("stablehlo.or", _isinf(ops.real(x)), _isinf(ops.imag(x)))
    if not _is("f", x):
        return full(x.shape, False, np.bool_)
    return compare(ops.unary("stablehlo.abs", x), _like(x, np.inf), "EQ")


def _isfinite(x):
    if _is("c", x):
        return ops.binary("stablehlo.and", _isfinite(ops.real(x)), _isfinite(ops.imag(x)))
    if not _is("f", x):
        return full(x.shape, True, np.bool_)
    return ops.unary("stablehlo.is_finite", x, np.bool_)


def _truthy(x):
    return x if _is("b", x) else compare(x, _like(x, 0), "NE")


def _logical(name):
    return lambda *vs: ops.binary(name, *[_truthy(v) for v in vs])


def _compare_mixed_sign(x, y, direction):
    """NumPy's exact int64-against-uint64 loop: a negative int64 is below every uint64."""
    signed = x if _is("i", x) else y
    negative = compare(signed, _like(signed, 0), "LT")
    below = direction in (("LT", "LE", "NE") if signed is x else ("GT", "GE", "NE"))
    unsigned = [ops.convert(v, np.uint64) for v in (x, y)]
    return ops.select(negative, full(negative.shape, below, np.bool_), compare(*unsigned, direction))


def _compare(direction):
    def kernel(x, y):
        if x.dtype != y.dtype:
            return _compare_mixed_sign(x, y, direction)
        if _is("c", x) and direction not in ("EQ", "NE"):
            # NumPy orders complex numbers lexicographically; a NaN in either part of either is unordered.
            xr, yr, xi, yi = ops.real(x), ops.real(y), ops.imag(x), ops.imag(y)
            strict = direction[0] + "T"
            ordered = ops.binary("stablehlo.or", compare(xr, yr, strict),
                                 ops.binary("stablehlo.and", compare(xr, yr, "EQ"), compare(xi, yi, direction)))
            return ops.binary("stablehlo.and", ordered, ops.unary("stablehlo.not", ops.binary(
                "stablehlo.or", _isnan(x), _isnan(y))))
        return compare(x, y, direction)
    return kernel


def _extremum(name, direction):
    """NumPy's maximum (minimum): x where it is greater (less) or NaN, else y, so of -0.0 and 0.0 the
    second (float16's loop keeps the first: greater or equal), and NaN wherever either is
    (stablehlo.maximum takes 0.0 over -0.0 whichever comes first)."""
    def kernel(x, y):
        if _is("b", x):
            return ops.binary("stablehlo.or" if name == "maximum" else "stablehlo.and", x, y)
        if _is("c", x):
            pick = ops.select(_compare(direction)(x, y), x, y)
            return ops.select(_isnan(x), x, ops.select(_isnan(y), y, pick))
        if _is("f", x):
            keeps = compare(x, y, direction[0] + ("E" if x.dtype == np.float16 else "T"))
            return ops.select(ops.binary("stablehlo.or", keeps, _isnan(x)), x, y)
        return ops.binary(f"stablehlo.{name}", x, y)
    return kernel


def _nan_ignoring(extremum):
    def kernel(x, y):
        result = extremum(x, y)
        if not _is("fc", x):
            return result
        return ops.select(_isnan(y), x, ops.select(_isnan(x), y, result))
    return kernel


def _int_divmod(a, b):
    """NumPy integer floor division and modulo; division by zero gives 0 for both."""
    zero, one = _like(a, 0), _like(a, 1)
    known = getattr(b.owner, "literal", None) if b.owner is not None else None
    if known is not None:  # a constant divisor's zeros never reach the program: Enzyme-JAX's folding of a constant
        known = np.broadcast_to(known, b.shape)  # divided by one kills its worker (SIGFPE)
        by_zero, b = ops.constant(known == 0), ops.constant(np.where(known == 0, 1, known).astype(b.dtype))
    else:
        by_zero = compare(b, zero, "EQ")
        b = ops.select(by_zero, one, b)
    q = ops.binary("stablehlo.divide", a, b)
    r = ops.binary("stablehlo.remainder", a, b)
    if _is("i", a):  # truncation rounds toward zero: step back where the signs differ
        fix = ops.binary("stablehlo.and", compare(r, zero, "NE"),
                         compare(compare(r, zero, "LT"), compare(b, zero, "LT"), "NE"))
        q = ops.select(fix, ops.binary("stablehlo.subtract", q, one), q)
        r = ops.select(fix, ops.binary("stablehlo.add", r, b), r)
    return ops.select(by_zero, zero, q), ops.select(by_zero, zero, r)


def _float_divmod(a, b):
    """NumPy's npy_divmod: floor division and a modulo with the divisor's sign."""
    sub, add, div = (lambda x, y: ops.binary("stablehlo.subtract", x, y),
                     lambda x, y: ops.binary("stablehlo.add", x, y),
                     lambda x, y: ops.binary("stablehlo.divide", x, y))
    zero, one = _like(a, 0), _like(a, 1)
    mod = ops.binary("stablehlo.remainder", a, b)  # C fmod
    quotient = div(sub(a, mod), b)
    has_mod = compare(mod, zero, "NE")
    fix = ops.binary("stablehlo.and", has_mod, compare(compare(b, zero, "LT"), compare(mod, zero, "LT"), "NE"))
    mod = ops.select(fix, add(mod, b), mod)
    quotient = ops.select(fix, sub(quotient, one), quotient)
    mod = ops.select(has_mod, mod, _copysign(zero, b))
    floor = ops.unary("stablehlo.floor", quotient)
    floor = ops.select(compare(sub(quotient, floor), _like(a, 0.5), "GT"), add(floor, one), floor)
    floor = ops.select(compare(quotient, zero, "NE"), floor, _copysign(zero, div(a, b)))
    floor = ops.select(compare(b, zero, "EQ"), div(a, b), floor)
    return floor, mod


def _divmod(a, b):
    return _float_divmod(a, b) if _is("f", a) else _int_divmod(a, b)


def _hypot(x, y):
    ax, ay = ops.unary("stablehlo.abs", x), ops.unary("stablehlo.abs", y)
    big, small = ops.binary("stablehlo.maximum", ax, ay), ops.binary("stablehlo.minimum", ax, ay)
    safe = ops.select(compare(big, _like(x, 0), "EQ"), _like(x, 1), big)
    ratio = ops.binary("stablehlo.divide", small, safe)
    root = ops.unary("stablehlo.sqrt", ops.binary("stablehlo.add", _like(x, 1),
                                                  ops.binary("stablehlo.multiply", ratio, ratio)))
    result = ops.binary("stablehlo.multiply", big, root)
    return ops.select(ops.binary("stablehlo.or", _isinf(x), _isinf(y)), _like(x, np.inf), result)


def _scale(factor):
    return lambda x: ops.binary("stablehlo.multiply", x, _like(x, factor))


def _log_base(base):
    """log(x) / log(base), exact where x is a power of the base (NumPy's log2(8) is 3, and the
    quotient is an ulp below it: int(np.log2(n)) one too small); of a complex x, its real and
    imaginary parts divided each (a complex division of log(0) = -inf + 0j gave a NaN imaginary
    part, where NumPy's is 0)."""
    def log(x):
        logs = ops.unary("stablehlo.log", x)
        if x.dtype.kind != "c":
            return _at_powers(x, ops.binary("stablehlo.divide", logs, _like(x, math.log(base))), base)
        parts = [ops.real(logs), ops.imag(logs)]
        return ops.complex(*(ops.binary("stablehlo.divide", p, _like(p, math.log(base))) for p in parts))
    return log


def _at_powers(x, logs, base):
    """``logs`` (log_base of the real ``x``, computed) with the exponent itself where ``x`` is the
    float nearest a power base**k (k an integer): read from x's bits for base 2, and for base 10
    where x is one of the powers its dtype holds as NumPy would print them (1e-22 ... 1e22 in float64)."""
    finfo = np.finfo(x.dtype)
    if base == 2 and x.dtype.itemsize in (2, 4, 8) and finfo.nmant + finfo.nexp + 1 == 8 * x.dtype.itemsize:
        bits_type = np.dtype(f"int{8 * x.dtype.itemsize}")
        bits = ops.bitcast_convert(x, bits_type)
        mantissa = ops.binary("stablehlo.and", bits, full(x.shape, (1 << finfo.nmant) - 1, bits_type))
        biased = ops.binary("stablehlo.shift_right_logical", bits, full(x.shape, finfo.nmant, bits_type))
        exponent = ops.binary("stablehlo.and", biased, full(x.shape, (1 << finfo.nexp) - 1, bits_type))
        top = (1 << finfo.nexp) - 1
        power = ops.all_of(ops.compare(mantissa, full(x.shape, 0, bits_type), "EQ"),
                           ops.compare(exponent, full(x.shape, 0, bits_type), "GT"),
                           ops.compare(exponent, full(x.shape, top, bits_type), "LT"),
                           ops.compare(x, _like(x, 0), "GT"))
        k = ops.binary("stablehlo.subtract", exponent, full(x.shape, top // 2, bits_type))
        return ops.select(power, ops.convert(k, x.dtype), logs)
    if base != 10:
        return logs
    k = ops.unary("stablehlo.round_nearest_even", logs)
    reach = int(np.floor(np.log10(finfo.max)))
    powers = np.array([float(f"1e{j}") for j in range(-reach, reach + 1)], x.dtype)
    index = ops.convert(ops.binary("stablehlo.add", ops.binary("stablehlo.maximum", ops.binary(
        "stablehlo.minimum", k, _like(x, reach)), _like(x, -reach)), _like(x, reach)), np.int64)
    return ops.select(ops.compare(take_1d(ops.constant(powers), index), x, "EQ"), k, logs)


def _acosh(x):
    """log1p((x - 1) + sqrt(x - 1) sqrt(x + 1)), accurate near 1."""
    below, above = ops.binary("stablehlo.subtract", x, _like(x, 1)), ops.binary("stablehlo.add", x, _like(x, 1))
    root = ops.binary("stablehlo.multiply", ops.unary("stablehlo.sqrt", below), ops.unary("stablehlo.sqrt", above))
    return ops.unary("stablehlo.log_plus_one", ops.binary("stablehlo.add", below, root))


def _atanh(x):
    """(log1p(x) - log1p(-x)) / 2."""
    difference = ops.binary("stablehlo.subtract", ops.unary("stablehlo.log_plus_one", x),
                            ops.unary("stablehlo.log_plus_one", ops.unary("stablehlo.negate", x)))
    return ops.binary("stablehlo.multiply", difference, _like(x, 0.5))


def _differentiable(name, formula):
    """chlo.<name>, but ``formula`` for real floats in differentiated code: Enzyme 0.0.16
    differentiates chlo.acosh as 1/sqrt(x^4 - 1) and chlo.atanh as 1/(x^2 - 1), both wrong."""
    plain = _op(f"chlo.{name}")
    return lambda x: formula(x) if _is("f", x) and is_differentiating() else plain(x)


def _absolute(x):
    if _is("bu", x):
        return x
    return ops.unary("stablehlo.abs", x, np.empty(0, x.dtype).real.dtype)


def _sign(x):
    if _is("bu", x):
        return ops.convert(compare(x, _like(x, 0), "NE"), x.dtype)
    if _is("f", x):  # NumPy's sign of -0.0 is +0.0
        return ops.select(compare(x, _like(x, 0), "EQ"), _like(x, 0), ops.unary("stablehlo.sign", x))
    return ops.unary("stablehlo.sign", x)


def _rounding(name):
    def kernel(x):
        if _is("biu", x):
            return x
        if _is("c", x):  # rint rounds both parts
            return ops.complex(kernel(ops.real(x)), kernel(ops.imag(x)))
        return ops.unary(name, x)
    return kernel


def _trunc(x):
    if _is("biu", x):
        return x
    return ops.select(compare(x, _like(x, 0), "LT"), ops.unary("stablehlo.ceil", x), ops.unary("stablehlo.floor", x))


def _conjugate(x):
    if not _is("c", x):
        return x
    return ops.complex(ops.real(x), ops.unary("stablehlo.negate", ops.imag(x)))


def _shift_right(x, y):
    return ops.binary("stablehlo.shift_right_arithmetic" if _is("i", x) else "stablehlo.shift_right_logical", x, y)


def _logaddexp(x, y):
    big = ops.binary("stablehlo.maximum", x, y)
    diff = ops.unary("stablehlo.abs", ops.binary("stablehlo.subtract", x, y))
    tail = ops.unary("stablehlo.log_plus_one", ops.unary("stablehlo.exponential", ops.unary("stablehlo.negate", diff)))
    general = ops.binary("stablehlo.add", big, tail)
    return ops.select(compare(x, y, "EQ"), ops.binary("stablehlo.add", x, _like(x, math.log(2))), general)


def _bool_or(name, bool_name):
    return lambda x, y: ops.binary(bool_name if _is("b", x) else name, x, y)


KERNELS = {
    np.add: _bool_or("stablehlo.add", "stablehlo.or"),
    np.subtract: _op("stablehlo.subtract"),
    np.multiply: _bool_or("stablehlo.multiply", "stablehlo.and"),
    np.true_divide: _op("stablehlo.divide"),
    np.floor_divide: lambda a, b: _divmod(a, b)[0],
    np.remainder: lambda a, b: _divmod(a, b)[1],
    np.divmod: _divmod,
    np.power: _op("stablehlo.power"),
    np.float_power: _op("stablehlo.power"),
    np.arctan2: _op("stablehlo.atan2"),
    np.hypot: _hypot,
    np.maximum: _extremum("maximum", "GT"),
    np.minimum: _extremum("minimum", "LT"),
    np.fmax: _nan_ignoring(_extremum("maximum", "GT")),
    np.fmin: _nan_ignoring(_extremum("minimum", "LT")),
    np.copysign: _copysign,
    np.logaddexp: _logaddexp,
    np.logical_and: _logical("stablehlo.and"),
    np.logical_or: _logical("stablehlo.or"),
    np.logical_xor: _logical("stablehlo.xor"),
    np.logical_not: lambda x: ops.unary("stablehlo.not", _truthy(x)),
    np.equal: _compare("EQ"),
    np.not_equal: _compare("NE"),
    np.less: _compare("LT"),
    np.less_equal: _compare("LE"),
    np.greater: _compare("GT"),
    np.greater_equal: _compare("GE"),
    np.bitwise_and: _op("stablehlo.and"),
    np.bitwise_or: _op("stablehlo.or"),
    np.bitwise_xor: _op("stablehlo.xor"),
    np.invert: _op("stablehlo.not"),
    np.left_shift: _op("stablehlo.shift_left"),
    np.right_shift: _shift_right,
    np.negative: _op("stablehlo.negate"),
    np.positive: lambda x: x,
    np.absolute: _absolute,
    np.fabs: _absolute,
    np.sign: _sign,
    np.floor: _rounding("stablehlo.floor"),
    np.ceil: _rounding("stablehlo.ceil"),
    np.rint: _rounding("stablehlo.round_nearest_even"),
    np.trunc: _trunc,
    np.sqrt: _op("stablehlo.sqrt"),
    np.cbrt: _op("stablehlo.cbrt"),
    np.square: lambda x: ops.binary("stablehlo.and" if _is("b", x) else "stablehlo.multiply", x, x),
    np.reciprocal: lambda x: ops.binary("stablehlo.divide", _like(x, 1), x),
    np.exp: _op("stablehlo.exponential"),
    np.exp2: lambda x: ops.binary("stablehlo.power", _like(x, 2), x),
    np.expm1: _op("stablehlo.exponential_minus_one"),
    np.log: _op("stablehlo.log"),
    np.log1p: _op("stablehlo.log_plus_one"),
    np.log2: _log_base(2),
    np.log10: _log_base(10),
    np.sin: _op("stablehlo.sine"),
    np.cos: _op("stablehlo.cosine"),
    np.tan: _op("chlo.tan"),  # stablehlo.tan has no Enzyme derivative (spike §4)
    np.arcsin: _op("chlo.asin"),
    np.arccos: _op("chlo.acos"),
    np.arctan: _op("chlo.atan"),
    np.sinh: _op("chlo.sinh"),
    np.cosh: _op("chlo.cosh"),
    np.tanh: _op("stablehlo.tanh"),
    np.arcsinh: _op("chlo.asinh"),
    np.arccosh: _differentiable("acosh", _acosh),
    np.arctanh: _differentiable("atanh", _atanh),
    np.deg2rad: _scale(math.pi / 180),
    np.radians: _scale(math.pi / 180),
    np.rad2deg: _scale(180 / math.pi),
    np.degrees: _scale(180 / math.pi),
    np.isnan: _isnan,
    np.isinf: _isinf,
    np.isfinite: _isfinite,
    np.signbit: signbit,
    np.conjugate: _conjugate,
}


_COMPARISONS = {np.equal: operator.eq, np.not_equal: operator.ne, np.less: operator.lt,
                np.less_equal: operator.le, np.greater: operator.gt, np.greater_equal: operator.ge}


def _out_of_range_comparison(ufunc, inputs, loop):
    """NumPy compares integers with a Python int beyond their dtype's range exactly (uint8 < 300
    is True everywhere): that constant result, or None."""
    for i, (x, dt) in enumerate(zip(inputs, loop)):
        if type(x) is int and dt.kind in "iu" and not np.iinfo(dt).min <= x <= np.iinfo(dt).max:
            inside = np.iinfo(dt).max if x > 0 else np.iinfo(dt).min  # every value of dt compares alike
            outcome = _COMPARISONS[ufunc](*((x, inside) if i == 0 else (inside, x)))
            return wrap(full(value(inputs[1 - i]).shape, outcome, np.bool_))
    return None


def _traced_python_int(x) -> bool:
    return isinstance(x, TracedArray) and x.weak is int


def apply(ufunc, *inputs, dtype=None, casting="same_kind"):
    """Call ``ufunc`` on traced operands the way NumPy would: loop dtypes, broadcasting, results."""
    if len(inputs) != ufunc.nin:
        raise TypeError(f"{ufunc.__name__}() takes {ufunc.nin} positional arguments but {len(inputs)} were given")
    types = tuple(dtype_of(x) for x in inputs) + (None,) * ufunc.nout
    options = {"casting": casting}
    if dtype is not None:
        options["signature"] = (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout
    with numpy_rules():
        loop = ufunc.resolve_dtypes(types, **options)
        if any(dt == object for dt in loop) and all(isinstance(t, type) for t in types[:ufunc.nin]):
            # Python numbers alone (a comparison of two traced Python ints): NumPy makes arrays of them first
            loop = ufunc.resolve_dtypes(tuple(np.asarray(t()).dtype for t in types[:ufunc.nin]) + types[ufunc.nin:],
                                        **options)
    if ufunc in _COMPARISONS and (result := _out_of_range_comparison(ufunc, inputs, loop)) is not None:
        return result
    if ufunc in _COMPARISONS and any(_traced_python_int(x) for x in inputs) and all(dt.kind in "iu" for dt in loop[:2]):
        # as exact as NumPy's (uint8 < k for any int k): in int64, and against uint64 with its sign apart
        loop = tuple(np.dtype(np.int64) if _traced_python_int(x) or dt.itemsize < 8 else dt
                     for x, dt in zip(inputs, loop[:2])) + tuple(loop[2:])
    operands = broadcast_values(*[value(x, dt) for x, dt in zip(inputs, loop)])
    if ufunc is np.power and loop[1].kind in "iu" and loop[2].kind in "iu":
        results = _integer_power(inputs[1], *operands)
    elif ufunc is np.power and loop[0].kind == "f" and _is_array_operand(inputs[0]) and \
            known_value(inputs[1]) is not None and np.all(np.asarray(known_value(inputs[1])) == 0.5):
        results = ops.unary("stablehlo.sqrt", operands[0])  # NumPy's array loop: sqrt(-0.0) is -0.0, not 0
    else:
        results = KERNELS[ufunc](*operands)
    results = results if isinstance(results, tuple) else (results,)
    outs = tuple(ordered(wrap(convert_like_numpy(r, dt)), "K", *inputs) for r, dt in zip(results, loop[ufunc.nin:]))
    for out, known in zip(outs, _known_results(ufunc, inputs, loop)):
        if out.lens is None and out.value.owner is not None:
            out.value.owner.literal = known  # (what the program computes, known while tracing: TracedArray.known)
    return outs if ufunc.nout > 1 else outs[0]


KNOWN_SIZE = 256  # the largest result of constants a ufunc also computes with NumPy while tracing


def _known_results(ufunc, inputs, loop) -> tuple:
    """NumPy's own results of ``ufunc`` on arrays of constants (2 ** np.arange(3): known while tracing, so that
    code can take their elements as numbers), for small ones without a warning NumPy would give; else ()."""
    known = [x.known() if isinstance(x, TracedArray) and not x.weak else None if isinstance(x, TracedArray) else x
             for x in inputs]
    if any(k is None for k in known) or not any(isinstance(x, TracedArray) for x in inputs):
        return ()
    if int(np.prod(np.broadcast_shapes(*[np.shape(k) for k in known]), dtype=np.int64)) > KNOWN_SIZE:
        return ()
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            results = ufunc(*known, signature=loop)
    except (ArithmeticError, Warning, TypeError, ValueError):
        return ()
    return tuple(np.asarray(r) for r in (results if isinstance(results, tuple) else (results,)))


def _integer_power(exponent, base: Value, power: Value) -> Value:
    """NumPy's integer power: the product wrapping around as the dtype does, for any exponent (XLA's
    takes the exponent modulo the bit width), and its ValueError for a negative one (after the call
    where the exponent is traced).  An exponent of k bits is taken a chunk of log2(bits) bits at a time:
    base ** e = prod_k (base ** (bits ** k)) ** chunk_k, each chunk below the bit width."""
    bounds = value_bounds(exponent)
    if bounds is not None and bounds[0] < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    if bounds is None and np.dtype(power.dtype).kind == "i":
        negative = np.any(TracedArray(ops.compare(power, full(power.shape, 0, power.dtype), "LT")))
        checks.error_if(negative.value, lambda: ValueError("Integers to negative integer powers are not allowed."))
    bits = np.dtype(base.dtype).itemsize * 8
    if bounds is not None and bounds[1] < bits:
        return ops.binary("stablehlo.power", base, power)
    width = bits.bit_length() - 1  # (a chunk of the exponent: below the bit width)
    low = full(power.shape, bits - 1, power.dtype)
    shift = full(power.shape, width, power.dtype)
    result, square, rest = ops.binary("stablehlo.power", base, ops.binary("stablehlo.and", power, low)), base, power
    for _ in range(-(-bits // width) - 1):
        rest = ops.binary("stablehlo.shift_right_logical", rest, shift)
        for _ in range(width):
            square = ops.binary("stablehlo.multiply", square, square)
        chunk = ops.binary("stablehlo.power", square, ops.binary("stablehlo.and", rest, low))
        result = ops.binary("stablehlo.multiply", result, chunk)
    return result


def _is_array_operand(x) -> bool:
    """An array, not a NumPy scalar or a Python number (whose power NumPy takes with C's pow)."""
    return isinstance(x, np.ndarray) or isinstance(x, TracedArray) and not x.scalar


def _register(ufunc):
    @implements_ufunc(ufunc)
    def call(*inputs, dtype=None, casting="same_kind", order="K", subok=True, signature=None):
        # out= and where= are handled by out.py, which wraps this.
        reject(f"numpy.{ufunc.__name__}", signature=(signature, None))
        return apply(ufunc, *inputs, dtype=dtype, casting=casting)


for _ufunc in KERNELS:
    _register(_ufunc)


# --- functions built on ufuncs ---------------------------------------------------------------

@implements(np.where)
@keeps_order
def where(condition, x=None, y=None):
    if x is None and y is None:
        return np.nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    dtype = result_type(x, y)
    c, a, b = broadcast_values(_truthy(value(condition)), _where_operand(x, dtype), _where_operand(y, dtype))
    return wrap(ops.select(c, a, b))


def _where_operand(x, dtype) -> Value:
    """A Python int of np.where in an integer dtype that cannot hold it wraps around, as NumPy casts it
    (np.where(odd, -1, u8) is 255 there), where a ufunc's raises OverflowError."""
    if is_weak(x) and dtype_of(x) is int and np.dtype(dtype).kind in "iu":
        return convert_like_numpy(value(x, np.int64), dtype)
    return value(x, dtype)


@implements(np.clip)
def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue, **kwargs):
    low = a_min if a_min is not np._NoValue else (None if min is np._NoValue else min)
    high = a_max if a_max is not np._NoValue else (None if max is np._NoValue else max)
    if out is not None:
        raise UnsupportedError("numpy.clip(..., out=...) is not supported yet")
    a = array_like(a)  # (np.clip([x[0], x[1]], 0, 1): the array NumPy makes of it)
    kind = dtype_of(a)
    if np.dtype(kind).kind in "iu":  # as NumPy: Python-int bounds beyond the dtype's range do nothing
        info = np.iinfo(kind)
        low = None if type(low) is int and low <= info.min else low
        high = None if type(high) is int and high >= info.max else high
    result = a
    if low is not None:
        result = np.maximum(result, low, **kwargs)
    if high is not None:
        result = np.minimum(result, high, **kwargs)
    return result if result is not a else np.positive(a)


@implements(np.real)
def real(val):
    if np.iscomplexobj(val):
        return view(val, ComplexPart("real"))
    return val if isinstance(val, TracedArray) else wrap(value(val))


@implements(np.imag)
def imag(val):
    if np.iscomplexobj(val):
        return view(val, ComplexPart("imag"))
    v = value(val)  # (zeros NumPy makes for a real array: read-only, as its .imag is)
    return view(wrap(full(v.shape, 0, v.dtype)), ReadOnly(Reshape(v.shape), "assignment destination is read-only"))


@implements(np.angle)
def angle(z, deg=False):
    """As NumPy: arctan2 of the parts, with a Python 0 as the imaginary part of real input."""
    if np.iscomplexobj(z):
        result = apply(np.arctan2, np.imag(z), np.real(z))
    else:
        result = apply(np.arctan2, 0, z if isinstance(z, TracedArray) else np.asarray(z))
    return wrap(_scale(180 / math.pi)(result.value)) if deg else result


@implements(np.conj, np.conjugate)
def conj(x, *args, **kwargs):
    return apply(np.conjugate, x)


@implements("ndarray.conj", "ndarray.conjugate")
def conj_method(a):
    """Unlike the ufunc (which makes booleans int8), the method returns a real array itself."""
    return apply(np.conjugate, a) if a.dtype.kind == "c" else a


def _power_of_ten(n: int) -> float:
    """NumPy's scale for round: exact to 1e8, then multiplied by 10 step by step, rounding each time,
    so 10**300 is not the double nearest it (np.power's), and ties past 1e22 round as NumPy's do."""
    scale = float(10 ** min(n, 8))
    for _ in range(n - 8):
        scale *= 10.0
    return scale


@implements(np.around, np.round)
@keeps_order
def around(a, decimals=0, out=None):
    if out is not None:
        raise UnsupportedError("numpy.round(..., out=...) is not supported yet")
    v = value(a)
    if v.dtype.kind in "iu" and decimals >= 0:
        return wrap(v)
    if v.dtype.kind == "c":
        return wrap(ops.complex(value(around(wrap(ops.real(v)), decimals)), value(around(wrap(ops.imag(v)), decimals))))
    if decimals == 0:
        return apply(np.rint, wrap(v))  # booleans round in float16, as NumPy's rint does
    if v.dtype.kind == "b":
        raise TypeError("Cannot cast ufunc 'multiply' output from dtype('float64') to dtype('bool') with "
                        "casting rule 'same_kind'")
    # NumPy scales, rounds half to even, and unscales; integers in float64, cast back.  (Its division, exactly:
    # XLA's by 100 gave 0.41000000000000003 for NumPy's 0.41.)
    work = np.dtype(np.float64) if v.dtype.kind in "iu" else v.dtype
    with np.errstate(over="ignore"):  # (past the dtype's range: inf, and the result NaN, as NumPy's)
        factor = float(work.type(_power_of_ten(min(abs(decimals), 400))))

    def times(x, c):
        return ops.binary("stablehlo.multiply", x, full(v.shape, c, work))

    def divided(x, c):
        return divided_exactly(x, c) if np.isfinite(c) else ops.binary("stablehlo.divide", x, full(v.shape, c, work))
    scale, unscale = (times, divided) if decimals > 0 else (divided, times)
    # (a barrier before the scaling: XLA would fold np.round(p * 1.1, 2)'s two constants into one, p * 110.00000000000001)
    rounded = ops.unary("stablehlo.round_nearest_even", scale(ops.opaque(ops.convert(v, work)), factor))
    return wrap(convert_like_numpy(unscale(rounded, factor), v.dtype))
