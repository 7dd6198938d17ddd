"""AST rewriting of if / while / for statements, so that a traced condition or trip count becomes
stablehlo.if / stablehlo.while while a Python one stays plain Python.

    if test: A            ->   def then(): nonlocal x; A
    else: B                    def else_(): nonlocal x; B
                               __cofactor__.if_(test, then, else_, get, set, ("x",), line)

Blocks that leave the statement early (return, break, continue, yield) or assign names
declared global are left as written: a traced condition there raises cofactor's
ConcretizationError, which names the line.
"""
from __future__ import annotations

import ast

from ..tracing.control import RETURN_VALUE

RUNTIME = "__cofactor__"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


_COMPREHENSIONS = (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
_LOOPS = (ast.For, ast.While, ast.AsyncFor)


def _walk(nodes, barriers):
    """Nodes of these statements, not descending into nodes of the ``barriers`` types (a nested
    function, class or comprehension is its own scope; a nested loop owns its break/continue);
    named barriers (def, class) are yielded, for their names."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, barriers):
                stack.append(child)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield child


def _walk_scope(nodes):
    return _walk(nodes, (*_SCOPES, *_COMPREHENSIONS))


def _lambda(body):
    return ast.Lambda(ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), body)


def assigned_names(nodes) -> list:
    names = []
    for node in _walk_scope(nodes):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.append(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.alias):
            names.append((node.asname or node.name).split(".")[0])
    generated = ("__cf_if", "__cf_while", "__cf_for")  # the functions this module writes
    return list(dict.fromkeys(n for n in names if not n.startswith(generated)))


def _escapes(nodes, in_loop=False) -> bool:
    """Whether control can leave these statements other than by falling through."""
    for node in nodes:
        for sub in _walk_scope([node]):
            if isinstance(sub, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)):
                return True
        if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
            return True
        for field in ("body", "orelse", "handlers", "finalbody"):
            inner = getattr(node, field, None)
            if isinstance(inner, list) and inner and not isinstance(node, _SCOPES):
                loop = isinstance(node, _LOOPS) and field == "body"
                if _escapes([n for n in inner if isinstance(n, ast.stmt)] or
                            [h for h in inner if isinstance(h, ast.ExceptHandler)], in_loop or loop):
                    return True
    return False


def _name(id_, ctx=ast.Load):
    return ast.Name(id_, ctx())


def _runtime(attr):
    return ast.Attribute(_name(RUNTIME), attr, ast.Load())


def _function(name, params, body, nonlocals):
    stmts = ([ast.Nonlocal(list(nonlocals))] if nonlocals else []) + (body or [ast.Pass()])
    return ast.FunctionDef(name=name, args=ast.arguments(
        posonlyargs=[], args=[ast.arg(p) for p in params], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=stmts, decorator_list=[], returns=None)


def _state_functions(prefix, names):
    """A getter (each name's value, or UNBOUND) and a setter for ``names``."""
    loads = [ast.Call(_runtime("load"), [_lambda(_name(n))], []) for n in names]
    getter = _function(f"{prefix}_get", [], [ast.Return(ast.Tuple(loads, ast.Load()))], [])
    values = f"{prefix}_values"
    setter = _function(f"{prefix}_set", [values], [ast.Assign(
        [ast.Tuple([_name(n, ast.Store) for n in names], ast.Store())], _name(values))] if names else [], names)
    return getter, setter


class ControlFlow(ast.NodeTransformer):
    def __init__(self, global_names):
        self.global_names = set(global_names)
        self.count = 0
        self.bound = []  # every name a rewritten block assigns: the function must bind them

    def _prefix(self, kind):
        self.count += 1
        return f"__cf_{kind}{self.count}"

    def _call(self, attr, args, node):
        return ast.copy_location(ast.Expr(ast.Call(_runtime(attr), args, [])), node)

    def _names(self, blocks):
        names = assigned_names([s for b in blocks for s in b])
        if self.global_names & set(names):
            return None
        self.bound += names
        return names

    def visit_FunctionDef(self, node):
        return node  # a nested function is converted on its own when it is called

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.copy_location(ast.Call(_runtime("ifexp"), [node.test, _lambda(node.body),
                                                               _lambda(node.orelse)], []), node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        attr = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[0]
        for operand in node.values[1:]:  # a and b and c == (a and b) and c, each evaluated lazily
            result = ast.Call(_runtime(attr), [result, _lambda(operand)], [])
        return ast.copy_location(result, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(ast.Call(_runtime("not_"), [node.operand], []), node)
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    # Each visit reads the statement as written (names, early exits) before rewriting the
    # statements inside it, whose assignments then move into generated functions.
    def visit_If(self, node):
        names = self._names([node.body, node.orelse])
        escapes = _escapes(node.body + node.orelse)
        self.generic_visit(node)
        if names is None or escapes:
            return node
        p = self._prefix("if")
        getter, setter = _state_functions(p, names)
        then = _function(f"{p}_then", [], node.body, names)
        orelse = _function(f"{p}_else", [], node.orelse, names)
        call = self._call("if_", [node.test, _name(then.name), _name(orelse.name), _name(getter.name),
                                  _name(setter.name), ast.Tuple([ast.Constant(n) for n in names], ast.Load()),
                                  ast.Constant(node.lineno)], node)
        return [ast.copy_location(s, node) for s in (then, orelse, getter, setter)] + [call]

    def _exit_flags(self, node):
        """Rewrite the loop's break/continue (under ifs) into flags; returns (break flag, statements
        that must run before the loop), or (None, []) when there is nothing to rewrite."""
        if not _has_loop_exit(node.body) or not _exits_under_ifs(node.body):
            return None, []
        self.count += 1
        brk, cont = f"__cf_break{self.count}", f"__cf_continue{self.count}"
        body = [ast.Assign([_name(cont, ast.Store)], ast.Constant(False))] + _rewrite_exits(node.body, brk, cont)
        if isinstance(node, ast.For):  # iterations after a break do nothing
            body = [ast.If(ast.UnaryOp(ast.Not(), _name(brk)), body, [])]
        else:
            node.test = ast.BoolOp(ast.And(), [ast.UnaryOp(ast.Not(), _name(brk)), node.test])
        node.body = [ast.fix_missing_locations(ast.copy_location(st, node)) for st in body]
        return brk, [ast.copy_location(ast.Assign([_name(brk, ast.Store)], ast.Constant(False)), node)]

    def visit_While(self, node):
        _, before = self._exit_flags(node)
        names = self._names([node.body])
        escapes = node.orelse or _escapes(node.body)
        self.generic_visit(node)
        if names is None or escapes:
            return node
        p = self._prefix("while")
        getter, setter = _state_functions(p, names)
        cond = _function(f"{p}_cond", [], [ast.Return(node.test)], [])
        body = _function(f"{p}_body", [], node.body, names)
        call = self._call("while_", [_name(cond.name), _name(body.name), _name(getter.name), _name(setter.name),
                                     ast.Tuple([ast.Constant(n) for n in names], ast.Load()),
                                     ast.Constant(node.lineno)], node)
        return before + [ast.copy_location(s, node) for s in (cond, body, getter, setter)] + [call]

    def visit_For(self, node):
        brk, before = self._exit_flags(node)
        names = self._names([node.body, [ast.Assign([node.target], ast.Constant(None))]])
        escapes = node.orelse or _escapes(node.body)
        self.generic_visit(node)
        if names is None or escapes:
            return node
        p = self._prefix("for")
        item = f"{p}_item"
        getter, setter = _state_functions(p, names)
        body = _function(f"{p}_body", [item], [ast.Assign([node.target], _name(item))] + node.body, names)
        iterable = node.iter
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range":
            iterable = ast.Call(_runtime("range"), iterable.args, iterable.keywords)  # may have traced bounds
        stop = _lambda(_name(brk)) if brk else ast.Constant(None)
        call = self._call("for_", [iterable, _name(body.name), _name(getter.name), _name(setter.name),
                                   ast.Tuple([ast.Constant(n) for n in names], ast.Load()),
                                   ast.Constant(node.lineno), stop], node)
        return before + [ast.copy_location(s, node) for s in (body, getter, setter)] + [call]


_RETURNED = "__cf_returned"


def _loop_level(nodes):
    """Nodes of these loop-body statements that belong to this loop (not to nested loops)."""
    return _walk(nodes, (*_SCOPES, *_LOOPS))


def _has_loop_exit(stmts) -> bool:
    return any(isinstance(n, (ast.Break, ast.Continue)) for n in _loop_level(stmts))


def _exits_under_ifs(stmts) -> bool:
    for st in stmts:
        if isinstance(st, ast.If):
            if not (_exits_under_ifs(st.body) and _exits_under_ifs(st.orelse)):
                return False
        elif not isinstance(st, (ast.Break, ast.Continue)) and _has_loop_exit([st]):
            return False
    return True


def _rewrite_exits(stmts, brk, cont):
    """break/continue become flags; the statements after an if that may set one run only when
    neither is set."""
    out = []
    for index, st in enumerate(stmts):
        if isinstance(st, (ast.Break, ast.Continue)):
            flag = brk if isinstance(st, ast.Break) else cont
            return out + [ast.copy_location(ast.Assign([_name(flag, ast.Store)], ast.Constant(True)), st)]
        if isinstance(st, ast.If) and _has_loop_exit([st]):
            st.body, st.orelse = _rewrite_exits(st.body, brk, cont), _rewrite_exits(st.orelse, brk, cont)
            rest = _rewrite_exits(stmts[index + 1:], brk, cont)
            go_on = ast.UnaryOp(ast.Not(), ast.BoolOp(ast.Or(), [_name(brk), _name(cont)]))
            return out + [st] + ([ast.copy_location(ast.If(go_on, rest, []), st)] if rest else [])
        out.append(st)
    return out


def _contains_return(nodes) -> bool:
    return any(isinstance(n, ast.Return) for n in _walk_scope(nodes))


def _returns_only_under_ifs(stmts) -> bool:
    """Every return statement sits at the top level or inside if/else blocks (not loops, try, with)."""
    for st in stmts:
        if isinstance(st, ast.If):
            if not (_returns_only_under_ifs(st.body) and _returns_only_under_ifs(st.orelse)):
                return False
        elif not isinstance(st, ast.Return) and _contains_return([st]):
            return False
    return True


def _single_exit(stmts):
    """Returns inside ifs become assignments to the pending return value and a returned flag;
    the statements after such an if run only when nothing has returned yet."""
    out = []
    for index, st in enumerate(stmts):
        if isinstance(st, ast.Return):
            value = st.value if st.value is not None else ast.Constant(None)
            return out + [ast.copy_location(ast.Assign([_name(RETURN_VALUE, ast.Store)], value), st),
                          ast.copy_location(ast.Assign([_name(_RETURNED, ast.Store)], ast.Constant(True)), st)]
        if isinstance(st, ast.If) and _contains_return([st]):
            st.body, st.orelse = _single_exit(st.body), _single_exit(st.orelse)
            rest = _single_exit(stmts[index + 1:])
            guard = [ast.copy_location(ast.If(ast.UnaryOp(ast.Not(), _name(_RETURNED)), rest, []), st)] if rest else []
            return out + [st] + guard
        out.append(st)
    return out


def _rewrite_returns(function_node):
    body = function_node.body
    early = [st for st in body if isinstance(st, ast.If) and _contains_return([st])]
    if not early or not _returns_only_under_ifs(body):
        return
    first = body[0]
    start = [ast.Assign([_name(_RETURNED, ast.Store)], ast.Constant(False)),
             ast.Assign([_name(RETURN_VALUE, ast.Store)], _runtime("unset"))]
    end = ast.Return(ast.Call(_runtime("returned"), [_name(RETURN_VALUE)], []))
    function_node.body = [ast.copy_location(s, first) for s in start] + _single_exit(body) + \
        [ast.copy_location(end, body[-1])]


def convert_control_flow(function_node):
    """Rewrite the control flow of a FunctionDef in place (its nested functions included)."""
    _rewrite_returns(function_node)
    global_names = [n for s in ast.walk(function_node) if isinstance(s, (ast.Global, ast.Nonlocal)) for n in s.names]
    transformer = ControlFlow(global_names)
    function_node.body = [transformer.visit(s) for s in function_node.body]
    function_node.body = [s for item in function_node.body for s in (item if isinstance(item, list) else [item])]
    if transformer.bound:
        # Bind every rewritten name in this function (dead code still makes them local), so the
        # generated functions' ``nonlocal`` statements find them.
        binding = ast.If(ast.Constant(False), [ast.Assign([_name(n, ast.Store) for n in dict.fromkeys(transformer.bound)],
                                                          ast.Constant(None))], [])
        function_node.body.insert(0, binding)
    return function_node
