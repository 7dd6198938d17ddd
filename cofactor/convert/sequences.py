"""A list or tuple indexed by a traced integer (``weights[k]``, ``dirs[np.argmax(g)]``, ``seen[u] = True``):
which item is known only when the program runs.

Reading gives the item the index picks: of numbers of one kind (their Python type or NumPy dtype), the
value; of arrays of one shape and dtype, an Either of them (tracing/array.py), so that writes through it
reach the item picked, as in NumPy; of tuples of one length, a tuple of the items chosen at each place.
Writing a list's item makes each item the value where the index picks it and what it held elsewhere (a
number, or an Either of the array and the new one).  An index out of range is Python's IndexError when
the program runs; items of other kinds are a clear error.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConcretizationError, located
from ..ir import ops
from ..ir.core import Value
from ..tracing import context, outside
from ..tracing.array import Either, TracedArray, defers_tracing
from ..tracing.checks import numpy_error_if
from ..tracing.histories import item_kind, item_value


def chosen_item(sequence, key: TracedArray):
    """``sequence[key]``."""
    items = outside.items(sequence)
    chosen = _picked(items, _picked_index(type(sequence).__name__, len(items), key))
    if isinstance(chosen, Either):  # (W[k] += 1 writes W[k] back: already done, through the Either)
        _picks().append((chosen, sequence, key))
    if chosen is None:
        raise located(ConcretizationError(
            f"a {type(sequence).__name__} indexed by a traced integer, whose items are " +
            ("none" if not items else "not all numbers of one type, arrays of one shape and dtype, or tuples of them") +
            ": which item it gives is known only when the compiled function runs (hold the items in an array and "
            "index it, np.asarray(items)[k], or choose with np.where)"))
    return chosen


def set_chosen_item(sequence: list, key: TracedArray, value, store):
    """``sequence[key] = value``: ``store(sequence, k, item)`` sets each item ``k``."""
    items = outside.items(sequence)
    if any(value is either and sequence is held and key is by for either, held, by in _picks()):
        return  # (the item read at the same index, written through: W[k] += v)
    picked = _picked_index("list assignment", len(items), key)
    every = [None if defers_tracing(x) else item_kind(x) for x in [*items, value]]
    kinds = {kind if kind is None else (kind[:2], kind[3]) for kind in every}  # (a Python float and a float64)
    if len(kinds) != 1 or None in kinds:
        raise located(ConcretizationError(
            "a list item set at a traced index, where the items and the value are not all numbers of one type or "
            "arrays of one shape and dtype: which item changes is known only when the compiled function runs (hold "
            "the items in an array and set it, values[k] = v, or choose with np.where)"))
    (shape, dtype), scalar = kinds.pop()
    weak = every[0][2] if len({kind[2] for kind in every}) == 1 else None
    new = item_value(value, dtype)
    for k, item in enumerate(items):
        here = ops.compare(picked, ops.constant(np.asarray(k, np.int32)), "EQ")
        if scalar:
            old = item_value(item, dtype)
            store(sequence, k, TracedArray(ops.reshape(ops.select(here, new, old), ()), scalar=True, weak=weak))
        else:
            store(sequence, k, Either(ops.convert(here, np.int32), [item, value]))


def _picks() -> list:
    """(Either, sequence, key) of the items read at traced indices in this trace."""
    return context.current().per_trace("items picked by traced indices", list)


def _picked_index(name: str, n: int, key: TracedArray) -> Value:
    """The int32 index in range that ``key`` picks among ``n`` items; Python's IndexError where none."""
    if key.dtype.kind not in "iu" and key.weak is not bool:  # (a NumPy bool is no index; a Python bool is)
        shown = key.stands_for()
        shown = shown.__name__ if shown.__module__ == "builtins" else f"numpy.{shown.__name__}"
        raise located(TypeError(f"{name.split()[0]} indices must be integers or slices, not {shown}"))
    k = ops.convert(key.value, np.int64)
    zero, size, least = (ops.constant(np.asarray(v, np.int64)) for v in (0, n, -n))
    numpy_error_if(ops.binary("stablehlo.or", ops.compare(k, least, "LT"), ops.compare(k, size, "GE")),
                   lambda: IndexError(f"{name} index out of range"))
    return ops.convert(ops.select(ops.compare(k, zero, "LT"), ops.binary("stablehlo.add", k, size), k), np.int32)


def _picked(items: list, picked: Value):
    """The item ``picked`` chooses (see the module docstring); None for items of other kinds."""
    if items and all(type(item) is tuple for item in items) and len({len(item) for item in items}) == 1:
        places = [_picked([item[j] for item in items], picked) for j in range(len(items[0]))]
        return None if any(p is None for p in places) else tuple(places)
    kinds = {None if defers_tracing(item) else item_kind(item) for item in items}
    if len(kinds) != 1 or None in kinds:
        return None
    shape, dtype, weak, scalar = kinds.pop()
    if not scalar:
        return Either(picked, items)
    values = [item_value(item, dtype) for item in items]
    chosen = values[-1]
    for k in range(len(items) - 2, -1, -1):
        chosen = ops.select(ops.compare(picked, ops.constant(np.asarray(k, np.int32)), "EQ"), values[k], chosen)
    return TracedArray(ops.reshape(chosen, ()), scalar=True, weak=weak)
