"""The special methods of the program's own classes, run as converted code where Python's syntax
calls them.

``v + x``, ``-v``, ``v < x``, ``obj[k] = x``, ``del obj[k]``, ``len(obj)``, ``k in obj``, ``for a in
obj``, ``a, b = obj`` and ``if obj:`` call the methods ``__add__``/``__radd__``, ``__neg__``,
``__lt__``/``__gt__``, ``__setitem__``, ``__delitem__``, ``__len__``, ``__contains__``, ``__iter__``
and ``__bool__`` of the objects' classes.  Where a class is the program's own, those methods are
converted like the methods it calls by name: what they read from outside (``self.scale`` of an
object the caller keeps, a global) is read at every call, and what they change there is replayed
after it (tracing/outside.py).  Run as written, they would read it once, when traced.

Python's own dispatch is kept: the reflected method of the right operand's class first where that
class is a subclass overriding it, ``NotImplemented`` passing to the other operand, ``==`` falling
back to identity, the same TypeError where neither operand takes the operation.  Objects of other
classes (arrays, numbers, a library's) go to Python's operator as they are.
"""
from __future__ import annotations

import inspect
import operator
import types

from ..errors import ConcretizationError, forwards_calls, located
from ..tracing import outside
from ..tracing.array import TracedArray

_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "matmul": "@", "truediv": "/", "floordiv": "//", "mod": "%",
            "pow": "** or pow()", "lshift": "<<", "rshift": ">>", "and": "&", "xor": "^", "or": "|",
            "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_REFLECTED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
_UNARY = {"neg": "-", "pos": "+", "invert": "~"}


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

    def _method(self, obj, name):
        """``obj``'s bound special method ``name``, converted where it is the program's own; None
        where its class has none."""
        hook = own_hook(obj, name)
        if hook is not None:
            return lambda *args: self.call(hook, obj, *args)
        method = getattr(type(obj), name, None)
        return None if method is None else lambda *args: method(obj, *args)

    def _dispatch(self, forward, reflected, a, b, comparison=False):
        """Python's binary dispatch: ``a.forward(b)``, then ``b.reflected(a)`` (first where ``b``'s
        class is a subclass of ``a``'s that overrides it, or any subclass for a ``comparison``);
        NotImplemented where neither takes it."""
        first, second = (a, forward, b), (b, reflected, a)
        if type(b) is not type(a) and isinstance(b, type(a)) and (comparison or inspect.getattr_static(
                type(b), reflected, None) is not inspect.getattr_static(type(a), reflected, None)):
            first, second = second, first
        for obj, name, other in (first, second) if type(a) is not type(b) else (first,):
            method = self._method(obj, name)
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
        """``a op b``."""
        if not self.involved(name, a, b):
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
        """What ``for a in x`` iterates: the iterator the program's own ``__iter__`` returns, converted;
        ``x`` itself otherwise."""
        hook = own_hook(x, "__iter__")
        return iter(self.call(hook, x)) if hook is not None else x

    def contains(self, container, key):
        """``key in container``."""
        hook = own_hook(container, "__contains__")
        if hook is not None:
            return bool(self.call(hook, container, key))
        return outside.has(container, key, "item")  # (guarded where the container is from outside)

    def set_item(self, value, container, key):
        """``container[key] = value`` (in Python's order: the value first)."""
        hook = own_hook(container, "__setitem__")
        if hook is not None:
            self.call(hook, container, key, value)
        else:
            _set_item(container, key, value)

    def del_item(self, container, key):
        """``del container[key]``."""
        hook = own_hook(container, "__delitem__")
        if hook is not None:
            self.call(hook, container, key)
        else:
            _del_item(container, key)


# Python's operators on the user's values, whose errors (``1 + "a"``) are the user's line's.
_OPERATORS = {"and": operator.and_, "or": operator.or_}
_operator = forwards_calls(lambda name, *operands: (_OPERATORS[name] if name in _OPERATORS else
                                                    getattr(operator, name))(*operands))
_set_item = forwards_calls(lambda container, key, value: operator.setitem(container, key, value))
_del_item = forwards_calls(lambda container, key: operator.delitem(container, key))
_index = forwards_calls(lambda n: operator.index(n))  # (a float from __len__: Python's TypeError)
