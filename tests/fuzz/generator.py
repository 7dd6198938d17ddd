"""Random NumPy programs for differential testing: ``generate(seed)`` writes a module with a
``def f(...)`` (and the helper functions it calls) and builds its arguments.

The programs mix rebinding, in-place updates, aliases and views with traced and Python
control flow: the mixtures that cofactor's rewriting of control flow has to get right. The
generator tracks each variable's kind (array, NumPy scalar or Python number), dtype and shape so
that most programs are valid NumPy, and keeps values bounded (products with tanh or constants,
divisions away from zero, Python ints only added to small numbers) so that they rarely overflow.
Each program computes in one float dtype (float64 or float32) and one int dtype (int64 or int32),
drawn from its seed (``DTYPES``): its arguments, constructors (dtype=) and NumPy scalar literals
have them; expressions keep them (an int operand of a float32 expression is a Python int or is
cast), except for deliberate NEP 50 mixing: Python numbers with float32 / int32 values, float64
values and int arrays updating float32 arrays in place (same_kind casting), a Python 0 or 0.0
accumulating NumPy scalars, now and then a float64 / int64 value (np.zeros(5) without dtype=,
the int64 sum of an int32 array).
Everything random comes from ``random.Random(seed)`` (the code) and
``np.random.default_rng(seed)`` (the arguments), so a seed names a program.
"""
from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np


# The dtypes a program computes in: (float dtype, int dtype) and how often each pair is drawn.
# Most programs keep NumPy's defaults; the others use float32 and/or int32 throughout (arguments,
# constructors, NumPy scalar literals), with a little deliberate mixing (see ``operand``).
DTYPES = [(("float64", "int64"), 62), (("float32", "int32"), 20), (("float32", "int64"), 10),
          (("float64", "int32"), 8)]


@dataclass(frozen=True)
class Kind:
    cat: str            # "array", "npscalar" (a NumPy scalar), "pyint" or "pyfloat"
    dtype: str          # "float64", "float32", "int64" or "int32"; "int" / "float" for a Python
    shape: tuple = ()    # number (set from cat: it takes the dtype of what it meets, NEP 50)

    def __post_init__(self):
        if self.cat in ("pyint", "pyfloat"):
            object.__setattr__(self, "dtype", self.cat[2:])
        else:
            assert self.dtype in ("float64", "float32", "int64", "int32"), self.dtype

    @property
    def python(self):
        return self.cat in ("pyint", "pyfloat")

    @property
    def floating(self):
        return self.dtype.startswith("float")


PYINT, PYFLOAT = Kind("pyint", "int"), Kind("pyfloat", "float")

# f's possible parameters (each program takes a subset), in signature order: (cat, "F" for the
# program's float dtype or "I" for its int dtype, shape), and how often a program takes each.
PARAMS = {"a": ("array", "F", (5,)), "b": ("array", "F", (5,)), "m": ("array", "F", (3, 4)),
          "c": ("array", "I", (5,)), "s": ("npscalar", "F", ()), "t": ("array", "F", ()),
          "n": ("pyint", "I", ()), "j": ("npscalar", "I", ()), "x": ("pyfloat", "F", ())}
PARAM_ODDS = {"j": 0.25, "x": 0.3}    # the others 0.55

FLOATS = ["0.5", "1.0", "1.5", "2.0", "-0.5", "0.25", "-1.0", "3.0"]
INTS = ["1", "2", "3", "5", "7"]
THRESHOLDS = ["0.0", "0.5", "1.0", "-0.5", "2.0", "-1.0"]
FLOAT_AUG = ["+=", "-=", "*=", "/=", "//="]
INT_AUG = ["+=", "-=", "^=", "&=", "|=", ">>="]
MAX_DEPTH = 3          # statements nested in if / while / for / def
MAX_EXPR_DEPTH = 2

# The statement grammar: rule, weight outside loops, weight inside loops. Rules that do not
# apply where they are drawn (no loop to break, no array to view, ...) give way to another draw.
STATEMENTS = [
    ("assign", 8, 5), ("rebind", 7, 7), ("augassign", 10, 12), ("augassign_region", 5, 6),
    ("setitem", 6, 6), ("ufunc_out", 2, 2), ("fill", 1, 1), ("alias", 4, 2), ("view", 5, 3),
    ("empty_like", 1, 0.5), ("self_assign", 0.5, 2), ("if", 7, 4), ("while", 2.5, 1),
    ("for_range", 4, 1.5), ("for_n", 1.5, 0.5), ("for_rows", 1.5, 0.5), ("jump", 0, 5),
    ("early_return", 1.5, 1.5), ("nested_def", 2.5, 0), ("call_nested", 8, 8),
    ("call_helper", 2.5, 2), ("mistake", 0.3, 0.3), ("accumulate", 1.5, 0.5), ("check", 0.6, 0.6),
    ("collect", 1, 0.3), ("window", 2, 3), ("grow", 0.6, 0.3),
]
COMPOUND = {"if", "while", "for_range", "for_n", "for_rows", "nested_def"}
UNROLL = 8             # cofactor's default: longer static ranges become one rolled loop


@dataclass
class Program:
    """A module defining f (and its helpers), f's arguments, and which constructs it uses."""
    seed: int
    source: str
    params: list
    args: tuple
    to_device: bool                  # pass the arrays to cofactor as ConcreteArrays
    constructs: Counter = field(default_factory=Counter)
    dtypes: tuple = ("float64", "int64")     # the program's float and int dtypes

    def with_source(self, source, params=None):
        """This program with other code (and maybe fewer of its parameters): for the shrinker."""
        params = self.params if params is None else params
        args = tuple(a for p, a in zip(self.params, self.args) if p in params)
        return replace(self, source=source, params=list(params), args=args)


def generate(seed: int) -> Program:
    return _Generator(seed).program()


def make_arguments(params, seed, dtypes=("float64", "int64")):
    rng = np.random.default_rng(seed)
    F, I = (np.dtype(d).type for d in dtypes)
    values = {"a": np.round(rng.uniform(-2, 2, 5), 2).astype(F), "b": np.round(rng.uniform(-2, 2, 5), 2).astype(F),
              "m": np.round(rng.uniform(-2, 2, (3, 4)), 2).astype(F), "c": rng.integers(-8, 9, 5).astype(I),
              "s": F(round(rng.uniform(-1, 1), 2)), "t": np.array(round(rng.uniform(-1, 1), 2), dtype=F),
              "n": int(rng.integers(0, 13)), "j": I(rng.integers(-6, 7)), "x": round(float(rng.uniform(-1, 1)), 2)}
    return tuple(values[p] for p in params)


