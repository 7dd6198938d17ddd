"""Comprehensions with an if clause, written as the loops they are.

``[f(v) for v in x if v > 0]`` runs as Python when it is traced, so its test cannot be a traced value.
Where such a comprehension (one ``for``, at least one ``if``: a filter) is evaluated once by its
statement (the value of an assignment, an expression statement, a return, an if's test, a for
loop's iterable), before anything in it that could change what it reads (a call, a ``:=``), this
pass writes it before the statement as the loop it stands for::

    _cofactor_kept1 = []
    for _cofactor_v1 in x:
        if _cofactor_v1 > 0:
            _cofactor_kept1.append(f(_cofactor_v1))

and the statement reads ``_cofactor_kept1`` (a generator expression, where a builtin consumes it at
once, reads ``iter(_cofactor_kept1)`` where it is a list, the list of run-time length itself where it
is not: what ``sum``, ``max``, ``next`` take), which is None after it.
The loop is converted as the user's own: a test of a traced value makes the list one of run-time
length (tracing/histories.py), a test Python decides leaves it a list.  The comprehension's own
variables are renamed, so that none leaks into the function, as in Python.  The names are not the
generated ones converted code hides from the scans of the program's state (tracing/heap.py): the
list is the program's, whose length a traced branch must not change unseen.
"""
from __future__ import annotations

import ast
import inspect

import numpy as np

_CONDITIONAL = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
_BLOCKS = ("body", "orelse", "finalbody")


def hoist_filters(function_node, runtime: str):
    """Rewrite the filtering comprehensions of ``function_node``'s statements (not those of functions
    or classes nested in it) as loops before them."""
    count = [0]

    def in_block(stmts):
        out = []
        for stmt in stmts:
            for name in _BLOCKS:
                if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                        isinstance(getattr(stmt, name, None), list):
                    setattr(stmt, name, in_block(getattr(stmt, name)))
            for handler in getattr(stmt, "handlers", []):
                handler.body = in_block(handler.body)
            for case in getattr(stmt, "cases", []):
                case.body = in_block(case.body)
            loops = []
            for holder, field in _evaluated_once(stmt):
                setattr(holder, field, _Hoist(loops, count, runtime).expression(getattr(holder, field)))
            # (the lists let go after the statement: a loop around it carries none of them, which would be a list
            # at its start and of run-time length at its end)
            released = [ast.Assign([ast.Name(s.targets[0].id, ast.Store())], ast.Constant(None)) for s in loops
                        if isinstance(s, ast.Assign)] if not isinstance(stmt, ast.Return) else []
            if isinstance(stmt, ast.If) and loops:  # (let go before the branches, which may return or break)
                count[0] += 1
                tested = f"_cofactor_test{count[0]}"
                loops.append(ast.Assign([ast.Name(tested, ast.Store())], stmt.test))
                stmt.test = ast.Name(tested, ast.Load())
                loops, released = loops + released, []
            out += [ast.fix_missing_locations(ast.copy_location(s, stmt)) for s in [*loops, stmt, *released]]
        return out
    function_node.body = in_block(function_node.body)


def _evaluated_once(stmt):
    """(node, field) of the expressions ``stmt`` evaluates once, before anything else it does."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)) and stmt.value is not None:
        yield stmt, "value"
    elif isinstance(stmt, ast.If):
        yield stmt, "test"
    elif isinstance(stmt, ast.For):
        yield stmt, "iter"


class _Hoist:
    """Replaces, in one statement's expression, the filtering comprehensions that Python evaluates
    before anything that could change what they read (a call, a ``:=``: evaluated before them, in
    Python's order, they stay where they are) by the lists that ``loops`` build; a generator expression
    only where a call consumes it at once (``sum(v for v in x if v > t)``, not ``g = (...)``)."""

    def __init__(self, loops: list, count, runtime):
        self.loops, self.count, self.runtime = loops, count, runtime
        self.settled = True  # nothing has run yet that a comprehension hoisted before it could miss

    def expression(self, node, consumed=None):
        if isinstance(node, ast.ListComp) and _filters(node) and self.settled or \
                isinstance(node, ast.GeneratorExp) and _filters(node) and self.settled and consumed and \
                (consumed not in _SHORT_CIRCUITS or _cannot_fail(node)):
            return self._hoisted(node)
        if isinstance(node, _CONDITIONAL) or isinstance(node, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            self.settled = False  # (evaluated only where a test lets it, or later; or it binds or runs code)
            return node
        if isinstance(node, ast.Call):
            node.func = self.expression(node.func)
            consumer = node.func.id if isinstance(node.func, ast.Name) and node.func.id in _CONSUMERS else None
            node.args = [self.expression(a, consumed=consumer) for a in node.args]
            for keyword in node.keywords:
                keyword.value = self.expression(keyword.value)
            self.settled = self.settled and _changes_nothing(node)  # (else what follows may see what it changed)
            return node
        for field, value in ast.iter_fields(node):  # (Python's order of evaluation: the fields' order)
            if isinstance(value, ast.AST):
                setattr(node, field, self.expression(value))
            elif isinstance(value, list):
                setattr(node, field, [self.expression(v) if isinstance(v, ast.AST) else v for v in value])
        return node

    def _hoisted(self, node):
        self.count[0] += 1
        kept = f"_cofactor_kept{self.count[0]}"
        self.loops += _loop(node, kept, self.count[0])
        read = ast.Name(kept, ast.Load())
        if isinstance(node, ast.GeneratorExp):
            return ast.copy_location(ast.Call(ast.Attribute(ast.Name(self.runtime, ast.Load()), "generated",
                                                            ast.Load()), [read], []), node)
        return ast.copy_location(read, node)


def _changes_nothing(call) -> bool:
    """A call of a builtin or a NumPy function that computes a value and changes nothing (no out=, by
    keyword or by position: ``np.negative(x, x)``)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in _PURE
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("np", "numpy")
            and func.attr not in _NUMPY_WRITERS and not any(k.arg == "out" for k in call.keywords)):
        return False
    fn = getattr(np, func.attr, None)
    if isinstance(fn, np.ufunc):
        return len(call.args) <= fn.nin
    try:
        parameters = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return len(call.args) <= 1
    return "out" not in parameters or len(call.args) <= parameters.index("out")


