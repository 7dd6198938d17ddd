"""``cf.print``: print run-time values from inside compiled code.

Inside a traced function, ``cf.print(*values)`` becomes a ``stablehlo.custom_call`` with
``has_side_effect = true`` (so XLA neither drops it nor merges two of them) whose operands
are the traced values.  XLA may still run independent side effects in any order, so each
print also takes the trace's print order (an int32 scalar) and gives the next one: loops and
branches carry it as they carry any array they write.

jax's own host callbacks (``xla_ffi_python_cpu_callback``) find their Python function in the
executable's host-callback list, which only jax's compile path fills.  cofactor registers one
handler of its own with XLA:CPU instead, a ctypes function with XLA's untyped custom-call
signature (api_version 3), and names the call site in the ``backend_config`` string.  The
handler looks the site up in a weak registry: the site's printer lives as long as the traced
module, which the compiled function holds.

Outside a traced function, ``cf.print`` is ``print``.
"""
from __future__ import annotations

import builtins
import contextlib
import ctypes
import itertools
import re
import sys
import weakref

import numpy as np

from .errors import UnsupportedError, located
from .ir import ops
from .ir.core import Block, insertion_point
from .pytree import flatten, unflatten
from .runtime.devices import default_device
from .tracing import checks, context, control
from .tracing.array import TracedArray, defers_tracing

_TARGET = "cofactor_print"
# XLA:CPU's untyped custom call: (output, operand pointers, opaque string, its length, status).
_HANDLER_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                                 ctypes.c_size_t, ctypes.c_void_p)
_printers: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # call-site key -> _Printer
_keys = itertools.count()
_handler = None  # registered once, kept for the life of the process
_RUN_TIME = object()  # where a printer's values have a run-time array


class _Printer:
    """One ``cf.print`` call site: its values' structure, static parts and operand types."""

    def __init__(self, treedef, leaves, sep, end, file, flush, printoptions):
        self.treedef = treedef
        self.printoptions = printoptions  # (None: NumPy's when it prints)
        self.parts = [_RUN_TIME if isinstance(x, TracedArray) else x for x in leaves]
        self.types = [(x.shape, x.dtype, x.weak) for x in leaves if isinstance(x, TracedArray)]
        # sys.stdout and sys.stderr as they are when it prints (a redirect_stdout around a later call)
        self.stream = {id(sys.stdout): "stdout", id(sys.stderr): "stderr"}.get(id(file))
        self.options = {"sep": sep, "end": end, "file": None if self.stream else file, "flush": flush}

    def __call__(self, pointers):
        # (a traced Python number is one again: 3, not np.int64(3), also inside a list it prints)
        arrays = iter([weak(_array(p, shape, dtype)) if weak else _array(p, shape, dtype)
                       for p, (shape, dtype, weak) in zip(pointers, self.types)])
        values = unflatten(self.treedef, [next(arrays) if x is _RUN_TIME else x for x in self.parts])
        options = dict(self.options, file=getattr(sys, self.stream)) if self.stream else self.options
        with np.printoptions(**self.printoptions) if self.printoptions else contextlib.nullcontext():
            builtins.print(*values, **options)


class Formatted:
    """A string ``print`` prints in compiled code, made from traced values (an f-string, ``"%.4f" % loss``,
    ``"{}".format(loss)``): formatted by Python when the program runs, from their run-time values (a pytree
    node: its values are the printer's operands).  ``how`` is ("format", the keyword names of the last
    values) or ("percent", whether the values were a tuple)."""

    def __init__(self, template: str, values: list, kinds: tuple, how: tuple = ("format", ())):
        self.template, self.values, self.kinds, self.how = template, values, kinds, how  # kinds: Python's types

    def tree_flatten(self):
        return self.values, (self.template, self.kinds, self.how)

    @classmethod
    def tree_unflatten(cls, static, values):
        return cls(static[0], list(values), *static[1:])

    def __str__(self):
        template, style, detail = self.template, *self.how
        if context.is_tracing() and context.current().printing_now:
            values = [_TraceText(v.trace_text()) if isinstance(v, TracedArray) else v for v in self.values]
            template = _CONVERSION.sub(lambda m: f"%{m.group(1) or ''}s", template) if style == "percent" else template
        else:  # (when it runs: a traced Python number is one again, 3 and not np.int64(3) for {k!r})
            values = [kind(v) if kind else v for v, kind in zip(self.values, self.kinds)]
        if style == "percent":
            return template % (tuple(values) if detail else values[0])
        positional = len(values) - len(detail)
        return template.format(*values[:positional], **dict(zip(detail, values[positional:])))


