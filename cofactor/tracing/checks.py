"""Run-time checks: ``raise``, ``assert`` and ``warnings.warn`` where the code being traced may not
run (a branch of a traced ``if``, the body of a traced loop).

A compiled program cannot raise, so it computes what Python would have done and cofactor does it
after the call.  Each ``raise`` reached in such code is a *site*, numbered from 1 in the order the
trace meets them, with the exception Python would raise, built at trace time.  The program carries
one int64 vector, the *check state*, made zero when the trace starts and stored like any array, so
traced branches and loops carry its writes as they carry any other: its first entry is the site
that fired, which a site sets where it is reached if no site has yet (Python stops at the first).
Converted code treats a ``raise`` like a ``return`` (convert/checks.py): what follows it on that
path does not run, and a loop it is in stops.  When a site fired, the program returns the
arguments and globals it updates unchanged (NumPy's state at the raise would need the writes
before it only), and cofactor raises that site's exception, with the user's line as a note.  A
traced scalar or array its message formats (an f-string, ``str``, ``repr``, ``%``) shows its run-time
value: the message holds a token, the site writes the value's elements to slots of the state, and
the token is replaced after the call.  Only the first site that fires writes its values, so every
site's values start at the same slot (64 slots per message; past them, and for complex values, the
trace-time text).

``warnings.warn`` does not stop the program: each warning site is a bit of the state's second
entry, set where it is reached, and after the call cofactor issues the warnings whose bits are
set, in the order the trace met them.  Code that always runs raises and warns at trace time, as
Python does.
"""
from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import (CofactorError, ConcretizationError, TracingError, UnsupportedError, located, origin,
                      user_frame, user_line_of)
from ..ir import ops
from ..ir.core import current_block
from . import context
from .array import TracedArray


# The program's check state, one int64 vector: the fired site, the warned-sites mask (a bit per
# site, so at most 64 warning sites), and the slots holding the elements the raise messages show.
_FIRED, _WARNED, _SLOTS = 0, 1, 2
MAX_WARNINGS = 64
MESSAGE_SLOTS = 64


@dataclass
class Site:
    exception: BaseException | None  # None for a warning site
    warning: tuple | None            # (message, category) for a warning site
    where: tuple                     # (file, line) of the user's raise or warnings.warn
    shown: list = field(default_factory=list)  # (token, slot, _Shown, how, spec) in its message


@dataclass(frozen=True)
class _Shown:
    """What a value a message shows was: to rebuild it from its elements' bits after the call."""
    dtype: np.dtype
    shape: tuple
    scalar: bool               # a NumPy scalar (or a Python number, ``weak``), not an array
    weak: type | None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @classmethod
    def of(cls, array: TracedArray) -> "_Shown":
        return cls(array.dtype, array.shape, array.scalar, array.weak)

    def value(self, bits: np.ndarray):
        elements = (bits.view(np.float64) if self.dtype.kind == "f" else bits).astype(self.dtype)
        if not self.scalar:
            return elements.reshape(self.shape)
        return self.weak(elements[0]) if self.weak else elements[0]


