"""TracedArray: what a user's function sees in place of an array while it is traced.

It records every NumPy operation into the IR through NumPy's own protocols
(``__array_ufunc__`` and ``__array_function__``), so unmodified NumPy code
runs.  Behaviour comes from the registry in ``dispatch.py``; this class only
routes operators, methods and properties there.

Names, storage and views, as NumPy has them:

- An *owner* holds the current IR value of its storage (``_value``).  Writing it (``a[...] = v``,
  ``a += 1``, ``out=``) replaces that value, and every object viewing the owner sees it: a *view*
  holds the array it views (``viewed``) and a ``lens`` and reads and writes through them
  (views.py).  An ``Either`` is an array that is one of several arrays, which one decided at run
  time (a variable rebound in one branch of a traced ``if`` and updated in place in the other):
  it reads the chosen one and writes each of them where chosen.
- A Python name is bound to an object; rebinding it (``s = s + 1``) changes only the name.
  The converted control flow (control.py) carries both the bindings a region changes and the
  storage it writes.
- NumPy scalars and Python numbers are values, not storage: ``scalar`` arrays are immutable
  (``s -= 1`` rebinds ``s``), and ``weak`` ones stand for Python numbers (NEP 50: their dtype
  yields to arrays').  0-d arrays made by ``np.zeros(())`` and the like stay mutable.
- ``serial`` orders creation, so control flow knows which arrays a region made itself;
  ``stale`` (a message) marks an owner that control flow replaced by a merged copy, after
  proving no variable it can see still holds it: any later use raises instead of reading
  a value that is no longer the program's.
"""
from __future__ import annotations

import gc
import itertools
import operator
import sys

import numpy as np

from ..errors import (ConcretizationError, TracingError, UnsupportedError, asked_by_user_code, located, numpy_rules,
                      unconverted_caller)
from ..ir import ops
from ..ir.core import Value, current_block
from . import context, dispatch

_serials = itertools.count()


def defers_tracing(x) -> bool:
    """An array with run-time extents (numpy/extent.py): TracedArray's protocols leave it to its own,
    and outputs keep it whole, to cut it to its lengths after the call."""
    return getattr(type(x), "defers_tracing", False)  # (the class's: an object's own __getattr__ is not asked)


def serial_now() -> int:
    """A serial later than every array made so far: arrays made from now on have larger ones."""
    return next(_serials)


