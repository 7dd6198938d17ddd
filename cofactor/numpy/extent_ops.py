"""NumPy's operations on arrays with run-time extents (``Bounded``, extent.py; selection.py makes
them).  Each says what it does with the invalid lanes."""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, located
from ..ir import ops
from ..ir.core import Value
from ..tracing import context, python_ints
from ..tracing.array import TracedArray
from ..tracing.checks import numpy_error_if
from ..tracing.views import DynamicBlock, Run
from ._core import asarray, axis_index, axis_tuple, convert_like_numpy, value, wrap
from .extent import (Bounded, Selection, Window, _both, _check_lengths, _const, _known, _same, _unsupported, add,
                     as_data, bounded, clamp, i64, operation, selected_positions, shifted, slice_run, slice_window, sub, traced_int)

_I64 = np.dtype(np.int64)


# --- alignment: operands whose windows are lane for lane the same --------------------------------------

def aligned(operands):
    """The operands' data, moved so that each run-time axis has the window of the first operand bounded
    on it (a static operand of more than one lane there must have its length: checked at run time),
    and the result's windows.  Numbers and 0-d operands pass as they are."""
    rank = max(np.ndim(as_data(x)) if isinstance(x, Bounded) else np.ndim(x) for x in operands)
    windows, extents = [None] * rank, [None] * rank
    for x in operands:
        if isinstance(x, Bounded):
            lead = rank - x.ndim
            for a, w in enumerate(x.windows):
                if w is not None and windows[lead + a] is None:
                    windows[lead + a], extents[lead + a] = w, x.data.shape[a]
    out = []
    for x in operands:
        if not isinstance(x, Bounded) and np.ndim(x) == 0:
            out.append(x)
            continue
        data = as_data(x)
        v, lead = data.value, rank - data.ndim
        for a in range(data.ndim):
            w, n = windows[lead + a], extents[lead + a]
            mine = x.windows[a] if isinstance(x, Bounded) else None
            if w is None:
                continue
            if mine is None:
                m = data.shape[a]
                if m == 1:
                    continue  # broadcast, as NumPy does
                if m > n:
                    raise located(ValueError(f"operands could not be broadcast together: a length of {m} against one "
                                             f"of at most {n}"))
                _check_lengths(w, m)
                if m != n:  # (of n lanes, only a window starting at 0 can have n)
                    v = shifted(v, a, w.start, n)
            else:
                _check_lengths(w, mine, broadcast="both")
                if not (w.same_start(mine) and data.shape[a] == n):
                    v = shifted(v, a, sub(w.start, mine.start), n)
        out.append(data if v is data.value else TracedArray(v))
    return out, windows


def _shared_selection(inputs) -> Selection | None:
    """The pending selection (extent.py) of every Bounded operand, where they share one mask and the
    other operands are numbers or arrays broadcast against its rows (so the result's rows are the
    source's rows, computed under the same mask); else None."""
    selections = [x for x in inputs if isinstance(x, Bounded)]
    first = selections[0]
    if any(x.pending is None or x.ndim != first.ndim or not _same(x.pending.mask, first.pending.mask)
           for x in selections):
        return None
    for shape in [np.shape(x) for x in inputs if not isinstance(x, Bounded)]:
        if len(shape) >= first.ndim and (len(shape) > first.ndim or shape[0] != 1):
            return None
    return first.pending


@operation("ufunc")
def ufunc_call(ufunc, inputs, kwargs):
    if ufunc is np.matmul:
        return matmul(*inputs, **kwargs)
    selection = None if "where" in kwargs else _shared_selection(inputs)
    args, windows = aligned(inputs)
    result = bounded(ufunc(*args, **kwargs), windows)
    if selection is None:
        return result
    # The same on the selection's source: what a reduction over it reads (the result's rows, unused, are dropped).
    on_source = ufunc(*[x.pending.source if isinstance(x, Bounded) else x for x in inputs], **kwargs)
    pairs = zip(result, on_source) if isinstance(result, tuple) else [(result, on_source)]
    selected = [Bounded(r.data, r.windows, selection._replace(source=asarray(s), bounds=None)) for r, s in pairs]
    return tuple(selected) if isinstance(result, tuple) else selected[0]


def assign(target: Bounded, v):
    """``target[...] = v``: the valid lanes take ``v`` (cast as NumPy's assignment casts), others keep theirs."""
    if np.ndim(as_data(v)) > target.ndim:
        raise located(ValueError(f"could not broadcast input array of {np.ndim(as_data(v))} dimensions into one of "
                                 f"{target.ndim}"))
    (_, new), _ = aligned([target, v])
    new = value(new, target.dtype) if np.ndim(new) == 0 and not isinstance(new, TracedArray) else \
        convert_like_numpy(value(new), target.dtype)
    shape = target.data.shape
    new = ops.broadcast_in_dim(new, shape, range(len(shape) - new.type.rank, len(shape)))
    target.data.value = ops.select(target.valid(), new, target.data.value)


