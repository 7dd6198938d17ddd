"""Run-time extents: arrays whose length along an axis is known only when the program runs.

``A[i, :j]`` in a rolled loop, ``x[mask]``, ``np.nonzero(x)``, ``np.unique(x)``: one
representation serves them all.  A ``Bounded`` holds

- ``data``: a TracedArray of static shape, each run-time axis at its static maximum (the extent
  of the axis it was cut from: a slice of a row has the row's extent);
- ``windows``: per axis of ``data``, None (a static axis) or a ``Window`` (start, length) of
  int64 scalar Values: lanes ``start .. start + length - 1`` are the array's elements, in order,
  and every other lane is *invalid*.

A slice with traced bounds is a window on a view of the whole axis (so reading it copies nothing,
and writing it writes the base through the view, as NumPy's slice does); one with a static step other
than 1 and -1 a view of its elements, as many as it can have, from lane 0 (a Run: tracing/views.py); a mask or a
data-dependent function compacts its elements to the front (start 0); a mask's selection also
keeps its source and mask, which reductions over it read instead (``Bounded.pending``).  Every operation says what
it does with invalid lanes, so that none reaches a result:

- elementwise operations compute them and ignore them: operands are first *aligned* (shifted so
  that their windows start at the first bounded operand's; lengths that may differ are checked at
  run time, with NumPy's broadcast error);
- reductions (sum, prod, max, min, any, all, mean, var, std, argmax, argmin, count_nonzero),
  ``dot`` / ``@`` / ``inner`` / ``outer`` contractions, ``cumsum`` / ``cumprod`` and ``sort`` first
  replace them with the operation's identity (0 for a sum and a contraction, 1 for a product,
  -inf for a max, NaN to sort last); a reduction over an empty window raises NumPy's error at run time;
- ``flip`` reverses the data and moves the window; indexing an element checks it against the
  length at run time (NumPy's IndexError);
- writes (``b[...] = v``, ``b += v``, ``A[i, :j] = v``, ``x[mask] = v``) select the new value in
  the valid lanes only;
- as an index array (``x[idx]``, ``x[idx] = v``, ``np.add.at(x, idx, v)`` with ``idx = np.nonzero(m)[0]``),
  invalid lanes read element 0 and the scatter drops their writes (numpy/indexing.py);
- ``argsort`` sorts them last, order statistics read the valid lanes only, joins write each piece at
  the run-time end of the ones before (numpy/extent_order.py); ``nonzero``, ``unique`` and
  ``bincount`` leave them out.

One NumPy rule is not followed: a run-time length of 1 does not broadcast against another length
(``x[:k] + y[:m]`` with ``k == 1``, ``m == 3``): NumPy's result has 3 elements, cofactor raises an
UnsupportedError that says so when the function runs; a static length of 1 broadcasts as in NumPy.

Where a Bounded leaves the compiled function (returned), the program returns its data with the
window moved to the front and the lengths, and the caller gets NumPy's exact shape (compiler.py).
Where a run-time extent would have to become a static one (``np.zeros(len(np.unique(x)))``), the
operation raises a clear error.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import ConcretizationError, UnsupportedError, asked_by_user_code, located
from ..ir import ops
from ..ir.core import Operation, Value
from ..tracing import context, python_ints
from ..tracing.array import TracedArray
from ..tracing.checks import numpy_error_if
from ..tracing.context import in_reverse_mode
from ..tracing.views import DynamicBlock
from ..tracing.dispatch import call_ufunc
from ._core import asarray, value, with_value_bounds, wrap

_I64 = np.dtype(np.int64)


# --- int64 scalar arithmetic on Values -----------------------------------------------------------

def i64(x) -> Value:
    """``x`` (a Python int, a NumPy integer or a traced integer scalar) as an int64 scalar Value."""
    if isinstance(x, TracedArray):
        if x.size != 1 or x.dtype.kind not in "iub":
            raise located(TypeError("slice indices must be integers or None or have an __index__ method"))
        return ops.convert(ops.reshape(x.value, ()), _I64)
    return ops.constant(np.asarray(x.__index__(), _I64))


def _known(v: Value):
    """The int a Value holds if it is an integer constant (a scalar), else None."""
    literal = _literal(v)
    return int(literal) if literal is not None and literal.ndim == 0 and literal.dtype.kind in "iub" else None


def _binary(name, a: Value, b: Value) -> Value:
    ka, kb = _known(a), _known(b)
    fold = {"stablehlo.add": lambda x, y: x + y, "stablehlo.subtract": lambda x, y: x - y,
            "stablehlo.maximum": max, "stablehlo.minimum": min}.get(name)
    if fold is not None and ka is not None and kb is not None:
        return ops.constant(np.asarray(fold(ka, kb), _I64))
    return ops.binary(name, a, b)


def add(a, b):
    return _binary("stablehlo.add", a, b)


def sub(a, b):
    return _binary("stablehlo.subtract", a, b)


def clamp(lo, x, hi):
    return _binary("stablehlo.minimum", _binary("stablehlo.maximum", x, lo), hi)


def _const(n) -> Value:
    return ops.constant(np.asarray(n, _I64))


# Operations whose result depends on their operands and attributes alone (no regions, no effects).
_PURE = {"stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum",
         "stablehlo.convert", "stablehlo.reshape", "stablehlo.negate", "stablehlo.select", "stablehlo.compare",
         "stablehlo.clamp", "stablehlo.slice", "stablehlo.dynamic_slice", "stablehlo.broadcast_in_dim"}


def _literal(v: Value):
    literal = getattr(v.owner, "literal", None) if v.owner is not None else None
    return None if literal is None else np.asarray(literal)


def _same(a: Value, b: Value, depth: int = 8) -> bool:
    """Whether two Values are equal whatever the program's data: one Value, constants of the same
    dtype and bits, or the same pure operation on operands that are (two slices ``x[i, :j]`` and
    ``x[k, :j]`` compute the length of ``:j`` twice; ``x[x > 0]`` twice compares ``x`` to 0 twice)."""
    if a is b:
        return True
    la, lb = _literal(a), _literal(b)
    if la is not None or lb is not None:
        return la is not None and lb is not None and la.dtype == lb.dtype and la.shape == lb.shape \
            and la.tobytes() == lb.tobytes()
    x, y = a.owner, b.owner
    if depth == 0 or not isinstance(x, Operation) or not isinstance(y, Operation) or x.name not in _PURE:
        return False
    return (x.name == y.name and a.index == b.index and a.type == b.type and x.attributes == y.attributes
            and len(x.operands) == len(y.operands)
            and all(_same(p, q, depth - 1) for p, q in zip(x.operands, y.operands)))


def _both(a: Value, b: Value) -> Value:
    return ops.binary("stablehlo.and", a, b)


class Window:
    """Lanes ``start .. start + length - 1`` of an axis (int64 scalar Values)."""

    __slots__ = ("start", "length")

    def __init__(self, start: Value, length: Value):
        self.start, self.length = start, length

    def same_length(self, other: "Window") -> bool:
        """Whether the two lengths are equal whatever the program's data (then no check is needed)."""
        return _same(self.length, other.length)

    def same_start(self, other: "Window") -> bool:
        return _same(self.start, other.start)

    def valid(self, shape, axis) -> Value:
        """An i1 array of ``shape``: true in this window's lanes along ``axis``."""
        lanes = ops.iota(shape, _I64, axis)
        lo = ops.broadcast_in_dim(self.start, shape, ())
        hi = ops.broadcast_in_dim(add(self.start, self.length), shape, ())
        return _both(ops.compare(lanes, lo, "GE"), ops.compare(lanes, hi, "LT"))