class TracedArray:
    """A traced array: either the owner of an IR value, or a view (``viewed`` + ``lens``)
    whose value is read from, and written into, the array it views (NumPy's ``base`` is the
    owner at the end of that chain)."""

    __slots__ = ("_value", "viewed", "lens", "_read", "serial", "scalar", "weak", "bounds", "stale", "mirrored_by",
                 "__weakref__")
    __array_priority__ = 1000
    path_dependent = False  # a number whose kind depends on the path taken (path_numbers.py)

    def __getattr__(self, name):
        """An ndarray attribute cofactor does not implement is a clear error at the user's line."""
        if not name.startswith("_") and hasattr(np.ndarray, name):
            raise located(UnsupportedError(
                f"ndarray.{name} is not supported in compiled code: express it with other NumPy operations, or "
                f"call it outside cf.jit"))
        kind = self.weak if self.weak is not None else self.dtype.type if self.scalar else np.ndarray
        if hasattr(kind, name) and not name.startswith("_"):  # (a Python number's method: float(x).hex())
            raise located(UnsupportedError(
                f"{kind.__name__}.{name}() of a traced {'Python number' if self.weak else 'scalar'} is not supported "
                "in compiled code: express it with NumPy operations, or compute it after the call"))
        raise AttributeError(f"'{kind.__name__}' object has no attribute '{name}'")

    def __init__(self, value: Value | None, base: "TracedArray | None" = None, lens=None, scalar=False, weak=None):
        self._value = value
        self.viewed = base  # the array this one is a view of (itself maybe a view)
        self.lens = lens
        self._read = None  # (base value, block, view value) of the last read
        self.serial = next(_serials)
        self.scalar = scalar  # a NumPy scalar or a Python number: immutable
        self.weak = weak      # int, float or complex for a Python number (NEP 50 weak), else None
        self.bounds = None    # a Python int's least and greatest values, where known (python_ints.py)
        self.stale = None
        self.mirrored_by = None  # the Eithers among whose choices this owner is, that keep a mirror of it

    @property
    def value(self) -> Value:
        if self.lens is None:
            if self.stale is not None:
                raise located(TracingError(self.stale))
            return self._value
        base_value = self.viewed.value
        block = current_block()  # a value read inside a branch or function is not visible outside it
        if self._read is None or self._read[0] is not base_value or self._read[1] is not block:
            self._read = (base_value, block, self.lens.read(base_value))
        return self._read[2]

    @value.setter
    def value(self, new: Value):
        if self.lens is None:
            if self.stale is not None:
                raise located(TracingError(self.stale))
            journals = context.current().journals
            if journals:
                journals[-1].entries.append((self, self._value))
            self._value = new
            if self.mirrored_by:
                block = current_block()  # an Either whose region has ended is gone
                self.mirrored_by = [e for e in self.mirrored_by if block.sees(e.selector)]
                for either in self.mirrored_by:
                    either.refresh()
        else:
            self.viewed.value = self.lens.write(self.viewed.value, new)

    @property
    def type(self):
        if self.lens is None:
            return self._value.type
        return self.lens.type_of(self.viewed.type) or self.value.type

    def owners(self) -> list:
        """The owners whose storage this array reads and writes."""
        return [self] if self.lens is None else self.viewed.owners()

    def stands_for(self) -> type:
        """The type user code sees (``type(x)``, ``isinstance``): a Python number's, a NumPy
        scalar's, or ndarray."""
        return self.weak or (self.dtype.type if self.scalar else np.ndarray)

    # --- static properties ---------------------------------------------------------
    shape = property(lambda self: self.type.shape, lambda self, shape: _set_shape(self, shape))
    dtype = property(lambda self: self.type.dtype)
    ndim = property(lambda self: self.type.rank)
    size = property(lambda self: self.type.size)
    itemsize = property(lambda self: self.type.dtype.itemsize)
    strides = property(lambda self: _strides(self))
    flags = property(lambda self: Flags(self))
    nbytes = property(lambda self: self.type.size * self.type.dtype.itemsize)
    T = property(lambda self: np.transpose(self))
    mT = property(lambda self: np.swapaxes(self, -1, -2))
    real = property(lambda self: _as_int(self) if self.weak is bool else np.real(self),  # (True.real is 1)
                    lambda self, v: np.real(self).__setitem__(Ellipsis, v))
    imag = property(lambda self: _as_int(self) * 0 if self.weak is bool else np.imag(self),
                    lambda self, v: _set_imag(self, v))

    @property
    def base(self):
        """NumPy's ``base``: the array whose memory a view reads (past views of views), else None."""
        if self.lens is None and id(self) in context.current().arguments and not self.scalar:
            raise located(UnsupportedError(
                "the .base of an array given to the compiled function (an argument, or an array read from outside "
                "it): whether it views another of the caller's arrays is not part of what cofactor compiles for"))
        if self.lens is None or self.scalar:
            return None
        x = self.viewed
        while x.lens is not None:
            x = x.viewed
        chosen = x.base if isinstance(x, Either) else None  # a view of one of several views
        return x if chosen is None else chosen

    def __repr__(self):
        return self._text("repr")

    def __str__(self):
        return self._text("str")

    def __format__(self, spec):
        return self._text("format", spec)

    def _text(self, how, spec=""):
        """This value's text: in a raise's message checked at run time, a token for its run-time text;
        asked by user code while traced (``"%s" % x``, ``"{}".format(x)``, a dataclass's repr, str() of a
        list of them), a clear error, since the text would be the trace's, silently; while print prints
        at trace time (code being differentiated twice), and in cofactor's own messages, the trace's."""
        shown = self._shown(how, spec)
        if shown is not None:
            return shown
        if context.is_tracing() and not context.current().printing_now and asked_by_user_code():
            self.no_text({"repr": "repr()", "str": "str() or %-formatting"}.get(how) or
                         f"formatting{f' (format spec {spec!r})' if spec else ''}")
        return self.trace_text()

    def trace_text(self) -> str:
        """What this value is while traced: what a print at trace time shows, and cofactor's messages."""
        kind = "Python number" if self.weak else "scalar" if self.scalar else "TracedArray"
        return f"{kind}(shape={self.shape}, dtype={self.dtype})"

    def no_text(self, what):
        """Refuse ``what`` (str(), a format spec) of this value: its text is known only at run time."""
        raise located(ConcretizationError(
            f"{what} of a traced {'number' if self.scalar else 'array'} needs its value, which is only known when "
            "the compiled function runs (its text now would be the trace's, not the value's): format the result "
            "after the call, or make the string in print's arguments (an f-string, %-formatting or str.format "
            "there is formatted when the program runs)"))

    def __copy__(self):
        """copy.copy / copy.deepcopy: a new array, as ndarray's (a number is its own copy)."""
        return self if self.scalar else np.copy(self)

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __hash__(self):  # (a dict key or a set element: hashed by its value in NumPy)
        if not self.scalar:
            raise located(TypeError("unhashable type: 'numpy.ndarray'"))
        raise located(ConcretizationError(
            "a traced number used as a dict key or a set element (hashed by its value, which is only known when "
            "the compiled function runs): count with np.unique or np.bincount, or keep the keys in an array"))

    def _shown(self, how, spec=""):
        """In the message of a raise checked at run time, a token for this value (tracing/checks.py)."""
        checks = context.current().checks if context.is_tracing() else None
        return checks.placeholder(self, how, spec) if checks is not None and checks.shown is not None else None

    def __contains__(self, value):
        raise located(ConcretizationError(
            "`v in x` of a traced array needs its values, which are only known when the compiled function runs: "
            "use np.any(x == v) (which cofactor traces) in an if, or np.isin"))

    def __len__(self):
        if self.weak is not None:
            raise located(TypeError(f"object of type '{self.weak.__name__}' has no len()"))
        if not self.shape:
            raise located(TypeError("len() of unsized object"))
        return self.shape[0]

    def __iter__(self):
        if self.weak is not None:
            raise located(TypeError(f"'{self.weak.__name__}' object is not iterable"))
        if not self.shape:
            raise located(TypeError("iteration over a 0-d array"))
        return (self[i] for i in range(self.shape[0]))

    # --- NumPy protocols ------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(defers_tracing(x) for x in (*inputs, *(kwargs.get("out") or ()))):
            return NotImplemented  # an array with a run-time extent takes it (numpy/extent.py)
        first = serial_now()
        return _as_scalars(dispatch.call_ufunc(ufunc, method, inputs, kwargs), first)

    def __array_function__(self, func, types, args, kwargs):
        if any(getattr(t, "defers_tracing", False) for t in types):  # (types, not instances)
            return NotImplemented
        first = serial_now()
        result = dispatch.call_function(func, args, kwargs)
        return result if func in ARRAY_RESULTS else _as_scalars(result, first)

    def __array__(self, dtype=None, copy=None):
        library = _library_caller()
        if library is not None:
            raise located(UnsupportedError(
                f"{library} is not supported by cofactor on traced arrays (it converts its input to a NumPy "
                "array, whose values are only known when the compiled function runs)"))
        raise located(ConcretizationError(
            "a traced array cannot become a NumPy array: its values are only known when the compiled "
            "function runs (use NumPy functions on it, which cofactor traces; for a list of traced "
            "arrays use np.stack; to write traced values into an array, create it inside the compiled "
            "function, e.g. out = np.zeros(n))"))

    # --- values that Python needs now ----------------------------------------------------
    def known(self):
        """The value of an array the function made from constants alone (np.arange(3), 2 ** np.arange(3), an
        element of one): known while tracing, as NumPy's (None: a traced value)."""
        lenses, x = [], self
        while x.lens is not None:
            if x.lens.values():
                return None
            lenses.append(x.lens)
            x = x.viewed
        literal = getattr(x.value.owner, "literal", None) if x.value.owner is not None else None
        if literal is None:
            return None
        known = np.asarray(literal)
        try:
            for lens in reversed(lenses):
                known = lens.on_numpy(known)
        except NotImplementedError:
            return None
        return known

    def _concrete(self, what):
        if self.ndim:  # (NumPy's error, whatever the values)
            raise located(TypeError("only integer scalar arrays can be converted to a scalar index" if what == "index"
                                    else "only 0-dimensional arrays can be converted to Python scalars"))
        known = self.known()
        if known is not None:  # (for size in 2 ** np.arange(3): np.arange(0, n, size) takes it)
            return {"float": float, "int": int, "complex": complex, "index": operator.index}[what](known[()])
        raise located(ConcretizationError(
            f"{what}() of a traced array: its value is not known at compile time, only when the "
            "compiled function runs, and the code asking for it (a library function such as chr() or "
            "np.format_float_positional, or a NumPy array made outside the compiled function that it is "
            "stored into) needs it as a Python number: compute that after the call, or create the array "
            "inside the function, e.g. out = np.zeros(n)"))

    def __bool__(self):
        unconverted = unconverted_caller()
        if unconverted is not None:
            raise located(ConcretizationError(
                f"bool() of a traced array in {unconverted.co_name} ({unconverted.co_filename}), whose source cofactor "
                "cannot read (a function defined by exec or at a REPL, a lambda it cannot single out on its line, or "
                "a file edited since the function was defined: reload its module), so it runs as written: its if / "
                "while / for, conditional expressions and and / or / not cannot depend on traced values. Define it "
                "in a file (one lambda per line), or use np.where / np.any / np.all"))
        raise located(ConcretizationError(
            "bool() of a traced array: its truth value is not known at compile time, only when the compiled "
            "function runs. "
            "cofactor compiles if / while / for statements, assert, conditional expressions, and / or / not and "
            "min() / max() / any() / all() on traced values in your functions' source; elsewhere (bool(), "
            "min() / max() with key=, a comprehension's if, code whose source cannot be read) use NumPy "
            "instead: np.where(cond, a, b), np.any / np.all, or a boolean mask"))

    def __float__(self):
        return self._concrete("float")

    def __int__(self):
        return self._concrete("int")

    def __complex__(self):
        return self._concrete("complex")

    def __index__(self):
        return self._concrete("index")

    def is_integer(self):
        """``float.is_integer()`` of a traced Python float (and NumPy's of a float scalar): a traced Python bool."""
        if not self.scalar or self.dtype.kind not in "fiub":
            raise located(AttributeError(f"'{self.stands_for().__name__}' object has no attribute 'is_integer'"))
        return python_bool(np.logical_and(np.isfinite(self), np.floor(self) == self) if self.dtype.kind == "f" else
                           TracedArray(ops.constant(np.array(True))))

    def item(self, *args):
        """The element as a Python number, traced: its value is known when the compiled function runs."""
        if not args:
            if self.size != 1:
                raise located(ValueError("can only convert an array of size 1 to a Python scalar"))
            element = np.reshape(self, ())
        elif len(args) == 1 and not isinstance(args[0], tuple):
            element = np.ravel(self)[args[0]]
        else:
            element = self[args[0] if len(args) == 1 else args]
        return _python_number(element)

    def tolist(self):
        """Nested lists of the elements as traced Python numbers."""
        if not self.shape:
            return self.item()
        return [row.tolist() for row in self]

    # --- indexing ----------------------------------------------------------------------------
    def __getitem__(self, index):
        if self.weak is not None:  # a Python number carried as a traced value is still not an array
            raise located(TypeError(f"'{self.weak.__name__}' object is not subscriptable"))
        return dispatch.call_method("__getitem__", (self, index), {})

    def __setitem__(self, index, value):
        if self.scalar:
            name = self.weak.__name__ if self.weak else f"numpy.{self.dtype.type.__name__}"
            raise located(TypeError(f"'{name}' object does not support item assignment"))
        return dispatch.call_method("__setitem__", (self, index, value), {})


