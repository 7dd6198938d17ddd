"""cf.jit / cf.compile: tracing once per signature, pytrees, constants, optimize modes."""
import warnings

import numpy as np
import pytest

import cofactor as cf


def test_jit_traces_once_per_signature(monkeypatch):
    from cofactor import compiler
    calls, traced = [], compiler._trace_user_function
    monkeypatch.setattr(compiler, "_trace_user_function", lambda *a: calls.append(1) or traced(*a))

    @cf.jit
    def f(x, scale):
        return x * scale

    x = np.arange(4.0)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(x, 2.0)), x * 2.0)
    assert len(calls) == 1
    f(cf.to_device(x), 2.0)  # a ConcreteArray of the same shape and dtype: same signature
    assert len(calls) == 1
    np.testing.assert_array_equal(np.asarray(f(np.arange(5.0), 2.0)), np.arange(5.0) * 2.0)
    assert len(calls) == 2  # new shape
    f(x.astype(np.float32), 2.0)
    assert len(calls) == 3  # new dtype
    np.testing.assert_array_equal(np.asarray(f(x, 3.0)), x * 3.0)
    assert len(calls) == 3  # a Python float is traced: a new value, the same trace
    np.testing.assert_array_equal(np.asarray(f(x, 3)), x * 3)
    assert len(calls) == 4  # a Python int is a compile-time constant: a new value, a new trace


def test_python_scalar_constant_keeps_its_type_in_the_key():
    f = cf.jit(lambda x, k: x + k)
    x = np.arange(3, dtype=np.int32)
    assert np.asarray(f(x, 1)).dtype == np.int32
    assert np.asarray(f(x, 1.0)).dtype == np.float64  # 1 and 1.0 hash equal but are different constants


def test_pytrees_in_and_out():
    def f(params, batch):
        w, b = params["w"], params["b"]
        y = batch[0] @ w + b
        return {"y": y, "stats": (y.sum(), [y.max()])}

    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    batch = [rng.standard_normal((4, 3))]
    got = cf.jit(f)(params, batch)
    want = f(params, batch)
    assert set(got) == {"y", "stats"} and isinstance(got["stats"], tuple) and isinstance(got["stats"][1], list)
    assert all(isinstance(v, cf.ConcreteArray) for v in [got["y"], got["stats"][0], got["stats"][1][0]])
    np.testing.assert_allclose(np.asarray(got["y"]), want["y"], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(got["stats"][0]), want["stats"][0], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(got["stats"][1][0]), want["stats"][1][0], rtol=1e-12)


def test_python_scalar_outputs_come_back_as_0d_arrays():
    got = cf.jit(lambda x: (x.sum(), 3, 2.5, True))(np.ones(2))
    assert [np.asarray(g).shape for g in got] == [(), (), (), ()]
    assert [np.asarray(g).dtype for g in got] == [np.float64, np.int64, np.float64, np.bool_]
    assert [np.asarray(g).item() for g in got] == [2.0, 3, 2.5, True]


def test_none_output():
    assert cf.jit(lambda x: None)(np.ones(2)) is None


def test_compile_ahead_of_time_checks_signature():
    x = np.ones((2, 2))
    g = cf.compile(lambda x: x @ x, x)
    np.testing.assert_array_equal(np.asarray(g(x)), x @ x)
    with pytest.raises(TypeError, match="compiled for other arguments"):
        g(np.ones((3, 3)))


def test_jit_decorator_with_options():
    @cf.jit(optimize=False)
    def f(x):
        return x @ x + (x @ x).T

    x = np.arange(9.0).reshape(3, 3)
    np.testing.assert_allclose(np.asarray(f(x)), x @ x + (x @ x).T)
    assert f.lower(x).mlir.count("stablehlo.dot_general") == 2  # not optimized


@pytest.mark.parametrize("optimize", [True, False, "upstream"])
def test_optimize_modes_agree(optimize):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 4))
    f = lambda x: np.tanh(x @ x.T) + np.sum(x * x, axis=0)  # noqa: E731
    np.testing.assert_allclose(np.asarray(cf.jit(f, optimize=optimize)(x)), f(x), rtol=1e-12)


def test_bad_optimize_value():
    with pytest.raises(ValueError, match="optimize must be"):
        cf.jit(lambda x: x, optimize="fast")(np.ones(2))


