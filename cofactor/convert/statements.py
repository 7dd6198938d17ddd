"""What rewritten if / while / for statements do at run time: plain Python when the condition
or the range is known, stablehlo.if / while when it is traced."""
from __future__ import annotations

import collections
import collections.abc
import contextlib
import functools
import gc
import operator
import sys
import types
import warnings

import numpy as np

from .. import debug
from ..errors import (ConcretizationError, TracingError, UnrolledLoopWarning, UnsupportedError, forwards_calls,
                      located)
from ..ir.core import OpBudgetExceeded, current_block
from ..pytree import flatten, unflatten
from ..tracing import checks, context, control, outside, python_ints
from ..tracing.heap import GENERATED, Scope
from ..tracing.histories import History
from ..tracing.array import Either, TracedArray, defers_tracing, identical, python_bool
from ..tracing.trace import is_array
from ..tracing.carry import Undefined
from ..tracing.path_numbers import PathNumber
from ..tracing.context import in_reverse_mode
from .control import RUNTIME as RUNTIME_NAME
from .outer import OUTER


def _options():
    """How loops are traced (cf.jit's unroll, max_iterations and checkpoint options)."""
    return context.current().options


unset = control.UNBOUND  # the pending return value before any return statement ran


def returning(value):
    """The value of a return statement rewritten into the pending return value: returning a
    variable that has no value here (or a container holding one) is a use of it, an error.  In a
    traced branch or loop of the function being compiled, an array it made is returned as its value
    alone: nothing of the function runs after the return to see which of its variables also hold it,
    so the region need not carry that (a Jacobi loop's ``return x_new`` where ``x = x_new`` on the
    other path unrolled).  A function it calls returns to a caller that may hold the same array
    (``y = keep(x)`` and then ``x[:] += y``), so its value keeps its identity."""
    leaves, tree = flatten(value)
    for leaf in leaves:
        if isinstance(leaf, Undefined):
            Undefined._fail(leaf)
    trace = context.current() if context.is_tracing() else None
    if trace is None or not trace.conditional or not _in_outermost_function(sys._getframe(1)):
        return value
    given = trace.arguments | {id(i.array) for i in trace.implicit.values()}  # (the caller's own arrays)
    made_here = [isinstance(leaf, TracedArray) and not leaf.scalar and not isinstance(leaf, Either) and
                 not any(id(o) in given for o in leaf.owners()) for leaf in leaves]
    if not any(made_here):
        return value
    return unflatten(tree, [TracedArray(leaf.value) if own else leaf for leaf, own in zip(leaves, made_here)])


def _in_outermost_function(frame) -> bool:
    """Whether ``frame`` (converted code's, or a branch's or loop body's of it) belongs to the only
    converted user function on the stack: the function being compiled, not one it calls."""
    functions = 0
    while frame is not None:
        code = frame.f_code
        if not code.co_name.startswith(GENERATED) and any(n in code.co_freevars for n in (RUNTIME_NAME, OUTER)):
            functions += 1
        frame = frame.f_back
    return functions == 1


def returned(value):
    """What a function whose returns were rewritten returns (None if it fell off the end)."""
    return None if value is control.UNBOUND else value


def checked_raise(make, cause=None) -> bool:
    """A ``raise`` statement (``make()`` gives its exception): True where it becomes a run-time
    check (tracing/checks.py): in code that may not run (a traced branch or loop body), and where
    its message shows traced values; else False, and the converted code raises ``built(make)``."""
    trace = context.current()
    if not trace.conditional and not checks.available(trace):
        return False

    def exception():
        error = make()
        if isinstance(error, type) and issubclass(error, BaseException):
            error = error()
        if not isinstance(error, BaseException):
            raise TypeError("exceptions must derive from BaseException")
        if cause is not None:
            error.__cause__ = cause()
        return error

    frame = sys._getframe(1)
    built = checks.reached_raise(exception, (frame.f_code.co_filename, frame.f_lineno), always=not trace.conditional)
    if built is not None:  # raised now after all: its message shows no traced value
        trace.checks.pending = built
        return False
    return True


def built(make):
    """The exception a raise statement raises now: the one ``checked_raise`` built, else ``make()``."""
    checks_ = context.current().checks
    if checks_ is not None and checks_.pending is not None:
        error, checks_.pending = checks_.pending, None
        return error
    return make()


def warn(message, category=None, stacklevel=1, *args, **kwargs):
    """``warnings.warn`` called from converted code: in code that may not run, a run-time check."""
    if not context.current().conditional:
        return warnings.warn(message, category, stacklevel + 2, *args, **kwargs)
    if isinstance(message, Warning):
        message, category = message, type(message)
    frame = sys._getframe(2)  # calls.call's caller: the converted code
    checks.reached_warning(message, category or UserWarning, (frame.f_code.co_filename, frame.f_lineno))