class Journal:
    """Records the owners written while it is open, each with its value before the first write
    (control flow carries what a branch or a loop body writes).  Owners made stale while it is
    open are stale only until it closes: a branch's copies mean nothing in the other branch.  A
    region whose tracing fails leaves the owners as it found them (a loop then unrolled, say,
    starts from the values before the failed attempt)."""

    def __enter__(self):
        self.entries = []
        self.staled = []
        self.block = current_block()  # the region's block: what is written there, the region carries
        context.current().journals.append(self)
        return self

    def __exit__(self, failed, *exc):
        context.current().journals.pop()
        for owner, before in reversed(self.staled):
            owner.stale = before
        if failed is not None:
            self.undo()

    def undo(self):
        """Put back what the owners held before the writes recorded so far (and forget those writes)."""
        for owner, old in reversed(self.entries):
            owner._value = old
        self.entries.clear()


    def written(self) -> list:
        """(owner, value before) of each owner written, in the order of their first writes."""
        first = {}
        for owner, old in self.entries:
            first.setdefault(id(owner), (owner, old))
        return list(first.values())


def make_stale(owner, message):
    """Mark ``owner`` stale (any use raises ``message``) for the rest of the branch or loop body
    being traced, or of the trace."""
    journals = context.current().journals
    if journals:
        journals[-1].staled.append((owner, owner.stale))
    owner.stale = message


