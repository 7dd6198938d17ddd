"""JAX's transforms: grad, value_and_grad, vjp, jvp, jacobian, hessian, on Enzyme's ops.

Each one traces the user's function into a private function of the program being traced
and differentiates it with enzyme.autodiff (reverse) or enzyme.fwddiff (forward), so Enzyme
differentiates the program after cofactor's optimizations.  Called inside a compiled
function, a transform adds to that program; called outside one, it compiles a program of its
own (cached like ``cf.jit``).
"""
from __future__ import annotations

import functools

import numpy as np

from ..compiler import JitFunction
from ..convert.calls import converted
from ..errors import DTypeError, ShapeError, TracingError, located
from ..ir import ops
from ..pytree import flatten, unflatten
from ..tracing import context
from ..tracing.array import TracedArray
from ..tracing.derivatives import is_differentiable_dtype
from ..tracing.function import trace_private
from . import enzyme
from .call import DifferentiatedCall, seed_values

_programs: dict = {}


def staged(emit):
    """``emit(*args)`` in the program being traced; outside tracing, a compiled program of it."""
    @functools.wraps(emit)
    def run(*args):
        if context.is_tracing():
            return emit(*args)
        program = _programs.get(emit)
        if program is None:
            program = _programs[emit] = JitFunction(emit, transform=True)
        return program(*args)
    return run


def _traced(values) -> list:
    return [TracedArray(v) for v in values]


# --- reverse mode ------------------------------------------------------------------------------

def _check_scalar_output(call, has_aux):
    """The output must be a real scalar (or ``(scalar, aux)``): what grad differentiates."""
    tree = call.private.out_treedef
    if has_aux and not (tree.kind in ("tuple", "list") and len(tree.children) == 2
                        and tree.children[0].kind == "leaf"):
        raise located(TracingError(f"{call.who} with has_aux=True needs the function to return a pair "
                                   "(scalar output, auxiliary data)"))
    if not has_aux and tree.kind != "leaf":
        raise located(TracingError(f"{call.who} needs the function to return one scalar; it returned a "
                                   "pytree (use has_aux=True to return (scalar, auxiliary data))"))
    t = call.out_types[0]
    if t.shape != ():
        raise located(ShapeError(f"{call.who} is defined for functions with a scalar output; this one "
                                 f"returned shape {t.shape}"))
    if not is_differentiable_dtype(t.dtype):
        raise located(DTypeError(f"{call.who} needs a real floating-point output; this one returned {t.dtype}"))


def _emit_grad(fn, argnums, has_aux, with_value, args, kwargs):
    who = "cf.value_and_grad" if with_value else "cf.grad"
    call = DifferentiatedCall(fn, args, kwargs, argnums, who, reverse=True)
    _check_scalar_output(call, has_aux)
    rets = [enzyme.ACTIVE if with_value else enzyme.ACTIVE_NONEED] + [enzyme.CONST] * (call.out_count - 1)
    seed = ops.constant(np.ones((), call.out_types[0].dtype))
    primal, grads = call.reverse(rets, [seed])
    grads = call.by_argument(_traced(grads))
    outputs = [TracedArray(primal[i]) if i in primal else None for i in range(call.out_count)]
    value = unflatten(call.private.out_treedef, outputs)
    if with_value:
        return value, grads
    return (grads, value[1]) if has_aux else grads


_grad = staged(_emit_grad)


def grad(fn, argnums=0, has_aux=False):
    """The gradient of scalar-valued ``fn`` with respect to positional argument(s) ``argnums``
    (an int or a tuple; the gradient has the structure of those arguments).  With
    ``has_aux``, ``fn`` returns ``(scalar, aux)`` and the result is ``(gradient, aux)``."""
    @functools.wraps(fn)
    def gradient(*args, **kwargs):
        return _grad(fn, argnums, has_aux, False, args, kwargs)
    return gradient


def value_and_grad(fn, argnums=0, has_aux=False):
    """``(fn(*args), gradient)``; with ``has_aux``, ``((value, aux), gradient)``."""
    @functools.wraps(fn)
    def value_and_gradient(*args, **kwargs):
        return _grad(fn, argnums, has_aux, True, args, kwargs)
    return value_and_gradient


def _leaf_count(tree) -> int:
    return 1 if tree.kind == "leaf" else sum(_leaf_count(c) for c in tree.children)


