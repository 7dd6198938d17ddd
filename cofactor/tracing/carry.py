"""Layouts: how the objects that variables hold are carried out of a region (a branch of a traced
``if``, the body of a traced loop) and rebuilt after it, keeping NumPy's identities.

A region's result is a list of IR values, but a program's state is Python objects: variables
bound to arrays, views of arrays, numbers, tuples of them, several variables bound to one array.
A *layout* describes that state relative to the region, one node per leaf, with shared nodes
where leaves share an object:

- ``Pre``: an object made before the region, kept as it is (its storage, if the region writes it,
  is carried separately);
- ``Owner``: an array made in the region, carried as its value (an array made before it that
  nothing else can see may be *adopted* as one: it is then replaced by the carried copy, and the
  original made stale);
- ``Number``: an immutable value (a NumPy scalar or a Python number), carried as its value;
- ``View``: a view made in the region, carried as the traced values of its lens over its base;
- ``Choice``: one of several layouts, chosen at run time (an ``Either`` after the region);
- ``Static``: a Python object that is not an array, the same in every state;
- ``Unset`` / ``Late``: no value yet (a variable assigned on some paths only).

*Fitting* a state to a layout checks that the state has that shape and yields the values to carry
(its *payload*, one list per node, however many leaves share it); a state that does not fit is
*joined* in (a ``Choice`` grows, a number widens) and the region traced again.  *Building* a
layout from carried values makes the objects the variables hold after the region (or at the top
of a loop body).  Where each array in a layout came from is the business of ``control.py``; a
layout only has to say, for every state a region can leave, which object each variable holds.

An ``Either`` made in the region (a branch inside a loop body) is resolved leaf by leaf
(``Choice._resolve_either``) while no other variable holds its arrays.  Where another does (the
Eithers are *entangled*: ``a = acc`` and then ``acc = acc * 2`` under a traced if), the state is
fitted once per *world*, a choice for each of those Eithers that the state reaches (``Worlds``),
so that one array two variables hold is one node in every world, and the payloads are merged by
the selectors.
"""
from __future__ import annotations

import types

import numpy as np

from ..errors import TracingError, UnsupportedError, located, numpy_rules
from ..ir import ops
from ..ir.core import Value
from ..ir.types import TensorType
from ..pytree import flatten, unflatten
from .array import Either, TracedArray, nesting
from .path_numbers import PYTHON_ORDER, PYTHON_DTYPES, PathNumber, wider_python

_SELECTOR = TensorType((), np.dtype(np.int32))
_MAX_CHOICES = 8  # more distinct arrays for one variable means the layout is not settling
_MAX_WORLDS = 64  # states fitted for one region's entangled Eithers (Worlds)
_MAX_NESTING = 3  # Eithers nested this deep under a view: 2**3 writes for each write through it (at 4, XLA
# ran some such programs for seconds: fuzz seed 10009061)
_PYTHON_NUMBERS = (bool, int, float, complex)
_NO_FIT = object()


class LayoutError(Exception):
    """Two states cannot share a layout: arrays of different ``types`` (two TensorTypes), or Python
    objects that differ.  The caller says which variable and where."""

    def __init__(self, message, types=None):
        super().__init__(message)
        self.types = types


class KindError(LayoutError):
    """A Python number and a NumPy value of a kind that does not hold it (``types``: the NumPy value's,
    and the number's as NumPy would read it): NumPy's later results have the kind of the path taken."""


class OutOfRange(LayoutError):
    """A Python int a variable holds on some paths, beyond the range of the NumPy integer dtype it has
    on others (``best = -1``, then ``best = u[i]`` of uint8): NumPy compares it exactly and keeps it,
    and the carried value of that dtype cannot hold it."""


class Undefined:
    """The value of a variable that has none on some path (assigned in one branch only, or only
    inside a loop); any use raises an error with ``message``."""

    def __init__(self, message):
        object.__setattr__(self, "message", message)

    def _fail(self, *args, **kwargs):
        raise located(TracingError(object.__getattribute__(self, "message")))

    def _used(self, *args, **kwargs):  # (a subclass's _fail, through the instance)
        object.__getattribute__(self, "_fail")()

    __getattr__ = __call__ = __getitem__ = __setitem__ = __bool__ = __iter__ = __len__ = _used
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __matmul__ = _used
    __array_ufunc__ = __array_function__ = __index__ = __float__ = __int__ = _used
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _used
    __hash__ = object.__hash__


UNBOUND = object()  # what the getter reports for a variable not assigned yet


def is_unset(x) -> bool:
    return x is UNBOUND or isinstance(x, Undefined)


