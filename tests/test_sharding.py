"""Sharded runs: one SPMD program over a mesh of devices (cofactor/placement.py).  The checks need
several devices, which XLA's CPU client makes only when told before it starts: they run in a
process of their own with 8 forced devices (tests/sharded_checks.py)."""
import os
import subprocess
import sys
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
    assert run.stdout.count("PASS") >= 7, run.stdout


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
