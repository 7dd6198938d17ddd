"""Programs the fuzzer found that cofactor still gets wrong (tests/test_fuzz.py runs each as an
expected failure): a fix moves its program to regressions.py."""
import numpy as np

G_9300801 = np.array([1.97, 0.5, -1.98, 1.12, 1.51], dtype=np.float32)


def helper_9300801(x):
    x //= 2.0
    v10 = x[1:-1]
    v10 *= np.tanh(np.float32(0.5))
    return v10[1]


def seed_9300801(a, b, t, n):
    """Fuzz seed 9300801 (3,000-program run at 6cee42e), shrunk only by hand: optimize=False gives
    NumPy's b, the optimized program (curated, upstream and auto alike, also at 4efd30e) garbage
    (-1e37): a silent miscompile of Enzyme-JAX's, not yet found (excluding add_simplify fixes this
    program but not flipped_window_times_window below)."""
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
        helper_9300801(a[::-1])
    return n, k0, a


def flipped_window_times_window(x):
    """Seed 9300801 made small: a window with a traced stop that wraps (i - 2 < 0), flipped and
    multiplied by itself, in a rolled loop: the optimized program sums otherwise (-2.64, not 10.96).
    Without the product (the flip alone), or with a stop that does not wrap, it is right."""
    s = np.float32(0)
    for i in range(11):
        s += np.sum(np.flip(x[:i - 2]) * x[:i - 2])
    return s


PROGRAMS = {"seed_9300801": (seed_9300801, (np.array([1.97, 0.5, -1.98, 1.12, 1.51], np.float32),
                                            np.array([-0.44, 1.39, 0.42, 1.34, 1.91], np.float32),
                                            np.array(0.85, np.float32), 11)),
            "flipped_window_times_window": (flipped_window_times_window,
                                            (np.array([-0.44, 1.39, 0.42, 1.34, 1.91], np.float32),))}
