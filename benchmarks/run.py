"""The benchmark suite: NumPy vs cofactor vs JAX on the programs of benchmarks/programs.py.

    .venv/bin/python benchmarks/run.py [--quick] [--json out.json] [--only name[,name]] [--second-process]

For each program: steady-state time of NumPy, of cofactor (optimize=True, False and "upstream")
and of jax.jit (x64) on device arrays, as the median of repeated runs after a warm-up, every
run materialized (block_until_ready) so asynchronous dispatch flatters no one; and the first
call of cofactor (trace + optimize + compile + run, disk cache off) and of JAX.  Results are
checked against NumPy's (JAX's for programs without a NumPy version) before timing.

``--second-process``: the first call in a new process with an empty disk cache (cold) and
again in another new process (warm cache), for a few programs.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import jax
import numpy as np

import cofactor as cf

sys.path.insert(0, str(Path(__file__).parent))
from programs import PROGRAMS  # noqa: E402

jax.config.update("jax_enable_x64", True)

VARIANTS = {"cofactor": "auto", "cf_curated": True, "cf_noopt": False, "cf_upstream": "upstream"}  # column -> optimize=
SECOND_PROCESS_PROGRAMS = ("layernorm", "stencil_2d", "newton")
COLUMNS = [  # (JSON key, header, format)
    ("numpy_ms", "NumPy ms", "{:9.4g}"), ("cofactor_ms", "cofactor", "{:9.4g}"), ("jax_ms", "JAX ms", "{:9.4g}"),
    ("cf_curated_ms", "opt=True", "{:9.4g}"), ("cf_noopt_ms", "opt=False", "{:9.4g}"),
    ("cf_upstream_ms", "upstream", "{:9.4g}"),
    ("cf_over_numpy", "cf/NumPy", "{:8.3f}"), ("cf_over_jax", "cf/JAX", "{:7.3f}"),
    ("cf_over_noopt", "opt/noopt", "{:9.3f}"), ("cf_first_ms", "cf first", "{:9.0f}"),
    ("jax_first_ms", "JAX first", "{:9.0f}"), ("first_cf_over_jax", "first cf/JAX", "{:12.2f}"),
]


def ready(out):
    """Wait for every array of a result (ConcreteArrays and jax Arrays alike)."""
    for leaf in jax.tree_util.tree_leaves(out):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return out


def median_ms(fn, budget_s) -> float:
    """Median time in ms of ``fn()`` over samples taken one after another for ``budget_s`` (at
    least 5), after 20 ms of untimed calls.  A sample runs it often enough to last 2 ms (tiny
    functions: the per-call cost).  Each function of a program is timed in a block of its own,
    not in turns with the others: NumPy's BLAS (which cofactor's large products call too) keeps
    a thread spinning for a while after each call, which slowed XLA's threads in the next turn
    2-2.5x, and the other columns' copies of a large argument pushed this one's out of the cache."""
    def run(calls):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        return time.perf_counter() - start

    fn()
    calls = 1
    while calls < 100_000 and run(calls) < 2e-3:
        calls *= 10
    run(max(1, round(0.02 / (run(calls) / calls))))
    samples = []
    deadline = time.perf_counter() + budget_s
    while len(samples) < 5 or (time.perf_counter() < deadline and len(samples) < 100):
        samples.append(run(calls) / calls)
    return statistics.median(samples) * 1e3


def build(name, quick):
    """The program's functions, and argument makers: fresh arguments for each use, since
    programs update their arguments in place (cofactor donates ConcreteArray buffers)."""
    builder, options = PROGRAMS[name]
    numpy_fn, cf_fn, jax_fn, inputs = builder(quick)
    host = options["host_inputs"]
    args = {"numpy": lambda: [a.copy() for a in inputs],
            "cofactor": lambda: [a.copy() for a in inputs] if host else [cf.to_device(a) for a in inputs],
            "jax": lambda: list(inputs) if host else [jax.device_put(a) for a in inputs]}
    return numpy_fn, cf_fn, jax_fn, args


def first_call_ms(fn, args):
    start = time.perf_counter()
    out = ready(fn(*args))
    return (time.perf_counter() - start) * 1e3, out


def measure(name, quick, budget_s):
    numpy_fn, cf_fn, jax_fn, args = build(name, quick)
    options = PROGRAMS[name][1]["jit"]
    compiled = {column: cf.jit(cf_fn, optimize=optimize, **options) for column, optimize in VARIANTS.items()}
    row = {}
    row["cf_first_ms"], cf_out = first_call_ms(compiled["cofactor"], args["cofactor"]())
    first, = compiled["cofactor"].cache.values()
    row["cf_first_split_ms"] = {step: seconds * 1e3 for step, seconds in first.timings.items()}
    outputs = {"cofactor": cf_out}
    if jax_fn is not None:  # (JAX cannot express every program)
        jax.clear_caches()  # a first call: nothing from another program that shares the function
        jitted = jax.jit(jax_fn)
        row["jax_first_ms"], outputs["JAX"] = first_call_ms(jitted, args["jax"]())
    want = numpy_fn(*args["numpy"]()) if numpy_fn else outputs["JAX"]
    for who, got in outputs.items():
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-12, err_msg=f"{name}: {who}")

    timed = {column: (lambda f=f, a=args["cofactor"](): ready(f(*a))) for column, f in compiled.items()}
    if jax_fn is not None:
        jax_args = args["jax"]()
        timed["jax"] = lambda: ready(jitted(*jax_args))
    if numpy_fn:
        numpy_args = args["numpy"]()
        timed["numpy"] = lambda: numpy_fn(*numpy_args)
    row.update({k + "_ms": median_ms(fn, budget_s / 3) for k, fn in timed.items()})

    if numpy_fn:
        row["cf_over_numpy"] = row["cofactor_ms"] / row["numpy_ms"]
    row["cf_over_noopt"] = row["cofactor_ms"] / row["cf_noopt_ms"]
    if jax_fn is not None:
        row["cf_over_jax"] = row["cofactor_ms"] / row["jax_ms"]
        row["first_cf_over_jax"] = row["cf_first_ms"] / row["jax_first_ms"]
    return row


def print_row(name, row):
    cells = [fmt.format(row[key]) if key in row else f"{'-':>{len(fmt.format(0))}}" for key, _, fmt in COLUMNS]
    print(f"{name:14s} " + " ".join(cells), flush=True)


def warm_up():
    """Start what every first call would otherwise share: cofactor's Enzyme-JAX worker and
    XLA clients, jax's tracing machinery."""
    cf.jit(lambda x: x + 1)(np.ones(2))
    jax.jit(lambda x: x + 1)(np.ones(2)).block_until_ready()


