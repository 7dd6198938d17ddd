"""Run a program under NumPy and under cofactor (``optimize`` and ``optimize=False``) and classify
what happened; ``run_tasks`` does it for many seeds in worker processes that can be killed
when a compiled program hangs.

Categories (FAILURES are bugs in cofactor):
  match          every result and every array argument afterwards equal in both settings
  numpy_error    NumPy raised, and cofactor raised a CofactorError of the same builtin class (or the
                 very exception Python raised in the user's code: same type, same message)
  clear_error    cofactor refused with a CofactorError naming a line of the program, where NumPy ran
                 or raised only later (cofactor refused a construct before NumPy's error)
  rounding       cofactor's results differ only where NumPy's own do when its operations round
                 otherwise (``rounding_decides``): the program's answer there is decided by rounding
  mismatch       a result or an argument differs (value, dtype, shape)
  miscompile     optimize=False matches NumPy, the optimized program does not
  error_mismatch NumPy raised, cofactor did not raise a CofactorError of the same class
  internal       any other exception, or an error that names no line of the program
  timeout        no answer within the time limit
"""
from __future__ import annotations

import contextlib
import copy
import importlib.util
import inspect
import itertools
import multiprocessing
import os
import re
import signal
import tempfile
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from multiprocessing.connection import wait

import numpy as np

import cofactor as cf

from . import generator, rounding

CATEGORIES = ["match", "numpy_error", "clear_error", "rounding", "miscompile", "mismatch", "error_mismatch", "internal",
              "timeout"]   # in increasing severity
# cofactor's refusals of a construct (not the errors that mirror NumPy's own)
REFUSALS = (cf.TracingError, cf.UnsupportedError, cf.ConcretizationError)
FAILURES = {"miscompile", "mismatch", "error_mismatch", "internal", "timeout"}
TIMEOUT = 60.0
# How close cofactor's floats must be to NumPy's, by the dtype they have: (rtol, atol). The compiled
# program may round differently from NumPy (another summation order, XLA's own tanh / sin / exp,
# a multiply and add fused), a few units in the last place per operation, which the following
# operations carry on and cancellations make large next to the result. float64 leaves room for
# that; float32's unit in the last place is 2**-23 (1.2e-7), so it needs a tolerance of its own.
# Dtypes are compared exactly.
# XLA sums in another order than NumPy's pairwise sum (a last-bit difference), and generated
# programs feed sums back through loops (``m.fill(np.sin(m.sum()))`` nine times grew one ulp to
# 2e-11, seed 25308): float64 results are compared to 1e-9 relative, still far from any wrong answer.
TOLERANCE = {np.dtype(np.float64): (1e-9, 1e-12), np.dtype(np.float32): (1e-5, 1e-5)}


@dataclass
class Outcome:
    category: str
    details: str = ""
    error: str = ""              # the exception class that matters for the category, if any
    warnings: list = field(default_factory=list)   # cofactor's OptimizationWarnings, first lines
    seconds: float = 0.0
    shrunk: generator.Program | None = None       # the smallest program failing the same way
    shrunk_details: str = ""                        # what differs in that one
    differing: frozenset = frozenset()              # a mismatch's differing places (``_places``)

    @property
    def failed(self):
        return self.category in FAILURES

    @property
    def signature(self):
        """What a smaller program must reproduce to count as the same failure."""
        return self.category, self.error

    @property
    def message(self):
        """The first line of the details, with names and numbers blanked: groups like errors together."""
        first = self.details.splitlines()[0] if self.details else ""
        first = first.split(": got ")[0]     # a mismatch: which output differs, not the values
        return re.sub(r"\d+", "N", re.sub(r"'[^']*'", "'…'", first))


class Timeout(BaseException):
    """Raised by the alarm; a BaseException so that no ``except Exception`` in cofactor swallows it."""


def run(program: generator.Program, optimize="auto", timeout=TIMEOUT) -> Outcome:
    """Check ``program``'s f under NumPy and cofactor. A SyntaxError in the source is an internal
    outcome (the shrinker produces such candidates; generate() never should)."""
    with tempfile.TemporaryDirectory(prefix="cofactor-fuzz-") as directory:
        try:
            module = load(program.source, directory, f"fuzz_{program.seed}")
        except SyntaxError as error:
            return Outcome("internal", f"the program does not compile: {error}", type(error).__name__)
        return check(module.f, program.args, to_device=program.to_device, optimize=optimize, timeout=timeout)


_loaded = itertools.count()