def is_number(x) -> bool:
    return isinstance(x, (*_PYTHON_NUMBERS, np.generic)) or isinstance(x, TracedArray) and x.scalar


def number_type(x):
    """(TensorType, weak Python type) of a number (or of an array, for a conditional expression's Number)."""
    if isinstance(x, TracedArray):
        return x.type, x.weak
    weak = type(x) if type(x) in (bool, int, float, complex) else None
    if weak is int and not -2 ** 63 <= x < 2 ** 63:
        raise located(UnsupportedError(
            f"the Python int {x} passes int64's range: cofactor carries the Python ints that traced control flow "
            "(a branch or loop on a traced value) changes as int64"))
    return TensorType(np.shape(x), np.asarray(x).dtype), weak


def _number_value(x, t: TensorType) -> Value:
    if isinstance(x, TracedArray):
        v = ops.convert(x.value, t.dtype)
    else:
        with numpy_rules():  # a Python int out of the dtype's range: NumPy's OverflowError
            v = ops.constant(np.asarray(x, dtype=t.dtype))
    return ops.broadcast_in_dim(v, t.shape, range(len(t.shape) - v.type.rank, len(t.shape)))


def _holds(dtype, n: int) -> bool:
    info = np.iinfo(dtype)
    return info.min <= n <= info.max


def _zeros(t: TensorType) -> Value:
    return ops.broadcast_in_dim(ops.constant(np.zeros((), t.dtype)), t.shape, ())


class Fitting:
    """One fit of a state to a layout.  ``emit``: build the payload (in the current block);
    otherwise only check.  ``start``: objects with a later serial were made in the region;
    ``adoptable``: ids of owners made before it that may be carried as values; ``shared``: ids
    of owners more than one leaf of the state holds.

    The payload is per node, not per leaf: a node shared by several leaves (an array several
    variables hold) carries its values once, so the leaves that share it must hold one object
    (its *giver*); a node no leaf gives values to (an alternative not taken, a variable with no
    value yet) carries placeholders."""

    def __init__(self, start: int, adoptable, emit: bool, shared=frozenset()):
        self.start, self.adoptable, self.emit, self.shared = start, adoptable, emit, shared
        self.payload: dict = {}   # id(node) -> its own values
        self.memo: dict = {}      # id(object) -> node it fitted
        self.givers: dict = {}    # id(node) -> the object whose values it carries
        self.adopted: dict = {}   # id -> owner made before the region and carried as a value
        self.widen: dict = {}     # node -> the Number it must become

    def made_here(self, x) -> bool:
        return x.serial >= self.start

    def _saved(self):
        return dict(self.payload), dict(self.memo), dict(self.givers), dict(self.adopted), dict(self.widen)

    def _restore(self, saved):
        self.payload, self.memo, self.givers, self.adopted, self.widen = (dict(d) for d in saved)

    def fit(self, node, x) -> bool:
        """Fit ``x`` to ``node``, giving nodes their payloads; on failure nothing changes.  An array
        or view made in the region fits one node, and such a node one array: what the state
        shares, the layout shares (a Choice builds an Either, which any number of variables may
        hold alike: it does not count)."""
        saved = self._saved()
        made = isinstance(x, TracedArray) and not x.scalar and (self.made_here(x) or id(x) in self.adoptable) \
            and isinstance(node, (Owner, View))
        if made and (self.memo.get(id(x), node) is not node or self.givers.get(id(node), x) is not x):
            ok = False
        else:
            ok = node.fit(x, self)
        if ok:
            if made:
                self.memo[id(x)] = node
            return True
        self._restore(saved)
        return False

    def give(self, node, x, make) -> bool:
        """``node``'s own values are ``make()`` (a list), those of ``x``, unless another leaf gave
        them already: False if that leaf held another object (its values are not ``x``'s)."""
        if id(node) in self.payload:
            return self.givers[id(node)] is x
        self.givers[id(node)] = x
        self.payload[id(node)] = make() if self.emit else [None] * len(node.own_types())
        return True

    def give_mirror(self, node, x, make):
        """A Choice's mirror carries the value of ``x``, the array chosen: this Choice's alone, it
        is given in each world of an Either (``Choice._resolve_either``) the value chosen there."""
        self.givers[id(node)] = x
        self.payload[id(node)] = make() if self.emit else [None] * len(node.own_types())

    def values(self, nodes) -> list:
        """The payload of these nodes (in layout order, each once), placeholders where none was given."""
        out = []
        for node in nodes:
            given = self.payload.get(id(node))
            if given is None:
                given = [_zeros(t) for t in node.own_types()] if self.emit else [None] * len(node.own_types())
            out += given
        return out