def update(target: Bounded, ufunc, *other):
    """``target op= other``: in place (through the view it may be), as NumPy's ``out=`` casts."""
    result = ufunc(target, *other)
    if as_data(result).shape != target.data.shape:
        raise located(ValueError(f"non-broadcastable output operand with shape {target.shape}"))
    if not np.can_cast(result.dtype, target.dtype, casting="same_kind"):
        raise located(TypeError(f"Cannot cast ufunc '{ufunc.__name__}' output from {result.dtype!r} to "
                                f"{target.dtype!r} with casting rule 'same_kind'"))
    assign(target, result)
    return target


_OPERATORS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
              "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "matmul": np.matmul,
              "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "lshift": np.left_shift,
              "rshift": np.right_shift}
for _name, _ufunc in _OPERATORS.items():
    setattr(Bounded, f"__{_name}__", (lambda u: lambda self, other: u(self, other))(_ufunc))
    setattr(Bounded, f"__r{_name}__", (lambda u: lambda self, other: u(other, self))(_ufunc))
    setattr(Bounded, f"__i{_name}__", (lambda u: lambda self, other: update(self, u, other))(_ufunc))
for _name, _ufunc in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                      "gt": np.greater, "ge": np.greater_equal}.items():
    setattr(Bounded, f"__{_name}__", (lambda u: lambda self, other: u(self, other))(_ufunc))
for _name, _ufunc in {"neg": np.negative, "pos": np.positive, "abs": np.absolute, "invert": np.invert}.items():
    setattr(Bounded, f"__{_name}__", (lambda u: lambda self: u(self))(_ufunc))
Bounded.__hash__ = None


# --- reductions: invalid lanes hold the identity -----------------------------------------------------

def _lowest(dtype):
    if dtype.kind == "f":
        return -np.inf
    return False if dtype == np.bool_ else np.iinfo(dtype).min


def _highest(dtype):
    if dtype.kind == "f":
        return np.inf
    return True if dtype == np.bool_ else np.iinfo(dtype).max


_IDENTITIES = {np.sum: lambda d: 0, np.prod: lambda d: 1, np.any: lambda d: False, np.all: lambda d: True,
               np.max: _lowest, np.amax: _lowest, np.min: _highest, np.amin: _highest}
_NO_IDENTITY = {np.max: "maximum", np.amax: "maximum", np.min: "minimum", np.amin: "minimum"}


def _reduced(b: Bounded, axis, keepdims):
    """(the reduced axes, those of them with a window, the windows of the result).  A pending
    selection reduced over its axis stays pending (``_input`` reads it under its mask)."""
    axes = axis_tuple(axis, b.ndim)
    if b.pending is not None and 0 in axes:
        return axes, (0,), [None] * (b.ndim if keepdims else b.ndim - len(axes))
    windowed = tuple(a for a in axes if b.windows[a] is not None)
    windows = [None if a in axes else w for a, w in enumerate(b.windows)] if keepdims else \
        [w for a, w in enumerate(b.windows) if a not in axes]
    return axes, windowed, windows


def _count(b: Bounded, axes) -> Value:
    """How many elements the reduction over ``axes`` takes (an int64 scalar)."""
    count = _const(1)
    for a in axes:
        n = b.windows[a].length if b.windows[a] is not None else _const(b.data.shape[a])
        count = ops.binary("stablehlo.multiply", count, n) if _known(count) != 1 else n
    return count


def _input(b: Bounded, fill, axes, windowed) -> TracedArray:
    """What a reduction over ``axes`` (of which ``windowed`` have windows) reads: ``b``'s lanes with the
    invalid ones ``fill``; of a pending selection reduced over its axis, its source under the mask."""
    return b.pending.filled(fill) if b.pending is not None and 0 in axes else b.filled(fill, windowed)


def _refuse_out_and_where(name, out, where):
    for keyword, given in (("out", out), ("where", where)):
        if given is not None and given is not True:
            _unsupported(f"numpy.{name} with {keyword}=")


def _none_empty(b: Bounded, windowed, message):
    for a in windowed:
        numpy_error_if(ops.compare(b.windows[a].length, _const(0), "EQ"), lambda: ValueError(message))


