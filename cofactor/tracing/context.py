"""The trace context: everything one trace of a user function holds, in one object.

A trace builds one module.  Its context is the IR builder (the insertion point and the
operation budget) plus what tracing needs on top: the loop options of ``cf.jit``, host inputs
(arguments fetched at every call from somewhere other than the caller's arrays, such as a
random generator's next key or an array read through a global: implicit.py), objects made
once per trace, the open mutation journals of the branches and loops being traced, the running flags of bounded loops, and whether (and how) the
code being traced is differentiated.  One context is active per thread (``ir.core.building``),
so several threads can trace at once.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..ir.core import Builder, Function, Module, Value, active_builder, building
from ..ir.types import TensorType

# Type -> converter(obj, fetch) giving the traced stand-in the user's function gets for ``obj``, a
# leaf of its arguments or an object read through a global or an outside object's slot; at a call,
# ``fetch(leaves)`` (the call's argument leaves) gives the object again.
STATEFUL_TYPES: dict = {}

DEFAULT_UNROLL = 8
DEFAULT_OP_BUDGET = 20_000  # XLA:CPU compiles ~1000 ops a second on unrolled code: bounded at ~20 s


@dataclass
class HostInput:
    """An extra argument whose value ``fetch(leaves)`` produces at every call (leaves: the
    call's flattened arguments)."""

    type: TensorType
    fetch: Callable


@dataclass(frozen=True)
class Options:
    """How control flow is traced (``cf.jit``'s options).

    ``unroll``: static loops of at most this many iterations run as Python, counting the copies the
    unrolled loops around them make (so a nest unrolls at most ``unroll`` copies of a body: XLA fuses
    an unrolled chain of steps that each read the last step twice, ``a *= np.tanh(a[::-1])``, into
    one loop that recomputes 2**steps values per element, for minutes); ``bound``: the
    static trip count of loops with a traced condition (``max_iterations``); ``attributes``:
    Enzyme's checkpointing attributes for the loops; ``budget``: the most operations a trace
    may build before it stops with an error; ``promote``: a long while loop on Python numbers
    may carry them as traced values (off when a trace that did so failed: see ``promoted``);
    ``max_slice``: the most elements a slice with traced bounds holds (None: its axis's length);
    ``unoptimized``: the program goes to XLA as traced (``optimize=False``; see views.BasicIndex.write)."""

    unroll: int = DEFAULT_UNROLL
    bound: int | None = None
    attributes: dict | None = None
    budget: int | None = DEFAULT_OP_BUDGET
    promote: bool = True
    max_slice: int | None = None
    unoptimized: bool = False

    @staticmethod
    def of(unroll=DEFAULT_UNROLL, max_iterations=None, checkpoint=None, op_budget=DEFAULT_OP_BUDGET,
           max_slice=None, unoptimized=False) -> "Options":
        attributes = {}
        if checkpoint:
            attributes["enzyme.enable_checkpointing"] = "true"
            if checkpoint is not True:
                attributes["enzyme.checkpoint_period"] = f"{int(checkpoint)} : i64"
        return Options(unroll, max_iterations, attributes or None, op_budget, max_slice=max_slice,
                       unoptimized=unoptimized)


class TraceContext(Builder):
    """The state of one trace (see the module docstring)."""

    def __init__(self, module: Module, function: Function, options: Options):
        super().__init__(options.budget)
        self.module = module
        self.function = function
        self.options = options
        self.host_inputs: list[HostInput] = []
        self.objects: dict = {}
        self.names: set = set()
        self.journals: list = []   # open mutation journals, innermost last
        self.running: list = []    # i1 running flags of the loops being traced (None: no bound)
        self.collecting: dict = {}  # id of a list the rolled loops being traced collect -> its histories.History
        self.predicates: list = []  # the i1 predicates of the traced ifs whose branches are being traced
        self.modes: list = []      # differentiation modes around the code being traced (True: reverse)
        self.arguments: set = set()  # ids of the arrays the caller passed in (their updates go back)
        self.root_frame = None       # the frame that started the trace: scans of the program stop there
        self.argument_arrays: dict = {}  # id of an array the caller passed -> (its leaf index, its TracedArray)
        self.argument_leaves: dict = {}  # id of an argument's TracedArray -> its index among the call's leaves
        self.implicit: dict = {}     # id of an array read through a global or cell -> implicit.Implicit
        self.guards: dict = {}       # (global or cell, name) -> implicit.Guard: what a call must find again
        self.outside: dict = {}      # id of an object from outside (an argument, self, a global's) -> outside.Outside
        self.origins: dict = {}      # id of what a slot of one held when the trace first saw it -> (the object, its key)
        self.argument_containers: dict = {}  # id of a list or dict passed in -> it (the trace holds a copy)
        self.conditional = 0         # how many regions around the code being traced may not run (checks.py)
        self.handlers: list = []     # the exception classes the program's open try statements catch (thunks)
        self.without_adjoints: list = []  # (NumPy function, user line) of LAPACK calls Enzyme cannot differentiate
        self.layouts: dict = {}      # id of an array given to the function (an argument, a global) -> its
        # strides, where it is not C-contiguous as the arrays the function makes are (views.py)
        self.checks = None           # checks.Checks of the trace, where it returns their outputs
        self.printing_now = False    # a print at trace time is running: traced values show their trace text
        self.text_for_print = False  # an object's __str__ runs for print's arguments: its f-strings print when run
        self.printoptions = np.get_printoptions()  # NumPy's at the start (a print where the code changed them
                                                   # prints with the code's: debug.py)
        self.unrolled: dict = {}     # line -> why, of the loops run unrolled (named by the op budget's error)
        self.copies = 1              # how many copies of the code being traced the loops unrolled around it make
        self.value_arms = 0          # > 0 while the arms of a conditional expression (or and/or) on a traced test are traced
        self.promoted = False        # a while loop carries Python numbers as traced values (the code after it
                                     # sees them traced: if it fails, the function is traced again without)
        self.mesh = None             # the device mesh cf.sharding_constraint named (the compiler declares it)
        self.value_bounds: dict = {}  # an integer array's Value -> the least and greatest values of its elements
                                      # (argmin's result, a search's positions: numpy/_core.py, value_bounds)

    def unique_name(self, prefix: str) -> str:
        """A function name not yet used in the module being traced."""
        name, k = prefix, 0
        while name in self.names:
            k += 1
            name = f"{prefix}_{k}"
        self.names.add(name)
        return name

    def host_input(self, type: TensorType, fetch: Callable) -> Value:
        """A new argument of the traced function, filled by ``fetch(leaves)`` at each call."""
        arg = self.function.body.add_argument(type)
        self.host_inputs.append(HostInput(type, fetch))
        return arg

    def per_trace(self, key, make: Callable):
        """One object per trace under ``key`` (e.g. the traced stand-in of NumPy's global generator)."""
        if key not in self.objects:
            self.objects[key] = make()
        return self.objects[key]

    def entry_block(self):
        """The body of the traced function: a value made there is visible in all of it."""
        return self.function.body

    @contextlib.contextmanager
    def differentiating(self, reverse: bool):
        """Code traced inside is differentiated, in reverse mode when ``reverse``."""
        self.modes.append(reverse)
        try:
            yield
        finally:
            self.modes.pop()


def current() -> TraceContext:
    """The context of the trace running in this thread."""
    context = active_builder()
    if not isinstance(context, TraceContext):
        raise RuntimeError("no function is being traced")
    return context


def is_tracing() -> bool:
    """Whether a function is being traced in this thread (so a transform emits ops instead of compiling)."""
    return isinstance(active_builder(), TraceContext)


def tracing(context: TraceContext):
    """Make ``context`` the active trace of this thread while the block runs."""
    return building(context)


def is_differentiating() -> bool:
    return is_tracing() and bool(current().modes)


def in_reverse_mode() -> bool:
    """Reverse mode needs loops with a static trip count (Enzyme 0.0.16 tapes them by count)."""
    return is_tracing() and any(current().modes)
