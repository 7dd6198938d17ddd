"""Errors name the user's line, keep NumPy's exception types, and never hide internal failures."""
import types

import numpy as np
import pytest

import cofactor as cf
from cofactor.ir.types import TensorType
from cofactor.xla.executable import Executable

HERE = __file__.rsplit("/", 1)[-1]


def test_shape_mismatch_names_the_user_line():
    def f(x, y):
        return x + y  # the line the error must name

    with pytest.raises(ValueError) as info:
        cf.jit(f)(np.ones(3), np.ones(4))
    err = info.value
    assert isinstance(err, cf.CofactorError)
    assert "operands could not be broadcast together with shapes (3,) (4,)" in str(err)
    assert HERE in str(err) and "return x + y" in str(err)


def test_numpy_error_types_survive():
    with pytest.raises(np.exceptions.AxisError) as info:
        cf.jit(lambda x: x.sum(axis=3))(np.ones((2, 2)))
    assert isinstance(info.value, cf.CofactorError) and HERE in str(info.value)
    with pytest.raises(IndexError, match="out of bounds"):
        cf.jit(lambda x: x[5])(np.ones(3))
    with pytest.raises(TypeError):
        cf.jit(lambda x: x - x)(np.ones(3, dtype=bool))  # NumPy refuses boolean subtract
    with pytest.raises(OverflowError):
        cf.jit(lambda x: x + 300)(np.ones(3, dtype=np.int8))


@pytest.mark.parametrize("convert", [lambda x: chr(int(x)), lambda x: "%d" % int(x) * 2])  # (int(), float(),
def test_python_values_of_traced_arrays_explain_why(convert):  # complex() and bool() give traced Python numbers)
    with pytest.raises(cf.ConcretizationError, match="not known at compile time") as info:
        cf.jit(lambda x: convert(x.sum()))(np.ones(3))
    assert isinstance(info.value, TypeError) and HERE in str(info.value)


def formats_its_total(x):
    return f"total={x.sum():.3f}"


def test_formatting_a_traced_value_with_a_spec_explains():
    """A string made of run-time values cannot be built at compile time (it was an internal error)."""
    with pytest.raises(cf.ConcretizationError, match=r"an f-string of a traced number.*after the call") as info:
        cf.jit(formats_its_total)(np.ones(3))
    assert "formats_its_total" not in str(info.value) and "return f\"total=" in str(info.value)


def test_traced_condition_in_code_that_cannot_be_converted_explains():
    unconvertible = eval("lambda x: x if x.sum() > 0 else -x")  # no source file to convert
    with pytest.raises(cf.ConcretizationError, match="bool"):
        cf.jit(unconvertible)(np.ones(3))


def test_unsupported_function_is_named():
    with pytest.raises(cf.UnsupportedError, match="numpy.linalg.eig"):
        cf.jit(lambda x: np.linalg.eig(x))(np.ones((2, 2)))
    with pytest.raises(cf.UnsupportedError, match="numpy.unique_values"):
        cf.jit(lambda x: np.unique_values(x))(np.ones(2))


@pytest.mark.parametrize("name", ["tobytes", "ctypes", "partition"])
def test_unsupported_ndarray_attribute_is_named(name):
    def f(x):
        return getattr(x, name)
    with pytest.raises(cf.UnsupportedError, match=rf"ndarray\.{name} .*\n.*test_errors.py:\d+"):
        cf.jit(f)(np.ones(3))
    with pytest.raises(AttributeError, match=r"no attribute .no_such_attribute.\n.*test_errors.py:\d+"):
        cf.jit(lambda x: x.no_such_attribute)(np.ones(3))
    assert not np.asarray(cf.jit(lambda x: x * hasattr(x, "no_such_attribute"))(np.ones(3))).any()


def test_unsupported_keyword_is_named():
    with pytest.raises(cf.UnsupportedError, match="where="):
        cf.jit(lambda x: np.std(x, where=x > 0))(np.ones(2))


def test_traced_array_cannot_become_a_numpy_array():
    with pytest.raises(cf.ConcretizationError, match="cannot become a NumPy array"):
        cf.jit(lambda x: np.asarray(x).__array__())(np.ones(2))
    with pytest.raises(cf.UnsupportedError, match="numpy.vectorize is not supported"):
        cf.jit(lambda x: np.vectorize(abs)(x))(np.ones(2))  # NumPy converts it itself


