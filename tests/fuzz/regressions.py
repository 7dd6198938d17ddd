"""Named regression programs: small functions cofactor got wrong, each with its arguments.
tests/test_fuzz.py runs every one with the fuzzer's checker (NumPy's results and arguments, or
a clear CofactorError). Add a program here for each bug the fuzzer finds (shrunk)."""
import numpy as np

PROGRAMS = {}   # name -> (function, arguments)


def _named(fn, args):
    assert fn.__name__ not in PROGRAMS, f"two regressions named {fn.__name__}: the first would be lost"
    PROGRAMS[fn.__name__] = (fn, args)
    return fn


def regression(*args):
    return lambda fn: _named(fn, args)


def fuzzed(seed, dtypes):
    """A program the fuzzer wrote, on the arguments it gave it (seed ``seed``)."""
    def register(fn):
        import inspect
        from . import generator
        params = list(inspect.signature(fn).parameters)
        return _named(fn, generator.make_arguments(params, seed, dtypes))
    return register


A = np.array([0.5, -1.25, 2.0, 0.75, -0.5])
M = np.array([[0.5, -1.0, 1.5, 2.0], [-0.25, 0.75, -1.5, 1.0], [1.25, -2.0, 0.25, -0.75]])


@regression(A)
def rebind_one_arm_mutate_other(x):
    s = x * 0
    if x.sum() > 100:
        s = s + 1
    else:
        s -= 1                  # NumPy: -1
    return s


@regression(A)
def alias_before_loop(a):
    b = a
    for i in range(20):
        a += 1
    return b                    # the same array as a: a + 20


@regression(A)
def numpy_scalar_immutable(a):
    s = a.sum()
    t = s
    s -= 1                      # a new scalar: t keeps the sum
    return t


@regression(A)
def rolled_loop_argument_update(a):
    for i in range(9):          # more than 8 steps: one rolled loop
        a += 1.0


@regression(A)
def rebound_in_traced_arm_then_updated(a):
    b = a
    if a.sum() > 100:
        b = a * 2               # not taken: b is still a
    b += 1                      # so this updates a
    return a, b


@regression(A)
def rebinding_skipped_by_traced_break(a):
    b = a
    for i in range(4):
        if a[i] > 0:
            break               # before b is rebound
        b = b * 2
    b += 1                      # updates a
    return a, b


@regression(A)
def early_return_under_traced_if(a):
    if a.sum() > 100:
        return a
    a += 1
    return a


@regression(A)
def self_assignment_in_rolled_loop(a):
    for i in range(10):
        a = a                   # still the argument
        a += 0.5
    return a


@regression(A)
def nonlocal_counter(a):
    count = 0

    def bump():
        nonlocal count
        count += 1

    for i in range(10):
        bump()
    return count


@regression(A, 11)
def checksum_bits(a, n):
    h = n                       # a Python int ...
    for i in range(5):
        if a[i] > 0:            # ... that the first traced if makes traced
            h = (h * 33) & 0xFFFF
        else:
            h ^= 17
            h >>= 1
    return h


@regression(A)
def scalar_index_copy(a):
    r = a[0]                    # a NumPy scalar: a copy
    r += 1
    return a, r


@regression(M)
def rows_of_a_loop_are_views(m):
    for row in m:
        row *= 2                # updates m
    return m.sum()


@regression(A)
def element_copy_of_argument(a):
    r = a[4]                    # a NumPy scalar: updating it leaves a alone
    r -= 1.5
    return r


@regression(A)
def asarray_of_element_is_a_copy(a):
    z = np.asarray(a[4])        # a new 0-d array
    v = z[...]
    v /= -4.0                   # changes z, not a
    return z


@regression(np.float64(0.5))
def numpy_scalar_argument_alias(s):
    y = s
    s *= np.tanh(s)             # rebinds s: y keeps the argument
    return y


@regression(A)
def nonlocal_write_outside_loops(a):
    acc = 0.0

    def bump():
        nonlocal acc
        acc -= 0.5

    bump()
    return a + acc


@regression(A)
def early_return_falls_through_to_none(a):
    if a.sum() > 100:
        return a * 2            # not taken: NumPy returns None


@regression(A)
def argument_update_in_traced_while(a):
    k = 0
    while k < 3 and a.max() > a.min():
        k += 1
        a //= -4.0
    return k


@regression(A, 11)
def argument_update_in_range_n_loop(a, n):
    for i in range(n):          # n = 11: a rolled loop
        a /= 1.5


@regression(A)
def return_inside_traced_while(a):
    k = 0
    while k < 4 and a.max() > 0:
        a -= 1.0                # kept when the loop returns
        return k
    return -1


@regression(np.float64(-0.5))
def conditional_expression_of_arrays(s):
    return np.sin(np.full((3, 4), 3.0)) if s < 0.0 else np.arange(12.0).reshape(3, 4)


