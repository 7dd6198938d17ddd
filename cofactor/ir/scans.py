"""Running numbers of a loop, computed ahead of it so that loop raising can take the loop apart.

A carried number a loop combines with a value of each trip by an associative op (``m = max(m, x[i])``,
``if x[i] > m: m = x[i]``, ``k += flags[i]`` of ints), the value computed from the counter and what the
loop does not change, is a dependency from trip to trip that loop raising cannot take.  So the number's
value before each trip is computed ahead of the loop: a first loop computes each trip's value (raised:
tensor operations), a prefix scan (ops.prefix_scan) the running numbers, and the loop reads its trip's
from those and carries the number unchanged (``scanned_ahead``).  What the loop does with the number
(writes it, compares it, computes with it) is as it was.

Floats' sums and products are left to the loop: a scan adds in another order, which rounds, overflows
and cancels otherwise (1e16 + 1 - 1e16).  Python's max() and min() keep the number where the trip's
value is NaN, and keep NaN once the number is NaN: the scan runs over the values with NaN made the
identity, and its result is taken only where it is greater (less) than the number the loop began with.
"""
from __future__ import annotations

import numpy as np

from . import ops
from .core import Block, Operation, Region, Value, comparison_direction, current_block, insertion_point
from .trips import (LOOKED_THROUGH, READS, UPDATE, Trips, apart_in_one_trip, arm_result, box_of, earlier_trip_overlaps,
                    within_in_one_trip)


class Scan:
    """A carried number a loop combines with a value of each trip by an associative op (``m = max(m,
    x[i])``, ``if x[i] > m: m = x[i]``, ``k += flags[i]`` of ints), the value computed from the counter
    and what the loop does not change.  Loop raising cannot take that dependency from trip to trip, so
    the number's value before each trip is computed ahead of the loop: a first loop computes each
    trip's value (raised: tensor operations), a prefix scan (ops.prefix_scan) the running numbers, and
    the loop reads its trip's from those and carries the number unchanged (scanned_ahead).  What the
    loop does with the number (writes it, compares it, computes with it) is as it was.  Floats' sums
    and products are left to the loop: a scan adds in another order, which rounds, overflows and
    cancels otherwise (1e16 + 1 - 1e16).  Python's max() and min() keep the number where the trip's
    value is NaN, and keep NaN once the number is NaN: the scan runs over the values with NaN made the
    identity, and its result is taken only where it is greater (less) than the number the loop began
    with."""

    def __init__(self, carried: int, kind: str, value: Value):
        self.carried = carried  # the number's index among the carried values
        self.kind = kind        # the combining op (_SCANNED), or Python's max() / min() (a select: "max", "min",
        # or "max>=" / "min<=" where a value equal to the number replaces it, if x[i] >= m: m = x[i]), or
        # a float maximum / minimum keeping NaN (a select: (direction, whether the number is its first operand))
        self.value = value      # what a trip combines with it

    @classmethod
    def find(cls, loop: Operation, trips: Trips, moved: set, written: dict) -> list:
        """The running numbers of the loop (``moved``: the ids of the reads that will read the initial
        arrays; ``written``: the boxes each carried array's trip writes)."""
        body = trips.body
        yields = body.operations[-1].operands
        scans = []
        for k, number in enumerate(body.arguments):
            if k == trips.counter or number.type.shape or number.dtype.kind not in "iuf" or yields[k] is number:
                continue
            combined = _combination(yields[k], number, body)
            if combined is None or not _counter_and_invariants_only(combined[1], trips, moved, written):
                continue
            kind, value = combined
            if kind in ("stablehlo.add", "stablehlo.multiply") and number.dtype.kind == "f":
                continue  # (in another order, floats round, overflow and cancel otherwise: 1e16 + 1 - 1e16)
            scans.append(cls(k, kind, value))
        return scans

    def running(self, values: Value, start: Value) -> Value:
        """The number after each trip, from the trips' ``values`` (in trip order) and its ``start``
        (scanned first, for sums and products).  Python's max() keeps the earlier of equal numbers
        (-0.0 before 0.0), and an if testing x[i] >= m the later: so does the scan's combine."""
        dtype, kind, count = values.dtype, self.kind, values.shape[0]
        small = -np.inf if dtype.kind == "f" else np.iinfo(dtype).min
        big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
        if isinstance(kind, tuple):  # a maximum (minimum) keeping NaN, as the loop computes it: associative
            direction, number_first = kind

            def combine(earlier, later):
                p, q = (earlier, later) if number_first else (later, earlier)
                return ops.select(ops.binary("stablehlo.or", ops.compare(p, q, direction), ops.compare(p, p, "NE")),
                                  p, q)
            identity = ops.constant(np.array(small if direction[0] == "G" else big, dtype))
            scanned = ops.prefix_scan(values, 0, combine, identity)
            return combine(ops.broadcast_in_dim(start, values.shape, []), scanned)
        identity = {"stablehlo.add": 0, "stablehlo.multiply": 1, "stablehlo.maximum": small, "max": small,
                    "max>=": small, "stablehlo.minimum": big, "min": big, "min<=": big}[kind]
        identity = ops.constant(np.array(identity, dtype))
        if kind in ("max", "min", "max>=", "min<="):
            if dtype.kind == "f":  # (NaN: the trip keeps the number)
                values = ops.select(ops.compare(values, values, "EQ"), values,
                                    ops.broadcast_in_dim(identity, values.shape, []))
            better = {"max": "GT", "min": "LT", "max>=": "GE", "min<=": "LE"}[kind]
            scanned = ops.prefix_scan(values, 0, lambda a, b: ops.select(ops.compare(b, a, better), b, a), identity)
            start = ops.broadcast_in_dim(start, values.shape, [])
            return ops.select(ops.compare(scanned, start, better), scanned, start)  # (a NaN start stays)
        if kind in ("stablehlo.maximum", "stablehlo.minimum"):  # (NaN carries on, as it does in the loop)
            scanned = ops.prefix_scan(values, 0, lambda a, b: ops.binary(kind, a, b), identity)
            return ops.binary(kind, ops.broadcast_in_dim(start, values.shape, []), scanned)
        joined = ops.concatenate([ops.reshape(start, (1,)), values], 0)
        scanned = ops.prefix_scan(joined, 0, lambda a, b: ops.binary(kind, a, b), identity)
        return ops.slice(scanned, [1], [count + 1])


