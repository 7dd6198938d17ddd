"""Globals and closure variables are read at every call, as NumPy code reads them: an array is an
implicit input (written back when the function writes it), a number a constant that recompiles
the function when it changes.  Each test compares with the same function run by NumPy."""
import numpy as np
import pytest

import cofactor as cf

G = np.ones(3)
H = np.zeros(3)
SCALE = 2.0
SHAPE = (3,)
MODE = "add"


def reads_global(x):
    return x + G * SCALE


def writes_global(x):
    H[:] = x * 2
    H[0] += G[1]
    return x.sum()


def updates_in_rolled_loop(x):
    for i in range(12):
        if x[i % 3] > 0:
            H[i % 3] += x[i % 3]
        else:
            H[...] = H * 0.5
    return H.sum()


def reads_constants(x):
    y = np.zeros(SHAPE) + x
    return y * SCALE if MODE == "add" else y - SCALE


def reads_and_writes_argument(a):
    a += 1          # the caller passes G itself: the global sees the update
    return G * 2


def _same(got, want):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    assert np.asarray(got).dtype == np.asarray(want).dtype


@pytest.fixture(autouse=True)
def fresh_globals():
    global G, H, SCALE, SHAPE, MODE
    saved = G, H, SCALE, SHAPE, MODE
    G, H = np.ones(3), np.zeros(3)
    yield
    G, H, SCALE, SHAPE, MODE = saved


def test_a_global_array_is_read_at_every_call():
    global G
    f = cf.jit(reads_global)
    x = np.arange(3.0)
    _same(f(x), reads_global(x))
    G[:] = 100              # changed in place
    _same(f(x), reads_global(x))
    G = np.full(3, 5.0)     # rebound to another array of the same shape: no recompile
    _same(f(x), reads_global(x))
    assert len(f.cache) == 1
    G = np.arange(6.0).reshape(2, 3)  # another shape: compiled anew, as NumPy broadcasts it
    _same(f(x), reads_global(x))
    G = np.arange(3, dtype=np.int32)  # another dtype
    _same(f(x), reads_global(x))


def test_a_global_deleted_since_the_trace_is_pythons_name_error():
    global G
    f = cf.jit(reads_global)
    f(np.ones(3))
    del G
    with pytest.raises(NameError):
        f(np.ones(3))


def test_a_global_array_the_function_writes_is_written_back():
    global H
    for fn in (writes_global, updates_in_rolled_loop):
        f = cf.jit(fn)
        for x in (np.array([1.0, -2.0, 3.0]), np.array([-1.0, 4.0, 0.5])):
            H = np.linspace(0.0, 1.0, 3)
            want = fn(x)
            want_h = H.copy()
            H = np.linspace(0.0, 1.0, 3)
            held = H          # the caller's reference sees the update: it is the same array
            _same(f(x), want)
            np.testing.assert_allclose(H, want_h, rtol=1e-12)
            assert held is H


def test_a_global_number_that_changes_compiles_the_function_again():
    global SCALE, SHAPE, MODE
    f = cf.jit(reads_constants)
    x = np.arange(3.0)
    _same(f(x), reads_constants(x))
    SCALE = 3.0
    _same(f(x), reads_constants(x))
    MODE = "sub"
    _same(f(x), reads_constants(x))
    SHAPE = (2, 3)
    _same(f(x), reads_constants(x))
    SCALE = np.float32(0.5)  # a NumPy scalar of another type is another constant
    _same(f(x), reads_constants(x))


def test_a_global_passed_as_the_argument_is_that_argument():
    global G
    f = cf.jit(reads_and_writes_argument)
    G = np.arange(3.0)
    _same(f(G), np.arange(3.0) * 2 + 2)   # NumPy: the update of a is the update of G
    np.testing.assert_array_equal(G, np.arange(3.0) + 1)
    other = np.zeros(3)                  # now G is not the argument: compiled anew
    _same(f(other), G * 2)
    np.testing.assert_array_equal(other, np.ones(3))


def test_a_global_view_of_a_written_argument_is_refused():
    global G
    base = np.zeros(4)
    G = base[1:]
    with pytest.raises(cf.UnsupportedError, match="from outside it .a global, a closure variable"):
        cf.jit(lambda a: (a.__iadd__(1), G + 0)[1])(base)
    np.testing.assert_array_equal(base, np.zeros(4))  # refused before running: nothing changed


