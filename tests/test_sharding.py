"""Sharded runs: one SPMD program over a mesh of devices (cofactor/placement.py).  The checks need
several devices, which XLA's CPU client makes only when told before it starts: they run in a
process of their own with 8 forced devices (tests/sharded_checks.py), or in two processes of 2
devices each on loopback (tests/distributed_checks.py, runtime/distributed.py)."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import cofactor as cf

CHECKS = Path(__file__).with_name("sharded_checks.py")


def test_sharded_programs_on_eight_devices_give_numpys_results():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    run = subprocess.run([sys.executable, str(CHECKS)], env=env, capture_output=True, text=True, timeout=600)
    failed = [line for line in run.stdout.splitlines() if line.startswith("FAIL")]
    assert run.returncode == 0 and not failed, run.stdout + run.stderr
    assert run.stdout.count("PASS") >= 10, run.stdout


def test_a_mesh_of_one_device_runs_the_program_partitioned_once():
    mesh = cf.Mesh(np.array(cf.devices()[:1]), ("x",))
    x = np.arange(12.0).reshape(3, 4)
    f = cf.jit(lambda a: a @ a.T, in_shardings=cf.NamedSharding(mesh, cf.P("x")))
    np.testing.assert_allclose(np.asarray(f(x)), x @ x.T)
    assert "sdy.mesh @mesh" in f.lower(x).raw_mlir


def test_shardings_that_do_not_fit_are_argument_errors():
    mesh = cf.Mesh(np.array(cf.devices()[:1]), ("x",))
    with pytest.raises(cf.ArgumentError, match="3 dimensions, for an array of 2"):
        cf.jit(lambda a: a + 1, in_shardings=cf.NamedSharding(mesh, cf.P("x", None, None)))(np.ones((2, 2)))
    with pytest.raises(cf.ArgumentError, match="2 entries for 1 positional"):
        cf.jit(lambda a: a + 1, in_shardings=(None, None))(np.ones(2))
    with pytest.raises(cf.ArgumentError, match="takes NamedShardings"):
        cf.jit(lambda a: a + 1, in_shardings=cf.devices()[0])(np.ones(2))


DISTRIBUTED = Path(__file__).with_name("distributed_checks.py")


def _two_processes(check: str, timeout=90) -> list:
    """Run ``check`` of tests/distributed_checks.py in two processes x 2 devices: (exit code, output) of each."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    processes = [subprocess.Popen([sys.executable, str(DISTRIBUTED), check, str(port), str(k)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(2)]
    start = time.monotonic()
    outputs = [p.communicate(timeout=timeout) for p in processes]
    return [(p.returncode, out, err) for p, (out, err) in zip(processes, outputs)], time.monotonic() - start


def test_two_processes_train_a_data_parallel_mlp_as_one_process_does():
    (a, b), _ = _two_processes("train")
    for code, out, err in (a, b):
        assert code == 0, out + err
    losses = [json.loads(out.strip().splitlines()[-1]) for _, out, _ in (a, b)]
    assert losses[0]["losses"] == losses[1]["losses"] and len(losses[0]["losses"]) == 20
    assert losses[0]["largest_difference"] < 1e-12, losses[0]
    assert losses[0]["losses"][-1] < losses[0]["losses"][0] / 2


def test_processes_that_compile_different_programs_stop_before_running_them():
    runs, seconds = _two_processes("mismatch")
    for k, (code, out, err) in enumerate(runs):
        assert code == 0 and f"DistributedError: process {1 - k} compiled another program" in out, out + err
    assert seconds < 60


def test_a_peer_that_dies_ends_the_other_process():
    (survivor, killed), seconds = _two_processes("killed", timeout=120)
    assert killed[0] == -signal.SIGKILL
    assert survivor[0] != 0 and "another task died" in survivor[2], survivor[2][-2000:]
    assert seconds < 60
