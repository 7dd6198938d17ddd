"""Gradients of whole programs written in plain NumPy (issue #5's list), in both modes against
finite differences, and the seeds' claim that differentiating after optimization removes the
dense diagonal."""
from __future__ import annotations

import numpy as np
from gradcheck import check_derivatives

import cofactor as cf

RNG = np.random.default_rng(7)


def mlp_loss(w1, b1, w2, x, y):
    h = np.maximum(x @ w1 + b1, 0.0) + 0.1 * np.tanh(x @ w1)
    return np.mean((h @ w2 - y) ** 2)


def softmax_cross_entropy(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -np.mean(log_p[np.arange(len(labels)), labels])


def recurrent(h, w, xs):
    for t in range(20):
        h = np.tanh(h @ w + xs[t])
    return np.sum(h ** 2)


def fill_then_reduce(x):
    out = np.zeros((4, 3))
    for i in range(4):
        out[i] = x[i] * np.sin(x[(i + 1) % 4])
    out[:, 1] += x.sum(axis=1)
    return np.sum(out ** 2)


def branchy(x):
    if x.sum() > 0:
        y = np.sin(x) * 2
    else:
        y = x ** 3
    return np.sum(y * x)


def root_or_log_per_element(x):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):          # (a rolled loop whose if becomes selects, but in reverse mode)
        if x[i] > 0:
            y[i] = np.sqrt(x[i])         # (NaN derivative at the elements the other arm takes)
        else:
            y[i] = np.log(-x[i])
    return np.sum(y * x)


def solve_logdet(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2) + np.log(np.linalg.det(a))


def test_mlp_loss():
    x, y = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))
    w1, b1, w2 = RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal((4, 2))
    check_derivatives(mlp_loss, w1, b1, w2, x, y, argnums=(0, 1, 2))


def test_softmax_cross_entropy():
    check_derivatives(softmax_cross_entropy, RNG.standard_normal((4, 3)), np.array([0, 2, 1, 2]))


def test_twenty_step_recurrent_loop():
    check_derivatives(recurrent, RNG.standard_normal(3), 0.5 * RNG.standard_normal((3, 3)),
                      RNG.standard_normal((20, 3)))


def test_in_place_fill_then_reduce():
    check_derivatives(fill_then_reduce, RNG.standard_normal((4, 3)))


def test_both_branches_of_a_traced_if():
    x = RNG.uniform(0.1, 1.0, 4)
    check_derivatives(branchy, x)
    check_derivatives(branchy, -x)


def test_an_element_loop_with_an_if_whose_arms_fail_where_not_taken():
    x = RNG.uniform(0.5, 2.0, 24) * np.where(np.arange(24) % 3, 1, -1)
    check_derivatives(root_or_log_per_element, x)


def test_convergence_loop_with_a_bound():
    def fixed_point(a):
        x = np.ones_like(a)
        while np.abs(np.cos(a * x) - x).max() > 1e-12:
            x = np.cos(a * x)
        return np.sum(x)
    a = np.array([0.3, 0.5, 0.7])
    g = np.asarray(cf.jit(cf.grad(fixed_point), max_iterations=200)(a))
    x = np.ones(3)
    for _ in range(200):
        x = np.cos(a * x)
    exact = -x * np.sin(a * x) / (1 + a * np.sin(a * x))  # implicit differentiation of x = cos(a x)
    np.testing.assert_allclose(g, exact, rtol=1e-8)


def test_solve_and_log_det():
    a = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    check_derivatives(solve_logdet, a, RNG.standard_normal(3), rtol=1e-5)


def diagonal_example(v, a, x):
    return np.sum((np.diag(v) @ a + x) ** 2)


def test_diagonal_gradient_is_optimized_away():
    v, a, x = RNG.standard_normal(4), RNG.standard_normal((4, 4)), RNG.standard_normal((4, 4))
    hlo = cf.code_hlo(cf.grad(diagonal_example), v, a, x)
    for op in ("scatter", "gather", "iota", "select"):  # no dense diagonal is built...
        assert op not in hlo, hlo
    # ...and no matrix product with one: what is left is the row-wise sum of a product.
    assert all("batching_dims" in line for line in hlo.splitlines() if "dot_general" in line), hlo
    g = np.asarray(cf.grad(diagonal_example)(v, a, x))
    np.testing.assert_allclose(g, np.sum(2 * (v[:, None] * a + x) * a, axis=1), rtol=1e-10)


def test_checkpointed_loop_gradient():
    h, w, xs = RNG.standard_normal(3), 0.5 * RNG.standard_normal((3, 3)), RNG.standard_normal((20, 3))
    plain = np.asarray(cf.grad(recurrent, argnums=1)(h, w, xs))
    for checkpoint in (True, 4):
        compiled = cf.jit(cf.grad(recurrent, argnums=1), checkpoint=checkpoint)
        assert "enzyme.enable_checkpointing" in compiled.lower(h, w, xs).raw_mlir
        np.testing.assert_allclose(np.asarray(compiled(h, w, xs)), plain, rtol=1e-10)
