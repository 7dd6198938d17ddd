"""Sharded programs on 1, 2, 4 and 8 forced CPU devices: what XLA's partitioner makes of them.

    .venv/bin/python benchmarks/sharded.py [--json out.json]

The devices share this machine's cores, so time says little about scaling: the table reports the
collectives XLA inserted and the bytes they move (the sum of each collective's result size, on one
device), for a matmul chain and a periodic stencil, with cofactor's curated pipeline and with
Enzyme-JAX's communication rewrites added ("curated+comms": recognize rotate/wrap/extend, then
lower them); and the dispatch cost of a small sharded call, cofactor vs jax.jit with the same
shardings.  Every result is checked against NumPy first.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
os.environ["COFACTOR_CACHE_DIR"] = ""  # every pipeline and compile really runs

import jax  # noqa: E402
import numpy as np  # noqa: E402

import cofactor as cf  # noqa: E402
from cofactor.passes import runner  # noqa: E402
from cofactor.xla.executable import Executable  # noqa: E402

jax.config.update("jax_enable_x64", True)


def matmul_chain(a, b):
    return (a @ b) @ a.T


def periodic_stencil(u):
    return np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4 * u


def communication(collectives: list) -> tuple[dict, int]:
    """(count of each collective, bytes their results hold on one device)."""
    counts = {}
    for c in collectives:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    return counts, sum(c.nbytes for c in collectives)


def shown(counts: dict) -> str:
    return ", ".join(f"{n} {op}" for op, n in sorted(counts.items())) or "none"


def median_us(fn, runs=200) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def kernels(n_devices, rng):
    mesh = cf.Mesh(np.array(cf.devices()[:n_devices]), ("d",))
    rows, cols = cf.NamedSharding(mesh, cf.P("d", None)), cf.NamedSharding(mesh, cf.P(None, "d"))
    a, b, u = rng.standard_normal((512, 512)), rng.standard_normal((512, 512)), rng.standard_normal((512, 512))
    return [("matmul_chain", matmul_chain, [cf.to_device(a, rows), cf.to_device(b, cols)], [a, b]),
            ("periodic_stencil", periodic_stencil, [cf.to_device(u, rows)], [u])]


def measure(rows: list):
    rng = np.random.default_rng(0)
    for n in (1, 2, 4, 8):
        for name, fn, args, host in kernels(n, rng):
            compiled = cf.jit(fn, optimize=True).lower(*args)
            np.testing.assert_allclose(np.asarray(compiled(*args)), fn(*host), rtol=1e-10, atol=1e-9)
            counts, moved = communication(compiled.collectives())
            row = {"kernel": name, "devices": n, "collectives": shown(counts), "bytes": moved}
            if compiled.placement is not None:
                comms_mlir = runner.run(compiled.raw_mlir, "curated+comms")
                types = compiled.trace.module.functions[0].result_types
                rewritten = Executable(comms_mlir, types, placement=compiled.placement)
                outputs = rewritten([rewritten.to_buffer(x, k) for k, x in enumerate(args)])
                np.testing.assert_allclose(np.asarray(outputs[0]), fn(*host), rtol=1e-10, atol=1e-9)
                counts, moved = communication(rewritten.collectives())
                row.update({"comms_collectives": shown(counts), "comms_bytes": moved})
            rows.append(row)


def dispatch() -> dict:
    """Per-call time of a small sharded function on 8 devices (8x8 array), cofactor vs jax.jit."""
    mesh = cf.Mesh(np.array(cf.devices()), ("d",))
    sharding = cf.NamedSharding(mesh, cf.P("d"))
    x = np.arange(64.0).reshape(8, 8)
    ours = cf.to_device(x, sharding)
    f = cf.jit(lambda a: a * 2 + 1)
    theirs = jax.device_put(x, sharding)
    g = jax.jit(lambda a: a * 2 + 1, in_shardings=sharding, out_shardings=sharding)
    np.testing.assert_allclose(np.asarray(f(ours)), np.asarray(g(theirs)))
    result = {}
    for _ in range(3):  # interleaved rounds: the median of each round's median
        result.setdefault("cofactor_us", []).append(median_us(lambda: f(ours).block_until_ready()))
        result.setdefault("jax_us", []).append(median_us(lambda: g(theirs).block_until_ready()))
    return {k: statistics.median(v) for k, v in result.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    rows = []
    measure(rows)
    print(f"{'kernel':18} {'devices':>7}  {'collectives (curated)':40} {'bytes':>9}  "
          f"{'collectives (curated+comms)':40} {'bytes':>9}")
    for r in rows:
        print(f"{r['kernel']:18} {r['devices']:7}  {r['collectives']:40} {r['bytes']:9}  "
              f"{r.get('comms_collectives', '-'):40} {r.get('comms_bytes', '-'):>9}")
    cost = dispatch()
    print(f"\ndispatch of a sharded call on 8 devices (8x8 float64, a * 2 + 1): cofactor {cost['cofactor_us']:.1f} us, "
          f"jax.jit {cost['jax_us']:.1f} us ({cost['cofactor_us'] / cost['jax_us']:.2f}x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kernels": rows, "dispatch": cost}, f, indent=1)


if __name__ == "__main__":
    main()
