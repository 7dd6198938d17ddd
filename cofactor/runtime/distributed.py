"""Several processes, one program: XLA's distributed runtime (one coordinator, gloo collectives on
CPU), started through ``jax.distributed`` (which cofactor uses as a runtime only).

    cf.distributed.initialize("10.0.0.1:1234", num_processes=2, process_id=0)   # before any device use
    mesh = cf.Mesh(np.array(cf.devices()).reshape(2, -1), ("proc", "dev"))     # every process's devices

After it, ``cf.devices()`` lists every process's devices and ``cf.local_devices()`` this one's (the
default device is a local one); a sharded array holds only this process's shards (put from the
NumPy array every process passes: each takes its own part), and results are read through
``.addressable_shards``.  What the spike found, handled here:

- A program two processes compiled differently hangs or aborts in its first collective: before
  its first run each process publishes a fingerprint of the program and its device order, and a
  mismatch is a ``cf.DistributedError`` in every process (``agree``).
- A collective a peer never joins would wait for 30 minutes: XLA's collective timeout is set
  (``collective_timeout`` seconds) unless XLA_FLAGS already sets it.
- A peer that dies ends the others (the coordinator's heartbeat, ``heartbeat_timeout``
  seconds): XLA aborts them with "the JAX distributed service detected fatal errors".
- At exit each process waits for the others and shuts the runtime down (jax's exit handler),
  without which every process aborts.
"""
from __future__ import annotations

import itertools
import os
import threading

from ..errors import CofactorError, DistributedError

_programs = itertools.count()  # how many sharded programs this process compiled: the handshake's key
_lock = threading.Lock()


def initialize(coordinator_address: str, num_processes: int, process_id: int, *, heartbeat_timeout: int = 10,
               collective_timeout: int = 60, initialization_timeout: int = 120):
    """Join the run of ``num_processes`` processes as ``process_id`` (0 also hosts the coordinator
    at ``coordinator_address``, "host:port").  Call it before anything uses a device."""
    from . import devices

    if devices.devices.cache_info().currsize or devices.local_devices.cache_info().currsize:
        raise CofactorError("cf.distributed.initialize must be called before cofactor first uses a device")
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_collective_timeout_seconds" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_cpu_collective_timeout_seconds={int(collective_timeout)}".strip()
    import jax

    jax.distributed.initialize(coordinator_address, num_processes=num_processes, process_id=process_id,
                               initialization_timeout=initialization_timeout,
                               heartbeat_timeout_seconds=heartbeat_timeout)


def process_count() -> int:
    import jax

    return jax.process_count()


def process_index() -> int:
    import jax

    return jax.process_index()


def agree(fingerprint: str, timeout_s: float = 60.0):
    """Every process compiled the same program for the same devices: each publishes the
    ``fingerprint`` of its next program and reads the others' (a no-op in a run of one process)."""
    if process_count() == 1:
        return
    from jax._src.distributed import global_state

    client = global_state.client
    with _lock:
        n = next(_programs)
    me = process_index()
    client.key_value_set(f"cofactor/program/{n}/{me}", fingerprint)
    for other in range(process_count()):
        if other == me:
            continue
        try:
            theirs = client.blocking_key_value_get(f"cofactor/program/{n}/{other}", int(timeout_s * 1000))
        except Exception as e:  # noqa: BLE001  (the runtime's timeout, in its words)
            raise DistributedError(f"process {other} did not compile its program number {n} within {timeout_s:g} s "
                                   f"(every process must call the same compiled functions in the same order): "
                                   f"{e}") from None
        if theirs != fingerprint:
            raise DistributedError(f"process {other} compiled another program than process {me} for its program "
                                   f"number {n} (a different function, arguments, shardings or device order): every "
                                   "process must run the same program, or its collectives hang")
