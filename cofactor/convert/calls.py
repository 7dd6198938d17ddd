"""What a call inside converted user code does while it is traced.

NumPy's array constructors get traced versions (so ``out = np.zeros(n)`` can
then be filled with traced values, and ``np.array([t, 1.0])`` works); user
functions are converted in turn; a NumPy scalar's method given traced values is
the same method of the scalar as a traced one (``np.float64(2).clip(lo, hi)``);
everything else is called as it is.
"""
from __future__ import annotations

import bisect
import builtins
import collections
import contextlib
import dataclasses
import functools
import heapq
import inspect
import itertools
import json
import math
import random
import sys
import types
import warnings

import numpy as np

from .. import debug
from ..errors import ConcretizationError, UnsupportedError, forwards_calls, located
from ..ir import ops
from ..pytree import flatten
from ..tracing import context, implicit, outside, python_ints
from ..tracing.array import Either, TracedArray, defers_tracing
from ..tracing.dispatch import CONSTRUCTORS, FUNCTIONS, numpy_name, settled
from . import statements
from .outer import read_attribute
from .protocols import Protocols, own_hook
from .source import convert, is_user_function
from .written import as_written, without_source


# The function @contextlib.contextmanager makes of a generator function (one code object for all of them).
_CONTEXT_MANAGER_MAKER = contextlib.contextmanager(lambda: iter(())).__code__

# Builtins that iterate their arguments: an outside list or tuple given them gives its items as slots.
_ITERATING = (zip, enumerate, list, tuple, reversed, iter, sum, any, all, sorted, map, filter, min, max, set,
              frozenset)


_JOINS = (np.stack, np.vstack, np.hstack, np.concatenate, np.column_stack, np.row_stack)


def _arrays_within(value):
    """The lists of run-time length in a list or tuple NumPy is given (``np.concatenate([[100], out])``) as
    the arrays NumPy makes of them (an empty one of ints an error: NumPy's is float64)."""
    if type(value) in (list, tuple) and any(defers_tracing(x) for x in value):
        return type(value)(x.as_array() if defers_tracing(x) else x for x in value)
    return value


def _collected(items: list, args, kwargs) -> bool:
    """Whether a rolled loop being traced took ``items.append(*args)`` (tracing/histories.py)."""
    history = context.current().collecting.get(id(items)) if context.is_tracing() else None
    return history is not None and len(args) == 1 and not kwargs and history.append(args[0])


def _from_numpy(fn) -> bool:
    """A NumPy function or ufunc, which reads the arrays in the lists it is given."""
    return isinstance(fn, np.ufunc) or (getattr(fn, "__module__", None) or "").startswith("numpy")


