"""Builders for Enzyme's differentiation ops: enzyme.autodiff (reverse), enzyme.fwddiff
(forward, batched with ``width``) and enzyme.batch.

The operand and result conventions are enzyme-ad 0.0.16's (shared/reference/spike/FINDINGS.md
§1, §2, §10), in the properties syntax that version requires.
"""
from __future__ import annotations

from ..ir.core import Function, Value, emit
from ..ir.types import TensorType

ACTIVE, ACTIVE_NONEED = "enzyme_active", "enzyme_activenoneed"
CONST, CONST_NONEED = "enzyme_const", "enzyme_constnoneed"
DUP, DUP_NONEED = "enzyme_dup", "enzyme_dupnoneed"


def _activities(kinds) -> str:
    return "[" + ", ".join(f"#enzyme.activity<{k}>" for k in kinds) + "]"


def _properties(symbol: Function, args, rets, width: int) -> dict:
    return {"activity": _activities(args), "fn": f"@{symbol.name}", "ret_activity": _activities(rets),
            "width": f"{width} : i64"}


def reverse(symbol: Function, operands, args, rets, seeds) -> tuple[list, list]:
    """Reverse mode: (primal results, gradients).  ``args``: ACTIVE or CONST per operand;
    ``rets`` per result: ACTIVE (seeded, primal kept), ACTIVE_NONEED (seeded), CONST (primal
    kept) or CONST_NONEED; ``seeds``: one cotangent per ACTIVE/ACTIVE_NONEED result."""
    primal_types = [t for t, r in zip(symbol.result_types, rets) if r in (ACTIVE, CONST)]
    grad_types = [v.type for v, a in zip(operands, args) if a == ACTIVE]
    results = emit("enzyme.autodiff", list(operands) + list(seeds), primal_types + grad_types,
                   _properties(symbol, args, rets, 1))
    return results[:len(primal_types)], results[len(primal_types):]


def _batched(t: TensorType, width: int) -> TensorType:
    return t if width == 1 else TensorType((width, *t.shape), t.dtype)


def forward(symbol: Function, operands, tangents, rets, width: int = 1) -> list:
    """Forward mode: per result, its primal (DUP, CONST) then its tangent (DUP, DUP_NONEED).
    ``tangents``: per operand, its tangent (a leading axis of ``width`` when width > 1) or None
    for a constant."""
    flat, args = [], []
    for v, t in zip(operands, tangents):
        flat += [v] if t is None else [v, t]
        args.append(CONST if t is None else DUP)
    types = []
    for t, r in zip(symbol.result_types, rets):
        types += [t] if r in (DUP, CONST) else []
        types += [_batched(t, width)] if r in (DUP, DUP_NONEED) else []
    return emit("enzyme.fwddiff", flat, types, _properties(symbol, args, rets, width))


def batch(symbol: Function, operands: list[Value], batch_shape) -> list:
    """``symbol`` mapped over leading axes ``batch_shape`` that every operand carries."""
    shape = tuple(batch_shape)
    types = [TensorType(shape + t.shape, t.dtype) for t in symbol.result_types]
    dims = "array<i64: " + ", ".join(map(str, shape)) + ">"
    return emit("enzyme.batch", list(operands), types, {"batch_shape": dims, "fn": f"@{symbol.name}"})