def test_a_read_only_global_the_function_writes_is_numpys_error():
    global H
    H = np.zeros(3)
    H.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        cf.jit(writes_global)(np.ones(3))


def test_closure_variables_are_read_and_written_at_every_call():
    def make():
        weights = np.ones(2)
        log = np.zeros(2)

        def step(x):
            log[:] = log + x        # written through the cell's array
            return x @ weights

        def reweigh(w):
            nonlocal weights
            weights = w

        return step, reweigh, log

    step, reweigh, log = make()
    f = cf.jit(step)
    x = np.array([1.0, 2.0])
    _same(f(x), 3.0)
    reweigh(np.array([10.0, 0.0]))   # the cell is rebound outside the compiled function
    _same(f(x), 10.0)
    np.testing.assert_array_equal(log, 2 * x)


def test_two_names_for_one_array_stay_one_array():
    state = {"calls": 0}
    a = np.zeros(3)
    b = a

    def f(x):
        a[0] = x.sum()      # written through one name, read through the other
        return b * 2

    jf = cf.jit(f)
    _same(jf(np.ones(2)), np.array([4.0, 0.0, 0.0]))
    np.testing.assert_array_equal(a, [2.0, 0.0, 0.0])
    state["calls"] += 1


def test_a_gradient_reads_the_global_data_at_every_call():
    global G
    G = np.arange(6.0).reshape(2, 3)

    def loss(w):
        return np.sum((G @ w) ** 2)

    g = cf.grad(loss)
    w = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(np.asarray(g(w)), 2 * G.T @ (G @ w), rtol=1e-12)
    G = G * 3.0
    np.testing.assert_allclose(np.asarray(g(w)), 2 * G.T @ (G @ w), rtol=1e-12)


def test_ahead_of_time_compiled_function_refuses_changed_globals():
    global G
    compiled = cf.compile(reads_global, np.ones(3))
    G = np.ones(4)
    with pytest.raises(TypeError, match="'G' is no longer an array of shape"):
        compiled(np.ones(3))


def test_local_names_that_shadow_globals_are_the_locals():
    def f(x):
        G = x * 3                               # a local G: the global is not read
        H = [v * 2 for v in (x, G)]             # a comprehension's own name
        return G + H[1] + sum(x for SCALE in range(2))  # noqa: B007

    x = np.arange(3.0)
    _same(cf.jit(f)(x), f(x))


def test_a_global_view_of_another_global_both_read_and_one_written_is_refused():
    base = np.zeros(4)
    view = base[1:]

    def f(x):
        view[0] = x.sum()
        return base * 1

    with pytest.raises(cf.UnsupportedError, match="shares memory"):
        cf.jit(f)(np.ones(2))
    np.testing.assert_array_equal(base, np.zeros(4))


def _helper(x):
    return x * 2


def calls_helper(x):
    return _helper(x) + 1


def test_a_helper_function_redefined_since_the_trace_is_called_as_redefined():
    global _helper
    saved = _helper
    f = cf.jit(calls_helper)
    x = cf.to_device(np.arange(3.0))   # the fast path for device arrays checks the globals too
    _same(f(x), np.arange(3.0) * 2 + 1)
    try:
        _helper = lambda x: x * 10  # noqa: E731 (a notebook cell redefining it)
        _same(f(x), np.arange(3.0) * 10 + 1)
    finally:
        _helper = saved


def test_a_function_nested_in_the_compiled_one_reads_the_callers_closure_at_every_call():
    def make():
        weights = np.ones(3)

        def f(x):
            def inner(k):        # called once per iteration: converted on its own
                return x[k] * weights[k]
            total = 0.0
            for k in range(3):
                total = total + inner(k)
            return total

        return f, weights

    f, weights = make()
    jf = cf.jit(f)
    x = np.arange(3.0)
    _same(jf(x), f(x))
    weights[:] = [2.0, -1.0, 4.0]
    _same(jf(x), f(x))


def test_a_function_defined_in_the_compiled_one_reads_its_variables_not_guards():
    def f(x):
        k = 1

        def plus_k(v):      # no call, no control flow: converted again when called
            return v + k

        out = plus_k(x)
        k = 3               # the cell changes during the trace (fuzz seed 40345)
        return out + plus_k(x)

    jf = cf.jit(f)
    x = np.arange(3.0)
    _same(jf(x), f(x))
    _same(jf(x), f(x))      # the second call finds the same (compiled) function
