"""Objects from outside a compiled function: what it reads from their slots, and what it leaves there.

NumPy code keeps state in objects it did not make: a model's weights in ``self.w``, a memo dict,
a global list it logs to, a dict of parameters passed in.  The *outside* objects are the
function's object arguments, the ``self`` of a compiled bound method, the module's globals and
the caller's closure cells, the lists and dicts among its arguments, and the instances, dicts,
lists and tuples read through any of these.

**Reads.**  Their own slots (an instance's attributes in its ``__dict__``, a property's getter
run as converted code, a dict's entries, a list's or tuple's items) are read as globals are
(implicit.py): an array is an implicit input, fetched at every call; a number a guarded constant;
an object outside state in turn.  What the trace learns about a container's keys is guarded
too: ``k in memo``, ``len(log)``, ``hasattr(self, "buf")``, iterating a dict, a missing key.

**Writes.**  When the trace ends, every slot the function changed gets its old value back (no
traced value escapes into the caller's objects, and a trace made twice does its Python work
once), and becomes a ``Store``: after each call, the slot gets the value the function left there,
built again from the call's own values: an array or number it computed (a result), an argument
or implicit input it stored as it was (that very object, as NumPy keeps it), a container of
those made anew, or any other object as it is.  A list that grew by appends grows by the same
items; a deleted key is deleted.  An argument's lists and dicts are rebuilt by the trace, so
their stores name their place among the call's arguments, and go to the call's own containers.
"""
from __future__ import annotations

import operator
import types
from dataclasses import dataclass

import numpy as np


from ..errors import UnsupportedError, forwards_calls
from . import context
from .array import TracedArray, defers_tracing
from .implicit import Guard, read
from .trace import PythonNumber


@dataclass
class Outside:
    """An object from outside the function, as the trace first saw it: what each of its slots held
    (``path``: a list or dict among the arguments, rebuilt for the trace, is the one at this place
    of the call's ``(args, kwargs)``)."""

    name: str
    obj: object
    slots: dict
    path: tuple | None = None


@dataclass
class Store:
    """After each call, ``outside``'s slot ``key`` gets the value ``template`` builds (``kind``
    "set"), is deleted ("delete"), or the list gets the items it builds appended ("extend") or as
    its whole contents ("contents")."""

    outside: Outside
    kind: str
    key: object = None
    template: tuple | None = None


# The user's operations on their containers, whose errors (a missing key, ``len(5)``) are the user's line's.
_user = forwards_calls(lambda fn, *args: fn(*args))
_NOT_STATE = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, TracedArray)
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


def _slot(obj, key):
    if isinstance(obj, types.CellType):
        return obj.cell_contents
    return obj[key] if isinstance(obj, (dict, list, tuple)) else vars(obj)[key]


def _outside(obj) -> Outside | None:
    return context.current().outside.get(id(obj)) if context.is_tracing() else None


def is_outside(obj) -> bool:
    """Whether ``obj`` is outside state of the trace running."""
    return _outside(obj) is not None


def reached(obj, name: str):
    """``obj`` came from outside the function (by ``name``): its slots are outside state."""
    if not context.is_tracing():
        return
    trace = context.current()
    if id(obj) not in trace.outside and _is_state(obj):  # (held there: its id stays its own)
        trace.outside[id(obj)] = Outside(name, obj, _slots(obj))


def arguments_reached(args: tuple, kwargs: dict):
    """The lists and dicts among the arguments the function is traced with (rebuilt by the trace,
    their arrays traced) are outside state, found at their place among a call's arguments."""
    trace = context.current()

    def walk(value, path, name):
        if type(value) in (list, dict):
            trace.outside[id(value)] = Outside(name, value, _slots(value), path)
        if isinstance(value, (list, tuple, dict)):
            for key, item in value.items() if isinstance(value, dict) else enumerate(value):
                walk(item, path + (key,), f"{name}[{key!r}]")

    for k, value in enumerate(args):
        walk(value, (0, k), f"argument {k}")
    for key, value in kwargs.items():
        walk(value, (1, key), key)


def _guard(key, name: str, fetch, constant=_MISSING):
    """Guard what the trace learnt of a container: ``fetch()`` must give ``constant`` again at a
    call (by default, what it gives now)."""
    guards = context.current().guards
    if key not in guards:
        guards[key] = Guard(name, fetch, fetch() if constant is _MISSING else constant)