@regression(np.array([-1.5, 2.25, -0.5, 1.75, 0.5]))
def overlapping_slice_copy_then_update(b):
    b[1:] = b[:-1]              # optimize="auto" got b[4] wrong
    b[:-1] //= 2.0


@regression(np.array([-1.5, 2.25, -0.5, 1.75, 0.5]), np.array([3, -2, 0, 1, 4]))
def slice_self_assignment_then_write(b, c):
    b[1:] = b[1:]
    b[:-1] = c[:-1]             # optimize="auto" got b[4] wrong


@regression(np.array([4.0, 1.0, -2.0, -1.0, -4.0]), np.array(0.75))
def scalar_or_array_updated_in_rolled_loop(c, t):
    if t > 0.5:
        t = np.exp(c.mean())    # a NumPy scalar on this path, the 0-d argument on the other
    for i in range(10):
        t //= 0.5               # rebinds the scalar, or updates the argument in place
    return t


@regression(np.array([0.51, -1.89, -1.76, -0.23, 1.99]), np.array(0.45))
def python_number_joins_a_mirrored_choice(b, t):
    z = np.where(b[-1] > 0.5, np.asarray(t), t)     # a 0-d array made here
    if b.max() > b.min():
        z = 0.25                # a Python float on this path
    elif b.max() > 1.0:
        y = z                   # z is shared on this one
        k = 0
        while k < 2 and t < 0.0:
            k += 1
    return z


@regression(np.array([1.0, 2.0, 3.0]))
def zero_d_array_or_python_constant(a):
    r = np.zeros(())
    if (a < -0.5).all():
        r = 0.25                # not taken: r stays the 0-d array
    return r


@regression(np.float32(0.91))
def python_float_or_float32_scalar(s):
    if s > 2.0:
        return s
    return 0.1                  # NEP 50: the variable is float32, so 0.1 comes back as float32(0.1)


@regression(np.array([-6, 6, -8, -1, -5]))
def abs_of_integer_xor(c):
    return np.abs(c ^ 7), np.abs(c | 1)     # optimize="auto" dropped the abs (abs_positive_simplify)


@regression(np.array(-0.64))
def python_error_after_nonlocal_rebinding(t):
    count = 0

    def bump(arg):
        nonlocal count
        count &= 5
        t.fill(0.5)             # the second call: t is the float the first returned
        return 2.0

    t = bump(count)
    bump(count)                 # NumPy and cofactor: Python's AttributeError, word for word
    return t


@regression(np.array([-2, 3, 3, -8, 8], dtype=np.int32))
def numpy_scalars_of_two_dtypes_on_two_paths(c):
    r = np.int64(1)
    if c.max() > 100:
        return r                # int64 on this path
    return c[1]                 # int32 on this one (NumPy: int32 3): a clear error, not int64 3


@regression(np.array([-1.1, 0.25, -0.61, -0.62, -1.79], dtype=np.float32), M.copy())
def reductions_of_opposite_compares(a, m):
    if (a < 0.5).all() and (a > 0.5).all():     # never both; optimize="auto" merged the two reduces
        m += m                                  # (cse_reduce_transposed) and ran this update
    return np.count_nonzero(a < 0.5) - np.count_nonzero(a > 0.5)


@regression(A, np.array(0.71))
def one_node_for_two_leaves_of_a_later_path(a, t):
    if a.max() < 100:
        return t, t + 1         # NumPy: (t, 1.71); the path below returns one object twice
    y = t
    if a.sum() > 0.5:
        y = t * 2
    return y, y


@regression(A)
def array_pair_or_one_array_twice(a):
    if a.sum() < 0.5:
        b = a * 2
        if a.sum() > 100:
            b = a
        r = (b, b)
    else:
        r = (a, a * 3)          # NumPy: a and a * 3, not a twice
    return r


@regression(np.array([-1.0, 0.69, 0.13, -1.41, -1.94]))
def array_returned_in_two_places_after_early_return(a):
    if a[1] < a[4]:
        return 1.0, 2.0
    z = np.asarray(a.mean())    # a 0-d array made here
    if a.max() > 2.0:
        return z, z
    return 0.0, z               # seed 28878: z came back as 0. (one leaf's choice gave z's node zeros)


@regression(A)
def two_variables_share_a_choice_then_hold_two_numbers(a):
    r, s = 7.0, 8.0
    if a[1] > 0:                # not taken: r and s keep 7.0 and 8.0 (were both 8.0)
        z = np.asarray(a.mean())
        r = 1.0
        if a[0] > 0:
            r = z
        s = r                   # one Either, held by both
    return r, s


def _mean_or_sum(a):
    m, t = np.asarray(a.mean()), np.asarray(a.sum())
    r = m
    if a[1] < 0:
        r = t
    return r, m                 # an Either of m and t, and m itself