def _differentiated_outputs(call, has_aux) -> int:
    """How many leading output leaves are differentiated (all, or those before the aux data)."""
    tree = call.private.out_treedef
    if not has_aux:
        return call.out_count
    if tree.kind not in ("tuple", "list") or len(tree.children) != 2:
        raise located(TracingError(f"{call.who} with has_aux=True needs the function to return a pair "
                                   "(output, auxiliary data)"))
    return _leaf_count(tree.children[0])


def _split_aux(call, has_aux, values):
    out = unflatten(call.private.out_treedef, values)
    return (out[0], out[1]) if has_aux else (out, None)


def _pullback(call, has_aux, cotangent):
    """The gradients of every argument, as a tuple, for the output cotangent ``cotangent``."""
    count = _differentiated_outputs(call, has_aux)
    types = call.out_types[:count]
    floating = [is_differentiable_dtype(t.dtype) for t in types]
    seeds = seed_values(cotangent, types, "the vjp function")
    rets = [enzyme.ACTIVE_NONEED if f else enzyme.CONST_NONEED for f in floating]
    rets += [enzyme.CONST_NONEED] * (call.out_count - count)
    _, grads = call.reverse(rets, [s for s, f in zip(seeds, floating) if f], updates=False)
    return call.by_argument(_traced(grads))


def _emit_call(fn, args):
    return converted(fn)(*args)


def _emit_vjp(fn, has_aux, primals, cotangent):
    call = DifferentiatedCall(fn, primals, {}, tuple(range(len(primals))), "cf.vjp", reverse=True)
    return _pullback(call, has_aux, cotangent)


_call, _vjp = staged(_emit_call), staged(_emit_vjp)


def vjp(fn, *primals, has_aux=False):
    """``(fn(*primals), vjp_fn)``, where ``vjp_fn(cotangent)`` gives the tuple of cotangents of
    the primals; with ``has_aux``, ``(output, vjp_fn, aux)``."""
    if context.is_tracing():
        call = DifferentiatedCall(fn, primals, {}, tuple(range(len(primals))), "cf.vjp", reverse=True)
        _differentiated_outputs(call, has_aux)
        out, aux = _split_aux(call, has_aux, _traced(call.call()))

        def vjp_fn(cotangent):
            return _pullback(call, has_aux, cotangent)
    else:
        result = _call(fn, primals)
        out, aux = (result[0], result[1]) if has_aux else (result, None)

        def vjp_fn(cotangent):
            return _vjp(fn, has_aux, primals, cotangent)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


# --- forward mode ------------------------------------------------------------------------------

def _emit_jvp(fn, primals, tangents):
    call = DifferentiatedCall(fn, primals, {}, tuple(range(len(primals))), "cf.jvp", reverse=False)
    if flatten(tangents)[1] != flatten(primals)[1]:
        raise located(ValueError("cf.jvp: the tangents must have the structure of the primals"))
    seeds = seed_values(tangents, call.differentiated_types(), "cf.jvp")
    outputs = call.call()
    floating = [is_differentiable_dtype(t.dtype) for t in call.out_types]
    rets = [enzyme.DUP_NONEED if f else enzyme.CONST_NONEED for f in floating]
    derivs = [t for _, t in call.forward(seeds, rets)]
    derivs = [d if d is not None else ops.constant(np.zeros(t.shape, t.dtype))
              for d, t in zip(derivs, call.out_types)]
    tree = call.private.out_treedef
    return unflatten(tree, _traced(outputs)), unflatten(tree, _traced(derivs))


_jvp = staged(_emit_jvp)


