"""In-place updates, views and write-back, compared against NumPy run on copies of the arguments."""
import copy
import warnings

import numpy as np
import pytest

import cofactor as cf

rng = np.random.default_rng(7)


def check_mutation(f, *args, device=False, **options):
    """Run f in NumPy on copies and through cofactor; compare results and every argument after."""
    expected_args = [a.copy() for a in args]
    expected = f(*expected_args)
    given = [cf.to_device(a) for a in args] if device else [a.copy() for a in args]
    got = cf.jit(f, **options)(*given)
    for g, e in zip(given, expected_args):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12, atol=0)
        assert np.asarray(g).dtype == e.dtype
    if expected is not None:
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12)
        assert np.asarray(got).dtype == np.asarray(expected).dtype
    return given


def slice_updates(a, b):
    a[1:-1] += 0.5 * b[1:-1]
    a[0] = 7
    a[::2] = a[::2] * 2
    a[::-3] = 1.5
    b[-2:] -= a[:2]


def view_writes(m):
    row = m[0]
    row *= 2            # a view: changes m
    m[1] = m[0] + 1     # reads the updated row
    m[:, 2] = 3
    r = m[2]
    r[1:] = 9           # view of a view
    m.T[0] = -1         # through a transpose
    col = m[..., None][1:, 3, 0]
    col += 100          # through None and Ellipsis
    m[m > 50] = 0       # boolean mask
    flipped = np.flip(m, 1)
    flipped[3, 0] = 0.25


def returns_its_argument(x):
    x *= 3
    x[0] = -1
    return x


def traced_index_writes(a, i):
    a[i] = 5.0
    a[-1] += a[i]


@pytest.mark.parametrize("device", [False, True], ids=["numpy", "ConcreteArray"])
def test_slice_updates(device):
    check_mutation(slice_updates, rng.standard_normal(10), rng.standard_normal(10), device=device)


@pytest.mark.parametrize("device", [False, True], ids=["numpy", "ConcreteArray"])
def test_writes_through_views(device):
    check_mutation(view_writes, rng.standard_normal((4, 4)) * 20, device=device)


@pytest.mark.parametrize("device", [False, True], ids=["numpy", "ConcreteArray"])
def test_returned_argument_equals_the_updated_argument(device):
    given = check_mutation(returns_its_argument, rng.standard_normal(5), device=device)
    assert given[0].shape == (5,)


def test_donated_concrete_array_is_rebound_not_copied():
    x = cf.to_device(np.arange(4.0))
    old = x.buffer
    cf.jit(returns_its_argument)(x)
    assert old.is_deleted() and not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), [-1.0, 3.0, 6.0, 9.0])