def _guards_keys(outside: Outside, what: str):
    """The trace depends on ``outside``'s keys (``what``: "keys" of a dict or an instance, "length"
    of a list); an argument's container has them in the call's signature already."""
    obj = outside.obj
    if outside.path is not None or isinstance(obj, (tuple, types.CellType)):
        return
    if what == "length" or isinstance(obj, list):
        _guard(("length", id(obj)), f"len({outside.name})", lambda: len(obj))
    else:
        _guard(("keys", id(obj)), f"the keys of {outside.name}", lambda: tuple(_slots(obj)))


def has(container, key, kind: str) -> bool:
    """``key in container`` (``kind`` "item") or ``hasattr(container, key)`` ("attribute"), guarded
    where the container is from outside (a memo dict, an attribute made on first call)."""
    outside = _outside(container)
    if kind == "item" and type(container) in (list, tuple) and outside is not None:
        return _user(operator.contains, items(container), key)  # (compares the items, read as slots)
    present = _user(operator.contains, container, key) if kind == "item" else _user(hasattr, container, key)
    if outside is not None and outside.path is None and not isinstance(container, (list, tuple)) and \
            not (kind == "attribute" and isinstance(getattr(type(container), key, None), property)):
        try:
            hash(key)
        except TypeError:
            return present
        owner = container if kind == "item" else vars(container)
        _guard(("has", id(container), key), f"{key!r} in {outside.name}" if kind == "item" else
               f"hasattr({outside.name}, {key!r})", lambda: key in owner)
    return present


def length(container) -> int:
    """``len(container)``, guarded where the container is from outside."""
    outside = _outside(container)
    if outside is not None:
        _guards_keys(outside, "length")
    return _user(len, container)


def read_slot(container, key, value, kind: str):
    """What converted code sees for ``container.key`` (``kind`` "attribute") or ``container[key]``
    (``kind`` "item"), just read as ``value``: where ``container`` is outside state and the slot its
    own (an attribute in its ``__dict__``, an entry, an item), the slot read as a global is."""
    outside = _outside(container)
    if outside is None or kind == "attribute" and key not in getattr(container, "__dict__", ()):
        return value
    if kind == "attribute":
        return read(value, f"{outside.name}.{key}", ("slot", id(container), key), lambda: getattr(container, key))
    return read(value, f"{outside.name}[{key!r}]", ("slot", id(container), key), lambda: container[key])


def missing(container, key, kind: str):
    """A read of ``container[key]`` or ``container.key`` failed: where the container is from outside,
    the trace depends on the key being absent (code that catches the KeyError)."""
    if _outside(container) is not None:
        if isinstance(container, (list, tuple)):
            length(container)
        else:
            has(container, key, kind)


def items(iterable):
    """What iterating ``iterable`` gives converted code: an outside list's or tuple's items read as
    its slots (``for p in self.params: p -= lr * g`` updates the caller's arrays, read at every
    call); an outside dict's keys, guarded."""
    outside = _outside(iterable) if type(iterable) in (list, tuple, dict) else None
    if outside is None:
        return iterable
    _guards_keys(outside, "keys")
    if isinstance(iterable, dict):
        return list(iterable)
    return type(iterable)(read_slot(iterable, k, value, "item") for k, value in enumerate(iterable))


def contents(value):
    """``value`` as a NumPy function reads it: an outside list or tuple (``np.stack(self.frames)``)
    as its items, read as slots, nested ones too."""
    if type(value) not in (list, tuple) or _outside(value) is None:
        return value
    return type(value)(contents(item) for item in items(value))


def sliced(sequence, index: slice):
    """``sequence[index]`` of an outside list or tuple: the items read as slots."""
    picked = items(sequence)
    return picked[index] if picked is not sequence else sequence[index]