class Node:
    def fit(self, x, f: Fitting) -> bool:
        raise NotImplementedError

    def own_types(self) -> list:
        """The types of the values this node itself carries (not its parts')."""
        return []

    def parts(self) -> list:
        """The nodes this one is made of."""
        return []

    def build(self, values: dict, b: dict):
        """The object for payload ``values`` (id(node) -> its values); ``b``: node id -> object built."""
        raise NotImplementedError

    def nodes(self):
        """This node and the nodes it is made of, each once, in layout order."""
        yield self
        for part in self.parts():
            yield from part.nodes()


class Pre(Node):
    def __init__(self, obj):
        self.obj = obj

    def fit(self, x, f):
        return x is self.obj

    def build(self, values, b):
        return self.obj


class Static(Node):
    def __init__(self, value):
        self.value = value

    def fit(self, x, f):
        if x is self.value or _same_function(x, self.value):
            return True
        try:
            return type(x) is type(self.value) and not isinstance(x, TracedArray) and bool(x == self.value)
        except (TypeError, ValueError):
            return False

    def build(self, values, b):
        return self.value


def _same_function(a, b) -> bool:
    """Whether ``a`` and ``b`` are what one ``def`` made twice (a helper defined in a loop's body, made at
    every trip): one code, the same globals, closure cells and defaults, so a call of either is the same."""
    def same(p, q):
        return p is q or p is not None and q is not None and len(p) == len(q) and all(x is y for x, y in zip(p, q))
    return isinstance(a, types.FunctionType) and isinstance(b, types.FunctionType) and a.__code__ is b.__code__ \
        and a.__globals__ is b.__globals__ and same(a.__closure__, b.__closure__) and \
        same(a.__defaults__, b.__defaults__) and a.__kwdefaults__ == b.__kwdefaults__


class Unset(Node):
    def __init__(self, marker):
        self.marker = marker

    def fit(self, x, f):
        return is_unset(x)

    def build(self, values, b):
        return self.marker


class Owner(Node):
    """An array made in the region (or adopted), carried by value.  A ``shadow`` is no array of the
    program's: a Choice's mirror made for it alone (``choose_mirrors``), given the chosen value."""

    def __init__(self, type: TensorType, shadow=False):
        self.type, self.shadow = type, shadow

    def fit(self, x, f):
        if self.shadow:
            return False
        if isinstance(x, Either):
            return self._fit_either(x, f)
        if not isinstance(x, TracedArray) or x.scalar or x.lens is not None or x.type != self.type:
            return False
        if not f.made_here(x):
            if id(x) not in f.adoptable or id(x) in f.shared:  # adopted, it would be one leaf's copy
                return False
            f.adopted[id(x)] = x
        return f.give(self, x, lambda: [x._value])

    def _fit_either(self, x, f):
        """An Either made in the region whose arrays nothing else holds is just its value."""
        owners = x.owners()
        if not f.made_here(x) or x.type != self.type or any(
                not (f.made_here(o) or id(o) in f.adoptable) or id(o) in f.shared or f.memo.get(id(o), self) is not self
                for o in owners):
            return False
        for o in owners:
            f.memo[id(o)] = self
            if not f.made_here(o):
                f.adopted[id(o)] = o
        return f.give(self, x, lambda: [x.value])

    def own_types(self):
        return [self.type]

    def build(self, values, b):
        if id(self) not in b:
            b[id(self)] = TracedArray(values[id(self)][0])
        return b[id(self)]


