"""Python ints that traced code computes (a rolled loop's counters and the ints it changes): Python's
values while they fit int64, a clear error when Python's would not (never a wrapped value), and
NumPy's OverflowError or exact comparison where they meet a narrower integer dtype
(cofactor/tracing/python_ints.py)."""
import math
import re

import numpy as np
import pytest

import cofactor as cf


def times_three(x, steps):
    k = 1
    for _ in range(steps):      # rolled (longer than unroll): k is a traced int
        x = x + 1.0
        k *= 3
    return x, k


def doubled_by_shift(x, steps):
    k = 1
    for _ in range(steps):
        x = x + 1.0
        k <<= 1
    return x, k


def stepped_up(x, steps):
    k = 2 ** 62
    for _ in range(steps):
        x = x + 1.0
        k += 2 ** 58
    return x, k


def stepped_down(x, steps):
    k = -2 ** 62
    for _ in range(steps):
        x = x + 1.0
        k -= 2 ** 58
    return x, k


def fibonacci(x, steps):
    a, b = 0, 1
    for _ in range(steps):
        x = x + 1.0
        a, b = b, a + b           # both traced: no bounds
    return x, a


def powers(x, exponent):
    p = 0
    for i in range(12):
        x = x + 1.0
        p = (i + 2) ** exponent   # bounded base: 13 ** 10 fits, 3 ** 40 does not
    return x, p


def squared_where_positive(x, steps):
    k = 2
    for i in range(steps):
        x = x + 1.0
        if x[0] > 0:              # a traced if: k is traced in an unrolled loop too
            k = k ** 2            # (np.square, not np.power)
    return x, k


@pytest.mark.parametrize("fn, fits, passes", [
    (squared_where_positive, 5, 6),
    (times_three, 39, 40), (doubled_by_shift, 62, 63), (stepped_up, 15, 16), (stepped_down, 16, 17),
    (fibonacci, 91, 93), (powers, 10, 40),   # (fib(92) is b after 91 steps)
])
def test_python_ints_are_pythons_or_a_clear_error_past_int64(fn, fits, passes):
    x = np.zeros(3)
    want, got = fn(x.copy(), fits), cf.jit(fn)(x.copy(), fits)
    np.testing.assert_array_equal(np.asarray(got[0]), want[0])
    assert int(got[1]) == want[1]
    assert not -2 ** 63 <= fn(x.copy(), passes)[1] < 2 ** 63
    with pytest.raises(cf.UnsupportedError, match=r"passes int64's range here when the program runs \(-?\d+ .*\d+\)"):
        cf.jit(fn)(x.copy(), passes)


def branch_sets_a_big_int(x, big):
    k = 5
    if x[0] > 0:                  # a traced if carries k as an int64: NumPy's 5 (cofactor gave 5.0)
        k = big
    return x * 2, k


@pytest.mark.parametrize("big", [2 ** 63 + 1, 2 ** 64, -2 ** 63 - 1])
def test_a_python_int_past_int64_that_a_branch_carries_is_a_clear_error(big):
    x = -np.ones(3)
    assert branch_sets_a_big_int(x, big)[1] == 5
    with pytest.raises(cf.UnsupportedError, match=f"Python int {big} passes int64's range"):
        cf.jit(branch_sets_a_big_int)(x, big)


def counter_into_int8(a, steps):
    for i in range(steps):
        a[i % 4] = i              # the counter's bounds: no check while they fit
    return a


def carried_into_int8(a, start):
    k = start
    for i in range(20):
        k += 10
        a[i % 4] = k              # NumPy: OverflowError once k passes 127
    return a


def carried_plus_int8(a, start):
    k = start
    for i in range(20):
        k += 10
        a = a + k
    return a


def carried_into_uint64(a, start):
    k = start
    for i in range(20):
        k -= 10
        a[i % 4] = k              # NumPy: OverflowError once k is negative
    return a


def counter_made_uint8(a, start):
    for i in range(20):
        a[i % 4] = a[i % 4] + np.uint8(i + start)   # NumPy: OverflowError once i + start passes 255
    return a


