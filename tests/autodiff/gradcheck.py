"""Checking cofactor's derivatives against central finite differences of the function run by
NumPy, in float64.

One compiled program per check gives both modes: the forward-mode tangent along a random
direction t, and the reverse-mode cotangents for a random output cotangent c.  They must match
the finite difference (f(x + h t) - f(x - h t)) / 2h, and <c, J t> (the dot-product test).
"""
from __future__ import annotations

import numpy as np

import cofactor as cf
from cofactor.pytree import flatten, unflatten


def _leaves(tree) -> list:
    return [np.asarray(x, dtype=float) for x in flatten(tree)[0]]


def directional_difference(fn, args, argnums, tangents, eps=1e-6):
    def shifted(sign):
        moved = list(args)
        for i, t in zip(argnums, tangents):
            moved[i] = args[i] + sign * eps * t
        return _leaves(fn(*moved))
    return [(p - m) / (2 * eps) for p, m in zip(shifted(1), shifted(-1))]


def check_derivatives(fn, *args, argnums=None, rtol=1e-6, atol=1e-7, eps=1e-6, seed=0):
    """``fn``'s forward and reverse derivatives by cofactor, against finite differences."""
    args = [np.asarray(a) if isinstance(a, (np.ndarray, float)) else a for a in args]
    if argnums is None:
        argnums = tuple(i for i, a in enumerate(args)
                        if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating))
    rng = np.random.default_rng(seed)
    tangents = [rng.standard_normal(np.shape(args[i])) for i in argnums]
    reference = fn(*args)
    out_leaves, out_tree = flatten(reference)
    cotangent = unflatten(out_tree, [rng.standard_normal(np.shape(y)) for y in out_leaves])

    def derivatives(*xs):
        def of_differentiated(*d):
            full = list(xs)
            for i, v in zip(argnums, d):
                full[i] = v
            return fn(*full)
        primals = tuple(xs[i] for i in argnums)
        _, tangent = cf.jvp(of_differentiated, primals, tuple(tangents))
        _, pullback = cf.vjp(of_differentiated, *primals)
        return tangent, pullback(cotangent)

    tangent, cotangents = cf.jit(derivatives)(*args)
    expected = directional_difference(fn, args, argnums, tangents, eps)
    got = _leaves(tangent)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg="forward mode")
    lhs = sum(float(np.sum(ct * t)) for ct, t in zip(_leaves(cotangents), tangents))
    rhs = sum(float(np.sum(np.asarray(c, dtype=float) * e)) for c, e in zip(_leaves(cotangent), expected))
    np.testing.assert_allclose(lhs, rhs, rtol=rtol, atol=atol, err_msg="reverse mode (dot-product test)")