def test_a_list_of_traced_values_given_to_a_numpy_function_is_stacked_as_numpy_does():
    def f(a, b):
        return (np.sum([a, a]), np.max([a.sum(), b.sum()]), np.mean([a, b[:2]], axis=0),
                np.argmax([a.sum(), b.sum(), 1.5]), np.sum([a[0], 2, b[1]]))

    a, b = np.random.default_rng(0).random(2), np.random.default_rng(1).random(3)
    for got, want in zip(cf.jit(f)(a, b), f(a, b)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_writing_traced_values_into_a_numpy_array_explains():
    # An array held where cofactor does not look (a read-only mapping proxy): taken as it was at the
    # trace, not an input (a dict's or an instance's is: tests/test_outside_state.py).
    tables = types.MappingProxyType({"t": np.zeros(3)})

    def f(x):
        tables["t"][0] = x.sum()
        return tables["t"]

    with pytest.raises(ValueError) as info:  # NumPy's own error, raised from ours
        cf.jit(f)(np.ones(2))
    cause = info.value.__cause__ or info.value.__context__
    assert isinstance(cause, cf.ConcretizationError) and "create the array inside the function" in str(cause)
    assert 'tables["t"][0] = x.sum()' in str(cause)


def test_xla_failure_is_a_compilation_error_with_the_module():
    text = 'module { func.func @main(%a: tensor<2xf64>) -> tensor<2xf64> { %0 = "stablehlo.dynamic_pad"(%a) : (tensor<2xf64>) -> tensor<2xf64>\n return %0 : tensor<2xf64> } }'
    with pytest.raises(cf.CompilationError) as info:
        Executable(text, [TensorType((2,), np.float64)])
    assert info.value.mlir == text and info.value.diagnostic


def test_a_bug_in_cofactor_is_an_internal_error_not_the_users(monkeypatch):
    import operator

    from cofactor.ir import ops

    monkeypatch.setattr(ops, "reduce", operator.getitem)  # a TypeError inside cofactor, not from the user

    def f(x):
        return np.sum(x)  # the user's line the error names

    with pytest.raises(cf.InternalError) as info:
        cf.jit(f)(np.ones(3))
    error = info.value
    assert not isinstance(error, (ValueError, TypeError))  # it blames no one's input
    assert isinstance(error.__cause__, TypeError)
    assert "bug in cofactor" in str(error) and HERE in str(error) and "np.sum(x)" in str(error)


def test_the_users_own_exception_passes_through():
    def f(x):
        raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        cf.jit(f)(np.ones(3))


_HIDDEN = {}  # module state: control flow does not look into globals


def _keep(v):
    _HIDDEN["v"] = v


def test_a_value_that_escapes_its_branch_is_an_error_naming_the_line():
    def f(x):
        if x.sum() > 0:
            _keep(x * 2)
        return _HIDDEN["v"] + 1  # uses a value computed inside the if

    with pytest.raises(cf.TracingError, match="from outside the function changes length in a branch of the if at "
                                              "line") as info:
        cf.jit(f)(np.ones(3))
    assert HERE in str(info.value)


def triangular(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for i in range(n):
        for j in range(i + 1):
            s = np.dot(L[i, :j], A[j, :j]) * len(str(j))  # str(j) needs j as a number: unrolled
            L[i, j] = (A[i, j] - s) / 2.0
    return L


def test_a_huge_unrolled_trace_stops_within_seconds_naming_the_loops():
    import time
    import warnings

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.UnrolledLoopWarning)
        with pytest.raises(cf.TracingError, match=r"op_budget.*loops at lines \d+, \d+") as info:
            cf.jit(triangular)(np.eye(100))
    assert time.perf_counter() - start < 20
    assert HERE in str(info.value)
    cf.jit(triangular, op_budget=None)  # the budget is an option (None: none)


def _appends(x, n):
    out = []
    for i in range(n):
        x = np.sin(x) + 0.5
        out.append(x.sum())
    return np.array(out)


def _appends_and_reads(x, n):
    out = [0.0]
    for i in range(n):
        x = np.sin(x) + out[-1] * 0.0
        out.append(x.sum())
    return np.array(out)


def test_a_long_loop_that_appends_to_a_list_it_reads_says_to_preallocate():
    """A list the loop reads and grows keeps it from being one rolled loop: a short one is unrolled
    (NumPy's list), a long one passes the op budget, and the error says why the loop was unrolled.
    One it only appends a value to per trip is collected by the rolled loop (tracing/histories.py)."""
    import warnings

    with pytest.warns(cf.UnrolledLoopWarning, match="list changes length"):
        np.testing.assert_allclose(cf.jit(_appends_and_reads)(np.ones(3), 20), _appends_and_reads(np.ones(3), 20))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cf.UnrolledLoopWarning)
        with pytest.raises(cf.TracingError, match=r"op_budget.*the loop at line \d+ could not be one rolled loop "
                                                  r"because a list changes length.*preallocate an array"):
            cf.jit(_appends_and_reads)(np.ones(3), 3000)
        warnings.simplefilter("error", cf.UnrolledLoopWarning)
        np.testing.assert_allclose(cf.jit(_appends)(np.ones(3), 3000), _appends(np.ones(3), 3000), rtol=1e-12)


