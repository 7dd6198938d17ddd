"""XLA compilation through jaxlib's PJRT client, and execution on device buffers."""
from __future__ import annotations

import functools
import os
import platform
import re
import sys
import threading
from typing import NamedTuple

import numpy as np

from .. import cache
from . import blas
from ..errors import ArgumentError, CompilationError, SlowCompileWarning, warn_in_user_code
from ..runtime import distributed
from ..runtime.array import ConcreteArray, single_device, transfer
from ..runtime.host import readable_in_place
from ..runtime.devices import default_device


def _result_handler(shape, dtype, device):
    return _sharded_handler(shape, dtype, single_device(device))


def _sharded_handler(shape, dtype, sharding):
    from jax._src import core
    from jaxlib import xla_client

    return xla_client.array_result_handler(core.ShapedArray(shape, dtype), sharding, committed=True, _skip_checks=True)


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


def _compile(mlir_text: str, devices: tuple, options):
    """(compile_and_load for ``devices``, whether it took longer than its budget), or an executable
    deserialized from the disk cache."""
    from jaxlib import xla_client

    device = devices[0]
    if device.platform != "cpu":
        mlir_text = _for_accelerators(mlir_text)
        options = _with_overrides(options, _EXACT)
    devices = xla_client.DeviceList(devices)
    name = cache.key(mlir_text, options.SerializeAsString(), str(list(options.env_option_overrides)), target(device))
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


# Off CPU, XLA multiplies float32 matrices in reduced precision (TF32 on NVIDIA GPUs) where a product
# does not ask for more: complex64 products on an H200 were 1e-4 off NumPy's.  Every product asks for
# NumPy's precision.
_PRODUCT = re.compile(r"^(\s*%[\w.#:]+ = stablehlo\.dot_general [^:]*?)( : \()", re.MULTILINE)


# XLA:GPU computes float16 (and bfloat16) arithmetic in float32 and drops the roundings between steps
# ("excess precision"); NumPy rounds each step's result (np.linspace of float16 on an H200: 3 points in
# 125 off by an ulp).
_EXACT = [("xla_allow_excess_precision", False)]


def _for_accelerators(mlir_text: str) -> str:
    """The program as XLA off CPU must see it to give NumPy's answers (the two rewrites above and below)."""
    highest = _PRODUCT.sub(lambda m: m.group(1) + ("" if "precision =" in m.group(1)
                                                   else ", precision = [HIGHEST, HIGHEST]") + m.group(2), mlir_text)
    return _without_barriers(highest)


# XLA:GPU evaluates expressions of constants and loop counters with its HloEvaluator, which has no
# opt-barrier: a barrier cofactor leaves in the program (a slice start shielded from Enzyme-JAX's loop
# raising, ir/ops.py; the steps of an exact division) fails the compile ("HloEvaluator does not
# implement the opt-barrier opcode": 49 of the suite's programs on an H200).  They have done their work
# in Enzyme-JAX's passes; XLA:CPU expands them itself.  Off CPU each becomes the value it holds.
# (Enzyme-JAX prints the pretty form; the unoptimized program, optimize=False, is cofactor's generic one.)
_BARRIER = re.compile(r"^(\s*%[\w.#]+) = stablehlo\.optimization_barrier (%[\w.#]+) : (tensor<[^>]*>)$", re.MULTILINE)
_GENERIC_BARRIER = re.compile(
    r'^(\s*%[\w.#]+) = "stablehlo\.optimization_barrier"\((%[\w.#]+)\) : \((tensor<[^>]*>)\) -> \(tensor<[^>]*>\)$',
    re.MULTILINE)


def _without_barriers(mlir_text: str) -> str:
    pretty = _BARRIER.sub(r"\1 = stablehlo.reshape \2 : (\3) -> \3", mlir_text)
    return _GENERIC_BARRIER.sub(r'\1 = "stablehlo.reshape"(\2) : (\3) -> (\3)', pretty)


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


def _with_overrides(options, overrides: list):
    """A copy of compile ``options`` with these XLA debug options too (the overrides are not serialized: copied apart)."""
    from jaxlib import xla_client

    copy = xla_client.CompileOptions()
    copy.ParseFromString(options.SerializeAsString())
    copy.env_option_overrides = list(options.env_option_overrides) + overrides
    return copy


def _compile_in_time(device, mlir: bytes, devices, options):
    """(compile_and_load, whether it took longer than its budget: then it is compiled again without
    fusion, and the first to finish is used)."""
    finished = threading.Event()
    first = _start(finished, device.client.compile_and_load, mlir, devices, options)
    if finished.wait(SLOW_COMPILE_SECONDS) or device.client.platform != "cpu":
        _wait(finished, first)
        return _result(first), False
    warn_in_user_code(f"XLA took more than {SLOW_COMPILE_SECONDS:g} s to compile this program: compiling it again without "
                  "fusing its operations, which some programs take minutes to compile with (the program may run "
                  "slower; COFACTOR_SLOW_COMPILE_SECONDS sets the budget)", SlowCompileWarning)
    second = _start(finished, device.client.compile_and_load, mlir, devices, _with_overrides(options, _WITHOUT_FUSION))
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


