"""Python ints carried as traced values, and the run-time checks that keep them Python's.

A Python int the code being traced cannot know (a rolled loop's counter, a number a rolled loop or a
traced branch changes, ``x.item()``) is a traced int64, and Python's ints have no bound: where a
result could pass int64's range, the program checks it when it runs, and cofactor raises an
UnsupportedError after the call (checks.py) instead of wrapping around silently.  Most traced ints
are loop counters and index arithmetic on them, whose range is known while tracing: each keeps
static ``bounds`` where known (``TracedArray.bounds``: a counter's from its range, a result's from
its operands'), and an operation whose result's bounds fit int64 needs no check.

The same bounds decide where NumPy's own check is needed when a Python int meets a narrower integer
dtype (``uint8_array + k``, ``a[i] = k``: OverflowError when ``k`` is outside the dtype's range) and
where a traced index may pass its axis (numpy/indexing.py).  ``int(x)`` and ``float(x)`` of a traced
scalar make such numbers too.
"""
from __future__ import annotations

import operator

import numpy as np

from ..errors import UnsupportedError, located
from ..ir import ops
from . import checks

INT64 = (int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max))


def within(x, low: int, high: int) -> bool:
    """Whether the traced integer ``x`` is known to lie in [low, high] (its bounds fit)."""
    return _fits(bounds_of(x), low, high)


def bounds_of(x) -> tuple | None:
    """The least and greatest values ``x`` (a Python int, or a traced one) may hold; None: unknown."""
    if type(x) is int:
        return (x, x)
    return getattr(x, "bounds", None) if getattr(x, "weak", None) is int else None


def _extremes(fn, a, b):
    values = [fn(x, y) for x in a for y in b]
    return (min(values), max(values))


