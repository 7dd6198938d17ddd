"""Control flow on traced values: stablehlo.if and stablehlo.while built from Python callables.

The caller (converted user code) hands over its branches or loop body as functions, with a
getter and a setter for the local variables they assign.  A region (a branch, a loop body) can
change two kinds of things, and both are carried through the stablehlo op:

- *storage*: an array made before the region and written in it (``a[i] = v``, ``a += 1``,
  a write through a view).  A mutation journal finds them; their new values become results of
  the op, and every variable and view that sees the array sees them.
- *bindings*: what the region's variables hold, and what the slots of the lists, dicts, objects
  and closure cells reachable from the program's frames hold (heap.py finds the slots that
  change).  Their objects are described by a layout (carry.py) that keeps NumPy's identities:
  an array rebound in one branch and updated in place in the other, an alias or a view taken
  before a loop, two variables bound to one array, all end up as NumPy would leave them.

A loop's body is traced with the layout of its variables at the top of an iteration; a body
that leaves them in another layout (a variable it rebinds, an array written that was not
carried, a number that widens) is traced again with the joined layout.  Anything that cannot be
carried raises an error that names the variable and the line.  A loop's condition is a region
too: one that writes is moved to the end of the body (while_loop).
"""
from __future__ import annotations

import contextlib
import types

import numpy as np

from ..errors import ConcretizationError, TracingError, UnsupportedError, in_user_try, located, origin, user_line_of
from ..ir import loops, ops
from ..ir.core import Block, current_block, insertion_point
from ..ir.types import TensorType
from ..pytree import flatten, unflatten
from . import checks, context, outside
from .array import Journal, TracedArray, defers_tracing, make_stale, serial_now
from .trace import is_array
from .carry import (UNBOUND, Choice, Fitting, KindError, Late, LayoutError, Number, OutOfRange, Undefined, Unset,
                    _wider, Worlds, as_number, choose_mirrors, expect_made, export, is_number, is_unset, join,
                    number_type, shared_owners)
from .heap import Heap, Scope
from .path_numbers import PathNumber
from .views import ReadOnly, Transpose

# Names the source conversion gives a function's pending return value: a branch that has not
# returned yet leaves it unset, which is fine (a returned-flag guards every later use).
RETURN_VALUE = "__cf_return_value"
RETURNED = "__cf_returned"  # and the flag that says it was set (a return or a run-time raise ran)
IFEXP = "the value of the conditional expression"  # what cond_value calls the one value it merges
_RETRIES = 10


def undefined(name, where) -> Undefined:
    """The value of a variable with none here (assigned ``where``): any use raises an error that says so."""
    return Undefined(f"{_variable(name)} has no value here: it is assigned {where} (give it a value before, so "
                     "that it has one on every path)")


def _variable(name) -> str:
    if not isinstance(name, str):
        return name.describe()
    return {RETURN_VALUE: "the returned value", IFEXP: IFEXP}.get(name, f"variable '{name}'")


def running():
    """An i1 scalar that is false where the code being traced runs only to keep a bounded loop's
    trip count, or None where it always runs."""
    flag = None
    for r in filter(None, context.current().running):  # None: a loop without a bound
        flag = r if flag is None else ops.binary("stablehlo.and", flag, r)
    return flag


class NumberOutOfRange(TracingError):
    """A region's variable is a Python int on some paths that the NumPy dtype it has on others cannot
    hold (carry.OutOfRange); a loop whose first trip settles it runs that trip before the rest."""


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


def known_truth(pred) -> bool | None:
    """The truth of a one-element condition whose value is a constant of the trace, else None."""
    literal = None if pred.lens is not None else getattr(pred.value.owner, "literal", None)
    return None if literal is None else bool(np.asarray(literal).reshape(()))


def slot_value(slot):
    """What a slot holds, as traced code sees it: an array read through it as an implicit input
    (``self.h`` of an object from outside) is that input's traced array."""
    value = slot.get()
    read = context.current().implicit.get(id(value))  # (each is alive while traced: its id is its own)
    if read is not None:
        return read.array
    if isinstance(value, (np.ndarray, int, float, complex)) and outside.is_outside(slot.container) and \
            not isinstance(slot.container, types.CellType):  # (an array or number held there, read now: an input
        # or a guarded constant, as code reading the slot would see it; not the number this trace first saw)
        return outside.read_slot(slot.container, slot.key, value,
                                 "item" if isinstance(slot.container, (dict, list, tuple)) else "attribute")
    return value