def method(container, name: str, bound):
    """``container.name`` as converted code calls it: the reading methods of an outside dict and
    list read their values as slots (``params.get("w")``, ``for k, v in d.items()``,
    ``stack.pop()``); other methods, and those of other objects, are ``bound`` as they are."""
    outside = _outside(container)
    if outside is None or type(container) not in (dict, list):
        return bound

    def value(key):
        return read_slot(container, key, container[key], "item")

    if type(container) is list:
        def pop(index=-1):
            if type(index) is not int or not -length(container) <= index < len(container):
                return _user(container.pop, index)  # (the user's IndexError or TypeError)
            position = index + len(container) if index < 0 else index
            result = value(position)
            container.pop(index)
            return result
        routed = {"pop": pop, "copy": lambda: list(items(container))}
        return routed.get(name, bound)

    def get(key, default=None):
        return value(key) if has(container, key, "item") else default

    def pop(key, *default):
        if not has(container, key, "item"):
            return _user(container.pop, key, *default)
        result = value(key)
        del container[key]
        return result

    def setdefault(key, default=None):
        if has(container, key, "item"):
            return value(key)
        container[key] = default
        return default

    def keyed():
        _guards_keys(outside, "keys")
        return list(container)

    routed = {"get": get, "pop": pop, "setdefault": setdefault, "keys": keyed,
              "values": lambda: [value(k) for k in keyed()], "items": lambda: [(k, value(k)) for k in keyed()],
              "copy": lambda: {k: value(k) for k in keyed()}}
    return routed.get(name, bound)


def settle(trace, failed=False) -> list:
    """Give every slot of an outside object the function changed its old value back, and return
    the Stores that set it after each call (none when the trace ``failed``).  The leaves of their
    templates that the function computed are ("traced", array) until trace.py makes them results."""
    try:
        return [] if failed else [store for outside in trace.outside.values() for store in _changes(trace, outside)]
    finally:  # (an error here too leaves the caller's objects as they were)
        for outside in trace.outside.values():
            _restore(outside)


def _changes(trace, outside: Outside) -> list:
    obj, before = outside.obj, outside.slots
    if isinstance(obj, tuple):
        return []
    sources = _Sources(trace)
    if isinstance(obj, list):
        old, new = [before[k] for k in range(len(before))], list(obj)
        if len(new) == len(old):
            return [Store(outside, "set", k, sources.template(b)) for k, (a, b) in enumerate(zip(old, new))
                    if a is not b]
        if len(new) > len(old) and all(a is b for a, b in zip(old, new)):
            return [Store(outside, "extend", None, sources.template(new[len(old):]))]
        if outside.path is None:  # the new contents hold the old items: the call must find them again
            _guard(("items", id(obj)), f"the items of {outside.name} are the same objects",
                   lambda: len(obj) == len(old) and all(a is b for a, b in zip(obj, old)), True)
        return [Store(outside, "contents", None, sources.template(new))]
    now = _slots(obj)
    stores = []
    for key in list(before) + [k for k in now if k not in before]:
        then, value = before.get(key, _MISSING), now.get(key, _MISSING)
        if value is _MISSING and then is not _MISSING:
            stores.append(Store(outside, "delete", key))
        elif value is not then:
            stores.append(Store(outside, "set", key, sources.template(value)))
    return stores


def _restore(outside: Outside):
    """Put back what each slot held when the trace first saw its object."""
    obj, before = outside.obj, outside.slots
    if isinstance(obj, tuple):
        return
    if isinstance(obj, list):
        obj[:] = [before[k] for k in range(len(before))]
        return
    now = _slots(obj)
    for key in [k for k in now if k not in before]:
        if isinstance(obj, dict):
            del obj[key]
        else:
            delattr(obj, key)
    for key, value in before.items():
        if now.get(key, _MISSING) is not value:
            if isinstance(obj, dict):
                obj[key] = value
            else:
                setattr(obj, key, value)


