"""AST rewriting of ``raise`` and ``assert``, so that where the code being traced may not run (a
branch of a traced ``if``, a traced loop's body) they become run-time checks (tracing/checks.py):

    raise E             ->   if __cofactor__.checked_raise(lambda: E):   # a check: True
                                 return __cofactor__.unset               # ...and this path ends here
                             else:
                                 raise __cofactor__.built(lambda: E)     # raised now, as written
    assert test, msg    ->   if not test: raise AssertionError(msg)      # then as above

The ``return`` then becomes the returned flag of control.py like any other, so what follows a
raise on its path does not run and a loop around it stops.  A raise that a ``try`` around it may
catch (or a ``with`` may suppress) stays as written, and so does a bare ``raise``.
"""
from __future__ import annotations

import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _runtime(runtime, attr):
    return ast.Attribute(ast.Name(runtime, ast.Load()), attr, ast.Load())


def _thunk(expr):
    return ast.Lambda(ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), expr)


class _Checks(ast.NodeTransformer):
    def __init__(self, runtime):
        self.runtime = runtime
        self.protected = 0  # try bodies with handlers and with bodies around the node visited

    def _visit_protected(self, stmts):
        self.protected += 1
        try:
            return [new for st in stmts for new in _as_list(self.visit(st))]
        finally:
            self.protected -= 1

    def visit_scope(self, node):
        return node  # a nested function is converted on its own when it is called

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_scope

    def visit_Try(self, node):
        if not node.handlers:
            return self.generic_visit(node)
        node.body = self._visit_protected(node.body)
        for part in (node.handlers, node.orelse, node.finalbody):
            part[:] = [new for st in part for new in _as_list(self.visit(st))]
        return node

    visit_TryStar = visit_Try

    def visit_With(self, node):
        node.body = self._visit_protected(node.body)
        return node

    visit_AsyncWith = visit_With

    def visit_Assert(self, node):
        error = ast.Call(ast.Name("AssertionError", ast.Load()), [node.msg] if node.msg is not None else [], [])
        raise_ = ast.copy_location(ast.Raise(error, None), node)
        test = ast.copy_location(ast.UnaryOp(ast.Not(), node.test), node.test)
        return ast.copy_location(ast.If(test, _as_list(self.visit(raise_)), []), node)

    def visit_Raise(self, node):
        if node.exc is None or self.protected:
            return node
        args = [_thunk(node.exc)] + ([_thunk(node.cause)] if node.cause is not None else [])
        test = ast.copy_location(ast.Call(_runtime(self.runtime, "checked_raise"), args, []), node)
        end = ast.copy_location(ast.Return(_runtime(self.runtime, "unset")), node)
        node.exc = ast.copy_location(ast.Call(_runtime(self.runtime, "built"), [_thunk(node.exc)], []), node.exc)
        return ast.copy_location(ast.If(test, [end], [node]), node)


def _as_list(result):
    return result if isinstance(result, list) else [result]


def rewrite_checks(function_node, runtime):
    """Rewrite the raise and assert statements of a FunctionDef in place (not of its nested functions)."""
    stack = list(function_node.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return  # a generator's return ends its iteration, not the function
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    transformer = _Checks(runtime)
    function_node.body = [new for st in function_node.body for new in _as_list(transformer.visit(st))]
