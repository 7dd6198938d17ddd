"""Per-call cost of a tiny compiled function: cofactor vs jax.jit vs NumPy, in one process.

Run: .venv/bin/python benchmarks/dispatch.py
"""
import statistics
import time

import numpy as np

import cofactor as cf


def per_call_us(fn, calls=5000, repeats=7):
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def main():
    import jax
    jax.config.update("jax_enable_x64", True)

    def add(x, y):
        return x + y

    xn, yn = np.arange(4.0), np.ones(4)
    cx, cy = cf.to_device(xn), cf.to_device(yn)
    jx, jy = jax.device_put(xn), jax.device_put(yn)
    f_cf, f_jax = cf.jit(add), jax.jit(add)
    np.testing.assert_array_equal(np.asarray(f_cf(cx, cy)), np.asarray(f_jax(jx, jy)))
    compiled = f_cf.lower(cx, cy)

    rows = [
        ("cofactor jit, ConcreteArray inputs", per_call_us(lambda: f_cf(cx, cy))),
        ("cofactor Compiled, ConcreteArray inputs", per_call_us(lambda: compiled(cx, cy))),
        ("jax.jit, jax.Array inputs", per_call_us(lambda: f_jax(jx, jy))),
        ("cofactor jit, NumPy inputs", per_call_us(lambda: f_cf(xn, yn))),
        ("jax.jit, NumPy inputs", per_call_us(lambda: f_jax(xn, yn))),
        ("NumPy", per_call_us(lambda: add(xn, yn))),
    ]
    jax_time = rows[2][1]
    print(f"{'tiny add f64[4], per call':45s} {'us':>8s} {'vs jax.jit':>11s}")
    for name, us in rows:
        print(f"{name:45s} {us:8.2f} {us / jax_time:10.2f}x")


if __name__ == "__main__":
    main()
