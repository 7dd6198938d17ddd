"""Arrays made from other arrays: astype, copy, and the *_like constructors."""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, numpy_rules
from ..ir import ops
from ..ir.types import is_supported_dtype
from ..tracing import context, python_ints
from ..tracing.array import TracedArray, defers_tracing
from ..tracing.checks import numpy_error_if
from ..tracing.derivatives import is_differentiating
from ..tracing.dispatch import FUNCTIONS, constructs, implements
from ..tracing.views import ordered, per_layout, strided_like
from ._core import convert_like_numpy, full, result_type, traced_sequence, value, value_bounds, wrap
from .extent import Bounded, Window, _binary, _const, add, i64, sub
from .shape import resolve_shape


def _dtype(dtype, default):
    dtype = np.dtype(default if dtype is None else dtype)
    if not is_supported_dtype(dtype):
        raise TypeError(f"dtype {dtype} is not supported by cofactor")
    return dtype


@implements("ndarray.astype")
def astype(a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    v = value(a)
    target = _dtype(dtype, v.dtype)
    if not np.can_cast(v.dtype, target, casting=casting):
        raise TypeError(f"Cannot cast array data from {v.dtype!r} to {target!r} according to the rule '{casting}'")
    if not copy and _kept(a, target, order):
        return a
    return ordered(wrap(convert_like_numpy(v, target)), order, a)


def _kept(a, dtype, order) -> bool:
    """Whether NumPy hands back ``a`` itself when asked not to copy: an array (not a scalar) of
    ``dtype`` already in the memory ``order`` asked for."""
    if not isinstance(a, TracedArray) or a.scalar or dtype is not None and np.dtype(dtype) != a.dtype:
        return False
    if order in ("C", "F"):
        flags = strided_like(a).flags
        return flags.c_contiguous if order == "C" else flags.f_contiguous
    return True


@implements(np.astype)
def astype_function(x, dtype, /, *, copy=True, device=None):
    return astype(x, dtype, copy=copy)


@implements(np.copy)
def copy(a, order="K", subok=False):
    return ordered(TracedArray(value(a)), order, a)


@implements("ndarray.copy")
def copy_method(a, order="C"):
    return ordered(TracedArray(value(a)), order, a)


def _like(name, fill_value_of):
    @implements(getattr(np, name))
    def impl(a, *args, **kwargs):
        if getattr(type(a), "defers_tracing", False):  # (of a run-time extent: numpy/extent_ops.py)
            return getattr(np, name)(a, *args, **kwargs)
        return made(a, *args, **kwargs)

    def made(a, *args, dtype=None, order="K", subok=True, shape=None, device=None, **kwargs):
        fill, args = fill_value_of(args, kwargs)
        if args:
            dtype = args[0]
        src = value(a) if isinstance(a, TracedArray) else None
        src_shape, src_dtype = (src.shape, src.dtype) if src is not None else (np.shape(a), np.asarray(a).dtype)
        target_shape = src_shape if shape is None else resolve_shape(shape)
        target = _dtype(dtype, src_dtype)
        return ordered(full_(target_shape, fill, target), order, a)
    return impl


_like("zeros_like", lambda args, kwargs: (0, args))
_like("ones_like", lambda args, kwargs: (1, args))
_like("empty_like", lambda args, kwargs: (0, args))  # zeros: compiled code has no uninitialised memory
_like("full_like", lambda args, kwargs: (args[0], args[1:]) if args else (kwargs.pop("fill_value"), args))


def check_stored(a, v):
    """NumPy's errors for a number stored into an element of ``a`` (``a[i] = v``, ``a[:] = v``,
    ``a.fill(v)``): NumPy converts it to a Python int for an integer array, so NaN, an infinity or
    a value outside the dtype's range raises (at run time where ``v`` is traced)."""
    if isinstance(v, TracedArray):
        if v.scalar:
            python_ints.check_stored(v, a.dtype)
    elif isinstance(v, (np.generic, int, float)) and not isinstance(v, (bool, np.bool_)):
        with numpy_rules():
            np.empty(1, a.dtype)[0] = v
    elif isinstance(v, (list, tuple)) and a.dtype.kind in "iu" and traced_sequence(v) is None:
        with numpy_rules():  # (a list's Python ints and floats, each converted as NumPy converts it)
            np.empty(np.shape(v), a.dtype)[...] = v


@implements("ndarray.fill")
def fill(a, val):
    v = value(val)
    if v.type.rank:  # fill takes one value: a 0-d array or a number, as NumPy's does
        raise ValueError("setting an array element with a sequence.")
    if a.scalar:  # a NumPy scalar's fill fills a temporary copy: the scalar is a value
        return
    check_stored(a, val)
    a.value = ops.broadcast_in_dim(convert_like_numpy(v, a.dtype), a.shape, ())


# --- array constructors called inside converted user code ------------------------------------

def _traced_constant(array) -> TracedArray:
    return TracedArray(value(np.asarray(array)))


def _static(name, args, kwargs):
    """``args`` and ``kwargs`` known now (an element of an array made of constants, as in ``for size in
    2 ** np.arange(3)``, is), or NumPy's shape would depend on data: a clear error."""
    def known(a):
        if not isinstance(a, TracedArray):
            return a
        value = a.known()
        if value is None:
            raise UnsupportedError(f"numpy.{name} with traced arguments has a data-dependent shape; "
                                   "its arguments must be known at compile time")
        return value[()]  # (a NumPy scalar of a 0-d one)
    return [known(a) for a in args], {k: known(v) for k, v in kwargs.items()}


def _filled(fill):
    def make(shape, dtype=float, order="C", *, like=None, device=None):
        shape = resolve_shape(shape)
        target = _dtype(dtype, float)
        return ordered(wrap(full(shape, np.array(fill).astype(target), target)), order)
    return make


constructs(np.zeros, np.empty)(_filled(0))
constructs(np.ones)(_filled(1))


@constructs(np.ndarray)
def ndarray(shape, dtype=float, *args, **kwargs):
    if args or kwargs:
        raise UnsupportedError("numpy.ndarray(...) with a buffer, offset or strides is not supported")
    return _filled(0)(shape, dtype)


@constructs(np.full)
def full_(shape, fill_value, dtype=None, order="C", *, like=None, device=None):
    shape = resolve_shape(shape)
    fill = fill_value if isinstance(fill_value, TracedArray) else np.asarray(fill_value)
    target = _dtype(dtype, fill.dtype)
    if type(fill_value) is int:
        with numpy_rules():  # NumPy's OverflowError for a Python int out of the dtype's range
            np.array(fill_value, dtype=target)
    return ordered(wrap(convert_like_numpy(np.broadcast_to(wrap(value(fill)), shape).value, target)), order)


@constructs(np.arange)
def arange(*args, **kwargs):
    if any(isinstance(a, TracedArray) and a.known() is None for a in (*args, *kwargs.values())):
        return _arange_of_run_time_length(*args, **kwargs)
    args, kwargs = _static("arange", args, kwargs)
    with numpy_rules():
        return _traced_constant(np.arange(*args, **kwargs))


def _arange_of_run_time_length(start, stop=None, step=None, dtype=None, *, like=None, device=None):
    """``np.arange`` of traced integer bounds (``np.arange(t)`` for a loop's counter ``t``): as many
    lanes as the bounds' known ranges allow (or cf.jit's ``max_slice``), the run-time length their
    window (numpy/extent.py), so the loop around it stays one rolled loop."""
    start, stop = (0, start) if stop is None else (start, stop)
    step = 1 if step is None else step
    if isinstance(step, TracedArray) and step.known() is None:
        raise UnsupportedError("numpy.arange with a traced step has a data-dependent shape; its step must be known "
                               "at compile time")
    step = step.known()[()] if isinstance(step, TracedArray) else step
    if not isinstance(step, (int, np.integer, np.bool_)):  # (a float step: np.arange(t, 10, 0.5))
        raise UnsupportedError("numpy.arange with traced bounds and a step that is not an integer is not supported: "
                               "its number of elements would be computed in floats")
    step = int(step)
    if step == 0:
        raise ZeroDivisionError("division by zero")
    if any(isinstance(x, TracedArray) and x.dtype.kind not in "iub" or isinstance(x, (float, np.floating))
           for x in (start, stop)):
        raise UnsupportedError("numpy.arange with traced bounds that are not integers has a data-dependent shape")

    def sample(x):
        return x if not isinstance(x, TracedArray) else 1 if x.weak is int else x.dtype.type(1)
    with numpy_rules():
        target = np.arange(sample(start), sample(stop), step, dtype=dtype).dtype
    ranges = [(x, x) if not isinstance(x, TracedArray) else value_bounds(x) for x in (start, stop)]
    first, last = (start, stop) if step > 0 else (stop, start)
    distance = sub(i64(last), i64(first))
    length = _binary("stablehlo.maximum", ops.binary("stablehlo.divide", add(distance, _const(abs(step) - 1)),
                                                     _const(abs(step))), _const(0))
    if all(r is not None for r in ranges):
        (start_lo, start_hi), (stop_lo, stop_hi) = ranges
        span = stop_hi - start_lo if step > 0 else start_hi - stop_lo
        lanes = max(-(-span // abs(step)), 0)
    else:
        lanes = context.current().options.max_slice
        if lanes is None:
            raise UnsupportedError("numpy.arange with a traced bound whose greatest value cofactor cannot tell has a "
                                   "data-dependent shape: give cf.jit(..., max_slice=N), the most elements it makes")
        shown = TracedArray(length, scalar=True)
        numpy_error_if(ops.compare(length, _const(lanes), "GT"), lambda: UnsupportedError(
            f"numpy.arange of {shown} elements, more than cf.jit's max_slice={lanes}: give a larger max_slice"))
    counts = ops.binary("stablehlo.multiply", ops.iota((lanes,), np.dtype(np.int64), 0),
                        ops.broadcast_in_dim(_const(step), (lanes,), ()))
    values = ops.binary("stablehlo.add", counts, ops.broadcast_in_dim(i64(start), (lanes,), ()))
    return Bounded(wrap(convert_like_numpy(values, target)), [Window(_const(0), length)])


@constructs(np.eye)
def eye(*args, **kwargs):
    args, kwargs = _static("eye", args, kwargs)
    return _traced_constant(np.eye(*args, **kwargs))


@constructs(np.identity)
def identity(*args, **kwargs):
    args, kwargs = _static("identity", args, kwargs)
    return _traced_constant(np.identity(*args, **kwargs))


@constructs(np.linspace)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    if isinstance(num, TracedArray):
        if num.known() is None:
            raise UnsupportedError("numpy.linspace with a traced num has a data-dependent shape; num must be known at "
                                   "compile time")
        num = num.known()[()]
    if not (isinstance(start, TracedArray) or isinstance(stop, TracedArray)):
        samples = np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
        return (_traced_constant(samples[0]), samples[1]) if retstep else _traced_constant(samples)
    if axis != 0 or np.ndim(start) or np.ndim(stop):
        raise UnsupportedError("numpy.linspace with traced bounds supports scalar start/stop and axis=0")
    # NumPy's formula, in the dtype of start, stop and a float (NEP 50): start + arange(num) * ((stop -
    # start) / div), and the last point exactly stop.
    computed = result_type(start, stop, float(num))
    start, stop = astype(start, computed), astype(stop, computed)
    div = (num - 1) if endpoint else num
    steps = np.arange(num, dtype=computed)
    delta = np.subtract(stop, start)
    if div > 0 and computed.kind == "f":
        step = quotient(delta, div)
        y = spaced(start, step, num)
    else:
        step = np.true_divide(delta, div) if div > 0 else None
        y = np.add(np.multiply(steps, step if step is not None else delta), start)
    if endpoint and num > 1:
        y[-1] = stop
    target = _dtype(dtype, computed)
    if np.dtype(target).kind in "iu" and np.dtype(computed).kind == "f":
        y = np.floor(y)  # (NumPy floors to an integer dtype: -3.7 is -4, not -3)
    if not retstep:
        return astype(y, target)
    return astype(y, target), step if step is not None else np.multiply(delta, np.nan)  # NumPy's step: nan


def quotient(delta, div: int):
    """``delta / div`` rounded once, as NumPy's (XLA's is by the reciprocal), where not differentiated."""
    if delta.dtype.kind != "f" or is_differentiating():
        return np.true_divide(delta, div)
    return wrap(python_ints.divided_exactly(value(delta), float(div)))


def spaced(start, step, n: int):
    """``start + arange(n) * step`` (traced 0-d floats; ``step`` a ``quotient``), rounded as NumPy's linspace
    rounds it: each product and each sum once.  XLA's CPU backend fuses a product with the sum after it
    (one point in a few an ulp off: a bin edge, and a value on it in the next bin), so the products are
    formed from two halves of the step of at most half its precision each (by its bits), whose products
    with small integers are exact: their sum rounds once, as the product does.  Differentiated, the plain
    formula (its derivative is the same)."""
    dtype = step.dtype
    kept = {np.float16: (np.int32, 12), np.float32: (np.int32, 12), np.float64: (np.int64, 27)}.get(dtype.type)
    if kept is None or is_differentiating() or n > 2 ** (np.finfo(np.float32 if dtype == np.float16 else dtype).nmant
                                                         + 1 - kept[1]):
        return np.add(np.multiply(np.arange(n, dtype=dtype), step), start)
    wide = np.float32 if dtype == np.float16 else dtype  # (float32's products of float16 halves are exact)
    multiples = ops.constant(np.arange(n, dtype=wide))
    step = ops.convert(value(step), wide)

    def times(v):
        return ops.binary("stablehlo.multiply", multiples, ops.broadcast_in_dim(v, (n,), ()))
    bits, low = kept
    high = ops.bitcast_convert(ops.binary("stablehlo.and", ops.bitcast_convert(step, bits),
                                          ops.constant(np.array(~((1 << low) - 1), bits))), wide)
    products = ops.binary("stablehlo.add", times(high), times(ops.binary("stablehlo.subtract", step, high)))
    return np.add(wrap(ops.convert(products, dtype)), start)


@constructs(np.array)
def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    if copy is None and order in ("C", "F") and isinstance(object, TracedArray) and not object.scalar:
        # kept or copied as its layout on the path taken says
        return per_layout(object, lambda a: _array(a, dtype, copy, order, ndmin))
    return _array(object, dtype, copy, order, ndmin)


def _array(object, dtype, copy, order, ndmin):
    if defers_tracing(object) and ndmin <= object.ndim:  # (x[mask], a list of run-time length: numpy/extent.py)
        if copy is not True and (dtype is None or np.dtype(dtype) == object.dtype):
            return object
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return object.astype(object.dtype if dtype is None else dtype)
    if copy is not True and _kept(object, dtype, order):
        # ``object`` itself (writes through the result change it), with leading axes as a view
        return object if ndmin <= object.ndim else np.reshape(object, (1,) * (ndmin - object.ndim) + object.shape)
    if copy is False:
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    if type(object) in (list, tuple) and any(defers_tracing(x) for x in object):  # (np.array(np.nonzero(m)))
        stacked = np.stack(list(object))
        return stacked if dtype is None else stacked.astype(dtype)
    traced = traced_sequence(object)
    if traced is None:
        with numpy_rules():
            return _traced_constant(np.array(object, dtype=dtype, ndmin=ndmin))
    result = astype(traced, dtype) if dtype is not None else TracedArray(traced.value)
    if ndmin > result.ndim:
        result = wrap(ops.reshape(result.value, (1,) * (ndmin - result.ndim) + result.shape))
    return ordered(result, order, traced)


@constructs(np.asarray, np.asanyarray)
def asarray(a, dtype=None, order=None, *, copy=None, device=None, like=None):
    return array(a, dtype, copy=copy, order=order or "K")


@constructs(np.ascontiguousarray)
def ascontiguousarray(a, dtype=None, *, like=None):
    return array(a, dtype, copy=None, order="C", ndmin=1)


@constructs(np.require)
def require(a, dtype=None, requirements=None, *, like=None):
    """An array of ``dtype`` meeting ``requirements`` ("C"/"F" contiguous, "O" its own data; "A", "W",
    "E" every array cofactor makes meets)."""
    wanted = {r[0].upper() for r in ([requirements] if isinstance(requirements, str) else requirements or [])}
    order = "F" if "F" in wanted else "C" if "C" in wanted else "K"
    return array(a, dtype, copy=True if "O" in wanted else None, order=order)


@constructs(np.asfortranarray)
def asfortranarray(a, dtype=None, *, like=None):
    return array(a, dtype, copy=None, order="F", ndmin=1)


def _scalar_type(scalar_type):
    """``np.float32(x)`` and the like: a traced ``x`` is cast (a NumPy scalar when 0-d, an array
    otherwise, as NumPy gives); anything else goes to the type itself."""
    def construct(x=0, *args, **kwargs):
        if not isinstance(x, TracedArray) or args or kwargs:
            with numpy_rules():
                return scalar_type(x, *args, **kwargs)
        if x.weak is int and np.dtype(scalar_type).kind in "iu":
            python_ints.check_fits(x, scalar_type)  # (np.uint8(i + 250): NumPy's OverflowError past 255)
        result = astype(x, scalar_type)
        return TracedArray(result.value, scalar=True) if result.ndim == 0 else result
    return construct


for _type in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
              np.float16, np.float32, np.float64, np.complex64, np.complex128):
    constructs(_type)(_scalar_type(_type))


@constructs(np.copy)
def copy_constructor(a, order="K", subok=False):
    return array(a, order=order)


for _name in ["zeros_like", "ones_like", "empty_like", "full_like"]:
    constructs(getattr(np, _name))(FUNCTIONS[getattr(np, _name)])