def test_traced_integer_index_reads_and_writes():
    def f(a, i):
        traced_index_writes(a, i)
        return a[i]

    fj = cf.jit(f)
    for i in [np.int64(2), np.int64(-3)]:  # NumPy scalars are traced, so one compile serves both
        a, e = rng.standard_normal(6), None
        e = a.copy()
        want = f(e, i)
        got = fj(a, i)
        np.testing.assert_allclose(a, e, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    assert len(fj.cache) == 1


def test_complex_parts_are_views():
    def f(z):
        z.imag[1] = 5
        z.real *= 2

    check_mutation(f, rng.standard_normal(4) + 1j * rng.standard_normal(4))


def test_assignment_casts_like_numpy():
    def f(a, b):
        a[0] = 2.7          # float into int: truncates
        a[1:3] = b[:2]      # float array into int array
        b[0] = True

    check_mutation(f, np.arange(5, dtype=np.int32), rng.standard_normal(3) * 10)


def test_assignment_errors_are_numpys():
    def too_long(a):
        a[:2] = np.ones(3)

    with pytest.raises(ValueError, match="could not broadcast input array from shape"):
        cf.jit(too_long)(np.zeros(4))
    with pytest.raises(OverflowError):
        cf.jit(lambda a: a.__setitem__(0, 300))(np.zeros(3, dtype=np.int8))
    with pytest.raises(TypeError):  # NumPy's out= casting rule for in-place operators
        cf.jit(lambda a: a.__iadd__(1.5))(np.zeros(3, dtype=np.int32))
    with pytest.raises(ValueError, match="read-only"):
        cf.jit(lambda a: np.broadcast_to(a, (2, 3)).__setitem__(0, 1))(np.zeros(3))


def _stored(index):
    def store(y, v):
        if index == "fill":
            y.fill(v[()])
        else:
            y[index] = v[()]        # v[()] of a 0-d argument: a traced NumPy scalar
        return y
    return store


def _outcome(fn, *args):
    try:
        return "returned", np.asarray(fn(*args))
    except Exception as e:  # noqa: BLE001  (the test compares NumPy's exception with cofactor's)
        return type(e).__name__, str(e).split("\n")[0]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("index", [0, slice(None), Ellipsis, "fill"], ids=["element", "slice", "ellipsis", "fill"])
def test_a_number_stored_into_an_int_array_raises_as_numpy_s_conversion_to_a_python_int(dtype, index):
    """NumPy converts a NumPy scalar (or Python number) it stores into an integer array to a Python int
    first: NaN, infinities and values outside the dtype's range raise (a NumPy scalar wraps into an
    unsigned array).  Checked at run time for a traced scalar, at trace time for a constant one."""
    values = [np.int64(300), np.int64(-1), np.int64(2 ** 40), np.uint64(2 ** 63), np.float32(300.5),
              np.float64(-1.5), np.float64(-129.5), np.float64(-128.9), np.float64(np.nan), np.float64(np.inf),
              np.float32(1e30), np.float64(1e19), np.int16(-200)]
    store = _stored(index)
    compiled = cf.jit(store)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's cast warnings
        for v in values:
            want = _outcome(store, np.zeros(3, dtype), np.array(v))
            got = _outcome(compiled, np.zeros(3, dtype), np.array(v))
            constant = _outcome(cf.jit(lambda y: store(y, np.array(v))), np.zeros(3, dtype))
            for outcome in (got, constant):
                assert outcome[0] == want[0], (v, want, outcome)
                if want[0] == "returned":
                    np.testing.assert_array_equal(outcome[1], want[1], err_msg=repr(v))
                else:
                    assert outcome[1] == want[1], (v, want, outcome)


def test_same_array_passed_twice_is_one_array():
    def f(a, b):
        a[0] = 100
        return b.sum()

    x = np.ones(3)
    got = cf.jit(f)(x, x)
    assert float(np.asarray(got)) == 102.0 and x[0] == 100


def test_overlapping_numpy_arguments_are_refused():
    def f(a, b):
        a[0] = 1

    base = np.zeros(4)
    with pytest.raises(cf.UnsupportedError, match="shares memory"):
        cf.jit(f)(base[:2], base[1:3])


def test_read_only_numpy_argument_is_refused():
    x = np.zeros(3)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        cf.jit(returns_its_argument)(x)


def test_fill_updates_the_argument():
    def f(a):
        a[1:].fill(4)

    check_mutation(f, rng.standard_normal(4))


def test_three_point_stencil_60_steps_on_two_arrays():
    """Time-stepped slice updates (issue check): NumPy's arrays to 1e-12 after 60 steps."""
    def stencil(a, b):
        for _ in range(60):
            b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
            a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])

    check_mutation(stencil, rng.standard_normal(32), rng.standard_normal(32))


def test_traced_mask_writes_of_arrays_take_as_many_values_as_the_mask_selects():
    def write(a):
        a[a > 0] = np.arange(4.0)

    a = np.ones(4)
    cf.jit(write)(a)
    np.testing.assert_array_equal(a, np.arange(4.0))
    with pytest.raises(ValueError):  # NumPy: cannot assign 4 input values to the 0 output values
        cf.jit(write)(np.zeros(4))


def overlap_row_into_column(m):
    m[1, 1:4] = m[:3, -1]        # NumPy copies element by element, last first: [3, 11, 11], not a copy's [3, 7, 11]


def overlap_column_into_row(m):
    m[0, :3] = m[:3, 0]


def overlap_row_into_reversed_column(m):
    m[2::-1, 0] = m[0, 1:4]


def overlap_strided_shift(m):
    flat = m.reshape(-1)
    flat[3::3] = flat[:-3:3]


def overlap_through_transpose(m):
    m.T[0] = m[:, 1]             # no overlap, to be sure nothing changes there