class Bindings:
    """The bindings a region may change: the converted code's variables (``names``, read with
    ``get`` and written with ``set_``), and the container slots found to change (``slots``)."""

    def __init__(self, names, get, set_, scope: Scope, where: str, line: int):
        self.names, self.get, self.set_, self.where, self.line = tuple(names), get, set_, where, line
        self.heap = Heap(scope, set(self.names), context.current())
        self.slots: list = []
        self.start = serial_now()  # arrays made from here on are the region's own

    def labels(self) -> list:
        return [*self.names, *self.slots]

    def values(self) -> list:
        return [*self.get(), *(slot_value(s) for s in self.slots)]

    def assign(self, values):
        self.set_(list(values[:len(self.names)]))
        for slot, v in zip(self.slots, values[len(self.names):]):
            slot.set(v)

    def add_slots(self, slots):
        """Carry these slots too (found changed by a region); returns whether any is new."""
        known = {(id(s.container), s.key) for s in self.slots}
        new = [s for s in slots if (id(s.container), s.key) not in known]
        self.slots += new
        return bool(new)

    def adoptable(self, states) -> set:
        """ids of the owners made before the region that may be carried as values: no frame,
        container or argument sees them, and in each state at most one leaf holds them (then
        replacing the object by a copy of its value cannot be told apart).  The array of a global or
        a cell never is, even one first read inside the region: any code can read it again by name."""
        implicit = {id(i.array) for i in context.current().implicit.values()}
        result, refused = set(), set(self.heap.observable) | implicit
        for state in states:
            count = {}
            for leaf in flatten(list(state))[0]:
                for owner in leaf.owners() if isinstance(leaf, TracedArray) else ():
                    if owner.serial < self.start:  # a view or an Either made in the region counts too
                        count[id(owner)] = count.get(id(owner), 0) + (1 if leaf is owner else 2)
                        if leaf is owner and not owner.scalar:
                            result.add(id(owner))
            refused |= {k for k, n in count.items() if n > 1}
        return result - refused

    def fail(self, k, error: LayoutError) -> TracingError:
        variable = _variable(self.labels()[k])
        if isinstance(error, OutOfRange):
            return located(NumberOutOfRange(
                f"{variable} cannot be carried through {self.where}: it is {error} (give it a first value of that "
                "dtype: np.iinfo(dtype).min or .max, or an element of the array)"))
        if error.types is None:
            return located(TracingError(f"{variable} cannot be carried through {self.where}: it holds {error}"))
        a, b = error.types
        what, one, other = ("shape", a.shape, b.shape) if a.shape != b.shape else ("dtype", a.dtype, b.dtype)
        if self.where.startswith("the if"):
            message = f"{variable} has {what} {one} after one branch of {self.where} and {other} after the other"
        else:
            message = (f"{variable} changes from {what} {one} to {other} in {self.where}; a loop variable must keep "
                       f"its {what}")
        return located(TracingError(message))