@pytest.mark.parametrize("fn, dtype, start", [
    (counter_into_int8, np.int8, 100), (counter_into_int8, np.int8, 200),
    (counter_made_uint8, np.int64, 250), (counter_made_uint8, np.int64, 10),
    (carried_into_int8, np.int8, -80), (carried_into_int8, np.int8, 0),
    (carried_plus_int8, np.int8, -100), (carried_plus_int8, np.int16, 0), (carried_plus_int8, np.uint8, -30),
    (carried_into_uint64, np.uint64, 500), (carried_into_uint64, np.uint64, 100),
])
def test_a_traced_python_int_meeting_a_narrower_dtype_is_numpys(fn, dtype, start):
    a = np.zeros(4, dtype)
    try:
        want = fn(a.copy(), start)
    except OverflowError as error:
        with pytest.raises(OverflowError, match=str(error)):
            cf.jit(fn)(a.copy(), start)
        return
    got = cf.jit(fn)(a.copy(), start)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def count_above(a, start):
    k = start
    c = 0
    for _ in range(12):
        k += 40
        c = c + (a > k).sum() + (a <= -k).sum() + (a == k).sum()
    return c


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint64, np.int64])
@pytest.mark.parametrize("start", [-300, 0, 60])
def test_comparing_with_a_traced_python_int_is_exact(dtype, start):
    """NumPy compares integers with any Python int exactly (uint8 < 300 everywhere)."""
    a = np.array([0, 1, 100, 127, 255 if np.dtype(dtype).kind == "u" else -128], dtype)
    assert int(cf.jit(count_above)(a.copy(), start)) == count_above(a.copy(), start)


def digit_sums(x):
    out = np.zeros(x.shape[0], np.int64)
    for i in range(x.shape[0]):         # rolled, and a while loop on the traced int inside
        n = int(x[i])
        s = 0
        while n > 0:
            s += n % 10
            n //= 10
        out[i] = s
    return out


def conversions(x):
    return int(x[0]) + int(x[1] * 2.5), float(x[2]) / 3, int(-2.7 * x[0]), float(np.int32(3) * x[1]), int(x[3] > 0)


def _csr_rows(ptr, x):
    s = 0.0
    for k in range(ptr[0], ptr[1]):
        s += x[k]
    for k in range(ptr[1], ptr[0], np.int16(-2)):
        s += 10 * x[k]
    return s


def _reversed_ranges(b, x):
    s = 0.0
    for i in reversed(range(b[0], b[1])):
        s = s * 0.5 + x[i]
    for i in reversed(range(b[1], b[0], -2)):
        s = s * 0.25 + x[i]
    for i in reversed(range(b[0], b[1], 3)):
        s = s * 0.75 + x[i]
    return s


def test_reversed_range_of_traced_bounds_is_one_loop():
    """(It was "index() of a traced array ... a library function such as chr()".)  Its other uses are a clear error."""
    x, f = np.arange(12.0) ** 1.5, cf.jit(_reversed_ranges)
    for b in ([2, 7], [7, 2], [0, 11], [3, 3]):
        np.testing.assert_allclose(float(np.asarray(f(np.array(b), x))), _reversed_ranges(np.array(b), x), rtol=1e-14)
    assert cf.compile(_reversed_ranges, np.array([2, 7]), x).mlir.count("stablehlo.while") == 3
    with pytest.raises(cf.UnsupportedError, match=r"a range\(\) whose bounds are known only at run time is iterated by"):
        cf.jit(lambda b: len(range(b[0], b[1])))(np.array([1, 4]))


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.uint8, np.uint64])
def test_a_range_of_numpy_integers_counts_in_python_ints(dtype):
    """range() takes its arguments' __index__: an int32 CSR row pointer's items were an internal error (int32 vs
    int64), uint8 ones counted down from a wrapped difference (no trips)."""
    ptr, x = np.array([1, 4], dtype), np.arange(6.0)
    assert float(np.asarray(cf.jit(_csr_rows)(ptr, x))) == _csr_rows(ptr, x)


