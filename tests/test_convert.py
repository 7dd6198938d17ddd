"""Source conversion: array constructors inside traced code, and user functions they call."""
import functools

import numpy as np
import pytest
from numpy import zeros

import cofactor as cf

rng = np.random.default_rng(3)
SCALE = 3.0


def check(f, *args):
    want = f(*[a.copy() for a in args])
    got = cf.jit(f)(*[a.copy() for a in args])
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.asarray(g).shape == np.shape(w)


def fill_rows(v, n):
    out = zeros((n, 2))  # imported by name
    for i in range(n):
        out[i] = v[i] * i
    return out


def constructors(x):
    a = np.array([x.sum(), 1.0, x[0]])
    b = np.full(3, x[1])
    c = fill_rows(x, 3)                 # a user function: converted too
    d = np.asarray(x)
    d[0] = -1                           # asarray does not copy: x changes
    e = np.linspace(x[0], x[1], 5)
    m = np.eye(3, dtype=np.float32)
    m[0, 1] = x[2]
    k = np.arange(4)
    k[1] = 10
    z = np.empty((2, 2), dtype=np.int32)
    z[:] = 7
    o = np.ones_like(np.zeros(3))
    o[2] = x[3]
    n = np.ndarray((2,))  # uninitialised in NumPy: filled before use
    n[:] = x[:2]
    return a, b, c, e, m, k, z, o, x, n


def test_constructors_make_writable_traced_arrays():
    check(constructors, rng.standard_normal(5))


def test_array_of_mixed_traced_and_python_values_promotes_like_numpy():
    check(lambda x: np.array([[x[0], 2], [3, x[1]]], dtype=np.float32), rng.standard_normal(2))
    check(lambda x: np.array([x.astype(np.int32)[0], 2]), rng.standard_normal(2))


class Model:
    def __init__(self, k):
        self.k = k

    def shifted(self, x):
        out = np.zeros(x.shape)
        out[1:] = x[:-1] * self.k
        return out


def make_closure(k):
    def inner(x):
        o = np.ones(2)
        o[0] = x.sum() * k * SCALE
        return o
    return inner


def test_methods_closures_and_lambdas():
    m = Model(2.0)
    x = rng.standard_normal(4)
    check(m.shifted, x)
    check(make_closure(5), x)
    check(lambda x: m.shifted(x) + 1, x)


def decayed(x, steps, rate=0.5):
    for _ in range(steps):      # longer than unroll: one rolled loop, once converted
        x = x * rate + 1.0
    return x


class Decay:
    def __init__(self, steps):
        self.steps = steps

    def __call__(self, x):
        return decayed(x, self.steps, rate=0.25)

    def half(self, x):
        return decayed(x, self.steps)


@pytest.mark.parametrize("fn", [functools.partial(decayed, steps=300), functools.partial(decayed, rate=0.75, steps=300),
                                Decay(300), functools.partial(Decay(300).half), functools.partial(Decay.half, Decay(300))],
                         ids=["partial", "partial of keywords", "callable object", "partial of a method",
                              "partial of a class's function"])
def test_partials_and_callable_objects_are_converted(fn):
    """Their loops stay rolled, as the function's own would (they were traced as Python: 300 copies)."""
    x = rng.standard_normal(4)
    check(fn, x)
    assert cf.jit(fn).lower(x).raw_mlir.count("stablehlo.while") == 1
    assert cf.jit(lambda x: fn(x) * 2).lower(x).raw_mlir.count("stablehlo.while") == 1   # called from converted code


def power_by_recursion(x, n):
    if n == 0:
        return np.ones_like(x)
    for _ in range(10):             # rolled at every depth: each call is converted
        x = x * 1.0
    return x * power_by_recursion(x, n - 1)


def factorial(n):
    return 1 if n <= 1 else n * factorial(n - 1)


def test_recursive_module_level_functions():
    """A module-level function calls itself through its global name, as in Python (the converted
    copy looked the name up among the factory's locals: a KeyError inside cofactor)."""
    x = rng.standard_normal(3)
    check(lambda x: power_by_recursion(x, 3), x)
    check(lambda x: x * factorial(4), x)
    assert cf.jit(power_by_recursion).lower(x, 3).raw_mlir.count("stablehlo.while") == 3