def _spmd_options(mesh):
    """XLA's options for one program partitioned over ``mesh``'s devices by Shardy: partition i runs
    on the i-th device of the mesh, in row-major order."""
    from jaxlib import xla_client

    options = xla_client.CompileOptions()
    options.num_replicas, options.num_partitions = 1, mesh.devices.size
    options.executable_build_options.use_spmd_partitioning = True
    options.executable_build_options.use_shardy_partitioner = True
    options.device_assignment = xla_client.DeviceAssignment.create(np.array([[d.id for d in mesh.devices.flat]]))
    return options


class Collective(NamedTuple):
    """One collective of a compiled program: its kind (HLO's name), and the dtype and shape of what
    it gives each device."""
    kind: str
    dtype: np.dtype
    shape: tuple

    @property
    def nbytes(self) -> int:
        return self.dtype.itemsize * int(np.prod(self.shape, dtype=np.int64))


_COLLECTIVE = re.compile(r"= (\w+)\[([\d,]*)\][^ ]* (all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)"
                         r"(?:-start)?\(")
_HLO_DTYPES = {"pred": "bool", "s8": "int8", "s16": "int16", "s32": "int32", "s64": "int64", "u8": "uint8",
               "u16": "uint16", "u32": "uint32", "u64": "uint64", "f16": "float16", "f32": "float32",
               "f64": "float64", "c64": "complex64", "c128": "complex128"}


def _executed(loaded, buffers, handlers) -> list:
    """The output buffers of a run of ``loaded`` on ``buffers``."""
    try:
        results = loaded.execute_sharded(buffers)
    except Exception:
        _refuse_deleted(buffers)
        raise
    return results.consume_with_handlers(handlers)


def _refuse_deleted(buffers):
    """A run that failed on a deleted device buffer (an argument donated to an earlier call, or
    deleted by the user) is the caller's mistake: say so, rather than XLA's shard-count message."""
    if any(getattr(b, "is_deleted", lambda: False)() for b in buffers):
        raise ArgumentError("an argument is a ConcreteArray whose buffer was deleted") from None


class _NativeCaller:
    """An Executable run by jaxlib's C++ dispatch (``_jax.pjit`` given the program as its
    fast-path data, as jax.jit gives it after a first call).  Its C++ code reads the JAX config
    (64-bit types off by default would narrow float64 arguments), so every call turns
    ``jax_enable_x64`` on for its thread and back.  It reads a 64-byte-aligned NumPy argument in
    place and may return before the run ends: a call with a NumPy argument waits for the run, so
    that the caller may write the array as soon as it returns."""

    def __init__(self, executable: "Executable", arity: int):
        from jax._src import config, core, tree_util
        from jax._src.interpreters import pxla
        from jaxlib import _jax

        self.sharding, self._x64 = single_device(executable.device), config.enable_x64
        loaded, handlers, put = executable.loaded, executable._handlers, executable._put

        def run(*args):  # jaxlib's cache miss, and its route where JAX's jit is disabled
            return tuple(_executed(loaded, [a if isinstance(a, _jax.ArrayImpl) else put(a) for a in args], handlers))

        def cache_miss(*args):
            return run(*args), fast, False

        results = len(handlers)
        fast = pxla.MeshExecutableFastpathData(
            loaded, tree_util.tree_structure((0,) * results), [self.sharding] * arity, [self.sharding] * results,
            [core.ShapedArray(shape, dtype) for shape, dtype in executable.result_avals], [True] * results,
            [True] * arity, [None] * arity, [])
        options = dict.fromkeys(["device", "backend", "in_shardings_treedef", "in_shardings_leaves",
                                 "out_shardings_treedef", "out_shardings_leaves", "in_layouts_treedef",
                                 "in_layouts_leaves", "out_layouts_treedef", "out_layouts_leaves",
                                 "compiler_options_kvs"])
        key = pxla.JitGlobalCppCacheKeys(donate_argnums=(), donate_argnames=(), **options)
        self._loaded, self._handlers = loaded, handlers
        self._call = _jax.pjit("cofactor", run, cache_miss, [], [], key, tree_util.dispatch_registry,
                               pxla.cc_shard_arg, _jax.PjitFunctionCache(capacity=2))

    def __call__(self, arrays):
        args, host = [], False
        for a in arrays:
            if type(a) is ConcreteArray:
                if a.buffer.sharding is not self.sharding:
                    return None
                args.append(a.buffer)
            elif a.flags.c_contiguous:  # (an ndarray)
                args.append(a)
                host = True
            else:
                return None
        if not host:  # (device buffers only: Python's route is as fast)
            return _executed(self._loaded, args, self._handlers)
        old = self._x64.swap_local(True)
        try:
            outputs = self._call(*args)
        except Exception:
            _refuse_deleted(args)
            raise
        finally:
            self._x64.set_local(old)
        outputs[0].block_until_ready()  # (the run's outputs are ready together)
        return outputs


