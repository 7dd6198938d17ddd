"""On CPU, large matrix products run in NumPy's own BLAS rather than XLA's dot.

XLA:CPU multiplies matrices with Eigen compiled for a baseline instruction set; NumPy's wheels
bundle OpenBLAS, which chooses its kernels for the machine (AVX-512 where there is one).  On
such a machine XLA's dot took 1.6x NumPy's time for 400x400 float64 matrices (1.07x at 1000x1000),
so a NumPy program compiled by cofactor lost to NumPy on the operation it spends its time in; and
a program that also calls NumPy had two thread pools contend for the cores (a 4000x5000
matrix-vector product through XLA took 18.8 ms between NumPy calls, 10 ms through OpenBLAS).
``lowered`` therefore rewrites each float32 or float64 ``stablehlo.dot_general`` of matrices and
vectors (no batch dimensions) that is large enough into a custom call of ``_blas.c``, which calls
OpenBLAS's gemm or gemv with transpose flags in place of transposed operands.  It is the last
step before XLA compiles a module for one CPU device (a program over several devices keeps XLA's
dot, which its partitioner splits).

The rewrite reads the module's text (a dot_general is one line, in the form MLIR prints or the
one cofactor's printer does) and leaves every line it does not recognize as it is.
``COFACTOR_BLAS=0`` turns it off; it is off where cofactor was built without a C compiler or
NumPy has no ILP64 OpenBLAS."""
from __future__ import annotations

import ctypes
import functools
import glob
import os
import re
from typing import NamedTuple

import numpy as np

TARGET = "cofactor_blas"
# Below these sizes XLA's own dot is as fast (it also fuses small products with their neighbours).
MIN_GEMM_MULTIPLIES = 1 << 15  # M * N * K
MIN_GEMV_ELEMENTS = 1 << 12    # the matrix's

_TYPE = r"tensor<((?:\d+x)+)(f32|f64)>"
_DOTS = (  # as MLIR prints it (the optimized module), and as cofactor's printer does (optimize=False)
    re.compile(r"^(?P<head>\s*%[\w#:]+ = )stablehlo\.dot_general (?P<a>%[\w#]+), (?P<b>%[\w#]+), "
               r"contracting_dims = \[(?P<ca>\d)\] x \[(?P<cb>\d)\](?:, precision = \[\w+, \w+\])? : "
               rf"\({_TYPE}, {_TYPE}\) -> {_TYPE}$", re.MULTILINE),
    re.compile(r'^(?P<head>\s*%[\w#:]+ = )"stablehlo\.dot_general"\((?P<a>%[\w#]+), (?P<b>%[\w#]+)\) '
               r"<\{dot_dimension_numbers = #stablehlo\.dot<lhs_contracting_dimensions = \[(?P<ca>\d)\], "
               rf"rhs_contracting_dimensions = \[(?P<cb>\d)\]>\}}> : \({_TYPE}, {_TYPE}\) -> \({_TYPE}\)$", re.MULTILINE))
_LAYOUT = {1: "dense<0> : tensor<1xindex>", 2: "dense<[1, 0]> : tensor<2xindex>"}


def _openblas_functions():
    """The addresses of dgemm, sgemm, dgemv and sgemv in NumPy's bundled ILP64 OpenBLAS, or None."""
    root = os.path.dirname(os.path.dirname(np.__file__))
    for path in glob.glob(os.path.join(root, "numpy.libs", "*openblas64*")) + \
            glob.glob(os.path.join(root, "numpy", ".dylibs", "*openblas64*")):
        try:
            library = ctypes.CDLL(path)
            return [ctypes.cast(getattr(library, f"scipy_cblas_{name}64_"), ctypes.c_void_p).value
                    for name in ("dgemm", "sgemm", "dgemv", "sgemv")]
        except (OSError, AttributeError):
            continue
    return None


@functools.cache
def available() -> bool:
    """Whether the target is registered with XLA:CPU (done once, on first use)."""
    if os.environ.get("COFACTOR_BLAS", "1") == "0":
        return False
    try:
        from . import _blas
    except ImportError:
        return False
    functions = _openblas_functions()
    if functions is None:
        return False
    from jaxlib import xla_client

    xla_client.register_custom_call_target(TARGET, _blas.bind(*functions), "cpu", api_version=0)
    return True


def lowered(text: str) -> str:
    """``text`` with its large float matrix products as calls of NumPy's BLAS (where available)."""
    if "stablehlo.dot_general" not in text or not available():
        return text
    for dot in _DOTS:
        text = dot.sub(_call, text)
    return text


class _Operand(NamedTuple):
    name: str        # its SSA value
    dims: list       # its shape
    contracted: int  # the axis the product sums over


def _tensor(dims, kind) -> str:
    return f"tensor<{'x'.join(map(str, dims))}x{kind}>"


def _call(match) -> str:
    """The custom call for one dot_general, or the line itself when BLAS does not take it.  A product
    whose one side is a vector, or a matrix of one row or column (``x[:, None]``; cofactor's raw trace
    writes ``A @ x`` so), is a gemv: OpenBLAS's gemm with N = 1 took 2.4x its gemv's time."""
    (a_dims, a_kind), (b_dims, b_kind), (r_dims, kind) = (
        ([int(d) for d in dims[:-1].split("x")], element) for dims, element in
        (match.group(6, 7), match.group(8, 9), match.group(10, 11)))
    if not a_kind == b_kind == kind or 0 in a_dims + b_dims or not {len(a_dims), len(b_dims)} <= {1, 2}:
        return match[0]  # (a product of a 3-d array, np.tensordot's, stays XLA's)
    a, b = _Operand(match["a"], a_dims, int(match["ca"])), _Operand(match["b"], b_dims, int(match["cb"]))
    m = a_dims[1 - a.contracted] if len(a_dims) == 2 else 1  # the free extents
    n = b_dims[1 - b.contracted] if len(b_dims) == 2 else 1
    routine = "d" if kind == "f64" else "s"
    if n == 1 and len(a_dims) == 2 or m == 1 and len(b_dims) == 2:  # a matrix and a vector: y = op(M) v
        matrix, vector = (a, b) if n == 1 and len(a_dims) == 2 else (b, a)
        rows, cols = matrix.dims
        if rows * cols < MIN_GEMV_ELEMENTS:
            return match[0]
        opaque, operands = f"{routine} gemv {int(matrix.contracted == 0)} {rows} {cols}", (matrix, vector)
    elif len(a_dims) == len(b_dims) == 2:
        k = a_dims[a.contracted]
        if m * n * k < MIN_GEMM_MULTIPLIES:
            return match[0]
        opaque, operands = f"{routine} gemm {int(a.contracted == 0)} {int(b.contracted == 1)} {m} {n} {k}", (a, b)
    else:
        return match[0]
    layouts = ", ".join(_LAYOUT[len(x.dims)] for x in operands)
    return (f'{match["head"]}stablehlo.custom_call @{TARGET}({operands[0].name}, {operands[1].name}) '
            f'{{api_version = 3 : i32, backend_config = "{opaque}", operand_layouts = [{layouts}], '
            f'result_layouts = [{_LAYOUT[len(r_dims)]}]}} : '
            f'({", ".join(_tensor(x.dims, kind) for x in operands)}) -> {_tensor(r_dims, kind)}')