def overlap_rows_in_a_loop(m):
    for row in m:                # the rows of m while m's last column changes (seed 67139)
        row[1:4] = m[:3, 3]


def overlap_traced_row_and_column(m):
    for i in range(12):          # rolled: NumPy's order depends on i at run time
        m[i % 4, :3] = m[1:4, 2]


def symmetric_fill(m):
    n = m.shape[0]
    for i in range(n):           # a row from a column (through a traced index when rolled): a copy's result
        m[i, :n] = m[:, i]


def shift_rows(m):
    for i in range(9):           # the same strides: memmove's order, a copy's result
        m[(i + 1) % 4] = m[i % 4]


@pytest.mark.parametrize("f", [overlap_row_into_column, overlap_column_into_row, overlap_row_into_reversed_column,
                               overlap_strided_shift, overlap_through_transpose, overlap_rows_in_a_loop,
                               overlap_traced_row_and_column, symmetric_fill,
                               shift_rows],
                         ids=lambda f: f.__name__)
def test_overlapping_assignment_is_numpys(f):
    """NumPy assigns overlapping views of one array without a temporary copy where their strides run
    the same way, so the result is not a copy's: cofactor gives NumPy's (known at trace time, or
    through a traced index, at run time)."""
    check_mutation(f, rng.normal(size=(4, 4)))
    check_mutation(f, np.arange(121.0).reshape(11, 11))  # 11 rows: loops over them are rolled


# --- an element read after an element write (ir/ops.py reads it from the array before the write, or
# takes the written value where the positions are the same) -------------------------------------------

def element_sweep(m):
    n = m.shape[0]
    for i in range(n):           # rolled: (i, j) and (j, i) meet on the diagonal
        for j in range(n):
            m[i, j] = m[i, j] * 0.5 + m[j, i]
            m[j, j] -= m[i, j] * 0.01


def element_chain(a):
    a[0] = 1.5
    a[1] = a[0] * 2      # known positions: resolved while tracing
    a[-1] = a[1] + a[0]
    a[2] += a[-1]


def element_cross(a, i, k):
    a[i] = a[k] + 1       # traced positions, equal on some calls
    a[k] *= 3
    return a[i] - a[k], a[2 * i % 5]


def element_after_blocks(m, i, row):
    m[...] = row          # blocks written, each element read right after them (fuzz seed 152)
    r0 = m[i % 4, 1]
    m[1, :] = m[i % 4] * 2             # a row at a known position
    r1, r2, r3 = m[1, 2], m[0, 0], m[i % 4, 3]
    m[:, i % 4] += 1                   # a column at a traced position
    return r0, r1, r2, r3, m[2, 0], m[i % 3, 2]


def element_column(m, i):
    m[i, 0] = 7.0         # one position known, one traced
    m[1, 0] += m[i, 0] * m[1, 0]
    return m[i, 0], m[1, 1]


def blocks_after_elements(m, i, k):
    m[i, k] = 7.0          # traced positions: inside row i, the row of i % 4, column k; known: not in row 3's
    m[2, 1] -= 1.0
    r = m[i % 4] * 1       # a row at a traced start
    c = m[:, k] + 0        # a column
    m[i, 0] += m[1:3, :].sum()         # a block at known starts, then one past a write to a block
    m[1:3, i % 2] = 0.5
    return r, c, m[3] + m[2:, 1:3].ravel().sum(), m[i % 4, 1:] * 2


