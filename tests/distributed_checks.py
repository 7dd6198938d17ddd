"""A run of two processes x 2 CPU devices on loopback, for tests/test_sharding.py (which starts both
processes, each with XLA_FLAGS=--xla_force_host_platform_device_count=2):

    python tests/distributed_checks.py CHECK PORT PROCESS_ID

train: data-parallel training of a small MLP for 20 steps; prints the losses (as JSON) and their
  largest difference from NumPy's one-process training.
mismatch: process 1 compiles another function than process 0; each prints the DistributedError.
killed: process 1 dies (SIGKILL) in a loop of collectives; process 0 must end, not hang.
"""
import json
import os
import signal
import sys

import numpy as np

import cofactor as cf


def loss(params, x, y):
    w1, b1, w2 = params
    return ((np.tanh(x @ w1 + b1) @ w2 - y) ** 2).mean()


def step(params, x, y):
    value, grads = cf.value_and_grad(loss)(params, x, y)
    return [p - 0.1 * g for p, g in zip(params, grads)], value


def numpy_step(params, x, y):
    """The same step, its gradient written out: the one-process reference."""
    w1, b1, w2 = params
    h = np.tanh(x @ w1 + b1)
    r = h @ w2 - y
    dr = 2 * r / r.size
    dz = (dr @ w2.T) * (1 - h ** 2)
    grads = [x.T @ dz, dz.sum(axis=0), h.T @ dr]
    return [p - 0.1 * g for p, g in zip(params, grads)], (r ** 2).mean()


def data():
    rng = np.random.default_rng(0)  # every process draws the same global arrays, and puts its own shards
    x, y = rng.standard_normal((16, 4)), rng.standard_normal((16, 1))
    params = [rng.standard_normal((4, 8)) * 0.5, np.zeros(8), rng.standard_normal((8, 1)) * 0.5]
    return x, y, params


def main(check, port, process_id):
    cf.distributed.initialize(f"127.0.0.1:{port}", num_processes=2, process_id=process_id)
    assert len(cf.devices()) == 4 and len(cf.local_devices()) == 2, (cf.devices(), cf.local_devices())
    mesh = cf.Mesh(np.array(cf.devices()), ("d",))
    x, y, params = data()
    xs = cf.to_device(x, cf.NamedSharding(mesh, cf.P("d")))   # this process's 8 rows
    ys = cf.to_device(y, cf.NamedSharding(mesh, cf.P("d")))
    replicated = cf.NamedSharding(mesh, cf.P())
    if check == "train":
        train = cf.jit(step, out_shardings=replicated)
        got, want, reference = [], [], params
        state = cf.to_device(params, replicated)
        for _ in range(20):
            state, value = train(state, xs, ys)
            reference, expected = numpy_step(reference, x, y)
            got.append(float(np.asarray(value)))
            want.append(float(expected))
        print(json.dumps({"losses": got, "largest_difference": max(abs(a - b) for a, b in zip(got, want))}))
    elif check == "mismatch":
        fn = (lambda a: a.sum()) if process_id == 0 else (lambda a: (a * 2).sum())
        try:
            cf.jit(fn, out_shardings=replicated)(xs)
            print("no error")
        except cf.DistributedError as e:
            print(f"DistributedError: {e}")
    elif check == "killed":
        total = cf.jit(lambda a: a.sum(), out_shardings=replicated)
        for k in range(10_000):
            total(xs).block_until_ready()
            if process_id == 1 and k == 5:
                os.kill(os.getpid(), signal.SIGKILL)
        print("process 0 finished a loop its peer left")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
