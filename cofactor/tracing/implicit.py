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

What objects from outside hold is read the same way: the *outside* objects are the function's
object arguments, the ``self`` of a compiled bound method, and the instances, dicts, lists and
tuples read through a global, a cell or a slot of another outside object.  Their own slots (an
instance's attributes, not its methods or properties; a dict's entries; a list's or tuple's
items) are read like globals: ``self.w`` is an implicit input, ``self.scale`` a guarded constant.
A slot the function rebinds to a value it computed (``self.total = self.total + x``) gets its old
value back when the trace ends (no traced value escapes into the caller's objects), and after
each call the value the program computed, as a NumPy array or scalar.
"""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import TracingError, UnsupportedError
from . import context
from ..pytree import flatten
from .array import TracedArray
from .trace import argument_type, is_array

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


@dataclass
class Outside:
    """An object from outside the function, as the trace first saw it: what each of its slots held."""

    name: str
    obj: object
    slots: dict


_NOT_STATE = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType)
_MISSING = object()


def _is_state(value) -> bool:
    return isinstance(value, (dict, list, tuple, types.CellType)) or hasattr(value, "__dict__") and \
        not isinstance(value, _NOT_STATE)


def _slots(obj) -> dict:
    if isinstance(obj, types.CellType):
        try:
            return {"cell_contents": obj.cell_contents}
        except ValueError:  # empty
            return {}
    if isinstance(obj, dict):
        return dict(obj)
    if isinstance(obj, (list, tuple)):
        return dict(enumerate(obj))
    return dict(vars(obj))


def reached(obj, name: str):
    """``obj`` came from outside the function (by ``name``): its slots are outside state."""
    if not context.is_tracing():
        return
    trace = context.current()
    if id(obj) not in trace.outside and _is_state(obj):  # (held there: its id stays its own)
        trace.outside[id(obj)] = Outside(name, obj, _slots(obj))


def read_slot(container, key, value, kind: str):
    """What converted code sees for ``container.key`` (``kind`` "attribute") or ``container[key]``
    (``kind`` "item"), just read as ``value``: where ``container`` is outside state and the slot its
    own (an attribute in its ``__dict__``, an entry, an item), the slot read as a global is."""
    if not context.is_tracing():
        return value
    outside = context.current().outside.get(id(container))
    if outside is None or kind == "attribute" and key not in getattr(container, "__dict__", ()):
        return value
    if kind == "attribute":
        return read(value, f"{outside.name}.{key}", ("slot", id(container), key), lambda: getattr(container, key))
    return read(value, f"{outside.name}[{key!r}]", ("slot", id(container), key), lambda: container[key])


def items(sequence):
    """The items of a list or tuple as converted code reads ``sequence[k]``: an outside one's, its
    slots (``for p in self.params: p -= lr * g`` updates the caller's arrays, read at every call)."""
    if type(sequence) in (list, tuple) and context.is_tracing() and id(sequence) in context.current().outside:
        return [read_slot(sequence, k, value, "item") for k, value in enumerate(sequence)]
    return sequence


def _changed(trace) -> list:
    """(object, key, value now) for each slot of outside state that holds another object than when
    the trace first saw it (``_MISSING``: none; a slot the function made or deleted)."""
    changed = []
    for outside in trace.outside.values():
        now = _slots(outside.obj)
        for key in list(outside.slots) + [k for k in now if k not in outside.slots]:
            before, after = outside.slots.get(key, _MISSING), now.get(key, _MISSING)
            if after is not before:
                changed.append((outside, key, after))
    return changed


def _restore(outside: Outside, key):
    """Put back what the slot held when the trace first saw its object."""
    obj, before = outside.obj, outside.slots.get(key, _MISSING)
    if isinstance(obj, list):
        obj[:] = [outside.slots[k] for k in range(len(outside.slots))]
    elif isinstance(obj, dict):
        if before is _MISSING:
            obj.pop(key, None)
        else:
            obj[key] = before
    elif before is _MISSING:
        if key in _slots(obj):
            delattr(obj, key)
    else:
        setattr(obj, key, before)


def settle(trace, failed=False) -> list:
    """Give every slot of an outside object that holds a traced value its old value back (none
    escapes into the caller's objects), and return (object, key, traced array) for those the
    program sets after each call: an array or number it computed.  A container of traced values
    stored there, or a list changed, is an error.  (An implicit input stored back where it was
    read, as ``self.w += x`` stores it, is that slot's own array, written in place.)  When the
    trace ``failed``, every slot it changed gets its old value back, and nothing is set."""
    sets, refused = [], None
    for outside, key, now in _changed(trace):
        traced = any(isinstance(leaf, TracedArray) for leaf in flatten(now)[0])
        if failed or traced:  # (an untraced value, computed while tracing as Python would, stays)
            _restore(outside, key)
        before = outside.slots.get(key)
        read = trace.implicit.get(id(before)) if is_array(before) else None
        if failed or not traced or read is not None and now is read.array:
            continue
        if isinstance(outside.obj, list) or not isinstance(now, TracedArray):
            slot = f"{outside.name}[{key!r}]" if isinstance(outside.obj, (dict, list)) else f"{outside.name}.{key}"
            what = f"traced values in {slot}, a list" if isinstance(outside.obj, list) else \
                f"a {type(now).__name__} of traced values in {slot}, of an object"
            refused = refused or UnsupportedError(
                f"the compiled function stores {what} from outside it: cofactor sets an attribute or a dict entry "
                "of an object from outside to an array or number the function computed, after each call; return "
                "the others")
        sets.append((outside.obj, key, now))
    if refused is not None:  # (raised once every slot has its old value back, as for a failed trace)
        settle(trace, failed=True)
        raise refused
    return sets


def store(obj, key, value):
    """After a call: the slot ``key`` of ``obj`` gets the value the program computed for it."""
    if isinstance(obj, dict):
        obj[key] = value
    else:
        setattr(obj, key, value)


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
        stateful = context.STATEFUL_TYPES.get(type(value))
        if stateful is not None:  # a random Generator: drawn from at every call, as when it is an argument
            return trace.per_trace(("stateful", id(value)), lambda: stateful(value, lambda leaves: fetch()))
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
    guard.aval = (type_.shape, type_.dtype)
    implicit = trace.implicit[id(value)] = Implicit(name, fetch)
    implicit.start = trace.host_input(type_, lambda leaves: implicit.fetch())
    implicit.array = TracedArray(implicit.start)
    implicit.array.serial = -1  # older than every region: a write inside one is carried out of it
    trace.objects[("implicit", id(value))] = value  # alive while traced, so its id stays its own
    trace.arguments.add(id(implicit.array))  # its updates go back to the caller: never replaced by copies
    return implicit.array


def check(guards, arrays) -> None:
    """Raise StaleCall unless every guard holds for this call (``arrays``: its array leaves)."""
    for guard in guards:
        try:
            now = guard.fetch()
        except (NameError, KeyError, ValueError) as e:  # deleted since the trace (an empty cell: ValueError)
            raise StaleCall(f"{guard.name!r} is gone ({e})") from None
        if guard.same_as is not None:
            other = arrays[guard.same_as] if isinstance(guard.same_as, int) else guard.same_as.fetch()
            if now is not other:
                raise StaleCall(f"{guard.name!r} is no longer the object it was")
        elif guard.aval is None:
            if not _same_constant(now, guard.constant):
                raise StaleCall(f"{guard.name!r} was {guard.constant!r} and is now {now!r}")
        elif not _is_array(now) or (np.shape(now), np.dtype(now.dtype)) != guard.aval:
            raise StaleCall(f"{guard.name!r} is no longer an array of shape {guard.aval[0]} and dtype {guard.aval[1]}")
