"""Enzyme-style autodiff: ``cf.autodiff(mode, f, cf.Active(x), cf.Duplicated(y, dy), cf.Const(z))``.

Each argument says how it takes part.  ``Duplicated`` pairs an array with a shadow of the
same shape that Enzyme updates in place: in reverse mode the shadow accumulates the gradient
(``dy += df/dy``), and for an array ``f`` overwrites, the shadow's incoming value is the
cotangent of the array's new value and its outgoing value the cotangent of its old value, as
Enzyme does with memory; in forward mode the shadow is the tangent, and an overwritten
array's shadow becomes the tangent of its new value.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TracingError, located
from ..ir import ops
from ..pytree import flatten, unflatten
from ..tracing.array import TracedArray
from . import enzyme
from .call import DifferentiatedCall, seed_values
from .transforms import staged


@dataclass(frozen=True)
class Mode:
    name: str
    reverse: bool
    with_primal: bool

    def __repr__(self):
        return f"cf.{self.name}"


Reverse = Mode("Reverse", True, False)
ReverseWithPrimal = Mode("ReverseWithPrimal", True, True)
Forward = Mode("Forward", False, False)
ForwardWithPrimal = Mode("ForwardWithPrimal", False, True)


class Const:
    """An argument that is not differentiated."""

    def __init__(self, value):
        self.value = value

    def parts(self) -> tuple:
        return (self.value,)


class Active(Const):
    """An argument whose gradient autodiff returns (reverse mode)."""


class Duplicated(Const):
    """An argument with a shadow of the same structure, updated in place."""

    def __init__(self, value, shadow):
        super().__init__(value)
        self.shadow = shadow

    def parts(self) -> tuple:
        return (self.value, self.shadow)


class BatchDuplicated(Duplicated):
    """An argument with several shadows (forward mode: several tangents in one pass)."""

    def __init__(self, value, shadows):
        super().__init__(value, tuple(shadows))


_KINDS = {cls.__name__: cls for cls in (Const, Active, Duplicated, BatchDuplicated)}


def autodiff(mode: Mode, fn, *args):
    """Differentiate ``fn`` at ``args`` (each Const, Active, Duplicated or BatchDuplicated; a
    plain value is Const).  Reverse: ``(derivatives,)`` (one entry per argument: the gradient
    of an Active one, else None; ``fn`` returns a real scalar or None); with primal,
    ``(derivatives, output)``.  Forward: ``(output tangent,)`` (a tuple of them for
    BatchDuplicated), with primal ``(output tangent, output)``."""
    if not isinstance(mode, Mode):
        raise TypeError(f"cf.autodiff: the mode must be cf.Reverse, cf.ReverseWithPrimal, cf.Forward or "
                        f"cf.ForwardWithPrimal, not {mode!r}")
    args = [a if isinstance(a, Const) else Const(a) for a in args]
    return _autodiff(mode, fn, tuple(type(a).__name__ for a in args), tuple(a.parts() for a in args))


def _emit(mode, fn, kinds, parts):
    kinds = [_KINDS[k] for k in kinds]
    primals = tuple(p[0] for p in parts)
    if mode.reverse:
        return _reverse(mode, fn, kinds, parts, primals)
    return _forward(mode, fn, kinds, parts, primals)


_autodiff = staged(_emit)


def _shadows(kinds, parts, owner) -> list:
    """The shadow leaves of one differentiated operand: one, or one per BatchDuplicated shadow."""
    i, offset = owner
    shadows = parts[i][1] if kinds[i] is BatchDuplicated else (parts[i][1],)
    return [flatten(s)[0][offset] for s in shadows]


def _write_shadow(shadow, value):
    if not isinstance(shadow, TracedArray):
        raise located(TracingError("cf.autodiff: a shadow must be an array the compiled function can update "
                                   "(an argument of it, or an array it created)"))
    shadow.value = ops.convert(value, shadow.dtype)


def _reverse(mode, fn, kinds, parts, primals):
    if BatchDuplicated in kinds:
        raise located(TracingError("cf.autodiff: BatchDuplicated is for forward mode"))
    argnums = tuple(i for i, kind in enumerate(kinds) if kind in (Active, Duplicated))
    call = DifferentiatedCall(fn, primals, {}, argnums or (), "cf.autodiff", reverse=True)
    tree = call.private.out_treedef
    if tree.kind not in ("leaf", "none"):
        raise located(TracingError("cf.autodiff in reverse mode needs a function that returns one real scalar "
                                   "(or None)"))
    rets, seeds = [], []
    if tree.kind == "leaf":
        t = call.out_types[0]
        if t.shape != () or not np.issubdtype(t.dtype, np.floating):
            raise located(TracingError(f"cf.autodiff in reverse mode needs a real scalar output; got shape "
                                       f"{t.shape} and dtype {t.dtype}"))
        rets.append(enzyme.ACTIVE if mode.with_primal else enzyme.ACTIVE_NONEED)
        seeds.append(ops.constant(np.ones((), t.dtype)))
    # An overwritten Duplicated array: its new value is seeded with the shadow's cotangent.
    for arg_index in call.private.updated:
        j = call.operand_of.get(arg_index)
        if j is not None and kinds[call.owners[j][0]] is Duplicated:
            rets.append(enzyme.ACTIVE)
            seeds += seed_values(_shadows(kinds, parts, call.owners[j]), [call.symbol.result_types[len(rets) - 1]],
                                 "cf.autodiff")
        else:
            rets.append(enzyme.CONST)
    primal, grads = call.reverse(rets, seeds)
    updated = {call.operand_of.get(k) for k in call.private.updated}
    derivatives = [None] * len(kinds)
    per_arg: dict = {}
    for j, (owner, g) in enumerate(zip(call.owners, grads)):
        if kinds[owner[0]] is Active:
            per_arg.setdefault(owner[0], []).append(TracedArray(g))
            continue
        shadow, = _shadows(kinds, parts, owner)
        _write_shadow(shadow, g if j in updated else ops.binary("stablehlo.add", seed_values(
            [shadow], [g.type], "cf.autodiff")[0], g))
    for i, leaves in per_arg.items():
        derivatives[i] = unflatten(call.arg_treedefs[i], leaves)
    result = (tuple(derivatives),)
    if mode.with_primal:
        result += (TracedArray(primal[0]) if tree.kind == "leaf" else None,)
    return result


def _row(v, b: int):
    """Row ``b`` of ``v``'s leading (batch) axis."""
    return ops.reshape(ops.slice(v, [b] + [0] * (v.type.rank - 1), [b + 1, *v.shape[1:]]), v.shape[1:])


