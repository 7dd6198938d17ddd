"""The autodiff API: grad, value_and_grad, vjp, jvp, jacobian, hessian, autodiff with activities,
custom_jvp and stop_gradient, at top level and inside compiled functions, against exact
derivatives and finite differences."""
from __future__ import annotations

import numpy as np
import pytest
from gradcheck import directional_difference

import cofactor as cf

RNG = np.random.default_rng(42)
X = RNG.standard_normal((3, 4))
W = RNG.standard_normal((4, 2))


def loss(x, w):
    return np.sum(np.tanh(x @ w) ** 2)


def numeric_gradient(fn, args, i, eps=1e-6):
    grad = np.zeros_like(args[i])
    for idx in np.ndindex(args[i].shape):
        e = np.zeros_like(args[i])
        e[idx] = 1.0
        grad[idx] = directional_difference(fn, args, (i,), (e,), eps)[0]
    return grad


def test_grad_matches_finite_differences_for_each_argnum():
    gx, gw = cf.grad(loss, argnums=(0, 1))(X, W)
    np.testing.assert_allclose(np.asarray(gx), numeric_gradient(loss, (X, W), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gw), numeric_gradient(loss, (X, W), 1), rtol=1e-6, atol=1e-8)
    assert np.asarray(gx).dtype == np.float64 and gx.shape == X.shape
    single = cf.grad(loss, argnums=1)(X, W)
    np.testing.assert_allclose(np.asarray(single), np.asarray(gw), rtol=1e-12)


def test_value_and_grad_and_has_aux():
    value, g = cf.value_and_grad(loss)(X, W)
    assert np.isclose(float(np.asarray(value)), loss(X, W))
    (value, aux), g2 = cf.value_and_grad(lambda x, w: (loss(x, w), x.sum()), has_aux=True)(X, W)
    assert np.isclose(float(np.asarray(aux)), X.sum())
    np.testing.assert_allclose(np.asarray(g2), np.asarray(g), rtol=1e-12)
    g3, aux3 = cf.grad(lambda x, w: (loss(x, w), {"mean": x.mean()}), has_aux=True)(X, W)
    assert np.isclose(float(np.asarray(aux3["mean"])), X.mean())


def test_grad_of_pytree_argument_has_its_structure():
    params = {"w": W, "b": np.ones(2)}

    def model(p, x):
        return np.sum((x @ p["w"] + p["b"]) ** 2)
    g = cf.grad(model)(params, X)
    assert set(g) == {"w", "b"}
    expected_b = np.sum(2 * (X @ W + 1), axis=0)
    np.testing.assert_allclose(np.asarray(g["b"]), expected_b, rtol=1e-10)


def test_grad_inside_a_compiled_function():
    @cf.jit
    def step(x, w):
        return w - 0.1 * cf.grad(loss, 1)(x, w)
    np.testing.assert_allclose(np.asarray(step(X, W)), W - 0.1 * numeric_gradient(loss, (X, W), 1), rtol=1e-6)


def test_grad_through_a_closure_over_traced_values():
    @cf.jit
    def outer(x, w):
        scale = np.exp(x.sum())
        return cf.grad(lambda v: scale * np.sum(v ** 2))(w)
    np.testing.assert_allclose(np.asarray(outer(X, W)), np.exp(X.sum()) * 2 * W, rtol=1e-10)


def test_vjp_and_jvp():
    out, pullback = cf.vjp(np.sin, X)
    np.testing.assert_allclose(np.asarray(out), np.sin(X))
    ct = RNG.standard_normal(X.shape)
    (g,) = pullback(ct)
    np.testing.assert_allclose(np.asarray(g), ct * np.cos(X), rtol=1e-12)
    t = RNG.standard_normal(X.shape)
    primal, tangent = cf.jvp(lambda x: x * np.exp(x), (X,), (t,))
    np.testing.assert_allclose(np.asarray(primal), X * np.exp(X))
    np.testing.assert_allclose(np.asarray(tangent), t * (1 + X) * np.exp(X), rtol=1e-12)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_matches_exact(mode):
    x = np.linspace(0.1, 1.0, 3)
    jac = cf.jacobian(lambda v: np.sin(v) * v.sum(), mode=mode)(x)
    exact = np.diag(np.cos(x) * x.sum()) + np.sin(x)[:, None]
    np.testing.assert_allclose(np.asarray(jac), exact, rtol=1e-12)
    m = RNG.standard_normal((2, 3))
    jac2 = cf.jacobian(lambda a: a @ a.T, mode=mode)(m)
    assert jac2.shape == (2, 2, 2, 3)
    exact2 = np.einsum("ik,jl->ijkl", np.eye(2), m) + np.einsum("jk,il->ijkl", np.eye(2), m)
    np.testing.assert_allclose(np.asarray(jac2), exact2, rtol=1e-12)


def test_hessian_is_forward_over_reverse():
    x = np.linspace(0.1, 1.0, 4)
    h = cf.hessian(lambda v: np.sum(v ** 3) + v[0] * v[1])(x)
    exact = np.diag(6 * x)
    exact[0, 1] = exact[1, 0] = 1.0
    np.testing.assert_allclose(np.asarray(h), exact, rtol=1e-12)


