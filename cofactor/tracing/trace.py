"""Tracing a Python function into a StableHLO module.

Array leaves of the arguments become function arguments (traced by shape
and dtype), and so do Python floats and complex numbers the caller wrapped in
``PythonNumber`` (traced as weak 0-d values, NEP 50); every other leaf is a
compile-time constant handed to the function unchanged.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import sys
import types
from dataclasses import dataclass

import numpy as np

from ..errors import CofactorError, TracingError, UnsupportedError, internal, is_internal, located, location_of, origin
from ..ir import ops
from ..ir.core import Function, Module, OpBudgetExceeded, OutOfScope, insertion_point
from ..ir.types import TensorType, is_supported_dtype
from ..pytree import TreeDef, flatten, unflatten
from .array import TracedArray, constant, defers_tracing
from .checks import Checks, RaisesAlways
from .context import STATEFUL_TYPES, Options, TraceContext, tracing
from .views import laid_out, layout_of


def is_array(x) -> bool:
    """Leaves traced by shape and dtype: NumPy arrays and scalars, and anything whose class has
    ``__array__`` and that has a ``shape`` and a ``dtype`` (device arrays).  (The class's: asking
    the object would run a ``__getattr__`` of the user's, a config object's that reads a dict.)"""
    if isinstance(x, (np.ndarray, np.generic)):
        return True
    return hasattr(type(x), "__array__") and hasattr(x, "shape") and hasattr(x, "dtype")


class PythonNumber:
    """A Python float or complex argument traced as a value: the function sees a weak traced number
    (NEP 50: ``x32 * dt`` stays float32), so that calls with other values share one compile."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    @property
    def shape(self):
        return ()

    @property
    def dtype(self):
        return np.dtype(np.float64 if type(self.value) is float else np.complex128)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.value, dtype=dtype)


def argument_type(x) -> TensorType:
    if not is_supported_dtype(x.dtype):
        raise TracingError(f"arguments of dtype {x.dtype} are not supported by cofactor")
    if isinstance(x, np.ndarray) and type(x) not in (np.ndarray, np.memmap):  # (their operators are their own)
        raise UnsupportedError(f"arguments of a subclass of numpy.ndarray ({type(x).__module__}.{type(x).__name__}: "
                               "a masked array's mask, np.matrix's *) are not supported by cofactor: pass "
                               "np.asarray(x), and what the subclass adds beside it")
    return TensorType(np.shape(x), x.dtype)


@dataclass
class Trace:
    module: Module
    params: list | None    # for each function argument, the index of its array leaf (None: one each)
    out_treedef: TreeDef
    out_types: list        # TensorType of each output leaf (write-backs not included)
    writebacks: list       # (array leaf index, result index): arguments the function mutated
    host_inputs: list      # HostInputs: extra arguments after the arrays, fetched at every call
    implicit_writebacks: list  # (host input index, result index): globals and cells the function wrote
    guards: list           # implicit.Guards: what the globals and cells it read must be at a call
    checks: Checks | None  # its run-time raises and warnings, whose outputs come last (checks.py)
    extents: list          # (output leaf, [(axis, result index of its length)], whether a list of its rows):
    # outputs cut to run-time lengths
    mesh: object = None    # the device mesh the program's sharding constraints name (runtime/sharding.py)
    stores: list = dataclasses.field(default_factory=list)  # outside.Stores: what the function left in objects
    # from outside it, set after each call
    returned: list = dataclasses.field(default_factory=list)  # (output leaf, outside.Outside): objects from
    # outside it that the function returns, themselves (the leaves of out_types are the others)
    without_adjoints: list = dataclasses.field(default_factory=list)  # TraceContext.without_adjoints


def output_value(leaf):
    if isinstance(leaf, TracedArray):
        return leaf.value
    if defers_tracing(leaf):
        raise UnsupportedError("an array whose length is known only at run time (x[mask], np.unique, a slice with "
                               "traced bounds) cannot leave a function cofactor differentiates or calls inside "
                               "another: return it from the compiled function itself, or reduce it first")
    if type(leaf) is int and not -2 ** 63 <= leaf < 2 ** 64:
        raise UnsupportedError(f"the function returned the Python int {leaf}, past int64's range: compiled code returns "
                               "its numbers as NumPy values (return it as a float, or compute it after the call)")
    if isinstance(leaf, (bool, int, float, complex)) or is_array(leaf):
        return constant(np.asarray(leaf)).value
    raise TracingError(f"the function returned a {type(leaf).__name__}, which is not an array or a "
                       "number (outputs must be pytrees of arrays)")


def trace(fn, args: tuple, kwargs: dict, options: Options = Options()) -> Trace:
    """Trace ``fn``; an array passed twice (the same object) is one argument, as it is one array.
    A trace that carried a while loop's Python numbers as traced values and then failed (the code
    after the loop needs them as numbers: ``np.zeros(k)``) is traced again without doing so."""
    try:
        return _trace(fn, args, kwargs, options)
    except _Promoted:
        return _trace(fn, args, kwargs, dataclasses.replace(options, promote=False))