def _forward(mode, fn, kinds, parts, primals):
    if Active in kinds:
        raise located(TracingError("cf.autodiff: Active arguments are for reverse mode; in forward mode pass "
                                   "Duplicated(x, tangent)"))
    widths = {len(p[1]) for kind, p in zip(kinds, parts) if kind is BatchDuplicated}
    if len(widths) > 1 or (widths and Duplicated in kinds):
        raise located(TracingError("cf.autodiff: every BatchDuplicated argument needs the same number of "
                                   "shadows, and they cannot be mixed with Duplicated ones"))
    width = widths.pop() if widths else 1
    argnums = tuple(i for i, kind in enumerate(kinds) if kind in (Duplicated, BatchDuplicated))
    call = DifferentiatedCall(fn, primals, {}, argnums, "cf.autodiff", reverse=False)
    tangents = []
    for owner, t in zip(call.owners, call.differentiated_types()):
        shadows = _shadows(kinds, parts, owner)
        values = seed_values(shadows, [t] * len(shadows), "cf.autodiff")
        tangents.append(values[0] if width == 1 else ops.concatenate(
            [ops.reshape(v, (1, *t.shape)) for v in values], 0))
    floating = [np.issubdtype(t.dtype, np.floating) for t in call.out_types]
    rets = [(enzyme.DUP if mode.with_primal else enzyme.DUP_NONEED) if f else
            (enzyme.CONST if mode.with_primal else enzyme.CONST_NONEED) for f in floating]
    overwritten = [call.operand_of.get(k) for k in call.private.updated]
    rets += [enzyme.DUP if j is not None else enzyme.CONST for j in overwritten]
    rets += [enzyme.CONST] * (len(call.symbol.result_types) - len(rets))
    results = call.forward(tangents, rets, width)
    call.apply_updates([p for p, _ in results[call.out_count:]])
    for j, (_, tangent) in zip(overwritten, results[call.out_count:]):
        if j is not None:
            for b, shadow in enumerate(_shadows(kinds, parts, call.owners[j])):
                _write_shadow(shadow, tangent if width == 1 else _row(tangent, b))
    tree = call.private.out_treedef
    outs = results[:call.out_count]

    def tangent_tree(b):
        return unflatten(tree, [TracedArray(ops.constant(np.zeros(t.shape, t.dtype)) if d is None else
                                            d if width == 1 else _row(d, b))
                                for (_, d), t in zip(outs, call.out_types)])
    derivative = tangent_tree(0) if width == 1 and BatchDuplicated not in kinds else tuple(
        tangent_tree(b) for b in range(width))
    result = (derivative,)
    if mode.with_primal:
        result += (unflatten(tree, [TracedArray(p) for p, _ in outs]),)
    return result
