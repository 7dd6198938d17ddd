"""raise, assert and warnings.warn under traced conditions: run-time checks (tracing/checks.py),
compared with Python running the same function on NumPy arrays."""
import warnings

import numpy as np
import pytest

import cofactor as cf


from check_programs import PROGRAMS, sqrt_of_nonnegative


def _outcome(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's log(0), log(-1)
        try:
            return "value", np.asarray(fn(x))
        except Exception as e:
            return "error", (type(e), str(e), type(e.__cause__), str(e.__cause__))


def _same_outcomes(fn, inputs, same_error):
    """``fn`` compiled gives Python's value or error on each input, from one program (the checks
    run in it)."""
    compiled = cf.jit(fn)
    for x in inputs:
        want, got = _outcome(fn, x.copy()), _outcome(compiled, x.copy())
        assert got[0] == want[0], (x, got, want)
        if want[0] == "value":
            np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
        else:
            assert same_error(got[1], want[1]), (got, want)
    assert len(compiled.cache) == 1


@pytest.mark.parametrize("fn, inputs", PROGRAMS, ids=[fn.__name__ for fn, _ in PROGRAMS])
def test_raise_under_a_traced_condition_is_checked_at_run_time(fn, inputs):
    _same_outcomes(fn, inputs, lambda got, want: got == want)  # type, message (run-time values in it), cause


def test_the_checked_exception_names_the_users_line():
    with pytest.raises(ValueError) as info:
        cf.jit(sqrt_of_nonnegative)(np.array([-1.0]))
    where = f"{sqrt_of_nonnegative.__code__.co_filename}:{sqrt_of_nonnegative.__code__.co_firstlineno + 2}"
    assert any(where in note for note in info.value.__notes__)


def _update_then_check(a, b):
    a += 1.0
    b[0] = 5.0
    if a.max() > 3:
        raise ValueError("too big")
    return a.sum()


def test_arguments_are_left_untouched_when_a_check_fires():
    compiled = cf.jit(_update_then_check)
    a, b = np.array([1.0, 2.5]), np.zeros(2)
    with pytest.raises(ValueError, match="too big"):
        compiled(a, b)
    np.testing.assert_array_equal(a, [1.0, 2.5])  # NumPy would have updated them before raising
    np.testing.assert_array_equal(b, [0.0, 0.0])
    a = np.array([0.5, 1.0])
    assert float(np.asarray(compiled(a, b))) == 3.5
    np.testing.assert_array_equal(a, [1.5, 2.0])
    np.testing.assert_array_equal(b, [5.0, 0.0])
    device = cf.to_device(np.array([2.0, 2.5]))  # a donated buffer gets its original value back
    with pytest.raises(ValueError):
        compiled(device, b)
    np.testing.assert_array_equal(np.asarray(device), [2.0, 2.5])


def _warns(x):
    if x.min() < 0:
        warnings.warn("negative values clipped")
        x = np.maximum(x, 0)
    if x.max() > 10:
        warnings.warn(RuntimeWarning("large values"))
    return x


def test_warning_under_a_traced_condition_is_issued_only_when_reached():
    compiled = cf.jit(_warns)
    for x, expected in (([1.0, 2.0], []), ([-1.0, 2.0], ["negative values clipped"]),
                        ([-1.0, 20.0], ["negative values clipped", "large values"]), ([1.0, 20.0], ["large values"])):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = compiled(np.array(x))
        assert [str(w.message) for w in caught] == expected
        assert [w.category for w in caught] == [UserWarning if "neg" in m else RuntimeWarning for m in expected]
        assert all(w.filename == __file__ for w in caught)
        np.testing.assert_array_equal(np.asarray(got), _warns(np.array(x)) if not expected else np.array(got))


def test_a_raise_on_a_python_condition_raises_when_traced():
    def f(x, n):
        if n > 2:
            raise ValueError(f"n is {n}")
        return x * n
    with pytest.raises(ValueError, match="n is 3"):
        cf.jit(f)(np.ones(2), 3)
    np.testing.assert_array_equal(np.asarray(cf.jit(f)(np.ones(2), 2)), [2.0, 2.0])


def test_a_raise_a_try_may_catch_stays_python():
    def f(x):
        try:
            if x.sum() > 0:
                raise ValueError("caught?")
        except ValueError:
            x = x * 0
        return x
    with pytest.raises(cf.TracingError, match="caught"):
        cf.jit(f)(np.ones(2))


def _bounded_loss(x):
    if x.sum() > 100:
        raise ValueError(f"too big: {x.sum()}")
    return (x * x * x).sum()


def _bounded_square(x):
    assert x.max() < 40, f"max {x.max()}"
    return x * x


@pytest.mark.parametrize("transform, want", [
    (lambda x: cf.grad(_bounded_loss)(x), lambda x: 3 * x ** 2),
    (lambda x: cf.value_and_grad(_bounded_loss)(x)[1], lambda x: 3 * x ** 2),
    (lambda x: cf.hessian(_bounded_loss)(x), lambda x: np.diag(6 * x)),
    (lambda x: cf.vjp(_bounded_square, x)[1](np.ones(3))[0], lambda x: 2 * x),
    (lambda x: cf.jvp(_bounded_square, (x,), (np.ones(3),))[1], lambda x: 2 * x),
    (lambda x: cf.jacobian(_bounded_square, mode="forward")(x), lambda x: np.diag(2 * x)),
], ids=["grad", "value_and_grad", "hessian", "vjp", "jvp", "jacobian"])
def test_checks_inside_differentiated_code_run_too(transform, want):
    """On valid input the derivative; on bad input Python's error, from one compiled program."""
    x = np.array([1.0, -2.0, 3.0])
    compiled = cf.jit(transform)
    np.testing.assert_allclose(np.asarray(compiled(x)), want(x), rtol=1e-9)
    with pytest.raises((ValueError, AssertionError), match="too big: 150.0|max 50.0"):
        compiled(np.full(3, 50.0))
    assert len(compiled.cache) == 1


def _always_raises(x):
    assert x.ndim == 2, f"got {x.shape} with max {x.max():.2f}"  # a Python condition: the trace ends here
    return x.reshape(-1, 1)


def _helper_raises(x):
    if x.ndim == 1:
        raise ValueError(f"1-d input, sum {x.sum()}")
    return x


def _calls_the_helper(x):
    return _helper_raises(x) + 1  # the trace ends in the helper: the None it would return is not added to


def test_a_raise_on_a_python_condition_shows_run_time_values_in_its_message():
    for fn, error, message in ((_always_raises, AssertionError, "got (2,) with max 2.50"),
                               (_calls_the_helper, ValueError, "1-d input, sum 3.5")):
        with pytest.raises(error) as info:
            cf.jit(fn)(np.array([1.0, 2.5]))
        assert str(info.value) == message


def test_a_raise_site_writes_the_check_state_once():
    """The site's number and the two values its message shows, in one update of the state: in a
    loop's body each update was a kernel and a copy of the state per trip."""
    def f(x):
        if x.sum() > 2.5:
            raise ValueError(f"x[0] is {x[0]}, x[-1] is {x[-1]}")
        return x
    mlir = str(cf.compile(f, np.arange(4.0), optimize=False).mlir)
    assert mlir.count("stablehlo.dynamic_update_slice") == 1
    assert mlir.count("(tensor<66xi64>, tensor<4xi64>, tensor<i64>)") == 1  # number, warned mask, two values
    with pytest.raises(ValueError, match=r"^x\[0\] is 0.0, x\[-1\] is 3.0\n"):
        cf.jit(f)(np.arange(4.0))


def index_past_the_end_in_a_branch(x):
    y = x[0]
    if x.sum() > 100:
        y = x[10]
    return y


def write_past_the_end_in_an_unrolled_loop(x):
    y = x * 1
    for i in range(x.shape[0]):
        if x[i] > 3:
            y[i + 1] = x[i]     # i + 1 == 5 past the end only in the last step
    return y


def shapes_that_disagree_in_a_nested_branch(x):
    s = x.copy()
    if x[0] > 0:
        s += 1
        if x[1] > 0:
            s = s + x[:3]
    return s.sum()


def python_division_by_zero_in_a_branch(x):
    k = 0
    if x[2] > 0:
        x[0] = 1 / k
    return x


def _no_result(x):
    if x.sum() <= 0:                          # (returns None)
        raise ValueError("a nonpositive sum")


def a_check_then_an_error_in_a_branch(x):  # fuzz seed 40801780: the check fires first, as in Python
    if x[0] > 0:
        r = _no_result(x)
        if r.min() < 0.0:                     # AttributeError: None has no min
            x[0] = 0.0
    return x


def a_warning_then_an_error_in_a_branch(x):
    if x[0] > 0:
        if x[1] > 0:
            warnings.warn("a positive second element")
        y = x[10]
    return x


@pytest.mark.parametrize("fn, inputs", [
    (a_check_then_an_error_in_a_branch, [np.array([1.0, -2, 0]), np.array([1.0, 2, 0]), np.array([-1.0, -2, 0])]),
    (a_warning_then_an_error_in_a_branch, [np.array([1.0, 2, 0]), np.array([-1.0, 2, 0])]),
    (index_past_the_end_in_a_branch, [np.arange(5.0), np.arange(5.0) * 100]),
    (write_past_the_end_in_an_unrolled_loop, [np.arange(5.0), np.array([0, 1, 2, 3, 2.0]), np.array([0, 9, 2, 3, 2.0])]),
    (shapes_that_disagree_in_a_nested_branch, [np.arange(6.0), np.array([1.0, -1, 2, 3, 4, 5]), np.ones(6)]),
    (python_division_by_zero_in_a_branch, [-np.ones(4), np.ones(4)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_numpy_s_error_in_a_traced_branch_is_raised_only_where_the_branch_runs(fn, inputs):
    """An operation that raises when traced (an index past the end known at trace time, shapes that
    do not broadcast) raises at run time where its branch runs, as in NumPy, not at trace time."""
    _same_outcomes(fn, inputs, lambda got, want: issubclass(got[0], want[0]) and got[1].split("\n")[0] == want[1])


def test_a_warning_met_before_an_error_in_a_branch_is_issued_too():
    compiled = cf.jit(a_warning_then_an_error_in_a_branch)
    with pytest.warns(UserWarning, match="a positive second element"), pytest.raises(IndexError):
        compiled(np.array([1.0, 2, 0]))


def test_numpy_s_error_in_a_traced_branch_inside_a_try_is_a_trace_time_error():
    """A try around the if would catch the error now, when traced, not when the program runs."""
    def f(x):
        try:
            if x.sum() > 0:
                y = x[10]
            else:
                y = x[0]
        except IndexError:
            y = -1.0
        return y

    with pytest.raises(cf.TracingError, match="(?s)index 10 is out of bounds.*traced a branch"):
        cf.jit(f)(np.ones(3))


def _catches_the_index_error(x, i):
    try:
        return x[i]
    except IndexError:
        return -1.0


def _catches_it_in_a_branch(x, i):
    try:
        if x[0] > 0:
            return x[i]
        return x[0]
    except (KeyError, IndexError):
        return -2.0


def _catches_any_exception(x, i):
    try:
        return x[i]
    except Exception:
        return -1.0


def _catches_another_error(x, i):
    try:
        y = x[i]
    except KeyError:
        y = -1.0
    return y


@pytest.mark.parametrize("fn", [_catches_the_index_error, _catches_it_in_a_branch])
def test_a_check_an_except_clause_would_catch_is_refused(fn):
    """NumPy's IndexError for a traced index is checked after the call, when the clause that names it
    cannot run: a clear error at trace time, never the error the program catches."""
    with pytest.raises(cf.TracingError, match="except clause"):
        cf.jit(fn)(np.arange(3.0), np.int64(1))


def test_a_check_under_a_clause_for_every_exception_stays_and_says_so():
    compiled = cf.jit(_catches_any_exception)
    assert float(np.asarray(compiled(np.arange(3.0), np.int64(1)))) == 1.0
    with pytest.raises(IndexError) as info:
        compiled(np.arange(3.0), np.int64(5))
    assert any("except clause" in note for note in info.value.__notes__)
    assert float(np.asarray(cf.jit(_catches_another_error)(np.arange(3.0), np.int64(2)))) == 2.0


def _positive(v):
    if v < 0:
        raise ValueError("negative")
    return v


def caught_from_a_helper(x):
    try:
        t = _positive(x[0])
    except ValueError:
        t = -1.0
    return t


def suppressed_division(x):
    import contextlib
    with contextlib.suppress(ZeroDivisionError):
        return 1 / int(x[0])
    return -1.0


@pytest.mark.parametrize("fn", [caught_from_a_helper, suppressed_division])
def test_a_check_that_an_except_clause_or_suppress_would_catch_is_refused(fn):
    """A raise in a helper the try calls, and contextlib.suppress, catch what the program would raise:
    compiled code raises it only after the call, where no handler runs."""
    with pytest.raises(cf.TracingError, match="except clause"):
        cf.jit(fn)(np.array([0.0, 3.0]))