_PURE = {"len", "sum", "max", "min", "abs", "any", "all", "list", "tuple", "sorted", "round", "float", "int", "bool",
         "complex", "range", "enumerate", "zip", "reversed", "isinstance", "divmod", "pow", "next"}
_NUMPY_WRITERS = {"copyto", "put", "place", "putmask", "put_along_axis", "fill_diagonal", "random", "seed"}

def _cannot_fail(node) -> bool:
    """Whether a generator expression's element and tests do nothing that can fail or be seen: evaluated
    for every item, where ``next``, ``any`` and ``all`` stop at the first that decides (``x[i + 1]`` past
    the end, a method's side effect), they would give another answer."""
    targets = {n.id for n in ast.walk(node.generators[0].target) if isinstance(n, ast.Name)}
    for part in (node.elt, *node.generators[0].ifs):
        for n in ast.walk(part):
            if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _PURE) or \
                    isinstance(n, ast.Subscript) and not (isinstance(n.slice, ast.Name) and n.slice.id in targets) or \
                    isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)) or \
                    isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)):
                return False
    return True


_SHORT_CIRCUITS = {"next", "any", "all"}

# Builtins that consume an iterable they are given at once (a generator expression among their arguments
# may be a list made before the call).
_CONSUMERS = {"sum", "max", "min", "any", "all", "list", "tuple", "sorted", "set", "frozenset", "next"}


def _filters(node) -> bool:
    return len(node.generators) == 1 and node.generators[0].ifs and not node.generators[0].is_async and \
        all(isinstance(t, ast.Name) for t in _target_names(node.generators[0].target))


def _target_names(target) -> list:
    return [target] if isinstance(target, ast.Name) else \
        [n for e in target.elts for n in _target_names(e)] if isinstance(target, (ast.Tuple, ast.List)) else [target]


def _loop(node, kept: str, k: int) -> list:
    generator = node.generators[0]
    renamed = {t.id: f"_cofactor_{t.id}{k}" for t in _target_names(generator.target)}
    rename = _Rename(renamed)
    target, element = rename.visit(generator.target), rename.visit(node.elt)
    tests = [rename.visit(test) for test in generator.ifs]
    body = [ast.Expr(ast.Call(ast.Attribute(ast.Name(kept, ast.Load()), "append", ast.Load()), [element], []))]
    for test in reversed(tests):
        body = [ast.If(test, body, [])]
    loop = ast.For(target, generator.iter, body, [])
    loop.comprehension = True  # (control.py: a loop the user did not write is not warned about)
    return [ast.Assign([ast.Name(kept, ast.Store())], ast.List([], ast.Load())), loop]


class _Rename(ast.NodeTransformer):
    """The comprehension's variables under their new names (not inside a nested scope that binds them again)."""

    def __init__(self, renamed: dict):
        self.renamed = renamed

    def visit_Name(self, node):
        if node.id in self.renamed:
            return ast.copy_location(ast.Name(self.renamed[node.id], node.ctx), node)
        return node

    def visit_Lambda(self, node):
        bound = {a.arg for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs}
        return node if bound & set(self.renamed) else self.generic_visit(node)

    def _scope(self, node):
        bound = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        return node if bound & set(self.renamed) else self.generic_visit(node)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _scope