class Number(Node):
    """An immutable value: a NumPy scalar or a Python number (``weak``), or, with ``arms`` (a
    conditional expression's value), an array of its shape.  ``python``: a
    NumPy scalar that is a Python number of that type on some paths, carried as a PathNumber
    (its value, the Python number's, and whether it is one)."""

    def __init__(self, type: TensorType, weak, arms=False, python=None):
        self.type, self.weak, self.arms, self.python = type, weak, arms, python

    def fit(self, x, f):
        if not is_number(x) and not (self.arms and isinstance(x, TracedArray)):
            return False
        t, weak = number_type(x)
        if t.shape != self.type.shape:
            return False
        dtype = _promoted(self.type, self.weak, t, weak)
        kinds = _kinds(self, weak, getattr(x, "python", None))
        if dtype != self.type.dtype or kinds != (self.weak, self.python):
            f.widen[self] = Number(self.type.with_dtype(dtype), *kinds[:1], self.arms, kinds[1])
        return f.give(self, x, lambda: self._payload(x))

    def _payload(self, x) -> list:
        if type(x) is int and self.type.dtype.kind in "iu" and not _holds(self.type.dtype, x):
            raise OutOfRange(f"the Python int {x} on some paths and a numpy.{self.type.dtype} on others, which "
                             f"{self.type.dtype} cannot hold")
        value = _number_value(x, self.type)
        if self.python is None or PathNumber.one_value(self.type.dtype, self.python):
            return [value]
        python = TensorType((), PYTHON_DTYPES[self.python])
        if isinstance(x, PathNumber) and x.is_python is not None:
            return [value, ops.convert(x.python_value, python.dtype), x.is_python]
        kind = number_type(x)[1]  # (the Python number's own type, not the wider the variable also is)
        is_python = kind is not None and (self.weak is None or kind is self.python)
        return [value, _number_value(x, python) if is_python else _zeros(python),
                ops.constant(np.array(is_python))]

    def own_types(self):
        if self.python is None or PathNumber.one_value(self.type.dtype, self.python):
            return [self.type]
        return [self.type, TensorType((), PYTHON_DTYPES[self.python]), TensorType((), np.dtype(bool))]

    def build(self, values, b):
        if id(self) not in b:
            own = values[id(self)]
            b[id(self)] = PathNumber(own[0], self.python, *own[1:], weak=self.weak) if self.python else \
                TracedArray(own[0], scalar=not self.arms, weak=self.weak)
        return b[id(self)]


def _kinds(node: Number, weak, python) -> tuple:
    """(weak, python) of a variable that holds what ``node`` holds or a number of these: weak only
    if a Python number on every path; else the Python type it is on some (None: on none)."""
    if node.weak is not None and weak is not None:  # Python numbers: an int on some paths, a float on others
        kinds = sorted({node.weak, weak, node.python, python} - {None}, key=PYTHON_ORDER.index)
        return kinds[-1], kinds[0] if len(kinds) == 2 else None
    if node.arms:
        return None, None  # a conditional expression's value: the array's dtype (README, "Control flow")
    return None, wider_python(node.weak, node.python, weak, python)


class View(Node):
    """A view made in the region, of an object carried by ``base``."""

    def __init__(self, base: Node, lens, type: TensorType):
        self.base, self.lens, self.type = base, lens, type

    def fit(self, x, f):
        if not isinstance(x, TracedArray) or x.lens is None or not f.made_here(x) or x.scalar \
                or not self.lens.same_template(x.lens) or not f.fit(self.base, x.viewed):
            return False
        return f.give(self, x, lambda: list(x.lens.values()))

    def own_types(self):
        return [v.type for v in self.lens.values()]

    def parts(self):
        return [self.base]

    def build(self, values, b):
        if id(self) not in b:
            b[id(self)] = TracedArray(None, self.base.build(values, b), self.lens.with_values(values[id(self)]))
        return b[id(self)]


