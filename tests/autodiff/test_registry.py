"""Every NumPy function cofactor implements is differentiated here, in forward and reverse mode,
against central finite differences of NumPy in float64 (issue #5), or is listed in
NOT_DIFFERENTIABLE with the reason.  ``test_every_registered_function_is_classified`` fails
until a newly registered function is added to one of the two tables.

Inputs lie in each function's smooth domain (positive for log, |x| < 1 for arcsin, no ties
for max and sort, ...).  Piecewise-constant functions (floor, sign, round) are checked too:
their derivative is zero.  Cases with the default tolerances are compiled several to one
program, which is much faster than one program each; a failing program is re-checked one
case at a time, so a failure names its function.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import cofactor as cf
from cofactor.tracing.dispatch import CONSTRUCTORS, FUNCTIONS, UFUNCS, numpy_name
from conftest import sample
from gradcheck import check_derivatives

GROUP_SIZE = 16


def x(*shape, kind="any", seed=0):
    """A float64 array (shape (2, 3) by default); kind "pos" is in (0.1, 4), "unit" in (-0.9, 0.9),
    "ge1" in (1.1, 4), "any" in (-3, 3).  Different seeds give different (tie-free) arrays."""
    return sample(shape or (2, 3), np.float64, kind, seed)


@dataclass(frozen=True)
class Case:
    fn: Callable
    args: tuple
    rtol: float = 1e-6
    atol: float = 1e-7
    eps: float = 1e-6
    xfail: str | None = None

    def check(self):
        check_derivatives(self.fn, *self.args, rtol=self.rtol, atol=self.atol, eps=self.eps)


def case(fn, *args, **options) -> Case:
    return Case(fn, args, **options)


def mutated(operation):
    """``operation(a, *rest)`` writes into ``a``: apply it to a copy, so the caller's array (and
    NumPy's reference run) is left alone, and return the copy."""
    def run(a, *rest):
        a = a.copy()
        operation(a, *rest)
        return a
    return run


def parts(z):
    """A complex result as its real and imaginary parts (the checks compare real arrays)."""
    return np.real(z), np.imag(z)


def symmetric(a):
    return a + np.swapaxes(a, -1, -2)


def well_conditioned(a):
    """A square matrix far from singular, built from ``a`` so its derivative flows through."""
    return a + 4 * np.eye(a.shape[-1])


def positive_definite(a):
    return a @ np.swapaxes(a, -1, -2) + np.eye(a.shape[-1])


def unsigned_columns(v):
    """Eigenvectors with a sign convention that is smooth in the input (LAPACK's is arbitrary)."""
    return v * np.sign(v[..., :1, :])


def eigh_parts(a, **kw):
    w, v = np.linalg.eigh(symmetric(a), **kw)
    return w, unsigned_columns(v)


def _nan_skipping(reduction, a):
    """``reduction`` along axis 1 of ``a`` with NaNs where MASK is true."""
    return reduction(np.where(MASK, np.nan, a), axis=1)


def _complex_parts(transform, a):
    return parts(transform(a))


def _of_complex(transform, a, b):
    return transform(a + 1j * b)


def _setitem(a, v):
    a[0, 1:] = v


def _fill(a, v):
    a.fill(v[0])


def _sort_in_place(a):
    a.sort(axis=1)


INDEX = np.array([0, 2, 0])
MASK = np.array([[True, False, True], [False, False, True]])
SQUARE = (3, 3)


# --- ufuncs: called, and their reduce/accumulate/outer/at methods ---------------------------------

UNARY_UFUNCS = {  # ufunc -> the kind of input in its smooth domain
    np.absolute: "any", np.arccos: "unit", np.arccosh: "ge1", np.arcsin: "unit", np.arcsinh: "any",
    np.arctan: "any", np.arctanh: "unit", np.cbrt: "pos", np.ceil: "any", np.conjugate: "any",
    np.cos: "any", np.cosh: "any", np.deg2rad: "any", np.degrees: "any", np.exp: "any", np.exp2: "any",
    np.expm1: "any", np.fabs: "any", np.floor: "any", np.log: "pos", np.log10: "pos", np.log1p: "pos",
    np.log2: "pos", np.negative: "any", np.positive: "any", np.rad2deg: "any", np.radians: "any",
    np.reciprocal: "pos", np.rint: "any", np.sign: "any", np.sin: "any", np.sinh: "any", np.sqrt: "pos",
    np.square: "any", np.tan: "unit", np.tanh: "any", np.trunc: "any",
}

BINARY_UFUNCS = {  # the ufuncs with outer and at methods, and their inputs' kind
    np.add: "any", np.arctan2: "any", np.copysign: "any", np.divide: "pos", np.float_power: "pos",
    np.floor_divide: "pos", np.fmax: "any", np.fmin: "any", np.hypot: "any", np.logaddexp: "any",
    np.maximum: "any", np.minimum: "any", np.multiply: "any", np.power: "pos", np.remainder: "pos",
    np.subtract: "any", np.fmod: "pos", np.heaviside: "any", np.logaddexp2: "any",
}
REDUCIBLE_UFUNCS = (np.add, np.multiply, np.maximum, np.minimum, np.fmax, np.fmin)  # with reduce and accumulate too


