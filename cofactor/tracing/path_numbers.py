"""Numbers whose kind depends on the path taken: a Python number on some paths, a NumPy scalar on
others (``best = 0.0``, then ``best = a.max()`` under a traced ``if``, or in a loop's body).

NumPy gives such a variable the type of the path taken, so an operation on it can have a
different result dtype on each path: ``np.tanh(best)`` is float64 where ``best`` is a Python
float and float32 where it is a float32 scalar.  A compiled program has one dtype per value, so
a ``PathNumber`` keeps both readings of the number and what each operation does with it is
settled at trace time:

- its own value is the NumPy scalar's (dtype ``D``), which is what any code that does not ask
  sees, and what the variable returns (README, "Control flow");
- beside it, unless ``D`` is the dtype NumPy gives Python ``W`` (int64, float64, complex128),
  when both readings are one value, the Python number's value in that dtype, exact where it is
  a Python number, and a flag, true on those paths;
- an operation that has the same dtypes either way (``best * a`` for a float32 ``a``: float32)
  takes the value of the path taken, converted to the dtype the operation computes in, so each
  path gets NumPy's value; Python arithmetic with Python numbers (``best + 1``) is computed both
  ways and is again a PathNumber; an operation whose dtypes differ (``np.tanh(best)``) is a
  clear error at the user's line.

A loop known to run keeps, after it, the kind its body leaves (``acc = 0``, then
``acc = acc + x[i]``: a NumPy scalar after the loop).
"""
from __future__ import annotations

import numpy as np

from ..errors import TracingError, located
from ..ir import ops
from ..ir.core import Value
from .array import BINARY_OPERATORS, COMPARISONS, TracedArray, is_python_number, python_arithmetic
from . import python_ints
from .dispatch import numpy_name

PYTHON_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
                 complex: np.dtype(np.complex128)}
PYTHON_ORDER = [bool, int, float, complex]


def wider_python(*kinds):
    """The Python number type that holds each of ``kinds`` (None where all are None)."""
    kinds = [k for k in kinds if k is not None]
    return max(kinds, key=PYTHON_ORDER.index) if kinds else None


class PathNumber(TracedArray):
    """A NumPy scalar (``value``; a Python number of the wider type ``weak``, a float where the other
    reading is an int) that is the Python ``python`` number ``python_value`` where the i1
    ``is_python`` holds (both None where the two readings are one value: ``one_value``)."""

    __slots__ = ("python", "python_value", "is_python")
    path_dependent = True

    def __init__(self, value: Value, python: type, python_value: Value | None = None, is_python: Value | None = None,
                 weak: type | None = None):
        super().__init__(value, scalar=True, weak=weak)
        self.python, self.python_value, self.is_python = python, python_value, is_python

    @staticmethod
    def one_value(dtype, python: type) -> bool:
        """Whether both readings of a number are one value: NumPy computes a Python number in ``dtype``."""
        return PYTHON_DTYPES[python] == dtype

    def read_as(self, dtype) -> Value:
        """The value of the path taken, converted to ``dtype`` as NumPy converts each reading."""
        if self.is_python is None:
            return ops.convert(self.value, dtype)
        return ops.select(self.is_python, ops.convert(self.python_value, dtype), ops.convert(self.value, dtype))

    def as_python(self) -> TracedArray:
        return TracedArray(self.value if self.is_python is None else self.python_value, scalar=True, weak=self.python)

    def as_numpy(self) -> TracedArray:
        """Its other reading: the NumPy scalar (or the wider Python number)."""
        return TracedArray(self.value, scalar=True, weak=self.weak)

    def other_name(self) -> str:
        return self.weak.__name__ if self.weak is not None else f"numpy.{self.dtype.type.__name__}"

    def describe(self) -> str:
        other = f"a Python {self.weak.__name__}" if self.weak is not None else f"a {self.other_name()}"
        return f"a Python {self.python.__name__} on some paths and {other} on others"

    def stands_for(self) -> type:
        raise _differs(f"the type of {self.describe()}", f"{self.python.__name__} or {self.other_name()}")

    def __getitem__(self, index):
        raise _differs(f"indexing {self.describe()}", f"'{self.python.__name__}' object is not subscriptable")

    @staticmethod
    def settle(name: str, ufunc, args, kwargs):
        """``args`` and ``kwargs`` for a call of the NumPy function ``name`` (``ufunc``: the ufunc
        it calls, if one) with each PathNumber among them replaced by the reading the call needs,
        where the call has one dtype on every path; else a clear error."""
        if ufunc is not None:
            return _settle_ufunc(ufunc, args, kwargs)
        keys = list(kwargs)
        settled = _settle_function(name, (*args, *kwargs.values()))
        return settled[:len(args)], dict(zip(keys, settled[len(args):]))