def views(shape):
    """(suffix, shape) of views NumPy gives of an array of ``shape``; no views of size < 2."""
    if shape == ():
        return [("[...]", ())]
    out = [("[...]", shape), ("[:]", shape), ("[::-1]", shape)]
    if len(shape) == 1:
        (k,) = shape
        out += [("[1:]", (k - 1,)), ("[:-1]", (k - 1,)), ("[1:-1]", (k - 2,)), ("[::2]", ((k + 1) // 2,))]
        if k % 2 == 0:
            out.append((f".reshape(2, {k // 2})", (2, k // 2)))
        if k == 12:
            out.append((".reshape(3, 4)", (3, 4)))
        if k == 5:
            out.append((".reshape(1, 5)", (1, 5)))
    else:
        r, k = shape
        out += [("[0]", (k,)), (f"[{r - 1}]", (k,)), ("[:, 0]", (r,)), ("[:, -1]", (r,)), (".T", (k, r)),
                ("[1:]", (r - 1, k)), ("[:, ::2]", (r, (k + 1) // 2)), (f".reshape({r * k})", (r * k,))]
    return [(suffix, s) for suffix, s in out if np.prod(s) >= 2]


def _view_label(suffix):
    for pattern, label in [("reshape", "reshape"), (".T", "transpose"), ("...", "ellipsis"), ("::-1", "reverse"),
                           ("::", "step"), ("[:, ", "column"), (":", "slice")]:
        if pattern in suffix:
            return label
    return "row"


@dataclass(frozen=True)
class Var:
    kind: Kind
    assignable: bool = True     # False: loop variables, while counters, names of an enclosing function
    static: bool = True         # a Python number cofactor knows at trace time
    base: str | None = None     # what it aliases or views (for the construct counts)
    loop: bool = False          # a for loop's variable


@dataclass(frozen=True)
class Func:
    name: str
    params: tuple               # kinds
    ret: Kind | None


@dataclass
class Ctx:
    scope: dict
    fn: str = "f"               # "f", "nested" or "helper"
    depth: int = 0
    loop: str | None = None     # the innermost loop around ("for" / "while"), for break and continue
    traced: bool = False        # under a traced condition or in a rolled loop
    ret: tuple | None = None    # the kinds a return gives here
    funcs: list = field(default_factory=list)   # nested functions defined so far (shared)

    def child(self, **changes):
        return replace(self, scope=dict(self.scope), depth=self.depth + 1, **changes)


@dataclass
class E:
    """A generated expression: its code, its category and whether it needs no parentheses."""
    code: str
    cat: str
    atom: bool = True

    def wrap(self):
        return self.code if self.atom else f"({self.code})"


def join(a: Kind, b: Kind):
    """The kind a variable has after two paths gave it kinds a and b (None: none fits both)."""
    if a == b:
        return a
    if a.floating != b.floating or a.shape != b.shape:
        return None
    dtypes = {k.dtype for k in (a, b) if not k.python}
    if len(dtypes) != 1:
        return None
    # scalars of one dtype (or a Python number and a NumPy scalar): treat as an immutable NumPy scalar
    return Kind("npscalar", dtypes.pop())


def fits(kind: Kind, want: Kind):
    """Whether a value of ``kind`` can stand for one of ``want``'s dtype and shape (a Python number
    for a NumPy scalar of its kind: NEP 50 gives the other operand's dtype)."""
    return kind.shape == want.shape and kind.floating == want.floating \
        and (kind.dtype == want.dtype or kind.python or want.python)


def natural(dtype):
    """Whether a Python number becomes ``dtype`` where NumPy converts it on its own (np.tanh(0.5),
    np.asarray(3)): float64 and int64."""
    return dtype in ("float64", "int64", "float", "int")


def shape_code(shape):
    return str(shape[0]) if len(shape) == 1 else str(shape)


class _Generator:
    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed)
        self.used = Counter()
        self.counter = itertools.count()
        self.helpers = []           # (Func, source lines)
        self.nested = 0
        self.uncalled = set()       # nested functions not called yet: calls to them are drawn more often
        self.budget = 0
        self.F, self.I = self.rng.choices([d for d, _ in DTYPES], [w for _, w in DTYPES])[0]
        F, I = self.F, self.I
        self.VEC, self.MAT, self.IVEC = Kind("array", F, (5,)), Kind("array", F, (3, 4)), Kind("array", I, (5,))
        self.ZERO_D, self.FSCALAR, self.ISCALAR = Kind("array", F, ()), Kind("npscalar", F), Kind("npscalar", I)
        # Values of NumPy's default dtypes that narrow programs now and then make (np.zeros(5) without
        # dtype=, c.sum() of int32): they mix with the program's own dtypes.
        self.spills = [Kind("npscalar", "float64"), Kind("array", "float64", (5,))] * (F != "float64") \
            + [Kind("npscalar", "int64")] * (I != "int64")

    def concrete(self, dtype):
        """The program's dtype for a Python number's "float" / "int"; a NumPy dtype as it is."""
        return {"float": self.F, "int": self.I}.get(dtype, dtype)

    def param_kind(self, p):
        cat, dtype, shape = PARAMS[p]
        return Kind(cat, self.F if dtype == "F" else self.I, shape)

    def dtype_code(self, dtype):
        """How the program names a dtype: np.float32 mostly, now and then "float32"."""
        return f"np.{dtype}" if self.rng.random() < 0.8 else f'"{dtype}"'

    def dtype_kw(self, dtype):
        """``, dtype=...`` for a constructor that makes float64 without one (often left out then)."""
        if dtype == "float64" and self.rng.random() < 0.8:
            return ""
        return f", dtype={self.dtype_code(dtype)}"

    def scalar_literal(self, dtype, value):
        self.note(f"literal:np.{dtype}")
        return E(f"np.{dtype}({value})", "npscalar")

    def numpy_arg(self, ctx, e, dtype):
        """e's code as the argument of a NumPy function that should give ``dtype``: a Python number
        becomes np.float32(...) / np.int32(...) where NumPy would make it float64 / int64."""
        if e.cat.startswith("py") and not natural(dtype):
            return self.cast_scalar(ctx, e.code, dtype)
        return e.code

    def cast_scalar(self, ctx, code, dtype):
        """A scalar (or 0-d array) converted to ``dtype``: np.float32(x) for a number known at trace
        time; for a traced one mostly np.asarray(x, dtype=...) (a 0-d array, which NumPy treats as
        that dtype's scalar), as cofactor refuses np.float32(x) of a traced value (a clear error)."""
        if not self.is_traced(code, ctx) or self.rng.random() < 0.2:
            return f"np.{dtype}({code})"
        return f"np.asarray({code}, dtype={self.dtype_code(dtype)})"

    # ---- the program -------------------------------------------------------------------------
    def program(self):
        rng = self.rng
        params = [p for p in PARAMS if rng.random() < PARAM_ODDS.get(p, 0.55)]
        if not {"a", "b", "m"} & set(params):
            params.insert(0, rng.choice("abm"))
            params.sort(key=list(PARAMS).index)
        dtypes = (self.F, self.I)
        self.note(*[f"dtype:{d}" for d in dtypes])
        args = make_arguments(params, self.seed, dtypes)
        self.n = args[params.index("n")] if "n" in params else None
        size = rng.choices([1, 2, 3, 4], [2, 4, 3, 1])[0]
        spec = tuple(rng.choices([self.VEC, self.MAT, self.FSCALAR, self.ISCALAR, PYINT, self.IVEC],
                                 [4, 2, 4, 1, 1, 1], k=size))
        ctx = Ctx({p: Var(self.param_kind(p), assignable=p != "n") for p in params}, ret=spec)
        header = ""
        if rng.random() < 0.25:  # a global array f reads and may write (never rebinds: that would make it local)
            values = ", ".join(str(v) for v in np.round(np.random.default_rng(self.seed).uniform(-2, 2, 5), 2))
            header = f"G = np.array([{values}]{self.dtype_kw(self.F)})\n\n\n"
            ctx.scope["G"] = Var(self.VEC, assignable=False)
            self.note("global")
        self.budget = rng.randint(5, 22)
        body = self.block(ctx) + [self.return_stmt(ctx, spec)]
        functions = [lines for _, lines in self.helpers] + [[f"def f({', '.join(params)}):"] + _indent(body)]
        source = "import numpy as np\n\n\n" + header + "\n\n\n".join("\n".join(lines) for lines in functions) + "\n"
        return Program(self.seed, source, params, args, rng.random() < 0.5, self.used, dtypes)

    def note(self, *labels):
        self.used.update(labels)

    def fresh(self, prefix):
        return f"{prefix}{next(self.counter)}"

    def block(self, ctx, size=None):
        """Statements until the budget is spent (size None) or ``size`` of them; at least one."""
        lines, count = [], 0
        while not lines or (self.budget > 0 and (size is None or count < size)):
            lines += self.statement(ctx)
            count += 1
        return lines

    def statement(self, ctx):
        self.budget -= 1
        names = [name for name, _, _ in STATEMENTS]
        weights = [(inside if ctx.loop else outside) * (4 if name == "call_nested" and self.uncalled else 1)
                   for name, outside, inside in STATEMENTS]
        while True:
            name = self.rng.choices(names, weights)[0]
            if name in COMPOUND and (ctx.depth >= MAX_DEPTH or self.budget <= 0):
                continue
            lines = getattr(self, "stmt_" + name)(ctx)
            if lines:
                return lines

    def merge(self, ctx, scopes):
        """Give each variable of ctx the kind that fits it on every path in ``scopes``."""
        for name, var in list(ctx.scope.items()):
            found = [s[name] for s in scopes if name in s]
            kind = var.kind if len(found) == len(scopes) else None
            for other in found:
                kind = kind and join(kind, other.kind)
            if kind is None:
                del ctx.scope[name]
            else:
                bases = {v.base for v in found}
                ctx.scope[name] = replace(var, kind=kind, static=all(v.static for v in found),
                                          base=bases.pop() if len(bases) == 1 else None)

    def is_traced(self, code, ctx):
        """Whether code reads a value cofactor does not know at trace time."""
        names = set(re.findall(r"\b[A-Za-z_]\w*\b", code)) & ctx.scope.keys()
        return any(not (ctx.scope[n].kind.python and ctx.scope[n].static) for n in names)

    def pick(self, ctx, test, assignable=False):
        names = [n for n, v in ctx.scope.items() if test(v.kind) and (v.assignable or not assignable)]
        return self.rng.choice(names) if names else None

    # ---- simple statements ---------------------------------------------------------------------
    def stmt_assign(self, ctx):
        rng = self.rng
        arrays = [v.kind for v in ctx.scope.values() if v.kind.cat == "array"]
        want = rng.choice([self.VEC, self.MAT, self.IVEC, self.FSCALAR, self.FSCALAR, self.ISCALAR, PYINT, PYFLOAT,
                           self.ZERO_D] + arrays)
        if self.spills and rng.random() < 0.08:
            want = rng.choice(self.spills)
            self.note(f"spill:{want.dtype}")
        e = self.expr(ctx, want)
        prefix = {"array": "x", "npscalar": "r", "pyint": "q", "pyfloat": "p"}[want.cat]
        name = self.fresh("z" if want == self.ZERO_D else prefix)
        self.bind(ctx, name, Kind(e.cat, want.dtype, want.shape), e.code)
        self.note("assign")
        return [f"{name} = {e.code}"]

    def bind(self, ctx, name, kind, code, base=None, **var):
        ctx.scope[name] = Var(kind, static=not ctx.traced and not self.is_traced(code, ctx), base=base, **var)

    def stmt_rebind(self, ctx):
        name = self.pick(ctx, lambda k: True, assignable=True)
        if name is None:
            return None
        kind = ctx.scope[name].kind
        want = kind
        if kind.cat == "array" and kind.shape == () and not ctx.loop:
            want = Kind("npscalar", kind.dtype)  # a NumPy scalar: fine outside loops (inside, setitem may follow)
        elif kind.python and self.rng.random() < 0.15:
            want = Kind("npscalar", self.concrete(kind.dtype))   # a Python number becomes a traced one
            self.note("rebind:python_to_numpy")
        e = self.expr(ctx, want)
        self.bind(ctx, name, Kind(e.cat, want.dtype, want.shape), e.code)
        self.note("rebind")
        return [f"{name} = {e.code}"]

    def stmt_augassign(self, ctx, target=None):
        name = target or self.pick(ctx, lambda k: True, assignable=True)
        if name is None:
            return None
        var = ctx.scope[name]
        kind = var.kind
        op, rhs = self.aug_rhs(ctx, kind)
        new = kind
        if kind.python and not rhs.cat.startswith("py"):
            new = Kind("npscalar", self.concrete(kind.dtype))     # NEP 50: the NumPy scalar's dtype
        ctx.scope[name] = replace(var, kind=new,
                                  static=var.static and not ctx.traced and not self.is_traced(rhs.code, ctx))
        on = "view" if var.base and kind.cat == "array" else "0d" if kind.cat == "array" and not kind.shape \
            else kind.cat
        self.note("augassign", f"aug{op}", f"aug_on:{on}", *[f"aug_on:{on}_traced"] * (kind.python and ctx.traced))
        return [f"{name} {op} {rhs.code}"]

    def aug_rhs(self, ctx, kind, shape=None):
        """An augmented operator for a target of ``kind`` and its right-hand side."""
        shape = kind.shape if shape is None else shape
        target = Kind("array", self.concrete(kind.dtype), shape)
        op = self.rng.choice(FLOAT_AUG if kind.floating else INT_AUG)
        if kind.python and self.rng.random() < 0.85:
            return op, self.python_operand(ctx, kind.dtype, op)
        # An array is updated in place: NumPy casts the result to its dtype (same_kind), so the
        # right-hand side may have another dtype of the same kind (float64 into float32).
        return op, self.operand(ctx, target, op[:-1], 1, inplace=kind.cat == "array")

    def region(self, ctx, shape):
        """A subscript (suffix, its shape) a write may target in an array of ``shape``: a slice,
        a row, an element."""
        options = [(s, sh) for s, sh in views(shape) if s.endswith("]")] + [("index", shape[1:])] * (2 * bool(shape)) \
            + [("element", ())] * (len(shape) == 2)
        suffix, sub = self.rng.choice(options)
        if suffix == "index":
            return f"[{self.index(ctx, shape[0])}]", sub
        if suffix == "element":
            return f"[{self.index(ctx, shape[0])}, {self.index(ctx, shape[1])}]", sub
        return suffix, sub

    def stmt_augassign_region(self, ctx, target=None):
        name = target or self.pick(ctx, lambda k: k.cat == "array" and k.shape)
        if name is None:
            return None
        kind = ctx.scope[name].kind
        suffix, shape = self.region(ctx, kind.shape)
        op, rhs = self.aug_rhs(ctx, kind, shape)
        self.note("augassign", f"aug{op}", f"aug_on:{_view_label(suffix) if shape else 'element'}")
        return [f"{name}{suffix} {op} {rhs.code}"]

    def stmt_setitem(self, ctx, target=None):
        name = target or self.pick(ctx, lambda k: k.cat == "array")
        if name is None:
            return None
        kind = ctx.scope[name].kind
        suffix, shape = self.region(ctx, kind.shape)
        dtype = kind.dtype if self.rng.random() < 0.95 else self.F     # floats into ints truncate
        value = self.operand(ctx, Kind("array", dtype, shape), "+", 1, inplace=True)
        self.note("setitem", f"setitem:{_view_label(suffix) if shape else 'element'}")
        return [f"{name}{suffix} = {value.code}"]

    def stmt_ufunc_out(self, ctx):
        name = self.pick(ctx, lambda k: k.cat == "array" and k.shape)
        if name is None:
            return None
        kind = ctx.scope[name].kind
        suffix, shape = ("", kind.shape) if self.rng.random() < 0.5 else self.rng.choice(views(kind.shape))
        want = Kind("array", kind.dtype, shape)
        ufunc = self.rng.choice(["add", "subtract", "maximum"] + ["multiply"] * kind.floating)
        # out= casts the result to out's dtype (same_kind): the operands may mix dtypes
        x = self.operand(ctx, want, "+", 1, inplace=True)
        y = self.operand(ctx, want, "*" if ufunc == "multiply" else "+", 1, inplace=True)
        if x.cat.startswith("py") and y.cat.startswith("py"):
            x = E(self.numpy_arg(ctx, x, kind.dtype), "npscalar")
        self.note("ufunc_out", "ufunc_out:view" if suffix else "ufunc_out:array")
        return [f"np.{ufunc}({x.code}, {y.code}, out={name}{suffix})"]

    def stmt_fill(self, ctx):
        name = self.pick(ctx, lambda k: k.cat == "array")
        if name is None:
            return None
        value = self.expr(ctx, Kind("npscalar", ctx.scope[name].kind.dtype), 1)
        self.note("fill")
        return [f"{name}.fill({value.code})"]

    def stmt_alias(self, ctx):
        name = self.pick(ctx, lambda k: True)
        if name is None:
            return None
        alias = self.fresh("y")
        ctx.scope[alias] = replace(ctx.scope[name], assignable=True, loop=False, base=name)
        self.note("alias", f"alias:{ctx.scope[name].kind.cat}")
        return [f"{alias} = {name}"]

    def stmt_view(self, ctx):
        name = self.pick(ctx, lambda k: k.cat == "array")
        if name is None:
            return None
        var = ctx.scope[name]
        suffix, shape = self.rng.choice(views(var.kind.shape))
        view = self.fresh("w" if var.base else "v")
        ctx.scope[view] = Var(Kind("array", var.kind.dtype, shape), static=False, base=name)
        self.note("view", f"view:{_view_label(suffix)}", *["view_of_view"] * bool(var.base))
        return [f"{view} = {name}{suffix}"]

    def stmt_empty_like(self, ctx):
        name = self.pick(ctx, lambda k: k.cat == "array" and k.shape)
        if name is None:
            return None
        kind = ctx.scope[name].kind
        new = self.fresh("x")
        value = self.operand(ctx, kind, "+", 1, inplace=True)
        ctx.scope[new] = Var(kind, static=False)
        if self.rng.random() < 0.5:
            self.note("empty_like")
            make = f"np.empty_like({name})"
        else:
            self.note("empty")
            make = f"np.empty({shape_code(kind.shape)}{self.dtype_kw(kind.dtype)})"
        return [f"{new} = {make}", f"{new}[...] = {value.code}"]

    def stmt_accumulate(self, ctx):
        """A Python number accumulating NumPy scalars in a loop (rolled or not): after the first
        step it is a NumPy scalar of NEP 50's dtype (``acc = 0; acc += x[i]`` on float32 is
        float32; ``acc = 0.0; acc += c[i]`` on int32 is float64)."""
        rng = self.rng
        name = self.pick(ctx, lambda k: k.cat == "array" and k.shape)
        if name is None:
            return None
        kind = ctx.scope[name].kind
        start = rng.choice(["0", "0.0"]) if kind.floating else rng.choice(["0", "0", "0.0"])
        count = rng.choice([3, 5, 9, 12])
        acc, i = self.fresh("acc"), self.fresh("i")
        if len(kind.shape) == 1 or rng.random() < 0.5:
            index = ", ".join(f"{i} % {k}" for k in kind.shape)
            step, dtype = f"{name}[{index}]", kind.dtype
        else:
            method = rng.choice(self.reductions(kind.dtype))
            step = f"{name}[{i} % {kind.shape[0]}].{method}()"
            dtype = {"sum": "int64", "mean": "float64"}.get(method, kind.dtype) if not kind.floating else kind.dtype
        update = rng.choice([f"{acc} += {step}", f"{acc} = {acc} + {step}"])
        dtype = str(np.result_type(np.dtype(dtype), 0.0 if "." in start else 0))
        ctx.scope[acc] = Var(Kind("npscalar", dtype), static=False)
        self.note("accumulate", f"accumulate:{'rolled' if count > UNROLL else 'unrolled'}",
                  f"accumulate:{'pyfloat' if '.' in start else 'pyint'}_{dtype}")
        return [f"{acc} = {start}", f"for {i} in range({count}):", f"    {update}"]

    def stmt_collect(self, ctx):
        """A list a loop (rolled or not) appends NumPy values to, then summed, counted or made an
        array: cofactor unrolls a loop whose list grows (with an UnrolledLoopWarning)."""
        rng = self.rng
        name = self.pick(ctx, lambda k: k.cat == "array" and k.shape)
        if name is None:
            return None
        kind = ctx.scope[name].kind
        count = rng.choice([0, 3, 5, 9, 12, 20])
        lst, i, out = self.fresh("lst"), self.fresh("i"), self.fresh("y")
        rows = len(kind.shape) == 2 and rng.random() < 0.5
        item = f"{name}[{i} % {kind.shape[0]}]" + (".copy()" if rows else f" * {rng.choice([1, 2])}")
        use = rng.choice(["sum", "len", "array"])
        if use == "len":
            result, var = f"len({lst})", Var(PYINT, static=True)
        elif use == "sum":
            result = f"sum({lst})"
            var = Var(Kind("array", kind.dtype, kind.shape[1:]) if rows and count else
                      Kind("npscalar", kind.dtype) if count else PYINT, static=not count)
        else:
            result, var = f"np.array({lst}).sum()", Var(Kind("npscalar", kind.dtype if count else "float64"),
                                                         static=False)
        ctx.scope[out] = var
        self.note("collect", f"collect:{'rolled' if count > UNROLL else 'unrolled'}", f"collect:{use}")
        return [f"{lst} = []", f"for {i} in range({count}):", f"    {lst}.append({item})", f"{out} = {result}"]

    def stmt_grow(self, ctx):
        """A Python int a loop multiplies, rolled past UNROLL steps (cofactor carries it as a traced
        int64): where Python's passes int64's range cofactor must raise a clear error, not wrap; now
        and then the loop writes it into an int array (NumPy's OverflowError past that dtype's range).
        The loop's work stays Python's (no array is updated unless that write runs); made small after."""
        rng = self.rng
        count, factor = rng.choice([9, 12, 30, 45, 70]), rng.choice([2, 3])
        q, i = self.fresh("q"), self.fresh("i")
        body = [f"    {q} = {q} * {factor} + {i} % 2"]
        target = self.pick(ctx, lambda k: k.cat == "array" and not k.floating and len(k.shape) == 1, assignable=True)
        if target is not None and rng.random() < 0.5:
            body.append(f"    {target}[{i} % {ctx.scope[target].kind.shape[0]}] = {q}")
        ctx.scope[q] = Var(PYINT, static=False)
        self.note("grow", f"grow:{'rolled' if count > UNROLL else 'unrolled'}", *["grow:store"] * (len(body) > 1),
                  *["grow:past_int64"] * (factor ** count > 2 ** 62))
        return [f"{q} = 1", f"for {i} in range({count}):", *body, f"{q} = {q} % 7"]

    def stmt_self_assign(self, ctx):
        name = self.pick(ctx, lambda k: True, assignable=True)
        if name is None:
            return None
        self.note("self_assign", *["self_assign:rolled_loop"] * bool(ctx.loop and ctx.traced))
        return [f"{name} = {name}"]

    def stmt_mistake(self, ctx):
        """A statement NumPy rejects (when it runs): cofactor must raise the same class of error."""
        vec = self.pick(ctx, lambda k: k.cat == "array" and len(k.shape) == 1)
        mat = self.pick(ctx, lambda k: k.cat == "array" and len(k.shape) == 2 and k.shape[0] != 1)
        ints = self.pick(ctx, lambda k: k.cat == "array" and not k.floating, assignable=True)
        floats = self.pick(ctx, lambda k: k.cat == "array" and k.floating, assignable=True)
        options = [f"{self.fresh('x')} = {vec} + {mat}" if vec and mat else None,   # ValueError
                   f"{ints} += 0.5" if ints else None,                                 # TypeError
                   f"{floats} ^= 1" if floats else None,                               # TypeError
                   f"{self.fresh('r')} = {vec}[{ctx.scope[vec].kind.shape[0] + 2}]" if vec else None]   # IndexError
        options = [o for o in options if o]
        if not options:
            return None
        self.note("mistake")
        return [self.rng.choice(options)]

    # ---- control flow --------------------------------------------------------------------------
    def stmt_if(self, ctx):
        rng = self.rng
        lines, scopes, traced = [], [], False
        arms = 1 + (rng.random() < 0.3) * rng.randint(1, 2)
        for arm in range(arms):
            cond, cond_traced = self.cond(ctx)
            traced = traced or cond_traced
            body_ctx = ctx.child(traced=ctx.traced or traced)
            lines += [f"{'if' if arm == 0 else 'elif'} {cond}:"] + _indent(self.block(body_ctx, rng.randint(1, 3)))
            scopes.append(body_ctx.scope)
            self.note("if_traced" if cond_traced else "if_python", *["elif"] * (arm > 0))
        if rng.random() < 0.5:
            body_ctx = ctx.child(traced=ctx.traced or traced)
            lines += ["else:"] + _indent(self.block(body_ctx, rng.randint(1, 3)))
            scopes.append(body_ctx.scope)
            self.note("else")
        else:
            scopes.append(dict(ctx.scope))
        self.merge(ctx, scopes)
        return lines

    def loop(self, ctx, header, body_ctx, first=()):
        """A loop statement: header, body (after ``first``), maybe an else block; merges the scopes."""
        before = dict(ctx.scope)
        lines = [header] + _indent(list(first) + self.block(body_ctx, self.rng.randint(1, 3)))
        self.merge(ctx, [before, body_ctx.scope])
        if self.rng.random() < 0.2:
            else_ctx = ctx.child()
            lines += ["else:"] + _indent(self.block(else_ctx, self.rng.randint(1, 2)))
            self.merge(ctx, [else_ctx.scope])
            self.note("loop_else")
        return lines

    def stmt_while(self, ctx):
        # A counter that is a Python int, or now and then a Python float clock stepping by 0.5 (exact),
        # past UNROLL steps at times: then cofactor carries it as a traced number for the rest.  It runs
        # ``bound`` steps, and its limit is not always where a step lands (the counter ends past it).
        counter = self.fresh("k")
        bound = self.rng.randint(2, 12)
        clock = self.rng.random() < 0.3
        if clock:
            start, step, limit = "0.0", "0.5", f"{bound * 0.5 - self.rng.choice([0, 0.25])}"
        else:
            first, stride = self.rng.choice([0, 0, 1, -2]), self.rng.choice([1, 1, 2, 3])
            start, step, limit = str(first), str(stride), str(first + bound * stride - self.rng.randint(0, stride - 1))
        # The counter goes up first, so that a continue cannot skip it: in the body, or now and then
        # in the condition (``:=``, so the test writes a name the loop carries).
        walrus = self.rng.random() < 0.2
        test = f"({counter} := {counter} + {step}) <= {limit}" if walrus else f"{counter} < {limit}"
        if self.rng.random() < 0.8:
            cond, traced = self.cond(ctx)
            header = f"while {test} and {f'({cond})' if ' or ' in cond else cond}:"
        else:
            header, traced = f"while {test}:", False
        vectors = self.vars_of(ctx, lambda k: k.cat == "array" and len(k.shape) == 1)
        if not clock and vectors and self.rng.random() < 0.15:
            # An element at the counter, which may pass the vector's end (NumPy's IndexError there).
            header = f"{header[:-1]} and {self.rng.choice(vectors)}[{counter}] > {self.rng.choice(THRESHOLDS)}:"
            traced = True
            self.note("while_reads_at_counter")
        kind = PYFLOAT if clock else PYINT
        ctx.scope[counter] = Var(kind, assignable=False, static=not ctx.traced and not traced)
        body_ctx = ctx.child(loop="while", traced=ctx.traced or traced)
        self.note("while_traced" if traced else "while_python", *["while_long"] * (bound > UNROLL),
                  *["while_clock"] * clock, *["while_walrus"] * walrus)
        return [f"{counter} = {start}"] + self.loop(ctx, header, body_ctx, [] if walrus else [f"{counter} += {step}"])

    def stmt_for_range(self, ctx):
        count = self.rng.randint(0, 12)
        return self.for_range(ctx, str(count), count)

    def stmt_for_n(self, ctx):
        if "n" not in ctx.scope or ctx.fn != "f":
            return None
        self.note("for_range_n")
        return self.for_range(ctx, "n", self.n)

    def for_range(self, ctx, bound, count):
        rolled = count > UNROLL
        i = self.fresh("i")
        body_ctx = ctx.child(loop="for", traced=ctx.traced or rolled)
        body_ctx.scope[i] = Var(PYINT, assignable=False, static=not rolled, loop=True)
        self.note("for_rolled" if rolled else "for_unrolled", *["for_empty"] * (count == 0))
        return self.loop(ctx, f"for {i} in range({bound}):", body_ctx)

    def stmt_for_rows(self, ctx):
        name = self.pick(ctx, lambda k: k.cat == "array" and len(k.shape) == 2)
        if name is None and self.rng.random() < 0.3:   # now and then a loop over a vector's elements
            name = self.pick(ctx, lambda k: k.cat == "array" and len(k.shape) == 1)
        if name is None:
            return None
        kind = ctx.scope[name].kind
        row = self.fresh("row" if len(kind.shape) == 2 else "e")
        body_ctx = ctx.child(loop="for", traced=True)
        row_kind = Kind("array" if len(kind.shape) == 2 else "npscalar", kind.dtype, kind.shape[1:])
        body_ctx.scope[row] = Var(row_kind, static=False, base=name, loop=True)
        self.note("for_rows" if len(kind.shape) == 2 else "for_elements")
        return self.loop(ctx, f"for {row} in {name}:", body_ctx)

    def stmt_jump(self, ctx):
        if not ctx.loop:
            return None
        cond, traced = self.cond(ctx)
        jump = self.rng.choice(["break", "continue"])
        body_ctx = ctx.child(traced=ctx.traced or traced)
        body = self.statement(body_ctx) if self.rng.random() < 0.4 else []
        self.merge(ctx, [dict(ctx.scope), body_ctx.scope])
        self.note(f"{jump}_{'traced' if traced else 'python'}")
        return [f"if {cond}:"] + _indent(body + [jump])

    def stmt_early_return(self, ctx):
        if ctx.ret is None:
            return None
        cond, traced = self.cond(ctx)
        self.note("early_return", f"early_return_{'traced' if traced else 'python'}",
                  *["early_return_in_loop"] * bool(ctx.loop))
        return [f"if {cond}:", "    " + self.return_stmt(ctx, ctx.ret)]

    def stmt_check(self, ctx):
        """A raise or an assert on a condition (cofactor checks it at run time when it is traced); its
        message may show a scalar's value."""
        cond, traced = self.cond(ctx)
        n = next(self.counter)
        scalar = self.pick(ctx, lambda k: k.cat != "array" or k.shape == ())
        message = f"f'check {n}: {{{scalar}}}'" if scalar and self.rng.random() < 0.5 else f"'check {n}'"
        kind = self.rng.choice(["raise", "assert"])
        self.note(f"check_{kind}", f"check_{'traced' if traced else 'python'}")
        if kind == "assert":
            return [f"assert not ({cond}), {message}"]
        return [f"if {cond}:", f"    raise ValueError({message})"]

    def return_stmt(self, ctx, spec):
        values = []
        for kind in spec:
            names = [n for n, v in ctx.scope.items() if n not in values and fits(v.kind, kind)]
            if names and self.rng.random() < 0.85:
                values.append(self.rng.choice(names))
            else:
                want = kind if kind.cat == "array" else Kind("npscalar", self.concrete(kind.dtype))
                values.append(self.expr(ctx, want).code)
        if ctx.fn == "f" and len(values) > 1:
            self.note("return_tuple")
        return "return " + ", ".join(values)

    # ---- functions -----------------------------------------------------------------------------
    def stmt_nested_def(self, ctx):
        if ctx.fn != "f" or ctx.depth or self.nested >= 2 or self.budget < 3:   # leave room for calls
            return None
        rng = self.rng
        self.nested += 1
        name = self.fresh("bump")
        state = rng.choice([("cnt", PYINT, "0"), ("acc", PYFLOAT, "0.0"),
                            ("acc", self.VEC, f"np.zeros(5{self.dtype_kw(self.F)})")])
        counter = self.fresh(state[0])
        lines = [f"{counter} = {state[2]}"]
        ctx.scope[counter] = Var(state[1], static=False)
        shared = [counter]
        other = self.pick(ctx, lambda k: True, assignable=True)
        if other != counter and rng.random() < 0.4:
            shared.append(other)
        params = [self.rng.choice([v.kind for v in ctx.scope.values()])] if rng.random() < 0.6 else []
        scope = {n: replace(v, assignable=n in shared, loop=False) for n, v in ctx.scope.items()}
        scope.update({f"arg{j}": Var(k) for j, k in enumerate(params)})
        ret = rng.choice([None, self.FSCALAR, state[1]])
        body_ctx = Ctx(scope, fn="nested", depth=1, ret=(ret,) if ret else None)
        first = self.stmt_augassign(body_ctx, counter)
        saved, self.budget = self.budget, rng.randint(0, 2)
        body = first + (self.block(body_ctx) if self.budget else [])
        self.budget = saved - 1
        if ret:
            body.append(self.return_stmt(body_ctx, (ret,)))
        for n in shared:
            kind = join(ctx.scope[n].kind, body_ctx.scope[n].kind) or ctx.scope[n].kind
            ctx.scope[n] = replace(ctx.scope[n], kind=kind,
                                   static=False)
        read = set(re.findall(r"\b[A-Za-z_]\w*\b", "\n".join(body))) & (ctx.scope.keys() - set(shared))
        ctx.funcs.append(Func(name, tuple(params), ret))
        self.uncalled.add(name)
        self.note("nested_def", "nonlocal", *["closure_read"] * bool(read), *["nested_returns"] * bool(ret))
        header = f"def {name}({', '.join(f'arg{j}' for j in range(len(params)))}):"
        return lines + [header] + _indent([f"nonlocal {', '.join(shared)}"] + body)

    def call_args(self, ctx, kinds):
        args = []
        for kind in kinds:
            if kind.cat == "array" and kind.shape:
                e = self.expr(ctx, kind, MAX_EXPR_DEPTH if self.rng.random() < 0.8 else 1)
                if not e.code.isidentifier():
                    self.note("call_arg_expression")
            else:
                e = self.expr(ctx, Kind("npscalar", self.concrete(kind.dtype)) if kind.cat != "array" else kind, 1)
            args.append(e.code)
        return ", ".join(args)

    def stmt_call_nested(self, ctx):
        if not ctx.funcs or ctx.fn != "f":
            return None
        func = self.rng.choice([f for f in ctx.funcs if f.name in self.uncalled] or ctx.funcs)
        self.uncalled.discard(func.name)
        call = f"{func.name}({self.call_args(ctx, func.params)})"
        self.note("call_nested", *["call_nested_traced"] * ctx.traced, *["call_nested_in_loop"] * bool(ctx.loop))
        if func.ret and self.rng.random() < 0.6:
            name = self.fresh("r" if func.ret.shape == () else "x")
            kind = func.ret if func.ret.cat == "array" else Kind("npscalar", self.concrete(func.ret.dtype))
            ctx.scope[name] = Var(kind, static=False)
            return [f"{name} = {call}"]
        return [call]

    def stmt_call_helper(self, ctx):
        if ctx.fn != "f":
            return None
        arrays = [v.kind for v in ctx.scope.values() if v.kind.cat == "array" and v.kind.shape]
        if not arrays:
            return None
        usable = [h for h, _ in self.helpers if h.params[0] in arrays]
        if usable and self.rng.random() < 0.4:
            func = self.rng.choice(usable)
        else:
            func = self.make_helper(self.rng.choice(arrays), ctx)
        call = f"{func.name}({self.call_args(ctx, func.params)})"
        self.note("helper_call")
        if func.ret and self.rng.random() < 0.7:
            name = self.fresh("r" if func.ret.shape == () else "x")
            ctx.scope[name] = Var(func.ret, static=False)
            return [f"{name} = {call}"]
        return [call]

    def make_helper(self, first, ctx):
        """A module-level function that updates its first (array) argument in place."""
        rng = self.rng
        params = (first,) + ((rng.choice([v.kind for v in ctx.scope.values()]),) if rng.random() < 0.6 else ())
        ret = rng.choice([None, self.FSCALAR, first])
        func = Func(self.fresh("helper"), params, ret)
        names = ["x", "y"][:len(params)]
        hctx = Ctx({n: Var(k, static=False) for n, k in zip(names, params)},
                   fn="helper", depth=1, ret=(ret,) if ret else None)
        first_stmt = rng.choice([self.stmt_augassign, self.stmt_augassign_region, self.stmt_setitem])(hctx, "x")
        saved, self.budget = self.budget, rng.randint(0, 3)
        body = first_stmt + (self.block(hctx) if self.budget else [])
        self.budget = saved
        if ret == first:
            body.append("return x")
            self.note("helper_returns_alias")
        elif ret:
            body.append(self.return_stmt(hctx, (ret,)))
        self.helpers.append((func, [f"def {func.name}({', '.join(names)}):"] + _indent(body)))
        self.note("helper_def")
        return func

    # ---- expressions ---------------------------------------------------------------------------
    def expr(self, ctx, want: Kind, depth=0) -> E:
        """An expression of want's dtype and shape. want.cat: "array" (an ndarray, also 0-d),
        "npscalar" (any scalar), "pyint"/"pyfloat" (a Python number only)."""
        if want.python:
            options = self.python_options(ctx, want, depth)
        elif want.cat == "array" and want.shape:
            options = self.array_options(ctx, want, depth)
        elif want.cat == "array":
            options = self.zero_d_options(ctx, want, depth)
        else:
            options = self.scalar_options(ctx, want, depth)
        weights, makers = zip(*options)
        return self.rng.choices(makers, weights)[0]()

    def variable(self, ctx, names):
        name = self.rng.choice(names)
        if ctx.scope[name].loop and ctx.scope[name].kind.python:
            self.note("loop_var_used")
        return E(name, ctx.scope[name].kind.cat)

    def vars_of(self, ctx, test):
        return [n for n, v in ctx.scope.items() if test(v.kind)]

    def deeper(self, depth):
        return depth < MAX_EXPR_DEPTH

    def array_options(self, ctx, want, depth):
        names = self.vars_of(ctx, lambda k: k == want)
        viewable = [(n, s) for n, v in ctx.scope.items() if v.kind.cat == "array" and v.kind.dtype == want.dtype
                    for s, shape in views(v.kind.shape) if shape == want.shape and s not in ("[...]", "[:]")]
        opts = [(1, lambda: self.creation(ctx, want))]
        if names:
            opts.append((6, lambda: self.variable(ctx, names)))
        if viewable:
            opts.append((2, lambda: self.view_expr(viewable)))
        if self.deeper(depth):
            opts += [(4, lambda: self.binop(ctx, want, depth)), (2, lambda: self.unary(ctx, want, depth)),
                     (1, lambda: self.where(ctx, want, depth)), (0.3, lambda: self.ifexp(ctx, want, depth))]
            if names or viewable:
                opts.append((0.7, lambda: self.copy(ctx, names, viewable)))
            opts += self.call_options(ctx, want)
        return opts

    def zero_d_options(self, ctx, want, depth):
        names = self.vars_of(ctx, lambda k: k == want)
        opts = [(2, lambda: self.asarray(ctx, want, depth)),
                (0.5, lambda: E(f"np.zeros((){self.dtype_kw(want.dtype)})", "array"))]
        if names:
            opts.append((4, lambda: self.variable(ctx, names)))
            opts.append((1, lambda: E(f"{self.rng.choice(names)}.copy()", "array")))
        if self.deeper(depth):
            opts.append((1, lambda: self.where(ctx, want, depth)))
        return opts

    def asarray(self, ctx, want, depth):
        """A 0-d array of want's dtype from a scalar."""
        scalar = self.expr(ctx, Kind("npscalar", want.dtype), depth + 1)
        if natural(want.dtype) or (not scalar.cat.startswith("py") and self.rng.random() < 0.5):
            return E(f"np.asarray({scalar.code})", "array")
        return E(f"np.asarray({scalar.code}, dtype={self.dtype_code(want.dtype)})", "array")

    def scalar_options(self, ctx, want, depth):
        names = self.vars_of(ctx, lambda k: fits(k, want))
        sources = self.vars_of(ctx, lambda k: k.cat == "array" and k.shape and self.reductions(k.dtype, want.dtype))
        vectors = self.vars_of(ctx, lambda k: k.cat == "array" and k.dtype == want.dtype and k.shape)
        literal = self.rng.choice(FLOATS if want.floating else INTS)
        opts = [(2, lambda: self.python_operand(ctx, want.dtype, "+=")),
                (0.7, lambda: self.scalar_literal(want.dtype, literal))]
        if names:
            opts.append((4, lambda: self.variable(ctx, names)))
        if sources:
            opts.append((3, lambda: self.reduction(ctx, sources, want.dtype)))
        if vectors:
            opts.append((3, lambda: self.element(ctx, vectors)))
        if want.floating and any(len(ctx.scope[v].kind.shape) == 1 for v in vectors):
            opts.append((2, lambda: self.window_reduction(ctx, want, vectors)))
        if self.deeper(depth):
            opts += [(3, lambda: self.binop(ctx, want, depth)), (0.3, lambda: self.ifexp(ctx, want, depth))]
            if want.floating:
                opts.append((1.5, lambda: self.unary(ctx, want, depth)))
            opts += self.call_options(ctx, want)
        return opts

    def python_options(self, ctx, want, depth):
        names = self.vars_of(ctx, lambda k: k.cat == want.cat)
        opts = [(2, lambda: E(self.rng.choice(FLOATS if want.floating else INTS), want.cat))]
        if names:
            opts.append((4, lambda: self.variable(ctx, names)))
        if self.deeper(depth):
            opts.append((2, lambda: self.python_binop(ctx, want, depth)))
        return opts

    def python_binop(self, ctx, want, depth):
        left = self.expr(ctx, want, depth + 1)
        op = self.rng.choice(["+", "-", "*"] if want.floating else ["+", "-", "^", "&", "|", ">>", "%", "//"])
        return E(f"{left.wrap()} {op} {self.python_operand(ctx, want.dtype, op + '=').wrap()}", want.cat, False)

    def python_operand(self, ctx, dtype, op):
        """A Python number for ``x op= value``; + and - only add constants or loop counts to ints, so
        that Python ints stay small (cofactor holds them in int64)."""
        if dtype.startswith("float"):
            return E(self.rng.choice(FLOATS if op in ("+=", "-=") else ["2.0", "-4.0", "1.5", "0.5"]), "pyfloat")
        if op == ">>=":
            return E(self.rng.choice(["1", "2"]), "pyint")
        if op in ("%=", "//="):
            return E(self.rng.choice(["2", "3", "5"]), "pyint")
        small = self.vars_of(ctx, lambda k: k.cat == "pyint")
        bounded = [n for n in small if n == "n" or ctx.scope[n].loop]
        pool = small if op in ("^=", "&=", "|=") else bounded
        if pool and self.rng.random() < 0.5:
            return self.variable(ctx, pool)
        return E(self.rng.choice(INTS), "pyint")

    def creation(self, ctx, want):
        shape, rng, dtype = want.shape, self.rng, want.dtype
        size = int(np.prod(shape))
        dims = shape_code(shape)
        kw = self.dtype_kw(dtype)                # "" only for float64
        value = rng.choice(FLOATS if want.floating else INTS)
        if dtype == "float64":
            arange = rng.choice([f"np.arange({size}.0)", f"np.arange({size}, dtype={self.dtype_code(dtype)})"])
        elif dtype == "int64":
            arange = rng.choice([f"np.arange({size})", f"np.arange({size}{kw})"])
        else:
            arange = rng.choice([f"np.arange({size}{kw})", f"np.arange({size}).astype({self.dtype_code(dtype)})"])
        full = f"np.full({dims}, {value}{'' if dtype == 'int64' else kw})"
        if not natural(dtype) and rng.random() < 0.4:
            full = f"np.full({dims}, np.{dtype}({value}))"       # the fill value's dtype
        options = {"zeros": f"np.zeros({dims}{kw})", "ones": f"np.ones({dims}{kw})", "full": full,
                   "arange": arange + (f".reshape{shape}" if len(shape) > 1 else "")}
        like = self.vars_of(ctx, lambda k: k.cat == "array" and k.shape == shape and k.dtype == want.dtype)
        other = self.vars_of(ctx, lambda k: k.cat == "array" and k.shape == shape and k.dtype != want.dtype)
        if like:
            options.update({"zeros_like": f"np.zeros_like({rng.choice(like)})",
                            "ones_like": f"np.ones_like({rng.choice(like)})"})
        if other:
            options["like_dtype"] = f"np.{rng.choice(['zeros', 'ones'])}_like({rng.choice(other)}, " \
                                    f"dtype={self.dtype_code(dtype)})"
        label = rng.choice(list(options))
        self.note(f"create:{label}")
        return E(options[label], "array")

    def view_expr(self, viewable):
        name, suffix = self.rng.choice(viewable)
        self.note(f"expr:view:{_view_label(suffix)}")
        return E(f"{name}{suffix}", "array")

    def copy(self, ctx, names, viewable):
        use_view = viewable and (not names or self.rng.random() < 0.5)
        base = self.view_expr(viewable) if use_view else self.variable(ctx, names)
        self.note("copy")
        return E(f"{base.code}.copy()", "array")

    def index(self, ctx, length):
        """An index into an axis of ``length``: a constant, or a loop variable or traced int mod length."""
        rng = self.rng
        loops = self.vars_of(ctx, lambda k: k.cat == "pyint")
        loops = [n for n in loops if ctx.scope[n].loop] or loops
        traced = self.vars_of(ctx, lambda k: k.cat == "npscalar" and not k.floating)
        r = rng.random()
        if loops and r < 0.4:
            self.note("index:loop_var" if ctx.scope[loops[0]].loop else "index:python_var")
            return f"{self.variable(ctx, loops).code} % {length}"
        if traced and r < 0.55:
            self.note("index:traced")
            return f"{rng.choice(traced)} % {length}"
        return str(rng.choice([0, 1, length - 1, -1, length // 2]))

    def bound(self, ctx):
        """A slice bound: a loop variable (traced in a rolled loop) or a traced int, moved or negated, a
        constant (negative, past the end) or none."""
        rng = self.rng
        loops = [n for n in self.vars_of(ctx, lambda k: k.cat == "pyint") if ctx.scope[n].loop]
        traced = self.vars_of(ctx, lambda k: k.cat == "npscalar" and not k.floating)
        r = rng.random()
        if loops and r < 0.5:
            self.note("window:loop_var")
            v = rng.choice(loops)
            return rng.choice([v, f"{v} + 1", f"-{v}", f"{v} - 2"])
        if traced and r < 0.7:
            self.note("window:traced")
            return rng.choice(traced)
        return rng.choice(["", "1", "-1", "3", "-2", "7"])

    def window(self, ctx):
        """A slice with bounds known only at run time (its length too): forwards or backwards."""
        lo, hi = self.bound(ctx), self.bound(ctx)
        if self.rng.random() < 0.25:
            self.note("window:backwards")
            return f"[{hi}:{lo}:-1]"
        return f"[{lo}:{hi}]"

    def window_reduction(self, ctx, want, vectors):
        """A number from a window or a mask of a vector of want's dtype: a reduction, a dot, an order statistic,
        a selection or a join of it."""
        rng = self.rng
        names = [n for n in vectors if len(ctx.scope[n].kind.shape) == 1]
        name = rng.choice(names)
        twins = [n for n in names if ctx.scope[n].kind.shape == ctx.scope[name].kind.shape]
        part = self.window(ctx) if rng.random() < 0.7 else f"[{name} > {rng.choice(THRESHOLDS)}]"
        self.note("expr:window" if ":" in part else "expr:mask")
        a, twin = f"{name}{part}", rng.choice(twins)
        forms = {"sum": f"{a}.sum()", "dot": f"np.dot({a}, {twin}{part})",
                 "max": f"np.max({a}, initial={rng.choice(FLOATS)})", "flip": f"np.sum(np.flip({a}) * {a})",
                 "cumsum": f"np.cumsum({a}).sum()", "median": f"np.median({a})",
                 "quantile": f"np.quantile({a}, {rng.choice(['0.0', '0.3', '0.5', '1.0'])})",
                 "argsort": f"np.sum(np.argsort({a}, kind='stable') * {twin}{part})",
                 "unique": f"np.unique({a}).sum()",
                 "nonzero": f"np.sum({twin}[np.nonzero({a} > {rng.choice(THRESHOLDS)})[0]])",
                 "join": f"np.concatenate([{a}, {twin}[::2], {twin}{part}]).sum()", "diff": f"np.diff({a}).sum()"}
        return E(forms[rng.choice(list(forms))], "npscalar")

    def stmt_window(self, ctx):
        """A write through a window or a mask: an update by a number, a copy from a twin's window or
        its own reversed window, a masked assignment."""
        rng = self.rng
        name = self.pick(ctx, lambda k: k.cat == "array" and len(k.shape) == 1)
        if name is None:
            return None
        kind = ctx.scope[name].kind
        twins = self.vars_of(ctx, lambda k: k.cat == "array" and k.shape == kind.shape and k.dtype == kind.dtype)
        part = self.window(ctx) if rng.random() < 0.7 else f"[{rng.choice(twins)} > {rng.choice(THRESHOLDS)}]"
        self.note("window_write" if ":" in part else "mask_write")
        form = rng.choice(["aug", "copy", "reverse", "set", "indices"])
        if form == "indices":  # through the positions a mask or window selects
            self.note("index_write")
            positions = f"np.flatnonzero({rng.choice(twins)}{part} > {rng.choice(THRESHOLDS)})"
            value = self.expr(ctx, Kind("npscalar", kind.dtype), 1)
            return [f"{name}[{positions}] = {value.code}"]
        if form == "copy":
            return [f"{name}{part} = {rng.choice(twins)}{part}"]
        if form == "reverse" and ":" in part:
            return [f"{name}{part} = {name}{part}[::-1]"]
        value = self.expr(ctx, Kind("npscalar", kind.dtype), 1)
        if form == "set":
            return [f"{name}{part} = {value.code}"]
        op, rhs = self.aug_rhs(ctx, kind, ())
        return [f"{name}{part} {op} {rhs.code}"]

    def element(self, ctx, vectors):
        name = self.rng.choice(vectors)
        shape = ctx.scope[name].kind.shape
        self.note("expr:element")
        return E(f"{name}[{', '.join(self.index(ctx, k) for k in shape)}]", "npscalar")

    @staticmethod
    def reductions(source, dtype=None):
        """The methods that reduce an array of dtype ``source`` to a scalar of ``dtype`` (any: None).
        NumPy sums int32 in int64 and takes an int array's mean in float64."""
        if source.startswith("float"):
            return ["sum", "max", "min", "mean"] if dtype in (None, source) else []
        results = {"sum": "int64", "max": source, "min": source, "mean": "float64"}
        return [m for m, result in results.items() if dtype in (None, result)]

    def reduction(self, ctx, sources, dtype):
        name = self.rng.choice(sources)
        method = self.rng.choice(self.reductions(ctx.scope[name].kind.dtype, dtype))
        self.note(f"expr:{method}")
        if self.rng.random() < 0.2:
            return E(f"np.{method}({name})", "npscalar")
        return E(f"{name}.{method}()", "npscalar")

    def operand(self, ctx, want, op, depth, inplace=False):
        """A right-hand operand of ``op`` that broadcasts to want's shape: bounded for * (values stay
        small), away from zero for / and //. It keeps want's dtype: an int operand of a float32
        expression is a Python int or cast to float32 (float32 and int32 arrays make float64). With
        ``inplace`` (the operand of an in-place update, out= or a setitem of want's dtype) it may
        be float64 (int64) where want is float32 (int32), or an int array for a float32 one: NumPy
        casts the result back (same_kind)."""
        rng = self.rng
        floating = want.floating
        if floating and op == "*":
            if rng.random() < 0.5:
                return E(rng.choice(["0.5", "-1.5", "1.5", "2.0", "0.0"]), "pyfloat")
            inner = self.operand(ctx, want, '+', depth + 1, inplace)
            return E(f"np.tanh({self.numpy_arg(ctx, inner, want.dtype)})", "array")
        if op in ("/", "//", "%"):
            if rng.random() < 0.6 or not floating:
                if floating:
                    return E(rng.choice(["2.0", "-4.0", "1.5", "0.5"]), "pyfloat")
                return E(rng.choice(["2", "3", "5"]), "pyint")
            inner = self.operand(ctx, want, '+', depth + 1, inplace)
            return E(f"(np.abs({self.numpy_arg(ctx, inner, want.dtype)}) + 1.0)", "array")
        if op == ">>":
            return E(rng.choice(["1", "2"]), "pyint")
        shapes = [()] * 2 + [want.shape] * 2 + ([want.shape[1:]] if len(want.shape) == 2 else [])
        shape = rng.choice(shapes)
        wide = {"float32": "float64", "int32": "int64"}.get(want.dtype)
        if inplace and wide and rng.random() < 0.12:
            self.note(f"mix:inplace_{wide}")
            if rng.random() < 0.5:
                return self.scalar_literal(wide, rng.choice(FLOATS if floating else INTS))
            kind = Kind("array", wide, shape) if shape else Kind("npscalar", wide)
            return self.expr(ctx, kind, MAX_EXPR_DEPTH)
        dtype = want.dtype if not floating or rng.random() < 0.85 else self.I
        kind = Kind("array", dtype, shape) if shape else Kind("npscalar", dtype)
        e = self.expr(ctx, kind, min(depth + 1, MAX_EXPR_DEPTH))
        if dtype != want.dtype and not e.cat.startswith("py") and np.result_type(want.dtype, dtype) != want.dtype:
            if inplace:
                self.note("mix:inplace_int_into_float")
            elif kind.cat == "array":
                self.note("mix:astype")
                e = E(f"{e.wrap()}.astype({self.dtype_code(want.dtype)})", "array")
            else:
                self.note("mix:scalar_cast")
                e = E(self.cast_scalar(ctx, e.code, want.dtype), "npscalar")
        return e

    def binop(self, ctx, want, depth):
        left = self.expr(ctx, want, depth + 1)
        ops = ["+", "-", "*", "/"] if want.floating else ["+", "-", "^", "&", "|", ">>", "%", "//"]
        op = self.rng.choices(ops, [4, 3, 2, 1] if want.floating else [3, 3, 1, 1, 1, 1, 1, 1])[0]
        right = self.operand(ctx, want, op, depth + 1)
        cat = want.cat if want.cat == "array" and want.shape else \
            left.cat if left.cat.startswith("py") and right.cat.startswith("py") else "npscalar"
        if cat.startswith("py"):
            cat = "pyfloat" if want.floating or op == "/" else "pyint"
        self.note(f"expr:{op}")
        return E(f"{left.wrap()} {op} {right.wrap()}", cat, False)

    def unary(self, ctx, want, depth):
        inner = self.expr(ctx, want, depth + 1)
        cat = "array" if want.shape else "npscalar"
        if not want.floating:
            if self.rng.random() < 0.5:
                return E(f"np.abs({self.numpy_arg(ctx, inner, want.dtype)})", cat)
            return E(f"-{inner.wrap()}", inner.cat, False)
        fn = self.rng.choice(["tanh", "sin", "abs", "exp", "maximum"])
        self.note(f"expr:np.{fn}")
        code = self.numpy_arg(ctx, inner, want.dtype)
        if fn == "exp":
            return E(f"np.exp(np.tanh({code}))", cat)
        if fn == "maximum":
            return E(f"np.maximum({code}, {self.operand(ctx, want, '+', depth + 1).code})", cat)
        return E(f"np.{fn}({code})", cat)

    def where(self, ctx, want, depth):
        test = self.operand(ctx, Kind("array", self.F, want.shape), "+", depth + 1)
        x = self.expr(ctx, want, depth + 1)
        y = self.operand(ctx, want, "+", depth + 1)
        self.note("expr:np.where")
        # np.where of two Python numbers makes float64 / int64; one takes the other's dtype (NEP 50)
        code = self.numpy_arg(ctx, x, want.dtype) if y.cat.startswith("py") else x.code
        return E(f"np.where({test.wrap()} > {self.rng.choice(THRESHOLDS)}, {code}, {y.code})", "array")

    def ifexp(self, ctx, want, depth):
        cond, traced = self.cond(ctx, 1)
        x, y = self.expr(ctx, want, depth + 1), self.expr(ctx, want, depth + 1)
        self.note("ifexp_traced" if traced else "ifexp_python")
        if x.cat == y.cat:
            return E(f"({x.code} if {cond} else {y.code})", x.cat)
        x, y = self.numpy_arg(ctx, x, want.dtype), self.numpy_arg(ctx, y, want.dtype)
        return E(f"({x} if {cond} else {y})", "npscalar")

    def call_options(self, ctx, want):
        """Calls of nested functions that return a value of want's kind."""
        if ctx.fn != "f":
            return []
        funcs = [f for f in ctx.funcs
                 if f.ret and fits(f.ret, want) and (f.ret.cat == "array") == (want.cat == "array")]
        if not funcs:
            return []

        def call():
            func = self.rng.choice(funcs)
            self.note("call_nested", "call_nested_in_expression")
            cat = func.ret.cat if func.ret.python else "npscalar" if not want.shape else "array"
            return E(f"{func.name}({self.call_args(ctx, func.params)})", cat)
        return [(1, call)]

    # ---- conditions ----------------------------------------------------------------------------
    def cond(self, ctx, depth=0):
        """A condition, and whether it is traced."""
        rng = self.rng
        r = rng.random()
        if depth == 0 and r < 0.15:
            (a, ta), (b, tb) = self.cond(ctx, 1), self.cond(ctx, 1)
            op = rng.choice(["and", "or"])
            self.note(f"cond:{op}")
            return f"{a} {op} {b}", ta or tb
        if depth == 0 and r < 0.2:
            a, ta = self.cond(ctx, 1)
            self.note("cond:not")
            return f"not ({a})", ta
        pythons = self.vars_of(ctx, lambda k: k.python)
        atoms = self.traced_atoms(ctx)
        if pythons and (not atoms or rng.random() < 0.3):
            name = self.variable(ctx, pythons).code
            floating = ctx.scope[name].kind.floating
            if not floating and rng.random() < 0.3:
                code = f"{name} % 2 == 0"
            else:
                cmp = rng.choice([">", "<"])
                code = f"{name} {cmp} {rng.choice(THRESHOLDS if floating else INTS)}"
        elif atoms:
            code = rng.choice(atoms)()
        else:
            code = "True"
        return code, self.is_traced(code, ctx)

    def traced_atoms(self, ctx):
        rng = self.rng
        arrays = self.vars_of(ctx, lambda k: k.cat == "array" and k.shape and k.floating)
        vectors = self.vars_of(ctx, lambda k: k.cat == "array" and len(k.shape) == 1)
        scalars = self.vars_of(ctx, lambda k: k.shape == () and not k.python)
        cmp = lambda: rng.choice([">", "<"])  # noqa: E731
        atoms = []
        if arrays:
            atoms += [lambda: f"{self.reduction(ctx, arrays, None).code} {cmp()} {rng.choice(THRESHOLDS)}",
                      lambda: f"({rng.choice(arrays)} {cmp()} {rng.choice(THRESHOLDS)}).{rng.choice(['any', 'all'])}()",
                      lambda: f"{rng.choice(arrays)}.max() > {rng.choice(arrays)}.min()"]
        if vectors:
            atoms.append(lambda: f"{self.element(ctx, vectors).code} < {self.element(ctx, vectors).code}")
        if scalars:
            atoms.append(lambda: f"{self.variable(ctx, scalars).code} {cmp()} {rng.choice(THRESHOLDS)}")
        named = self.vars_of(ctx, lambda k: k.cat == "array")
        if len(named) >= 2:
            atoms.append(lambda: self.identity(named))
        return atoms

    def identity(self, names):
        """Whether two variables hold one array, or arrays that share memory (NumPy's answer depends
        on which arrays the paths taken bound them to)."""
        x, y = self.rng.sample(names, 2)
        form = self.rng.choice(["{x} is {y}", "{x} is not {y}", "np.shares_memory({x}, {y})",
                                "np.may_share_memory({x}, {y})"])
        self.note("identity")
        return form.format(x=x, y=y)


def _indent(lines):
    return ["    " + line for line in lines]