def _at(ufunc, a, b):
    ufunc.at(a, [0, 2, 0], b)  # constant indices (a global array would be read at run time: traced indices,
                               # and Enzyme cannot differentiate a multiplying scatter at repeated traced ones)


def ufunc_cases() -> dict:
    """Cases for the ufuncs, called and through their methods.  (No lambdas here: cofactor's
    source conversion loses a lambda's default values, and a closure over the loop variable
    would see only its last value.)"""
    cases = {}
    for u, kind in UNARY_UFUNCS.items():
        cases[f"numpy.{u.__name__}"] = [case(u, x(kind=kind))]
    for u, kind in BINARY_UFUNCS.items():
        cases[f"numpy.{u.__name__}"] = [case(u, x(kind=kind, seed=1), x(kind=kind, seed=2)),
                                        case(u, x(3, kind=kind, seed=3), x(2, 1, kind=kind, seed=4))]
    for u, kind in BINARY_UFUNCS.items():
        name = f"numpy.{u.__name__}"
        cases[f"{name}.outer"] = [case(u.outer, x(3, kind=kind, seed=1), x(2, kind=kind, seed=2))]
        cases[f"{name}.at"] = [case(mutated(functools.partial(_at, u)), x(3, kind=kind, seed=1),
                                    x(3, kind=kind, seed=2))]
    for u in REDUCIBLE_UFUNCS:
        name = f"numpy.{u.__name__}"
        cases[f"{name}.reduce"] = [case(functools.partial(u.reduce, axis=0), x(3, 2)),
                                   case(functools.partial(u.reduce, axis=None), x(2, 2, seed=1))]
        cases[f"{name}.accumulate"] = [case(functools.partial(u.accumulate, axis=1), x(2, 3))]
        cases[f"{name}.reduceat"] = [case(functools.partial(_reduceat, u), x(2, 4))]
    return cases


def _reduceat(ufunc, a):
    return ufunc.reduceat(a, [0, 2, 1], axis=-1)


def _ndenumerate_weighted(a):
    return sum(v * (i + 2 * j) for (i, j), v in np.ndenumerate(a))


def _geomspace(a):
    return np.geomspace(a[0, 0], a[1, 0], 3)


def _logspace(a):
    return np.logspace(a[0, 0], a[1, 0], 3)


# Registered, but raising UnsupportedError on traced arrays: name -> a call that must raise.
UNSUPPORTED = {
    "numpy.geomspace": _geomspace,
    "numpy.logspace": _logspace,
    **{f"numpy.{u.__name__}.{method}": functools.partial(getattr(u, method), axis=0)
       for u in BINARY_UFUNCS if u not in REDUCIBLE_UFUNCS for method in ("reduce", "accumulate")},
    **{f"numpy.{u.__name__}.reduceat": functools.partial(_reduceat, u)
       for u in BINARY_UFUNCS if u not in REDUCIBLE_UFUNCS},
    "numpy.unique_values": np.unique_values,
}


# Array constructors are traced only in converted code, which needs the function's source:
# named functions, not lambdas inside the table.
def _array(a, b):
    return np.array([a, b])


def _asarray(a):
    return np.asarray(a) * 2


def _asanyarray(a):
    return np.asanyarray(a) * 2


def _ascontiguousarray(a):
    return np.ascontiguousarray(a.T)


def _asfortranarray(a):
    return np.asfortranarray(a) * 2.0


def _require(a):
    return np.require(a.T, requirements="C") * 2.0


def _fromiter(a):
    return np.fromiter((v * v for v in a), float)


def _fromfunction(a):
    return np.fromfunction(lambda i, j: a[i, j] * (i + 1.0), a.shape, dtype=int)


def _full(a):
    return np.full((2, 3), a[0])


def _linspace(a, b):
    return np.linspace(a[0], b[0], 5)


def merged(*tables) -> dict:
    """One table of cases: the cases of a name in several tables all count."""
    out: dict = {}
    for table in tables:
        for name, cases in table.items():
            out.setdefault(name, []).extend(cases)
    return out


# NumPy's scalar types called on traced values (named functions: calls are routed through cofactor's
# constructors only in code whose source it converts, which a lambda inside this table is not).
def _float64_scalar(a):
    return np.float64(a.sum()) * a


def _float32_array(a):
    return np.float32(a)


def _float16_scalar(a):
    return np.float16(a[0, 0]).astype(np.float64) * a  # only the scalar rounded to float16


def _complex128_real(a):
    return np.complex128(a).real


def _complex64_real(a):
    return np.complex64(a).real


