"""Helpers shared by the NumPy implementations: lifting operands to IR values,
NEP 50 dtype promotion, broadcasting and axis normalisation, in NumPy's words."""
from __future__ import annotations

import collections
import functools
import platform

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..errors import UnsupportedError, numpy_rules
from ..ir import ops
from ..ir.core import Value
from ..ir.ops import compare  # noqa: F401  (comparison typed by the operands' dtype)
from ..tracing import context, python_ints
from ..tracing.array import TracedArray, defers_tracing
from ..tracing.views import ordered

PYTHON_SCALARS = (int, float, complex)  # not bool: NumPy treats True as np.bool_


def is_weak(x) -> bool:
    """A Python int, float or complex (or a traced one, carried through control flow): its dtype
    yields to arrays' under NEP 50."""
    return type(x) in PYTHON_SCALARS or isinstance(x, TracedArray) and x.weak not in (None, bool)


def dtype_of(x):
    """The dtype NumPy's promotion sees: a dtype, or the Python type of a weak scalar."""
    if isinstance(x, TracedArray):  # (a Python bool is NumPy's bool to NumPy's promotion: not weak)
        return x.weak if x.weak not in (None, bool) else x.dtype
    if is_weak(x):
        return type(x)
    traced = traced_sequence(x)  # (a list holding traced values: the dtype NumPy would stack them to)
    return traced.dtype if traced is not None else np.asarray(x).dtype


def result_type(*xs) -> np.dtype:
    return np.result_type(*[dtype_of(x)(0) if is_weak(x) else dtype_of(x) for x in xs])


def convert_like_numpy(v, target):
    """NumPy's casts: complex to real drops the imaginary part, anything to bool tests non-zero."""
    if v.dtype == target:
        return v
    if target == np.bool_:
        zero = full(v.shape, 0, v.dtype)
        return ops.compare(v, zero, "NE")
    if v.dtype.kind == "c" and target.kind != "c":
        v = ops.real(v)
    if v.dtype.kind == "f" and target.kind in "iu" and _X86_64:
        return _float_to_int(v, np.dtype(target))
    return ops.convert(v, target)


# NumPy's casts of floats that an integer dtype cannot hold are C's undefined conversions, so they are
# the host's: x86-64's are below; elsewhere (aarch64 saturates, as XLA's convert does) XLA's stand.
_X86_64 = platform.machine().lower() in ("x86_64", "amd64")


def _truncated(v, bits: int):
    """``v`` (floats) truncated to a ``bits``-bit signed int as x86-64's cvttsd2si does: the int's
    least value where it does not fit (out of range, or NaN), where XLA's convert saturates."""
    low = full(v.shape, -2.0 ** (bits - 1), v.dtype)
    fits = ops.binary("stablehlo.and", ops.compare(v, low, "GE"),
                      ops.compare(v, full(v.shape, 2.0 ** (bits - 1), v.dtype), "LT"))
    kind = np.dtype(f"int{bits}")
    return ops.select(fits, ops.convert(v, kind), full(v.shape, np.iinfo(kind).min, kind))


def _float_to_int(v, target):
    """NumPy's float-to-int cast on x86-64, the C cast it compiles to, for values the integer dtype
    cannot hold too: int8, int16 and their unsigned kinds wrap around from a 32-bit truncation
    (np.array([300.0, -1.0]).astype(np.uint8) is [44, 255]), int32 and int64 take their least
    value, and uint32 and uint64 are truncated from 2**31 (2**63) up with that much subtracted."""
    if target.itemsize < 4 or target == np.int32:
        return ops.convert(_truncated(v, 32), target)
    if target == np.int64:
        return _truncated(v, 64)
    bits = 8 * target.itemsize
    half = full(v.shape, 2.0 ** (bits - 1), v.dtype)
    high = ops.binary("stablehlo.xor", ops.convert(_truncated(ops.binary("stablehlo.subtract", v, half), bits), target),
                      full(v.shape, 2 ** (bits - 1), target))
    return ops.select(ops.compare(v, half, "GE"), high, ops.convert(_truncated(v, bits), target))


def value(x, dtype=None) -> Value:
    """An IR value for ``x`` (traced, NumPy array, list or scalar), converted to ``dtype``."""
    if isinstance(x, TracedArray):
        if dtype is None:
            return x.value
        if x.weak is int and np.dtype(dtype).kind in "iu" and np.dtype(dtype) != np.int64:
            python_ints.check_fits(x, dtype)  # NumPy's OverflowError for a Python int out of the dtype's range
        return convert_like_numpy(x.value, np.dtype(dtype))
    if dtype is not None and is_weak(x):
        with numpy_rules():  # NumPy's OverflowError for a Python int out of the dtype's range
            return ops.constant(np.array(x, dtype=dtype))
    traced = traced_sequence(x)  # (np.max([a.sum(), b.sum()]): a list of traced values, as NumPy stacks it)
    if traced is not None and traced is not x:
        return value(traced, dtype)
    array = np.asarray(x)
    if array.dtype == object:
        raise UnsupportedError(
            "NumPy makes an array of Python objects (dtype=object) of this value, which cofactor does not compile "
            "(a Python int beyond 64 bits, an object that is not a number, or traced arrays nested in lists of "
            "different shapes: use np.stack or np.concatenate)")
    return ops.constant(array.astype(dtype) if dtype is not None else array)