def test_code_hlo_seeds_example_has_one_dot_general():
    x = np.ones((3, 3))
    f = lambda x: x @ x + (x @ x).T  # noqa: E731
    raw = cf.code_hlo(f, x, optimize=False)
    optimized = cf.code_hlo(f, x)
    assert raw.count("stablehlo.dot_general") == 2
    assert optimized.count("stablehlo.dot_general") == 1
    assert "func.func @main" in optimized
    assert "HloModule" in cf.code_xla(f, x)


class Unhashable:
    __hash__ = None


def test_unhashable_constant_argument():
    with pytest.raises(cf.TracingError, match="neither an array nor hashable"):
        cf.jit(lambda x, s: x)(np.ones(2), {1, 2})
    # An object is this object (its attributes are read at every call: tests/test_outside_state.py)
    f, obj = cf.jit(lambda x, s: x * 2), Unhashable()
    np.testing.assert_array_equal(np.asarray(f(np.ones(2), obj)), [2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(f(np.ones(2), obj)), [2.0, 2.0])
    assert len(f.cache) == 1


def test_non_array_output_is_rejected():
    with pytest.raises(cf.TracingError, match="returned a str"):
        cf.jit(lambda x: "hello")(np.ones(2))


def _heat_in_place(u):
    for _ in range(20):  # rolled: the loop rewrites of optimize="auto" apply to it
        u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u.sum()


def test_auto_optimization_tries_both_programs_on_copies_and_keeps_one():
    u = np.linspace(0.0, 1.0, 16) ** 2
    compiled = cf.compile(_heat_in_place, u.copy())
    assert compiled._rival is not None  # the loop pipeline gives another program here
    candidates = {compiled.mlir, compiled._rival[0]}
    mine, numpy_u = u.copy(), u.copy()
    result = compiled(mine)
    assert compiled._rival is None and compiled.mlir in candidates
    np.testing.assert_allclose(np.asarray(result), _heat_in_place(numpy_u), rtol=1e-12)
    np.testing.assert_allclose(mine, numpy_u, rtol=1e-12)  # updated once, though both programs ran
    curated = cf.compile(_heat_in_place, u.copy(), optimize=True)
    assert curated._rival is None


_INTERRUPTED_COMPILE = """
import os, signal, sys, threading, time, warnings
import numpy as np
sys.path.insert(0, {tests!r})
import cofactor as cf
from test_errors import triangular  # unrolled: about 3000 operations, a few seconds of XLA compile

signal.signal(signal.SIGINT, signal.default_int_handler)  # (a shell's background job starts with it ignored)
warnings.simplefilter("ignore")
start = time.perf_counter()
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    cf.jit(triangular)(np.eye(18))
    print("finished", time.perf_counter() - start)
except KeyboardInterrupt:
    print("interrupted", time.perf_counter() - start)
"""


def test_ctrl_c_interrupts_a_long_compile():
    import os
    import subprocess
    import sys

    script = _INTERRUPTED_COMPILE.format(tests=os.path.dirname(__file__))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "COFACTOR_CACHE_DIR": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    word, seconds = out.stdout.split()
    assert word == "interrupted" and float(seconds) < 3, out.stdout
    assert "terminate called" not in out.stderr  # the compile left running does not crash the exit


def _reversed_steps(m):
    for i in range(6):
        m = np.tanh(m[::-1]) + m[::-1]   # 24 steps of this took XLA's CPU fusion emitters minutes to compile
    return m


def test_a_compile_over_its_budget_is_done_again_without_fusion(monkeypatch):
    from cofactor.xla import executable

    monkeypatch.setattr(executable, "SLOW_COMPILE_SECONDS", 0.0)
    m = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    with pytest.warns(cf.SlowCompileWarning, match="without fusing its operations") as record:
        got = cf.jit(_reversed_steps, optimize=False)(m)
    assert record[0].filename == __file__  # shown at the user's call
    np.testing.assert_allclose(np.asarray(got), _reversed_steps(m), rtol=1e-12)
    with pytest.warns(cf.SlowCompileWarning):
        compiled = cf.compile(_heat_in_place, np.linspace(0.0, 1.0, 16))
    assert compiled._rival is None  # optimize="auto" does not compile a slow program twice


def _euler_step(u, dt):
    return u + dt * np.sin(u)


def test_a_python_float_argument_is_traced_not_a_constant():
    """A new dt does not compile again, and it stays a weak Python number (NEP 50: float32 stays)."""
    step = cf.jit(_euler_step)
    u = np.linspace(0.0, 1.0, 5, dtype=np.float32)
    for k in range(100):
        dt = 0.01 * (k + 1)
        got = step(u, dt)
        assert np.asarray(got).dtype == np.float32
        np.testing.assert_allclose(np.asarray(got), _euler_step(u, dt), rtol=1e-6)
    assert len(step.cache) == 1
    z = cf.jit(lambda u, c: u * c)(np.ones(2), 1.5 - 2j)      # complex numbers too
    np.testing.assert_allclose(np.asarray(z), np.ones(2) * (1.5 - 2j))


def _rk4(u, dt, t_end):
    def rate(v):
        return -0.5 * v + np.sin(v)
    t = 0.0
    while t < t_end:                 # Python floats: a loop over a traced t, not 1/dt unrolled steps
        k1 = rate(u)
        k2 = rate(u + 0.5 * dt * k1)
        k3 = rate(u + 0.5 * dt * k2)
        k4 = rate(u + dt * k3)
        u = u + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += dt
    return u, t


def test_an_rk4_loop_on_python_floats_is_one_rolled_loop():
    rk4 = cf.jit(_rk4)
    u = np.linspace(-1.0, 1.0, 4)
    for dt in (0.01, 0.003):
        got, t = rk4(u, dt, 2.0)
        want, want_t = _rk4(u, dt, 2.0)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(t), want_t, rtol=1e-12)
    assert len(rk4.cache) == 1
    assert rk4.lower(u, 0.01, 2.0).mlir.count("stablehlo.while") == 1