def _len_of_int(a):
    return len(5) + a


def _max_of_nothing(a):
    return max([]) + a


def _min_of_empty_traced(a):
    return min(a[:0])


@pytest.mark.parametrize("fn", [_len_of_int, _max_of_nothing, _min_of_empty_traced])
def test_a_builtin_the_users_code_calls_raises_pythons_error_not_an_internal_one(fn):
    x = np.arange(3.0)
    with pytest.raises(Exception) as want:
        fn(x)
    with pytest.raises(type(want.value)) as got:
        cf.jit(fn)(x)
    assert str(got.value) == str(want.value) and not isinstance(got.value, cf.InternalError)


def _range_of_a_quotient(t_end, dt):
    y = 0.0
    for i in range(float(t_end[0]) / dt):   # a traced Python float: not a range of its truncated value
        y += dt
    return y


def _range_of_half_the_length(x, dt):
    return [i for i in range(len(x) / 2)]


def _range_of_an_element(x, dt):
    return sum(1 for i in range(x[0]))


def _range_of_a_slice(x, dt):
    for i in range(x[:1]):
        dt = dt + 1
    return dt


def _float_of_a_slice(x, dt):
    return float(x[1:2]) + dt


def _int_of_an_array(x, dt):
    return int(x) + 1


@pytest.mark.parametrize("fn", [_range_of_a_quotient, _range_of_half_the_length, _range_of_an_element,
                                _range_of_a_slice, _float_of_a_slice, _int_of_an_array])
def test_range_of_a_float_and_a_number_of_an_array_are_pythons_type_errors(fn):
    args = (np.array([2.5, 1.0]), 0.3)
    with pytest.raises(TypeError) as want:
        fn(*args)
    with pytest.raises(TypeError) as got:
        cf.jit(fn)(*args)
    assert str(got.value).splitlines()[0] == str(want.value) and __file__ in str(got.value)


def test_a_ufunc_of_another_library_is_named_by_its_module():
    special = pytest.importorskip("scipy.special")
    with pytest.raises(cf.UnsupportedError, match=r"scipy\.special\.erf is not supported"):
        cf.jit(lambda x: special.erf(x))(np.ones(2))


def test_a_function_whose_source_cannot_be_read_says_so_at_a_traced_condition():
    namespace = {}
    exec("def h(x):\n    if x.sum() > 0:\n        return x\n    return -x\n", namespace)
    with pytest.raises(cf.ConcretizationError, match="whose source cofactor cannot read"):
        cf.jit(namespace["h"])(np.ones(2))


def test_a_lambdas_conditional_expression_and_boolean_operators_are_compiled():
    f = lambda x: (x if x.sum() > 0 else -x, x.sum() > 0 and x.max() < 5, not x.min() > 0)  # noqa: E731
    for x in (np.ones(2), -np.ones(2)):
        for got, want in zip(cf.jit(f)(x), f(x)):
            np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("call", [
    lambda f: cf.jit(f)(np.ones(2), 1, 2),
    lambda f: cf.jit(f)(),
    lambda f: cf.jit(f)(np.ones(2), d=3),
    lambda f: cf.grad(f)(np.ones(2), 1, 2),
    lambda f: cf.jit(lambda x: cf.grad(f)(x, 1, 2))(np.ones(2)),
], ids=["too_many", "missing", "unknown_keyword", "grad", "grad_inside_jit"])
def test_arguments_that_do_not_match_the_parameters_are_the_callers_type_error(call):
    def f(a, b=1.0, *, c=2.0):
        return (a * b + c).sum()
    with pytest.raises(TypeError, match=r"f\(\) called with arguments that do not match its parameters \(a, b=1.0, "
                                        r"\*, c=2.0\)") as info:
        call(f)
    assert isinstance(info.value, cf.CofactorError) and __file__ in str(info.value)