def valid_lanes(shape, windows, axes=None) -> Value | None:
    """An i1 array of ``shape``: true in the lanes valid along every axis in ``axes`` (by default all)
    that has a window; None where none has."""
    mask = None
    for axis, w in enumerate(windows):
        if w is not None and (axes is None or axis in axes):
            m = w.valid(shape, axis)
            mask = m if mask is None else _both(mask, m)
    return mask


def where_valid(mask: Value, data: TracedArray, fill) -> TracedArray:
    """``data`` where ``mask`` (broadcast along its leading axes) holds, else ``fill``."""
    filler = ops.broadcast_in_dim(ops.constant(np.asarray(fill, data.dtype)), data.shape, ())
    mask = ops.broadcast_in_dim(mask, data.shape, range(mask.type.rank))
    return TracedArray(ops.select(mask, data.value, filler))


def without_derivatives_outside(valid: Value, data: TracedArray, dims=None) -> TracedArray:
    """``data`` whose lanes outside ``valid`` (an i1 array broadcast into ``data`` at ``dims``, its leading
    axes by default) carry no derivative, in reverse mode: what a padding lane reads through a gather
    (the element its clamped index points at) gets no gradient back from whatever reaches that lane,
    and a NaN or infinite derivative there (0 times it is NaN) does not reach the lanes that are valid.
    The mask is opaque to the optimizer, which would otherwise fold the select of the derivative away
    where the derivative's other lanes are 0 times something (NaN there)."""
    if not in_reverse_mode() or not np.issubdtype(data.dtype, np.floating):
        return data
    dims = range(valid.type.rank) if dims is None else dims
    mask = ops.broadcast_in_dim(ops.opaque(valid), data.shape, dims)
    return TracedArray(ops.select(mask, data.value, ops.ignore_derivatives(data.value)))