def load(source, directory, name):
    """Import ``source`` from a real file: cofactor reads the source of the functions it converts."""
    name = f"{name}_{next(_loaded)}"
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(f, args, *, to_device=False, optimize="auto", timeout=TIMEOUT) -> Outcome:
    """Run ``f(*args)`` in NumPy and through ``cf.jit(f, optimize=...)`` and ``optimize=False``."""
    start = time.perf_counter()
    names = list(inspect.signature(f).parameters)
    # The module's global arrays: each run starts from copies of them, and ends compared with NumPy's.
    module = f.__globals__
    initial = {k: v.copy() for k, v in module.items() if isinstance(v, np.ndarray)}
    phase = "NumPy"
    try:
        with _alarm(timeout):
            want_args = copy.deepcopy(args)
            module.update({k: v.copy() for k, v in initial.items()})
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    want = f(*want_args)
                numpy_error = None
            except Exception as error:  # noqa: BLE001  (any error NumPy raises must be matched)
                numpy_error, want = error, None
            want_globals = {k: module[k] for k in initial}
            settings = [optimize] if optimize is False else [optimize, False]
            outcomes = {}
            for setting in settings:
                phase = f"cofactor (optimize={setting!r})"
                module.update({k: v.copy() for k, v in initial.items()})
                outcomes[setting] = _run_cofactor(f, args, names, to_device, setting, numpy_error, want,
                                                  (want_args, want_globals))
        outcome = _combine(outcomes, optimize)
        if outcome.category in ("mismatch", "miscompile"):
            phase = "NumPy rounding otherwise"
            if rounding_decides(f, args, initial, (want, want_args, want_globals), outcome.differing):
                outcome.category = "rounding"
    except Timeout:
        return Outcome("timeout", f"no answer in {timeout:.0f} s from {phase}", seconds=time.perf_counter() - start)
    outcome.seconds = time.perf_counter() - start
    return outcome


def rounding_decides(f, args, initial, want_state, differing) -> bool:
    """Whether every place where cofactor's run differs from NumPy's (``differing``) differs too in
    some run of NumPy with its operations rounded otherwise (tests/fuzz/rounding.py): the program's
    answer there is decided by rounding, not by its semantics. A run that raises tells nothing."""
    names = list(inspect.signature(f).parameters)
    unsettled = set()
    for trial in range(rounding.TRIALS):
        state = rounding.run(f, args, f.__globals__, initial, trial)
        if not isinstance(state, Exception):
            unsettled |= _places(_run_differences(want_state, state, names))
        if differing <= unsettled:
            return True
    return False


def _combine(outcomes, optimize):
    if len(outcomes) == 2:
        default, plain = outcomes[optimize], outcomes[False]
        if plain.category == "match" and default.category == "mismatch":
            default.category = "miscompile"
            default.details = f"optimize={optimize!r} only: {default.details}"
            return default
        worst = max((default, plain), key=lambda o: CATEGORIES.index(o.category))
        worst.differing = default.differing | plain.differing
        if default.category != plain.category:
            setting = optimize if worst is default else False
            other = plain if worst is default else default
            worst.details = f"optimize={setting!r} (the other setting: {other.category}): {worst.details}"
        worst.warnings = default.warnings + plain.warnings
        return worst
    return next(iter(outcomes.values()))


def _run_cofactor(f, args, names, to_device, optimize, numpy_error, want, want_state) -> Outcome:
    """``want_state``: NumPy's arguments and module globals after its run."""
    want_args, want_globals = want_state
    given = copy.deepcopy(args)
    if to_device:
        given = tuple(cf.to_device(a) if isinstance(a, np.ndarray) else a for a in given)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", cf.OptimizationWarning)
        try:
            got = cf.jit(f, optimize=optimize)(*given)
            error = None
        except Exception as e:  # noqa: BLE001
            error = e
    notes = [str(w.message).splitlines()[0] for w in caught if issubclass(w.category, cf.OptimizationWarning)]
    outcome = _classify(error, numpy_error, lambda: list(_run_differences(
        (want, want_args, want_globals), (got, given, {k: f.__globals__[k] for k in want_globals}), names)))
    outcome.warnings = notes
    return outcome