class Choice(Node):
    """One of ``alternatives`` (array layouts of one type), chosen by a carried selector.
    ``mirror``: the index of an ``Owner`` alternative that is this Choice's alone (set by
    ``choose_mirrors``): it always carries the chosen array's value, so reading the built Either
    needs no select."""

    def __init__(self, alternatives):
        self.alternatives = list(alternatives)
        self.mirror = None
        types = list(dict.fromkeys(_array_type(a) for a in self.alternatives))
        if len(types) > 1:
            raise LayoutError("arrays of different shapes or dtypes", types[:2])

    def own_types(self):
        return [_SELECTOR]

    def parts(self):
        return self.alternatives

    def fit(self, x, f):
        if id(self) in f.payload:  # another leaf holds this Either: it is x only if that leaf holds x too
            return f.givers[id(self)] is x
        selector = self._resolve(x, f)
        if selector is _NO_FIT:
            return False
        return f.give(self, x, lambda: [selector])

    def _resolve(self, x, f, world=False):
        """The selector for ``x`` (its alternatives' payloads given on the way), or _NO_FIT.  In a
        ``world`` of an Either, an array other leaves hold too does not fit the mirror: the mirror
        would carry another world's array there, and those leaves could not share its node."""
        if isinstance(x, Either) and len(x.choices) == len(self.alternatives) and f.made_here(x):
            # The Either this node built (a loop body's variable it did not rebind), or one built alike (by a
            # loop's layout inside the region): choice k fits alternative k.  The mirror carries the chosen
            # value: an Either with another mirror (or none) keeps it in another choice, or in none.
            saved = f._saved()
            if all(f.fit(alt, c) for alt, c in zip(self.alternatives, x.choices) if not _is_shadow(alt)):
                if self.mirror is not None and (x.mirror != self.mirror or _is_shadow(self.alternatives[self.mirror])):
                    f.give_mirror(self.alternatives[self.mirror], x, lambda: [x.value])
                return x.selector
            f._restore(saved)
        for k, alt in enumerate(self.alternatives):
            if world and k == self.mirror and id(x) in f.shared:
                continue
            if f.fit(alt, x):
                if self.mirror is not None and self.mirror != k:
                    mirror = self.alternatives[self.mirror]
                    f.give_mirror(mirror, x, lambda: [x.value if isinstance(x, TracedArray) else
                                                      _number_value(x, _array_type(mirror))])
                return ops.constant(np.array(k, np.int32)) if f.emit else None
        if isinstance(x, Either) and f.made_here(x):
            return self._resolve_either(x, f)
        return _NO_FIT

    def _resolve_either(self, x, f):
        """An Either made in the region (by a branch inside it): each of its choices is resolved as
        the world where the selector picks it; the payloads are then selected.

        A node that every world giving it values got them from one object carries that object's
        values whichever world the selector picks, and the object is that node's (another leaf may
        hold it: it reads them there too; placeholders in the other worlds would hide them).  Only
        a node given by different objects in different worlds carries selected values, and it is
        this Either's alone (no other leaf fits it).  So each world first keeps what the worlds
        before it found (a choice goes where no other one went: to the node that is its own, which
        other leaves may hold too), and only if it fits nowhere else shares a node with them."""
        saved, worlds = f._saved(), []
        for c in x.choices:
            self._forget_mirror(f)  # it carries the value chosen in this world, not one a world before chose
            selector = self._resolve(c, f, world=True)
            if selector is _NO_FIT:
                f._restore(saved)
                selector = self._resolve(c, f, world=True)
            if selector is _NO_FIT:
                f._restore(saved)
                return _NO_FIT
            worlds.append((selector, f._saved()))
        f._restore(saved)
        self._forget_mirror(f)
        for node in self.nodes():
            given = [(payload[id(node)], givers[id(node)]) for _, (payload, _, givers, _, _) in worlds
                     if id(node) in payload]
            if node is self or not given or id(node) in f.payload:
                continue
            if all(giver is given[0][1] for _, giver in given):
                f.payload[id(node)], f.givers[id(node)] = given[0]
                continue
            f.givers[id(node)] = x
            f.payload[id(node)] = [_pick(x, list(vs), f) for vs in zip(*[
                payload.get(id(node)) or [_zeros(t) if f.emit else None for t in node.own_types()]
                for _, (payload, *_) in worlds])]
        for _, (_, memo, _, adopted, widen) in worlds:
            for key, node in memo.items():
                if id(f.givers.get(id(node))) == key:  # the object is that node's in every world
                    f.memo.setdefault(key, node)
            f.adopted.update(adopted)
            f.widen.update(widen)
        return _pick(x, [s for s, _ in worlds], f)

    def _forget_mirror(self, f):
        if self.mirror is not None:
            f.payload.pop(id(self.alternatives[self.mirror]), None)
            f.givers.pop(id(self.alternatives[self.mirror]), None)

    def build(self, values, b):
        if id(self) not in b:
            b[id(self)] = Either(values[id(self)][0], [a.build(values, b) for a in self.alternatives], self.mirror,
                                 self.mirror is not None and _is_shadow(self.alternatives[self.mirror]))
        return b[id(self)]


class Late(Node):
    """``node``, or no value (a variable assigned on some paths only): no value gives no payload."""

    def __init__(self, node: Node, marker):
        self.node, self.marker = node, marker

    def parts(self):
        return [self.node]

    def fit(self, x, f):
        return is_unset(x) or f.fit(self.node, x)

    def build(self, values, b):
        return self.node.build(values, b)