@forwards_calls
def call(fn, *args, **kwargs):
    if type(getattr(fn, "__self__", None)) is list and fn.__name__ == "append" and _collected(fn.__self__, args, kwargs):
        return None  # (an append a rolled loop counts: tracing/histories.py)
    if _takes_callbacks(fn):  # (sorted(key=...), functools.reduce(f, ...): the program's functions, converted)
        args = tuple([_callback(f) for f in a] if fn is np.piecewise and type(a) is list  # (its list of functions)
                     else _callback(a) for a in args)
        kwargs = {k: v if isinstance(v, type) else _callback(v) for k, v in kwargs.items()}  # (dtype=int)
    try:
        constructor = CONSTRUCTORS.get(fn)
    except TypeError:  # unhashable callables
        constructor = None
    if constructor is not None or _from_numpy(fn):  # (np.stack(self.frames): an outside list's items, read as slots)
        explicit = kwargs.get("dtype") is not None or constructor is not None and len(args) > 1 and args[1] is not None
        args = tuple(_arrays_within(outside.contents(_PROTOCOLS.as_array(a, numpy=not explicit))) for a in args)
        kwargs = {k: _arrays_within(outside.contents(_PROTOCOLS.as_array(v))) for k, v in kwargs.items()}
    if constructor is not None:  # (np.full(2, best) of a number whose kind depends on the path: its dtype would too)
        args, kwargs = settled(numpy_name(fn), None, args, kwargs)
        return constructor(*args, **kwargs)
    if any(fn is f for f in (sum, max, min)) and args and hasattr(type(args[0]), "python_result") and \
            not (kwargs.keys() - {"start", "default"}):  # (of a list of run-time length: Python's numbers)
        start = len(args) > 1 or "start" in kwargs
        return args[0].python_result(fn, call(fn, args[0].as_array(numpy=False), *args[1:], **kwargs), start)
    if fn in _JOINS and args and defers_tracing(args[0]):  # (np.vstack(rows) of a list of run-time length: its rows,
        return args[0].__array_function__(fn, (type(args[0]),), args, kwargs)  # which NumPy's dispatcher would iterate)
    if any(fn is f for f in _ITERATING):  # an outside list's items, read as its slots (a class's own __iter__, converted)
        args = tuple(outside.items(a if fn is reversed else _PROTOCOLS.iterated(a)) for a in args)
        args = tuple(a.as_array(numpy=False) if defers_tracing(a) else a for a in args)  # (sum(out) of a list of
        #                                                                                     run-time length)
    handled = _through_protocols(fn, args, kwargs)
    if handled is not _NOT_HANDLED:
        return handled
    if fn is reversed and len(args) == 1 and not kwargs and isinstance(args[0], TracedArray) and args[0].ndim:
        return statements.ArrayIteration([args[0][::-1]], single=True)
    if fn is enumerate and args and isinstance(args[0], statements.ArrayIteration) and args[0].single and \
            args[0].taken == 0 and len(args) + len(kwargs) <= 2:  # enumerate(reversed(x))
        return statements.ArrayIteration(args[0].arrays, _start(args, kwargs))
    if fn is enumerate and args and defers_tracing(args[0]):
        return statements.RunTimeIteration(args[:1], _start(args, kwargs))
    if fn is zip and args and not kwargs and any(defers_tracing(a) for a in args) and \
            all(isinstance(a, TracedArray) and a.ndim or defers_tracing(a) for a in args):
        return statements.RunTimeIteration(args)
    if (fn is zip and args and set(kwargs) <= {"strict"} or fn is enumerate and len(args) + len(kwargs) <= 2 and args) \
            and all(isinstance(a, TracedArray) and a.ndim for a in (args if fn is zip else args[:1])):
        if fn is enumerate:
            return statements.ArrayIteration(args[:1], _start(args, kwargs))
        lengths = [a.shape[0] for a in args]
        short = next((k for k, n in enumerate(lengths) if n != lengths[0]), None)
        if kwargs.get("strict") and short is not None:  # (Python's error, where zip would meet it)
            raise located(ValueError(f"zip() argument {short + 1} is {'shorter' if lengths[short] < lengths[0] else 'longer'} "
                                     f"than argument{' 1' if short == 1 else 's 1-' + str(short)}"))
        return statements.ArrayIteration(args, None)
    if fn is len and len(args) == 1 and not kwargs and defers_tracing(args[0]):
        return args[0].shape[0]  # an array with a run-time length: a traced Python int (numpy/extent.py)
    if fn is len and len(args) == 1 and not kwargs and (outside.is_outside(args[0]) or own_hook(args[0], "__len__")):
        return _PROTOCOLS.length(args[0])  # (guarded; a class's own __len__, converted)
    if fn is getattr and len(args) in (2, 3) and not kwargs and type(args[1]) is str:
        if len(args) == 3 and not outside.has(args[0], args[1], "attribute"):
            return args[2]
        return read_attribute(args[0], args[1], call)
    if isinstance(fn, types.BuiltinFunctionType) and (fn in python_ints.MATH or fn is math.log) and \
            any(isinstance(a, TracedArray) for a in args) and not kwargs:
        return python_ints.python_math(fn, args)  # (math.exp(float(x[0])): Python's numbers and errors)
    if (getattr(fn, "__module__", None) or "") in ("math", "cmath", "statistics") and \
            any(isinstance(a, TracedArray) for a in flatten((args, kwargs))[0]):  # (those python_math has not taken)
        raise located(UnsupportedError(
            f"{fn.__module__}.{fn.__name__} of traced values is not supported by cofactor (their values are only known "
            "when the compiled function runs): use the NumPy function that computes it on arrays where there is one "
            "(math.isclose: np.isclose, math.fsum: np.sum, math.gcd: np.gcd, statistics.mean: np.mean), or compute "
            "it after the call"))
    if fn is np.transpose and args and type(args[0]) in (list, tuple) and any(defers_tracing(a) for a in args[0]):
        return np.transpose(np.stack(list(args[0])), *args[1:], **kwargs)  # np.transpose(np.nonzero(m))
    if any(fn is f for f in _REFUSED_ON_TRACED) and any(isinstance(a, TracedArray) for a in flatten((args, kwargs))[0]):
        raise located(UnsupportedError(f"numpy.{fn.__name__} is not supported by cofactor on traced arrays: "
                                       f"{_REFUSED_ON_TRACED[fn]}"))
    if (fn is json.dumps or fn is json.dump) and any(isinstance(a, TracedArray) for a in flatten((args, kwargs))[0]):
        raise located(ConcretizationError(f"json.{fn.__name__} of traced values needs their values, which are only "
                                          "known when the compiled function runs: return them, and write the JSON "
                                          "after the call"))
    if (fn is np.errstate or fn is np.seterr) and context.is_tracing() and \
            any(v in ("raise", "call") for v in (*args, *kwargs.values()) if isinstance(v, str)):
        raise located(UnsupportedError(
            f"numpy.{fn.__name__} with 'raise' or 'call' in compiled code: cofactor does not detect floating-point "
            "errors (division by zero, invalid values, overflow) when the compiled function runs, so no "
            "FloatingPointError would be raised; test the values instead (np.isfinite, a check of the divisor)"))
    if fn is pow and len(args) == 3 and any(isinstance(a, TracedArray) for a in args):
        raise located(UnsupportedError("pow() with a modulus (three arguments) of traced numbers is not supported by "
                                       "cofactor: compute (a ** b) % m with NumPy where it cannot overflow"))
    if fn is next and args and not kwargs and hasattr(type(args[0]), "first"):
        return args[0].first(*args[1:])  # (a filtering generator expression's items: numpy/extent_lists.py)
    if fn is next and args:
        implicit.advanced(args[0])
    if fn is object.__getattribute__ and len(args) == 2 and not kwargs and outside.is_outside(args[0]):
        return outside.read_slot(args[0], args[1], fn(*args), "attribute")  # (a __getattr__'s own store)
    if fn is vars and len(args) == 1 and not kwargs and outside.is_outside(args[0]):
        return read_attribute(args[0], "__dict__", call)
    if fn is hasattr and len(args) == 2 and not kwargs and type(args[1]) is str and outside.is_outside(args[0]):
        return outside.has(args[0], args[1], "attribute")
    if fn is dict and len(args) == 1 and not kwargs and type(args[0]) is dict and outside.is_outside(args[0]):
        return read_attribute(args[0], "copy", call)()
    if getattr(fn, "__code__", None) is _CONTEXT_MANAGER_MAKER and is_user_function(getattr(fn, "__wrapped__", None)):
        return contextlib.contextmanager(converted(fn.__wrapped__))(*args, **kwargs)  # (its generator, converted)
    if fn is type and len(args) == 1 and isinstance(args[0], TracedArray):
        return args[0].stands_for()
    if fn is builtins.print and context.is_tracing():  # (as cf.print: at every call, with run-time values)
        args = [_text_of(a, "__str__", printed=True) for a in args]
        return (debug.print if debug.prints_when_run() else debug.print_at_trace_time)(*args, **kwargs)
    if (fn is str or fn is repr) and len(args) == 1 and not kwargs and context.is_tracing() and \
            own_hook(args[0], f"__{fn.__name__}__"):
        return _text_of(args[0], f"__{fn.__name__}__")
    if isinstance(getattr(fn, "registry", None), types.MappingProxyType) and callable(getattr(fn, "dispatch", None)) \
            and args and isinstance(args[0], TracedArray):  # functools.singledispatch: by the NumPy type it stands for
        return call(fn.dispatch(args[0].stands_for()), *args, **kwargs)
    if fn is type and len(args) == 1 and outside.is_outside(args[0]):  # type(self).count += 1: its class's state
        cls = type(args[0])
        outside.reached(cls, cls.__name__)
        return cls
    if _ndarray_method(fn) and args and isinstance(args[0], TracedArray):
        return call(getattr(args[0], fn.__name__), *args[1:], **kwargs)  # (np.ndarray.sort(a): a.sort())
    if isinstance(fn, types.BuiltinMethodType) and isinstance(fn.__self__, list) and fn.__name__ in ("pop", "insert") \
            and args and isinstance(args[0], TracedArray):
        raise located(UnsupportedError(
            f"list.{fn.__name__}() at a position known only at run time: which items the list keeps would depend on "
            "it, and a list's items are known when cofactor traces (keep the items in an array and a count, or "
            "index the list without changing it)"))
    if isinstance(fn, types.BuiltinMethodType) and fn.__name__ == "sort" and type(fn.__self__) is list and \
            not args and set(kwargs) <= {"key", "reverse"} and any(_traced_leaf(x) for x in fn.__self__):
        fn.__self__[:] = call(sorted, list(fn.__self__), **kwargs)  # (lst.sort() of traced values: sorted's order)
        return None
    if fn is sorted and len(args) == 1 and kwargs.get("key") is not None and set(kwargs) <= {"key", "reverse"}:
        ordered = _sorted_by_key(list(args[0]), kwargs["key"], kwargs.get("reverse", False))
        if ordered is not None:
            return ordered
    if fn is sorted and len(args) == 1 and set(kwargs) <= {"reverse"} and (
            isinstance(args[0], TracedArray) and args[0].ndim == 1 or
            isinstance(args[0], list) and any(_traced_leaf(x) for x in args[0])):
        return _sorted_numbers(args[0], kwargs.get("reverse", False))
    if fn is complex and 1 <= len(args) <= 2 and not kwargs and any(isinstance(a, TracedArray) for a in args) and \
            all(isinstance(a, (int, float)) or isinstance(a, TracedArray) and a.ndim == 0 and a.dtype.kind in "biuf"
                for a in args):  # complex(re, im) of traced real numbers: a traced Python complex
        parts = [a.astype(np.float64) if isinstance(a, TracedArray) else np.float64(a) for a in (*args, 0.0)[:2]]
        return TracedArray((parts[0] + parts[1] * 1j).value, scalar=True, weak=complex)
    if fn is range and any(isinstance(a, TracedArray) for a in args):  # (reversed(range(b[0], b[1])))
        return statements.range_(*args, **kwargs)
    if fn is bool and len(args) == 1 and not kwargs and isinstance(args[0], TracedArray):
        return statements.truth(args[0])
    if (fn is int or fn is float) and len(args) == 1 and not kwargs and isinstance(args[0], TracedArray) \
            and args[0].size == 1 and args[0].ndim == 0:  # a traced Python number, as x.item() gives
        return python_ints.python_int(args[0]) if fn is int else python_ints.python_float(args[0])
    if fn is id and len(args) == 1 and isinstance(args[0], Either):
        raise located(UnsupportedError(
            "id() of a variable that holds one of several arrays, which one chosen at run time by a traced "
            "branch: its identity is not known at trace time (compare with `is`, which cofactor traces)"))
    if (fn is str or fn is repr or fn is format) and args and isinstance(args[0], TracedArray):
        args[0].no_text(f"{fn.__name__}()")  # (len(str(k)), a palindrome test: the trace's text would be compared)
    if fn is np.isscalar and len(args) == 1 and not kwargs and isinstance(args[0], TracedArray):
        return args[0].scalar or args[0].weak is not None  # (a NumPy scalar or a Python number it stands for)
    if fn is isinstance and len(args) == 2 and isinstance(args[0], TracedArray):
        return _is_instance(args[0], args[1])
    if (fn is max or fn is min) and not kwargs:
        return statements.extreme(fn, args, sys._getframe(1))
    if (fn is any or fn is all) and len(args) == 1 and not kwargs:
        return statements.any_all(fn, args[0])
    if fn is sum and 1 <= len(args) + len(kwargs) <= 2 and set(kwargs) <= {"start"} and \
            statements._items_reduced(args[0]):
        added = statements.total(*args, **kwargs)
        if added is not None:
            return added
    if fn is warnings.warn:
        return statements.warn(*args, **kwargs)
    if isinstance(fn, np.ufunc) or isinstance(getattr(fn, "__self__", None), np.ufunc) and \
            fn.__name__ in ("reduce", "accumulate", "outer"):  # (their operands: at's and reduceat's indices are not)
        args = tuple(_sequence_as_array(a) for a in args)  # (np.maximum([x[0], x[1]], 0.5), np.add.reduce([a, b]))
    hidden = _traced_in_a_sequence(fn, args, kwargs)
    if hidden is not None:  # NumPy's dispatch does not look into the list: cofactor's implementation, as it would
        return hidden.__array_function__(fn, (type(hidden),), args, kwargs)
    if isinstance(fn, type) and outside.user_class(fn):
        return _instantiated(fn, args, kwargs)
    user = _user_callable(fn)
    if user is not None:
        outside.defaults_reached(fn)  # (def f(x, acc=[]): the list is the function's, kept between calls)
        return user(*args, **outside.defaults_read(fn, args, kwargs))
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, random.Random):  # (random.random(), rng.uniform(...): the random module's own state)
        raise located(UnsupportedError(
            f"random.{getattr(fn, '__name__', 'Random')} (Python's random module) runs when the function is traced, "
            "not at each call, so compiled code would repeat its numbers: use np.random inside the function"))
    if isinstance(owner, np.generic) and isinstance(fn, types.BuiltinMethodType) and \
            any(isinstance(x, TracedArray) for x in flatten((args, kwargs))[0]):
        return getattr(TracedArray(ops.constant(np.asarray(owner)), scalar=True), fn.__name__)(*args, **kwargs)
    if _builtin(fn):
        return fn(*args, **kwargs)
    with outside.shown_to_library(args, kwargs):  # (one that reads an object's attributes reads the trace's)
        return fn(*args, **kwargs)