class Checks:
    """The check sites of one trace and the program's check state.  The state is made when the
    trace starts, before any branch or loop, and kept among the trace's objects, so that every
    region carries its writes (heap.py); unread, it is removed."""

    def __init__(self, trace):
        self.raises: list[Site] = []
        self.warns: list[Site] = []
        self.state = trace.per_trace("checks", lambda: TracedArray(ops.constant(np.zeros(_SLOTS + MESSAGE_SLOTS,
                                                                                         np.int64))))
        self._made = self.state.value
        self.shown = None  # while a raise's message is built: that site's list of values shown
        self.free_slot = _SLOTS  # the first slot the message being built has not taken
        self.tokens = 0
        self.pending = None  # an exception built for a raise that raises at trace time after all

    @property
    def used(self) -> bool:
        return bool(self.raises or self.warns)

    def finish(self, body) -> Checks | None:
        """The checks, or None when the trace has none (and then the state is gone, unless a loop carried it)."""
        if self.used:
            return self
        if not any(v is self._made for op in body.walk() for v in op.operands):
            body.operations.remove(self._made.owner)
        return None

    def outputs(self) -> list:
        """The values the program returns for its checks, after its results and updates."""
        return [self.state.value] if self.used else []

    def _entry(self, index, count=None):
        """Entry ``index`` (a scalar), or the ``count`` entries from it (a vector)."""
        entries = ops.slice(self.state.value, (index,), (index + (count or 1),))
        return entries if count else ops.reshape(entries, ())

    def _set(self, index, value, where=None):
        """The entries from ``index`` become ``value`` (a scalar or a vector) where the code being
        traced runs (in a bounded loop's spare iterations it does not) and ``where`` (an i1 scalar) holds."""
        from .control import running
        value = ops.reshape(value, (-1,) if value.type.rank else (1,)) if value.type.rank != 1 else value
        live = running()
        for condition in (where, live):
            if condition is not None:
                value = ops.select(ops.broadcast_in_dim(condition, value.shape, ()), value,
                                   self._entry(index, value.shape[0]))
        self.state.value = ops.dynamic_update_slice(self.state.value, value,
                                                    [ops.constant(np.asarray(index, np.int64))])

    def waits(self, error) -> bool:
        """Whether ``error``, escaping the trace where the code always runs (NumPy's error or the
        user's own at a line of the program), waits for the run-time checks met before it, one of
        which may fire first, as in Python: it becomes the last site, which fires unless one of
        them did.  cofactor's refusals of a construct do not wait."""
        where, kind = user_line_of(error), origin(error)
        if (not self.raises or where is None or context.current().journals or kind == "internal"
                or type(error) in (TracingError, UnsupportedError, ConcretizationError)):
            return False
        if kind == "deliberate" and not isinstance(error, CofactorError):
            error = located(error, f"{where[0]}:{where[1]}")   # NumPy's own error, as the trace raises it
        self.raises.append(Site(error, None, where))
        first = self.none_fired()
        self._set(_FIRED, ops.constant(np.asarray(len(self.raises), np.int64)), first)
        return True

    def none_fired(self):
        """An i1 scalar: no site has fired yet."""
        return ops.compare(self._entry(_FIRED), ops.constant(np.zeros((), np.int64)), "EQ")

    def unless_fired(self, original, updated):
        """An argument's value after the call: ``updated``, or ``original`` when a site fired."""
        if not self.raises:
            return updated
        return ops.select(ops.broadcast_in_dim(self.none_fired(), updated.shape, ()), updated, original)

    def placeholder(self, array: TracedArray, how: str, spec: str = "") -> str | None:
        """A token standing, in the message being built, for ``array``'s run-time value (None: no slots
        for it, so it shows as at trace time)."""
        slot = self.free_slot
        if self.shown is None or array.dtype.kind not in "biuf" or slot + array.size > _SLOTS + MESSAGE_SLOTS:
            return None
        self.free_slot += array.size
        self.tokens += 1  # (not the slot: an empty array takes none)
        token = f"\x00cofactor {self.tokens}\x00"
        self.shown.append((token, slot, array, how, spec))
        return token


def available(trace) -> bool:
    """Whether raises and warnings can be checked at run time where ``trace`` is (a trace with a
    check state).  Code it differentiates is traced as a private function of the same trace:
    the state is one of the arrays it captures and updates, so every transform (which runs that
    function as written too) carries the writes out."""
    return trace.checks is not None


def _checks(what) -> Checks:
    trace = context.current()
    if not available(trace):
        raise located(UnsupportedError(
            f"{what} under a traced condition in code cofactor traces without a compiled function around it is not "
            "supported: check the condition in a function compiled with cf.jit"))
    return trace.checks


