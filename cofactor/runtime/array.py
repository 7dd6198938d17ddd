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
def single_device(device):
    """The sharding of arrays on ``device`` alone (one object, so a check is an identity test)."""
    from jax.sharding import SingleDeviceSharding

    return SingleDeviceSharding(device)


@functools.cache
def transfer(device):
    """jaxlib's batched host-to-device transfer for ``device`` (with the sharding it needs, built
    once): ``put(array, in_place)``, a copy unless ``in_place`` (an array host.readable_in_place
    says the device reads where it is: the caller keeps it unchanged until the run ends)."""
    from jax._src import core
    from jaxlib import _jax, xla_client

    sharding = single_device(device)
    aval_of = functools.lru_cache(maxsize=256)(core.ShapedArray)  # building one costs as much as the copy
    zero_copy = xla_client.HostBufferSemantics.ZERO_COPY  # forced to copy unless in place

    def put(array: np.ndarray, in_place=False):
        # committed, no narrowing of 64-bit types; a copy unless in place (later host writes must not show)
        return _jax.batched_device_put(aval_of(array.shape, array.dtype), sharding, [array], [device], True,
                                       not in_place, zero_copy, enable_x64=True)
    return put


def aval_of(buffer) -> tuple:
    """(shape, dtype string), and the sharding of an array on several devices: the part of a
    compiled function's cache key an array argument decides."""
    aval = (tuple(buffer.shape), np.dtype(buffer.dtype).str)
    sharding = buffer.sharding
    return aval + (sharding,) if len(sharding.device_set) > 1 else aval


class ConcreteArray(np.lib.mixins.NDArrayOperatorsMixin):
    """A device-resident array, on one device or sharded over several; ``np.asarray(a)`` copies it
    to the host (gathering its shards).  Code after the call reads it as a NumPy array: operators,
    ufuncs, indexing and ndarray's methods and attributes act on its host value and give NumPy's
    results (``r == 7`` compares values, as for the ndarray NumPy would have returned)."""

    __slots__ = ("buffer", "aval", "__weakref__")
    __array_priority__ = 100
    __hash__ = object.__hash__  # its identity (cofactor keys arguments by it), unlike an ndarray's

    def __init__(self, buffer, aval=None):
        self.buffer = buffer
        self.aval = aval or aval_of(buffer)

    @classmethod
    def from_numpy(cls, array, device=None) -> "ConcreteArray":
        """A copy of ``array`` on ``device``, or sharded as a NamedSharding ``device``."""
        array = np.asarray(array)
        if array.dtype.kind not in "biufc" or array.dtype.itemsize > 16:
            raise TypeError(f"cofactor cannot put arrays of dtype {array.dtype} on a device")
        array = array if array.flags.c_contiguous else array.copy()  # keeps 0-d arrays 0-d
        if device is not None and not hasattr(device, "client"):  # a sharding
            from .sharding import put
            return cls(put(array, device))
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
        """Its device (for a sharded array, one of its devices)."""
        return next(iter(self.buffer.devices()))

    @property
    def sharding(self):
        """How it is laid out over devices (a jax.sharding.Sharding, as for a JAX array)."""
        return self.buffer.sharding

    @property
    def addressable_shards(self) -> list:
        """Its shards on this process's devices (each with ``.device``, ``.index`` and ``.data``)."""
        return self.buffer.addressable_shards

    def is_deleted(self) -> bool:
        return self.buffer.is_deleted()

    def block_until_ready(self) -> "ConcreteArray":
        self.buffer.block_until_ready()
        return self

    def __array__(self, dtype=None, copy=None):
        self.buffer.block_until_ready()  # a wait Ctrl-C interrupts (the copy below would only end with the run)
        array = np.asarray(self._local())
        if dtype is not None and np.dtype(dtype) != array.dtype:
            return array.astype(dtype)
        return array.copy() if copy else array

    def _local(self):
        """What this process can read of it: all of it, or, in a run of several processes, one copy
        of a replicated array."""
        if self.buffer.is_fully_addressable:
            return self.buffer
        if self.buffer.is_fully_replicated:
            return self.buffer.addressable_shards[0].data
        from ..errors import ArgumentError
        raise ArgumentError("this array's shards are spread over several processes, so it cannot become one NumPy "
                            "array in one of them: read its .addressable_shards")

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        """A ufunc on the host values; NotImplemented where another array type takes part (a traced
        array inside a compiled function), an error where it would write the ConcreteArray."""
        plain = (np.ndarray, np.generic, int, float, complex, bool, ConcreteArray)
        if not all(isinstance(x, plain) for x in inputs):
            return NotImplemented
        if out is not None and any(isinstance(o, ConcreteArray) for o in out):
            raise TypeError("a ConcreteArray is read-only (a device buffer): write into a NumPy copy of it, "
                            "a = np.array(a), or into the array inside the compiled function")
        inputs = tuple(np.asarray(x) if isinstance(x, ConcreteArray) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **({} if out is None else {"out": out}), **kwargs)

    def __getitem__(self, index):
        return np.asarray(self)[index]

    def __getattr__(self, name):
        """ndarray's public methods and attributes (``r.sum()``, ``r.T``, ``r.tolist()``), on the host value."""
        if name.startswith("_") or not hasattr(np.ndarray, name):
            raise AttributeError(f"'ConcreteArray' object has no attribute '{name}'")
        return getattr(np.asarray(self), name)

    def __index__(self):
        return np.asarray(self).__index__()

    def __format__(self, spec):
        return format(np.asarray(self), spec)  # a 0-d array as its element: f"{loss:.4f}"

    def __round__(self, ndigits=None):
        array = np.asarray(self)  # a 0-d result stands for the NumPy scalar NumPy would have returned
        return round(array[()] if array.ndim == 0 else array, ndigits)

    def __reduce__(self):
        """Pickled (and deep-copied) as its host value, put back on the default device: jaxlib's own
        pickling of the buffer loses 64-bit dtypes."""
        return ConcreteArray.from_numpy, (np.asarray(self),)

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
    """Copy every array in a pytree to ``device`` (default: the first), or shard it as a
    NamedSharding ``device`` (cf.NamedSharding(mesh, cf.P("x", None))); a ConcreteArray moves only
    when a device or sharding is given; other leaves stay."""
    def moved(x):
        if isinstance(x, (np.ndarray, np.generic)) or type(x) is ConcreteArray and device is not None:
            return ConcreteArray.from_numpy(np.asarray(x), device)
        return x
    return tree_map(moved, tree)