def test_int_and_float_of_traced_numbers_are_pythons():
    """int(x[i]) truncates toward zero into a traced Python int, float() makes a traced Python float
    (both were ConcretizationErrors)."""
    x = np.array([123.7, 45.2, 9.0, 1000.0, 0.0, 77.0, 5.5, 81.0, 12.0, 3.0])
    np.testing.assert_array_equal(np.asarray(cf.jit(digit_sums)(x)), digit_sums(x))
    for got, want in zip(cf.jit(conversions)(x), conversions(x)):
        assert np.asarray(got).dtype == np.asarray(want).dtype and np.asarray(got) == want


def int_of_first(x):
    return int(x[0] * 1.0)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_int_of_nan_or_infinity_is_pythons_error(value):
    with pytest.raises(Exception) as python:
        int_of_first(np.array([value]))
    with pytest.raises(type(python.value), match=str(python.value)):
        cf.jit(int_of_first)(np.array([value]))


@pytest.mark.parametrize("value", [np.float64(1e30), np.float64(-9.3e18), np.uint64(2 ** 63 + 5), np.uint64(2 ** 64 - 1)])
def test_int_of_a_number_past_int64_is_a_clear_error(value):
    """int() and .item() of a float or a uint64 beyond int64: Python's int holds it, cofactor's would wrap."""
    def int_of_element(x):
        return int(x[0])

    assert not -2 ** 63 <= int_of_element(np.array([value])) < 2 ** 63
    with pytest.raises(cf.UnsupportedError, match=f"{int(value) if value.dtype.kind == 'u' else ''}.* as a Python "
                                                  "int passes int64's range"):
        cf.jit(int_of_element)(np.array([value]))
    if value.dtype.kind == "u":  # .item() of a float is a Python float
        with pytest.raises(cf.UnsupportedError, match="passes int64's range"):
            cf.jit(lambda a: a[0].item() + 1)(np.array([value]))
    assert int(cf.jit(int_of_element)(np.array([7], dtype=value.dtype))) == 7


@pytest.mark.parametrize("fn, x", [
    (lambda x: float(x[0]) / float(x[1]), [1.0, 0.0]),
    (lambda x: float(x[0]) / float(x[1]), [1.0, 4.0]),
    (lambda x: int(x[0]) // int(x[1]), [5, 0]),
    (lambda x: int(x[0]) % int(x[1]), [5, 0]),
    (lambda x: divmod(int(x[0]), int(x[1])), [5, 2]),
    (lambda x: float(x[0]) % 0.0, [1.0]),
    (lambda x: (float(x[0]) * 0) ** -1, [1.0]),
    (lambda x: float(x[0]) ** 1000, [10.0]),
    (lambda x: float(x[0]) ** 1000, [1.01]),
    (lambda x: int(x[0]) ** -1, [2]),
    (lambda x: int(x[0]) ** int(x[1]), [2, 5]),
    (lambda x: float(x[0]) ** 0.5, [4.0]),
], ids=["div0", "div", "floordiv0", "mod0", "divmod", "fmod0", "zero_to_negative", "pow_overflow", "pow",
        "int_to_negative", "int_pow", "sqrt"])
def test_arithmetic_on_traced_python_numbers_is_pythons_or_raises_pythons_error(fn, x):
    """Python's arithmetic raises where NumPy's gives inf or nan: ZeroDivisionError, OverflowError."""
    x = np.array(x)
    try:
        want = fn(x)
    except ArithmeticError as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            cf.jit(fn)(x)
        return
    got = cf.jit(fn)(x)
    for g, w in zip(got if isinstance(want, tuple) else [got], want if isinstance(want, tuple) else [want]):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.asarray(g) == w


def _fractional_power(x):
    return float(x[0]) ** 0.5


def _traced_power(x):
    return int(x[0]) ** int(x[1])


@pytest.mark.parametrize("fn, x", [(_fractional_power, [-4.0]), (_traced_power, [2, -1])])
def test_a_python_number_whose_type_would_depend_on_its_value_is_a_clear_error(fn, x):
    with pytest.raises(cf.UnsupportedError, match="cannot depend on its value"):
        cf.jit(fn)(np.array(x))


def _math_sqrt(x):
    return math.sqrt(float(x[0]))


def _math_log(x):
    return math.log(float(x[0])), math.log(float(x[0]), 2), math.log10(float(x[0]))


def _math_exp(x):
    return math.exp(float(x[0]))


def _math_misc(x):
    return math.floor(float(x[0])) + 1, math.atan2(float(x[0]), 1.0), math.isnan(float(x[0])), math.cos(x[0])


def _normal_cdf(x):  # (Black-Scholes without SciPy)
    return 0.5 * (1.0 + math.erf(float(x[0]) / math.sqrt(2.0))), math.erfc(float(x[0]))


@pytest.mark.parametrize("fn, x", [(_math_sqrt, [4.0]), (_math_sqrt, [-4.0]), (_math_log, [8.0]), (_math_log, [0.0]),
                                   (_math_exp, [1000.0]), (_math_exp, [0.5]), (_math_misc, [2.7]),
                                   (_normal_cdf, [0.7]), (_normal_cdf, [-2.5])])
def test_math_functions_of_traced_python_numbers_are_pythons(fn, x):
    x = np.array(x)
    try:
        want = fn(x)
    except (ValueError, OverflowError) as e:
        with pytest.raises(type(e), match=str(e)):
            cf.jit(fn)(x)
        return
    got = cf.jit(fn)(x)
    for g, w in zip(got if isinstance(want, tuple) else [got], want if isinstance(want, tuple) else [want]):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-15)


