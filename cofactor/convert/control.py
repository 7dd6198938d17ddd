"""AST rewriting of if / while / for statements, so that a traced condition or trip count becomes
stablehlo.if / stablehlo.while while a Python one stays plain Python.

    if test: A            ->   def then(): nonlocal x; A
    else: B                    def else_(): nonlocal x; B
                               __cofactor__.if_(test, then, else_, get, set, ("x",), line)

Early exits become flags first, so that every block falls through: a ``return`` (under ifs,
loops, with and try) sets the pending return value and a returned flag and breaks out of its
loops; ``break`` and ``continue`` set their loop's flags; what follows a block that may have
exited runs only if it did not; and a loop's ``else`` block moves after the loop, guarded by its
break flag.  What cannot be rewritten (a yield, an exit in a try's finally block, an assignment
to a global) stays as written, and a traced condition there raises cofactor's
ConcretizationError, which says what and where.
"""
from __future__ import annotations

import ast

from ..tracing.control import RETURN_VALUE, RETURNED as _RETURNED
from .checks import rewrite_checks
from .comprehensions import hoist_filters
from .outer import OUTER, outer_call

RUNTIME = "__cofactor__"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
_LOOPS = (ast.For, ast.While, ast.AsyncFor)
_LOOP_EXITS = (ast.Break, ast.Continue)
_EXITED_ELSE = "cofactor_exited_else"  # set on the guards whose else path has left the function or loop


def _walk(nodes, barriers):
    """These nodes and the nodes inside them, not descending into nodes of the ``barriers`` types
    (a nested function, class or comprehension is its own scope), which are yielded too."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, barriers):
            stack.extend(ast.iter_child_nodes(node))


def _walk_scope(nodes):
    return _walk(nodes, (*_SCOPES, *_COMPREHENSIONS))


def _loop_level(nodes):
    """Nodes of these statements that belong to the loop around them: not inside nested scopes or
    loops, except a nested loop's else block (a break there leaves the loop around)."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _LOOPS):
            stack.extend(node.orelse)
        elif not isinstance(node, (*_SCOPES, *_COMPREHENSIONS)):
            stack.extend(ast.iter_child_nodes(node))


_TRUTH = "cofactor_truth"  # set on an and/or whose value is used only for its truth (a test)


def _only_truth(test):
    """Mark the and/or of a test (through not and nested and/or): only their truth is used, so
    operands of different dtypes need not give one dtype (if m[i] and x[i] > t)."""
    if isinstance(test, ast.BoolOp):
        setattr(test, _TRUTH, True)
        for value in test.values:
            _only_truth(value)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        _only_truth(test.operand)


def _tested(test):
    """``test`` as a truth test reads it: an object of the program's own class by its own
    ``__bool__``/``__len__``, run as converted code (protocols.py)."""
    return outer_call("tested", [test], test)


def _lambda(body):
    """``lambda: body``, whose ``name := value`` (here bound in the lambda, not where the user wrote
    it) sets the user's variable through the runtime's ``assign``."""
    class Walrus(ast.NodeTransformer):
        def visit_Lambda(self, node):
            return node  # (an inner one was rewritten when it was made)

        def visit_NamedExpr(self, node):
            self.generic_visit(node)
            return ast.copy_location(ast.Call(_runtime("assign"), [_lambda(_name(node.target.id)), node.value], []),
                                     node)
    return ast.Lambda(_no_arguments(), Walrus().visit(body))


def _no_arguments():
    return ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])


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


def rebound_names(nodes) -> list:
    """The names these statements bind to a new object (``x = ...``, not only ``x += ...``)."""
    augmented = {id(n.target) for n in _walk_scope(nodes) if isinstance(n, ast.AugAssign)}
    names = [n.id for n in _walk_scope(nodes) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
             and id(n) not in augmented]
    return list(dict.fromkeys(names))


def _escape(nodes):
    """The first statement by which control can leave these statements other than by falling
    through (a return, yield, await, global or nonlocal, or a break / continue of a loop around
    them), or None."""
    found = [n for n in _walk_scope(nodes)
             if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal))]
    found += [n for n in _loop_level(nodes) if isinstance(n, _LOOP_EXITS)]
    return min(found, key=lambda n: (n.lineno, n.col_offset), default=None)


def _name(id_, ctx=ast.Load):
    return ast.Name(id_, ctx())


