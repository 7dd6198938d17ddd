"""Tracing a Python function into a private func.func of the module being traced.

Autodiff needs the function it differentiates as a symbol of its own (Enzyme's
ops name a function), while the caller's values stay in the caller.  A
func.func cannot see the values around it, so values the traced code captures
from the caller (closures, host inputs, arrays it writes but was not given)
become extra arguments after tracing: constants are copied in, everything else
is passed.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import ops
from ..ir.core import Function, Operation, Value, insertion_point
from ..pytree import TreeDef, flatten
from . import context
from .array import Journal, TracedArray, defers_tracing, serial_now
from .trace import output_value


@dataclass
class PrivateFunction:
    """A traced function: ``symbol``'s arguments are the given array leaves, then ``captured``
    (outer values it reads); its results are the output leaves, then the new values of the
    arrays it updated (``updated``: argument positions; ``outer_updates``: outer arrays)."""

    symbol: Function
    out_treedef: TreeDef
    out_count: int
    updated: list            # argument index of each updated argument, in result order
    outer_updates: list      # outer TracedArrays the function wrote, in result order
    captured: list           # outer Values passed after the arguments

    def operands(self, arguments) -> list:
        return list(arguments) + self.captured

    def apply_updates(self, results):
        """Give the outer arrays the function wrote their new values (``results``: the
        function's results past the outputs and argument updates)."""
        for array, value in zip(self.outer_updates, results):
            array.value = value


def trace_private(fn, types, name: str) -> PrivateFunction:
    """Trace ``fn(*params)``, where ``params`` are TracedArrays of the TensorTypes ``types``;
    ``fn`` returns a pytree of arrays and numbers."""
    trace = context.current()
    symbol = trace.module.add(Function(trace.unique_name(name), types, visibility="private"))
    start = serial_now()
    with insertion_point(symbol.body), Journal() as journal:
        params = [TracedArray(v) for v in symbol.arguments]
        trace.arguments.update(id(p) for p in params)  # updates of these are results: never replaced by copies
        starts = [p.value for p in params]
        out_leaves, out_treedef = flatten(fn(*params), is_leaf=defers_tracing)
        results = [output_value(leaf) for leaf in out_leaves]
        updated = [k for k, (p, v) in enumerate(zip(params, starts)) if p.value is not v]
        results += [params[k].value for k in updated]
        outer = [(a, old) for a, old in journal.written() if a.serial < start]  # made before: the caller's
        results += [a._value for a, _ in outer]
        ops.return_(results)
    for a, old in outer:  # the caller sees the writes once the call is emitted
        a._value = old
    symbol.result_types = [v.type for v in results]
    captured = _close_over(symbol)
    return PrivateFunction(symbol, out_treedef, len(out_leaves), updated, [a for a, _ in outer], captured)


def _close_over(symbol: Function) -> list:
    """Make ``symbol`` self-contained: copy captured constants in, turn other captured values
    into new arguments; returns the outer values to pass for them."""
    defined = {id(v) for v in symbol.arguments}
    for op in symbol.body.walk():
        defined.update(id(r) for r in op.results)
        defined.update(id(a) for region in op.regions for b in region.blocks for a in b.arguments)
    replacements: dict[int, Value] = {}
    captured, copies = [], []
    for op in symbol.body.walk():
        for i, v in enumerate(op.operands):
            if id(v) in defined:
                continue
            if id(v) not in replacements:
                source = v.owner if isinstance(v.owner, Operation) else None
                if source is not None and source.name == "stablehlo.constant":
                    copy = Operation(source.name, [], [v.type], source.attributes)
                    copy.literal = source.literal
                    copies.append(copy)
                    replacements[id(v)] = copy.results[0]
                else:
                    arg = Value(v.type, symbol.body, len(symbol.body.arguments))
                    symbol.body.arguments.append(arg)
                    captured.append(v)
                    replacements[id(v)] = arg
            op.operands[i] = replacements[id(v)]
    symbol.body.operations[:0] = copies
    return captured
