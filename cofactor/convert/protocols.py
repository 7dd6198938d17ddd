"""The special methods of the program's own classes, run as converted code where Python's syntax,
its builtins or NumPy call them.

``v + x``, ``-v``, ``v < x``, ``obj[k] = x``, ``del obj[k]``, ``len(obj)``, ``k in obj``, ``for a in
obj``, ``a, b = obj``, ``if obj:`` and ``with obj:`` call the methods ``__add__``/``__radd__``,
``__neg__``, ``__lt__``/``__gt__``, ``__setitem__``, ``__delitem__``, ``__len__``, ``__contains__``,
``__iter__``, ``__bool__`` and ``__enter__``/``__exit__`` of the objects' classes; ``float(obj)``,
``x[obj]``, ``np.asarray(obj)``, ``reversed``, ``sum``, ``max`` and ``min`` call ``__float__``,
``__index__``, ``__array__``, ``__reversed__``, ``__add__``, ``__gt__``.  Where a class is the
program's own, those methods are converted like the methods it calls by name: what they read from
outside (``self.scale`` of an object the caller keeps, a global) is read at every call, and what
they change there is replayed after it (tracing/outside.py).  Run as written, they would read it
once, when traced.

Python's own dispatch is kept: the reflected method of the right operand's class first where that
class is a subclass overriding it, ``NotImplemented`` passing to the other operand, ``==`` falling
back to identity, the same TypeError where neither operand takes the operation.  Objects of other
classes (arrays, numbers, a library's) go to Python's operator as they are.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import operator
import re
import types

import numpy as np

from ..errors import (CofactorError, ConcretizationError, InternalError, TracingError, UnsupportedError, forwards_calls,
                      located)
from ..ir.core import OpBudgetExceeded, OutOfScope
from ..tracing import checks, context, outside
from ..tracing.array import TracedArray, defers_tracing, python_bool
from .sequences import set_chosen_item

_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "matmul": "@", "truediv": "/", "floordiv": "//", "mod": "%",
            "pow": "** or pow()", "lshift": "<<", "rshift": ">>", "and": "&", "xor": "^", "or": "|",
            "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_ARRAYS = (TracedArray, np.ndarray, np.generic)
_REFLECTED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


_REFUSALS = (UnsupportedError, ConcretizationError, InternalError, OpBudgetExceeded, OutOfScope)


def cofactors_own(error) -> bool:
    """Whether ``error`` says that cofactor cannot compile the code (a refusal), or is one of its own
    signals (a loop tried rolled, then unrolled): never the program's to catch or suppress, unlike
    NumPy's errors (cofactor's ShapeError is a ValueError the program may catch)."""
    return type(error) is TracingError or isinstance(error, _REFUSALS) or \
        (type(error).__module__ or "").startswith("cofactor.") and not isinstance(error, CofactorError)


def own_hook(obj, name):
    """The method ``name`` (``__add__``, ``__getitem__``) of ``obj``'s class where the class is the
    program's own and so is the method, to run as converted code; None otherwise."""
    cls = type(obj)
    if cls.__module__ == "builtins" or issubclass(cls, TracedArray) or not outside.user_class(cls):
        return None
    hook = inspect.getattr_static(cls, name, None)
    return hook if isinstance(hook, types.FunctionType) else None