def _same_within_rounding(got, want):
    """Equal for integers; for floats, a few roundings apart (XLA may fuse a product into a sum)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    tolerance = 0 if want.dtype.kind in "iub" else 100 * np.finfo(want.dtype).eps
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * 100)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_element_reads_after_element_writes(dtype):
    calls = [(element_sweep, (rng.normal(size=(n, n)) * 10).astype(dtype)) for n in (4, 11)]  # 11: rolled
    calls.append((element_chain, (rng.normal(size=6) * 10).astype(dtype)))
    calls += [(element_cross, (rng.normal(size=5) * 10).astype(dtype), np.int64(i), np.int64(k))
              for i, k in [(1, 1), (1, 3), (4, -1), (-2, 3)]]
    calls += [(element_column, (rng.normal(size=(4, 4)) * 10).astype(dtype), np.int64(i)) for i in (0, 1, 3)]
    calls += [(element_after_blocks, (rng.normal(size=(4, 4)) * 10).astype(dtype), np.int64(i),
               (rng.normal(size=4) * 10).astype(dtype)) for i in (0, 1, 6)]
    calls += [(blocks_after_elements, (rng.normal(size=(4, 4)) * 10).astype(dtype), np.int64(i), np.int64(k))
              for i, k in [(0, 0), (1, 3), (2, 1), (3, -1), (-2, 2)]]
    for f, a, *indices in calls:
        expected = a.copy()
        want = f(expected, *indices)
        got = cf.jit(f)(a, *indices)
        _same_within_rounding(a, expected)
        for g, w in zip(got or (), want or ()):
            _same_within_rounding(g, w)


def test_an_element_loop_does_not_copy_its_array_each_step():
    """Cholesky writes A[i, j] and then reads A[j, j]: read from the array before the write, XLA
    updates A in place instead of copying all of it on each step (only the argument is copied).
    Gram-Schmidt writes R[k, k], then through R[k, k + 1:] (reading row k for the lanes it keeps):
    the row is read from R before the element write, with the element put in."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    from extent_kernels import cholesky, gram_schmidt, nussinov

    a = rng.random((30, 30))
    hlo = cf.jit(cholesky).lower(a @ a.T + 30 * np.eye(30)).xla_hlo()
    assert hlo.count("f64[30,30]{1,0} copy(") == 1, hlo
    assert "f64[30,30]{1,0} copy(" not in cf.jit(gram_schmidt).lower(rng.random((32, 30))).xla_hlo()
    # Nussinov writes table[i, j] three times, then reads its row and column: read from before all
    # three (reading from before the last one only kept the others live: a third copy per step)
    hlo = cf.jit(nussinov).lower(rng.integers(0, 4, 30)).xla_hlo()
    assert hlo.count("s32[30,30]{1,0} copy(") == 2, hlo


@pytest.mark.parametrize("step", [-1, -2])
def test_in_place_updates_through_reversed_slices_past_either_end(step):
    """Slices whose start lies past the array's start with a negative step are empty (a[-6:6:-1] of
    five elements: NumPy's start is -1, which a Python slice reads as the last element)."""
    for start in (-7, -6, -1, 0, 6, None):
        for stop in (-7, 0, 6, None):
            def update(a, index=slice(start, stop, step)):
                a[index] //= -4.0
                return a[index] * 2
            check_mutation(update, np.arange(5.0) - 2)


def shift_then_reshaped_update(c, n):
    c[1:] = c[:-1]
    c.reshape(1, 5)[::-1] += n
    return c + c


def reverse_then_reshaped_update(c, n):
    c[:3] = c[:3][::-1]
    c.reshape(1, 5)[::-1] += n
    return c + c


@pytest.mark.parametrize("optimize", ["auto", False])
@pytest.mark.parametrize("fn", [shift_then_reshaped_update, reverse_then_reshaped_update], ids=lambda f: f.__name__)
def test_an_argument_updated_from_itself_then_through_a_reshape(fn, optimize):
    """XLA's CPU backend, given the unoptimized program, updated the argument in place while reading
    it (fuzz seed 9926711: c[:3] = c[:3][::-1] left [7, -1, 7])."""
    check_mutation(fn, np.array([0, -1, 7, 8, -1]), np.array(4), optimize=optimize)


def _fortran(shape=(2, 3)):
    return np.asfortranarray(np.arange(6.0).reshape(shape))


def _transposed(shape=(2, 3)):
    return np.arange(6.0).reshape(shape).T


def _column():
    return np.arange(8.0).reshape(4, 2)[:, 1]


def _reversed():
    return np.arange(6.0)[::-1]


def _reshape_then_write(x):
    y = x.reshape(-1)              # a copy in NumPy where x is not C-contiguous, a view where it is
    x[(0,) * x.ndim] = 7.0
    return y


def _write_through_ravel(x):
    x.ravel()[1] = 99.0
    return x.sum()


def _write_through_the_transposes_reshape(x):
    x.T.reshape(-1)[1] = 99.0      # x.T of a Fortran-order x is C-contiguous: a view
    return x.sum()


