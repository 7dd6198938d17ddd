"""Differential fuzzing: random NumPy programs (tests/fuzz/generator.py) run under NumPy and
under cofactor; prints how many fell in each category (tests/fuzz/runner.py) and the failures.

    .venv/bin/python scripts/fuzz.py --count 2000 --seed 0 --jobs 2 --show-failures 10 --shrink
    .venv/bin/python scripts/fuzz.py --count 1 --seed 1234 --show-failures 1     # one program
    .venv/bin/python scripts/fuzz.py --count 1000 --constructs    # what the generator writes

Exit status 1 if any program failed.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ["COFACTOR_CACHE_DIR"] = ""     # thousands of throwaway programs: keep the disk cache off
sys.path.insert(0, str(ROOT))

from tests.fuzz import generator, runner  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100, help="programs to run (seeds S..S+N-1)")
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--show-failures", type=int, default=10, metavar="K",
                        help="print K failures (spread over the failure categories)")
    parser.add_argument("--shrink", action="store_true", help="shrink the failures shown before printing them")
    parser.add_argument("--save", metavar="DIR", help="write every failing program (and its shrunk form) to DIR")
    parser.add_argument("--optimize", default="auto", choices=["auto", "true", "upstream"],
                        help="the setting compared with optimize=False (default: cofactor's default)")
    parser.add_argument("--timeout", type=float, default=runner.TIMEOUT, help="seconds allowed per program")
    parser.add_argument("--constructs", action="store_true",
                        help="only generate: print how many programs use each construct")
    args = parser.parse_args(argv)
    seeds = range(args.seed, args.seed + args.count)
    if args.constructs:
        print_constructs(seeds)
        return 0
    optimize = True if args.optimize == "true" else args.optimize

    start = time.perf_counter()
    outcomes = {}
    try:
        for (_, seed, _), outcome in runner.run_tasks([("check", s, optimize) for s in seeds], args.jobs, args.timeout):
            outcomes[seed] = outcome
            if len(outcomes) % 100 == 0:
                print(f"  {len(outcomes)}/{args.count} programs, {time.perf_counter() - start:.0f} s", file=sys.stderr)
    except KeyboardInterrupt:  # Ctrl-C: report the programs that finished
        print(f"  interrupted: {len(outcomes)} of {args.count} programs finished", file=sys.stderr)
    elapsed = time.perf_counter() - start

    failures = sorted(seed for seed, outcome in outcomes.items() if outcome.failed)
    shown = spread(failures, outcomes, args.show_failures)
    if args.shrink and shown:
        print(f"  shrinking {len(shown)} failures ...", file=sys.stderr)
        tasks = [("shrink", seed, optimize) for seed in shown if outcomes[seed].category != "timeout"]
        for (_, seed, _), outcome in runner.run_tasks(tasks, args.jobs, args.timeout):
            outcomes[seed].shrunk, outcomes[seed].shrunk_details = outcome.shrunk, outcome.shrunk_details
            print(f"  shrunk seed {seed}: {outcome.category}", file=sys.stderr)

    print_summary(outcomes, elapsed, args.jobs)
    for seed in shown:
        print_failure(seed, outcomes[seed])
    if args.save:
        save(args.save, failures, outcomes)
    return 1 if failures else 0


def spread(failures, outcomes, count):
    """Up to ``count`` failing seeds, taking the categories (and error messages) in turn."""
    groups = defaultdict(list)
    for seed in failures:
        groups[(outcomes[seed].category, outcomes[seed].message)].append(seed)
    queues = sorted(groups.values(), key=len, reverse=True)
    chosen = []
    while len(chosen) < count and any(queues):
        for queue in queues:
            if queue and len(chosen) < count:
                chosen.append(queue.pop(0))
    return sorted(chosen)


def print_summary(outcomes, elapsed, jobs):
    counts = Counter(outcome.category for outcome in outcomes.values())
    total = len(outcomes)
    per_program = elapsed * jobs / max(total, 1)
    print(f"\n{total} programs in {elapsed:.0f} s ({jobs} processes, {per_program:.2f} s of a process per program)")
    print(f"{'category':<16}{'count':>7}{'share':>8}")
    for category in runner.CATEGORIES:
        mark = "  (failure)" if category in runner.FAILURES else ""
        print(f"{category:<16}{counts[category]:>7}{counts[category] / max(total, 1):>8.1%}{mark}")
    for category, title in [("clear_error", "refused by cofactor"), ("numpy_error", "errors NumPy raised too")]:
        messages = Counter(o.message for o in outcomes.values() if o.category == category)
        if messages:
            print(f"\n{title} ({category}), by first line of the message:")
            for message, count in messages.most_common():
                print(f"{count:>6}  {message[:160]}")
    notes = Counter(re.sub(r"\d+", "N", w) for o in outcomes.values() for w in set(o.warnings))
    if notes:
        print("\nOptimizationWarnings (the optimized program fell back to the unoptimized one):")
        for note, count in notes.most_common():
            seeds = [seed for seed, o in outcomes.items() if any(re.sub(r"\d+", "N", w) == note for w in o.warnings)]
            print(f"{count:>6}  {note[:160]}\n        seeds: {' '.join(map(str, sorted(seeds)[:8]))}")
    slow = sorted(outcomes.items(), key=lambda item: item[1].seconds, reverse=True)[:3]
    print("\nslowest: " + ", ".join(f"seed {seed} {o.seconds:.1f} s" for seed, o in slow))


def describe(seed, outcome):
    program = outcome.shrunk or generator.generate(seed)
    arguments = ", ".join(f"{name}={value!r}" for name, value in zip(program.params, program.args))
    details = outcome.shrunk_details if outcome.shrunk and outcome.shrunk_details else outcome.details
    header = [f"seed {seed}: {outcome.category}" + (" (shrunk)" if outcome.shrunk else ""),
              *details.splitlines()[:6],
              f"arguments: {arguments}" + (" (passed as ConcreteArrays)" if program.to_device else ""),
              f"dtypes: {' and '.join(program.dtypes)}"]
    return header, program.source


def print_failure(seed, outcome):
    header, source = describe(seed, outcome)
    print("\n" + "=" * 100)
    print("\n".join(header))
    print("-" * 100)
    print(source.rstrip())


def save(directory, failures, outcomes):
    os.makedirs(directory, exist_ok=True)
    for seed in failures:
        outcome = outcomes[seed]
        header, source = describe(seed, outcome)
        path = os.path.join(directory, f"seed{seed}_{outcome.category}.py")
        with open(path, "w") as file:
            file.write("".join(f"# {line}\n" for line in header) + "\n" + source)
    print(f"\n{len(failures)} failing programs written to {directory}")


def print_constructs(seeds):
    """How many programs use each construct, and statements per program."""
    programs = Counter()
    sizes = []
    for seed in seeds:
        program = generator.generate(seed)
        programs.update(set(program.constructs))
        sizes.append(program.source.count("\n"))
    print(f"{len(sizes)} programs, {sum(sizes) / len(sizes):.1f} lines on average (min {min(sizes)}, max {max(sizes)})")
    print(f"{'construct':<32}{'programs':>9}")
    for construct, count in sorted(programs.items()):
        print(f"{construct:<32}{count:>9}")


if __name__ == "__main__":
    sys.exit(main())
