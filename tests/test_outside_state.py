"""Objects from outside a compiled function (its object arguments, the ``self`` of a compiled
method, instances, dicts and lists reached through globals): what their attributes and entries
hold is read at every call, as NumPy code reads it, and what the function stores there is there
after each call, as NumPy arrays and numbers; no traced value escapes into them."""
import collections
import contextlib
import copy
import dataclasses
import functools
import operator
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
        isinstance(got, cf.ConcreteArray) and isinstance(want, (np.ndarray, np.generic, int, float)), \
        (where, type(got), type(want))
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
    elif isinstance(got, cf.ConcreteArray):   # a Python number returned: a 0-d array
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, err_msg=where)
    else:
        assert got == want, (where, got, want)


def _twin(make, inputs, between=None, **options):
    """``make()`` gives (function, its state): run one pair as NumPy does and the other compiled,
    on copies of each call's arguments, and compare results, arguments and states after each call
    (``between(state, k)``: what the caller changes in both states before call ``k``)."""
    (plain, want_state), (compiled, got_state) = make(), make()
    g = cf.jit(compiled, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.RecompileWarning)
        for k, args in enumerate(inputs):
            for state in (want_state, got_state) if between else ():
                between(state, k)
            want_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
            want = plain(*want_args)
            got = g(*got_args)
            _equal(got, want, f"call {k}: result")
            _equal(list(got_args), list(want_args), f"call {k}: arguments")
            read = (lambda state: state()) if callable(want_state) else (lambda state: state)  # (a cell's, read)
            _equal(read(got_state), read(want_state), f"call {k}: state")
    return want_state, got_state


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

    _twin(make, [(_rng(k).random(2),) for k in range(4)])


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

    def between(net, k):                  # the caller changes the arrays between calls
        net.layers[0] = _rng(k).random((2, 2))
        net.named["b"] = _rng(k + 5).random(2)
    _twin(make, [(_rng(k + 10).random(2),) for k in range(3)], between)


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

    def between(s, k):
        s._w, s.w0 = _rng(k).random(3), _rng(k + 3).random(3)
    _twin(make, [(_rng(k + 6).random(3),) for k in range(3)], between)


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


def test_what_the_trace_reads_after_changing_a_container_follows_from_how_the_call_found_it():
    """A length, an item or a truth read after the function appended or popped depends on the
    container as the call found it: guarded on that, not on what the trace saw after its own change."""
    def make():
        class Frames:
            def __init__(self):
                self.frames, self.stack = [np.zeros(1)], [np.zeros(1), np.ones(1), np.full(1, 2.0)]
                self.nodes = []

            def f(self, x):
                self.frames.append(x)
                top = self.stack.pop()
                self.stack[-1] = self.stack[-1] + top            # the item that is last after the pop
                self.stack.insert(0, x)
                parent = self.nodes[-1] if self.nodes else None  # the truth of an outside list
                self.nodes.append(x * 2)
                return len(self.frames) * np.stack(self.frames).sum(0) + (0 if parent is None else parent)
        o = Frames()
        return o.f, o

    _twin(make, [(np.full(1, 10.0 ** k),) for k in range(5)])


def test_objects_the_function_makes_stores_and_reads_back_never_hold_traced_values():
    def make():
        class Optimizer:
            def __init__(self):
                self.state, self.params = {}, [np.ones(2), np.full(2, 2.0)]

            def step(self, grads, lr):
                for i, (p, g) in enumerate(zip(self.params, grads)):
                    if i not in self.state:                       # made on the first call only
                        self.state[i] = {"buf": np.zeros_like(p)}
                    buf = self.state[i]["buf"]
                    buf *= 0.9
                    buf += g
                    p -= lr * buf
                self.last = {"g": [g * 1 for g in grads]}
                return self.last["g"][0] + self.state[0]["buf"]
        o = Optimizer()
        return o.step, o

    _twin(make, [([_rng(k).random(2), _rng(k + 9).random(2)], 0.1) for k in range(4)])


def test_a_partial_of_a_method_and_its_bound_arrays():
    class Part:
        def __init__(self):
            self.w = np.ones(2)

        def f(self, x, table, scale):
            self.w = self.w * scale + x + table
            return self.w

    table = np.zeros(2)
    (o, twin) = Part(), Part()
    g = cf.jit(functools.partial(o.f, table=table, scale=0.5))
    for k in range(3):
        table[:] = k                       # the partial's array is read at every call
        x = _rng(k).random(2)
        _equal(g(x), twin.f(x, table, 0.5), f"call {k}: result")
        assert type(o.w) is np.ndarray
        _equal(o.w, twin.w)


def test_attributes_read_with_defaults_cached_properties_and_class_attributes():
    def make():
        class Layer:
            calls = 0

            def __init__(self):
                self.A, self.w = 3 * np.eye(2), np.ones(2)

            @functools.cached_property
            def twice(self):
                return self.A * 2

            def f(self, x):
                type(self).calls += 1                     # a class attribute counted
                b = getattr(self, "bias", None)
                y = self.twice @ x * self.w * Layer.calls
                return y if b is None else y + b
        layer = Layer()
        return layer.f, layer

    def between(layer, k):                # the caller changes what the function reads
        if k == 2:
            layer.bias = np.full(2, 5.0)
        if k == 3:
            del layer.bias, layer.twice
            layer.A = np.eye(2)
    want, got = _twin(make, [(_rng(k).random(2),) for k in range(5)], between)
    assert type(got).calls == type(want).calls == 5