class Layout:
    """One node per leaf of each binding (carry.py), and each binding's tree structure."""

    def __init__(self, bindings: Bindings, state, start, adoptable):
        self.bindings, self.start, self.adoptable = bindings, start, adoptable
        self.trees, self.nodes, memo = [], [], {}
        self.unset_somewhere = set()  # bindings some state leaves without a value (None, () have no leaf to say so)
        for value in state:
            leaves, treedef = flatten(value)
            self.trees.append(treedef)
            self.nodes.append([export(x, start, memo) for x in leaves])

    def fit(self, state, emit: bool):
        """The Fitting of ``state``, or (binding, leaf, value, ...) where it does not fit (leaf None:
        the binding's structure).  A state whose Eithers are entangled is fitted world by world."""
        self.choose_mirrors()
        try:
            worlds = Worlds.of(state, self.start)
        except LayoutError as e:
            raise located(TracingError(f"the variables of {self.bindings.where} cannot be carried: they hold {e}")) \
                from None
        if worlds is None:
            return self._fit(state, emit)
        fits = []
        for world in worlds.states(state):
            f, miss = self._fit(world, emit)
            if miss is not None:
                return None, miss
            fits.append(f)
        return worlds.merged(fits, emit), None

    def _fit(self, state, emit: bool):
        f = Fitting(self.start, self.adoptable, emit, shared_owners(flatten(list(state))[0]))
        for k, (value, treedef) in enumerate(zip(state, self.trees)):
            leaves, got = flatten(value)
            if got != treedef:
                if not is_unset(value):
                    return None, (k, None, value, f.memo, state)
                self.unset_somewhere.add(k)
                leaves = [value] * len(self.nodes[k])  # no value yet: each leaf of the layout has none
            for i, (node, x) in enumerate(zip(self.nodes[k], leaves)):
                try:
                    if not f.fit(node, x):
                        return None, (k, i, x, f.memo, state)
                except LayoutError as e:
                    raise self.bindings.fail(k, e) from None
        return f, None

    def choose_mirrors(self):
        """Give the Choices their mirrors (a Choice among views gets a node of its own: carry.py)."""
        choose_mirrors([node for nodes in self.nodes for node in nodes])

    def join(self, miss):
        """Grow the layout where ``miss`` did not fit.  The leaves that shared the node and hold the
        same object in the state that missed keep sharing the grown node: variables that hold one
        array on every path (b = a in both arms) stay one array after the region."""
        k, i, x, memo, state = miss
        if i is None:  # a variable with no value yet gets one: its layout takes the value's structure
            if not all(isinstance(node, Unset) for node in self.nodes[k]):
                raise self.bindings.fail(k, LayoutError(_structures_differ(self.trees[k], flatten(x)[1])))
            marker = self.nodes[k][0].marker if self.nodes[k] else None
            self.unset_somewhere.add(k)
            leaves, self.trees[k] = flatten(x)
            self.nodes[k] = [Late(export(leaf, self.start, dict(memo)), marker) for leaf in leaves]
            return
        old = self.nodes[k][i]
        adoptable = self.adoptable - shared_owners(flatten(list(state))[0])  # no longer one leaf's alone
        try:
            new = join(old, x, self.start, adoptable, memo)
        except LayoutError as e:
            raise self.bindings.fail(k, e) from None
        if new is old:  # x is of the node's kind, but other leaves hold another array in it: this leaf
            new = Choice([old, export(x, self.start, dict(memo))])  # holds theirs on some paths, its own on others
        for k2, (nodes, value) in enumerate(zip(self.nodes, state)):
            leaves, got = flatten(value)
            if got == self.trees[k2]:
                for i2, (node, leaf) in enumerate(zip(nodes, leaves)):
                    if node is old and leaf is x:
                        nodes[i2] = new
        self.nodes[k][i] = new

    def widen(self, widen: dict):
        """Replace the numbers that must widen, wherever they sit (also among a Choice's alternatives)."""
        def wider(node):
            if isinstance(node, Choice):
                node.alternatives = [wider(a) for a in node.alternatives]
                Choice.__init__(node, node.alternatives)  # its alternatives must still share one type
            elif isinstance(node, Late):
                node.node = wider(node.node)
            return widen.get(node, node)
        try:
            self.nodes = [[wider(node) for node in nodes] for nodes in self.nodes]
        except LayoutError as e:
            raise self.bindings.fail(next(k for k, nodes in enumerate(self.nodes)
                                          if any(n in widen for node in nodes for n in node.nodes())), e) from None

    def fit_joined(self, states):
        """Join until every state fits (without emitting)."""
        for _ in range(100):
            for state in states:
                f, miss = self.fit(state, emit=False)
                if miss is not None:
                    self.join(miss)
                    break
                if f.widen:
                    self.widen(f.widen)
                    break
            else:
                return
        raise located(TracingError(f"the variables of {self.bindings.where} could not be carried"))

    def numbers(self, state):
        """(binding, leaf index, Number node, leaf) of each leaf of ``state`` that a Number carries."""
        for k, (value, nodes) in enumerate(zip(state, self.nodes)):
            leaves, got = flatten(value)
            if got != self.trees[k]:
                continue
            for i, (node, x) in enumerate(zip(nodes, leaves)):
                node = node.node if isinstance(node, Late) else node
                if isinstance(node, Number) and not node.arms and is_number(x):
                    yield k, i, node, x

    def check_strong_numbers(self, states):
        """A NumPy scalar of one dtype on one path and another on the other: the variable's dtype
        after the if would be the path's (a loop's number may widen: its dtype is the last
        iteration's)."""
        for state in states:
            for k, _, node, x in self.numbers(state):
                type_, weak = number_type(x)
                if weak is None and type_.dtype != node.type.dtype:
                    raise self.bindings.fail(k, LayoutError("", (type_, TensorType(type_.shape, node.type.dtype))))

    def as_numpy_where(self, state, nodes: set) -> list:
        """``state`` with the PathNumbers of ``nodes`` made the NumPy scalars they are on every path
        that reaches it (a loop known to run, whose body leaves them NumPy scalars)."""
        state = list(state)
        for k, i, node, x in list(self.numbers(state)):
            if id(node) in nodes and isinstance(x, PathNumber):
                leaves, tree = flatten(state[k])
                leaves[i] = x.as_numpy()
                state[k] = unflatten(tree, leaves)
        return state

    def order(self) -> list:
        """Every node of the layout once, in the order their payloads are carried."""
        seen = {}
        for nodes in self.nodes:
            for node in nodes:
                for n in node.nodes():
                    seen.setdefault(id(n), n)
        return list(seen.values())

    def types(self) -> list:
        return [t for node in self.order() for t in node.own_types()]

    def payload(self, f: Fitting) -> list:
        return f.values(self.order())

    def build(self, values) -> list:
        values, own = iter(values), {}
        for node in self.order():
            own[id(node)] = [next(values) for _ in node.own_types()]
        built = {}
        return [unflatten(tree, [node.build(own, built) for node in nodes])
                for tree, nodes in zip(self.trees, self.nodes)]


def _run_arm(bindings: Bindings, fn, initial, where):
    """Trace one branch into a fresh block; returns (block, bindings after, slots after, {owner id:
    (owner, value after)} for the owners made before the if that it writes, the slots it changed,
    whether it raises).

    NumPy's error (or Python's) from an operation in the branch is NumPy's only where the branch
    runs: the branch becomes a raise checked at run time (checks.py), at the line that raised, and
    leaves the state as it found it (what it did before the error is undone, but for the run-time
    checks it met, one of which may fire first; its path ends there, so a variable it would have
    assigned after the error is not missing on it)."""
    block = Block(label=where)
    bindings.assign(initial)
    raises = False
    with insertion_point(block), Journal() as journal:
        try:
            with _traced_anyway(f"a branch of {where}", defer=True):
                fn()
        except _RaisesWhenTaken as raised:
            met = context.current().checks  # (a check the branch met before the error fires first: its write stays)
            state = met.state.value if met is not None else None
            journal.undo()
            bindings.heap.restore()
            bindings.assign(initial)
            if met is not None:
                met.state.value = state
            checks.reached_raise(lambda: raised.error, raised.where)
            raises = True
    names_after = list(bindings.get())
    changed = bindings.heap.changed_slots()
    slots_after = {(id(s.container), s.key): s.get() for s in changed}
    bindings.heap.check_sizes(where, bindings.line)
    bindings.heap.restore()
    written = [(a, old) for a, old in journal.written() if a.serial < bindings.start]
    after = {id(a): (a, a._value) for a, _ in written}
    for a, old in reversed(written):
        a._value = old
    return block, names_after, slots_after, after, changed, raises