class Protocols:
    """Python's operators and protocols, with the program's own special methods run through
    ``call`` (how converted code calls a function)."""

    def __init__(self, call):
        self.call = call

    def method(self, obj, name):
        """``obj``'s bound special method ``name``, converted where it is the program's own; None
        where its class has none."""
        hook = own_hook(obj, name)
        if hook is not None:
            return lambda *args: self.call(hook, obj, *args)
        method = getattr(type(obj), name, None)
        return None if method is None else lambda *args: method(obj, *args)

    def _dispatch(self, forward, reflected, a, b, comparison=False):
        """Python's binary dispatch: ``a.forward(b)``, then ``b.reflected(a)`` (first where ``b``'s
        class is a subclass of ``a``'s that overrides it, or any subclass for a ``comparison``; for
        operands of one class, only a ``comparison`` has a reflected try, ``b < a`` for ``a > b``);
        NotImplemented where neither takes it."""
        first, second = (a, forward, b), (b, reflected, a)
        if type(b) is not type(a) and isinstance(b, type(a)) and (comparison or inspect.getattr_static(
                type(b), reflected, None) is not inspect.getattr_static(type(a), reflected, None)):
            first, second = second, first
        for obj, name, other in (first, second) if type(a) is not type(b) or comparison else (first,):
            method = self.method(obj, name)
            if method is not None:
                result = method(other)
                if result is not NotImplemented:
                    return result
        return NotImplemented

    @staticmethod
    def involved(name, a, b) -> bool:
        """Whether ``a op b`` (``name``: "add", "matmul", ...) may call a special method of the program's own."""
        return own_hook(a, f"__{name}__") is not None or own_hook(b, f"__r{name}__") is not None

    def binary(self, name, a, b):
        """``a op b`` (an object of the program's own class with ``__array__`` beside an array: the array it
        gives, as NumPy's operator takes it)."""
        if name == "mod" and isinstance(a, str):  # %-formatting: "%d" % x asks int(x), Python's TypeError then
            values = b if type(b) is tuple else (b,)
            traced = next((x for x in values if isinstance(x, TracedArray)), None)
            if traced is not None and context.is_tracing():
                as_format = _percent_as_format(a, values) if checks.building_a_message() else None
                if as_format is None:
                    traced.no_text("%-formatting")
                return as_format[0].format(*as_format[1])  # (a raise's message: its values' tokens, formatted
                #                                               when it fires)
        if not self.involved(name, a, b):
            if isinstance(a, _ARRAYS) or isinstance(b, _ARRAYS):
                a, b = self.as_array(a), self.as_array(b)
            return _operator(name, a, b)
        result = self._dispatch(f"__{name}__", f"__r{name}__", a, b)
        if result is NotImplemented:
            raise located(TypeError(f"unsupported operand type(s) for {_SYMBOLS[name]}: "
                                    f"'{type(a).__name__}' and '{type(b).__name__}'"))
        return result

    def compare(self, name, a, b):
        """``a op b`` for a comparison (``name``: "lt", "eq", ...)."""
        forward, reflected = f"__{name}__", f"__{_REFLECTED[name]}__"
        if own_hook(a, forward) is None and own_hook(b, reflected) is None:
            if name == "ne" and (own_hook(a, "__eq__") or own_hook(b, "__eq__")):  # (object.__ne__: not __eq__)
                equal = self.compare("eq", a, b)
                if isinstance(equal, TracedArray) and equal.ndim == 0:
                    return python_bool(np.logical_not(equal))
                return not equal
            return _operator(name, a, b)
        result = self._dispatch(forward, reflected, a, b, comparison=True)
        if result is not NotImplemented:
            return result
        if name in ("eq", "ne"):
            return (a is b) == (name == "eq")
        raise located(TypeError(f"'{_SYMBOLS[name]}' not supported between instances of "
                                f"'{type(a).__name__}' and '{type(b).__name__}'"))

    def unary(self, name, a):
        """``-a``, ``+a``, ``~a`` (``name``: "neg", "pos", "invert")."""
        hook = own_hook(a, f"__{name}__")
        return self.call(hook, a) if hook is not None else _operator(name, a)

    def tested(self, x):
        """What ``if x:`` tests: the truth ``__bool__`` (else ``__len__``) of the program's own class
        gives, converted (a traced truth value stays traced); ``x`` itself otherwise."""
        hook = own_hook(x, "__bool__")
        if hook is not None:
            truth = self.call(hook, x)
            if not (type(truth) is bool or isinstance(truth, TracedArray) and truth.weak is bool):
                raise located(TypeError(f"__bool__ should return bool, returned {type(truth).__name__}"))
            return truth
        if own_hook(x, "__len__") is not None and inspect.getattr_static(type(x), "__bool__", None) is None:
            return self.length(x) != 0
        if defers_tracing(x) and hasattr(type(x), "truth"):  # (a list of run-time length: numpy/extent_lists.py)
            return x.truth()
        return x

    def length(self, x):
        """``len(x)``."""
        hook = own_hook(x, "__len__")
        if hook is None:
            return outside.length(x)
        n = self.call(hook, x)
        if isinstance(n, TracedArray):
            raise located(ConcretizationError(
                f"{type(x).__name__}.__len__ returned a traced value: len() is a Python int, which must be known when "
                "the function is traced"))
        n = _index(n)
        if n < 0:
            raise located(ValueError("__len__() should return >= 0"))
        return n

    def iterated(self, x):
        """What ``for a in x`` iterates: the iterator the program's own ``__iter__`` returns, converted (or,
        without one, its ``__getitem__`` at 0, 1, ... until IndexError, as Python does); ``x`` otherwise."""
        hook = own_hook(x, "__iter__")
        if hook is not None:
            return iter(self.call(hook, x))
        if own_hook(x, "__getitem__") is not None and inspect.getattr_static(type(x), "__iter__", None) is None:
            return self._indexed_items(x)
        return x

    def _indexed_items(self, x):
        k = 0
        while True:
            try:
                yield self.call(own_hook(x, "__getitem__"), x, k)
            except IndexError:
                return
            k += 1

    def reversed(self, x):
        """``reversed(x)``: the program's own ``__reversed__``, or its ``__len__`` and ``__getitem__``."""
        hook = own_hook(x, "__reversed__")
        if hook is not None:
            return self.call(hook, x)
        getitem = own_hook(x, "__getitem__")
        if getitem is not None and own_hook(x, "__len__") is not None:
            return [self.call(getitem, x, k) for k in range(self.length(x) - 1, -1, -1)]
        return reversed(x)

    def number(self, kind: type, x):
        """``float(x)``, ``int(x)``, ``complex(x)`` of an object of the program's own class: its
        ``__float__``, ``__int__`` (else ``__index__``), ``__complex__``, converted."""
        names = {float: ("__float__", "__index__"), int: ("__int__", "__index__"),
                 complex: ("__complex__", "__float__")}
        hook = next((h for h in (own_hook(x, name) for name in names[kind]) if h is not None), None)
        if hook is None:
            return kind(x)
        result = self.call(hook, x)
        return result if isinstance(result, TracedArray) else kind(result)

    def index(self, key):
        """An index as NumPy reads it: an object of the program's own class by its ``__index__``, converted
        (also inside a tuple)."""
        if isinstance(key, tuple):
            return tuple(self.index(k) for k in key)
        hook = own_hook(key, "__index__")
        return self.call(hook, key) if hook is not None else key

    def as_array(self, x, numpy=True):
        """``x`` as NumPy converts it: an object of the program's own class by its ``__array__``, converted
        (``numpy``: with NumPy's dtype where that of a list's items is not: numpy/extent_lists.py)."""
        hook = own_hook(x, "__array__")
        if hook is None and defers_tracing(x):
            return x.as_array(numpy)  # (a list of run-time length: the array of its items, numpy/extent_lists.py)
        return self.call(hook, x) if hook is not None else x

    def total(self, items, start=0):
        """``sum(items, start)``: Python's additions, with the program's own ``__add__``/``__radd__``."""
        for item in items:
            start = self.binary("add", start, item)
        return start

    def extreme(self, builtin, items):
        """``max(items)``/``min(items)``: the first item no later one beats, compared as Python compares
        (``item > best`` for max), with the program's own comparisons."""
        items = iter(items)
        try:
            best = next(items)
        except StopIteration:
            return builtin([])  # (Python's ValueError)
        for item in items:
            if self.tested(self.compare("gt" if builtin is max else "lt", item, best)):
                best = item
        return best

    def contains(self, container, key):
        """``key in container``."""
        hook = own_hook(container, "__contains__")
        if hook is not None:
            return bool(self.call(hook, container, key))
        if type(container) in (list, tuple) and any(isinstance(x, TracedArray) and x.ndim == 0
                                                    for x in (key, *container)):
            return self._among(key, outside.items(container))
        if type(container) is range and isinstance(key, TracedArray) and key.ndim == 0 and len(container) <= 256:
            return self._among(key, container)  # (k in range(1, 3): each of its ints, as Python compares them)
        return outside.has(container, key, "item")  # (guarded where the container is from outside)

    def excludes(self, container, key):
        """``key not in container`` (traced where ``in`` is)."""
        found = self.contains(container, key)
        return python_bool(np.logical_not(found)) if isinstance(found, TracedArray) else not found

    def _among(self, key, items):
        """``key in items`` where numbers among them are traced (``k in (0, 2)``): Python's ``item is key
        or item == key`` for each item, a traced Python bool where the answer is known only at run time."""
        found = []
        for item in items:
            same = item is key or self.compare("eq", item, key)
            if isinstance(same, TracedArray) and same.ndim == 0:
                found.append(same.astype(np.bool_))
            elif bool(same):
                return True
        if not found:
            return False
        return python_bool(functools.reduce(np.logical_or, found))

    def managed(self, manager):
        """The context manager of a ``with`` statement, entered and left as Python does (protocols.Managed)."""
        if not hasattr(type(manager), "__enter__") or not hasattr(type(manager), "__exit__"):
            raise located(TypeError(f"'{type(manager).__name__}' object does not support the context manager protocol"))
        return Managed(self, manager)

    def set_item(self, value, container, key):
        """``container[key] = value`` (in Python's order: the value first)."""
        hook = own_hook(container, "__setitem__")
        key = key if hook is not None else self.index(key)
        if hook is not None:
            self.call(hook, container, key, value)
        elif type(container) is list and isinstance(key, TracedArray) and key.ndim == 0:
            set_chosen_item(container, key, value, _set_item)  # (seen[u] = True: sequences.py)
        else:
            _set_item(container, key, value)

    def del_item(self, container, key):
        """``del container[key]``."""
        hook = own_hook(container, "__delitem__")
        if hook is not None:
            self.call(hook, container, key)
        elif type(container) is list and isinstance(key, (TracedArray, slice)) and \
                any(isinstance(b, TracedArray) for b in ((key.start, key.stop, key.step) if type(key) is slice else (key,))):
            raise located(ConcretizationError(
                "del of a list item at a traced index: the list's length and items would be known only when the "
                "compiled function runs (keep the items in an array and mask them, items[np.arange(n) != k])"))
        else:
            _del_item(container, key)