def test_an_ordered_dict_lru_a_defaultdict_argument_a_deque_and_a_set():
    def make():
        lru, seen, window = collections.OrderedDict(), set(), collections.deque(maxlen=2)

        def f(key, x, groups):
            if key in lru:
                lru.move_to_end(key)
            else:
                lru[key] = x * 3
                if len(lru) > 2:
                    lru.popitem(last=False)
            seen.add(key)
            window.append(x)
            groups[key].append(x * 2)
            return lru[key] + np.stack(groups[key]).sum(0) + sum(window) + len(seen)
        return f, (lru, seen, window)

    inputs = [(key, _rng(k).random(2), collections.defaultdict(list)) for k, key in enumerate("abacbca")]
    (plain, want), (compiled, got) = make(), make()
    g = cf.jit(compiled)
    groups_want, groups_got = collections.defaultdict(list), collections.defaultdict(list)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.RecompileWarning)
        for k, (key, x, _) in enumerate(inputs):
            _equal(g(key, x, groups_got), plain(key, x, groups_want), f"call {k}: result")
            _equal(dict(groups_got), dict(groups_want), f"call {k}: groups")
            _equal([list(got[0].items()), got[1], list(got[2])], [list(want[0].items()), want[1], list(want[2])],
                   f"call {k}: state")


def test_one_array_stored_in_two_places_is_one_array():
    class Two:
        def f(self, x, log):
            y = x * 2
            self.p = y
            self.q = y
            log.append(y)
            return x

    o, log = Two(), []
    cf.jit(o.f)(np.ones(2), log)
    assert o.p is o.q is log[0] and type(o.p) is np.ndarray


def test_a_generator_the_function_makes_and_stores_is_an_error():
    class Lazy:
        def __init__(self):
            self.rng = None

        def f(self, x):
            if self.rng is None:
                self.rng = np.random.default_rng(42)
            return x + self.rng.normal(size=x.shape)

    o = Lazy()
    with pytest.raises(cf.UnsupportedError, match=r"stores a TracedGenerator it made in self.rng.*\n.*def f|in __init__"):
        cf.jit(o.f)(np.zeros(2))
    assert o.rng is None


def test_outside_sequences_unpacked_starred_and_comprehended_are_read_at_every_call():
    def make():
        class Net:
            def __init__(self):
                self.params = [np.ones(2), np.zeros(2)]
                self.named = [("a", np.ones(2)), ("b", np.full(2, 2.0))]
                self.pair = (np.ones(2), np.full(2, 3.0))

            def f(self, x):
                W, b = self.params
                first, *rest = self.params
                a, c = self.pair
                y = W * x + b + first + sum(rest) + a * c
                for name, p in self.named:
                    y = y + p
                y = y + sum([w * 2 for w in self.params]) + np.concatenate([*self.params, x]).sum()
                return y + list(zip(*self.named))[1][0]
        net = Net()
        return net.f, net

    def between(net, k):                  # the caller changes the arrays, in place and by rebinding
        net.params[0] *= 2
        net.params[1] = net.params[1] + k
        net.named[1][1][:] += 1
        net.pair[0][:] += 1
    _twin(make, [(_rng(k).random(2),) for k in range(3)], between)


def test_defaults_slots_class_state_vars_and_getattr_hooks():
    class Slotted:
        __slots__ = ("w", "h")

        def __init__(self):
            self.w, self.h = np.zeros(2), np.ones(2)

        def f(self, x):
            self.w = self.w + x           # a slot rebound
            self.h[:] = x                 # a slot's array written in place
            return self.w

    class Registry:
        seen = []

        @classmethod
        def record(cls, v):
            cls.seen.append(v * 1)        # the class's own list, through cls
            return len(cls.seen)

    class Lookup:
        def __init__(self):
            self.store, self.a = {"alpha": np.ones(2)}, np.ones(2)

        def __getattr__(self, name):      # what it reads, read at every call
            return self.store[name]

        def f(self, x, acc=[]):           # noqa: B006  (a default list, the function's own)
            acc.append(x * 1)
            return x * self.alpha + len(vars(self))

    s, twin_s = Slotted(), Slotted()
    g = cf.jit(s.f)
    look, twin_look = Lookup(), Lookup()
    h, r = cf.jit(look.f), cf.jit(Registry.record)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.RecompileWarning)
        for k in range(3):
            x = _rng(k).random(2)
            _equal(g(x), twin_s.f(x), f"call {k}: result")
            assert type(s.w) is np.ndarray and type(s.h) is np.ndarray
            _equal([s.w, s.h], [twin_s.w, twin_s.h])
            for o in (look, twin_look):
                o.store["alpha"] = np.full(2, k + 1.0)
                if k == 2:
                    o.extra = 1
            _equal(h(x), twin_look.f(x), f"call {k}: result")
            assert int(np.asarray(r(x))) == k + 1 and all(type(v) is np.ndarray for v in Registry.seen)
    assert len(Lookup.f.__defaults__[0]) == 6 and all(type(v) is np.ndarray for v in Lookup.f.__defaults__[0])


def test_a_closure_list_rebound_to_a_slice_of_itself():
    def make():
        hist = []

        def f(x):
            nonlocal hist
            hist.append(x)
            if len(hist) > 2:
                hist = hist[1:]
            return np.stack(hist).sum(0)
        return f, (lambda: hist)

    _twin(make, [(_rng(k).random(2),) for k in range(5)])


def test_python_state_compiled_code_cannot_advance_is_a_clear_error():
    import itertools
    import random
    counter = itertools.count()
    with pytest.raises(cf.UnsupportedError, match="advances a count from outside it"):
        cf.jit(lambda x: x * next(counter))(np.ones(2))
    with pytest.raises(cf.UnsupportedError, match="Python's random module"):
        cf.jit(lambda x: x * random.random())(np.ones(2))
    seen = {1, 2}
    with pytest.raises(cf.ConcretizationError, match="a traced value looked up in a set"):
        cf.jit(lambda x: x * (int(np.argmax(x)) in seen))(np.ones(2))


def test_an_attribute_set_on_one_path_of_a_traced_branch():
    def make():
        class Best:
            def __init__(self):
                self.best, self.best_x = np.inf, np.zeros(2)

            def f(self, x):
                loss = float((x ** 2).sum())
                if loss < self.best:
                    self.best = loss
                    self.best_x = x
                return loss
        b = Best()
        return b.f, b

    _twin(make, [(_rng(k).random(2) * (3 - k),) for k in range(4)])


def test_a_defaultdict_whose_factory_makes_arrays():
    def make():
        class Sums:
            def __init__(self):
                self.d = collections.defaultdict(lambda: np.zeros(2))

            def f(self, k, x):
                self.d[k] += x
                return self.d[k]
        s = Sums()
        return s.f, s

    _twin(make, [(k, _rng(i).random(2)) for i, k in enumerate("abab")])


