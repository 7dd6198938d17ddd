"""Histories: a list a rolled loop appends one value to per trip (``thetas.append(theta)`` in an
integrator's ``for`` loop over a static range).

A list that changes length in a traced loop cannot be carried (its length would be the trace's), so
such a loop was unrolled: a copy of the body per trip, and a 1000-step pendulum compiled for over a
minute.  When the loop's trip count is known and the list is one the body only appends to (the
converted code's check: its name appears in the body only as ``name.append(v)``, and no other name
or container holds it), the loop stays rolled: it carries a buffer of one row per trip, each trip
writes its value at its row (the list keeps its length while traced), and after the loop the list
gets the rows, each a value of its own, as the appended values were.

A value is taken only where that is what NumPy keeps: a number (immutable), or an array made in the
trip (not a view) that the trip does not write after appending it (``hist.append(u.copy())``):
NumPy's list holds the array objects themselves, which a later in-place write would change.  One
loop variable may hold it at the end of the trip (``y = step(y); ys.append(y)``, an integrator's
history) where no trip writes that variable's array in place (the one the trip before appended):
then the last value is the variable's array itself after the loop, as in NumPy (a write through
either shows in both), the others snapshots no name holds any more.  Anything else leaves the list
growing, and the loop unrolls as before.

A list appended to under a traced condition in the loop (``if x[i] > 0: out.append(i)``, a filter)
grows by a number of values known only when the program runs.  Such a history *counts*: every
append of the loop's (``append``) writes its value at the row of a carried counter and adds one to
it, as array writes that traced branches carry (the list itself does not change while traced), and
after the loop the list's variable holds a list of run-time length (numpy/extent_lists.py,
``RunTimeList``): the rows before the counter, after the items the list held before the loop.
"""
from __future__ import annotations

import numpy as np

from ..errors import TracingError, located
from ..ir import ops
from ..ir.core import Operation, Value, insertion_point
from ..pytree import flatten
from . import context
from .array import Either, TracedArray
from .dispatch import MAKERS


