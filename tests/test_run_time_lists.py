"""Lists appended to under a traced condition in a loop (a filter): the loop stays rolled, and the
list has the length the program gives it when it runs (tracing/histories.py, numpy/extent_lists.py).
Each program runs with NumPy and compiled on inputs that take every path (none kept, some, all)."""
import copy
import warnings

import numpy as np
import pytest

import cofactor as cf


def collect_positive_indices(a):
    found = []
    for i in range(3):
        if a[i] > 0:                  # traced: the list's length depends on the data
            found.append(i)
    return found


def peaks(x):
    out = []
    for i in range(1, len(x) - 1):
        if x[i] > x[i - 1] and x[i] > x[i + 1]:
            out.append(i)
    return np.array(out, dtype=np.int64), out


def kept_and_doubled(x):
    vals = [0.0]                      # an item before the loop: a Python float among NumPy scalars
    for v in x:
        if v > 0:
            vals.append(v)
        elif v < -1:
            vals.append(v * 2)
    return len(vals), sum(vals), np.mean(vals), vals[-1], vals[0]


def largest_kept(x, t):
    hits = []
    for i in range(x.shape[0]):
        if x[i] > t:
            hits.append(x[i] * 2)
    if hits:
        m = max(hits)
    else:
        m = -1.0
    return m, len(hits), np.sum(hits)


def rows_kept(m):
    keep = []
    for i in range(m.shape[0]):
        if m[i].sum() > 0:
            keep.append(m[i] * 1.0)   # a new array each trip
    return keep, len(keep)


def primes_below(n_arr):
    flags = np.ones(n_arr.shape[0], dtype=bool)
    flags[:2] = False
    for k in range(2, n_arr.shape[0]):
        if flags[k]:
            flags[k * k::k] = False   # (a rolled loop: a start and a step known only at run time)
    primes = []
    for k in range(n_arr.shape[0]):
        if flags[k] and n_arr[k] >= 0:
            primes.append(k)
    total = 0
    for p in primes:                  # a loop over the list: its run-time length
        total += p
    return primes, total


def run_lengths(x):
    values, counts = [], []
    cur, cnt = x[0], 1
    for v in x[1:]:
        if v == cur:
            cnt += 1
        else:
            values.append(cur)
            counts.append(cnt)
            cur, cnt = v, 1
    values.append(cur)                # after the loop: at its run-time end
    counts.append(cnt)
    return np.array(values), np.array(counts)


def two_lists(x):
    small, large = [], []
    for i in range(x.shape[0]):
        if abs(x[i]) < 0.5:
            small.append(x[i])
        else:
            large.append(i)
            large.append(-i)          # two appends in one trip
    return np.array(small, dtype=np.float64), large, (small[0] if small else 0.0)


def _inputs(rng, shape):
    return [rng.normal(size=shape), np.abs(rng.normal(size=shape)) + 0.6, -np.abs(rng.normal(size=shape)) - 2]


def _same(want, got, where):
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), (where, want, got)
        for w, g in zip(want, got):
            _same(w, g, where)
        return
    w, g = np.asarray(want), np.asarray(got)
    assert g.shape == w.shape, (where, want, got)
    assert g.dtype == w.dtype or w.dtype.kind == g.dtype.kind == "f" and not isinstance(want, np.ndarray), \
        (where, w.dtype, g.dtype)
    np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=where)


@pytest.mark.parametrize("fn", [collect_positive_indices, peaks, kept_and_doubled, rows_kept, run_lengths, two_lists],
                         ids=lambda fn: fn.__name__)
def test_a_list_a_loop_appends_to_under_a_traced_condition(fn):
    rng = np.random.default_rng(7)
    compiled = cf.jit(fn)
    for x in _inputs(rng, (5, 3) if fn is rows_kept else 12):
        if fn is run_lengths:
            x = np.round(x)
        want, got = fn(copy.deepcopy(x)), compiled(copy.deepcopy(x))
        _same(want, got, fn.__name__)
    assert len(compiled.cache) == 1


def test_the_list_counts_in_a_short_loop_and_tests_as_a_list():
    compiled = cf.jit(largest_kept)
    for x, t in [(np.array([0.1, 0.9, 0.7]), 0.5), (np.array([0.1, 0.2, 0.3]), 0.5)]:
        _same(largest_kept(x, t), compiled(x, t), "largest_kept")