def _runtime(attr):
    return ast.Attribute(_name(RUNTIME), attr, ast.Load())


def _assign(name, value, at):
    return ast.copy_location(ast.Assign([_name(name, ast.Store)], value), at)


def _guard(test, stmts, at, exited_else=False):
    """``if test: stmts`` (nothing when there are no statements).  ``exited_else``: the else path is
    one on which the function has returned, or the loop broke before this iteration, so nothing
    that follows in the function or the loop body runs there (traced, it is told so)."""
    if not stmts:
        return []
    guard = ast.copy_location(ast.If(test, stmts, []), at)
    setattr(guard, _EXITED_ELSE, exited_else)
    return [guard]


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


def _constants(names):
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def _may_print(nodes) -> bool:
    """Whether these statements call anything: print, or a function of the program's that may print."""
    return any(isinstance(n, ast.Call) for n in _walk_scope(nodes))


def _is_range(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"


def _traced_range(call):
    """``range(...)`` as ``__cofactor__.range(...)``, which keeps traced bounds."""
    return ast.copy_location(ast.Call(_runtime("range"), call.args, call.keywords), call)


# --- early exits as flags -------------------------------------------------------------------------

def _blocks(st) -> list:
    """The statement lists of ``st`` in which an early exit can become a flag: both arms of an if, a
    with body, a try's body, except and else blocks (not finally, where a break or return discards
    an exception in flight), and a loop's else block."""
    if isinstance(st, ast.If):
        return [st.body, st.orelse]
    if isinstance(st, (ast.With, ast.AsyncWith)):
        return [st.body]
    if isinstance(st, ast.Try):
        return [st.body, *(h.body for h in st.handlers), st.orelse]
    if isinstance(st, _LOOPS):
        return [st.orelse]
    return []


def _return_blocks(st) -> list:
    """As ``_blocks``, and a loop's body: a return there also breaks out of the loop."""
    return _blocks(st) + ([st.body] if isinstance(st, _LOOPS) else [])


def _invariant(value, changed) -> bool:
    """Whether ``value`` is the same before a loop that assigns ``changed`` as after it: a constant
    (signed), or a name the loop does not assign."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    return isinstance(value, ast.Constant) or isinstance(value, ast.Name) and value.id not in changed


def _assigned_before_every_break(stmts, name, assigned=False) -> bool:
    """Whether each break of the loop around ``stmts`` comes after an assignment to ``name`` on its
    path (``assigned``: one came before ``stmts``)."""
    for st in stmts:
        if isinstance(st, ast.Break):
            return assigned
        if isinstance(st, ast.If):
            if not all(_assigned_before_every_break(b, name, assigned) for b in (st.body, st.orelse)):
                return False
        elif _count([st], ast.Break, _loop_level):
            return False  # a break inside another statement (try, with, a nested loop's else): not followed
        assigned = assigned or _assigns_at_top([st], name)
    return True


def _assigns_at_top(stmts, name) -> bool:
    """Whether one of ``stmts`` itself (not a branch or loop inside it) assigns ``name``."""
    return any(isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and name in assigned_names([st])
               for st in stmts)


def _count(nodes, kinds, walk) -> int:
    return sum(isinstance(n, kinds) for n in walk(nodes))


def _flaggable(stmts, kinds, walk, blocks) -> bool:
    """Whether every exit (a ``kinds`` node found by ``walk``) in ``stmts`` sits at their top level
    or, recursively, in the ``blocks`` of a statement, where it can become a flag."""
    for st in stmts:
        if isinstance(st, kinds):
            continue
        inner = blocks(st)
        if _count([st], kinds, walk) != sum(_count(b, kinds, walk) for b in inner) or \
                not all(_flaggable(b, kinds, walk, blocks) for b in inner):
            return False
    return True


def _rewrite_blocks(st, blocks, rewrite, exits, go_on):
    """Rewrite each of ``blocks(st)``; a try's else block, which an exit from its body skips, then
    runs only if ``go_on``."""
    skips_else = isinstance(st, ast.Try) and exits(st.body)
    for block in blocks(st):
        block[:] = rewrite(block)
    if skips_else:
        st.orelse[:] = _guard(go_on(), list(st.orelse), st)


def _rewrite_exits(stmts, brk, cont):
    """A loop body's break / continue become flags; what follows a statement that may set one runs
    only when neither is set."""
    def go_on():
        return ast.UnaryOp(ast.Not(), ast.BoolOp(ast.Or(), [_name(brk), _name(cont)]))

    def exits(nodes):
        return _count(nodes, _LOOP_EXITS, _loop_level)

    out = []
    for index, st in enumerate(stmts):
        if isinstance(st, _LOOP_EXITS):
            return out + [_assign(brk if isinstance(st, ast.Break) else cont, ast.Constant(True), st)]
        if exits([st]):
            _rewrite_blocks(st, _blocks, lambda b: _rewrite_exits(b, brk, cont), exits, go_on)
            return out + [st] + _guard(go_on(), _rewrite_exits(stmts[index + 1:], brk, cont), st)
        out.append(st)
    return out


def _contains_return(nodes) -> bool:
    return any(isinstance(n, ast.Return) for n in _walk_scope(nodes))


def _single_exit(stmts, in_loop):
    """Returns become assignments to the pending return value and the returned flag (and, inside
    a loop, a break); what follows a statement that may have returned runs only if nothing did."""
    def go_on():
        return ast.UnaryOp(ast.Not(), _name(_RETURNED))

    out = []
    for index, st in enumerate(stmts):
        if isinstance(st, ast.Return):
            value = st.value if st.value is not None else ast.Constant(None)
            value = ast.copy_location(ast.Call(_runtime("returning"), [value], []), st)  # checks it has a value
            out += [_assign(RETURN_VALUE, value, st), _assign(_RETURNED, ast.Constant(True), st)]
            return out + ([ast.copy_location(ast.Break(), st)] if in_loop else [])
        if _contains_return([st]):
            _rewrite_blocks(st, _blocks, lambda b: _single_exit(b, in_loop), _contains_return, go_on)
            if isinstance(st, _LOOPS):
                st.body[:] = _single_exit(st.body, True)
            rest = _single_exit(stmts[index + 1:], in_loop)
            if not in_loop:
                return out + [st] + _guard(go_on(), rest, st, exited_else=True)
            # In a loop, the break (under ifs, turned into flags later) skips the rest.
            leave = _guard(_name(_RETURNED), [ast.copy_location(ast.Break(), st)], st) if isinstance(st, _LOOPS) else []
            return out + [st] + leave + rest
        out.append(st)
    return out


def _falls_off(stmts) -> bool:
    """Whether running ``stmts`` can reach their end (a conservative answer: True when unsure)."""
    if not stmts:
        return True
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return False
    if isinstance(last, ast.If):
        return _falls_off(last.body) or _falls_off(last.orelse)
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _falls_off(last.body)
    if isinstance(last, ast.Try):  # past it from its body (and else block) or a handler, then its finally block
        through = _falls_off(last.body) and _falls_off(last.orelse) or any(_falls_off(h.body) for h in last.handlers)
        return through and _falls_off(last.finalbody)
    if isinstance(last, _LOOPS):  # past a loop by a break, or by its else block (never after ``while True``)
        forever = isinstance(last, ast.While) and isinstance(last.test, ast.Constant) and bool(last.test.value)
        breaks = any(isinstance(n, ast.Break) for n in _loop_level(last.body))
        return breaks or not forever and _falls_off(last.orelse)
    return True


def _rewrite_returns(function_node):
    """Give a function whose returns sit inside ifs and loops a single exit at its end."""
    body = function_node.body
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _walk_scope(body)):
        return  # a generator's return ends its iteration
    if not any(not isinstance(st, ast.Return) and _contains_return([st]) for st in body) or \
            not _flaggable(body, ast.Return, _walk_scope, _return_blocks):
        return
    if _falls_off(body):  # the implicit ``return None``, so that every path gives the return value
        body.append(ast.copy_location(ast.Return(None), body[-1]))
    first = body[0]
    start = [_assign(_RETURNED, ast.Constant(False), first), _assign(RETURN_VALUE, _runtime("unset"), first)]
    end = ast.copy_location(ast.Return(ast.Call(_runtime("returned"), [_name(RETURN_VALUE)], [])), body[-1])
    function_node.body = start + _single_exit(body, False) + [end]


# --- why a statement stays Python --------------------------------------------------------------

def _why(nodes, escape, names, around) -> str:
    """Why statements holding ``escape`` (or assigning a global, when ``names`` is None) cannot be
    compiled, for the error a traced condition raises; ``around``: the try statement whose finally
    block holds them, if any."""
    if names is None:
        return "it assigns a variable declared global, which compiled code cannot change"
    kind = "yield from" if isinstance(escape, ast.YieldFrom) else type(escape).__name__.lower()
    if isinstance(escape, (ast.Yield, ast.YieldFrom, ast.Await)):
        return (f"it contains a {kind} (line {escape.lineno}): a generator or coroutine cannot branch or loop on "
                "run-time values (compute the values with NumPy instead, e.g. a boolean mask or np.where)")
    if isinstance(escape, (ast.Global, ast.Nonlocal)):
        return f"it declares a {kind} variable (line {escape.lineno})"
    around = around or next((st for st in _walk_scope(nodes) if isinstance(st, ast.Try) and any(
        isinstance(n, (ast.Return, *_LOOP_EXITS)) for n in _walk_scope(st.finalbody))), None)
    if around is not None:
        return (f"the try statement at line {around.lineno} around it has a return, break or continue in its "
                "finally block, which cannot be compiled (a traced condition cannot decide whether to discard an "
                "exception in flight): move it out of the finally block")
    return (f"its {kind} (line {escape.lineno}) cannot be turned into a flag: cofactor does that under "
            "if/else, for, while, with and try (not in a finally block or a match statement)")


def _refuse_traced(test, message):
    """``test`` checked at run time: a traced value raises ConcretizationError(message)."""
    return ast.copy_location(ast.Call(_runtime("static"), [test, ast.Constant(message)], []), test)


class ControlFlow(ast.NodeTransformer):
    def __init__(self, global_names):
        self.global_names = set(global_names)
        self.count = 0
        self.bound = []  # every name a rewritten block assigns: the function must bind them
        self.finally_of = []  # the try statements whose finally blocks are being visited

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

    def _visit_all(self, stmts):
        out = [self.visit(s) for s in stmts]
        return [s for item in out for s in (item if isinstance(item, list) else [item])]

    def _unconverted(self, node, what, nodes, escape, names, brk=None):
        """``node`` left as Python: its condition (or range, or break flag) raises, when traced, an error
        saying why."""
        message = (f"the {what} at line {node.lineno} depends on a traced value, so it must be compiled, but "
                   f"{_why(nodes, escape, names, self.finally_of[-1] if self.finally_of else None)}")
        if not isinstance(node, ast.For):
            node.test = _refuse_traced(node.test, message)
            return node
        if _is_range(node.iter):
            node.iter = _refuse_traced(_traced_range(node.iter), message)
        if brk:  # a Python for loop ends at the iteration that set its break flag
            node.body += _guard(_refuse_traced(_name(brk), message), [ast.Break()], node)
        return node

    def visit_FunctionDef(self, node):
        return node  # a nested function is converted on its own when it is called

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_Try(self, node):
        if node.handlers:  # (what its except clauses catch, for the errors checked at run time)
            caught = ast.Tuple([h.type if h.type is not None else _name("BaseException") for h in node.handlers],
                               ast.Load())
            catching = outer_call("catching", [ast.Lambda(_no_arguments(), caught)], node)
            node.body = [ast.fix_missing_locations(ast.copy_location(
                ast.With([ast.withitem(catching, None)], node.body), node))]
        node.body, node.orelse = self._visit_all(node.body), self._visit_all(node.orelse)
        node.handlers = [self.visit(h) for h in node.handlers]
        self.finally_of.append(node)  # for the error of a statement there that stays Python
        node.finalbody = self._visit_all(node.finalbody)
        self.finally_of.pop()
        return node

    def visit_Return(self, node):
        self.generic_visit(node)
        if node.value is not None:  # a variable with no value here fails at this line, as in Python
            node.value = ast.copy_location(ast.Call(_runtime("returning"), [node.value], []), node.value)
        return node

    def visit_IfExp(self, node):
        _only_truth(node.test)
        self.generic_visit(node)
        node.test = _tested(node.test)
        return ast.copy_location(ast.Call(_runtime("ifexp"), [node.test, _lambda(node.body), _lambda(node.orelse),
                                                               ast.Constant(node.lineno)], []), node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        truth = getattr(node, _TRUTH, False)
        attr = ("and_" if isinstance(node.op, ast.And) else "or_") + ("truth" if truth else "")
        if truth:  # (only their truth is used: each operand's, as a test reads it)
            node.values = [_tested(value) for value in node.values]
        result = node.values[0]
        for operand in node.values[1:]:  # a and b and c == (a and b) and c, each evaluated lazily
            result = ast.Call(_runtime(attr), [result, _lambda(operand), ast.Constant(getattr(node, "lineno", None))],
                              [])  # (a BoolOp of cofactor's own, over break flags, has no line)
        return ast.copy_location(result, node)

    def visit_Compare(self, node):
        """``a < b <= c``: Python's chain (each operand evaluated once, the next only while the
        comparisons so far hold), through and_ where they are traced."""
        self.generic_visit(node)
        if len(node.ops) == 1 and not isinstance(node.ops[0], (ast.Is, ast.IsNot)):  # (is: see compare_chain)
            return node
        links = ast.List([ast.Tuple([ast.Constant(type(op).__name__), _lambda(operand)], ast.Load())
                          for op, operand in zip(node.ops, node.comparators)], ast.Load())
        return ast.copy_location(ast.Call(_runtime("compare_chain"), [node.left, links, ast.Constant(node.lineno),
                                                                      ast.Name(OUTER, ast.Load())], []), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(ast.Call(_runtime("not_"), [_tested(node.operand)], []), node)
        return node

    def visit_comprehension(self, node):
        """A comprehension runs as Python at trace time: it can neither filter on traced values nor
        iterate a traced range."""
        self.generic_visit(node)
        line = node.iter.lineno
        node.ifs = [_refuse_traced(test, f"the if clause of the comprehension at line {line} depends on a traced "
                                         "value: comprehensions and generator expressions run as Python at trace "
                                         "time, so they cannot test run-time values (use a boolean mask, "
                                         "x[x > 0], or np.where instead)") for test in node.ifs]
        if _is_range(node.iter):
            node.iter = _refuse_traced(_traced_range(node.iter), (
                f"the comprehension at line {line} iterates over a range with a traced bound: its length must "
                "be known at trace time (use a for loop, which cofactor compiles, or array code)"))
        return node

    # Each visit reads the statement as written (names, early exits) before rewriting the
    # statements inside it, whose assignments then move into generated functions.
    def visit_If(self, node):
        _only_truth(node.test)
        node.test = _tested(node.test)
        names = self._names([node.body, node.orelse])
        escape = _escape(node.body + node.orelse)
        exited_else = getattr(node, _EXITED_ELSE, False)
        self.generic_visit(node)
        if names is None or escape:
            return self._unconverted(node, "if statement", node.body + node.orelse, escape, names)
        p = self._prefix("if")
        getter, setter = _state_functions(p, names)
        then = _function(f"{p}_then", [], node.body, names)
        orelse = _function(f"{p}_else", [], node.orelse, names)
        call = self._call("if_", [node.test, _name(then.name), _name(orelse.name), _name(getter.name),
                                  _name(setter.name), _constants(names),
                                  ast.Constant(node.lineno), ast.Constant(exited_else)], node)
        # (cf.print's order made before the if, where its arms may print: each arm carries it out)
        before = [self._call("before_prints", [], node)] if _may_print(node.body + node.orelse) else []
        return before + [ast.copy_location(s, node) for s in (then, orelse, getter, setter)] + [call]

    def _exit_flags(self, node):
        """Rewrite the loop's break/continue into flags; returns (break flag, statements that must run
        before the loop: the flag's start, and cf.print's order if the loop may print)."""
        before = [self._call("before_prints", [], node)] if _may_print(node.body) else []
        if not _count(node.body, _LOOP_EXITS, _loop_level) or \
                not _flaggable(node.body, _LOOP_EXITS, _loop_level, _blocks):
            return None, before
        self.count += 1
        brk, cont = f"__cf_break{self.count}", f"__cf_continue{self.count}"
        body = [_assign(cont, ast.Constant(False), node)] + _rewrite_exits(node.body, brk, cont)
        if isinstance(node, ast.While):
            node.test = ast.BoolOp(ast.And(), [ast.UnaryOp(ast.Not(), _name(brk)), node.test])
        node.body = [ast.fix_missing_locations(ast.copy_location(st, node)) for st in body]
        return brk, before + [_assign(brk, ast.Constant(False), node)]

    def _else_defaults(self, node):
        """``for ...: (... v = ...; break) else: v = default``, Python's search loop, leaves ``v`` a value
        on both paths, but a traced loop's ``v`` is a value only where the loop assigned it.  Where
        every break assigns ``v`` first, the loop body never reads it and ``default`` is the same
        before the loop (a constant, or a name the loop does not assign), ``v`` starts as ``default``
        when it has no value yet: the else's assignment, made before the loop, changes nothing the
        program can see.  Returns those assignments, to run before the loop if its breaks become flags."""
        if not node.orelse:
            return []
        loop = node.body + ([node.test] if isinstance(node, ast.While) else [node.iter])
        read = {n.id for n in _loop_level(loop) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        changed = set(assigned_names(node.body))
        defaults = []
        for st in node.orelse:
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
                continue
            name, value = st.targets[0].id, st.value
            if name in changed and name not in read and _invariant(value, changed) and \
                    _assigned_before_every_break(node.body, name):
                test = ast.Call(_runtime("unbound"), [_lambda(_name(name))], [])
                defaults.append(ast.copy_location(ast.If(test, [_assign(name, value, st)], []), st))
        return defaults

    def _else_block(self, node, brk):
        """The loop's else block, moved after it (converted) and run unless the loop broke; it stays
        on the loop if the loop's breaks could not become flags."""
        if not node.orelse or brk is None and _count(node.body, ast.Break, _loop_level):
            return []
        orelse, node.orelse = node.orelse, []
        return self._visit_all(_guard(ast.UnaryOp(ast.Not(), _name(brk)), orelse, node) if brk else orelse)

    def visit_While(self, node):
        _only_truth(node.test)
        defaults = self._else_defaults(node)
        brk, before = self._exit_flags(node)
        before += defaults if brk else []
        after = self._else_block(node, brk)
        node.test = _tested(node.test)
        tested = [ast.Expr(node.test)]  # (names it binds with :=)
        names = self._names([node.body, tested])
        rebound = rebound_names(node.body + tested)
        escape = _escape(node.body)
        self.generic_visit(node)
        if names is None or escape:
            return before + [self._unconverted(node, "while loop", node.body, escape, names)] + after
        p = self._prefix("while")
        getter, setter = _state_functions(p, names)
        cond = _function(f"{p}_cond", [], [ast.Return(node.test)], assigned_names(tested))
        body = _function(f"{p}_body", [], node.body, names)
        call = self._call("while_", [_name(cond.name), _name(body.name), _name(getter.name), _name(setter.name),
                                     _constants(names), ast.Constant(node.lineno), _constants(rebound)], node)
        return before + [ast.copy_location(s, node) for s in (cond, body, getter, setter)] + [call] + after

    def visit_For(self, node):
        defaults = self._else_defaults(node)
        brk, before = self._exit_flags(node)
        before += defaults if brk else []
        after = self._else_block(node, brk)
        names = self._names([node.body, [ast.Assign([node.target], ast.Constant(None))]])
        rebound = rebound_names(node.body + [ast.Assign([node.target], ast.Constant(None))])
        escape = _escape(node.body)
        if names is None or escape:
            self.generic_visit(node)
            return before + [self._unconverted(node, "for loop", node.body, escape, names, brk)] + after
        p = self._prefix("for")
        sliced = _sliced_by(node.target, node.body)
        appended = _appended_only(node.body)
        filters = _appends_under_a_test(node.body, appended)
        item = f"{p}_item"
        node.body = [ast.copy_location(ast.Assign([node.target], _name(item)), node)] + node.body
        if brk:  # iterations after a break do nothing, nor assign the loop variable
            node.body = _guard(ast.UnaryOp(ast.Not(), _name(brk)), node.body, node, exited_else=True)
        self.generic_visit(node)
        getter, setter = _state_functions(p, names)
        body = _function(f"{p}_body", [item], node.body, names)
        iterable = _traced_range(node.iter) if _is_range(node.iter) else outer_call(
            "iterated", [node.iter], node.iter)
        stop = _lambda(_name(brk)) if brk else ast.Constant(None)
        call = self._call("for_", [iterable, _name(body.name), _name(getter.name), _name(setter.name),
                                   _constants(names), ast.Constant(node.lineno), stop, _constants(rebound),
                                   ast.Constant(sliced), _constants(appended), ast.Constant(filters),
                                   ast.Constant(getattr(node, "comprehension", False))], node)
        return before + [ast.copy_location(s, node) for s in (body, getter, setter)] + [call] + after


