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


def begin(function):
    _current.function, _current.inputs, _current.objects = function, [], {}


def end() -> list:
    inputs = _current.inputs
    _current.function = _current.inputs = _current.objects = None
    return inputs


def host_input(type: TensorType, fetch: Callable) -> Value:
    """A new argument of the function being traced, filled by ``fetch(leaves)`` at each call."""
    if getattr(_current, "function", None) is None:
        raise RuntimeError("host inputs exist only while a function is traced")
    block = _current.function.body
    arg = Value(type, block, len(block.arguments))
    block.arguments.append(arg)
    _current.inputs.append(HostInput(type, fetch))
    return arg


def per_trace(key, make: Callable):
    """One object per trace under ``key`` (e.g. the traced stand-in of NumPy's global generator)."""
    if key not in _current.objects:
        _current.objects[key] = make()
    return _current.objects[key]