class _Sources:
    """Where each leaf of a stored value comes from at a call (a template's leaves)."""

    def __init__(self, trace):
        params = len(trace.function.arguments) - len(trace.host_inputs)
        self.arrays = {id(traced): k for k, traced in trace.argument_arrays.values()}
        self.hosts = {id(i.array): i.start.index - params for i in trace.implicit.values()}
        self.containers = {id(o.obj): o.path for o in trace.outside.values() if o.path is not None}
        self.known = {id(o.obj) for o in trace.outside.values()}
        self.slots = {}  # id of what a slot held when the trace first saw it -> (its Outside, its key)
        for o in trace.outside.values():
            for key, value in o.slots.items():
                self.slots.setdefault(id(value), (o, key))
        self.open = set()  # the objects being made (one that holds itself is kept as it is)

    def template(self, value) -> tuple:
        """("leaf", source) or (kind, how to build it, children): how to build ``value`` again."""
        if id(value) in self.containers:
            return "leaf", ("path", self.containers[id(value)])
        if isinstance(value, TracedArray):
            if id(value) in self.arrays:
                return "leaf", ("array", self.arrays[id(value)])
            if id(value) in self.hosts:
                return "leaf", ("host", self.hosts[id(value)])
            return "leaf", ("traced", value)
        if defers_tracing(value):
            raise UnsupportedError("an array whose length is known only at run time (x[mask], np.unique) is "
                                   "stored in an object from outside the compiled function: return it instead")
        if id(value) in self.slots:  # what a slot held (moved: stack.insert(0, stack.pop())): what it holds at the call
            return "leaf", ("slot",) + self.slots[id(value)]
        # An object the function made is made again at each call where it holds what the call computes.
        if id(value) not in self.known and id(value) not in self.open:
            if type(value) in (list, tuple) or isinstance(value, tuple) and hasattr(type(value), "_fields"):
                made = self._made(value, type(value), list(enumerate(value)))
            elif type(value) is dict:
                made = self._made(value, dict, list(value.items()))
            elif _is_state(value) and not isinstance(value, (types.CellType, PythonNumber)):
                made = self._made(value, value, list(vars(value).items()))
            else:
                made = None
            if made is not None:
                return made
        return "leaf", ("object", value)

    def _made(self, value, how, children):
        self.open.add(id(value))
        children = [(key, self.template(child)) for key, child in children]
        self.open.discard(id(value))
        if all(t[0] == "leaf" and t[1][0] == "object" for _, t in children):
            return None  # nothing of the call's in it: the object as it is
        return "made", how, children


def results(stores: list, add) -> list:
    """The stores with their traced leaves made results (``add(array)`` gives its result index)."""
    def resolved(template):
        if template is None:
            return None
        if template[0] == "leaf":
            source = template[1]
            if source[0] == "traced":
                array = source[1]
                return "leaf", ("result", add(array), array.scalar, array.weak)
            return template
        return "made", template[1], [(key, resolved(child)) for key, child in template[2]]

    return [Store(s.outside, s.kind, s.key, resolved(s.template)) for s in stores]


def apply(stores: list, outputs, arrays, fetched, originals):
    """After a call: each store's slot gets its value (``outputs``: the call's results; ``arrays``:
    its array leaves; ``fetched``: its host inputs; ``originals``: its ``(args, kwargs)``)."""
    def build(template):
        if template[0] == "made":
            how, children = template[1], [(key, build(child)) for key, child in template[2]]
            if how is dict:
                return dict(children)
            if how is list or how is tuple:
                return how(child for _, child in children)
            if isinstance(how, type):  # a namedtuple
                return how(*(child for _, child in children))
            made = object.__new__(type(how))
            vars(made).update(children)
            return made
        kind, *source = template[1]
        if kind == "result":
            j, scalar, weak = source
            value = np.array(outputs[j])
            return (weak(value) if weak else value[()]) if scalar else value
        if kind == "array":
            leaf = arrays[source[0]]
            return leaf.value if type(leaf) is PythonNumber else leaf
        if kind == "host":
            return fetched[source[0]]
        if kind == "path":
            return _at(originals, source[0])
        if kind == "slot":
            return _slot(target(source[0]), source[1])
        return source[0]

    def target(outside):
        return outside.obj if outside.path is None else _at(originals, outside.path)

    # Every value is built from the slots as the call found them, before any is set.
    values = [None if store.template is None else build(store.template) for store in stores]
    for store, value in zip(stores, values):
        obj = target(store.outside)
        if store.kind == "extend":
            obj.extend(value)
        elif store.kind == "contents":
            obj[:] = value
        elif store.kind == "delete":
            if isinstance(obj, dict):
                obj.pop(store.key, None)
            elif hasattr(obj, store.key):
                delattr(obj, store.key)
        elif isinstance(obj, (dict, list)):
            obj[store.key] = value
        else:
            setattr(obj, store.key, value)


def _at(tree, path):
    for key in path:
        tree = tree[key]
    return tree