def test_integer_inputs_are_never_differentiated():
    with pytest.raises(TypeError, match="only floating-point inputs"):
        cf.grad(lambda n: np.sum(n * 2.0))(np.arange(3))
    with pytest.raises(ValueError, match="scalar output"):
        cf.grad(np.sin)(X)
    with pytest.raises(cf.UnsupportedError, match="complex"):
        cf.grad(lambda z: np.abs(z).sum())(X + 1j)


def test_autodiff_reverse_with_active_and_duplicated_shadows():
    x, y, dy = np.arange(3.0), np.full(3, 2.0), np.ones(3)
    (derivs,) = cf.autodiff(cf.Reverse, lambda a, b: np.sum(a * a * b), cf.Active(x), cf.Duplicated(y, dy))
    np.testing.assert_allclose(np.asarray(derivs[0]), 2 * x * y)
    assert derivs[1] is None
    np.testing.assert_allclose(dy, 1 + x * x)  # the shadow accumulates


def test_autodiff_shadow_of_an_overwritten_array():
    def fill(a, out):
        out[:] = a ** 2
    x, dx = np.arange(3.0), np.zeros(3)
    out, dout = np.zeros(3), np.ones(3)
    cf.autodiff(cf.Reverse, fill, cf.Duplicated(x, dx), cf.Duplicated(out, dout))
    np.testing.assert_allclose(out, x ** 2)
    np.testing.assert_allclose(dx, 2 * x)
    np.testing.assert_allclose(dout, 0.0)
    out2, tangent = np.zeros(3), np.zeros(3)
    cf.autodiff(cf.Forward, fill, cf.Duplicated(x, np.ones(3)), cf.Duplicated(out2, tangent))
    np.testing.assert_allclose(tangent, 2 * x)


def test_autodiff_forward_modes():
    x = np.arange(3.0)
    (t,) = cf.autodiff(cf.Forward, lambda a: np.sum(a ** 2), cf.Duplicated(x, np.ones(3)))
    assert np.isclose(float(np.asarray(t)), 2 * x.sum())
    tangents, primal = cf.autodiff(cf.ForwardWithPrimal, np.sin, cf.BatchDuplicated(x, (np.ones(3), 2 * np.ones(3))))
    np.testing.assert_allclose(np.asarray(primal), np.sin(x))
    np.testing.assert_allclose(np.asarray(tangents[1]), 2 * np.cos(x))
    with pytest.raises(cf.TracingError, match="reverse mode"):
        cf.autodiff(cf.Forward, np.sin, cf.Active(x))


def test_custom_jvp_and_stop_gradient():
    @cf.custom_jvp
    def clipped_log(x):
        return np.log(np.maximum(x, 1e-3))

    @clipped_log.defjvp
    def _(primals, tangents):
        (x,), (dx,) = primals, tangents
        return clipped_log(x), dx / x  # deliberately not the clipped derivative
    x = np.array([0.5, 2.0, 1e-4])
    g = cf.grad(lambda v: np.sum(clipped_log(v)))(x)
    np.testing.assert_allclose(np.asarray(g), 1 / x)
    np.testing.assert_allclose(clipped_log(x), np.log(np.maximum(x, 1e-3)))  # plain NumPy outside
    g2 = cf.grad(lambda v: np.sum(v * cf.stop_gradient(v)))(x)
    np.testing.assert_allclose(np.asarray(g2), x)


def test_reverse_mode_needs_a_bound_on_data_dependent_loops():
    def newton(a):
        x = a.copy()
        while np.abs(x * x - a).max() > 1e-10:
            x = 0.5 * (x + a / x)
        return np.sum(x)
    a = np.array([2.0, 3.0, 5.0])
    with pytest.raises(cf.UnsupportedError, match="max_iterations"):
        cf.grad(newton)(a)
    g = cf.jit(cf.grad(newton), max_iterations=40)(a)
    np.testing.assert_allclose(np.asarray(g), 0.5 / np.sqrt(a), rtol=1e-8)
    _, tangent = cf.jvp(newton, (a,), (np.ones(3),))  # forward mode needs no bound
    assert np.isclose(float(np.asarray(tangent)), np.sum(0.5 / np.sqrt(a)))


def test_second_derivatives_through_a_custom_rule_are_refused_clearly():
    with pytest.raises(cf.UnsupportedError, match="custom derivative rule"):
        cf.hessian(np.linalg.det)(np.eye(3) * 2.0)


def _adds_at_a_repeated_index(x, v):
    y = x.copy()
    y[np.array([0, 0])] += v        # NumPy writes the last: y[0] = x[0] + v[1]
    return np.sum(y * np.array([3.0, 1.0]))


def _assigns_at_a_traced_repeated_index(x, v):
    y = x.copy()
    i = np.argmax(x)
    y[np.array([i, i, 1 - i])] = v
    return np.sum(y * np.array([2.0, 5.0]))