def load(read):
    try:
        return read()
    except NameError:
        return control.UNBOUND


def unbound(read) -> bool:
    """Whether the variable ``read`` (``lambda: name``) has no value yet (a traced region may have
    left it a marker: a value on some paths only)."""
    return control.is_unset(load(read))


def assign(variable, value):
    """``name := value`` in an operand that and/or, a conditional expression or a comparison chain
    evaluates lazily (a lambda): sets ``name``, which ``variable`` (``lambda: name``) reads."""
    if context.is_tracing() and context.current().value_arms:
        raise located(UnsupportedError(
            f"'{variable.__code__.co_freevars[0] if variable.__closure__ else variable.__code__.co_names[0]} := ...' "
            "in an operand that and/or or a conditional expression evaluates only where a traced value lets it is "
            "not supported (cofactor carries only the operand's value out of that branch): assign the variable in "
            "a statement of its own"))
    if variable.__closure__:
        variable.__closure__[0].cell_contents = value
    else:
        variable.__globals__[variable.__code__.co_names[0]] = value
    return value


def _traced(x) -> bool:
    return isinstance(x, TracedArray)


def _tested(x) -> bool:
    """Whether ``x``, about to be tested for truth, is traced; the truth of a container from outside
    (``if self.nodes:``) is its length, which the compiled function is guarded on (tracing/outside.py)."""
    if isinstance(x, TracedArray):
        return True
    if isinstance(x, (list, dict, set)) and outside.is_outside(x):
        outside.length(x)
    return False


def _scalar_predicate(x):
    """A traced truth value, read as Python's bool() would read an array."""
    return TracedArray(control.predicate(x))


def ifexp(test, then, orelse, line):
    """``then() if test else orelse()``; with a traced test, each arm is a branch of a stablehlo.if."""
    if not _tested(test):
        return then() if test else orelse()
    return control.cond_value(test, then, orelse, Scope(sys._getframe(1)), line)


def printed_choice(test, then, orelse, line):
    """``then() if test else orelse()`` among print's arguments: with a traced test and two strings, the one
    chosen when it prints (debug.Chosen); otherwise a conditional expression's value."""
    if _tested(test):
        arms = then(), orelse()
        if all(isinstance(a, (str, debug.Formatted)) for a in arms):
            return debug.Chosen(_scalar_predicate(test), *arms)
    return ifexp(test, then, orelse, line)  # (anything else: as a conditional expression is, its arms traced anew)


def _items_reduced(x) -> bool:
    """Whether a builtin that iterates ``x`` (``sum``, ``max``, ``any``, ...) reads its items as one
    reduction over its first axis: a traced array of one or more axes (a run-time length has no
    items to iterate at trace time; a static one would make a step per item)."""
    return (isinstance(x, TracedArray) or defers_tracing(x)) and x.ndim > 0


def _array_extreme(builtin, x):
    """``max(x)``/``min(x)`` of a traced 1-D array of real numbers, as Python's comparisons pick: the
    first item no later one beats, so a NaN first item is the answer, a later NaN never is (no
    comparison with it holds), and of equal items (0.0, -0.0) the first.  Of a run-time length,
    Python's ValueError for no items is raised when the program runs."""
    if defers_tracing(x):
        checks.numpy_error_if(control.predicate(x.shape[0] == 0),
                              lambda: ValueError(f"{builtin.__name__}() arg is an empty sequence"))
    reduce, beaten = (np.max, -np.inf) if builtin is max else (np.min, np.inf)
    if x.dtype.kind != "f":
        return x[np.argmax(x == reduce(x))]
    best = reduce(np.where(np.isnan(x), beaten, x))
    return x[np.where(np.isnan(x[0]), 0, np.argmax(x == best))]


def total(x, start=0):
    """Python's ``sum(x, start)`` of a traced array with a Python number ``start``: its items (rows)
    added in one reduction, in the dtype Python's additions give them (NEP 50: ``start`` is weak, a
    bool array's sum is an int).  None where Python's additions must run as written (float16,
    whose sums round at every step, another kind of ``start``)."""
    if type(start) not in (int, float, complex) or x.dtype == np.float16 or x.dtype.kind not in "biufc":
        return None
    if not defers_tracing(x) and x.shape[0] == 0:
        return start
    dtype = np.result_type(x.dtype, start)
    return start + np.sum(x, axis=0, dtype=dtype)