def suite(names, quick):
    cf.cache.set_directory(None)  # first calls compile; they are not read from disk
    warm_up()
    print(f"{'program':14s} " + " ".join(f"{h:>{len(fmt.format(0))}}" for _, h, fmt in COLUMNS))
    rows = {}
    for name in names:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", cf.OptimizationWarning)
                rows[name] = measure(name, quick, budget_s=1.0 if quick else 4.0)
            notes = [str(w.message).split(". ")[0] for w in caught if issubclass(w.category, cf.OptimizationWarning)]
            if notes:
                rows[name]["notes"] = notes
        except Exception as e:  # report, and go on with the other programs
            rows[name] = {"error": f"{type(e).__name__}: {e}"}
            print(f"{name:14s} ERROR {rows[name]['error'].splitlines()[0]}", flush=True)
            continue
        print_row(name, rows[name])
    steady = [row for name, row in rows.items() if not PROGRAMS[name][1]["dispatch"]]
    geomean = {key: statistics.geometric_mean(r[key] for r in steady if key in r)
               for key in ("cf_over_numpy", "cf_over_jax", "cf_over_noopt", "first_cf_over_jax")
               if any(key in r for r in steady)}
    print_row("geomean", geomean)
    print("(geomean: of the programs other than dispatch ones)")
    print("\ncofactor's first call, ms: " + "; ".join(
        f"{name} " + "/".join(f"{ms:.0f}" for ms in row["cf_first_split_ms"].values())
        for name, row in rows.items() if "cf_first_split_ms" in row) + "  (trace/passes/xla; the rest runs it)")
    for name, row in rows.items():
        for note in row.get("notes", []):
            print(f"note: {name}: {note}")
    return {"programs": rows, "geomean": geomean}


def child_first_call(name, quick):
    """In a fresh process: the first call of one program, timed once the runtime is up."""
    _, cf_fn, _, args = build(name, quick)
    cf.devices()
    ms, _ = first_call_ms(cf.jit(cf_fn, **PROGRAMS[name][1]["jit"]), args["cofactor"]())
    print(json.dumps({"first_ms": ms, "cache": {" ".join(k): n for k, n in cf.cache.stats.items()}}))


def second_process(names, quick):
    """Cold (empty disk cache) vs warm (filled by the cold run) first call, each in a new process."""
    print(f"\n{'new process':14s} {'cold first':>10s} {'warm first':>10s} {'warm/cold':>9s} "
          f"{'cold proc':>9s} {'warm proc':>9s}  (ms; 'proc': the whole process)")
    results = {}
    with tempfile.TemporaryDirectory() as cache_dir:
        env = dict(os.environ, COFACTOR_CACHE_DIR=cache_dir)
        for name in names:
            runs = []
            for _ in ("cold", "warm"):
                start = time.perf_counter()
                out = subprocess.run([sys.executable, __file__, "--first-call", name] + ["--quick"] * quick,
                                     env=env, capture_output=True, text=True, check=True)
                runs.append({**json.loads(out.stdout.splitlines()[-1]), "process_ms": (time.perf_counter() - start) * 1e3})
            cold, warm = runs
            results[name] = {"cold": cold, "warm": warm, "warm_over_cold": warm["first_ms"] / cold["first_ms"]}
            print(f"{name:14s} {cold['first_ms']:10.0f} {warm['first_ms']:10.0f} {results[name]['warm_over_cold']:9.3f} "
                  f"{cold['process_ms']:9.0f} {warm['process_ms']:9.0f}", flush=True)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, shorter timing")
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "latest.json"),
                        help="where to write the results (default: benchmarks/results/latest.json)")
    parser.add_argument("--only", help="comma-separated program names")
    parser.add_argument("--second-process", action="store_true",
                        help="also time the first call in new processes, cold and with a warm disk cache")
    parser.add_argument("--first-call", help=argparse.SUPPRESS)  # the child of --second-process
    options = parser.parse_args()
    if options.first_call:
        return child_first_call(options.first_call, options.quick)
    names = options.only.split(",") if options.only else list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        parser.error(f"unknown programs {unknown}; there are {list(PROGRAMS)}")
    report = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "device": str(cf.devices()[0]),
                          "numpy": np.__version__, "jax": jax.__version__}, "quick": options.quick}
    report.update(suite(names, options.quick))
    if options.second_process:
        report["second_process"] = second_process(
            [n for n in names if n in SECOND_PROCESS_PROGRAMS] or names[:2], options.quick)
    Path(options.json).parent.mkdir(parents=True, exist_ok=True)
    Path(options.json).write_text(json.dumps(report, indent=1))
    print(f"\nwritten to {options.json}")


if __name__ == "__main__":
    main()
