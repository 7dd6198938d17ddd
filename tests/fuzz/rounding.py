"""NumPy with its floating-point operations rounded otherwise: the oracle that tells a program whose
answer is decided by rounding from a wrong answer.

A compiled program may round differently from NumPy, legitimately: XLA's own ``tanh``/``exp``, a
multiply and add fused into one FMA, ``x / 12`` computed as ``x * (1 / 12)``, another summation
order, subnormal floats flushed to zero on CPU. Each is a last-bit difference, but a program that
compares, floors (``//``) or takes ``np.where`` of values that are equal up to rounding (``m.mean()``
against the row it was taken from, a row minus itself fused into an FMA) turns it into a different
answer, and NumPy's own answer moves the same way when its rounding does. ``run`` runs a program in
NumPy with the results of the operations XLA may round otherwise (``ROUNDED_OTHERWISE``, in place or
not) moved up or down (or not) at random by one unit in the last place (an addition of a product: by a unit
of its larger operand, ``FUSED``; a sum: by what another order of its additions may give), and in every other trial with subnormal results of any operation
flushed to zero: the places where such runs disagree with NumPy's plain run are decided by
rounding. Operations IEEE 754 rounds one way (+, -, //, %, sqrt, min, max, floor, ...)
are left alone: XLA gives NumPy's bits for them, and a difference there is a wrong answer.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np

# Each trial moves every rounded result one way at random: landing where XLA's roundings add up (a
# sum left as NumPy's, then its division one unit down: x / 5 as x * (1 / 5)) takes several.
TRIALS = 48
# XLA's own implementations (transcendental functions, power), a product fused into the addition
# that follows (an FMA keeps the product unrounded), a division by a constant done as a multiply by
# its reciprocal, and sums and products taken in another order (reductions, matmul).
ROUNDED_OTHERWISE = {
    np.multiply, np.square, np.true_divide, np.reciprocal, np.power, np.float_power, np.matmul,
    np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.logaddexp, np.logaddexp2,
    np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.arctan2, np.hypot, np.cbrt,
    np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh}
REORDERED = {np.add, np.multiply}    # their reductions: the same operations in another order
# An addition or subtraction of a product may be fused with it (an FMA keeps the product unrounded):
# its result then differs by up to a unit of the product, however small the result (x * t - (x * t)[0]
# is not 0 there), so it moves by a unit of its larger operand. A division by a scalar may be done as
# a product with its reciprocal, and then fused too (m /= 1.5; m - m[0, 2]).
PRODUCTS = {np.multiply, np.square}
FUSED = {np.add, np.subtract}


class _Rounded(np.ndarray):
    """An array whose float ufunc results round otherwise (``_trial`` holds how); views, copies and
    results of an operation on it are _Rounded too, so the noise follows the program's data."""

    _trial: tuple | None = None     # (random generator, flush subnormals)
    product = False                 # it holds a product (PRODUCTS) an addition may be fused with

    def __array_finalize__(self, obj):
        self.product = getattr(obj, "product", False)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        elementwise = method == "__call__"
        fused = elementwise and ufunc in FUSED and any(getattr(x, "product", False) for x in inputs)
        inputs = tuple(_plain(x) for x in inputs)
        if out is not None:
            kwargs["out"] = tuple(_plain(o) for o in out)
        result = getattr(ufunc, method)(*inputs, **kwargs)
        if method == "reduce" and ufunc is np.add and np.result_type(result).kind == "f":
            step = _sum_error(inputs[0], kwargs, np.result_type(result))
        elif ufunc in ROUNDED_OTHERWISE or not elementwise and ufunc in REORDERED:
            step = "ulp"
        elif fused and np.result_type(result).kind == "f":
            step = np.spacing(np.maximum(np.abs(inputs[0]), np.abs(inputs[1])).astype(np.result_type(result)))
        else:
            step = None
        if method == "at":
            _round_otherwise(inputs[0], step)
            return None
        product = elementwise and (ufunc in PRODUCTS or ufunc is np.true_divide and np.ndim(inputs[1]) == 0)
        if isinstance(result, tuple):
            return tuple(_rounded(r, o, step, product) for r, o in zip(result, out or (None,) * len(result)))
        return _rounded(result, out[0] if out else None, step, product)