def test_numpy_submodules_that_cofactor_does_not_trace_are_named():
    def masked(x):
        return np.ma.masked_equal(x, 0.0).sum()

    def scimath(x):
        return np.emath.sqrt(x)

    for fn, name in ((masked, "numpy.ma.masked_equal"), (scimath, "numpy.emath.sqrt")):
        with pytest.raises(cf.UnsupportedError, match=rf"{name} is not supported.*\n.*test_errors.py:\d+"):
            cf.jit(fn)(np.arange(3.0))
    with pytest.raises(cf.UnsupportedError, match=r"numpy.polynomial.\w+ is not supported"):
        cf.jit(lambda x: np.polynomial.Polynomial(x)(2.0))(np.arange(3.0))
    with pytest.raises(cf.UnsupportedError, match=r"^numpy.matrix is not supported"):  # (it was named numpy.ma)
        cf.jit(lambda x: np.asarray(np.matrix(x) * np.matrix(x)))(np.eye(2))


def test_a_dict_looked_up_with_a_traced_key_is_a_clear_error():
    def f(x):
        return {0: 1.0, 1: 2.0}[int(x[0] > 0.5)] * x

    with pytest.raises(cf.ConcretizationError, match=r"a dict looked up with a traced key.*\n.*\{0: 1.0, 1: 2.0\}"):
        cf.jit(f)(np.ones(2))


def test_unique_rows_of_a_traced_array_are_refused_by_name():
    with pytest.raises(cf.UnsupportedError, match=r"numpy.unique with axis= \(distinct rows\) of a traced array"):
        cf.jit(lambda z: np.unique(z, axis=0))(np.array([[1, 2], [1, 2], [3, 4]]))


def _halvings(v, k):
    if v < 1.0:
        return k
    return _halvings(v / 2, k + 1)


def _recursive_on_data(x):
    return _halvings(x[0], 0)


def _sift_down(a, n, i):
    largest, left = i, 2 * i + 1
    if left < n and a[left] > a[largest]:
        largest = left
    if largest != i:
        a[i], a[largest] = a[largest], a[i]
        _sift_down(a, n, largest)    # (largest is traced: its recursion has no end when traced)