def _flattened_before_an_update(x):
    flat = x.reshape(-1)
    x -= x.mean()
    return flat


def _made_arrays_keep_numpys_order(x):
    y = x * 2                       # a ufunc's result keeps its inputs' memory order (order="K")
    y.reshape(-1)[0] = 100.0
    f = x.copy(order="F")
    f.reshape(-1, order="F")[1] = 5.0
    z = np.zeros((2, 2), order="F")
    z.ravel()[0] = 1.0
    return y, f, z, np.copy(x.T) + np.zeros_like(x.T)


@pytest.mark.parametrize("make", [_fortran, _transposed, _column, _reversed, lambda: np.arange(6.0).reshape(2, 3)],
                         ids=["fortran", "transposed", "column", "reversed", "c"])
@pytest.mark.parametrize("f", [_reshape_then_write, _write_through_ravel, _write_through_the_transposes_reshape,
                               _flattened_before_an_update, _made_arrays_keep_numpys_order])
def test_arguments_that_are_not_c_contiguous_have_numpys_views(make, f):
    """An argument's strides decide, as in NumPy, whether a reshape or ravel of it (or of what is made
    from it) is a view that writes reach or a copy: a transpose, a column, a Fortran-order or reversed
    array passed in is not taken for a C-contiguous one."""
    if f is _made_arrays_keep_numpys_order and make().ndim != 2:
        return
    want_arg, got_arg = make(), make()
    want = f(want_arg)
    got = cf.jit(f)(got_arg)
    np.testing.assert_array_equal(got_arg, want_arg)
    for g, w in zip(got if isinstance(want, tuple) else [got], want if isinstance(want, tuple) else [want]):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_the_strides_of_arguments_are_part_of_the_signature():
    g = cf.jit(lambda x: x.ravel("K") + np.asarray(x.strides).sum())
    for x in (np.arange(6.0).reshape(2, 3), _fortran(), _transposed((3, 2)), np.arange(6.0).reshape(2, 3)):
        np.testing.assert_array_equal(np.asarray(g(x)), x.ravel("K") + np.asarray(x.strides).sum())


def test_assigning_the_shape_of_an_argument_is_a_clear_error():
    def reshaped(x):
        x.shape = (2, 3)
        return x.sum(axis=0)

    with pytest.raises(cf.UnsupportedError, match="shape"):
        cf.jit(reshaped)(np.arange(6.0))


def _asked_of_memory(x):
    lo, hi = x[:2], x[2:]
    return (np.shares_memory(lo, hi), np.may_share_memory(x[::2], x[1::2]), np.shares_memory(x[::2], x[1::2]),
            np.shares_memory(x[:3], x[2:]), np.shares_memory(x, x.reshape(2, 2).T))


def _asked_of_views_of_no_axes(t, b):
    v, w = t[...], b[1, 0, ...]
    v += 1
    return (np.shares_memory(t, v), np.may_share_memory(t, t[None]), np.shares_memory(b, w),
            np.shares_memory(b[0, ...], b[1, None]), np.shares_memory(t, t[()]), t)


def _written_through_einsum_views(t):
    m = t[0]
    d = np.einsum("ii->i", m)          # one operand, no sum: NumPy's view (the diagonal, writable)
    d += 100
    np.einsum("ij->ji", m)[0, 1] = 5
    np.einsum("...ii->...i", t)[1:] *= -1
    e = np.einsum("iji->ij", t, dtype=np.float32)   # (a view of t's dtype, whatever dtype says)
    e -= 1
    return d * 1, e.dtype == t.dtype, np.einsum("ii", m)


def _cleaned_in_place(x):
    r = np.nan_to_num(x[1:], copy=False)   # (a view of x: x's own values are replaced)
    z = x * 1j + x[::-1]
    np.nan_to_num(z, copy=False, nan=-1.0, posinf=9.0)
    k = np.arange(3)
    return r * 1, z, np.nan_to_num(k, copy=False) is k, np.nan_to_num(x[0]) + 1


def _copied_by_the_copy_module(x):
    pair = copy.deepcopy([x, x[1:], x])      # (its memo: one new array for both x's, a new view's copy)
    pair[0] += 100
    shallow = copy.copy(x)
    shallow *= -1
    same = copy.copy([x])
    same[0][0] = 7.0                         # (a shallow copy of the list holds x itself)
    return pair[2] * 1, pair[1] * 1, shallow, pair[0] is pair[2]