def test_a_list_passed_twice_is_a_clear_error():
    def f(a, b, x):
        a.append(x)
        return len(b)

    shared = []
    with pytest.raises(cf.UnsupportedError, match=r"the same list is passed twice.*\n.*test_outside_state.py"):
        cf.jit(f)(shared, shared, np.ones(2))
    assert shared == []
    assert int(np.asarray(cf.jit(f)([], [], np.ones(2)))) == 0


SHARED = []


def test_a_list_passed_in_and_read_as_a_global_is_a_clear_error():
    def f(lst, x):
        lst.append(x)
        return len(SHARED)

    SHARED.clear()
    with pytest.raises(cf.UnsupportedError, match=r"reads SHARED, the same list it is given as an argument"):
        cf.jit(f)(SHARED, np.ones(2))
    assert SHARED == []


class Accumulator:
    """An object whose += adds into its own state and counts (the program's own __iadd__)."""

    def __init__(self):
        self.total, self.n = np.zeros(2), 0

    def __iadd__(self, v):
        self.total = self.total + v
        self.n += 1
        return self


def test_the_programs_own_hooks_run_as_converted_code():
    """__getattr__ and __setattr__ redirecting to a store, __getitem__ of a parameter store, an
    __iadd__ returning self, attributes of a list subclass, and an instance attribute that comes to
    hide a class attribute: read and written as plain Python does, at every call."""
    def make():
        class Params:
            def __init__(self):
                object.__setattr__(self, "_p", {"w": np.ones(2)})

            def __setattr__(self, k, v):
                self._p[k] = v

            def __getattr__(self, k):
                p = object.__getattribute__(self, "_p")
                if k in p:
                    return p[k]
                raise AttributeError(k)

        class Store:
            def __init__(self):
                self._d = {"a": np.zeros(2)}

            def __getitem__(self, k):
                return self._d[k]

        class Tagged(list):
            pass

        class Model:
            table = np.arange(2.0)

            def __init__(self):
                self.params, self.store, self.acc, self.tags = Params(), Store(), Accumulator(), Tagged()
                self.tags.count = 0

            def f(self, x):
                self.params.w = self.params.w + x
                self.acc += x
                self.tags.count += 1
                return self.params.w + self.store["a"] + self.acc.total * self.tags.count + self.table
        m = Model()
        return m.f, m

    def between(m, k):
        m.store._d["a"] = np.full(2, float(k))
        if k == 2:
            m.table = np.ones(2)              # an instance attribute now hides the class's
    want, got = _twin(make, [(_rng(k).random(2),) for k in range(4)], between)
    assert got.acc.n == want.acc.n == 4 and got.tags.count == 4 and type(got.params._p["w"]) is np.ndarray


def test_a_refusal_is_not_taken_for_the_programs_own_error_by_an_except_clause():
    """cofactor's refusal inside a try whose except catches Exception is raised, not handled as the
    program's error (the except path at every call, silently); the program's own errors still are."""
    def refused(x, log):
        try:
            if x.sum() > 0:
                log.append("pos")         # a list changing length in a traced branch: refused
            return x
        except Exception:
            return x * 0

    def handled(x):
        try:
            return x / np.array([1.0, 2.0, 3.0])     # NumPy's ValueError (shapes), the program's own
        except ValueError:
            return x * 0

    with pytest.raises(cf.TracingError, match="a list changes length"):
        cf.jit(refused)(np.ones(2), [])
    np.testing.assert_array_equal(np.asarray(cf.jit(handled)(np.ones(2))), [0.0, 0.0])


def test_sorting_an_outside_list_of_arrays_by_their_values_is_a_clear_error():
    class Items:
        def __init__(self):
            self.items = [np.full(1, 3.0), np.full(1, 1.0)]

        def f(self, x):
            self.items.sort(key=lambda a: float(a[0]))   # the order depends on the values at each call
            return self.items[0] + x

    with pytest.raises(cf.ConcretizationError):
        cf.jit(Items().f)(np.ones(1))


def test_an_in_place_operator_of_the_programs_own_class_through_a_local_name():
    def make():
        class Holder:
            def __init__(self):
                self.acc = Accumulator()

            def f(self, x):
                a = self.acc
                a += x                    # Acc.__iadd__, at every call
                k = 1
                k += a.n                  # a local number: as Python adds it
                return a.total * k
        h = Holder()
        return h.f, h

    want, got = _twin(make, [(_rng(k).random(2),) for k in range(4)])
    assert got.acc.n == want.acc.n == 4


class Scaled:
    """An object whose special methods, called by Python's syntax, read and change its own state."""

    def __init__(self):
        self.scale, self.n, self.log = 2.0, 0, {}

    def __add__(self, x):
        self.n += 1
        return x * self.scale

    def __radd__(self, x):
        return x * self.scale + 1.0

    def __neg__(self):
        return -self.scale

    def __lt__(self, x):
        return x > self.scale

    def __setitem__(self, k, v):
        self.log[k] = v * self.scale

    def __delitem__(self, k):
        self.n -= 5

    def __len__(self):
        return int(self.scale)

    def __iter__(self):
        return iter([self.scale, -self.scale])

    def __contains__(self, k):
        return k == self.scale

    def __matmul__(self, x):
        return x @ x * self.scale

    def __bool__(self):
        return self.scale > 1.0


class Grid(Scaled):
    """A subclass whose reflected operator Python tries first."""

    def __radd__(self, x):
        return self.scale * 10.0 + (x.n if isinstance(x, Scaled) else x)


def _with_operators(s, x):
    y = (s + x) + (x * -s) + np.where(s < x, 1.0, 0.0) + (s @ x)
    s["twice"] = y
    del s["twice"]
    a, b = s
    y = y * len(s) + a + sum(v for v in s) + b
    for v in s:
        y = y + v
    if s and s.scale in s:
        y = y + 100.0
    return y + (1.0 if not s else 2.0) + (3.0 if 0.0 < -s < 1.0 else 4.0)


