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
from ..ir.core import Block, current_block, insertion_point
from ..ir.types import TensorType
from . import array as _array
from ..pytree import flatten, unflatten
from .array import TracedArray

NUMBERS = (bool, int, float, complex, np.generic)


class Undefined:
    """The value of a variable that has none on some path (assigned in one branch only, or only
    inside a loop); any use raises an error that says so."""

    def __init__(self, name, where):
        object.__setattr__(self, "_message", f"variable '{name}' has no value here: it is assigned {where} (give it "
                                             "a value before, so that it has one on every path)")

    def _fail(self, *args, **kwargs):
        raise located(TracingError(object.__getattribute__(self, "_message")))

    __getattr__ = __call__ = __getitem__ = __setitem__ = __bool__ = __iter__ = __len__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __matmul__ = _fail
    __array_ufunc__ = __array_function__ = __index__ = __float__ = __int__ = _fail


UNBOUND = object()  # what the getter reports for a variable not assigned yet

# The running flags (i1 scalars, None without a bound) of the loops whose bodies are being traced:
# a bounded loop's iterations past its condition's end still run the body, to keep the state, and
# must not print.
_running: list = []


def running():
    """An i1 scalar that is false where the code being traced runs only to keep a bounded loop's
    trip count, or None where it always runs."""
    flag = None
    for r in filter(None, _running):  # None: a loop without a bound
        flag = r if flag is None else ops.binary("stablehlo.and", flag, r)
    return flag


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
        v = ops.compare(v, zero, "NE")
    return v


def _run_branch(fn, initial, set_state, get_state):
    """Trace one branch into a fresh block; returns (block, variables after, {array id: (array,
    value after)}, {array id: value before}) for the arrays it writes that were made before it."""
    block = Block()
    set_state(initial)
    with Journal() as journal, insertion_point(block):
        fn()
    after = get_state()
    inside = block.defined_values()
    written = [(a, old) for a, old in journal.mutated() if id(old) not in inside]
    arrays_after = {id(a): (a, a._value) for a, _ in written}
    for a, old in reversed(written):
        a._value = old
    return block, after, arrays_after, {id(a): old for a, old in written}


# Names the source conversion gives a function's pending return value: a branch that has not
# returned yet leaves it unset, which is fine (a returned-flag guards every later use).
RETURN_VALUE = "__cf_return_value"
IFEXP = "the value of the conditional expression"  # what cond_value calls the one value it merges


def _variable(name) -> str:
    return {RETURN_VALUE: "the returned value", IFEXP: IFEXP}.get(name, f"variable '{name}'")


def _is_unset(v) -> bool:
    return v is UNBOUND or isinstance(v, Undefined)


def _is_carriable(v) -> bool:
    return isinstance(v, (TracedArray, *NUMBERS))


def _zeros_like(tree):
    leaves, treedef = flatten(tree)
    return unflatten(treedef, [TracedArray(ops.constant(np.zeros(_type_of(x).shape, _type_of(x).dtype)))
                               if _is_carriable(x) else x for x in leaves])


def _merge_leaves(name, values, line, broadcast):
    """How the branches' values of one leaf combine: ("static", value) or ("carry", TensorType).
    With ``broadcast``, shapes that differ broadcast against each other, as np.where's arguments do."""
    if _same_static(*values):
        return "static", values[0]
    if not all(_is_carriable(v) for v in values):
        raise located(TracingError(f"{_variable(name)} holds a {type(values[0]).__name__} that the two branches of "
                                   f"the if at line {line} set differently; only arrays and numbers can depend on "
                                   "a traced condition"))
    shapes = [_type_of(v).shape for v in values]
    try:
        shape = np.broadcast_shapes(*shapes) if broadcast else shapes[0] if shapes[0] == shapes[1] else None
    except ValueError:
        shape = None
    if shape is None:
        raise located(TracingError(f"{_variable(name)} has shape {shapes[0]} after one branch of the if at "
                                   f"line {line} and {shapes[1]} after the other"))
    return "carry", TensorType(shape, np.result_type(*[v.dtype if isinstance(v, TracedArray) else v for v in values]))