def _rotated_through_out(x):
    np.concatenate([x[1:], x[:1]], out=x)
    return x


def _rows_stacked_into_themselves(a):
    np.stack([a[2], a[0], a[1]], out=a)
    return a


def _sorted_then_written(x):
    y = np.sort(x, axis=0)
    y.ravel()[0] = 100.0            # a copy where y keeps x's Fortran order, as NumPy's sort does
    return y, np.where(x > 2, x, 0.0).ravel("K"), np.round(x, 1).reshape(-1)


def _windows(x):
    s = x.strides[0]
    return np.lib.stride_tricks.as_strided(x, shape=(2, 2), strides=(s, s)) * 1


def _same_strides(x):
    return np.lib.stride_tricks.as_strided(x, shape=x.shape, strides=x.strides) * 1


@pytest.mark.parametrize("f, make", [
    (_asked_of_memory, lambda: np.arange(4.0)),
    (lambda t: _asked_of_views_of_no_axes(t, np.ones((2, 3))), lambda: np.array(2.0)),
    (_written_through_einsum_views, lambda: np.arange(27.0).reshape(3, 3, 3)),
    (_cleaned_in_place, lambda: np.array([np.nan, 1.0, np.inf, -np.inf, np.nan])),
    (_copied_by_the_copy_module, lambda: np.arange(4.0)),
    (_rotated_through_out, lambda: np.arange(4.0)),
    (_rows_stacked_into_themselves, lambda: np.arange(9.0).reshape(3, 3)),
    (_sorted_then_written, _fortran),
    (_windows, lambda: np.arange(8.0)[::2]),
    (_same_strides, _transposed),
    (_same_strides, _fortran),
], ids=["shares_memory", "shares_memory_of_no_axes", "einsum_views", "nan_to_num_in_place", "copy_module", "concatenate_out", "stack_out", "sort_where_round", "windows_of_a_strided_argument",
        "as_strided_transposed", "as_strided_fortran"])
def test_memory_questions_and_overlapping_outs_are_numpys(f, make):
    """np.shares_memory is NumPy's exact answer for views of one array; np.concatenate and np.stack into an
    ``out`` they read copy the arrays in one at a time; as_strided reads the memory the array has."""
    want_arg, got_arg = make(), make()
    want, got = f(want_arg), cf.jit(f)(got_arg)
    np.testing.assert_array_equal(got_arg, want_arg)
    for g, w in zip(got if isinstance(want, tuple) else [got], want if isinstance(want, tuple) else [want]):
        np.testing.assert_array_equal(np.asarray(g), w)


def _asked_of_two_arguments(a, b, views):
    asked = (np.shares_memory(a, b), np.may_share_memory(a[::2], b[1::2]), np.shares_memory(a[::2], b[1::2]),
             np.shares_memory(views["a"], views["b"]), np.may_share_memory(a.T, views["a"]))
    if np.shares_memory(a, b):   # (the guard before writing: b's data may be a's)
        b = b * 2
    return asked, b


def test_whether_two_arguments_share_memory_is_asked_at_every_call():
    """Two arguments may be views of one array, which is not part of the signature: np.shares_memory of
    them is asked of the arrays at each call (it was False, silently, for f(x, x[2:]))."""
    f = cf.jit(_asked_of_two_arguments)
    for make in (lambda x: (x, x[2:], {"a": x[:1], "b": x[3:]}), lambda x: (x, np.ones(4), {"a": x, "b": x + 1}),
                 lambda x: (x[::-1], x[1:], {"a": x[:2], "b": x[1:]})):
        want, got = _asked_of_two_arguments(*make(np.arange(6.0))), f(*make(np.arange(6.0)))
        assert [bool(v) for v in got[0]] == list(want[0])
        np.testing.assert_array_equal(got[1], want[1])


def _assigned_sequences(v, state):
    state[:] = (v[1], v[0] * 2, 1.0)               # (a Lorenz step's state[:] = (x, y, z))
    out = np.zeros((2, 3))
    out[1:] = v[0], v[1], 3
    out[0, [0, 2]] = [v[1], 7.0]
    out[out > 1.5] = (v[0],)
    return out


