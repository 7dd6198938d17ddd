"""PJRT devices, through jaxlib's backends (CPU, and GPU/TPU when their plugin is installed)."""
from __future__ import annotations

import functools
import os

# XLA logs INFO lines when its client starts; read when jaxlib loads, so set it first.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")


@functools.cache
def devices() -> tuple:
    """All devices of the default PJRT backend."""
    import jax  # jaxlib's plugin discovery; cofactor never uses jax's tracing

    return tuple(jax.devices())


@functools.cache
def local_devices() -> tuple:
    """The devices of this process (all of them, unless several processes share one runtime)."""
    import jax

    return tuple(jax.local_devices())


def default_device():
    """This process's first device (in a run of several processes, devices()[0] may be another's)."""
    return local_devices()[0]