def _as_type(x, t: TensorType):
    """The IR value of a carried leaf, converted (and broadcast) to ``t``."""
    v = ops.convert(_lift(x, t), t.dtype)
    return ops.broadcast_in_dim(v, t.shape, range(len(t.shape) - v.type.rank, len(t.shape)))


def cond(pred: TracedArray, then_fn, else_fn, names, get_state, set_state, line, broadcast=False):
    """``if pred: then_fn() else: else_fn()`` on a traced predicate, as one stablehlo.if.

    Variables may hold pytrees (tuples, lists, dicts) of arrays and numbers; their structure
    must be the same after both branches (and, unless ``broadcast``, their shapes).
    """
    p = predicate(pred)
    initial = get_state()
    branches = [_run_branch(fn, initial, set_state, get_state) for fn in (then_fn, else_fn)]
    afters = [list(b[1]) for b in branches]
    originals, arrays = {}, {}
    for _, _, written, olds in branches:
        originals.update(olds)
        arrays.update({key: a for key, (a, _) in written.items()})
    finals = list(initial)
    plans = {}  # name index -> (treedef, [leaf plans])
    for k, name in enumerate(names):
        values = [after[k] for after in afters]
        if any(_is_unset(v) for v in values):
            defined = [v for v in values if not _is_unset(v)]
            if name == RETURN_VALUE and len(defined) == 1:
                for after in afters:
                    after[k] = defined[0] if not _is_unset(after[k]) else _zeros_like(defined[0])
                values = [after[k] for after in afters]
            else:
                earlier = [v for v in values if isinstance(v, Undefined)]  # its first message says more
                finals[k] = earlier[0] if earlier else \
                    Undefined(name, f"in only one branch of the if at line {line}") if defined else UNBOUND
                continue
        flat = [flatten(v) for v in values]
        if flat[0][1] != flat[1][1]:
            raise located(TracingError(f"{_variable(name)} holds differently structured values after the two "
                                       f"branches of the if at line {line}"))
        plans[k] = (flat[0][1], [_merge_leaves(name, pair, line, broadcast) for pair in zip(flat[0][0], flat[1][0])])
    outputs = []
    for b, (block, _, written, _) in enumerate(branches):
        out = []
        with insertion_point(block):
            for k, (_, leaf_plans) in plans.items():
                for leaf, (kind, t) in zip(flatten(afters[b][k])[0], leaf_plans):
                    if kind == "carry":
                        out.append(_as_type(leaf, t))
            out += [written[key][1] if key in written else originals[key] for key in arrays]
            ops.emit_return(out)
        outputs.append(out)
    results = iter(ops.if_(p, branches[0][0], branches[1][0], [v.type for v in outputs[0]]))
    for k, (treedef, leaf_plans) in plans.items():
        finals[k] = unflatten(treedef, [TracedArray(next(results)) if kind == "carry" else value
                                        for kind, value in leaf_plans])
    set_state(finals)
    for a in arrays.values():
        a.value = next(results)


def cond_value(pred: TracedArray, then_fn, else_fn, line):
    """``then_fn() if pred else else_fn()`` on a traced predicate: each arm is traced into its own
    branch of a stablehlo.if, so only the taken one runs; arms of different shapes broadcast, as
    np.where's arguments do."""
    box = [UNBOUND]

    def arm(fn):
        return lambda: box.__setitem__(0, fn())

    cond(pred, arm(then_fn), arm(else_fn), (IFEXP,), lambda: (box[0],), lambda values: box.__setitem__(0, values[0]),
         line, broadcast=True)
    return box[0]


def _loop_plan(names, values):
    """Per carried leaf of the loop's variables: (name index, leaf index, type); and the treedefs."""
    plan, trees = [], {}
    for k, v in enumerate(values):
        if _is_unset(v):
            continue
        leaves, treedef = flatten(v)
        trees[k] = (treedef, leaves)
        plan += [(k, i, _type_of(x)) for i, x in enumerate(leaves) if _is_carriable(x)]
    return plan, trees