def test_a_list_of_primes_by_a_sieve():
    n = np.zeros(30)
    n[[5, 7]] = -1.0
    _same(primes_below(n), cf.jit(primes_below)(n), "primes_below")


def test_the_loop_stays_one_rolled_loop():
    mlir = cf.compile(peaks, np.zeros(40)).mlir
    assert mlir.count("stablehlo.while") == 1


def concatenated(x):
    out = []
    for v in x:
        if v > 0:
            out.append(v)
    return out + [1.0]


def compared(x):
    out = []
    for v in x:
        if v > 0:
            out.append(v)
    return out == []


def popped(x):
    out = []
    for v in x:
        if v > 0:
            out.append(v)
    return out.pop()


@pytest.mark.parametrize("fn, words", [(concatenated, r"operator \+"), (compared, "operator =="),
                                       (popped, r"list.pop\(\)")], ids=lambda v: getattr(v, "__name__", ""))
def test_python_list_operations_on_it_are_a_clear_error(fn, words):
    """As an array's, they would give another answer (+ adds, == compares items)."""
    with pytest.raises(cf.UnsupportedError, match=f"{words} of a list whose length is known only when"):
        cf.jit(fn)(np.arange(-2.0, 3.0))


def test_an_empty_list_of_arrays_made_an_array_is_an_error_when_it_runs():
    """NumPy's np.array([]) has shape (0,), not (0, 3)."""
    def f(m):
        keep = []
        for i in range(m.shape[0]):
            if m[i].sum() > 0:
                keep.append(m[i] * 1.0)
        return np.array(keep)
    compiled = cf.jit(f)
    m = np.ones((4, 3))
    np.testing.assert_array_equal(compiled(m), f(m))
    with pytest.raises(cf.UnsupportedError, match=r"NumPy's is float64 of shape \(0,\)"):
        compiled(-m)


def columns_but_one(x, k):
    cols = []
    for j in range(x.shape[1]):
        if j != k:                    # the counter alone: decided as Python, the loop unrolled
            cols.append(j)
    return np.zeros(len(cols)) + x[:, cols].sum()


def every_third(x):
    ev = []
    for i in range(20):
        if i % 3 == 0:
            ev.append(x[i % 4])
    return np.zeros(len(ev)), np.array(ev)


def test_a_list_appended_to_under_ifs_on_the_loop_counter_alone_keeps_its_static_length():
    """(Its length sizes another array, as in NumPy.)"""
    x = np.arange(15.0).reshape(3, 5)
    _same(columns_but_one(x, 2), cf.jit(columns_but_one)(x, 2), "columns_but_one")
    with pytest.warns(cf.UnrolledLoopWarning):
        _same(every_third(x[0]), cf.jit(every_third)(x[0]), "every_third")


def comprehensions(x, m, t):
    positives = np.array([v for v in x if v > 0])
    count = sum(1 for v in x if v > t)
    indices = [i for i in range(len(x)) if x[i] > 0]
    halves = len([v * 2 for v in x if v < 0 if v > -1])
    per_row = 0.0
    for row in m:
        per_row += sum(v for v in row if v > 0)   # (inside a loop)
    v = 3.0
    kept = [v for v in x if v > t]                # (its variable does not leak)
    return positives, count, indices, halves, per_row, v, kept


def static_comprehensions(x, k):
    return [i for i in range(8) if i != k], [x[i] for i in range(20) if i % 3 == 0], \
        len([w for w in ("a", "abc", "abcd") if len(w) > 2])


def test_a_comprehension_that_filters_on_traced_values():
    """Written as the loop it is (convert/comprehensions.py): the list has its run-time length."""
    rng = np.random.default_rng(5)
    compiled = cf.jit(comprehensions)
    for x in _inputs(rng, 9):
        m = rng.normal(size=(3, 4))
        _same(comprehensions(x, m, 0.1), compiled(x, m, 0.1), "comprehensions")


