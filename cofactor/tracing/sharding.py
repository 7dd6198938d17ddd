"""``cf.sharding_constraint(x, sharding)``: how an intermediate array is laid out over the devices.

Inside traced code it is an ``sdy.sharding_constraint`` on the array's value, naming the program's
mesh (recorded in the trace context, for the compiler to declare); XLA's partitioner then moves
data to match.  Inside a function cofactor differentiates it is dropped: Enzyme (enzyme-ad
0.0.16) has no adjoint for it.  Outside traced code it reshards the array (as ``cf.to_device``).
"""
from __future__ import annotations

from ..ir.core import emit
from ..pytree import tree_map
from ..runtime.array import to_device
from ..runtime.sharding import check_mesh, sharding_text
from .array import TracedArray
from .context import current, is_differentiating, is_tracing


def sharding_constraint(x, sharding):
    """``x`` (a pytree of arrays) laid out as ``sharding`` (a NamedSharding)."""
    if not is_tracing():
        return to_device(x, sharding)
    context = current()
    context.mesh = check_mesh(sharding, context.mesh, "the sharding of cf.sharding_constraint")

    def constrained(leaf):
        if not isinstance(leaf, TracedArray) or is_differentiating():
            return leaf
        value = leaf.value
        text = sharding_text(sharding, value.type.rank)
        return TracedArray(emit("sdy.sharding_constraint", [value], [value.type], {"sharding": text})[0])
    return tree_map(constrained, x)
