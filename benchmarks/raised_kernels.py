"""CUDA-style kernels (cofactor/kernels) that the benchmarks time and tests/test_kernels.py checks."""
import cofactor as cf


@cf.kernel
def jacobi(a, b):
    i, j = cf.grid(2)
    if 1 <= i < a.shape[0] - 1 and 1 <= j < a.shape[1] - 1:
        b[i, j] = 0.2 * (a[i, j] + a[i, j - 1] + a[i, j + 1] + a[i + 1, j] + a[i - 1, j])


@cf.kernel
def fir(x, w, y):
    i = cf.grid(1)
    taps = w.shape[0]
    if i < x.shape[0] - taps + 1:
        acc = 0                      # an int, then the float of the first step: the loop carries a float
        for k in range(taps):
            acc += w[k] * x[i + k]
        y[i] = acc