def _reduction(func):
    def reduce(b, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        _refuse_out_and_where(func.__name__, out, kwargs.pop("where", None))
        axes, windowed, windows = _reduced(b, axis, keepdims)
        if func in _NO_IDENTITY and "initial" not in kwargs:
            _none_empty(b, windowed, f"zero-size array to reduction operation {_NO_IDENTITY[func]} which has no "
                                     "identity")
        if dtype is not None:
            kwargs["dtype"] = dtype
        filled = _input(b, _IDENTITIES[func](b.dtype), axes, windowed)
        return bounded(func(filled, axis=axis, keepdims=keepdims, **kwargs), windows)
    return reduce


for _func in _IDENTITIES:
    operation(_func)(_reduction(_func))


@operation(np.count_nonzero)
def count_nonzero(b, axis=None, *, keepdims=False):
    return np.sum(b != 0, axis=axis, keepdims=keepdims)


def _weak_count(b, axes, ddof=0) -> TracedArray:
    """How many elements a mean (``ddof``: a variance) divides by, as NumPy does (``max(n - ddof, 0)``), as a
    Python number: NEP 50 keeps a float32 mean float32."""
    weak = float if isinstance(ddof, float) else int
    dtype = np.dtype(np.float64 if weak is float else np.int64)
    n = ops.binary("stablehlo.subtract", ops.convert(_count(b, axes), dtype), ops.constant(np.asarray(ddof, dtype)))
    return TracedArray(ops.binary("stablehlo.maximum", n, ops.constant(np.zeros((), dtype))), scalar=True, weak=weak)


@operation(np.ptp)
def ptp(b, axis=None, out=None, keepdims=False):
    _refuse_out_and_where("ptp", out, None)
    return np.subtract(np.max(b, axis=axis, keepdims=keepdims), np.min(b, axis=axis, keepdims=keepdims))


def _nan_reduction(func, fill):
    """NumPy's nan-reduction: ``func`` of the lanes with NaN replaced by ``fill`` (the reduction's identity);
    a max or min (``fill`` infinite) of NaNs alone is NaN, as NumPy's (which warns)."""
    def reduce(b, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        _refuse_out_and_where(f"nan{func.__name__}", out, kwargs.pop("where", None))
        options = dict(kwargs, axis=axis, keepdims=keepdims, **({"dtype": dtype} if dtype is not None else {}))
        if b.dtype.kind not in "fc":
            return func(b, **options)
        nan = np.isnan(b)
        result = func(np.where(nan, np.asarray(fill, b.dtype), b), **options)
        return np.where(np.all(nan, axis=axis, keepdims=keepdims), np.nan, result) if np.isinf(fill) else result
    return reduce


for _func, _nan_func, _fill in [(np.sum, np.nansum, 0.0), (np.prod, np.nanprod, 1.0), (np.max, np.nanmax, -np.inf),
                                (np.min, np.nanmin, np.inf)]:
    operation(_nan_func)(_nan_reduction(_func, _fill))


@operation(np.nanmean)
def nanmean(b, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    _refuse_out_and_where("nanmean", out, kwargs.pop("where", None))
    if b.dtype.kind not in "fc":
        return np.mean(b, axis=axis, dtype=dtype, keepdims=keepdims)
    return np.true_divide(np.nansum(b, axis=axis, dtype=dtype, keepdims=keepdims),
                          np.sum(~np.isnan(b), axis=axis, keepdims=keepdims))


@operation(np.mean)
def mean(b, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _refuse_out_and_where("mean", out, where)
    axes, windowed, windows = _reduced(b, axis, keepdims)
    if dtype is None and b.dtype.kind in "biu":
        dtype = np.float64
    total = np.sum(_input(b, 0, axes, windowed), axis=axis, dtype=dtype, keepdims=keepdims)
    return bounded(np.true_divide(total, _weak_count(b, axes)), windows)


@operation(np.var, np.std)
def var(b, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, std=False):
    _refuse_out_and_where("std" if std else "var", out, where)
    axes, windowed, windows = _reduced(b, axis, keepdims)
    centered = b - mean(b, axis, dtype, keepdims=True)
    squares = np.real(centered * np.conjugate(centered)) if b.dtype.kind == "c" else centered * centered
    total = np.sum(_input(squares, 0, axes, windowed), axis=axis, keepdims=keepdims)
    result = np.true_divide(total, _weak_count(b, axes, ddof))
    return bounded(np.sqrt(result) if std else result, windows)


operation(np.std)(lambda *args, **kwargs: var(*args, **kwargs, std=True))


def _arg_reduction(func, fill):
    def reduce(b, axis=None, out=None, *, keepdims=False):
        if out is not None:
            _unsupported(f"numpy.{func.__name__} with out=")
        if axis is None:
            b = ravel(b)
        ax = 0 if axis is None else axis_index(axis, b.ndim)
        w = b.windows[ax]
        _, _, windows = _reduced(b, ax, keepdims)
        if w is None:
            return bounded(func(b.data, axis=ax, keepdims=keepdims), windows)
        _none_empty(b, (ax,), f"attempt to get {func.__name__} of an empty sequence")
        found = func(b.filled(fill(b.dtype), (ax,)), axis=ax, keepdims=keepdims)
        return bounded(found - traced_int(w.start), windows)
    return reduce


operation(np.argmax)(_arg_reduction(np.argmax, _lowest))
operation(np.argmin)(_arg_reduction(np.argmin, _highest))


# --- contractions: invalid lanes hold zeros ------------------------------------------------------------

def _contract(a, b, a_axis, b_axis, compute):
    """``compute(a, b)`` contracting ``a_axis`` of ``a`` with ``b_axis`` of ``b``, each with its invalid lanes
    (and the other's, aligned) zero."""
    wa = a.windows[a_axis] if isinstance(a, Bounded) else None
    wb = b.windows[b_axis] if isinstance(b, Bounded) else None
    da, db = as_data(a), as_data(b)
    va, vb = da.value, db.value
    if wa is not None:
        vb, w = _onto(b, db, b_axis, wa, da.shape[a_axis]), wa
    elif wb is not None:
        va, w = _onto(a, da, a_axis, wb, db.shape[b_axis]), wb
    else:
        w = None
    if w is not None and da.ndim == db.ndim == 1 and np.result_type(da.dtype, db.dtype) != np.bool_:
        # Two vectors: their lanes' products, the invalid ones zero, summed: one pass XLA fuses (a
        # dot of two masked copies writes both out first).
        product = np.multiply(TracedArray(va), TracedArray(vb))
        return np.sum(TracedArray(_zero_outside(product.value, 0, w)), dtype=product.dtype)
    if w is not None:
        va = _zero_outside(va, a_axis, w)
        vb = _zero_outside(vb, b_axis, w)
    result = compute(TracedArray(va), TracedArray(vb))
    windows = [x for k, x in enumerate(a.windows if isinstance(a, Bounded) else [None] * da.ndim) if k != a_axis] + \
        [x for k, x in enumerate(b.windows if isinstance(b, Bounded) else [None] * db.ndim) if k != b_axis]
    return bounded(result, windows)


def _onto(x, data, axis, w: Window, n: int) -> Value:
    """``x``'s data with its ``axis`` moved into window ``w`` of ``n`` lanes (checking that the lengths agree)."""
    mine = x.windows[axis] if isinstance(x, Bounded) else None
    if mine is None:
        m = data.shape[axis]
        if m > n:
            raise located(ValueError(f"shapes not aligned: a length of {m} against one of at most {n}"))
        _check_lengths(w, m, "shapes not aligned", broadcast=None)
        return data.value if m == n else shifted(data.value, axis, w.start, n)
    _check_lengths(w, mine, "shapes not aligned", broadcast=None)
    if w.same_start(mine) and data.shape[axis] == n:
        return data.value
    return shifted(data.value, axis, sub(w.start, mine.start), n)


def _zero_outside(v: Value, axis, w: Window) -> Value:
    return ops.select(w.valid(v.shape, axis), v, ops.broadcast_in_dim(ops.constant(np.zeros((), v.dtype)), v.shape, ()))


@operation(np.dot)
def dot(a, b, out=None):
    if out is not None:
        _unsupported("numpy.dot with out=")
    na, nb = np.ndim(as_data(a)), np.ndim(as_data(b))
    if na == 0 or nb == 0:
        return np.multiply(a, b)
    return _contract(a, b, na - 1, max(nb - 2, 0), np.dot)


def matmul(a, b, **kwargs):
    na, nb = np.ndim(as_data(a)), np.ndim(as_data(b))
    if na == 0 or nb == 0:
        raise located(ValueError("matmul: Input operand does not have enough dimensions"))
    if na > 2 or nb > 2 or kwargs:
        _unsupported("numpy.matmul of stacks of matrices (or with keyword arguments)")
    return _contract(a, b, na - 1, max(nb - 2, 0), np.matmul)


operation(np.matmul)(matmul)


@operation(np.inner)
def inner(a, b):
    na, nb = np.ndim(as_data(a)), np.ndim(as_data(b))
    if na == 0 or nb == 0:
        return np.multiply(a, b)
    return _contract(a, b, na - 1, nb - 1, np.inner)


@operation(np.vdot)
def vdot(a, b):
    if np.ndim(as_data(a)) != 1 or np.ndim(as_data(b)) != 1:
        _unsupported("numpy.vdot of arrays of several dimensions")
    return _contract(np.conjugate(a), b, 0, 0, np.dot)


@operation(np.outer)
def outer(a, b, out=None):
    if out is not None or np.ndim(as_data(a)) != 1 or np.ndim(as_data(b)) != 1:
        _unsupported("numpy.outer of arrays of several dimensions (or with out=)")
    wa = a.windows[0] if isinstance(a, Bounded) else None
    wb = b.windows[0] if isinstance(b, Bounded) else None
    return bounded(np.outer(as_data(a), as_data(b)), [wa, wb])


# --- order: flip, sort, cumulative sums ----------------------------------------------------------

@operation(np.flip)
def flip(b, axis=None):
    windows = list(b.windows)
    for a in axis_tuple(axis, b.ndim):
        w = windows[a]
        if w is not None:  # lanes start .. start+length-1 are lanes n-start-length .. n-1-start of the reversed axis
            windows[a] = Window(sub(_const(b.data.shape[a]), add(w.start, w.length)), w.length)
    return Bounded(np.flip(b.data, axis), windows)


operation(np.flipud)(lambda b: flip(b, 0))
operation(np.fliplr)(lambda b: flip(b, 1))


def _cumulative(func, identity):
    def accumulate(b, axis=None, dtype=None, out=None):
        if out is not None:
            _unsupported(f"numpy.{func.__name__} with out=")
        if axis is None:
            b = ravel(b)
        ax = 0 if axis is None else axis_index(axis, b.ndim)
        return Bounded(asarray(func(b.filled(identity, (ax,)), axis=ax, dtype=dtype)), b.windows)
    return accumulate


operation(np.cumsum)(_cumulative(np.cumsum, 0))
operation(np.cumprod)(_cumulative(np.cumprod, 1))


@operation(np.sort)
def sort(b, axis=-1, kind=None, order=None, *, stable=None):
    if axis is None:
        b = ravel(b)
    ax = 0 if axis is None else axis_index(axis, b.ndim)
    w = b.windows[ax]
    if w is None:
        return Bounded(asarray(np.sort(b.data, axis=ax)), b.windows)
    if b.dtype.kind == "c":
        _unsupported("numpy.sort of complex values")
    windows = list(b.windows)
    windows[ax] = Window(_const(0), w.length)
    # The values gathered in argsort's order (not a sort of the values filled with NaN after the valid
    # lanes: a derivative through that sort reached the NaNs).
    order = np.argsort(b, axis=ax)
    lanes = np.clip(order.data + traced_int(w.start), 0, b.data.shape[ax] - 1)
    ordered = np.take_along_axis(b.data, lanes, axis=ax)
    return Bounded(asarray(ordered), windows)


def sort_in_place(b, axis=-1, kind=None, order=None, *, stable=None):
    assign(b, sort(b, axis))


# --- the rest of NumPy's functions and methods that keep extents ------------------------------------------

@operation(np.where)
def where(condition, *xy):
    if not xy:
        return np.nonzero(condition)
    if len(xy) != 2:
        raise located(ValueError("either both or neither of x and y should be given"))
    args, windows = aligned([condition, *xy])
    return bounded(np.where(*args), windows)


def _elementwise(func, positions):
    """``func`` where the arguments at ``positions`` are lined up lane for lane and the result has their
    windows (it computes each element from theirs alone); the others are as for an ordinary array (one of
    run-time length there: a clear error, see searchsorted for its own)."""
    def apply(*args, **kwargs):
        args = list(args)
        at = [p for p in positions if p < len(args)]
        if any(isinstance(x, Bounded) for p, x in enumerate(args) if p not in at):
            _unsupported(f"numpy.{func.__name__} with such an array as its {'xp' if func is np.interp else 'bins'}")
        lined_up, windows = aligned([args[p] for p in at])
        for p, x in zip(at, lined_up):
            args[p] = x
        return bounded(func(*args, **kwargs), windows)
    return apply


@operation(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    """Into a sorted array of run-time length (``np.searchsorted(np.unique(x), x)``): its lanes moved to the
    front, the rest filled past every value (NaN, which NumPy sorts last, or the dtype's greatest), and the
    position kept within its length."""
    if not isinstance(a, Bounded):
        return _elementwise(np.searchsorted, (1,))(a, v, side=side, sorter=sorter)
    if sorter is not None or a.ndim != 1:
        _unsupported("numpy.searchsorted with sorter= into it" if sorter is not None else "numpy.searchsorted")
    data, [(_, length)] = a.output()
    data, n = TracedArray(data), traced_int(length)
    past = np.nan if data.dtype.kind in "fc" else np.iinfo(data.dtype).max if data.dtype.kind in "iu" else True
    filled = np.where(np.arange(data.shape[0]) < n, data, np.asarray(past, data.dtype))
    found = np.searchsorted(filled, as_data(v), side=side)
    return bounded(np.minimum(found, n), v.windows if isinstance(v, Bounded) else [None] * np.ndim(found))


for _func, _positions in [(np.isclose, (0, 1)), (np.nan_to_num, (0,)), (np.interp, (0,)),
                          (np.digitize, (0,)), (np.sinc, (0,)), (np.polyval, (1,)), (np.fix, (0,)),
                          (np.isposinf, (0,)), (np.isneginf, (0,)), (np.angle, (0,))]:
    operation(_func)(_elementwise(_func, _positions))


@operation(np.clip)
def clip(b, a_min=None, a_max=None, out=None, **kwargs):
    if out is not None:
        _unsupported("numpy.clip with out=")
    operands = [b] + [x for x in (a_min, a_max) if x is not None]
    args, windows = aligned(operands)
    lo = args[1] if a_min is not None else None
    hi = args[-1] if a_max is not None else None
    return bounded(np.clip(args[0], lo, hi, **kwargs), windows)


@operation(np.round, np.around)
def round_(b, decimals=0, out=None):
    if out is not None:
        _unsupported("numpy.round with out=")
    return Bounded(asarray(np.round(b.data, decimals)), b.windows)


@operation(np.copy)
def copy(b, *args, **kwargs):
    return Bounded(asarray(np.copy(b.data)), b.windows)


def _like(func):
    """``np.zeros_like(x[:k])``: of the same run-time extent (``func`` of the stored lanes)."""
    def like(b, *args, **kwargs):
        return Bounded(asarray(func(b.data, *args, **kwargs)), b.windows)
    return like


for _func in (np.zeros_like, np.ones_like, np.empty_like, np.full_like):
    operation(_func)(_like(_func))


def astype(b, dtype, *args, **kwargs):
    return Bounded(asarray(b.data.astype(dtype)), b.windows)


@operation(np.transpose)
def transpose(b, axes=None):
    perm = list(range(b.ndim))[::-1] if axes is None else [axis_index(a, b.ndim) for a in axes]
    return Bounded(asarray(np.transpose(b.data, perm)), [b.windows[p] for p in perm])


for _func in (np.real, np.imag):
    operation(_func)((lambda f: lambda b: Bounded(asarray(f(b.data)), b.windows))(_func))


@operation(np.ravel)
def ravel(b, order="C"):
    """A vector: rows of a run-time count (the first axis's window) are one window of their elements."""
    if b.ndim == 1:
        return b
    if order not in ("C", "A", "K") or any(w is not None for w in b.windows[1:]):
        _unsupported("numpy.ravel of an array whose length is known at run time along other than its first axis")
    row = int(np.prod(b.data.shape[1:], dtype=np.int64))
    w, scale = b.windows[0], _const(row)
    return Bounded(asarray(np.reshape(b.data, (b.data.shape[0] * row,))),
                   [Window(*(ops.binary("stablehlo.multiply", v, scale) for v in (w.start, w.length)))])


@operation(np.linalg.norm)
def norm(b, ord=None, axis=None, keepdims=False):
    if ord is not None or axis is not None or b.ndim != 1:
        _unsupported("numpy.linalg.norm other than the 2-norm of a vector")
    return np.sqrt(np.sum(np.real(b * np.conjugate(b)) if b.dtype.kind == "c" else b * b))


@operation(np.shape)
def shape(b):
    return b.shape


@operation(np.ndim)
def ndim(b):
    return b.ndim


for _name in ["sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin", "any", "all", "cumsum",
              "cumprod", "dot", "clip", "round", "copy", "nonzero", "transpose", "ravel", "flatten", "argsort"]:
    _func = np.ravel if _name == "flatten" else getattr(np, _name)
    setattr(Bounded, _name, (lambda f: lambda self, *a, **k: f(self, *a, **k))(_func))
Bounded.astype = astype
Bounded.sort = sort_in_place
Bounded.T = property(lambda self: transpose(self))
Bounded.fill = lambda self, v: assign(self, v)


# --- indexing -------------------------------------------------------------------------------------

def _expand(index, ndim):
    from .indexing import _expand as expand
    return expand(index, ndim)


def _traced_slice(item: slice, n: int, leading: bool):
    """(the data index, the window) of a slice with traced bounds on an axis of ``n``: the whole axis, the
    lanes its bounds can reach where they are known (``x[:i]`` with ``i`` a loop's counter, below the
    counter's greatest value) if the axis is ``leading`` (the ones before it are indexed by integers or
    have length 1: the lanes are one block of memory), or with cf.jit's ``max_slice`` (shorter than the
    axis) that many lanes from where a forward slice starts.  Lanes are narrowed only where that saves a
    quarter of the axis or more: an array narrowed by less saves little, and costs a realignment (a pad and
    a dynamic_slice of the whole array) wherever it meets one spanning the axis.  (A column block narrowed,
    Gram-Schmidt's ``A[:, k + 1:] -= ...`` in a loop in parts, took 1.7x the time of the whole columns:
    XLA copied the arrays the loop writes.)"""
    w, backwards = slice_window(item, n)
    limit = context.current().options.max_slice
    lo, hi = (0, n) if backwards or not leading else _reach(item, n)
    if 4 * (hi - lo) <= 3 * n and (limit is None or limit >= hi - lo):
        return slice(lo, hi), Window(clamp(_const(0), sub(w.start, _const(lo)), _const(hi - lo)), w.length)
    if limit is None or limit >= n or backwards:
        return slice(None, None, -1) if backwards else slice(None), w
    _check_max_slice(w.length, limit)
    first = clamp(_const(0), w.start, _const(n - limit))  # the block's start, as dynamic_slice moves it
    return DynamicBlock(first, limit), Window(sub(w.start, first), w.length)


def _check_max_slice(length: Value, limit: int):
    shown = TracedArray(length, scalar=True)
    numpy_error_if(ops.compare(length, _const(limit), "GT"), lambda: UnsupportedError(
        f"a slice of {shown} elements, more than cf.jit's max_slice={limit}: give a larger max_slice"))


def _strided_run(item: slice, n: int, w: Window | None):
    """(the data index, the window) of a slice with a static step other than 1 and -1 on an axis of ``n``
    lanes whose bounds, or the axis's window ``w``, are known only at run time: a Run of as many lanes as
    the slice can have (from the values its bounds lie between, or cf.jit's ``max_slice``), its window
    from lane 0.  (Its lanes are not one block of the axis: it reads them, and writes them back, from
    the axis padded on both sides.)"""
    first, length, step = slice_run(item, n if w is None else w.length)
    if w is not None:
        first = add(w.start, first)
    lo, hi = _reach(item, n) if w is None and step > 0 else (0, n)
    count = -(-(hi - lo) // abs(step))
    limit = context.current().options.max_slice
    if limit is not None and limit < count:
        _check_max_slice(length, limit)
        count = limit
    return Run(first, count, step), Window(_const(0), length)


def _reach(item: slice, n: int) -> tuple[int, int]:
    """The lanes [lo, hi) of an axis of ``n`` that a forward slice can cover, from the values its bounds
    are known to lie between (python_ints.bounds_of: a loop's counter, a Python int); (0, n) where a
    bound is unknown or may be negative (it may count from the end)."""
    def known(bound, default):
        if bound is None:
            return (default, default)
        within = python_ints.bounds_of(bound)
        return within if within is not None and within[0] >= 0 else None
    start, stop = known(item.start, 0), known(item.stop, n)
    lo = min(start[0], n) if start else 0
    hi = min(stop[1], n) if stop else n
    return (lo, hi) if hi > lo else (0, n)


def resolved(data: TracedArray, data_windows, index):
    """The basic index of ``data`` (with ``data_windows``) that ``index`` is, and the result's windows: a
    slice with traced bounds becomes a window (within the one the axis has), an element of a window an
    index checked against its length."""
    items, windows, data_items = _expand(index, data.ndim), [], []
    axis, leading = 0, True
    arrays = [item for item in items if _is_array(item)]
    if len(arrays) > 1 or arrays and any(not isinstance(item, slice) and item is not None and not _is_array(item)
                                         for item in items):
        _unsupported("advanced indexing with several index arrays, or with an index array and integers")
    for item in items:
        if item is None:
            data_items.append(None)
            windows.append(None)
            continue
        w, n = data_windows[axis], data.shape[axis]
        if _is_array(item):
            data_items.append(_lanes(item, w, axis))
            windows.extend([None] * np.ndim(as_data(item)))  # (the index's own windows come with the read)
            leading = False
            axis += 1
            continue
        if isinstance(item, slice):
            traced = any(isinstance(x, TracedArray) for x in (item.start, item.stop, item.step))
            strided = item.step is not None and not isinstance(item.step, TracedArray) and \
                item.step.__index__() not in (1, -1)
            if strided and (traced or w is not None):
                data_item, window = _strided_run(item, n, w)
                data_items.append(data_item)
                windows.append(window)
            elif w is None and traced:
                data_item, w = _traced_slice(item, n, leading)
                data_items.append(data_item)
                windows.append(w)
            elif w is None:
                data_items.append(item)
                windows.append(None)
            elif all(x is None for x in (item.start, item.stop, item.step)):  # (not ==: a bound may be traced)
                data_items.append(item)
                windows.append(w)
            else:
                inner, backwards = slice_window(item, w.length)
                start = w.start
                if backwards:
                    start = sub(_const(n), add(w.start, w.length))
                data_items.append(slice(None, None, -1) if backwards else slice(None))
                windows.append(Window(add(start, inner.start), inner.length))
        elif w is None:
            data_items.append(item)
        else:
            k = i64(item)
            k = ops.select(ops.compare(k, _const(0), "LT"), add(k, w.length), k)
            bad = ops.binary("stablehlo.or", ops.compare(k, _const(0), "LT"), ops.compare(k, w.length, "GE"))
            shown = TracedArray(i64(item), scalar=True), TracedArray(w.length, scalar=True)
            numpy_error_if(bad, lambda a=axis: IndexError(f"index {shown[0]} is out of bounds for axis {a} with "
                                                          f"size {shown[1]}"))
            data_items.append(TracedArray(add(w.start, k), scalar=True))
        leading = leading and (not isinstance(item, slice) or n == 1)
        axis += 1
    return tuple(data_items), windows


def _is_array(item) -> bool:
    """Whether an index item is an array of indices or a mask (advanced indexing)."""
    return isinstance(item, (Bounded, list, bool, np.bool_)) or \
        isinstance(item, (TracedArray, np.ndarray)) and np.ndim(item) > 0


def _lanes(item, w: Window | None, axis):
    """An integer index array into an axis with window ``w`` as lanes of the data: each checked against
    the window's length at run time (NumPy's IndexError), negatives counted from its end."""
    i = item if isinstance(item, Bounded) else asarray(item)
    if i.dtype == np.bool_:
        _unsupported("a boolean mask among other indices")
    if i.dtype.kind not in "iu":
        raise located(IndexError("arrays used as indices must be of integer (or boolean) type"))
    if w is None:
        return i
    length = traced_int(w.length)
    outside = (i < -length) | (i >= length)
    outside = outside.filled(False) if isinstance(outside, Bounded) else outside
    first = np.ravel(as_data(i))[np.argmax(np.ravel(outside))]
    numpy_error_if(value(np.any(outside)), lambda: IndexError(f"index {first} is out of bounds for axis {axis} "
                                                              f"with size {length}"))
    return np.where(i < 0, i + length, i) + traced_int(w.start)


@operation("getitem")
def getitem(b, index):
    if isinstance(index, Bounded) and index.dtype == np.bool_:
        return _masked(b, index)
    data_items, windows = resolved(b.data, b.windows, index)
    result = b.data[data_items]
    if isinstance(result, Bounded):  # an index array of run-time length: its windows where it put its axes
        return Bounded(result.data, [w or mine for w, mine in zip(result.windows, windows)])
    return bounded(result, windows)


def _masked(b: Bounded, mask: Bounded) -> Bounded:
    """``b[mask]`` of a vector and a mask of its length: its selected valid lanes, compacted to the front."""
    if b.ndim != 1 or mask.ndim != 1:
        _unsupported("a mask of several dimensions")
    (_, selects), _ = aligned([b, mask])
    positions, count = selected_positions(_both(value(selects), b.valid()))
    return Bounded(b.data[wrap(positions)], [Window(_const(0), count)])


@operation(np.isin)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Every element against every valid test value."""
    data = as_data(element)
    if isinstance(test_elements, Bounded):
        if test_elements.ndim != 1:
            _unsupported("numpy.isin with test values of several dimensions")
        hits = np.equal(np.expand_dims(data, -1), test_elements.data) & wrap(test_elements.valid())
    else:
        hits = np.equal(np.expand_dims(data, -1), np.ravel(asarray(test_elements)))
    found = np.any(hits, axis=-1)
    return bounded(np.logical_not(found) if invert else found,
                   element.windows if isinstance(element, Bounded) else [None] * data.ndim)


@operation("setitem")
def setitem(b, index, v):
    data_items, windows = resolved(b.data, b.windows, index)
    if any(_is_array(item) for item in data_items) and any(w is not None for w in windows):
        # (m[:, :k][rows] = v: the rows, with v in their valid lanes, written back through the index)
        if any(isinstance(item, Bounded) for item in data_items):
            _unsupported("a write through an index array of run-time length into axes of run-time length")
        selected = Bounded(b.data[data_items], windows)
        assign(selected, v)
        b.data[data_items] = selected.data
        return
    if all(w is None for w in windows):
        b.data[data_items] = v  # (a value with run-time lengths is fitted to it: indexing.setitem)
        return
    assign(Bounded(b.data[data_items], windows), v)