def _appended_only(body) -> tuple:
    """The names ``body`` uses only in ``name.append(value)`` statements: lists the loop may collect
    one value per trip into without unrolling (tracing/histories.py), since it never reads them."""
    uses, appends = {}, {}
    for node in (n for statement in body for n in ast.walk(statement)):
        if isinstance(node, ast.Name):
            uses[node.id] = uses.get(node.id, 0) + 1
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
                and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords:
            appends[call.func.value.id] = appends.get(call.func.value.id, 0) + 1
    return tuple(sorted(name for name, count in appends.items() if uses[name] == count))


def _appends_under_a_test(body, names) -> bool:
    """Whether ``body`` appends to one of ``names`` under an if or a while, or has a continue or a break
    of its own, which appends after it are under (a filter: how many values it collects may be known only
    when the program runs)."""
    if names and any(isinstance(node, (ast.Continue, ast.Break)) for node in _walk(body, (ast.For, ast.While, *_SCOPES))):
        return True
    def appends(node):
        call = node.value if isinstance(node, ast.Expr) else None
        return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
            and isinstance(call.func.value, ast.Name) and call.func.value.id in names
    return any(appends(node) for statement in body for test in ast.walk(statement) if isinstance(test, (ast.If, ast.While))
               for part in test.body + test.orelse for node in ast.walk(part))


