"""Loops built (``while_loop``) and made into what Enzyme-JAX's loop raising turns into tensor
operations: reads of a carried array that no earlier trip wrote come from the array the loop began with,
ifs become selects, adjacent writes of a trip one write, and running numbers are computed ahead
(scans.py).

A loop that updates an array in place (``for i in range(n): m[i] = m[i] / np.linalg.norm(m[i])``)
carries it, and each trip reads the carried value.  Loop raising (greedy_while_loop_batch_fission) turns
a loop into tensor operations over all its trips only where what a trip reads does not depend on
earlier trips: a read of the carried array looks as if it does, and an if is opaque to it, so such a
loop stays a stablehlo.while of one-row trips (one kernel launch per trip on a GPU).

Reads.  In a loop over a static range, a read gets the same values from the loop's initial array, which
does not change in the loop, where no write of an earlier trip overlaps it (row ``i`` read and written
by trip ``i``; ``u[i + 1]`` read and ``u[i]`` written): trips.py proves it from the places' boxes.

Ifs.  Both arms are computed (their operations are pure: ones with effects, or loops, keep the loop as
it is) and a select takes each result; an array one arm updates at some places becomes the array updated
there by a select of the arm's value and the array's, and one both arms update at the same places the
array updated there by a select of the two values, which raising takes as one write per trip.

All are done only where the loop is then raisable (no trip reads what an earlier one computed but
through reductions and running numbers, no two trips write one place): a loop left rolled would keep
its initial array alive beside the one it updates, which XLA copies, and run both arms of its ifs.
"""
from __future__ import annotations

import numpy as np

from . import ops
from .core import Block, Operation, Region, Value, emit, insertion_point
from .scans import Scan, scanned_ahead
from .trips import (LOOKED_THROUGH, READS, UPDATE, Trips, affine, apart_in_one_trip, arm_result, box_of,
                    earlier_trip_overlaps, within_in_one_trip, writes)
from .types import i64_array

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
    trips = Trips.of(loop)
    scans = [] if trips is None else prepare_for_raising(loop, trips, reverse_mode)
    return scanned_ahead(loop, trips, scans, while_loop) if scans else results


def prepare_for_raising(loop: Operation, trips: Trips, reverse_mode: bool) -> list:
    """Where that leaves a loop raising can turn into tensor operations: point the reads of ``loop``'s
    carried arrays that no earlier trip can have written at the loop's initial arrays, compute both
    arms of its ifs, a select taking each result, and find its running numbers (see the module
    docstring); returns those (Scan), which the caller computes ahead of the loop (scanned_ahead)."""
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
    scans = [] if reverse_mode else Scan.find(loop, trips, moved, written)
    if not (moves or ifs or scans) or not _raisable(trips, kept, written, moved, ifs, {s.carried for s in scans}):
        return []
    for branch in reversed(ifs):  # (the innermost first)
        _speculate(branch, trips)
    for read, init in _moves(loop, trips)[0]:  # (the selects read what the arms did not write)
        read.operands[0] = init
    _coalesce_updates(trips)
    return scans


def _moves(loop: Operation, trips: Trips):
    """([(a read of a carried array no earlier trip wrote, the initial array)], the indices of carried
    arrays read otherwise, {index: the boxes a trip writes to that carried array, or None})."""
    body = trips.body
    yields = body.operations[-1].operands
    carried = {id(arg): k for k, arg in enumerate(body.arguments) if k != trips.counter and yields[k] is not arg}
    written = {k: writes(yields[k], body.arguments[k], trips, {}) if body.arguments[k].type.shape else None
               for k in carried.values()}
    moves, kept = [], set()
    for op in body.walk():
        if op.name not in READS:
            continue
        read = READS[op.name](op, trips)
        source = _source(op.operands[0], read, trips)
        root = source
        while isinstance(root, Value) and isinstance(root.owner, Operation) and root.owner.name == UPDATE:
            root = root.owner.operands[0]
        k = carried.get(id(root))
        if k is None:
            continue
        if read is None or source is not root or written[k] is None or any(
                earlier_trip_overlaps(write, read, trips) for write in written[k]):
            kept.add(k)
        else:
            moves.append((op, loop.operands[k]))
    return moves, kept, written


def _source(array: Value, read, trips: Trips):
    """The array a read of the box ``read`` of ``array`` reads from: past this trip's updates of other
    places; None where it reads what this trip wrote."""
    for _ in range(LOOKED_THROUGH):
        update = array.owner
        if read is None or not isinstance(update, Operation) or update.name != UPDATE:
            break
        written = box_of(update.operands[0], update.operands[2:], update.operands[1].shape, trips)
        if written is None:
            break
        if within_in_one_trip(read, written):
            return None
        if not apart_in_one_trip(read, written):
            break
        array = update.operands[0]
    return array


