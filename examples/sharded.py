"""One NumPy function, many devices: the seeds' example and a stencil as SPMD programs on 8 CPU
devices (forced: XLA_FLAGS=--xla_force_host_platform_device_count=8, set here before jaxlib starts),
with the collectives XLA inserted.  On a machine with 8 GPUs, leave the flag out."""
import os

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import numpy as np  # noqa: E402

import cofactor as cf  # noqa: E402


def seeds_example(x):
    return x @ x + (x @ x).T


def stencil(u):
    out = np.zeros_like(u)
    out[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    return out


def collectives(compiled) -> str:
    found = [c.kind for c in compiled.collectives()]
    return ", ".join(f"{found.count(c)} {c}" for c in sorted(set(found))) or "none"


def main():
    mesh = cf.Mesh(np.array(cf.devices()).reshape(2, 4), ("x", "y"))
    blocks = cf.NamedSharding(mesh, cf.P("x", "y"))
    print(f"{len(cf.devices())} devices, mesh {dict(mesh.shape)}, arrays sharded as {blocks.spec}")
    rng = np.random.default_rng(0)
    for fn, x in [(seeds_example, rng.standard_normal((512, 512))), (stencil, rng.standard_normal((256, 512)))]:
        sharded = cf.to_device(x, blocks)
        f = cf.jit(fn, out_shardings=blocks)  # without it, XLA chooses (here: the matmul replicated)
        result = f(sharded)
        shards = {tuple(s.data.shape) for s in result.addressable_shards}
        print(f"{fn.__name__}: max |cofactor - NumPy| = {np.max(np.abs(np.asarray(result) - fn(x))):.1e}; "
              f"result sharded as {result.sharding.spec}, shards of shape {shards.pop()}; "
              f"collectives XLA inserted: {collectives(f.lower(sharded))}")


if __name__ == "__main__":
    main()
