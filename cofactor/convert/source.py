"""Source conversion: re-compile a user's function so that every call it makes goes
through ``calls.call`` (which can substitute traced versions of NumPy's array
constructors and convert the user functions it calls in turn), and its if / while /
for statements through ``statements`` (which trace them when their condition is traced).

Library code (NumPy, the standard library, installed packages) is never converted,
and a function whose source cannot be read runs as it is.
"""
from __future__ import annotations

import ast
import inspect
import os
import re
import sysconfig
import textwrap
import threading
import types
import weakref

from ..errors import converted_code, unconverted_code
from .control import RUNTIME, convert_control_flow, convert_expressions
from .outer import OUTER, Outer, route_outer_reads

_FACTORY = "__cofactor_factory__"
_DEFINED = "__cofactor_defined__"  # the name the factory defines a converted function under
# Calls that must see the caller's own frame (vars() with no argument).
_FRAME_SENSITIVE = {"super", "locals", "globals", "vars", "eval", "exec"}
_LIBRARY_DIRS = tuple({os.path.realpath(p) + os.sep for p in (
    sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))})


class _RouteCalls(ast.NodeTransformer):
    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Name) and func.id == "print":  # (its strings formatted when the program runs)
            node.args = [_printed(a) for a in node.args]
        self.generic_visit(node)
        if isinstance(func, ast.Name) and func.id in _FRAME_SENSITIVE and not (func.id == "vars" and node.args) or \
                isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id in (RUNTIME, OUTER):
            return node
        return ast.copy_location(ast.Call(func=ast.Attribute(ast.Name(RUNTIME, ast.Load()), "call", ast.Load()),
                                          args=[node.func, *node.args], keywords=node.keywords), node)

    def visit_JoinedStr(self, node):
        for part in node.values:  # (the values; a format spec is an f-string of its own, kept as written)
            if isinstance(part, ast.FormattedValue):
                if getattr(node, "printed", False) and _is_conditional(part.value):
                    part.value = _printed(part.value)
                part.value = self.visit(part.value)
        return _formatted(node, "formatted" if getattr(node, "printed", False) else "fstring")


def _printed(arg):
    """An argument of print: a string it formats from values (an f-string, ``"%.4f" % loss``,
    ``"{}".format(loss)``) marked or rewritten to be formatted when the program runs (debug.py)."""
    def runtime(name, args, keywords=()):
        call = ast.Call(ast.Attribute(ast.Name(RUNTIME, ast.Load()), name, ast.Load()), args, list(keywords))
        return ast.copy_location(call, arg)
    if isinstance(arg, ast.JoinedStr):
        arg.printed = True
    elif isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mod) and isinstance(arg.left, ast.Constant) \
            and isinstance(arg.left.value, str):
        return runtime("formatted_percent", [arg.left, arg.right])
    elif isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "format" and \
            isinstance(arg.func.value, ast.Constant) and isinstance(arg.func.value.value, str):
        return runtime("formatted_call", [arg.func.value, *arg.args], arg.keywords)
    elif _is_conditional(arg):  # ("up" if x.sum() > 0 else "down": chosen when it prints)
        arg.func.attr = "printed_choice"
        for arm in arg.args[1:3]:
            arm.body = _printed(arm.body)
    elif isinstance(arg, (ast.BinOp, ast.Call)) and (joined := _concatenated(arg)) is not None:
        template, values = joined  # ("loss: " + str(loss), str(x[0]), repr(x))
        return runtime("formatted", [ast.Constant(template), ast.List(values, ast.Load())])
    return arg


def _is_conditional(node) -> bool:
    """A conditional expression, as control.py rewrote it (``__cofactor__.ifexp(test, lambda: a, lambda: b,
    line)``)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "ifexp" and \
        isinstance(node.func.value, ast.Name) and node.func.value.id == RUNTIME


def _concatenated(node):
    """(a str.format template, its values) of a string made of literals, ``str(v)``, ``repr(v)`` and
    f-strings joined by ``+``; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}"), []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "repr") and \
            len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
        return "{!" + node.func.id[0] + "}", [node.args[0]]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        parts = [_concatenated(node.left), _concatenated(node.right)]
        if None in parts:
            return None
        return parts[0][0] + parts[1][0], parts[0][1] + parts[1][1]
    return None


def _formatted(text: ast.JoinedStr, how: str):
    """``f"loss {loss:.4f}"`` as ``__cofactor__.<how>("loss {:.4f}", [loss])``: formatted now, or, where a value
    is traced, when the compiled function runs (``formatted``: an argument of print, debug.py) or not at
    all (``fstring``: its text would be the trace's, a clear error).  One whose format spec has values of
    its own (``{x:{width}}``) is left as written."""
    template, values = [], []
    for part in text.values:
        if isinstance(part, ast.Constant):
            template.append(part.value.replace("{", "{{").replace("}", "}}"))
            continue
        spec = part.format_spec
        if spec is not None and not all(isinstance(p, ast.Constant) for p in spec.values):
            return text
        conversion = "" if part.conversion == -1 else "!" + chr(part.conversion)
        template.append("{" + conversion + (":" + "".join(p.value for p in spec.values) if spec else "") + "}")
        values.append(part.value)
    call = ast.Call(ast.Attribute(ast.Name(RUNTIME, ast.Load()), how, ast.Load()),
                    [ast.Constant("".join(template)), ast.List(values, ast.Load())], [])
    return ast.copy_location(call, text)