# A carried value a loop updates by one of these with its own value once per trip is a reduction, which
# raising makes one reduce over all trips.
_REDUCING = {"stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum", "stablehlo.and",
             "stablehlo.or"}


def _raisable(trips: Trips, kept: set, written: dict, moved: set, ifs, scanned: set) -> bool:
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
                earlier_trip_overlaps(earlier, later, trips) for earlier in written[k] for later in written[k]):
            return False
    return True


# Operations a loop raising does not take apart, or that an if's arm may not run when it is not taken.
_NOT_RAISED = {"stablehlo.case", "stablehlo.while", "stablehlo.custom_call", "stablehlo.rng_bit_generator",
               "stablehlo.optimization_barrier"}


def _chain(value: Value, arm: Block, trips: Trips):
    """(the array before the dynamic_update_slices ``arm`` makes of it, [those updates]), looking through
    an if inside ``arm`` that will update it (once speculated) as one of its arms does."""
    updates = []
    while isinstance(value.owner, Operation) and value.owner.block is not None and value.owner.block.within(arm):
        op = value.owner
        if op.name == "stablehlo.dynamic_update_slice":
            updates.append(op)
            value = op.operands[0]
        elif op.name == "stablehlo.if" and _merge_kind(op, value, trips) in ("same", "one arm"):
            chains = [_chain(arm_result(op, k, value.index), op.regions[k].blocks[0], trips) for k in (0, 1)]
            value, inner = chains[0] if chains[0][1] else chains[1]
            updates.extend(inner[::-1])
        else:
            break
    return value, updates[::-1]


def _merge_kind(branch: Operation, result: Value, trips: Trips) -> str:
    """How the arms' values of ``result`` merge into one: "same" (both update one array at the same
    places), "one arm" (one arm updates it, the other leaves it), "select" (a select of the two, which
    neither updated), or "differ" (a select of two updates of an array)."""
    key = (id(branch), result.index)
    if key not in trips.kinds:
        trips.kinds[key] = _merge_kind_of(branch, result, trips)
    return trips.kinds[key]


def _merge_kind_of(branch: Operation, result: Value, trips: Trips) -> str:
    (then_base, then_updates), (else_base, else_updates) = (
        _chain(arm_result(branch, arm, result.index), branch.regions[arm].blocks[0], trips) for arm in (0, 1))
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


def _same_place(p: Value, q: Value, trips: Trips) -> bool:
    if p is q:
        return True
    p, q = affine(p, trips), affine(q, trips)
    return p is not None and p == q and p[1] is not None


def _speculate(branch: Operation, trips: Trips) -> None:
    """Replace the if ``branch`` by both its arms' operations and, for each result, a select: an array
    one arm updates at some places becomes the array updated there by a select of the arm's value and
    the array's (so raising sees the update)."""
    block = branch.block
    at = block.operations.index(branch)
    arms = [region.blocks[0] for region in branch.regions]
    plans = [(result, _merge_kind(branch, result, trips),
              [_chain(arm_result(branch, arm, result.index), arms[arm], trips) for arm in (0, 1)])
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
            results.append(emit("stablehlo.select", [pred, *(arm_result(branch, arm, result.index) for arm in (0, 1))],
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


def _written_there(array: Value, write: Operation, trips: Trips):
    """What ``array`` holds at the place ``write`` updates, where the update that made ``array`` wrote
    that place and no more (an if's update of what the trip wrote just before); None otherwise."""
    last = array.owner
    if not (isinstance(last, Operation) and last.name == UPDATE and last.operands[1].type == write.operands[1].type):
        return None
    boxes = [box_of(op.operands[0], op.operands[2:], op.operands[1].shape, trips) for op in (last, write)]
    return last.operands[1] if None not in boxes and within_in_one_trip(*boxes) else None


def _coalesce_updates(trips: Trips) -> None:
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
        while isinstance(value.owner, Operation) and value.owner.name == UPDATE:
            second = value.owner
            first = second.operands[0].owner
            joined = (isinstance(first, Operation) and first.name == UPDATE and first.block is second.block
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
            update = Operation(UPDATE, [first.operands[0], parts[0], *starts], [value.type])
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


def _joined(first: Operation, second: Operation, trips: Trips):
    """(the updates to write, their starts, the axis to join them along) where ``second`` writes next to
    ``first`` along one axis and at the same places along the others, or over all ``first`` writes (its
    update alone, no axis); None otherwise."""
    boxes = [box_of(op.operands[0], op.operands[2:], op.operands[1].shape, trips) for op in (first, second)]
    if None in boxes:
        return None
    if within_in_one_trip(boxes[0], boxes[1]):
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