def _with_subclass(s, g, x):
    return np.concatenate([[s + g], g + x, [g == g, s != g]])


def test_special_methods_python_calls_for_operators_run_at_every_call():
    """``s + x``, ``-s``, ``s < x``, ``s[k] = v``, ``del s[k]``, unpacking, ``len``, iteration,
    ``in`` and truth of an object of the program's own: its methods read the state the caller
    changes between calls and count at every call, as plain Python does."""
    def make():
        s = Scaled()
        return (lambda x: _with_operators(s, x)), s

    def between(s, k):
        s.scale = (2.0, 3.0, 0.5, 2.0)[k]
    _, got = _twin(make, [(_rng(k).random(3),) for k in range(4)], between)
    assert got.n == 4 * (1 - 5) and type(got.log["twice"]) is np.ndarray

    def make_pair():
        s, g = Scaled(), Grid()
        return (lambda x: _with_subclass(s, g, x)), (s, g)
    _twin(make_pair, [(_rng(k).random(3),) for k in range(2)])


def test_an_array_and_an_object_without_array_protocol_in_an_operator():
    """NumPy applies the object's operator to each element (an object array): a clear error; an
    object that opts out of ufuncs gets its reflected operator, as NumPy gives it."""
    class Opted:
        __array_ufunc__ = None

        def __radd__(self, x):
            return x * 3.0

    x = np.ones(2)
    np.testing.assert_array_equal(np.asarray(cf.jit(lambda x, o: x + o)(x, Opted())), x + Opted())
    with pytest.raises(cf.UnsupportedError, match="array of objects"):
        cf.jit(lambda x, s: x + s)(x, Scaled())


def test_an_array_default_argument_is_the_one_array_python_keeps():
    """``def f(x, acc=np.zeros(3)): acc += x`` accumulates into the default at every call, as in Python,
    also in a helper the function calls and for a keyword-only default."""
    def make():
        def helper(x, buf=np.zeros(3)):
            buf[:] = buf + x
            return buf * 1

        def f(x, acc=np.zeros(3), *, scale=np.full(3, 2.0)):
            acc += x
            return acc * scale + helper(x)
        return f, lambda: (f.__defaults__[0], f.__kwdefaults__["scale"], helper.__defaults__[0])

    _twin(make, [(_rng(k).random(3),) for k in range(3)])


def test_an_augmented_item_or_attribute_goes_through_the_programs_own_hooks():
    """``s[k] += x`` reads through ``__getitem__`` and stores through ``__setitem__``; ``p.w += x`` through
    a property's getter and setter: each run as converted code, at every call."""
    def make():
        class Store:
            def __init__(self):
                self.d, self.sets, self.scale = {"a": np.zeros(2)}, 0, 2.0

            def __getitem__(self, k):
                return self.d[k]

            def __setitem__(self, k, v):
                self.sets += 1
                self.d[k] = v * self.scale

        class Weighted:
            def __init__(self):
                self._w, self.n = np.ones(2), 0

            @property
            def w(self):
                return self._w

            @w.setter
            def w(self, v):
                self.n += 1
                self._w = v

        s, p = Store(), Weighted()

        def f(x):
            s["a"] += x
            p.w += x
            return s["a"] + p.w
        return f, (s, p)

    def between(state, k):
        state[0].scale = 1.0 + k
    _, (s, p) = _twin(make, [(_rng(k).random(2),) for k in range(3)], between)
    assert s.sets == 3 and p.n == 3


class _RunningStats:
    def __init__(self):
        self.n, self.total = 0, 0.0

    def update(self, x):
        self.n += 1
        self.total += x

    @property
    def mean(self):
        if self.n > 0:             # (traced after the rolled loop below)
            return self.total / self.n
        return 0.0


def _mean_of_a_stream(data):
    s = _RunningStats()
    for x in data:
        s.update(x)
    return s.mean


def test_the_property_of_an_object_made_inside_runs_as_converted_code():
    """Its getter ran as written, so an if on the traced count raised ConcretizationError."""
    data = _rng(3).random(12)
    np.testing.assert_allclose(cf.jit(_mean_of_a_stream)(data), _mean_of_a_stream(data))


class Particle:
    """A class whose __init__ counts in a class attribute and logs to a global list."""

    count = 0

    def __init__(self, x):
        Particle.count += 1
        self.id = Particle.count
        PARTICLE_LOG.append(x * 2)


PARTICLE_LOG = []


@dataclasses.dataclass
class Shifted:
    offset: float
    values: np.ndarray = None

    def __post_init__(self):
        if self.values is None:
            self.values = np.zeros(2) + self.offset


def test_classes_made_inside_run_their_init_at_every_call():
    """``__init__`` (and a dataclass's ``__post_init__``) of the program's own class, called in the
    compiled function, is converted: its class counter counts and its log grows at every call, with
    NumPy arrays, never traced values."""
    def f(x):
        return x * Particle(x[:1]).id + Shifted(float(x[0])).values

    PARTICLE_LOG.clear()
    Particle.count = 0
    compiled = cf.jit(f)
    for k in range(3):
        x = _rng(k).random(2)
        np.testing.assert_allclose(np.asarray(compiled(x)), x * (k + 1) + x[0])
        np.testing.assert_array_equal(PARTICLE_LOG[-1], x[:1] * 2)
    assert Particle.count == 3 and len(PARTICLE_LOG) == 3 and all(type(v) is np.ndarray for v in PARTICLE_LOG)


class Lock:
    def __init__(self):
        self.entered, self.scale = 0, 1.0

    def __enter__(self):
        self.entered += 1
        return self.scale

    def __exit__(self, *error):
        return False


class Swallow:
    def __enter__(self):
        return self

    def __exit__(self, *error):
        return True


def test_a_with_statement_enters_and_leaves_the_programs_own_manager_at_every_call():
    def make():
        lock = Lock()

        def f(x):
            with lock as s:
                return x * s
        return f, lock

    def between(lock, k):
        lock.scale = 1.0 + k
    _, lock = _twin(make, [(_rng(k).random(2),) for k in range(3)], between)
    assert lock.entered == 3


