"""Which of NumPy's public functions cofactor can trace: ``python -m cofactor.coverage [-v]``.

Counts, in the main namespace, numpy.linalg and numpy.fft, the functions that
take arrays — ufuncs, functions NumPy dispatches through ``__array_function__``,
and the array constructors — and lists the unsupported ones with ``-v``.
Functions that never see an array (dtype queries, printing options, file I/O)
are not counted: they work on their own.
"""
from __future__ import annotations

import sys
import types

import numpy as np

import cofactor  # noqa: F401  (fills the registry)
from cofactor.tracing.dispatch import CONSTRUCTORS, FUNCTIONS, UFUNCS

NAMESPACES = {"numpy": np, "numpy.linalg": np.linalg, "numpy.fft": np.fft}


def array_functions(module) -> dict:
    """Public ufuncs, ``__array_function__``-dispatched functions and array constructors of ``module``."""
    found = {}
    for name in dir(module):
        obj = getattr(module, name)
        if name.startswith("_") or isinstance(obj, (type, types.ModuleType)):
            continue
        if isinstance(obj, np.ufunc) or type(obj).__name__ == "_ArrayFunctionDispatcher" \
                or (callable(obj) and obj in CONSTRUCTORS):
            found[name] = obj
    return found


def is_supported(fn) -> bool:
    if isinstance(fn, np.ufunc):
        return (fn, "__call__") in UFUNCS
    return fn in FUNCTIONS or fn in CONSTRUCTORS


def report(verbose=False) -> str:
    lines, total, supported = [], 0, 0
    for label, module in NAMESPACES.items():
        functions = array_functions(module)
        missing = sorted(name for name, fn in functions.items() if not is_supported(fn))
        count = len(functions) - len(missing)
        total += len(functions)
        supported += count
        lines.append(f"{label:14s} {count:4d} of {len(functions):4d} supported")
        if verbose and missing:
            lines.append("  not supported: " + ", ".join(missing))
    lines.append(f"{'all':14s} {supported:4d} of {total:4d} supported")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(verbose="-v" in sys.argv))
