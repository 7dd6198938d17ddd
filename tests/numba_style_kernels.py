"""A kernel as numba.cuda users write it, for tests/test_kernels.py (which provides a stand-in
numba module: cofactor does not depend on numba)."""
from numba import cuda


@cuda.jit
def shifted_difference(x, y):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < x.shape[0] - 1:
        y[i] = x[i + 1] - x[i]
