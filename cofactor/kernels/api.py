"""``@cf.kernel``: CUDA-style kernels (numba.cuda's API) that cofactor raises into tensor programs.

    @cf.kernel
    def laplace(x, y):
        i = cf.grid(1)
        if 1 <= i < x.shape[0] - 1:
            y[i] = x[i - 1] - 2 * x[i] + x[i + 1]

    laplace[blocks, threads](x, y)     # y updated in place, at top level or inside cf.jit code

A launch compiles the kernel body for its grid (front.py) into a private function on memrefs,
called through ``enzymexla.kernel_call``; the passes raise it into slices, gathers and
arithmetic before anything else (passes/pipelines.py, RAISE_KERNELS), so it optimizes, runs on
any device and differentiates like NumPy code.  A numba.cuda kernel is taken unchanged apart
from the decorator: ``cuda.grid``, ``cuda.threadIdx`` and the rest are recognized by name,
without importing numba (``cf.kernel(numba_kernel)`` takes one numba already decorated: its py_func).

The names here are the kernel API as seen outside a kernel, where they cannot run.
"""
from __future__ import annotations

import numpy as np

from ..errors import TracingError, UnsupportedError
from ..ir import ops
from ..ir.core import emit
from ..tracing.array import TracedArray
from ..tracing.context import current, is_tracing
from .front import Launch, compile_kernel


def _only_in_kernels(name):
    def stub(*args, **kwargs):
        raise UnsupportedError(f"cf.{name} can only be used inside a function decorated with @cf.kernel")
    stub.__name__ = stub.__qualname__ = name
    return stub


grid = _only_in_kernels("grid")
gridsize = _only_in_kernels("gridsize")
syncthreads = _only_in_kernels("syncthreads")


class threadIdx:
    """The thread's index in its block (``.x``, ``.y``, ``.z``), inside a kernel."""


class blockIdx:
    """The block's index in the grid (``.x``, ``.y``, ``.z``), inside a kernel."""


class blockDim:
    """The threads of a block along each axis (``.x``, ``.y``, ``.z``), inside a kernel."""


class gridDim:
    """The blocks of the grid along each axis (``.x``, ``.y``, ``.z``), inside a kernel."""


class atomic:
    """``cf.atomic.add(array, index, value)``: adds ``value`` to one element, every thread's
    addition counted (a histogram), inside a kernel."""
    add = staticmethod(_only_in_kernels("atomic.add"))


class shared:
    """Shared memory is not supported (it does not raise in enzyme-ad 0.0.16)."""
    array = staticmethod(_only_in_kernels("shared.array"))


def _dims(size, what) -> tuple:
    size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    if not 1 <= len(size) <= 3 or not all(isinstance(s, (int, np.integer)) and s > 0 for s in size):
        raise ValueError(f"a kernel's {what} is 1 to 3 positive ints, not {size!r}")
    return tuple(int(s) for s in size) + (1,) * (3 - len(size))


class Kernel:
    """A kernel; ``kernel[blocks, threads]`` is a launch of it."""

    def __init__(self, fn):
        self.fn = getattr(fn, "py_func", fn)  # a numba-decorated kernel: its Python function
        self.__name__ = self.fn.__name__
        self.__doc__ = self.fn.__doc__
        self._launchers = {}

    def __getitem__(self, config):
        if not isinstance(config, tuple) or len(config) < 2:
            raise TypeError("launch a kernel as kernel[blocks, threads](*arrays)")
        if len(config) > 3 and config[3]:
            raise UnsupportedError("a launch with dynamic shared memory is not supported")
        return Launcher(self, _dims(config[0], "grid"), _dims(config[1], "block"))

    def __call__(self, *args, **kwargs):
        raise TypeError(f"launch the kernel {self.__name__} as {self.__name__}[blocks, threads](*arrays)")


class Launcher:
    """One launch configuration of a kernel: calling it runs the kernel on the arrays, in place."""

    def __init__(self, kernel: Kernel, blocks, threads):
        self.kernel, self.blocks, self.threads = kernel, blocks, threads

    def __call__(self, *args):
        if is_tracing():
            launch(self.kernel, self.blocks, self.threads, args)
            return None
        key = (self.blocks, self.threads)
        if key not in self.kernel._launchers:
            from ..compiler import JitFunction
            blocks, threads, kernel = self.blocks, self.threads, self.kernel

            def run(*arrays):
                launch(kernel, blocks, threads, arrays)
            run.__name__ = run.__qualname__ = kernel.__name__
            self.kernel._launchers[key] = JitFunction(run)
        self.kernel._launchers[key](*args)
        return None


def launch(kernel: Kernel, blocks, threads, args):
    """Inside a trace: the kernel compiled for these arguments and called on their values; the
    arrays it writes are updated in place, as a GPU launch updates its arguments."""
    context = current()
    described, passed = [], []
    for a in args:
        if isinstance(a, TracedArray) and (not a.scalar or a.weak is None) or isinstance(a, np.ndarray):
            described.append((tuple(a.shape), np.dtype(a.dtype)))
            passed.append(a)
        elif isinstance(a, TracedArray):  # a Python number known at run time
            described.append(((), np.dtype(a.dtype)))
            passed.append(a)
        else:
            described.append(a.item() if isinstance(a, np.generic) else a)
    name = context.unique_name(kernel.__name__)
    _, buffers = compile_kernel(kernel.fn, Launch(blocks, threads), described, context.module, name)
    values = [a.value if isinstance(a, TracedArray) else ops.constant(a) for a in passed]
    sizes = [ops.constant(np.array(n, np.int64)) for n in (*blocks, *threads, 0)]
    one = len(values) == 1  # a single result is not a tuple: its alias has no index into one
    aliases = ", ".join(f"#stablehlo.output_operand_alias<output_tuple_indices = [{'' if one else k}], "
                        f"operand_index = {k}, operand_tuple_indices = []>" for k in range(len(values)))
    results = emit("enzymexla.kernel_call", sizes + values, [v.type for v in values],
                   {"fn": f"@{name}", "operandSegmentSizes": f"array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, {len(values)}>",
                    "output_operand_aliases": f"[{aliases}]"})
    for array, buffer, result in zip(passed, buffers, results):
        if not buffer.stored:
            continue
        if not isinstance(array, TracedArray) or array.scalar:
            raise TracingError(f"the kernel {kernel.__name__} writes {buffer.name}, which is not an array the "
                               "caller can see updated (pass an array argument of the compiled function, or one made "
                               "in it)")
        array.value = result