class Managed:
    """A ``with`` statement's manager: its ``__enter__`` and ``__exit__`` run as converted code where they
    are the program's own (what they read and count, at every call), and an ``__exit__`` that returns
    true suppresses the program's errors, not cofactor's refusals (which would otherwise drop the
    rest of the block at every call, silently)."""

    def __init__(self, protocols: Protocols, manager):
        self.protocols, self.manager = protocols, manager

    def __enter__(self):
        entered = self.protocols.method(self.manager, "__enter__")()
        if isinstance(self.manager, contextlib.suppress) and context.is_tracing():  # (as an except clause: checks.py)
            context.current().handlers.append(lambda: self.manager._exceptions)
        return entered

    def __exit__(self, kind, error, traceback):
        if isinstance(self.manager, contextlib.suppress) and context.is_tracing():
            context.current().handlers.pop()
        suppressed = self.protocols.method(self.manager, "__exit__")(kind, error, traceback)
        return bool(suppressed) and not cofactors_own(error)


# A %-conversion without a mapping key: its flags, width, precision and type.
_CONVERSION = re.compile(r"%([#0\- +]*)(\d*)(?:\.(\d+))?[hlL]?([diouxXeEfFgGcrs%])")


def _percent_as_format(template: str, values) -> tuple | None:
    """A %-format as the str.format template of the same text and its values, for a raise's message, whose
    traced values show by their format spec (``%d`` of a float: of its int(), as Python's); None where there
    is none (a mapping key, a ``*`` width, ``%x`` of a float)."""
    given, values = iter(values), []

    def spec(m):
        flags, width, precision, kind = m.groups()
        if kind == "%":
            return "%"
        value = next(given, None)
        if kind in "diu" and isinstance(value, TracedArray) and value.dtype.kind == "f":
            value = value.astype(np.int64)
        values.append(value)
        if kind in "sr":
            return "{!" + kind + ":" + ("<" if "-" in flags else ">") + width + (f".{precision}" if precision else "") + "}"
        if kind in "oxX" and getattr(value, "dtype", np.dtype(int)).kind not in "biu":
            raise _NoFormat
        kind = {"i": "d", "u": "d"}.get(kind, kind)
        align = "<" if "-" in flags else ""
        sign = "+" if "+" in flags else " " if " " in flags else ""
        return "{:" + align + sign + ("#" if "#" in flags else "") + ("0" if "0" in flags and not align else "") + \
            width + (f".{precision}" if precision else "") + kind + "}"
    escaped = template.replace("{", "{{").replace("}", "}}")
    if "%" in _CONVERSION.sub("", escaped):
        return None
    try:
        return _CONVERSION.sub(spec, escaped), values
    except _NoFormat:
        return None


class _NoFormat(Exception):
    pass


# Python's operators on the user's values, whose errors (``1 + "a"``) are the user's line's.
_OPERATORS = {"and": operator.and_, "or": operator.or_}
_operator = forwards_calls(lambda name, *operands: (_OPERATORS[name] if name in _OPERATORS else
                                                    getattr(operator, name))(*operands))
_set_item = forwards_calls(lambda container, key, value: operator.setitem(container, key, value))
_del_item = forwards_calls(lambda container, key: operator.delitem(container, key))
_index = forwards_calls(lambda n: operator.index(n))  # (a float from __len__: Python's TypeError)