def plus_a_constant_past_int64(x):
    k = int(x[0])
    return k + 10 ** 19


def times_a_constant_past_uint64(x):
    k = int(x[0])
    return k * 2 ** 64 // 2 ** 62


def float_plus_a_constant_past_int64(x):
    return float(x[0]) + 10 ** 19


def half_to_a_traced_power(x):
    return 0.5 ** int(x[0]) + int(x[1]) ** 0.5


def discounted_sum(x):
    total, k = 0.0, 0
    while k < len(x) and x[k] > 0:
        total += x[k] * 0.9 ** k
        k += 1
    return total


def test_python_int_constants_past_int64_meet_traced_numbers_as_python_or_a_clear_error():
    x = np.array([5, 3, 1])
    for fn in (plus_a_constant_past_int64, times_a_constant_past_uint64):
        with pytest.raises(cf.UnsupportedError, match="past int64"):
            cf.jit(fn)(x)
    for fn in (float_plus_a_constant_past_int64, half_to_a_traced_power, discounted_sum):
        got = cf.jit(fn)(x)
        assert float(np.asarray(got)) == pytest.approx(fn(x), rel=1e-15), fn.__name__


def size_from_a_python_loop(x):
    n = 1
    for _ in range(20):
        n = (n * 3) % 7
    names, k = ["a", "bb", "ccc"], 0
    for _ in range(10):
        k = (k + 1) % 3
    return np.zeros(n) + x[0] * len(names[k])


def factorial_past_int64(x):
    fact = 1
    for k in range(1, 25):
        fact *= k
    return x / fact


def counted_then_compared(x):
    k = 0
    for _ in range(10):
        k += 1
    return x * 2 if k == 10 else np.zeros((2, 2))


def test_a_long_static_loop_over_python_numbers_alone_runs_as_python():
    """Its numbers stay Python's: a shape, a list index, a branch on them, a factorial past int64."""
    x = np.array([2.0, 3.0, 4.0])
    for fn in (size_from_a_python_loop, factorial_past_int64, counted_then_compared):
        np.testing.assert_allclose(np.asarray(cf.jit(fn)(x)), fn(x), rtol=1e-15)


def newton_from_an_argument(x0, n):
    x = x0
    for k in range(n):
        x = 0.5 * (x + 2.0 / x)
    c = x0 * 0.5
    for k in range(150):
        c = math.cos(c)
    return x, c


def test_a_long_static_loop_over_numbers_from_the_arguments_stays_rolled():
    """Its numbers are traced from the start: run as Python, it was unrolled (100 Newton steps on a Python
    float argument compiled for 20 s, 200 steps of math.cos for 32 s)."""
    f = cf.jit(newton_from_an_argument)
    got = f(1.0, 100)
    want = newton_from_an_argument(1.0, 100)
    np.testing.assert_allclose([float(g) for g in got], want, rtol=1e-15)
    assert cf.compile(newton_from_an_argument, 1.0, 100, optimize=False).mlir.count("stablehlo.while") == 2