class History:
    """A list a rolled loop of ``trips`` trips may append one value to per trip; ``rebind(value)``
    makes the list's variable hold ``value`` (None where it cannot: the list cannot count)."""

    def __init__(self, items: list, trips: int, rebind=None, counted=False, site=None):
        self.items, self.trips, self.length, self.rebind, self.site = items, trips, len(items), rebind, site
        self.kind = None    # (shape, dtype, Python number type or None, scalar) of the values, once seen
        self.buffer = None  # the rows, carried by the loop once the kind is known
        self.held_at = None  # the leaf of the loop's variables that holds the value appended, if one does
        self.counted = counted  # whether it counts (appends under a traced condition, or in a loop of a
        #                         run-time trip count: ``trips`` is then the most it makes)
        self.count = None     # the counter of a counting history's rows (an int64 0-d array the loop carries)
        self.per_trip = 0     # the appends of a trip a counting history's buffer has rows for
        self.calls = 0        # the appends of the trip being traced
        self.arrays = []      # the arrays the trip being traced appended (a counting history's)
        self.trip = None      # (how many regions around the body may not run, how many loops are being traced,
        #                        how many traced ifs' branches, the loop's counter) where the trip's trace began

    def begin_trip(self, counter: TracedArray):
        """Where the trace of a trip's body starts (``counter``: the loop's)."""
        trace = context.current()
        self.calls, self.arrays = 0, []
        self.trip = (trace.conditional, len(trace.running), len(trace.predicates), counter.value)

    def append(self, value) -> bool:
        """``list.append(value)`` in the loop's body: True where this history took it (it counts, or
        the append is under a traced condition, which makes it count); False for a plain append."""
        trace = context.current()
        if self.trip is None or self.rebind is None or len(trace.running) != self.trip[1] or \
                not self.counted and (trace.conditional == self.trip[0] or not any(
                    _reads_data(p, self.trip[3]) for p in trace.predicates[self.trip[2]:])):
            return False  # (not in this loop's own body, or in it unconditionally, or under ifs on the counter
            #               alone, which the loop unrolled decides as Python: take() collects it, or the loop unrolls)
        kind = item_kind(value)
        if self.kind is not None and _compatible(kind, self.kind) and kind[2] != self.kind[2]:
            kind = self.kind = (*kind[:2], None, kind[3])  # (0.0 and np.float64: read as NumPy scalars)
        if kind is None or self.kind not in (None, kind) or isinstance(value, Either) or \
                isinstance(value, TracedArray) and value.lens is not None:
            raise located(TracingError(
                "a list appended to under a traced condition in a loop takes numbers of one type or arrays of one "
                "shape and dtype (each a new array, not a view)"))
        self.counted, self.kind = True, kind
        self.calls += 1
        if not kind[3]:
            self.arrays.append(value)
        if self.count is None or self.calls > self.per_trip:
            return True  # (the loop is traced again with a buffer of enough rows: needs_buffer)
        shape, dtype = kind[0], kind[1]
        row = item_value(value, dtype)
        zero = ops.constant(np.zeros((), np.int64))
        self.buffer.value = ops.dynamic_update_slice(self.buffer.value, ops.reshape(row, (1, *shape)),
                                                     [self.count.value] + [zero] * len(shape))
        self.count.value = ops.binary("stablehlo.add", self.count.value, ops.constant(np.ones((), np.int64)))
        return True

    def take(self, trip, entry, state, written, trip_start: int):
        """After a trip's body (``trip``: its counter; ``entry`` and ``state``: the loop's variables at
        its start and end; ``written``: the owners the trip wrote; ``trip_start``: the first serial of
        the trip): its appended value moved to the buffer, once there is one (first seen,
        ``needs_buffer``: the loop is traced again with one); left in the list where it did not grow by
        one value this history takes (the list's length check then unrolls the loop).  A counting
        history checks that NumPy's list holds what it wrote: arrays made in the trip that no write
        changes after and no variable holds."""
        if self.counted:
            del self.items[self.length:]  # (appended before it began to count: the loop is traced again)
            leaves = flatten(list(state))[0]
            for value in self.arrays:
                if value.serial < trip_start or any(owner is value for owner in written) or any(
                        isinstance(x, TracedArray) and any(o is value for o in x.owners()) for x in leaves):
                    raise located(TracingError(
                        "an array appended to a list under a traced condition in a loop is one the loop writes, or "
                        "a variable holds at the end of the trip: append a copy (out.append(v.copy()))"))
            return
        grown = self.items[self.length:]
        if len(grown) != 1 or not self._takes(grown[0], entry, state, written, trip_start):
            return
        kind = item_kind(grown[0])
        if self.kind is not None and kind != self.kind:
            return
        self.kind = kind
        if self.buffer is not None:
            self.buffer[trip] = self.items.pop()

    @property
    def needs_buffer(self) -> bool:
        if self.counted:
            return self.kind is not None and (self.count is None or self.calls > self.per_trip)
        return self.kind is not None and self.buffer is None

    def make_buffer(self) -> list:
        """The buffer (and a counting history's counter), made before the loop (so that the loop
        carries them), older than every region; returns the arrays it replaces."""
        shape, dtype, _, _ = self.kind
        old = [a for a in (self.buffer, self.count) if a is not None]
        if self.counted:
            self.per_trip = max(self.per_trip, self.calls, 1)
        rows = self.trips * (self.per_trip if self.counted else 1)
        # The loop's site keeps its arrays: traced again (a loop around it retried), the loop writes the
        # arrays it wrote before, which that loop then carries, not new ones at every attempt.
        self.buffer, self.count = context.current().per_trace(("history", self.site, rows, shape, dtype, self.counted),
                                                              lambda: self._made(rows))
        if self.count is not None:
            self.count.value = ops.constant(np.zeros((), np.int64))
        return old

    def _made(self, rows: int):
        """The buffer of ``rows`` rows (and counter), in the function's entry block (a loop inside a traced
        branch: seen after it), older than every region."""
        shape, dtype, _, _ = self.kind
        with insertion_point(context.current().entry_block()):
            count = TracedArray(ops.constant(np.zeros((), np.int64))) if self.counted else None
            buffer = TracedArray(ops.constant(np.zeros((rows, *shape), dtype)))
        for made in (count, buffer):
            if made is not None:
                made.serial = -1
        return buffer, count

    def carried(self) -> list:
        return [a for a in (self.buffer, self.count) if a is not None]

    def extend(self, final):
        """After the loop (``final``: its variables): the list gets a value of its own per trip, the
        last the variable's array itself where one holds it; a counting history's variable, the list
        of run-time length of the items before the loop and the rows it counted."""
        shape, dtype, weak, scalar = self.kind
        if self.counted:
            before = [item_value(item, dtype) for item in self.items if _compatible(item_kind(item), self.kind)]
            if any(item_kind(item)[2] != weak for item in self.items[:len(before)]):
                weak = None  # (Python numbers and NumPy scalars of one dtype: their items read as NumPy scalars)
            if len(before) != len(self.items):
                raise located(TracingError(
                    "a list appended to under a traced condition in a loop held items of another kind before it"))
            data = ops.concatenate([ops.reshape(v, (1, *shape)) for v in before] + [self.buffer.value], 0) \
                if before else self.buffer.value
            length = ops.binary("stablehlo.add", self.count.value, ops.constant(np.asarray(len(before), np.int64)))
            self.rebind(MAKERS["list of run-time length"](TracedArray(data), length, weak, scalar))
            return
        for k in range(self.trips):
            row = ops.reshape(ops.slice(self.buffer.value, (k,) + (0,) * len(shape), (k + 1, *shape)), shape)
            self.items.append(TracedArray(row, scalar=scalar, weak=weak))
        if self.held_at is not None and self.trips:
            self.items[-1] = flatten(list(final))[0][self.held_at]

    def _takes(self, value, entry, state, written, trip_start) -> bool:
        if isinstance(value, bool):
            return False
        if isinstance(value, (int, float, complex, np.generic)):
            return True
        if not isinstance(value, TracedArray) or isinstance(value, Either):
            return False
        if value.scalar:
            return True
        if value.lens is not None or value.serial < trip_start or any(owner is value for owner in written):
            return False
        leaves = flatten(list(state))[0]
        holders = [k for k, x in enumerate(leaves)
                   if isinstance(x, TracedArray) and any(o is value for o in x.owners())]
        if not holders:
            return self.held_at is None
        at_start = flatten(list(entry))[0]
        if self.held_at not in (None, holders[0]) or len(holders) != 1 or leaves[holders[0]] is not value or \
                len(at_start) != len(leaves) or any(o is at_start[holders[0]] for o in written):
            return False  # (a view of it, two names, or the array the trip before appended written in place)
        self.held_at = holders[0]
        return True