def traced_int(v: Value) -> TracedArray:
    """An int64 scalar Value (a window's start or length) as a traced Python int (NEP 50: weak)."""
    return TracedArray(v, scalar=True, weak=int)


def slice_run(item: slice, n) -> tuple[Value, Value, int]:
    """The lanes NumPy's ``slice.indices`` gives ``item`` (traced bounds, a static step) on an axis of
    ``n`` lanes (an int, or a Value): the first lane, how many, and the step."""
    step = 1 if item.step is None else item.step
    if isinstance(step, TracedArray):
        raise located(UnsupportedError("a slice with a traced step is not supported: its direction must be known"))
    step = step.__index__()
    if step == 0:
        raise located(ValueError("slice step cannot be zero"))
    n = n if isinstance(n, Value) else _const(n)
    zero = _const(0)

    def bound(x, default, lo, hi):
        if x is None:
            return default
        x = i64(x)
        wrapped = ops.select(ops.compare(x, zero, "LT"), add(x, n), x)
        return clamp(lo, wrapped, hi)

    if step > 0:
        first, stop = bound(item.start, zero, zero, n), bound(item.stop, n, zero, n)
        ahead = sub(stop, first)
    else:
        last, minus_one = sub(n, _const(1)), _const(-1)
        first, stop = bound(item.start, last, minus_one, last), bound(item.stop, minus_one, minus_one, last)
        ahead = sub(first, stop)
    if abs(step) != 1:  # ceil(ahead / |step|) (a quotient of a negative rounds to 0, the maximum's anyway)
        ahead = ops.binary("stablehlo.divide", add(ahead, _const(abs(step) - 1)), _const(abs(step)))
    return first, _binary("stablehlo.maximum", ahead, zero), step


def slice_window(item: slice, n) -> tuple[Window, bool]:
    """The window of ``item`` (traced bounds, step 1 or -1; see slice_run) on an axis of ``n`` lanes, and
    whether it runs backwards (then it is a window of the reversed axis)."""
    first, length, step = slice_run(item, n)
    if step == 1:
        return Window(first, length), False
    # Lanes first, first - 1, ... are lanes n-1-first, ... of the reversed axis.
    return Window(sub(sub(n if isinstance(n, Value) else _const(n), _const(1)), first), length), True


def _as_offset(bound):
    """A slice bound as (a Value, an int): the traced int that Value holds plus the int, constants added or
    subtracted taken out (``i + 2``: (i, 2), ``i - 1``: (i, -1), ``i``: (i, 0)); None for a bound that is not a
    traced integer."""
    if not isinstance(bound, TracedArray) or bound.ndim or bound.dtype.kind not in "iu":
        return None
    v, offset = bound.value, 0
    while isinstance(v.owner, Operation) and v.owner.name in ("stablehlo.add", "stablehlo.subtract"):
        a, b = v.owner.operands
        if _known(b) is not None:
            v, offset = a, offset + (_known(b) if v.owner.name == "stablehlo.add" else -_known(b))
        elif _known(a) is not None and v.owner.name == "stablehlo.add":
            v, offset = b, offset + _known(a)
        else:
            break
    return v, offset