def _classify(error, numpy_error, compare) -> Outcome:
    if numpy_error is not None:
        cls = numpy_error_class(numpy_error)
        said = f"NumPy raised {type(numpy_error).__name__}: {_first_line(numpy_error)}"
        if error is None:
            return Outcome("error_mismatch", f"{said}; cofactor returned a result", cls.__name__)
        if isinstance(error, cf.CofactorError) and isinstance(error, cls) or _same_exception(error, numpy_error):
            return Outcome("numpy_error", _first_line(error), cls.__name__)
        if type(error) in REFUSALS and _names_a_line(error):
            # cofactor refused a construct before reaching the operation NumPy rejects
            return Outcome("clear_error", f"{type(error).__name__}: {str(error)}", type(error).__name__)
        return Outcome("error_mismatch", f"{said}; cofactor raised {_describe(error)}", cls.__name__)
    if error is None:
        differences = compare()
        if not differences:
            return Outcome("match")
        return Outcome("mismatch", differences[0][2], differing=_places(differences))
    if isinstance(error, cf.CofactorError) and not isinstance(error, cf.InternalError) and _names_a_line(error):
        return Outcome("clear_error", f"{type(error).__name__}: {str(error)}", type(error).__name__)
    return Outcome("internal", _describe(error), type(error).__name__)


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _same_exception(error, numpy_error) -> bool:
    """Python's own exception from the user's code (``t.fill`` on a float, a raise), as NumPy's run
    raised it: the same type and message, numbers in it equal within float32's rounding (a value
    computed in another order)."""
    if type(error) is not type(numpy_error):
        return False
    got, want = str(error), str(numpy_error)
    if _NUMBER.split(got) != _NUMBER.split(want):
        return False
    return all(np.isclose(float(g), float(w), rtol=1e-6, atol=0) for g, w in zip(_NUMBER.findall(got),
                                                                                  _NUMBER.findall(want)))


def _names_a_line(error):
    return "line" in str(error) or "in user code at" in str(error)


def numpy_error_class(error: Exception) -> type:
    """The public class of a NumPy error: AxisError, or its first builtin base class
    (NumPy's private UFuncTypeError subclasses count as TypeError)."""
    if isinstance(error, np.exceptions.AxisError):
        return np.exceptions.AxisError
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins")


def _first_line(error):
    text = str(error)
    return text.splitlines()[0] if text else ""


def _describe(error):
    """The exception and where it came from (the innermost frames)."""
    frames = traceback.extract_tb(error.__traceback__)[-3:]
    where = "; ".join(f"{os.path.basename(fr.filename)}:{fr.lineno} {fr.name}" for fr in frames)
    return f"{type(error).__name__}: {str(error)}\n  at {where}"


def _run_differences(want_state, got_state, names):
    """Every difference between NumPy's run and another (results, arguments, module globals after
    the call), as ``_differences`` gives them. A state: (result, arguments, globals)."""
    (want, want_args, want_globals), (got, got_args, got_globals) = want_state, got_state
    yield from _differences(want, got, "result")
    for name, w, g in zip(names, want_args, got_args):
        if isinstance(w, np.ndarray):
            yield from _differences(w, np.asarray(g), f"argument {name} after the call")
    for k, w in want_globals.items():
        yield from _differences(w, got_globals[k], f"global {k} after the call")


def compare(want, got, path="result"):
    """None if cofactor's ``got`` equals NumPy's ``want``, else what differs."""
    return next((message for _, _, message in _differences(want, got, path)), None)


def _places(differences):
    """The places ``_differences`` found: (path, flat index) for values, (path, None) for the rest."""
    return frozenset((path, i) for path, elements, _ in differences for i in (elements or (None,)))


def _differences(want, got, path):
    """Yield (path, the flat indices of the differing elements or None, a message) for each value in
    ``got`` that differs from NumPy's ``want`` (None: the type, dtype or shape differs)."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            yield path, None, f"{path}: got {_show(got)}, want a {type(want).__name__} of {len(want)}"
            return
        for k, (w, g) in enumerate(zip(want, got)):
            yield from _differences(w, g, f"{path}[{k}]")
        return
    if want is None or got is None:
        if want is not got:
            yield path, None, f"{path}: got {_show(got)}, want {_show(want)}"
        return
    w, g = np.asarray(want), np.asarray(got)
    if type(want) in (int, float, complex) and np.result_type(g.dtype, type(want)(0)) == g.dtype:
        # A Python number where another path holds a NumPy scalar: cofactor's variable has the
        # scalar's dtype (NEP 50), so the number comes back in it (README, "Control flow").
        with contextlib.suppress(OverflowError):   # an int out of the dtype's range stays a difference
            w = np.asarray(want, dtype=g.dtype)
    if w.dtype != g.dtype:
        yield path, None, f"{path}: dtype {g.dtype}, want {w.dtype} (got {_show(g)}, want {_show(w)})"
    elif w.shape != g.shape:
        yield path, None, f"{path}: shape {g.shape}, want {w.shape}"
    else:
        if w.dtype.kind in "fc":
            rtol, atol = TOLERANCE.get(np.finfo(w.dtype).dtype, TOLERANCE[np.dtype(np.float64)])
            same = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            same = np.equal(g, w)
        if not np.all(same):
            elements = frozenset(np.flatnonzero(~np.asarray(same)).tolist())
            yield path, elements, f"{path}: got {_show(g)}, want {_show(w)}"


def _show(value):
    if isinstance(value, (np.ndarray, np.generic)) or hasattr(value, "dtype"):
        return np.array2string(np.asarray(value), precision=6, separator=", ", max_line_width=200)
    return repr(value)


class _alarm:
    """Raise Timeout after ``seconds`` (when Python code runs again: a hang inside XLA needs the
    process killed, which ``run_tasks`` does)."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()

    def __enter__(self):
        if self.usable:
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc):
        if self.usable:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)

    @staticmethod
    def _fire(*_):
        raise Timeout


