"""XLA compilation through jaxlib's PJRT client, and execution on device buffers."""
from __future__ import annotations

import functools
import os
import platform
import sys
import threading

import numpy as np

from .. import cache
from ..errors import CompilationError, SlowCompileWarning, warn_in_user_code
from ..runtime.array import ConcreteArray, transfer
from ..runtime.host import readable_in_place
from ..runtime.devices import default_device


def _result_handler(shape, dtype, device):
    from jax._src import core
    from jax.sharding import SingleDeviceSharding
    from jaxlib import xla_client

    return xla_client.array_result_handler(core.ShapedArray(shape, dtype), SingleDeviceSharding(device),
                                           committed=True, _skip_checks=True)


@functools.cache
def target(device=None) -> str:
    """What an executable for ``device`` (default: the default device) is built for besides its
    module and options: the platform and its version, the device, jaxlib's version, and on CPU the
    host's instruction set (XLA compiles for it, and a cache directory may be shared by several
    machines)."""
    import jaxlib
    from jaxlib import xla_client

    device = device or default_device()
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
    """(compile_and_load, whether it took longer than its budget), or an executable deserialized
    from the disk cache."""
    from jaxlib import xla_client

    devices = xla_client.DeviceList((device,))
    name = cache.key(mlir_text, options.SerializeAsString(), target(device))
    serialized = cache.load("xla", name)
    if serialized is not None:
        try:
            return device.client.deserialize_executable(serialized, devices, options), False
        except Exception:  # written by an incompatible build: compile again and replace it
            pass
    try:
        loaded, slow = _compile_in_time(device, mlir_text.encode(), devices, options)
    except Exception as e:  # XLA's own diagnostic, with the module that caused it
        raise CompilationError("XLA failed to compile the module", diagnostic=str(e), mlir=mlir_text) from None
    if cache.directory() is not None:
        try:
            cache.store("xla", name, loaded.serialize())
        except Exception:  # a PJRT plugin without serialization: nothing to cache
            pass
    return loaded, slow


# XLA's CPU backend compiles some small programs for minutes: a fusion of a chain of steps that each
# read the last one at other indices (reversed, selected) emits every element's whole expression
# tree, which grows exponentially (24 unrolled steps of m = np.tanh(m[::-1]) + m[::-1]: over 5
# minutes; seed 211085's 2,000 selects and reverses on 3x4 arrays: 50 s, with or without the fusion
# emitters; 0.8 s and 0.06 s without fusion).  A compile that takes longer than this is started again
# without fusion, and the first to finish is used; the abandoned one cannot be cancelled and finishes
# in the background (the interpreter waits for it at exit).  Unfused programs run slower (each
# operation a loop of its own), so only programs that hit the budget pay it.
SLOW_COMPILE_SECONDS = float(os.environ.get("COFACTOR_SLOW_COMPILE_SECONDS", "20"))
_WITHOUT_FUSION = [("xla_disable_hlo_passes", "fusion")]


def _compile_in_time(device, mlir: bytes, devices, options):
    """(compile_and_load, whether it took longer than its budget: then it is compiled again without
    fusion, and the first to finish is used)."""
    from jaxlib import xla_client

    finished = threading.Event()
    first = _start(finished, device.client.compile_and_load, mlir, devices, options)
    if finished.wait(SLOW_COMPILE_SECONDS) or device.client.platform != "cpu":
        _wait(finished, first)
        return _result(first), False
    warn_in_user_code(f"XLA took more than {SLOW_COMPILE_SECONDS:g} s to compile this program: compiling it again without "
                  "fusing its operations, which some programs take minutes to compile with (the program may run "
                  "slower; COFACTOR_SLOW_COMPILE_SECONDS sets the budget)", SlowCompileWarning)
    fallback = xla_client.CompileOptions()
    fallback.ParseFromString(options.SerializeAsString())
    fallback.env_option_overrides = _WITHOUT_FUSION
    second = _start(finished, device.client.compile_and_load, mlir, devices, fallback)
    _wait(finished, first, second)
    if "result" in second and _note_abandoned(first):
        threading._register_atexit(_before_exit)  # (private, as concurrent.futures uses it): runs before the join
    return _result(first, second), True


_abandoned: list[dict] = []  # compiles still running that a faster one replaced


def _note_abandoned(box) -> bool:
    """Keep ``box`` to be waited for at exit; True the first time."""
    _abandoned.append(box)
    return len(_abandoned) == 1


def _before_exit():
    if not all(box.get("done") for box in _abandoned):
        print("cofactor: waiting for XLA to finish a compile that was too slow and was replaced (it cannot be "
              "cancelled, and exiting under it would abort the process); Ctrl-C stops waiting", file=sys.stderr)


def _start(finished: threading.Event, fn, *args) -> dict:
    """``fn(*args)`` in a thread of its own (not a daemon: the interpreter waits for it rather than
    exit under it); the dict it returns gets its result or error, and ``finished`` is set."""
    box = {}

    def run():
        try:
            box["result"] = fn(*args)
        except BaseException as e:  # handed to the waiting thread
            box["error"] = e
        finally:
            box["done"] = True
            finished.set()

    threading.Thread(target=run, name="cofactor-xla-compile").start()
    return box


def _wait(finished: threading.Event, *boxes):
    """Wait, in a way Ctrl-C interrupts (not Thread.join: that leaves the thread unjoinable at
    exit), until one of ``boxes`` has a result or all have failed."""
    while not (any("result" in b for b in boxes) or all(b.get("done") for b in boxes)):
        finished.wait()
        finished.clear()


def _result(*boxes):
    """The first result among ``boxes``, or the first one's error."""
    for box in boxes:
        if "result" in box:
            return box["result"]
    raise boxes[0]["error"]


class Executable:
    """A compiled StableHLO module: call it with device buffers, get device buffers back."""

    def __init__(self, mlir_text: str, result_types, device=None):
        from jaxlib import xla_client

        self.device = device or default_device()
        self.loaded, self.slow = _compile(mlir_text, self.device, xla_client.CompileOptions())
        self._handlers = [_result_handler(t.shape, t.dtype, self.device) for t in result_types]
        self._put = transfer(self.device)
        # The device reads host memory where it is; the caller waits for the outputs to know the run has ended.
        self._in_place = self.device.platform == "cpu" and bool(result_types)

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

    def buffers(self, values, shareable=None) -> tuple[list, bool]:
        """Device buffers for arguments, and whether the run must end before the call returns:
        the NumPy arrays among them that ``shareable`` allows (None: all) are read in place where
        the device can, and the caller may write them as soon as it returns."""
        buffers, waits = [], False
        for k, value in enumerate(values):
            if type(value) is ConcreteArray:
                buffers.append(value.buffer)
            elif type(value) is np.ndarray and value.flags.c_contiguous:  # its dtype was checked at the trace
                in_place = self._in_place and (shareable is None or shareable[k]) and readable_in_place(value)
                buffers.append(self._put(value, in_place))
                waits |= in_place
            else:
                buffers.append(self.to_buffer(value))
        return buffers, waits