def _halvings(u, dt):
    for _ in np.zeros(int(1.0 / dt)):   # a shape needs dt's value: dt is a constant of the compiled function
        u = u * 0.5
    return u


def test_python_floats_whose_values_are_needed_stay_constants():
    halvings = cf.jit(_halvings)
    for dt in (0.25, 0.5):
        np.testing.assert_allclose(np.asarray(halvings(np.ones(2), dt)), _halvings(np.ones(2), dt))
    assert len(halvings.cache) == 2
    for static in ({"static_argnums": 1}, {"static_argnames": "dt"}):
        step = cf.jit(_euler_step, **static)
        for dt in (0.1, 0.2, 0.3):
            np.testing.assert_allclose(np.asarray(step(np.ones(3), dt)), _euler_step(np.ones(3), dt))
        assert len(step.cache) == 3


def test_many_signatures_warn_once_naming_the_argument():
    step = cf.jit(_euler_step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", cf.RecompileWarning)
        for n in range(1, 12):
            step(np.ones(n), 0.5)
    messages = [str(w.message) for w in caught if issubclass(w.category, cf.RecompileWarning)]
    assert len(messages) == 1 and "compiled for 9 signatures" in messages[0] and "changed u:" in messages[0]
    assert caught[0].filename == __file__


def test_a_jit_function_keeps_a_bounded_number_of_signatures(monkeypatch):
    """cf.grad(lambda ...) in a loop: each lambda is a new signature of grad's own program, and
    the oldest are dropped instead of held forever."""
    from cofactor import compiler
    from cofactor.autodiff import transforms

    monkeypatch.setattr(compiler, "CACHE_SIZE", 3)
    x = np.linspace(0.0, 1.0, 3)
    for k in range(6):
        g = cf.grad(lambda v: np.sum(np.sin(v) * k))(x)
        np.testing.assert_allclose(np.asarray(g), np.cos(x) * k, rtol=1e-12)
    grads = next(p for emit, p in transforms._programs.items() if emit.__name__ == "_emit_grad")
    assert len(grads.cache) == 3


def test_jit_on_a_method_binds_its_instance():
    class Scaled:
        def __init__(self, w):
            self.w = w

        @cf.jit
        def apply(self, x):
            return x * self.w

    a, b = Scaled(np.ones(2)), Scaled(np.full(2, 3.0))
    np.testing.assert_array_equal(np.asarray(a.apply(np.ones(2))), [1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(b.apply(np.ones(2))), [3.0, 3.0])
    a.w = np.full(2, 5.0)                  # read at every call
    np.testing.assert_array_equal(np.asarray(a.apply(np.ones(2))), [5.0, 5.0])
    assert isinstance(Scaled.apply, cf.JitFunction)