def _writes_rows_at_repeated_indices(b, v):
    b = b.copy()
    b[[0, 2, 0]] += v
    return np.sum(b * np.arange(6.0).reshape(3, 2))


def _writes_through_a_run_time_length_index(x):
    y = x.copy()
    idx = np.nonzero(x > 0)[0]
    y[idx] = 2.0 * x[idx]
    return np.sum(y * np.array([10.0, 1.0, 100.0, 1000.0]))


def _adds_at_a_run_time_length_index(x):
    z = np.zeros(4)
    idx = np.nonzero(x > 0)[0]
    np.add.at(z, idx, x[idx] ** 2)
    return np.sum(z * np.array([1.0, 10.0, 100.0, 1000.0]))


def _sorts_a_selection(x):
    p = x[x > 0]
    return np.sum(np.diff(np.sort(p)) ** 2) + np.sum(np.sort(p) * p)


@pytest.mark.parametrize("fn, args", [
    (_adds_at_a_repeated_index, (np.array([1.0, 2.0]), np.array([10.0, 20.0]))),
    (_assigns_at_a_traced_repeated_index, (np.array([1.0, 2.0]), np.array([10.0, 20.0, 30.0]))),
    (_writes_rows_at_repeated_indices, (np.ones((3, 2)), np.arange(6.0).reshape(3, 2))),
    (_writes_through_a_run_time_length_index, (np.array([-1.0, 1.0, -2.0, 3.0]),)),
    (_adds_at_a_run_time_length_index, (np.array([1.0, -1.0, 2.0, -3.0]),)),
    (_sorts_a_selection, (np.array([1.0, -1.0, 2.0, 4.0]),)),
])
def test_gradients_of_writes_that_numpy_drops_and_of_padding_lanes(fn, args):
    """A write NumPy overwrites (a repeated index: the last one wins) and the padding lanes of an array
    whose length is known at run time (what they read, where a sort put NaN) get no gradient."""
    argnums = tuple(range(len(args)))
    grads = cf.grad(fn, argnums=argnums)(*args)
    for k, g in zip(argnums, grads):
        np.testing.assert_allclose(np.asarray(g), numeric_gradient(fn, args, k), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(cf.jit(fn)(*args)), fn(*args), rtol=1e-12)


_Y_WITH_MISSING = np.array([1.0, np.nan, 3.0, -2.0])
_X_ROWS = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, 1.5]])


def _masked_mean_square_error(w):
    r = _X_ROWS @ w
    mask = ~np.isnan(_Y_WITH_MISSING)
    return np.mean((r[mask] - _Y_WITH_MISSING[mask]) ** 2)


def _entropy_of_the_positive(x):
    out = np.zeros_like(x)
    m = x > 0
    out[m] = x[m] * np.log(x[m])
    return out.sum() + np.sum(np.log(x[x > 0]))


@pytest.mark.parametrize("fn, x", [(_masked_mean_square_error, np.array([0.3, -0.2])),
                                   (_entropy_of_the_positive, np.array([0.5, -0.3, 2.0, -1.0]))])
def test_gradients_through_a_mask_that_leaves_out_nan_or_a_functions_domain(fn, x):
    """NumPy never computes the rows a mask leaves out: their derivative (NaN there) must not reach the
    rows it keeps (it did: 0 * NaN, once the optimizer folded the select that kept it out)."""
    with np.errstate(all="ignore"):
        want = numeric_gradient(fn, (x,), 0)
    np.testing.assert_allclose(np.asarray(cf.grad(fn)(x)), want, rtol=1e-6, atol=1e-7)


class _Net:
    def __init__(self):
        self.w, self.scale = np.array([[1.0, 2.0], [3.0, 4.0]]), 1.0

    def loss(self, x):
        return np.sum((self.w @ x) ** 2) * self.scale


def test_a_transform_of_a_bound_method_reads_its_object_at_every_call():
    net, x = _Net(), np.array([1.0, -1.0])
    for change in (lambda: None, lambda: net.w.__setitem__((0, 0), 10.0), lambda: setattr(net, "w", np.eye(2)),
                   lambda: setattr(net, "scale", 3.0)):
        change()
        want = 2 * net.scale * net.w.T @ (net.w @ x)
        np.testing.assert_allclose(np.asarray(cf.grad(net.loss)(x)), want)
        np.testing.assert_allclose(np.asarray(cf.value_and_grad(net.loss)(x)[1]), want)
        np.testing.assert_allclose(np.asarray(cf.vjp(net.loss, x)[1](np.float64(1.0))[0]), want)


def _loss_of_a_history(y0):
    y, history = y0, []
    for _ in range(50):
        y = y + 0.05 * np.sin(y) * y
        history.append(y)      # collected by the rolled loop (tracing/histories.py)
    return np.sum(np.array(history) ** 2)


def test_gradient_through_a_loop_that_collects_a_history():
    y0 = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(np.asarray(cf.grad(_loss_of_a_history)(y0)),
                               numeric_gradient(_loss_of_a_history, (y0,), 0), rtol=1e-6)