def test_a_sequence_of_traced_numbers_is_assigned_as_the_array_numpy_makes_of_it():
    """(It was a ConcretizationError that told the user to create the array inside the function.)"""
    check_mutation(_assigned_sequences, np.array([1.0, 2.0]), np.zeros(3))


def test_interleaved_views_of_one_array_are_not_taken_for_overlapping_ones():
    def copies(a, b):
        a[:] = b
    want, got = np.arange(6.0), np.arange(6.0)
    copies(want[::2], want[1::2])
    cf.jit(copies)(got[::2], got[1::2])
    np.testing.assert_array_equal(got, want)
    r = cf.jit(lambda x: x * 1)(np.arange(4.0))
    with pytest.raises(cf.UnsupportedError, match="shares memory"):
        cf.jit(_add_one_and_sum_the_other)(r, np.asarray(r))    # a ConcreteArray and its host memory


def _add_one_and_sum_the_other(a, b):
    a += 1
    return b.sum()


def test_what_the_caller_decides_about_an_argument_is_a_clear_error():
    """Whether an argument views another of the caller's arrays (``.base``, ``flags.owndata``) is not
    compiled for; its layout flags are."""
    with pytest.raises(cf.UnsupportedError, match="base"):
        cf.jit(lambda x: x if x.base is None else x.copy())(np.arange(6.0)[1:4])
    with pytest.raises(cf.UnsupportedError, match="owndata"):
        cf.jit(lambda x: x.flags.owndata)(np.ones(2))
    flags = cf.jit(lambda x: (x.flags.c_contiguous, x.T.flags["F_CONTIGUOUS"], np.broadcast_to(x[0], (2, 3))
                              .flags.writeable, x[1:].flags.owndata))(np.ones((2, 3)))
    assert [bool(np.asarray(f)) for f in flags] == [True, True, False, False]


def _sets_flat(x):
    x.flat = [1.0, 2.0]
    return x


def test_array_attributes_set_as_numpy_sets_them():
    check_mutation(_sets_flat, np.zeros((2, 3)))
    for f, name in [(lambda x: setattr(x, "dtype", np.int64), "dtype"), (lambda x: setattr(x, "strides", (8,)),
                                                                           "strides")]:
        with pytest.raises(cf.UnsupportedError, match=name):
            cf.jit(f)(np.ones(2))
    with pytest.raises(cf.UnsupportedError, match="nditer"):
        cf.jit(lambda x: [v for v in np.nditer(x)])(np.ones(2))
    required = cf.jit(lambda x: np.require(x, requirements="F") * 2)(np.ones((2, 2)))
    np.testing.assert_array_equal(np.asarray(required), np.full((2, 2), 2.0))


def test_a_concrete_array_whose_buffer_was_deleted_is_the_callers_error():
    """(It gave XLA's 'Expected args ... to have 1 shards' message.)"""
    f = cf.jit(lambda a: a + 1)
    x = cf.to_device(np.arange(3.0))
    f(x), f(x)  # (the second through the hot path)
    x.buffer.delete()
    for _ in range(2):
        with pytest.raises(cf.ArgumentError, match="deleted"):
            f(x)


def _writes_an_element_of_a_possibly_empty_array(n, a):
    s = 0.0
    for i in range(n):            # a run-time trip count
        s += a[i]
        a[i] = 7.0
    for i in range(2):
        b = a[i:]                 # a run-time length
        if len(b):
            b[0] = 8.0
    return s, a


def test_an_element_of_an_empty_array_read_or_written_by_a_traced_index_compiles():
    """NumPy's IndexError where it runs (it was an XLA error: a dynamic_update_slice of one element into none)."""
    f = cf.jit(_writes_an_element_of_a_possibly_empty_array)
    for n, a in [(0, np.zeros(0)), (2, np.arange(3.0))]:
        want = _writes_an_element_of_a_possibly_empty_array(np.int64(n), a.copy())
        got = f(np.int64(n), a.copy())
        np.testing.assert_array_equal(np.asarray(got[1]), want[1])
        assert float(np.asarray(got[0])) == want[0]
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        f(np.int64(1), np.zeros(0))