_UNTRACED_MODULES = {"numpy.ma": "numpy.ma", "numpy.polynomial": "numpy.polynomial", "numpy.matrixlib": "numpy.matrix"}
_UNTRACED_OBJECTS = {"RClass": "numpy.r_", "CClass": "numpy.c_", "vectorize": "numpy.vectorize"}  # (by class)


def _library_caller() -> str | None:
    """The function of a NumPy submodule cofactor does not trace (np.ma, np.polynomial, np.matrix: they
    do not dispatch to it) that the user called and that asked for a traced array's values; None from
    elsewhere."""
    frame, found = sys._getframe(2), None
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        shown = next((name for prefix, name in _UNTRACED_MODULES.items()
                      if module == prefix or module.startswith(prefix + ".")), None)
        instance = type(frame.f_locals.get("self")).__name__ if module.startswith("numpy") else None
        if instance in _UNTRACED_OBJECTS:
            found = _UNTRACED_OBJECTS[instance]
        elif shown is not None:
            found = shown if frame.f_code.co_name == "__new__" else f"{shown}.{frame.f_code.co_name}"
        elif found is not None or not module.startswith("numpy"):
            return found
        frame = frame.f_back
    return found


class Either(TracedArray):
    """An array that is one of ``choices`` (arrays of one shape and dtype), which one given at
    run time by ``selector`` (an int32 scalar Value): what a variable holds after a branch
    that binds it to different arrays, when another variable may still see one of them.
    Reading it reads the chosen one; writing it writes each choice where it is the chosen one,
    so every alias sees what NumPy would show it.

    ``mirror``: the index of a choice made for this Either (no one else holds it) that always
    holds the chosen array's value: reads take it, no select needed.  Writes keep it so, and a
    write to another choice from elsewhere refreshes it.  ``shadow``: the mirror is no array of
    the program's, only the chosen value (carry.py, ``choose_mirrors``): the selector never picks it."""

    __slots__ = ("selector", "choices", "mirror", "shadow", "_writing", "depth")

    def __init__(self, selector: Value, choices, mirror=None, shadow=False):
        super().__init__(None)
        self.selector = selector
        self.choices = list(choices)
        self.mirror = mirror
        self.shadow = shadow
        self._writing = False
        self.depth = 1 + max(nesting(c) for c in self.choices)  # a write writes up to 2**depth arrays
        if mirror is not None:
            for k, choice in enumerate(self.choices):
                for owner in choice.owners() if k != mirror else ():
                    owner.mirrored_by = (owner.mirrored_by or []) + [self]

    def arrays(self) -> list:
        """The choices that are arrays of the program's (all but a shadow)."""
        return [c for k, c in enumerate(self.choices) if not (self.shadow and k == self.mirror)]

    @property
    def base(self):
        """The base of the chosen array: one array, None, or an Either of bases over the same selector."""
        bases = [c.base for c in self.arrays()]
        if all(b is bases[0] for b in bases):
            return bases[0]
        if any(b is None or (b.shape, b.dtype) != (bases[0].shape, bases[0].dtype) for b in bases):
            raise located(UnsupportedError(
                ".base of a variable that holds one of several arrays, chosen at run time by a traced branch, "
                "whose bases differ in kind (a view on one path, not on another, or bases of different shapes): "
                "compare the arrays themselves with `is` or np.shares_memory, which cofactor traces"))
        if self.shadow:  # never picked: any base holds its place
            bases.insert(self.mirror, bases[0])
        return Either(self.selector, bases)

    def picks(self, k: int) -> Value:
        """The predicate (i1) that the selector picks choice ``k``."""
        return ops.compare(self.selector, ops.constant(np.array(k, np.int32)), "EQ")

    def _chosen(self, k: int, shape) -> Value:
        return ops.broadcast_in_dim(self.picks(k), shape, ())

    def _selected(self) -> Value:
        reads = [c.value for c in self.choices]
        result = reads[-1]
        for k in range(len(reads) - 2, -1, -1):
            result = ops.select(self._chosen(k, result.shape), reads[k], result)
        return result

    @property
    def value(self) -> Value:
        if self.mirror is not None:
            return self.choices[self.mirror].value
        reads = [c.value for c in self.choices]
        block = current_block()
        if self._read is None or self._read[0] != reads or self._read[1] is not block:
            self._read = (reads, block, self._selected())
        return self._read[2]

    @value.setter
    def value(self, new: Value):
        self._writing = True
        try:
            for k, choice in enumerate(self.choices):
                if not choice.scalar:  # a number is a value: see updated()
                    choice.value = self._masked(k, new, choice)
        finally:
            self._writing = False

    def _masked(self, k: int, new: Value, choice) -> Value:
        """What choice ``k`` holds after the Either is written with ``new``."""
        return new if k == self.mirror else ops.select(self._chosen(k, new.shape), new, choice.value)

    def holds_numbers(self) -> bool:
        return any(c.scalar or isinstance(c, Either) and c.holds_numbers() for c in self.choices)

    def updated(self, new: Value) -> "Either":
        """``self op= x`` when some choices are numbers (a variable that is a 0-d array on one path
        and a NumPy scalar on another, also inside a choice that is itself an Either): the arrays
        are written where chosen, and the numbers, immutable, are replaced: the variable is bound
        to a new Either."""
        self._writing = True
        try:
            choices = []
            for k, c in enumerate(self.choices):
                if c.scalar:
                    c = TracedArray(new, scalar=True, weak=c.weak)
                elif isinstance(c, Either) and c.holds_numbers():
                    c = c.updated(self._masked(k, new, c))
                else:
                    c.value = self._masked(k, new, c)
                choices.append(c)
        finally:
            self._writing = False
        return Either(self.selector, choices, self.mirror, self.shadow)

    def refresh(self):
        """One of the choices was written from elsewhere: the mirror takes the chosen value again."""
        if not self._writing:
            self.choices[self.mirror].value = self._selected()

    @property
    def type(self):
        return self.choices[0].type

    def owners(self) -> list:
        return [owner for c in self.choices for owner in c.owners()]


