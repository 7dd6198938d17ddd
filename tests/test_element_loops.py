"""Loops over elements, as people write them in NumPy: each compared with NumPy (values and every
argument after the call), and the structure of what they become.  Loops whose iterations are
independent, or reductions, become tensor operations through Enzyme-JAX's greedy_while_loop_batch_fission
(with the slices it would mistreat kept from it: passes/pipelines.py); loops with a carried dependency
stay loops."""
import copy
import sys
import warnings
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


def reads_behind_backwards(u):
    for i in range(u.shape[0] - 1, 0, -1):
        u[i] = u[i] - u[i - 1]             # the old u[i - 1]: a later trip writes it
    return u


def swaps_pairs(u):
    for i in range(u.shape[0] // 2):
        u[2 * i], u[2 * i + 1] = u[2 * i + 1], u[2 * i]
    return u


def centers_columns(m):
    for j in range(m.shape[1]):
        m[:, j] -= m[:, j].mean()
    return m


def reads_a_written_element(u):
    for i in range(u.shape[0]):
        u[i] = u[i] + u[3]                 # from trip 4 on, the u[3] trip 3 wrote
    return u


def scales_by_a_running_sum(m):
    s = 0.0
    for i in range(m.shape[0]):
        s = s * 0.5 + m[i].sum()           # a carried scalar that reads the rows: stays a loop
        m[i] = m[i] * s
    return m


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


def clips_in_place(u):
    for i in range(u.shape[0]):
        if u[i] > 0.5:
            u[i] = 0.5
        elif u[i] < -0.5:
            u[i] = -0.5 - u[i] * 0.1
    return u


def scales_rows_that_sum_positive(m):
    for i in range(m.shape[0]):
        if m[i].sum() > 0:
            m[i] = m[i] / m[i].sum()
    return m


def branches_write_different_places(u):
    for i in range(1, u.shape[0] - 1):
        if u[i] > 0:
            u[i + 1] = u[i] * 2                # the next trip reads it
        else:
            u[i - 1] = -u[i]
    return u


def counts_under_a_branch(x):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            total += x[i]
    return total


def relu_in_place(m):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):      # (a short loop: unrolled, four updates of a row per trip)
            if m[i, j] < 0:
                m[i, j] = 0.0
    return m


def moves_particles(pos, vel):
    for i in range(pos.shape[0]):
        for d in range(3):
            pos[i, d] += vel[i, d] * 0.1
            if pos[i, d] > 1.0:          # (bounces off the wall)
                pos[i, d] = 2.0 - pos[i, d]
                vel[i, d] = -vel[i, d]
    return pos, vel


def writes_a_block_then_beside_it(m):
    for i in range(0, m.shape[0] - 2, 2):
        m[i:i + 2, 0:2] = m[i:i + 2, 0:2] * 2   # (two rows, then one row beside them: not one update)
        m[i, 2] = m[i, 2] + 1
    return m


def running_sum(x):
    out = np.zeros_like(x)
    s = 1.0
    for i in range(x.shape[0]):
        s += x[i]                        # (floats: left a loop, the order of the additions kept)
        out[i] = s
    return out, s


def running_count(x):
    out = np.zeros(x.shape[0], dtype=np.int64)
    k = np.int64(0)                      # (a Python int's sum is checked against int64's range each trip)
    for i in range(x.shape[0]):
        k += x[i] > 0
        out[i] = k
    return out, k


def running_sum_backwards(x):
    out = np.zeros((x.shape[0], 2))
    s = 0.0
    for i in range(x.shape[0] - 1, -1, -1):
        s = s + x[i] * 2
        out[i, 1] = s
    return out


def running_min_of_np_minimum(x):
    out = np.empty_like(x)
    m = np.inf
    for i in range(x.shape[0]):
        m = np.minimum(m, x[i])
        out[i] = m
    return out


def running_max_by_if(x):
    out, best = np.empty_like(x), x[0]
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
        out[i] = best
    return out, best


def running_product_of_ints(k):
    out, p = np.empty_like(k), 1
    for i in range(k.shape[0]):
        p = p * k[i]
        out[i] = p
        k[i] = -k[i]
    return out


def running_sum_written_before_it_grows(x):
    out, s = np.empty_like(x), 0.0
    for i in range(x.shape[0]):
        out[i] = s                       # (the sum before this trip's: stays a loop)
        s += x[i]
    return out


def drawdown(prices):
    peak, dd = prices[0], np.empty_like(prices)
    for i in range(prices.shape[0]):
        peak = max(peak, prices[i])
        dd[i] = prices[i] - peak         # (a value computed from the running maximum)
    return dd


