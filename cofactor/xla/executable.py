"""XLA compilation through jaxlib's PJRT client, and execution on device buffers."""
from __future__ import annotations

import numpy as np

from ..errors import CompilationError
from ..runtime.array import ConcreteArray
from ..runtime.devices import default_device


def _result_handler(shape, dtype, device):
    from jax._src import core
    from jax.sharding import SingleDeviceSharding
    from jaxlib import xla_client

    return xla_client.array_result_handler(core.ShapedArray(shape, dtype), SingleDeviceSharding(device),
                                           committed=True, _skip_checks=True)


class Executable:
    """A compiled StableHLO module: call it with device buffers, get device buffers back."""

    def __init__(self, mlir_text: str, result_types, device=None):
        from jaxlib import xla_client

        self.device = device or default_device()
        try:
            self.loaded = self.device.client.compile_and_load(
                mlir_text.encode(), xla_client.DeviceList((self.device,)), xla_client.CompileOptions())
        except Exception as e:  # XLA's own diagnostic, with the module that caused it
            raise CompilationError("XLA failed to compile the module", diagnostic=str(e), mlir=mlir_text) from None
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
