"""Loops over elements, as people write them in NumPy: each compared with NumPy (values and every
argument after the call), and the structure of what they become.  Loops whose iterations are
independent, or reductions, become tensor operations through Enzyme-JAX's greedy_while_loop_batch_fission
(with the slices it would mistreat kept from it: passes/pipelines.py); loops with a carried dependency
stay loops."""
import copy
import sys
from pathlib import Path

import numpy as np
import pytest

import cofactor as cf

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from programs import diagonal_sum, normalize_rows, prefix_recurrence, running_max, scalar_stencil  # noqa: E402


def two_accumulators(x, a):
    s, p = 0.0, 1.0
    for i in range(x.shape[0]):
        s += x[i] * a[i, 0]
        p *= 1 + x[i] / 100
    return s, p


def scale_columns(m):
    out = np.empty_like(m)
    for j in range(m.shape[1]):
        out[:, j] = m[:, j] * (j + 1)
    return out


def pairwise_distances(x):
    out = np.zeros((x.shape[0], x.shape[0]))
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            out[i, j] = abs(x[i] - x[j])
    return out


def gather_by_index(x, idx):
    out = np.zeros(idx.shape[0])
    for i in range(idx.shape[0]):
        out[i] = x[idx[i]]
    return out


def carried_in_place(u):
    for i in range(1, u.shape[0]):
        u[i] = u[i - 1] * 0.5 + u[i]       # reads the element the last iteration wrote
    return u


def reads_ahead_in_place(u):
    for i in range(u.shape[0] - 1):
        u[i] = u[i + 1] - u[i]             # reads the old u[i + 1]: NumPy's order
    return u


def scatter_add(x, idx):
    out = np.zeros(8)
    for i in range(idx.shape[0]):
        out[idx[i]] += x[i]                # repeated indices accumulate
    return out


def branch_per_element(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0:
            out[i] = x[i] * 2
        else:
            out[i] = -x[i]
    return out


def _inputs(fn, rng):
    n = 24
    if fn in (normalize_rows, scale_columns):
        return [rng.standard_normal((n, 9))]
    if fn is diagonal_sum:
        return [rng.standard_normal((n, n))]
    if fn is two_accumulators:
        return [rng.standard_normal(n), rng.standard_normal((n, 3))]
    if fn in (gather_by_index, scatter_add):
        return [rng.standard_normal(n), rng.integers(0, 8, n)]
    return [rng.standard_normal(n)]


RAISED = [diagonal_sum, two_accumulators, scalar_stencil, scale_columns, pairwise_distances]
# gather_by_index's reads are independent, but the loop also checks each index read from data against the
# axis (NumPy's IndexError after the call), and that check is carried from trip to trip.  normalize_rows
# reads the row it writes: it was raised only with the pattern that reads such an element from the loop's
# operand, which is excluded for the copies it makes XLA take (passes/pipelines.py).
LOOPS = [running_max, prefix_recurrence, carried_in_place, reads_ahead_in_place, scatter_add, branch_per_element,
         gather_by_index, normalize_rows]


@pytest.mark.parametrize("fn", RAISED + LOOPS, ids=lambda fn: fn.__name__)
def test_element_loops_leave_what_numpy_leaves(fn):
    rng = np.random.default_rng(21)
    compiled = cf.jit(fn)
    for _ in range(3):
        args = _inputs(fn, rng)
        want_args, got_args = copy.deepcopy(args), copy.deepcopy(args)
        want, got = fn(*want_args), compiled(*got_args)
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-14)
        for g, w in zip(got_args, want_args):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)  # a row's sum may add in another order


@pytest.mark.parametrize("fn", RAISED, ids=lambda fn: fn.__name__)
def test_independent_element_loops_become_tensor_operations(fn):
    compiled = cf.compile(fn, *_inputs(fn, np.random.default_rng(0)), optimize=True)
    assert "stablehlo.while" in compiled.raw_mlir and "stablehlo.while" not in compiled.mlir


@pytest.mark.parametrize("fn", [prefix_recurrence, carried_in_place], ids=lambda fn: fn.__name__)
def test_loops_with_a_carried_dependency_stay_loops(fn):
    compiled = cf.compile(fn, *_inputs(fn, np.random.default_rng(0)), optimize=True)
    assert compiled.mlir.count("stablehlo.while") == 1