def offsets_before_each(counts):
    starts, total = np.empty_like(counts), np.int64(0)
    for i in range(counts.shape[0]):
        starts[i] = total                # (the sum before this trip's: an exclusive scan)
        total += counts[i]
    return starts, total


def adds_the_last_wrapping_around(u):
    for i in range(u.shape[0]):
        u[i] = u[i] + u[i - 1]           # (u[-1] at i = 0: a place cofactor cannot put in a box)
    return u


def differences_guarded_at_the_end(u):
    n = u.shape[0]
    for i in range(n):
        if i < n - 1:
            u[i] = u[i + 1] - u[i]
        else:
            u[i] = u[(i + 1) % n]
    return u


def clips_then_records_the_maximum(x):
    out, best = np.empty_like(x), x[0]
    for i in range(x.shape[0]):
        if x[i] < 0:
            x[i] = 0.0                   # (the running maximum reads this trip's own update)
        best = max(best, x[i])
        out[i] = best
    return out, best


def records_the_maximum_of_the_last_update(x):
    out, best = np.zeros_like(x), x[0]
    for i in range(1, x.shape[0]):
        x[i] = x[i] * 0.5
        best = max(best, x[i - 1])       # (what the last trip wrote: a true dependency)
        out[i] = best
    return out, best


def _inputs(fn, rng):
    n = 24
    if fn in (normalize_rows, scale_columns, centers_columns, scales_by_a_running_sum, scales_rows_that_sum_positive):
        return [rng.standard_normal((n, 9))]
    if fn in (relu_in_place, writes_a_block_then_beside_it):
        return [rng.standard_normal((n, 4))]
    if fn is moves_particles:
        return [rng.uniform(0, 1, (n, 3)), rng.standard_normal((n, 3)) * 3]
    if fn is diagonal_sum:
        return [rng.standard_normal((n, n))]
    if fn is two_accumulators:
        return [rng.standard_normal(n), rng.standard_normal((n, 3))]
    if fn in (running_product_of_ints, offsets_before_each):
        return [rng.integers(-3, 4, n)]
    if fn in (gather_by_index, scatter_add):
        return [rng.standard_normal(n), rng.integers(0, 8, n)]
    return [rng.standard_normal(n)]


# normalize_rows, reads_ahead_in_place, reads_behind_backwards and centers_columns update an array in
# place, reading only places no earlier trip wrote, and the branching loops compute both arms, a select
# taking each result (ir/loops.py).
RAISED = [diagonal_sum, two_accumulators, scalar_stencil, scale_columns, pairwise_distances, normalize_rows,
          reads_ahead_in_place, reads_behind_backwards, centers_columns, branch_per_element, clips_in_place,
          scales_rows_that_sum_positive, relu_in_place, moves_particles, running_max, running_count,
          running_min_of_np_minimum, running_max_by_if, running_product_of_ints, drawdown, offsets_before_each,
          clips_then_records_the_maximum]
# gather_by_index's reads are independent, but the loop also checks each index read from data against the
# axis (NumPy's IndexError after the call), and that check is carried from trip to trip.  swaps_pairs reads
# from the loop's initial array too, but loop raising does not take its two strided writes.
LOOPS = [swaps_pairs, running_sum, running_sum_backwards, running_sum_written_before_it_grows, prefix_recurrence, carried_in_place, scatter_add, gather_by_index,
         reads_a_written_element, scales_by_a_running_sum, branches_write_different_places, counts_under_a_branch,
         writes_a_block_then_beside_it, adds_the_last_wrapping_around, differences_guarded_at_the_end,
         records_the_maximum_of_the_last_update]


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


def marks_at_wrapping_uint8_places(a):
    for i in range(10):
        a[np.uint8(i) + np.uint8(250)] = 1.0     # 250 .. 255, 0 .. 3
    return a


def marks_at_wrapping_int8_places(a):
    for i in range(12):
        a[np.int8(i) + np.int8(120)] = 1.0       # 120 .. 127, then -128 ..: from the end
    return a


def marks_at_wrapping_uint32_places(a):
    for i in range(12):
        a[(np.uint32(i) + np.uint32(4294967290)) % np.uint32(300)] = 1.0
    return a


@pytest.mark.parametrize("fn", [marks_at_wrapping_uint8_places, marks_at_wrapping_int8_places,
                                marks_at_wrapping_uint32_places], ids=lambda fn: fn.__name__)
