"""Control flow on traced values: stablehlo.if and stablehlo.while built from Python callables.

The caller (converted user code) hands over its branch or loop body as functions, plus a
getter and setter for the local variables they assign.  Arrays the body updates in place are
found with a mutation journal and carried too, so ``a[i] = ...`` inside a loop works.
Anything that cannot be carried (a list that changes, a variable whose shape or dtype changes)
raises an error that names the variable and the line.
"""
from __future__ import annotations

import numpy as np

from ..errors import TracingError, located
from ..ir import ops
from ..ir.core import Block, insertion_point
from ..ir.types import TensorType
from . import array as _array
from .array import TracedArray

NUMBERS = (bool, int, float, complex, np.generic)


class Undefined:
    """The value of a variable that has none on some path (assigned in one branch only, or only
    inside a loop); any use raises an error that says so."""

    def __init__(self, name, where):
        object.__setattr__(self, "_message", f"variable '{name}' has no value here: it is assigned {where}")

    def _fail(self, *args, **kwargs):
        raise located(TracingError(object.__getattribute__(self, "_message")))

    __getattr__ = __call__ = __getitem__ = __setitem__ = __bool__ = __iter__ = __len__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __matmul__ = _fail
    __array_ufunc__ = __array_function__ = __index__ = __float__ = __int__ = _fail


UNBOUND = object()  # what the getter reports for a variable not assigned yet


class Journal:
    """Records the arrays written while it is open, with their values before the first write."""

    def __enter__(self):
        self.entries = []
        _array._journals.append(self.entries)
        return self

    def __exit__(self, *exc):
        _array._journals.pop()

    def mutated(self) -> list:
        first = {}
        for arr, old in self.entries:
            first.setdefault(id(arr), (arr, old))
        return list(first.values())


def _lift(x, like=None):
    """An IR value for a carried Python value (a traced array, or a number)."""
    if isinstance(x, TracedArray):
        return x.value
    dtype = like.dtype if like is not None else np.asarray(x).dtype
    return ops.constant(np.asarray(x, dtype=dtype))


def _same_static(a, b) -> bool:
    if a is b:
        return True
    try:
        return not isinstance(a, TracedArray) and not isinstance(b, TracedArray) and type(a) is type(b) \
            and bool(a == b)
    except (TypeError, ValueError):
        return False


def _type_of(x) -> TensorType:
    return x.value.type if isinstance(x, TracedArray) else TensorType(np.shape(x), np.asarray(x).dtype)


def predicate(pred):
    """A scalar i1 value for a traced condition, as NumPy's bool() would read it."""
    if pred.size != 1:
        raise located(ValueError("The truth value of an array with more than one element is ambiguous. "
                                 "Use a.any() or a.all()"))
    v = ops.reshape(pred.value, ())
    if v.dtype != np.bool_:
        zero = ops.constant(np.zeros((), v.dtype))
        v = ops.compare(v, zero, "NE", "FLOAT" if v.dtype.kind in "fc" else "SIGNED")
    return v


def _run_branch(fn, names, initial, set_state, get_state):
    """Trace one branch into a fresh block; returns (block, values after, {array: value after})."""
    block = Block()
    set_state(initial)
    with Journal() as journal, insertion_point(block):
        fn()
    after = get_state()
    written = journal.mutated()
    arrays_after = {id(a): (a, a._value) for a, _ in written}
    for a, old in reversed(written):
        a._value = old
    return block, after, arrays_after, {id(a): old for a, old in written}


def cond(pred: TracedArray, then_fn, else_fn, names, get_state, set_state, line):
    """``if pred: then_fn() else: else_fn()`` on a traced predicate, as one stablehlo.if."""
    p = predicate(pred)
    initial = get_state()
    branches = [_run_branch(fn, names, initial, set_state, get_state) for fn in (then_fn, else_fn)]
    originals = {}
    for *_, olds in branches:
        originals.update(olds)
    arrays = {}
    for _, _, written, _ in branches:
        for key, (a, _) in written.items():
            arrays[key] = a
    outputs = [[] for _ in branches]  # per branch: the IR values the if returns
    finals = list(initial)
    carried_names = []
    for k, name in enumerate(names):
        values = [b[1][k] for b in branches]
        if any(v is UNBOUND or isinstance(v, Undefined) for v in values):
            finals[k] = Undefined(name, f"in only one branch of the if at line {line}") \
                if any(v is not UNBOUND for v in values) else UNBOUND
            continue
        if _same_static(*values):
            finals[k] = values[0]
            continue
        if not all(isinstance(v, (TracedArray, *NUMBERS)) for v in values):
            raise located(TracingError(f"variable '{name}' is a {type(values[0]).__name__} that the two branches "
                                       f"of the if at line {line} set differently; only arrays and numbers can "
                                       "depend on a traced condition"))
        types = [_type_of(v) for v in values]
        if types[0].shape != types[1].shape:
            raise located(TracingError(f"variable '{name}' has shape {types[0].shape} after one branch of the if at "
                                       f"line {line} and {types[1].shape} after the other"))
        dtype = np.result_type(*[v.dtype if isinstance(v, TracedArray) else v for v in values])
        carried_names.append((k, TensorType(types[0].shape, dtype)))
    for b, (block, after, written, _) in enumerate(branches):
        with insertion_point(block):
            for k, t in carried_names:
                outputs[b].append(ops.convert(_lift(after[k], t), t.dtype))
            for key, a in arrays.items():
                outputs[b].append(written[key][1] if key in written else originals[key])
            ops.emit_return(outputs[b])
    results = ops.if_(p, branches[0][0], branches[1][0], [v.type for v in outputs[0]])
    for (k, _), r in zip(carried_names, results):
        finals[k] = TracedArray(r)
    set_state(finals)
    for a, r in zip(arrays.values(), results[len(carried_names):]):
        a.value = r


