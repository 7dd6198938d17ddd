"""Tracing a Python function into a StableHLO module.

Array leaves of the arguments become function arguments (traced by shape
and dtype); every other leaf is a compile-time constant handed to the
function unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..ir import ops
from ..ir.core import Function, Module, insertion_point
from ..ir.types import TensorType, is_supported_dtype
from ..pytree import TreeDef, flatten, unflatten
from .array import TracedArray, constant


def is_array(x) -> bool:
    """Leaves traced by shape and dtype: NumPy arrays and scalars, and anything with
    ``shape``/``dtype`` and ``__array__`` (device arrays)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return True
    return hasattr(x, "__array__") and hasattr(x, "shape") and hasattr(x, "dtype")


def argument_type(x) -> TensorType:
    if not is_supported_dtype(x.dtype):
        raise TracingError(f"arguments of dtype {x.dtype} are not supported by cofactor")
    return TensorType(np.shape(x), x.dtype)


@dataclass
class Trace:
    module: Module
    arg_types: list        # TensorType of each array leaf, in order
    out_treedef: TreeDef
    out_types: list        # TensorType of each output leaf


def _output_value(leaf):
    if isinstance(leaf, TracedArray):
        return leaf.value
    if isinstance(leaf, (bool, int, float, complex)) or is_array(leaf):
        return constant(np.asarray(leaf)).value
    raise TracingError(f"the function returned a {type(leaf).__name__}, which is not an array or a "
                       "number (outputs must be pytrees of arrays)")


def trace(fn, args: tuple, kwargs: dict) -> Trace:
    leaves, treedef = flatten((args, kwargs))
    array_positions = [i for i, leaf in enumerate(leaves) if is_array(leaf)]
    arg_types = [argument_type(leaves[i]) for i in array_positions]
    module = Module()
    main = module.add(Function("main", arg_types))
    with insertion_point(main.body):
        traced = list(leaves)
        for i, value in zip(array_positions, main.arguments):
            traced[i] = TracedArray(value)
        inputs = [(traced[i], traced[i].value) for i in array_positions]
        t_args, t_kwargs = unflatten(treedef, traced)
        result = fn(*t_args, **t_kwargs)
        for array, original in inputs:
            if array.value is not original:
                raise UnsupportedError(
                    "the function updates one of its argument arrays in place; writing the update back "
                    "to the caller is not supported yet (work on a copy: x = x.copy())")
        out_leaves, out_treedef = flatten(result)
        out_values = [_output_value(leaf) for leaf in out_leaves]
        ops.return_(out_values)
    main.result_types = [v.type for v in out_values]
    return Trace(module, arg_types, out_treedef, main.result_types)
