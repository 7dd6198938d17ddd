"""Looking at what cofactor generates: StableHLO before and after optimization, and XLA's HLO."""
from __future__ import annotations

from .compiler import Compiled, _trace_user_function, differentiates, optimize_mlir
from .passes import runner


def code_hlo(fn, *args, optimize=True, **kwargs) -> str:
    """StableHLO of ``fn`` on these arguments: after the optimization pipeline, or the raw
    trace with ``optimize=False`` (pretty-printed by MLIR)."""
    raw = str(_trace_user_function(fn, args, kwargs).module)
    if optimize is False:
        return runner.run(raw, "none")
    return optimize_mlir(raw, optimize, differentiates(raw))


def code_xla(fn, *args, optimize="auto", **kwargs) -> str:
    """XLA's optimized HLO module for ``fn`` on these arguments."""
    return Compiled(fn, args, kwargs, optimize=optimize).xla_hlo()