def test_places_computed_from_the_counter_in_narrow_integers_wrap_as_numpys(fn):
    """Loop raising computed such places for all trips at once without the types' wrapping (row 294 for
    row 250); optimize=False was right."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (NumPy's overflow warnings for the int8 sum)
        want = fn(np.zeros(300))
        got = cf.jit(fn)(np.zeros(300))
    np.testing.assert_array_equal(np.nonzero(np.asarray(got))[0], np.nonzero(want)[0])


@pytest.mark.parametrize("fn", LOOPS, ids=lambda fn: fn.__name__)
def test_loops_cofactor_does_not_take_apart_stay_one_rolled_loop(fn):
    """A read whose place the analysis cannot tell (a wrapped index, a modulo) leaves the loop as it is,
    rolled: it was once an exception that unrolled the loop (with a warning, and a long compile)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = cf.compile(fn, *_inputs(fn, np.random.default_rng(0)), optimize=True)
    assert "stablehlo.while" in compiled.raw_mlir


def running_max_taking_ties(x):
    out, best = np.empty_like(x), -np.inf
    for i in range(x.shape[0]):
        if x[i] >= best:                 # (an equal value replaces it: 0.0 after -0.0)
            best = x[i]
        out[i] = best
    return out, best


def flags_new_records(x):
    out, best, count = np.empty_like(x), -np.inf, 0
    for i in range(x.shape[0]):
        better = x[i] > best
        count = count + better           # (the comparison used for more than the maximum)
        if better:
            best = x[i]
        out[i] = best
    return out, count


def reads_back_the_running_sums(k):
    out, total, s = np.zeros_like(k), 0, 0
    for i in range(k.shape[0]):
        s += k[i]
        out[i] = s
        total = total + out.sum()        # (the array read after the running number is written)
    return total


@pytest.mark.parametrize("fn", [running_max, running_max_by_if, running_min_of_np_minimum, running_sum,
                                running_max_taking_ties, flags_new_records], ids=lambda fn: fn.__name__)
def test_running_values_through_nan_and_infinities(fn):
    """Python's max() keeps the running value where an element is NaN, and NaN once it starts NaN,
    and the earlier of -0.0 and 0.0; np.minimum and + carry NaN on: the scan that replaces the loop
    does what the loop does."""
    compiled = cf.jit(fn)
    for x in ([1.0, np.nan, 3.0, -np.inf, np.nan, 2.0, 5.0, 0.5, 7.0, np.inf, 1.0],
              [np.nan, 1.0, 3.0, 2.0, np.nan, 4.0, 0.0, -1.0, 8.0, 9.0, 1.0],
              [-0.0, 0.0, -1.0, -np.inf, -2.0, 3.0, np.nan, np.nan, 4.0, -5.0, 6.0],
              [-0.0, 0.0] * 6, [0.0, -0.0] * 6):
        want, got = fn(np.array(x)), compiled(np.array(x))
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-15)  # (NaN where NumPy has NaN)
            if fn is not running_min_of_np_minimum:  # (np.minimum's zero sign is XLA's, loop or not)
                np.testing.assert_array_equal(np.signbit(np.asarray(g)), np.signbit(w))


def test_a_running_sum_read_back_in_the_loop():
    k = np.arange(1, 13)
    assert int(cf.jit(reads_back_the_running_sums)(k)) == reads_back_the_running_sums(k)


@pytest.mark.parametrize("fn", RAISED, ids=lambda fn: fn.__name__)
def test_independent_element_loops_become_tensor_operations(fn):
    compiled = cf.compile(fn, *_inputs(fn, np.random.default_rng(0)), optimize=True)
    assert "stablehlo.while" in compiled.raw_mlir and "stablehlo.while" not in compiled.mlir


@pytest.mark.parametrize("fn", [prefix_recurrence, carried_in_place, reads_a_written_element, scales_by_a_running_sum,
                                branches_write_different_places], ids=lambda fn: fn.__name__)
def test_loops_with_a_carried_dependency_stay_loops(fn):
    compiled = cf.compile(fn, *_inputs(fn, np.random.default_rng(0)), optimize=True)
    assert compiled.mlir.count("stablehlo.while") == 1


def _running_numpy_extremum(fn, number_first):
    def running(x, m):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            m = fn(m, x[i]) if number_first else fn(x[i], m)
            out[i] = m
        return out, m
    return running


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("fn, number_first", [(np.maximum, True), (np.maximum, False), (np.minimum, True),
                                              (np.minimum, False)])
def test_running_numpy_maximum_keeps_numpys_zero_signs_and_nan_as_a_scan(fn, number_first, dtype):
    """np.maximum is NumPy's select (of -0.0 and 0.0 the second; float16 the first), also as a scan."""
    running = _running_numpy_extremum(fn, number_first)
    rng = np.random.default_rng(3)
    values = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 2.0], dtype)
    compiled = cf.jit(running)
    for _ in range(6):
        x, m = rng.choice(values, 20), dtype(rng.choice(values))
        for w, g in zip(running(x, m), compiled(x, m)):
            g = np.asarray(g)
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
    assert "stablehlo.while" not in cf.compile(running, x, m).mlir
