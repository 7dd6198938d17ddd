"""cofactor's demo: plain NumPy in, StableHLO / Enzyme-JAX / XLA out."""
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import cofactor as cf


def seeds_example(x):
    return x @ x + (x @ x).T


def heavy(x, y):
    """A plain NumPy function with a long elementwise chain and a reduction."""
    z = np.tanh(x) * np.exp(-(y ** 2)) + np.sin(x * y) / (1.0 + x ** 2)
    return z - z.mean(axis=0), np.sqrt(np.abs(z)).sum()


def newton_sqrt(a):
    """Plain Python control flow on array values: a data-dependent while loop."""
    x = a.copy()
    steps = 0
    while np.abs(x * x - a).max() > 1e-12:
        x = 0.5 * (x + a / x)
        steps += 1
    return x, steps


def heat(u, steps):
    """In-place slice updates in a time-step loop: stays one rolled loop when compiled."""
    for _ in range(steps):
        u[1:-1] += 0.1 * (u[:-2] - 2 * u[1:-1] + u[2:])
    return u


def diagonal_tanh(a):
    """A loop over elements: a reduction, which the optimizer turns into tensor operations."""
    total = 0.0
    for i in range(a.shape[0]):
        total += np.tanh(a[i, i])
    return total


def clip_and_record(x, out):
    """An element loop with an in-place update under a traced if and a running maximum: tensor
    operations after cofactor prepares it for loop raising (cofactor/ir/loops.py, scans.py)."""
    best = x[0]
    for i in range(x.shape[0]):
        best = max(best, x[i])
        out[i] = best
        if x[i] < 0:
            x[i] = 0.0
    return out


def rk4(u):
    """An integrator whose clock is a Python float: one rolled loop, its numbers traced."""
    t, dt = 0.0, 0.001
    while t < 5.0:
        k1 = np.sin(u)
        k2 = np.sin(u + dt / 2 * k1)
        k3 = np.sin(u + dt / 2 * k2)
        k4 = np.sin(u + dt * k3)
        u = u + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += dt
    return u


def cholesky(A):
    """Slices whose bounds are the loops' counters: one rolled loop nest, each slice a run-time length."""
    A = A.copy()
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] = np.sqrt(A[i, i] - np.dot(A[i, :i], A[i, :i]))
    return np.tril(A)


def positives_and_counts(x):
    """Results whose lengths depend on the data: cut to NumPy's shapes after the call."""
    return x[x > 0], np.unique(np.round(x), return_counts=True)


def median_seconds(fn, repeat=30):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@cf.kernel
def laplace(x, y):
    """The seeds' stencil kernel, as a numba.cuda user writes it."""
    i = cf.grid(1)
    if 1 <= i < x.shape[0] - 1:
        y[i] = x[i - 1] - 2 * x[i] + x[i + 1]


