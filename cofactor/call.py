"""The call boundary: what a compiled function's arguments are, and what a call does with them
before and after the run (compiler.py strings the pipeline together; this module owns its edge).

- Signatures: the cache key of a call (arrays by shape, dtype and, on several devices, sharding;
  Python floats by type; other leaves by value), and which Python numbers are traced.
- Before a run: arguments the function updates must be updatable (and not views of each other).
- After it: updated arguments get their new values (a ConcreteArray takes the donated buffer, a
  NumPy array a copy), and results with run-time lengths are cut to them.
"""
from __future__ import annotations

import functools
from collections import deque

import numpy as np

from .errors import TracingError, UnsupportedError, located, signature_of
from .pytree import containers, flatten, unflatten
from .runtime.array import ConcreteArray
from .tracing.context import STATEFUL_TYPES
from .tracing.implicit import StaleCall
from .tracing.trace import PythonNumber, is_array
from .tracing.views import layout_of


def _aval(array) -> tuple:
    """(shape, dtype string) of an array argument, and its strides where it is not C-contiguous (its
    views, a reshape of it a view or a copy, are NumPy's for those strides: tracing/views.py)."""
    layout = layout_of(array)
    aval = (tuple(np.shape(array)), np.dtype(array.dtype).str)
    return aval if layout is None else aval + ("strides", layout)


def _leaf_key(leaf):
    if type(leaf) is PythonNumber:
        return ("python", type(leaf.value))
    if type(leaf) is ConcreteArray:
        return leaf.aval
    if is_array(leaf):
        return _aval(leaf)
    if type(leaf) in STATEFUL_TYPES:  # traced as state (a random generator): any one will do
        return ("state", type(leaf))
    try:
        hash(leaf)
    except TypeError:
        if hasattr(leaf, "__dict__") and not isinstance(leaf, type) or isinstance(leaf, (dict, list, deque)):
            # An object (a dataclass of settings and arrays, a defaultdict): this very object, whose slots the
            # compiled function reads at every call (tracing/implicit.py); the compiled function
            # keeps it alive, so no other object takes its id while the key is in use.
            return ("object", type(leaf), id(leaf))
        raise TracingError(f"an argument of type {type(leaf).__name__} is neither an array nor hashable, "
                           "so it cannot be a compile-time constant") from None
    return (type(leaf), leaf)


def static_arguments(fn, static_argnums=(), static_argnames=()) -> tuple[set, set]:
    """(positions, names) of the arguments whose Python numbers stay compile-time constants."""
    positions = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
    names = {static_argnames} if isinstance(static_argnames, str) else set(static_argnames)
    try:
        parameters = list(signature_of(fn).parameters)
    except (TypeError, ValueError):
        return positions, names
    positions |= {parameters.index(n) for n in names if n in parameters}
    names |= {parameters[k] for k in positions if k < len(parameters)}
    return positions, names


def numbers_traced(args, kwargs, static) -> tuple | None:
    """``(args, kwargs)`` with their Python floats and complex numbers (outside the ``static``
    arguments) wrapped to be traced as values, or None where there are none."""
    positions, names = static
    found = False

    def wrapped(value):
        nonlocal found
        if type(value) in (np.ndarray, ConcreteArray, int, bool, str) or value is None:
            return value
        if type(value) in (float, complex):
            found = True
            return PythonNumber(value)
        leaves, treedef = flatten(value)
        if not any(type(leaf) in (float, complex) for leaf in leaves):
            return value
        found = True
        return unflatten(treedef, [PythonNumber(x) if type(x) in (float, complex) else x for x in leaves])

    args = tuple(a if k in positions else wrapped(a) for k, a in enumerate(args))
    kwargs = {k: v if k in names else wrapped(v) for k, v in kwargs.items()}
    return (args, kwargs) if found else None