def _builtin(fn) -> bool:
    """Python's builtins (isinstance, len, list, ...): none reads an object's attributes but through protocols,
    which run as converted code."""
    return getattr(fn, "__module__", None) == "builtins" and isinstance(fn, (types.BuiltinFunctionType, type))


_NOT_HANDLED = object()
_NUMBERS = (float, int, complex)
_THROUGH_PROTOCOLS = (abs, bool, *_NUMBERS, reversed, sum, max, min)


def _through_protocols(fn, args, kwargs):
    """A builtin that calls special methods (``abs``, ``bool``, ``float``, ``int``, ``complex``,
    ``reversed``, ``sum``, ``max``, ``min``) on objects of the program's own classes: those methods run as
    converted code (protocols.py); _NOT_HANDLED for any other call."""
    if not any(fn is builtin for builtin in _THROUGH_PROTOCOLS) or kwargs or not _user_objects(*args):
        return _NOT_HANDLED
    if fn is sum and len(args) == 2:
        return _PROTOCOLS.total(*args)
    if len(args) != 1:
        return _NOT_HANDLED
    x = args[0]
    if fn is abs and own_hook(x, "__abs__"):
        return _PROTOCOLS.unary("abs", x)
    if fn is bool:
        return bool(_PROTOCOLS.tested(x))
    if any(fn is kind for kind in _NUMBERS):
        return _PROTOCOLS.number(fn, x)
    if fn is reversed:
        return _PROTOCOLS.reversed(x)
    if fn is sum:
        return _PROTOCOLS.total(x)
    if fn is max or fn is min:
        return _PROTOCOLS.extreme(fn, x)
    return _NOT_HANDLED


