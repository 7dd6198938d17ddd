"""``x[mask]`` with a traced boolean mask: how many elements it selects is only known at run
time, so it cannot be an array.  It is a selection (values + mask) that supports what keeps
shapes static: elementwise arithmetic, reductions (``x[m].sum()``, ``np.mean(x[m] ** 2)``),
and assignment under the same mask (``y[m] = x[m]``).  Anything else raises, suggesting
``np.where``.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError, located

_HINT = ("x[mask] with a traced mask selects a data-dependent number of elements, so cofactor supports "
         "only elementwise arithmetic, reductions (sum, mean, max, ...) and y[mask] = ... on it; use "
         "np.where(mask, x, other) for anything else")


def _where_identity(func, values, mask):
    """``values`` where selected, else the value that leaves ``func``'s reduction unchanged."""
    if func in (np.max, np.amax):
        fill = -np.inf if values.dtype.kind in "fc" else np.iinfo(values.dtype).min
    elif func in (np.min, np.amin):
        fill = np.inf if values.dtype.kind in "fc" else np.iinfo(values.dtype).max
    elif func in (np.prod, np.all):
        fill = 1
    else:
        fill = 0
    if values.dtype == np.bool_:
        fill = bool(fill) if func not in (np.max, np.amax, np.min, np.amin) else func in (np.min, np.amin)
    return np.where(mask, values, fill)


def _mean(values, mask, dtype=None):
    count = np.sum(mask)
    return np.true_divide(np.sum(np.where(mask, values, 0), dtype=dtype), count)


def _var(values, mask, ddof=0, dtype=None):
    centered = np.where(mask, np.subtract(values, _mean(values, mask, dtype)), 0)
    squares = np.real(np.multiply(centered, np.conjugate(centered)))
    return np.true_divide(np.sum(squares), np.subtract(np.sum(mask), ddof))


_REDUCTIONS = {np.sum, np.prod, np.max, np.amax, np.min, np.amin, np.any, np.all, np.count_nonzero}


class MaskedSelection:
    __array_priority__ = 2000
    traced_state = True  # control flow looks into it for the arrays it holds

    def __init__(self, values, mask):
        self.values, self.mask = values, mask

    dtype = property(lambda self: self.values.dtype)
    ndim = property(lambda self: 1)

    def _unsupported(self, *args, **kwargs):
        raise located(UnsupportedError(_HINT))

    shape = size = property(_unsupported)
    __len__ = __iter__ = __getitem__ = __setitem__ = __array__ = __bool__ = __float__ = _unsupported

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs.get("out") is not None:
            self._unsupported()
        values = []
        for x in inputs:
            if isinstance(x, MaskedSelection):
                if x.mask is not self.mask:
                    self._unsupported()
                values.append(x.values)
            elif np.ndim(x) == 0:
                values.append(x)
            else:
                self._unsupported()
        return MaskedSelection(getattr(np, ufunc.__name__)(*values, **kwargs), self.mask)

    def __array_function__(self, func, types, args, kwargs):
        axis = kwargs.pop("axis", None)
        if not args or args[0] is not self or axis not in (None, 0, -1) or kwargs.get("out") is not None:
            self._unsupported()
        values, mask = self.values, self.mask
        if func is np.mean:
            return _mean(values, mask, kwargs.get("dtype"))
        if func in (np.var, np.std):
            var = _var(values, mask, kwargs.get("ddof", 0), kwargs.get("dtype"))
            return var if func is np.var else np.sqrt(var)
        if func is np.count_nonzero:
            return np.sum(np.logical_and(mask, values != 0))
        if func in _REDUCTIONS:
            return func(_where_identity(func, values, mask), *args[1:], **kwargs)
        self._unsupported()


def _operator(ufunc, reflected=False):
    return (lambda self, other: ufunc(other, self)) if reflected else (lambda self, other: ufunc(self, other))


for _name, _ufunc in {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
                      "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "and": np.bitwise_and,
                      "or": np.bitwise_or, "xor": np.bitwise_xor}.items():
    setattr(MaskedSelection, f"__{_name}__", _operator(_ufunc))
    setattr(MaskedSelection, f"__r{_name}__", _operator(_ufunc, reflected=True))
for _name, _ufunc in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                      "gt": np.greater, "ge": np.greater_equal}.items():
    setattr(MaskedSelection, f"__{_name}__", _operator(_ufunc))
MaskedSelection.__neg__ = lambda self: np.negative(self)
MaskedSelection.__abs__ = lambda self: np.absolute(self)
for _name in ["sum", "prod", "mean", "std", "var", "max", "min", "any", "all"]:
    setattr(MaskedSelection, _name, (lambda f: lambda self, *a, **k: f(self, *a, **k))(getattr(np, _name)))