def launch_laplace(x):
    y = np.zeros_like(x)
    laplace[(x.shape[0] + 31) // 32, 32](x, y)
    return y


def section(title):
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


def diagonal_loss(v, a, x):
    """The seeds' example: the optimizer turns diag(v) @ a into a broadcast multiply before AD."""
    return np.sum((np.diag(v) @ a + x) ** 2)


def main():
    x = np.ones((3, 3))
    section("f(x) = x @ x + (x @ x).T on ones((3, 3))")
    print(cf.jit(seeds_example)(x))
    section("StableHLO as traced (optimize=False)")
    print(cf.code_hlo(seeds_example, x, optimize=False))
    section("StableHLO after Enzyme-JAX's curated pipeline: one dot_general")
    print(cf.code_hlo(seeds_example, x))
    section("XLA's optimized HLO")
    print(cf.code_xla(seeds_example, x))
    section("on CPU, the same at 256x256: the product calls NumPy's own BLAS (cofactor/xla/blas.py)")
    calls = [line.split(", metadata=")[0].strip() for line in cf.code_xla(seeds_example, np.ones((256, 256))).splitlines()
             if "custom_call_target" in line]
    print("\n".join(calls) or "XLA's dot (no C compiler at install, or NumPy without an ILP64 OpenBLAS)")

    section("control flow: a while loop on a traced condition becomes one stablehlo.while")
    a = np.array([2.0, 9.0, 0.25])
    root, steps = cf.jit(newton_sqrt)(a)
    print(f"sqrt({a}) = {np.asarray(root)} after {int(np.asarray(steps))} Newton steps "
          f"(NumPy: {newton_sqrt(a)[1]} steps)")
    hlo = cf.code_hlo(newton_sqrt, a)
    print(f"stablehlo.while ops in its optimized StableHLO: {hlo.count('stablehlo.while')}")
    u = np.linspace(0.0, 1.0, 64) ** 2
    start = time.perf_counter()
    hot = cf.jit(heat)(u.copy(), 3000)
    print(f"3000-step heat equation with in-place slice updates: trace + compile + run "
          f"{(time.perf_counter() - start) * 1e3:.0f} ms, max |cofactor - NumPy| = "
          f"{np.max(np.abs(np.asarray(hot) - heat(u.copy(), 3000))):.1e}")
    m = np.random.default_rng(0).random((500, 500))
    print(f"for i in range(500): total += np.tanh(a[i, i]) -> stablehlo.while ops after optimization: "
          f"{cf.code_hlo(diagonal_tanh, m).count('stablehlo.while')} (as traced: "
          f"{cf.code_hlo(diagonal_tanh, m, optimize=False).count('stablehlo.while')}); "
          f"{float(np.asarray(cf.jit(diagonal_tanh)(m))):.6f} (NumPy {diagonal_tanh(m):.6f})")
    x = np.random.default_rng(2).standard_normal(1000)
    got_x, want_x = x.copy(), x.copy()
    got = np.asarray(cf.jit(clip_and_record)(got_x, np.zeros(1000)))
    want = clip_and_record(want_x, np.zeros(1000))
    print(f"for i ...: best = max(best, x[i]); out[i] = best; if x[i] < 0: x[i] = 0.0 -> stablehlo.while ops "
          f"after optimization: {cf.code_hlo(clip_and_record, x.copy(), np.zeros(1000)).count('stablehlo.while')}, "
          f"same as NumPy (out and x): {np.array_equal(got, want) and np.array_equal(got_x, want_x)}")
    v = np.linspace(0.0, 1.0, 8)
    start = time.perf_counter()
    y = cf.jit(rk4)(v)
    print(f"RK4, while t < 5.0 on a Python float, 5000 steps: trace + compile + run "
          f"{(time.perf_counter() - start) * 1e3:.0f} ms, stablehlo.while ops: "
          f"{cf.code_hlo(rk4, v).count('stablehlo.while')}, max |cofactor - NumPy| = "
          f"{np.max(np.abs(np.asarray(y) - rk4(v))):.1e}")

    section("run-time lengths: A[i, :j] in loops, x[x > 0], np.unique")
    m = np.random.default_rng(1).random((100, 100))
    spd = m @ m.T + 100 * np.eye(100)
    start = time.perf_counter()
    factor = cf.jit(cholesky)(spd)
    print(f"Cholesky of a 100x100 matrix, A[i, :j] in two loops: trace + compile + run "
          f"{(time.perf_counter() - start) * 1e3:.0f} ms, stablehlo.while ops: "
          f"{cf.code_hlo(cholesky, spd).count('stablehlo.while')}, max |cofactor - np.linalg.cholesky| = "
          f"{np.max(np.abs(np.asarray(factor) - np.linalg.cholesky(spd))):.1e}")
    x = np.array([-1.2, 0.4, 2.6, -0.3, 2.4])
    positives, (values, counts) = cf.jit(positives_and_counts)(x)
    print(f"x[x > 0] = {np.asarray(positives)}; np.unique(np.round(x), return_counts=True) = "
          f"{np.asarray(values)}, {np.asarray(counts)}")

    section("a sharded run: one SPMD program over 8 CPU devices (examples/sharded.py)")
    subprocess.run([sys.executable, str(Path(__file__).with_name("sharded.py"))], check=True)

    section("a raised kernel: a CUDA-style stencil (@cf.kernel) becomes slices")
    x = np.sin(np.linspace(0.0, 3.0, 64))
    y = np.zeros(64)
    laplace[2, 32](x, y)
    print(f"laplace[2, 32](x, y): max |y - NumPy's x[:-2] - 2 x[1:-1] + x[2:]| = "
          f"{np.max(np.abs(y[1:-1] - (x[:-2] - 2 * x[1:-1] + x[2:]))):.1e}; its optimized StableHLO:")
    print(cf.code_hlo(launch_laplace, x))

    section("autodiff: the gradient of sum((diag(v) @ A + x) ** 2), differentiated after optimization")
    rng = np.random.default_rng(0)
    n = 400
    v, m, x2 = rng.standard_normal(n), rng.standard_normal((n, n)), rng.standard_normal((n, n))
    print(cf.code_hlo(cf.grad(diagonal_loss), v[:4], m[:4, :4], x2[:4, :4]))
    exact = np.sum(2 * (v[:, None] * m + x2) * m, axis=1)
    for optimize in (True, False):
        grad = cf.jit(cf.grad(diagonal_loss), optimize=optimize)
        dv, dm, dx = cf.to_device((v, m, x2))
        assert np.allclose(np.asarray(grad(dv, dm, dx)), exact)
        t = median_seconds(lambda: grad(dv, dm, dx).block_until_ready())
        print(f"n={n}, optimize={optimize!s:5}: {t * 1e3:7.2f} ms per gradient")

    a, b = rng.standard_normal((1000, 1000)), rng.standard_normal((1000, 1000))
    compiled = cf.jit(heavy)
    da, db = cf.to_device(a), cf.to_device(b)
    cf.cache.stats.clear()
    start = time.perf_counter()
    got = compiled(da, db)
    first = time.perf_counter() - start
    want = heavy(a, b)
    assert all(np.allclose(np.asarray(g), w) for g, w in zip(got, want))
    t_numpy = median_seconds(lambda: heavy(a, b))
    t_cofactor = median_seconds(lambda: [r.block_until_ready() for r in compiled(da, db)])
    section("timing: an elementwise chain + reductions on 1000x1000 float64")
    served = " (compiled program read from the disk cache)" if cf.cache.stats[("xla", "hit")] else ""
    print(f"first call (trace + optimize + compile + run): {first * 1e3:8.1f} ms{served}")
    print(f"NumPy    median: {t_numpy * 1e3:8.2f} ms")
    print(f"cofactor median: {t_cofactor * 1e3:8.2f} ms   ({t_numpy / t_cofactor:.1f}x faster than NumPy)")


if __name__ == "__main__":
    main()
