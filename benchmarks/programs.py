"""Steady-state time and first-call time of small programs: NumPy vs cofactor vs JAX, one process.

Each program is plain NumPy (what cofactor compiles unchanged) plus a jax.numpy port of the same
algorithm for jax.jit (x64).  Medians of repeated runs after warm-up; results are materialized
(block_until_ready) so asynchronous dispatch flatters no one.

Run: .venv/bin/python benchmarks/programs.py
"""
import statistics
import time

import numpy as np

import cofactor as cf


def elementwise(x, y):
    z = np.tanh(x) * np.exp(-(y ** 2)) + np.sin(x * y) / (1.0 + x ** 2)
    return z - z.mean(axis=0)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def matmul_chain(a, b):
    return (a @ b).T @ a + (a @ a).T


def stencil(u):
    for _ in range(200):
        u[1:-1] = u[1:-1] + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:])
    return u


def newton(a):
    x = a.copy()
    while np.abs(x * x - a).max() > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def jax_ports():
    import jax
    import jax.numpy as jnp

    def j_elementwise(x, y):
        z = jnp.tanh(x) * jnp.exp(-(y ** 2)) + jnp.sin(x * y) / (1.0 + x ** 2)
        return z - z.mean(axis=0)

    def j_softmax(x):
        e = jnp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def j_matmul_chain(a, b):
        return (a @ b).T @ a + (a @ a).T

    def j_stencil(u):
        def step(_, u):
            return u.at[1:-1].set(u[1:-1] + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
        return jax.lax.fori_loop(0, 200, step, u)

    def j_newton(a):
        return jax.lax.while_loop(lambda x: jnp.abs(x * x - a).max() > 1e-12, lambda x: 0.5 * (x + a / x), a)

    return {"elementwise": j_elementwise, "softmax": j_softmax, "matmul_chain": j_matmul_chain,
            "stencil": j_stencil, "newton": j_newton}


def median_ms(fn, repeats=15):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    import jax
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    big = rng.standard_normal((1000, 1000))
    inputs = {
        "elementwise": (big, rng.standard_normal((1000, 1000))),
        "softmax": (rng.standard_normal((2000, 500)),),
        "matmul_chain": (rng.standard_normal((400, 400)), rng.standard_normal((400, 400))),
        "stencil": (rng.standard_normal(100_000),),
        "newton": (rng.random(1_000_000) * 100 + 1,),
    }
    programs = {"elementwise": elementwise, "softmax": softmax, "matmul_chain": matmul_chain,
                "stencil": stencil, "newton": newton}
    ports = jax_ports()
    print(f"{'program':14s} {'NumPy ms':>9s} {'cofactor':>9s} {'JAX ms':>9s} {'cf/NumPy':>9s} {'cf/JAX':>7s} "
          f"{'cf first':>9s} {'JAX first':>9s}")
    ratios = []
    for name, fn in programs.items():
        args = inputs[name]
        start = time.perf_counter()
        compiled = cf.jit(fn)
        device_args = [cf.to_device(a) for a in args]
        first = compiled(*device_args)
        np.asarray(first)
        cf_first = (time.perf_counter() - start) * 1e3
        jitted = jax.jit(ports[name])
        jax_args = [jax.device_put(a) for a in args]
        start = time.perf_counter()
        jitted(*jax_args).block_until_ready()
        jax_first = (time.perf_counter() - start) * 1e3
        want = fn(*[a.copy() for a in args])
        np.testing.assert_allclose(np.asarray(compiled(*[cf.to_device(a) for a in args])), want, rtol=1e-9)
        t_np = median_ms(lambda: fn(*[a.copy() for a in args]) if name == "stencil" else fn(*args))
        t_cf = median_ms(lambda: compiled(*device_args).block_until_ready())
        t_jax = median_ms(lambda: jitted(*jax_args).block_until_ready())
        ratios.append((t_cf / t_np, t_cf / t_jax))
        print(f"{name:14s} {t_np:9.2f} {t_cf:9.2f} {t_jax:9.2f} {t_cf / t_np:9.2f} {t_cf / t_jax:7.2f} "
              f"{cf_first:9.0f} {jax_first:9.0f}")
    geo = [statistics.geometric_mean(r) for r in zip(*ratios)]
    print(f"{'geomean':14s} {'':9s} {'':9s} {'':9s} {geo[0]:9.2f} {geo[1]:7.2f}")


if __name__ == "__main__":
    main()