def _sliced_by(target, body) -> bool:
    """Whether ``body`` slices with a bound that names the loop variable ``target`` (``x[:i]``,
    ``A[i, i + 1:]``), each such slice on a leading axis (the ones before it indexed by integers, so
    its lanes are one block of memory: numpy/extent_ops.py narrows only those): statements.for_ then
    runs a long loop in parts, each slicing fewer lanes.  A loop that also slices a column block by
    its counter (Gram-Schmidt's ``A[:, k + 1:]``) stays one loop, and so does one whose slices' bounds
    are looked up by the counter (a CSR row, ``vals[rows[i]:rows[i + 1]]``: parts reach no fewer lanes)."""
    if not isinstance(target, ast.Name):
        return False

    def counts_with(bound) -> bool:  # the counter itself, not a value looked up by it (rows[i]: from data)
        return isinstance(bound, ast.Name) and bound.id == target.id or \
            not isinstance(bound, ast.Subscript) and any(counts_with(c) for c in ast.iter_child_nodes(bound))

    def names_target(item):
        return isinstance(item, ast.Slice) and any(counts_with(bound) for bound in (item.lower, item.upper)
                                                   if bound is not None)
    found = False
    for node in (n for statement in body for n in ast.walk(statement) if isinstance(n, ast.Subscript)):
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for k, item in enumerate(items):
            if names_target(item):
                if any(not isinstance(before, (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Attribute))
                       or isinstance(before, ast.Constant) and before.value in (None, Ellipsis)
                       for before in items[:k]):
                    return False
                found = True
    return found