def traced_arguments(args, kwargs, static) -> tuple:
    """The arguments as a function with these ``static`` arguments is traced (None: all constants)."""
    return (static is not None and numbers_traced(args, kwargs, static)) or (args, kwargs)


@functools.cache
def _positional_treedef(count: int):
    return flatten(((None,) * count, {}), is_leaf=lambda x: x is None)[1]


def signature(args, kwargs):
    """(cache key, array leaves): arrays count by shape and dtype, other leaves by value."""
    if not kwargs:
        # The hot path of a compiled call: the same key the general path builds, without walking a tree.
        avals = []
        for a in args:
            if type(a) is ConcreteArray:
                avals.append(a.aval)
            elif type(a) is np.ndarray and a.flags.c_contiguous:
                avals.append((a.shape, a.dtype.str))
            else:
                break
        else:
            if len(args) < 2 or len({id(a) for a in args}) == len(args):
                return (_positional_treedef(len(args)), tuple(avals), None), args
    leaves, treedef = flatten((args, kwargs))
    arrays = [leaf for leaf in leaves if is_array(leaf)]
    ids = [id(a) for a in arrays]
    # The same array passed twice is traced as one array (a write through one shows in the other).
    aliases = None if len(set(ids)) == len(ids) else tuple(ids.index(i) for i in ids)
    return (treedef, tuple(_leaf_key(leaf) for leaf in leaves), aliases), arrays


def check_shared_containers(args, kwargs):
    """Refuse a list or dict passed twice (as two arguments, or twice among them): the compiled
    function gets a container of its own for each place, so what it changes through one would not
    show through the other, as it does in NumPy."""
    seen = set()
    for _, x in containers((args, kwargs)):
        if type(x) in (list, dict):
            if id(x) in seen:
                raise located(UnsupportedError(
                    f"the same {type(x).__name__} is passed twice among the arguments of a compiled function; pass "
                    "it once (cofactor gives each place its own copy, so a change through one would not show in the "
                    "other)"))
            seen.add(id(x))


def unsharded(key):
    """A signature without its arrays' shardings (the third entry of a sharded array's aval): a
    compiled program reshards an argument laid out otherwise."""
    treedef, leaves, aliases = key
    return treedef, tuple(leaf[:2] if type(leaf) is tuple and len(leaf) == 3 else leaf for leaf in leaves), aliases


def aval_key(a) -> tuple:
    """(shape, dtype string[, strides]) of an array argument, the part of the hot path's key it decides."""
    if type(a) is ConcreteArray:
        return a.aval
    if type(a) is np.ndarray:  # (_aval's key, without its generic calls: the hot path)
        return (a.shape, a.dtype.str) if a.flags.c_contiguous else (a.shape, a.dtype.str, "strides", a.strides)
    raise TypeError("not an array argument")


def wait_for(outputs):
    """Until the run ends: host arguments read in place must not change under it (the caller may
    write them as soon as the call returns)."""
    for out in outputs:
        out.block_until_ready()


def check_writable(arrays, writebacks):
    """Refuse, before running, arguments whose in-place update cannot reach the caller."""
    host = [a for a in arrays if type(a) is np.ndarray]
    for k, _ in writebacks:
        arg = arrays[k]
        _check_updatable(arg, "an argument")
        if any(other is not arg and _overlap(arg, other) for other in host):
            raise UnsupportedError("the function updates an argument in place that shares memory with another "
                                   "argument (a view of it); pass the base array once instead")


def _overlap(a, b) -> bool:
    """Whether two arguments share memory (interleaved views of one array do not; a ConcreteArray shares
    its host buffer with a NumPy array read from it in place)."""
    if type(a) is ConcreteArray:
        bounds = _host_bounds(a)
        return bounds is not None and _bounds_meet(bounds, np.lib.array_utils.byte_bounds(b))
    try:
        return np.shares_memory(a, b, max_work=10_000)
    except np.exceptions.TooHardError:
        return True


