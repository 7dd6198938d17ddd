"""XLA compilation through jaxlib's PJRT client, and execution on device buffers."""
from __future__ import annotations

import functools
import os
import platform
import threading

import numpy as np

from .. import cache
from ..errors import CompilationError
from ..runtime.array import ConcreteArray
from ..runtime.devices import default_device


def _result_handler(shape, dtype, device):
    from jax._src import core
    from jax.sharding import SingleDeviceSharding
    from jaxlib import xla_client

    return xla_client.array_result_handler(core.ShapedArray(shape, dtype), SingleDeviceSharding(device),
                                           committed=True, _skip_checks=True)


@functools.cache
def _target(device) -> str:
    """What an executable is built for besides its module and options: the platform and its
    version, the device, jaxlib's version, and on CPU the host's instruction set (XLA compiles
    for it, and a cache directory may be shared by several machines)."""
    import jaxlib
    from jaxlib import xla_client

    client = device.client
    cpu = ""
    if client.platform == "cpu":
        try:
            with open("/proc/cpuinfo") as f:
                cpu = next((line for line in f if line.startswith("flags")), "")
        except OSError:
            pass
    topology = xla_client.get_topology_for_devices([device]).fingerprint()
    return cache.key(client.platform, client.platform_version, device.device_kind, str(device.id),
                     jaxlib.__version__, str(topology), os.environ.get("XLA_FLAGS", ""), platform.machine(), cpu)


def _compile(mlir_text: str, device, options):
    """compile_and_load, or an executable deserialized from the disk cache."""
    from jaxlib import xla_client

    devices = xla_client.DeviceList((device,))
    name = cache.key(mlir_text, options.SerializeAsString(), _target(device))
    serialized = cache.load("xla", name)
    if serialized is not None:
        try:
            return device.client.deserialize_executable(serialized, devices, options)
        except Exception:  # written by an incompatible build: compile again and replace it
            pass
    try:
        loaded = _interruptible(device.client.compile_and_load, mlir_text.encode(), devices, options)
    except Exception as e:  # XLA's own diagnostic, with the module that caused it
        raise CompilationError("XLA failed to compile the module", diagnostic=str(e), mlir=mlir_text) from None
    if cache.directory() is not None:
        try:
            cache.store("xla", name, loaded.serialize())
        except Exception:  # a PJRT plugin without serialization: nothing to cache
            pass
    return loaded


def _interruptible(fn, *args):
    """``fn(*args)`` in a thread of its own, waited for in a way Ctrl-C interrupts: XLA's compile
    cannot be cancelled, so an interrupted one finishes in the background and is dropped (the
    thread is not a daemon: the interpreter waits for it rather than exit under it)."""
    box, done = {}, threading.Event()

    def run():
        try:
            box["result"] = fn(*args)
        except BaseException as e:  # handed to the waiting thread
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=run, name="cofactor-xla-compile").start()
    done.wait()  # not Thread.join: interrupting that leaves the thread unjoinable at exit
    if "error" in box:
        raise box["error"]
    return box["result"]


class Executable:
    """A compiled StableHLO module: call it with device buffers, get device buffers back."""

    def __init__(self, mlir_text: str, result_types, device=None):
        from jaxlib import xla_client

        self.device = device or default_device()
        self.loaded = _compile(mlir_text, self.device, xla_client.CompileOptions())
        self._handlers = [_result_handler(t.shape, t.dtype, self.device) for t in result_types]

    def __call__(self, buffers) -> list:
        results = self.loaded.execute_sharded(buffers)
        return results.consume_with_handlers(self._handlers)

    def hlo_text(self) -> str:
        """XLA's optimized HLO module."""
        return self.loaded.hlo_modules()[0].to_string()

    def to_buffer(self, value):
        """A device buffer for an argument: a ConcreteArray's own, or a fresh copy of host data."""
        if type(value) is ConcreteArray:
            return value.buffer
        return ConcreteArray.from_numpy(np.asarray(value), self.device).buffer
