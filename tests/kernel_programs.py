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