class _RaisesWhenTaken(Exception):
    """A branch's operation raised ``error`` at user line ``where``: raised when the branch runs."""

    def __init__(self, error, where):
        super().__init__(error)
        self.error, self.where = error, where


@contextlib.contextmanager
def _traced_anyway(what: str, defer=False):
    """The user's own exception, or NumPy's error for an operation, from code that is traced
    whether or not it runs: an error that says so (NumPy would not have raised it where the
    branch or loop is not taken), or, with ``defer`` (a branch), _RaisesWhenTaken where a run-time
    check can raise it.  cofactor's refusals of a construct pass as they are."""
    trace = context.current()
    trace.conditional += 1
    try:
        yield
    except Exception as e:
        kind = origin(e)
        refusal = type(e) is TracingError or isinstance(e, (UnsupportedError, ConcretizationError))
        if kind == "internal" or kind == "deliberate" and refusal:
            raise
        where = user_line_of(e)
        if defer and where is not None and checks.available(trace) and not in_user_try("_trace"):
            raise _RaisesWhenTaken(e, where) from e  # (a try around the if would catch it now, not at run time)
        raise located(TracingError(
            f"{type(e).__name__}: {e} -- raised while cofactor traced {what}, which it traces whether or not "
            "this call takes it (the condition is only known when the compiled function runs)")) from e
    finally:
        trace.conditional -= 1


def cond(pred: TracedArray, then_fn, else_fn, names, get_state, set_state, scope, line, as_value=False,
         exited_else=False):
    """``if pred: then_fn() else: else_fn()`` on a traced predicate, as one stablehlo.if.

    Variables may hold pytrees (tuples, lists, dicts) of arrays and numbers; their structure
    must be the same after both branches, and their shapes (``as_value``: a conditional expression's, whose
    value may join a number and an array, or views that cannot be carried).
    ``exited_else``: on the else path the function has returned, or the loop broke before this
    iteration (the guards around what follows a return, and around a loop body after a break).
    """
    p = predicate(pred)
    known = known_truth(pred)
    if known is not None:  # (uint8 < 300, a NumPy scalar constant): only the arm taken runs, as in Python
        (then_fn if known else else_fn)()
        return
    where = f"the if at line {line}"
    bindings = Bindings(names, get_state, set_state, scope, where, line)
    initial = bindings.values()
    kept = outside.Kept()  # (an object from outside reached only in an arm: not carried by the if)
    arms = []
    for fn in (then_fn, else_fn):
        context.current().predicates.append(p)
        try:
            arms.append(_run_arm(bindings, fn, initial, where))
        finally:
            context.current().predicates.pop()
        outside_change = kept.changed(bindings.heap.scanned | {id(scope.frame.f_globals)})
        if outside_change:
            raise located(TracingError(
                f"{outside_change} in a branch of {where} (reached only in the branch: a global, a module's or a "
                "function's attribute), which compiled code would change whichever branch runs: change it outside "
                "the if, or choose the value with np.where"))
    for arm in arms:
        bindings.add_slots(arm[4])
    initial = initial + [slot_value(s) for s in bindings.slots]
    states = [arm[1] + [arm[2].get((id(s.container), s.key), slot_value(s)) for s in bindings.slots] for arm in arms]
    for k, arm in enumerate(arms):
        if arm[5]:  # (a path that raises: nothing reads its variables after the if, as after a return)
            states[k] = [UNBOUND] * len(arm[1]) + states[k][len(arm[1]):]
    bindings.assign(initial)
    defined = _defined_where_it_goes_on(bindings.labels(), states, [arms[0][5], exited_else or arms[1][5]])
    adoptable = bindings.adoptable([initial] + states)
    layout = Layout(bindings, states[0], bindings.start, adoptable)
    try:
        layout.fit_joined(states)
        layout.check_strong_numbers(states)
        joined = True
    except TracingError:
        # A conditional expression's arms that cannot be carried as they are (a number and an array, arrays of two
        # dtypes: an error there; views of an array that is one of several, nested too deep) join as a value, read
        # only where an arm is an array other names see (below).
        values = [state[0] for state in states]
        if not as_value or any(defers_tracing(x) for x in values):
            raise  # (an array of run-time length is not a value: its length is the path's)
        joined = False
    if not joined:  # outside the handler: an error here is not "during" the first
        layout.nodes[0] = [_value_of_arms(states[0][0], states[1][0], line)]
        layout.fit_joined(states)  # the other bindings: a nonlocal an arm changes, say
    originals = {key: a._value for arm in arms for key, (a, _) in arm[3].items()}  # restored by _run_arm
    written = {key: a for arm in arms for key, (a, _) in arm[3].items()}
    adopted = {}
    for (block, *_, after, _, _), state in zip(arms, states):
        with insertion_point(block):
            for a, v in after.values():
                a._value = v
            f, miss = layout.fit(state, emit=True)
            assert miss is None and not f.widen, "a branch's state no longer fits the layout both fit"
            adopted.update(f.adopted)
            outputs = layout.payload(f) + [after[key][1] if key in after else originals[key] for key in written]
            for key in after:
                written[key]._value = originals[key]
            ops.emit_return(outputs)
    results = ops.if_(p, arms[0][0], arms[1][0], layout.types() + [originals[key].type for key in written])
    payload = results[:len(layout.types())]
    final = layout.build(payload)
    _mark_undefined(layout, final, f"in only one branch of {where}", defined)
    if not joined and any(isinstance(x, TracedArray) and not x.scalar and (x.lens is not None or x.serial < bindings.start)
                          for x in (state[0] for state in states)):
        # A value now, where NumPy's is an array that other names see on one path: updating it in
        # place would change them on that path only.
        final[0] = TracedArray(None, final[0], ReadOnly(Transpose(list(range(final[0].ndim))), (
            f"{IFEXP} at line {line} is an array other variables see, carried as its value (the other arm is a "
            "number, or the arms are views of arrays that are each one of several): updating it in place would not "
            "change them, which cofactor cannot carry (copy it first: (a if c else b).copy(), or update the array "
            "itself)"), TracingError))
    bindings.assign(final)
    for a, r in zip(written.values(), results[len(payload):]):
        a.value = r
    _make_stale(adopted, where)


