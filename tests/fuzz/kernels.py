"""Random CUDA-style kernels, run raised (cofactor) and thread by thread (tests/kernel_simulator.py):
the two must leave the same arrays, or cofactor must refuse the kernel with a clear error.

    .venv/bin/python -m tests.fuzz.kernels --count 200 --seed 0

Each kernel reads float64 ``x`` and int64 ``k`` (length N) and writes ``y``; one thread per element
of an oversized grid, guarded; its body assigns numbers from expressions over the id, constants,
loads at affine, modular and data-dependent subscripts, Python's arithmetic, ``min``/``max``/``abs``,
conditional expressions, ``if``/``elif``/``else`` and ``for`` loops (short, unrolled; long, one loop).
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1]))
import cofactor as cf  # noqa: E402
from kernel_simulator import simulate  # noqa: E402

N = 13


class Generator:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.names = ["i"]
        self.count = 0

    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def subscript(self):
        return self.pick(["i", f"(i + {self.rng.integers(1, 5)}) % N", "N - 1 - i", f"i // {self.rng.integers(1, 4)}",
                          f"(i * {self.rng.integers(2, 5)}) % N", "k[i] % N", "min(i + 1, N - 1)", "abs(k[i]) % N"])

    def expr(self, depth=0):
        if depth > 2 or self.rng.random() < 0.3:
            return self.pick([*self.names, f"{self.rng.integers(-3, 4)}", f"{self.rng.uniform(-2, 2):.2f}",
                              f"x[{self.subscript()}]", f"k[{self.subscript()}]"])
        a, b = self.expr(depth + 1), self.expr(depth + 1)
        return self.pick([f"({a} + {b})", f"({a} - {b})", f"({a} * {b})", f"({a} / 4.0)", f"({a} // 3)",
                          f"({a} % 5)", f"min({a}, {b})", f"max({a}, {b})", f"abs({a})",
                          f"({a} if {self.condition(depth + 1)} else {b})"])

    def condition(self, depth=0):
        a, b = self.expr(depth + 1), self.expr(depth + 1)
        return self.pick([f"{a} < {b}", f"{a} >= {b}", f"{a} == {b}", "i % 2 == 0", f"i > {self.rng.integers(0, N)}",
                          f"{a} > 0 and i < {self.rng.integers(1, N)}"])

    def fresh(self):
        self.count += 1
        return f"v{self.count}"

    def statements(self, indent, depth=0):
        lines = []
        for _ in range(int(self.rng.integers(1, 4))):
            choice = self.rng.random()
            if choice < 0.5 or depth > 1:
                name = self.pick(self.names[1:]) if len(self.names) > 1 and self.rng.random() < 0.4 else self.fresh()
                lines.append(f"{indent}{name} = {self.expr()}")
                if name not in self.names:
                    self.names.append(name)
            elif choice < 0.8:
                target = self.pick(self.names[1:]) if len(self.names) > 1 else None
                if target is None:
                    continue
                lines.append(f"{indent}if {self.condition()}:")
                lines.append(f"{indent}    {target} = {self.expr()}")
                if self.rng.random() < 0.6:
                    lines.append(f"{indent}else:")
                    lines.append(f"{indent}    {target} = {target} * 2 - 1")
            else:
                acc = self.fresh()
                trips = self.pick(["3", "N", "i + 1"])
                lines.append(f"{indent}{acc} = 0")
                lines.append(f"{indent}for t in range({trips}):")
                lines.append(f"{indent}    {acc} = {acc} + x[(i + t) % N] * {self.rng.uniform(-1, 1):.2f}")
                self.names.append(acc)
        return lines

    def kernel(self):
        body = self.statements("        ")
        result = " + ".join(self.names[1:]) or "i"
        return "\n".join(["import math", "import cofactor as cf", f"N = {N}", "", "", "@cf.kernel",
                          "def kernel(x, k, y):", "    i = cf.grid(1)", "    if i < N:", *body,
                          f"        y[i] = {result}", ""])


def run(seed) -> tuple[str, str]:
    """(outcome, details): match, refused (a clear cofactor error), mismatch or internal."""
    source = Generator(seed).kernel()
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(f"fuzz_kernel_{seed}", f.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(N).round(2), rng.integers(-9, 10, N), np.zeros(N)]
    want = copy.deepcopy(args)
    with np.errstate(all="ignore"):
        try:
            simulate(module.kernel, 2, 8, *want)
        except Exception as e:  # noqa: BLE001  (Python refuses it too: not a kernel to check)
            return "python_error", f"{type(e).__name__}: {e}"
    try:
        module.kernel[2, 8](*args)
    except cf.CofactorError as e:
        kind = "internal" if isinstance(e, (cf.InternalError, cf.CompilationError)) else "refused"
        return kind, f"{type(e).__name__}: {str(e).splitlines()[0]}\n{source}"
    if not np.allclose(args[2], want[2], rtol=1e-9, atol=1e-9, equal_nan=True):
        return "mismatch", f"got {args[2]}\nwant {want[2]}\n{source}"
    return "match", ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    counts, shown = {}, 0
    for seed in range(args.seed, args.seed + args.count):
        outcome, details = run(seed)
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome in ("mismatch", "internal") and shown < 5:
            shown += 1
            print(f"--- seed {seed}: {outcome}\n{details}")
    print(counts)
    return 1 if counts.get("mismatch") or counts.get("internal") else 0


if __name__ == "__main__":
    sys.exit(main())