class _Promoted(Exception):
    """A trace that promoted Python numbers (TraceContext.promoted) failed."""


def _trace(fn, args: tuple, kwargs: dict, options: Options) -> Trace:
    from . import outside  # (it imports this module)
    leaves, treedef = flatten((args, kwargs))
    arrays = [leaf for leaf in leaves if is_array(leaf)]
    first = {}
    params = sorted({first.setdefault(id(a), k) for k, a in enumerate(arrays)})
    module = Module()
    main = module.add(Function("main", [argument_type(arrays[k]) for k in params]))
    context = TraceContext(module, main, options)
    context.root_frame = sys._getframe()  # where the scans of the program's frames stop
    with _retried_if_promoted(context), tracing(context), insertion_point(main.body), _errors_for_users(context, fn):
        context.checks = checks = Checks(context)
        # A NumPy scalar argument is a value, not storage: an in-place operator on it rebinds a local name.
        traced_by_id = {id(arrays[k]): laid_out(_argument(arrays[k], v), layout_of(arrays[k]))
                        for k, v in zip(params, main.arguments)}
        context.arguments.update(id(t) for t in traced_by_id.values())
        context.argument_arrays = {id(arrays[k]): (k, traced_by_id[id(arrays[k])]) for k in params}
        context.argument_leaves = {id(traced_by_id[id(leaf)]): i for i, leaf in reversed(list(enumerate(leaves)))
                                   if is_array(leaf)}
        traced = [traced_by_id[id(leaf)] if is_array(leaf) else _stand_in(leaf, i)
                  for i, leaf in enumerate(leaves)]
        inputs = [(k, traced_by_id[id(arrays[k])]) for k in params]
        originals = [t.value for _, t in inputs]
        t_args, t_kwargs = unflatten(treedef, traced)
        fn = _reached_from_outside(fn, leaves, traced, (t_args, t_kwargs), (args, kwargs))
        try:
            out_leaves, out_treedef = flatten(fn(*t_args, **outside.defaults_read(fn, t_args, t_kwargs)),
                                              is_leaf=lambda x: defers_tracing(x) or outside.is_outside(x))
        except RaisesAlways:  # every call raises: the program computes what the message shows
            out_leaves, out_treedef = flatten(None)
        except BaseException as error:  # (raised after the run-time checks before it, if none fires)
            if not isinstance(error, Exception) or context.promoted or not checks.waits(error):
                outside.settle(context, failed=True)  # (promoted: maybe not the program's error: traced again)
                raise
            out_leaves, out_treedef = flatten(None)
        try:
            stored = outside.settle(context)
        except UnsupportedError as e:  # (found after the function returned: named by where it is defined)
            raise UnsupportedError(f"{e}{_defined(fn)}") from None
        # An object from outside the function that it returns (self, a list it appends to) is that object.
        returned = [(k, context.outside[id(leaf)]) for k, leaf in enumerate(out_leaves) if outside.is_outside(leaf)]
        out_leaves = [leaf for leaf in out_leaves if not outside.is_outside(leaf)]
        out_values, extents = _output_values(out_leaves)
        writebacks = []
        for position, ((k, array), original) in enumerate(zip(inputs, originals)):
            if array.value is not original:
                writebacks.append((k, len(out_values)))
                # Donate the argument's buffer to the updated value: no copy, as NumPy updates in place.
                main.arg_attributes[position] = {"tf.aliasing_output": f"{len(out_values)} : i32"}
                out_values.append(checks.unless_fired(original, array.value))
        implicit_writebacks = []
        for read in context.implicit.values():
            if read.array.value is not read.start:
                implicit_writebacks.append((read.start.index - len(params), len(out_values)))
                out_values.append(checks.unless_fired(read.start, read.array.value))
        stores = outside.results(stored, lambda array: out_values.append(output_value(array)) or len(out_values) - 1)
        out_values += checks.outputs()
        ops.return_(out_values)
    main.result_types = [v.type for v in out_values]
    return Trace(module, None if len(params) == len(arrays) else params, out_treedef,
                 main.result_types[:len(out_leaves)], writebacks, context.host_inputs, implicit_writebacks,
                 list(context.guards.values()), checks.finish(main.body), extents, context.mesh, stores, returned,
                 context.without_adjoints)


def _output_values(out_leaves):
    """The results for the output leaves, then the run-time lengths of those that have them (an
    array with run-time extents returns its data moved to the front, and is cut after the call)."""
    values, cut = [], []
    for k, leaf in enumerate(out_leaves):
        if defers_tracing(leaf):
            data, lengths = leaf.output()
            values.append(data)
            cut.append((k, lengths))
        else:
            values.append(output_value(leaf))
    extents = []
    for k, lengths in cut:
        extents.append((k, [(axis, len(values) + j) for j, (axis, _) in enumerate(lengths)],
                        getattr(type(out_leaves[k]), "delivered_as_list", False)))
        values += [length for _, length in lengths]
    return values, extents