def median_by_sorting(x):
    s = sorted(x)
    top = sorted(x, reverse=True)
    return s[len(s) // 2], top[0] - s[0], np.array(s)


def test_sorted_of_a_traced_vector():
    """sorted(x) is a list of its elements in order (a ConcretizationError: bool() of a traced array)."""
    check(median_by_sorting, rng.standard_normal(7))


LAMBDAS = {
    "clipped": lambda x: x if x.sum() > 0 else -x,           # a dict entry: its line does not parse alone
    "windows": lambda x: np.lib.stride_tricks.as_strided(
        x, shape=(3, 2), strides=(x.strides[0], x.strides[0])).sum(-1),   # a call routed by the conversion
}


@pytest.mark.parametrize("name", LAMBDAS)
def test_lambdas_inside_larger_expressions_are_converted(name):
    check(LAMBDAS[name], rng.standard_normal(4))
    check(LAMBDAS[name], -np.abs(rng.standard_normal(4)))


def test_data_dependent_constructor_is_refused():
    with pytest.raises(cf.UnsupportedError, match="numpy.arange with traced bounds that are not integers"):
        cf.jit(lambda x: np.arange(x.sum()))(np.ones(2))
    with pytest.raises(cf.UnsupportedError, match="numpy.arange with a traced bound whose greatest value"):
        cf.jit(lambda x: np.arange(x.astype(np.int64).sum()))(np.ones(2))
    with pytest.raises(cf.UnsupportedError, match="numpy.eye with traced arguments"):
        cf.jit(lambda x: np.eye(x.astype(np.int64).sum()))(np.ones(2))


def test_errors_in_converted_code_name_the_user_line():
    def f(x):
        out = np.zeros(3)
        out[:] = x  # the line
        return out

    with pytest.raises(ValueError, match="could not broadcast") as info:
        cf.jit(f)(np.ones(4))
    assert "test_convert.py" in str(info.value) and "out[:] = x" in str(info.value)


def test_default_values_come_from_the_definition_not_the_converted_copy():
    def make(scale):
        return lambda a, scale=scale, *, shift=scale + 1: a * scale + shift
    fn = make(3.0)
    x = np.arange(3.0)
    np.testing.assert_allclose(np.asarray(cf.jit(fn)(x)), fn(x))


def test_identical_functions_in_two_modules_call_their_own_helpers(tmp_path):
    import importlib.util

    body = "import numpy as np\n\ndef helper(x):\n    return x * {k}\n\ndef f(x):\n    if x.sum() > 0:\n" \
           "        x = helper(x)\n    return x\n"
    modules = []
    for k in (2, 3):
        path = tmp_path / f"module_{k}.py"
        path.write_text(body.format(k=k))
        spec = importlib.util.spec_from_file_location(f"module_{k}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules.append(module)
    assert modules[0].f.__code__ == modules[1].f.__code__  # equal code objects, different globals
    for k, module in zip((2, 3), modules):
        np.testing.assert_array_equal(np.asarray(cf.jit(module.f)(np.ones(2))), np.full(2, k))


def test_a_function_whose_file_was_edited_after_it_was_defined_runs_as_written(tmp_path):
    """The source on disk is no longer the function's (a notebook editing a module it imported):
    converting it would compile other code, so it runs as written, and a traced condition in it
    says why."""
    import linecache

    path = tmp_path / "edited.py"
    path.write_text("def f(x):\n    if x.sum() > 0:\n        return x.max()\n    return x.min()\n\n\n"
                    "def g(x):\n    return x.max() + 1\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    path.write_text(path.read_text().replace("x.max()", "x.sum() * 100"))
    linecache.checkcache(str(path))
    with pytest.raises(cf.ConcretizationError, match="edited since the function was defined"):
        cf.jit(namespace["f"])(np.ones(2))
    assert float(cf.jit(namespace["g"])(np.array([1.0, 2.0]))) == 3.0  # the function Python has


class _Base:
    def __init__(self):
        self.k = 2.0


class _Scaled(_Base):
    def __init__(self):
        super().__init__()
        self.__scale = 3.0

    def run(self, x):
        if x.sum() > 0:
            return x * self.__scale * self.k
        return x - self.__offset()

    def __offset(self):
        return 1.0


def test_methods_with_private_names_and_super_are_converted():
    """Python mangles ``self.__scale`` in a class body; the converted copy, compiled outside it, must too."""
    model = _Scaled()
    for x in (np.ones(2), -np.ones(2)):
        np.testing.assert_array_equal(np.asarray(cf.jit(model.run)(x)), model.run(x))


def test_a_conversion_is_dropped_with_its_function(tmp_path):
    import gc

    path = tmp_path / "program.py"
    path.write_text("def f(x):\n    if x.sum() > 0:\n        x = x * 2\n    return x\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    jitted = cf.jit(namespace["f"])
    np.testing.assert_array_equal(np.asarray(jitted(np.ones(2))), np.full(2, 2.0))
    conversions = namespace["__cofactor_conversions__"]  # kept in the function's module
    assert len(conversions) == 1
    del jitted, namespace["f"]  # a notebook cell redefining f, a fuzzer's throwaway program
    gc.collect()
    assert len(conversions) == 0


def test_nonlocal_variables_are_the_enclosing_functions():
    def f(x):
        count = 0
        total = np.zeros(3)

        def bump(v):
            nonlocal count, total
            count += 1
            total = total + v

        for i in range(12):  # a rolled loop calls the helper: it changes f's own variables
            if x[i % 3] > 0:
                bump(x)
        bump(x)
        return count, total

    check(f, np.array([1.0, -2.0, 3.0]))


def _max_dp(a):
    t = np.zeros(20)
    for j in range(1, 20):   # a rolled loop: max of the previous cell and a traced value
        t[j] = max(t[j - 1] * 0.5, a[j % 6]) + min(a[j % 6], 0.25, a[(j - 1) % 6])
    return t


def _extremes(a, c):
    return (max(a[0], a[1]), min([a[2], a[3], a[0]]), max(a[:3]), max(c[0], 1), min(c[1], 2),
            max(a[4], a[5]), min(a[5], a[4]))


def test_max_of_a_python_number_and_an_element_of_another_kind_is_a_clear_error():
    """max(0.5, x[0]) on ints is a Python float or a NumPy int64 by value (NumPy's later results have
    that kind); it was a float64 either way, silently (found by a helper's adversarial loops)."""
    def max_of_float(x):
        return max(0.5, x[0])

    def min_of_float(x):
        return min(x[0], 2.5)

    def float_or_element(x):
        return x[0] if x[0] > 0.5 else 0.5

    def int_or_bools(x):
        return x[1] if x[0] > 0 else 1

    def max_of_complex(x):
        return max(x[0], 1j)
    for fn, x in [(max_of_float, np.array([3, 1])), (min_of_float, np.array([3, 1])),
                  (float_or_element, np.array([True, False])), (int_or_bools, np.array([True, False])),
                  (max_of_complex, np.array([3.0, 1.0]))]:
        with pytest.raises(cf.TracingError, match="dtypes .* NumPy's result has the dtype of the arm taken"):
            cf.jit(fn)(x)


@pytest.mark.parametrize("fn", [_max_dp, _extremes])
def test_builtin_max_and_min_of_traced_values_are_pythons(fn):
    a = np.array([0.3, -1.0, 2.0, 0.7, np.nan, 5.0])   # Python keeps the first item when a NaN compares false
    c = np.array([0, 3, -2])
    args = (a,) if fn is _max_dp else (a, c)
    want, got = fn(*args), cf.jit(fn)(*args)
    for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
        np.testing.assert_array_equal(np.asarray(g), w)
        assert np.asarray(g).dtype == np.asarray(w).dtype


def _rounded(x, n):
    total = 0.0
    for i in range(10):  # a rolled loop: round() of a traced Python float and of NumPy scalars
        total = total + x[i % 4] * 1.5
    return (round(x[0]), round(x[1], 1), round(x[2] * 10, -1), round(n[0]), round(total), round(x[3]) + 0.5,
            round(n[1], -1))


def _flat(m):
    y = m.copy()
    y.flat[[0, 4]] = -1.0
    y.T.flat[1] = 9.0  # through a transposed view: C order of the view
    t = 0.0
    for v in y[:, :2].flat:
        t = t + v
    for index, v in np.ndenumerate(m[:, 1:]):
        t = t + v * index[0]
    return y, t, y.flat[2:5], m.flat[-1], len(m.flat)


def test_round_flat_and_ndenumerate_as_numpy():
    x, n = np.array([2.5, 1.25, -3.47, 0.5]), np.array([7, 15])
    m = np.arange(6.0).reshape(2, 3)
    for fn, args in ((_rounded, (x, n)), (_flat, (m,))):
        want, got = fn(*args), cf.jit(fn)(*args)
        for w, g in zip(want, got):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-15)  # round(1.25, 1): XLA's 1.2 is 1 ulp off here
            assert np.asarray(g).dtype == np.asarray(w).dtype
    with pytest.raises(TypeError, match="__round__"):  # an ndarray has none, as in NumPy
        cf.jit(lambda a: round(a))(x)


import dataclasses  # noqa: E402
import enum  # noqa: E402


class _Color(enum.Enum):
    RED = 1
    BLUE = 2


@dataclasses.dataclass
class _Point:
    x: float
    y: float


def matched_by_class(a, p):
    match p:
        case float():
            return a * p
        case _Point(x=0, y=y):
            return a + y
        case _Point(x=x, y=y):
            return a * x + y
        case _Color.RED:
            return -a
        case [1, *rest]:
            return a + len(rest)
        case _:
            return a


def matched_array(a):
    match a:
        case np.ndarray():
            return a * 2
        case _:
            return a


def test_match_statements_with_class_and_value_patterns():
    a = np.ones(3)
    g = cf.jit(matched_by_class)
    for p in [2.0, _Point(0, 3.0), _Point(2.0, 1.0), _Color.RED, _Color.BLUE, [1, 2, 3], "s"]:
        np.testing.assert_array_equal(np.asarray(g(a, p)), matched_by_class(a, p))
    with pytest.raises(cf.UnsupportedError, match="match statement with class patterns"):
        cf.jit(matched_array)(a)


def picks_a_function(x):
    act = np.sin if x.sum() > 0 else np.cos
    return act(x)


def picks_none(x):
    v = x.max() if x.sum() > 0 else None
    return 0.0 if v is None else v


@pytest.mark.parametrize("fn", [picks_a_function, picks_none])
def test_a_conditional_expression_choosing_python_objects_by_a_traced_value_is_a_clear_error(fn):
    with pytest.raises(cf.TracingError, match="two arms of the conditional expression") as info:
        cf.jit(fn)(np.array([1.0, 2.0]))
    assert f"{__file__}:{fn.__code__.co_firstlineno + 1}" in str(info.value)


def _arms_of_two_shapes(x):
    return x * 2 if x.sum() > 0 else -1.5


def _arms_of_two_lengths(x):
    return x[:1] if x[0] > 0 else x


def _or_of_two_shapes(x):
    return x[0] or x


@pytest.mark.parametrize("fn", [_arms_of_two_shapes, _arms_of_two_lengths, _or_of_two_shapes])
def test_a_conditional_expression_whose_arms_have_two_shapes_is_a_clear_error(fn):
    """NumPy's result has the shape of the arm taken: the arms were broadcast, as np.where's (x * 2 if ... else -1.5
    gave [-1.5, -1.5] where NumPy gives -1.5)."""
    with pytest.raises(cf.TracingError, match=r"have shapes \(.*\) and \(.*\): NumPy's result has the shape") as info:
        cf.jit(fn)(np.array([-1.0, 2.0, 3.0]))
    assert f"{__file__}:{fn.__code__.co_firstlineno + 1}" in str(info.value)


def _arms_of_one_shape(x, c):
    return x[0] if c > 0 else 0.0, x.sum() if c > 0 else -x[1], x if c > 0 else x[::-1], (c > 0) or x[1] > 2


def test_a_conditional_expression_of_a_number_and_a_numpy_scalar_or_two_arrays_of_one_shape():
    for c in (1.0, -1.0):
        check(_arms_of_one_shape, np.array([1.0, 2.5, -3.0]), np.float64(c))


def _views_of_a_rebound_array(x, c):
    for it in range(4):             # unrolled: c is one of several arrays after each trip (the break)
        v = c[0] if x[it] > 0 else c[1]
        if v.sum() > 100:
            break
        c = c * 2
    return c, v


def _writes_through_them(x, c):
    c, v = _views_of_a_rebound_array(x, c)
    v[0] = 9.0
    return c, v


def test_a_conditional_expression_of_views_of_an_array_that_is_one_of_several():
    """Its value is carried (it was a TracingError: "a view of an array that is one of several, 3 deep"); a write
    through it, which would not reach the array, is the clear error."""
    x, c = np.array([1.0, -1.0, 1.0, 1.0]), np.array([[1.0, 2.0], [3.0, 4.0]])
    check(_views_of_a_rebound_array, x, c)
    with pytest.raises(cf.TracingError, match="carried as its value .* updating it in place would not change them"):
        cf.jit(_writes_through_them)(x, c)


def _items_by_traced_index(x, y, k):
    """A list or tuple indexed by a traced integer: numbers of one kind, arrays (written through), tuples."""
    weights = [0.5, 1.5, -2.0, 3.0]
    stats = [x.sum(), x.max(), x.min()]
    flags = (True, False, True)
    dirs = [(0, -1), (0, 1), (-1, 0), (1, 0)]
    dr, dc = dirs[np.argmax(x)]
    rows = [x, y]
    rows[k % 2][1:] *= 2.0          # writes reach the array picked
    total = 0.0
    for i in range(6):              # a rolled loop: the index is its counter
        total = total + weights[i % 4] * x[i % 3]
    return weights[k] * x, stats[k - 1], flags[k % 3] + flags[-1], dr * 10 + dc, total, x, y


@pytest.mark.parametrize("k", [0, 2, -2])
def test_a_list_indexed_by_a_traced_integer_gives_the_item_picked(k):
    x, y = rng.normal(size=3), rng.normal(size=3)
    args = (x, y, np.int64(k))
    want_args, got_args = [a.copy() for a in args], [a.copy() for a in args]
    want, got = _items_by_traced_index(*want_args), cf.jit(_items_by_traced_index)(*got_args)
    for g, w in zip((*got, *got_args), (*want, *want_args)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)
        assert np.asarray(g).dtype == np.asarray(w).dtype


def test_a_list_indexed_by_a_traced_integer_out_of_range_is_pythons_index_error():
    compiled = cf.jit(_items_by_traced_index)
    with pytest.raises(IndexError, match="list index out of range"):
        compiled(np.ones(3), np.ones(3), np.int64(4))
    with pytest.raises(IndexError, match="list index out of range"):
        compiled(np.ones(3), np.ones(3), np.int64(-5))


def _dijkstra_on_lists(W, src):
    n = W.shape[0]
    dist = [np.inf] * n
    seen = [False] * n
    dist[src] = 0.0
    for _ in range(n):
        best, u = np.inf, 0
        for v in range(n):
            if not seen[v] and dist[v] < best:
                best, u = dist[v], v
        seen[u] = True                        # a list item set at a traced index
        for v in range(n):
            if W[u, v] > 0 and dist[u] + W[u, v] < dist[v]:
                dist[v] = dist[u] + W[u, v]
    return np.array(dist)


def _items_set_by_traced_index(x, k):
    vals = [x[0], x[1], x[2]]
    vals[k] = -1.0
    arrs = [x * 1, x * 2]
    arrs[k % 2] = x * 10
    arrs[0][0] = 99.0                         # (through whichever array the first item is)
    return vals, arrs


def test_a_list_item_set_at_a_traced_index():
    W = np.abs(rng.normal(size=(5, 5)))
    W[W < 0.5] = 0
    np.testing.assert_allclose(np.asarray(cf.jit(_dijkstra_on_lists)(W, 0)), _dijkstra_on_lists(W, 0), rtol=1e-12)
    compiled = cf.jit(_items_set_by_traced_index)
    for k in (0, 1, -1):
        want, got = _items_set_by_traced_index(np.arange(3.0), k), compiled(np.arange(3.0), np.int64(k))
        for w, g in zip([*want[0], *want[1]], [*got[0], *got[1]]):
            np.testing.assert_array_equal(np.asarray(g), w)
    with pytest.raises(IndexError, match="list assignment index out of range"):
        compiled(np.arange(3.0), np.int64(3))


def _updated_in_place_by_traced_index(m, k):
    W = [m[0].copy(), m[1].copy(), m[2].copy()]
    for _ in range(8):
        W[k] += 1.0                           # (written through the item read: no Either of Eithers)
    W[k], W[0] = W[0], W[k]                   # (a swap)
    return W


def test_a_list_item_updated_in_place_and_swapped_at_a_traced_index():
    m = np.arange(6.0).reshape(3, 2)
    for k in (0, 2):
        want, got = _updated_in_place_by_traced_index(m, k), cf.jit(_updated_in_place_by_traced_index)(m, np.int64(k))
        for w, g in zip(want, got):
            np.testing.assert_array_equal(np.asarray(g), w)


def _bool_index(x):
    return [10, 20][x[0] > 0]


def _sliced_at(x):
    return [1.0, 2.0, 3.0][:int(np.argmax(x))]


def test_a_list_indexed_by_a_numpy_bool_or_sliced_at_a_traced_bound_is_an_error():
    with pytest.raises(TypeError, match="list indices must be integers or slices, not numpy.bool"):
        cf.jit(_bool_index)(np.ones(2))
    with pytest.raises(cf.ConcretizationError, match="a list sliced at a traced bound"):
        cf.jit(_sliced_at)(np.ones(2))


def _closest_pair(P):
    i, j = np.triu_indices(len(P), k=1)       # NumPy arrays made in the function, at traced indices and masks
    d = np.linalg.norm(P[i] - P[j], axis=1)
    k = np.argmin(d)
    return i[k], j[k], i[d > d.mean()], np.hanning(5)[k % 5]


def test_a_numpy_array_made_in_the_function_indexed_by_traced_values():
    P = rng.normal(size=(6, 2))
    want, got = _closest_pair(P), cf.jit(_closest_pair)(P)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_a_list_of_items_of_different_kinds_indexed_by_a_traced_integer_is_a_clear_error():
    for items in ([1, 2.0], [[1, 2], [3, 4]], [np.ones(2), np.ones(3)], []):
        with pytest.raises(cf.ConcretizationError, match="list indexed by a traced integer"):
            cf.jit(lambda k: items[k])(np.int64(0))


def _sorted_through_the_class(a):
    np.ndarray.sort(a)
    type(a).fill(a[0], 3.0)
    np.ndarray.__setitem__(a, (1, 0), 5.0)
    return np.ndarray.__iadd__(a, 1)


def _reduced_through_the_class(a):
    return np.ndarray.sum(a, axis=0), sum(map(np.ndarray.sum, a)), np.ndarray.__add__(a, a), np.ndarray.mean(a)


@pytest.mark.parametrize("fn", [_sorted_through_the_class, _reduced_through_the_class])
def test_ndarray_methods_called_through_the_class(fn):
    """np.ndarray.sort(a) is a.sort() (it raised TypeError: the descriptor does not apply to a traced array)."""
    a = rng.standard_normal((3, 4))
    b = a.copy()
    check(fn, a)
    cf.jit(fn)(b)
    fn(a)
    np.testing.assert_array_equal(b, a)