def _defined_where_it_goes_on(labels, states, exited) -> set:
    """The variables that have a value on every path that goes on: a branch on which the function
    has returned (a return or a raise checked at run time ran in it, or an operation in it raises),
    or the else of a guard on whose else path the function or loop has exited (``exited``: per arm),
    runs nothing after the if, so a variable it leaves without a value is not undefined there (its
    payload on that path is a placeholder)."""
    flag = labels.index(RETURNED) if RETURNED in labels else None
    if flag is not None:
        exited = [exited[arm] or states[arm][flag] is True and states[1 - arm][flag] is not True for arm in (0, 1)]
    return {k for k, label in enumerate(labels) if isinstance(label, str)
            and all(exited[arm] or not is_unset(states[arm][k]) for arm in (0, 1))}


def _structures_differ(one, other, where="") -> str:
    """How two structures differ, at the first item where they do (``best = (None, np.inf)`` then
    ``best = (j, x[j])``: None at [0] on one path and an array or number on another)."""
    try:
        if one.kind == other.kind and one.meta == other.meta and len(one.children) == len(other.children):
            keys = list(one.meta) if one.kind == "dict" else range(len(one.children))
            for key, a, b in zip(keys, one.children, other.children):
                if a != b:
                    return _structures_differ(a, b, f"{where}[{key!r}]")
    except ValueError:  # (a node's static part that does not compare: the structures as they are)
        pass
    at = f" at {where}" if where else ""
    return f"{_structure(one)}{at} on one path and {_structure(other)} on another"


def _structure(tree) -> str:
    """What a value of this structure is, for errors."""
    if tree.kind == "leaf":
        return "an array or number"
    if tree.kind == "none":
        return "None"
    if tree.kind == "dict":
        return f"a dict with keys {list(tree.meta)}"
    if tree.kind == "node" and getattr(tree.meta[0], "defers_tracing", False):  # (of its class)
        return "an array whose length is known only at run time (x[mask], a slice with traced bounds)"
    name = tree.meta.__name__ if tree.kind == "namedtuple" else tree.meta[0].__name__ if tree.kind == "node" \
        else tree.kind
    return f"a {name} of {len(tree.children)}"


def _mark_undefined(layout: Layout, final, where, defined=()):
    """Variables that have a value on some paths only are Undefined (the pending return value is
    not, nor are the ``defined`` ones: they have a value wherever the function goes on)."""
    for k, (label, nodes) in enumerate(zip(layout.bindings.labels(), layout.nodes)):
        if label != RETURN_VALUE and k not in defined and (any(isinstance(node, Late) for node in nodes) or
                                                           k in layout.unset_somewhere):
            final[k] = undefined(label, where)


def _value_of_arms(a, b, line) -> Number:
    """The layout of a conditional expression whose arms are a number and an array, or arrays one of which
    is a view (the identity of either arm is not kept): a value.  Arms of two shapes are an error: NumPy's
    result has the shape of the arm taken (``x * 2 if x.sum() > 0 else -1.5`` is -1.5, not an array of
    it, which np.where would give)."""
    if not all(is_number(x) or is_array(x) for x in (a, b)):
        shown = ["a number" if is_number(x) else "an array" if is_array(x) else f"a {type(x).__name__}" for x in (a, b)]
        raise located(TracingError(
            f"the two arms of the conditional expression at line {line} are {shown[0]} and {shown[1]}, and which "
            "one it gives depends on a traced value: only arrays and numbers can (choose with np.where, or test a "
            "value known when tracing)"))
    if np.shape(a) != np.shape(b):
        raise located(TracingError(
            f"the two arms of the conditional expression at line {line} have shapes {np.shape(a)} and {np.shape(b)}: "
            "NumPy's result has the shape of the arm taken, which is known only at run time (np.where(c, a, b) "
            "broadcasts them, if that is what you mean)"))
    a, b = (Number(*number_type(x), arms=True) for x in (a, b))  # a Python number is weak
    if a.weak is None and b.weak is None and a.type.dtype != b.type.dtype:
        raise _arms_of_two_dtypes(line, (a.type, b.type))
    try:
        return _wider(a, b)
    except KindError as e:
        raise _arms_of_two_dtypes(line, e.types) from None