def fixed_length(items, shape) -> tuple:
    """``items`` (an expanded basic index) with each slice ``i + a:i + b`` of one traced int ``i`` (``x[i:i + k]``,
    ``x[i - 1:i + 2]``, a window sliding with a loop's counter) that the int's bounds keep inside its axis as a
    DynamicBlock: ``b - a`` elements whatever ``i`` is, a view of a static shape, not a run-time extent."""
    out, axis = [], 0
    for item in items:
        if isinstance(item, slice) and (item.step is None or not isinstance(item.step, TracedArray) and item.step == 1):
            start, stop = _as_offset(item.start), _as_offset(item.stop)
            if start is not None and stop is not None and _same(start[0], stop[0]) and stop[1] >= start[1]:
                within = python_ints.bounds_of(item.start)
                length = stop[1] - start[1]
                if within is not None and within[0] >= 0 and within[1] + length <= shape[axis]:
                    item = DynamicBlock(i64(item.start), length)
        out.append(item)
        axis += item is not None
    return tuple(out)


def has_traced_slice(items) -> bool:
    return any(isinstance(item, slice) and any(isinstance(b, (TracedArray, Bounded))
                                               for b in (item.start, item.stop, item.step)) for item in items)


def shifted(x: Value, axis: int, by: Value, size: int) -> Value:
    """``x`` moved ``by`` lanes along ``axis`` (lane k goes to k + by) into ``size`` lanes (zeros where
    nothing lands)."""
    if _known(by) == 0 and x.shape[axis] == size:
        return x
    low = [0] * x.type.rank
    low[axis] = size
    padded = ops.pad(x, ops.constant(np.zeros((), x.dtype)), low, low)
    starts = [_const(0)] * x.type.rank
    starts[axis] = sub(_const(size), by)
    sizes = list(x.shape)
    sizes[axis] = size
    return ops.dynamic_slice(padded, starts, sizes)


def _check_lengths(a: Window, b, what="operands could not be broadcast together", broadcast="a"):
    """NumPy's error where window ``a``'s length is not ``b`` (a Window or a static length).  Where
    NumPy would broadcast a length of 1 instead (``broadcast``: "a", "both" sides, or None), it is
    cofactor's UnsupportedError: a run-time length of 1 is not broadcast (the module docstring)."""
    length = b.length if isinstance(b, Window) else _const(b)
    if isinstance(b, Window) and a.same_length(b) or _known(a.length) is not None and _known(a.length) == _known(length):
        return
    shown = [TracedArray(a.length, scalar=True), TracedArray(length, scalar=True) if isinstance(b, Window) else b]
    differ = ops.compare(a.length, length, "NE")
    if broadcast is not None:
        one = _const(1)
        ones = ops.compare(a.length, one, "EQ")
        if broadcast == "both" and isinstance(b, Window):
            ones = ops.binary("stablehlo.or", ones, ops.compare(length, one, "EQ"))
        numpy_error_if(_both(differ, ones), lambda: UnsupportedError(
            f"a length of 1 known only at run time is not broadcast against another ({shown[0]} and {shown[1]}), "
            "as NumPy would: take the element (x[i]) instead of a slice of length 1"))
        differ = _both(differ, ops.unary("stablehlo.not", ones))
    numpy_error_if(differ, lambda: ValueError(f"{what} with lengths {shown[0]} and {shown[1]} (known at run time)"))


def true_ranks(mask: Value) -> tuple[Value, Value]:
    """For a flat i1 vector: each true lane's rank among the true ones (a prefix sum, minus one; the
    others hold the rank of the last true lane before them), and how many are true."""
    ones = ops.convert(mask, _I64)
    rank = ops.binary("stablehlo.subtract", value(np.cumsum(wrap(ones))), ops.constant(np.ones(mask.shape, _I64)))
    return rank, true_count(mask)


def true_count(mask: Value) -> Value:
    """How many lanes of a flat i1 vector are true (an int64 scalar)."""
    ones = ops.convert(mask, _I64)
    return ops.reduce([ones], [_const(0)], [0], lambda acc, x: [ops.binary("stablehlo.add", acc, x)])[0]


def selected_positions(mask: Value) -> tuple[Value, Value]:
    """The positions of ``mask``'s true lanes (a flat i1 vector), first and in order (then zeros), and
    how many are true.  Each true lane goes to its rank among them by a scatter: linear, where a sort
    on XLA's CPU took 17 ms for 3,000 lanes."""
    n = mask.shape[0]
    rank, count = true_ranks(mask)
    target = ops.select(mask, rank, ops.broadcast_in_dim(_const(n), (n,), ()))  # the others: a spare lane n
    positions = ops.scatter(ops.constant(np.zeros(n + 1, _I64)), ops.reshape(target, (n, 1)),
                            ops.iota((n,), _I64, 0), (), (0,), (0,), 1)
    return ops.slice(positions, (0,), (n,)), count


