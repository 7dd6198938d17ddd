"""The types values carry, and their MLIR spelling: tensors (everything the NumPy front end
traces), and the scalars and memrefs of kernel bodies (cofactor/kernels).

The dtype of a tensor is a NumPy dtype object; this module is the single place
that maps it to and from MLIR element types, so the IR itself stays free of
NumPy semantics.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError

_ELEMENT_TYPES = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>",
    np.dtype(np.complex128): "complex<f64>",
}


def i64_array(values) -> str:
    """An ``array<i64: ...>`` attribute (slice sizes, permutations, dimensions)."""
    values = [int(v) for v in values]
    return "array<i64: " + ", ".join(map(str, values)) + ">" if values else "array<i64>"


def element_type(dtype) -> str:
    """MLIR element type of a NumPy dtype; others (strings, objects, dates) are a clear UnsupportedError."""
    try:
        return _ELEMENT_TYPES[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise UnsupportedError(
            f"arrays of dtype {_name(dtype)} are not "
            "supported by cofactor, which compiles booleans and numbers (not strings, objects or dates): keep "
            "them outside the compiled function (work on integer codes inside it, np.where(x >= 90, 1, 0), "
            "and label the result after the call)") from None


def _name(dtype) -> str:
    try:
        return str(np.dtype(dtype))
    except TypeError:
        return repr(dtype)


def is_supported_dtype(dtype) -> bool:
    try:
        return np.dtype(dtype) in _ELEMENT_TYPES
    except TypeError:
        return False


@dataclass(frozen=True)
class TensorType:
    """A ranked tensor type: a static shape and an element dtype."""

    shape: tuple
    dtype: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))
        element_type(self.dtype)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def mlir(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{element_type(self.dtype)}>"

    def with_shape(self, shape) -> "TensorType":
        return TensorType(tuple(shape), self.dtype)

    def with_dtype(self, dtype) -> "TensorType":
        return TensorType(self.shape, dtype)


@dataclass(frozen=True)
class ScalarType:
    """A scalar of a kernel body: ``index`` (ids and subscripts) or an element type (``f64``, ``i1``)."""

    name: str

    def mlir(self) -> str:
        return self.name


@dataclass(frozen=True)
class MemRefType:
    """A kernel's view of an array argument: a buffer of a static shape that it loads and stores."""

    shape: tuple
    dtype: np.dtype

    def mlir(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"memref<{dims}{element_type(self.dtype)}>"