def any_all(builtin, items):
    """Python's ``any(items)``/``all(items)``: a traced array's items in one reduction (each read as
    bool() reads it: rows of several elements are ambiguous); any other iterable's items in order,
    the traced ones combined with or / and, and a static item that settles the answer ends the
    iteration there, as Python's does.  A traced answer is a 0-d bool, as ``x > 0 or y > 0`` gives."""
    settles = builtin is any
    if _items_reduced(items) and (items.ndim == 1 or not defers_tracing(items)):
        if items.ndim > 1 and items.shape[0] and int(np.prod(items.shape[1:])) != 1:
            control.predicate(items[0])  # NumPy's ValueError for the first row's truth
        return python_bool(TracedArray(control.predicate((np.any if settles else np.all)(items))))
    found = []
    for item in items:
        if _tested(item):
            found.append(_scalar_predicate(item))
        elif bool(item) is settles:
            return settles
    if not found:
        return not settles
    return python_bool(functools.reduce(np.logical_or if settles else np.logical_and, found))


@forwards_calls
def extreme(builtin, args, frame):
    """Python's ``max(...)``/``min(...)`` (``builtin``; without ``key=``/``default=``): of one traced
    array, a reduction (``_array_extreme``); over other traced values, the first item no later one
    beats (``item > best`` for max, ``<`` for min, as Python compares), each step a conditional
    expression, so a NumPy scalar keeps its dtype where NumPy's would; over anything else, the
    builtin itself (its errors too)."""
    if len(args) == 1 and _items_reduced(args[0]) and args[0].ndim == 1 and args[0].dtype.kind in "biuf":
        if not defers_tracing(args[0]) and args[0].shape[0] == 0:
            return builtin(())  # Python's ValueError for an empty sequence
        return _array_extreme(builtin, args[0])
    if len(args) == 1 and not isinstance(args[0], (list, tuple, TracedArray)) and \
            isinstance(args[0], collections.abc.Iterator):  # (a generator or map(): its items, as Python takes them)
        args = (list(args[0]),)
    items = args if len(args) != 1 else args[0] if isinstance(args[0], (list, tuple, TracedArray)) else ()
    if not any(_traced(item) for item in items) and not _traced(items):
        return builtin(*args)
    items = list(items)
    if not items:
        return builtin(items)  # Python's ValueError for an empty sequence
    best = items[0]
    for item in items[1:]:
        beats = item > best if builtin is max else item < best
        if _traced(beats):
            best = control.cond_value(beats, lambda item=item: item, lambda best=best: best, Scope(frame),
                                      frame.f_lineno)
        elif beats:
            best = item
    return best


def static(value, message):
    """A condition or range of code cofactor cannot compile: fine as a Python value, an error
    (``message`` says why) when traced."""
    if _traced(value) or isinstance(value, TracedRange):
        raise located(ConcretizationError(message))
    return value


def and_(left, right, line):
    """Python's ``left and right()``: ``left`` where it is false, else ``right()``, which runs only
    then (with a traced ``left``, each is an arm of a conditional expression)."""
    if not _tested(left):
        return left and right()
    return control.cond_value(_scalar_predicate(left), right, lambda: left, Scope(sys._getframe(1)), line)


def or_(left, right, line):
    """Python's ``left or right()``: ``left`` where it is true, else ``right()``."""
    if not _tested(left):
        return left or right()
    return control.cond_value(_scalar_predicate(left), lambda: left, right, Scope(sys._getframe(1)), line)


def and_truth(left, right, line):
    """``left and right()`` where only its truth is used (a test): a bool, ``right()`` traced only
    where ``left`` holds."""
    if not _tested(left):
        return left and right()
    truth = _scalar_predicate(left)
    return control.cond_value(truth, lambda: _truth(right()), lambda: truth, Scope(sys._getframe(1)), line)


def or_truth(left, right, line):
    """``left or right()`` where only its truth is used."""
    if not _tested(left):
        return left or right()
    truth = _scalar_predicate(left)
    return control.cond_value(truth, lambda: truth, lambda: _truth(right()), Scope(sys._getframe(1)), line)


def _truth(x):
    return _scalar_predicate(x) if _tested(x) else np.bool_(bool(x))


def _identity(negated):
    """``is`` / ``is not``, which no object can intercept: a variable without a value on the path taken
    (``found`` set in a traced loop, else None) raises its error here too, not compare as an object.  A
    traced Python bool is True or False (the singletons) as its value is."""
    def compared(a, b):
        for x in (a, b):
            if isinstance(x, Undefined):
                x._fail()
        for x, y in ((a, b), (b, a)):
            if type(y) is bool and isinstance(x, PathNumber) and x.python is bool:
                raise located(UnsupportedError(
                    f"`is {y}` of a value that is a Python bool on some paths and a NumPy bool on others (a NumPy "
                    "bool is never True or False itself), which path is taken known only at run time: compare "
                    f"with == {y}, or give it one kind on every path (bool(...))"))
            if type(y) is bool and isinstance(x, TracedArray) and x.weak is bool:
                same = x if y else not_(x)
                return not_(same) if negated else same
        return not_(identical(a, b)) if negated else identical(a, b)
    return compared