def _user_objects(*values) -> bool:
    """Whether ``values`` (or the items of a list or tuple among them) hold an object of the program's own class."""
    def own(v):
        return outside.user_class(type(v)) and not isinstance(v, TracedArray)
    return any(own(v) or type(v) in (list, tuple) and any(own(i) for i in v) for v in values)


# Python's functions that call a function they are given, there and then (not ones that keep it: append).
_CALLING = (sorted, min, max, map, filter, np.fromfunction, np.piecewise, np.apply_along_axis, functools.reduce, itertools.accumulate, itertools.starmap,
            itertools.takewhile, itertools.dropwhile, itertools.filterfalse, itertools.groupby, heapq.nsmallest,
            heapq.nlargest, heapq.merge, bisect.bisect_left, bisect.bisect_right, bisect.insort_left,
            bisect.insort_right)
_CALLING = {id(f) for f in _CALLING}  # (by identity: a callable need not be hashable)


def _callback(fn):
    """A function given to one that calls it, as converted code calls it: the program's converted; another
    (an ndarray method of the class, ``map(np.ndarray.sum, rows)``; ``operator.attrgetter("w")``; a builtin
    ``call`` takes care of, ``itertools.accumulate(x, max)``, ``map(float, x)``) through ``call``, as converted
    code's calls go."""
    if is_user_function(fn) or without_source(fn):
        return converted(fn)
    if callable(fn):
        return functools.partial(call, fn)
    return fn