def _rounded_every_way(x, n):
    out = np.zeros((3, x.shape[0]))
    for i in range(x.shape[0]):
        out[0, i] = round(float(x[i]), n)        # Python's: the decimal rounding of the float's exact value
        out[1, i] = round(float(x[i]), -n)
        out[2, i] = round(x[i], n)               # a NumPy scalar's: NumPy's scaling, as np.round
    return out, np.round(x, n), x / 100.0 * 3


def test_round_of_a_python_float_is_pythons_and_np_round_is_numpys_to_the_last_bit():
    """round(0.35, 1) is 0.3 in Python and 0.4 in NumPy (it scales to 3.5); np.round(x, 2) gave
    0.41000000000000003 for 0.41 (XLA divided by 100 as a multiplication by 0.01)."""
    rng = np.random.default_rng(5)
    x = np.concatenate([[0.35, 2.675, 0.25, 1.005, 2.5, -0.35, -2.675, 1250.0, 1350.0, 0.125, 1e300, np.inf,
                         np.nan, -0.0, 5e-324], np.round(rng.uniform(-100, 100, 200), 3)])
    f = cf.jit(_rounded_every_way)
    for n in (1, 2, 3):
        rounded, by_numpy, _ = f(x, n)
        want = np.array([[round(float(v), n) for v in x], [round(float(v), -n) for v in x],
                         [round(v, n) for v in x]])
        np.testing.assert_array_equal(rounded, want)
        np.testing.assert_array_equal(by_numpy, np.round(x, n))


def _sorted_and_complex(v):
    numbers = sorted([v[0], v[1], v[2]])                      # NumPy scalars, in NumPy's order
    pythons = sorted([float(v[0]), float(v[2])], reverse=True)  # Python floats stay Python's
    z = complex(v[0], v[1])
    return numbers[0] + pythons[0] * 10, z * 2, complex(float(v[2])), type(z) is complex, type(pythons[0]) is float


def _sorted_by_keys(x):
    vals = [x[0], x[1], x[2], x[3]]
    by_minus = sorted(vals, key=lambda v: -v)
    by_size = sorted(vals, key=abs, reverse=True)          # (ties in their order, reversed as Python's are)
    vals.sort()
    rows = sorted([x[:2], x[2:]], key=lambda r: r.sum())
    floats = sorted([float(x[1]), float(x[0])], key=lambda v: v * v)
    return by_minus[0] + 10 * by_minus[1], by_size[0], by_size[1], vals[0], rows[0], floats[0], type(floats[0]) is float


def test_sorted_and_list_sort_by_a_key_of_traced_numbers_are_pythons():
    """(Both asked bool() of a traced comparison.)"""
    x = np.array([0.3, -0.7, 0.5, -0.3])
    for g, w in zip(cf.jit(_sorted_by_keys)(x), _sorted_by_keys(x)):
        np.testing.assert_array_equal(np.asarray(g), w)


def _indices_sorted_by_values(x):
    l = [float(v) for v in x]
    l.append(99.0)
    l.sort()
    m = list(x)
    m.append(np.float64(-5.0))
    return sorted(range(len(x)), key=lambda i: x[i]), sorted(range(len(x)), key=lambda i: -x[i], reverse=True), \
        l, sorted(m, reverse=True)


def _sorted_of_two_kinds(x):
    m = list(x)
    m.append(99.0)
    m.sort()
    return m


def test_sorted_indices_by_traced_keys_and_numbers_beside_traced_ones_of_their_kind():
    """(sorted(range(n), key=lambda i: x[i]) raised "a traced array cannot become a NumPy array"; a Python number
    beside traced ones of its kind, bool() of a traced array; items of two kinds now a clear error.)"""
    x = np.array([3.0, 1.0, 2.0, 1.0])
    for g, w in zip(cf.jit(_indices_sorted_by_values)(x), _indices_sorted_by_values(x)):
        assert [np.asarray(a).item() for a in g] == w
    with pytest.raises(cf.UnsupportedError, match=r"items of other kinds \(here Python float, numpy.float64\)"):
        cf.jit(_sorted_of_two_kinds)(x)


