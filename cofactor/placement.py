"""Where a compiled program runs: one device, or one mesh of devices with a sharding for each
argument and result, run as one SPMD program that XLA partitions (inserting the collectives).

The placement is decided when the function is compiled, from

- ``cf.jit(f, in_shardings=...)``: one NamedSharding for every array argument, or a sequence
  with an entry per positional argument (a NamedSharding for every array in it, or None);
- otherwise each argument's own sharding (a ConcreteArray sharded over several devices);
  arguments with none (NumPy arrays, arrays on one device, globals the function reads) are
  replicated over the mesh;
- ``out_shardings=``: one NamedSharding for every result, or a sequence with an entry per result
  (None: XLA's choice, propagated from the arguments); an argument the function updates in place
  keeps its sharding;
- the mesh of the trace's ``cf.sharding_constraint`` calls.

They must all name one mesh.  The placement becomes Shardy's annotations on the traced module
(``sdy.mesh``, ``sdy.sharding`` on ``@main``'s arguments and results, and ``mhlo.num_partitions``),
which the Enzyme-JAX passes keep; each call then puts or reshards its arguments as the placement
says (xla/executable.py), since XLA checks none of it.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import ArgumentError
from .pytree import flatten
from .runtime.array import ConcreteArray
from .tracing.trace import Trace, is_array


@dataclass
class Placement:
    mesh: object      # jax.sharding.Mesh
    inputs: list      # the NamedSharding of each argument of @main
    outputs: list     # the NamedSharding of each result of @main, or None: XLA's choice


def of(trace: Trace, args, kwargs, in_shardings=None, out_shardings=None) -> Placement | None:
    """The placement of a program traced from these arguments, or None: one device."""
    explicit = _per_array(args, kwargs, in_shardings)
    arrays = [leaf for leaf in flatten((args, kwargs))[0] if is_array(leaf)]
    own = [a.sharding if type(a) is ConcreteArray and len(a.sharding.device_set) > 1 and given is None else None
           for a, given in zip(arrays, explicit)]  # given one, an argument laid out otherwise is resharded
    main = trace.module.functions[0]
    outputs = _per_output(out_shardings, len(trace.out_types))
    given = [s for s in [*explicit, *own, *outputs] if s is not None]
    if not given and trace.mesh is None:
        return None
    from .runtime.sharding import check_mesh, replicated

    mesh = trace.mesh
    for sharding in given:
        mesh = check_mesh(sharding, mesh, "an array argument or result")
    params = range(len(arrays)) if trace.params is None else trace.params
    inputs = [explicit[k] or own[k] or replicated(mesh) for k in params]
    inputs += [replicated(mesh)] * (len(main.arguments) - len(inputs))  # globals and cells the function reads
    outputs += [None] * (len(main.result_types) - len(outputs))
    for k, j in trace.writebacks:  # updated in place: its buffer is the result's
        outputs[j] = inputs[list(params).index(k)]
    return Placement(mesh, inputs, outputs)


def _per_array(args, kwargs, in_shardings) -> list:
    """The sharding cf.jit's ``in_shardings`` gives each array leaf of the arguments (None: none)."""
    if in_shardings is None or not isinstance(in_shardings, (list, tuple)):
        count = sum(is_array(leaf) for leaf in flatten((args, kwargs))[0])
        return [in_shardings] * count
    if len(in_shardings) != len(args):
        raise ArgumentError(f"in_shardings has {len(in_shardings)} entries for {len(args)} positional arguments "
                         "(give one per positional argument, or one sharding for all)")
    found = []
    for arg, sharding in zip(args, in_shardings):
        found += [sharding] * sum(is_array(leaf) for leaf in flatten(arg)[0])
    return found + [None] * sum(is_array(leaf) for leaf in flatten(kwargs)[0])


def _per_output(out_shardings, count: int) -> list:
    if out_shardings is None or not isinstance(out_shardings, (list, tuple)):
        return [out_shardings] * count
    if len(out_shardings) != count:
        raise ArgumentError(f"out_shardings has {len(out_shardings)} entries for {count} results "
                         "(give one per result, or one sharding for all)")
    return list(out_shardings)


def annotate(trace: Trace, placement: Placement):
    """Write ``placement`` into the traced module as Shardy's annotations."""
    from .runtime.sharding import mesh_text, sharding_text

    module, main = trace.module, trace.module.functions[0]
    module.attributes["mhlo.num_partitions"] = f"{placement.mesh.devices.size} : i32"
    module.attributes["mhlo.num_replicas"] = "1 : i32"
    module.declarations = [mesh_text(placement.mesh)]
    for k, (arg, sharding) in enumerate(zip(main.arguments, placement.inputs)):
        main.arg_attributes.setdefault(k, {})["sdy.sharding"] = sharding_text(sharding, arg.type.rank)
    for j, (type_, sharding) in enumerate(zip(main.result_types, placement.outputs)):
        if sharding is not None:
            main.result_attributes.setdefault(j, {})["sdy.sharding"] = sharding_text(sharding, type_.rank)
