"""Programs with raise and assert under traced conditions, for tests/test_checks.py (a module of its
own: pytest rewrites the assert statements of test modules)."""
import numpy as np


class Diverged(ArithmeticError):
    pass


def sqrt_of_nonnegative(x):
    if x.min() < 0:
        raise ValueError("negative input")
    return np.sqrt(x)


def asserted(x):
    assert (x >= 0).all(), "x must be non-negative"
    return x * 2


def newton(x):
    steps = 0
    while np.abs(x * x - 2.0).max() > 1e-12:
        x = x - (x * x - 2.0) / (2 * x)
        steps += 1
        if steps > 3:
            raise RuntimeError(f"no convergence after {steps} steps, residual {np.abs(x * x - 2).max():.3e}")
    return x


def two_sites(x):
    if x[0] > 0:
        if x[1] > 0:
            raise Diverged("both positive", x.shape)
        y = x * 2
    else:
        y = x - 1
        if y.sum() < -10:
            raise KeyError(f"sum {y.sum()}")
    return y


def raise_in_rolled_loop(x):
    for i in range(12):
        x = x * 1.5
        if x.max() > 100:
            raise OverflowError(f"step {i}: {x.max()}")
    return x


def arrays_in_the_message(x):
    for i in range(12):
        x = x * 1.5
        if x.max() > 10:
            raise ValueError(f"step {i}: {x!r}, first two {x[:2]}, none {x[:0]}, total {x.sum()!r}, "
                             f"0-d {np.asarray(x[0])!r}, ints {x.astype(np.int32)}, {x[1]:.2f}")
    return x


def percent_formatted_message(x):
    k = np.array([255, -3])
    if x[0] > 5:
        raise ValueError("too big: %d > %s (%5.2f%%) %-4d| %+.1e %x {}" % (k[0], k[1], x[0] / 3, k[1], x[0], k[0]))
    if x[0] < -5:
        raise ValueError("%d of a float is int()'s: %d" % (k[0], x[0]))
    return x


def values_among_the_arguments(x):
    if x[0] > 1:
        raise ValueError("bad value", x[0], x[:2])   # (its args hold the values, as NumPy's would)
    return x


def many_sites_then_one(x):
    """Sites whose messages show 80 values in all (past the 64 slots, were they not shared: only the
    site that fires writes its values), then an assert that shows one (fuzz seeds 10005436 and 9991675)."""
    for i in tuple(range(20)):  # (a tuple: unrolled, 20 sites)
        if x[i % 2] > 50 + i:
            raise ValueError(f"{i}: {x[0]} {x[1]} {x[:2]}")
    assert x.sum() < 10, f"sum {x.sum()}"
    return x


def _require_finite(v):
    if not np.isfinite(v).all():
        raise FloatingPointError("not finite")
    return v


def via_helper(x):
    y = _require_finite(np.log(x))
    return y + 1


def raise_class_with_cause(x):
    if x.sum() > 0:
        raise Diverged from ValueError("cause")
    return x


PROGRAMS = [
    (sqrt_of_nonnegative, [np.array([1.0, 4.0]), np.array([-1.0, 4.0])]),
    (asserted, [np.array([1.0, 2.0]), np.array([1.0, -2.0])]),
    (newton, [np.array([1.4142, 1.4143]), np.array([1.0, 300.0])]),
    (two_sites, [np.array([1.0, 2.0]), np.array([1.0, -2.0]), np.array([-1.0, -20.0]), np.array([-1.0, 2.0])]),
    (raise_in_rolled_loop, [np.array([1.0, 2.0]), np.array([0.1, 0.2])]),
    (arrays_in_the_message, [np.array([1.0, -2.0, 3.0]), np.array([0.1, 0.2, -0.1])]),
    (percent_formatted_message, [np.array([1.0]), np.array([7.5]), np.array([-7.5])]),
    (values_among_the_arguments, [np.array([0.5, 1.0]), np.array([3.0, 4.0])]),
    (many_sites_then_one, [np.array([1.0, 2.0]), np.array([60.0, 2.0]), np.array([1.0, 9.5]), np.array([1.0, 80.0])]),
    (via_helper, [np.array([1.0, 2.0]), np.array([0.0, 2.0]), np.array([-1.0, 2.0])]),
    (raise_class_with_cause, [np.array([1.0]), np.array([-1.0])]),
]
