"""Objects from outside a compiled function (its object arguments, the ``self`` of a compiled
method, instances, dicts and lists reached through globals): what their attributes and entries
hold is read at every call, as NumPy code reads it, and what the function stores there is there
after each call, as NumPy arrays and numbers; no traced value escapes into them."""
import copy
import dataclasses
import warnings

import numpy as np
import pytest

import cofactor as cf


class Model:
    def __init__(self, w, scale=2.0):
        self.w, self.scale, self.total, self.count = w, scale, np.zeros_like(w), 0

    def predict(self, X):
        return X @ self.w * self.scale

    def accumulate(self, x):
        self.total = self.total + x
        return self.total.sum()

    def sgd(self, g, lr):
        self.w -= lr * g
        return self.w.sum()

    def counted(self, x):
        self.count += 1
        return x * self.count


class Stack:
    def __init__(self, layer):
        self.layer = layer

    def __call__(self, X):
        return np.tanh(X @ self.layer.w)


def predict(model, X):
    return X @ model.w + model.scale


CONFIG = {"w": np.ones(3), "scale": 1.0}
STATE = {"acc": np.zeros(3)}
HISTORY = []


def configured(X):
    return X @ CONFIG["w"] * CONFIG["scale"]


def accumulate_into_a_global_dict(x):
    STATE["acc"] = STATE["acc"] + x
    return STATE["acc"].max()


def appends_to_a_global_list(x):
    HISTORY.append(x * 2)
    return x


X = np.arange(6.0).reshape(2, 3)


def _same(got, want):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_a_compiled_method_reads_its_object_at_every_call():
    m, twin = Model(np.ones(3)), Model(np.ones(3))
    g = cf.jit(m.predict)
    _same(g(X), twin.predict(X))
    for change in (lambda o: setattr(o, "w", np.array([1.0, 2.0, 3.0])),    # rebound
                   lambda o: o.w.__setitem__(slice(None), 10.0),            # written in place
                   lambda o: setattr(o, "scale", -0.5)):                    # a number: compiled again
        change(m), change(twin)
        _same(g(X), twin.predict(X))
    m.w = np.arange(4.0)  # another shape: compiled again
    twin.w = np.arange(4.0)
    _same(g(np.ones((2, 4))), twin.predict(np.ones((2, 4))))


def test_an_object_argument_and_the_objects_it_holds_are_read_at_every_call():
    m = Model(np.ones(3))
    h = cf.jit(predict)
    _same(h(m, X), predict(m, X))
    m.w = np.array([3.0, 2.0, 1.0])
    _same(h(m, X), predict(m, X))
    stack = Stack(Model(np.ones((3, 2))))
    s = cf.jit(stack)
    _same(s(X), stack(X))
    stack.layer = Model(np.full((3, 2), -0.25))   # the object holding the array is rebound
    _same(s(X), stack(X))
    stack.layer.w[0] = 5.0
    _same(s(X), stack(X))


def test_entries_of_a_global_dict_are_read_at_every_call():
    g = cf.jit(configured)
    _same(g(X), configured(X))
    CONFIG["w"] = np.array([0.5, -1.0, 2.0])
    _same(g(X), configured(X))
    CONFIG["scale"] = 3.0
    _same(g(X), configured(X))
    CONFIG["w"][1] = 7.0
    _same(g(X), configured(X))


def test_an_attribute_the_function_rebinds_holds_its_value_after_each_call():
    m, twin = Model(np.ones(3)), Model(np.ones(3))
    g = cf.jit(m.accumulate)
    for x in (np.arange(3.0), np.ones(3), -np.arange(3.0) * 2):
        _same(g(x), twin.accumulate(x))
        assert type(m.total) is np.ndarray
        _same(m.total, twin.total)


def test_an_attribute_updated_in_place_is_the_same_array_after_the_call():
    m, twin = Model(np.ones(3)), Model(np.ones(3))
    w = m.w
    g = cf.jit(m.sgd)
    for k in range(3):
        grad = np.arange(3.0) + k
        _same(g(grad, 0.1), twin.sgd(grad, 0.1))
        assert m.w is w
        _same(w, twin.w)


def test_a_python_number_the_function_counts_counts_every_call():
    m, twin = Model(np.ones(3)), Model(np.ones(3))
    g = cf.jit(m.counted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.RecompileWarning)
        for _ in range(3):
            _same(g(np.ones(2)), twin.counted(np.ones(2)))
    assert m.count == twin.count == 3


def test_an_entry_of_a_global_dict_the_function_rebinds():
    STATE["acc"] = np.zeros(3)
    want = {"acc": np.zeros(3)}
    g = cf.jit(accumulate_into_a_global_dict)
    for x in (np.arange(3.0), np.ones(3)):
        got = g(x)
        want["acc"] = want["acc"] + x
        _same(got, want["acc"].max())
        _same(STATE["acc"], want["acc"])


