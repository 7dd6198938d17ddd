"""Random element loops: for loops over a static range that update arrays in place at places the
counter computes, under traced ifs, with running numbers (cofactor/ir/loops.py, scans.py, trips.py
take such loops apart for loop raising; a wrong proof is a silent wrong answer).

Each program has arrays ``a`` (updated in place), ``b`` (read), ``o`` (float output) and ``q`` (int
output), numbers ``s`` (a float product and sum), ``m`` (a running maximum or minimum) and ``t`` (an
int running sum), and a loop of 9 or more trips (so that it stays rolled) of 1 to 3 statements, some
of which compare the counter with a constant inside or outside its range, or slice by it (a window of static
length, a strided slice).
"""
from __future__ import annotations

import random

import numpy as np


def generate(seed: int):
    """(source of a module defining ``f(a, b, k)``, the arguments)."""
    r = random.Random(seed)
    n = r.randint(10, 20)
    step = r.choice([1, 1, 1, 2, -1, -2])
    trips = r.randint(9, max(9, (n + 2) // abs(step)))
    lo = r.randint(-1, max(-1, n + 1 - (trips - 1) * step)) if step > 0 else \
        r.randint(min(n, (trips - 1) * -step - 1), n)
    values = range(lo, lo + trips * step, step)
    two_d = r.random() < 0.4
    lines = ["import numpy as np", "", "", "def f(a, b, k):", "    s, m, t = 0.5, b.flat[0], 0",
             f"    o = np.zeros({n + 4})", f"    q = np.zeros({n + 4}, dtype=np.int64)",
             f"    for i in range({values.start}, {values.stop}, {step}):"]
    for _ in range(r.randint(1, 3)):
        lines += _statement(r, n, values, two_d)
    lines.append("    return a, s, m, t, o, q")
    rng = np.random.default_rng(seed)
    shape = (n, 3) if two_d else (n,)
    a, b = rng.standard_normal(shape), rng.standard_normal(shape)
    for x in (a, b):
        if r.random() < 0.3:
            x.flat[r.randrange(x.size)] = r.choice([np.nan, np.inf, -0.0])
    return "\n".join(lines) + "\n", (a, b, rng.integers(-4, 5, n))


def _place(r, n, values):
    """An index ``c * i + d`` inside [0, n) on every trip (a Python int expression of ``i``)."""
    for _ in range(50):
        times, shift = r.choice([1, 1, 1, 2, -1, 0]), r.randint(-n, n)
        places = [times * v + shift for v in values]
        if all(0 <= p < n for p in places):
            counter = {1: "i", 2: "2 * i", -1: "-i", 0: "0"}[times]
            return f"{counter} + {shift}" if shift >= 0 else f"{counter} - {-shift}"
    return "i % 2"


def _statement(r, n, values, two_d) -> list[str]:
    w, rd, rd2 = (_place(r, n, values) for _ in range(3))
    col = f", {r.randint(0, 2)}" if two_d and r.random() < 0.5 else ""
    W, R, R2 = f"a[{w}{col}]", f"a[{rd}{col}]", f"a[{rd2}{col}]"
    number = f"{R}.sum()" if two_d and not col else R
    test = f"b[{rd}].sum() > 0.0" if two_d else f"b[{rd}] > 0.0"
    out = "o[i + 2]"
    kind = r.choice(["plain", "aug", "if", "elif", "both", "both_elsewhere", "read_after", "max", "min",
                     "np_max", "max_by_if", "product", "int_sum", "exclusive", "counter_test", "window", "strided"])
    pad = "        "
    if kind == "window":  # (a slice of static length that moves with the counter: numpy/extent.py, fixed_length)
        length = r.randint(1, 3)
        p = _place(r, n - length + 1, values)
        return [pad + f"{out} = a[{p}:{p} + {length}].sum() * 0.5",
                pad + f"a[{p}:{p} + {length}] = a[{p}:{p} + {length}] * 0.5 + {R}"]
    if kind == "strided":  # (a slice from the counter with another step: a Run, tracing/views.py)
        p, step = _place(r, n, values), r.choice([2, 3, -2, -3])
        return [pad + f"{out} = a[{p}::{step}].sum()", pad + f"a[{p}::{step}] += {R} * 0.25"]
    if kind == "plain":
        return [pad + f"{W} = {r.choice([f'{R} * 0.5 + 1.0', f'{R} + {R2}', f'{R} * {R2}'])}"]
    if kind == "aug":
        return [pad + f"{W} += {R} * 0.25"]
    if kind == "if":
        return [pad + f"if {test}:", pad + f"    {W} = {R} - 1.0"]
    if kind == "elif":
        return [pad + f"if {test}:", pad + f"    {W} = {R} * 2.0", pad + f"elif {number} < -0.3:",
                pad + f"    a[{rd2}{col}] = {R2} * 3.0"]
    if kind == "both":
        return [pad + f"if {number} < 0.2:", pad + f"    {W} = {R2} + 1.0", pad + "else:", pad + f"    {W} = -{R}"]
    if kind == "both_elsewhere":
        return [pad + f"if {test}:", pad + f"    {W} = {R2} + 1.0", pad + "else:", pad + f"    a[{rd2}{col}] = -{R}"]
    if kind == "read_after":
        return [pad + f"{W} = {R} * 0.5", pad + f"a[{rd2}{col}] = {W} * 2.0 + {R}"]
    if kind == "max":
        return [pad + f"m = max(m, {number})", pad + f"{out} = m"]
    if kind == "min":
        return [pad + f"m = min(m, {number})", pad + f"{out} = m - {R2 if not two_d or col else 'b[0].sum()'}"]
    if kind == "np_max":
        return [pad + f"m = np.maximum(m, {number})", pad + f"{out} = m"]
    if kind == "max_by_if":
        return [pad + f"if {number} >= m:", pad + f"    m = {number}", pad + f"{out} = m"]
    if kind == "product":
        return [pad + f"s = s * {number}", pad + f"{out} = s"]
    if kind == "counter_test":  # (a comparison of the counter, with a constant in its range or outside it)
        (op, c), (op2, c2) = ((r.choice(["==", "!=", "<", "<=", ">", ">="]), r.randint(min(values) - 4, max(values) + 4))
                              for _ in range(2))
        return [pad + f"if i {op} {c}:", pad + f"    {W} = {R} + 1.0", pad + f"{out} = {out} + (i {op2} {c2})"]
    if kind == "int_sum":
        return [pad + f"t += k[{rd}]", pad + "q[i + 2] = t"]
    return [pad + "q[i + 2] = t", pad + f"t = t + k[{rd}] * 2"]  # (exclusive: written before it grows)