@regression(-A)
def alias_of_one_choice_of_a_returned_either(a):
    r, s = 1.0, 2.0
    if a[0] < 0:
        s, r = _mean_or_sum(a)[::-1]
    s[...] = 5.0                # r is s (a[1] >= 0): it sees the write
    return r, s


@regression(np.ones((3, 4)), np.array([8, 5, 1, -8, 5]))
def loop_either_carried_by_an_if_choice_with_a_mirror(m, c):
    if not c[2] < c[2]:         # taken
        k0 = 0
        while k0 < 2 and m.mean() > -0.5:
            k0 += 1
            x2 = c              # the loop's Choice of c has no mirror (x2 shares its array), the if's has one
            c = c
    c[...] -= np.min(c)
    return c.sum()              # 51, c is [16 13 9 0 13] (was 0: the if's mirror carried the loop's placeholder)


@regression(np.array([np.nan, 5.0, -1.0]))
def select_of_compare_operands_with_nan(a):
    # optimize="auto" made minimum / maximum of these (compare_select_simplify): NaN where NumPy has 5.0
    return (a[0] if a[0] < a[1] else a[1]), np.where(a > 0.0, a, 0.0), np.where(a < a[1], a, a[1])


@regression(np.array([1.11, -1.07, 0.91, -0.65, 1.33]))
def strided_view_written_in_a_loop(b):
    for i in range(7):          # unrolled: the second write reads the first through its select
        v9 = b[::2]
        v9[1:] = v9[:-1]
    return b                    # [1.11 -1.07 1.11 -0.65 1.11] (slice_elementwise left b[-1] at 0.91)


@regression(np.array([1.0, -2.0]))
def assignment_after_a_nested_early_return(x):
    if x[0] > 0:
        if x[1] > 0:
            return x
        y = x * 2               # after the inner if, on the path that did not return
    else:
        y = x - 1
    return y                    # [2. -4.] (was x: y was undefined after the inner if, and returning it dropped it)