def is_user_function(fn) -> bool:
    """A plain Python function written by the user (not NumPy's, not the standard library's), or one
    functools.total_ordering gives the user's class (``__gt__`` from its ``__lt__``: its ``not`` of the
    user's traced comparison is converted code's)."""
    if not isinstance(fn, types.FunctionType):
        return False
    if fn.__module__ == "functools" and _TOTAL_ORDERING.fullmatch(fn.__code__.co_name):
        return True
    filename = fn.__code__.co_filename
    if filename.startswith("<"):
        if not filename.startswith("<frozen"):  # exec, a REPL: source that cannot be read
            unconverted_code.add(fn.__code__)
        return False
    return not os.path.realpath(filename).startswith(_LIBRARY_DIRS)


def _function_node(fn):
    """The FunctionDef (or Lambda) node of ``fn``'s source, and the line the source starts on."""
    try:  # (by its code: inspect would follow a functools.wraps wrapper's __wrapped__ to the function it wraps)
        lines, first = inspect.getsourcelines(fn.__code__)
    except (OSError, TypeError):
        return None, 0
    source = textwrap.dedent("".join(lines))
    name = fn.__code__.co_name
    try:
        tree = ast.parse(source)
    except SyntaxError:  # e.g. a lambda whose source lines are part of a larger expression
        if name != "<lambda>":
            return None, 0
        tree = ast.Module(body=[ast.Expr(node) for node in _lambdas_in(source)], type_ignores=[])
    candidates = [n for n in ast.walk(tree)
                  if (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name)
                  or (name == "<lambda>" and isinstance(n, ast.Lambda))]
    if name == "<lambda>":
        args = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
        candidates = [n for n in candidates if [a.arg for a in n.args.args] == args]
    if len(candidates) != 1 or not _source_of(fn.__code__, candidates[0]):
        return None, 0  # (none, several, or source edited since the function was defined: it runs as written)
    return candidates[0], first


_MANGLED = re.compile(r"^_\w*?(__\w+)$")
_TOTAL_ORDERING = re.compile(r"_(lt|le|gt|ge)_from_(lt|le|gt|ge)")


def _source_of(code, node) -> bool:
    """Whether ``node`` may be the source of ``code``: every name the code uses is in it (a private
    name as written, before Python mangles it).  A function defined in converted code was compiled
    from its converted text, whose source was checked; one whose module pytest rewrote (its asserts)
    has names of pytest's own, marked by an ``@``, and is taken as it is."""
    names = _names_in(code)
    if code in converted_code or any("@" in name for name in names):
        return True
    identifiers = _identifiers(node)
    return all(name in identifiers or _MANGLED.sub(r"\1", name) in identifiers for name in names)


def _mangle_private_names(node, code):
    """Write the private names of a method (``self.__scale``) as Python compiled them in its class
    (``self._Model__scale``): the converted copy is compiled outside the class, where Python would
    not mangle them."""
    mangled = {_MANGLED.sub(r"\1", name): name for name in _names_in(code) if _MANGLED.match(name)}
    mangled = {written: name for written, name in mangled.items() if written != name}
    if not mangled:
        return
    for n in ast.walk(node):
        for field in ("id", "attr", "arg"):
            if getattr(n, field, None) in mangled and isinstance(n, (ast.Name, ast.Attribute, ast.arg)):
                setattr(n, field, mangled[getattr(n, field)])


def _names_in(code) -> set:
    """The names a code object and the ones nested in it use, but the compiler's own (``.0``,
    ``__class__`` for super(), a class body's ``__qualname__``)."""
    names = {n for n in (*code.co_names, *code.co_varnames, *code.co_freevars, *code.co_cellvars)
             if not n.startswith((".", "<")) and not (n.startswith("__") and n.endswith("__"))}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_in(const)
    return names


def _identifiers(node) -> set:
    """Every identifier in a syntax tree: the compiled code of the same source uses no other name (its
    compiler drops dead code and folds constants, never adds a name), so a name the function's code
    uses and its source lacks means the file changed after the function was defined."""
    found = set()
    for n in ast.walk(node):
        for _, value in ast.iter_fields(n):
            if isinstance(value, str):
                found.add(value)
            elif isinstance(value, list):
                found.update(v for v in value if isinstance(v, str))
    return found