def identical(a, b):
    """``a is b``, where a variable may hold an Either (one of several arrays, chosen at run time):
    whether the objects they hold are one, as a traced bool where that depends on the path taken."""
    return a is b or _one_of(a, b, lambda x: x)


def share_storage(a, b):
    """Whether ``a`` and ``b`` (arrays, views, Eithers) read one owner's storage: a traced bool where
    that depends on the path taken."""
    def owner(x):
        while isinstance(x, TracedArray) and not isinstance(x, Either) and x.viewed is not None:
            x = x.viewed
        return x
    return _one_of(owner(a), owner(b), owner)


def _one_of(a, b, leaf):
    """Whether some object that ``a`` may be is one that ``b`` may be, where both are."""
    result = False
    for when_a, x in _may_be(a, leaf):
        for when_b, y in _may_be(b, leaf):
            if x is not y:
                continue
            both = [w for w in (when_a, when_b) if w is not None]
            if not both:
                return True
            both = both[0] if len(both) == 1 else ops.binary("stablehlo.and", *both)
            result = both if result is False else ops.binary("stablehlo.or", result, both)
    return result if result is False else TracedArray(result, scalar=True)


def _may_be(x, leaf) -> list:
    """(when, object) for each object that ``x`` is where the traced predicate ``when`` holds (None:
    always): an Either is each of its choices (``leaf`` of it) where its selector picks that one."""
    if not isinstance(x, Either):
        return [(None, leaf(x))]
    out = []
    for k, choice in enumerate(x.choices):
        chosen = x.picks(k)
        out += [(chosen if when is None else ops.binary("stablehlo.and", chosen, when), y)
                for when, y in _may_be(choice, leaf)]
    return out


def nesting(x: TracedArray) -> int:
    """How deep Eithers nest under the array that ``x`` (or the array it views) is."""
    while not isinstance(x, Either) and x.lens is not None:
        x = x.viewed
    return x.depth if isinstance(x, Either) else 0


_PYTHON_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}  # dtype kind -> Python number type


def _python_number(element: TracedArray):
    """A traced element as the Python number NumPy's ``item()`` gives (in the dtype NumPy gives
    Python numbers: int64, float64, complex128; a bool a Python bool)."""
    kind = element.dtype.kind
    if kind == "b":
        return python_bool(element)
    wide = {"i": np.int64, "u": np.int64, "f": np.float64, "c": np.complex128}[kind]
    from . import python_ints
    python_ints.check_unsigned_fits(element)
    return _as_python_number(TracedArray(ops.convert(ops.reshape(element.value, ()), wide), scalar=True))


def is_python_number(x) -> bool:
    """A Python bool, int, float or complex, or a traced stand-in for one (NEP 50 weak)."""
    return type(x) in (bool, int, float, complex) or isinstance(x, TracedArray) and x.weak is not None


def python_bool(truth: "TracedArray") -> "TracedArray":
    """A traced 0-d truth value as a traced Python bool (``not x``, ``k in (0, 2)``, ``item()`` of a bool)."""
    return TracedArray(ops.reshape(truth.value, ()), scalar=True, weak=bool)


def _is_python_bool(x) -> bool:
    return type(x) is bool or isinstance(x, TracedArray) and x.weak is bool


def _as_int(flag):
    """A traced Python bool as the Python int it is in arithmetic."""
    return TracedArray(ops.convert(flag.value, np.int64), scalar=True, weak=int)


_BITWISE = (np.bitwise_and, np.bitwise_or, np.bitwise_xor)
_COMPARING = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)