def _bits(array: TracedArray):
    """The elements as int64s, in C order (a float's bit pattern, as float64)."""
    v = ops.reshape(array.value, (array.size,))
    if array.dtype.kind == "f":
        return ops.bitcast_convert(ops.convert(v, np.float64), np.int64)
    return ops.convert(v, np.int64)


def reached_raise(make, where, always=False):
    """A ``raise`` reached in code that may not run: ``make()`` builds the exception (a traced scalar
    it formats shows its run-time value).  ``always``: code that always runs, which checks at run
    time only an exception whose message shows traced values or that a run-time check met before
    may preempt (outside branches and loops), and then ends the trace (RaisesAlways); another is
    returned, to raise now."""
    checks = _checks("raise")
    exception, shown = _built(checks, make)
    # (in a region, a message shows trace-time text)
    if always and (context.current().journals or not shown and not checks.raises):
        return exception
    _refused_if_caught(exception)  # (raised after the call, where no except clause around it can run)
    _add_site(checks, exception, shown, where)
    if always:
        raise RaisesAlways()
    return None


def building_a_message() -> bool:
    """Whether a raise's message is being built now (its traced values show as tokens of their run-time text)."""
    return context.is_tracing() and context.current().checks is not None and context.current().checks.shown is not None


def _built(checks: Checks, make):
    """``make()``'s exception, and the traced values its message shows (their tokens and slots); a traced
    value among its arguments themselves (``ValueError("bad value", x[0])``) is a token of its run-time value."""
    checks.shown, checks.free_slot = [], _SLOTS
    try:
        exception = make()
        if isinstance(exception, BaseException) and any(isinstance(a, TracedArray) for a in exception.args):
            exception.args = tuple((checks.placeholder(a, "value") or a) if isinstance(a, TracedArray) else a
                                   for a in exception.args)
        return exception, checks.shown
    finally:
        checks.shown = None


def _add_site(checks: Checks, exception, shown, where, condition=None):
    """A raise site that fires where it is reached (and ``condition``, an i1 scalar, holds) if none did."""
    site = Site(exception, None, where)
    checks.raises.append(site)
    first = checks.none_fired()
    if condition is not None:
        first = ops.binary("stablehlo.and", first, condition)
    # The site's number, the warned mask as it is, and the values its message shows (in the slots
    # from _SLOTS on, in order), written only by the raise that fires, the first: one write of the
    # state, where one per entry was a kernel and a copy of the state each (in a loop's body, per trip)
    entries = [ops.constant(np.asarray([len(checks.raises)], np.int64)), checks._entry(_WARNED, 1)]
    for token, slot, array, how, spec in shown:
        if array.size:
            entries.append(ops.reshape(_bits(array), (array.size,)))
        site.shown.append((token, slot, _Shown.of(array), how, spec))
    checks._set(_FIRED, ops.concatenate(entries, 0), first)


def numpy_error_if(failed, make, what="an operation on an array whose length is known only at run time"):
    """NumPy's error ``make()`` where ``failed`` (an i1 scalar Value) holds when the program runs: a
    check NumPy makes on a value known only then (two run-time lengths that must agree, an index
    past one, a Python int out of a dtype's range), or cofactor's own limit on one (python_ints.py).
    It fires as a raise at the user's line would; a traced value the message formats shows its
    run-time value.  ``what`` names the operation where no run-time check can be made."""
    checks = _checks(what)
    exception, shown = _built(checks, make)
    _refused_if_caught(exception)
    frame = user_frame()
    where = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("<unknown>", 0)
    _add_site(checks, exception, shown, where, failed)


_BROAD = (Exception, BaseException)


