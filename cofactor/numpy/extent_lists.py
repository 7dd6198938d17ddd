"""Lists whose length is known only at run time: what a list appended to under a traced condition in a
rolled loop (``if x[i] > 0: out.append(i)``) holds after the loop (tracing/histories.py).

A ``RunTimeList`` is a Bounded vector of its items (numpy/extent.py): its data holds one row per item
the loop could have appended, and its window the ones it did.  What NumPy does with a list, it does
with the array the list becomes (``np.array(out)``, ``np.mean(out)``, ``np.sum(out)``, a ufunc of it):
so does a RunTimeList, as the Bounded it is.  Python's own uses of a list are the list's: ``len(out)``
is a traced Python int, ``out[k]`` and iteration give its items (a Python number where the loop appended
Python numbers), ``if out:`` tests its length, ``out.append(v)`` after the loop adds an item at its
run-time end, and returned it is a list after the call.  Python's other list operations (``+`` joins
lists, ``*`` repeats them, ``==`` compares them, ``pop``, ``extend``, ...) are clear errors: as the
array's operations they would give another answer.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, located
from ..ir import ops
from ..tracing import context
from ..tracing.array import TracedArray
from ..tracing.checks import numpy_error_if
from ..tracing.dispatch import MAKERS
from ..tracing.histories import item_kind, item_value
from ..tracing.path_numbers import PYTHON_DTYPES, PathNumber
from .extent import Bounded, Window, _const, add


class RunTimeList(Bounded):
    """A list of run-time length (see the module docstring); ``weak`` and ``scalar``: its items'
    Python number type (or None: NumPy scalars or arrays) and whether they are numbers."""

    delivered_as_list = True  # (returned, the caller gets a list of its items: compiler.py)

    @classmethod
    def of(cls, data: TracedArray, windows, weak, scalar) -> "RunTimeList":
        made = cls(data, windows)
        made.weak_items, made.scalar_items = weak, scalar
        return made

    def kind(self) -> tuple:
        return self.data.shape[1:], self.dtype, self.weak_items, self.scalar_items

    def tree_flatten(self):
        children, windowed = super().tree_flatten()
        return children, (windowed, self.weak_items, self.scalar_items)

    @classmethod
    def tree_unflatten(cls, static, children):
        windowed, weak, scalar = static
        plain = Bounded.tree_unflatten.__func__(Bounded, windowed, children)
        return cls.of(plain.data, plain.windows, weak, scalar)

    def truth(self) -> TracedArray:
        """``if out:``: whether it holds an item (a traced Python bool)."""
        return TracedArray(ops.compare(self.windows[0].length, _const(0), "GT"), scalar=True, weak=bool)

    def first(self, *default):
        """``next()`` of a filtering generator expression's iterator (convert/comprehensions.py): its first
        item, else ``default`` (a number of its items' kind), else Python's StopIteration when the program runs."""
        shape, empty = self.data.shape[1:], ops.compare(self.windows[0].length, _const(0), "EQ")
        if default and (not self.scalar_items or item_kind(default[0]) is None or
                        item_kind(default[0])[1].kind not in "biuf"):
            raise located(UnsupportedError(
                "next() of a generator expression that filters on traced values, with a default that is not a number: "
                "which of them it gives is known only when the compiled function runs"))
        if self.data.shape[0] == 0:
            if default:
                return default[0]
            raise StopIteration
        row = ops.reshape(ops.slice(self.data.value, (0,) * self.ndim, (1, *shape)), shape)
        if not default:
            numpy_error_if(empty, StopIteration)
            return TracedArray(row, scalar=self.scalar_items, weak=self.weak_items)
        item = TracedArray(row, scalar=True, weak=self.weak_items)
        python = type(default[0])
        if self.weak_items is None and python in (int, float) and np.asarray(python()).dtype.kind == self.dtype.kind:
            # (a NumPy scalar where it found one, the default Python number where not: a number whose kind
            # the path decides, tracing/path_numbers.py)
            one = PathNumber.one_value(self.dtype, python)
            return PathNumber(ops.select(empty, ops.constant(np.asarray(default[0], self.dtype)), row), python,
                              None if one else ops.constant(np.asarray(default[0], PYTHON_DTYPES[python])),
                              None if one else empty, weak=None)
        if python is not self.weak_items:  # (its type would be the path's: the item's, or the default's)
            numpy_error_if(empty, lambda: UnsupportedError(
                f"next() of a filtering generator expression that found nothing, whose default ({default[0]!r}) is of "
                "another type than its items: which type it gives is known only when the compiled function runs"))
            return item
        return TracedArray(ops.select(empty, ops.constant(np.asarray(default[0], self.dtype)), row), scalar=True,
                           weak=self.weak_items)

    def python_result(self, builtin, result, start: bool):
        """``sum`` / ``max`` / ``min`` of its items (``result``, of the array of its items) as Python's of its
        Python numbers: one of their type (an int for bools' sum); a sum of no floats without a ``start`` is
        Python's int 0, whose type the path decides: an error when the program runs."""
        if self.weak_items is None or not isinstance(result, TracedArray):
            return result
        weak = int if self.weak_items is bool and builtin is sum else self.weak_items
        if builtin is sum and weak is not int and not start:
            numpy_error_if(ops.compare(self.windows[0].length, _const(0), "EQ"), lambda: UnsupportedError(
                "sum() of an empty list of Python floats, appended to under a traced condition: Python's is the int "
                "0, where it is a float for a list that is not empty: give sum a start of the items' type, "
                "sum(out, 0.0)"))
        return TracedArray(ops.convert(ops.reshape(result.value, ()), np.asarray(weak()).dtype), scalar=True, weak=weak)

    def __getitem__(self, index):
        if isinstance(index, tuple) or isinstance(index, (Bounded, np.ndarray, list)) or \
                isinstance(index, TracedArray) and index.ndim:
            _refused("indexing with a tuple or an array")
        item = super().__getitem__(index)
        if isinstance(item, Bounded):  # (a slice: a list of run-time length too)
            return RunTimeList.of(item.data, item.windows, self.weak_items, self.scalar_items)
        return TracedArray(item.value, scalar=True, weak=self.weak_items) if self.scalar_items else item

    def __setitem__(self, index, v):
        if type(index) is slice or isinstance(index, (tuple, list, np.ndarray, Bounded)):
            _refused("assignment to a slice")
        super().__setitem__(index, v)

    def append(self, v):
        """An item at its run-time end (its data grows by a row)."""
        if context.current().journals:
            _refused("append() in a traced branch or loop after the loop that made it")
        if item_kind(v) != self.kind():
            raise located(UnsupportedError(
                "append() of an item of another kind to a list whose length is known only at run time (its items "
                "are numbers of one type or arrays of one shape and dtype)"))
        shape = self.data.shape[1:]
        row = item_value(v, self.dtype)
        grown = ops.concatenate([self.data.value, ops.reshape(row, (1, *shape))], 0)
        zero = _const(0)
        length = self.windows[0].length
        self.data = TracedArray(ops.dynamic_update_slice(grown, ops.reshape(row, (1, *shape)),
                                                         [length] + [zero] * len(shape)))
        self.windows = [Window(zero, add(length, _const(1)))] + self.windows[1:]
        self._selection = None

    def as_array(self, numpy=True) -> Bounded:
        """The array NumPy makes of it (``numpy``; else the items Python's sum / max / min take): its items,
        not the list (a write to the array does not reach it).  Of no items, NumPy's is float64 of shape (0,),
        whatever the items would have been: unless they are float64 numbers, an error when the program runs."""
        if numpy and (not self.scalar_items or self.dtype != np.float64):
            made = f"(0, {', '.join(map(str, self.data.shape[1:]))})" if not self.scalar_items else str(self.dtype)
            numpy_error_if(ops.compare(self.windows[0].length, _const(0), "EQ"), lambda: UnsupportedError(
                "an empty list, appended to under a traced condition in a loop, made into an array: NumPy's is float64 "
                f"of shape (0,), which cofactor cannot give it (it would be {made}, as the items are): test len() of "
                "the list first"))
        return Bounded(TracedArray(self.data.value), self.windows)

    def copy(self):
        return RunTimeList.of(self.data.copy(), self.windows, self.weak_items, self.scalar_items)


def _refused(what):
    raise located(UnsupportedError(
        f"{what} of a list whose length is known only when the compiled function runs (appended to under a traced "
        "condition in a loop) is not supported by cofactor: len(), indexing by an integer or a slice, iteration, "
        "append() and NumPy functions of it (np.array(out), np.sum(out)) are; for Python's list operations, make "
        "it an array first (np.array(out)) and use NumPy's (np.concatenate, np.sort)"))


def _operator(name):
    return lambda self, *other: _refused(f"the operator {name}")


for _name, _symbol in {"add": "+", "radd": "+", "iadd": "+=", "mul": "*", "rmul": "*", "imul": "*=",
                       "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "contains": "in"}.items():
    setattr(RunTimeList, f"__{_name}__", _operator(_symbol))
for _name in ("pop", "extend", "insert", "remove", "index", "count", "reverse", "clear"):
    setattr(RunTimeList, _name, (lambda name: lambda self, *a, **k: _refused(f"list.{name}()"))(_name))


def _made(data: TracedArray, length, weak, scalar) -> RunTimeList:
    return RunTimeList.of(data, [Window(_const(0), length)] + [None] * (data.ndim - 1), weak, scalar)


MAKERS["list of run-time length"] = _made
