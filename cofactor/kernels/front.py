"""The scalar front end of kernels: a kernel's Python source compiled to the form Enzyme-JAX
raises (reference/spike/RAISING.md, form C1): a private ``func.func`` on memrefs whose body is
``arith`` / ``math`` scalar code, ``memref.load`` / ``memref.store``, ``scf.if`` / ``scf.for``,
and ``gpu.block_id`` / ``gpu.thread_id`` for the launch's ids.

A kernel body is scalar SPMD code — one thread's work — so it is compiled from its syntax tree,
statement by statement, rather than traced like NumPy code: names hold Python values (ints,
floats, the launch's sizes, modules), ``Scalar``s (one thread's values: ids, loaded elements,
arithmetic on them) or ``Buffer``s (the array arguments).  Python values fold at compile time; a
condition or loop bound that is a Scalar becomes ``scf.if`` / ``scf.for``, carrying the names
its body rebinds.  Types follow the C-like rules kernels have (numba's): integers are ``index``
(ids, subscripts, loop counters) or the arrays' integer types, floats the arrays' float types;
an integer meeting a float becomes that float, ``/`` is true division, ``//`` and ``%`` are
Python's (floor) division and modulo.

What cannot be raised correctly is refused here, naming the construct and the line: shared
memory and barriers (they do not raise in enzyme-ad 0.0.16), an atomic add at an index that does
not come from the data (raised silently wrong: spike C8), ``while`` loops, ``break`` and
``continue``, and a ``return`` other than a guard (``if i >= n: return``) or the last statement.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import math
import struct
import textwrap

import numpy as np

from ..errors import UnsupportedError, located
from ..ir.core import Block, Function, Region, Value, emit, insertion_point
from ..ir.types import MemRefType, ScalarType

_KIND_OF_DTYPE = {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32", np.dtype(np.int64): "i64",
                  np.dtype(np.int32): "i32", np.dtype(np.bool_): "i1"}
_INTEGERS = ("i1", "i32", "i64", "index")
_FLOATS = ("f32", "f64")
# arith's predicates (integer enums in the generic form): cmpi eq ne slt sle sgt sge; cmpf oeq ogt oge olt ole,
# and une for != (unordered: NaN != NaN, as in Python)
_CMPI = {"Eq": 0, "NotEq": 1, "Lt": 2, "LtE": 3, "Gt": 4, "GtE": 5}
_CMPF = {"Eq": 1, "Gt": 2, "GtE": 3, "Lt": 4, "LtE": 5, "NotEq": 13}
_UNORDERED = 14
UNROLL = 16  # a kernel loop of at most this many steps known at compile time runs unrolled
_MATH = {"exp": "math.exp", "log": "math.log", "sqrt": "math.sqrt", "sin": "math.sin", "cos": "math.cos",
         "tan": "math.tan", "tanh": "math.tanh", "atan": "math.atan", "erf": "math.erf", "floor": "math.floor",
         "ceil": "math.ceil", "fabs": "math.absf", "absolute": "math.absf", "log2": "math.log2",
         "log10": "math.log10", "log1p": "math.log1p", "expm1": "math.expm1", "exp2": "math.exp2",
         "sinh": "math.sinh", "cosh": "math.cosh", "asin": "math.asin", "acos": "math.acos", "arctan": "math.atan",
         "arcsin": "math.asin", "arccos": "math.acos"}


class Scalar:
    """One thread's value: an IR Value of a scalar ``kind``; ``data``: it depends on loaded
    elements; ``nonneg``: an integer known to be >= 0 (ids, and sums and products of them)."""

    __slots__ = ("value", "kind", "data", "nonneg")

    def __init__(self, value: Value, kind: str, data: bool = False, nonneg: bool = False):
        self.value, self.kind, self.data, self.nonneg = value, kind, data, nonneg


class Buffer:
    """An array argument of the kernel: a memref it loads and stores."""

    __slots__ = ("value", "shape", "dtype", "name", "stored")

    def __init__(self, value: Value, shape, dtype, name):
        self.value, self.shape, self.dtype, self.name = value, tuple(shape), np.dtype(dtype), name
        self.stored = False  # the kernel writes it (so the caller's array is updated)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))


# --- scalar operations -------------------------------------------------------------------------

def _op(name, operands, kind, attributes=None, data=False) -> Scalar:
    return Scalar(emit(name, [o.value for o in operands], [ScalarType(kind)], attributes)[0], kind, data)


def constant(x, kind) -> Scalar:
    if kind == "i1":
        text = "true" if x else "false"
    elif kind in _FLOATS:
        bits = struct.unpack("<Q", struct.pack("<d", float(x)))[0] if kind == "f64" else \
            struct.unpack("<I", struct.pack("<f", float(x)))[0]
        text = f"0x{bits:0{16 if kind == 'f64' else 8}X} : {kind}"
    else:
        text = f"{int(x)} : {kind}"
    return Scalar(emit("arith.constant", [], [ScalarType(kind)], {"value": text})[0], kind,
                  nonneg=kind not in _FLOATS and x >= 0)


def _python_kind(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "i1"
    if isinstance(x, (int, np.integer)):
        return "index"
    if isinstance(x, (float, np.floating)):
        return "f64" if not isinstance(x, np.float32) else "f32"
    raise TypeError(f"a {type(x).__name__} is not a number a kernel can compute with")


def cast(x: Scalar, kind: str) -> Scalar:
    """``x`` as ``kind``, as C converts (an int to a float, a float truncated to an int)."""
    if x.kind == kind:
        return x
    src, data = x.kind, x.data
    if src in _FLOATS and kind in _FLOATS:
        return _op("arith.extf" if kind == "f64" else "arith.truncf", [x], kind, data=data)
    if src in _FLOATS:  # to an integer: through i64
        wide = _op("arith.fptosi", [x], "i64", data=data)
        return cast(wide, kind)
    if kind in _FLOATS:
        if src == "index":
            x = _op("arith.index_cast", [x], "i64", data=data)
        op = "arith.uitofp" if x.kind == "i1" else "arith.sitofp"
        return _op(op, [x], kind, data=data)
    if kind == "i1":
        return _compare("NotEq", x, constant(0, src))
    if src == "index" or kind == "index":
        if src == "i1":
            x = _op("arith.extui", [x], "i64", data=data)
        if x.kind == kind:
            return x
        result = _op("arith.index_cast", [x], kind, data=data)
        result.nonneg = x.nonneg
        return result
    if src == "i1":
        return _op("arith.extui", [x], kind, data=data)
    return _op("arith.extsi" if _INTEGERS.index(kind) > _INTEGERS.index(src) else "arith.trunci", [x], kind, data=data)


def lift(x, kind) -> Scalar:
    return x if isinstance(x, Scalar) else constant(x, kind)


def _common(a, b) -> str:
    """The kind two operands meet in (a Python number takes the other's kind, or becomes a float)."""
    kinds = [x.kind if isinstance(x, Scalar) else None for x in (a, b)]
    if kinds == [None, None]:  # two Python numbers (a variable each branch sets to a constant)
        return max((_python_kind(a), _python_kind(b)), key=["i1", "index", "f32", "f64"].index)
    for x, k in zip((a, b), kinds):
        if k is None:
            other = kinds[1] if kinds[0] is None else kinds[0]
            if isinstance(x, (float, np.floating)) and other not in _FLOATS:
                return "f64"
    known = [k for k in kinds if k is not None]
    floats = [k for k in known if k in _FLOATS]
    if floats:
        return "f64" if "f64" in floats else "f32"
    if len(known) == 2 and known[0] != known[1]:
        return "index" if "index" in known else max(known, key=_INTEGERS.index)
    return known[0]


def _compare(name, a, b) -> Scalar:
    kind = _common(a, b)
    a, b = cast(lift(a, kind), kind), cast(lift(b, kind), kind)
    if kind in _FLOATS:
        return _op("arith.cmpf", [a, b], "i1", {"predicate": f"{_CMPF[name]} : i64"}, a.data or b.data)
    return _op("arith.cmpi", [a, b], "i1", {"predicate": f"{_CMPI[name]} : i64"}, a.data or b.data)


def _binary(name, a, b) -> Scalar:
    kind = _common(a, b)
    if name == "Div" and kind not in _FLOATS:
        kind = "f64"
    if name in ("BitAnd", "BitOr", "BitXor", "LShift", "RShift") and kind in _FLOATS:
        raise TypeError("unsupported operand types for a bitwise operation on floats")
    if name == "Pow" and isinstance(b, (int, np.integer)) and 0 <= b <= 4:
        result = lift(1, kind) if b == 0 else cast(lift(a, kind), kind)
        for _ in range(int(b) - 1):
            result = _binary("Mult", result, cast(lift(a, kind), kind))
        return result
    if name == "Pow":
        kind = kind if kind in _FLOATS else "f64"
    a, b = cast(lift(a, kind), kind), cast(lift(b, kind), kind)
    data = a.data or b.data
    f = kind in _FLOATS
    simple = {"Add": "arith.addf" if f else "arith.addi", "Sub": "arith.subf" if f else "arith.subi",
              "Mult": "arith.mulf" if f else "arith.muli", "Div": "arith.divf", "BitAnd": "arith.andi",
              "BitOr": "arith.ori", "BitXor": "arith.xori", "LShift": "arith.shli", "RShift": "arith.shrsi",
              "Pow": "math.powf"}
    if name in simple:
        result = _op(simple[name], [a, b], kind, data=data)
        result.nonneg = not f and name in ("Add", "Mult") and a.nonneg and b.nonneg
        return result
    if name in ("FloorDiv", "Mod") and f:
        quotient = _op("math.floor", [_op("arith.divf", [a, b], kind)], kind, data=data)
        return quotient if name == "FloorDiv" else _binary("Sub", a, _binary("Mult", quotient, b))
    if name in ("FloorDiv", "Mod"):
        return _index_divided(name, a, b) if kind == "index" else _divided(name, a, b)
    raise UnsupportedError(f"the operator {name} is not supported in kernels")


def _index_divided(name, a: Scalar, b: Scalar) -> Scalar:
    """Floor division and modulo of ids and subscripts, through float64 (exact below 2**31): the
    raise pipeline's affine analysis loses an integer division or remainder of an id that feeds a
    comparison (i % 2 == 0 held for i == 0 only, with remsi, remui, divsi or divui), and a float
    floor it leaves alone.  The result is an i64 (raised as computed, and cast where it subscripts)."""
    a, b = cast(a, "i64"), cast(b, "i64")
    q = cast(_op("math.floor", [_op("arith.divf", [cast(a, "f64"), cast(b, "f64")], "f64")], "f64"), "i64")
    q.nonneg = a.nonneg and b.nonneg
    if name == "FloorDiv":
        return q
    r = _binary("Sub", a, _binary("Mult", q, b))
    r.nonneg = q.nonneg
    return r


def _divided(name, a: Scalar, b: Scalar) -> Scalar:
    """Python's floor division and modulo of integers of the data: C's (truncating), corrected
    toward minus infinity."""
    q = _op("arith.divsi", [a, b], a.kind, data=a.data or b.data)
    # Not arith.remsi: the raise pipeline takes a remainder by a positive constant to be >= 0 (affine
    # mod), dropping the correction below though it computes a truncated one (-34 // 3 gave -11).
    r = _binary("Sub", a, _binary("Mult", q, b))
    signs_differ = _binary("BitXor", _compare("Lt", r, 0), _compare("Lt", b, 0))
    adjust = _binary("BitAnd", _compare("NotEq", r, 0), signs_differ)
    if name == "FloorDiv":
        return _select(adjust, _binary("Sub", q, 1), q)
    return _select(adjust, _binary("Add", r, b), r)


def _select(c: Scalar, a, b) -> Scalar:
    kind = _common(a, b)
    a, b = cast(lift(a, kind), kind), cast(lift(b, kind), kind)
    return Scalar(emit("arith.select", [c.value, a.value, b.value], [ScalarType(kind)])[0], kind,
                  c.data or a.data or b.data)


def truth(x) -> Scalar | bool:
    """A condition: a Python value's truth now, or a Scalar as an i1."""
    return cast(x, "i1") if isinstance(x, Scalar) else bool(x)


# --- the launch's ids --------------------------------------------------------------------------

class Launch:
    """The grid and block sizes of one launch (three each): ``blockDim`` / ``gridDim`` are
    compile-time constants, ``threadIdx`` / ``blockIdx`` the gpu ops."""

    def __init__(self, blocks, threads):
        self.blocks, self.threads = tuple(blocks), tuple(threads)

    def thread_id(self, axis) -> Scalar:
        return Scalar(emit("gpu.thread_id", [], [ScalarType("index")], {"dimension": f"#gpu<dim<{'xyz'[axis]}>>"})[0],
                      "index", nonneg=True)

    def block_id(self, axis) -> Scalar:
        return Scalar(emit("gpu.block_id", [], [ScalarType("index")], {"dimension": f"#gpu<dim<{'xyz'[axis]}>>"})[0],
                      "index", nonneg=True)

    def grid(self, ndim):
        ids = [_binary("Add", _binary("Mult", self.block_id(a), self.threads[a]), self.thread_id(a))
               for a in range(ndim)]
        return ids[0] if ndim == 1 else tuple(ids)

    def gridsize(self, ndim):
        sizes = [self.blocks[a] * self.threads[a] for a in range(ndim)]
        return sizes[0] if ndim == 1 else tuple(sizes)


# --- the statement compiler --------------------------------------------------------------------

class Undefined:
    """A name with no value here (assigned on some paths only, or only inside a loop)."""

    def __init__(self, why):
        self.why = why


_STUB_MODULES = ("numba.cuda", "cofactor.kernels.api")
_IDS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
_OPERATORS = {ast.Add: "Add", ast.Sub: "Sub", ast.Mult: "Mult", ast.Div: "Div", ast.FloorDiv: "FloorDiv",
              ast.Mod: "Mod", ast.Pow: "Pow", ast.BitAnd: "BitAnd", ast.BitOr: "BitOr", ast.BitXor: "BitXor",
              ast.LShift: "LShift", ast.RShift: "RShift"}
_COMPARISONS = {ast.Eq: "Eq", ast.NotEq: "NotEq", ast.Lt: "Lt", ast.LtE: "LtE", ast.Gt: "Gt", ast.GtE: "GtE"}
_PYTHON_BINARY = {"Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mult": lambda a, b: a * b,
                  "Div": lambda a, b: a / b, "FloorDiv": lambda a, b: a // b, "Mod": lambda a, b: a % b,
                  "Pow": lambda a, b: a ** b, "BitAnd": lambda a, b: a & b, "BitOr": lambda a, b: a | b,
                  "BitXor": lambda a, b: a ^ b, "LShift": lambda a, b: a << b, "RShift": lambda a, b: a >> b}
_PYTHON_COMPARE = {"Eq": lambda a, b: a == b, "NotEq": lambda a, b: a != b, "Lt": lambda a, b: a < b,
                   "LtE": lambda a, b: a <= b, "Gt": lambda a, b: a > b, "GtE": lambda a, b: a >= b}


def stub(obj) -> str | None:
    """The name of a kernel API object (cofactor's, or numba.cuda's: ``cuda.grid``, ``cuda.threadIdx``)."""
    module = getattr(obj, "__module__", None) or ""
    if isinstance(module, str) and module.startswith(_STUB_MODULES):
        return getattr(obj, "__qualname__", None)
    return None


def _assigned(statements) -> list:
    """The names a block of statements assigns, in order of first assignment."""
    names = {}
    for node in ast.walk(ast.Module(body=list(statements), type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.setdefault(node.id, None)
    return list(names)


def _is_number(x) -> bool:
    return isinstance(x, (Scalar, bool, int, float, np.number, np.bool_))


def _kind_of(x) -> str:
    return x.kind if isinstance(x, Scalar) else _python_kind(x)


class Compiler:
    """Compiles one kernel (or a device function it calls) into the current insertion point."""

    def __init__(self, fn, launch: Launch, env: dict):
        self.fn, self.launch, self.env = fn, launch, env
        try:
            lines, self.first_line = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            raise UnsupportedError(f"the source of the kernel {fn.__name__} is not available") from None
        tree = ast.parse(textwrap.dedent("".join(lines)))
        self.node = next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda)))
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        code = fn.__code__
        self.closure = dict(zip(code.co_freevars, [c.cell_contents for c in fn.__closure__ or ()]))
        self.line = self.first_line

    # errors name the kernel's line
    def where(self, node=None) -> str:
        line = self.first_line + getattr(node, "lineno", 1) - 1 if node is not None else self.line
        source = linecache.getline(self.file, line).strip()
        return f"{self.file}:{line}" + (f": {source}" if source else "")

    def error(self, message, node=None, cls=UnsupportedError) -> Exception:
        return located(cls(f"{message} (in the kernel {self.fn.__name__})"), self.where(node))

    # --- statements ---
    def block(self, statements, top_level=False) -> bool:
        """Compile ``statements``; True if they end the kernel (a return)."""
        for k, node in enumerate(statements):
            self.line = self.first_line + node.lineno - 1
            if isinstance(node, ast.Return):
                if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
                    raise self.error("a kernel returns nothing: write its results into an array argument", node)
                if not top_level:
                    raise self.error("a return inside a loop or a branch that does not end in it is not supported in "
                                     "kernels: guard the work instead (if i < n: ...)", node)
                return True
            if isinstance(node, ast.If) and top_level and (_returns(node.body) or _returns(node.orelse)):
                self.guard(node, statements[k + 1:])
                return True
            self.statement(node)
        return False

    def statement(self, node):
        if isinstance(node, ast.Assign):
            value = self.expr(node.value)
            for target in node.targets:
                self.assign(target, value, node)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, self.expr(node.value), node)
        elif isinstance(node, ast.AugAssign):
            name = _OPERATORS.get(type(node.op))
            if isinstance(node.target, ast.Subscript):
                buffer, index = self.expr(node.target.value), self.expr(node.target.slice)
                old = self.load(buffer, index, node)
                self.store(buffer, index, self.binary(name, old, self.expr(node.value), node), node)
            else:
                self.assign(node.target, self.binary(name, self.expr(node.target), self.expr(node.value), node), node)
        elif isinstance(node, ast.Expr):
            if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                self.expr(node.value)
        elif isinstance(node, ast.If):
            self.branch(node)
        elif isinstance(node, ast.For):
            self.loop(node)
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, ast.While):
            raise self.error("while loops are not supported in kernels yet: use for k in range(...)", node)
        elif isinstance(node, (ast.Break, ast.Continue)):
            raise self.error(f"{type(node).__name__.lower()} is not supported in kernels: guard the loop's body", node)
        else:
            raise self.error(f"a {type(node).__name__} statement is not supported in kernels", node)

    def assign(self, target, value, node):
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                raise self.error("cannot unpack this value into that many names", node, TypeError)
            for t, v in zip(target.elts, value):
                self.assign(t, v, node)
        elif isinstance(target, ast.Subscript):
            self.store(self.expr(target.value), self.expr(target.slice), value, node)
        else:
            raise self.error(f"assigning to a {type(target).__name__} is not supported in kernels", node)

    def guard(self, node, rest):
        """``if c: ...; return`` (either branch ending in a return) at the top of the kernel: the
        statements after it run only on the other path, so they go into that branch."""
        then = node.body[:-1] if _returns(node.body) else node.body + rest
        orelse = node.orelse[:-1] if _returns(node.orelse) else node.orelse + rest
        condition = truth(self.expr(node.test))
        if not isinstance(condition, Scalar):
            self.block(then if condition else orelse, top_level=True)
            return
        regions = []
        saved = dict(self.env)
        for body in (then, orelse):
            self.env = dict(saved)
            block = Block()
            with insertion_point(block):
                self.block(body, top_level=True)
                emit("scf.yield", [], [])
            regions.append(Region([block]))
        self.env = saved
        emit("scf.if", [condition.value], [], None, regions)

    def branch(self, node):
        """An if: Python's when its condition is a Python value, else an scf.if whose results are
        the numbers either branch rebinds."""
        condition = truth(self.expr(node.test))
        if not isinstance(condition, Scalar):
            self.block(node.body if condition else node.orelse)
            return
        before = dict(self.env)
        blocks, envs = [], []
        for body in (node.body, node.orelse):
            self.env = dict(before)
            block = Block()
            with insertion_point(block):
                self.block(body)
            blocks.append(block)
            envs.append(self.env)
        names = [n for n in _assigned(node.body + node.orelse) if n in envs[0] and n in envs[1]
                 and envs[0][n] is not envs[1][n]]
        kinds = []
        for n in names:
            values = [env[n] for env in envs]
            if not all(_is_number(v) for v in values):
                raise self.error(f"the variable {n!r} holds a number on one path of this if and something else on "
                                 "the other", node, TypeError)
            kinds.append(_carried(_common(*values)))
        for block, env in zip(blocks, envs):
            with insertion_point(block):
                emit("scf.yield", [cast(lift(env[n], k), k).value for n, k in zip(names, kinds)], [])
        results = emit("scf.if", [condition.value], [ScalarType(k) for k in kinds], None,
                       [Region([b]) for b in blocks])
        self.env = before
        for n in _assigned(node.body + node.orelse):
            if n not in names and not (n in envs[0] and n in envs[1] and envs[0][n] is envs[1][n]):
                self.env[n] = Undefined(f"{n!r} is assigned on one path of the if at line "
                                        f"{self.first_line + node.lineno - 1} only")
            elif n in names:
                self.env[n] = Scalar(results[names.index(n)], kinds[names.index(n)],
                                     any(isinstance(env[n], Scalar) and env[n].data for env in envs))
            else:
                self.env[n] = envs[0][n]

    def loop(self, node):
        """``for k in range(...)``: one scf.for carrying the numbers its body rebinds (their kinds
        widen until the body leaves them as it found them); a loop over a tuple, or of at most
        UNROLL steps known now, runs in Python (its loads then raise to slices, not gathers)."""
        if node.orelse:
            raise self.error("a for loop's else is not supported in kernels", node)
        call = node.iter
        if not (isinstance(call, ast.Call) and self.expr(call.func) is builtins.range):
            sequence = self.expr(node.iter)
            if not isinstance(sequence, (tuple, list)):
                raise self.error("kernels loop over range(...) or over a tuple known at compile time", node)
            for item in sequence:
                self.assign(node.target, item, node)
                self.block(node.body)
            return
        if not isinstance(node.target, ast.Name):
            raise self.error("a kernel loop's variable must be one name", node)
        bounds = [self.expr(a) for a in call.args]
        start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
        if not any(isinstance(b, Scalar) for b in (start, stop, step)) and len(range(start, stop, step)) <= UNROLL:
            for k in range(start, stop, step):  # a short loop of known length: each step's loads are slices
                self.env[node.target.id] = k
                self.block(node.body)
            return
        if not isinstance(step, Scalar) and step <= 0:
            raise self.error("a kernel loop counts up (a positive step)", node)
        before = dict(self.env)
        names = [n for n in _assigned(node.body) if n != node.target.id and n in before
                 and not isinstance(before[n], Undefined)]
        for n in names:
            if not _is_number(before[n]):
                raise self.error(f"the variable {n!r} is rebound in a kernel loop but holds no number", node, TypeError)
        kinds = [_carried(_kind_of(before[n])) for n in names]
        while True:
            self.env = dict(before)
            block = Block([ScalarType("index")] + [ScalarType(k) for k in kinds])
            self.env[node.target.id] = Scalar(block.arguments[0], "index")
            for n, k, arg in zip(names, kinds, block.arguments[1:]):
                self.env[n] = Scalar(arg, k, isinstance(before[n], Scalar) and before[n].data)
            with insertion_point(block):
                self.block(node.body)
                after = [self.env.get(n) for n in names]
                wider = [_carried(_common(Scalar(None, k), v)) if _is_number(v) else None for k, v in zip(kinds, after)]
                if wider == kinds:
                    emit("scf.yield", [cast(lift(v, k), k).value for v, k in zip(after, kinds)], [])
                    break
            if None in wider:
                raise self.error("a variable the loop carries holds no number at the end of its body", node, TypeError)
            kinds = wider
        inits = [cast(lift(before[n], k), k).value for n, k in zip(names, kinds)]
        bounds = [cast(lift(b, "index"), "index").value for b in (start, stop, step)]
        results = emit("scf.for", bounds + inits, [ScalarType(k) for k in kinds], None, [Region([block])])
        body_env = self.env
        self.env = before
        for n in _assigned(node.body):
            if n in names:
                self.env[n] = Scalar(results[names.index(n)], kinds[names.index(n)], True)
            elif n == node.target.id or n not in before or body_env.get(n) is not before.get(n):
                self.env[n] = Undefined(f"{n!r} is assigned in the loop at line {self.first_line + node.lineno - 1}, "
                                        "and kernels keep no value of it after the loop")

    # --- memory ---
    def indices(self, buffer, index, node) -> list:
        index = index if isinstance(index, tuple) else (index,)
        if len(index) != buffer.ndim:
            raise self.error(f"a kernel reads and writes single elements: {buffer.name} has {buffer.ndim} "
                             f"dimensions, indexed with {len(index)}", node, IndexError)
        out = []
        for i, n in zip(index, buffer.shape):
            if isinstance(i, slice):
                raise self.error("slices are not supported in kernels (index single elements)", node, IndexError)
            if isinstance(i, Scalar):
                if i.kind in _FLOATS:
                    raise self.error("array indices must be integers", node, IndexError)
                out.append(cast(i, "index"))
            else:
                k = int(i)
                if not -n <= k < n:
                    raise self.error(f"index {k} is out of bounds for axis of size {n}", node, IndexError)
                out.append(constant(k % n, "index"))
        return out

    def load(self, buffer, index, node) -> Scalar:
        if not isinstance(buffer, Buffer):
            return self.python(lambda: buffer[index], node)
        kind = _KIND_OF_DTYPE[buffer.dtype]
        indices = self.indices(buffer, index, node)
        value = emit("memref.load", [buffer.value] + [i.value for i in indices], [ScalarType(kind)])[0]
        return Scalar(value, kind, data=True)

    def store(self, buffer, index, value, node):
        if not isinstance(buffer, Buffer):
            raise self.error("a kernel writes into its array arguments only", node, TypeError)
        if not _is_number(value):
            raise self.error(f"a kernel stores numbers, not a {type(value).__name__}", node, TypeError)
        kind = _KIND_OF_DTYPE[buffer.dtype]
        indices = self.indices(buffer, index, node)
        emit("memref.store", [cast(lift(value, kind), kind).value, buffer.value] + [i.value for i in indices], [])
        buffer.stored = True

    # --- expressions ---
    def expr(self, node):
        self.line = self.first_line + getattr(node, "lineno", self.line - self.first_line + 1) - 1
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            raise self.error(f"a {type(node).__name__} expression is not supported in kernels", node)
        return method(node)

    def python(self, compute, node):
        try:
            return compute()
        except Exception as e:  # noqa: BLE001  (the user's Python error, at the kernel's line)
            raise self.error(f"{type(e).__name__}: {e}", node, type(e) if isinstance(e, (TypeError, ValueError,
                                                                                     IndexError)) else UnsupportedError)

    def expr_Constant(self, node):
        return node.value

    def expr_Name(self, node):
        name = node.id
        for scope in (self.env, self.closure, self.fn.__globals__, vars(builtins)):
            if name in scope:
                value = scope[name]
                if isinstance(value, Undefined):
                    raise self.error(f"{value.why}, and is read here", node, NameError)
                return value
        raise self.error(f"name {name!r} is not defined", node, NameError)

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        kind = stub(base)
        if kind in _IDS and node.attr in ("x", "y", "z"):
            axis = "xyz".index(node.attr)
            return {"threadIdx": lambda: self.launch.thread_id(axis), "blockIdx": lambda: self.launch.block_id(axis),
                    "blockDim": lambda: self.launch.threads[axis], "gridDim": lambda: self.launch.blocks[axis]}[kind]()
        if isinstance(base, Buffer):
            if node.attr in ("shape", "size", "ndim", "dtype"):
                return getattr(base, node.attr)
            raise self.error(f"arrays in kernels have no attribute {node.attr!r} cofactor supports", node)
        if isinstance(base, Scalar):
            raise self.error(f"a kernel's number has no attribute {node.attr!r}", node)
        return self.python(lambda: getattr(base, node.attr), node)

    def expr_Subscript(self, node):
        return self.load(self.expr(node.value), self.expr(node.slice), node)

    def expr_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    expr_List = expr_Tuple

    def expr_Slice(self, node):
        raise self.error("slices are not supported in kernels (index single elements)", node, IndexError)

    def binary(self, name, a, b, node):
        if name is None:
            raise self.error("this operator is not supported in kernels", node)
        if not isinstance(a, Scalar) and not isinstance(b, Scalar):
            return self.python(lambda: _PYTHON_BINARY[name](a, b), node)
        if not (_is_number(a) and _is_number(b)):
            raise self.error("a kernel computes with numbers only", node, TypeError)
        try:
            return _binary(name, a, b)
        except TypeError as e:
            raise self.error(str(e), node, TypeError) from None

    def expr_BinOp(self, node):
        return self.binary(_OPERATORS.get(type(node.op)), self.expr(node.left), self.expr(node.right), node)

    def expr_UnaryOp(self, node):
        x = self.expr(node.operand)
        if not isinstance(x, Scalar):
            return self.python(lambda: {ast.USub: lambda: -x, ast.UAdd: lambda: +x, ast.Not: lambda: not x,
                                        ast.Invert: lambda: ~x}[type(node.op)](), node)
        if isinstance(node.op, ast.Not):
            return _binary("BitXor", cast(x, "i1"), True)
        if isinstance(node.op, ast.USub):
            return _op("arith.negf", [x], x.kind, data=x.data) if x.kind in _FLOATS else _binary("Sub", 0, x)
        if isinstance(node.op, ast.Invert) and x.kind not in _FLOATS:
            return _binary("BitXor", x, -1) if x.kind != "i1" else _binary("BitXor", x, True)
        return x

    def expr_BoolOp(self, node):
        values = [truth(self.expr(v)) for v in node.values]
        python = [v for v in values if not isinstance(v, Scalar)]
        if isinstance(node.op, ast.And):
            if any(v is False for v in python):
                return False
            scalars = [v for v in values if isinstance(v, Scalar)]
            name = "BitAnd"
        else:
            if any(v is True for v in python):
                return True
            scalars = [v for v in values if isinstance(v, Scalar)]
            name = "BitOr"
        if not scalars:
            return bool(python and python[-1])
        result = scalars[0]
        for s in scalars[1:]:
            result = _binary(name, result, s)
        return result

    def expr_Compare(self, node):
        left, result = self.expr(node.left), True
        for op, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node)
            name = _COMPARISONS.get(type(op))
            if name is None:
                raise self.error(f"the comparison {type(op).__name__} is not supported in kernels", node)
            if isinstance(left, Scalar) or isinstance(right, Scalar):
                this = _compare(name, left, right)
            else:
                this = self.python(lambda: _PYTHON_COMPARE[name](left, right), node)
            result = this if result is True else (_binary("BitAnd", truth(result), truth(this))
                                                  if isinstance(result, Scalar) or isinstance(this, Scalar)
                                                  else result and this)
            left = right
        return result

    def expr_IfExp(self, node):
        condition = truth(self.expr(node.test))
        if not isinstance(condition, Scalar):
            return self.expr(node.body if condition else node.orelse)
        return _select(condition, self.expr(node.body), self.expr(node.orelse))

    def expr_Call(self, node):
        fn = self.expr(node.func)
        args = [self.expr(a) for a in node.args]
        if any(isinstance(a, ast.Starred) for a in node.args) or node.keywords and stub(fn) != "shared.array":
            raise self.error("keyword and starred arguments are not supported in kernel calls", node)
        return self.call(fn, args, node)

    def call(self, fn, args, node):
        name = stub(fn)
        if name == "grid":
            return self.launch.grid(int(args[0]))
        if name == "gridsize":
            return self.launch.gridsize(int(args[0]))
        if name == "atomic.add":
            return self.atomic_add(*args, node=node)
        if name in ("syncthreads", "shared.array", "local.array", "threadfence", "syncwarp"):
            raise self.error(f"cuda.{name} is not supported: shared memory and barriers do not raise to tensor "
                             "operations in enzyme-ad 0.0.16; write the kernel without them", node)
        if name is not None:
            raise self.error(f"cuda.{name} is not supported in cofactor kernels", node)
        if fn in (min, max) and len(args) >= 2:
            result = args[0]
            for other in args[1:]:
                result = self.extreme(fn, result, other, node)
            return result
        if not any(isinstance(a, Scalar) for a in args):
            return self.python(lambda: fn(*args), node)
        if fn is abs:
            fn = math.fabs if args[0].kind in _FLOATS else abs
        if fn is abs:
            x = args[0]
            return _select(_compare("Lt", x, 0), _binary("Sub", 0, x), x)
        if fn in (float, np.float64, np.float32, int, np.int64, np.int32, bool, np.bool_):
            kind = {float: "f64", np.float64: "f64", np.float32: "f32", int: "index", np.int64: "i64",
                    np.int32: "i32", bool: "i1", np.bool_: "i1"}[fn]
            return cast(args[0], kind)
        op = _MATH.get(getattr(fn, "__name__", None)) if _is_math(fn) else None
        if op is not None and len(args) == 1:
            x = args[0] if args[0].kind in _FLOATS else cast(args[0], "f64")
            return _op(op, [x], x.kind, data=x.data)
        if _is_math(fn) and fn.__name__ in ("pow", "power") and len(args) == 2:
            return _binary("Pow", *args)
        if _is_math(fn) and fn.__name__ in ("atan2", "arctan2") and len(args) == 2:
            kind = _common(*args) if _common(*args) in _FLOATS else "f64"
            a, b = (cast(lift(x, kind), kind) for x in args)
            return _op("math.atan2", [a, b], kind, data=a.data or b.data)
        if _is_math(fn) and fn.__name__ in ("isnan",):
            x = cast(args[0], "f64") if args[0].kind not in _FLOATS else args[0]
            return _op("arith.cmpf", [x, x], "i1", {"predicate": f"{_UNORDERED} : i64"}, x.data)
        if inspect.isfunction(fn):
            return self.device_function(fn, args, node)
        raise self.error(f"{getattr(fn, '__name__', fn)!s} of a kernel's numbers is not supported", node)

    def extreme(self, fn, a, b, node):
        if not isinstance(a, Scalar) and not isinstance(b, Scalar):
            return fn(a, b)
        # Python's: max(a, b) is b if b > a else a
        return _select(_compare("Gt" if fn is max else "Lt", b, a), b, a)

    def atomic_add(self, buffer, index, value, node=None):
        if not isinstance(buffer, Buffer):
            raise self.error("cuda.atomic.add adds into an array argument", node, TypeError)
        flat = index if isinstance(index, tuple) else (index,)
        if not any(isinstance(i, Scalar) and i.data for i in flat):
            raise self.error("cuda.atomic.add at an index that does not come from the data (a reduction into "
                             "one element) is raised wrong by enzyme-ad 0.0.16 (it keeps one thread's value): "
                             "reduce with NumPy instead (out[0] = np.sum(x) outside the kernel)", node)
        kind = _KIND_OF_DTYPE[buffer.dtype]
        indices = self.indices(buffer, index, node)
        code = 0 if kind in _FLOATS else 1  # arith's atomic_rmw_kind: addf, addi
        old = emit("memref.atomic_rmw", [cast(lift(value, kind), kind).value, buffer.value] + [i.value for i in indices],
                   [ScalarType(kind)], {"kind": f"{code} : i64"})[0]
        buffer.stored = True
        return Scalar(old, kind, True)

    def device_function(self, fn, args, node):
        """A function the kernel calls, compiled inline: its parameters bound to the arguments, its
        value the expression of its last statement, ``return ...``."""
        inner = Compiler(fn, self.launch, {})
        params = [a.arg for a in inner.node.args.args]
        if len(params) != len(args):
            raise self.error(f"{fn.__name__}() takes {len(params)} arguments, given {len(args)}", node, TypeError)
        inner.env = dict(zip(params, args))
        body = inner.node.body
        if not body or not isinstance(body[-1], ast.Return) or any(isinstance(n, ast.Return) for s in body[:-1]
                                                                    for n in ast.walk(s)):
            raise self.error(f"a function a kernel calls ({fn.__name__}) must end in its only return", node)
        for statement in body[:-1]:
            inner.line = inner.first_line + statement.lineno - 1
            inner.statement(statement)
        return inner.expr(body[-1].value) if body[-1].value is not None else None


