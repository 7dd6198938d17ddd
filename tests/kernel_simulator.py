"""A reference for kernels: the kernel's Python function run thread by thread, as a GPU would run
it (in some order: right for kernels without races), with cofactor's kernel API answering for the
thread being run.  tests/test_kernels.py compares raised kernels with it."""
import contextlib
import itertools
import types

import cofactor as cf


class _Dim3:
    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z


@contextlib.contextmanager
def _api(state):
    names = ("grid", "gridsize", "threadIdx", "blockIdx", "blockDim", "gridDim", "atomic")
    saved = {n: getattr(cf, n) for n in names}

    def grid(ndim):
        ids = [state["block"][a] * state["threads"][a] + state["thread"][a] for a in range(ndim)]
        return ids[0] if ndim == 1 else tuple(ids)

    def gridsize(ndim):
        sizes = [state["blocks"][a] * state["threads"][a] for a in range(ndim)]
        return sizes[0] if ndim == 1 else tuple(sizes)

    def add(array, index, value):
        old = array[index]
        array[index] += value
        return old
    try:
        cf.grid, cf.gridsize, cf.atomic = grid, gridsize, types.SimpleNamespace(add=add)
        cf.blockDim, cf.gridDim = _Dim3(*state["threads"]), _Dim3(*state["blocks"])
        yield lambda: setattr(cf, "threadIdx", _Dim3(*state["thread"])) or setattr(cf, "blockIdx",
                                                                                    _Dim3(*state["block"]))
    finally:
        for n, v in saved.items():
            setattr(cf, n, v)


def _three(dims) -> tuple:
    dims = tuple(dims) if isinstance(dims, tuple) else (dims,)
    return dims + (1,) * (3 - len(dims))


def simulate(kernel, blocks, threads, *args):
    """Run ``kernel[blocks, threads](*args)`` on NumPy arrays, one thread after another."""
    state = {"blocks": _three(blocks), "threads": _three(threads)}
    with _api(state) as enter:
        for block in itertools.product(*(range(n) for n in state["blocks"])):
            for thread in itertools.product(*(range(n) for n in state["threads"])):
                state["block"], state["thread"] = block, thread
                enter()
                kernel.fn(*args)