def _ndarray_method(fn) -> bool:
    return getattr(fn, "__objclass__", None) is np.ndarray


def _takes_callbacks(fn) -> bool:
    """Whether ``fn`` calls a function it is given (``sorted(key=)``, ``map``, ``functools.reduce``,
    ``list.sort``): the program's functions given it are converted first."""
    return id(fn) in _CALLING or \
        isinstance(fn, types.BuiltinMethodType) and fn.__name__ == "sort" and isinstance(fn.__self__, list)


def _instantiated(cls, args, kwargs):
    """``cls(*args, **kwargs)`` of the program's own class, its ``__init__`` (or a dataclass's
    ``__post_init__``) run as converted code like its other methods: what it reads from outside (a
    class counter, a global) is read at every call, what it draws or logs, drawn and logged then."""
    if issubclass(cls, np.ndarray) and any(isinstance(a, TracedArray) for a in flatten((args, kwargs))[0]):
        raise located(UnsupportedError(f"a subclass of numpy.ndarray ({cls.__name__}) made of traced arrays is not "
                                       "supported by cofactor: keep the arrays plain, and what the subclass adds "
                                       "beside them"))
    init = inspect.getattr_static(cls, "__init__", None)
    post_init = inspect.getattr_static(cls, "__post_init__", None)
    plain = type(cls).__call__ is not type.__call__ or cls.__new__ is not object.__new__
    if plain or not is_user_function(init) and not (dataclasses.is_dataclass(cls) and is_user_function(post_init)):
        return cls(*args, **kwargs)
    made = object.__new__(cls)
    if is_user_function(init):
        if call(init, made, *args, **kwargs) is not None:
            raise located(TypeError(f"__init__() should return None, not '{type(made).__name__}'"))
        return made
    object.__setattr__(made, "__post_init__", types.MethodType(converted(post_init), made))  # (the generated
    try:                                                                                     # __init__ calls it)
        init(made, *args, **kwargs)
    finally:
        object.__delattr__(made, "__post_init__")
    return made


