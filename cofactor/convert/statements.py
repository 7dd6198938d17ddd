"""What rewritten if / while / for statements do at run time: plain Python when the condition
or the range is known, stablehlo.if / while when it is traced."""
from __future__ import annotations

import contextlib
import sys
import threading
import types

import numpy as np

from ..errors import ConcretizationError, TracingError, UnsupportedError, located
from ..tracing import control, state
from ..tracing.array import TracedArray
from ..tracing.derivatives import in_reverse_mode

_settings = threading.local()
DEFAULT_UNROLL = 8


def unroll_limit() -> int:
    """Static loops of at most this many iterations run as Python (unrolled); longer ones are traced
    as one stablehlo.while (set per compiled function with ``cf.jit(f, unroll=...)``)."""
    return getattr(_settings, "unroll", DEFAULT_UNROLL)


def loop_options() -> dict:
    """How traced while loops are emitted: ``bound`` (a static maximum trip count) and
    ``attributes`` (Enzyme's checkpointing attributes)."""
    return getattr(_settings, "loops", {})


@contextlib.contextmanager
def options(unroll=DEFAULT_UNROLL, max_iterations=None, checkpoint=None):
    """The loop options of ``cf.jit`` while one function is traced."""
    attributes = {}
    if checkpoint:
        attributes["enzyme.enable_checkpointing"] = "true"
        if checkpoint is not True:
            attributes["enzyme.checkpoint_period"] = f"{int(checkpoint)} : i64"
    previous = unroll_limit(), loop_options()
    _settings.unroll = unroll
    _settings.loops = {"bound": max_iterations, "attributes": attributes or None}
    try:
        yield
    finally:
        _settings.unroll, _settings.loops = previous


unset = control.UNBOUND  # the pending return value before any return statement ran


def returned(value):
    """What a function whose returns were rewritten returns (None if it fell off the end)."""
    return None if value is control.UNBOUND else value


def load(read):
    try:
        return read()
    except NameError:
        return control.UNBOUND


def _traced(x) -> bool:
    return isinstance(x, TracedArray)


def _roots(frame_locals) -> list:
    """The arrays (their bases, for views) the user function's local variables hold, also in lists,
    tuples, dicts and attributes of objects (``self.u``), and the trace's own (cf.print's order): a
    loop carries them all, so that one it writes does not have to be found by tracing it again."""
    roots, seen = {}, set()
    stack = [(value, 0) for value in [*frame_locals.values(), *state.trace_objects()]]
    while stack:
        value, depth = stack.pop()
        if id(value) in seen or depth > 3:  # a few levels: large object graphs are not searched
            continue
        seen.add(id(value))
        if isinstance(value, TracedArray):
            while value.lens is not None:
                value = value.base
            roots[id(value)] = value
        elif isinstance(value, (list, tuple, dict)):
            stack += [(v, depth + 1) for v in (value.values() if isinstance(value, dict) else value)]
        elif hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType, types.FunctionType)):
            stack += [(v, depth + 1) for v in vars(value).values()]
    return list(roots.values())


def _scalar_predicate(x):
    """A traced truth value, read as Python's bool() would read an array."""
    return TracedArray(control.predicate(x))


def ifexp(test, then, orelse, line):
    """``then() if test else orelse()``; with a traced test, each arm is a branch of a stablehlo.if."""
    if not _traced(test):
        return then() if test else orelse()
    return control.cond_value(test, then, orelse, line)


def static(value, message):
    """A condition or range of code cofactor cannot compile: fine as a Python value, an error
    (``message`` says why) when traced."""
    if _traced(value) or isinstance(value, TracedRange):
        raise located(ConcretizationError(message))
    return value


def and_(left, right):
    if not _traced(left):
        return left and right()
    return np.logical_and(_scalar_predicate(left), right())


def or_(left, right):
    if not _traced(left):
        return left or right()
    return np.logical_or(_scalar_predicate(left), right())


def not_(x):
    return np.logical_not(_scalar_predicate(x)) if _traced(x) else not x


