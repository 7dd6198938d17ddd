"""Reads of globals, closure cells, attributes and items in converted code, routed so that
tracing sees them.

An array a function reaches through a global or a closure variable is an input of the compiled
function like its arguments (tracing/implicit.py): read again at every call and written back
when the function writes it.  So every read of a name that resolves outside the converted
function (to its module's globals, the builtins, or the cells of the functions around it) is
rewritten from ``G`` to ``__cf_outer__.read("G", G)``: ``__cf_outer__`` knows the module and
the cells of the function it was converted from (a builtin, found in neither, is left alone).
Reads of attributes and items go through it too (``self.w`` is ``__cf_outer__.attribute(self,
"w")``, ``d[k]`` is ``__cf_outer__.item(d, k)``, not a slice): what an object from outside holds
is read like a global (tracing/implicit.py).  ``t.a op= v`` reads ``t.a`` that way and stores the
result back, as Python does.  Names rebound under ``global`` or ``nonlocal`` are read the same way:
the module's globals and the caller's cells are outside state, so what the function stores in
them is there after each call.

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
import operator

import inspect

from ..errors import forwards_calls
from ..tracing import implicit, outside

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
            return _outer_call("attribute", [node.value, ast.Constant(node.attr)], node)
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or _generated(node.value):
            return node
        if _plain_index(node.slice):
            return _outer_call("item", [node.value, node.slice], node)
        if isinstance(node.slice, ast.Slice):  # (a slice of an outside list reads its items as slots)
            bounds = [b if b is not None else ast.Constant(None) for b in (node.slice.lower, node.slice.upper,
                                                                             node.slice.step)]
            return _outer_call("item", [node.value, _outer_call("slice", bounds, node.slice)], node)
        return node

    def visit_Compare(self, node):
        """``k in c`` and ``k not in c``: what a trace learns of an outside container's keys is guarded."""
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            test = _outer_call("contains", [node.comparators[0], node.left], node)
            return ast.copy_location(ast.UnaryOp(ast.Not(), test), node) if isinstance(node.ops[0], ast.NotIn) else test
        return node

    def visit_AugAssign(self, node):
        """``t.a op= v`` is ``t.a = op(t.a, v)`` with ``t`` evaluated once, as Python does it, but
        with ``t.a`` read as converted code reads attributes (an outside object's array is an
        implicit input, which the in-place operator then writes); so are ``d[k] op= v`` and, for a
        global or a caller's cell, ``n op= v``."""
        self.generic_visit(node)
        target = node.target
        if isinstance(target, ast.Name) and self._outside(target.id):  # global N; N += 1
            read = self.visit_Name(ast.copy_location(ast.Name(target.id, ast.Load()), target))
            combined = _outer_call("inplace", [ast.Constant(_INPLACE[type(node.op)]), read, node.value], node)
            return ast.copy_location(ast.Assign([target], combined), node)
        if not isinstance(target, (ast.Attribute, ast.Subscript)) or _generated(target.value) or \
                isinstance(target, ast.Subscript) and not _plain_index(target.slice):
            return node
        holder, key = ast.Name(f"{OUTER}_holder", ast.Store()), ast.Name(f"{OUTER}_key", ast.Store())
        held, keyed = ast.Name(holder.id, ast.Load()), ast.Name(key.id, ast.Load())
        if isinstance(target, ast.Attribute):
            first = [ast.Assign([holder], target.value)]
            read = _outer_call("attribute", [held, ast.Constant(target.attr)], node)
            store = ast.Attribute(held, target.attr, ast.Store())
        else:
            first = [ast.Assign([holder], target.value), ast.Assign([key], target.slice)]
            read = _outer_call("item", [held, keyed], node)
            store = ast.Subscript(held, keyed, ast.Store())
        combined = _outer_call("inplace", [ast.Constant(_INPLACE[type(node.op)]), read, node.value], node)
        return [ast.copy_location(statement, node) for statement in (*first, ast.Assign([store], combined))]

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


def _plain_index(index) -> bool:
    """An index that is an expression of its own (not a slice, nor a tuple holding one)."""
    return not isinstance(index, ast.Slice) and not (isinstance(index, ast.Tuple) and any(
        isinstance(e, (ast.Slice, ast.Starred)) for e in index.elts))


def _generated(node) -> bool:
    """An expression converted code made (``__cf_outer__.read``, the control flow's helpers)."""
    return isinstance(node, ast.Name) and node.id.startswith(("__cf", "__cofactor"))


def _outer_call(method, arguments, node):
    call = ast.Call(ast.Attribute(ast.Name(OUTER, ast.Load()), method, ast.Load()), arguments, [])
    return ast.copy_location(call, node)


def route_outer_reads(function):
    """Rewrite, in place, the reads of ``function`` (an ast.FunctionDef or Lambda, converted)
    that resolve outside it."""
    _RouteOuterReads().visit(function)


class Outer:
    """What ``__cf_outer__`` is in a function converted from ``fn``: where its outer names live
    (``call``: how converted code calls a function, for a property's getter)."""

    def __init__(self, fn, nested: bool, call):
        self.call = call
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
            return implicit.read(value, name, (id(cell), name), lambda: cell.cell_contents)
        module = self.globals
        if name not in module:
            return value  # a builtin (range, len, abs): not checked at every call
        outside.reached(module, module.get("__name__", "the module"))  # (its globals, as a dict's entries)
        return implicit.read(value, name, (id(module), name), lambda: _global(module, name))

    def attribute(self, obj, name):
        return read_attribute(obj, name, self.call)

    @staticmethod
    def item(container, key):
        if type(key) is slice and type(container) in (list, tuple):
            return outside.sliced(container, key)
        try:
            value = _item(container, key)
        except (KeyError, IndexError):
            outside.missing(container, key, "item")
            raise
        if type(container) is dict or type(container) in (list, tuple) and type(key) is int:
            return outside.read_slot(container, key, value, "item")
        return value

    @staticmethod
    def contains(container, key):
        return _contains(container, key)

    slice = slice

    inplace = staticmethod(forwards_calls(lambda name, target, value: getattr(operator, name)(target, value)))


def read_attribute(obj, name, call):
    """``obj.name`` as converted code reads it (``call``: how it calls a function): an outside
    object's attribute as a slot, its property's getter converted (so that what it reads is read
    at every call), an outside dict's or list's reading methods routed (outside.method)."""
    try:
        getter = inspect.getattr_static(type(obj), name, None)
    except Exception:  # noqa: BLE001  (an unusual class: read as Python reads it, below)
        getter = None
    if isinstance(getter, property) and getter.fget is not None and outside.is_outside(obj) and \
            name not in getattr(obj, "__dict__", ()):
        return call(getter.fget, obj)
    try:
        value = _attribute(obj, name)
    except AttributeError:
        outside.missing(obj, name, "attribute")
        raise
    if type(obj) in (dict, list):
        return outside.method(obj, name, value)
    return outside.read_slot(obj, name, value, "attribute")


# The user's reads, whose errors (an attribute or key that is not there) are the user's line's, as
# are those of ``inplace``'s operator.
_attribute = forwards_calls(lambda obj, name: getattr(obj, name))
_item = forwards_calls(lambda container, key: operator.getitem(container, key))
_contains = forwards_calls(lambda container, key: outside.has(container, key, "item"))


def _global(module: dict, name: str):
    """``name`` looked up as a function of ``module`` looks up a global: the module, then builtins."""
    if name in module:
        return module[name]
    space = module.get("__builtins__", builtins)
    space = space if isinstance(space, dict) else vars(space)
    if name in space:
        return space[name]
    raise NameError(f"name {name!r} is not defined")
