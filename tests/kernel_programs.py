"""Kernels for tests/test_kernels.py, written as numba.cuda kernels are (a module of their own: a
kernel's source is compiled, and pytest rewrites the asserts of test modules)."""
import math
import sys
from pathlib import Path

import numpy as np

import cofactor as cf

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from raised_kernels import fir  # noqa: E402,F401  (the benchmarks' FIR filter, checked here)


@cf.kernel
def laplace_1d(x, y):
    i = cf.grid(1)
    if 1 <= i < x.shape[0] - 1:
        y[i] = x[i - 1] - 2 * x[i] + x[i + 1]


@cf.kernel
def laplace_2d(u, out):
    i, j = cf.grid(2)
    n, m = u.shape
    if i >= 1 and i < n - 1 and j >= 1 and j < m - 1:
        out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]


@cf.kernel
def flat_scale(a, out):
    k = cf.grid(1)
    rows, cols = a.shape
    if k >= rows * cols:
        return                      # a guard: the rest runs only where it holds
    i = k // cols
    j = k % cols
    out[i, j] = a[i, j] * (i + 1) - j


@cf.kernel
def grid_stride_axpy(alpha, x, y):
    start = cf.grid(1)
    stride = cf.gridsize(1)
    for i in range(start, x.shape[0], stride):
        y[i] = alpha * x[i] + y[i]


@cf.kernel
def clipped_activation(x, y):
    i = cf.threadIdx.x + cf.blockIdx.x * cf.blockDim.x
    if i < x.shape[0]:
        v = x[i]
        if v > 0:
            r = math.tanh(v)
        else:
            r = math.exp(v) - 1.0
        y[i] = r if abs(v) < 2 else 0.5 * r


@cf.kernel
def histogram(values, bins, counts):
    i = cf.grid(1)
    if i < values.shape[0]:
        b = int(values[i] * bins)
        cf.atomic.add(counts, min(max(b, 0), bins - 1), 1)


@cf.kernel
def total(x, out):
    i = cf.grid(1)
    if i < x.shape[0]:
        cf.atomic.add(out, 0, x[i])  # one element: raised wrong by enzyme-ad 0.0.16


@cf.kernel
def tiled_copy(x, y):
    tile = cf.shared.array(32, np.float64)
    i = cf.grid(1)
    tile[cf.threadIdx.x] = x[i]
    cf.syncthreads()
    y[i] = tile[cf.threadIdx.x]


@cf.kernel
def heat_step(u, v, nu):
    i = cf.grid(1)
    n = u.shape[0]
    if 0 < i < n - 1:
        v[i] = u[i] + nu * (u[i - 1] - 2 * u[i] + u[i + 1])
    elif i == 0 or i == n - 1:
        v[i] = u[i]


def heat(u, steps):
    """A kernel called in a time loop, ping-ponging two buffers."""
    v = np.empty_like(u)
    for _ in range(steps):
        heat_step[(u.shape[0] + 31) // 32, 32](u, v, 0.2)
        heat_step[(u.shape[0] + 31) // 32, 32](v, u, 0.2)
    return u


def stencil_loss(x, w):
    y = np.zeros_like(x)
    laplace_1d[(x.shape[0] + 31) // 32, 32](x, y)
    return np.sum(w * y ** 2)


# --- adversarial kernels, checked against tests/kernel_simulator.py ---------------------------------

def _clip(v, lo, hi):
    return min(max(v, lo), hi)


@cf.kernel
def carried_branches(x, y, counts):
    i = cf.grid(1)
    if i < x.shape[0]:
        v = x[i]
        n = 0
        if v > 1.0:
            v = v * 2
            n = 1
        elif v < -1.0:
            v = -v
            n = 2
        else:
            n = 3
        y[i] = _clip(v, -1.5, 2.5) + n
        counts[i] = n * 10 + i % 7 - i // 3


@cf.kernel
def integer_arithmetic(a, out):
    i = cf.grid(1)
    if i < a.shape[0]:
        k = a[i]
        out[i, 0] = k // 3
        out[i, 1] = k % 3
        out[i, 2] = -k // 4
        out[i, 3] = (k * 7) % -5
        out[i, 4] = (k << 1) ^ (k >> 1) | 3


@cf.kernel
def loop_carried_integers(x, out):
    i = cf.grid(1)
    if i < x.shape[0]:
        total = 0
        best = -1.0
        steps = 0
        for k in range(i, x.shape[0]):
            total = total + x[k]
            if x[k] > best:
                best = x[k]
                steps += 1
        out[i, 0] = total
        out[i, 1] = best
        out[i, 2] = steps


@cf.kernel
def three_d(u, out):
    i, j, k = cf.grid(3)
    if i < u.shape[0] and j < u.shape[1] and k < u.shape[2]:
        out[i, j, k] = u[i, j, k] * (i - j) + u[-1, 0, k] + float(k)


@cf.kernel
def mixed_dtypes(x32, idx, flags, out):
    i = cf.grid(1)
    if i < x32.shape[0]:
        j = idx[i]
        if flags[i]:
            out[i] = x32[j] * 0.5 + j
        else:
            out[i] = math.sqrt(abs(x32[i])) - 1


@cf.kernel
def static_tuple_loop(x, y):
    i = cf.grid(1)
    if i < x.shape[0] - 2:
        acc = 0.0
        for k, w in ((0, 0.25), (1, 0.5), (2, 0.25)):
            acc += w * x[i + k]
        y[i] = acc if i % 2 == 0 else -acc


@cf.kernel
def parity_and_bits(y):
    i = cf.grid(1)
    if i < y.shape[0]:
        a = 1.0 if i % 2 == 0 else -1.0       # a remainder of an id in a condition
        b = 10.0 if (i >> 1) == 1 else 0.0
        c = 100.0 if (i & 1) == 0 and i * 3 > 9 else 0.0
        d = 1000.0 if (i + 1) // 2 == 2 else 0.0
        y[i] = a + b + c + d + (i % 3) * 0.5


def _adversarial_inputs(rng):
    return {
        "carried_branches": (carried_branches, 3, 16, [rng.standard_normal(40) * 2, np.zeros(40),
                                                       np.zeros(40, np.int64)]),
        "integer_arithmetic": (integer_arithmetic, 2, 16, [rng.integers(-50, 50, 30), np.zeros((30, 5), np.int64)]),
        "loop_carried_integers": (loop_carried_integers, 1, 32, [rng.standard_normal(20), np.zeros((20, 3))]),
        "three_d": (three_d, (2, 2, 1), (4, 3, 5), [rng.standard_normal((7, 5, 4)), np.zeros((7, 5, 4))]),
        "mixed_dtypes": (mixed_dtypes, 2, 16, [rng.standard_normal(25).astype(np.float32),
                                               rng.integers(0, 25, 25).astype(np.int32), rng.random(25) > 0.5,
                                               np.zeros(25, np.float32)]),
        "static_tuple_loop": (static_tuple_loop, 1, 32, [rng.standard_normal(30), np.zeros(30)]),
        "parity_and_bits": (parity_and_bits, 2, 8, [np.zeros(13)]),
    }


ADVERSARIAL = sorted(_adversarial_inputs(np.random.default_rng(0)))
