"""Functions cofactor cannot read the source of (defined with ``exec``, ``python -c``, at an
interactive prompt, or edited since they were defined) run as written: Python runs their code as
it is, with traced arrays in place of the arguments.

What such a function reads from outside it must still be read at every call, as converted code
reads it (outer.py): an array global or closure variable it reads would otherwise be whatever it
held at the trace, a constant of the compiled program.  So the function runs as a copy of itself
whose globals are a dict that reads each name through the function's ``Outer`` (Python looks a
global up by ``__getitem__`` when the globals are not exactly a dict) and whose closure cells hold
what ``Outer`` reads from the cells.  What it rebinds (``global G; G = G + x``, ``nonlocal``)
lands in the copy's dict and cells, and is given to the module and the cells when it returns, as
converted code's rebinding is, so the caller's state is the program's after each call.  A
function without source it calls by a global name runs the same way.
"""
from __future__ import annotations

import types

from ..errors import unconverted_code
from ..tracing import context
from .outer import Outer
from .source import is_user_function

_BUILTINS = "__builtins__"


def without_source(fn) -> bool:
    """A function of the program that runs as written (its code could not be converted)."""
    if not isinstance(fn, types.FunctionType) or is_user_function(fn):  # (which notes the code of exec's)
        return False
    return fn.__code__ in unconverted_code


def as_written(fn, call):
    """``fn`` (``without_source``) ready to trace: its reads of globals and closure variables are
    converted code's (``call``: how converted code calls a function)."""
    def run(*args, **kwargs):
        if not context.is_tracing():
            return fn(*args, **kwargs)
        outer = Outer(fn, nested=False, call=call)
        names = _Globals(fn.__globals__, outer, call)
        given = []  # (what each cell holds, as converted code reads it)
        for name, cell in outer.cells.items():
            value = _contents(cell)
            given.append(value if value is _EMPTY else outer.read(name, value))
        cells = tuple(types.CellType() if value is _EMPTY else types.CellType(value) for value in given)
        copy = types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__, cells or None)
        copy.__kwdefaults__ = fn.__kwdefaults__
        result = copy(*args, **kwargs)
        for cell, mine, value in zip(outer.cells.values(), cells, given):
            now = _contents(mine)
            if now is not value and now is not _EMPTY:
                cell.cell_contents = now  # (nonlocal: the caller's cell, as converted code rebinds it)
        for name in names.rebound():
            fn.__globals__[name] = dict.__getitem__(names, name)
        return result
    run.__wrapped__ = fn
    return run


_EMPTY = object()


def _contents(cell):
    """What ``cell`` holds; _EMPTY for an empty one (a variable not bound yet)."""
    try:
        return cell.cell_contents
    except ValueError:
        return _EMPTY


class _Globals(dict):
    """A function's globals as converted code reads them: each name through ``outer``, but one
    the function itself bound since (kept here, as Python stores a global in the dict it was given:
    ``rebound``)."""

    def __init__(self, module: dict, outer: Outer, call):
        super().__init__({_BUILTINS: module.get(_BUILTINS)})
        self.module, self.outer, self.call = module, outer, call

    def __getitem__(self, name):
        if dict.__contains__(self, name) and name != _BUILTINS:
            return dict.__getitem__(self, name)
        if name not in self.module:
            raise KeyError(name)  # (Python looks in the builtins next)
        value = self.outer.read(name, self.module[name])
        return as_written(value, self.call) if without_source(value) else value

    def rebound(self) -> list:
        return [name for name in dict.keys(self) if name != _BUILTINS]
