"""cofactor: compile ordinary NumPy code with MLIR, Enzyme-JAX and XLA.

    import numpy as np, cofactor as cf
    f = cf.jit(lambda x: x @ x + (x @ x).T)
    f(np.ones((3, 3)))
"""
from . import cache  # noqa: F401  (cf.cache.clear(), cf.cache.set_directory(path or None))
from . import numpy as _numpy_implementations  # noqa: F401  (fills the dispatch registry)
from .autodiff.activity import (Active, BatchDuplicated, Const, Duplicated, Forward, ForwardWithPrimal,
                                Reverse, ReverseWithPrimal, autodiff)
from .autodiff.custom import custom_jvp, stop_gradient
from .autodiff.transforms import grad, hessian, jacobian, jvp, value_and_grad, vjp
from .compiler import (Compiled, JitFunction, OptimizationWarning, RecompileWarning, TraceTimeRandomWarning, compile,
                       jit)
from .debug import print  # noqa: A001, F401  (cf.print: run-time values from compiled code)
from .errors import (ArgumentError, CofactorError, DistributedError, CompilationError, ConcretizationError, InternalError, SlowCompileWarning,
                     TracingError, UnrolledLoopWarning, UnsupportedError)
from .inspect import code_hlo, code_xla
from .kernels.api import Kernel as kernel, atomic, blockDim, blockIdx, grid, gridDim, gridsize, shared, syncthreads, \
    threadIdx
from .runtime.array import ConcreteArray, to_device
from .runtime import distributed
from .runtime.devices import devices, local_devices
from .runtime.host import install_aligned_allocator as _install_aligned_allocator
from .tracing.array import TracedArray
from .tracing.sharding import sharding_constraint

_SHARDING_NAMES = {"Mesh": "Mesh", "NamedSharding": "NamedSharding", "PartitionSpec": "PartitionSpec",
                   "P": "PartitionSpec"}


def __getattr__(name):
    """jax.sharding's classes (cf.Mesh, cf.NamedSharding, cf.PartitionSpec, cf.P), imported when first used."""
    if name in _SHARDING_NAMES:
        from .runtime import sharding
        return getattr(sharding, _SHARDING_NAMES[name])
    raise AttributeError(f"module 'cofactor' has no attribute {name!r}")


_install_aligned_allocator()  # NumPy arrays made from here on are read by compiled functions in place

__all__ = [
    "Active", "ArgumentError", "BatchDuplicated", "DistributedError", "distributed", "Const", "Duplicated", "Forward", "ForwardWithPrimal", "Reverse",
    "ReverseWithPrimal", "autodiff", "custom_jvp", "stop_gradient",
    "Compiled", "CofactorError", "CompilationError", "ConcreteArray", "ConcretizationError", "InternalError",
    "JitFunction", "OptimizationWarning", "RecompileWarning", "SlowCompileWarning", "TraceTimeRandomWarning", "TracedArray", "TracingError",
    "UnrolledLoopWarning", "UnsupportedError",
    "cache", "code_hlo", "grad", "hessian", "jacobian", "jvp", "value_and_grad", "vjp", "code_xla", "compile", "devices", "jit", "to_device",
    "local_devices", "sharding_constraint", "kernel", "grid", "gridsize", "threadIdx", "blockIdx", "blockDim",
    "gridDim", "atomic", "shared", "syncthreads", "Mesh", "NamedSharding", "PartitionSpec", "P",
]