def _traced_in_a_sequence(fn, args, kwargs):
    """A traced array inside a list or tuple argument of a NumPy function cofactor implements, where
    no argument is an array NumPy's dispatch would find (``np.lexsort([a, b])``: NumPy would convert
    the list to an array); None otherwise."""
    try:
        if fn not in FUNCTIONS:
            return None
    except TypeError:  # unhashable callables
        return None
    sequences = [list(x) if isinstance(x, collections.deque) else x for x in (*args, *kwargs.values())
                 if isinstance(x, (list, tuple, collections.deque))]
    if not sequences or any(isinstance(x, TracedArray) or defers_tracing(x)
                            for x in (*args, *kwargs.values())):
        return None
    leaves = flatten(sequences, is_leaf=defers_tracing)[0]
    if any(defers_tracing(x) for x in leaves):
        return None
    return next((x for x in leaves if isinstance(x, TracedArray)), None)


def _sequence_as_array(x):
    """A list or tuple of traced values given to a ufunc as the array NumPy makes of it (np.array's
    traced version): NumPy's ufunc machinery, finding no traced array among its arguments, would
    convert it itself."""
    if type(x) in (list, tuple) and _traced_leaf(x):
        return CONSTRUCTORS[np.array](x)
    return x


def _is_instance(x: TracedArray, classes) -> bool:
    """``isinstance`` of the value a traced array stands for (a loop's counter is an int); asked for
    TracedArray itself (cofactor's own helpers called from user code), the traced object's."""
    flat = classes if isinstance(classes, tuple) else (classes,)
    if any(isinstance(c, type) and issubclass(TracedArray, c) and c is not object for c in flat):
        return isinstance(x, classes)
    return issubclass(x.stands_for(), classes)


