"""Objects from outside a compiled function: what it reads from their slots, and what it leaves there.

NumPy code keeps state in objects it did not make: a model's weights in ``self.w``, a memo dict,
a global list it logs to, a dict of parameters passed in.  The *outside* objects are the
function's object arguments, the ``self`` of a compiled bound method (or of one a partial
binds), the module's globals and the caller's closure cells, the lists and dicts among its
arguments, and the instances, dicts, lists, tuples, deques, sets and the program's own classes
read through any of these.

**Reads.**  Their own slots (an instance's attributes in its ``__dict__``, a property's getter
run as converted code, a dict's entries, a list's or tuple's items) are read as globals are
(implicit.py): an array is an implicit input, fetched at every call; a number a guarded constant;
an object outside state in turn.  What the trace learns about a container's keys is guarded
too: ``k in memo``, ``len(log)``, ``if self.nodes:``, ``hasattr(self, "buf")``, iterating a dict,
a missing key.  Guards compare with the container as the trace first saw it: what the trace
reads after changing it (``log.append(x); len(log)``) follows from that.  A value read from a
slot the function changed is its own (a dict it made and stored), or the array that the slot it
came from held (an item moved by ``stack.pop()``), fetched from there at every call.

**Writes.**  When the trace ends, every slot the function changed gets its old value back (no
traced value escapes into the caller's objects, and a trace made twice does its Python work
once), and becomes a ``Store``: after each call, the slot gets the value the function left there,
built again from the call's own values: an array or number it computed (a result), an argument
or implicit input it stored as it was (that very object, as NumPy keeps it), a container of
those made anew, or any other object as it is.  A list that grew by appends grows by the same
items; a deleted key is deleted; a dict reordered, or a list or set otherwise changed, gets its
whole contents.  An argument's lists and dicts are rebuilt by the trace, so their stores name
their place among the call's arguments, and go to the call's own containers.  cofactor's own
objects (a random generator the function made) cannot be left there: a clear error.
"""
from __future__ import annotations

import collections
import contextlib
import functools
import operator
import sys
import sysconfig
import types
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConcretizationError, UnsupportedError, forwards_calls, located
from ..pytree import containers, is_namedtuple
from . import context
from .array import Either, TracedArray, defers_tracing
from .implicit import Guard, advanced, is_constant, known, read
from .trace import PythonNumber, is_array
from .views import plain_lenses


@dataclass
class Outside:
    """An object from outside the function, as the trace first saw it: what each of its slots held
    (``path``: a list or dict among the arguments, rebuilt for the trace, is the one at this place
    of the call's ``(args, kwargs)``)."""

    name: str
    obj: object
    slots: dict
    path: tuple | None = None
    calls: list = field(default_factory=list)  # a deque's changes, as (method, arguments) in order


@dataclass
class Store:
    """After each call, ``outside``'s slot ``key`` gets the value ``template`` builds (``kind``
    "set"), is deleted ("delete"), the deque's method ``key`` is called with the arguments it builds
    ("call": a deque with a maxlen drops what the call's deque holds), or the list gets the items it
    builds appended ("extend") or as
    its whole contents ("contents")."""

    outside: Outside
    kind: str
    key: object = None
    template: tuple | None = None


# The user's operations on their containers, whose errors (a missing key, ``len(5)``) are the user's line's.
_user = forwards_calls(lambda fn, *args: fn(*args))
_NOT_STATE = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, TracedArray)
_MISSING = object()
_SEQUENCES = (list, tuple, collections.deque)


def _is_state(value) -> bool:
    return isinstance(value, (dict, *_SEQUENCES, set, types.CellType)) or \
        (hasattr(value, "__dict__") or _slot_names(type(value))) and not isinstance(value, _NOT_STATE) or \
        isinstance(value, type) and user_class(value) or \
        isinstance(value, types.FunctionType) and user_module(sys.modules.get(value.__module__))  # (fn.calls += 1)


@functools.cache
def _slot_names(cls: type) -> tuple:
    """The ``__slots__`` attributes of the program's own class ``cls`` (and of its bases)."""
    if not user_class(cls):
        return ()
    names = []
    for c in cls.__mro__:
        declared = vars(c).get("__slots__", ())
        declared = [declared] if isinstance(declared, str) else declared
        names += [n for n in declared if n not in ("__dict__", "__weakref__")]
    return tuple(dict.fromkeys(names))