CASES: dict[str, list[Case]] = merged(ufunc_cases(), {
    "numpy.power": [case(np.power, x(kind="pos", seed=1), x(kind="any", seed=2)),
                    case(lambda a: np.power(a, 3), x())],
    "numpy.float_power": [case(np.float_power, x(kind="pos", seed=1), x(kind="any", seed=2))],
    "numpy.ldexp": [case(lambda a: np.ldexp(a, np.array([[1, -2, 0], [3, 0, -1]])), x())],
    "numpy.divmod": [case(np.divmod, x(kind="pos", seed=1), x(kind="pos", seed=2))],
    "numpy.modf": [case(np.modf, x())],
    "numpy.matmul": [case(np.matmul, x(2, 3, seed=1), x(3, 4, seed=2)),
                     case(np.matmul, x(2, 2, 3, seed=1), x(3, seed=2))],
    "numpy.matvec": [case(np.matvec, x(2, 3, seed=1), x(3, seed=2))],
    "numpy.vecmat": [case(np.vecmat, x(2, seed=1), x(2, 3, seed=2))],
    "numpy.vecdot": [case(np.vecdot, x(2, 3, seed=1), x(2, 3, seed=2))],

    # --- ndarray methods and indexing
    "ndarray.__getitem__": [case(lambda a: a[1:, ::2], x()), case(lambda a: a[[0, 1, 0], -1], x()),
                            # (a mask made inside, static: MASK itself is read at every call, a traced mask)
                            case(lambda a: a[np.array([[True, False, True], [False, False, True]])], x()),
                            case(lambda a: a[..., None, 1], x())],
    "ndarray.__setitem__": [case(mutated(_setitem), x(), x(2, seed=1))],
    "ndarray.astype": [case(lambda a: a.astype(np.float32), x(), rtol=1e-4, atol=1e-4, eps=1e-2),
                       case(lambda a: a.astype(np.complex128).real, x())],
    "numpy.float64": [case(_float64_scalar, x())],
    "numpy.float32": [case(_float32_array, x(), rtol=1e-4, atol=1e-4, eps=1e-2)],
    "numpy.float16": [case(_float16_scalar, x(), rtol=2e-2, atol=2e-2, eps=0.5)],
    "numpy.complex128": [case(_complex128_real, x())],
    "numpy.complex64": [case(_complex64_real, x(), rtol=1e-4, atol=1e-4, eps=1e-2)],
    "ndarray.conj": [case(lambda a, b: parts((a + 1j * b).conj()), x(seed=1), x(seed=2))],
    "ndarray.conjugate": [case(lambda a: a.conjugate(), x())],
    "ndarray.copy": [case(lambda a: a.copy(), x())],
    "ndarray.fill": [case(mutated(_fill), x(), x(1, seed=1))],
    "ndarray.flatten": [case(lambda a: a.flatten(), x())],
    "ndarray.ravel": [case(lambda a: a.ravel(), x())],
    "ndarray.reshape": [case(lambda a: a.reshape(3, 2), x())],
    "ndarray.sort": [case(mutated(_sort_in_place), x())],
    "ndarray.squeeze": [case(lambda a: a.squeeze(), x(2, 1, 3))],
    "ndarray.view": [case(lambda a: a.view() * a, x())],
    "ndarray.transpose": [case(lambda a: a.transpose(), x())],

    # --- constructors that take arrays
    "numpy.array": [case(_array, x(3, seed=1), x(3, seed=2))],
    "numpy.asarray": [case(_asarray, x())],
    "numpy.asanyarray": [case(_asanyarray, x())],
    "numpy.ascontiguousarray": [case(_ascontiguousarray, x())],
    "numpy.asfortranarray": [case(_asfortranarray, x())],
    "numpy.require": [case(_require, x())],
    "numpy.fromfunction": [case(_fromfunction, x())],
    "numpy.fromiter": [case(_fromiter, x(3))],
    "numpy.copy": [case(np.copy, x())],
    "numpy.full": [case(_full, x(1))],
    "numpy.full_like": [case(lambda a: np.full_like(a, 2.5), x()),
                        case(lambda a, v: np.full_like(a, v[0]), x(), x(1, seed=1))],
    "numpy.ones_like": [case(np.ones_like, x())],
    "numpy.zeros_like": [case(np.zeros_like, x())],
    "numpy.linspace": [case(_linspace, x(1, seed=1), x(1, seed=2))],

    # --- reductions and scans
    "numpy.sum": [case(np.sum, x()), case(lambda a: np.sum(a, axis=1, keepdims=True), x())],
    "numpy.prod": [case(np.prod, x()), case(lambda a: np.prod(a, axis=0), x(3, 2))],
    "numpy.mean": [case(lambda a: np.mean(a, axis=0), x())],
    "numpy.var": [case(np.var, x()), case(lambda a: np.var(a, axis=1, ddof=1), x())],
    "numpy.std": [case(lambda a: np.std(a, axis=0), x())],
    "numpy.max": [case(np.max, x()), case(lambda a: np.max(a, axis=1), x())],
    "numpy.amax": [case(lambda a: np.amax(a, axis=0), x())],
    "numpy.min": [case(np.min, x()), case(lambda a: np.min(a, axis=0, initial=0.5), x())],
    "numpy.amin": [case(lambda a: np.amin(a, axis=1), x())],
    "numpy.ptp": [case(lambda a: np.ptp(a, axis=1), x())],
    "numpy.cumsum": [case(np.cumsum, x()), case(lambda a: np.cumsum(a, axis=0), x(5, 2))],
    "numpy.cumprod": [case(np.cumprod, x()), case(lambda a: np.cumprod(a, axis=1), x(2, 5))],
    "numpy.cumulative_sum": [case(lambda a: np.cumulative_sum(a, axis=1, include_initial=True), x())],
    "numpy.cumulative_prod": [case(lambda a: np.cumulative_prod(a, axis=0), x())],
    "numpy.average": [case(lambda a: np.average(a, axis=1), x()),
                      case(lambda a, w: np.average(a, axis=1, weights=w), x(), x(3, kind="pos", seed=1))],
    "numpy.median": [case(np.median, x()), case(lambda a: np.median(a, axis=1), x(2, 5))],
    "numpy.percentile": [case(lambda a: np.percentile(a, [30, 75], axis=1), x(2, 5))],
    "numpy.quantile": [case(lambda a: np.quantile(a, 0.4), x())],
    "numpy.trace": [case(np.trace, x(*SQUARE))],
    "numpy.trapezoid": [case(np.trapezoid, x()),
                        case(lambda y, t: np.trapezoid(y, np.cumsum(t)), x(4), x(4, kind="pos"))],
    "numpy.cov": [case(np.cov, x(2, 5))],
    "numpy.corrcoef": [case(np.corrcoef, x(3, 4))],

    # --- reductions that skip NaNs (the input holds NaNs where MASK is true)
    **{f"numpy.{name}": [case(functools.partial(_nan_skipping, getattr(np, name)), x())]
       for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nanmedian",
                    "nancumsum", "nancumprod")},

    # --- shape manipulation
    "numpy.reshape": [case(lambda a: np.reshape(a, (3, 2)), x())],
    "numpy.ravel": [case(np.ravel, x())],
    "numpy.transpose": [case(np.transpose, x(2, 3, 4))],
    "numpy.matrix_transpose": [case(np.matrix_transpose, x(2, 3, 4))],
    "numpy.swapaxes": [case(lambda a: np.swapaxes(a, 0, 2), x(2, 3, 4))],
    "numpy.moveaxis": [case(lambda a: np.moveaxis(a, 0, -1), x(2, 3, 4))],
    "numpy.rollaxis": [case(lambda a: np.rollaxis(a, 2), x(2, 3, 4))],
    "numpy.expand_dims": [case(lambda a: np.expand_dims(a, 1), x())],
    "numpy.squeeze": [case(np.squeeze, x(1, 3, 1))],
    "numpy.atleast_1d": [case(np.atleast_1d, x(1))],
    "numpy.atleast_2d": [case(np.atleast_2d, x(3))],
    "numpy.atleast_3d": [case(np.atleast_3d, x())],
    "numpy.broadcast_to": [case(lambda a: np.broadcast_to(a, (4, 2, 3)), x())],
    "numpy.as_strided": [case(lambda a: np.lib.stride_tricks.as_strided(a, shape=(2, 2), strides=(8, 8)) ** 2, x(3))],
    "numpy.sliding_window_view": [case(lambda a: np.lib.stride_tricks.sliding_window_view(a, 2, axis=0), x(3, 2))],
    "numpy.ndenumerate": [case(_ndenumerate_weighted, x(2, 3))],
    "numpy.broadcast_arrays": [case(np.broadcast_arrays, x(3, seed=1), x(2, 1, seed=2))],
    "numpy.concatenate": [case(lambda a, b: np.concatenate([a, b], axis=1), x(seed=1), x(2, 2, seed=2))],
    "numpy.stack": [case(lambda a, b: np.stack([a, b], axis=1), x(seed=1), x(seed=2))],
    "numpy.unstack": [case(lambda a: np.unstack(a, axis=1), x())],
    "numpy.hstack": [case(lambda a, b: np.hstack([a, b]), x(seed=1), x(seed=2))],
    "numpy.vstack": [case(lambda a, b: np.vstack([a, b]), x(seed=1), x(3, seed=2))],
    "numpy.row_stack": [case(lambda a, b: np.row_stack([a, b]), x(seed=1), x(seed=2))],
    "numpy.dstack": [case(lambda a, b: np.dstack([a, b]), x(seed=1), x(seed=2))],
    "numpy.column_stack": [case(lambda a, b: np.column_stack([a, b]), x(3, seed=1), x(3, 2, seed=2))],
    "numpy.block": [case(lambda a, b, c: np.block([[a, b], [c]]), x(2, 2, seed=1), x(2, 1, seed=2),
                         x(1, 3, seed=3))],
    "numpy.split": [case(lambda a: np.split(a, 3, axis=1), x())],
    "numpy.array_split": [case(lambda a: np.array_split(a, 2), x(5))],
    "numpy.hsplit": [case(lambda a: np.hsplit(a, [1]), x())],
    "numpy.vsplit": [case(lambda a: np.vsplit(a, 2), x())],
    "numpy.dsplit": [case(lambda a: np.dsplit(a, 2), x(2, 2, 4))],
    "numpy.flip": [case(lambda a: np.flip(a, 1), x())],
    "numpy.fliplr": [case(np.fliplr, x())],
    "numpy.flipud": [case(np.flipud, x())],
    "numpy.roll": [case(lambda a: np.roll(a, 2, axis=1), x()), case(lambda a: np.roll(a, -1), x())],
    "numpy.rot90": [case(np.rot90, x())],
    "numpy.tile": [case(lambda a: np.tile(a, (2, 1)), x())],
    "numpy.repeat": [case(lambda a: np.repeat(a, [1, 3, 2], axis=1), x())],
    "numpy.resize": [case(lambda a: np.resize(a, (4, 2)), x())],
    "numpy.append": [case(lambda a, b: np.append(a, b, axis=0), x(seed=1), x(1, 3, seed=2))],
    "numpy.insert": [case(lambda a, b: np.insert(a, 1, b, axis=1), x(seed=1), x(2, seed=2))],
    "numpy.delete": [case(lambda a: np.delete(a, [0, 2], axis=1), x())],
    "numpy.pad": [case(lambda a: np.pad(a, ((1, 0), (2, 1))), x()),
                  case(lambda a: np.pad(a, 1, constant_values=((1.0, 2.0), (3.0, 4.0))), x())],
    "numpy.diag": [case(np.diag, x(3)), case(lambda a: np.diag(a, 1), x(*SQUARE))],
    "numpy.diagflat": [case(np.diagflat, x(2, 2))],
    "numpy.diagonal": [case(lambda a: np.diagonal(a, -1), x(*SQUARE))],
    "numpy.tril": [case(np.tril, x(*SQUARE))],
    "numpy.triu": [case(lambda a: np.triu(a, 1), x(*SQUARE))],
    "numpy.meshgrid": [case(np.meshgrid, x(3, seed=1), x(2, seed=2))],
    "numpy.vander": [case(lambda a: np.vander(a, 4), x(3))],
    "numpy.sort": [case(np.sort, x()), case(lambda a: np.sort(a, axis=0), x(4, 2))],
    "numpy.partition": [case(lambda a: np.partition(a, 2), x(5))],
    "numpy.sort_complex": [case(lambda a: np.sort_complex(a).real, x(5))],

    # --- indexing, selection and writes
    "numpy.take": [case(lambda a: np.take(a, INDEX, axis=1), x())],
    "numpy.take_along_axis": [case(lambda a: np.take_along_axis(a, np.array([[2, 0], [1, 1]]), axis=1), x())],
    "numpy.compress": [case(lambda a: np.compress([True, False, True], a, axis=1), x()),
                       case(lambda a: np.compress(a[0] > 0, a, axis=1).sum(axis=1), x())],
    "numpy.extract": [case(lambda a: np.extract(a > 0, a).sum(), x())],
    "numpy.unique": [case(lambda a: np.sum(np.unique(a) ** 2), x())],
    "numpy.union1d": [case(lambda a: np.sum(np.union1d(a, a[0] * 2) ** 2), x())],
    "numpy.intersect1d": [case(lambda a: np.sum(np.intersect1d(a, a[:, 1]) ** 2), x())],
    "numpy.setdiff1d": [case(lambda a: np.sum(np.setdiff1d(a, a[:, 1]) ** 2), x())],
    "numpy.unique_counts": [case(lambda a: np.sum(np.unique_counts(a).values ** 2), x())],
    "numpy.unique_inverse": [case(lambda a: np.sum(np.unique_inverse(a).values ** 2), x())],
    "numpy.unique_all": [case(lambda a: np.sum(np.unique_all(a).values ** 2), x())],
    "numpy.trim_zeros": [case(lambda a: np.sum(np.trim_zeros(a[0]) ** 2), x())],
    "numpy.setxor1d": [case(lambda a: np.sum(np.setxor1d(a, a[:, 1] * 2) ** 2), x())],
    "numpy.choose": [case(lambda a, b: np.choose([[0, 1, 1], [1, 0, 1]], [a, b]), x(seed=1), x(seed=2))],
    "numpy.where": [case(lambda a, b: np.where(MASK, a, b), x(seed=1), x(seed=2)),
                    case(lambda a: np.where(a > 0, a ** 2, np.sin(a)), x())],
    "numpy.select": [case(lambda a, b: np.select([a < -1, a > 1], [a * b, np.exp(b)], default=1.5),
                          x(seed=1), x(seed=2))],
    "numpy.piecewise": [case(lambda a: np.piecewise(a, [a < 0, a >= 0], [lambda v: v ** 2, np.sin]), x())],
    "numpy.put": [case(mutated(lambda a, v: np.put(a, [4, 0], v)), x(), x(2, seed=1))],
    "numpy.put_along_axis": [case(mutated(lambda a, v: np.put_along_axis(a, np.array([[1], [2]]), v, axis=1)),
                                  x(), x(2, 1, seed=1))],
    "numpy.putmask": [case(mutated(lambda a, v: np.putmask(a, MASK, v)), x(), x(seed=1))],
    "numpy.copyto": [case(mutated(lambda a, v: np.copyto(a, v, where=MASK)), x(), x(seed=1))],
    "numpy.fill_diagonal": [case(mutated(lambda a: np.fill_diagonal(a, 2.0)), x(*SQUARE)),
                            case(mutated(np.fill_diagonal), x(*SQUARE), x(3, seed=1))],
    "numpy.nan_to_num": [case(lambda a: np.nan_to_num(np.where(MASK, np.nan, a)), x())],
    "numpy.interp": [case(lambda t: np.interp(t, [-3.0, -1.0, 0.5, 3.0], [1.0, -2.0, 0.0, 4.0]), x(5)),
                     case(lambda t, fp: np.interp(t, [-3.0, -1.0, 0.5, 3.0], fp), x(5), x(4, seed=1)),
                     case(lambda t, d: np.interp(t, np.cumsum(d) - 4, [1.0, -2.0, 0.0, 4.0]), x(5),
                          x(4, kind="ge1"))],
    "numpy.histogram": [case(lambda a: np.histogram(a, bins=3)[1], x(6))],
    "numpy.bincount": [case(lambda w: np.bincount(np.array([0, 2, 2, 1]), weights=w), x(4))],
    "numpy.apply_along_axis": [case(lambda a: np.apply_along_axis(lambda r: r * np.sum(r), 1, a), x())],

    # --- elementwise functions that are not ufuncs
    "numpy.around": [case(lambda a: np.around(a, 1), x())],
    "numpy.round": [case(np.round, x())],
    "numpy.fix": [case(np.fix, x())],
    "numpy.clip": [case(lambda a: np.clip(a, -1, 1), x()),
                   case(np.clip, x(seed=1), x(seed=2) - 1, x(seed=3) + 1)],
    "numpy.sinc": [case(np.sinc, x())],
    "numpy.real": [case(lambda a, b: np.real(a + 1j * b), x(seed=1), x(seed=2))],
    "numpy.imag": [case(lambda a, b: np.imag(a * (a + 1j * b)), x(seed=1), x(seed=2))],
    "numpy.conjugate": [case(lambda a, b: parts(np.conjugate(a * (a + 1j * b))), x(seed=1), x(seed=2))],
    "numpy.angle": [case(lambda a, b: np.angle(a + 1j * b), x(seed=1), x(seed=2))],
    "numpy.unwrap": [case(lambda a: np.unwrap(3 * a), x(6))],
    "numpy.astype": [case(lambda a: np.astype(a, np.complex128).imag + a, x())],

    # --- differences, products, polynomials
    "numpy.diff": [case(np.diff, x()), case(lambda a: np.diff(a, n=2, axis=0), x(4, 2))],
    "numpy.ediff1d": [case(lambda a: np.ediff1d(a, to_begin=[1.0]), x(4))],
    "numpy.gradient": [case(lambda a: np.gradient(a, axis=1), x(2, 4)), case(np.gradient, x(5))],
    "numpy.dot": [case(np.dot, x(2, 3, seed=1), x(3, seed=2))],
    "numpy.vdot": [case(np.vdot, x(seed=1), x(seed=2))],
    "numpy.inner": [case(np.inner, x(seed=1), x(4, 3, seed=2))],
    "numpy.outer": [case(np.outer, x(3, seed=1), x(2, seed=2))],
    "numpy.tensordot": [case(lambda a, b: np.tensordot(a, b, axes=([1], [0])), x(seed=1), x(3, 2, seed=2))],
    "numpy.einsum": [case(lambda a, b: np.einsum("ij,jk->ik", a, b), x(seed=1), x(3, 2, seed=2)),
                     case(lambda a: np.einsum("ii->i", a), x(*SQUARE))],
    "numpy.kron": [case(np.kron, x(2, 2, seed=1), x(2, 1, seed=2))],
    "numpy.cross": [case(np.cross, x(seed=1), x(seed=2))],
    "numpy.convolve": [case(np.convolve, x(4, seed=1), x(3, seed=2))],
    "numpy.correlate": [case(lambda a, v: np.correlate(a, v, "same"), x(4, seed=1), x(3, seed=2))],
    "numpy.polyval": [case(np.polyval, x(3, seed=1), x(4, seed=2))],

    # --- FFTs (complex results as real and imaginary parts)
    **{f"numpy.fft.{name}": [case(functools.partial(_complex_parts, getattr(np.fft, name)), x(2, 4))]
       for name in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "rfft2", "rfftn", "ihfft")},
    **{f"numpy.fft.{name}": [case(functools.partial(_of_complex, getattr(np.fft, name)), x(2, 4, seed=1),
                                  x(2, 4, seed=2))]
       for name in ("irfft", "irfft2", "irfftn", "hfft")},
    "numpy.fft.fftshift": [case(np.fft.fftshift, x(2, 5))],
    "numpy.fft.ifftshift": [case(np.fft.ifftshift, x(2, 5))],

    # --- numpy.linalg
    "numpy.linalg.solve": [case(lambda a, b: np.linalg.solve(well_conditioned(a), b), x(*SQUARE, seed=1),
                                x(3, 2, seed=2)),
                           case(lambda a, b: np.linalg.solve(well_conditioned(a), b), x(2, *SQUARE, seed=1),
                                x(2, 3, 2, seed=2))],
    "numpy.linalg.inv": [case(lambda a: np.linalg.inv(well_conditioned(a)), x(2, *SQUARE))],
    "numpy.linalg.det": [case(np.linalg.det, x(*SQUARE)), case(np.linalg.det, x(2, *SQUARE))],
    "numpy.linalg.slogdet": [case(np.linalg.slogdet, x(*SQUARE)),
                             case(lambda a: np.linalg.slogdet(well_conditioned(a)[::-1]), x(*SQUARE))],
    "numpy.linalg.cholesky": [case(lambda a: np.linalg.cholesky(positive_definite(a)), x(*SQUARE)),
                              case(lambda a: np.linalg.cholesky(positive_definite(a), upper=True), x(*SQUARE)),
                              case(lambda a, b: np.linalg.cholesky(positive_definite(a) + np.triu(b, 1)),
                                   x(*SQUARE, seed=1), x(*SQUARE, seed=2))],  # reads the lower triangle
    "numpy.linalg.eigh": [case(eigh_parts, x(*SQUARE)),
                          case(lambda a: unsigned_columns(np.linalg.eigh(a)[1]), x(*SQUARE))],  # one triangle
    "numpy.linalg.eigvalsh": [case(lambda a: np.linalg.eigvalsh(symmetric(a)), x(*SQUARE)),
                              case(lambda a: np.linalg.eigvalsh(a, UPLO="U"), x(2, *SQUARE))],  # one triangle
    "numpy.linalg.tensorinv": [case(lambda a: np.linalg.tensorinv(well_conditioned(a).reshape(3, 3), ind=1),
                                    x(*SQUARE))],
    "numpy.linalg.tensorsolve": [case(lambda a, b: np.linalg.tensorsolve(well_conditioned(a), b),
                                      x(*SQUARE, seed=1), x(3, seed=2))],
    "numpy.linalg.matrix_power": [case(lambda a: np.linalg.matrix_power(a, 5), x(*SQUARE, kind="unit")),
                                  case(lambda a: np.linalg.matrix_power(well_conditioned(a), -2), x(*SQUARE)),
                                  case(lambda a: np.linalg.matrix_power(a, 0), x(*SQUARE))],
    "numpy.linalg.cond": [case(lambda a: np.linalg.cond(a, "fro"), x(*SQUARE)),
                          case(lambda a: np.linalg.cond(a, 1), x(*SQUARE))],
    "numpy.linalg.norm": [case(np.linalg.norm, x()), case(lambda a: np.linalg.norm(a, 1, axis=1), x()),
                          case(lambda a: np.linalg.norm(a, np.inf), x()),
                          case(lambda a: np.linalg.norm(a, 3, axis=0), x())],
    "numpy.linalg.vector_norm": [case(lambda a: np.linalg.vector_norm(a, axis=1, ord=1.5), x())],
    "numpy.linalg.matrix_norm": [case(np.linalg.matrix_norm, x(2, 2, 3)),
                                 case(lambda a: np.linalg.matrix_norm(a, ord=-np.inf), x(2, 3))],
    "numpy.linalg.multi_dot": [case(lambda a, b, c: np.linalg.multi_dot([a, b, c]), x(2, 3, seed=1),
                                    x(3, 4, seed=2), x(4, seed=3))],
    "numpy.linalg.matmul": [case(np.linalg.matmul, x(2, 3, seed=1), x(3, 2, seed=2))],
    "numpy.linalg.tensordot": [case(np.linalg.tensordot, x(2, 3, seed=1), x(2, 3, seed=2))],
    "numpy.linalg.matrix_transpose": [case(np.linalg.matrix_transpose, x())],
    "numpy.linalg.outer": [case(np.linalg.outer, x(3, seed=1), x(2, seed=2))],
    "numpy.linalg.diagonal": [case(lambda a: np.linalg.diagonal(a, offset=1), x(2, 3, 3))],
    "numpy.linalg.trace": [case(np.linalg.trace, x(2, 3, 3))],
    "numpy.linalg.vecdot": [case(np.linalg.vecdot, x(seed=1), x(seed=2))],
    "numpy.linalg.cross": [case(np.linalg.cross, x(seed=1), x(seed=2))],
})