def test_a_store_under_a_traced_condition():
    def step(model, x):
        if x.sum() > 0:
            model.total = model.total + x
        else:
            model.total = model.total * 2
        return x

    m, twin = Model(np.ones(3)), Model(np.ones(3))
    g = cf.jit(step)
    for x in (np.arange(3.0), -np.ones(3), np.ones(3)):
        g(m, x), step(twin, x)
        _same(m.total, twin.total)


def test_no_traced_value_escapes_into_an_outside_object():
    HISTORY.clear()
    with pytest.raises(cf.UnsupportedError, match=r"stores traced values in .*a list from outside"):
        cf.jit(appends_to_a_global_list)(np.ones(2))
    assert HISTORY == []

    def fails_after_storing(model, x):
        model.total = model.total + x
        return x.no_such_method()

    m = Model(np.ones(3))
    with pytest.raises(cf.CofactorError):
        cf.jit(fails_after_storing)(m, np.ones(3))
    assert type(m.total) is np.ndarray and not m.total.any()

    def checked(model, x):
        model.total = model.total + x
        if x.sum() > 10:
            raise ValueError("too large")
        return x

    m = Model(np.ones(3))
    with pytest.raises(ValueError, match="too large"):
        cf.jit(checked)(m, np.full(3, 5.0))
    assert not m.total.any()  # as the call left it when the check fired: unchanged


def test_an_array_in_a_closure_s_dict_written_in_place():
    tables = {"t": np.zeros(3)}
    t = tables["t"]

    def f(x):
        tables["t"][0] = x.sum()
        return tables["t"] * 2

    _same(cf.jit(f)(np.ones(2)), [4.0, 0, 0])
    assert tables["t"] is t and t[0] == 2.0


def test_a_global_list_changed_on_one_path_of_a_traced_branch_is_an_error():
    def f(x):
        log = HISTORY
        if x.sum() > 0:
            log.append(1.0)     # a Python object changed only where the run takes this path
        return x

    HISTORY.clear()
    with pytest.raises(cf.TracingError, match="a list changes length in the if"):
        cf.jit(f)(np.ones(2))
    assert HISTORY == []


@dataclasses.dataclass
class Settings:
    alpha: float
    weights: np.ndarray


def weighted(cfg, x):
    return (x * cfg.weights).sum() * cfg.alpha


def test_a_dataclass_argument_is_read_at_every_call():
    cfg = Settings(0.5, np.arange(3.0))
    g = cf.jit(weighted)
    _same(g(cfg, np.ones(3)), weighted(cfg, np.ones(3)))
    cfg.weights[0] = 10.0
    _same(g(cfg, np.ones(3)), weighted(cfg, np.ones(3)))
    cfg.alpha = 2.0
    _same(g(cfg, np.ones(3)), weighted(cfg, np.ones(3)))
    other = Settings(-1.0, np.ones(3))
    _same(g(other, np.ones(3)), weighted(other, np.ones(3)))


RNG = np.random.default_rng(0)
G = np.zeros(2)
N = 0
PARAMS = (np.ones(2), np.full(2, 2.0))


def draws_from_a_global_generator(x):
    return x + RNG.normal(size=2)


def rebinds_a_global(x):
    global G
    G = G + x
    return x


def counts_in_a_global(x):
    global N
    N += 1
    return x * N


def decays_the_global_params(s):
    for p in PARAMS:
        p *= s
    STATE["acc"] *= s
    return PARAMS[0].sum()


def _closure_total():
    total = np.zeros(2)

    def add(x):
        nonlocal total
        total = total + x
        return x

    return add, lambda: total


def test_a_generator_from_a_global_or_an_attribute_draws_at_every_call():
    g = cf.jit(draws_from_a_global_generator)
    draws = [np.asarray(g(np.zeros(2))) for _ in range(3)]
    assert not np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[1], draws[2])

    class Dropout:
        def __init__(self):
            self.rng = np.random.default_rng(1)

        def __call__(self, x):
            return x * (self.rng.random(x.shape) > 0.5)

    d = cf.jit(Dropout())
    masks = {tuple(np.asarray(d(np.ones(16)))) for _ in range(4)}
    assert len(masks) > 1


def test_globals_and_cells_the_function_rebinds_or_counts():
    global G, N
    G, N = np.zeros(2), 0
    g, c = cf.jit(rebinds_a_global), cf.jit(counts_in_a_global)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.RecompileWarning)
        for k in range(1, 4):
            g(np.ones(2))
            assert type(G) is np.ndarray
            _same(G, [k, k])
            _same(c(np.ones(1)), [k])
            assert N == k
    add, total = _closure_total()
    a = cf.jit(add)
    for k in range(1, 3):
        a(np.ones(2))
        assert type(total()) is np.ndarray
        _same(total(), [k, k])


def test_arrays_in_a_global_tuple_and_dict_updated_in_place_at_every_call():
    first, second, acc = PARAMS[0].copy(), PARAMS[1].copy(), np.ones(3)
    STATE["acc"] = np.ones(3)
    g = cf.jit(decays_the_global_params)
    for _ in range(3):
        g(0.5)
        first, second, acc = first * 0.5, second * 0.5, acc * 0.5
        _same(PARAMS[0], first)
        _same(PARAMS[1], second)
        _same(STATE["acc"], acc)