@regression(np.array([-1.89, -1.53, 0.27, 1.49, -1.87]), np.array([-7, 6, -3, -7, 4]), np.array(0.81))
def conditional_expression_of_a_view_in_a_loop(a, c, t):
    k0 = 0
    while k0 < 2 and (a > -1.0).any():
        k0 += 1
        c = (c[::-1] if t < 1.0 else c // 2)   # a view of c, or a new array
    c ^= np.int64(1)            # NumPy writes the argument; cofactor made the value a copy (seed 50880): now an error
    return k0


@regression(np.array([0.5, 1.0]), np.array(0.25))
def python_number_or_array(b, t):
    if b.max() > 0.75:
        t = 1.5                 # a Python float on this path, the 0-d array argument on the other
    return t[...]               # NumPy: TypeError 'float' object is not subscriptable (seed 51645: a result)


@regression(np.array([0.0, 5.0, 1.0, 3.0, 4.0]), np.array(0.0))
def mirror_chosen_in_each_world(b, t):
    if t > 0.5:
        return b
    x1 = b + 1
    for i in range(3):
        if b.max() > 0:
            return x1 * 2       # NumPy: 2 * (b + 1); cofactor returned b + 1 (seeds 63828, 68058)
    return x1


@regression(np.zeros(3), np.ones(3), -np.ones(2))
def argument_rebound_in_rolled_loop(a, b, m):
    for i in range(10):
        b *= 0.5                # the caller's b, until b is rebound: 0.5 ** 10 (seed 61105: a's zeros)
        if m.sum() > 0.5:
            b = a
    return a


@regression(np.array([1.0, 2.0, 4.0]))
def scalar_methods_take_traced_values(b):
    s = b.sum()
    s.fill(0.0)                 # fills a temporary: s stays 7
    t = np.float32(1.0)
    t.fill(b.mean())            # likewise (seed 55231: an internal error)
    return s, t, np.float64(2.5).clip(b[0], b[1])


@regression(M, np.array(0.46), np.int64(0))
def loop_unswitched_into_megabytes(m, t, j):
    x0 = m
    k1 = 0
    while k1 < 4 and m.mean() > -0.5:
        k1 += 1
        for i2 in range(8):
            x0 = np.ones((3, 4), dtype="float64")
            if (m < 1.0).any():
                t /= (np.abs(0.25) + 1.0)
                break
        t += x0.min()
    return t                    # seed 61640: loop_unswitch made 38 kB of MLIR 5.2 MB, compiled for minutes


# Programs of the 20,000-program run at f9eae2d, fixed since.
@fuzzed(61105, ('float64', 'int64'))  # wrong before the fix of mirror_chosen_in_each_world
def seed_61105(a, b, m, s, n):
    m = m[::-1].copy()
    for i0 in range(10):
        b *= np.tanh(b)
        if np.sum(m) > 0.5:
            a[...] = s
            b = a
        else:
            y1 = s
    return (-np.arange(5)) - np.int64(3)


@fuzzed(63828, ('float32', 'int32'))  # wrong before the fix of mirror_chosen_in_each_world
def seed_63828(b, m, c, s, t):
    b[::-1] -= b
    z0 = t.copy()
    c -= c
    if t > 0.5:
        return m, b, np.sin(np.zeros((3, 4), dtype=np.float32))
    m[:] = np.ones_like(m, dtype=np.int32)
    x1 = (b + z0) + b
    x2 = np.zeros((3, 4), dtype=np.float32)
    for row3 in m:
        b = b
    x1[1:-1] //= (np.abs(np.int32(7)) + 1.0)
    np.add(np.float64(-1.0), np.full(4, np.float32(-0.5)), out=m[::-1])
    for i4 in range(7):
        m = m
        if x1[2] < b[1]:
            if b.max() > x1.min():
                return x2, x1[::-1].copy(), m
        else:
            x5 = c
        x1 = x1
    return m[::-1], x1, x2


@fuzzed(68058, ('float64', 'int64'))  # wrong before the fix of mirror_chosen_in_each_world
def seed_68058(a, s, t):
    if (a > 2.0).all():
        return a, s + 0.5
    k0 = 0
    while k0 < 5 and a[4] < a[4]:
        k0 += 1
        for i1 in range(2):
            if k0 % 2 == 0:
                return a, t
        for i2 in range(0):
            a = np.tanh(np.where(s > 2.0, a[::-1], a))
        else:
            for e3 in a:
                t = np.where(k0 > 0.5, t, 1.0)
            r4 = k0 - 2
        t = t.copy()
    if a.min() < -1.0:
        return np.where(a[k0 % 5] > 0.5, np.tanh(np.zeros_like(a)), a[k0 % 5]), t
    for i5 in range(7):
        if s > 0.0:
            a[:-1] += np.arange(4, dtype=np.float64)
        else:
            if k0 < 3:
                continue
            v6 = t[...]
    k7 = 0
    while k7 < 7 and t > -1.0:
        k7 += 1
        a //= -4.0
    return a, a[2]


def _seed_69023_helper0(x, y):
    x[::2] = y[4]


@fuzzed(69023, ('float64', 'int64'))  # wrong before the fix of mirror_chosen_in_each_world
def seed_69023(a, b, m, j):
    _seed_69023_helper0(a, np.exp(np.tanh(a)))
    j = j
    a -= b
    if b.max() > b.min():
        k1 = 0
        while k1 < 7:
            k1 += 1
            if b.max() > b.min():
                b[:-1] /= (np.abs(a[1:]) + 1.0)
                continue
            if m.min() > 0.0 and b[k1 % 5] < b[k1 % 5]:
                break
            a = b
        else:
            p2 = 0.5
    elif (m > 1.0).all():
        b = (a[::-1] + a if b.max() > b.min() else (b[::-1] if a[0] < a[j % 5] else b))
    else:
        x3 = a[::-1]
    return m, b.copy() / -4.0, np.where(m[j % 3, j % 4] > 2.0, np.abs(np.ones(5, dtype=np.int64)), j), b


@fuzzed(51569, ('float32', 'int32'))  # NumPy's element-by-element overlapping assignment (test_mutation)
def seed_51569(b, m, t):
    if t > -0.5:
        if b[1] < b[1] and b[2] < b[4]:
            t[...] = b.min()
            x0 = np.empty(5, dtype=np.float32)
            x0[...] = t
    np.maximum(0.5, m.min(), out=b)
    t //= -4.0
    acc1 = 0.0
    for i2 in range(12):
        acc1 = acc1 + b[i2 % 5]
    m[2] -= b[-1]
    for row3 in m:
        r4 = np.sin(np.float32(3.0))
        m[:, -1] = row3[1:]
        b[::-1] = row3.min()
    y5 = m
    y6 = acc1
    acc1 += 1.0
    return acc1, t


@fuzzed(67139, ('float64', 'int64'))  # NumPy's element-by-element overlapping assignment (test_mutation)
def seed_67139(a, m, s):
    a /= 0.5
    for row0 in m:
        row0[1:] = m[:, -1]
        v1 = a[1:-1]
    a = a[::-1] + np.zeros(5)
    v2 = a[::-1]
    v2[1:] = np.int64(1)
    return a


def _seed_55231_helper1(x, y):
    x[1:] = x[:-1]
    z2 = np.asarray(np.maximum(x[-1], x[0]), dtype="float32")
    p3 = -1.0
    acc4 = 0.0
    for i5 in range(3):
        acc4 = acc4 + x[i5 % 5]
    return acc4


@fuzzed(55231, ('float32', 'int32'))  # an internal error before scalar_methods_take_traced_values
def seed_55231(a, b, s, t):
    s = b.min()
    s += s
    b[:] /= (np.abs(t) + 1.0)
    if s > 0.5:
        np.subtract(a, b[1], out=a)
    elif b[0] < a[0]:
        b[...] *= np.tanh(s)
        v0 = a.reshape(1, 5)
    elif (a > 0.5).all():
        r6 = _seed_55231_helper1(b * 0.0, t)
    else:
        b[::-1] = 7
    np.multiply(t, 2.0, out=a[1:-1])
    np.subtract(b[:-1], b[1], out=a[1:])
    cnt8 = 0
    def bump7():
        nonlocal cnt8
        cnt8 ^= 5
        t.fill(b.mean())
        v9 = t[...]
        return cnt8
    t = np.float32(1.0)
    bump7()
    s = t
    a += 2.0
    np.maximum(np.zeros(5), b, out=a[...])
    a[::-1] *= np.tanh(np.zeros(5, dtype=np.int32))
    y10 = cnt8
    r11 = bump7()
    r11 = y10
    return a.mean(), b


# The next four differ from NumPy only where NumPy's own answer moves when its operations round
# otherwise (XLA's tanh, an FMA, a division by a constant done as a multiply, subnormals flushed):
# the runner's "rounding" category (tests/fuzz/rounding.py). They stay here so that the oracle keeps
# telling them from wrong answers, and a semantic change in them still fails.
@fuzzed(501341, ("float64", "int64"))  # XLA's mean is sum * (1/12), fused with the subtraction
def seed_501341(m, t):                  # of the comparison: row 0 != mean, so a continue flips
    m = np.exp(np.tanh(np.tanh(np.ones_like(m))))
    v1 = m[:, ::2]
    for row3 in m:
        acc4 = 0
        for i5 in range(5):
            acc4 += row3[i5 % 4]
        if row3.max() > v1.min():
            continue
        for i6 in range(10):
            t += acc4
        else:
            row3[:] = np.mean(m)
    return np.arange(5.0) - np.zeros(5, dtype=np.int64)


@fuzzed(100266, ("float32", "int32"))  # 11 steps of b[:-1] *= np.tanh(b[1:]) leave NumPy a subnormal
def seed_100266(b, s, t, n):          # -9.8e-45 where XLA flushes to -0.0, so b // 1.5 is -1 in NumPy, -0 here
    for i0 in range(11):
        b[:-1] *= np.tanh(b[1:])
        b[:-1] /= 1.5
    else:
        b //= 1.5
        if n > 7:
            return s, b, b * 1.5, b - s
    return s, b


def _seed_208715_helper0(x):
    x += x.max()
    for i1 in range(11):
        x2 = np.where(x[2] > 2.0, np.sin(np.arange(5.0)), -0.5)
        x[::-1] += x[i1 % 5]
    else:
        v3 = x[1:-1]


@fuzzed(208715, ('float32', 'int32'))   # float32: result[1] 0.095663 against NumPy's 0.094691
def seed_208715(b, c, t, n):
    t = b.min()
    _seed_208715_helper0(b)
    c[::-1] = c
    c = c[::-1]
    b[n % 5] = 0.25
    v4 = b[::-1]
    k5 = 0
    while k5 < 4 and v4[2] < v4[2]:
        k5 += 1
        for i6 in range(n):
            c = c
            if b[i6 % 5] < b[i6 % 5]:
                continue
        v4 -= np.zeros(5, dtype=np.float32)
    v4[::-1] //= 0.5
    if v4[0] < c[4]:
        acc7 = 0.0
        for i8 in range(5):
            acc7 = acc7 + b[i8 % 5]
        acc7 = t
        w9 = v4[1:-1]
    else:
        acc10 = 0.0
        for i11 in range(3):
            acc10 += b[i11 % 5]
    b /= 1.5
    t *= np.tanh(v4.mean())
    x12 = np.sin(b[::-1])
    v4[::2] = np.float64(3.0)
    return n, x12


def _seed_209552_helper0(x, y):
    x[...] &= x
    y -= y[0]
    x1 = np.where(y[0, 3] > -1.0, x[::-1] - x, x[1])
    x -= x[0]


@fuzzed(209552, ('float64', 'int64'))   # an FMA: a row minus itself is -1e-17, not 0, and // 1.5 makes it -1
def seed_209552(m, c, s, n, j):
    m *= np.tanh(c[1:])
    _seed_209552_helper0(c, m)
    c = -(-c)
    if s < 2.0:
        m = np.sin(m)
        for row2 in m:
            c += c[::-1]
    else:
        m = np.zeros_like(m)
    r3 = (np.int64(3) if n % 2 == 0 else c[1]) + c[n % 5]
    if n < 3:
        return np.where(c > -0.5, np.arange(5.0), m[n % 3, n % 4]) * 0.0, m
    c[-1] = j
    c[1] = n
    c = (c // 5) - c[::-1]
    k4 = 0
    while k4 < 4:
        k4 += 1
        r3 -= n
        m //= 1.5
    v5 = c.reshape(1, 5)
    y6 = n
    m = np.maximum(m[::-1], s)
    return np.where(s > -1.0, (np.ones(5) if m.max() > m.min() else np.ones(5)), np.full(5, 0.5)), m


@fuzzed(214092, ('float32', 'int32'))  # an internal error, then a silent copy of the argument t (now a clear error)
def seed_214092(a, b, m, c, s, t, n):
    for row0 in m:
        c[::2] = np.ones(3, dtype=np.int32)
    else:
        s = t
    acc2 = 0.0
    def bump1():
        nonlocal acc2, a
        acc2 //= 1.5
        return acc2
    r3 = (bump1() if b[n % 5] < a[n % 5] else s)
    r3 /= (np.abs(np.float32(0.25)) + 1.0)
    r4 = bump1()
    s /= (np.abs(np.float32(n)) + 1.0)
    m[:, -1] = m[:, 0]
    for i5 in range(n):
        m[:] -= np.float32(3.0)
        c ^= np.arange(5, dtype=np.int64)
    return a, (b - np.mean(m)) + acc2, r3


# From the 20,000-program run at 2a1e5c0 (seeds 600000-619999).
@fuzzed(619181, ("float32", "int32"))  # XLA updated y in place with what it read from y itself (through
def seed_619181(m, s):                 # the reshape of m's rows): optimize=False gave y[0] everywhere
    lst0 = []
    for i1 in range(3):
        lst0.append(m[i1 % 3].copy())
    y2 = sum(lst0)
    y2[1:] = y2[:-1]
    r4 = m[2, 0]
    if not y2[0] < y2[-1]:
        return (m, 5 + 5, r4)
    m[:] = r4
    return (m, 0, r4)


@regression(M)
def shifted_rows_sum(m):               # the same XLA in-place update, with arithmetic in the update
    y = np.sin(m[0]) * 2
    y[1:] = y[:-1] * 1.0
    return y


@fuzzed(616069, ("float32", "int32"))  # an internal error where NumPy refuses an array for one element
def seed_616069(m, n):
    y = m[0] * 2
    m[0, 1] = y
    return n


@fuzzed(609498, ("float64", "int32"))  # a raise that always happens came before a run-time check that
def seed_609498(a, b, s, t, j):        # fires first in NumPy (check 6 fires; cofactor raised check 9)
    def helper5(x):
        x[...] = 2
        if np.min(x) > 1.0:
            raise ValueError('check 6')
        return x
    x7 = helper5(a)
    j = 5
    if j > 2:
        raise ValueError('check 9')
    return x7, b, s, t


@fuzzed(618439, ("float64", "int64"))  # the same with an assert in a nested function and one in a loop
def seed_618439(a, c):
    acc5 = np.zeros(5)

    def bump4():
        assert not (a.max() > acc5.min()), 'check 6'
    bump4()
    for i11 in range(7):
        assert not (i11 > 5), 'check 12'
    return a, c


@fuzzed(607746, ("float64", "int32"))  # rounding: XLA fuses a * t - min(a * t) into an FMA, -2.6e-20 at the
def seed_607746(a, n):                 # minimum instead of 0, which // 1.0 makes -1
    np.multiply(np.arange(4, dtype=np.float64), 1.5, out=a[:-1])
    for e1 in a:
        a *= np.tanh(np.float64(0.19))
    a -= a.min()
    a //= np.abs(np.zeros(5)) + 1.0
    return n


@fuzzed(610354, ("float64", "int64"))  # past the op budget at the return: the error named no line
def seed_610354(b, c, t, n):
    for i0 in range(n):
        t -= t
        if t > 0.0:
            b //= 2.0
            k1 = 0
            while k1 < 2 and b.max() > b.min():
                k1 += 1
                if c[1] < b[i0 % 5]:
                    break
                np.add(b, k1, out=b)
                t = t
        else:
            if n < 2:
                b = b
            else:
                c ^= c
                b[:] = b
            np.maximum(c.sum(), c[::2], out=c[1:-1])
            c = np.where(t > -0.5, c[::-1], 7)
    b += c
    if t < 0.0:
        t -= t
        for i2 in range(n):
            y3 = i2
            if y3 < 2 and (b > 1.0).all():
                break
            if b.max() > b.min() and n % 2 == 0:
                t[...] = b[1]
                continue
    else:
        c -= np.int64(7)
    return n, b


def _raise_if_large(x):
    if x.max() > 0.5:
        raise ValueError("check 2")


@regression(A)                          # seeds 702137, 702758, 703696: NumPy's error at a line that always
def numpy_error_after_a_check(a):      # runs came before a run-time check met earlier that fires first
    _raise_if_large(a)
    return a[7]


@regression(A * 0.0)
def numpy_error_after_a_check_that_holds(a):
    _raise_if_large(a)
    return a.reshape(3, 3)


@fuzzed(800975, ("float64", "int64"))  # rounding: m.mean() is 0.5 + 1 ulp in NumPy, 0.5 - 1 ulp in XLA,
def seed_800975(m, s, n):              # which sums the twelve numbers in another order
    if (m > -0.5).all() and m.mean() < 0.5:
        return n
    return -n


@fuzzed(1201931, ("float64", "int64"))  # rounding: b holds five equal numbers x; NumPy's b.mean() is
def seed_1201931(a, b, n):              # sum / 5, one unit from x, XLA's sum * (1 / 5) is x itself
    a += n
    np.subtract(a.min(), a[4], out=b)
    b[4] = b.mean()
    if b.max() > b.min():
        a[n % 5] = b[-1]
    return a


@fuzzed(1213217, ("float64", "int64"))  # ndarray.fill of a sequence: NumPy's ValueError, not an internal
def seed_1213217(m, c):                 # error from broadcasting a row into the whole array
    rows = []
    for i in range(5):
        rows.append(m[i % 3] * 2)
    m.fill(sum(rows))
    return c


@regression(np.array([-0.56, 1.58], np.float32), np.array(0.1, np.float32))  # seed 6005159, shrunk: np.tanh of
def python_float_or_float32_scalar_by_path(a, t):                            # a Python float on one path and a
    p0 = -1.5                                                                # float32 on the other: float64 or
    if t < 0.5:                                                              # float32, by path (a clear error)
        pass
    else:
        p0 -= np.max(a)
    return np.tanh(p0), p0 * a, p0 > 0.0


G_SHARED = np.array([0.03, -0.09, 0.86, 1.41, 1.59])


@regression(A.copy(), A * 2)    # seeds 9016119, 9019295 (20,000-program run at 5ae3ad1), shrunk: a global read
def global_chosen_in_a_loop_then_written(a, b):  # first inside a traced loop and bound to a local there was
    k0 = 0                                       # taken for an array nothing else sees, and replaced by a
    while k0 < 9 and a.sum() > -0.5:             # copy: the write through the local missed the global
        k0 += 1
        if (a > 1.0).any():
            b = G_SHARED
    b[k0 % 5] -= k0
    return k0, G_SHARED.sum()


@regression(A.copy(), A * 2)
def global_chosen_in_a_branch_then_written(a, b):
    if (a > 1.0).any():
        b = G_SHARED
    b[0] -= 100
    return G_SHARED * 1


@regression(A.copy(), A * 2, np.int32(7))   # seed 152 (CI's seeds, with a rewrite of this session), shrunk: an
def element_read_after_a_whole_array_write(a, b, j):  # element read after a write of the whole array was taken
    b[...] = a                                        # for one after a one-element write, and reshaped the
    b.fill(b[j % 5] * 0.5)                            # whole update to one element (an internal error)
    return b.max() > b.min()


G_9300801 = np.array([1.97, 0.5, -1.98, 1.12, 1.51], dtype=np.float32)


def _halve_a_window(x):
    x //= 2.0
    v10 = x[1:-1]
    v10 *= np.tanh(np.float32(0.5))
    return v10[1]


@regression(np.array([1.97, 0.5, -1.98, 1.12, 1.51], np.float32),  # seed 9300801 (3,000-program run at 6cee42e),
            np.array([-0.44, 1.39, 0.42, 1.34, 1.91], np.float32),  # shrunk by hand: garbage (-1e37) in b when
            np.array(0.85, np.float32), 11)                          # optimized, from Enzyme-JAX's loop raising
def loop_raising_garbage_in_an_argument(a, b, t, n):                 # (excluded: pipelines.py)
    k0 = 1
    while k0 < 3 and (n % 2 == 0 or n > 1):
        k0 += 1
        a = np.arange(5, dtype=np.float32) * -1.5
        for i1 in range(11):
            x2 = np.empty(5, dtype=np.float32)
            x2[...] = np.float32(0.25)
            b[:-i1:-1] -= np.sum(np.flip(x2[:i1 - 2]) * x2[:i1 - 2])
        else:
            b[0] -= np.int32(7)
    a[G_9300801 > 1.0] -= a.sum()
    G_9300801[::2] -= np.full(3, -1.0, dtype=np.float32)
    b[2] = 3
    b //= (np.abs(np.dot(G_9300801[:-2:-1], G_9300801[:-2:-1])) + 1.0)
    for i8 in range(5):
        _halve_a_window(a[::-1])
    return n, k0, a


@regression(np.array([-0.44, 1.39, 0.42, 1.34, 1.91], np.float32))  # seed 9300801 made small: the optimized
def flipped_window_times_window(x):                                  # program summed -2.64, not 10.96
    s = np.float32(0)
    for i in range(11):
        s += np.sum(np.flip(x[:i - 2]) * x[:i - 2])
    return s


@regression(np.array([-0.09, -1.78, 0.3, -1.11, -1.84], np.float32))  # seed 9201563 (20,000-program run at
def mirrored_steps_in_a_nest(a):                                        # 4efd30e), shrunk: 5 x 8 unrolled steps
    v2 = a[:]                                                           # that each read the last one twice; XLA
    for e3 in G_SHARED:                                                 # fused them into one loop recomputing
        for i4 in range(8):                                             # 2**40 values (the run never returned)
            a *= np.tanh(v2[::-1])
    return a


@regression(M.copy(), np.float64(-0.47), 5)  # seed 9201739 (same run): 5 x 6 unrolled steps m + m[::-1];
def mirrored_sums_in_a_nest(m, s, n):        # XLA's compile of the unoptimized program took minutes
    for i0 in range(n):
        m[0] += n
        for i1 in range(6):
            m *= 0.0
            m[...] -= i1
            m = m + m[::-1]
    return m, m.sum(), m


@regression(np.array([1.21, -1.88, 1.63, 1.27, 0.83], np.float32),  # seed 9204298 (same run): rows times a
            M.astype(np.float32), np.float32(-0.24), 3)              # Python-float while loop, unrolled
def mirrored_steps_in_rows_and_a_while(a, m, s, n):
    y0 = s
    s = np.sum(np.flip(a[a > -1.0]) * a[a > -1.0])
    for row1 in m:
        k2 = 0.0
        while k2 < 4.5 and n > 1:
            k2 += 0.5
            m *= np.tanh(m[::-1])
            y0 -= np.float32(1.5)
    return a, y0


@regression(np.array([-0.76, 1.52, -1.03, -1.17, 1.38]))  # seed 58 of the generator with := in while tests: the
def walrus_in_a_while_test_with_a_break(a):                # test sat in a lambda (the break flag's and), so :=
    k0 = 0                                                 # bound k0 there (UnboundLocalError)
    while (k0 := (k0 + 1)) <= 12:
        break
    return a, k0


@regression(np.ones(5), 0.5)  # a traced index in a while's test read a clamped y[-1] until j reached 100
def index_past_the_end_in_a_while_test(y, t):
    j = 0
    while y[j] > t and j < 100:
        j += 1
    return j


@fuzzed(9801216, ("float64", "int64"))  # a reshape of a variable that is a reversed view of m on one path
def reshape_of_a_view_chosen_by_a_branch(a, b, m, t, n):  # was a view of m (NumPy copies it): writes reached m
    m = m[::-1]
    if a[n % 5] < b[n % 5]:
        m = np.arange(12.0).reshape(3, 4)
    v1 = m.reshape(12)
    v1[::2] //= np.abs(v1[n % 12]) + 1.0
    return t


@fuzzed(9816256, ("float32", "int32"))  # NumPy converts a NumPy scalar stored into an int array to a Python int:
def numpy_scalar_out_of_range_stored_in_an_int_array(c):  # OverflowError (cofactor cast it)
    c[::-1] = c.sum() * 2000000000
    return c


@fuzzed(9927450, ("float64", "int64"))  # a[-6:6:-1] of five elements is empty (NumPy's start is -1): cofactor's
def reversed_slice_past_the_start(a, b, x):  # NumPy emulation read -1 as the last element, a ShapeError
    for i7 in range(7):
        a[-i7:i7:-1] //= -4.0
    b ^= 1
    return x


def _mask_products(x):
    x[:-1] = x.min()
    return np.sum(np.flip(x[x > 0.5]) * x[x > 0.5])


@fuzzed(9970477, ("float64", "int64"))  # the loop raising's shield read the float constant -inf (a masked max's
def masked_products_in_a_while(a, t):   # identity) as an index: an InternalError (int() of infinity)
    k0 = 0.0
    while k0 < 1.25 and a[0] < a[0]:
        _mask_products(a)
    return t


def _masked_dot(x, y):
    return np.sum(np.flip(y[y > 0.0]) * y[y > 0.0])


@fuzzed(10005436, ("float64", "int64"))  # the loop's run-time length checks took all 64 message slots: the
def assert_message_after_many_checks(b, c, t, n):  # assert's message showed TracedArray(...), not -0.22
    k3 = 1
    while (k3 := (k3 + 3)) <= 28:
        _masked_dot(c[::-1], b)
    assert not b[n % 5] < c[n % 5], f'check 5: {t}'
    return 2.0