def while_loop(cond_fn, body_fn, names, get_state, set_state, roots, line, attributes=None, bound=None,
               runs=False):
    """``while cond_fn(): body_fn()`` with a traced condition, as one stablehlo.while.

    With a ``bound``, the loop runs exactly ``bound`` iterations and each one keeps the old
    state once the condition is false: a static trip count, which reverse-mode autodiff
    needs; iterations past the bound are not run.

    Carries the arrays and numbers held by the assigned ``names`` (also inside tuples, lists and
    dicts), and the arrays in ``roots`` (and any other array the body turns out to write).
    Numbers whose dtype the body widens (``s = 0`` then ``s = s + x[i]``) start widened, which
    NumPy's values allow.

    The body is traced once, unless a carried value widens or the body writes an array that
    ``roots`` missed: then it is traced again, and its Python side effects run again.

    A variable the body assigns first keeps its last value after the loop when the loop is known
    to run (``runs``), as in Python; otherwise it is undefined there.  The function's pending return
    value always keeps it (its returned flag tells whether it was set).
    """
    initial = get_state()
    arrays = list({id(a): a for a in roots}.values())
    widened = {}
    for _ in range(8):  # each retry adds what the previous attempt discovered
        kind, extra = _trace_while(cond_fn, body_fn, names, initial, set_state, get_state, arrays, widened, line,
                                   attributes, bound, runs)
        if kind == "done":
            return
        if kind == "arrays":
            arrays += extra
        else:
            widened.update(extra)
    raise located(TracingError(f"the loop at line {line} could not be traced: its carried values keep changing type"))


def _keep(running, new, old):
    """``new`` while the loop's condition holds, else ``old``."""
    return ops.select(ops.broadcast_in_dim(running, new.shape, ()), new, old)


class _Retry(Exception):
    """Tracing the loop body found more to carry: ("arrays", [...]) or ("widen", {(k, i): type})."""


