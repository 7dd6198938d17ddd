"""Host state a traced function reads: inputs taken at every call from somewhere other than
the caller's arrays (a random generator's next key), and argument types that stand for
such state (a ``numpy.random.Generator`` passed in).

The NumPy layer registers what it needs; tracing only plumbs the extra arguments.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

from ..ir.core import Value
from ..ir.types import TensorType

# Leaf type -> converter(leaf, leaf_index) giving the traced stand-in passed to the user's function.
STATEFUL_TYPES: dict = {}


@dataclass
class HostInput:
    """An extra argument whose value ``fetch(leaves)`` produces at every call (leaves: the
    call's flattened arguments)."""

    type: TensorType
    fetch: Callable


_current = threading.local()


def begin(module, function):
    _current.module, _current.function, _current.inputs, _current.objects = module, function, [], {}
    _current.names = set()


def end() -> list:
    inputs = _current.inputs
    _current.module = _current.function = _current.inputs = _current.objects = _current.names = None
    return inputs


def current_module():
    """The module being traced (where private functions go)."""
    if getattr(_current, "module", None) is None:
        raise RuntimeError("no module is being traced")
    return _current.module


def unique_name(prefix: str) -> str:
    """A function name not yet used in the module being traced."""
    name, k = prefix, 0
    while name in _current.names:
        k += 1
        name = f"{prefix}_{k}"
    _current.names.add(name)
    return name


def host_input(type: TensorType, fetch: Callable) -> Value:
    """A new argument of the function being traced, filled by ``fetch(leaves)`` at each call."""
    if getattr(_current, "function", None) is None:
        raise RuntimeError("host inputs exist only while a function is traced")
    arg = _current.function.body.add_argument(type)
    _current.inputs.append(HostInput(type, fetch))
    return arg


def per_trace(key, make: Callable):
    """One object per trace under ``key`` (e.g. the traced stand-in of NumPy's global generator)."""
    if key not in _current.objects:
        _current.objects[key] = make()
    return _current.objects[key]


def trace_objects() -> list:
    """The objects ``per_trace`` made for the function being traced (none when nothing is traced)."""
    return list(_current.objects.values()) if getattr(_current, "objects", None) else []


def entry_block():
    """The body of the function being traced: a value made there is visible in all of it."""
    return _current.function.body


def is_tracing() -> bool:
    """Whether a function is being traced (so a transform emits ops instead of compiling)."""
    return getattr(_current, "module", None) is not None