_SCANNED = ("stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum")


def _combination(new: Value, number: Value, body: Block):
    """(kind, the value combined with ``number``) where ``new`` is ``number`` combined with a value by an
    associative op, or by Python's max() / min() (a select, or an if whose arms return the value and the
    number); None otherwise."""
    op = new.owner
    if not isinstance(op, Operation) or op.block is not body:
        return None
    if op.name in _SCANNED and op.operands.count(number) == 1:
        return op.name, op.operands[1] if op.operands[0] is number else op.operands[0]
    direction = _keeping_nan(op) if op.name == "stablehlo.select" else None
    if direction is not None and number in op.operands[1:] and op.operands[1] is not op.operands[2]:
        first = op.operands[1] is number
        return (direction, first), op.operands[2] if first else op.operands[1]
    if op.name == "stablehlo.select":
        test, taken, kept = op.operands
    elif op.name == "stablehlo.if" and len(op.results) == 1:
        test, (taken, kept) = op.operands[0], (region.blocks[0].operations[-1].operands[0] for region in op.regions)
    else:
        return None
    compare = test.owner
    if kept is not number or not isinstance(compare, Operation) or compare.name != "stablehlo.compare":
        return None
    direction = comparison_direction(compare)
    left, right = compare.operands
    if left is number:
        left, right, direction = right, left, {"GT": "LT", "GE": "LE", "LT": "GT", "LE": "GE"}.get(direction)
    kind = {"GT": "max", "GE": "max>=", "LT": "min", "LE": "min<="}.get(direction)
    if right is not number or kind is None or not _same_value(left, taken):
        return None
    return kind, left


def _keeping_nan(select: Operation):
    """The comparison's direction where ``select`` is a float maximum or minimum of p and q that keeps
    NaN, select(p > q or p is NaN, p, q); None otherwise."""
    test, p, q = select.operands
    either = test.owner
    if not isinstance(either, Operation) or either.name != "stablehlo.or" or p.dtype.kind != "f":
        return None
    ordered, nan = (x.owner for x in either.operands)
    if not all(isinstance(x, Operation) and x.name == "stablehlo.compare" for x in (ordered, nan)):
        return None
    direction = comparison_direction(ordered)
    if direction not in ("GT", "GE", "LT", "LE") or list(ordered.operands) != [p, q] or \
            list(nan.operands) != [p, p] or comparison_direction(nan) != "NE":
        return None
    return direction