def test_sorted_of_a_list_of_traced_numbers_and_complex_of_them_are_pythons():
    """(Both asked bool() or a NumPy array of traced values.)"""
    v = np.array([0.3, 0.1, 0.7])
    got, want = cf.jit(_sorted_and_complex)(v), _sorted_and_complex(v)
    for g, w in zip(got, want):
        assert np.asarray(g) == w


def _sizes_from_constants(x):
    n = x.shape[0]
    sums = []
    for size in 2 ** np.arange(3, 1, -1):        # (elements of an array of constants: known while tracing)
        sums.append(x[np.arange(0, n, size)].sum())
    k = np.array([2, 3])
    return np.array(sums), np.zeros(k[0] * k[1]), x[:k[1]], np.eye(k[0])


def test_an_array_made_of_constants_gives_numbers_known_while_tracing():
    """(np.arange(0, n, size) was refused as data-dependent, np.zeros(k[0] * k[1]) as a run-time shape.)"""
    x = np.arange(10.0)
    for g, w in zip(cf.jit(_sizes_from_constants)(x), _sizes_from_constants(x)):
        np.testing.assert_array_equal(g, w)


def _rounded_at_the_edges(x, h, s):
    return (np.round(x, -1), np.round(x, 308), np.round(x, 320), np.round(h, -1), np.round(h, 4), np.round(s, -1),
            np.round(s * 0 + np.float32(0.35), 37), np.round(s * 0 + np.float32(0.35), 38),
            np.round(x * 1.1, 2), round(float(x[1]), 308), round(float(x[1]), 320), round(float(x[1]), 400))


def test_round_at_the_edges_of_the_range_is_numpys_and_pythons():
    """(Large values gave NaN: the exact division's split overflowed; 10 ** 320 raised an internal error; and
    XLA folded np.round(x * 1.1, 2)'s two constants into one.)"""
    x = np.array([1.7e308, 0.35, 0.75])
    h, s = np.array([65000.0, 5.0], np.float16), np.array([3e38], np.float32)
    with np.errstate(all="ignore"):
        want = _rounded_at_the_edges(x, h, s)
    for g, w in zip(cf.jit(_rounded_at_the_edges)(x, h, s), want):
        np.testing.assert_array_equal(np.asarray(g), w)


def _count_flag(x):
    k = 0
    for v in x:
        if v > 0:
            k += 1
    many = k > 1                       # a Python bool of traced Python ints
    return many + many, ~many, many is True, isinstance(many, bool), -many, many * 2.5, many & True, many | (k > 5)


def _flag_set_in_a_branch(x):
    flag = False
    if x[0] > 0:
        flag = True
    found = x[1].item() > 0            # (item() of a bool array is a Python bool too)
    return flag + flag, flag is False, type(flag) is bool, not flag, (not flag) + 1, found + (x > 0)[2].item()


def _flag_of_a_while_loop(x):
    done = False
    n = 0
    while not done:
        n += 1
        done = (x[n % 3] > 0).item() or n > 5
    return n, done is not True, any(x > 0) + all(x > 0), any(v > 1 for v in x) is True


def _flag_of_two_kinds(x):
    done = x[0] > 0 or x.shape[0] > 5  # (a NumPy bool on one path, a Python bool on the other)
    return done is True


@pytest.mark.parametrize("fn", [_count_flag, _flag_set_in_a_branch, _flag_of_a_while_loop])
def test_traced_python_bools_are_pythons(fn):
    """A Python bool that traced values decide is Python's: True + True is 2, ~True is -2, -True is -1, and
    ``is True`` / ``is False`` hold as they do (it was a NumPy bool: True, False, False)."""
    for x in (np.array([1.0, 2.0, 3.0]), np.array([-1.0, 2.0, -3.0]), np.array([-1.0, -2.0, -3.0])):
        want, got = fn(x), cf.jit(fn)(x)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype, (fn.__name__, x, got, want)
            np.testing.assert_array_equal(np.asarray(g), w)


