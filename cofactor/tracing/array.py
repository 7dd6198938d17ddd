"""TracedArray: what a user's function sees in place of an array while it is traced.

It records every NumPy operation into the IR through NumPy's own protocols
(``__array_ufunc__`` and ``__array_function__``), so unmodified NumPy code
runs.  Behaviour comes from the registry in ``dispatch.py``; this class only
routes operators, methods and properties there.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConcretizationError, located
from ..ir import ops
from ..ir.core import Value, current_block
from . import dispatch


# Open mutation journals (innermost last): control flow records which arrays a branch or a
# loop body writes, to carry them through the stablehlo.if / stablehlo.while it builds.
_journals: list = []


class TracedArray:
    """A traced array: either the owner of an IR value, or a view (``base`` + ``lens``)
    whose value is read from, and written into, its base."""

    __slots__ = ("_value", "base", "lens", "_read")
    __array_priority__ = 1000

    def __init__(self, value: Value | None, base: "TracedArray | None" = None, lens=None):
        self._value = value
        self.base = base  # the array this one is a view of, as in NumPy
        self.lens = lens
        self._read = None  # (base value, view value) of the last read

    @property
    def value(self) -> Value:
        if self.lens is None:
            return self._value
        base_value = self.base.value
        block = current_block()  # a value read inside a branch or function is not visible outside it
        if self._read is None or self._read[0] is not base_value or self._read[1] is not block:
            self._read = (base_value, block, self.lens.read(base_value))
        return self._read[2]

    @value.setter
    def value(self, new: Value):
        if self.lens is None:
            if _journals:
                _journals[-1].append((self, self._value))
            self._value = new
        else:
            self.base.value = self.lens.write(self.base.value, new)

    # --- static properties ---------------------------------------------------------
    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)
    ndim = property(lambda self: self.value.type.rank)
    size = property(lambda self: self.value.type.size)
    itemsize = property(lambda self: self.value.dtype.itemsize)
    nbytes = property(lambda self: self.value.type.size * self.value.dtype.itemsize)
    T = property(lambda self: np.transpose(self))
    mT = property(lambda self: np.swapaxes(self, -1, -2))
    real = property(lambda self: np.real(self), lambda self, v: np.real(self).__setitem__(Ellipsis, v))
    imag = property(lambda self: np.imag(self), lambda self, v: _set_imag(self, v))

    def __repr__(self):
        return f"TracedArray(shape={self.shape}, dtype={self.dtype})"

    def __len__(self):
        if not self.shape:
            raise located(TypeError("len() of unsized object"))
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise located(TypeError("iteration over a 0-d array"))
        return (self[i] for i in range(self.shape[0]))

    # --- NumPy protocols ------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return dispatch.call_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return dispatch.call_function(func, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        raise located(ConcretizationError(
            "a traced array cannot become a NumPy array: its values are only known when the compiled "
            "function runs (use NumPy functions on it, which cofactor traces; for a list of traced "
            "arrays use np.stack; to write traced values into an array, create it inside the compiled "
            "function, e.g. out = np.zeros(n))"))

    # --- values that Python needs now ----------------------------------------------------
    def _concrete(self, what):
        raise located(ConcretizationError(
            f"{what}() of a traced array: its value is not known at compile time, only when the "
            "compiled function runs (storing it into a NumPy array made outside the compiled function "
            "needs that value: create the array inside it, e.g. out = np.zeros(n))"))

    def __bool__(self):
        raise located(ConcretizationError(
            "bool() of a traced array: its truth value is not known at compile time, only when the compiled "
            "function runs. "
            "cofactor compiles if / while / for statements, conditional expressions and and / or / not on "
            "traced values in your functions' source; elsewhere (bool(), assert, any() / all() / min() / "
            "max() of traced values, a comprehension's if, code whose source cannot be read) use NumPy "
            "instead: np.where(cond, a, b), np.any / np.all, or a boolean mask"))

    def __float__(self):
        self._concrete("float")

    def __int__(self):
        self._concrete("int")

    def __complex__(self):
        self._concrete("complex")

    def __index__(self):
        self._concrete("index")

    def item(self, *args):
        self._concrete("item")

    def tolist(self):
        self._concrete("tolist")

    # --- indexing ----------------------------------------------------------------------------
    def __getitem__(self, index):
        return dispatch.call_method("__getitem__", (self, index), {})

    def __setitem__(self, index, value):
        return dispatch.call_method("__setitem__", (self, index, value), {})


def _operator(ufunc, reflected=False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


_BINARY_OPERATORS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "matmul": np.matmul,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "lshift": np.left_shift, "rshift": np.right_shift,
}
for _name, _ufunc in _BINARY_OPERATORS.items():
    setattr(TracedArray, f"__{_name}__", _operator(_ufunc))
    setattr(TracedArray, f"__r{_name}__", _operator(_ufunc, reflected=True))
    setattr(TracedArray, f"__i{_name}__", (lambda u: lambda self, other: _update(self, u, other))(_ufunc))

_COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                "gt": np.greater, "ge": np.greater_equal}
for _name, _ufunc in _COMPARISONS.items():
    setattr(TracedArray, f"__{_name}__", _operator(_ufunc))



def _set_imag(array, v):
    if array.dtype.kind != "c":
        raise located(TypeError("array does not have imaginary part to set"))
    np.imag(array)[...] = v


def _update(array, ufunc, *other):
    """``array op= other``: the same object (and the base it views) holds the result,
    cast as NumPy's ``out=`` casts."""
    result = ufunc(array, *other)
    if not np.can_cast(result.dtype, array.dtype, casting="same_kind"):
        raise located(TypeError(
            f"Cannot cast ufunc '{ufunc.__name__}' output from {result.dtype!r} to {array.dtype!r} "
            "with casting rule 'same_kind'"))
    array.value = ops.convert(np.broadcast_to(result, array.shape).value, array.dtype)
    return array