def _arms_of_two_dtypes(line, types) -> TracingError:
    return located(TracingError(
        f"the two arms of the conditional expression at line {line} have dtypes {types[0].dtype} and "
        f"{types[1].dtype}: NumPy's result has the dtype of the arm taken, which is known only at run time "
        f"(give both arms one dtype, e.g. with .astype)"))


def cond_value(pred: TracedArray, then_fn, else_fn, scope, line):
    """``then_fn() if pred else else_fn()`` on a traced predicate: each arm is traced into its own
    branch of a stablehlo.if, so only the taken one runs; a Python number takes the other arm's dtype."""
    box = [UNBOUND]

    def arm(fn):
        return lambda: box.__setitem__(0, fn())

    def get():
        return (box[0],)

    trace = context.current()
    trace.value_arms += 1
    try:
        cond(pred, arm(then_fn), arm(else_fn), (IFEXP,), get, lambda values: box.__setitem__(0, values[0]), scope,
             line, as_value=True)
    finally:
        trace.value_arms -= 1
    return box[0]


def _make_stale(adopted: dict, where: str):
    for a in adopted.values():
        make_stale(a, f"this array was replaced by a copy when {where} carried the variable that held it "
                   "(cofactor saw no other variable holding it, but this code reached it another way, e.g. "
                   "through a global or a deeply nested container); keep arrays a branch or loop rebinds in "
                   "local variables, or copy them before it (.copy())")


def _keep(running, new, old):
    """``new`` while the loop's condition holds, else ``old``."""
    return ops.select(ops.broadcast_in_dim(running, new.shape, ()), new, old)


class _Retry(Exception):
    """Tracing the loop body found that it must be traced again (the layout or the storages changed,
    the condition writes: ``rotate``), with a new layout: the body leaves variables it was expected
    to rebind as it found them (``unhint``, their names), or leaves an array made before the loop
    where two bindings see it, so it may not be adopted (``refuse``, ids of such arrays)."""

    def __init__(self, rotate=False, unhint=frozenset(), refuse=frozenset()):
        super().__init__()
        self.rotate, self.unhint, self.refuse = rotate, unhint, refuse


def while_loop(cond_fn, body_fn, names, get_state, set_state, scope, line, attributes=None, bound=None,
               runs=False, rebinds=(), entered=True, ends=False, histories=()):
    """``while cond_fn(): body_fn()`` with a traced condition, as one stablehlo.while.  ``entered``:
    the condition's value before the loop (the caller evaluated it there, as Python does).

    A condition that only reads is traced in the loop's condition region, where the loop's trip
    count can be seen (Enzyme needs it).  One that writes (an array it updates, a name it binds
    with ``:=``, a run-time check it makes, such as a traced index's bounds) is evaluated where its
    writes are carried, as Python evaluates it: after each iteration of the body, which carries
    its value to the condition region (a *rotated* loop).  A raise that fires in the loop (a
    run-time check, as on a clamped read past an axis) stops it, unless it ``ends`` by itself (a
    for loop over a range, whose condition region keeps the counter's plain test).

    With a ``bound``, the loop runs exactly ``bound`` iterations and each one keeps the old
    state once the condition is false: a static trip count, which reverse-mode autodiff
    needs; iterations past the bound are not run.

    Carries the bindings of ``names`` and of the container slots the body changes, and every array
    made before the loop that the body writes.  ``rebinds``: the names the body assigns with ``=``
    (a hint: they are likely to hold a new array at the end of the body); numbers the body assigns
    are carried as traced numbers from the start.  A variable the body assigns first keeps its
    last value after the loop when the loop is known to run (``runs``), as in Python; otherwise it
    is undefined there.  The function's pending return value always keeps it (its returned flag
    tells whether it was set).

    The body is traced again when it leaves its variables in another layout than it found them
    (a number it widens, a variable it rebinds that the hint missed, a variable first assigned in
    it that it also reads before assigning, an array it writes that no variable showed), and with
    a fresh layout when a hint was wrong (a variable it assigns but leaves holding what it held)
    or an array the layout adopted turns out to be seen by two bindings; then its Python side
    effects run again.
    """
    where = f"the loop at line {line}"
    bindings = Bindings(names, get_state, set_state, scope, where, line)
    kept = outside.Kept()  # (a global list the body reaches as it runs, past the heap's scan)
    initial = bindings.values()
    reachable = [o for x in flatten(initial)[0] if isinstance(x, TracedArray) for o in x.owners()]
    storages = list({id(o): o for o in [*bindings.heap.owners.values(), *reachable] if not o.scalar}.values())
    histories = [h for h in histories if not bindings.heap.holds(h.items) and not outside.is_outside(h.items)]
    adoptable = bindings.adoptable([initial])
    layout, hinted = _loop_layout(bindings, initial, adoptable, rebinds)
    trace = context.current()
    rotated = []  # [the condition's value before the loop, as an i1 scalar] once the loop is rotated
    collecting = dict(trace.collecting)  # (the lists its body's appends may go to: histories.py)
    trace.collecting.update({id(h.items): h for h in histories})
    try:
        for _ in range(_RETRIES):
            _add_slot_nodes(layout, bindings)
            count = trace.count
            try:
                _trace_while(cond_fn, body_fn, bindings, layout, storages, where, attributes, bound, runs, rotated,
                             ends, hinted, histories, kept)
                return
            except _Retry as retry:
                trace.count = count  # the discarded attempt's operations do not count against the budget
                for h in histories:
                    if h.needs_buffer:
                        replaced = h.make_buffer()
                        storages[:] = [a for a in storages if not any(a is r for r in replaced)] + h.carried()
                if retry.unhint or retry.refuse:
                    rebinds, adoptable = set(rebinds) - retry.unhint, adoptable - retry.refuse
                    layout, hinted = _loop_layout(bindings, initial, adoptable, rebinds)
                if retry.rotate and not rotated:
                    rotated.append(predicate(entered if isinstance(entered, TracedArray) else
                                             TracedArray(ops.constant(np.array(bool(entered))))))
    finally:
        trace.collecting = collecting
    raise located(TracingError(f"{where} could not be traced: the layout of its variables kept changing"))