def _refused_if_caught(exception):
    """A check made inside a ``try`` whose except clause names the check's exception (``except
    IndexError:``), or inside ``with contextlib.suppress(IndexError)``, is refused: the clause would run in NumPy, and the check raises only after the
    compiled call.  A clause for every exception (``except Exception:``) is the program's guard against
    anything: the check stays, and its error, if raised, says that the clause did not run."""
    for handlers in context.current().handlers:
        caught = handlers()
        if not isinstance(exception, caught):
            continue
        flat = caught if isinstance(caught, tuple) else (caught,)
        if any(isinstance(exception, c) and c not in _BROAD for c in flat):
            raise located(TracingError(
                f"{type(exception).__name__} may be raised here, for values known only when the compiled function "
                "runs, and an except clause (or contextlib.suppress) around this line catches it: compiled code "
                "cannot run the clause then "
                "(check the values with NumPy instead, np.where(...), or put the try around the compiled call)"))
        exception.add_note("cofactor checks it after the compiled call: an except clause around its line in the "
                           "compiled function did not run")
        return


def unchecked(exception):
    """An error NumPy raises for values known only when the program runs that compiled code does not
    raise (numpy.linalg's LinAlgError for a singular matrix: the result holds inf or nan instead): an
    except clause around the line that names it is refused, as for a checked error, since it would
    never run."""
    _refused_if_caught(exception)


def error_if(failed, make):
    """``numpy_error_if`` where the code being traced can carry the check, for the checks NumPy makes
    on a value known only when the program runs (a traced index past its axis).  Unchecked: code
    traced with no check state (no compiled function around it), the regions cofactor's own
    implementations build (a loop of ops: what it writes, no control flow carries out)."""
    trace = context.current()
    carried = trace.journals[-1].block if trace.journals else trace.entry_block()
    if available(trace) and current_block() is carried:
        numpy_error_if(failed, make)


class RaisesAlways(BaseException):
    """The function raises on every call, with a message that shows run-time values: the trace ends
    there (nothing after it runs), and the program computes those values (tracing/trace.py)."""


def reached_warning(message, category, where):
    """A ``warnings.warn(message, category)`` reached in code that may not run."""
    checks = _checks("warnings.warn")
    if len(checks.warns) == MAX_WARNINGS:
        raise located(UnsupportedError(f"more than {MAX_WARNINGS} warnings.warn calls under traced conditions in one "
                                       "compiled function"))
    checks.warns.append(Site(None, (message, category), where))
    bit = ops.constant(np.asarray(1 << (len(checks.warns) - 1), np.uint64).view(np.int64))
    checks._set(_WARNED, ops.binary("stablehlo.or", checks._entry(_WARNED), bit))


def _shown(site: Site, state) -> dict:
    """Each token of the site's message -> the text of its value at run time."""
    texts = {}
    for token, slot, shown, how, spec in site.shown:
        value = shown.value(np.asarray(state[slot:slot + shown.size], np.int64))
        texts[token] = value if how == "value" else format(value, spec) if how == "format" else \
            repr(value) if how == "repr" else str(value)
    return texts


def after_call(checks: Checks, state):
    """Issue the warnings and raise the exception the program's check state (a host int64 vector)
    says Python would have."""
    warned = int(state[_WARNED].view(np.uint64))
    for k, site in enumerate(checks.warns):
        if warned >> k & 1:
            message, category = site.warning
            warnings.warn_explicit(message, category, *site.where)
    fired = int(state[_FIRED])
    if fired:
        site = checks.raises[fired - 1]
        error = copy.copy(site.exception)
        error.__cause__, error.__suppress_context__ = site.exception.__cause__, site.exception.__suppress_context__
        texts = _shown(site, state)
        if texts:
            error.args = tuple(_filled(a, texts) for a in error.args)
        error.add_note(f"raised by the compiled function, at {site.where[0]}:{site.where[1]}")
        raise error.with_traceback(None)


def _filled(arg, texts):
    if not isinstance(arg, str):
        return arg
    if arg in texts and not isinstance(texts[arg], str):
        return texts[arg]  # (an argument of the exception that is a traced value: that value)
    for token, text in texts.items():
        arg = arg.replace(token, str(text))
    return arg