class Executable:
    """A compiled StableHLO module: call it with device buffers, get device buffers back.  With a
    ``placement`` (placement.Placement) it is one SPMD program over the placement's mesh,
    whose arguments are put, or resharded, as the placement says before each run."""

    def __init__(self, mlir_text: str, result_types, device=None, placement=None):
        from jaxlib import xla_client

        self.placement = placement
        if placement is None:
            self.device = device or default_device()
            if self.device.platform == "cpu":
                mlir_text = blas.lowered(mlir_text)
            self.loaded, self.slow = _compile(mlir_text, (self.device,), xla_client.CompileOptions())
            self._handlers = [_result_handler(t.shape, t.dtype, self.device) for t in result_types]
            self.result_avals = [(t.shape, t.dtype) for t in result_types]
            self._put = transfer(self.device)
        else:
            from ..runtime.sharding import named, replicated
            devices = tuple(placement.mesh.devices.flat)
            self.device = devices[0]
            self.loaded, self.slow = _compile(mlir_text, devices, _spmd_options(placement.mesh))
            distributed.agree(cache.key(mlir_text, str([d.id for d in devices])))  # several processes: one program
            chosen = self.loaded.get_output_shardings()  # None on a mesh of one device
            self.out_shardings = [named(s, placement.mesh) for s in chosen] if chosen is not None else \
                [replicated(placement.mesh)] * len(result_types)
            self._handlers = [_sharded_handler(t.shape, t.dtype, sharding)
                              for t, sharding in zip(result_types, self.out_shardings)]
        # The device reads host memory where it is; the caller waits for the outputs to know the run has ended.
        self._in_place = placement is None and self.device.platform == "cpu" and bool(result_types)

    def __call__(self, buffers) -> list:
        return _executed(self.loaded, buffers, self._handlers)

    def native(self, arity: int):
        """jaxlib's C++ caller of this program (the one jax.jit uses for a signature it has seen):
        ``native(arrays)`` takes ConcreteArrays on this device and C-contiguous NumPy arrays, and
        returns the output buffers, or None for an argument it does not take (the caller takes
        the Python route).  It puts NumPy arrays on the device without Python code: 1.5 µs
        where ``batched_device_put`` from Python costs 3.5.  None for an SPMD program, and for one
        without results (there would be no run to wait for)."""
        return _NativeCaller(self, arity) if self.placement is None and self._handlers else None

    def hlo_text(self) -> str:
        """XLA's optimized HLO module."""
        return self.loaded.hlo_modules()[0].to_string()

    def collectives(self) -> list:
        """The communication between devices XLA's program does, in its order: a Collective for each
        all-reduce, all-gather, reduce-scatter, all-to-all and collective-permute."""
        return [Collective(kind, np.dtype(_HLO_DTYPES.get(dtype, dtype)), tuple(int(d) for d in dims.split(",") if d))
                for dtype, dims, kind in _COLLECTIVE.findall(self.hlo_text())]

    def to_buffer(self, value, k=0):
        """A device buffer for argument ``k``: a ConcreteArray's own, or a fresh copy of host data
        (sharded, or resharded, as the program takes it)."""
        if self.placement is not None:
            return self._sharded_buffer(value, self.placement.inputs[k])
        if type(value) is ConcreteArray and value.buffer.sharding.device_set == {self.device}:
            return value.buffer
        return ConcreteArray.from_numpy(np.asarray(value), self.device).buffer  # host data, or another device's

    def _sharded_buffer(self, value, sharding):
        """Validation before an SPMD run, which XLA does not do (a buffer of another shape, dtype,
        sharding or device order crashes it or is misread): an array already laid out as the
        program takes it is passed as it is; any other is put there (a NumPy array) or resharded."""
        from ..runtime.sharding import put
        if type(value) is ConcreteArray:
            if value.is_deleted():
                raise ArgumentError("an argument is a ConcreteArray whose buffer was deleted")
            have = value.buffer.sharding
            if have is sharding or (have.is_equivalent_to(sharding, value.ndim) and list(
                    have._addressable_device_assignment) == list(sharding._addressable_device_assignment)):
                return value.buffer
        return put(np.asarray(value), sharding)

    def buffers(self, values, shareable=None) -> tuple[list, bool]:
        """Device buffers for arguments, and whether the run must end before the call returns:
        the NumPy arrays among them that ``shareable`` allows (None: all) are read in place where
        the device can, and the caller may write them as soon as it returns."""
        if self.placement is not None:
            return [self.to_buffer(value, k) for k, value in enumerate(values)], False
        buffers, waits = [], False
        sharding = single_device(self.device)
        for k, value in enumerate(values):
            if type(value) is ConcreteArray and value.buffer.sharding is sharding:
                buffers.append(value.buffer)
            elif type(value) is np.ndarray and value.flags.c_contiguous:  # its dtype was checked at the trace
                in_place = self._in_place and (shareable is None or shareable[k]) and readable_in_place(value)
                buffers.append(self._put(value, in_place))
                waits |= in_place
            else:
                buffers.append(self.to_buffer(value))
        return buffers, waits