def _reads_data(predicate: Value, counter: Value) -> bool:
    """Whether ``predicate`` depends on more than the loop's ``counter`` and constants (``if x[i] > 0:``,
    not ``if i % 2 == 0:``)."""
    stack, seen = [predicate], set()
    while stack:
        v = stack.pop()
        if v is counter or id(v) in seen:
            continue
        seen.add(id(v))
        op = v.owner
        if not isinstance(op, Operation) or op.regions:
            return True  # (a block's argument: the loop's state, the function's arguments)
        stack.extend(op.operands)
    return False


def _compatible(kind, other) -> bool:
    """Whether items of ``kind`` and ``other`` fit one array: of one shape and dtype, numbers or not
    (a Python float and a NumPy float64)."""
    return kind is not None and kind[:2] == other[:2] and kind[3] == other[3]


def item_value(item, dtype) -> Value:
    """A traced array's or number's value (a number as a constant of ``dtype``, its kind's)."""
    return item.value if isinstance(item, TracedArray) else ops.constant(np.asarray(item, dtype))


def item_kind(value) -> tuple | None:
    """(shape, dtype, Python number type or None, scalar) of a number or a traced array (of static
    shape); None for anything else."""
    if isinstance(value, TracedArray):
        return value.shape, value.dtype, value.weak, value.scalar
    if type(value) in (bool, int, float, complex) or isinstance(value, np.generic):
        dtype = np.asarray(value).dtype
        return None if dtype == object else ((), dtype, type(value) if type(value) in (bool, int, float, complex)
                                             else None, True)
    return None