def _same_value(a: Value, b: Value, depth: int = 0) -> bool:
    """Whether ``a`` and ``b`` are computed the same way from the same values (two reads of x[i])."""
    if a is b:
        return True
    p, q = a.owner, b.owner
    return (isinstance(p, Operation) and isinstance(q, Operation) and depth < 8 and p.name == q.name
            and a.index == b.index and a.type == b.type and not p.regions and not q.regions
            and p.attributes == q.attributes and len(p.operands) == len(q.operands)
            and (p.literal is None) == (q.literal is None)
            and (p.literal is None or np.array_equal(p.literal, q.literal))
            and all(_same_value(x, y, depth + 1) for x, y in zip(p.operands, q.operands)))


def _counter_and_invariants_only(value: Value, trips: Trips, moved: set, written: dict) -> bool:
    """Whether ``value`` is on every trip the same function of the counter, whatever earlier trips did:
    it depends on no carried value but the counter and those carried unchanged, or on places of carried
    arrays no earlier trip writes (the reads ``moved``, and reads through this trip's own updates and
    ifs: x[i] clipped in place before m = max(m, x[i])); ``written``: the boxes each carried array's
    trip writes (trips.writes)."""
    body = trips.body
    carried = {id(arg): k for k, arg in enumerate(body.arguments)}
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        if id(v) in seen or v.block is None or not v.block.within(body):
            continue
        seen.add(id(v))
        op = v.owner
        if not isinstance(op, Operation):
            if v is not body.arguments[trips.counter] and id(v) not in trips.unchanged:
                return False
            continue
        if op.name in READS and id(op) not in moved:
            read = READS[op.name](op, trips)
            if read is None or not _unwritten_before(op.operands[0], read, trips, written, carried, stack):
                return False
            stack.extend(op.operands[1:])
            continue
        stack.extend(op.operands[1:] if id(op) in moved else op.operands)
        stack.extend(x for inner in _nested(op) for x in inner.operands)
    return True


def _unwritten_before(array: Value, read, trips: Trips, written: dict, carried: dict, needed: list,
                      depth: int = 0) -> bool:
    """Whether what a read of the box ``read`` of ``array`` gets is, on every trip, this trip's own
    updates or places of carried arrays no earlier trip wrote; ``needed`` gets the values that decide
    which (updates' values and starts, ifs' tests), for the caller to look into."""
    k = carried.get(id(array))
    if k is not None:
        if id(array) in trips.unchanged:
            return True
        boxes = written.get(k)
        return boxes is not None and not any(earlier_trip_overlaps(w, read, trips) for w in boxes)
    op = array.owner
    if depth > LOOKED_THROUGH or not isinstance(op, Operation):
        return False
    if op.name == UPDATE:
        box = box_of(op.operands[0], op.operands[2:], op.operands[1].shape, trips)
        if box is None:
            return False
        needed.extend(op.operands[2:])
        if within_in_one_trip(read, box):
            needed.append(op.operands[1])
            return True
        if not apart_in_one_trip(read, box):
            needed.append(op.operands[1])
        return _unwritten_before(op.operands[0], read, trips, written, carried, needed, depth + 1)
    if op.name == "stablehlo.if":
        needed.append(op.operands[0])
        return all(_unwritten_before(arm_result(op, arm, array.index), read, trips, written, carried, needed,
                                     depth + 1) for arm in (0, 1))
    if op.name == "stablehlo.select":
        needed.append(op.operands[0])
        return all(_unwritten_before(x, read, trips, written, carried, needed, depth + 1) for x in op.operands[1:])
    needed.append(array)  # (an array computed otherwise: what it is computed from decides)
    return True