def test_an_exit_that_swallows_errors_does_not_swallow_cofactors():
    def raises_in_a_traced_branch(x):
        y = x * 2
        with Swallow():
            if x[0] > 0.5:
                raise ValueError("big")
            y = y + 1
        return y

    with pytest.raises(cf.TracingError):
        cf.jit(raises_in_a_traced_branch)(np.zeros(2))


class Terms:
    """Objects that Python's builtins combine through their special methods."""

    def __init__(self, c):
        self.c = c

    def __radd__(self, other):
        return other + self.c

    def __add__(self, other):
        return Terms(self.c + other.c)

    def __lt__(self, other):
        return self.c < other.c

    def __gt__(self, other):
        return self.c > other.c

    def __float__(self):
        return self.c * 10.0

    def __index__(self):
        return int(self.c) % 2

    def __array__(self, dtype=None, copy=None):
        return np.full(2, self.c)


class Sequence:
    def __init__(self):
        self.items = [1.0, 2.0]

    def __getitem__(self, k):
        return self.items[k]

    def __len__(self):
        return len(self.items)


def _through_builtins(terms, seq, x):
    a = x * float(terms[0]) + x[terms[1]] + np.asarray(terms[0]) + (x + terms[1])
    b = sum(terms) + max(terms).c + min(terms).c + sorted(terms, key=lambda t: -t.c)[0].c
    c = functools.reduce(lambda p, q: p + q, terms).c
    d = 0.0
    for v in seq:
        d = d * 10 + v
    for v in reversed(seq):
        d = d * 10 + v
    return a + b + c + d + (x.sum() * Terms(2.0).c)


def test_builtins_and_numpy_call_the_programs_special_methods_at_every_call():
    """float(), an index, np.asarray and an array operator, sum, max, min, sorted(key=), reduce, iteration
    by __getitem__ and reversed(): the program's methods run at every call, reading what the caller
    changed."""
    def make():
        terms, seq = [Terms(1.0), Terms(2.0)], Sequence()
        return (lambda x: _through_builtins(terms, seq, x)), (terms, seq)

    def between(state, k):
        state[0][0].c = 1.0 + 2 * k
        state[1].items = [3.0 + k, 4.0]
    _twin(make, [(_rng(k).random(2),) for k in range(3)], between)


def test_a_deque_with_a_maxlen_and_popleft_changes_as_in_python():
    def make():
        window, queue = collections.deque(maxlen=2), collections.deque([1.0, 2.0])

        def f(x):
            window.append(x.sum())
            first = queue.popleft()
            queue.append(x.max())
            return x * first + sum(window)
        return f, (window, queue)
    _twin(make, [(_rng(k).random(2),) for k in range(5)])


def test_a_view_of_an_argument_stored_is_that_view_of_the_callers_array():
    """``self.window = x[1:]`` keeps a view of the caller's ``x`` (a later write to ``x`` shows in it), as
    NumPy keeps it; a view of a ConcreteArray argument is its values."""
    class Holder:
        pass

    def remember(s, x):
        s.window = x[1:]
        s.columns = x.reshape(2, 2).T
        return s.window.sum()

    for make in (lambda: np.arange(4.0), lambda: cf.to_device(np.arange(4.0))):
        want, got = Holder(), Holder()
        x_want, x_got = np.arange(4.0), make()
        remember(want, x_want)
        cf.jit(remember)(got, x_got)
        if isinstance(x_got, np.ndarray):
            x_want[1] = x_got[1] = 99.0
            assert np.shares_memory(got.window, x_got) and np.shares_memory(got.columns, x_got)
        np.testing.assert_array_equal(got.window, want.window)
        np.testing.assert_array_equal(got.columns, want.columns)


def test_a_module_of_the_programs_own_is_read_and_written_at_every_call(tmp_path, monkeypatch):
    """``settings.SCALE``, ``settings.BIAS``, ``settings.CALLS += 1``: a module's attributes are its
    globals, read at every call and written after each, as the function's own module's are."""
    (tmp_path / "cf_settings_module.py").write_text("import numpy as np\nSCALE = 1.0\nBIAS = np.zeros(2)\nCALLS = 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import cf_settings_module as settings

    def scaled(x):
        settings.CALLS += 1
        settings.LAST = x.sum()
        return x * settings.SCALE + settings.BIAS

    for fn in (scaled, cf.jit(scaled)):
        settings.SCALE, settings.BIAS, settings.CALLS = 1.0, np.zeros(2), 0
        got = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cf.RecompileWarning)
            for i in range(3):
                settings.SCALE = 3.0 if i else 1.0
                settings.BIAS = np.full(2, 9.0) if i == 2 else settings.BIAS
                got.append(np.asarray(fn(np.ones(2) * (i + 1))).tolist())
        assert got == [[1.0, 1.0], [6.0, 6.0], [18.0, 18.0]]
        assert settings.CALLS == 3 and float(settings.LAST) == 6.0 and type(settings.LAST) is not cf.ConcreteArray


def scaled_by_an_attribute_of_a_helper(x):
    return helper_with_a_parameter(x)


def helper_with_a_parameter(v):
    return v * helper_with_a_parameter.k


def counted_by_its_own_attribute(x):
    counted_by_its_own_attribute.calls += 1
    return x * counted_by_its_own_attribute.calls


def test_attributes_of_the_programs_functions_are_read_and_counted_at_every_call():
    g = cf.jit(scaled_by_an_attribute_of_a_helper)
    for k in (1.0, 10.0, 100.0):
        helper_with_a_parameter.k = k
        _same(g(np.ones(2)), np.full(2, k))
    for fn in (counted_by_its_own_attribute, cf.jit(counted_by_its_own_attribute)):
        counted_by_its_own_attribute.calls = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cf.RecompileWarning)
            got = [float(np.asarray(fn(np.ones(1)))[0]) for _ in range(3)]
        assert got == [1.0, 2.0, 3.0] and counted_by_its_own_attribute.calls == 3


LOG = []


