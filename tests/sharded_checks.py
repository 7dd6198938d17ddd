"""Checks of sharded runs on 8 forced CPU devices, for tests/test_sharding.py, which runs this file
in a process of its own (XLA_FLAGS must be set before jaxlib starts).  Each check compares with
NumPy (values, and every argument after the call); prints "PASS name" or the failure, and exits 1
if any failed.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 .venv/bin/python tests/sharded_checks.py [NAME...]
"""
import sys
import traceback

import numpy as np

import cofactor as cf

rng = np.random.default_rng(0)
mesh = cf.Mesh(np.array(cf.devices()).reshape(2, 4), ("x", "y"))
line = cf.Mesh(np.array(cf.devices()), ("d",))


def sharded(spec, on=mesh):
    return cf.NamedSharding(on, cf.P(*spec))


def collectives(compiled) -> set:
    return {c.kind for c in compiled.collectives()}


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def seeds_example(a):
    return a @ a + (a @ a).T


def stencil(u):
    out = np.zeros_like(u)
    out[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    return out


def check_seeds_example_on_a_2d_mesh():
    x = rng.standard_normal((16, 16))
    xs = cf.to_device(x, sharded(("x", "y")))
    f = cf.jit(seeds_example)
    close(f(xs), seeds_example(x))
    assert collectives(f.lower(xs)) & {"all-reduce", "all-gather", "all-to-all"}, collectives(f.lower(xs))
    assert all(c.dtype == np.float64 and 0 < c.nbytes <= x.nbytes for c in f.lower(xs).collectives())
    assert isinstance(f(xs).sharding, cf.NamedSharding) and len(f(xs).addressable_shards) == 8


def check_stencil_exchanges_halos():
    u = rng.standard_normal((16, 32))
    us = cf.to_device(u, sharded(("x", "y")))
    f = cf.jit(stencil)
    close(f(us), stencil(u))
    assert "collective-permute" in collectives(f.lower(us)), collectives(f.lower(us))


def heat_steps(u, steps):
    for _ in range(steps):   # a rolled loop of in-place updates of a sharded array
        u[1:-1, 1:-1] += 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
    return u.sum(axis=0), u.max()


def check_stencil_time_loop_updates_in_place_and_reduces():
    u = rng.standard_normal((16, 32))
    us = cf.to_device(u, sharded(("x", "y")))
    want_u = u.copy()
    want = heat_steps(want_u, 20)
    f = cf.jit(heat_steps)
    compiled = f.lower(us, 20)
    got = f(us, 20)
    close(got[0], want[0])
    close(got[1], want[1])
    close(us, want_u)                     # the caller's array, updated in place, still sharded
    assert us.sharding.spec == cf.P("x", "y")
    assert "stablehlo.while" in compiled.mlir
    assert {"collective-permute", "all-reduce"} <= collectives(compiled), collectives(compiled)


def check_in_and_out_shardings_from_numpy_arguments():
    a, b = rng.standard_normal((8, 12)), rng.standard_normal((12, 4))
    want = sharded((None, "y"))
    f = cf.jit(lambda a, b: (a @ b, a.sum(axis=1)), in_shardings=(sharded(("x", None)), None),
               out_shardings=(want, None))
    got, sums = f(a, b)
    close(got, a @ b)
    close(sums, a.sum(axis=1))
    assert got.sharding.is_equivalent_to(want, 2), got.sharding
    try:
        cf.jit(lambda a: a, in_shardings=sharded(("x",)), out_shardings=sharded(("d",), line))(a)
    except cf.ArgumentError as e:
        assert "another mesh" in str(e), e
    else:
        raise AssertionError("two meshes in one program were not refused")


def check_sharding_constraint_moves_data():
    x = rng.standard_normal((16, 16))
    xs = cf.to_device(x, sharded(("x", "y")))

    def gathered(a):
        b = cf.sharding_constraint(a * 2, sharded(()))   # replicated: every device gets all of it
        return b + 1
    f = cf.jit(gathered)
    close(f(xs), x * 2 + 1)
    assert "all-gather" in collectives(f.lower(xs)), collectives(f.lower(xs))
    resharded = cf.sharding_constraint(xs, sharded((None, "x")))   # outside a trace: a reshard
    assert resharded.sharding.spec == cf.P(None, "x")
    close(resharded, x)


def check_arguments_updated_in_place_keep_their_sharding():
    x = rng.standard_normal((16, 8))

    def update(a, b):
        a[1:] += b[:-1]
        b *= 2
    want_a, want_b = x.copy(), x.copy() + 1
    update(want_a, want_b)
    a, b = cf.to_device(x, sharded(("x", "y"))), x.copy() + 1  # a ConcreteArray, and a NumPy array
    f = cf.jit(update)
    f(a, b)
    close(a, want_a)
    close(b, want_b)
    assert a.sharding.spec == cf.P("x", "y")
    f(a, b)                                     # a's buffer was donated: its new one is used
    update(want_a, want_b)
    close(a, want_a)


def mlp_loss(params, x, y):
    w1, b1, w2 = params
    h = np.tanh(x @ w1 + b1)
    return ((h @ w2 - y) ** 2).mean()


def check_gradient_of_a_sharded_mlp():
    x, y = rng.standard_normal((32, 8)), rng.standard_normal((32, 1))
    params = [rng.standard_normal((8, 16)) * 0.3, rng.standard_normal(16) * 0.1, rng.standard_normal((16, 1)) * 0.3]
    xs = cf.to_device(x, sharded(("d",), line))              # data parallel
    ws = [cf.to_device(p, sharded((), line)) for p in params]  # replicated weights
    grads = cf.grad(mlp_loss)(ws, xs, y)
    want = cf.grad(mlp_loss)(params, x, y)                   # one device
    for g, w in zip(grads, want):
        close(g, np.asarray(w))
    def constrained_loss(params, x, y):   # a constraint inside a differentiated function is dropped
        return mlp_loss(params, cf.sharding_constraint(x, sharded((), line)), y)
    for g, w in zip(cf.grad(constrained_loss)(ws, xs, y), want):
        close(g, np.asarray(w))
    eps, k = 1e-6, (3, 5)
    bumped = [p.copy() for p in params]
    bumped[0][k] += eps
    numeric = (mlp_loss(bumped, x, y) - mlp_loss(params, x, y)) / eps
    assert abs(np.asarray(grads[0])[k] - numeric) < 1e-4, (np.asarray(grads[0])[k], numeric)


def check_differently_laid_out_arguments_are_resharded():
    """Spike §3's bad arguments: each is resharded (or refused) before XLA sees it."""
    x = rng.standard_normal((16, 8))
    f = cf.jit(lambda a: a * 2 + a.sum(axis=0), in_shardings=sharded(("x", "y")))
    want = x * 2 + x.sum(axis=0)
    reordered = cf.Mesh(np.array(cf.devices())[::-1].reshape(2, 4), ("x", "y"))
    for arg in [x, cf.to_device(x), cf.to_device(x, sharded(("y", "x"))), cf.to_device(x, sharded(()))
                , cf.to_device(x, cf.NamedSharding(reordered, cf.P("x", "y"))), cf.to_device(x, cf.devices()[5])]:
        close(f(arg), want)
    gone = cf.to_device(x, sharded(("x", "y")))
    gone.buffer.delete()
    try:
        f(gone)
    except cf.ArgumentError as e:
        assert "deleted" in str(e)
    else:
        raise AssertionError("a deleted buffer was not refused")


def check_every_bad_argument_of_the_spike_is_resharded_or_refused():
    """Spike §3, against one compiled program (cf.compile: it does not compile again): an argument
    laid out otherwise is resharded, one of another shape, dtype or count is a cf.ArgumentError."""
    x = rng.standard_normal((16, 8))
    compiled = cf.compile(lambda a: a * 2 + a.sum(axis=0), cf.to_device(x, sharded(("x", "y"))))
    want = x * 2 + x.sum(axis=0)
    half = cf.Mesh(np.array(cf.devices()[4:]).reshape(2, 2), ("x", "y"))
    reordered = cf.Mesh(np.array(cf.devices())[::-1].reshape(2, 4), ("x", "y"))
    for arg in [cf.to_device(x), cf.to_device(x, cf.NamedSharding(half, cf.P("x", "y"))), cf.to_device(x, sharded(())),
                cf.to_device(x, cf.NamedSharding(reordered, cf.P("x", "y"))), cf.to_device(x, sharded(("y", "x")))]:
        close(compiled(arg), want)
    for args in [(cf.to_device(x.astype(np.float32), sharded(("x", "y"))),), (cf.to_device(np.ones((16, 32)),
                                                                                           sharded(("x", "y"))),), ()]:
        try:
            compiled(*args)
        except cf.ArgumentError as e:
            assert "compiled for other arguments" in str(e), e
        else:
            raise AssertionError(f"{args} was not refused")
    one_device = cf.compile(lambda a: a * 2 + a.sum(axis=0), x)   # and a sharded array to a one-device program
    close(one_device(cf.to_device(x, sharded(("x", "y")))), want)


@cf.kernel
def laplace_kernel(u, out):
    i, j = cf.grid(2)
    if 1 <= i < u.shape[0] - 1 and 1 <= j < u.shape[1] - 1:
        out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4 * u[i, j]


def check_a_raised_kernel_runs_sharded():
    u = rng.standard_normal((16, 32))
    us = cf.to_device(u, sharded(("x", "y")))

    def apply(u):
        out = np.zeros_like(u)
        laplace_kernel[(2, 4), (8, 8)](u, out)
        return out
    f = cf.jit(apply, out_shardings=sharded(("x", "y")))
    close(f(us), stencil(u))
    assert "collective-permute" in collectives(f.lower(us)), collectives(f.lower(us))


CHECKS = {name[len("check_"):]: fn for name, fn in dict(globals()).items() if name.startswith("check_")}


def main(names):
    assert len(cf.devices()) == 8, "run with XLA_FLAGS=--xla_force_host_platform_device_count=8"
    failed = 0
    for name in names or CHECKS:
        try:
            CHECKS[name]()
            print(f"PASS {name}", flush=True)
        except Exception:  # noqa: BLE001  (reported, and the exit status says so)
            failed += 1
            print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
