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


def test_a_global_list_appended_to_grows_at_every_call():
    HISTORY.clear()
    g = cf.jit(appends_to_a_global_list)
    xs = [np.random.default_rng(k).random(2) for k in range(3)]
    for x in xs:
        g(x)
    assert len(HISTORY) == 3 and all(type(h) is np.ndarray for h in HISTORY)
    for h, x in zip(HISTORY, xs):
        _same(h, x * 2)


def test_no_traced_value_escapes_into_an_outside_object():
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


# --- What the function leaves in containers and objects, against NumPy run on a twin of the state.

def _equal(got, want, where="state"):
    """``got`` (after the compiled calls) is ``want`` (after NumPy's): the same structure, the same
    types, NumPy arrays of the same values and dtypes (never a traced value)."""
    assert type(got).__qualname__ == type(want).__qualname__ or where.endswith("result") and \
        isinstance(got, cf.ConcreteArray) and isinstance(want, (np.ndarray, np.generic)), (where, type(got), type(want))
    if isinstance(want, dict):
        assert list(got) == list(want), (where, list(got), list(want))
        for k in want:
            _equal(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), (where, len(got), len(want))
        for k, (a, b) in enumerate(zip(got, want)):
            _equal(a, b, f"{where}[{k}]")
    elif isinstance(want, (np.ndarray, np.generic)):
        assert np.asarray(got).dtype == want.dtype, (where, np.asarray(got).dtype, want.dtype)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, err_msg=where)
    elif hasattr(want, "__dict__") and not callable(want):
        _equal(vars(got), vars(want), where)
    else:
        assert got == want, (where, got, want)


def _twin(make, inputs, **options):
    """``make()`` gives (function, its state): run one pair as NumPy does and the other compiled,
    on copies of each call's arguments, and compare results, arguments and states after each call."""
    (plain, want_state), (compiled, got_state) = make(), make()
    g = cf.jit(compiled, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.RecompileWarning)
        for k, args in enumerate(inputs):
            want_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
            want = plain(*want_args)
            got = g(*got_args)
            _equal(got, want, f"call {k}: result")
            _equal(list(got_args), list(want_args), f"call {k}: arguments")
            _equal(got_state, want_state, f"call {k}: state")
    return g


def _rng(k):
    return np.random.default_rng(k)


def test_dict_and_list_arguments_get_what_the_function_stores_in_them():
    def make():
        def f(params, history, x):
            params["y"] = x * params["w"]            # a new key, computed
            params["w"] = params["w"] + 1             # a key rebound
            params["lr"] = params["lr"] * 0.5         # a Python float, traced
            params["seen"] = True                     # a constant
            params.pop("tmp", None)                   # a key deleted
            history.append(x.sum())                   # a list argument grown
            history[0] = history[0] * 2               # an item replaced
            params["nested"]["v"] -= x                # a nested dict, in place
            params["alias"] = params["w"]             # the same array under two keys
            return x * 2
        return f, None

    inputs = [({"w": _rng(k).random(3), "lr": 0.1 * (k + 1), "tmp": np.ones(1), "nested": {"v": _rng(9).random(3)}},
               [np.zeros(())], _rng(k + 20).random(3)) for k in range(3)]
    _twin(make, inputs)


def test_a_stored_argument_is_that_very_array():
    class Recorder:
        def __init__(self):
            self.prev, self.w = None, np.ones(3)

        def step(self, x, log):
            self.prev = x                 # the argument itself, as NumPy keeps it
            self.alias = self.w           # an array read from outside, itself
            self.w += x                   # ... updated in place
            log["last"] = x
            return x + 1

    r, log = Recorder(), {}
    g = cf.jit(r.step)
    for k in range(3):
        x = _rng(k).random(3)
        g(x, log)
        assert r.prev is x and log["last"] is x and r.alias is r.w


def test_a_memo_dict_read_by_membership_and_get():
    def make():
        memo, cache = {}, {"k": np.zeros(2)}

        def f(x, n):
            if n in memo:                     # membership: compiled again when it changes
                return memo[n] + x
            memo[n] = x * n
            stored = cache.get("k")           # an array read through get, at every call
            cache.setdefault("calls", 0)
            try:
                extra = cache["missing"]      # a missing key the function catches
            except KeyError:
                extra = 0.0
            return x + stored + extra
        return f, None

    inputs = [(_rng(k).random(2), n) for k, n in enumerate([2, 2, 3, 2, 3])]
    _twin(make, inputs)