def choose_mirrors(roots):
    """Give each Choice among ``roots`` (and the nodes they are made of) as its mirror its first
    Owner alternative that appears nowhere else: a mirror carries the chosen value, not an array
    of its own, so no other variable may hold it.

    A Choice among views with no such alternative gets a shadow (an Owner no array fits): reads
    through the views would read their storage at a position per view, and each write through
    them at as many again, which XLA's fusion recomputed for each: a chain of writes after a
    branch that rebinds ``a = a[::-1]`` doubled its work per write, and two dozen writes ran for
    minutes or more (fuzz seed 3431814).  Reads take the shadow, which each write sets."""
    count, choices = {}, []
    def visit(node):
        count[id(node)] = count.get(id(node), 0) + 1
        if count[id(node)] == 1:
            if isinstance(node, Choice):
                choices.append(node)
            for part in node.parts():
                visit(part)
    for node in roots:
        visit(node)
    for choice in choices:
        shadow = next((a for a in choice.alternatives if _is_shadow(a)), None)  # (a nested Choice's too)
        choice.alternatives = [a for a in choice.alternatives if not _is_shadow(a)]
        choice.mirror = next((k for k, a in enumerate(choice.alternatives)
                              if isinstance(a, Owner) and count[id(a)] == 1), None)
        if choice.mirror is None and any(isinstance(a, View) for a in choice.alternatives):
            choice.alternatives.append(shadow or Owner(_array_type(choice.alternatives[0]), shadow=True))
            choice.mirror = len(choice.alternatives) - 1


def _is_shadow(node) -> bool:
    return isinstance(node, Owner) and node.shadow


class Worlds:
    """The states a region leaves where its Eithers are *entangled*: an Either made in the region
    (by a branch inside it) holds an array that another variable also holds, as ``a = acc`` and
    then ``acc = acc * 2`` under a traced if.  Fitted leaf by leaf, each variable's Either would be
    resolved on its own, and the array both hold could land in two nodes: two arrays after the
    region where NumPy has one.  So such a state is fitted once per *world*, a choice for each
    entangled Either the state reaches (``_picks``), with every Either replaced by its choice (and
    views of it re-made over the choice): each world is a state of plain arrays, whose sharing the
    fit keeps exactly.  The worlds' payloads are then merged (``merged``): the selectors pick the
    world."""

    def __init__(self, eithers: dict, picks: list):
        self.eithers = eithers  # id -> an entangled Either
        self.picks = picks      # per world: id of each Either it reaches -> the choice it takes

    @staticmethod
    def of(state, start: int) -> "Worlds | None":
        """The worlds of ``state`` (a region's bindings), or None where no Either made in the region
        (serial >= ``start``) shares an array with another variable."""
        leaves = flatten(list(state))[0]
        shared, eithers = shared_owners(leaves), {}

        def visit(x):
            x = _under_views(x)
            if isinstance(x, Either) and x.serial >= start and id(x) not in eithers \
                    and any(id(o) in shared for o in x.owners()):
                eithers[id(x)] = x
                for c in x.choices:
                    visit(c)
        for leaf in leaves:
            visit(leaf)
        return Worlds(eithers, _picks(leaves, eithers)) if eithers else None

    def states(self, state) -> list:
        """``state`` in each world."""
        out = []
        for pick in self.picks:
            memo = {}

            def chosen(x):
                if id(x) not in memo:
                    if isinstance(x, Either) and id(x) in pick:
                        memo[id(x)] = chosen(x.choices[pick[id(x)]])
                    elif isinstance(x, TracedArray) and not isinstance(x, Either) and x.lens is not None:
                        base = chosen(x.viewed)
                        memo[id(x)] = x if base is x.viewed else TracedArray(None, base, x.lens)
                    else:
                        memo[id(x)] = x
                return memo[id(x)]
            out.append([unflatten(tree, [chosen(x) for x in leaves])
                        for leaves, tree in map(flatten, state)])
        return out

    def merged(self, fits: list, emit: bool) -> Fitting:
        """One Fitting from the worlds' ``fits``.  A node that every world giving it values gave the
        same values (an array's, wherever it is) keeps them in every world; another (a Choice whose
        array sits in another alternative in each world, a node different arrays fill) carries the
        values of the world the selectors pick."""
        f = Fitting(fits[0].start, fits[0].adoptable, emit)
        for g in fits:
            f.adopted.update(g.adopted)
            f.widen.update(g.widen)
        conditions = [self._condition(pick) for pick in self.picks[:-1]] if emit else None
        for key in dict.fromkeys(k for g in fits for k in g.payload):
            given = [(g.payload[key], g.givers[key]) for g in fits if key in g.payload]
            if all(len(vs) == len(given[0][0]) and all(v is w for v, w in zip(vs, given[0][0])) and
                   giver is given[0][1] for vs, giver in given):
                f.payload[key], f.givers[key] = given[0]
                continue
            f.givers[key] = self
            per_world = [g.payload.get(key) or [_zeros(v.type) if emit else None for v in given[0][0]]
                         for g in fits]
            f.payload[key] = [_selected(conditions, list(vs)) if emit else None for vs in zip(*per_world)]
        return f

    def _condition(self, pick) -> Value:
        """The predicate (i1) that the selectors pick this world."""
        result = None
        for key, k in pick.items():
            chosen = self.eithers[key].picks(k)
            result = chosen if result is None else ops.binary("stablehlo.and", result, chosen)
        return result


