"""cofactor's demo: plain NumPy in, StableHLO / Enzyme-JAX / XLA out."""
import statistics
import time

import numpy as np

import cofactor as cf


def seeds_example(x):
    return x @ x + (x @ x).T


def heavy(x, y):
    """A plain NumPy function with a long elementwise chain and a reduction."""
    z = np.tanh(x) * np.exp(-(y ** 2)) + np.sin(x * y) / (1.0 + x ** 2)
    return z - z.mean(axis=0), np.sqrt(np.abs(z)).sum()


def median_seconds(fn, repeat=30):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def section(title):
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


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

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((1000, 1000)), rng.standard_normal((1000, 1000))
    compiled = cf.jit(heavy)
    da, db = cf.to_device(a), cf.to_device(b)
    start = time.perf_counter()
    got = compiled(da, db)
    first = time.perf_counter() - start
    want = heavy(a, b)
    assert all(np.allclose(np.asarray(g), w) for g, w in zip(got, want))
    t_numpy = median_seconds(lambda: heavy(a, b))
    t_cofactor = median_seconds(lambda: [r.block_until_ready() for r in compiled(da, db)])
    section("timing: an elementwise chain + reductions on 1000x1000 float64")
    print(f"first call (trace + optimize + compile + run): {first * 1e3:8.1f} ms")
    print(f"NumPy    median: {t_numpy * 1e3:8.2f} ms")
    print(f"cofactor median: {t_cofactor * 1e3:8.2f} ms   ({t_numpy / t_cofactor:.1f}x faster than NumPy)")


if __name__ == "__main__":
    main()