def _trace_while(cond_fn, body_fn, names, initial, set_state, get_state, arrays, widened, line, attributes,
                 bound, runs):
    plan, trees = _loop_plan(names, initial)
    plan = [(k, i, widened.get((k, i), t)) for k, i, t in plan]
    originals = [a._value for a in arrays]
    seen = {"stand_ins": set(), "late": {}}  # late: name index -> (treedef, leaves) of a variable the body defines

    def state_from(leaf_values):
        """The variables with their carried leaves replaced by ``leaf_values``."""
        state = list(initial)
        leaves = {k: list(tree[1]) for k, tree in trees.items()}
        for (k, i, _), v in zip(plan, leaf_values):
            leaves[k][i] = v
        for k, (treedef, _) in trees.items():
            state[k] = unflatten(treedef, leaves[k])
        return state

    # With a bound, its iteration counter is carried first: Enzyme 0.0.16's reverse mode finds a
    # loop's trip count only from an induction variable in the first position.
    first = 0 if bound is None else 1

    def enter(args):
        args = args[first:]
        stand_ins = [TracedArray(arg) for arg in args[:len(plan)]]
        seen["stand_ins"].update(id(x) for x in stand_ins)  # fresh: updating one in place is rebinding it
        set_state(state_from(stand_ins))
        for a, arg in zip(arrays, args[len(plan):]):
            a._value = arg

    def condition():
        c = cond_fn()
        return predicate(c if isinstance(c, TracedArray) else TracedArray(ops.constant(np.array(bool(c)))))

    def cond_region(*args):
        if bound is not None:
            return ops.compare(args[0], ops.constant(np.array(bound, np.int64)), "LT")
        enter(args)
        return condition()

    def body_region(*args):
        enter(args)
        running = condition() if bound is not None else None
        block = current_block()
        _running.append(running)
        try:
            with Journal() as journal:
                body_fn()
        finally:
            _running.pop()
        after = seen["after"] = get_state()
        carried = {id(a) for a in arrays} | seen["stand_ins"]
        written = journal.mutated()
        seen["written"] = {id(a) for a, _ in written}
        inside = block.defined_values()  # an array made by the body is not carried
        extra = [a for a, old in written if id(a) not in carried and id(old) not in inside]
        if extra:
            for a, old in written:
                a._value = old
            raise _Retry("arrays", extra)
        widen, outputs = {}, []
        after_leaves = {}
        for k, (treedef, before) in trees.items():
            leaves, after_def = flatten(after[k]) if not _is_unset(after[k]) else (None, None)
            if after_def != treedef:
                raise located(TracingError(f"variable '{names[k]}' changes structure in the loop at line {line}"))
            for i, (old, new) in enumerate(zip(before, leaves)):
                if not _is_carriable(old) and not _same_static(old, new):
                    raise located(TracingError(
                        f"variable '{names[k]}' holds a {type(old).__name__} that changes in the loop at line "
                        f"{line}; only arrays and numbers can change when the loop condition is traced"))
            after_leaves[k] = leaves
        for k, i, t in plan:
            v = after_leaves[k][i]
            if not _is_carriable(v) or _type_of(v).shape != t.shape:
                got = _type_of(v).shape if _is_carriable(v) else type(v).__name__
                raise located(TracingError(f"{_variable(names[k])} changes from {t.shape} to {got} in the loop "
                                           f"at line {line}; a loop variable must keep its shape"))
            dtype = np.result_type(t.dtype, v.dtype if isinstance(v, TracedArray) else v)
            if dtype != t.dtype:
                widen[(k, i)] = TensorType(t.shape, dtype)
            outputs.append(ops.convert(_lift(v, t), t.dtype))
        if widen:
            raise _Retry("widen", widen)
        outputs += [a._value for a in arrays]
        if bound is not None:
            # Past the condition's end, every iteration keeps the state it was given.
            outputs = [ops.binary("stablehlo.add", args[0], ops.constant(np.array(1, np.int64)))] + \
                [_keep(running, new, old) for new, old in zip(outputs, args[1:])]
        # A variable first assigned here is carried on from zeros: the body does not read it before.
        for k, (name, before, now) in enumerate(zip(names, initial, after)):
            if _is_unset(before) and not _is_unset(now) and (runs or name == RETURN_VALUE):
                leaves, treedef = flatten(now)
                seen["late"][k] = (treedef, leaves)
                for new in [_lift(x) for x in leaves if _is_carriable(x)]:
                    old = block.add_argument(new.type)
                    outputs.append(new if bound is None else _keep(running, new, old))
        return outputs

    inits = [ops.convert(_lift(trees[k][1][i], t), t.dtype) for k, i, t in plan] + originals
    if bound is not None:
        inits.insert(0, ops.constant(np.array(0, np.int64)))
    try:
        results = ops.while_loop(inits, cond_region, body_region, attributes)[first:]
    except _Retry as retry:
        return retry.args
    finally:
        for a, old in zip(arrays, originals):
            a._value = old
        set_state(initial)
    final = state_from([TracedArray(r) for r in results[:len(plan)]])
    late = iter(results[len(plan) + len(arrays):])
    results = results[:len(plan) + len(arrays)]
    for k, (name, before, now) in enumerate(zip(names, initial, seen["after"])):
        if k in seen["late"]:
            treedef, leaves = seen["late"][k]
            final[k] = unflatten(treedef, [TracedArray(next(late)) if _is_carriable(x) else x for x in leaves])
        elif isinstance(now, Undefined):
            final[k] = now
        elif _is_unset(before) and not _is_unset(now):
            final[k] = Undefined(name, f"only inside the loop at line {line}, which may run zero times")
    set_state(final)
    for a, r in zip(arrays, results[len(plan):]):
        if id(a) in seen["written"]:  # an array the loop only reads keeps its value
            a.value = r
    return "done", None
