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
"""
from __future__ import annotations

import numpy as np

from ..ir import ops
from ..pytree import flatten
from .array import Either, TracedArray


class History:
    """A list a rolled loop of ``trips`` trips may append one value to per trip."""

    def __init__(self, items: list, trips: int):
        self.items, self.trips, self.length = items, trips, len(items)
        self.kind = None    # (shape, dtype, Python number type or None, scalar) of the values, once seen
        self.buffer = None  # the rows, carried by the loop once the kind is known
        self.held_at = None  # the leaf of the loop's variables that holds the value appended, if one does

    def take(self, trip, entry, state, written, trip_start: int):
        """After a trip's body (``trip``: its counter; ``entry`` and ``state``: the loop's variables at
        its start and end; ``written``: the owners the trip wrote; ``trip_start``: the first serial of
        the trip): its appended value moved to the buffer, once there is one (first seen,
        ``needs_buffer``: the loop is traced again with one); left in the list where it did not grow by
        one value this history takes (the list's length check then unrolls the loop)."""
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
        return self.kind is not None and self.buffer is None

    def make_buffer(self):
        """The buffer, made before the loop (so that the loop carries it), older than every region."""
        shape, dtype, _, _ = self.kind
        self.buffer = TracedArray(ops.constant(np.zeros((self.trips, *shape), dtype)))
        self.buffer.serial = -1

    def extend(self, final):
        """After the loop (``final``: its variables): the list gets a value of its own per trip, the
        last the variable's array itself where one holds it."""
        shape, _, weak, scalar = self.kind
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
