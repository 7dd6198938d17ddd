"""The SSA IR: values, operations, blocks, regions, functions and modules.

It is deliberately small: an operation is a name, operands, result types,
inherent attributes (already spelled as MLIR attribute text) and regions.
Op builders with shape inference live in ``ops.py``; text output in
``printer.py``.  The IR knows nothing of NumPy or tracing.
"""
from __future__ import annotations

import contextlib
import threading

from .types import TensorType


class Value:
    """An SSA value: a block argument or an operation result."""

    __slots__ = ("type", "owner", "index")

    def __init__(self, type: TensorType, owner=None, index: int = 0):
        self.type = type
        self.owner = owner  # the Operation or Block that defines it
        self.index = index

    @property
    def shape(self):
        return self.type.shape

    @property
    def dtype(self):
        return self.type.dtype

    def __repr__(self):
        return f"Value({self.type.mlir()})"


class Operation:
    __slots__ = ("name", "operands", "results", "attributes", "regions", "literal")

    def __init__(self, name, operands, result_types, attributes=None, regions=()):
        self.name = name
        self.operands = list(operands)
        for v in self.operands:
            if not isinstance(v, Value):
                raise TypeError(f"{name}: operand {v!r} is not an IR value")
        self.results = [Value(t, self, i) for i, t in enumerate(result_types)]
        self.attributes = dict(attributes or {})
        self.regions = list(regions)
        self.literal = None  # a constant's value as a NumPy array, for front ends that fold


class Block:
    """A list of operations with typed arguments; the last op is a terminator."""

    def __init__(self, arg_types=()):
        self.arguments = [Value(t, self, i) for i, t in enumerate(arg_types)]
        self.operations: list[Operation] = []

    def append(self, op: Operation) -> Operation:
        self.operations.append(op)
        return op

    def add_argument(self, type: TensorType) -> Value:
        arg = Value(type, self, len(self.arguments))
        self.arguments.append(arg)
        return arg

    def defined_values(self) -> set:
        """ids of the values defined in this block: its arguments, and the results of its operations
        and of theirs in nested regions."""
        ids, stack = set(), [self]
        while stack:
            block = stack.pop()
            ids.update(id(a) for a in block.arguments)
            for op in block.operations:
                ids.update(id(r) for r in op.results)
                stack.extend(b for region in op.regions for b in region.blocks)
        return ids


class Region:
    def __init__(self, blocks=()):
        self.blocks = list(blocks)


class Function:
    """A func.func with one block; ``arg_attributes`` holds per-argument attribute text."""

    def __init__(self, name, arg_types, visibility="public"):
        self.name = name
        self.body = Block(arg_types)
        self.visibility = visibility
        self.arg_attributes: dict[int, dict[str, str]] = {}
        self.result_types: list[TensorType] = []

    @property
    def arguments(self):
        return self.body.arguments


class Module:
    def __init__(self, attributes=None):
        self.functions: list[Function] = []
        self.attributes = dict(attributes or {})
        # Python objects the module's code calls back into by a key (cf.print's printers): they live
        # as long as the module, which the compiled function holds.
        self.keepalive: list = []

    def add(self, fn: Function) -> Function:
        self.functions.append(fn)
        return fn

    def __str__(self):
        from .printer import print_module

        return print_module(self)


_state = threading.local()


def current_block() -> Block:
    """The block new operations go into (set by ``insertion_point``)."""
    stack = getattr(_state, "blocks", None)
    if not stack:
        raise RuntimeError("no insertion point: IR ops can only be built while tracing")
    return stack[-1]


@contextlib.contextmanager
def insertion_point(block: Block):
    stack = getattr(_state, "blocks", None)
    if stack is None:
        stack = _state.blocks = []
    stack.append(block)
    try:
        yield block
    finally:
        stack.pop()


def emit(name, operands, result_types, attributes=None, regions=()):
    """Build an operation at the current insertion point and return its results."""
    op = current_block().append(Operation(name, operands, result_types, attributes, regions))
    return op.results
