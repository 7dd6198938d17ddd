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
from ..tracing.histories import item_kind
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
        row = v.value if isinstance(v, TracedArray) else ops.constant(np.asarray(v, self.dtype))
        grown = ops.concatenate([self.data.value, ops.reshape(row, (1, *shape))], 0)
        zero = _const(0)
        length = self.windows[0].length
        self.data = TracedArray(ops.dynamic_update_slice(grown, ops.reshape(row, (1, *shape)),
                                                         [length] + [zero] * len(shape)))
        self.windows = [Window(zero, add(length, _const(1)))] + self.windows[1:]
        self._selection = None

    def as_array(self) -> Bounded:
        """The array NumPy makes of it: its items, not the list (a write to the array does not reach it).
        Of no arrays, NumPy's has shape (0,), not that of no rows: an error when the program runs."""
        if not self.scalar_items:
            rows = self.data.shape[1:]
            numpy_error_if(ops.compare(self.windows[0].length, _const(0), "EQ"), lambda: UnsupportedError(
                f"an empty list of arrays of shape {rows}, appended to under a traced condition in a loop, made into an "
                "array: NumPy's has shape (0,), which cofactor cannot give it (its arrays have a run-time length "
                f"along the first axis only, here (0, {', '.join(map(str, rows))})): test len() of the list first"))
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
