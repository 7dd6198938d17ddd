"""Reads of globals, closure cells, attributes and items in converted code, routed so that
tracing sees them.

An array a function reaches through a global or a closure variable is an input of the compiled
function like its arguments (tracing/implicit.py): read again at every call and written back
when the function writes it.  So every read of a name that resolves outside the converted
function (to its module's globals, the builtins, or the cells of the functions around it) is
rewritten from ``G`` to ``__cf_outer__.read("G", G)``: ``__cf_outer__`` knows the module and
the cells of the function it was converted from (a builtin, found in neither, is left alone).
Reads of attributes and items go through it too (``self.w`` is ``__cf_outer__.attribute(self,
"w")``, ``d[k]`` is ``__cf_outer__.item(d, k)``, a single slice included), and so do the places
where Python iterates or tests a container (``W, b = self.params``, ``*args``, a comprehension's
iterable: ``unpacked``; ``k in d``: ``contains``) and attribute stores (``set_attribute``: a
property's setter): what an object from outside holds is read like a global (tracing/outside.py).
``t.a op= v`` reads ``t.a`` that way and stores the result back, as Python does.  Names rebound
under ``global`` or ``nonlocal`` are read the same way: the module's globals and the caller's
cells are outside state, so what the function stores in them is there after each call.

Names are resolved as Python's compiler resolves them, on the converted function (whose control
flow is already rewritten into nested functions): a name bound in a scope (parameters,
assignments, imports, ``def``, ``except ... as``) is local to it unless declared ``global`` or
``nonlocal`` there; a read resolves to the innermost function scope binding it (a name rebound
under ``global``/``nonlocal`` is read through ``__cf_outer__`` too; its rebinding goes to the
module or the cell as written).  Class bodies are left as written.
"""
from __future__ import annotations

import ast
import builtins
import collections
import contextlib
import functools
import inspect
import operator
import sys
import types

import numpy as np

from ..errors import ConcretizationError, UnsupportedError, forwards_calls, located
from ..tracing import context, implicit, outside
from ..tracing.array import TracedArray, constant, defers_tracing
from ..tracing.dispatch import INDEXED
from .protocols import Protocols, cofactors_own, own_hook
from .sequences import chosen_item

OUTER = "__cf_outer__"
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)


def _own_nodes(node):
    """The nodes of this scope's body, not descending into nested scopes (yielded themselves)."""
    if isinstance(node, _COMPREHENSIONS):
        stack = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for k, comp in enumerate(node.generators):
            stack += [comp.target, *comp.ifs] + ([comp.iter] if k else [])
    else:
        stack = list(node.body) if isinstance(node.body, list) else [node.body]
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, (*_FUNCTIONS, *_COMPREHENSIONS, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(child))


def _parameters(args: ast.arguments) -> list:
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return [p.arg for p in params if p is not None]