def _loop_layout(bindings: Bindings, initial, adoptable, rebinds):
    """The layout a loop body is first traced with, and the names it expects the body to rebind
    (``rebinds`` that hold an array): each may hold the array it held before or a new one."""
    layout = Layout(bindings, initial, bindings.start, adoptable)
    expected, hinted = {}, set()  # variables that hold one array before the loop keep one node
    for k, name in enumerate(bindings.names):
        x = initial[k]
        if isinstance(x, TracedArray) and not x.scalar and name in rebinds:
            node = layout.nodes[k][0]
            layout.nodes[k][0] = expected.setdefault(id(node), expect_made(node, adoptable))
            hinted.add(name)
        elif is_number(x):
            layout.nodes[k][0] = as_number(layout.nodes[k][0])
    return layout, hinted


class _Tripwire(Undefined):
    """What a variable first assigned in a loop body holds at the top of the body: if the body
    reads it there (from the second iteration on it would hold the last iteration's value), the
    loop is traced again carrying it."""

    def __init__(self, message):
        super().__init__(message)
        object.__setattr__(self, "touched", False)

    def _fail(self, *args, **kwargs):
        object.__setattr__(self, "touched", True)
        super()._fail()


def _trace_while(cond_fn, body_fn, bindings: Bindings, layout: Layout, storages: list, where, attributes, bound,
                 runs, rotated: list, ends: bool, hinted: set, histories: list, kept):
    initial = bindings.values()
    layout.fit_joined([initial])
    f, _ = layout.fit(initial, emit=True)
    adopted = dict(f.adopted)
    originals = [a._value for a in storages]
    seen = {}
    # With a bound, its iteration counter is carried first: Enzyme 0.0.16's reverse mode finds a
    # loop's trip count only from an induction variable in the first position.  A rotated loop
    # carries its condition's value next.
    first = (bound is not None) + len(rotated)

    def enter(args):
        width = len(layout.types())
        args = args[first:]
        state = layout.build(args[:width])
        for k, nodes in enumerate(layout.nodes):
            if nodes and all(isinstance(n, Unset) for n in nodes):
                state[k] = _Tripwire(undefined(bindings.labels()[k], f"only later in {where}").message)
        bindings.assign(state)
        for a, arg in zip(storages, args[width:]):
            a._value = arg
        return state

    def condition():
        c = cond_fn()
        return predicate(c if isinstance(c, TracedArray) else TracedArray(ops.constant(np.array(bool(c)))))

    def reading_condition():
        """The condition, where the loop is not rotated: one that writes rotates it."""
        before = flatten(bindings.values())[0]
        with Journal() as probe:
            c = condition()
            if probe.written() or any(a is not b for a, b in zip(before, flatten(bindings.values())[0])):
                raise _Retry(rotate=True)
        return c

    def cond_region(*args):
        current_block().label = where
        if bound is not None:
            return ops.compare(args[0], ops.constant(np.array(bound, np.int64)), "LT")
        enter(args)
        c = args[0] if rotated else reading_condition()
        # A raise that fired in the loop stops it, as in Python (a check on a clamped read may
        # never let the condition turn false).
        return ops.binary("stablehlo.and", c, context.current().checks.none_fired()) if seen["raises"] else c

    def body_region(*args):
        current_block().label = where
        entry = enter(args)
        running = None if bound is None else args[1] if rotated else reading_condition()
        trace = context.current()
        trace.running.append(running)
        sites = len(trace.checks.raises) if trace.checks else 0
        seen["trip start"] = serial_now()
        try:
            with Journal() as journal, _traced_anyway(f"the body of {where}") if not runs else contextlib.nullcontext():
                for h in histories:
                    h.begin_trip(entry[0])
                body_fn()
                for h in histories:  # (a list it appends a value to per trip: histories.py; the counter is first)
                    h.take(entry[0], entry, bindings.values(), [a for a, _ in journal.written()], seen["trip start"])
                again = condition() if rotated else None  # (Python's next test of it)
        finally:
            trace.running.pop()
        seen["raises"] = not ends and trace.checks is not None and len(trace.checks.raises) > sites
        try:
            return finish(entry, running, journal, again)
        except _Retry:
            journal.undo()  # what the body wrote is not the loop's yet
            raise

    def finish(entry, running, journal, again):
        state = bindings.values()
        changed = bindings.heap.changed_slots()
        if any(h.needs_buffer for h in histories):
            raise _Retry()
        bindings.heap.check_sizes(where, bindings.line)
        outside_change = kept.changed(bindings.heap.scanned)
        if outside_change:
            kept.restore()
            raise located(TracingError(
                f"{outside_change} in {where} (reached only as the body runs, past what the loop carries: a global, a "
                "module's or a function's attribute), so it would change once, not at every trip: the loop is "
                "unrolled, or change it outside the loop, or keep the values in local variables or arrays"))
        if bindings.add_slots(changed):
            raise _Retry()  # the layout gets the new slots once they hold their values before the loop
        carried = {id(a) for a in storages}
        written = journal.written()
        seen["written"] = {id(a) for a, _ in written}
        extra = [a for a, _ in written if id(a) not in carried and a.serial < bindings.start]
        if extra:
            storages.extend(extra)
            raise _Retry()
        _carry_late(layout, entry, state, current_block(), first)
        # An array the layout adopts (replaces by a copy) that the body leaves where two bindings
        # see it (x, y = y, x through a closure's cells, found as slots only now) must stay itself.
        refuse = layout.adoptable - bindings.adoptable([initial, state])
        if refuse:
            raise _Retry(refuse=refuse)
        f, miss = layout.fit(state, emit=False)
        if miss is not None or f.widen:
            layout.fit_joined([initial, state])
            raise _Retry()
        # A variable expected to be rebound that holds what it held at the top (x = x, or
        # x = helper(x) returning its argument) keeps the array it held before the loop: without
        # the hint, it is not a choice after the loop.
        unhint = {name for k, name in enumerate(bindings.names) if name in hinted and state[k] is entry[k]}
        if unhint:
            raise _Retry(unhint=unhint)
        f, _ = layout.fit(state, emit=True)
        seen["numpy"] = {id(node) for _, _, node, x in layout.numbers(state)
                         if node.python and number_type(x)[1] is node.weak and not isinstance(x, PathNumber)}
        outputs = ([again] if rotated else []) + layout.payload(f) + [a._value for a in storages]
        if bound is not None:
            # Past the condition's end, every iteration keeps the state it was given.
            args = current_block().arguments
            outputs = [ops.binary("stablehlo.add", args[0], ops.constant(np.array(1, np.int64)))] + \
                [_keep(running, new, old) for new, old in zip(outputs, args[1:])]
        return outputs

    inits = ([ops.constant(np.array(0, np.int64))] if bound is not None else []) + rotated + \
        layout.payload(f) + originals
    try:
        results = loops.while_loop(inits, cond_region, body_region, attributes,
                                   reverse_mode=context.in_reverse_mode())[first:]
    finally:
        for a, old in zip(storages, originals):
            a._value = old
        bindings.assign(initial)
        bindings.heap.restore()
    width = len(layout.types())
    final = layout.build(results[:width])
    if runs:
        final = layout.as_numpy_where(final, seen["numpy"])
        for k, label in enumerate(bindings.labels()):  # (assigned under a traced condition in it, or not at all)
            if label != RETURN_VALUE and final[k] is UNBOUND:
                final[k] = undefined(label, f"only on some paths through {where} (under a traced condition)")
    else:
        _mark_undefined(layout, final, f"only inside {where}, which may run zero times")
    bindings.assign(final)
    for a, r in zip(storages, results[width:]):
        if id(a) in seen["written"]:  # an array the loop only reads keeps its value
            a.value = r
    for h in histories:
        if h.buffer is not None:
            h.extend(final)
    _make_stale(adopted, where)