def _bools_as_ints(ufunc, operands) -> tuple:
    """Python's bools in arithmetic are the ints 0 and 1 (``True + True`` is 2, ``~True`` is -2, ``-True``
    is -1); only comparisons, and ``&``, ``|``, ``^`` of two bools, keep them bools, as Python's do."""
    bools = [_is_python_bool(x) for x in operands]
    if not any(bools) or ufunc in _COMPARING or ufunc in _BITWISE and all(bools):
        return operands
    return tuple(x if not is_bool else int(x) if type(x) is bool else _as_int(x) for x, is_bool in zip(operands, bools))


def _as_python_number(result):
    """``result`` (a fresh traced scalar) as a Python number of its dtype's kind."""
    if isinstance(result, tuple):
        return tuple(_as_python_number(r) for r in result)
    result.weak = _PYTHON_TYPES.get(result.dtype.kind)
    return result


def python_arithmetic(ufunc, *operands):
    """Python's arithmetic on Python numbers some of which are traced: computed in the dtypes
    NumPy gives Python numbers (int64, float64, complex128), and again a Python number (an int
    checked where it could pass int64's range: python_ints.py)."""
    from . import python_ints
    operands = _bools_as_ints(ufunc, operands)
    operands = python_ints.python_operands(ufunc, python_ints.wide_constants(operands))  # (Python's ZeroDivisionError, 2 ** -1 a float)
    strong = [TracedArray(x.value, scalar=True) if isinstance(x, TracedArray) else np.asarray(x) for x in operands]
    result = _as_python_number(ufunc(*strong))
    first = result[0] if isinstance(result, tuple) else result
    if first.weak is int and all(type(x) is int or getattr(x, "weak", None) is int for x in operands):
        python_ints.checked(ufunc, operands, first)
    python_ints.python_overflow(ufunc, operands, first)
    return result


def _operator(ufunc, reflected=False):
    def apply(self, other):
        operands = (other, self) if reflected else (self, other)
        if ufunc is np.multiply and isinstance(other, (list, tuple, str)) and self.scalar:  # Python's repetition
            if self.dtype.kind not in "iub":
                kind = self.weak.__name__ if self.weak else f"numpy.{self.dtype}"
                raise located(TypeError(f"can't multiply sequence by non-int of type '{kind}'"))
            raise located(ConcretizationError(
                f"a {type(other).__name__} repeated a traced number of times ([0] * n): its length would be known only "
                "when the compiled function runs (make an array instead: np.zeros(n) with n known, or a mask)"))
        if self.weak is not None and is_python_number(other):
            return python_arithmetic(ufunc, *operands)
        if not reflected and _defers_to(other):
            return NotImplemented
        if _object_operand(other):
            if self.scalar:
                return NotImplemented  # (a NumPy scalar or Python number: the object's own method, as in NumPy)
            if not hasattr(type(other), _REFLECTED.get(ufunc, "")):  # NumPy's object loop: Python's TypeError
                raise located(TypeError(f"unsupported operand type(s) for {ufunc.__name__}: "
                                        f"'numpy.{self.dtype}' and '{type(other).__name__}'"))
            raise located(UnsupportedError(
                f"an array and a {type(other).__name__} object in an operator: NumPy makes an array of objects "
                f"({type(other).__name__}'s own operator applied to each element), which cofactor does not compile "
                "(apply the operation to the numbers the object holds)"))
        return ufunc(*operands)
    return apply


def _defers_to(other) -> bool:
    """NumPy's rule for an array's operator: the other operand's reflected method is Python's to try
    where its class opts out of ufuncs (``__array_ufunc__ = None``) or, without ``__array_ufunc__``,
    outranks an array by ``__array_priority__``."""
    cls = type(other)
    if isinstance(other, (TracedArray, np.ndarray, np.generic)) or cls.__module__ == "builtins":
        return False
    if hasattr(cls, "__array_ufunc__"):
        return cls.__array_ufunc__ is None
    return float(getattr(other, "__array_priority__", -1e6)) > 0.0


def _object_operand(other) -> bool:
    """An operand NumPy can only hold as an object (an instance of a class with no array protocol)."""
    cls = type(other)
    return not (isinstance(other, (TracedArray, np.ndarray, np.generic, list, tuple))
                or cls.__module__ == "builtins" or cls.__module__.startswith("cofactor.")
                or defers_tracing(other) or hasattr(cls, "__array__") or hasattr(cls, "__array_interface__")
                or hasattr(cls, "__array_ufunc__") or hasattr(cls, "__array_function__"))


def _unary(ufunc):
    return lambda self: python_arithmetic(ufunc, self) if self.weak is not None else ufunc(self)


BINARY_OPERATORS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "matmul": np.matmul,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "lshift": np.left_shift, "rshift": np.right_shift, "divmod": np.divmod,
}
for _name, _ufunc in BINARY_OPERATORS.items():
    setattr(TracedArray, f"__{_name}__", _operator(_ufunc))
    setattr(TracedArray, f"__r{_name}__", _operator(_ufunc, reflected=True))
    if _name != "divmod":
        setattr(TracedArray, f"__i{_name}__", (lambda u: lambda self, other: _update(self, u, other))(_ufunc))

_REFLECTED = {ufunc: f"__r{name}__" for name, ufunc in BINARY_OPERATORS.items()}  # (what an object's element takes)

COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                "gt": np.greater, "ge": np.greater_equal}
for _name, _ufunc in COMPARISONS.items():
    setattr(TracedArray, f"__{_name}__", _operator(_ufunc))