class _Scope:
    """The names a function or comprehension scope binds, and those it declares global/nonlocal."""

    def __init__(self, node):
        self.bound, self.declared_global, self.declared_nonlocal = set(), set(), set()
        if isinstance(node, _FUNCTIONS):
            self.bound.update(_parameters(node.args))
        for child in _own_nodes(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
                self.bound.add(child.id)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound.add(child.name)
            elif isinstance(child, ast.alias):
                self.bound.add((child.asname or child.name).split(".")[0])
            elif isinstance(child, ast.ExceptHandler) and child.name:
                self.bound.add(child.name)
            elif isinstance(child, (ast.MatchAs, ast.MatchStar)) and child.name:
                self.bound.add(child.name)
            elif isinstance(child, ast.MatchMapping) and child.rest:
                self.bound.add(child.rest)
            elif isinstance(child, ast.Global):
                self.declared_global.update(child.names)
            elif isinstance(child, ast.Nonlocal):
                self.declared_nonlocal.update(child.names)
        self.bound -= self.declared_global | self.declared_nonlocal


class _RouteOuterReads(ast.NodeTransformer):
    def __init__(self):
        self.scopes: list[_Scope] = []
        self.count = 0  # (the unpackings into items made so far: their temporaries' names)

    def _outside(self, name) -> bool:
        for scope in reversed(self.scopes):
            if name in scope.declared_global:
                return True
            if name in scope.bound:
                return False
        return True

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and not _generated(node) and self._outside(node.id):
            read = ast.Attribute(ast.Name(OUTER, ast.Load()), "read", ast.Load())
            return ast.copy_location(ast.Call(read, [ast.Constant(node.id), node], []), node)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and not _generated(node.value):
            return outer_call("attribute", [node.value, ast.Constant(node.attr)], node)
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or _generated(node.value) or _starred(node.slice):
            return node
        return outer_call("item", [node.value, _index(node.slice)], node)

    def visit_Match(self, node):
        """``match v:`` with class patterns goes through ``__cf_outer__.matched`` (a traced value's class is not
        the NumPy type or Python number it stands for)."""
        self.generic_visit(node)
        if any(isinstance(p, ast.MatchClass) for case in node.cases for p in ast.walk(case.pattern)):
            node.subject = outer_call("matched", [node.subject], node.subject)
        return node

    def visit_MatchClass(self, node):
        """``case Point(x=0):``: the class stays a name, as Python's grammar wants it (its patterns are visited)."""
        node.patterns = [self.visit(p) for p in node.patterns]
        node.kwd_patterns = [self.visit(p) for p in node.kwd_patterns]
        return node

    def visit_MatchValue(self, node):
        """``case Color.RED:``: a dotted name stays one, as Python's grammar wants it."""
        return node

    def visit_BinOp(self, node):
        """``a op b``: the program's own ``__add__``/``__radd__`` run as converted code (protocols.py)."""
        self.generic_visit(node)
        return outer_call("binary", [ast.Constant(_OPERATORS[type(node.op)]), node.left, node.right], node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return node
        return outer_call("unary", [ast.Constant(_UNARY[type(node.op)]), node.operand], node)

    def visit_Assign(self, node):
        """``W, b = self.params``: the items an outside sequence gives when unpacked are its slots;
        ``obj.name = v`` goes through ``__cf_outer__.set_attribute`` (a property's setter, converted)."""
        self.generic_visit(node)
        if any(isinstance(t, (ast.Tuple, ast.List)) for t in node.targets):
            node.value = outer_call("unpacked", [node.value], node.value)
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, (ast.Tuple, ast.List)) and \
                all(isinstance(e, (ast.Name, ast.Attribute, ast.Subscript)) for e in target.elts) and \
                any(isinstance(e, ast.Subscript) and not _generated(e.value) for e in target.elts):
            return self._unpacked_into_items(node, target.elts)
        if len(node.targets) == 1 and isinstance(target, ast.Attribute) and not _generated(target.value):
            call = outer_call("set_attribute", [target.value, ast.Constant(target.attr), node.value], node)
            return ast.copy_location(ast.Expr(call), node)
        if len(node.targets) == 1 and isinstance(target, ast.Subscript) and not _generated(target.value) and \
                not _starred(target.slice):  # (the value first, as Python evaluates it)
            call = outer_call("set_item", [node.value, target.value, _index(target.slice)], node)
            return ast.copy_location(ast.Expr(call), node)
        return node

    def _unpacked_into_items(self, node, targets):
        """``lst[k], lst[0] = lst[0], lst[k]``: the values unpacked into temporaries (Python's count check),
        then each stored in order as its own assignment would (a list item at a traced index: set_item)."""
        self.count += 1
        temps = [f"__cf_unpacked{self.count}_{k}" for k in range(len(targets))]
        stored = [ast.Assign([ast.Tuple([ast.Name(t, ast.Store()) for t in temps], ast.Store())], node.value)]
        for target, temp in zip(targets, temps):
            value = ast.Name(temp, ast.Load())
            if isinstance(target, ast.Subscript) and not _generated(target.value) and not _starred(target.slice):
                stored.append(ast.Expr(outer_call("set_item", [value, target.value, _index(target.slice)], node)))
            elif isinstance(target, ast.Attribute) and not _generated(target.value):
                stored.append(ast.Expr(outer_call("set_attribute", [target.value, ast.Constant(target.attr), value],
                                                  node)))
            else:
                stored.append(ast.Assign([target], value))
        return [ast.copy_location(s, node) for s in stored]

    def visit_Delete(self, node):
        """``del obj[k]``: the program's own ``__delitem__`` runs as converted code."""
        self.generic_visit(node)
        statements = []
        for target in node.targets:
            if isinstance(target, ast.Subscript) and not _generated(target.value) and not _starred(target.slice):
                call = outer_call("del_item", [target.value, _index(target.slice)], target)
                statements.append(ast.copy_location(ast.Expr(call), node))
            else:
                statements.append(ast.copy_location(ast.Delete([target]), node))
        return statements

    def visit_Starred(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            node.value = outer_call("unpacked", [node.value], node.value)
        return node

    def visit_With(self, node):
        """``with m as v:``: the manager's own ``__enter__`` and ``__exit__`` run as converted code, and no
        ``__exit__`` swallows cofactor's refusals (protocols.Managed)."""
        ours = [isinstance(item.context_expr, ast.Call) and isinstance(item.context_expr.func, ast.Attribute) and
                getattr(item.context_expr.func.value, "id", None) == OUTER for item in node.items]  # (control.py's)
        self.generic_visit(node)
        for item, generated in zip(node.items, ours):
            if not generated:
                item.context_expr = outer_call("managed", [item.context_expr], item.context_expr)
        return node

    def visit_ExceptHandler(self, node):
        """A handler first lets cofactor's refusals through (``except Exception:`` around traced code
        would otherwise take its except path at every call, silently)."""
        self.generic_visit(node)
        node.body.insert(0, ast.copy_location(ast.Expr(outer_call("refusal_caught", [], node)), node))
        return node

    def visit_Compare(self, node):
        """``k in c`` and ``k not in c``: what a trace learns of an outside container's keys is guarded;
        ``a < b``: the program's own ``__lt__``/``__gt__`` run as converted code."""
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            name = "excludes" if isinstance(node.ops[0], ast.NotIn) else "contains"
            return outer_call(name, [node.comparators[0], node.left], node)
        if len(node.ops) == 1 and type(node.ops[0]) in COMPARISONS:  # (a chain: statements.compare_chain)
            return outer_call("compare", [ast.Constant(COMPARISONS[type(node.ops[0])]), node.left,
                                           node.comparators[0]], node)
        return node

    def visit_AugAssign(self, node):
        """``t.a op= v`` is ``t.a = op(t.a, v)`` with ``t`` evaluated once, as Python does it, but
        with ``t.a`` read as converted code reads attributes (an outside object's array is an
        implicit input, which the in-place operator then writes); so are ``d[k] op= v`` and, for a
        global or a caller's cell, ``n op= v``; a local ``a op= v`` goes through ``inplace`` too (an
        object from outside held by a local name: its class's own ``__iadd__``, converted)."""
        self.generic_visit(node)
        target = node.target
        if isinstance(target, ast.Name) and not _generated(target):  # global N; N += 1, or a local's
            read = ast.copy_location(ast.Name(target.id, ast.Load()), target)
            read = self.visit_Name(read) if self._outside(target.id) else read
            combined = outer_call("inplace", [ast.Constant(_INPLACE[type(node.op)]), read, node.value], node)
            return ast.copy_location(ast.Assign([target], combined), node)
        if not isinstance(target, (ast.Attribute, ast.Subscript)) or _generated(target.value) or \
                isinstance(target, ast.Subscript) and _starred(target.slice):
            return node
        holder, key = ast.Name(f"{OUTER}_holder", ast.Store()), ast.Name(f"{OUTER}_key", ast.Store())
        held, keyed = ast.Name(holder.id, ast.Load()), ast.Name(key.id, ast.Load())
        if isinstance(target, ast.Attribute):
            first = [ast.Assign([holder], target.value)]
            read = outer_call("attribute", [held, ast.Constant(target.attr)], node)
        else:
            first = [ast.Assign([holder], target.value), ast.Assign([key], _index(target.slice))]
            read = outer_call("item", [held, keyed], node)
        combined = outer_call("inplace", [ast.Constant(_INPLACE[type(node.op)]), read, node.value], node)
        store = outer_call("set_attribute", [held, ast.Constant(target.attr), combined], node) if \
            isinstance(target, ast.Attribute) else outer_call("set_item", [combined, held, keyed], node)
        return [ast.copy_location(statement, node) for statement in (*first, ast.Expr(store))]

    def _in_scope(self, node, body_fields):
        self.scopes.append(_Scope(node))
        for field in body_fields:
            value = getattr(node, field)
            if isinstance(value, list):
                visited = [self.visit(v) for v in value]  # a statement may become several
                setattr(node, field, [s for v in visited for s in (v if isinstance(v, list) else [v])])
            else:
                setattr(node, field, self.visit(value))
        self.scopes.pop()
        return node

    def _function(self, node):
        # Defaults and decorators are evaluated where the function is defined.
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        node.args.kw_defaults = [d if d is None else self.visit(d) for d in node.args.kw_defaults]
        if not isinstance(node, ast.Lambda):
            node.decorator_list = [self.visit(d) for d in node.decorator_list]
        return self._in_scope(node, ["body"])

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def _comprehension(self, node):
        first = node.generators[0]
        first.iter = self.visit(first.iter)  # evaluated in the scope around the comprehension
        self.scopes.append(_Scope(node))
        for k, comp in enumerate(node.generators):
            if k:
                comp.iter = self.visit(comp.iter)
            comp.iter = outer_call("unpacked", [comp.iter], comp.iter)  # (its items: an outside list's slots)
            comp.ifs = [self.visit(test) for test in comp.ifs]
        for field in ("key", "value") if isinstance(node, ast.DictComp) else ("elt",):
            setattr(node, field, self.visit(getattr(node, field)))
        self.scopes.pop()
        return node

    visit_GeneratorExp = visit_ListComp = visit_SetComp = visit_DictComp = _comprehension

    def visit_ClassDef(self, node):
        return node


_INPLACE = {ast.Add: "iadd", ast.Sub: "isub", ast.Mult: "imul", ast.Div: "itruediv", ast.FloorDiv: "ifloordiv",
            ast.Mod: "imod", ast.Pow: "ipow", ast.MatMult: "imatmul", ast.BitAnd: "iand", ast.BitOr: "ior",
            ast.BitXor: "ixor", ast.LShift: "ilshift", ast.RShift: "irshift"}


_OPERATORS = {**{op: name[1:] for op, name in _INPLACE.items()}, ast.BitAnd: "and", ast.BitOr: "or"}
_UNARY = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert"}
COMPARISONS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}


def _starred(index) -> bool:
    """``x[*idx]``, which stays as written."""
    return isinstance(index, ast.Tuple) and any(isinstance(e, ast.Starred) for e in index.elts)


def _index(index):
    """A subscript's index as an expression: its slices (``x[1:, i]``) as ``slice(...)``."""
    if isinstance(index, ast.Slice):
        bounds = [b if b is not None else ast.Constant(None) for b in (index.lower, index.upper, index.step)]
        return outer_call("slice", bounds, index)
    if isinstance(index, ast.Tuple):
        return ast.copy_location(ast.Tuple([_index(e) for e in index.elts], ast.Load()), index)
    return index


def _generated(node) -> bool:
    """An expression converted code made (``__cf_outer__.read``, the control flow's helpers)."""
    return isinstance(node, ast.Name) and node.id.startswith(("__cf", "__cofactor"))


def outer_call(method, arguments, node):
    """``__cf_outer__.method(*arguments)``, at ``node``'s place in the source."""
    call = ast.Call(ast.Attribute(ast.Name(OUTER, ast.Load()), method, ast.Load()), arguments, [])
    return ast.copy_location(call, node)


def route_outer_reads(function):
    """Rewrite, in place, the reads of ``function`` (an ast.FunctionDef or Lambda, converted)
    that resolve outside it."""
    _RouteOuterReads().visit(function)


class Outer(Protocols):
    """What ``__cf_outer__`` is in a function converted from ``fn``: where its outer names live
    (``call``: how converted code calls a function, for a property's getter), and Python's protocols
    on the objects it meets (protocols.py)."""

    def __init__(self, fn, nested: bool, call):
        super().__init__(call)
        self.globals = fn.__globals__
        self.cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        # A function defined in converted code (``nested``) closes over that code's variables:
        # trace-time values, not the caller's state, except the cells it shares with the function
        # it was defined in that are the caller's.  Its reads of outer names went through that
        # function's Outer, which its own closure holds.
        if not nested:
            self.caller_cells = {id(cell) for cell in self.cells.values()}
        else:
            parent = self.cells.get(OUTER)
            self.caller_cells = parent.cell_contents.caller_cells if parent is not None else set()

    def read(self, name, value):
        cell = self.cells.get(name)
        if cell is not None:
            if id(cell) not in self.caller_cells:
                return value
            outside.reached(cell, name)  # what the function stores in it is there after each call
            if outside.rebound(cell, "cell_contents", value):  # (its own value, since it rebound the name)
                return implicit.known(value)
            return implicit.read(value, name, (id(cell), name), lambda: cell.cell_contents)
        if name not in self.globals:
            return value  # a builtin (range, len, abs): not checked at every call
        return read_global(self.globals, name, value, name)

    def attribute(self, obj, name):
        return read_attribute(obj, name, self.call)

    def set_attribute(self, obj, name, value):
        """``obj.name = value``; a property's setter of an object from outside runs as converted code
        (what it reads and counts, read and counted at every call)."""
        if isinstance(obj, types.ModuleType) and outside.user_module(obj):  # (settings.CALLS += 1: a global)
            outside.reached(vars(obj), obj.__name__)
        setter = inspect.getattr_static(type(obj), name, None)
        if isinstance(setter, property) and setter.fset is not None and outside.is_outside(obj):
            self.call(setter.fset, obj, value)
        elif hook := own_hook(obj, "__setattr__"):
            self.call(hook, obj, name, value)
        else:
            _set_attribute(obj, name, value)

    def item(self, container, key):
        key = self.index(key)
        built = INDEXED.get(id(container))
        if built is not None:  # (np.r_[a, 0.0, b], np.mgrid[0:3]: arrays the function makes)
            return built(key)
        if type(key) is slice and type(container) in (list, tuple):
            if any(isinstance(b, TracedArray) for b in (key.start, key.stop, key.step)):
                raise located(ConcretizationError(
                    f"a {type(container).__name__} sliced at a traced bound: its length would be known only when the "
                    "compiled function runs (hold the items in an array and slice it, np.asarray(items)[a:b])"))
            return outside.sliced(container, key)
        if isinstance(container, (list, tuple)) and isinstance(key, TracedArray) and key.ndim == 0:
            return chosen_item(container, key)
        if isinstance(container, (str, bytes)) and isinstance(key, TracedArray):
            raise located(ConcretizationError(
                f"a {type(container).__name__} indexed by a traced integer: which character it gives is known only "
                "when the compiled function runs, and compiled code has no strings (compare character codes in an "
                "array, np.frombuffer(s.encode(), np.uint8)[k], or index the string after the call)"))
        if isinstance(container, dict) and isinstance(key, TracedArray):
            raise located(ConcretizationError(
                "a dict looked up with a traced key: which entry is known only when the compiled function runs "
                "(hold the values in an array and index it, np.asarray(values)[k], or choose with np.where)"))
        if hook := own_hook(container, "__getitem__"):  # (a param store's own lookup)
            return self.call(hook, container, key)
        factory = getattr(container, "default_factory", None)
        if isinstance(container, collections.defaultdict) and isinstance(factory, types.FunctionType) and \
                outside.is_outside(container) and not outside.has(container, key, "item"):
            container[key] = self.call(factory)  # (defaultdict(lambda: np.zeros(2)): made as converted code)
        if type(container) is np.ndarray and any(isinstance(k, TracedArray) or defers_tracing(k)
                                                 for k in (key if type(key) is tuple else (key,))):
            container = constant(container)  # (np.triu_indices(n)'s arrays, made by NumPy, at a traced index)
        try:
            value = _item(container, key)
        except (KeyError, IndexError):
            outside.missing(container, key, "item")
            raise
        if isinstance(container, dict) or type(container) in (list, tuple, collections.deque) and type(key) is int:
            return outside.read_slot(container, key, value, "item")
        return value

    def unpacked(self, iterable):
        return outside.unpacked(self.iterated(iterable))

    @staticmethod
    def refusal_caught():
        """Raise again, in a user's except clause, an exception that says cofactor cannot compile
        the code (not an error of the program's, which the clause may be there for)."""
        error = sys.exc_info()[1]
        if cofactors_own(error):
            raise error

    slice = slice

    @staticmethod
    def matched(subject):
        """The subject of a ``match`` with class patterns: Python matches those by the subject's class, and
        a traced value's is cofactor's, not the NumPy type or Python number it stands for."""
        if any(isinstance(x, TracedArray) for x in ([subject] if isinstance(subject, TracedArray) else
                                                     subject if isinstance(subject, (list, tuple)) else [])):
            raise located(UnsupportedError(
                "a match statement with class patterns (case float():, case np.ndarray():) on a value the compiled "
                "function computes or takes as an array is not supported by cofactor: test it with isinstance, "
                "which cofactor answers as NumPy would"))
        return subject

    @staticmethod
    @contextlib.contextmanager
    def catching(handlers):
        """The body of a ``try`` whose except clauses catch ``handlers()``: NumPy's errors checked only
        when the compiled function runs are refused there where the clause names them
        (tracing/checks.py)."""
        trace = context.current() if context.is_tracing() else None
        if trace is not None:
            trace.handlers.append(handlers)
        try:
            yield
        finally:
            if trace is not None:
                trace.handlers.pop()

    def inplace(self, name, target, value):
        """``target op= value``; an in-place operator the program's own class defines (``__iadd__``)
        runs as converted code, so what it reads and changes is tracked; without one (or where it
        returns NotImplemented), ``target op value``, as Python falls back to it."""
        if hook := own_hook(target, f"__{name}__"):
            result = self.call(hook, target, value)
            if result is not NotImplemented:
                return result
        elif not self.involved(name[1:], target, value):
            return _inplace(name, target, value)
        return self.binary(name[1:], target, value)


def read_global(module: dict, name: str, value, shown: str):
    """``value``, just read from the global ``name`` of ``module`` (its ``__dict__``), as converted
    code sees it: read at every call, as outside state (``shown``: what messages call it)."""
    outside.reached(module, module.get("__name__", "the module"))  # (its globals, as a dict's entries)
    if outside.rebound(module, name, value):
        return implicit.known(value)
    return implicit.read(value, shown, (id(module), name), lambda: _global(module, name))


def read_attribute(obj, name, call):
    """``obj.name`` as converted code reads it (``call``: how it calls a function): an outside
    object's attribute as a slot, its property's getter converted (so that what it reads is read
    at every call), an outside dict's or list's reading methods routed (outside.method), a global
    of the program's own module (``settings.SCALE``) as its own globals are read."""
    if isinstance(obj, types.ModuleType) and outside.user_module(obj) and name in vars(obj):
        return read_global(vars(obj), name, _attribute(obj, name), f"{obj.__name__}.{name}")
    if name == "__class__" and isinstance(obj, TracedArray):
        return obj.stands_for()  # (as type(x) is)
    if isinstance(obj, type):
        outside.reached(obj, obj.__qualname__)  # (the program's own class: cls.registry in a classmethod)
    try:
        getter = inspect.getattr_static(type(obj), name, _MISSING)
    except Exception:  # noqa: BLE001  (an unusual class: read as Python reads it, below)
        getter = None
    if getter is not _MISSING and getter is not None and not hasattr(getter, "__get__") and \
            outside.user_class(type(obj)) and not outside.is_outside(obj) and name not in getattr(obj, "__dict__", {}):
        return read_attribute(type(obj), name, call)  # (a class attribute read through an instance made here)
    if isinstance(getter, property) and getter.fget is not None and (
            outside.is_outside(obj) or outside.user_class(type(obj))):  # (a data descriptor: before the instance's own)
        return call(getter.fget, obj)
    if outside.is_outside(obj) and not outside.own_attribute(obj, name):
        if isinstance(getter, functools.cached_property):
            outside.guard_has(obj, name, "attribute")  # (computed by this call, kept for the next, as Python does)
            value = vars(obj)[name] = call(getter.func, obj)
            return value
        if getter is _MISSING and (hook := own_hook(obj, "__getattr__")):  # what it reads, read at every call
            return call(hook, obj, name)
        if name == "__dict__":  # (its attributes as a dict's entries, read as slots)
            outside.reached(vars(obj), f"{outside.name_of(obj)}.__dict__")
    try:
        value = _attribute(obj, name)
    except AttributeError:
        outside.missing(obj, name, "attribute")
        raise
    if isinstance(obj, (dict, list, collections.deque)):
        return outside.method(obj, name, value)
    return outside.read_slot(obj, name, value, "attribute")


_MISSING = object()


# The user's reads, whose errors (an attribute or key that is not there) are the user's line's, as
# are those of ``inplace``'s operator.
_attribute = forwards_calls(lambda obj, name: getattr(obj, name))
_set_attribute = forwards_calls(lambda obj, name, value: setattr(obj, name, value))
_inplace = forwards_calls(lambda name, target, value: getattr(operator, name)(target, value))
_item = forwards_calls(lambda container, key: operator.getitem(container, key))


def _global(module: dict, name: str):
    """``name`` looked up as a function of ``module`` looks up a global: the module, then builtins."""
    if name in module:
        return module[name]
    space = module.get("__builtins__", builtins)
    space = space if isinstance(space, dict) else vars(space)
    if name in space:
        return space[name]
    raise NameError(f"name {name!r} is not defined")