def _host_bounds(a: ConcreteArray):
    """The host memory a ConcreteArray's buffer is in, on a CPU device (None: elsewhere, or unknown)."""
    try:
        if any(device.platform != "cpu" for device in a.buffer.devices()):
            return None
        start = a.buffer.unsafe_buffer_pointer()
    except Exception:  # noqa: BLE001  (a buffer that does not say: nothing to compare)
        return None
    return start, start + a.buffer.nbytes


def _bounds_meet(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _check_updatable(array, what):
    if type(array) is ConcreteArray:
        return
    if not isinstance(array, np.ndarray):
        raise UnsupportedError(f"the function updates {what} of type {type(array).__name__} in place; "
                               "only NumPy arrays and ConcreteArrays can be updated for the caller")
    if not array.flags.writeable:
        raise ValueError("assignment destination is read-only")


def check_implicit_writable(arrays, fetched, writebacks):
    """Refuse, before running, a global or cell array the function writes that cannot be
    written, and one that shares memory with an argument (the trace took them as two arrays).
    One that is now an argument, or another one read from outside, is StaleCall: the trace took
    them as two arrays, so a write through one would not show through the other (a new trace
    takes them as one, as NumPy does)."""
    for k, value in enumerate(fetched):
        if any(value is a for a in arrays) or any(value is b for b in fetched[:k]):
            raise StaleCall("an array it reads from outside (a global, a closure variable, an attribute) is now "
                            "the same array as one of its arguments or another array it reads")
    for k, _ in writebacks:
        _check_updatable(fetched[k], "an array read from outside the function (a global, a closure's or an object's)")
    host = [a for a in arrays if isinstance(a, np.ndarray)]
    for k, value in enumerate(fetched):
        others = host + fetched[k + 1:]
        if isinstance(value, np.ndarray) and any(isinstance(a, np.ndarray) and a is not value and _overlap(value, a)
                                                 for a in others):
            raise UnsupportedError("the function reads an array from outside it (a global, a closure variable, an "
                                   "attribute or item of an object or container) that shares memory with another "
                                   "array it reads (a view of it), and writes one of them; pass the base array alone "
                                   "(o.v = o.w[1:]: keep o.w, and take the view in the function)")


def write_back(arg, buffer):
    """Give the caller's array its updated value: a ConcreteArray takes the (donated) buffer,
    a NumPy array gets the data copied in."""
    if type(arg) is ConcreteArray:
        arg.buffer = buffer
    else:
        np.copyto(arg, np.asarray(buffer))


def cut_to_lengths(result: ConcreteArray, lengths, as_list=False):
    """An output with run-time extents, at its lengths (NumPy's shape); ``as_list``: a list of run-time
    length (numpy/extent_lists.py), a list of its rows."""
    index = [slice(None)] * result.ndim
    for axis, n in lengths:
        index[axis] = slice(0, n)
    cut = np.asarray(result)[tuple(index)]
    if as_list:
        return [ConcreteArray.from_numpy(np.asarray(row), result.device) for row in cut]
    return ConcreteArray.from_numpy(cut, result.device)



def changed_arguments(old, new, fn, args, kwargs) -> str:
    """Which arguments differ between two signatures (cache keys; ``args``, ``kwargs``: the new
    one's call), for RecompileWarning."""
    if old is None or old[0] != new[0]:
        return "the structure of its arguments"
    try:
        parameters = list(signature_of(fn).parameters)
    except (TypeError, ValueError):
        parameters = []
    owners = [parameters[k] if k < len(parameters) else f"argument {k}" for k, a in enumerate(args)
              for _ in flatten(a)[0]] + [name for name, v in kwargs.items() for _ in flatten(v)[0]]
    changed = dict.fromkeys(owner for owner, a, b in zip(owners, old[1], new[1]) if a != b)
    return "the aliasing of its arguments" if not changed else ", ".join(changed)
