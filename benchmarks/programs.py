"""The benchmark programs: plain NumPy (what cofactor compiles unchanged) and a jax.numpy port of
the same algorithm for jax.jit, with inputs at a size where one run takes 1-100 ms here.

A program is a function ``name(quick) -> (numpy_fn or None, cofactor_fn, jax_fn or None, inputs)``
registered with ``@program`` (``jax_fn`` None: JAX cannot express it as written); ``quick`` asks for smaller inputs.  ``cofactor_fn`` is what
benchmarks/run.py hands to ``cf.jit`` (usually ``numpy_fn`` itself; a gradient program passes
its cofactor autodiff function and ``None`` for NumPy, and its result is checked against JAX's).
``inputs`` are NumPy arrays; run.py puts them on the device for cofactor and JAX, unless the
program is registered with ``host_inputs=True``.  Programs registered with ``dispatch=True``
measure per-call overhead, which has its own target, so they stay out of the geometric means.
"""
import jax
import jax.numpy as jnp
import numpy as np
from extent_kernels import KERNELS
from raised_kernels import fir, jacobi

PROGRAMS = {}  # name -> (builder, options)


def program(fn=None, **options):
    """Register a program builder; options: ``host_inputs`` (call the compiled functions on NumPy
    arrays), ``dispatch`` (a per-call overhead measurement), ``jit`` (cf.jit's keyword arguments)."""
    if fn is None:
        return lambda f: program(f, **options)
    PROGRAMS[fn.__name__] = (fn, {"host_inputs": False, "dispatch": False, "jit": {}, **options})
    return fn


def _rng():
    return np.random.default_rng(0)


@program
def elementwise(quick):
    def f(x, y):
        z = np.tanh(x) * np.exp(-(y ** 2)) + np.sin(x * y) / (1.0 + x ** 2)
        return z - z.mean(axis=0)

    def j(x, y):
        z = jnp.tanh(x) * jnp.exp(-(y ** 2)) + jnp.sin(x * y) / (1.0 + x ** 2)
        return z - z.mean(axis=0)

    n, rng = 300 if quick else 1000, _rng()
    return f, f, j, (rng.standard_normal((n, n)), rng.standard_normal((n, n)))


@program
def softmax(quick):
    def f(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def j(x):
        e = jnp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    return f, f, j, (_rng().standard_normal((500 if quick else 2000, 500)),)


@program
def layernorm(quick):
    def f(x, gamma, beta):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta

    def j(x, gamma, beta):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * gamma + beta

    rng = _rng()
    return f, f, j, (rng.standard_normal((500 if quick else 2000, 512)), rng.random(512), rng.random(512))


@program
def matmul_chain(quick):
    def f(a, b):  # the same code for both: @ and .T mean the same in NumPy and jax.numpy
        return (a @ b).T @ a + (a @ a).T

    n, rng = 200 if quick else 400, _rng()
    return f, f, f, (rng.standard_normal((n, n)), rng.standard_normal((n, n)))


@program
def stencil_1d(quick):
    def f(u):
        for _ in range(200):
            u[1:-1] = u[1:-1] + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:])
        return u

    def j(u):
        def step(_, u):
            return u.at[1:-1].set(u[1:-1] + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
        return jax.lax.fori_loop(0, 200, step, u)

    return f, f, j, (_rng().standard_normal(20_000 if quick else 100_000),)


@program
def stencil_2d(quick):
    """Jacobi 2-D: two buffers updated in place in turn."""
    def f(a, b):
        for _ in range(50):
            b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
            a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
        return a

    def sweep(a, b):
        return b.at[1:-1, 1:-1].set(0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1]))

    def j(a, b):
        def step(_, ab):
            a, b = ab
            b = sweep(a, b)
            return sweep(b, a), b
        return jax.lax.fori_loop(0, 50, step, (a, b))[0]

    n, rng = 120 if quick else 300, _rng()
    return f, f, j, (rng.random((n, n)), rng.random((n, n)))