def test_a_comprehension_whose_test_python_decides_is_a_list_and_warns_of_no_loop():
    x = np.arange(20.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cf.UnrolledLoopWarning)
        _same(static_comprehensions(x, 3), cf.jit(static_comprehensions)(x, 3), "static_comprehensions")
    with pytest.raises(cf.TracingError, match="a list changes length"):   # (tuples: not counted)
        cf.jit(pairs_kept)(x)


def pairs_kept(x):
    return len([(i, v) for i, v in enumerate(x) if v > 0])


def sorted_first(x, t):
    r = (x.sort(), [v for v in x if v > t])   # (the sort runs first: the comprehension stays where it is)
    return np.array(r[1])


def walrus_first(x, t):
    m = 0.0
    return (m := x.max()) + sum(v for v in x if v > m / 2)


def _centered(a):
    a -= a.mean()
    return a.std()


def helper_first(x, t):
    return _centered(x) + sum(1 for v in x if v > t)


def stored_generator(x, t):
    g = (v for v in x if v > t)               # (lazy: it sees the write below)
    x *= 2
    return sum(g)


@pytest.mark.parametrize("fn", [sorted_first, walrus_first, helper_first, stored_generator],
                         ids=lambda fn: fn.__name__)
def test_a_comprehension_after_what_could_change_what_it_reads_is_not_moved_before_it(fn):
    """Python evaluates a call or a := to its left first, and a stored generator expression later: moved
    before the statement it read the values from before them (silently); where it stays, its traced test
    is the clear error it was."""
    with pytest.raises(cf.ConcretizationError, match="the if clause of the comprehension"):
        cf.jit(fn)(np.array([0.5, -0.2, 0.9, 0.1, 0.3]), 0.0)


def first_kept(x, t):
    return next((v for v in x if v > t), -1.0), next(i for i in range(len(x)) if x[i] > -100)


def empty_ints(x, t):
    idx = []
    for i in range(len(x)):
        if x[i] > t:
            idx.append(i)
    return np.array(idx)


def in_a_traced_branch(x, t):
    n = 0
    if x[0] > 0:
        n = len([v for v in x if v > t])
    return n


def test_next_of_a_filtering_generator_an_empty_list_and_a_filter_in_a_branch():
    x = np.array([-0.5, 0.2, 0.9])
    for t in (0.0, 5.0):
        _same(first_kept(x, t), cf.jit(first_kept)(x, t), "first_kept")
        _same(in_a_traced_branch(x, t), cf.jit(in_a_traced_branch)(x, t), "in_a_traced_branch")
        _same(in_a_traced_branch(-x, t), cf.jit(in_a_traced_branch)(-x, t), "in_a_traced_branch")
    np.testing.assert_array_equal(np.asarray(cf.jit(empty_ints)(x, 0.0)), empty_ints(x, 0.0))
    with pytest.raises(cf.UnsupportedError, match="NumPy's is float64 of shape"):  # (np.array([]) is float64)
        cf.jit(empty_ints)(x, 5.0)


def group_sums(x, labels):
    sums = []
    for c in np.unique(labels):               # a loop of a run-time trip count: every append counts
        sums.append(x[labels == c].sum())
    repeated = []
    values, counts = np.unique(labels, return_counts=True)
    for c, n in zip(values, counts):
        if n > 1:
            repeated.append(c)
    return np.array(sums), len(sums), repeated


def test_a_list_a_loop_over_an_array_of_run_time_length_appends_to():
    x = np.arange(8.0)
    for labels in (np.array([3, 1, 3, 7, 1, 1, 9, 3]), np.array([2, 4, 6, 8, 1, 3, 5, 7])):
        _same(group_sums(x, labels), cf.jit(group_sums)(x, labels), "group_sums")


def skipped_by_continue(x):
    out = []
    for v in x:
        if v < 0:
            continue                          # (the append after it is under a traced test)
        out.append(v * 2)
    return np.array(out)


def until_a_break(x):
    out, kept = [], []
    for i in range(len(x)):
        if x[i] > 2:
            break                             # (how many trips run is known only at run time)
        out.append(x[i])
        if x[i] > 0:
            kept.append(i)
    return np.array(out), kept


