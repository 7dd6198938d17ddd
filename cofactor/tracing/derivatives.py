"""What tracing needs to know about differentiation: whether the code being traced will be
differentiated (and in which mode), and custom derivative rules.

A rule is a JVP, as in JAX's ``custom_jvp``: ``rule(primals, tangents) -> (outputs,
output_tangents)``, linear in the tangents and built from ops Enzyme can differentiate.
Enzyme has no hook for user rules, so inside differentiated code a ruled function is traced as

    outputs = no_derivative(rule's outputs) + rule's output tangents at t = x - no_derivative(x)

``t`` is zero, so the value is the outputs; its derivative is the rule's tangent map, which
Enzyme also transposes for reverse mode.  Outside differentiated code the function runs as is.
"""
from __future__ import annotations

import numpy as np

from ..errors import TracingError, UnsupportedError, located
from ..ir import ops
from ..pytree import flatten, unflatten
from . import context
from .array import TracedArray, constant
from .context import in_reverse_mode, is_differentiating  # noqa: F401  (the numpy layer asks here)

def differentiating(reverse: bool):
    """Code traced inside is differentiated, in reverse mode when ``reverse``."""
    return context.current().differentiating(reverse)


def is_differentiable_dtype(dtype) -> bool:
    return np.issubdtype(dtype, np.floating)


def stop_gradient(x):
    """``x``, with a zero derivative."""
    x = x if isinstance(x, TracedArray) else constant(np.asarray(x))
    return TracedArray(ops.ignore_derivatives(x.value)) if is_differentiable_dtype(x.dtype) else x


class custom_jvp:
    """``fn`` with the derivative given by ``rule`` (set with ``defjvp``) instead of Enzyme's."""

    def __init__(self, fn):
        self.fn = fn
        self.rule = None
        self._in_rule = False  # the rule may call the function on its primals: then it runs as is
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "custom_jvp")
        self.__doc__ = getattr(fn, "__doc__", None)

    def defjvp(self, rule):
        """``rule(primals, tangents) -> (outputs, output_tangents)``: primals is the tuple of
        arguments; a tangent is None for an argument that is not a floating-point array, and
        may be None for an output whose tangent is zero."""
        self.rule = rule
        return rule

    def _callables(self):
        """The function and the rule as they are traced (the public API converts user code)."""
        return self.fn, self.rule

    def __call__(self, *args):
        fn, rule = self._callables()
        if not is_differentiating() or self._in_rule:
            return fn(*args)
        if rule is None:
            raise located(TracingError(f"custom_jvp function {self.__name__} is differentiated, but has no rule: "
                                       "set one with .defjvp"))
        if len(context.current().modes) > 1:
            raise located(UnsupportedError(
                f"{self.__name__} has a custom derivative rule, which cofactor can apply once but not inside a "
                "second differentiation (a Hessian, or grad of grad): its higher derivatives are not supported"))
        leaves, treedef = flatten(args)
        primals, tangents = [], []
        for leaf in leaves:
            if isinstance(leaf, TracedArray) and is_differentiable_dtype(leaf.dtype):
                fixed = stop_gradient(leaf)
                primals.append(fixed)
                tangents.append(TracedArray(ops.binary("stablehlo.subtract", leaf.value, fixed.value)))
            else:
                primals.append(leaf)
                tangents.append(None)
        self._in_rule = True
        try:
            outputs, output_tangents = rule(unflatten(treedef, primals), unflatten(treedef, tangents))
        finally:
            self._in_rule = False
        out_leaves, out_tree = flatten(outputs)
        tangent_leaves, tangent_tree = flatten(output_tangents, is_leaf=lambda t: t is None)
        if tangent_tree != out_tree:
            raise located(TracingError(f"the jvp rule of {self.__name__} returned tangents structured "
                                       f"{tangent_tree} for outputs structured {out_tree}"))
        return unflatten(out_tree, [_plus_tangent(y, t, self.__name__) for y, t in zip(out_leaves, tangent_leaves)])


def _plus_tangent(y, t, name):
    y = stop_gradient(y)
    if t is None or not is_differentiable_dtype(y.dtype):
        return y
    t = t if isinstance(t, TracedArray) else constant(np.asarray(t, y.dtype))
    if t.shape != y.shape or t.dtype != y.dtype:
        raise located(TracingError(f"the jvp rule of {name} returned a tangent of shape {t.shape} and dtype "
                                   f"{t.dtype} for an output of shape {y.shape} and dtype {y.dtype}"))
    return TracedArray(ops.binary("stablehlo.add", y.value, t.value))