def _to_none(equal: bool):
    """``x == None`` (``equal``) or ``x != None``: what NumPy answers without reading the values (a Python
    bool for a number, an array of it for an array; a newcomer's ``if best == None``)."""
    compare = TracedArray.__eq__ if equal else TracedArray.__ne__

    def operator(self, other):
        if other is not None:
            return compare(self, other)
        if self.scalar:
            return not equal
        return TracedArray(ops.constant(np.full(self.shape, not equal)), scalar=self.ndim == 0)
    return operator


TracedArray.__eq__, TracedArray.__ne__ = _to_none(True), _to_none(False)

for _name, _ufunc in {"neg": np.negative, "pos": np.positive, "abs": np.absolute, "invert": np.invert}.items():
    setattr(TracedArray, f"__{_name}__", _unary(_ufunc))


def _set_imag(array, v):
    if array.dtype.kind != "c":
        raise located(TypeError("array does not have imaginary part to set"))
    np.imag(array)[...] = v


def _update(array, ufunc, *other):
    """``array op= other``: the same object (and the base it views) holds the result, cast as
    NumPy's ``out=`` casts.  A scalar is immutable: the operator makes a new one, which Python
    binds to the name."""
    if array.scalar:
        return _operator(ufunc)(array, *other) if other else _unary(ufunc)(array)
    result = ufunc(array, *other)
    if not np.can_cast(result.dtype, array.dtype, casting="same_kind"):
        raise located(TypeError(
            f"Cannot cast ufunc '{ufunc.__name__}' output from {result.dtype!r} to {array.dtype!r} "
            "with casting rule 'same_kind'"))
    new = ops.convert(np.broadcast_to(result, array.shape).value, array.dtype)
    if isinstance(array, Either) and array.holds_numbers():
        return array.updated(new)
    array.value = new
    return array


def _is_two(exponent) -> bool:
    """NumPy computes ``x ** 2`` (a Python int 2) as np.square(x): booleans give int8, not int64."""
    return type(exponent) is int and exponent == 2


def _power(self, other):
    return _unary(np.square)(self) if _is_two(other) else _operator(np.power)(self, other)


TracedArray.__pow__ = _power
TracedArray.__rpow__ = _operator(np.power, reflected=True)
TracedArray.__ipow__ = lambda self, other: _update(self, np.square) if _is_two(other) else \
    _update(self, np.power, other)

def _strides(array: TracedArray) -> tuple:
    """NumPy's strides for this array: its owner is C-contiguous, and its lenses are NumPy's views."""
    from .views import strided_like
    return strided_like(array).strides


class Flags:
    """``a.flags`` of a traced array: its memory layout as NumPy's flags give it (by attribute or by
    name, ``a.flags["C_CONTIGUOUS"]``); whether an array given to the function owns its data or may be
    written is the caller's, which cofactor does not compile for."""

    _NAMES = {"C": "c_contiguous", "CONTIGUOUS": "c_contiguous", "C_CONTIGUOUS": "c_contiguous", "F": "f_contiguous",
              "FORTRAN": "f_contiguous", "F_CONTIGUOUS": "f_contiguous", "W": "writeable", "WRITEABLE": "writeable",
              "O": "owndata", "OWNDATA": "owndata", "A": "aligned", "ALIGNED": "aligned", "FNC": "fnc", "FORC": "forc",
              "BEHAVED": "behaved", "CARRAY": "carray", "FARRAY": "farray"}

    def __init__(self, array: TracedArray):
        from .views import ReadOnly, strided_like
        self._array, self._layout = array, strided_like(array).flags
        self._read_only = any(isinstance(lens, ReadOnly) for lens in _lenses(array))

    def __getitem__(self, name):
        if name not in self._NAMES:
            raise KeyError(f"Unknown flag {name}")
        return getattr(self, self._NAMES[name])

    def _owned(self, what):
        root = self._array
        while root.lens is not None:
            root = root.viewed
        if root is self._array and id(root) in context.current().arguments:
            raise located(UnsupportedError(f"flags.{what} of an array given to the compiled function is the caller's "
                                           "(whether it views another array, or may be written), which cofactor does "
                                           "not compile for"))

    c_contiguous = contiguous = property(lambda self: self._layout.c_contiguous)
    f_contiguous = fortran = property(lambda self: self._layout.f_contiguous)
    forc = property(lambda self: self.c_contiguous or self.f_contiguous)
    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous)
    aligned = property(lambda self: True)

    @property
    def writeable(self):
        self._owned("writeable")
        return not self._read_only

    @writeable.setter
    def writeable(self, value):
        raise located(UnsupportedError("setting flags.writeable of a traced array is not supported by cofactor "
                                       "(nor is ndarray.setflags): copy the array where it must not change"))

    def __setitem__(self, name, value):
        setattr(self, self._NAMES.get(name, name), value)

    def __setattr__(self, name, value):
        if name.startswith("_") or name == "writeable":
            object.__setattr__(self, name, value)
        else:
            raise located(UnsupportedError(f"setting flags.{name} of a traced array is not supported by cofactor"))

    @property
    def owndata(self):
        self._owned("owndata")
        return self._array.lens is None

    behaved = property(lambda self: self.aligned and self.writeable)
    carray = property(lambda self: self.behaved and self.c_contiguous)
    farray = property(lambda self: self.behaved and self.fnc)


def _lenses(array):
    while array.lens is not None:
        yield array.lens
        array = array.viewed