@program
def kernel_jacobi_2d(quick):
    """stencil_2d written as a CUDA-style kernel (raised to slices), against NumPy's vectorized sweep."""
    numpy_fn, _, jax_fn, inputs = stencil_2d(quick)
    n = inputs[0].shape[0]
    blocks = ((n + 15) // 16, (n + 15) // 16)

    def f(a, b):
        for _ in range(50):
            jacobi[blocks, (16, 16)](a, b)
            jacobi[blocks, (16, 16)](b, a)
        return a
    return numpy_fn, f, jax_fn, inputs


@program
def kernel_fir(quick):
    """A 16-tap FIR filter as a kernel with an in-kernel loop, against np.correlate."""
    n = 20_000 if quick else 400_000
    x, w = _rng().standard_normal(n), _rng().standard_normal(16)

    def numpy_fn(x, w):
        y = np.zeros_like(x)
        y[:n - 15] = np.correlate(x, w, mode="valid")
        return y

    def f(x, w):
        y = np.zeros_like(x)
        fir[(n + 255) // 256, 256](x, w, y)
        return y

    def j(x, w):
        return jnp.zeros_like(x).at[:n - 15].set(jnp.correlate(x, w, mode="valid"))
    return numpy_fn, f, j, (x, w)


@program
def stencil_3d(quick):
    """Heat 3-D: a seven-point stencil, one array updated in place."""
    def f(a):
        for _ in range(20):
            a[1:-1, 1:-1, 1:-1] = a[1:-1, 1:-1, 1:-1] + 0.125 * (
                a[2:, 1:-1, 1:-1] + a[:-2, 1:-1, 1:-1] + a[1:-1, 2:, 1:-1] + a[1:-1, :-2, 1:-1]
                + a[1:-1, 1:-1, 2:] + a[1:-1, 1:-1, :-2] - 6.0 * a[1:-1, 1:-1, 1:-1])
        return a

    def j(a):
        def step(_, a):
            return a.at[1:-1, 1:-1, 1:-1].set(a[1:-1, 1:-1, 1:-1] + 0.125 * (
                a[2:, 1:-1, 1:-1] + a[:-2, 1:-1, 1:-1] + a[1:-1, 2:, 1:-1] + a[1:-1, :-2, 1:-1]
                + a[1:-1, 1:-1, 2:] + a[1:-1, 1:-1, :-2] - 6.0 * a[1:-1, 1:-1, 1:-1]))
        return jax.lax.fori_loop(0, 20, step, a)

    n = 30 if quick else 60
    return f, f, j, (_rng().random((n, n, n)),)


@program
def newton(quick):
    """A data-dependent convergence loop: its trip count is known only at run time."""
    def f(a):
        x = a.copy()
        while np.abs(x * x - a).max() > 1e-12:
            x = 0.5 * (x + a / x)
        return x

    def j(a):
        return jax.lax.while_loop(lambda x: jnp.abs(x * x - a).max() > 1e-12, lambda x: 0.5 * (x + a / x), a)

    return f, f, j, (_rng().random(100_000 if quick else 400_000) * 100 + 1,)


def _add(x, y):
    return x + y


@program(dispatch=True)
def dispatch(quick):
    """Per-call cost of a tiny function on device arrays: dispatch overhead, not arithmetic."""
    return _add, _add, _add, (np.arange(4.0), np.ones(4))


@program(dispatch=True, host_inputs=True)
def dispatch_host(quick):
    """The same on NumPy arguments: each call also copies them to the device."""
    return _add, _add, _add, (np.arange(4.0), np.ones(4))


# --- gradients: cofactor's cf.grad (Enzyme, after optimization) against jax.grad ------------------

def _mlp_loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2 + b2 - y) ** 2)


def _mlp_loss_jax(w1, b1, w2, b2, x, y):
    h = jnp.tanh(x @ w1 + b1)
    return jnp.mean((h @ w2 + b2 - y) ** 2)