def _under_views(x):
    """The array (or Either) a chain of views of ``x`` is made over."""
    while isinstance(x, TracedArray) and not isinstance(x, Either) and x.lens is not None:
        x = x.viewed
    return x


def _picks(leaves, eithers: dict) -> list:
    """The worlds of ``leaves``: a choice for each of ``eithers`` (ids -> Eithers) that the leaves
    reach through the choices taken, so an Either only another one's unchosen choice holds adds
    none.  They split the selectors' cases into disjoint parts: a world per path of a decision
    tree, fewer than all combinations where Eithers are nested (a variable a loop's iterations
    rebind under branches).  More than _MAX_WORLDS is an error."""
    worlds = []

    def explore(todo: list, pick: dict):
        while todo:
            x = _under_views(todo.pop())
            if isinstance(x, Either) and id(x) in eithers and id(x) not in pick:
                for k, choice in enumerate(x.choices):
                    explore([*todo, choice], {**pick, id(x): k})
                return
        if len(worlds) == _MAX_WORLDS:
            raise LayoutError(f"one array under several names (x = nx), and which names share it depends on the "
                              f"path taken in more than {_MAX_WORLDS} ways, more than cofactor carries (make them "
                              "separate arrays: x = nx.copy())")
        worlds.append(pick)
    explore(list(leaves), {})
    return worlds


def _selected(conditions: list, values: list) -> Value:
    """The value of ``values`` whose condition holds (``conditions``: one for each value but the last,
    which is taken where none holds)."""
    result = values[-1]
    for condition, value in zip(conditions[::-1], values[-2::-1]):
        result = ops.select(ops.broadcast_in_dim(condition, result.shape, ()), value, result)
    return result


def _pick(either: Either, values: list, f):
    """The value of ``values`` (one per choice of ``either``) that its selector picks."""
    if not f.emit:
        return None
    return _selected([either.picks(k) for k in range(len(values) - 1)], values)


def _array_type(node) -> TensorType:
    if isinstance(node, Pre):
        return node.obj.type
    if isinstance(node, (Owner, View, Number)):
        return node.type
    if isinstance(node, Choice):
        return _array_type(node.alternatives[0])
    raise LayoutError("an array on one path and a Python object on another")


def shared_owners(leaves) -> frozenset:
    """ids of the owners that more than one of ``leaves`` holds (directly, or as a view or a choice)."""
    seen, shared = set(), set()
    for leaf in leaves:
        if isinstance(leaf, TracedArray) and not leaf.scalar:
            for owner in {id(o) for o in leaf.owners()}:
                (shared if owner in seen else seen).add(owner)
    return frozenset(shared)


def export(x, start: int, memo: dict) -> Node:
    """The layout of ``x`` alone (``memo``: id -> node, so that shared objects share nodes)."""
    if id(x) in memo:
        return memo[id(x)]
    if is_unset(x):
        return Unset(x)
    if not isinstance(x, TracedArray):
        return Static(x)  # a Python object, or a number known now: it stays Python while it is the same
    if x.scalar:
        return Number(*number_type(x), python=getattr(x, "python", None))
    if x.serial < start:
        node = Pre(x)
    elif isinstance(x, Either):
        node = Choice(_alternatives([export(c, start, memo) for c in x.choices]))
    elif x.lens is None:
        node = Owner(x.type)
    else:
        node = View(export(x.viewed, start, memo), x.lens, x.type)
    memo[id(x)] = node
    return node