def logged(fn):
    @functools.wraps(fn)
    def wrapper(x, *rest):
        LOG.append(fn.__name__)
        return fn(x, *rest)
    wrapper.calls = 0
    return wrapper


def remembered(fn):
    memo = {}

    @functools.wraps(fn)
    def wrapper(x, key):
        if key not in memo:
            memo[key] = fn(x)
        return memo[key]
    wrapper.memo = memo
    return wrapper


@logged
def logged_square(x):
    return x ** 2


def make_remembered():
    @remembered
    def doubled(x):
        return np.cumsum(x) * 2
    return doubled


def test_a_functools_wraps_wrapper_runs_as_converted_code_with_its_own_parameters():
    LOG.clear()
    g = cf.jit(logged_square)
    for _ in range(3):
        _same(g(np.ones(2)), np.ones(2))
    assert LOG == ["logged_square"] * 3
    plain, compiled = make_remembered(), make_remembered()
    g = cf.jit(compiled, static_argnums=(1,))
    for i in range(2):
        x = np.full(2, float(i + 1))
        _same(g(x, "a"), plain(x, "a"))
        assert type(compiled.memo["a"]) is not np.ndarray or np.array_equal(compiled.memo["a"], plain.memo["a"])
    assert not any(type(v).__name__ == "TracedArray" for v in compiled.memo.values())


EVENTS = []


@contextlib.contextmanager
def section(name):
    EVENTS.append("enter " + name)
    try:
        yield len(EVENTS)
    finally:
        EVENTS.append("exit " + name)


def in_a_section(x):
    with section("scale") as k:
        y = x * k
    return y


def test_a_generator_context_manager_enters_and_leaves_at_every_call():
    for fn in (in_a_section, cf.jit(in_a_section)):
        EVENTS.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cf.RecompileWarning)
            got = [np.asarray(fn(np.ones(2))).tolist() for _ in range(3)]
        assert EVENTS == ["enter scale", "exit scale"] * 3
        assert got == [[1.0, 1.0], [3.0, 3.0], [5.0, 5.0]]


@functools.singledispatch
def prepared(v):
    return v


@prepared.register
def _(v: np.ndarray):
    return v * 10.0


def by_class(x):
    doubled = x * 2 if x.__class__ is np.ndarray else x
    return prepared(doubled) + (x.sum().__class__ is np.float64)


def test_the_class_of_a_traced_value_is_the_numpy_type_it_stands_for():
    x = np.ones(2)
    _same(cf.jit(by_class)(x), by_class(x))


LOSSES = []


def logs_each_step_to_a_global_list(x):
    for i in range(x.shape[0]):
        LOSSES.append(i)
        x[i] += 1
    return x


def test_a_global_list_a_long_loop_appends_to():
    """The loop, tried rolled, saw the list grow only as its body reached it (past the scan before the
    loop): it stayed rolled, and the list kept a value of the abandoned body (a TracingError at the end)."""
    LOSSES.clear()
    x = np.arange(20.0)
    with pytest.warns(cf.UnrolledLoopWarning, match="from outside the function changes length"):
        _same(cf.jit(logs_each_step_to_a_global_list)(x.copy()), x + 1)
    assert LOSSES == list(range(20)) and all(type(v) is int for v in LOSSES)


STATS = {"n": 0}


def counted_per_trip(x):
    for i in range(10):
        STATS["n"] += 1
        counted_per_trip.calls += 1
        x = x + STATS["n"]
    return x


def counted_when_positive(x):
    if x.sum() > 4:
        STATS["n"] += 1
    return x


def test_state_reached_only_inside_a_loop_or_a_branch_changes_as_python_changes_it():
    """A global dict, a function's attribute: reached only as the body runs, past what a rolled loop
    carries, they changed once per call (the loop is unrolled now), and under a traced if whichever
    branch ran (a clear error now)."""
    STATS["n"], counted_per_trip.calls = 0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.UnrolledLoopWarning)
        _same(cf.jit(counted_per_trip)(np.zeros(2)), np.full(2, 55.0))
    assert STATS["n"] == 10 and counted_per_trip.calls == 10
    with pytest.raises(cf.TracingError, match="changes in a branch of the if"):
        cf.jit(counted_when_positive)(np.ones(3))


def zipped_twice(x, y):
    pairs = zip(x, y)
    s = 0.0
    for a, b in pairs:
        s += a * b
    for a, b in pairs:   # used up: Python runs it zero times
        s += 100.0
    first = zip(x, y)
    a0, b0 = next(first)
    for a, b in first:
        s += a - b
    return s + a0


def test_a_zip_of_arrays_is_used_up_as_pythons():
    x, y = np.arange(12.0), np.ones(12)
    _same(cf.jit(zipped_twice)(x, y), zipped_twice(x, y))


class _Holder:
    pass


def _stores_the_argument(s, x):
    if x[0] > 0:
        s.w = x
    return 0.0


def _stores_a_view(s, x):
    s.w = x[1:] if x[0] > 0 else x[:-1]
    return 0.0


def _updates_or_rebinds(s, x):
    if x[0] > 0:
        s.w += x
    else:
        s.w = s.w * 0.5
    return s.w.sum()


def _rebinds_in_a_loop(s, x):
    for i in range(3):
        if x[i] > 0:
            s.w = s.w + x
        else:
            s.w -= x
    return 0.0


def _items_and_entries(s, x):
    if x[0] > 0:
        s.items[0] = x
        s.entries["w"] += x
    else:
        s.entries["w"] = s.entries["w"] * 2
    return 0.0


@pytest.mark.parametrize("fn", [_stores_the_argument, _stores_a_view, _updates_or_rebinds, _rebinds_in_a_loop,
                                _items_and_entries])
