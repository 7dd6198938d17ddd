"""Loops made into what Enzyme-JAX's loop raising turns into tensor operations: reads of a carried array
that no earlier trip wrote come from the array the loop began with, and ifs become selects.

A loop that updates an array in place (``for i in range(n): m[i] = m[i] / np.linalg.norm(m[i])``)
carries it, and each trip reads the carried value.  Loop raising (greedy_while_loop_batch_fission) turns
a loop into tensor operations over all its trips only where what a trip reads does not depend on
earlier trips: a read of the carried array looks as if it does, and an if is opaque to it, so such a
loop stays a stablehlo.while of one-row trips (one kernel launch per trip on a GPU).

Reads.  For a loop with a counter (an int carried from a constant, stepped by a constant, compared with
a constant: a static trip range), each write to a carried array on the way from a trip's start to its
end (dynamic_update_slices, through ifs and selects) and each read (dynamic_slice or slice) covers a box
whose start along each axis is the counter times a constant plus a constant, or the same on every trip.
A read gets the same values from the loop's initial array, which does not change in the loop, where no
write of an earlier trip overlaps it (row ``i`` read and written by trip ``i``; ``u[i + 1]`` read and
``u[i]`` written) and every box a counter moves stays inside the array on every trip (a dynamic slice
clamps its start, which would move the box).

Ifs.  Both arms are computed (their operations are pure: ones with effects, or loops, keep the loop as
it is) and a select takes each result; an array one arm updates at some places becomes the array updated
there by a select of the arm's value and the array's, and one both arms update at the same places the
array updated there by a select of the two values, which raising takes as one write per trip.

Both are done only where the loop is then raisable (no trip reads what an earlier one computed but
through reductions, no two trips write one place): a loop left rolled would keep its initial array
alive beside the one it updates, which XLA copies, and run both arms of its ifs.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import ops
from .core import Block, Operation, Region, Value, current_block, emit, insertion_point, int_literal
from .types import i64_array

_LOOKED_THROUGH = 32  # an index computed through more operations than this is not analysed
_WRITES_LOOKED_THROUGH = 256  # a carried array written by more operations than this in a trip is not analysed
_LARGEST_BODY = 4096  # operations: a larger loop body is left as it is (the rewrites walk it once per if)


def while_loop(init, cond, body, attributes=None, reverse_mode=False) -> list:
    """``stablehlo.while`` carrying the values ``init``: ``cond(*carry)`` returns an i1 scalar,
    ``body(*carry)`` the next carry; returns the final carry.  The loop is prepared for Enzyme-JAX's
    loop raising, but for Enzyme's ``reverse_mode`` (which differentiates it) without its ifs made
    selects or its running scalars scans: a select's derivative sends 0 into the arm not taken, and 0
    times that arm's infinite or NaN derivative (sqrt's at x < 0) is NaN.

    The body is built first, and may add arguments to its block (``Block.insert_argument``) for
    values it defines before it reads them, such as a variable first assigned in the loop: those
    are carried too, from zeros."""
    body_block = Block([v.type for v in init])
    body_block.loop_body = True
    given = {id(arg): v for arg, v in zip(body_block.arguments, init)}
    with insertion_point(body_block):
        ops.emit_return(list(body(*body_block.arguments)))
    init = [given[id(arg)] if id(arg) in given else ops.constant(np.zeros(arg.shape, arg.dtype))
            for arg in body_block.arguments]
    types = [v.type for v in init]
    cond_block = Block(types)
    with insertion_point(cond_block):
        ops.emit_return([cond(*cond_block.arguments)])
    results = emit("stablehlo.while", init, types, attributes, [Region([cond_block]), Region([body_block])])
    loop = results[0].owner
    trips = _Trips.of(loop)
    scans = [] if trips is None else prepare_for_raising(loop, trips, reverse_mode)
    return _scanned_ahead(loop, trips, scans) if scans else results


def prepare_for_raising(loop: Operation, trips: _Trips, reverse_mode: bool) -> list:
    """Where that leaves a loop raising can turn into tensor operations: point the reads of ``loop``'s
    carried arrays that no earlier trip can have written at the loop's initial arrays, compute both
    arms of its ifs, a select taking each result, and find its running numbers (see the module
    docstring); returns those (_Scan), which the caller computes ahead of the loop (_scanned_ahead)."""
    if len(trips.values) < 2:
        return []
    operations = list(trips.body.walk())
    if len(operations) > _LARGEST_BODY:
        return []
    ifs = [op for op in operations if op.name == "stablehlo.if"]
    if ifs and reverse_mode:
        return []
    moves, kept, written = _moves(loop, trips)
    moved = {id(op) for op, _ in moves}
    scans = [] if reverse_mode else _Scan.find(loop, trips, moved)
    if not (moves or ifs or scans) or not _raisable(trips, kept, written, moved, ifs, {s.carried for s in scans}):
        return []
    for branch in reversed(ifs):  # (the innermost first)
        _speculate(branch, trips)
    for read, init in _moves(loop, trips)[0]:  # (the selects read what the arms did not write)
        read.operands[0] = init
    _coalesce_updates(trips)
    return scans


def _moves(loop: Operation, trips: _Trips):
    """([(a read of a carried array no earlier trip wrote, the initial array)], the indices of carried
    arrays read otherwise, {index: the boxes a trip writes to that carried array, or None})."""
    body = trips.body
    yields = body.operations[-1].operands
    carried = {id(arg): k for k, arg in enumerate(body.arguments) if k != trips.counter and yields[k] is not arg}
    written = {k: _writes(yields[k], body.arguments[k], trips, {}) if body.arguments[k].type.shape else None
               for k in carried.values()}
    moves, kept = [], set()
    for op in body.walk():
        if op.name not in _READS:
            continue
        read = _READS[op.name](op, trips)
        source = _source(op.operands[0], read, trips)
        root = source
        while isinstance(root, Value) and isinstance(root.owner, Operation) and root.owner.name == _UPDATE:
            root = root.owner.operands[0]
        k = carried.get(id(root))
        if k is None:
            continue
        if read is None or source is not root or written[k] is None or any(
                _earlier_trip_overlaps(write, read, trips) for write in written[k]):
            kept.add(k)
        else:
            moves.append((op, loop.operands[k]))
    return moves, kept, written


_UPDATE = "stablehlo.dynamic_update_slice"


def _source(array: Value, read, trips: _Trips):
    """The array a read of the box ``read`` of ``array`` reads from: past this trip's updates of other
    places; None where it reads what this trip wrote."""
    for _ in range(_LOOKED_THROUGH):
        update = array.owner
        if read is None or not isinstance(update, Operation) or update.name != _UPDATE:
            break
        written = _box(update.operands[0], update.operands[2:], update.operands[1].shape, trips)
        if written is None:
            break
        if _within_in_one_trip(read, written):
            return None
        if not _apart_in_one_trip(read, written):
            break
        array = update.operands[0]
    return array


def _apart_in_one_trip(a, b) -> bool:
    return any(ta == tb and ca is not None and cb is not None and (ca - cb >= sb or cb - ca >= sa)
               for (ta, ca, sa), (tb, cb, sb) in zip(a, b))


def _within_in_one_trip(inner, outer) -> bool:
    return all(ti == to and ci is not None and co is not None and co <= ci and ci + si <= co + so
               for (ti, ci, si), (to, co, so) in zip(inner, outer))


# A carried value a loop updates by one of these with its own value once per trip is a reduction, which
# raising makes one reduce over all trips.
_REDUCING = {"stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum", "stablehlo.and",
             "stablehlo.or"}


def _raisable(trips: _Trips, kept: set, written: dict, moved: set, ifs, scanned: set) -> bool:
    """Whether, once the reads ``moved`` read the initial arrays, the ``ifs`` are selects and the
    carried values ``scanned`` are taken out, no trip of the loop reads what an earlier one computed but
    through reductions, and no two trips write the same place: what loop raising needs.  (A loop it does
    not raise would keep the initial array alive beside the one it updates, which XLA then copies, and
    compute both arms of its ifs.)"""
    body = trips.body
    if kept or any(op.name in _NOT_RAISED for op in body.walk()) or any(
            _merge_kind(branch, r, trips) == "differ" for branch in ifs for r in branch.results):
        return False
    uses = {}
    for op in body.walk():
        if id(op) not in moved:
            for v in op.operands:
                uses.setdefault(id(v), []).append(op)
    yields = body.operations[-1].operands
    for k, carried in enumerate(body.arguments):
        users = [op for op in uses.get(id(carried), []) if op is not body.operations[-1]]
        update = yields[k].owner
        if k == trips.counter or k in scanned or yields[k] is carried or not users:  # (no trip reads it)
            continue
        if not carried.type.shape or written.get(k) is None:
            if not (users == [update] and update.name in _REDUCING):
                return False
        elif not all(op.name == "stablehlo.dynamic_update_slice" and op.operands[0] is carried
                     or op.name == "stablehlo.select" and carried is not op.operands[0]
                     or op.name == "stablehlo.return" for op in users) or any(
                _earlier_trip_overlaps(earlier, later, trips) for earlier in written[k] for later in written[k]):
            return False
    return True


class _Scan:
    """A carried number a loop combines with a value of each trip by an associative op (``m = max(m,
    x[i])``, ``if x[i] > m: m = x[i]``, ``k += flags[i]`` of ints), the value computed from the counter
    and what the loop does not change.  Loop raising cannot take that dependency from trip to trip, so
    the number's value before each trip is computed ahead of the loop: a first loop computes each
    trip's value (raised: tensor operations), a prefix scan (ops.prefix_scan) the running numbers, and
    the loop reads its trip's from those and carries the number unchanged (_scanned_ahead).  What the
    loop does with the number (writes it, compares it, computes with it) is as it was.  Floats' sums
    and products are left to the loop: a scan adds in another order, which rounds, overflows and
    cancels otherwise (1e16 + 1 - 1e16).  Python's max() and min() keep the number where the trip's
    value is NaN, and keep NaN once the number is NaN: the scan runs over the values with NaN made the
    identity, and its result is taken only where it is greater (less) than the number the loop began
    with."""

    def __init__(self, carried: int, kind: str, value: Value):
        self.carried = carried  # the number's index among the carried values
        self.kind = kind        # the combining op (_SCANNED), or Python's max() / min() (a select: "max", "min",
        # or "max>=" / "min<=" where a value equal to the number replaces it, if x[i] >= m: m = x[i])
        self.value = value      # what a trip combines with it

    @classmethod
    def find(cls, loop: Operation, trips: _Trips, moved: set) -> list:
        """The running numbers of the loop (``moved``: the ids of the reads that will read the initial
        arrays)."""
        body = trips.body
        yields = body.operations[-1].operands
        scans = []
        for k, number in enumerate(body.arguments):
            if k == trips.counter or number.type.shape or number.dtype.kind not in "iuf" or yields[k] is number:
                continue
            combined = _combination(yields[k], number, body)
            if combined is None or not _counter_and_invariants_only(combined[1], trips, moved):
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
    if op.name == "stablehlo.select":
        test, taken, kept = op.operands
    elif op.name == "stablehlo.if" and len(op.results) == 1:
        test, (taken, kept) = op.operands[0], (region.blocks[0].operations[-1].operands[0] for region in op.regions)
    else:
        return None
    compare = test.owner
    if kept is not number or not isinstance(compare, Operation) or compare.name != "stablehlo.compare":
        return None
    direction = compare.attributes.get("comparison_direction", "").rsplit(" ", 1)[-1].rstrip(">")
    left, right = compare.operands
    if left is number:
        left, right, direction = right, left, {"GT": "LT", "GE": "LE", "LT": "GT", "LE": "GE"}.get(direction)
    kind = {"GT": "max", "GE": "max>=", "LT": "min", "LE": "min<="}.get(direction)
    if right is not number or kind is None or not _same_value(left, taken):
        return None
    return kind, left


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


def _counter_and_invariants_only(value: Value, trips: _Trips, moved: set) -> bool:
    """Whether ``value`` depends on no carried value of the loop but its counter and those it carries
    unchanged (the reads ``moved`` read the loop's initial arrays)."""
    body = trips.body
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        if id(v) in seen or v.block is None or not v.block.within(body):
            continue
        seen.add(id(v))
        if not isinstance(v.owner, Operation):
            if v is not body.arguments[trips.counter] and id(v) not in trips.unchanged:
                return False
            continue
        stack.extend(v.owner.operands[1:] if id(v.owner) in moved else v.owner.operands)
        stack.extend(x for region in v.owner.regions for block in region.blocks for inner in block.walk()
                     for x in inner.operands)
    return True


def _scanned_ahead(loop: Operation, trips: _Trips, scans: list) -> list:
    """The loop's results, each scanned number's its last running value, with the running numbers
    computed ahead of the loop and read by it (the loop moves after them)."""
    results, count, body = list(loop.results), len(trips.values), trips.body
    for scan in scans:
        values = _each_trips_value(loop, trips, scan.value)
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


def _trip(counter: Value, trips: _Trips) -> Value:
    """Which trip it is (0, 1, ...), from the loop's ``counter``."""
    start, step = trips.values.start, trips.step
    if start:
        counter = ops.binary("stablehlo.subtract", counter, ops.constant(np.array(start, counter.dtype)))
    if step != 1:
        counter = ops.binary("stablehlo.divide", counter, ops.constant(np.array(step, counter.dtype)))
    return counter


def _each_trips_value(loop: Operation, trips: _Trips, value: Value) -> Value:
    """A vector of what ``value`` (computed in the loop's body from its counter and what the loop does
    not change) is on each trip: a loop of its own, of a copy of the operations that compute it."""
    body, count = trips.body, len(trips.values)
    needed = _needed(value, body)
    computing = [op for op in body.operations if id(op) in needed]
    unchanged = {id(arg): init for arg, init in zip(body.arguments, loop.operands) if id(arg) in trips.unchanged}
    counter = body.arguments[trips.counter]
    stop = ops.constant(np.array(trips.values.stop, counter.dtype))

    def each(i, values):
        copies = dict(unchanged)
        copies[id(counter)] = i
        for op in computing:
            _copy(op, copies)
        trip = ops.reshape(copies.get(id(value), value), (1,))
        values = ops.dynamic_update_slice(values, trip, [_trip(i, trips)])
        return [ops.binary("stablehlo.add", i, ops.constant(np.array(trips.step, counter.dtype))), values]

    first = ops.constant(np.array(trips.values.start, counter.dtype))
    zeros = ops.constant(np.zeros(count, value.dtype))
    return while_loop([first, zeros], lambda i, _: ops.compare(i, stop, "LT" if trips.step > 0 else "GT"), each)[1]


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
        stack.extend(x for region in op.regions for block in region.blocks for inner in block.walk()
                     for x in inner.operands)
    return needed


def _holds(outer: Operation, op: Operation) -> bool:
    return any(inner is op for region in outer.regions for block in region.blocks for inner in block.walk())


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


# Operations a loop raising does not take apart, or that an if's arm may not run when it is not taken.
_NOT_RAISED = {"stablehlo.case", "stablehlo.while", "stablehlo.custom_call", "stablehlo.rng_bit_generator",
               "stablehlo.optimization_barrier"}


def _arm_result(branch: Operation, arm: int, index: int) -> Value:
    return branch.regions[arm].blocks[0].operations[-1].operands[index]


def _chain(value: Value, arm: Block, trips: _Trips):
    """(the array before the dynamic_update_slices ``arm`` makes of it, [those updates]), looking through
    an if inside ``arm`` that will update it (once speculated) as one of its arms does."""
    updates = []
    while isinstance(value.owner, Operation) and value.owner.block is not None and value.owner.block.within(arm):
        op = value.owner
        if op.name == "stablehlo.dynamic_update_slice":
            updates.append(op)
            value = op.operands[0]
        elif op.name == "stablehlo.if" and _merge_kind(op, value, trips) in ("same", "one arm"):
            chains = [_chain(_arm_result(op, k, value.index), op.regions[k].blocks[0], trips) for k in (0, 1)]
            value, inner = chains[0] if chains[0][1] else chains[1]
            updates.extend(inner[::-1])
        else:
            break
    return value, updates[::-1]


def _merge_kind(branch: Operation, result: Value, trips: _Trips) -> str:
    """How the arms' values of ``result`` merge into one: "same" (both update one array at the same
    places), "one arm" (one arm updates it, the other leaves it), "select" (a select of the two, which
    neither updated), or "differ" (a select of two updates of an array)."""
    key = (id(branch), result.index)
    if key not in trips.kinds:
        trips.kinds[key] = _merge_kind_of(branch, result, trips)
    return trips.kinds[key]


def _merge_kind_of(branch: Operation, result: Value, trips: _Trips) -> str:
    (then_base, then_updates), (else_base, else_updates) = (
        _chain(_arm_result(branch, arm, result.index), branch.regions[arm].blocks[0], trips) for arm in (0, 1))
    if not (then_updates or else_updates):
        return "select"
    if then_base is not else_base:
        return "differ"
    if not (then_updates and else_updates):
        return "one arm"
    if len(then_updates) == len(else_updates) and all(
            t.operands[1].type == e.operands[1].type and all(
                _same_place(p, q, trips) for p, q in zip(t.operands[2:], e.operands[2:]))
            for t, e in zip(then_updates, else_updates)):
        return "same"
    return "differ"


def _same_place(p: Value, q: Value, trips: _Trips) -> bool:
    if p is q:
        return True
    p, q = _affine(p, trips), _affine(q, trips)
    return p is not None and p == q and p[1] is not None


def _speculate(branch: Operation, trips: _Trips) -> None:
    """Replace the if ``branch`` by both its arms' operations and, for each result, a select: an array
    one arm updates at some places becomes the array updated there by a select of the arm's value and
    the array's (so raising sees the update)."""
    block = branch.block
    at = block.operations.index(branch)
    arms = [region.blocks[0] for region in branch.regions]
    plans = [(result, _merge_kind(branch, result, trips),
              [_chain(_arm_result(branch, arm, result.index), arms[arm], trips) for arm in (0, 1)])
             for result in branch.results]
    moved = [op for arm in arms for op in arm.operations[:-1]]
    for op in moved:
        op.block = block
        for region in op.regions:
            for inner in region.blocks:
                inner.parent = block
    merges, pred = [], branch.operands[0]

    def emit(name, operands, result_type, attributes=None):
        op = Operation(name, operands, [result_type], attributes)
        op.block = block
        merges.append(op)
        return op.results[0]

    results = []
    for result, kind, ((base, then_updates), (_, else_updates)) in plans:
        if kind in ("select", "differ"):
            results.append(emit("stablehlo.select", [pred, *(_arm_result(branch, arm, result.index) for arm in (0, 1))],
                                result.type))
            continue
        value = base
        for k in range(max(len(then_updates), len(else_updates))):
            write = (then_updates or else_updates)[k]
            starts, update = write.operands[2:], write.operands[1]
            if kind == "same":
                then_part, else_part = then_updates[k].operands[1], else_updates[k].operands[1]
            else:
                before = _written_there(base, write, trips) or emit(
                    "stablehlo.dynamic_slice", [base, *starts], update.type, {"slice_sizes": i64_array(update.shape)})
                then_part, else_part = (update, before) if then_updates else (before, update)
            chosen = emit("stablehlo.select", [pred, then_part, else_part], update.type)
            value = emit("stablehlo.dynamic_update_slice", [value, chosen, *starts], value.type)
        results.append(value)
    block.operations[at:at + 1] = moved + merges
    replaced = {id(old): new for old, new in zip(branch.results, results)}
    for op in trips.body.walk():
        op.operands = [replaced.get(id(v), v) for v in op.operands]
    _drop_unused(block, trips.body, moved)


def _written_there(array: Value, write: Operation, trips: _Trips):
    """What ``array`` holds at the place ``write`` updates, where the update that made ``array`` wrote
    that place and no more (an if's update of what the trip wrote just before); None otherwise."""
    last = array.owner
    if not (isinstance(last, Operation) and last.name == _UPDATE and last.operands[1].type == write.operands[1].type):
        return None
    boxes = [_box(op.operands[0], op.operands[2:], op.operands[1].shape, trips) for op in (last, write)]
    return last.operands[1] if None not in boxes and _within_in_one_trip(*boxes) else None


def _coalesce_updates(trips: _Trips) -> None:
    """Two updates of a carried array one after the other in a trip, at places next to each other along
    an axis the counter does not move, become one update of the two joined, and an update the next one
    writes over goes: loop raising takes one write per trip (``out[i, 0] = ...; out[i, 1] = ...`` is then
    a row)."""
    body = trips.body
    uses = {}
    for op in body.walk():
        for v in op.operands:
            uses[id(v)] = uses.get(id(v), 0) + 1
    for k in range(len(body.arguments)):
        value = body.operations[-1].operands[k]
        while isinstance(value.owner, Operation) and value.owner.name == _UPDATE:
            second = value.owner
            first = second.operands[0].owner
            joined = (isinstance(first, Operation) and first.name == _UPDATE and first.block is second.block
                      and uses.get(id(first.results[0])) == 1 and _joined(first, second, trips))
            if not joined:
                value = second.operands[0]
                continue
            parts, starts, axis = joined
            made = []
            if axis is not None:
                shape = list(parts[0].shape)
                shape[axis] += parts[1].shape[axis]
                made.append(Operation("stablehlo.concatenate", parts, [parts[0].type.with_shape(shape)],
                                      {"dimension": f"{axis} : i64"}))
                parts = made[-1].results
            update = Operation(_UPDATE, [first.operands[0], parts[0], *starts], [value.type])
            made.append(update)
            block = second.block
            at = block.operations.index(second)
            for op in made:
                op.block = block
            block.operations[at:at + 1] = made
            block.operations.remove(first)
            for op in body.walk():
                op.operands = [update.results[0] if v is value else v for v in op.operands]
            value = update.results[0]


def _joined(first: Operation, second: Operation, trips: _Trips):
    """(the updates to write, their starts, the axis to join them along) where ``second`` writes next to
    ``first`` along one axis and at the same places along the others, or over all ``first`` writes (its
    update alone, no axis); None otherwise."""
    boxes = [_box(op.operands[0], op.operands[2:], op.operands[1].shape, trips) for op in (first, second)]
    if None in boxes:
        return None
    if _within_in_one_trip(boxes[0], boxes[1]):
        return [second.operands[1]], second.operands[2:], None
    apart = [d for d, (p, q, a, b) in enumerate(zip(first.operands[2:], second.operands[2:], *boxes))
             if not (p is q and a[2] == b[2] or a == b and a[1] is not None)]
    if len(apart) != 1:
        return None
    d = apart[0]
    (t1, c1, s1), (t2, c2, s2) = boxes[0][d], boxes[1][d]
    if t1 or t2 or c1 is None or c2 is None:  # (along the counter's axis, raising then built ill-typed IR)
        return None
    if c2 == c1 + s1:
        return [first.operands[1], second.operands[1]], first.operands[2:], d
    if c1 == c2 + s2:
        return [second.operands[1], first.operands[1]], second.operands[2:], d
    return None


def _drop_unused(block: Block, body: Block, candidates) -> None:
    """Remove the ``candidates`` (operations of ``block``) whose results nothing in ``body`` uses: an arm's
    updates the selects replaced."""
    used = {}
    for op in body.walk():
        for v in op.operands:
            used[id(v)] = used.get(id(v), 0) + 1
    dropped = set()
    for op in reversed(candidates):
        if not any(used.get(id(r)) for r in op.results):
            dropped.add(id(op))
            for v in op.operands:
                used[id(v)] -= 1
    block.operations = [op for op in block.operations if id(op) not in dropped]


class _Trips:
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
        direction = test.attributes.get("comparison_direction", "").rsplit(" ", 1)[-1].rstrip(">")
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


def _affine(index: Value, trips: _Trips, depth: int = 0):
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
    if not isinstance(op, Operation) or depth > _LOOKED_THROUGH:
        return None
    parts = [_affine(v, trips, depth + 1) for v in op.operands]
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


def _box(array: Value, starts, sizes, trips: _Trips):
    """Per axis (times the counter, start constant or None, size), or None where an axis is not affine
    or a box leaves the array on some trip."""
    box = []
    for start, size, dim in zip(starts, sizes, array.shape):
        part = _affine(start, trips)
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


def _dynamic_read(op: Operation, trips: _Trips):
    return _box(op.operands[0], op.operands[1:], op.results[0].shape, trips)


def _static_read(op: Operation, trips: _Trips):
    start = _ints(op.attributes["start_indices"])
    limit = _ints(op.attributes["limit_indices"])
    if any(s != 1 for s in _ints(op.attributes["strides"])):
        return None
    return [(0, s, e - s) for s, e in zip(start, limit)]


def _ints(attribute: str) -> list[int]:
    inside = attribute.partition(":")[2].rstrip(">").strip()
    return [int(v) for v in inside.split(",")] if inside else []


_READS = {"stablehlo.dynamic_slice": _dynamic_read, "stablehlo.slice": _static_read}


def _writes(value: Value, carried: Value, trips: _Trips, seen: dict):
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


def _writes_of(value: Value, carried: Value, trips: _Trips, seen: dict):
    op = value.owner
    if not isinstance(op, Operation):
        return None
    if op.name == "stablehlo.dynamic_update_slice":
        before = _writes(op.operands[0], carried, trips, seen)
        box = _box(op.operands[0], op.operands[2:], op.operands[1].shape, trips)
        return None if before is None or box is None else before + [box]
    if op.name == "stablehlo.select" and op.operands[0].shape in ((), value.shape):
        arms = [_writes(v, carried, trips, seen) for v in op.operands[1:]]
    elif op.name == "stablehlo.if":
        arms = [_writes(_arm_result(op, arm, value.index), carried, trips, seen) for arm in (0, 1)]
    else:
        return None
    return None if any(arm is None for arm in arms) else [box for arm in arms for box in arm]


def _earlier_trip_overlaps(write, read, trips: _Trips) -> bool:
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