def _result_bounds(ufunc, bounds) -> tuple | None:
    """Interval arithmetic for Python's int operators (None: not known, or not worth knowing)."""
    if any(b is None for b in bounds):
        return None
    if len(bounds) == 1:
        (lo, hi), = bounds
        return {np.negative: (-hi, -lo), np.positive: (lo, hi),  # (k ** 2 is np.square: array.py)
                np.square: (0 if lo <= 0 <= hi else min(lo * lo, hi * hi), max(lo * lo, hi * hi)),
                np.absolute: (0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))}.get(ufunc)
    a, b = bounds
    if ufunc is np.add:
        return (a[0] + b[0], a[1] + b[1])
    if ufunc is np.subtract:
        return (a[0] - b[1], a[1] - b[0])
    if ufunc is np.multiply:
        return _extremes(lambda x, y: x * y, a, b)
    if b[0] == b[1]:  # a known right operand
        d = b[0]
        if ufunc in (np.floor_divide, np.divmod) and d != 0:
            return _extremes(lambda x, y: x // y, a, b)
        if ufunc is np.remainder and d != 0:
            return (0, d - 1) if d > 0 else (d + 1, 0)
        if ufunc is np.right_shift and d >= 0:
            return (a[0] >> d, a[1] >> d)
        if ufunc is np.left_shift and 0 <= d < 64:
            return (a[0] << d, a[1] << d)
        if ufunc is np.bitwise_and and d >= 0:
            return (0, d)
        if ufunc is np.power and 0 <= d < 64:
            ends = [a[0] ** d, a[1] ** d] + ([0] if a[0] < 0 < a[1] else [])
            return (min(ends), max(ends))
    return None


def _fits(bounds, lo=INT64[0], hi=INT64[1]) -> bool:
    return bounds is not None and lo <= bounds[0] and bounds[1] <= hi


def _int64(x):
    """An int64 scalar Value for ``x`` (a Python int or a traced one)."""
    return x.value if hasattr(x, "value") else ops.constant(np.asarray(x, np.int64))


def _i64(v: int):
    return ops.constant(np.asarray(v, np.int64))


def _negative(v):
    return ops.compare(v, _i64(0), "LT")


def _either(*conditions):
    out = conditions[0]
    for c in conditions[1:]:
        out = ops.binary("stablehlo.or", out, c)
    return out


def _overflowed(ufunc, operands, result):
    """An i1 Value: whether Python's result of ``ufunc`` on int64 ``operands`` is not ``result``
    (the int64 XLA computes) because it passes int64's range; None: it cannot."""
    xor = lambda p, q: ops.binary("stablehlo.xor", p, q)  # noqa: E731
    if len(operands) == 1:
        if ufunc in (np.negative, np.absolute):
            return ops.compare(operands[0], _i64(INT64[0]), "EQ")
        if ufunc is np.square:  # past the greatest int whose square fits
            magnitude = ops.unary("stablehlo.abs", ops.convert(operands[0], np.float64))
            return ops.compare(magnitude, ops.constant(np.asarray(float(int(INT64[1] ** 0.5)))), "GT")
        return None
    a, b = operands
    if ufunc is np.add:   # the sign of both operands, and not the result's
        return _negative(ops.binary("stablehlo.and", xor(a, result), xor(b, result)))
    if ufunc is np.subtract:
        return _negative(ops.binary("stablehlo.and", xor(a, b), xor(a, result)))
    if ufunc is np.multiply:  # result / a is b unless it wrapped (a = 0 and a = -1 apart)
        zero, minus_one = ops.compare(a, _i64(0), "EQ"), ops.compare(a, _i64(-1), "EQ")
        divisor = ops.select(_either(zero, minus_one), _i64(1), a)
        wrapped = ops.compare(ops.binary("stablehlo.divide", result, divisor), b, "NE")
        return _either(ops.all_of(minus_one, ops.compare(b, _i64(INT64[0]), "EQ")),
                       ops.all_of(ops.unary("stablehlo.not", _either(zero, minus_one)), wrapped))
    if ufunc in (np.floor_divide, np.divmod):
        return ops.all_of(ops.compare(a, _i64(INT64[0]), "EQ"), ops.compare(b, _i64(-1), "EQ"))
    if ufunc is np.left_shift:  # shifted back, it is a again unless bits fell off
        shift = ops.binary("stablehlo.minimum", ops.binary("stablehlo.maximum", b, _i64(0)), _i64(63))
        back = ops.binary("stablehlo.shift_right_arithmetic", result, shift)
        lost = _either(ops.compare(b, _i64(63), "GT"), ops.compare(back, a, "NE"))
        return ops.all_of(ops.compare(a, _i64(0), "NE"), ops.compare(b, _i64(0), "GE"), lost)
    if ufunc is np.power:  # float64's power tells whether the magnitude passes 2**63
        magnitude = ops.unary("stablehlo.abs", ops.binary("stablehlo.power", ops.convert(a, np.float64),
                                                          ops.convert(b, np.float64)))
        return ops.all_of(ops.compare(b, _i64(0), "GE"),
                          ops.compare(magnitude, ops.constant(np.asarray(2.0 ** 63)), "GE"))
    return None


def checked(ufunc, operands, result):
    """``result`` (a traced Python int: Python's ``ufunc`` of ``operands`` computed in int64) with
    its bounds, or with a run-time check that it did not pass int64's range."""
    bounds = _result_bounds(ufunc, [bounds_of(x) for x in operands])
    if _fits(bounds):
        result.bounds = bounds
        return result
    failed = _overflowed(ufunc, [_int64(x) for x in operands], result.value)
    if failed is not None:
        checks.error_if(failed, lambda: located(UnsupportedError(
            f"a Python int passes int64's range here when the program runs ({_expression(ufunc, operands)}): "
            "cofactor carries the Python ints that traced code computes as int64, and Python's would be larger. "
            "Keep it below 2**63, or compute it as a float")))
    return result


_INFIX = {np.add: "+", np.subtract: "-", np.multiply: "*", np.floor_divide: "//", np.left_shift: "<<", np.power: "**"}


def wide_constants(operands) -> tuple:
    """``operands`` of Python's arithmetic (some traced), where an int constant past int64's range
    meets a traced float as the float Python makes of it (OverflowError past float's range, as in
    Python), and a traced int as cofactor's clear error: computed in int64, the result would wrap,
    or (NumPy making the constant a uint64) silently become a float."""
    if all(type(x) is not int or _fits((x, x)) for x in operands):
        return operands
    if any(_kind(x) in (float, complex) for x in operands):
        try:
            return tuple(float(x) if type(x) is int else x for x in operands)
        except OverflowError as e:
            raise located(OverflowError(str(e))) from None
    big = next(x for x in operands if type(x) is int and not _fits((x, x)))
    raise located(UnsupportedError(
        f"the Python int {big} is past int64's range, and here it meets a Python int that traced code computes: "
        "cofactor carries those as int64, and Python's result would be larger (compute with floats, or keep the "
        "numbers small)"))


def _expression(ufunc, operands) -> str:
    """``a * b`` or ``negative(a)``, with the operands' values (at run time, where traced)."""
    if ufunc in _INFIX:
        return f"{operands[0]} {_INFIX[ufunc]} {operands[1]}"
    if ufunc is np.square:
        return f"{operands[0]} ** 2"
    return f"{ufunc.__name__}({', '.join(f'{x}' for x in operands)})"


def outside_of(v, low: int, high: int):
    """An i1 Value: whether the int64 Value ``v`` lies outside [low, high]."""
    return _either(ops.compare(v, _i64(low), "LT"), ops.compare(v, _i64(high), "GT"))


def check_fits(x, dtype):
    """NumPy's OverflowError, at run time, where the traced Python int ``x`` may not fit integer ``dtype``."""
    info, v = np.iinfo(dtype), x.value
    if within(x, int(info.min), int(info.max)):
        return
    outside = _negative(v) if dtype == np.uint64 else outside_of(v, int(info.min), int(info.max))
    checks.error_if(outside, lambda: OverflowError(f"Python integer {x} out of bounds for {np.dtype(dtype)}"))


def check_stored(x, dtype):
    """NumPy's errors, at run time, where a number ``x`` (a NumPy scalar or a traced Python number)
    is stored into an integer array of ``dtype`` by ``a[i] = x``, ``a[:] = x`` or ``a.fill(x)``:
    NumPy converts it to a Python int first, so NaN, an infinity, or a value outside ``dtype``'s
    range raises (a NumPy scalar stored into an unsigned array wraps, as a cast does; a Python int
    is checked where it is converted, ``check_fits``)."""
    from .array import TracedArray
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu" or x.dtype.kind not in "iuf" or x.weak is int or \
            x.weak is None and dtype.kind == "u" or np.can_cast(x.dtype, dtype, "safe"):
        return
    v, valid = x.value, None
    if x.dtype.kind == "f":
        v, finite = _finite_checked(v)
        huge = ops.all_of(finite, _beyond(v, 2.0 ** 64 if dtype == np.uint64 else 2.0 ** 63))  # a C long, or unsigned
        valid = ops.all_of(finite, ops.unary("stablehlo.not", huge))
    elif x.dtype == np.uint64:
        huge = _past_int64_bits(v)
        valid = ops.unary("stablehlo.not", huge)
    else:
        huge = None
    if huge is not None:
        checks.error_if(huge, lambda: OverflowError("Python int too large to convert to C long"))
    n = TracedArray(ops.convert(v, np.int64), scalar=True, weak=int)  # truncated toward zero, as int() does
    info = np.iinfo(dtype)
    outside = _negative(n.value) if dtype == np.uint64 else outside_of(n.value, int(info.min), int(info.max))
    if valid is not None:
        outside = ops.all_of(valid, outside)
    checks.error_if(outside, lambda: OverflowError(f"Python integer {n} out of bounds for {dtype}"))


def counter_bounds(start, stop, step, trips) -> tuple:
    """The bounds of a rolled range loop's counter (its iterations so far): below the trip count,
    known where the range's bounds are, and below int64's greatest value (so ``k + 1`` fits)."""
    if type(trips) is int:
        return (0, max(trips - 1, 0))
    first, last = bounds_of(start), bounds_of(stop)
    if first is None or last is None:
        return (0, INT64[1] - 1)
    span = last[1] - first[0] if step > 0 else first[1] - last[0]
    return (0, max(min((span - 1) // abs(step), INT64[1] - 1), 0))


def range_item(start, stop, k, step):
    """``start + k * step``, the item of ``range(start, stop, step)`` at a traced counter ``k``: it
    lies between the range's start and stop, so it cannot pass int64's range (no check), and it has
    the bounds of that interval where start and stop have them."""
    from .array import TracedArray
    item = TracedArray(ops.binary("stablehlo.add", _int64(start), ops.binary("stablehlo.multiply", k.value, _i64(step))),
                       scalar=True, weak=int)
    first, last = bounds_of(start), bounds_of(stop)
    if first is not None and last is not None:
        item.bounds = (first[0], last[1] - 1) if step > 0 else (last[0] + 1, first[1])
    return item


def python_int(x):
    """``int(x)`` of a traced number (a 0-d array, a NumPy scalar, a traced Python number) in
    converted code: a traced Python int, as Python's int truncates a float toward zero; NaN and
    infinities raise Python's errors when the program runs, and a float past int64's range
    cofactor's error (Python's int would hold it)."""
    from .array import TracedArray
    v = x.value
    if x.dtype.kind == "c":
        raise located(TypeError(f"int() argument must be a string, a bytes-like object or a real number, not "
                                f"'{x.stands_for().__name__}'"))
    if x.dtype.kind == "f":
        v, finite = _finite_checked(v)
        checks.error_if(ops.all_of(finite, _beyond(v, 2.0 ** 63)), lambda: _past_int64(x))
    check_unsigned_fits(x)
    return TracedArray(ops.convert(v, np.int64), scalar=True, weak=int)


def check_unsigned_fits(x):
    """cofactor's error, at run time, where a uint64 ``x`` past int64's range becomes a traced Python
    int (``int(x)``, ``x.item()``): Python's int would hold it, cofactor's would wrap around."""
    if x.dtype == np.uint64:
        checks.error_if(_past_int64_bits(ops.reshape(x.value, ())), lambda: _past_int64(x))


def _past_int64_bits(v):
    """An i1 Value: whether the uint64 Value ``v`` is past int64's range (its top bit is set)."""
    return _negative(ops.bitcast_convert(v, np.int64))


def _beyond(v, high: float):
    """An i1 Value: whether the float64 Value ``v`` lies outside [-2**63, ``high``)."""
    return _either(ops.compare(v, ops.constant(np.asarray(-2.0 ** 63)), "LT"),
                   ops.compare(v, ops.constant(np.asarray(high)), "GE"))


def _past_int64(x):
    return located(UnsupportedError(
        f"{x} as a Python int passes int64's range when the program runs (int(), .item()): cofactor carries "
        "the Python ints that traced code computes as int64, and Python's would be larger"))


def _nan(v):
    """An i1 Value: whether the float Value ``v`` is NaN."""
    return ops.compare(v, v, "NE")


def _infinite(v):
    """An i1 Value: whether the float Value ``v`` is an infinity."""
    return ops.compare(ops.unary("stablehlo.abs", v), ops.constant(np.asarray(np.inf, v.type.dtype)), "EQ")


def _finite(v):
    return ops.unary("stablehlo.not", _either(_nan(v), _infinite(v)))


def _finite_checked(v):
    """The float Value ``v`` as a float64, with Python's errors where int() of a NaN or an infinity
    raises, and an i1 Value: whether it is finite."""
    v = ops.convert(v, np.float64)
    nan, infinite = _nan(v), _infinite(v)
    checks.error_if(nan, lambda: ValueError("cannot convert float NaN to integer"))
    checks.error_if(infinite, lambda: OverflowError("cannot convert float infinity to integer"))
    return v, ops.unary("stablehlo.not", _either(nan, infinite))


def python_float(x):
    """``float(x)`` of a traced real number in converted code: a traced Python float."""
    from .array import TracedArray
    if x.dtype.kind == "c":
        raise located(TypeError(f"float() argument must be a string or a real number, not "
                                f"'{x.stands_for().__name__}'"))
    return TracedArray(ops.convert(x.value, np.float64), scalar=True, weak=float)


def python_round(x, ndigits: int):
    """Python's ``round(x, ndigits)`` of a traced Python float: the double nearest the decimal rounding of
    x's exact value (round(0.35, 1) is 0.3, where NumPy's scaling rounds the scaled 3.5 up).  The scaled
    value rounded half to even, except at a tie, which the scaling's exact rounding error breaks."""
    from .array import TracedArray
    if ndigits > 323 or ndigits < -308:  # (Python's: x itself, or a zero of its sign)
        return x if ndigits > 0 else TracedArray(_times(x.value, 0.0), scalar=True, weak=float)
    if ndigits > 22:  # (x itself where no digit is cut, the scaled x past 2 ** 52 or the range; else NumPy's)
        v = ops.convert(x.value, np.float64)
        scaled = ops.unary("stablehlo.abs", _times(v, float(np.float64(10.0) ** min(ndigits, 308))))
        cut = ops.compare(scaled, _like(v, 2.0 ** 52), "LT")
        return TracedArray(ops.select(cut, np.round(x, ndigits).value, v), scalar=True, weak=float)
    if not 0 < abs(ndigits) <= 22:  # (10 ** n exact; NumPy's answer at 0 digits is Python's)
        return np.round(x, ndigits)
    v, factor = ops.convert(x.value, np.float64), float(10 ** abs(ndigits))
    if ndigits > 0:
        scaled = _times(v, factor)
        error = product_error(v, factor, scaled)             # v * factor == scaled + error, exactly
    else:
        scaled = divided_exactly(v, factor)
        product = ops.opaque(_times(scaled, factor))         # v - scaled * factor, exactly enough for its sign
        error = ops.binary("stablehlo.subtract", ops.binary("stablehlo.subtract", v, product),
                           product_error(scaled, factor, product))
    nearest = ops.unary("stablehlo.round_nearest_even", scaled)
    tie = ops.compare(ops.unary("stablehlo.abs", ops.binary("stablehlo.subtract", scaled, nearest)),
                      _like(v, 0.5), "EQ")
    side = ops.select(ops.compare(error, _like(v, 0.0), "GT"), ops.unary("stablehlo.ceil", scaled),
                      ops.select(ops.compare(error, _like(v, 0.0), "LT"), ops.unary("stablehlo.floor", scaled), nearest))
    rounded = ops.select(tie, side, nearest)
    back = divided_exactly(rounded, factor) if ndigits > 0 else _times(rounded, factor)
    whole = ops.compare(ops.unary("stablehlo.abs", scaled), _like(v, 2.0 ** 52), "LT")  # (else no digit is cut)
    return TracedArray(ops.select(whole, back, v), scalar=True, weak=float)


def divided_exactly(x, divisor: float):
    """``x / divisor`` (a float Value, a Python float) rounded once, as NumPy's division, from multiplications:
    XLA turns a division by a constant or a broadcast scalar into a multiplication by its rounded reciprocal
    (x / 100 as x * 0.01), one ulp off NumPy's quotient for one element in eight.  The product by the
    reciprocal, corrected by its exact remainder (Markstein).  float16 divides in float32 and rounds, as
    NumPy's half-precision arithmetic does; a divisor whose reciprocal is subnormal (which the CPU flushes to
    zero) is scaled by a power of two."""
    if x.dtype == np.float16:
        return ops.convert(divided_exactly(ops.convert(x, np.float32), divisor), np.float16)
    if 1.0 / divisor < np.finfo(x.dtype).tiny:  # (by the divisor scaled down by a power of two, then scaled back)
        down = 2.0 ** -(np.finfo(x.dtype).maxexp // 2)
        return _times(divided_exactly(x, divisor * down), down)
    # Near the top of the range the split overflows: such an x is divided scaled down by a power of two (exact).
    down = 2.0 ** -(_half_bits(x.dtype) + 8)
    big = ops.compare(ops.unary("stablehlo.abs", x), _like(x, float(np.finfo(x.dtype).max) * down), "GT")
    small = _quotient(ops.select(big, _times(x, down), x), divisor)
    return ops.select(big, _times(small, 1.0 / down), small)


def _quotient(x, divisor: float):
    inverse = 1.0 / divisor
    first = ops.opaque(_times(x, inverse))
    product = ops.opaque(_times(first, divisor))
    remainder = ops.binary("stablehlo.subtract", ops.binary("stablehlo.subtract", x, product),
                           product_error(first, divisor, product))
    corrected = ops.binary("stablehlo.add", first, _times(remainder, inverse))
    inexact = ops.binary("stablehlo.and", ops.unary("stablehlo.is_finite", corrected, np.bool_),
                         ops.compare(remainder, _like(x, 0.0), "NE"))
    return ops.select(inexact, corrected, first)  # (inf, NaN, signed zeros, and where the split overflows: as
    #                                                they are)


def product_error(a, b: float, product):
    """``a * b - product`` exactly, where ``product`` is the rounded ``a * b`` (Dekker's product: ``a`` split
    into halves; barriers keep XLA's contractions into fused multiply-adds and the optimizer's algebra out);
    not finite where the split overflows."""
    a_high, a_low = _halves(a)
    power = 2.0 ** np.frexp(b)[1]  # (b split near 1, where its split cannot overflow, and scaled back: exact)
    b = np.asarray(b / power, a.dtype)
    t = b * _split_scale(a.dtype)
    b_high, b_low = (t - (t - b)) * power, (b - (t - (t - b))) * power
    add, sub = (lambda p, q: ops.binary("stablehlo.add", p, q)), (lambda p, q: ops.binary("stablehlo.subtract", p, q))
    first = sub(_times(a_high, float(b_high)), product)
    return add(add(add(first, _times(a_high, float(b_low))), _times(a_low, float(b_high))), _times(a_low, float(b_low)))


def _half_bits(dtype) -> int:
    """ceil(p / 2) for floats of ``dtype``, of p bits of precision."""
    return -(-(np.finfo(dtype).nmant + 1) // 2)


def _split_scale(dtype) -> float:
    """Veltkamp's factor for floats of ``dtype``: 2 ** ceil(p / 2) + 1."""
    return float(2 ** _half_bits(dtype) + 1)


def _halves(a):
    """``a`` as the sum of two floats of half its precision each (Veltkamp's split)."""
    t = ops.opaque(_times(a, _split_scale(a.dtype)))
    high = ops.binary("stablehlo.subtract", t, ops.opaque(ops.binary("stablehlo.subtract", t, a)))
    return high, ops.binary("stablehlo.subtract", a, high)


def _like(v, c):
    return ops.constant(np.full(v.shape, c, v.dtype))


def _times(v, c):
    """``v`` times a Python float ``c``, or another Value."""
    return ops.binary("stablehlo.multiply", v, c if not isinstance(c, float) else _like(v, c))


# Python's operator for a ufunc on Python numbers, where Python raises what NumPy computes (inf, nan).
_PYTHON_OPERATORS = {np.true_divide: operator.truediv, np.floor_divide: operator.floordiv, np.remainder: operator.mod,
                     np.divmod: divmod}


def _kind(x) -> type:
    return getattr(x, "weak", None) or type(x)


def _compared(x, y, direction):
    """An i1 Value: ``x direction y`` for a Python number ``x`` (traced) and a constant ``y``."""
    v = x.value
    return ops.compare(v, ops.constant(np.asarray(y, v.type.dtype)), direction)


def python_operands(ufunc, operands) -> tuple:
    """The operands of Python's arithmetic on Python numbers (some traced) as they are computed, with
    the run-time checks that raise Python's errors where NumPy's arithmetic would give inf or nan
    instead: a division by zero, ``0.0 ** -1``, a negative number to a fractional power (complex in
    Python), an int to a negative power (a float in Python)."""
    from .array import TracedArray
    if len(operands) != 2:
        return operands
    a, b = operands
    if ufunc in _PYTHON_OPERATORS:
        try:
            _PYTHON_OPERATORS[ufunc](_kind(a)(1), _kind(b)(0))
        except ZeroDivisionError as e:
            message = str(e)
        except TypeError:  # (complex // 0: NumPy's TypeError, raised by the ufunc)
            return operands
        if not isinstance(b, TracedArray):
            if b == 0:
                raise located(ZeroDivisionError(message))
        else:
            checks.error_if(_compared(b, 0, "EQ"), lambda: ZeroDivisionError(message))
        return operands
    if ufunc is not np.power or complex in (_kind(a), _kind(b)):
        return operands
    if _kind(a) is int and _kind(b) is int:
        if not isinstance(b, TracedArray):
            return (python_float(a) if isinstance(a, TracedArray) else float(a), b) if b < 0 else operands
        if not within(b, 0, INT64[1]):
            checks.error_if(_compared(b, 0, "LT"), lambda: UnsupportedError(
                "a Python int raised to a negative power here when the program runs: Python's result is a float, "
                "and a traced int's type cannot depend on its value (write float(x) ** k)"))
        return operands
    base, exponent = (python_float(x).value if isinstance(x, TracedArray) else ops.constant(np.asarray(float(x)))
                      for x in (a, b))
    zero = ops.constant(np.asarray(0.0))
    negative_base = ops.compare(base, zero, "LT")
    checks.error_if(ops.all_of(ops.compare(base, zero, "EQ"), ops.compare(exponent, zero, "LT")),
                    lambda: ZeroDivisionError("0.0 cannot be raised to a negative power"))
    fractional = ops.compare(ops.unary("stablehlo.floor", exponent), exponent, "NE")
    checks.error_if(ops.all_of(negative_base, fractional), lambda: UnsupportedError(
        "a negative Python float raised to a fractional power here when the program runs: Python's result is a "
        "complex number, and a traced float's type cannot depend on its value (write complex(x) ** p)"))
    return operands


def python_overflow(ufunc, operands, result):
    """OverflowError where Python's ``**`` of finite floats passes float64's range (NumPy: inf)."""
    from .array import TracedArray
    if ufunc is not np.power or not isinstance(result, TracedArray) or result.weak is not float or \
            any(not isinstance(x, TracedArray) and not np.isfinite(x) for x in operands):
        return
    finite = [ops.unary("stablehlo.not", _infinite(x.value)) for x in operands
              if isinstance(x, TracedArray) and x.dtype.kind == "f"]  # (an int operand is finite)
    checks.error_if(ops.all_of(_infinite(result.value), *finite),
                    lambda: OverflowError("(34, 'Numerical result out of range')"))


def _math_functions() -> dict:
    import math
    names = ["exp", "expm1", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
             "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "atan2", "hypot", "copysign", "degrees", "radians"]
    numpy = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh,
             "atanh": np.arctanh, "atan2": np.arctan2, "fabs": np.fabs}
    functions = {getattr(math, n): numpy.get(n) or getattr(np, n) for n in names}
    functions.update({math.pow: np.power, math.floor: np.floor, math.ceil: np.ceil, math.trunc: np.trunc,
                      math.isnan: np.isnan, math.isinf: np.isinf, math.isfinite: np.isfinite,
                      math.erf: _special("chlo.erf"), math.erfc: _special("chlo.erfc")})
    return functions


def _special(name):
    """A function NumPy has no ufunc for (math.erf: a normal CDF without SciPy), as its CHLO op."""
    from .array import TracedArray
    return lambda x: TracedArray(ops.unary(name, x.value))


MATH = _math_functions()  # Python's math functions -> NumPy's, for traced Python numbers


def python_math(fn, args):
    """``math.fn(*args)`` of Python numbers some of which are traced: NumPy's function in float64,
    with Python's results (an int from floor, ceil and trunc; a float otherwise) and Python's
    errors where NumPy gives nan or inf: ValueError("math domain error"), OverflowError("math range
    error"), raised after the call.  ``math.log(x[, base])`` is natural log over log of the base."""
    import math
    from .array import TracedArray
    if any(isinstance(a, TracedArray) and a.ndim for a in args):  # (Python's float() of it: NumPy's error)
        raise located(TypeError("only 0-dimensional arrays can be converted to Python scalars"))
    if fn is math.trunc and isinstance(args[0], TracedArray) and args[0].weak is None and args[0].dtype != np.float64:
        # (math.trunc has no float() fallback: only np.float64, a float, has __trunc__)
        raise located(TypeError(f"type numpy.{args[0].dtype.type.__name__} doesn't define __trunc__ method"))
    values = [python_float(a) if isinstance(a, TracedArray) else float(a) for a in args]
    if fn is math.log:
        base = {2.0: np.log2, 10.0: np.log10}.get(values[1]) if len(values) == 2 and type(values[1]) is float else None
        result = np.log(values[0]) if len(values) == 1 else base(values[0]) if base else \
            np.log(values[0]) / np.log(values[1])
    else:
        result = MATH[fn](*values)
    if fn in (math.isnan, math.isinf, math.isfinite):
        return TracedArray(result.value, scalar=True)
    finite = ops.all_of(*(_finite(v.value) for v in values if isinstance(v, TracedArray)))
    r = result.value
    poles = fn in (math.log, math.log2, math.log10, math.log1p, math.atanh)  # (an infinity where Python's is an error)
    domain = _either(_nan(r), _infinite(r)) if poles else _nan(r)
    checks.error_if(ops.all_of(finite, domain), lambda: ValueError("math domain error"))
    if not poles:
        checks.error_if(ops.all_of(finite, _infinite(r)), lambda: OverflowError("math range error"))
    if fn in (math.floor, math.ceil, math.trunc):
        return python_int(result)
    return TracedArray(ops.convert(r, np.float64), scalar=True, weak=float)