# A %-conversion (its mapping key kept): printed at trace time as %s, of the trace's text.
_CONVERSION = re.compile(r"%(\([^)]*\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrsa]")


class Chosen:
    """A conditional expression among print's arguments that chooses between strings on a traced test
    (``print("up" if x.sum() > 0 else "down")``): the one chosen when the program runs (a pytree node: the
    test is one of the printer's operands, an arm's values too)."""

    def __init__(self, test, then, orelse):
        self.test, self.then, self.orelse = test, then, orelse

    def tree_flatten(self):
        return [self.test, self.then, self.orelse], None

    @classmethod
    def tree_unflatten(cls, _, children):
        test, then, orelse = children
        if isinstance(test, TracedArray):
            return cls(test, then, orelse)
        return str(then if test else orelse)  # (when it prints)

    def __str__(self):  # (at trace time: the trace's text of the test)
        return f"{self.then} or {self.orelse}, as {_TraceText(self.test.trace_text())} chooses"


class _TraceText(str):
    """A traced value's trace text, printed at trace time in place of its value: any format spec is ignored."""

    def __format__(self, spec):
        return str(self)


class _Cut:
    """An array with run-time extents that print shows (numpy/extent.py): its data with the valid lanes
    first, and the lengths of its run-time axes; when it prints, NumPy's array, cut to those lengths
    (a pytree node: its data and lengths are the printer's operands)."""

    def __init__(self, data, lengths):
        self.data, self.lengths = data, lengths  # lengths: [(axis, length)]

    @classmethod
    def of(cls, bounded):
        data, lengths = bounded.output()
        return cls(TracedArray(data), [(axis, TracedArray(length, scalar=True)) for axis, length in lengths])

    def tree_flatten(self):
        return [self.data, *[length for _, length in self.lengths]], tuple(axis for axis, _ in self.lengths)

    @classmethod
    def tree_unflatten(cls, axes, children):
        data, *lengths = children
        if not isinstance(data, np.ndarray):  # (traced: the Values, rewrapped)
            return cls(data, list(zip(axes, lengths)))
        index = [slice(None)] * data.ndim
        for axis, length in zip(axes, lengths):
            index[axis] = slice(0, int(length))
        return data[tuple(index)]


def formatted(template: str, values: list, how: tuple = ("format", ())):
    """A string argument of ``print`` in converted code, formatted from ``values``: the string now, or a
    Formatted where it shows traced values (``f"loss {loss:.4f}"`` in a training loop: Python's text of the
    value when it runs)."""
    if not (context.is_tracing() and any(isinstance(v, TracedArray) for v in flatten(values)[0])):
        return str(Formatted(template, values, (None,) * len(values), how))
    kinds = tuple(getattr(v, "weak", None) if isinstance(v, TracedArray) else None for v in values)
    try:  # (Python's error for a format its values cannot take, now: {x:d} of a float)
        Formatted(template, [_example(v) for v in values], kinds, how).__str__()
    except (ValueError, TypeError) as e:
        raise located(type(e)(str(e))) from None
    return Formatted(template, values, kinds, how)


def formatted_percent(template: str, values):
    """``template % values`` as an argument of print (see formatted)."""
    if type(values) is dict:  # (by name: formatted now, as Python does)
        return template % values
    return formatted(template, list(values) if type(values) is tuple else [values], ("percent", type(values) is tuple))


def formatted_call(template: str, *args, **kwargs):
    """``template.format(*args, **kwargs)`` as an argument of print (see formatted)."""
    return formatted(template, [*args, *kwargs.values()], ("format", tuple(kwargs)))


def fstring(template: str, values: list) -> str:
    """An f-string in converted code (not an argument of print): Python's text, or, with a traced value
    in it, a clear error: the text would be the trace's (a log of them, a message returned), silently.
    A raise's message checked at run time shows the values when it fires (tracing/checks.py)."""
    if context.is_tracing() and context.current().text_for_print:  # (print(obj): obj's __str__ makes the text)
        return formatted(template, values)
    if not checks.building_a_message():
        traced = next((v for v in flatten(values)[0] if isinstance(v, TracedArray)), None)
        if traced is not None:
            traced.no_text("an f-string")
    return template.format(*values)