def _attributes(obj) -> dict:
    """An instance's own attributes: its ``__dict__``, and the ``__slots__`` it has set."""
    own = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
    for name in _slot_names(type(obj)):
        value = getattr(obj, name, _MISSING)
        if value is not _MISSING:
            own[name] = value
    return own


def own_attribute(obj, name) -> bool:
    """Whether ``name`` is an attribute ``obj`` holds itself (in its ``__dict__`` or a slot)."""
    return name in getattr(obj, "__dict__", ()) or name in _slot_names(type(obj))


_LIBRARIES = tuple(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib"))


@functools.cache
def user_class(cls: type) -> bool:
    """A class of the program's own (its attributes are state: a counter ``type(self).n += 1``),
    not one of Python's, NumPy's or another library's."""
    return user_module(sys.modules.get(cls.__module__))


def user_module(module) -> bool:
    """A module of the program's own (``settings.SCALE``: its attributes are its globals, state as
    the function's own module's are), not one of Python's, NumPy's, another library's or cofactor's."""
    path = getattr(module, "__file__", None)
    return module is not None and (module.__name__ == "__main__" or path is not None and not path.startswith(_LIBRARIES)
                                   and not module.__name__.startswith("cofactor"))


def _slots(obj) -> dict:
    if isinstance(obj, types.CellType):
        try:
            return {"cell_contents": obj.cell_contents}
        except ValueError:  # empty
            return {}
    if isinstance(obj, dict):
        return dict(obj)
    if isinstance(obj, _SEQUENCES):
        return dict(enumerate(obj))
    if isinstance(obj, set):
        return {item: item for item in obj}
    return _attributes(obj)


def _slot(obj, key):
    if isinstance(obj, types.CellType):
        return obj.cell_contents
    if isinstance(obj, (dict, *_SEQUENCES)):
        return obj[key]
    return vars(obj)[key] if key in getattr(obj, "__dict__", ()) else getattr(obj, key)


def _slot_name(outside: "Outside", key) -> str:
    if isinstance(outside.obj, types.CellType):
        return outside.name
    return f"{outside.name}[{key!r}]" if isinstance(outside.obj, (dict, *_SEQUENCES)) else f"{outside.name}.{key}"


class Kept:
    """The outside containers as they are now (those reached later: as first seen).  A traced loop's
    body reaches a global list only as it runs, past the heap's scan before it (heap.py): ``changed``
    says whether one changed length since (an append in a rolled body: the loop must unroll), and
    ``restore`` puts them back (what the abandoned body appended is no value of the program's)."""

    def __init__(self):
        self.trace = context.current()
        self.slots = {key: _slots(o.obj) for key, o in self.trace.outside.items()}

    def _then(self, key, o):
        """The contents of the container ``o`` then (its slots as the trace first saw them, if later)."""
        slots = self.slots.get(key, o.slots)
        return dict(slots) if isinstance(o.obj, dict) else list(slots.values())

    def changed(self, carried=frozenset()):
        """What of an outside object changed since, where the region does not carry it (``carried``:
        ids of the containers it does): "a list changes length", "an attribute of a C changes", or None."""
        for key, o in self.trace.outside.items():
            if id(o.obj) in carried:
                continue
            if _sized(o.obj) and len(o.obj) != len(self._then(key, o)):
                return f"a {type(o.obj).__name__} from outside the function changes length"
            then, now = self.slots.get(key, o.slots), _slots(o.obj)
            if then.keys() != now.keys() or any(now[k] is not v for k, v in then.items()):
                what = f"a global of module {o.obj['__name__']}" if isinstance(o.obj, dict) and "__name__" in o.obj \
                    else "an entry of a dict" if isinstance(o.obj, dict) else "an item of a list" if \
                    isinstance(o.obj, _SEQUENCES) else f"an attribute of {o.name}"
                return f"{what} from outside the function changes"
        return None

    def restore(self):
        for key, o in self.trace.outside.items():
            if _sized(o.obj):
                _replace_contents(o.obj, self._then(key, o))
            elif not isinstance(o.obj, (set, types.CellType)):
                for name, value in self.slots.get(key, o.slots).items():
                    if _slots(o.obj).get(name, _MISSING) is not value:
                        setattr(o.obj, name, value)


def _sized(obj) -> bool:
    return isinstance(obj, (list, dict, set, collections.deque))


def _replace_contents(obj, values):
    """``obj`` (a list, deque, set or dict) holds ``values`` and nothing else."""
    if isinstance(obj, list):
        obj[:] = values
    else:
        obj.clear()
        obj.update(values) if isinstance(obj, (set, dict)) else obj.extend(values)


def _outside(obj) -> Outside | None:
    return context.current().outside.get(id(obj)) if context.is_tracing() else None


def is_outside(obj) -> bool:
    """Whether ``obj`` is outside state of the trace running."""
    return _outside(obj) is not None


def name_of(obj) -> str:
    """What an outside object is called in messages (``self``, ``CONFIG['w']``)."""
    return _outside(obj).name


def reached(obj, name: str):
    """``obj`` came from outside the function (by ``name``): its slots are outside state."""
    if not context.is_tracing():
        return
    trace = context.current()
    if id(obj) not in trace.outside and _is_state(obj):  # (held there: its id stays its own)
        slots = _slots(obj)
        if not any(isinstance(v, TracedArray) for v in slots.values()):  # (one that does, the trace made)
            _register(trace, Outside(name, obj, slots))
            if _attributed_container(obj):  # (a list subclass's L.n: its attributes, as a dict's entries)
                reached(vars(obj), name)


def _attributed_container(obj) -> bool:
    """A list, dict, set or deque of a subclass with attributes of its own, besides its items."""
    return isinstance(obj, (dict, list, set, collections.deque)) and hasattr(obj, "__dict__")


def rebound(container, key, value) -> bool:
    """Whether the slot ``key`` of the outside ``container`` (a module's globals, a cell) holds
    ``value`` because the function rebound it: what it reads there is its own value."""
    o = _outside(container)
    return o is not None and value is not o.slots.get(key, _MISSING)


def _register(trace, outside: Outside):
    trace.outside[id(outside.obj)] = outside
    for key, value in outside.slots.items():
        if not is_constant(value):
            trace.origins.setdefault(id(value), (outside.obj, key))


def defaults_reached(fn):
    """The default values of ``fn``'s parameters (``acc=[]``) are objects from outside it."""
    fn = getattr(fn, "__func__", fn)
    defaults = (getattr(fn, "__defaults__", None) or ()) + tuple((getattr(fn, "__kwdefaults__", None) or {}).values())
    for value in defaults:
        reached(value, f"a default argument of {getattr(fn, '__name__', 'the function')}")


def defaults_read(fn, args: tuple, kwargs: dict) -> dict:
    """``kwargs`` for a call of ``fn`` with ``args``, the arrays among its default arguments that the call
    leaves to their defaults given as read like globals (``def f(x, acc=np.zeros(3)): acc += x``: an
    input fetched at every call, and written back, as the one array Python keeps for the default)."""
    given, keywords = len(args), set(kwargs)
    while isinstance(fn, functools.partial):
        given, keywords = given + len(fn.args), keywords | set(fn.keywords)
        fn = fn.func
    if isinstance(fn, types.MethodType):
        given, fn = given + 1, fn.__func__
    defaults, named = getattr(fn, "__defaults__", None) or (), getattr(fn, "__kwdefaults__", None) or {}
    if not any(is_array(d) and not is_constant(d) for d in (*defaults, *named.values())):
        return kwargs
    code = fn.__code__
    positional = code.co_varnames[:code.co_argcount]
    first = len(positional) - len(defaults)
    kwargs = dict(kwargs)

    def read_default(name, value, fetch):
        if is_array(value) and not is_constant(value) and name not in keywords:
            kwargs[name] = read(value, f"the default {name} of {fn.__name__}", ("default", id(fn), name), fetch)

    for k, value in enumerate(defaults):
        if first + k >= max(given, code.co_posonlyargcount):  # (left to its default, and passed by name)
            read_default(positional[first + k], value, lambda k=k: fn.__defaults__[k])
    for name, value in named.items():
        read_default(name, value, lambda name=name: fn.__kwdefaults__[name])
    return kwargs


def arguments_reached(traced: tuple, given: tuple):
    """The lists and dicts among the arguments the function is traced with (``traced``: its
    ``(args, kwargs)``, rebuilt by the trace, their arrays traced) are outside state, found at their
    place among a call's arguments (``given``: the arguments as the trace got them, whose lists and
    dicts the function must not reach another way: implicit.read)."""
    trace = context.current()
    for path, value in containers(traced):
        if type(value) in (list, dict) and len(path) > 1:  # (not the kwargs dict: the call's own)
            name = (f"argument {path[1]}" if path[0] == 0 else path[1]) + "".join(f"[{key!r}]" for key in path[2:])
            _register(trace, Outside(name, value, _slots(value), path))
            original = _at(given, path)
            trace.argument_containers[id(original)] = original


def _guard(key, name: str, fetch, constant):
    """Guard what the trace learnt of a container: at a call, ``fetch()`` must give ``constant``,
    what it gave when the trace first saw the container (the trace may have changed it since: what
    it read then follows from how it started)."""
    guards = context.current().guards
    if key not in guards:
        guards[key] = Guard(name, fetch, constant)


def _guards_keys(outside: Outside, what: str):
    """The trace depends on ``outside``'s keys (``what``: "keys" of a dict or an instance, in order,
    "length" of a sequence); an argument's container has them in the call's signature already."""
    obj = outside.obj
    if outside.path is not None or isinstance(obj, (tuple, types.CellType)):
        return
    if what == "length" or isinstance(obj, _SEQUENCES):
        _guard(("length", id(obj)), f"len({outside.name})", lambda: len(obj), len(outside.slots))
    else:
        _guard(("keys", id(obj)), f"the keys of {outside.name}", lambda: tuple(_slots(obj)), tuple(outside.slots))


def has(container, key, kind: str) -> bool:
    """``key in container`` (``kind`` "item") or ``hasattr(container, key)`` ("attribute"), guarded
    where the container is from outside (a memo dict, an attribute made on first call)."""
    if kind == "item" and isinstance(container, (dict, set, frozenset)) and isinstance(key, TracedArray):
        raise located(ConcretizationError(
            f"a traced value looked up in a {type(container).__name__}: whether it is there is known only when the "
            "compiled function runs (keep the keys in an array and compare: np.any(keys == k))"))
    outside = _outside(container)
    if kind == "item" and isinstance(container, _SEQUENCES) and outside is not None:
        return _user(operator.contains, items(container), key)  # (compares the items, read as slots)
    present = _user(operator.contains, container, key) if kind == "item" else _user(hasattr, container, key)
    if outside is not None and not (kind == "attribute" and isinstance(getattr(type(container), key, None), property)):
        guard_has(container, key, kind)
    return present


def guard_has(container, key, kind: str):
    """The trace depends on whether the outside ``container`` has ``key`` (``kind``: "item" or
    "attribute", one of its instance's own)."""
    outside = _outside(container)
    if outside is None or outside.path is not None or isinstance(container, types.CellType):
        return
    try:
        hash(key)
    except TypeError:
        return
    fetch = (lambda: key in container) if kind == "item" else (lambda: key in _attributes(container))
    _guard(("has", id(container), key), f"{key!r} in {outside.name}" if kind == "item" else
           f"hasattr({outside.name}, {key!r})", fetch, key in outside.slots)


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
    if kind == "attribute" and _attributed_container(container) and _outside(vars(container)) is not None and \
            key in vars(container):
        return read_slot(vars(container), key, value, "item")
    outside = _outside(container)
    if outside is not None and kind == "attribute" and not own_attribute(container, key):
        owner = next((c for c in type(container).__mro__ if key in vars(c)), None)  # a class attribute
        if owner is None or not user_class(owner) or not is_constant(value) and not is_array(value):
            return value  # (a method, bound anew at each read)
        guard_has(container, key, "attribute")  # (an attribute of the instance's own would hide it)
        reached(owner, owner.__name__)
        container, outside = owner, _outside(owner)
    if outside is None:
        return value
    if isinstance(container, _SEQUENCES) and type(key) is int and key < 0:  # (which item is last depends on the length)
        key += length(container)
    if value is not outside.slots.get(key, _MISSING):  # not what the slot held at first sight: moved or made
        if key not in outside.slots and not isinstance(container, _SEQUENCES):
            guard_has(container, key, kind)  # (made by this trace: d[k] of a defaultdict, an attribute set)
        origin = _moved_in(container, outside, value) if is_constant(value) else \
            context.current().origins.get(id(value))
        if origin is None:  # made by the function: its own value (an input it already reads, a constant)
            return known(value)
        outside = _outside(origin[0])
        container, key = origin
    return read(value, _slot_name(outside, key), ("slot", id(container), key), lambda: _slot(container, key))


@contextlib.contextmanager
def shown_to_library(args, kwargs):
    """While a library function runs (not converted code: ``dataclasses.replace(p)``, ``copy.copy(p)``,
    ``operator.attrgetter("inner.w")``), the outside instances, lists and dicts its arguments reach (through
    attributes, items, to a few levels) hold in their own slots what converted code would read there: an array
    as the implicit input it is, fetched at every call, a number guarded, an object as outside state in turn.
    Reading them natively, it would have made the arrays the first trace saw constants of the program.  After
    it, each slot gets back what it held, unless the library rebound it."""
    shown = []  # (container, key, what it held, what it was shown)
    seen = set()

    def slots_of(obj):
        if isinstance(obj, list):
            return "item", list(enumerate(obj))
        if isinstance(obj, dict):
            return "item", list(obj.items())
        if user_class(type(obj)) and not isinstance(obj, (*_SEQUENCES, set, type)):
            return "attribute", list(_attributes(obj).items())
        return None, []

    def show(obj, depth):
        if id(obj) in seen or depth > 3:
            return
        seen.add(id(obj))
        kind, slots = slots_of(obj)
        if not is_outside(obj):  # (the function's own, or an argument's list or tuple: its items as they are)
            for item in obj if isinstance(obj, tuple) else [item for _, item in slots] if kind == "item" else ():
                show(item, depth + 1)
            return
        for key, held in slots:
            if not (is_array(held) or isinstance(held, (bool, int, float, complex)) or _is_state(held)):
                continue
            value = read_slot(obj, key, held, kind)
            if value is not held:
                _set(obj, key, value)
                shown.append((obj, key, held, value))
            show(value, depth + 1)

    for x in (*args, *kwargs.values()):
        show(x, 0)
    try:
        yield
    finally:
        for obj, key, held, value in reversed(shown):
            if _slot(obj, key) is value:
                _set(obj, key, held)


def _moved_in(container, outside: Outside, value):
    """Where in the outside sequence ``container`` the number ``value`` was when the trace first saw it (an
    item a deque's append moved); None where it was not there.  Read from there, it is guarded there: at
    worst a number the function made that is the same object compiles again when that slot changes."""
    if not isinstance(container, _SEQUENCES):
        return None
    return next(((container, j) for j, held in outside.slots.items() if held is value), None)


def missing(container, key, kind: str):
    """A read of ``container[key]`` or ``container.key`` failed: where the container is from outside,
    the trace depends on the key being absent (code that catches the KeyError)."""
    if _outside(container) is not None:
        if isinstance(container, _SEQUENCES):
            length(container)
        else:
            has(container, key, kind)


def items(iterable):
    """What iterating ``iterable`` gives converted code: an outside list's or tuple's items read as
    its slots (``for p in self.params: p -= lr * g`` updates the caller's arrays, read at every
    call); an outside dict's keys, guarded."""
    if hasattr(type(iterable), "__next__"):
        advanced(iterable)  # (a generator from outside: Python's state)
    outside = _outside(iterable) if isinstance(iterable, (dict, set, *_SEQUENCES)) else None
    if outside is None:
        return iterable
    _guards_keys(outside, "keys")
    if isinstance(iterable, (dict, set)):
        return list(iterable)
    return [_unpacked(read_slot(iterable, k, value, "item")) for k, value in enumerate(iterable)]


def _unpacked(item):
    """An item as code that unpacks it reads it: an outside tuple (``for name, w in self.named``) as
    a tuple of its items, read as slots (a tuple cannot change: a copy is as good)."""
    if isinstance(item, tuple) and _outside(item) is not None:
        values = items(item)
        return type(item)(*values) if is_namedtuple(item) else tuple(values)
    return item


def unpacked(iterable):
    """What unpacking ``iterable`` gives (``W, b = self.params``, ``f(*self.args)``, a comprehension
    over ``self.layers``): an outside sequence's items read as slots."""
    return items(iterable) if isinstance(iterable, _SEQUENCES) else iterable


def contents(value):
    """``value`` as a NumPy function reads it: an outside list or tuple (``np.stack(self.frames)``)
    as its items, read as slots, nested ones too."""
    if type(value) not in (list, tuple) or _outside(value) is None:
        return value
    return [contents(item) for item in items(value)]


def sliced(sequence, index: slice):
    """``sequence[index]`` of an outside list or tuple: the items read as slots."""
    picked = items(sequence)
    return type(sequence)(picked[index]) if picked is not sequence else sequence[index]


def method(container, name: str, bound):
    """``container.name`` as converted code calls it: the reading methods of an outside dict and
    list read their values as slots (``params.get("w")``, ``for k, v in d.items()``,
    ``stack.pop()``); other methods, and those of other objects, are ``bound`` as they are."""
    outside = _outside(container)
    if outside is not None and isinstance(container, collections.deque):
        return _deque_method(outside, name, bound)
    if outside is None or not isinstance(container, (dict, list)):
        return bound

    def value(key):
        return read_slot(container, key, container[key], "item")

    if isinstance(container, list):
        def pop(index=-1):
            if type(index) is not int or not -length(container) <= index < len(container):
                return _user(container.pop, index)  # (the user's IndexError or TypeError)
            position = index + len(container) if index < 0 else index
            result = value(position)
            container.pop(index)
            return result

        def sort(key=None, reverse=False):  # (by keys computed from the items read as slots, at every call)
            container[:] = sorted(items(container), key=key, reverse=reverse)

        routed = {"pop": pop, "copy": lambda: list(items(container)), "sort": sort}
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

    def ordered(*args, **kwargs):  # (popitem, move_to_end: which key depends on the order of all)
        keyed()
        return bound(*args, **kwargs)

    routed = {"get": get, "pop": pop, "setdefault": setdefault, "keys": keyed,
              "values": lambda: [value(k) for k in keyed()], "items": lambda: [(k, value(k)) for k in keyed()],
              "copy": lambda: {k: value(k) for k in keyed()}, "popitem": ordered, "move_to_end": ordered}
    return routed.get(name, bound)


_DEQUE_CHANGES = {"append", "appendleft", "extend", "extendleft", "pop", "popleft", "rotate", "clear", "insert",
                  "remove", "reverse"}


def _deque_method(outside: Outside, name: str, bound):
    """A method of an outside deque: one that changes it is made again after each call, on the call's
    deque (its maxlen drops items as it does there); ``pop``/``popleft`` read the item as a slot."""
    if name not in _DEQUE_CHANGES:
        return bound
    deque = outside.obj

    def changed(*args):
        if name in ("pop", "popleft") and not args and deque:
            where = length(deque) - 1 if name == "pop" else 0
            result = read_slot(deque, where, deque[where], "item")
            bound()
        else:
            result = _user(bound, *args)
        outside.calls.append((name, args))
        return result
    return changed


def settle(trace, failed=False) -> list:
    """Give every slot of an outside object the function changed its old value back, and return
    the Stores that set it after each call (none when the trace ``failed``).  The leaves of their
    templates that the function computed are ("traced", array) until trace.py makes them results."""
    try:
        if failed:
            return []
        sources = _Sources(trace)
        return [store for outside in list(trace.outside.values()) for store in _changes(outside, sources)]
    finally:  # (an error here too leaves the caller's objects as they were)
        for outside in trace.outside.values():
            _restore(outside)


def _changes(outside: Outside, sources: "_Sources") -> list:
    obj, before = outside.obj, outside.slots

    def store(kind, key=None, value=_MISSING):
        where = outside.name if key is None else _slot_name(outside, key)
        return Store(outside, kind, key, None if value is _MISSING else sources.template(value, where))

    if isinstance(obj, tuple):
        return []
    if isinstance(obj, collections.deque) and outside.calls:  # (its changes made again, in order)
        return [Store(outside, "call", name, sources.template(args, f"{outside.name}.{name}"))
                for name, args in outside.calls]
    if isinstance(obj, _SEQUENCES):
        old, new = [before[k] for k in range(len(before))], list(obj)
        if len(new) == len(old):
            return [store("set", k, b) for k, (a, b) in enumerate(zip(old, new)) if a is not b]
        if len(new) > len(old) and all(a is b for a, b in zip(old, new)):
            return [store("extend", None, new[len(old):])]
        if outside.path is None:  # the new contents hold the old items: the call must find them again
            _guard(("items", id(obj)), f"the items of {outside.name} are the same objects",
                   lambda: len(obj) == len(old) and all(a is b for a, b in zip(obj, old)), True)
        return [store("contents", None, new)]
    if isinstance(obj, set):
        if set(before) == obj:
            return []
        _guards_keys(outside, "keys")  # (the new contents depend on all of the old)
        return [store("contents", None, list(obj))]
    now = _slots(obj)
    kept_order = [k for k in before if k in now] + [k for k in now if k not in before]
    if isinstance(obj, dict) and list(now) != kept_order:  # reordered (move_to_end, a key popped and set again)
        _guards_keys(outside, "keys")
        return [store("contents", None, now)]
    stores = []
    for key in kept_order + [k for k in before if k not in now]:
        then, value = before.get(key, _MISSING), now.get(key, _MISSING)
        if value is _MISSING:
            stores.append(store("delete", key))
        elif value is not then:
            stores.append(store("set", key, value))
    return stores


def _restore(outside: Outside):
    """Put back what each slot held when the trace first saw its object."""
    obj, before = outside.obj, outside.slots
    if isinstance(obj, tuple):
        return
    if isinstance(obj, (*_SEQUENCES, set)):
        now, old = list(obj), list(before.values())
        if len(now) != len(old) or any(a is not b for a, b in zip(now, old)):
            _replace_contents(obj, old)
        return
    now = _slots(obj)
    if isinstance(obj, dict) and [k for k in now if k in before] != [k for k in before if k in now]:
        _replace_contents(obj, before)  # (its order too)
        return
    for key in [k for k in now if k not in before]:
        _set(obj, key, _MISSING)
    for key, value in before.items():
        if now.get(key, _MISSING) is not value:
            _set(obj, key, value)


def _set(obj, key, value):
    """The slot ``key`` of ``obj`` holds ``value`` (``_MISSING``: none), set as the slot itself: a
    ``__setattr__`` or ``__setitem__`` of the program's own, which ran in the trace, does not run again
    (the library's own, an OrderedDict's, does: it keeps the order)."""
    if isinstance(obj, types.CellType):
        obj.cell_contents = value
        return
    base = type if isinstance(obj, type) else next(c for c in type(obj).__mro__ if not user_class(c))
    if isinstance(obj, (dict, list, collections.deque)):
        if value is not _MISSING:
            base.__setitem__(obj, key, value)
        elif isinstance(obj, dict) and key in obj:
            base.__delitem__(obj, key)
    elif value is not _MISSING:
        base.__setattr__(obj, key, value)
    elif key in _attributes(obj):
        base.__delattr__(obj, key)


class _Sources:
    """Where each leaf of a stored value comes from at a call (a template's leaves)."""

    def __init__(self, trace):
        params = len(trace.function.arguments) - len(trace.host_inputs)
        self.trace = trace
        self.arrays = {id(traced): k for k, traced in trace.argument_arrays.values()}
        self.hosts = {id(i.array): i.start.index - params for i in trace.implicit.values()}
        self.containers = {id(o.obj): o.path for o in trace.outside.values() if o.path is not None}
        self.known = {id(o.obj) for o in trace.outside.values()}
        self.open = set()  # the objects being made (one that holds itself is kept as it is)

    def template(self, value, where: str) -> tuple:
        """("leaf", source) or ("made", how, children): how to build ``value``, stored in ``where``,
        again at a call."""
        if id(value) in self.containers:
            return "leaf", ("path", self.containers[id(value)])
        if isinstance(value, Either) and id(value) not in self.arrays and id(value) not in self.hosts:
            # (s.w = x under a traced if, s.w += x on one path and s.w = s.w * 2 on the other: the object
            # the path taken leaves there, as NumPy leaves it; a shadow mirror is never chosen)
            return "choice", ("traced", TracedArray(value.selector, scalar=True)), [
                None if value.shadow and k == value.mirror else self.template(choice, where)
                for k, choice in enumerate(value.choices)]
        if isinstance(value, TracedArray):
            if id(value) in self.arrays:
                return "leaf", ("array", self.arrays[id(value)])
            if id(value) in self.hosts:
                return "leaf", ("host", self.hosts[id(value)])
            viewed = self._view_of_a_given_array(value)
            if viewed is not None:  # (self.window = x[1:]: that view of the caller's x, as NumPy keeps it)
                return "leaf", viewed
            return "leaf", ("traced", value)
        if defers_tracing(value):
            raise UnsupportedError(f"the compiled function stores an array whose length is known only at run time "
                                   f"(x[mask], np.unique) in {where}, from outside it: return it instead")
        if (type(value).__module__ or "").startswith("cofactor."):
            raise UnsupportedError(
                f"the compiled function stores a {type(value).__name__} it made in {where}, from outside it: only "
                "arrays, numbers and Python objects can be left there (a random generator is made outside the "
                "compiled function, in __init__, and read from there)")
        origin = None if is_constant(value) else self.trace.origins.get(id(value))
        if origin is not None:  # what a slot held (moved: stack.insert(0, stack.pop())): what it holds at the call
            return "leaf", ("slot", self.trace.outside[id(origin[0])], origin[1])
        # An object the function made is made again at each call where it holds what the call computes.
        if id(value) not in self.known and id(value) not in self.open:
            if type(value) in (list, tuple) or is_namedtuple(value):
                made = self._made(value, type(value), list(enumerate(value)), where)
            elif type(value) is dict:
                made = self._made(value, dict, list(value.items()), where)
            elif _is_state(value) and not isinstance(value, (types.CellType, PythonNumber, set, collections.deque)):
                made = self._made(value, value, list(_attributes(value).items()), where)
            else:
                made = None
            if made is not None:
                return made
        return "leaf", ("object", value)

    def _view_of_a_given_array(self, value):
        """("view", source, lenses, ("traced", value)) for a view of an argument or implicit input through
        NumPy views known now (made again of the caller's array after the call: it sees what the caller
        writes there later; where that array is not a NumPy array, the values it has then); else None."""
        lenses = plain_lenses(value)
        if value.lens is None or lenses is None or any(lens.values() for lens in lenses):
            return None
        root = value
        while root.lens is not None:
            root = root.viewed
        source = ("array", self.arrays[id(root)]) if id(root) in self.arrays else \
            ("host", self.hosts[id(root)]) if id(root) in self.hosts else None
        return None if source is None else ("view", source, lenses, ("traced", value))

    def _made(self, value, how, children, where):
        self.open.add(id(value))
        children = [(key, self.template(child, f"{where}[{key!r}]")) for key, child in children]
        self.open.discard(id(value))
        if all(t[0] == "leaf" and t[1][0] == "object" for _, t in children):
            return None  # nothing of the call's in it: the object as it is
        return "made", how, children


def results(stores: list, add) -> list:
    """The stores with their traced leaves made results (``add(array)`` gives its result index; an
    array stored twice is one result, one NumPy array after the call)."""
    index = {}

    def resolved(template):
        if template is None:
            return None
        if template[0] == "choice":
            return "choice", resolved(("leaf", template[1]))[1], [resolved(t) for t in template[2]]
        if template[0] == "leaf":
            source = template[1]
            if source[0] == "view":
                return "leaf", ("view", source[1], source[2], resolved(("leaf", source[3]))[1])
            if source[0] == "traced":
                array = source[1]
                if id(array) not in index:
                    index[id(array)] = add(array)
                return "leaf", ("result", index[id(array)], array.scalar, array.weak)
            return template
        return "made", template[1], [(key, resolved(child)) for key, child in template[2]]

    return [Store(s.outside, s.kind, s.key, resolved(s.template)) for s in stores]


def apply(stores: list, outputs, arrays, fetched, originals):
    """After a call: each store's slot gets its value (``outputs``: the call's results; ``arrays``:
    its array leaves; ``fetched``: its host inputs; ``originals``: its ``(args, kwargs)``)."""
    def build(template):
        if template[0] == "choice":
            return build(template[2][int(build(("leaf", template[1])))])
        if template[0] == "made":
            how, children = template[1], [(key, build(child)) for key, child in template[2]]
            if how is dict:
                return dict(children)
            if how is list or how is tuple:
                return how(child for _, child in children)
            if isinstance(how, type):  # a namedtuple
                return how(*(child for _, child in children))
            made = object.__new__(type(how))
            for key, child in children:
                object.__setattr__(made, key, child)
            return made
        kind, *source = template[1]
        if kind == "view":
            of, lenses, otherwise = source
            viewed = build(("leaf", of))
            if type(viewed) is not np.ndarray:
                return build(("leaf", otherwise))
            for lens in lenses:
                viewed = lens.on_numpy(viewed)
            return viewed
        if kind == "result":
            j, scalar, weak = source
            if j not in results:
                value = np.array(outputs[j])
                results[j] = (weak(value) if weak else value[()]) if scalar else value
            return results[j]
        if kind == "array":
            leaf = arrays[source[0]]
            return leaf.value if type(leaf) is PythonNumber else leaf
        if kind == "host":
            return fetched[source[0]]
        if kind == "path":
            return _at(originals, source[0])
        if kind == "slot":
            return _slot(target(source[0], originals), source[1])
        return source[0]

    # Every value is built from the slots as the call found them, before any is set.
    results = {}
    values = [None if store.template is None else build(store.template) for store in stores]
    for store, value in zip(stores, values):
        obj = target(store.outside, originals)
        if store.kind == "extend":
            obj.extend(value)
        elif store.kind == "call":
            getattr(obj, store.key)(*value)
        elif store.kind == "contents":
            _replace_contents(obj, value)
        else:
            _set(obj, store.key, _MISSING if store.kind == "delete" else value)


def target(outside: Outside, originals):
    """The object ``outside`` stands for at a call whose ``(args, kwargs)`` are ``originals``."""
    return outside.obj if outside.path is None else _at(originals, outside.path)


def _at(tree, path):
    for key in path:
        tree = tree[key]
    return tree