@program
def mlp_step(quick):
    """One training step: forward, gradient of every parameter, SGD update."""
    import cofactor as cf

    def c(w1, b1, w2, b2, x, y):
        grads = cf.grad(_mlp_loss, argnums=(0, 1, 2, 3))(w1, b1, w2, b2, x, y)
        return tuple(p - 0.01 * g for p, g in zip((w1, b1, w2, b2), grads))

    def j(w1, b1, w2, b2, x, y):
        grads = jax.grad(_mlp_loss_jax, argnums=(0, 1, 2, 3))(w1, b1, w2, b2, x, y)
        return tuple(p - 0.01 * g for p, g in zip((w1, b1, w2, b2), grads))

    rng, batch, width = _rng(), (64 if quick else 256), (64 if quick else 256)
    return None, c, j, (0.1 * rng.standard_normal((128, width)), np.zeros(width),
                        0.1 * rng.standard_normal((width, 10)), np.zeros(10),
                        rng.standard_normal((batch, 128)), rng.standard_normal((batch, 10)))


def _kan_layer(xp, x, coef, grid):
    """A Kolmogorov-Arnold layer: y_o = sum_i phi_io(x_i), each phi a sum of Gaussian bumps."""
    basis = xp.exp(-(((x[:, :, None] - grid) * 2.0) ** 2))
    return xp.einsum("bik,iok->bo", basis, coef)


def _kan_loss(xp):
    def loss(c1, c2, x, y, grid):
        h = xp.tanh(_kan_layer(xp, x, c1, grid))
        return xp.mean((_kan_layer(xp, h, c2, grid) - y) ** 2)
    return loss


@program
def kan(quick):
    """The seeds' KAN benchmark: forward and backward of a two-layer Kolmogorov-Arnold network."""
    import cofactor as cf

    def c(c1, c2, x, y, grid):
        return cf.value_and_grad(_kan_loss(np), argnums=(0, 1))(c1, c2, x, y, grid)

    def j(c1, c2, x, y, grid):
        return jax.value_and_grad(_kan_loss(jnp), argnums=(0, 1))(c1, c2, x, y, grid)

    rng, batch = _rng(), (64 if quick else 256)
    return None, c, j, (0.1 * rng.standard_normal((16, 32, 8)), 0.1 * rng.standard_normal((32, 4, 8)),
                        rng.standard_normal((batch, 16)), rng.standard_normal((batch, 4)), np.linspace(-2, 2, 8))