_IDENTITY = {"Is": _identity(False), "IsNot": _identity(True)}
_COMPARED = {"Eq": "eq", "NotEq": "ne", "Lt": "lt", "LtE": "le", "Gt": "gt", "GtE": "ge"}


def _compared(op, left, right, protocols):
    if op in _IDENTITY:
        return _IDENTITY[op](left, right)
    if op in ("In", "NotIn"):
        found = protocols.contains(right, left)
        return found if op == "In" else not_(found)
    return protocols.compare(_COMPARED[op], left, right)


def compare_chain(left, links, line, protocols):
    """``left op1 b op2 c ...`` (``links``: (op, operand thunk) pairs): ``left op1 b and b op2 c ...``
    with each operand evaluated once, and only while the comparisons before it hold (``protocols``:
    the converted function's, which run the program's own ``__lt__`` as converted code)."""
    op, operand = links[0]
    right = operand()
    test = _compared(op, left, right, protocols)
    if len(links) == 1:
        return test
    return and_(test, lambda: compare_chain(right, links[1:], line, protocols), line)


def truth(x):
    """Python's ``bool(x)`` of a traced value: a traced Python bool (its errors, NumPy's, for an array of
    several elements)."""
    return python_bool(_scalar_predicate(x))


def not_(x):
    """Python's ``not x``: a Python bool (traced where ``x`` is)."""
    return python_bool(np.logical_not(_scalar_predicate(x))) if _tested(x) else not x


def if_(test, then_fn, else_fn, get, set_, names, line, exited_else=False):
    if not _tested(test):
        (then_fn if test else else_fn)()
        return
    control.cond(test, then_fn, else_fn, names, get, set_, Scope(sys._getframe(1), get), line,
                 exited_else=exited_else)