# --- the array --------------------------------------------------------------------------------------

def _unsupported(what):
    raise located(UnsupportedError(
        f"{what} on an array whose length is known only at run time (a slice with traced bounds, x[mask], "
        "np.nonzero, np.unique, ...) is not supported; supported: elementwise operations, reductions, dot / @, "
        "flip, cumsum, sort, argsort, median, quantile, unique, concatenate, indexing and assignment"))


class Selection(NamedTuple):
    """``x[mask]`` as a mask over its source: ``source`` (x as it was, flattened over the mask's axes),
    ``mask`` (an i1 vector over its first axis), ``count`` (how many are true), and the bounds of the
    source's values (numpy/_core.py, value_bounds)."""

    source: TracedArray
    mask: Value
    count: Value
    bounds: tuple | None

    def filled(self, fill) -> TracedArray:
        """The source with the rows the mask leaves out replaced by ``fill``."""
        return where_valid(self.mask, self.source, fill)


class Bounded:
    """An array whose extent along some axes is known only at run time (see the module docstring).

    One made by a mask carries its ``Selection`` while its data is unchanged (``pending``):
    reductions over the selected axis and elementwise operations with numbers or arrays broadcast
    against its rows read the source under the mask instead of the compacted rows (extent_ops.py),
    so that ``X[labels == k].mean(axis=0)`` is a masked sum, and the compaction (a scatter of the
    rows' positions and a gather), built where the mask was applied, is dead code XLA drops."""

    __array_priority__ = 2000
    defers_tracing = True   # TracedArray's protocols leave operations with a Bounded operand to it

    def __init__(self, data: TracedArray, windows, selection: Selection | None = None):
        self.data, self.windows = data, list(windows)
        assert len(self.windows) == data.ndim
        self._selection = None if selection is None else (selection, data.value)

    @classmethod
    def selected(cls, selection: Selection) -> "Bounded":
        """The selection's rows compacted to the front, in order, carrying the selection."""
        positions, _ = selected_positions(selection.mask)
        data = selection.source[with_value_bounds(wrap(positions), 0, max(selection.source.shape[0] - 1, 0))]
        n = data.shape[0]
        lanes = ops.compare(ops.iota((n,), _I64, 0), ops.broadcast_in_dim(selection.count, (n,), ()), "LT")
        data = without_derivatives_outside(lanes, data)
        if selection.bounds is not None:
            data = with_value_bounds(data, *selection.bounds)
        return cls(data, [Window(_const(0), selection.count)] + [None] * (data.ndim - 1), selection)

    @property
    def pending(self) -> Selection | None:
        """The selection this array is, while its data has not been written since."""
        if self._selection is None or self.data.value is not self._selection[1]:
            return None
        return self._selection[0]

    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)
    scalar = False
    weak = None

    @property
    def shape(self) -> tuple:
        """The shape, with the run-time lengths as traced Python ints."""
        return tuple(n if w is None else traced_int(w.length) for n, w in zip(self.data.shape, self.windows))

    @property
    def size(self):
        size = 1
        for n in self.shape:
            size = size * n
        return size

    def __repr__(self):
        return self._text("repr()")

    def __str__(self):
        return self._text("str()")

    def __format__(self, spec):
        return self._text("formatting")

    def _text(self, what):
        """Its trace's text, for cofactor's own messages and a print at trace time; asked by the program (a
        message, a log of it), a clear error: the text would be the trace's ("Bounded(...)")."""
        trace = context.current() if context.is_tracing() else None
        if trace is not None and not trace.printing_now and asked_by_user_code():
            raise located(ConcretizationError(
                f"{what} of an array whose length is known only at run time needs its values, which are only known "
                "when the compiled function runs: give it to print(...), which prints it then, or return it"))
        return f"Bounded(max_shape={self.data.shape}, dtype={self.dtype})"

    def __len__(self):
        _unsupported("len()")

    def __iter__(self):
        _unsupported("iteration")

    def __array__(self, dtype=None, copy=None):
        _unsupported("conversion to a NumPy array")

    def __bool__(self):
        _unsupported("bool()")

    def __float__(self):
        _unsupported("float()")

    def __int__(self):
        _unsupported("int()")

    def __index__(self):
        _unsupported("use as an index")

    def __complex__(self):
        _unsupported("complex()")

    def __getattr__(self, name):
        """An ndarray method or attribute that has no implementation here is unsupported (not
        an AttributeError of this class)."""
        if not name.startswith("_") and hasattr(np.ndarray, name):
            _unsupported(f"ndarray.{name}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def as_array(self, numpy=True) -> "Bounded":
        """What NumPy makes of it (``numpy``; else what Python's builtins iterate: a list of run-time length is a
        list of its items, numpy/extent_lists.py)."""
        return self

    def valid(self, axes=None) -> Value | None:
        """An i1 array of the data's shape: true in valid lanes along ``axes`` (all bounded axes by default)."""
        return valid_lanes(self.data.shape, self.windows, axes)

    def filled(self, fill, axes=None) -> TracedArray:
        """The data with invalid lanes along ``axes`` replaced by ``fill``."""
        mask = self.valid(axes)
        return self.data if mask is None else where_valid(mask, self.data, fill)

    # A pytree node (pytree.py): control flow carries its data and its windows' bounds as it carries arrays.
    # The same bound is the same leaf at every flattening (a loop's condition that only reads leaves its
    # variables' leaves as they were: a new leaf each time looked like a rebinding, and rotated the loop,
    # whose trip count Enzyme's reverse mode then could not see).
    def tree_flatten(self):
        leaves = self.__dict__.setdefault("_leaves", {})
        bounds = []
        for v in (v for w in self.windows if w is not None for v in (w.start, w.length)):
            if id(v) not in leaves or leaves[id(v)].value is not v:
                leaves[id(v)] = TracedArray(v, scalar=True)
            bounds.append(leaves[id(v)])
        return [self.data, *bounds], tuple(w is not None for w in self.windows)

    @classmethod
    def tree_unflatten(cls, windowed, children):
        data, bounds = children[0], iter(children[1:])
        windows = [Window(i64(next(bounds)), i64(next(bounds))) if w else None for w in windowed]
        return cls(data, windows)

    def output(self):
        """What the compiled function returns for it: the data with every window moved to lane 0,
        and [(axis, length)] (the caller cuts the data to the lengths)."""
        v = self.data.value
        for axis, w in enumerate(self.windows):
            if w is not None:
                v = shifted(v, axis, sub(_const(0), w.start), v.shape[axis])
        return v, [(axis, w.length) for axis, w in enumerate(self.windows) if w is not None]

    # --- NumPy's protocols: the implementations are in extent_ops.py ------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "at" and not isinstance(inputs[0], Bounded):  # np.add.at(x, idx[:b], v): x's own
            return call_ufunc(ufunc, method, inputs, kwargs)
        if method != "__call__" or kwargs.get("out") is not None:
            _unsupported(f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
                         + (" with out=" if kwargs.get("out") is not None else ""))
        return OPERATIONS["ufunc"](ufunc, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        impl = OPERATIONS.get(func)
        if impl is None:
            _unsupported(f"numpy.{getattr(func, '__name__', func)}")
        return impl(*args, **kwargs)

    def __getitem__(self, index):
        return OPERATIONS["getitem"](self, index)

    def __setitem__(self, index, v):
        OPERATIONS["setitem"](self, index, v)


OPERATIONS: dict = {}  # NumPy function (or "ufunc", "getitem", "setitem", a method's name) -> implementation


def operation(*keys):
    def register(impl):
        for key in keys:
            OPERATIONS[key] = impl
        return impl
    return register


def bounded(result, windows):
    """``result`` (a TracedArray, or a tuple of them) as Bounded arrays with ``windows``; a result with
    no run-time axis left stays a TracedArray."""
    if isinstance(result, tuple):
        return tuple(bounded(r, windows) for r in result)
    if all(w is None for w in windows):
        return result
    return Bounded(asarray(result), windows)


def as_data(x) -> TracedArray:
    return x.data if isinstance(x, Bounded) else asarray(x)


def value_of(x) -> Value:
    return x.data.value if isinstance(x, Bounded) else value(x)