# NumPy's classes that would take traced arrays apart in Python: what to use instead.
_REFUSED_ON_TRACED = {
    np.nditer: "loop over indices (np.ndindex, np.ndenumerate) or use whole-array operations",
    np.poly1d: "evaluate the coefficients with np.polyval(c, x)",
}

_PROTOCOLS = Protocols(call)  # (Python's protocols on the program's objects, for the builtins that use them)

# What converted code calls: the names the rewriting in source.py and control.py emits.
RUNTIME = types.SimpleNamespace(call=call, if_=statements.if_, while_=statements.while_, for_=statements.for_,
                                range=statements.range_, load=statements.load, assign=statements.assign, unbound=statements.unbound,
                                ifexp=statements.ifexp,
                                and_=statements.and_, or_=statements.or_, not_=statements.not_,
                                and_truth=statements.and_truth, or_truth=statements.or_truth,
                                compare_chain=statements.compare_chain,
                                unset=statements.unset, returning=statements.returning, returned=statements.returned, static=statements.static,
                                generated=statements.generated,
                                checked_raise=statements.checked_raise, built=statements.built,
                                before_prints=debug.before_prints, formatted=debug.formatted, fstring=debug.fstring,
                                formatted_percent=debug.formatted_percent, formatted_call=debug.formatted_call,
                                printed_choice=statements.printed_choice)


def _traced_leaf(x) -> bool:
    return any(isinstance(leaf, TracedArray) for leaf in flatten(x)[0])


def _sorted_by_key(items: list, key, reverse) -> list | None:
    """``sorted(items, key=key, reverse=reverse)`` where the keys are traced numbers: Python's stable order of
    them (ties in the items' order, also reversed), the items gathered in it (numbers, or arrays of one
    shape); None where no key is traced (Python's sorted then)."""
    keys = [call(key, item) for item in items]
    if not any(isinstance(k, TracedArray) for k in keys):
        return None
    if not all(isinstance(k, (int, float, np.generic)) or isinstance(k, TracedArray) and k.ndim == 0 and
               k.dtype.kind in "biuf" for k in keys):
        raise located(UnsupportedError("sorted() or list.sort() with a key= that gives traced values other than "
                                       "numbers (a tuple of them, an array) is not supported: give one number"))
    if not items or not all(isinstance(x, TracedArray) or isinstance(x, (int, float, np.generic)) for x in items):
        raise located(UnsupportedError("sorted() or list.sort() by traced keys of items that are not arrays or "
                                       "numbers is not supported (which item goes where is known only at run time): "
                                       "sort an array of indices, np.argsort(keys), and read the items after the call"))
    values = np.stack([np.asarray(k) if not isinstance(k, TracedArray) else k for k in keys])
    n = len(items)
    order = n - 1 - np.argsort(values[::-1], kind="stable")[::-1] if reverse else np.argsort(values, kind="stable")
    stacked = np.stack([x if isinstance(x, TracedArray) else np.asarray(x) for x in items])
    gathered = (stacked if isinstance(stacked, TracedArray) else TracedArray(ops.constant(stacked)))[order]
    return _of_their_kind([gathered[k] for k in range(n)], items)


