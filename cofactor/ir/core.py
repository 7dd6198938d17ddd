"""The SSA IR: values, operations, blocks, regions, functions and modules.

It is deliberately small: an operation is a name, operands, result types,
inherent attributes (already spelled as MLIR attribute text) and regions.
Op builders with shape inference live in ``ops.py``; text output in
``printer.py``.  The IR knows nothing of NumPy or tracing.
"""
from __future__ import annotations

import contextlib
import contextvars

import numpy as np

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

    @property
    def block(self):
        """The block that defines this value (None for a value not yet placed in one)."""
        return self.owner.block if isinstance(self.owner, Operation) else self.owner

    def __repr__(self):
        return f"Value({self.type.mlir()})"


class Operation:
    __slots__ = ("name", "operands", "results", "attributes", "regions", "literal", "block")

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
        self.block = None  # the block it was built in


class Block:
    """A list of operations with typed arguments; the last op is a terminator.

    ``parent`` is the block the region holding this one sits in (set when it is first built
    into): values of the parent chain are visible here, others are not.  ``label`` says what
    the block is in the user's terms ("the loop at line 12"), for errors."""

    def __init__(self, arg_types=(), label=None):
        self.arguments = [Value(t, self, i) for i, t in enumerate(arg_types)]
        self.operations: list[Operation] = []
        self.parent = None
        self.label = label
        self.loop_body = False  # a stablehlo.while's body: its operations run once per trip

    def append(self, op: Operation) -> Operation:
        op.block = self
        self.operations.append(op)
        return op

    def walk(self):
        """Every operation in this block and in the regions of its operations, outermost first."""
        for op in self.operations:
            yield op
            for region in op.regions:
                for inner in region.blocks:
                    yield from inner.walk()

    def within(self, outer: "Block") -> bool:
        """Whether this block is ``outer`` or inside one of its operations' regions."""
        block = self
        while block is not None:
            if block is outer:
                return True
            block = block.parent
        return False

    def sees(self, value: Value) -> bool:
        """Whether ``value`` is defined in this block or in a block around it."""
        home = value.block
        return home is None or self.within(home)

    def add_argument(self, type: TensorType) -> Value:
        return self.insert_argument(len(self.arguments), type)

    def insert_argument(self, position: int, type: TensorType) -> Value:
        arg = Value(type, self, position)
        self.arguments.insert(position, arg)
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


def int_literal(value: Value):
    """The int a 0-d integer constant holds; None for any other value."""
    literal = getattr(value.owner, "literal", None)
    if literal is None or np.ndim(literal) or np.asarray(literal).dtype.kind not in "iub":
        return None
    return int(literal)


def comparison_direction(compare: Operation) -> str:
    """EQ, NE, LT, LE, GT or GE: the direction of a stablehlo.compare (from its attribute's text,
    ``#stablehlo<comparison_direction LT>``)."""
    return compare.attributes.get("comparison_direction", "").rsplit(" ", 1)[-1].rstrip(">")


class Region:
    def __init__(self, blocks=()):
        self.blocks = list(blocks)


class Function:
    """A func.func with one block; ``arg_attributes`` / ``result_attributes`` hold per-argument and
    per-result attribute text."""

    def __init__(self, name, arg_types, visibility="public"):
        self.name = name
        self.body = Block(arg_types)
        self.visibility = visibility
        self.arg_attributes: dict[int, dict[str, str]] = {}
        self.result_attributes: dict[int, dict[str, str]] = {}
        self.result_types: list[TensorType] = []

    @property
    def arguments(self):
        return self.body.arguments


class Module:
    def __init__(self, attributes=None):
        self.functions: list[Function] = []
        self.attributes = dict(attributes or {})
        self.declarations: list[str] = []  # top-level ops before the functions, as text (sdy.mesh)
        # Python objects the module's code calls back into by a key (cf.print's printers): they live
        # as long as the module, which the compiled function holds.
        self.keepalive: list = []

    def add(self, fn: Function) -> Function:
        self.functions.append(fn)
        return fn

    def __str__(self):
        from .printer import print_module

        return print_module(self)


class OutOfScope(Exception):
    """An operation used a value defined in a block that does not enclose it (``label``: that
    block, in the user's terms) -- the value escaped the branch or loop that computed it."""

    def __init__(self, label):
        super().__init__(f"a value computed inside {label or 'another region'} is used outside it")
        self.label = label


class OpBudgetExceeded(Exception):
    """A trace built more operations than its budget allows; ``loops``: (line, why it is not one
    rolled loop, or None) of the loops run unrolled around the point it happened (added as it
    passes through them; none when it happened after them)."""

    def __init__(self, count):
        super().__init__(count)
        self.loops = []


class Builder:
    """Where new operations go: a stack of blocks (the innermost is the insertion point), and
    how many operations were built, against an optional budget.  One builder is active per
    thread at a time (``building``)."""

    def __init__(self, budget: int | None = None):
        self.blocks: list[Block] = []
        self.count = 0
        self.budget = budget


_active: contextvars.ContextVar = contextvars.ContextVar("cofactor_builder", default=None)


def active_builder():
    """The builder of the current thread (None when nothing is being built)."""
    return _active.get()


@contextlib.contextmanager
def building(builder: Builder):
    token = _active.set(builder)
    try:
        yield builder
    finally:
        _active.reset(token)


def _builder() -> Builder:
    builder = _active.get()
    if builder is None:
        raise RuntimeError("no insertion point: IR ops can only be built while tracing")
    return builder


def current_block() -> Block:
    """The block new operations go into (set by ``insertion_point``)."""
    blocks = _builder().blocks
    if not blocks:
        raise RuntimeError("no insertion point: IR ops can only be built while tracing")
    return blocks[-1]


@contextlib.contextmanager
def insertion_point(block: Block):
    blocks = _builder().blocks
    if block.parent is None and blocks and block is not blocks[0]:
        block.parent = blocks[-1]
    blocks.append(block)
    try:
        yield block
    finally:
        blocks.pop()


def emit(name, operands, result_types, attributes=None, regions=()):
    """Build an operation at the current insertion point and return its results."""
    builder = _builder()
    block = builder.blocks[-1]
    for v in operands:
        if isinstance(v, Value) and not block.sees(v):
            raise OutOfScope(v.block.label)
    builder.count += 1
    if builder.budget is not None and builder.count > builder.budget:
        raise OpBudgetExceeded(builder.count)
    op = block.append(Operation(name, operands, result_types, attributes, regions))
    return op.results
