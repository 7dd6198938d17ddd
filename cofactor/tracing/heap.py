"""What the running program can see, for converted control flow: the arrays reachable from its
frames, the container slots that hold them, and which arrays something other than a region's own
variables still refers to.

A traced ``if`` or loop carries the variables it assigns (handed over by the converted code),
but a program can also change what a list element, a dict entry, an object attribute or a
closure cell holds (``self.u = self.u + 1``, ``nonlocal`` counters changed by a helper), and
arrays it never names may be written through a view.  So before a region runs, its frames are
scanned (a few container levels deep): every reachable owner array is carried if the region
writes it, every slot of a reachable container is compared after the region and carried if it
changed, and an array reachable from anywhere but the region's own variables is *observable*:
control flow keeps its identity exactly instead of merging copies of it.  What the scan cannot
see (deeper containers, globals) is made safe by ``TracedArray.stale`` and by the IR's scope check.
"""
from __future__ import annotations

import collections
import os
import types

import numpy as np

from ..ir.core import Block, Module, Value
from ..errors import TracingError, located, location_at
from ..pytree import flatten
from .array import TracedArray, defers_tracing
from . import outside
from .carry import Undefined
from .context import TraceContext

_DEPTH = 4          # container levels searched below a frame's variables
_WIDTH = 2000       # items looked at per container
_SEQUENCES = (list, collections.deque)  # containers of items by position
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
GENERATED = "__cf"  # prefix of the names converted code adds (functions, flags): not user state
_OPAQUE = (type, types.ModuleType, types.BuiltinFunctionType, np.ndarray, np.generic, str, bytes, Value, Block,
           Module, TraceContext, int, float, complex, bool, type(None))


class Scope:
    """Where a region's code runs: the frame of the converted function (or of the helper the
    conversion made inside it), and the cells holding its variables (read from the converted
    code's getter), which the scan must not count as other references to what they hold."""

    def __init__(self, frame, getter=None):
        self.frame = frame
        self.cells = {id(c) for c in getattr(getter, "__closure__", None) or ()}


class Slot:
    """A place that holds a value: a list index, a dict key, an object attribute or a cell."""

    __slots__ = ("container", "key")

    def __init__(self, container, key):
        self.container, self.key = container, key

    def get(self):
        c = self.container
        if isinstance(c, types.CellType):
            return c.cell_contents
        return c[self.key] if isinstance(c, (*_SEQUENCES, dict)) else vars(c)[self.key]

    def set(self, value):
        c = self.container
        if isinstance(c, types.CellType):
            c.cell_contents = value
        elif isinstance(c, (*_SEQUENCES, dict)):
            c[self.key] = value
        else:
            setattr(c, self.key, value)

    def describe(self) -> str:
        c = self.container
        if isinstance(c, types.CellType):
            return "a variable of an enclosing function (nonlocal)"
        if isinstance(c, _SEQUENCES):
            return f"an element [{self.key}] of a {type(c).__name__}"
        if isinstance(c, dict):
            return f"the entry [{self.key!r}] of a dict"
        return f"the attribute .{self.key} of a {type(c).__name__}"


def _contents(container) -> dict:
    """key -> value of a container's slots (None: a container cofactor does not look into)."""
    if isinstance(container, types.CellType):
        try:
            return {"": container.cell_contents}
        except ValueError:  # an empty cell
            return {}
    if isinstance(container, _SEQUENCES):
        return dict(enumerate(list(container)[:_WIDTH]))
    if isinstance(container, dict):
        return dict(list(container.items())[:_WIDTH])
    return dict(list(vars(container).items())[:_WIDTH])


def _made_attribute(container, contents):
    """An attribute of an object from outside (an argument, a global) that it did not have at the scan."""
    if isinstance(container, (*_SEQUENCES, dict, set, types.CellType)) or len(contents) >= _WIDTH or \
            not outside.is_outside(container):
        return None
    return next((key for key in vars(container) if key not in contents), None)


def _is_container(x) -> bool:
    """Lists, dicts, cells, and objects with attributes: the user's own, and cofactor's stand-ins
    for NumPy objects (a random Generator), which say so with ``traced_state``."""
    if isinstance(x, (*_SEQUENCES, dict, types.CellType)):
        return True
    if isinstance(x, (*_OPAQUE, TracedArray, Undefined, tuple, types.FunctionType)) or not hasattr(x, "__dict__"):
        return False
    return not type(x).__module__.startswith("cofactor.") or getattr(x, "traced_state", False)


