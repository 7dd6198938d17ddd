"""Values a traced function reads from outside its arguments: globals and closure cells.

NumPy code reads module-level arrays (``W``, a lookup table, a buffer it fills) as freely as its
arguments, and the arrays can change between calls (``G[:] = 100``, ``G = np.load(...)``).  So an
array reached through a global or a closure cell is an *implicit input*: a host input of the
compiled function, fetched again at every call (by the same name, from the same module or cell)
and, if the function writes it, written back, as NumPy would have written it.  Each array object
is one input however many names reach it; one that is also an argument is that argument.

Numbers, strings and tuples of them read the same way are compile-time constants, as arguments
of those types are; each read is a *guard*, checked at every call, and a call that finds another
value compiles the function anew.  A guard also holds an array's shape and dtype and its
identity with the other names and arguments that reached the same object, and the identity of
any other object read (a helper function, a class, an instance: redefined or rebound since,
the function is compiled again); modules and builtins are not checked.

What objects from outside hold (an attribute, a dict entry) is read the same way: outside.py.
"""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import TracingError, UnsupportedError, located
from . import context
from .array import TracedArray
from .trace import argument_type, is_array
from .views import laid_out, layout_of

_CONSTANTS = (bool, int, float, complex, str, bytes, np.generic, type(None))


class StaleCall(Exception):
    """A guard failed: the globals or cells a compiled function read are not what they were at
    its trace (the message says which), so the function must be compiled anew."""


def is_constant(value) -> bool:
    """Numbers, strings, None and tuples of them: values a guard compares."""
    if isinstance(value, tuple):
        return all(is_constant(v) for v in value)
    return isinstance(value, _CONSTANTS)


def _same_constant(now, then) -> bool:
    if type(now) is not type(then):
        return False
    if isinstance(then, tuple):
        return len(now) == len(then) and all(_same_constant(a, b) for a, b in zip(now, then))
    return bool(now == then) or (now != now and then != then)  # NaN is the same NaN


def _is_array(value) -> bool:
    return not isinstance(value, (type, np.generic, TracedArray)) and is_array(value)


@dataclass
class Implicit:
    """An array read through a global or cell: its traced stand-in and the IR value it started
    with (a different value after the trace: the function wrote it)."""

    name: str
    fetch: Callable
    array: TracedArray | None = None
    start: object = None


@dataclass
class _Object:
    """A guard's object: ``fetch()`` must give this very object (a helper function redefined
    since the trace, another object bound to the name) or the function is compiled again."""

    value: object

    def fetch(self):
        return self.value


@dataclass
class Guard:
    """At a call, ``fetch()`` must give ``constant`` again, or an array of ``aval`` (shape,
    dtype); ``same_as``: the argument (its index among the call's array leaves), the Implicit or
    the _Object whose object it must be."""

    name: str
    fetch: Callable
    constant: object = None
    aval: tuple | None = None
    same_as: object = None


def read(value, name: str, key, fetch: Callable):
    """What converted code sees for ``value``, just read from a global or cell called ``name``
    (``key``: which one; ``fetch()`` reads it again at a call): a traced implicit input for an
    array, ``value`` itself otherwise (guarded when it is a constant)."""
    if not context.is_tracing():
        return value
    trace = context.current()
    if isinstance(value, (types.ModuleType, types.BuiltinFunctionType, TracedArray)):
        return value  # never rebound in practice, or a value of this trace
    constant, array = is_constant(value), _is_array(value)
    guard = trace.guards.get(key)
    if guard is None:
        guard = trace.guards[key] = Guard(name, fetch, value if constant else None)
    if constant:
        return value
    if not array:  # a function, class or object: the one the trace called or read
        guard.same_as = _Object(value)
        if id(value) in trace.argument_containers:  # (the trace holds a copy of each argument's list)
            raise located(UnsupportedError(
                f"the compiled function reads {name}, the same {type(value).__name__} it is given as an argument; "
                "use one of the two (cofactor gives the argument its own copy, so a change through one would not "
                "show through the other)"))
        stateful = context.STATEFUL_TYPES.get(type(value))
        if stateful is not None:  # a random Generator: drawn from at every call, as when it is an argument
            return trace.per_trace(("stateful", id(value)), lambda: stateful(value, lambda leaves: fetch()))
        from .outside import reached  # (outside.py imports this module)
        reached(value, name)
        return value
    argument = trace.argument_arrays.get(id(value))
    if argument is not None:
        guard.same_as, traced = argument
        return traced
    implicit = trace.implicit.get(id(value))
    if implicit is not None:
        if guard.aval is None:  # another name for it: it must stay the same object
            guard.same_as = implicit
        return implicit.array
    try:
        type_ = argument_type(value)
    except TracingError as e:
        raise TracingError(f"the global or closure variable {name!r}: {e}") from None
    guard.aval = (type_.shape, type_.dtype, layout_of(value))
    implicit = trace.implicit[id(value)] = Implicit(name, fetch)
    implicit.start = trace.host_input(type_, lambda leaves: implicit.fetch())
    implicit.array = laid_out(TracedArray(implicit.start), guard.aval[2])
    implicit.array.serial = -1  # older than every region: a write inside one is carried out of it
    trace.objects[("implicit", id(value))] = value  # alive while traced, so its id stays its own
    trace.arguments.add(id(implicit.array))  # its updates go back to the caller: never replaced by copies
    return implicit.array


def advanced(iterator):
    """Refuse ``next()`` of an iterator (a generator, itertools.count) read from a global, a cell or
    an object from outside: its state is Python's, which compiled code advances once, when traced."""
    if not context.is_tracing():
        return
    if any(isinstance(g.same_as, _Object) and g.same_as.value is iterator for g in context.current().guards.values()):
        raise located(UnsupportedError(
            f"the compiled function advances a {type(iterator).__name__} from outside it, whose state is Python's: "
            "compiled code would advance it once, when traced, not at each call (pass the values it gives as "
            "arguments instead)"))


def known(value):
    """``value`` as the running trace already reads it: the traced array of the argument or the
    implicit input it is, or itself."""
    trace = context.current()
    if id(value) in trace.argument_arrays:
        return trace.argument_arrays[id(value)][1]
    if id(value) in trace.implicit:
        return trace.implicit[id(value)].array
    return value


def check(guards, arrays) -> None:
    """Raise StaleCall unless every guard holds for this call (``arrays``: its array leaves)."""
    for guard in guards:
        try:
            now = guard.fetch()
        except (NameError, KeyError, IndexError, AttributeError, ValueError) as e:  # gone since the trace
            # (a global, a key, an item, an attribute; an empty cell: ValueError)
            raise StaleCall(f"{guard.name!r} is gone ({e})") from None
        if guard.same_as is not None:
            other = arrays[guard.same_as] if isinstance(guard.same_as, int) else guard.same_as.fetch()
            if now is not other:
                raise StaleCall(f"{guard.name!r} is no longer the object it was")
        elif guard.aval is None:
            if not _same_constant(now, guard.constant):
                raise StaleCall(f"{guard.name!r} was {guard.constant!r} and is now {now!r}")
        elif not _is_array(now) or (np.shape(now), np.dtype(now.dtype), layout_of(now)) != guard.aval:
            raise StaleCall(f"{guard.name!r} is no longer an array of shape {guard.aval[0]} and dtype {guard.aval[1]}"
                            + ("" if guard.aval[2] is None else f" and strides {guard.aval[2]}"))