def _set_shape(array: TracedArray, shape):
    """``a.shape = shape``: ``a`` itself takes the shape, on the same storage (other views keep theirs)."""
    from .views import Reshape, laid_out, strided_like
    if array.scalar:
        raise located(AttributeError("attribute 'shape' of 'numpy.generic' objects is not writable"))
    fake = strided_like(array)
    with numpy_rules():  # NumPy's checks and errors: a size that differs, strides that need a copy
        fake.shape = shape
    if array.lens is None and id(array) in context.current().arguments:
        raise located(UnsupportedError(
            "assigning .shape of an array given to the compiled function (an argument, or an array read from outside "
            "it) would change the caller's array object, which cofactor does not do: use x = x.reshape(...)"))
    if array.lens is not None:  # a view: now a reshape of what it was
        array.viewed, array.lens, array._read = TracedArray(None, array.viewed, array.lens), Reshape(fake.shape), None
    elif any(isinstance(r, TracedArray) and r.viewed is array for r in gc.get_referrers(array)):
        raise located(UnsupportedError("assigning .shape of an array that views of it still read is not supported "
                                       "(they would keep its old shape): use a = a.reshape(...)"))
    else:
        array.value = ops.reshape(array.value, fake.shape)
        context.current().layouts.pop(id(array), None)
        laid_out(array, fake.strides if not fake.flags.c_contiguous else None)  # (NumPy's strides for the new shape)


def _round(self, ndigits=None):
    """Python's round() of a NumPy scalar or a Python number (an ndarray has none): NumPy's round
    half to even; to no digits, a Python int, as NumPy's ``__round__`` gives."""
    if not self.scalar:
        raise located(TypeError("type numpy.ndarray doesn't define __round__ method"))
    from . import python_ints
    if self.weak is float and ndigits is not None:
        return python_ints.python_round(self, operator.index(ndigits))
    rounded = np.round(self, 0 if ndigits is None else ndigits)
    if ndigits is None:  # (a Python int: Python's errors for NaN and infinities, cofactor's past int64)
        return python_ints.python_int(rounded) if rounded.dtype.kind == "f" else _python_number(rounded)
    return rounded


TracedArray.__round__ = _round


class FlatIterator:
    """``a.flat``: the elements of ``a`` in C order, read by index and written through into ``a``."""

    def __init__(self, base: TracedArray):
        self.base = base

    def __len__(self):
        return self.base.size

    def __iter__(self):
        return (self[k] for k in range(len(self)))

    def __getitem__(self, index):
        return self.base.flatten()[index]

    def __setitem__(self, index, new):
        elements = self.base.flatten()
        elements[index] = new
        self.base[...] = elements.reshape(self.base.shape)

    def copy(self):
        return self.base.flatten()


def _set_flat(array: TracedArray, values):
    """``a.flat = values``: NumPy's elements in C order, ``values`` repeated as far as they go."""
    FlatIterator(array)[...] = np.resize(np.ravel(values), array.size)


def _not_settable(name, instead):
    def refuse(array, value):
        raise located(UnsupportedError(f"assigning ndarray.{name} is not supported by cofactor: {instead}"))
    return refuse


TracedArray.flat = property(FlatIterator, _set_flat)
TracedArray.dtype = property(TracedArray.dtype.fget, _not_settable("dtype", "use a = a.view(dtype)"))
TracedArray.strides = property(TracedArray.strides.fget, _not_settable(
    "strides", "use np.lib.stride_tricks.as_strided"))

# Methods that are the NumPy function of the same name with the array first.
_FUNCTION_METHODS = [
    "sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin", "any", "all",
    "cumsum", "cumprod", "swapaxes", "repeat", "argsort", "dot", "clip", "round", "trace", "diagonal",
    "nonzero", "take", "searchsorted",
]  # not ptp: NumPy 2 removed the method


def _function_method(name):
    func = getattr(np, name)
    return lambda self, *args, **kwargs: func(self, *args, **kwargs)


for _name in _FUNCTION_METHODS:
    setattr(TracedArray, _name, _function_method(_name))
TracedArray.compress = lambda self, condition, axis=None, out=None: np.compress(condition, self, axis, out)

# Methods whose signature differs from the NumPy function's (``x.reshape(2, 3)``).
for _name in ["reshape", "transpose", "astype", "copy", "flatten", "ravel", "squeeze", "view",
              "fill", "sort", "conj", "conjugate"]:
    setattr(TracedArray, _name, (lambda n: lambda self, *args, **kwargs: _method(n, self, args, kwargs))(_name))


def _method(name, array, args, kwargs):
    """A method whose result is a scalar when the array is one (``s.copy()``, ``s.astype(...)``)."""
    first = serial_now()
    result = dispatch.call_method(name, (array, *args), kwargs)
    return _as_scalars(result, first) if array.scalar else result


# NumPy functions whose 0-d results are arrays, not scalars (most return scalars for 0-d results).
ARRAY_RESULTS = {np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.copy,
                 np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.where, np.require,
                 np.broadcast_to, np.reshape, np.squeeze, np.transpose, np.expand_dims, np.moveaxis,
                 np.swapaxes, np.real, np.imag, np.ravel, np.atleast_1d, np.atleast_2d, np.atleast_3d}


def _as_scalars(result, first):
    """``result`` with its 0-d arrays made during the call (serial after ``first``) turned into
    NumPy scalars, as NumPy returns them."""
    for x in result if isinstance(result, (tuple, list)) else (result,):
        if isinstance(x, TracedArray) and x.serial > first and x.lens is None and x.type.rank == 0:
            x.scalar = True
    return result


def constant(x) -> TracedArray:
    """A traced constant holding the NumPy (or device) array ``x``."""
    return TracedArray(ops.constant(np.asarray(x)))