def test_is_true_of_a_bool_of_two_kinds_is_a_clear_error():
    with pytest.raises(cf.UnsupportedError, match="Python bool on some paths and a NumPy bool on others"):
        cf.jit(_flag_of_two_kinds)(np.array([-1.0, 2.0]))


def _whole_numbers(x):
    a = float(x[0])
    return a.is_integer(), x[1].is_integer(), (a * 2).is_integer()


def _float_hex(x):
    return float(x[0]).hex()


def test_is_integer_of_traced_numbers_and_a_clear_error_for_other_number_methods():
    """(float(x).is_integer() raised "'TracedArray' object has no attribute 'is_integer'", naming a class of
    cofactor's.)"""
    for x in (np.array([2.0, 3.5]), np.array([np.inf, 4.0]), np.array([0.5, -0.0])):
        for g, w in zip(cf.jit(_whole_numbers)(x), _whole_numbers(x)):
            assert np.asarray(g) == w
    with pytest.raises(cf.UnsupportedError, match=r"float\.hex\(\) of a traced Python number"):
        cf.jit(_float_hex)(np.array([2.0]))


def _membership(x):
    k = int(x[0])
    total = 0.0
    if k in (0, 2):
        total += 1
    if k not in [1, 3, x[1]]:
        total += 10
    return total, k in (5, 6), x[2] in [0.5, x[1]], 4 not in (k, 2 * k)


def test_in_and_not_in_of_a_traced_number_in_a_list_or_tuple():
    """Python's `item is key or item == key` for each item, traced (a ConcretizationError about bool())."""
    for x in (np.array([2.0, 7.0, 0.5]), np.array([3.0, 3.0, 1.0]), np.array([7.0, 7.0, 7.0]),
              np.array([2.0, 2.0, 2.0])):
        for g, w in zip(cf.jit(_membership)(x), _membership(x)):
            assert np.asarray(g) == w and np.asarray(g).dtype == np.asarray(w).dtype


def _flag_of_two_kinds_in_arithmetic(x):
    flag = False
    if x[0] > 0:
        flag = True
    else:
        flag = x[1] > 0
    return x * flag, flag + 1, np.where(flag, x, 0.0)


def test_a_bool_of_two_kinds_in_numpys_arithmetic_is_the_path_takens():
    """(x * flag, flag a Python bool on one path and a NumPy bool on the other, was refused: NumPy's
    promotion was asked for a Python bool, and the refusal claimed a TypeError on one path.)"""
    for x in (np.array([1.0, -2.0, 3.0]), np.array([-1.0, 2.0, 3.0]), np.array([-1.0, -2.0, 3.0])):
        for g, w in zip(cf.jit(_flag_of_two_kinds_in_arithmetic)(x), _flag_of_two_kinds_in_arithmetic(x)):
            np.testing.assert_array_equal(np.asarray(g), w)
            assert np.asarray(g).dtype == np.asarray(w).dtype


def _parts_of_a_flag(x):
    flag = float(x[0]) > 0
    return flag.real, flag.imag, np.array([flag.real]), x[0].real, float(x[1]).imag


def test_the_parts_of_a_traced_python_bool_are_ints():
    """(True.real is the int 1; it came back a bool, and np.array([flag.real]) a bool array.)"""
    for x in (np.array([1.0, 2.0]), np.array([-1.0, 2.0])):
        for g, w in zip(cf.jit(_parts_of_a_flag)(x), _parts_of_a_flag(x)):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_array_equal(np.asarray(g), w)


# --- a Python int beyond an integer dtype's range, meeting values of that dtype (best = -1, u of uint8) -------------

def _running_max_from_sentinel(u, sentinel):
    best = sentinel
    for v in u:                       # rolled: the first trip makes best a NumPy scalar
        if v > best:
            best = v
    return best


def _strided_argmin_from_sentinel(u, sentinel):
    best, at = sentinel, -1
    out = np.zeros(u.shape[0], np.int64)
    for i in range(3, u.shape[0], 2):
        if u[i] < best:
            best, at = u[i], i
        out[i] = best + at
    return best, at, out