# ---- many programs in worker processes ------------------------------------------------------------

TASKS_PER_WORKER = 300  # then a fresh process: one that compiled thousands of programs ran 3x slower


def run_tasks(tasks, jobs=1, timeout=TIMEOUT):
    """Yield (task, Outcome) for tasks ("check" | "shrink", seed, optimize) as they finish, each run
    in one of ``jobs`` worker processes (each imports cofactor once, and is replaced after
    TASKS_PER_WORKER tasks). A worker that does not answer within the limit (or dies) is replaced;
    its task gets a timeout (or internal) outcome, and a shrink keeps the smallest failing program
    it had reported."""
    context = multiprocessing.get_context("spawn")   # never fork a process that runs XLA
    pending = list(reversed(tasks))
    idle, busy = [], {}

    def start():
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(child, timeout, TASKS_PER_WORKER), daemon=True)
        process.start()
        child.close()
        return parent, process

    try:
        idle = [start() for _ in range(min(jobs, len(tasks)))]
        while pending or busy:
            while idle and pending:
                conn, process = idle.pop()
                task = pending.pop()
                conn.send(task)
                busy[conn] = [process, task, time.monotonic(), None]
            for conn in wait(list(busy), timeout=1.0):
                process, task, _, progress = busy[conn]
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):
                    process.join()
                    del busy[conn]
                    idle.append(start())
                    yield task, Outcome("internal", f"the worker process died (exit code {process.exitcode})",
                                        "crash", shrunk=progress)
                    continue
                if kind == "progress":
                    busy[conn][3] = payload
                    continue
                del busy[conn]
                if kind == "last":  # the worker has served its share: its exit may wait minutes for
                    process.kill()  # a compile XLA could not finish in time (abandoned), so it is not awaited
                    process.join()
                    idle.append(start())
                else:
                    idle.append((conn, process))
                yield task, payload
            now = time.monotonic()
            for conn, (process, task, started, progress) in list(busy.items()):
                limit = timeout * (20 if task[0] == "shrink" else 1) + 30
                if now - started > limit:
                    process.kill()
                    process.join()
                    del busy[conn]
                    idle.append(start())
                    yield task, Outcome("timeout", f"no answer in {limit:.0f} s (worker killed)", shrunk=progress)
    finally:
        for conn, process in idle:
            try:
                conn.send(None)
            except OSError:
                pass
        for process, *_ in busy.values():
            process.kill()
        for _, process in idle:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()


def _serve(conn, timeout, tasks):
    """A worker: answers ``tasks`` tasks (the last one as "last"), or until it receives None."""
    cf.cache.set_directory(None)       # thousands of throwaway programs: keep them off the disk
    from . import shrink
    for served in range(1, tasks + 1):
        task = conn.recv()
        if task is None:
            return
        kind, seed, optimize = task
        program = generator.generate(seed)
        outcome = run(program, optimize, timeout)
        if kind == "shrink" and outcome.failed and outcome.category != "timeout":
            # Checking optimize=False alone is several times faster: use it if it shows the failure.
            setting = False if run(program, False, timeout).signature == outcome.signature else optimize
            # Removing a while loop's counter step makes NumPy loop forever: give up on such
            # candidates early.
            limit = min(timeout, max(10.0, 5 * outcome.seconds))
            outcome.shrunk = shrink.shrink(program, lambda p: run(p, setting, limit), outcome,
                                           on_progress=lambda p: conn.send(("progress", p)))
            outcome.shrunk_details = run(outcome.shrunk, optimize, timeout).details
        conn.send(("last" if served == tasks else "done", outcome))