def test_a_slot_set_under_a_traced_branch_holds_the_object_the_path_taken_leaves(fn):
    """After the call an attribute, list item or dict entry holds the object NumPy's path leaves there: the
    caller's array (which the caller may write later), a view of it, or the array it held, updated in
    place (it held a copy: later writes to the caller's array, or another reference to the old one, were
    not seen)."""
    def run(g, x0):
        s = _Holder()
        s.w, s.items, s.entries = np.zeros(4), [np.zeros(4)], {"w": np.zeros(4)}
        held, held_entry = s.w, s.entries["w"]
        x = np.array([x0, 2.0, -1.0, 3.0])
        g(s, x)
        g(s, x)
        x[2] = 7.0
        return (s.w.tolist(), held.tolist(), s.w is held, s.w is x, s.items[0] is x, s.items[0].tolist(),
                s.entries["w"] is held_entry, held_entry.tolist())
    for x0 in (1.0, -1.0):
        assert run(cf.jit(fn), x0) == run(fn, x0)


def _closure_with_nonlocals():
    total = np.zeros(3)
    hits = 0

    def step(x):
        nonlocal total, hits
        if x[0] > 0:
            total = total + x
            hits += 1
        else:
            total -= x
        i = 0
        while x[i % 3] > 0 and i < 4:
            total = total * 1.5
            i += 1
        return total.sum() + hits
    return step


def test_nonlocals_rebound_under_traced_branches_and_loops_are_the_closures_state():
    """A nonlocal rebound under a traced if or while was refused as 'an attribute of total from outside
    the function changes in a branch' (the variable's own cell, reached first in the branch)."""
    for x0 in (1.0, -1.0):
        want, got = _closure_with_nonlocals(), _closure_with_nonlocals()
        compiled = cf.jit(got)
        for _ in range(3):
            x = np.array([x0, 0.7, 0.2])
            np.testing.assert_allclose(np.asarray(compiled(x)), want(x))
        state = [dict(zip(f.__code__.co_freevars, [c.cell_contents for c in f.__closure__])) for f in (want, got)]
        np.testing.assert_allclose(state[1]["total"], state[0]["total"])
        assert state[1]["hits"] == state[0]["hits"]


class _Settings:
    pass


def _best_set_in_a_branch(s, x):
    if x[0] > 0:
        s.best = 3.0
    return s.best * x


def _scale_set_in_a_loop(s, x):
    for v in x:
        if v > 5:
            s.scale = 2
    return x * s.scale


def test_a_number_attribute_set_only_under_a_traced_branch_is_read_at_every_call():
    """Its value on the path that does not set it is the caller's at that call (it was the first call's,
    frozen in the program, and written back over the caller's)."""
    for fn, attribute in ((_best_set_in_a_branch, "best"), (_scale_set_in_a_loop, "scale")):
        compiled, s, t = cf.jit(fn), _Settings(), _Settings()
        for value in (0.0, 0.25, 3):
            setattr(s, attribute, value)
            setattr(t, attribute, value)
            x = np.array([-1.0, 2.0])
            np.testing.assert_array_equal(np.asarray(compiled(s, x)), fn(t, x))
            assert getattr(s, attribute) == getattr(t, attribute)


def _makes_an_attribute_in_a_branch(s, x):
    if x[0] > 0:
        s.v = x.copy()
    return x.sum()


def test_an_attribute_made_under_a_traced_branch_is_a_clear_error():
    """(It was made whichever branch ran, holding the traced branch's value.)"""
    s = _Settings()
    with pytest.raises(cf.TracingError, match=r"the attribute \.v of a _Settings .* is made in the if"):
        cf.jit(_makes_an_attribute_in_a_branch)(s, np.array([-1.0, 2.0]))
    assert not hasattr(s, "v")


class _OnlyLess:
    def __init__(self, x):
        self.x = x

    def __lt__(self, other):
        return self.x < other.x


class _OnlyGreater:
    def __init__(self, x):
        self.x = x

    def __gt__(self, other):
        return self.x > other.x


def _reflected_comparisons(a):
    best = max([_OnlyLess(3), _OnlyLess(1), _OnlyLess(2)])   # (max compares item > best: __lt__ reflected)
    return best.x, _OnlyLess(a[0]) > _OnlyLess(a[1]), _OnlyGreater(a[0]) < _OnlyGreater(a[1]), \
        _OnlyLess(1) > _OnlyLess(0)


def test_a_comparison_of_two_objects_of_one_class_tries_the_reflected_method():
    """Python tries b < a for a > b also between objects of one class (not so for arithmetic)."""
    for a in (np.array([1.0, 2.0]), np.array([4.0, -1.0])):
        want, got = _reflected_comparisons(a), cf.jit(_reflected_comparisons)(a)
        for w, g in zip(want, got):
            assert np.asarray(g) == w and np.asarray(g).dtype == np.asarray(w).dtype


@functools.total_ordering
class _Score:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return self.v == other.v

    def __lt__(self, other):
        return self.v < other.v


def _ordered(x):
    a, b = _Score(x[0]), _Score(x[1])
    best = x[0] if a > b else x[1]
    return best, a >= b, a <= b, a != b


def test_the_comparisons_total_ordering_derives_and_not_equal_from_eq_compile():
    """functools.total_ordering's __gt__ (from __lt__) and object's != (from __eq__) negate the user's
    traced comparison: run as converted code, not a bool() of a traced value."""
    for x in (np.array([1.0, 2.0]), np.array([3.0, 2.0]), np.array([2.0, 2.0])):
        want, got = _ordered(x), cf.jit(_ordered)(x)
        for w, g in zip(want, got):
            assert np.asarray(g) == w


_ALIASED = np.zeros(3)


def _writes_its_argument_reads_a_global(x):
    x += 1
    return _ALIASED.sum()


class _TwoBuffers:
    def __init__(self):
        self.a, self.b = np.zeros(3), np.zeros(3)

    def step(self):
        self.a += 1
        return self.b.sum() + self.a.sum()


def _closure_reading(c):
    def f(x):
        x *= 2
        return c.sum() + x[0]
    return f


