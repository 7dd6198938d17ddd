"""Meshes and shardings: JAX's own classes (``jax.sharding``), which jaxlib's PJRT runtime takes as
they are, so an array sharded for JAX is sharded for cofactor.  This module adds what cofactor
needs of them: putting a host array on a sharding, Shardy's text for a mesh and a sharding (the
compiler annotates ``@main`` with it), and reading XLA's chosen output shardings back as
NamedShardings of the program's mesh.

A program runs on one mesh: every sharded argument, result and constraint names the same one.
"""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError
from jax.sharding import Mesh, NamedSharding, PartitionSpec, Sharding  # noqa: F401  (cofactor's API)

MESH_SYMBOL = "mesh"  # the name of the program's sdy.mesh


def put(array: np.ndarray, sharding: Sharding):
    """A device array holding ``array`` sharded as ``sharding``: one owning copy of each shard per
    device (jaxlib refuses views of one array, or one object for several devices, when a shard is
    replicated)."""
    from jax._src import core
    from jaxlib import _jax

    indices = sharding.addressable_devices_indices_map(array.shape)
    devices = list(sharding._addressable_device_assignment)
    shards = [np.array(array[indices[d]]) for d in devices]
    return _jax.batched_device_put(core.ShapedArray(array.shape, array.dtype), sharding, shards, devices, True, True,
                                   enable_x64=True)


def mesh_text(mesh: Mesh) -> str:
    axes = ", ".join(f'"{name}"={size}' for name, size in mesh.shape.items())
    return f"sdy.mesh @{MESH_SYMBOL} = <[{axes}]>"


def sharding_text(sharding: NamedSharding, rank: int) -> str:
    """Shardy's ``#sdy.sharding`` for ``sharding`` of an array of ``rank`` dimensions."""
    spec = tuple(sharding.spec) + (None,) * (rank - len(sharding.spec))
    if len(spec) > rank:
        raise ArgumentError(f"the sharding {sharding.spec} has {len(spec)} dimensions, for an array of {rank}")
    dims = []
    for entry in spec:
        names = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        dims.append("{" + ", ".join(f'"{n}"' for n in names) + "}")
    return f"#sdy.sharding<@{MESH_SYMBOL}, [{', '.join(dims)}]>"


def replicated(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, PartitionSpec())


def check_mesh(sharding, mesh: Mesh | None, what: str) -> Mesh:
    """The program's mesh, given one more ``sharding`` (of ``what``): the same mesh as the others'."""
    if not isinstance(sharding, NamedSharding):
        raise ArgumentError(f"{what} has a {type(sharding).__name__}; cofactor takes NamedShardings "
                        "(cf.NamedSharding(mesh, cf.P(...)))")
    if mesh is not None and sharding.mesh != mesh:
        raise ArgumentError(f"{what} is sharded over another mesh than the function's other arrays: one program runs "
                         f"on one mesh ({dict(mesh.shape)} over devices {mesh.device_ids.ravel().tolist()}, and "
                         f"{dict(sharding.mesh.shape)} over {sharding.mesh.device_ids.ravel().tolist()})")
    return sharding.mesh


def named(op_sharding, mesh: Mesh) -> NamedSharding:
    """XLA's sharding of a result (an OpSharding) as a NamedSharding of ``mesh``."""
    from jax._src.sharding_impls import GSPMDSharding, _gspmd_to_named_sharding_via_mesh

    gspmd = GSPMDSharding(tuple(mesh.devices.flat), op_sharding)
    return _gspmd_to_named_sharding_via_mesh(gspmd, mesh)