def _differs(what: str, why: str) -> TracingError:
    return located(TracingError(
        f"{what}: NumPy's result differs from path to path ({why}), and which path is taken is known only at "
        f"run time: give the number one kind on every path (a NumPy scalar, e.g. np.float64(0.0) where it is "
        f"set to a Python number, or a Python number, e.g. float(...) where it is set to a NumPy scalar)"))


def _replaced(args, replace):
    """``args`` with each PathNumber ``p`` (also in a list or tuple) replaced by ``replace(p)``."""
    def one(x):
        if isinstance(x, PathNumber):
            return replace(x)
        if isinstance(x, (list, tuple)) and any(isinstance(y, PathNumber) for y in x):
            return type(x)(one(y) for y in x)
        return x
    return tuple(one(x) for x in args)


def _promotion_key(x):
    """What NumPy's promotion sees of ``x``: a Python type for a Python number, else a dtype."""
    if isinstance(x, TracedArray):
        return x.weak if x.weak not in (None, bool) else x.dtype
    return type(x) if type(x) in (int, float, complex) else np.asarray(x).dtype


def _resolved(ufunc, keys, kwargs):
    """The dtypes ``ufunc`` computes in for inputs of ``keys``, or the type of NumPy's refusal."""
    dtype = kwargs.get("dtype")
    signature = {} if dtype is None else {"signature": (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout}
    try:
        return ufunc.resolve_dtypes((*keys, *(None,) * ufunc.nout), **signature)
    except (TypeError, ValueError) as e:  # refused on every path: the NumPy reading raises NumPy's error
        return type(e)


def _settle_ufunc(ufunc, inputs, kwargs):
    as_python = _resolved(ufunc, [(x.python if x.python is not bool else np.dtype(np.bool_))  # (NumPy's bool, to
                                  if isinstance(x, PathNumber) else _promotion_key(x)    # NumPy's promotion)
                                  for x in inputs], kwargs)
    as_numpy = _resolved(ufunc, [_promotion_key(x) for x in inputs], kwargs)
    if as_python != as_numpy:
        p = next(x for x in inputs if isinstance(x, PathNumber))
        python, numpy = (r.__name__ if isinstance(r, type) else "/".join(str(d) for d in r[ufunc.nin:])
                         for r in (as_python, as_numpy))
        raise _differs(f"{numpy_name(ufunc)} of {p.describe()}", f"{python} where it is a Python "
                       f"{p.python.__name__}, {numpy} where it is a {p.other_name()}")
    if isinstance(as_numpy, type):
        return tuple(x.as_numpy() if isinstance(x, PathNumber) else x for x in inputs), kwargs
    return tuple(TracedArray(x.read_as(dtype), scalar=True) if isinstance(x, PathNumber) else x
                 for x, dtype in zip(inputs, as_numpy)), kwargs


# Writes of a number into an array: (the array's position, the number's) in the arguments.
_WRITES = {"ndarray.__setitem__": (0, 2), "ndarray.fill": (0, 1)}


def _settle_function(name: str, args):
    """Any other function reads a Python number as NumPy's array of it (int64, float64, complex128)
    except where it promotes it with arrays: the same on every path when the NumPy scalar has that
    dtype and promoting the arrays with either reading gives one dtype.  A number written into an
    array (``out[i] = s``) is cast to the array's dtype either way: the value of the path taken."""
    if name in _WRITES and len(args) > _WRITES[name][1] and isinstance(args[_WRITES[name][1]], PathNumber):
        target, k = _WRITES[name]
        if isinstance(args[target], TracedArray) and args[target].dtype.kind in "biufc":
            # (NumPy's errors for a float reading stored into an integer array: d[i] = np.inf if c else 0)
            python_ints.check_stored(args[k].as_numpy(), args[target].dtype)
            written = TracedArray(args[k].read_as(args[target].dtype), scalar=True)
            return _settle_function(name, args[:k] + (written,) + args[k + 1:])
    numbers = [x for x in _leaves(args) if isinstance(x, PathNumber)]
    others = [_promotion_key(x) for x in _leaves(args) if isinstance(x, (TracedArray, np.ndarray, np.generic))
              and not isinstance(x, PathNumber)]
    others = [k(0) if isinstance(k, type) else k for k in others]
    for p in numbers:
        if PYTHON_DTYPES[p.python] != p.dtype or np.result_type(p.weak(0) if p.weak else p.dtype, *others) != \
                np.result_type(p.python(0), *others):
            raise _differs(f"{name} of {p.describe()}", "NumPy reads the two kinds as different dtypes")
    return _replaced(args, lambda p: TracedArray(p.read_as(p.dtype), scalar=True))


def _leaves(args):
    for x in args:
        if isinstance(x, (list, tuple)):
            yield from _leaves(x)
        else:
            yield x


def _both_ways(ufunc, operands):
    """Python's arithmetic on numbers some of which are PathNumbers: each reading computed as
    Python and NumPy compute it, and the result again a PathNumber (or, where both readings give
    one NumPy dtype, as a comparison does, the value of the path taken)."""
    paths = [x for x in operands if isinstance(x, PathNumber)]
    if len({p.dtype for p in paths}) > 1:
        raise _differs(f"{ufunc.__name__} of numbers each {paths[0].describe()}",
                       f"their NumPy dtypes are {paths[0].dtype} and {paths[1].dtype}")
    readings = [x.as_python() if isinstance(x, PathNumber) else x for x in operands]
    as_python = python_arithmetic(ufunc, *readings) if all(is_python_number(x) for x in readings) \
        else ufunc(*readings)  # (an array and a Python number: NumPy's operator, as Python calls it)
    others = [x.as_numpy() if isinstance(x, PathNumber) else x for x in operands]
    as_numpy = python_arithmetic(ufunc, *others) if all(is_python_number(x) or getattr(x, "weak", None) for x in others) \
        else ufunc(*others)
    flags = [p.is_python for p in paths]
    is_python = None  # unknown where a reading is one value: so must the result's be
    if all(flag is not None for flag in flags):
        is_python = flags[0]
        for flag in flags[1:]:
            is_python = ops.binary("stablehlo.and", is_python, flag)
    if isinstance(as_python, tuple):
        return tuple(_joined(ufunc, a, b, is_python) for a, b in zip(as_python, as_numpy))
    return _joined(ufunc, as_python, as_numpy, is_python)


def _joined(ufunc, as_python: TracedArray, as_numpy: TracedArray, is_python: Value | None) -> TracedArray:
    what = f"{ufunc.__name__} of a number whose kind depends on the path"
    if as_numpy.weak is not None:  # both readings Python numbers (an int on some paths, a float on others)
        if as_python.weak is as_numpy.weak or as_python.weak is None:
            if is_python is None:
                return as_numpy
            value = ops.select(is_python, ops.convert(as_python.value, as_numpy.dtype), as_numpy.value)
            return TracedArray(value, scalar=True, weak=as_numpy.weak)
        return PathNumber(as_numpy.value, as_python.weak, ops.convert(as_python.value, PYTHON_DTYPES[as_python.weak]),
                          is_python, weak=as_numpy.weak)
    if as_python.weak is None:
        if as_python.dtype != as_numpy.dtype:
            raise _differs(what, f"its dtypes are {as_python.dtype} and {as_numpy.dtype}")
        if is_python is None:
            return as_numpy
        return TracedArray(ops.select(is_python, as_python.value, as_numpy.value), scalar=True)
    if np.result_type(as_numpy.dtype, as_python.weak(0)) != as_numpy.dtype or (
            is_python is None and not PathNumber.one_value(as_numpy.dtype, as_python.weak)):
        raise _differs(what, f"a Python {as_python.weak.__name__} on some paths and numpy.{as_numpy.dtype} on others")
    if PathNumber.one_value(as_numpy.dtype, as_python.weak):
        return PathNumber(as_numpy.value, as_python.weak)
    return PathNumber(as_numpy.value, as_python.weak, ops.convert(as_python.value, PYTHON_DTYPES[as_python.weak]),
                      is_python)


def _operator(ufunc, reflected=False):
    def apply(self, other):
        operands = (other, self) if reflected else (self, other)
        if isinstance(other, PathNumber) or is_python_number(other):
            return _both_ways(ufunc, operands)
        return ufunc(*operands)
    return apply


def _unary(ufunc):
    return lambda self: _both_ways(ufunc, (self,))


for _name, _ufunc in BINARY_OPERATORS.items():
    setattr(PathNumber, f"__{_name}__", _operator(_ufunc))
    setattr(PathNumber, f"__r{_name}__", _operator(_ufunc, reflected=True))
    if _name != "divmod":
        setattr(PathNumber, f"__i{_name}__", _operator(_ufunc))  # a number is immutable: rebinds
for _name, _ufunc in COMPARISONS.items():
    setattr(PathNumber, f"__{_name}__", _operator(_ufunc))
for _name, _ufunc in {"neg": np.negative, "pos": np.positive, "abs": np.absolute, "invert": np.invert}.items():
    setattr(PathNumber, f"__{_name}__", _unary(_ufunc))
PathNumber.__pow__ = PathNumber.__ipow__ = _operator(np.power)
PathNumber.__rpow__ = _operator(np.power, reflected=True)
