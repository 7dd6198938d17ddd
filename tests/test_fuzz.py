"""Differential fuzzing (tests/fuzz): random programs mixing rebinding, in-place updates, aliases,
views and control flow, and the named regression programs, must give NumPy's results (and leave
the arguments as NumPy does) or raise a clear CofactorError. scripts/fuzz.py runs more seeds."""
import copy
import os

import numpy as np
import pytest

from fuzz import element_loops, generator, regressions, runner

SEEDS = range(300)


def test_random_programs():
    tasks = [("check", seed, "auto") for seed in SEEDS]
    failures = sorted((seed, outcome) for (_, seed, _), outcome in runner.run_tasks(tasks, jobs=os.cpu_count() or 1)
                      if outcome.failed)
    report = [f"seed {seed}: {outcome.category}: {outcome.details}\n{generator.generate(seed).source}"
              for seed, outcome in failures]
    assert not failures, f"{len(failures)} of {len(SEEDS)} programs failed " \
        f"(rerun one: scripts/fuzz.py --count 1 --seed S --shrink)\n\n" + "\n".join(report)


@pytest.mark.parametrize("seed", range(40))
def test_random_element_loops(seed, tmp_path):
    """Loops that update arrays in place at places the counter computes, under ifs, with running numbers
    (tests/fuzz/element_loops.py): what the rewrites for loop raising do must not change the answer."""
    source, args = element_loops.generate(seed)
    outcome = runner.check(runner.load(source, str(tmp_path), "element_loop").f, args)
    assert not outcome.failed, f"{outcome.category}: {outcome.details}\n{source}"


@pytest.mark.parametrize("device", [False, True], ids=["numpy", "ConcreteArray"])
@pytest.mark.parametrize("name", sorted(regressions.PROGRAMS))
def test_regression(name, device):
    fn, args = regressions.PROGRAMS[name]
    outcome = runner.check(fn, args, to_device=device)
    assert not outcome.failed, f"{name}: {outcome.category}: {outcome.details}"


def _tie_and_sum(m):
    m = np.exp(np.tanh(np.ones_like(m)))           # equal elements: their mean is each of them, in NumPy
    return (np.mean(m) - m[0, 0]) // 1.0, m.sum(axis=0)


def _lost_update(a):
    a += np.tanh(a)
    return a // 1.0


@pytest.mark.parametrize("f, args, differing, decided", [
    (_tie_and_sum, (np.zeros((3, 4)),), {("result[0]", 0)}, True),     # 0 or -1, as the mean rounds
    (_tie_and_sum, (np.zeros((3, 4)),), {("result[1]", 2)}, False),    # a sum: last bits only
    (_tie_and_sum, (np.zeros((3, 4)),), {("result[0]", 0), ("result[1]", 0)}, False),
    (_lost_update, (np.linspace(-2, 2, 7),), {("argument a after the call", 3)}, False),
    (_lost_update, (np.linspace(-2, 2, 7),), {("result", None)}, False),   # another dtype or shape
])
def test_rounding_oracle_tells_rounding_from_wrong_answers(f, args, differing, decided):
    """The runner's "rounding" category covers only places where NumPy's own answer moves with its
    rounding; a wrong value anywhere else stays a mismatch."""
    want_args = copy.deepcopy(args)
    want = f(*want_args)
    assert runner.rounding_decides(f, args, {}, (want, want_args, {}), frozenset(differing)) is decided
