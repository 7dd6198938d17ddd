"""Raised kernels (cofactor/kernels): CUDA-style kernels against NumPy references, their raised
structure, their gradients, and the constructs that are refused."""
import numpy as np
import pytest

import cofactor as cf

import kernel_programs as kp

rng = np.random.default_rng(0)


def reference_laplace_2d(u):
    out = np.zeros_like(u)
    out[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stencils_match_numpy(dtype):
    x, y = rng.standard_normal(60).astype(dtype), np.zeros(60, dtype)
    kp.laplace_1d[2, 32](x, y)                       # 64 threads over 60 elements
    want = np.zeros(60, dtype)
    want[1:-1] = x[:-2] - 2 * x[1:-1] + x[2:]
    np.testing.assert_allclose(y, want, rtol=1e-6 if dtype == np.float32 else 1e-12)
    assert y.dtype == dtype
    u, out = rng.standard_normal((24, 40)).astype(dtype), np.zeros((24, 40), dtype)
    kp.laplace_2d[(4, 6), (8, 8)](u, out)            # a 32x48 grid over 24x40: the guard clips it
    np.testing.assert_allclose(out, reference_laplace_2d(u), rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_flat_index_guard_and_loops_match_numpy():
    a, out = rng.standard_normal((5, 7)), np.zeros((5, 7))
    kp.flat_scale[2, 32](a, out)
    i, j = np.indices(a.shape)
    np.testing.assert_allclose(out, a * (i + 1) - j)
    x, y = rng.standard_normal(100), rng.standard_normal(100)
    want = 2.5 * x + y
    kp.grid_stride_axpy[2, 16](2.5, x, y)           # 32 threads stride over 100 elements
    np.testing.assert_allclose(y, want)
    for taps in (5, 20):                             # unrolled (at most 16 steps), and an scf.for
        w, x, y = rng.standard_normal(taps), rng.standard_normal(64), np.zeros(64)
        kp.fir[2, 32](x, w, y)
        want = np.zeros(64)
        want[:65 - taps] = np.correlate(x, w, mode="valid")
        np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


def test_data_dependent_branches_and_math_match_numpy():
    x, y = rng.standard_normal(50) * 2, np.zeros(50)
    kp.clipped_activation[4, 16](x, y)
    r = np.where(x > 0, np.tanh(x), np.exp(x) - 1.0)
    np.testing.assert_allclose(y, np.where(np.abs(x) < 2, r, 0.5 * r), rtol=1e-12)


def test_histogram_with_atomics_at_data_dependent_indices():
    values, counts = rng.random(200), np.zeros(8, np.int64)
    kp.histogram[7, 32](values, 8, counts)
    np.testing.assert_array_equal(counts, np.bincount(np.clip((values * 8).astype(int), 0, 7), minlength=8))


def test_constructs_that_would_be_raised_wrong_or_not_at_all_are_refused():
    with pytest.raises(cf.UnsupportedError, match=r"atomic.add at an index that does not come from the data.*\n.*"
                                                  r"kernel_programs.py:\d+: cf.atomic.add\(out, 0, x\[i\]\)"):
        kp.total[1, 32](np.ones(32), np.zeros(1))
    with pytest.raises(cf.UnsupportedError, match=r"shared.array is not supported.*\n.*tile = cf.shared.array"):
        kp.tiled_copy[1, 32](np.ones(32), np.zeros(32))
    with pytest.raises(TypeError, match=r"launch the kernel laplace_1d as laplace_1d\[blocks, threads\]"):
        kp.laplace_1d(np.ones(4), np.ones(4))


def test_a_kernel_in_a_time_loop_under_jit():
    u = np.sin(np.linspace(0, np.pi, 50))
    want = u.copy()
    for _ in range(2 * 50):
        nxt = want.copy()
        nxt[1:-1] = want[1:-1] + 0.2 * (want[:-2] - 2 * want[1:-1] + want[2:])
        want = nxt
    got = cf.jit(kp.heat)(u.copy(), 50)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-14)


def test_a_raised_stencil_is_slices_not_loops():
    x = rng.standard_normal(64)
    text = cf.code_hlo(lambda x: kp.stencil_loss(x, np.ones(64)), x)
    assert "slice" in text
    for op in ("stablehlo.while", "gather", "scatter", "kernel_call", "memref"):
        assert op not in text, op


def test_gradient_through_a_kernel_matches_finite_differences():
    x, w = rng.standard_normal(40), rng.random(40)
    grad = np.asarray(cf.grad(kp.stencil_loss)(x, w))
    eps = 1e-6
    for k in (0, 7, 20, 39):
        bumped = x.copy()
        bumped[k] += eps
        numeric = (kp.stencil_loss(bumped, w) - kp.stencil_loss(x, w)) / eps
        assert abs(grad[k] - numeric) < 1e-4 * max(1.0, abs(numeric)), (k, grad[k], numeric)


def test_a_numba_cuda_kernel_is_taken_unchanged(monkeypatch):
    """numba's names, recognized by module and name without importing numba (a stand-in module here)."""
    import sys
    import types
    numba, cuda = types.ModuleType("numba"), types.ModuleType("numba.cuda")

    def stub(name):
        return type(name, (), {"__module__": "numba.cuda.stubs", "__qualname__": name})
    cuda.grid, cuda.threadIdx, cuda.blockIdx, cuda.blockDim = (stub(n) for n in ("grid", "threadIdx", "blockIdx",
                                                                                  "blockDim"))
    cuda.jit = lambda fn: types.SimpleNamespace(py_func=fn)  # numba's dispatcher keeps the Python function
    numba.cuda = cuda
    monkeypatch.setitem(sys.modules, "numba", numba)
    monkeypatch.setitem(sys.modules, "numba.cuda", cuda)
    import numba_style_kernels
    x, y = rng.standard_normal(40), np.zeros(40)
    cf.kernel(numba_style_kernels.shifted_difference)[2, 32](x, y)
    want = np.zeros(40)
    want[:-1] = x[1:] - x[:-1]
    np.testing.assert_allclose(y, want)


@pytest.mark.parametrize("name", kp.ADVERSARIAL)
def test_kernels_match_running_them_thread_by_thread(name):
    import copy
    from kernel_simulator import simulate
    kernel, blocks, threads, args = kp._adversarial_inputs(np.random.default_rng(5))[name]
    want = copy.deepcopy(args)
    simulate(kernel, blocks, threads, *want)
    kernel[blocks, threads](*args)
    for g, w in zip(args, want):
        assert g.dtype == w.dtype
        # float32 kernels compute in float32 (numba's typing); the reference in Python's float64
        tolerance = {"rtol": 1e-5, "atol": 1e-6} if g.dtype == np.float32 else {"rtol": 1e-12}
        np.testing.assert_allclose(g, w, err_msg=name, **tolerance)


def test_random_kernels_match_running_them_thread_by_thread():
    """40 kernels of tests/fuzz/kernels.py (a script runs any number)."""
    from fuzz import kernels
    outcomes = [kernels.run(seed) for seed in range(40)]
    failures = [(seed, details) for seed, (outcome, details) in enumerate(outcomes)
                if outcome in ("mismatch", "internal")]
    assert not failures, failures[0]
    assert sum(outcome == "match" for outcome, _ in outcomes) >= 35
