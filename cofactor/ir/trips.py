"""Where a loop's trips read and write: the positional analysis ir/loops.py's rewrites rest on.

For a loop with a counter (an int carried from a constant, stepped by a constant, compared with a
constant: a static trip range, ``Trips``), each write to a carried array on the way from a trip's start
to its end (dynamic_update_slices, through ifs and selects: ``writes``) and each read (dynamic_slice or
slice: ``READS``) covers a box whose start along each axis is the counter times a constant plus a
constant, or the same on every trip (``affine``), and which stays inside the array on every trip (a
dynamic slice clamps its start, which would move the box: ``box`` refuses one that could leave it).
Whether a write of one trip overlaps a read or write of a later trip (``earlier_trip_overlaps``), or of
the same trip (``apart_in_one_trip``, ``within_in_one_trip``), is then arithmetic on those boxes.
"""
from __future__ import annotations

from fractions import Fraction

from .core import Block, Operation, Value, comparison_direction, int_literal

LOOKED_THROUGH = 32  # an index computed through more operations than this is not analysed
_WRITES_LOOKED_THROUGH = 256  # a carried array written by more operations than this in a trip is not analysed
UPDATE = "stablehlo.dynamic_update_slice"


class Trips:
    """A loop whose counter runs over a range known when it is traced: ``body`` (its body's block),
    ``counter`` (the counter's index among the carried values), ``step`` and ``values`` (the counter's
    values on the trips); ``kinds`` memoizes _merge_kind (an elif chain would ask again at each level)."""

    def __init__(self, body: Block, counter: int, values: range):
        self.body, self.counter, self.step, self.values = body, counter, values.step, values
        self.kinds = {}
        # ids of the carried values the loop passes on unchanged (a block argument's .index is where it
        # was made: arguments inserted later move the others)
        self.unchanged = {id(arg) for arg, new in zip(body.arguments, body.operations[-1].operands) if new is arg}

    @classmethod
    def of(cls, loop: Operation):
        """The trips of ``loop``, or None where its counter's range is not known."""
        cond, body = (region.blocks[0] for region in loop.regions)
        test = cond.operations[-1].operands[0].owner
        if not isinstance(test, Operation) or test.name != "stablehlo.compare":
            return None
        direction = comparison_direction(test)
        left, right = test.operands
        if right.owner is cond:  # (bound < counter: the same test turned around)
            left, right = right, left
            direction = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE"}.get(direction)
        if left.owner is not cond or int_literal(right) is None:
            return None
        k, bound = left.index, int_literal(right)
        start = int_literal(loop.operands[k])
        step = body.operations[-1].operands[k].owner
        if start is None or not isinstance(step, Operation) or step.name != "stablehlo.add":
            return None
        a, b = step.operands
        if b is body.arguments[k]:
            a, b = b, a
        step = int_literal(b)
        if a is not body.arguments[k] or not step or direction not in ("LT", "LE", "GT", "GE") or (
                (step > 0) != (direction in ("LT", "LE"))):
            return None
        stop = bound + (1 if direction == "LE" else -1 if direction == "GE" else 0)
        return cls(body, k, range(start, stop, step))


def affine(index: Value, trips: Trips, depth: int = 0):
    """(times the counter, plus a constant) for an index that is that on every trip; (0, None) for one
    that is the same on every trip but not known; None for any other."""
    literal = int_literal(index)
    if literal is not None:
        return 0, literal
    body = trips.body
    if index is body.arguments[trips.counter]:
        return 1, 0
    if index.block is None or not index.block.within(body) or id(index) in trips.unchanged:
        return 0, None  # (defined before the loop, or carried through it unchanged)
    op = index.owner
    if not isinstance(op, Operation) or depth > LOOKED_THROUGH:
        return None
    parts = [affine(v, trips, depth + 1) for v in op.operands]
    if any(p is None for p in parts):
        return None
    if op.name in ("stablehlo.convert", "stablehlo.reshape"):
        return parts[0]
    if op.name == "stablehlo.negate":
        return _known(-parts[0][0], _apply(lambda c: -c, parts[0][1]))
    if op.name in ("stablehlo.add", "stablehlo.subtract"):
        sign = 1 if op.name == "stablehlo.add" else -1
        (t0, c0), (t1, c1) = parts
        return _known(t0 + sign * t1, _apply(lambda a, b: a + sign * b, c0, c1))
    if op.name == "stablehlo.multiply":
        (t0, c0), (t1, c1) = parts
        if t0 and t1:
            return None
        if t1 or (c0 is not None and not t0):
            (t0, c0), (t1, c1) = (t1, c1), (t0, c0)  # (the counter's part first, the factor second)
        if c1 is None and t0:
            return None
        return _known(t0 * (c1 or 0), _apply(lambda a, b: a * b, c0, c1))
    return None


def _apply(fn, *constants):
    return None if any(c is None for c in constants) else fn(*constants)