def _heat_loss(u0, c):
    u = u0.copy()
    for _ in range(200):
        u[1:-1] = u[1:-1] + c * (u[2:] - 2 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def _heat_loss_jax(u0, c):
    def step(_, u):
        return u.at[1:-1].set(u[1:-1] + c * (u[2:] - 2 * u[1:-1] + u[:-2]))
    return jnp.sum(jax.lax.fori_loop(0, 200, step, u0) ** 2)


@program
def stencil_grad(quick):
    """The gradient of a 200-step stencil time loop with in-place slice updates, by its initial state."""
    import cofactor as cf
    n = 10_000 if quick else 50_000
    return None, cf.grad(_heat_loss), jax.grad(_heat_loss_jax), (np.sin(np.linspace(0, 3, n)), np.float64(0.2))


def _diagonal_loss(v, a, x):
    return np.sum((np.diag(v) @ a + x) ** 2)


@program
def diagonal_grad(quick):
    """The seeds' sum((diag(v) @ A + x) ** 2): optimized before AD, diag(v) @ A is a broadcast multiply."""
    import cofactor as cf

    def j(v, a, x):
        return jax.grad(lambda v, a, x: jnp.sum((jnp.diag(v) @ a + x) ** 2))(v, a, x)
    n, rng = (200 if quick else 500), _rng()
    return None, cf.grad(_diagonal_loss), j, (rng.standard_normal(n), rng.standard_normal((n, n)),
                                              rng.standard_normal((n, n)))


# --- unmodified NumPy at full speed: large NumPy arguments, Python-number loops, element loops ------
# Each large-argument program runs twice: on NumPy arrays (read in place by the CPU device, not
# copied) and on device arrays, to compare the two paths in one run.  The element loops are public:
# tests/test_element_loops.py checks them against NumPy.

def _on_host_and_device(name, numpy_fn, jax_fn, inputs):
    """Register ``name``_host (called on NumPy arrays) and ``name``_device (on device arrays)."""
    def build(quick):
        return numpy_fn, numpy_fn, jax_fn, inputs(quick)
    for where, host in (("host", True), ("device", False)):
        PROGRAMS[f"{name}_{where}"] = (build, {"host_inputs": host, "dispatch": False, "jit": {}})

def _matvec_chain(a, x):
    return (a @ x) @ a


def _matvec_inputs(quick):
    rng = _rng()
    m, n = (1000, 1200) if quick else (4000, 5000)
    return rng.standard_normal((m, n)), rng.standard_normal(n)


# (A @ x) @ A with a NumPy A of 160 MB: the cost of passing the argument, not the arithmetic.
_on_host_and_device("matvec", _matvec_chain, _matvec_chain, _matvec_inputs)


def _mlp3(w1, w2, w3, x):
    h = np.maximum(x @ w1, 0)
    h = np.maximum(h @ w2, 0)
    return h @ w3


def _mlp3_jax(w1, w2, w3, x):
    h = jnp.maximum(x @ w1, 0)
    h = jnp.maximum(h @ w2, 0)
    return h @ w3


def _mlp3_inputs(quick):
    rng, n = _rng(), (1000 if quick else 2200)  # three layers of n x n: 116 MB at full size
    return (*[rng.standard_normal((n, n)) / np.sqrt(n) for _ in range(3)], rng.standard_normal((32, n)))


# A 3-layer MLP forward on a small batch: dominated by reading its 116 MB of weights.
_on_host_and_device("mlp3", _mlp3, _mlp3_jax, _mlp3_inputs)


def _rk4_rate(u):
    return -0.5 * u + np.sin(u)


def _rk4_clock(u):
    t, dt, t_end = 0.0, 0.002, 4.0  # Python floats: one rolled loop in cofactor
    while t < t_end - 1e-9:
        k1 = _rk4_rate(u)
        k2 = _rk4_rate(u + 0.5 * dt * k1)
        k3 = _rk4_rate(u + 0.5 * dt * k2)
        k4 = _rk4_rate(u + dt * k3)
        u = u + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += dt
    return u


def _rk4_clock_jax(u):
    def rate(v):
        return -0.5 * v + jnp.sin(v)

    def step(_, u):
        dt = 0.002
        k1 = rate(u)
        k2 = rate(u + 0.5 * dt * k1)
        k3 = rate(u + 0.5 * dt * k2)
        k4 = rate(u + dt * k3)
        return u + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return jax.lax.fori_loop(0, 2000, step, u)


@program
def rk4_python_clock(quick):
    """An RK4 integrator whose clock is a Python float (2000 steps)."""
    return _rk4_clock, _rk4_clock, _rk4_clock_jax, (np.linspace(-2.0, 2.0, 2000 if quick else 20000),)


def diagonal_sum(a):
    total = 0.0
    for i in range(a.shape[0]):
        total += np.tanh(a[i, i])
    return total


@program
def loop_diagonal(quick):
    """An element loop that is a reduction: sum of tanh over the diagonal."""
    n = 2000 if quick else 10000
    return diagonal_sum, diagonal_sum, lambda a: jnp.tanh(jnp.diag(a)).sum(), (_rng().random((n, n)),)


def running_max(x):
    out = np.empty_like(x)
    m = x[0]
    for i in range(x.shape[0]):
        m = max(m, x[i])
        out[i] = m
    return out


@program
def loop_running_max(quick):
    return running_max, running_max, jax.lax.cummax, (_rng().standard_normal(2000 if quick else 20000),)


def prefix_recurrence(x):
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = 0.9 * y[i - 1] + x[i]
    return y


def _recurrence_jax(x):
    def step(carry, xi):
        y = 0.9 * carry + xi
        return y, y
    return jnp.concatenate([x[:1], jax.lax.scan(step, x[0], x[1:])[1]])


@program
def loop_recurrence(quick):
    """A prefix recurrence y[i] = 0.9 y[i-1] + x[i]: a true carried dependency."""
    return prefix_recurrence, prefix_recurrence, _recurrence_jax, (_rng().standard_normal(2000 if quick else 20000),)


def scalar_stencil(u):
    out = np.zeros_like(u)
    for i in range(1, u.shape[0] - 1):
        out[i] = u[i - 1] - 2 * u[i] + u[i + 1]
    return out


@program
def loop_stencil(quick):
    """A 3-point stencil written element by element: independent iterations."""
    return (scalar_stencil, scalar_stencil,
            lambda u: jnp.zeros_like(u).at[1:-1].set(u[:-2] - 2 * u[1:-1] + u[2:]),
            (_rng().standard_normal(2000 if quick else 20000),))


def normalize_rows(m):
    for i in range(m.shape[0]):
        m[i] = m[i] / np.sqrt((m[i] ** 2).sum())
    return m


@program
def loop_rows(quick):
    """Independent row updates in a loop, in place."""
    return (normalize_rows, normalize_rows, lambda m: m / jnp.sqrt((m ** 2).sum(axis=1, keepdims=True)),
            (_rng().standard_normal((500 if quick else 4000, 64)),))


# --- kernels with run-time extents (benchmarks/extent_kernels.py), at sizes where NumPy takes 10 ms or more -----

def _forward_substitution_jax(L, b):
    n = L.shape[0]

    def step(i, x):
        row = jnp.where(jnp.arange(n) < i, L[i], 0.0)
        return x.at[i].set((b[i] - row @ x) / L[i, i])
    return jax.lax.fori_loop(0, n, step, jnp.zeros_like(b))


def _cholesky_jax(A):
    n = A.shape[0]
    lanes = jnp.arange(n)

    def row(i, A):
        def column(j, A):
            s = jnp.where(lanes < j, A[i] * A[j], 0.0).sum()
            return A.at[i, j].set((A[i, j] - s) / A[j, j])
        A = jax.lax.fori_loop(0, i, column, A)
        s = jnp.where(lanes < i, A[i] * A[i], 0.0).sum()
        return A.at[i, i].set(jnp.sqrt(A[i, i] - s))
    return jnp.tril(jax.lax.fori_loop(0, n, row, A))


def _covariance_jax(data):
    N, M = data.shape
    data = data - data.mean(axis=0)

    def step(i, cov):
        row = jnp.where(jnp.arange(M) >= i, data[:, i] @ data / (N - 1.0), 0.0)
        return cov.at[i, :].add(row).at[:, i].add(jnp.where(jnp.arange(M) > i, row, 0.0))
    return jax.lax.fori_loop(0, M, step, jnp.zeros((M, M), data.dtype))


def _csr_matvec_jax(values, columns, row_starts, x):
    rows = jnp.searchsorted(row_starts, jnp.arange(values.shape[0]), side="right") - 1
    return jax.ops.segment_sum(values * x[columns], rows, num_segments=row_starts.shape[0] - 1)


def _kmeans_jax(X, centers, steps=3):
    for _ in range(steps):
        labels = jnp.argmin(((X[:, None, :] - centers[None, :, :]) ** 2).sum(-1), axis=1)
        member = labels[:, None] == jnp.arange(centers.shape[0])[None, :]
        counts = member.sum(0)
        means = (member.T @ X) / jnp.maximum(counts, 1)[:, None]
        centers = jnp.where(counts[:, None] > 0, means, centers)
    return labels


# Sizes where NumPy takes 10 ms or more on this machine (issue 12 asks for them).
_EXTENT_SIZES = {"cholesky": 140, "lu": 100, "durbin": 2000, "forward_substitution": 5000, "back_substitution": 3000,
                 "gram_schmidt": 300, "correlation": 700, "covariance": 700, "nussinov": 80, "csr_matvec": 3000,
                 "kmeans": 20000}
_EXTENT_JIT = {"csr_matvec": {"max_slice": 1024}}  # its rows' lengths come from data: a bound from the user
_EXTENT_JAX = {"cholesky": _cholesky_jax, "forward_substitution": _forward_substitution_jax,
               "covariance": _covariance_jax, "csr_matvec": _csr_matvec_jax, "kmeans": _kmeans_jax}


def _extent_program(name):
    kernel, inputs = KERNELS[name]

    def build(quick):
        n = _EXTENT_SIZES[name] // (4 if quick else 1)
        return kernel, kernel, _EXTENT_JAX.get(name), inputs(n, _rng())
    build.__name__ = f"rt_{name}"
    program(build, jit=_EXTENT_JIT.get(name, {}))


for _name in KERNELS:
    _extent_program(_name)
