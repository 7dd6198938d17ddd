"""One call of a user function, traced as a private function for Enzyme to differentiate.

It records which leaves of the arguments became the function's operands, which of those
are differentiated, and how to give results back in the shape of the arguments.
"""
from __future__ import annotations

import numpy as np

from ..convert.calls import converted
from ..errors import DTypeError, TracingError, UnsupportedError, check_call, located
from ..ir import ops
from ..ir.core import emit
from ..pytree import flatten, unflatten
from ..tracing.array import TracedArray, constant
from ..tracing.derivatives import differentiating, is_differentiable_dtype
from ..tracing.function import trace_private
from ..tracing.trace import is_array
from . import enzyme

_NUMBERS = (bool, int, float, complex, np.generic)


def normalize_argnums(argnums, count: int, who: str) -> tuple[tuple, bool]:
    """(argument indices, whether a single index was given)."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for i in nums:
        if not isinstance(i, int) or not -count <= i < count:
            raise located(ValueError(f"{who}: argnums {argnums!r} does not fit a call with {count} positional "
                                     "arguments"))
    return tuple(i % count for i in nums), single


def check_differentiable(leaf, who: str, what: str):
    dtype = np.asarray(leaf).dtype if not isinstance(leaf, TracedArray) else leaf.dtype
    if np.issubdtype(dtype, np.complexfloating):
        raise located(UnsupportedError(f"{who}: {what} is complex ({dtype}); cofactor differentiates real "
                                       "floating-point arrays only"))
    if not is_differentiable_dtype(dtype):
        raise located(DTypeError(f"{who}: {what} has dtype {dtype}; only floating-point inputs can be "
                                 "differentiated (integer and boolean inputs never are)"))


class DifferentiatedCall:
    """``fn(*args, **kwargs)`` as a private function whose operands are the array leaves of the
    arguments (differentiated: those of ``args[argnums]``), then the values it captures."""

    def __init__(self, fn, args, kwargs, argnums, who: str, reverse: bool):
        check_call(fn, args, kwargs)
        self.who = who
        self.leaves, self.treedef = flatten((args, kwargs))
        self.argnums, self.single = normalize_argnums(argnums, len(args), who)
        self.arg_treedefs, self.ranges, start = [], [], 0
        for a in args:
            arg_leaves, arg_treedef = flatten(a)
            self.arg_treedefs.append(arg_treedef)
            self.ranges.append((start, start + len(arg_leaves)))
            start += len(arg_leaves)
        wanted = {k for i in self.argnums for k in range(*self.ranges[i])}
        for k in sorted(wanted):
            leaf = self.leaves[k]
            if not isinstance(leaf, (TracedArray, *_NUMBERS)) and not is_array(leaf):
                raise located(TracingError(f"{who}: a differentiated argument holds a {type(leaf).__name__}, "
                                           "which is not an array or a number"))
            check_differentiable(leaf, who, f"an input of argument {self._argument_of(k)}")
        self.positions = [k for k, leaf in enumerate(self.leaves)
                          if isinstance(leaf, TracedArray) or is_array(leaf) or k in wanted]
        self.arguments = [leaf if isinstance(leaf, TracedArray) else constant(np.asarray(leaf))
                          for leaf in (self.leaves[k] for k in self.positions)]
        self.differentiated = [k in wanted for k in self.positions]
        # Each differentiated operand, in order: its position among the arguments, and the
        # (argument index, leaf offset) it comes from.
        self.operand_of = {}
        self.owners = []
        for position, k in enumerate(self.positions):
            if k in wanted:
                self.operand_of[position] = len(self.owners)
                i = self._argument_of(k)
                self.owners.append((i, k - self.ranges[i][0]))
        with differentiating(reverse):
            self.private = trace_private(self._body(converted(fn)), [a.value.type for a in self.arguments],
                                         getattr(fn, "__name__", "f").strip("<>") or "f")
        self.symbol = self.private.symbol
        self.operands = self.private.operands([a.value for a in self.arguments])
        self.active = self.differentiated + [False] * len(self.private.captured)

    def _argument_of(self, leaf_index) -> int:
        return next(i for i, (a, b) in enumerate(self.ranges) if a <= leaf_index < b)

    def _body(self, fn):
        def body(*params):
            leaves = list(self.leaves)
            for k, p in zip(self.positions, params):
                leaves[k] = p
            args, kwargs = unflatten(self.treedef, leaves)
            return fn(*args, **kwargs)
        return body

    # --- the function's results ---------------------------------------------------------------
    @property
    def out_count(self) -> int:
        return self.private.out_count

    @property
    def out_types(self) -> list:
        return self.symbol.result_types[:self.out_count]

    def extra_count(self) -> int:
        """Results past the outputs: new values of the arrays the function updated."""
        return len(self.symbol.result_types) - self.out_count

    def apply_updates(self, values):
        """Give the caller's arrays the values the function wrote into them."""
        n = len(self.private.updated)
        for k, v in zip(self.private.updated, values[:n]):
            self.arguments[k].value = v
        self.private.apply_updates(values[n:])

    def call(self) -> list:
        """The outputs (IR values) of calling the function as written; its updates applied."""
        results = emit("func.call", self.operands, self.symbol.result_types, {"callee": f"@{self.symbol.name}"})
        self.apply_updates(results[self.out_count:])
        return results[:self.out_count]

    # --- derivatives ---------------------------------------------------------------------------
    def reverse(self, rets: list, seeds: list, operands=None, updates=True) -> tuple[dict, list]:
        """enzyme.autodiff with ``rets`` for the outputs (or for all results): ({result index:
        primal value}, gradient of each differentiated operand).  With ``updates``, the arrays the
        function updated get their new values."""
        rets = list(rets) + [enzyme.CONST if updates else enzyme.CONST_NONEED] * (
            len(self.symbol.result_types) - len(rets))
        args = [enzyme.ACTIVE if a else enzyme.CONST for a in self.active]
        primal, grads = enzyme.reverse(self.symbol, operands or self.operands, args, rets, seeds)
        kept = [i for i, r in enumerate(rets) if r in (enzyme.ACTIVE, enzyme.CONST)]
        by_index = dict(zip(kept, primal))
        if updates:
            self.apply_updates([by_index[i] for i in range(self.out_count, len(rets))])
        return by_index, grads

    def forward(self, tangents: list, rets: list, width: int = 1, operands=None) -> list:
        """enzyme.fwddiff; ``tangents`` per differentiated operand (None: held constant), ``rets``
        for the outputs (or for all results); returns (primal, tangent) per result, None where
        ``rets`` asks for none.  Updates are not applied."""
        it = iter(tangents)
        per_operand = [next(it) if a else None for a in self.active]
        rets = list(rets) + [enzyme.CONST_NONEED] * (len(self.symbol.result_types) - len(rets))
        results = iter(enzyme.forward(self.symbol, operands or self.operands, per_operand, rets, width))
        return [(next(results) if r in (enzyme.DUP, enzyme.CONST) else None,
                 next(results) if r in (enzyme.DUP, enzyme.DUP_NONEED) else None) for r in rets]

    def by_argument(self, per_operand: list):
        """Per-operand values (for the differentiated operands, in order) arranged like
        ``args[argnums]``: one pytree, or a tuple of them."""
        values = dict(zip(self.owners, per_operand))
        trees = []
        for i in self.argnums:
            start, stop = self.ranges[i]
            trees.append(unflatten(self.arg_treedefs[i], [values[i, offset] for offset in range(stop - start)]))
        return trees[0] if self.single else tuple(trees)

    def differentiated_types(self) -> list:
        return [a.value.type for a, d in zip(self.arguments, self.differentiated) if d]


def seed_values(tree, types, who: str) -> list:
    """IR values for cotangents or tangents given by the user, checked against ``types``."""
    leaves = flatten(tree)[0]
    if len(leaves) != len(types):
        raise located(ValueError(f"{who}: got {len(leaves)} arrays where {len(types)} were expected"))
    values = []
    for leaf, t in zip(leaves, types):
        x = leaf if isinstance(leaf, TracedArray) else constant(np.asarray(leaf, dtype=t.dtype))
        if tuple(x.shape) != tuple(t.shape):
            raise located(ValueError(f"{who}: got an array of shape {x.shape} where shape {t.shape} was expected"))
        values.append(ops.convert(x.value, t.dtype))
    return values