def _example(value):
    """A value of ``value``'s kind to try a format on (its own, where it is not traced)."""
    if not isinstance(value, TracedArray):
        return value
    example = np.zeros(value.shape, value.dtype)
    return example[()] if not value.shape else example


def _array(pointer, shape, dtype):
    """A copy of an operand buffer (row-major), a NumPy scalar if it has no dimensions."""
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    data = ctypes.string_at(pointer, size) if size else b""
    array = np.frombuffer(data, dtype).reshape(shape).copy()
    return array[()] if array.ndim == 0 else array


def _handle(output, operands, opaque, length, status):
    printer = _printers.get(int(ctypes.string_at(opaque, length)))
    if printer is not None:  # operand 0 is the print order
        printer([operands[k + 1] for k in range(len(printer.types))])


def _register():
    global _handler
    if _handler is not None:
        return
    from jaxlib import xla_client

    handler = _HANDLER_TYPE(_handle)
    capsule_new = ctypes.pythonapi.PyCapsule_New
    capsule_new.restype, capsule_new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    capsule = capsule_new(ctypes.cast(handler, ctypes.c_void_p), b"xla._CUSTOM_CALL_TARGET", None)
    xla_client.register_custom_call_target(_TARGET, capsule, platform="cpu", api_version=0)
    _handler = handler


def _order() -> TracedArray:
    """The print order of the function being traced, made in its body so every scope sees it."""
    def make():
        with insertion_point(context.current().entry_block()):
            return TracedArray(ops.constant(np.zeros((), np.int32)))
    return context.current().per_trace("cf.print order", make)


def before_prints():
    """Called before a loop that may print: with the print order made before it, the loop carries
    it from the start instead of finding it in its body (which would trace the body again)."""
    if context.is_tracing():
        _order()


def prints_when_run() -> bool:
    """Whether a print in code being traced prints when the program runs: on CPU, where cf.print can,
    and not in code differentiated twice or in forward mode (Enzyme has no derivative of cf.print's
    call in forward mode, which cf.hessian runs over reverse mode)."""
    return context.is_tracing() and context.current().modes in ([], [True]) and default_device().platform == "cpu"


def print_at_trace_time(*values, **options):
    """``print`` where it cannot print when the program runs: now, once, traced values as their trace text
    (as JAX's print of a tracer), a format spec of theirs ignored."""
    trace = context.current()
    trace.printing_now = True
    try:
        builtins.print(*values, **options)
    finally:
        trace.printing_now = False


def print(*values, sep=" ", end="\n", file=None, flush=False):
    """Print ``values`` as ``print`` does; inside a compiled function, when it runs (once per
    iteration inside a loop, only if taken inside a branch), with the arrays' run-time values."""
    if not context.is_tracing():
        builtins.print(*values, sep=sep, end=end, file=file, flush=flush)
        return
    platform = default_device().platform
    if platform != "cpu":
        raise located(UnsupportedError(f"cf.print inside compiled code on {platform.upper()} is not supported yet "
                                       "(its host callback is an XLA:CPU custom call)"))
    _register()
    leaves, treedef = flatten(values, is_leaf=defers_tracing)
    leaves, treedef = flatten(unflatten(treedef, [_Cut.of(x) if defers_tracing(x) else x for x in leaves]))
    now = np.get_printoptions()  # (set by the code around the print, as np.printoptions(precision=2): those)
    printer = _Printer(treedef, leaves, sep, end, file, flush, now if now != context.current().printoptions else None)
    key = next(_keys)
    _printers[key] = printer
    context.current().module.keepalive.append(printer)
    order = _order()
    operands = [order.value] + [x.value for x in leaves if isinstance(x, TracedArray)]
    if context.is_differentiating():  # (what it prints has no derivative: Enzyme finds no adjoint to compute)
        operands = [ops.ignore_derivatives(v) for v in operands]

    def emit():
        return ops.custom_call(_TARGET, operands, [order.value.type], opaque=str(key), has_side_effect=True,
                               operand_layouts=[range(v.type.rank - 1, -1, -1) for v in operands],
                               result_layouts=[()])

    live = control.running()
    if live is None:
        order.value, = emit()
        return
    # In a bounded loop, only the iterations before its condition's end print.
    then, skip = Block(), Block()
    with insertion_point(then):
        ops.emit_return(emit())
    with insertion_point(skip):
        ops.emit_return([order.value])
    order.value, = ops.if_(live, then, skip, [order.value.type])
