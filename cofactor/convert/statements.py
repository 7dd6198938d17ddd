"""What rewritten if / while / for statements do at run time: plain Python when the condition
or the range is known, stablehlo.if / while when it is traced."""
from __future__ import annotations

import contextlib
import sys
import threading

import numpy as np

from ..errors import TracingError
from ..tracing import control
from ..tracing.array import TracedArray

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
    """The arrays (their bases, for views) held by the user function's local variables."""
    roots = []
    for value in frame_locals.values():
        while isinstance(value, TracedArray) and value.lens is not None:
            value = value.base
        if isinstance(value, TracedArray):
            roots.append(value)
    return roots


def _scalar_predicate(x):
    """A traced truth value, read as Python's bool() would read an array."""
    return TracedArray(control.predicate(x))


def ifexp(test, then, orelse):
    """``then() if test else orelse()``; with a traced test both are evaluated and one selected."""
    if not _traced(test):
        return then() if test else orelse()
    return np.where(_scalar_predicate(test), then(), orelse())


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
            control.while_loop(cond_fn, body_fn, names, get, set_, roots, line, **loop_options())
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


def _python_loop(iterable, body_fn, broke):
    for item in iterable:
        body_fn(item)
        if broke is not None:
            flag = broke()
            if not _traced(flag) and flag:
                return


def _rolled(start, stop, step, body_fn, get, set_, names, line, frame_locals, broke=None, fallback=True) -> bool:
    """Trace ``for i in range(start, stop, step): body(i)`` as one stablehlo.while, its counter traced.

    With ``fallback``, a body that needs ``i`` as a Python number (``range(i)``, a list index)
    returns False so the caller unrolls the loop instead.
    """
    counter = [start]

    def get_all():
        return get() + (counter[0],)

    def set_all(values):
        set_(values[:-1])
        counter[0] = values[-1]

    def cond():
        more = counter[0] < stop if step > 0 else counter[0] > stop
        return more if broke is None else and_(more, lambda: not_(broke()))

    def body():
        i = counter[0]
        body_fn(i)
        counter[0] = i + step

    try:
        control.while_loop(cond, body, tuple(names) + ("loop counter",), get_all, set_all,
                           _roots(frame_locals), line, attributes=loop_options().get("attributes"))
    except TracingError:
        if not fallback:
            raise
        return False
    return True