def take_1d(v: Value, index: Value) -> Value:
    """``v[index]`` for a 1-d ``v`` and an integer IR value ``index`` of any shape."""
    column = ops.reshape(index, index.shape + (1,))
    return ops.gather(v, column, (), (0,), (0,), index.type.rank, (1,), index.shape)


def traced_sequence(obj):
    """A traced array for a (nested) sequence holding traced arrays; None if it holds none."""
    if isinstance(obj, TracedArray):
        return obj
    if isinstance(obj, (list, tuple, collections.deque)) and obj:
        parts = [traced_sequence(o) for o in obj]
        if any(p is not None for p in parts):
            items = [p if p is not None else np.asarray(o) for p, o in zip(parts, obj)]
            return np.stack(items)
    return None


def array_like(x):
    """``x``, or the traced array NumPy's asarray makes of a list or tuple holding traced values
    (``np.interp(t, [0, 1], [y0, y1])``): NumPy's own helpers (np.shape, np.iscomplexobj) would convert it."""
    traced = traced_sequence(x) if type(x) in (list, tuple) else None
    return traced if traced is not None else x


def view(of, lens) -> TracedArray:
    """What NumPy returns as a view of ``of``: reads and writes go through ``lens`` to ``of``."""
    if not isinstance(of, TracedArray):
        return TracedArray(lens.read(value(of)))  # a view of a constant: nothing to write back to
    return TracedArray(None, of, lens)


def asarray(x) -> TracedArray:
    return x if isinstance(x, TracedArray) else TracedArray(value(x))


def known_value(x):
    """``x`` as a NumPy array if its value is known at compile time (a constant), else None."""
    if isinstance(x, TracedArray):
        if x.lens is not None or x.value.owner is None or not hasattr(x.value.owner, "literal"):
            return None
        return x.value.owner.literal
    return None if defers_tracing(x) else x  # (an array with run-time extents: traced)


def with_value_bounds(x: TracedArray, low: int, high: int) -> TracedArray:
    """``x`` (an integer array), noting that its elements, as they are now, lie in [low, high]: kept
    by its Value, which a write replaces, so the note cannot outlive the values it describes."""
    context.current().value_bounds[x.value] = (low, high)
    return x


def value_bounds(x) -> tuple | None:
    """The least and greatest values of an integer array's elements, where known statically."""
    known = known_value(x)
    if known is not None:
        known = np.asarray(known)
        return (int(known.min()), int(known.max())) if known.size and known.dtype.kind in "iub" else None
    if not isinstance(x, TracedArray):
        return None
    return python_ints.bounds_of(x) or context.current().value_bounds.get(x.value)


def wrap(v: Value) -> TracedArray:
    return TracedArray(v)


def full(shape, fill, dtype) -> Value:
    """A constant array of one value, built as a broadcast scalar (one past a float dtype's range is its infinity,
    without NumPy's warning: a cast's bound, 2.0 ** 32 in float16)."""
    with np.errstate(over="ignore"):
        return ops.broadcast_in_dim(ops.constant(np.array(fill, dtype=dtype)), tuple(shape), ())


def broadcast_shapes(*shapes) -> tuple:
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(str(tuple(s)).replace(" ", "") for s in shapes) + " ") from None


def broadcast_to(v: Value, shape) -> Value:
    shape = tuple(shape)
    lead = len(shape) - v.type.rank
    dims = range(lead, len(shape))
    if v.shape != shape and any(d != 1 and d != s for d, s in zip(v.shape, shape[lead:])):
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {v.shape} and requested shape {shape}")
    return ops.broadcast_in_dim(v, shape, dims)


def broadcast_values(*vs):
    shape = broadcast_shapes(*[v.shape for v in vs])
    return [broadcast_to(v, shape) for v in vs]


def axis_index(axis, ndim) -> int:
    return normalize_axis_index(operator_index(axis, "axis"), ndim)


def axis_tuple(axis, ndim) -> tuple:
    """``axis`` (None, int or tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(normalize_axis_tuple(axis, ndim)))


def static(x):
    """``x``, or the NumPy value of a traced array known while tracing (one made of constants alone:
    ``np.array([2, 3])``), where a function needs it at compile time (a shape, counts, widths)."""
    known = x.known() if isinstance(x, TracedArray) else None
    return known if known is not None else x


def operator_index(x, what="index") -> int:
    x = static(x)
    if isinstance(x, TracedArray):
        raise UnsupportedError(f"a traced {what} is not supported here: it must be known at compile time")
    try:
        return int(np.asarray(x).__index__()) if isinstance(x, np.ndarray) else x.__index__()
    except (AttributeError, TypeError):
        raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer") from None


def reject(name, **kwargs):
    """Raise for keyword arguments cofactor does not implement (given a non-default value)."""
    for key, (val, default) in kwargs.items():
        if not (val is default or (default is not None and not isinstance(val, TracedArray) and val == default)):
            raise UnsupportedError(f"{name}: the argument {key}={val!r} is not supported by cofactor")


def keeps_order(impl):
    """An implementation whose result NumPy lays out in memory as its array arguments (order "K":
    np.sort, np.where, np.round of a Fortran-order array are Fortran-order, so a reshape of one copies)."""
    @functools.wraps(impl)
    def kept(*args, **kwargs):
        return ordered(impl(*args, **kwargs), "K", *[a for a in args if isinstance(a, TracedArray)])
    return kept