def _of_their_kind(ordered: list, items) -> list:
    """Sorted ``items`` (``ordered``, NumPy's values) as Python numbers where all of ``items`` were of one
    Python number type (traced or not), else as they are."""
    kinds = {x.weak if isinstance(x, TracedArray) else type(x) for x in items}
    kind = kinds.pop() if len(kinds) == 1 else None
    if kind not in (int, float, complex):
        return ordered
    return [TracedArray(x.value, scalar=True, weak=kind) for x in ordered]


def _start(args, kwargs):
    """enumerate's start, given by position or by name."""
    return (args[1:] or [kwargs.get("start", 0)])[0]


def _kind_of(x) -> str:
    if isinstance(x, TracedArray):
        return f"Python {x.weak.__name__}" if x.weak is not None else f"numpy.{x.dtype}" if x.ndim == 0 else "an array"
    if isinstance(x, np.generic):
        return f"numpy.{x.dtype}"
    return f"Python {type(x).__name__}" if type(x) in (int, float, complex, bool) else type(x).__name__


def _sorted_numbers(items, reverse: bool) -> list:
    """``sorted(items)`` of a 1-d traced array, or of a list of numbers some of which are traced: its
    elements in NumPy's order (NaN last; Python's is undefined), each of its kind (a Python number).
    The list's numbers must be of one kind (a Python number beside traced ones of its kind is traced
    too): which goes where is known only when the compiled function runs."""
    if isinstance(items, list):
        kinds = {_kind_of(x) for x in items}
        items = [x if isinstance(x, TracedArray) else TracedArray(ops.constant(np.asarray(x)), scalar=True,
                                                                 weak=None if isinstance(x, np.generic) else type(x))
                 for x in items] if len(kinds) == 1 else items
        if len(kinds) != 1 or not all(x.ndim == 0 and x.dtype.kind in "biuf" for x in items):
            raise located(UnsupportedError(
                "sorted() or list.sort() of traced values with items of other kinds (here "
                f"{', '.join(sorted(kinds))}): which item goes where is known only when the compiled function runs, "
                "so the items must be numbers of one kind, all NumPy scalars of one dtype or all Python numbers of "
                "one type (np.float64(99.0), float(x[i]))"))
    ordered = np.sort(items if isinstance(items, TracedArray) else np.stack(items))
    return _of_their_kind(list(ordered[::-1] if reverse else ordered), items if isinstance(items, list) else ())


def _text_of(x, how, printed=False):
    """A program's own object as str() (``how``: "__str__") or repr() shows it: its method run as converted
    code, where a traced attribute in an f-string is a clear error, not the trace's text (``printed``:
    an argument of print, which formats the f-string its method returns when the program runs); else ``x``."""
    hook = own_hook(x, how) or own_hook(x, "__repr__")
    if hook is None:
        return x
    trace = context.current()
    before, trace.text_for_print = trace.text_for_print, printed
    try:
        return call(hook, x)
    finally:
        trace.text_for_print = before


def _user_callable(fn):
    """``fn`` converted where it is user code: a function, a bound method, an object with a
    ``__call__`` method, or a ``functools.partial`` of one of them; None where it is not."""
    if is_user_function(fn):
        made = convert(fn, RUNTIME)
        return as_written(fn, RUNTIME.call) if made is fn else made  # (source it could not convert)
    if without_source(fn):
        return as_written(fn, RUNTIME.call)
    if isinstance(fn, types.MethodType) and is_user_function(fn.__func__):
        return types.MethodType(convert(fn.__func__, RUNTIME), fn.__self__)
    if isinstance(fn, functools.partial):
        inner = _user_callable(fn.func)
        return None if inner is None else functools.partial(inner, *fn.args, **fn.keywords)
    method = getattr(type(fn), "__call__", None)
    if not isinstance(fn, type) and is_user_function(method):
        return types.MethodType(convert(method, RUNTIME), fn)
    return None


def converted(fn):
    """``fn`` ready to trace: its calls and control flow (and its callees') go through RUNTIME."""
    user = _user_callable(fn)
    return user if user is not None else convert(fn, RUNTIME)