def _divided_by_count(name):
    """ndarray.mean / var / std: a sum divided by the count, which XLA may do as a multiply by the
    count's reciprocal.  NumPy divides a scalar sum with a plain scalar division, which no ufunc
    hook sees, so the result moves by a unit here (np.mean(a) calls a.mean for an ndarray subclass)."""
    def method(self, *args, **kwargs):
        result = getattr(np.ndarray, name)(self, *args, **kwargs)
        return _rounded(result, kwargs.get("out"), "ulp", False)
    return method


for _name in ("mean", "var", "std"):
    setattr(_Rounded, _name, _divided_by_count(_name))


def _sum_error(x, kwargs, dtype):
    """How far a sum of ``x`` (as ``np.add.reduce(x, **kwargs)`` takes it) may land in another order
    of its additions (XLA's tree against NumPy's pairwise sum): n - 1 roundings, each up to a unit of
    the sum of the magnitudes (6 + 1 ulp in NumPy, 6 - 1 ulp in XLA for twelve numbers)."""
    x = np.asarray(x)
    magnitude = np.add.reduce(np.abs(x), axis=kwargs.get("axis", 0), keepdims=kwargs.get("keepdims", False))
    terms = x.size // max(np.size(magnitude), 1)
    return np.asarray(max(terms - 1, 1) * np.finfo(dtype).eps * magnitude, dtype=dtype)


def _plain(x):
    return x.view(np.ndarray) if isinstance(x, _Rounded) else x


def _rounded(result, out, step, product):
    """The result rounded as the trial says (``step``: moved at random by one unit of its own,
    "ulp", or by these steps; None: not moved): an array in place (it may be ``out``, seen by the
    program through views), a NumPy scalar as a new scalar of its type (scalars are immutable).
    ``product``: the result holds a product."""
    if isinstance(result, np.ndarray):
        _round_otherwise(result, step)
        rounded = out if out is not None else result.view(_Rounded)
        if isinstance(rounded, _Rounded):
            rounded.product = product
        return rounded
    if isinstance(result, np.floating):
        array = np.asarray(result)  # (a new array: np.array is the program's own in a trial, MADE)
        _round_otherwise(array, step)
        return type(result)(array[()])
    return result


def _round_otherwise(array, step):
    if array.dtype.kind != "f" or array.size == 0:
        return
    rng, flush = _Rounded._trial
    if step is not None:  # down, not at all, or up: another rounding may also agree with NumPy's
        direction = _plain(rng.integers(-1, 2, array.shape))  # (made by np.empty: MADE)
        if isinstance(step, str):
            moved = np.nextafter(array, (direction * np.inf).astype(array.dtype))
        else:
            moved = array + (direction * step).astype(array.dtype)
        np.copyto(array, moved, where=direction != 0)
    if flush:
        np.copyto(array, np.copysign(np.zeros_like(array), array), where=np.abs(array) < np.finfo(array.dtype).tiny)


# Arrays the program makes (np.sin(np.arange(5.0)): XLA's sin of a constant) round otherwise too.
MADE = ("arange", "array", "zeros", "ones", "full", "empty", "linspace", "eye", "identity")


def _made_rounded(make):
    def made(*args, **kwargs):
        result = make(*args, **kwargs)
        return result.view(_Rounded) if isinstance(result, np.ndarray) and type(result) is np.ndarray else result
    return made


def run(f, args, module, initial, trial):
    """``f`` on copies of ``args`` (module globals reset from ``initial``) with NumPy rounding as
    trial ``trial`` says: (result, arguments after the call, globals after the call), plain arrays,
    or the exception it raised."""
    given = tuple(a.copy().view(_Rounded) if isinstance(a, np.ndarray) else copy.deepcopy(a) for a in args)
    module.update({k: v.copy().view(_Rounded) for k, v in initial.items()})
    _Rounded._trial = (np.random.default_rng(trial), trial % 2 == 1)
    makers = {name: getattr(np, name) for name in MADE}
    try:
        for name, make in makers.items():
            setattr(np, name, _made_rounded(make))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = f(*given)
    except Exception as error:  # noqa: BLE001  (the caller decides what a raising run tells)
        return error
    finally:
        _Rounded._trial = None
        for name, make in makers.items():
            setattr(np, name, make)
    return _unwrapped(result), tuple(_unwrapped(a) for a in given), {k: _unwrapped(module[k]) for k in initial}


def _unwrapped(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_unwrapped(v) for v in value)
    return _plain(value)