def join(node: Node, x, start: int, adoptable, memo: dict) -> Node:
    """A layout that fits what ``node`` fits and ``x`` too (``memo``: the nodes the other leaves of
    ``x``'s state fitted, so that an object they share keeps one node)."""
    shared = memo.get(id(x))  # the node another leaf of the state fitted x to: both must keep it
    other = shared or _adopted(export(x, start, dict(memo)), adoptable)
    node = _adopted(node, adoptable)
    if isinstance(node, Late):
        return Late(join(node.node, x, start, adoptable, memo), node.marker)
    if isinstance(other, Unset):
        return node if isinstance(node, Unset) else Late(node, other.marker)
    if isinstance(node, Unset):
        return Late(other, node.marker)
    node, other = as_number(node), as_number(other)
    if isinstance(node, Number) and isinstance(other, Number):
        return _wider(node, other)
    if _python_number_and_array(node, other):
        raise LayoutError("a Python number on one path and an array on another (give it one kind on every path: "
                          "np.asarray(...) for an array, or .item()/float(...) for a number)")
    if isinstance(node, Static) or isinstance(other, Static):
        raise LayoutError("a Python object (not an array or a number) that differs from path to path, and only "
                          "arrays and numbers can depend on a traced value")
    if isinstance(node, Owner) and isinstance(other, Owner) and node.type == other.type and shared is None:
        return node
    if isinstance(other, View) and any(isinstance(n, Choice) for n in other.base.nodes()):
        raise LayoutError("a view of an array that is itself one of several arrays (as a variable rebound to a "
                          "view of itself in a loop), which cofactor cannot carry (copy it: v = v[...].copy())")
    if max(_nesting(node), _nesting(other)) >= _MAX_NESTING:
        raise LayoutError(f"a view of an array that is one of several arrays, each again one of several, {_MAX_NESTING} "
                          "deep (as a variable rebound to a view of itself under a traced if, in an unrolled loop): "
                          "every write through it would write each of them, twice as many at each level (copy it: "
                          "v = v[...].copy())")
    alternatives = _alternatives([node, other])
    if len(alternatives) > _MAX_CHOICES:
        raise LayoutError(f"one of more than {_MAX_CHOICES} different arrays, depending on the path taken")
    return Choice(alternatives)


def _python_number_and_array(a: Node, b: Node) -> bool:
    """A Python number is not subscriptable and has no storage (NumPy scalars index and broadcast
    like 0-d arrays): a variable that is one or an array, chosen at run time, cannot be carried."""
    weak = [n for n in (a, b) if isinstance(n, Number) and n.weak is not None and not n.arms]
    return len(weak) == 1 and not isinstance(b if weak[0] is a else a, Number)


def _nesting(node: Node) -> int:
    """How deep Eithers nest under the array that a view layout reads and writes (0: not a view)."""
    if not isinstance(node, View):
        return 0
    while isinstance(node, View):
        node = node.base
    return nesting(node.obj) if isinstance(node, Pre) else 0


def _alternatives(nodes) -> list:
    """The alternatives of a Choice among ``nodes``: nested Choices flattened (a choice among
    choices is a choice among their alternatives), each array made before the region once."""
    out, pre = [], set()
    for node in nodes:
        for alt in node.alternatives if isinstance(node, Choice) else [node]:
            if any(alt is o for o in out):
                continue
            if isinstance(alt, Pre):
                if id(alt.obj) in pre:
                    continue
                pre.add(id(alt.obj))
            out.append(alt)
    return out


def _wider(a: Number, b: Number) -> Number:
    if a.type.shape != b.type.shape:
        raise LayoutError("numbers of different shapes", (a.type, b.type))
    weak, python = _kinds(a, b.weak, b.python)  # Python's own promotion: int < float < complex
    return Number(a.type.with_dtype(_promoted(a.type, a.weak, b.type, b.weak)), weak, a.arms, python)


def _promoted(a: TensorType, a_weak, b: TensorType, b_weak) -> np.dtype:
    """The dtype of a variable that holds one of two numbers: NumPy's promotion (NEP 50), where a
    Python number (weak) takes the other's dtype if that holds its kind (0 then acc += x[i] on
    float32 is float32), as it would at its first operation with it.  One that it does not hold (a
    Python float and an int64, a Python int and a bool) is a KindError."""
    if (a_weak is None) == (b_weak is None):
        return np.result_type(a.dtype, b.dtype)
    (strong, _), (number, weak) = sorted([(a, a_weak), (b, b_weak)], key=lambda t: t[1] is not None)
    dtype = np.result_type(strong.dtype, weak(0))
    if dtype != strong.dtype:
        raise KindError("a Python number and a NumPy value of another kind", (strong, number.with_dtype(dtype)))
    return dtype


def expect_made(node: Node, adoptable) -> Node:
    """``node`` joined with a new array of its type (a variable a loop body rebinds)."""
    node = _adopted(node, adoptable)
    return node if isinstance(node, Owner) else Choice([node, Owner(_array_type(node))])


def _adopted(node: Node, adoptable) -> Node:
    """An array made before the region that nothing else sees is carried by value when its variable changes."""
    if isinstance(node, Pre) and id(node.obj) in adoptable:
        return Owner(node.obj.type)
    return node


def as_number(node: Node) -> Node:
    """A number known at trace time that must become a traced one."""
    if isinstance(node, Static) and is_number(node.value):
        return Number(*number_type(node.value))
    return node