def _heap_built(a):
    for i in range(len(a) // 2 - 1, -1, -1):
        _sift_down(a, len(a), i)
    return a


def test_a_recursion_whose_stop_condition_is_traced_says_why_it_does_not_stop():
    with pytest.raises(cf.TracingError, match="recursive function whose stop condition reads a traced value"):
        cf.jit(_recursive_on_data)(np.array([10.0]))
    # (one that runs out of operations before Python's stack: the budget's error says so, not only "the loops")
    with pytest.raises(cf.TracingError, match=r"op_budget.*the function _sift_down \(line \d+\) calls itself \d+ deep"):
        cf.jit(_heap_built, op_budget=3000)(np.arange(10.0))


def _made_read_only(z):
    z.flags.writeable = False
    return z.sum()


class _NamedArray(np.ndarray):
    def __new__(cls, array, name="no name"):
        obj = np.asarray(array).view(cls)
        obj.name = name
        return obj


def _named(x):
    return _NamedArray(x, "range").name


def _list_item_at_the_largest(g):
    neighbours = [[0, -1], [0, 1], [-1, 0], [1, 0]]  # (lists, which the program could change: tuples are taken)
    return neighbours[np.argmax(g)][1]


@pytest.mark.parametrize("fn, error, words", [
    (_made_read_only, cf.UnsupportedError, "flags.writeable"),
    (_named, cf.UnsupportedError, "subclass of numpy.ndarray"),
    (_list_item_at_the_largest, cf.ConcretizationError, "list indexed by a traced integer, whose items")])
def test_python_and_ndarray_features_cofactor_does_not_take_name_themselves(fn, error, words):
    """(A raw AttributeError from cofactor's Flags; 'a traced array cannot become a NumPy array'; a hint
    about storing into a NumPy array made outside.)"""
    with pytest.raises(error, match=words) as info:
        cf.jit(fn)(np.arange(4.0))
    assert __file__ in str(info.value)


@pytest.mark.parametrize("make", [lambda: np.ma.masked_array(np.arange(4.0), mask=[0, 1, 0, 0]),
                                  lambda: np.matrix([[1.0, 2.0], [3.0, 4.0]])], ids=["masked", "matrix"])
def test_arguments_of_an_ndarray_subclass_are_refused(make):
    """(They were read as plain arrays: a masked array's masked elements computed, np.matrix's * elementwise.)"""
    with pytest.raises(cf.UnsupportedError, match="subclass of numpy.ndarray"):
        cf.jit(lambda x: x * x + x.sum())(make())


def _logs_a_message(x, log):
    msg = f"sum {x.sum()}"
    log.append(f"x0={x[0]}")
    return msg


def test_an_f_string_of_a_traced_value_outside_print_is_a_clear_error():
    """(Its text was the trace's, silently: a log of 'x0=scalar(shape=(), dtype=float64)'.)"""
    with pytest.raises(cf.ConcretizationError, match="an f-string of a traced number"):
        cf.jit(_logs_a_message)(np.ones(3), [])


def _last_above_half(x):
    for i, v in enumerate(x):
        if v > 0.5:
            best = v          # (only under a traced condition: Python's UnboundLocalError where none is)
    return best


def test_a_variable_a_loop_assigns_only_under_a_traced_condition_is_named():
    """(The error said "the function returned a object".)"""
    with pytest.raises(cf.TracingError, match="variable 'best' has no value here: it is assigned only on some "
                                              "paths through the loop"):
        cf.jit(_last_above_half)(np.linspace(0, 1, 12))


def _appends_pairs_in_a_while(v):
    x, y = 0.0, 0.0
    path = []
    while y >= 0:                                   # the line the error names
        path.append((x, y))
        x += v[0]
        y += v[1]
    return len(path)


def test_a_list_growing_in_a_traced_loop_names_the_loop_s_line():
    """(It named the body's last line, y += v[1], which had nothing to do with the list.)"""
    with pytest.raises(cf.TracingError, match=r"a list changes length in the loop at line \d+") as info:
        cf.jit(_appends_pairs_in_a_while)(np.array([1.0, -0.5]))
    assert str(info.value).rstrip().endswith("while y >= 0:                                   # the line the error names")


def _divides_or_falls_back(a, b, how):
    try:
        with np.errstate(**how):
            return a / b
    except FloatingPointError:
        return np.zeros_like(a)


def _sets_the_error_mode(a, b):
    old = np.seterr(all="raise")
    try:
        return np.log(a - b)
    finally:
        np.seterr(**old)


def test_asking_numpy_to_raise_on_floating_point_errors_is_a_clear_error():
    """Compiled code does not detect them, so the fallback never ran (it gave [inf 2.] where NumPy gives [0. 0.]);
    np.errstate that only ignores or warns works as before."""
    a, b = np.array([1.0, 2.0]), np.array([0.0, 1.0])
    raising = {"divide": "raise", "invalid": "raise"}
    for fn, args in [(_divides_or_falls_back, (a, b, raising)), (_sets_the_error_mode, (a, b))]:
        with pytest.raises(cf.UnsupportedError, match="with 'raise' or 'call' in compiled code") as info:
            cf.jit(fn, static_argnums=(2,) if len(args) == 3 else ())(*args)
        assert __file__ in str(info.value)
    ignoring = cf.jit(_divides_or_falls_back, static_argnums=(2,))(a, b, {"divide": "ignore"})
    np.testing.assert_array_equal(np.asarray(ignoring), [np.inf, 2.0])


def _factorial_of_25(x):
    r = 1
    for i in range(1, 26):
        r *= i
    return x, r


def test_returning_a_python_int_past_int64_says_so():
    """(It said "arrays of dtype object are not supported".)"""
    with pytest.raises(cf.UnsupportedError, match="returned the Python int 15511210043330985984000000, past int64"):
        cf.jit(_factorial_of_25)(np.arange(3.0))


def _josephus_pop(k):
    people = [1, 2, 3]
    return people.pop(k % 3)


def test_a_list_pop_at_a_traced_position_says_so():
    """(It said "index() of a traced array ... a library function such as chr()".)"""
    with pytest.raises(cf.UnsupportedError, match=r"list.pop\(\) at a position known only at run time") as info:
        cf.jit(_josephus_pop)(np.int64(1))
    assert f"{__file__}:{_josephus_pop.__code__.co_firstlineno + 2}" in str(info.value)