def while_(cond_fn, body_fn, get, set_, names, line, rebinds=()):
    """A while loop: one stablehlo.while when its condition is traced.  A condition on Python
    numbers is Python's; but when it still holds after ``unroll`` iterations that changed Python
    numbers and did traced work (``while t < t_end: u = step(u); t += dt``), the rest of the loop
    is tried as one rolled loop with those numbers carried as traced values (NEP 50 weak, so the
    results do not change); a body that needs them as Python numbers is unrolled instead."""
    options, scope, iterations, why = _options(), Scope(sys._getframe(1), get), 0, None
    promotable = False
    while True:
        test = cond_fn()
        if _tested(test):
            _check_bound(options.bound, f"the while loop at line {line}")
            control.while_loop(cond_fn, body_fn, names, get, set_, scope, line, options.attributes,
                               options.bound, rebinds=rebinds, entered=test)
            return
        if not test:
            return
        if promotable and iterations == max(1, options.unroll // context.current().copies) and options.promote \
                and (options.bound is not None or not in_reverse_mode()):
            why = _attempt(line, scope, lambda: control.while_loop(
                _traced_condition(cond_fn), body_fn, names, get, set_, scope, line, options.attributes,
                options.bound, runs=True, rebinds=rebinds))
            if why is None:
                context.current().promoted = True
                return
        before, count = get(), context.current().count
        with _unrolled(line, why, iterations + 1):   # the loops inside see the iterations unrolled so far
            body_fn()
        promotable = context.current().count > count and _numbers_changed(before, get())
        iterations += 1


def _traced_condition(cond_fn):
    def condition():
        test = cond_fn()
        if not _traced(test):
            raise TracingError("its condition does not depend on the Python numbers it changes")
        return test
    return condition


def _numbers_changed(before, after) -> bool:
    """Whether a variable held a Python number (not a bool) before and another one after."""
    numbers = (int, float, complex)
    return any(type(b) in numbers and type(a) in numbers and (type(a) is not type(b) or a != b)
               for b, a in zip(before, after))


class TracedRange:
    """``range(start, stop, step)`` with a traced bound: iterated only by a traced loop."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def __reversed__(self):
        """Its items from the last: the range from ``start + (len - 1) * step`` down by ``step`` (empty where it is)."""
        last = self.start + (self.stop - self.start - (1 if self.step > 0 else -1)) // self.step * self.step
        return TracedRange(last, self.start - self.step, -self.step)

    def _refused(self, *_):
        raise located(UnsupportedError(
            "a range() whose bounds are known only at run time is iterated by a for loop (or reversed() for one) in "
            "compiled code; its length and items are not known when cofactor traces (loop over it instead)"))

    __iter__ = __len__ = __getitem__ = __contains__ = _refused


_RANGE_ITERATOR = type(iter(range(0)))


def _item(arrays, start, i):
    """The ``i``-th item of ``enumerate(arrays[0], start)`` (``start`` not None) or ``zip(*arrays)``."""
    return (i + start, arrays[0][i]) if start is not None else tuple(a[i] for a in arrays)


class RunTimeIteration:
    """``enumerate(x, start)`` (``start`` not None) or ``zip(x, y, ...)`` where an array's length is known only
    at run time (``np.unique``'s values and counts): iterated only by a traced loop, of the shortest's trips."""

    def __init__(self, arrays, start=None):
        self.arrays, self.start = list(arrays), start
        lengths = [a.shape[0] for a in self.arrays]
        self.trips = lengths[0] if len(lengths) == 1 else functools.reduce(np.minimum, lengths)

    def item(self, i):
        return _item(self.arrays, self.start, i)

    def __iter__(self):  # (outside a for loop: the array's clear error)
        return iter(next(a for a in self.arrays if defers_tracing(a)))


class ArrayIteration:
    """``zip(a, b, ...)``, ``enumerate(a, start)`` (``start`` not None) or ``reversed(a)`` (``single``: of
    ``a[::-1]``) of traced arrays of known lengths: a for loop over it is rolled as one over ``range(trips)``
    is (unrolled, it made a copy of its body per element: a confusion matrix over 40 labels compiled for
    28 s); anywhere else it is the iterator Python's zip, enumerate and reversed make, used up as they are
    (``taken``: the items given so far; None once a loop over it broke on a traced condition, where it
    stopped is known only when the program runs)."""

    def __init__(self, arrays, start=None, single=False):
        self.arrays, self.start, self.single, self.taken = list(arrays), start, single, 0
        self.trips = min(a.shape[0] for a in self.arrays)

    def item(self, i):
        return self.arrays[0][i] if self.single else _item(self.arrays, self.start, i)

    def __iter__(self):
        return self

    def __next__(self):
        if self.taken is None:
            raise located(TracingError(
                "a zip or enumerate iterator used again after a loop over it stopped at a break whose condition is "
                "traced: where it stopped is known only when the compiled function runs (index the arrays instead)"))
        if self.taken >= self.trips:
            raise StopIteration
        self.taken += 1
        return self.item(self.taken - 1)


def _index(x) -> int:
    try:
        return operator.index(x)
    except TypeError as e:
        raise located(e) from None


def range_(*args):
    for a in args:  # (a float or an array of one: Python's TypeError, not a range of its truncated value)
        if isinstance(a, TracedArray) and (a.dtype.kind not in "iub" or a.ndim):
            raise located(TypeError("only integer scalar arrays can be converted to a scalar index"
                                    if a.stands_for() is np.ndarray else
                                    f"'{_type_name(a.stands_for())}' object cannot be interpreted as an integer"))
    if not any(_traced(a) for a in args):
        try:
            return range(*args)
        except TypeError as e:
            raise located(e) from None
    # Python's range takes its arguments' __index__: Python ints (range(ptr[0], ptr[1]) of int32 items counts in
    # them, as does a step np.int16(-1)).
    args = [a if isinstance(a, TracedArray) and a.weak is int and a.dtype == np.int64 else
            python_ints.python_int(a) if _traced(a) else _index(a) for a in args]
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    if _traced(step):
        raise TracingError("range() with a traced step is not supported; its direction must be known")
    return TracedRange(start, stop, step)


def generated(kept):
    """A generator expression with an if clause, written as a loop (comprehensions.py): an iterator
    over its list, or its list of run-time length itself (what sum, max, len and NumPy take)."""
    return iter(kept) if type(kept) is list else kept


def _type_name(t: type) -> str:
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def for_(iterable, body_fn, get, set_, names, line, broke=None, rebinds=(), sliced_by_counter=False, appended=(),
         filters=False, comprehension=False):
    """``broke()`` reads the loop's break flag (None: the loop has no break); ``sliced_by_counter``: the
    body slices with a bound that names the loop variable (``x[:i]``); ``appended``: the names it uses
    only to append to (a rolled loop may collect their lists: tracing/histories.py); ``filters``: it
    appends to one of them under an if or a while: a loop too short to roll is rolled all the same,
    since unrolled, an append under a traced condition could not be traced; ``comprehension``: the
    loop a comprehension is (comprehensions.py), unrolled without a warning about a loop."""
    frame = sys._getframe(1)
    lists = _appended_lists(frame, appended, body_fn)
    loop = (get, set_, names, line, Scope(frame, get), broke, rebinds, lists)
    rolls = bool(filters and lists)

    def warn(trips):
        return not comprehension and _too_long(trips)
    if isinstance(iterable, TracedArray):  # iterate the leading axis
        n = iterable.shape[0] if iterable.ndim else len(iterable)
        why = (rolls or _too_long(n)) and _rolled(0, n, 1, lambda i: body_fn(iterable[i]), *loop, warn=warn(n))
        if why is not None:
            _python_loop((iterable[i] for i in range(n)), body_fn, broke, line, why or None, n)
        return
    if isinstance(iterable, TracedRange):
        _rolled(iterable.start, iterable.stop, iterable.step, body_fn, *loop, fallback=False)
        return
    if defers_tracing(iterable):  # an array whose length is known only at run time: that many trips
        _rolled(0, iterable.shape[0], 1, lambda i: body_fn(iterable[i]), *loop, fallback=False,
                capacity=iterable.data.shape[0])
        return
    if isinstance(iterable, ArrayIteration) and iterable.taken == 0:
        why = (rolls or _too_long(iterable.trips)) and _rolled(0, iterable.trips, 1, lambda i: body_fn(iterable.item(i)),
                                                               *loop, warn=warn(iterable.trips))
        if why is None:  # (rolled: used up, or stopped where a traced break left it)
            iterable.taken = iterable.trips if broke is None or not _traced(broke()) else None
            return
        _python_loop(iterable, body_fn, broke, line, why or None, iterable.trips)
        return
    if isinstance(iterable, RunTimeIteration):
        _rolled(0, iterable.trips, 1, lambda i: body_fn(iterable.item(i)), *loop, fallback=False,
                capacity=min(a.data.shape[0] if defers_tracing(a) else a.shape[0] for a in iterable.arrays))
        return
    if type(iterable) is _RANGE_ITERATOR:  # reversed(range(n)), iter(range(n)): the range it has left, used up
        _, (rest,), taken = iterable.__reduce__()
        collections.deque(iterable, maxlen=0)
        iterable = rest[taken:]
    why, iterable = False, outside.items(iterable)
    if isinstance(iterable, range) and (rolls and len(iterable) or _too_long(len(iterable))):
        if sliced_by_counter and broke is None and len(iterable) >= SEGMENTED_TRIPS:
            why = _in_parts(iterable, body_fn, loop)
        else:
            why = _rolled(iterable.start, iterable.stop, iterable.step, body_fn, *loop, warn=warn(len(iterable)))
    if why is not None:
        _python_loop(iterable, body_fn, broke, line, why or None)


# A loop of at least SEGMENTED_TRIPS trips whose body slices by its counter (x[:i], A[i, i + 1:]) runs as
# consecutive rolled loops over parts of its range, one per TRIPS_PER_PART trips (at least 2, at most
# MAX_PARTS): a slice with traced bounds then spans only the lanes the counters of its part reach
# (numpy/extent_ops.py, _reach), not the whole axis, so a triangular solve in k parts reads (k + 1) / 2k
# of its matrix, not all of it (forward substitution at n = 5000: 19 ms in one loop, 12 in four parts,
# 11.5 in eight; NumPy 10.5).  Each part is a loop XLA compiles (about 0.1 s each for Durbin's body), so
# shorter loops, whose slices are small, have fewer parts or stay one loop (at 100 trips, four parts took
# durbin's and gram_schmidt's first calls from 0.5-0.7 s to 1.5-1.7 s).
SEGMENTED_TRIPS, TRIPS_PER_PART, MAX_PARTS = 256, 512, 8


class _LengthEscapes(Exception):
    """The first part's body leaves a variable holding an array with a run-time length."""


def _in_parts(whole: range, body_fn, loop) -> str | None:
    """``whole`` as consecutive rolled loops; why not, if the first cannot be rolled (the caller unrolls
    it all).  Where the body leaves a variable holding an array with a run-time length (``w = x[:i]``),
    it is one loop: each part would carry it at the lanes of its own reach, which the next part's
    loop could not take."""
    get = loop[0]

    def first_body(i):
        body_fn(i)
        held = [x for x in get() if not control.is_unset(x)]  # (an inner loop's variable may have no value)
        if any(defers_tracing(x) for x in flatten(held, is_leaf=defers_tracing)[0]):
            raise _LengthEscapes

    parts = min(MAX_PARTS, max(2, len(whole) // TRIPS_PER_PART))
    size = -(-len(whole) // parts)
    for n, part in enumerate(whole[k:k + size] for k in range(0, len(whole), size)):
        try:
            why = _rolled(part.start, part.stop, part.step, body_fn if n else first_body, *loop)
        except _LengthEscapes:
            return _rolled(whole.start, whole.stop, whole.step, body_fn, *loop)
        if why is not None and n == 0:
            return why
        if why is not None:
            _python_loop(part, body_fn, None, loop[3], why)
    return None


def _too_long(trips: int) -> bool:
    """Whether unrolling ``trips`` iterations here would make more than ``unroll`` copies of the
    body, with the copies the unrolled loops around it make (Options.unroll)."""
    return trips * context.current().copies > _options().unroll


def _check_bound(bound, what):
    if bound is None and in_reverse_mode():
        raise located(UnsupportedError(
            f"reverse-mode differentiation through {what} needs a static trip count, and this one depends on "
            "data: give the loop a bound with cf.jit(..., max_iterations=N) (or use forward mode)"))


@contextlib.contextmanager
def _unrolled(line, why=None, copies=1):
    """A loop run as Python (``why``: what kept it from one rolled loop, if it was tried), making
    ``copies`` copies of its body: if the trace outgrows its budget inside it, or later, the error
    names it."""
    trace = context.current()
    trace.unrolled.setdefault(line, why)
    outer = trace.copies
    trace.copies = outer * max(copies, 1)
    try:
        yield
    except OpBudgetExceeded as e:
        e.loops.append((line, why))
        raise
    finally:
        trace.copies = outer


def _python_loop(iterable, body_fn, broke, line, why=None, trips=None):
    """``trips``: the length of ``iterable``, where it has none (a generator; None: unknown, taken as 1)."""
    if trips is None and hasattr(iterable, "__len__"):
        trips = len(iterable)
    with _unrolled(line, why, trips or 1):
        for item in iterable:
            body_fn(item)
            if broke is not None:
                flag = broke()
                if not _traced(flag) and flag:
                    return


def _appended_lists(frame, names, body_fn) -> list:
    """(list, rebind) of the function's own ``names`` (those its loop only appends to: not a global, nor
    a variable of a function around it, but for the function whose branch or loop body converted code
    made ``frame``'s) that no other of its names, nor a function of the program's it made (a closure
    could read them in the loop), holds; ``rebind(value)`` binds the name to ``value`` (through the cell
    the loop's body reads it from; None where it has none)."""
    local = frame.f_locals
    generated = frame.f_code.co_name.startswith(GENERATED)
    own = [(n, local.get(n)) for n in names if generated or n not in frame.f_code.co_freevars]
    closures = [cell for name, fn in local.items() if isinstance(fn, types.FunctionType)
                and not name.startswith(GENERATED) for cell in fn.__closure__ or ()]
    cells = dict(zip(body_fn.__code__.co_freevars, body_fn.__closure__ or ()))
    return [(pair[1], _rebinding(cells.get(pair[0]))) for pair in own if type(pair[1]) is list
            and sum(x is pair[1] for x in local.values()) == 1 and not any(_holds(cell, pair[1]) for cell in closures)
            and _held_only_by_the_function(pair[1], frame, local, pair)]


def _held_only_by_the_function(items: list, frame, local: dict, pair: tuple) -> bool:
    """Whether nothing but the function's own frames (its converted code's and its branches' and loops',
    ``frame`` up to the first that is not generated) and cells hold ``items``: not its caller (a list
    passed to a helper that fills it), nor a tuple, a list, a dict or an object (which would keep the
    list, not what the loop makes of it); ``pair``: the (name, list) that asks."""
    own, f = set(), frame
    while f is not None:
        own.add(id(f))
        if not f.f_code.co_name.startswith(GENERATED):
            break
        f = f.f_back
    return all(id(r) in own or r is local or r is pair or isinstance(r, types.CellType)
               for r in gc.get_referrers(items))


def _rebinding(cell):
    if cell is None:
        return None

    def rebind(value):
        cell.cell_contents = value
    return rebind


def _holds(cell, value) -> bool:
    try:
        return cell.cell_contents is value
    except ValueError:  # (empty)
        return False


def _rolled(start, stop, step, body_fn, get, set_, names, line, scope, broke, rebinds, appended=(),
            fallback=True, warn=True, capacity=None) -> str | None:
    """Trace ``for i in range(start, stop, step): body(i)`` as one stablehlo.while, its counter
    traced; None when it did.

    With ``fallback`` (a static range), a body that cannot be one rolled loop (it needs ``i`` as a
    Python number, ``range(i)``, a list index; a list grows in it) returns why, so that the caller
    unrolls the loop instead; and when the range is not empty, the variables the loop assigns keep
    their last values after it, as in Python.  ``capacity``: the most trips a loop of a run-time
    trip count makes (over an array of run-time length); it and a loop that may break count the
    appends to the lists they collect.
    """
    # The counter counts iterations from 0 up and is carried first: Enzyme's reverse mode finds the
    # trip count only from there, and only so (a loop from 1, or counting down, is not differentiable).
    counter = [0]
    trips = len(range(start, stop, step)) if not (_traced(start) or _traced(stop)) else \
        np.maximum((stop - start + (step - 1 if step > 0 else step + 1)) // step, 0)
    # Only a loop whose numbers are all Python's before it may run as Python (numbers from the arguments,
    # traced, would make an unrolled copy of the body per trip: Newton's iteration on x0 for 100 steps
    # compiled for 20 s).
    fallback_to_python = fallback and not any(isinstance(x, TracedArray) for x in flatten(list(get()))[0])

    def get_all():
        return (counter[0],) + get()

    def set_all(values):
        counter[0] = values[0]
        set_(values[1:])

    def cond():
        more = counter[0] < trips
        return more if broke is None else np.logical_and(more, not_(broke()))

    def body():
        k = counter[0]
        k.bounds = python_ints.counter_bounds(start, stop, step, trips)
        checks = context.current().checks
        check_state = checks.state.value if checks is not None else None  # (as the body gets it)
        body_fn(k if step == 1 and not _traced(start) and start == 0 else python_ints.range_item(start, stop, k, step))
        counter[0] = k + 1
        if fallback_to_python and _python_numbers_only(get(), current_block(), check_state):
            raise _PythonNumbers

    bound = None
    traced_range = _traced(start) or _traced(stop)
    if in_reverse_mode() and (broke is not None or traced_range):
        # Enzyme's reverse mode needs a static trip count: run every iteration the range allows.
        bound = _options().bound if traced_range else len(range(start, stop, step))
        _check_bound(bound, f"the for loop at line {line} over a traced range")
    # (a loop that may break, or of a run-time trip count, counts its appends: how many trips it makes is
    # known only when the program runs)
    most = trips if fallback else capacity
    histories = [] if most is None else [History(items, most, rebind, counted=broke is not None or not fallback,
                                                 site=(scope.frame.f_code, line, k))
                                         for k, (items, rebind) in enumerate(appended)]

    def roll():
        control.while_loop(cond, body, ("loop counter",) + tuple(names), get_all, set_all, scope, line,
                           attributes=_options().attributes, bound=bound,
                           runs=fallback and len(range(start, stop, step)) > 0, rebinds=rebinds, ends=True,
                           histories=histories)
    if not fallback:
        roll()
        return None
    peel = None
    if broke is None and not appended and len(range(start, stop, step)) > 1:
        def peel():  # a number the first trip settles (best = -1, then best = u[i] of uint8): that trip, then the rest
            body_fn(start)
            rest = range(start + step, stop, step)
            why = _rolled(rest.start, rest.stop, step, body_fn, get, set_, names, line, scope, broke, rebinds,
                          warn=warn)
            if why is not None:
                _python_loop(rest, body_fn, None, line, why or None)
    return _attempt(line, scope, roll, warn, peel)


class _PythonNumbers(Exception):
    """A loop over a static range whose body computes only Python numbers from Python numbers: it
    runs as Python (its numbers stay Python's: a shape, a list index after it)."""


def _python_numbers_only(state, body, check_state) -> bool:
    """Whether a rolled loop body (``body``, traced, leaving its variables ``state``) did no traced
    work besides its own numbers: its variables hold numbers and Python objects, no array, and its
    operations use nothing from outside it (no array read, no value of the program's) but the
    numbers it carries and the check state it got (``check_state``: Python's checks on them)."""
    if any(not x.scalar if isinstance(x, TracedArray) else is_array(x) and not np.isscalar(x)
           for x in flatten(list(state))[0]):
        return False
    arguments = {id(a) for a in body.arguments}  # (what the loop carries: its numbers, and the arrays around it)
    own = (body.defined_values() - arguments) | {id(check_state)}
    return all(id(v) in own or id(v) in arguments and v.shape == () for op in body.walk() for v in op.operands)


def _attempt(line, scope, roll, warn=True, peel=None) -> str | None:
    """``roll()`` the loop at ``line``; None when it did, else why it could not (warned, unless not
    ``warn``, a loop short enough to unroll anyway: the caller runs the loop as Python, and the
    attempt's operations are not part of the program).  A variable whose first value the loop
    cannot carry (control.NumberOutOfRange) is ``peel()``'s, where there is one.  Any error
    counts: Python code in the body that needs the loop's numbers as numbers (``d[i]``, ``"%d" % i``)
    runs as written once the loop is unrolled; an error of the program's own is raised there again."""
    trace = context.current()
    count, kept = trace.count, outside.Kept()
    try:
        roll()
    except _LengthEscapes:
        trace.count = count
        raise
    except _PythonNumbers:
        trace.count = count
        kept.restore()
        return ""
    except control.NumberOutOfRange:
        if peel is None:
            raise
        trace.count = count
        kept.restore()
        return peel()
    except Exception as error:  # noqa: BLE001
        trace.count = count
        kept.restore()
        reason = str(error).splitlines()[0] if isinstance(error, TracingError) else (
            f"its body raised {type(error).__name__}({str(error).splitlines()[0] if str(error) else ''}) "
            "with the loop's numbers traced")
        if warn:
            warnings.warn_explicit(
                f"cofactor: the loop at line {line} is unrolled (traced once per iteration; its body already ran once "
                f"while cofactor tried to keep it one rolled loop) because {reason}", UnrolledLoopWarning,
                scope.frame.f_code.co_filename, line)
        return reason
    return None