def _carry_plan(names, values, where):
    """Which names a loop carries (arrays and numbers), and the types they start with."""
    plan = []
    for k, (name, v) in enumerate(zip(names, values)):
        if v is UNBOUND or isinstance(v, Undefined):
            continue
        if isinstance(v, (TracedArray, *NUMBERS)):
            plan.append((k, _type_of(v)))
    return plan


def while_loop(cond_fn, body_fn, names, get_state, set_state, roots, line, attributes=None):
    """``while cond_fn(): body_fn()`` with a traced condition, as one stablehlo.while.

    Carries the assigned ``names`` that hold arrays or numbers, and the arrays in ``roots`` (and
    any other array the body turns out to write).  Numbers whose dtype the body widens (``s = 0``
    then ``s = s + x[i]``) start widened, which NumPy's values allow.
    """
    initial = get_state()
    arrays = list({id(a): a for a in roots}.values())
    widened = {}
    for _ in range(8):  # each retry adds what the previous attempt discovered
        plan = [(k, widened.get(k, t)) for k, t in _carry_plan(names, initial, line)]
        kind, extra = _trace_while(cond_fn, body_fn, names, initial, get_state, set_state, arrays, plan, line,
                                   attributes)
        if kind == "done":
            return
        if kind == "arrays":
            arrays += extra
        else:
            widened.update(extra)
    raise located(TracingError(f"the loop at line {line} could not be traced: its carried values keep changing type"))


class _Retry(Exception):
    """Tracing the loop body found more to carry: ("arrays", [...]) or ("widen", {k: type})."""


def _trace_while(cond_fn, body_fn, names, initial, get_state, set_state, arrays, plan, line, attributes):
    originals = [a._value for a in arrays]
    seen = {"stand_ins": set()}

    def enter(args):
        state = list(initial)
        for (k, _), arg in zip(plan, args):
            state[k] = TracedArray(arg)
            seen["stand_ins"].add(id(state[k]))  # fresh objects: updating one in place is rebinding it
        set_state(state)
        for a, arg in zip(arrays, args[len(plan):]):
            a._value = arg

    def cond_region(*args):
        enter(args)
        c = cond_fn()
        return predicate(c if isinstance(c, TracedArray) else TracedArray(ops.constant(np.array(bool(c)))))

    def body_region(*args):
        enter(args)
        with Journal() as journal:
            body_fn()
        after = seen["after"] = get_state()
        carried = {id(a) for a in arrays} | seen["stand_ins"]
        extra = [a for a, _ in journal.mutated() if id(a) not in carried]
        if extra:
            raise _Retry("arrays", extra)
        widen, outputs = {}, []
        for k, t in plan:
            v = after[k]
            if not isinstance(v, (TracedArray, *NUMBERS)) or _type_of(v).shape != t.shape:
                got = _type_of(v).shape if isinstance(v, (TracedArray, *NUMBERS)) else type(v).__name__
                raise located(TracingError(f"variable '{names[k]}' changes from {t.shape} to {got} in the loop "
                                           f"at line {line}; a loop variable must keep its shape"))
            dtype = np.result_type(t.dtype, v.dtype if isinstance(v, TracedArray) else v)
            if dtype != t.dtype:
                widen[k] = TensorType(t.shape, dtype)
            outputs.append(ops.convert(_lift(v, t), t.dtype))
        if widen:
            raise _Retry("widen", widen)
        carried_names = {k for k, _ in plan}
        for k, (name, before, now) in enumerate(zip(names, initial, after)):
            if k not in carried_names and before is not UNBOUND and not _same_static(now, before):
                raise located(TracingError(
                    f"variable '{name}' ({type(now).__name__}) changes in the loop at line {line}, but only "
                    "arrays and numbers can be loop variables when the loop condition is traced"))
        return outputs + [a._value for a in arrays]

    inits = [ops.convert(_lift(initial[k], t), t.dtype) for k, t in plan] + originals
    try:
        results = ops.while_loop(inits, cond_region, body_region, attributes)
    except _Retry as retry:
        return retry.args
    finally:
        for a, old in zip(arrays, originals):
            a._value = old
        set_state(initial)
    final = list(initial)
    for (k, _), r in zip(plan, results):
        final[k] = TracedArray(r)
    for k, (name, before, now) in enumerate(zip(names, initial, seen["after"])):
        if before is UNBOUND and now is not UNBOUND:
            final[k] = Undefined(name, f"only inside the loop at line {line}, which may run zero times")
    set_state(final)
    for a, r in zip(arrays, results[len(plan):]):
        a.value = r
    return "done", None


def concrete_or_none(x):
    """``x`` as a Python value when it is not traced, else None (for choosing Python control flow)."""
    if isinstance(x, TracedArray):
        return None
    return x