def scanned_ahead(loop: Operation, trips: Trips, scans: list, make_loop) -> list:
    """The loop's results, each scanned number's its last running value, with the running numbers
    computed ahead of the loop and read by it (the loop moves after them); ``make_loop`` builds the
    loop of each trip's values (loops.while_loop)."""
    results, count, body = list(loop.results), len(trips.values), trips.body
    for scan in scans:
        values = _each_trips_value(loop, trips, scan.value, make_loop)
        start = loop.operands[scan.carried]
        running = scan.running(values, start)
        results[scan.carried] = ops.reshape(ops.slice(running, [count - 1], [count]), ())
        before = ops.concatenate([ops.reshape(start, (1,)), ops.slice(running, [0], [count - 1])], 0)
        number = body.arguments[scan.carried]
        at = len(body.operations)
        with insertion_point(body):
            read = ops.reshape(ops.dynamic_slice(before, [_trip(body.arguments[trips.counter], trips)], [1]), ())
        made = body.operations[at:]
        body.operations[at:] = []
        body.operations[0:0] = made
        for op in body.walk():
            op.operands = [read if v is number else v for v in op.operands]
        body.operations[-1].operands[scan.carried] = number  # (carried unchanged: no trip reads it)
    loop.block.operations.remove(loop)
    loop.block.operations.append(loop)
    return results


def _trip(counter: Value, trips: Trips) -> Value:
    """Which trip it is (0, 1, ...), from the loop's ``counter``."""
    start, step = trips.values.start, trips.step
    if start:
        counter = ops.binary("stablehlo.subtract", counter, ops.constant(np.array(start, counter.dtype)))
    if step != 1:
        counter = ops.binary("stablehlo.divide", counter, ops.constant(np.array(step, counter.dtype)))
    return counter


def _each_trips_value(loop: Operation, trips: Trips, value: Value, make_loop) -> Value:
    """A vector of what ``value`` (computed in the loop's body from its counter and what the loop does
    not change) is on each trip: a loop of its own, of a copy of the operations that compute it."""
    body, count = trips.body, len(trips.values)
    needed = _needed(value, body)
    computing = [op for op in body.operations if id(op) in needed]
    # (a carried array is read there only at places no earlier trip wrote, or after this trip's own
    # updates of it, which the copy makes too: _counter_and_invariants_only)
    initial = {id(arg): init for arg, init in zip(body.arguments, loop.operands)}
    counter = body.arguments[trips.counter]
    stop = ops.constant(np.array(trips.values.stop, counter.dtype))

    def each(i, values):
        copies = dict(initial)
        copies[id(counter)] = i
        for op in computing:
            _copy(op, copies)
        trip = ops.reshape(copies.get(id(value), value), (1,))
        values = ops.dynamic_update_slice(values, trip, [_trip(i, trips)])
        return [ops.binary("stablehlo.add", i, ops.constant(np.array(trips.step, counter.dtype))), values]

    first = ops.constant(np.array(trips.values.start, counter.dtype))
    zeros = ops.constant(np.zeros(count, value.dtype))
    return make_loop([first, zeros], lambda i, _: ops.compare(i, stop, "LT" if trips.step > 0 else "GT"), each)[1]


def _needed(value: Value, body: Block) -> set:
    """ids of the operations of ``body`` (its own, not nested) that ``value`` is computed by."""
    needed, stack = set(), [value]
    while stack:
        v = stack.pop()
        op = v.owner
        if not isinstance(op, Operation) or id(op) in needed or v.block is None or not v.block.within(body):
            continue
        if op.block is not body:  # (a value of a nested region: the operation of the body holding it)
            op = next(outer for outer in body.operations if _holds(outer, op))
        needed.add(id(op))
        stack.extend(op.operands)
        stack.extend(x for inner in _nested(op) for x in inner.operands)
    return needed


def _holds(outer: Operation, op: Operation) -> bool:
    return any(inner is op for inner in _nested(outer))


def _nested(op: Operation):
    """The operations in ``op``'s regions, at any depth."""
    return (inner for region in op.regions for block in region.blocks for inner in block.walk())


def _copy(op: Operation, copies: dict) -> None:
    """``op`` built again at the insertion point, its operands (and its regions') looked up in
    ``copies``, which then maps its results to the copy's."""
    regions = []
    for region in op.regions:
        blocks = []
        for block in region.blocks:
            inner = Block([a.type for a in block.arguments])
            inner.parent = current_block()
            copies.update({id(a): b for a, b in zip(block.arguments, inner.arguments)})
            with insertion_point(inner):
                for nested in block.operations:
                    _copy(nested, copies)
            blocks.append(inner)
        regions.append(Region(blocks))
    copy = Operation(op.name, [copies.get(id(v), v) for v in op.operands], [r.type for r in op.results],
                     op.attributes, regions)
    copy.literal = op.literal
    current_block().append(copy)
    copies.update({id(old): new for old, new in zip(op.results, copy.results)})