def _carried(kind: str) -> str:
    """The kind an scf.if or scf.for carries a number in: an index as i64 (the raise of a loop that
    carries an index fails, selecting between i64 and index), cast back where it subscripts."""
    return "i64" if kind == "index" else kind


def _returns(statements) -> bool:
    return bool(statements) and isinstance(statements[-1], ast.Return)


def _is_math(fn) -> bool:
    return getattr(fn, "__module__", None) == "math" or isinstance(fn, np.ufunc) or \
        getattr(fn, "__module__", "").startswith("numpy")


# --- the kernel function ---------------------------------------------------------------------------

def compile_kernel(fn, launch: Launch, arguments, module, name: str) -> tuple[Function, list]:
    """Add to ``module`` the private function ``name`` for ``fn`` launched as ``launch`` on
    ``arguments`` (per parameter: a (shape, dtype) pair for an array, passed as a memref, a 0-d
    (shape, dtype) for a number known at run time, or a Python number known now); returns it and
    the Buffer of each array."""
    compiler = Compiler(fn, launch, {})
    params = [a.arg for a in compiler.node.args.args]
    if len(params) != len(arguments) or compiler.node.args.vararg or compiler.node.args.kwonlyargs:
        raise compiler.error(f"the kernel takes {len(params)} arguments, given {len(arguments)}", None, TypeError)
    passed = [(p, a) for p, a in zip(params, arguments) if isinstance(a, tuple)]
    for p, (shape, dtype) in passed:
        if np.dtype(dtype) not in _KIND_OF_DTYPE:
            raise compiler.error(f"the array {p} has dtype {np.dtype(dtype)}; kernels take float64, float32, int64, "
                                 "int32 and bool arrays", None, TypeError)
    function = module.add(Function(name, [MemRefType(shape, dtype) for _, (shape, dtype) in passed],
                                   visibility="private"))
    buffers = [Buffer(v, shape, dtype, p) for (p, (shape, dtype)), v in zip(passed, function.arguments)]
    with insertion_point(function.body):
        given = iter(buffers)
        for p, a in zip(params, arguments):
            if isinstance(a, tuple):
                buffer = next(given)
                compiler.env[p] = buffer if buffer.shape else compiler.load(buffer, (), compiler.node)
            else:
                compiler.env[p] = a
        compiler.block(compiler.node.body, top_level=True)
        emit("func.return", [], [])
    return function, buffers