def _lambdas_in(source: str) -> list:
    """The lambdas in lines that do not parse on their own (a lambda in a dict entry, a call's
    argument continued on the next line): from each ``lambda``, the longest text that parses."""
    found = {}
    for start in (m.start() for m in re.finditer(r"\blambda\b", source)):
        for end in range(len(source), start, -1):
            try:
                node = ast.parse("(" + source[start:end] + ")", mode="eval").body
            except SyntaxError:
                continue
            if isinstance(node, ast.Lambda):  # (not a tuple of it and what follows)
                ast.increment_lineno(node, source.count("\n", 0, start))
                found[start] = node
                break
    return list(found.values())


def _free_names(code) -> list:
    """The free variables the factory binds; a function nested in converted code already
    refers to the runtime and its reader of outer names, which the factory binds anew."""
    return [v for v in code.co_freevars if v not in (RUNTIME, OUTER)]


def _compile_factory(fn):
    """The converted function, compiled as a factory that takes ``call`` and the free variables."""
    code = fn.__code__
    node, first = _function_node(fn)
    if node is None:
        return None
    _mangle_private_names(node, code)
    ast.increment_lineno(node, first - 1)  # tracebacks and error messages show the user's lines
    if isinstance(node, ast.Lambda):
        node.body = convert_expressions(node.body)  # a lambda has conditional expressions and and/or/not only
    else:
        convert_control_flow(node)
    node = _RouteCalls().visit(node)
    route_outer_reads(node)
    # Default values were evaluated where the function was defined; ``convert`` copies them over,
    # so the factory must not evaluate them again (the names they use may not exist there).
    node.args.defaults = [ast.Constant(None) for _ in node.args.defaults]
    node.args.kw_defaults = [None if d is None else ast.Constant(None) for d in node.args.kw_defaults]
    name = getattr(node, "name", None)
    if isinstance(node, ast.Lambda):
        body = [ast.Return(node)]
    else:
        node.decorator_list = []
        if name not in code.co_freevars:  # its name in its body is the global, as in Python, not a local of the
            node.name = _DEFINED          # factory's (a recursive module-level function calls itself through it)
        body = [node, ast.Return(ast.Name(node.name, ast.Load()))]
    params = [RUNTIME, OUTER, *_free_names(code)]
    factory = ast.FunctionDef(
        name=_FACTORY, args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], kwonlyargs=[],
                                          kw_defaults=[], defaults=[]),
        body=body, decorator_list=[], returns=None)
    module = ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
    namespace = {}
    exec(compile(module, code.co_filename, "exec"), fn.__globals__, namespace)
    factory = namespace[_FACTORY]
    factory.__code__ = factory.__code__.replace(co_consts=tuple(  # the user's name again, for tracebacks
        c.replace(co_name=name, co_qualname=c.co_qualname.replace(_DEFINED, name))
        if isinstance(c, types.CodeType) and c.co_name == _DEFINED else c for c in factory.__code__.co_consts))
    converted_code.update(_nested_codes(factory.__code__))
    return factory


def _nested_codes(code):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _nested_codes(const)


# Conversions live in the module they were made from (as ``warnings`` keeps ``__warningregistry__``
# there), keyed weakly by code object: equal code in two modules (or in a module reloaded with the
# same text) is converted once per module, so each conversion calls its own module's helpers; and
# a conversion is dropped with its function or its module (a notebook redefining a cell's
# function, a fuzzer executing thousands of programs) instead of living as long as the process.
_CONVERSIONS = "__cofactor_conversions__"
_lock = threading.Lock()


def _factory(fn):
    """The compiled factory of ``fn`` (None: not convertible), cached per code and module."""
    with _lock:
        conversions = fn.__globals__.get(_CONVERSIONS)
        if not isinstance(conversions, weakref.WeakKeyDictionary):
            conversions = fn.__globals__[_CONVERSIONS] = weakref.WeakKeyDictionary()
        if fn.__code__ not in conversions:
            conversions[fn.__code__] = _compile_factory(fn)
        return conversions[fn.__code__]


def convert(fn, runtime):
    """``fn`` with its calls and control flow routed through ``runtime``; ``fn`` itself if it
    cannot be converted.  The converted function shares ``fn``'s closure cells, so a ``nonlocal``
    it assigns is the variable of the function around it, as in Python."""
    if not is_user_function(fn):
        return fn
    factory = _factory(fn)
    if factory is None:
        unconverted_code.add(fn.__code__)
        return fn
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    outer = Outer(fn, nested=fn.__code__ in converted_code, call=runtime.call)
    made = factory(runtime, outer, *[None for _ in _free_names(fn.__code__)])  # its cells are replaced below
    own = dict(zip(made.__code__.co_freevars, made.__closure__ or ()))
    closure = tuple(own[name] if name in (RUNTIME, OUTER) else cells[name] for name in made.__code__.co_freevars)
    new = types.FunctionType(made.__code__, made.__globals__, made.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    return new