def convert_expressions(node):
    """Rewrite the conditional expressions and and/or/not of an expression (a lambda's body)."""
    return ControlFlow([]).visit(node)


def convert_control_flow(function_node):
    """Rewrite the control flow of a FunctionDef in place (its nested functions included)."""
    hoist_filters(function_node, RUNTIME)
    rewrite_checks(function_node, RUNTIME)
    _rewrite_returns(function_node)
    # Variables declared global cannot be carried (a nonlocal one can: the converted function
    # shares the closure cells of the original, and its helpers declare it nonlocal in turn).
    global_names = [n for s in _walk_scope(function_node.body) if isinstance(s, ast.Global) for n in s.names]
    nonlocal_names = {n for s in _walk_scope(function_node.body) if isinstance(s, ast.Nonlocal) for n in s.names}
    transformer = ControlFlow(global_names)
    function_node.body = transformer._visit_all(function_node.body)
    local = [n for n in dict.fromkeys(transformer.bound) if n not in nonlocal_names]
    if local:
        # Bind every rewritten name in this function (dead code still makes them local), so the
        # generated functions' ``nonlocal`` statements find them (a nonlocal name is bound outside).
        assign = ast.Assign([_name(n, ast.Store) for n in local], ast.Constant(None))
        binding = ast.If(ast.Constant(False), [assign], [])
        function_node.body.insert(0, binding)
    return function_node