def if_(test, then_fn, else_fn, get, set_, names, line):
    if not _traced(test):
        (then_fn if test else else_fn)()
        return
    control.cond(test, then_fn, else_fn, names, get, set_, line)


def while_(cond_fn, body_fn, get, set_, names, line):
    while True:
        test = cond_fn()
        if _traced(test):
            roots = _roots(sys._getframe(1).f_locals)
            options = loop_options()
            _check_bound(options.get("bound"), f"the while loop at line {line}")
            control.while_loop(cond_fn, body_fn, names, get, set_, roots, line, **options)
            return
        if not test:
            return
        body_fn()


class TracedRange:
    """``range(start, stop, step)`` with a traced bound: iterated only by a traced loop."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


def range_(*args):
    if not any(_traced(a) for a in args):
        return range(*args)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    if _traced(step):
        raise TracingError("range() with a traced step is not supported; its direction must be known")
    return TracedRange(start, stop, step)


def for_(iterable, body_fn, get, set_, names, line, broke=None):
    """``broke()`` reads the loop's break flag (None: the loop has no break)."""
    frame_locals = sys._getframe(1).f_locals
    if isinstance(iterable, TracedArray):  # iterate the leading axis
        n = iterable.shape[0] if iterable.ndim else len(iterable)
        if n > unroll_limit() and _rolled(0, n, 1, lambda i: body_fn(iterable[i]), get, set_, names, line,
                                          frame_locals, broke):
            return
        _python_loop((iterable[i] for i in range(n)), body_fn, broke)
        return
    if isinstance(iterable, TracedRange):
        if not _rolled(iterable.start, iterable.stop, iterable.step, body_fn, get, set_, names, line,
                       frame_locals, broke, fallback=False):
            raise TracingError(f"the loop at line {line} over a traced range could not be traced")
        return
    if isinstance(iterable, range) and len(iterable) > unroll_limit():
        if _rolled(iterable.start, iterable.stop, iterable.step, body_fn, get, set_, names, line, frame_locals,
                   broke):
            return
    _python_loop(iterable, body_fn, broke)


def _check_bound(bound, what):
    if bound is None and in_reverse_mode():
        raise located(UnsupportedError(
            f"reverse-mode differentiation through {what} needs a static trip count, and this one depends on "
            "data: give the loop a bound with cf.jit(..., max_iterations=N) (or use forward mode)"))


def _python_loop(iterable, body_fn, broke):
    for item in iterable:
        body_fn(item)
        if broke is not None:
            flag = broke()
            if not _traced(flag) and flag:
                return


def _rolled(start, stop, step, body_fn, get, set_, names, line, frame_locals, broke=None, fallback=True) -> bool:
    """Trace ``for i in range(start, stop, step): body(i)`` as one stablehlo.while, its counter traced.

    With ``fallback`` (a static range), a body that needs ``i`` as a Python number (``range(i)``, a
    list index) returns False so the caller unrolls the loop instead; and when the range is not
    empty, the variables the loop assigns keep their last values after it, as in Python.
    """
    counter = [start]

    # The counter is carried first: Enzyme's reverse mode finds the trip count only from there.
    def get_all():
        return (counter[0],) + get()

    def set_all(values):
        counter[0] = values[0]
        set_(values[1:])

    def cond():
        more = counter[0] < stop if step > 0 else counter[0] > stop
        return more if broke is None else and_(more, lambda: not_(broke()))

    def body():
        i = counter[0]
        body_fn(i)
        counter[0] = i + step

    bound = None
    traced_range = _traced(start) or _traced(stop)
    if in_reverse_mode() and (broke is not None or traced_range):
        # Enzyme's reverse mode needs a static trip count: run every iteration the range allows.
        bound = loop_options().get("bound") if traced_range else len(range(start, stop, step))
        _check_bound(bound, f"the for loop at line {line} over a traced range")
    try:
        control.while_loop(cond, body, ("loop counter",) + tuple(names), get_all, set_all,
                           _roots(frame_locals), line, attributes=loop_options().get("attributes"), bound=bound,
                           runs=fallback and len(range(start, stop, step)) > 0)
    except TracingError:
        if not fallback:
            raise
        return False
    return True
