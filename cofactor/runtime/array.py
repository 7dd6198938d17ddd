"""ConcreteArray: an array that lives in a device buffer.

Compiled functions take and return ConcreteArrays; moving data to and from
the host happens only in ``to_device`` and ``np.asarray``.
"""
from __future__ import annotations

import functools

import numpy as np

from ..pytree import tree_map
from .devices import default_device


@functools.cache
def transfer(device):
    """jaxlib's batched host-to-device transfer for ``device`` (with the sharding it needs, built
    once): ``put(array, in_place)``, a copy unless ``in_place`` (an array host.readable_in_place
    says the device reads where it is: the caller keeps it unchanged until the run ends)."""
    from jax._src import core
    from jax.sharding import SingleDeviceSharding
    from jaxlib import _jax, xla_client

    sharding = SingleDeviceSharding(device)
    aval_of = functools.lru_cache(maxsize=256)(core.ShapedArray)  # building one costs as much as the copy
    zero_copy = xla_client.HostBufferSemantics.ZERO_COPY  # forced to copy unless in place

    def put(array: np.ndarray, in_place=False):
        # committed, no narrowing of 64-bit types; a copy unless in place (later host writes must not show)
        return _jax.batched_device_put(aval_of(array.shape, array.dtype), sharding, [array], [device], True,
                                       not in_place, zero_copy, enable_x64=True)
    return put


class ConcreteArray:
    """A device-resident array; ``np.asarray(a)`` copies it to the host."""

    __slots__ = ("buffer", "aval", "__weakref__")
    __array_priority__ = 100

    def __init__(self, buffer, aval=None):
        self.buffer = buffer
        # (shape, dtype string): the part of a compiled function's cache key this array decides
        self.aval = aval or (tuple(buffer.shape), np.dtype(buffer.dtype).str)

    @classmethod
    def from_numpy(cls, array, device=None) -> "ConcreteArray":
        """A copy of ``array`` on ``device``."""
        array = np.asarray(array)
        if array.dtype.kind not in "biufc" or array.dtype.itemsize > 16:
            raise TypeError(f"cofactor cannot put arrays of dtype {array.dtype} on a device")
        array = array if array.flags.c_contiguous else array.copy()  # keeps 0-d arrays 0-d
        return cls(transfer(device or default_device())(array))

    @property
    def shape(self) -> tuple:
        return self.aval[0]

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.aval[1])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def device(self):
        return next(iter(self.buffer.devices()))

    def is_deleted(self) -> bool:
        return self.buffer.is_deleted()

    def block_until_ready(self) -> "ConcreteArray":
        self.buffer.block_until_ready()
        return self

    def __array__(self, dtype=None, copy=None):
        self.buffer.block_until_ready()  # a wait Ctrl-C interrupts (the copy below would only end with the run)
        array = np.asarray(self.buffer)
        if dtype is not None and np.dtype(dtype) != array.dtype:
            return array.astype(dtype)
        return array.copy() if copy else array

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        text = repr(np.asarray(self))  # "array(...)", continuation lines indented to match
        return "ConcreteArray" + text[len("array"):].replace("\n", "\n" + " " * len("Concrete"))

    def __str__(self):
        return str(np.asarray(self))

    def _scalar(self, kind):
        if self.size != 1:
            raise TypeError("only arrays of size 1 can be converted to Python scalars")
        return kind(np.asarray(self).reshape(()))

    def __float__(self):
        return self._scalar(float)

    def __int__(self):
        return self._scalar(int)

    def __bool__(self):
        return self._scalar(bool)

    def __complex__(self):
        return self._scalar(complex)




def to_device(tree, device=None):
    """Copy every array in a pytree to ``device`` (default: the first); other leaves stay."""
    return tree_map(lambda x: ConcreteArray.from_numpy(x, device)
                    if isinstance(x, (np.ndarray, np.generic)) else x, tree)