def jvp(fn, primals, tangents):
    """``(fn(*primals), tangent of the output)`` for the input tangents ``tangents`` (a tuple
    structured like ``primals``)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("cf.jvp takes the primals and the tangents as tuples")
    return _jvp(fn, tuple(primals), tuple(tangents))


# --- Jacobians ---------------------------------------------------------------------------------

def _over_basis(call, derivative, basis_type, name) -> list:
    """``derivative(operands, basis_vector)`` for every vector of the identity basis of
    ``basis_type``, mapped at once by enzyme.batch (results gain a leading axis of the basis
    size; not when it has one element)."""
    m = basis_type.size
    if m == 1:
        return derivative(call.operands, ops.constant(np.ones(basis_type.shape, basis_type.dtype)))

    def one_vector(*params):
        return _traced(derivative([p.value for p in params[:-1]], params[-1].value))
    fn = trace_private(one_vector, [v.type for v in call.operands] + [basis_type], name)
    basis = ops.constant(np.eye(m, dtype=basis_type.dtype).reshape((m, *basis_type.shape)))
    spread = [ops.broadcast_in_dim(v, (m, *v.shape), range(1, v.type.rank + 1)) for v in call.operands + fn.captured]
    return enzyme.batch(fn.symbol, spread[:len(call.operands)] + [basis] + spread[len(call.operands):], (m,))


def _jacobian_forward(call, count) -> list:
    """jac[j][i], the derivative of output j by differentiated operand i: one forward pass per
    basis tangent of each operand."""
    inputs = call.differentiated_types()
    rets = [enzyme.DUP_NONEED] * count + [enzyme.CONST_NONEED] * (call.out_count - count)
    columns = []
    for i, t_in in enumerate(inputs):
        if t_in.size == 0:
            columns.append([None] * count)
            continue

        def jvp_column(operands, tangent, i=i):
            tangents = [tangent if k == i else None for k in range(len(inputs))]
            return [t for _, t in call.forward(tangents, rets, operands=operands)[:count]]
        derivs = _over_basis(call, jvp_column, t_in, "jacobian_column")
        columns.append([d if t_in.size == 1 else ops.transpose(d, [*range(1, d.type.rank), 0]) for d in derivs])
    return [[column[j] for column in columns] for j in range(count)]


def _jacobian_reverse(call, count) -> list:
    """jac[j][i]: one reverse pass per basis cotangent of each output."""
    rows = []
    for j, t_out in enumerate(call.out_types[:count]):
        if t_out.size == 0:
            rows.append([None] * len(call.differentiated_types()))
            continue
        rets = [enzyme.ACTIVE_NONEED if k == j else enzyme.CONST_NONEED for k in range(call.out_count)]

        def vjp_row(operands, cotangent, rets=rets):
            return call.reverse(rets, [cotangent], operands, updates=False)[1]
        rows.append(_over_basis(call, vjp_row, t_out, "jacobian_row"))
    return rows


def _emit_jacobian(fn, argnums, mode, has_aux, args, kwargs):
    if mode not in ("reverse", "forward"):
        raise ValueError(f"cf.jacobian: mode must be 'reverse' or 'forward', not {mode!r}")
    call = DifferentiatedCall(fn, args, kwargs, argnums, "cf.jacobian", reverse=mode == "reverse")
    count = _differentiated_outputs(call, has_aux)
    for t in call.out_types[:count]:
        if not is_differentiable_dtype(t.dtype):
            raise located(DTypeError(f"cf.jacobian: an output has dtype {t.dtype}; only floating-point outputs "
                                     "have a Jacobian"))
    outputs = call.call()
    jac = (_jacobian_reverse if mode == "reverse" else _jacobian_forward)(call, count)
    inputs = call.differentiated_types()
    blocks = []
    for j, t_out in enumerate(call.out_types[:count]):
        per_input = []
        for i, t_in in enumerate(inputs):
            shape = t_out.shape + t_in.shape
            d = jac[j][i]
            per_input.append(TracedArray(ops.reshape(d, shape) if d is not None
                                         else ops.constant(np.zeros(shape, t_out.dtype))))
        blocks.append(call.by_argument(per_input))
    tree = call.private.out_treedef
    if not has_aux:
        return unflatten(tree, blocks)
    return unflatten(tree.children[0], blocks), _split_aux(call, True, _traced(outputs))[1]


_jacobian = staged(_emit_jacobian)


def jacobian(fn, argnums=0, mode="reverse", has_aux=False):
    """The Jacobian of ``fn`` with respect to ``argnums``: for each output leaf, an array of
    shape ``output.shape + input.shape`` (per input, structured like the arguments).
    ``mode="reverse"`` takes one reverse pass per output element (batched with
    enzyme.batch), ``"forward"`` one batched forward pass per input."""
    @functools.wraps(fn)
    def jac(*args, **kwargs):
        return _jacobian(fn, argnums, mode, has_aux, args, kwargs)
    return jac


def hessian(fn, argnums=0):
    """The Hessian of scalar-valued ``fn``: forward mode over reverse mode."""
    return jacobian(jacobian(fn, argnums, mode="reverse"), argnums, mode="forward")