_INTEGER_OR_BOOLEAN = "integer or boolean result"
_SHAPE_ONLY = "takes shapes or compile-time numbers, no array to differentiate"
_LAPACK = "a LAPACK custom call without a derivative rule; Enzyme cannot differentiate it"
_RANDOM = "random numbers"

_UFUNC_METHODS = (".reduce", ".accumulate", ".reduceat", ".outer", ".at")
_LOGICAL_UFUNCS = ("bitwise_and", "bitwise_or", "bitwise_xor", "equal", "greater", "greater_equal",
                   "left_shift", "less", "less_equal", "logical_and", "logical_or", "logical_xor",
                   "not_equal", "right_shift")

_RANDOM_SUPPORTED = ("choice", "default_rng", "exponential", "normal", "permutation", "rand", "randint", "randn",
                     "random", "random_sample", "ranf", "sample", "seed", "shuffle", "standard_exponential",
                     "standard_normal", "uniform")
NOT_DIFFERENTIABLE: dict[str, str] = {
    **{f"numpy.{u}{m}": _INTEGER_OR_BOOLEAN for u in (*_LOGICAL_UFUNCS, "gcd", "lcm") for m in ("", *_UFUNC_METHODS)},
    **{f"numpy.ldexp{m}": "the registry's cases of ldexp's methods would need an integer operand beside a float "
       "one (np.ldexp itself is checked)" for m in _UFUNC_METHODS},
    **{f"numpy.{name}": _INTEGER_OR_BOOLEAN for name in (
        "bitwise_count", "invert", "isfinite", "isinf", "isnan", "logical_not", "signbit",
        "all", "any", "allclose", "array_equal", "array_equiv", "isclose", "iscomplex", "iscomplexobj",
        "isreal", "isrealobj", "isin", "isneginf", "isposinf", "argmax", "argmin", "nanargmax", "nanargmin",
        "argsort", "argpartition", "argwhere", "lexsort", "searchsorted", "digitize", "count_nonzero", "nonzero",
        "flatnonzero", "diag_indices_from", "tril_indices_from", "triu_indices_from", "ix_",
        "ravel_multi_index", "unravel_index", "may_share_memory", "shares_memory", "linalg.matrix_rank",
        "packbits", "unpackbits", "indices")},
    **{f"numpy.{name}": "a dtype or shape query" for name in ("ndim", "shape", "size", "can_cast", "common_type",
                                                               "result_type")},
    **{f"numpy.{name}": _SHAPE_ONLY for name in ("arange", "empty", "eye", "identity", "ndarray", "ones", "tri",
                                                 "zeros")},
    **dict.fromkeys(UNSUPPORTED, "not supported by cofactor on traced arrays (it raises UnsupportedError)"),
    **{f"numpy.linalg.{name}": _LAPACK for name in ("qr", "svd", "svdvals", "lstsq", "pinv")},
    "numpy.polyfit": _LAPACK,  # (np.linalg.lstsq's)
    **{f"numpy.random.{name}": _RANDOM for name in _RANDOM_SUPPORTED},
    **{f"numpy.random.{name}": "not supported in compiled code (it raises UnsupportedError)"
       for name in dir(np.random) if getattr(getattr(np.random, name), "__self__", None) is np.random.mtrand._rand
       and name not in _RANDOM_SUPPORTED},
    "numpy.empty_like": "its values are unspecified (NumPy returns uninitialized memory)",
    **{f"numpy.{name}": _INTEGER_OR_BOOLEAN for name in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")},
}


def registered_names() -> set:
    """The name of every NumPy function, ufunc (method) and constructor cofactor implements."""
    names = {numpy_name(f) for f in (*FUNCTIONS, *CONSTRUCTORS)}
    names |= {f"numpy.{u.__name__}" + ("" if method == "__call__" else f".{method}") for u, method in UFUNCS}
    return names


def test_every_registered_function_is_classified():
    registered = registered_names()
    both = CASES.keys() & NOT_DIFFERENTIABLE.keys()
    assert not both, f"in both CASES and NOT_DIFFERENTIABLE: {sorted(both)}"
    classified = CASES.keys() | NOT_DIFFERENTIABLE.keys()
    assert not registered - classified, (f"registered but in neither CASES nor NOT_DIFFERENTIABLE: "
                                         f"{sorted(registered - classified)}")
    assert not classified - registered, f"not registered (renamed?): {sorted(classified - registered)}"


# --- the checks -----------------------------------------------------------------------------------

def _numbered(cases: dict) -> list:
    """(test id, case) for every case, the id naming the function."""
    return [(name if len(group) == 1 else f"{name}#{i}", c)
            for name, group in cases.items() for i, c in enumerate(group)]


CHECKS = _numbered(CASES)


def _groups(checks) -> dict:
    """Test id -> the ids checked together with it in one program: runs of up to GROUP_SIZE
    expected-to-pass cases with the same tolerances."""
    by_tolerance: dict = {}
    for test_id, c in checks:
        if c.xfail is None:
            by_tolerance.setdefault((c.rtol, c.atol, c.eps), []).append(test_id)
    groups = {}
    for ids in by_tolerance.values():
        for start in range(0, len(ids), GROUP_SIZE):
            chunk = tuple(ids[start:start + GROUP_SIZE])
            groups.update(dict.fromkeys(chunk, chunk))
    return groups


GROUPS = _groups(CHECKS)
_BY_ID = dict(CHECKS)


@functools.lru_cache(maxsize=None)
def _group_passes(ids: tuple) -> bool:
    """Whether the cases ``ids``, as one program, pass the check."""
    cases = [_BY_ID[i] for i in ids]
    counts = [len(c.args) for c in cases]

    def together(*args):
        out, start = [], 0
        for c, n in zip(cases, counts):
            out.append(c.fn(*args[start:start + n]))
            start += n
        return tuple(out)
    first = cases[0]
    try:
        check_derivatives(together, *(a for c in cases for a in c.args),
                          rtol=first.rtol, atol=first.atol, eps=first.eps)
    except Exception:  # noqa: BLE001  (any failure is reported by the one-by-one check)
        return False
    return True


def _param(test_id, c):
    marks = [pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else []
    return pytest.param(test_id, id=test_id, marks=marks)


@pytest.mark.filterwarnings("error::cofactor.OptimizationWarning")  # the optimized program must differentiate
@pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated:DeprecationWarning")
@pytest.mark.parametrize("test_id", [_param(i, c) for i, c in CHECKS])
def test_derivatives(test_id):
    group = GROUPS.get(test_id)
    if group is not None and len(group) > 1 and _group_passes(group):
        return
    _BY_ID[test_id].check()


@pytest.mark.parametrize("fn, name", [
    (lambda a: np.sum(np.linalg.svd(a, compute_uv=False)), "numpy.linalg.svd"),
    (lambda a: np.linalg.norm(a, 2), "numpy.linalg.svd"),
    (lambda a: np.sum(np.linalg.qr(a)[1]), "numpy.linalg.qr"),
    (lambda a: np.sum(np.linalg.pinv(a)), "numpy.linalg.svd"),
], ids=["svd", "norm2", "qr", "pinv"])
def test_lapack_functions_enzyme_cannot_differentiate_are_named(fn, name):
    """Enzyme has no derivative for LAPACK's SVD and QR (custom calls): the error names the NumPy function."""
    with pytest.raises(cf.UnsupportedError, match=name):
        cf.grad(fn)(x(*SQUARE))


@pytest.mark.parametrize("name", UNSUPPORTED)
def test_unsupported_functions_raise(name):
    """Once cofactor supports one of these, move it from NOT_DIFFERENTIABLE to CASES."""
    with pytest.raises(cf.UnsupportedError):
        cf.jit(UNSUPPORTED[name])(x(3, 2))
