"""Differential fuzzing (tests/fuzz): random programs mixing rebinding, in-place updates, aliases,
views and control flow, and the named regression programs, must give NumPy's results (and leave
the arguments as NumPy does) or raise a clear CofactorError. scripts/fuzz.py runs more seeds."""
import os

import pytest

from fuzz import generator, regressions, runner

SEEDS = range(300)


def test_random_programs():
    tasks = [("check", seed, "auto") for seed in SEEDS]
    failures = sorted((seed, outcome) for (_, seed, _), outcome in runner.run_tasks(tasks, jobs=os.cpu_count() or 1)
                      if outcome.failed)
    report = [f"seed {seed}: {outcome.category}: {outcome.details}\n{generator.generate(seed).source}"
              for seed, outcome in failures]
    assert not failures, f"{len(failures)} of {len(SEEDS)} programs failed " \
        f"(rerun one: scripts/fuzz.py --count 1 --seed S --shrink)\n\n" + "\n".join(report)


@pytest.mark.parametrize("device", [False, True], ids=["numpy", "ConcreteArray"])
@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=regressions.OPEN[name]))
                                  if name in regressions.OPEN else name for name in sorted(regressions.PROGRAMS)])
def test_regression(name, device):
    fn, args = regressions.PROGRAMS[name]
    outcome = runner.check(fn, args, to_device=device)
    assert not outcome.failed, f"{name}: {outcome.category}: {outcome.details}"