class Heap:
    """The scan of the program's state before a region (see the module docstring)."""

    def __init__(self, scope: Scope, own_names, context: TraceContext):
        self.owners: dict[int, TracedArray] = {}   # every reachable owner array
        self.observable: set[int] = set(context.arguments)  # ids of owners seen outside the region's variables
        self.containers: list = []                 # (container, {key: value}) of every reachable container
        self.sized: list = []                      # (list, dict or set, a copy): the region's own variables' and
                                                   # every reachable set, whose size must not change either
        self.cells = set(scope.cells)
        seen: set[int] = set(scope.cells)
        frame = self.frame = scope.frame
        stack = [(value, 0) for value in context.objects.values()]
        in_function = True  # frames of the converted function itself (and of its generated helpers)
        while frame is not None and frame is not context.root_frame:
            if not frame.f_code.co_filename.startswith(_PACKAGE):  # cofactor's own frames hold no user state
                name = frame.f_code.co_name
                for local, value in frame.f_locals.items():
                    if local.startswith(GENERATED) or local == "__cofactor__":
                        continue
                    if in_function and local in own_names:  # (out += [v] changes the list it holds)
                        if isinstance(value, (list, dict, set)):
                            self.sized.append((value, value.copy()))
                        continue
                    stack.append((value, 0))
                if not name.startswith(GENERATED):
                    in_function = False
            frame = frame.f_back
        while stack:
            value, depth = stack.pop()
            if id(value) in seen or depth > _DEPTH:
                continue
            seen.add(id(value))
            if isinstance(value, TracedArray):
                for owner in value.owners():
                    self.owners[id(owner)] = owner
                    self.observable.add(id(owner))
                if value.lens is not None:
                    stack.append((value.viewed, depth))
            elif isinstance(value, tuple):
                stack += [(v, depth + 1) for v in value[:_WIDTH]]
            elif defers_tracing(value):  # (an array of run-time length: the array holding its lanes)
                stack += [(v, depth + 1) for v in value.tree_flatten()[0]]
            elif isinstance(value, types.FunctionType):
                if not value.__name__.startswith(GENERATED) and value.__closure__ and \
                        not value.__code__.co_filename.startswith(_PACKAGE):
                    stack += [(cell, depth + 1) for cell in value.__closure__]
            elif isinstance(value, set):
                self.sized.append((value, value.copy()))
            elif _is_container(value):
                contents = _contents(value)
                self.containers.append((value, contents))
                stack += [(v, depth + 1) for v in contents.values()]

    @property
    def scanned(self) -> set:
        """ids of the containers the scan reached, and of the cells of the region's variables (a nonlocal
        among them): a region carries what changes in them."""
        return {id(c) for c, _ in self.containers} | self.cells

    def holds(self, obj) -> bool:
        """Whether a container the scan reached holds ``obj`` (another way to it than a variable's)."""
        return any(v is obj for _, contents in self.containers for v in contents.values())

    def changed_slots(self) -> list[Slot]:
        """The slots whose value is no longer the object they held at the scan."""
        return [Slot(c, key) for c, contents in self.containers for key, now in _contents(c).items()
                if key in contents and contents[key] is not now]

    def check_sizes(self, where: str, line: int | None):
        """A list or dict that grows or shrinks in a traced branch or loop, or a set that changes, is
        an error: the body runs once at trace time, so its length would be the trace's, not the
        run's (which branch runs, and how often a loop does, is known only at run time).  The error
        names the region's first line (``line``), not the last line its body ran."""
        at = location_at(self.frame.f_code.co_filename, line) if self.frame is not None and line else None
        for c, contents in [*self.containers, *self.sized]:
            if isinstance(c, (*_SEQUENCES, dict, set)) and (len(c) != len(contents) or isinstance(c, set) and
                                                            c != contents) and len(contents) < _WIDTH:
                kind = type(c).__name__
                added = list(c)[len(contents):] if isinstance(c, _SEQUENCES) else [v for k, v in c.items() if k not in contents] \
                    if isinstance(c, dict) else []
                advice = "preallocate an array instead (out = np.zeros(n) before it, out[i] = ... in it)" \
                    if any(isinstance(x, TracedArray) for x in flatten(added)[0]) else \
                    "change it outside the branch or loop, or preallocate an array (out[i] = ...)"
                lists = " (a list of the function's own that a for loop only appends to, numbers or new arrays of one " \
                    "kind, not reading it in the loop, may grow there: README, Run-time lengths)" if kind == "list" else ""
                raise located(TracingError(
                    f"a {kind} changes length in {where}, which is compiled once for every way it can run (which "
                    f"branch, how many iterations), so the {kind}'s length would be wrong: {advice}{lists}"), at)
            made = _made_attribute(c, contents)
            if made is not None:
                raise located(TracingError(
                    f"the attribute .{made} of a {type(c).__name__} from outside the function is made in {where}, "
                    "which is compiled for every way it can run: whether the object has it after the call would be "
                    f"the trace's, not the run's: set .{made} before it, to a value of the kind it is given there "
                    "(an array of its shape and dtype)"), at)

    def restore(self):
        """Put every scanned slot back to the object it held at the scan, and every list and dict
        back to its length."""
        for c, contents in self.containers:
            now = _contents(c)
            if isinstance(c, _SEQUENCES) and len(c) != len(contents) and len(contents) < _WIDTH:
                c.clear()
                c.extend(contents[k] for k in range(len(contents)))
                continue
            if isinstance(c, dict) and set(c) != set(contents):
                c.clear()
                c.update(contents)
                continue
            made = _made_attribute(c, contents)
            if made is not None:  # (an attribute the region made: the object as the scan found it)
                delattr(c, made)
            for key, old in contents.items():
                if now.get(key, old) is not old or key not in now:
                    Slot(c, key).set(old)