@contextlib.contextmanager
def _retried_if_promoted(context):
    try:
        yield
    except Exception as e:  # noqa: BLE001  (the trace without promotion raises it again if it is the program's)
        if context.promoted:
            raise _Promoted() from e
        raise


@contextlib.contextmanager
def _errors_for_users(context, fn):
    """What escapes a trace: cofactor's errors as they are, the user's own exceptions as they are,
    a value that escaped its branch or loop and a trace past its operation budget as errors that
    say where and why (the function ``fn``, past its last line), and anything else (a bug in
    cofactor) as an InternalError."""
    try:
        yield
    except OutOfScope as e:
        raise TracingError(
            f"a value computed inside {e.label or 'a branch or loop'} is used outside it, here; it got out through a "
            "place cofactor does not carry out of a branch or loop: a global variable, or an object or container "
            "held deeper than cofactor looks (assign it to a local variable, or return it from a function)"
            + _where(e)) from None
    except OpBudgetExceeded as e:
        around = e.loops or list(context.unrolled.items())
        loops = sorted({line for line, _ in around})
        whys = dict(sorted((line, why) for line, why in around if why))
        raise TracingError(
            f"the traced program passed {e.args[0] - 1} operations, cf.jit's op_budget: the function would compile "
            "for minutes or run out of memory" + _recursion(e)
            + (f"; the Python loops at lines {', '.join(map(str, loops))} run unrolled (each iteration traced anew):"
               " give them a trip count known only at run time (a traced range), or vectorize them" if loops else "")
            + "".join(f"; the loop at line {line} could not be one rolled loop because {why}"
                      for line, why in whys.items())
            + "; or raise the budget, cf.jit(f, op_budget=...)" + (_where(e) or _defined(fn))) from None
    except Exception as e:
        kind = origin(e)
        if kind == "internal":
            raise internal(e, "tracing") from e
        if kind == "deliberate" and not isinstance(e, CofactorError):
            raise located(e, location_of(e)) from None
        raise


def _recursion(error) -> str:
    """Why a trace that ran out of operations in a recursion did: the deepest user function it calls
    itself in, if one is ten or more calls deep."""
    depth, tb = {}, error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if not code.co_name.startswith("__cf") and not is_internal(code.co_filename):
            depth[code] = depth.get(code, 0) + 1
        tb = tb.tb_next
    code, calls = max(depth.items(), key=lambda item: item[1], default=(None, 0))
    if calls < 10:
        return ""
    return (f"; the function {code.co_name} (line {code.co_firstlineno}) calls itself {calls} deep: a recursion whose "
            "stop condition reads a traced value recurses on both branches of that if when traced (each branch is "
            "traced), so it does not stop: write it as a loop")


def _defined(fn) -> str:
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return f"\n  in user code at {code.co_filename}:{code.co_firstlineno}: the function {code.co_name}" if code else ""


def _where(error) -> str:
    where = location_of(error)
    return f"\n  in user code at {where}" if where else ""


def _reached_from_outside(fn, leaves, traced, call, given):
    """Make what ``fn`` can reach from outside it outside state (outside.py): its object arguments,
    the lists and dicts among its arguments (``call``: its ``(args, kwargs)`` as traced; ``given``:
    as the trace got them), the ``self`` of a method and its default arguments; returns the function
    to call, with a partial's bound arguments read as closure variables are."""
    from . import implicit, outside  # (they import this module)
    for i, (leaf, stand_in) in enumerate(zip(leaves, traced)):
        if stand_in is leaf and not implicit.is_constant(leaf):
            outside.reached(leaf, f"argument {i}")
        if isinstance(leaf, types.MethodType):  # (a bound method given to a transform: cf.grad(net.loss))
            outside.reached(leaf.__self__, f"the self of argument {i}")
    fn = _partial_read(fn)
    bound = fn
    while isinstance(bound, functools.partial):
        bound = bound.func
    if isinstance(bound, types.MethodType):
        outside.reached(bound.__self__, "self")
    outside.defaults_reached(bound)
    outside.arguments_reached(call, given)
    return fn


def _partial_read(fn):
    """A functools.partial's bound arguments read as closure variables are (implicit.py): an array
    is an input, read at every call; a number a guarded constant; an object outside state."""
    from . import implicit
    if not isinstance(fn, functools.partial):
        return fn
    args = [implicit.read(a, f"the partial's argument {k}", ("partial", id(fn), k), lambda k=k: fn.args[k])
            for k, a in enumerate(fn.args)]
    keywords = {name: implicit.read(v, f"the partial's argument {name}", ("partial", id(fn), name),
                                    lambda name=name: fn.keywords[name]) for name, v in fn.keywords.items()}
    return functools.partial(_partial_read(fn.func), *args, **keywords)


def _argument(leaf, value) -> TracedArray:
    if type(leaf) is PythonNumber:
        return TracedArray(value, scalar=True, weak=type(leaf.value))
    return TracedArray(value, scalar=isinstance(leaf, np.generic))


def _stand_in(leaf, index):
    convert = STATEFUL_TYPES.get(type(leaf))
    return convert(leaf, lambda leaves: leaves[index]) if convert else leaf