def _builtin_extremes(u, sentinel):
    return max(sentinel, u[1]), min(2 ** 40 - sentinel, u[2]), max(u[0], sentinel, u[3])


def _decided_branches(u, sentinel):
    out = u.copy()
    if u[0] > sentinel:               # decided while tracing: only this arm is traced, as Python runs it
        out[0] = 7
    else:
        out[0] = sentinel             # (NumPy's OverflowError, were it taken)
    if np.uint8(200) < 300:
        out[1] = 1
    return out


@pytest.mark.parametrize("dtype, sentinel", [(np.uint8, -1), (np.int8, -1000), (np.uint16, -5), (np.int32, -2 ** 40),
                                             (np.uint32, -1), (np.int16, -40000)])
@pytest.mark.parametrize("fn", [_running_max_from_sentinel, _strided_argmin_from_sentinel, _builtin_extremes,
                                _decided_branches])
def test_a_python_int_beyond_the_dtype_compares_as_numpys(fn, dtype, sentinel, recwarn):
    if fn is _strided_argmin_from_sentinel:
        sentinel = -sentinel + np.iinfo(dtype).max  # (beyond the top, for a minimum)
    u = np.random.default_rng(abs(sentinel) % 97).integers(np.iinfo(dtype).min, np.iinfo(dtype).max, 300, dtype)
    want, got = fn(u, sentinel), cf.jit(fn, static_argnums=1)(u, sentinel)
    for w, g in zip(want if isinstance(want, tuple) else [want], got if isinstance(got, tuple) else [got]):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), w)
    assert not [w for w in recwarn if issubclass(w.category, cf.UnrolledLoopWarning)]  # (the loops stayed rolled)


def _sentinel_kept_on_a_path(u):
    best = -1
    for v in u:
        if v > 200:
            best = v
    return best


def _sentinel_kept_by_a_branch(u):
    m = -1000
    if u[0] > 5:
        m = u[0]
    return m


@pytest.mark.parametrize("fn", [_sentinel_kept_on_a_path, _sentinel_kept_by_a_branch])
def test_a_python_int_the_dtype_cannot_hold_kept_on_some_paths_is_a_clear_error(fn):
    """NumPy returns the Python int on those paths and the NumPy scalar on others; a compiled value has
    one dtype, and this one cannot hold the int."""
    u = np.arange(300).astype(np.int8 if fn is _sentinel_kept_by_a_branch else np.uint8)
    with pytest.raises(cf.TracingError, match=r"'(best|m)' cannot be carried.*the Python int -1(000)? on some paths "
                                              r"and a numpy\.u?int8 on others, which u?int8 cannot hold"):
        cf.jit(fn)(u)


def _bools_of_traced_values(m):
    flags = [bool(v > 0) for v in m[0]]
    symmetric = bool(np.allclose(m, m.T))
    return symmetric, sum(flags), bool(m[0, 0] - 1.0), bool(np.float64(np.nan) * m[0, 0]), \
        (m * 2 if bool(m.sum() > 0) else m), not bool(m[1, 1] == 1.0)


def test_bool_of_a_traced_value_is_a_traced_python_bool():
    """(It was a ConcretizationError, where int() and float() of one compiled.)"""
    for m in (np.array([[1.0, 2.0], [2.0, 1.0]]), np.array([[-1.0, 2.0], [0.5, 3.0]])):
        want, got = _bools_of_traced_values(m), cf.jit(_bools_of_traced_values)(m)
        for w, g in zip(want, got):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_array_equal(np.asarray(g), w)
    with pytest.raises(ValueError, match="truth value of an array with more than one element is ambiguous"):
        cf.jit(lambda m: bool(m))(np.ones((2, 2)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
def test_math_trunc_of_a_numpy_scalar_is_numpys(dtype):
    """Only np.float64 (a float) has __trunc__: math.trunc of another NumPy scalar raises TypeError."""
    def f(x):
        return math.trunc(x[0] * 7)
    x = np.array([0.5]).astype(dtype)
    try:
        want = f(x)
    except TypeError as error:
        with pytest.raises(TypeError, match=str(error)):
            cf.jit(f)(x)
        return
    assert int(np.asarray(cf.jit(f)(x))) == want