def _carry_late(layout: Layout, entry, state, block, first: int):
    """Variables first assigned in the body that it did not read at its top: carry them from here
    on, through new arguments of the body block (a loop starts them from zeros), without tracing
    the body again."""
    old = layout.order()  # kept alive while ids are compared: a freed node's id may be reused
    before = {id(node) for node in old}
    for k, nodes in enumerate(layout.nodes):
        if isinstance(entry[k], _Tripwire) and not entry[k].touched and not is_unset(state[k]):
            leaves, layout.trees[k] = flatten(state[k])
            layout.nodes[k] = [Late(export(x, layout.start, {}), nodes[0].marker) for x in leaves]
    layout.choose_mirrors()  # (their Choices' mirrors are carried too: a body argument each)
    position = first
    for node in layout.order():
        for t in node.own_types():
            if id(node) not in before:
                block.insert_argument(position, t)
            position += 1


def _add_slot_nodes(layout: Layout, bindings: Bindings):
    """Extend the layout with the slots added to ``bindings`` (their values before the loop)."""
    memo = {}
    for slot in bindings.slots[len(layout.trees) - len(bindings.names):]:
        leaves, treedef = flatten(slot_value(slot))
        layout.trees.append(treedef)
        layout.nodes.append([export(x, layout.start, memo) for x in leaves])