def _is_two(exponent) -> bool:
    """NumPy computes ``x ** 2`` (a Python int 2) as np.square(x): booleans give int8, not int64."""
    return type(exponent) is int and exponent == 2


TracedArray.__pow__ = lambda self, other: np.square(self) if _is_two(other) else np.power(self, other)
TracedArray.__ipow__ = lambda self, other: _update(self, np.square) if _is_two(other) else \
    _update(self, np.power, other)
TracedArray.__divmod__ = lambda self, other: np.divmod(self, other)
TracedArray.__rdivmod__ = lambda self, other: np.divmod(other, self)
TracedArray.__neg__ = lambda self: np.negative(self)
TracedArray.__pos__ = lambda self: np.positive(self)
TracedArray.__abs__ = lambda self: np.absolute(self)
TracedArray.__invert__ = lambda self: np.invert(self)

# Methods that are the NumPy function of the same name with the array first.
_FUNCTION_METHODS = [
    "sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin", "any", "all",
    "cumsum", "cumprod", "swapaxes", "repeat", "argsort", "dot", "clip", "round", "trace", "diagonal",
    "nonzero", "take", "searchsorted", "compress",
]  # not ptp: NumPy 2 removed the method


def _function_method(name):
    func = getattr(np, name)
    return lambda self, *args, **kwargs: func(self, *args, **kwargs)


for _name in _FUNCTION_METHODS:
    setattr(TracedArray, _name, _function_method(_name))

# Methods whose signature differs from the NumPy function's (``x.reshape(2, 3)``).
for _name in ["reshape", "transpose", "astype", "copy", "flatten", "ravel", "squeeze", "view",
              "fill", "sort", "conj", "conjugate"]:
    setattr(TracedArray, _name, (lambda n: lambda self, *args, **kwargs:
                                 dispatch.call_method(n, (self, *args), kwargs))(_name))


def constant(x) -> TracedArray:
    """A traced constant holding the NumPy (or device) array ``x``."""
    return TracedArray(ops.constant(np.asarray(x)))