def test_a_global_log_and_a_stack_of_arrays():
    def make():
        log, stack = [], [np.ones(2), np.full(2, 2.0)]

        def f(x):
            log.append("called")              # a constant appended at every call
            if len(log) > 2:                  # its length read: compiled again as it grows
                x = x * 2
            top = stack.pop()                 # an array popped from an outside list
            stack.insert(0, top + x)
            return x + top
        return f, (log, stack)

    inputs = [(_rng(k).random(2),) for k in range(4)]
    g = _twin(make, inputs)
    assert g is not None


def test_lists_of_arrays_read_through_slices_numpy_functions_and_dict_views():
    def make():
        class Net:
            def __init__(self):
                self.layers = [np.eye(2), 2 * np.eye(2), 3 * np.eye(2)]
                self.named = {"a": np.ones(2), "b": np.full(2, 3.0)}

            def forward(self, x):
                for w in self.layers[:2]:     # a slice of an outside list
                    x = x @ w
                x = x + np.stack(self.layers).sum(axis=0)[0]   # a NumPy function given the list
                x = x + sum(self.named.values()) + np.max([v.sum() for v in self.named.values()])
                for name, v in self.named.items():
                    x = x * v if name == "a" else x - v
                return x + dict(self.named)["b"]
        net = Net()
        return net.forward, net

    (plain, want), (compiled, got) = make(), make()
    g = cf.jit(compiled)
    for k in range(3):
        for net in (want, got):           # the caller changes the arrays between calls
            net.layers[0] = _rng(k).random((2, 2))
            net.named["b"] = _rng(k + 5).random(2)
        x = _rng(k + 10).random(2)
        _equal(g(x), plain(x), f"call {k}: result")


def test_properties_hasattr_and_getattr_read_at_every_call():
    def make():
        class Scaled:
            def __init__(self):
                self._w, self.w0 = np.ones(3), np.zeros(3)

            @property
            def w(self):
                return self._w * 2

            def f(self, x):
                if not hasattr(self, "buffer"):   # made on the first call only
                    self.buffer = np.zeros(3)
                self.buffer += x
                return x * self.w + getattr(self, "w0") + self.buffer
        s = Scaled()
        return s.f, s

    (plain, want), (compiled, got) = make(), make()
    g = cf.jit(compiled)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.RecompileWarning)
        for k in range(3):
            for s in (want, got):
                s._w, s.w0 = _rng(k).random(3), _rng(k + 3).random(3)
            x = _rng(k + 6).random(3)
            _equal(g(x), plain(x), f"call {k}: result")
            _equal(got, want, f"call {k}: state")


def test_an_object_made_by_the_function_and_stored_is_made_at_every_call():
    @dataclasses.dataclass
    class State:
        h: np.ndarray
        step: int

    def make():
        class Cell:
            def __init__(self):
                self.state, self.pair = None, ()

            def f(self, x):
                self.state = State(np.tanh(x), 1)
                self.pair = (x * 2, [x.sum(), "tag"])
                return x
        c = Cell()
        return c.f, c

    inputs = [(_rng(k).random(3),) for k in range(3)]
    _twin(make, inputs)


def test_a_branch_that_updates_an_attribute_in_place_or_rebinds_it():
    def make():
        class H:
            def __init__(self):
                self.h = np.zeros(3)

            def step(self, x):
                if x.sum() > 1.5:
                    self.h[:] = x
                else:
                    self.h = x * 2
                return self.h.sum()
        m = H()
        return m.step, m

    inputs = [(_rng(k).random(3) + k % 2,) for k in range(4)]
    _twin(make, inputs)


def test_compiling_at_every_call_warns_naming_what_changed():
    LOG_ = []

    def f(x):
        if len(LOG_) % 2:
            x = x + 1
        LOG_.append(1)
        return x

    g = cf.jit(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", cf.RecompileWarning)
        for k in range(10):
            np.testing.assert_allclose(np.asarray(g(np.zeros(2))), np.full(2, k % 2))
    messages = [str(w.message) for w in caught if issubclass(w.category, cf.RecompileWarning)]
    assert len(messages) == 1 and "compiled 9 times" in messages[0] and "len(LOG_)" in messages[0], messages
    assert len(LOG_) == 10