def _known(times, const):
    """An affine index, or None where a counter's part comes with an unknown constant (its box could
    not be shown to stay inside the array)."""
    return None if times and const is None else (times, const)


def arm_result(branch: Operation, arm: int, index: int) -> Value:
    return branch.regions[arm].blocks[0].operations[-1].operands[index]


def box_of(array: Value, starts, sizes, trips: Trips):
    """Per axis (times the counter, start constant or None, size), or None where an axis is not affine
    or a box leaves the array on some trip."""
    box = []
    for start, size, dim in zip(starts, sizes, array.shape):
        part = affine(start, trips)
        if part is None:
            return None
        times, const = part
        if times:
            first, last = times * trips.values[0] + const, times * trips.values[-1] + const
            if min(first, last) < 0 or max(first, last) > dim - size:
                return None
        elif const is not None and not 0 <= const <= dim - size:
            return None  # (a dynamic slice would move it to fit)
        box.append((times, const, size))
    return box


def _dynamic_read(op: Operation, trips: Trips):
    return box_of(op.operands[0], op.operands[1:], op.results[0].shape, trips)


def _static_read(op: Operation, trips: Trips):
    start = _ints(op.attributes["start_indices"])
    limit = _ints(op.attributes["limit_indices"])
    if any(s != 1 for s in _ints(op.attributes["strides"])):
        return None
    return [(0, s, e - s) for s, e in zip(start, limit)]


def _ints(attribute: str) -> list[int]:
    inside = attribute.partition(":")[2].rstrip(">").strip()
    return [int(v) for v in inside.split(",")] if inside else []


READS = {"stablehlo.dynamic_slice": _dynamic_read, "stablehlo.slice": _static_read}


def writes(value: Value, carried: Value, trips: Trips, seen: dict):
    """The boxes written on the way from ``carried`` (a trip's start) to ``value`` (its end); None where
    ``value`` is not the carried array updated by dynamic_update_slices, ifs and selects.  ``seen``
    memoizes (ifs and selects join paths)."""
    if value is carried:
        return []
    if id(value) not in seen:
        seen[id(value)] = None  # (while it is worked out: a path longer than the limit is not analysed)
        if len(seen) <= _WRITES_LOOKED_THROUGH:
            seen[id(value)] = _writes_of(value, carried, trips, seen)
    return seen[id(value)]


def _writes_of(value: Value, carried: Value, trips: Trips, seen: dict):
    op = value.owner
    if not isinstance(op, Operation):
        return None
    if op.name == "stablehlo.dynamic_update_slice":
        before = writes(op.operands[0], carried, trips, seen)
        box = box_of(op.operands[0], op.operands[2:], op.operands[1].shape, trips)
        return None if before is None or box is None else before + [box]
    if op.name == "stablehlo.select" and op.operands[0].shape in ((), value.shape):
        arms = [writes(v, carried, trips, seen) for v in op.operands[1:]]
    elif op.name == "stablehlo.if":
        arms = [writes(arm_result(op, arm, value.index), carried, trips, seen) for arm in (0, 1)]
    else:
        return None
    return None if any(arm is None for arm in arms) else [box for arm in arms for box in arm]


def earlier_trip_overlaps(write, read, trips: Trips) -> bool:
    """Whether the box ``write`` of some trip overlaps the box ``read`` of a later trip."""
    lowest, highest = 1, len(trips.values) - 1  # how many trips earlier the write is
    for (w_times, w_const, w_size), (r_times, r_const, r_size) in zip(write, read):
        if w_times != r_times:
            return True
        if w_const is None or r_const is None:
            continue  # (the same on every trip, not known: taken to overlap)
        gap = w_const - r_const  # trips k earlier the write starts at gap - times * step * k from the read
        if not w_times:
            if gap >= r_size or -gap >= w_size:
                return False
            continue
        moves = w_times * trips.step
        # overlap: -w_size < gap - moves * k < r_size
        low, high = sorted((Fraction(gap - r_size, moves), Fraction(gap + w_size, moves)))
        lowest, highest = max(lowest, _above(low)), min(highest, _below(high))
    return lowest <= highest


def _above(x: Fraction) -> int:
    """The least int greater than ``x``."""
    return x.numerator // x.denominator + 1


def _below(x: Fraction) -> int:
    """The greatest int less than ``x``."""
    return -(-x.numerator // x.denominator) - 1


def apart_in_one_trip(a, b) -> bool:
    return any(ta == tb and ca is not None and cb is not None and (ca - cb >= sb or cb - ca >= sa)
               for (ta, ca, sa), (tb, cb, sb) in zip(a, b))


def within_in_one_trip(inner, outer) -> bool:
    return all(ti == to and ci is not None and co is not None and co <= ci and ci + si <= co + so
               for (ti, ci, si), (to, co, so) in zip(inner, outer))