def test_an_array_from_outside_that_becomes_an_argument_or_another_outside_array_between_calls():
    """The trace took them as two arrays; once they are one (G passed as the argument, self.b = self.a,
    a closure's array passed in), a write through one shows through the other, as in NumPy: compiled anew
    (and back again when they part)."""
    global _ALIASED
    g = cf.jit(_writes_its_argument_reads_a_global)
    for arg_is_global in (False, True, False, True):
        _ALIASED = np.zeros(3)
        x = _ALIASED if arg_is_global else np.zeros(3)
        want = 3.0 if arg_is_global else 0.0
        assert float(g(x)) == want and np.array_equal(x, np.ones(3))

    m, ref = _TwoBuffers(), _TwoBuffers()
    step = cf.jit(m.step)
    step()
    m.a = m.b = np.zeros(3)
    ref.a = ref.b = np.zeros(3)
    assert float(step()) == ref.step() == 6.0 and m.a is m.b and np.array_equal(m.a, ref.a)

    c, ref_c = np.arange(3.0), np.arange(3.0)
    f = cf.jit(_closure_reading(c))
    f(np.ones(3))
    assert float(f(c)) == _closure_reading(ref_c)(ref_c) == 6.0 and np.array_equal(c, ref_c)


_WITHOUT_SOURCE = '''
import numpy as np
G, H, count = np.zeros(3), np.ones(3), 0
def helper(x):
    return x * H
def rebinds(x):
    global G
    G = G + x
    return G.sum()
def in_place(x):
    G[:] += x
    return G.sum()
def counts(x):
    global count
    count += 1
    return x + count
def calls_helper(x):
    return helper(x) + G
def loop(x):
    acc = np.zeros_like(x)
    for i in range(50):
        acc = acc + x * i + H
    return acc
def made():
    total = np.zeros(3)
    def f(x):
        nonlocal total
        total = total + x
        return total.sum()
    return f, lambda: total
'''


def _between_calls(ns, k):
    ns["H"][:] = k + 5
    if k == 1:
        ns["G"] = np.full(3, 2.0)


@pytest.mark.parametrize("name", ["rebinds", "in_place", "counts", "calls_helper", "loop", "made"])
def test_a_function_without_source_reads_and_rebinds_globals_and_cells_at_every_call(name):
    """Defined by exec (or at a prompt), it runs as written, but what it reads from outside is read at
    every call and what it rebinds there is there after it, as for converted code (it read the arrays
    of the first call, and left traced arrays in the module)."""
    spaces, outputs = [{}, {}], [[], []]
    for ns, out, jit in zip(spaces, outputs, (lambda f: f, cf.jit)):
        exec(_WITHOUT_SOURCE, ns)
        f, cell = ns[name]() if name == "made" else (ns[name], None)
        f = jit(f)
        for k in range(3):
            out.append(np.asarray(f(np.arange(3.0) + k)))
            _between_calls(ns, k)
        out.append(cell() if cell else ns["count"])
    for want, got in zip(*outputs):
        np.testing.assert_allclose(np.asarray(got), want)
    for key in ("G", "H"):
        assert type(spaces[1][key]) is np.ndarray
        np.testing.assert_array_equal(spaces[1][key], spaces[0][key])


@dataclasses.dataclass
class _Layer:
    w: np.ndarray
    k: float = 1.0


@dataclasses.dataclass(frozen=True)
class _Net:
    first: _Layer
    scale: float


def _through_library_code(net, layers, x, dw):
    """Library functions that read an argument's attributes themselves (not through converted code)."""
    net.first.w[:] -= dw                                   # (seen by what reads it after)
    replaced = dataclasses.replace(net, scale=net.scale * 2)
    as_dict = dataclasses.asdict(net)
    return (replaced.first.w * replaced.scale, as_dict["first"]["w"] * as_dict["first"]["k"] + as_dict["scale"],
            copy.copy(net.first).w.sum(), copy.deepcopy(net).first.w * x,
            sum(map(operator.attrgetter("w"), layers)) * x, dataclasses.astuple(layers[1])[0] - x)


def test_library_code_reads_an_arguments_attributes_at_every_call():
    """dataclasses.replace/asdict/astuple, copy.copy/deepcopy and operator.attrgetter read the arrays and numbers
    an argument object holds as converted code does: they were constants of the first trace (a later call with
    other attributes gave the first call's answer; an in-place update earlier in the call was not seen)."""
    rng = np.random.default_rng(3)
    f = cf.jit(_through_library_code)
    net = _Net(_Layer(rng.standard_normal(3), 0.5), 1.5)
    layers = [_Layer(rng.standard_normal(3)), _Layer(rng.standard_normal(3))]
    for call in range(3):
        x, dw = rng.standard_normal(3), rng.standard_normal(3)
        theirs = copy.deepcopy((net, layers))
        want = _through_library_code(*theirs, x, dw)
        got = f(net, layers, x, dw)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)
        np.testing.assert_allclose(net.first.w, theirs[0].first.w, rtol=1e-12)
        net.first.k, layers[0].w = net.first.k + 1.0, layers[0].w + 1.0      # changed between calls
        object.__setattr__(net, "scale", net.scale * 3)
        assert isinstance(net.first.w, np.ndarray) and type(net.first.k) is float  # nothing traced left there


class _Nest:
    def __init__(self, inner, ws):
        self.inner, self.ws = inner, ws


def _nested_through_library_code(o, x):
    q = copy.copy(o)                      # shallow: q.inner is o.inner
    q.inner.w += 1.0
    return (q.inner.w.sum(), operator.attrgetter("inner.w")(o) * x, copy.deepcopy(o).ws[1] * x,
            dataclasses.asdict(o.inner)["w"] - x)


def test_library_code_reads_nested_objects_and_lists_at_every_call():
    """Objects and lists an argument's attributes hold, read by library code: copy.copy's inner object kept the first
    call's array, so writes through it went to that array and reads gave its values."""
    f = cf.jit(_nested_through_library_code)
    o, x = _Nest(_Layer(np.ones(3)), [np.zeros(3), np.arange(3.0)]), np.arange(3.0)
    for call in range(3):
        theirs = copy.deepcopy(o)
        want, got = _nested_through_library_code(theirs, x), f(o, x)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)
        np.testing.assert_array_equal(o.inner.w, theirs.inner.w)
        o.inner.w[:] *= 2                                  # changed between calls: in place, rebound, replaced
        o.ws[1] = o.ws[1] + 1.0
        if call == 1:
            o.inner = _Layer(np.full(3, 5.0))