def test_a_loop_with_a_continue_or_a_break_that_appends():
    for x in (np.array([0.5, -1.0, 1.5, 3.0, 0.7]), np.array([3.5, 1.0]), np.array([-1.0, 0.5, 1.0])):
        _same(skipped_by_continue(x), cf.jit(skipped_by_continue)(x), "skipped_by_continue")
        _same(until_a_break(x), cf.jit(until_a_break)(x), "until_a_break")


def filters_in_loops(x, m):
    k, total = 0, 0.0
    while total < 5.0 and k < 10:             # (a traced loop around a filter: traced again, the same buffer)
        total += len([v for v in x if v > k * 0.1])
        k += 1
    best = 0.0
    for row in m:
        positives = [v for v in row if v > 0]
        if positives:
            best += max(positives)
    return total, k, best


def test_filters_inside_loops():
    rng = np.random.default_rng(1)
    for x in (np.array([0.05, 0.35, 0.9, -1.0]), np.array([0.95, 0.9, 0.8, 0.99])):
        m = rng.normal(size=(4, 3))
        _same(filters_in_loops(x, m), cf.jit(filters_in_loops)(x, m), "filters_in_loops")


def rows_joined(m):
    rows = []
    for i in range(m.shape[0]):
        if m[i].sum() > 0:
            rows.append(m[i] * 2.0)
    return np.vstack(rows), np.stack(rows, axis=1), np.concatenate(rows), np.hstack(rows), np.column_stack(rows)


def test_the_rows_a_filter_collected_joined_by_numpy():
    m = np.array([[1.0, 2, 3], [-5, 1, 1], [0.5, 0.5, 0.5], [-1, -1, -1]])
    _same(rows_joined(m), cf.jit(rows_joined)(m), "rows_joined")


def _collect_into(x, t, out):
    for v in x:
        if v > t:
            out.append(v)


def filled_by_a_helper(x, t):
    out = []
    _collect_into(x, t, out)                 # (the caller holds the list: not collected, a clear error)
    return len(out)


def held_by_a_tuple(x, t):
    out = []
    pair = (out, 0)                           # (a tuple holds it: a clear error)
    for v in x:
        if v > t:
            out.append(v)
    return len(pair[0])


def written_through_a_positional_out(x, t):
    return np.sum(np.abs(x, x)) + sum(1 for v in x if v > t)   # (np.abs(x, x) writes x first)


def stops_at_the_first(x, t):
    return next((x[i + 1] - x[i] for i in range(len(x)) if x[i] > t), 0.0)   # (x[i + 1] past the end later)


@pytest.mark.parametrize("fn, error", [(filled_by_a_helper, cf.TracingError), (held_by_a_tuple, cf.TracingError),
                                       (written_through_a_positional_out, cf.ConcretizationError),
                                       (stops_at_the_first, cf.ConcretizationError)],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_what_a_collected_list_or_a_moved_comprehension_would_get_wrong_is_a_clear_error(fn, error):
    """(Each gave a wrong answer, silently, or an error Python does not raise: the caller's list stayed empty,
    the tuple's too, the comprehension read x before np.abs wrote it, every item's x[i + 1] was read.)"""
    with pytest.raises(error):
        cf.jit(fn)(np.array([1.0, -2.0, 3.0, -4.0]), 0.5)


_X32, _I8 = np.ones(2, np.float32), np.ones(2, np.int8)


def python_numbers_summed(x, t):
    kept = []
    for v in x:
        if v > t:
            kept.append(float(v))
    return _X32 * sum(kept), _I8 + sum(1 for v in x if v > t), _X32 * max(kept), sum(kept, 0.0)


def returns_when_tested(x, t):
    if len([v for v in x if v > t]) > 1:
        return 1
    return 0


def test_sums_of_python_numbers_and_a_filter_in_an_if_test():
    x = np.array([0.5, -1.0, 0.9])
    _same(python_numbers_summed(x, 0.0), cf.jit(python_numbers_summed)(x, 0.0), "python_numbers_summed")
    with pytest.raises(cf.UnsupportedError, match="Python's is the int 0"):   # (the path decides its type)
        cf.jit(python_numbers_summed)(x, 5.0)
    for t in (0.0, 2.0):
        _same(returns_when_tested(x, t), cf.jit(returns_when_tested)(x, t), "returns_when_tested")
