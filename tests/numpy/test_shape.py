"""Shape manipulation, joining, splitting, flips, rolls, tiling, padding, sorting, against NumPy."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import array_shapes

import cofactor as cf
from conftest import ALL_DTYPES, check, check_raises, check_unsupported, dtype_id, sample

X = sample((2, 3, 4))        # float64
V = sample((5,), seed=1)
M = sample((3, 4), seed=2)

# name -> (function, arguments): each is one compile, so related calls share a tuple.
CASES = {
    "reshape": (lambda x: (np.reshape(x, (4, 6)), np.reshape(x, (-1, 2)), np.reshape(x, 24),
                           np.reshape(x, (3, -1), order="F"), np.reshape(x, (2, 12), order="A"),
                           x.reshape(6, 4), x.reshape((4, -1)), x.reshape(-1), x.reshape(2, 3, 4, 1)), X),
    "reshape_0d": (lambda v: (np.reshape(v[0], (1, 1)), np.reshape(v[:1], ()), v[0].reshape(-1)), V),
    "ravel": (lambda x: (np.ravel(x), np.ravel(x, order="F"), x.ravel(), x.ravel("F"), x.flatten(),
                         x.flatten("F"), np.ravel(x.T)), X),
    "transpose": (lambda x: (np.transpose(x), np.transpose(x, (1, 0, 2)), np.transpose(x, (-1, 0, 1)),
                             np.permute_dims(x, (2, 1, 0)), x.transpose(), x.transpose(2, 0, 1),
                             x.transpose((0, 2, 1)), x.transpose(None), x.T, x.mT, np.matrix_transpose(x)), X),
    "transpose_1d": (lambda v: (v.T, np.transpose(v)), V),
    "swapaxes": (lambda x: (np.swapaxes(x, 0, 2), np.swapaxes(x, -1, 1), x.swapaxes(0, 0)), X),
    "moveaxis": (lambda x: (np.moveaxis(x, 0, -1), np.moveaxis(x, [0, 1], [-1, -2]), np.moveaxis(x, -1, 0),
                            np.moveaxis(x, (0, 2), (2, 0))), X),
    "expand_dims": (lambda x: (np.expand_dims(x, 0), np.expand_dims(x, -1), np.expand_dims(x, (0, 2)),
                               np.expand_dims(x, (-1, 1)), np.expand_dims(x, 3)), X),
    "squeeze": (lambda x: (np.squeeze(x), np.squeeze(x, 0), np.squeeze(x, axis=(0, 3)), x.squeeze(),
                           x.squeeze(-1), np.squeeze(x[0, 0, 0])), np.reshape(X, (1, 6, 4, 1))),
    "broadcast_to": (lambda v: (np.broadcast_to(v, (3, 5)), np.broadcast_to(v[:1], (2, 4)),
                                np.broadcast_to(v[0], 3), np.broadcast_to(v, (2, 1, 5))), V),
    "broadcast_arrays": (lambda m, v: np.broadcast_arrays(m[:, :1], v[:4], 2.0), M, V),
    "atleast": (lambda x, v: (np.atleast_1d(v[0]), np.atleast_1d(v), np.atleast_2d(v[0]), np.atleast_2d(v),
                              np.atleast_2d(x), np.atleast_3d(v[0]), np.atleast_3d(v), np.atleast_3d(x[0]),
                              np.atleast_3d(x), np.atleast_1d(v, x[0]), np.atleast_2d(2.5)), X, V),
    "concatenate": (lambda x, m: (np.concatenate([x, x], axis=0), np.concatenate([x[0], m[:2]], axis=-1),
                                  np.concatenate([x, x[:, :1]], axis=1), np.concatenate([m, x[0]], axis=None),
                                  np.concat((m, m), axis=1), np.concatenate([m]),
                                  np.concatenate([m, [[1, 2, 3, 4]]])), X, M),
    "stack": (lambda m: (np.stack([m, m]), np.stack([m, m + 1, m], axis=1), np.stack([m, m], axis=-1),
                         np.stack((m[0], m[1])), np.stack([m[0], [1, 2, 3, 4]])), M),
    "vstack": (lambda v, m: (np.vstack([v, v]), np.vstack([m, m[0]]), np.vstack([v[0], v[1]]),
                             np.row_stack([m, m])), V, M),
    "hstack": (lambda v, m: (np.hstack([v, v[:2]]), np.hstack([m, m[:, :1]]), np.hstack([v[0], v[1]]),
                             np.hstack((v, [1.0]))), V, M),
    "dstack": (lambda v, m: (np.dstack([v, v]), np.dstack([m, m]), np.dstack([v[0], v[1]])), V, M),
    "column_stack": (lambda v, m: (np.column_stack([v[:3], v[1:4]]), np.column_stack([m, v[:3]])), V, M),
    "split": (lambda x: (np.split(x, 2), np.split(x, [1, 3], axis=-1), np.split(x, 3, axis=1),
                         np.split(x, [-1, 10], axis=2), np.split(x, [2, 1], axis=1)), X),
    "array_split": (lambda v, x: (np.array_split(v, 3), np.array_split(v, 7), np.array_split(x, 3, axis=-1),
                                  np.array_split(v, [1, -2])), V, X),
    "flip": (lambda x: (np.flip(x), np.flip(x, 0), np.flip(x, -1), np.flip(x, (0, 2)), np.fliplr(x[0]),
                        np.flipud(x[0]), np.fliplr(x), np.flipud(x[:, 0, 0])), X),
    "roll": (lambda x: (np.roll(x, 1), np.roll(x, -2, axis=1), np.roll(x, 5, axis=-1), np.roll(x, (1, 2), (0, 2)),
                        np.roll(x, 2, axis=(1, 2)), np.roll(x, (1, -1), axis=(1, 1)), np.roll(x, 0), np.roll(x, 24),
                        np.roll(x, -25)), X),
    "tile": (lambda v, m: (np.tile(v, 2), np.tile(v, (2, 1)), np.tile(m, (1, 3)), np.tile(m, 2),
                           np.tile(m, (2, 1, 2)), np.tile(v[0], 3), np.tile(m, ())), V, M),
    "repeat": (lambda v, m: (np.repeat(v, 2), np.repeat(m, 2, axis=0), np.repeat(m, [1, 0, 2], axis=0),
                             np.repeat(m, 3), np.repeat(m, [2, 1, 1, 0], axis=-1), m.repeat(2, axis=1),
                             np.repeat(v[0], 3), np.repeat(m, 0, axis=1), np.repeat(m, [0, 0, 0], axis=0),
                             np.repeat(v, 2.5), np.repeat(m, np.float64(1.0), axis=0)), V, M),
    "pad": (lambda m: (np.pad(m, 1), np.pad(m, ((1, 0), (2, 3))), np.pad(m, (2, 1), constant_values=7),
                       np.pad(m, ((1, 1), (0, 2)), constant_values=((1, 2), (3, 4))), np.pad(m, 0),
                       np.pad(m, [(0, 1)], mode="constant", constant_values=-1.5)), M),
    "pad_modes": (lambda m, v: tuple(np.pad(a, w, mode=mode) for mode in ("edge", "wrap", "reflect", "symmetric")
                                     for a, w in ((m, 1), (m, ((2, 0), (5, 6))), (v, (0, 3)))) +
                  (np.pad(m, 2, mode="reflect", reflect_type="even"),), M, V),
    "diff": (lambda m, v: (np.diff(v), np.diff(v, 2), np.diff(m, axis=0), np.diff(m, n=3), np.diff(v, 0),
                           np.diff(m, append=m[:, :1]), np.diff(v, prepend=1, append=[2, 3]),
                           np.diff(m, 5)), M, V),
    "shape_queries": (lambda x: (np.shape(x), np.ndim(x), np.size(x), np.size(x, 1), np.size(x, -1), x.shape,
                                 x.ndim, x.size, x.itemsize, x.nbytes, np.shape(x[0, 0, 0]), len(x)), X),
    "result_type": (lambda x, i: (np.zeros(2, np.result_type(x, i)), np.zeros(2, np.result_type(i, np.float32)),
                                  np.zeros(2, np.result_type(i, 1.5))), X, sample((2,), np.int8)),
    "complexobj": (lambda x, z: (np.iscomplexobj(x), np.iscomplexobj(z), np.isrealobj(x), np.isrealobj(z),
                                 np.iscomplexobj([1j])), X, sample((2,), np.complex64)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_shape_function(name):
    f, *args = CASES[name]
    check(f, *args)


def test_constant_with_zero_strides():
    check(lambda m: (np.diff(m, prepend=0.0), np.concatenate([m, np.broadcast_to(1.0, (3, 1))], axis=1)), M)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_shape_functions_keep_dtype(dtype):
    m = sample((3, 4), dtype)
    check(lambda m: (np.reshape(m, (2, 6)), m.T, np.concatenate([m, m]), np.stack([m, m]), np.flip(m, 1),
                     np.roll(m, 1, 0), np.tile(m, 2), np.repeat(m, 2, 1), np.pad(m, 1, constant_values=1),
                     np.broadcast_to(m[:1], (2, 4)), np.split(m, 2, axis=1), np.diff(m)), m)


@pytest.mark.parametrize("pair", [(np.int8, np.uint8), (np.int32, np.float32), (np.bool_, np.int64),
                                  (np.float16, np.complex64), (np.uint32, np.int64)],
                         ids=lambda p: "-".join(dtype_id(d) for d in p))
def test_concatenate_promotes(pair):
    a, b = sample((2, 2), pair[0]), sample((1, 2), pair[1])
    check(lambda a, b: (np.concatenate([a, b]), np.vstack([a, b]), np.concatenate([a, b], dtype=np.float64),
                        np.concatenate([a, 1.5 * np.ones((1, 2), np.float32)])), a, b)


def test_concatenate_casting():
    a, b = sample((2,), np.float64), sample((2,), np.int32)
    check(lambda a, b: np.concatenate([a, b], dtype=np.int32), a, b)
    check(lambda a, b: np.concatenate([a, b], dtype=np.int32, casting="unsafe"), a, b)
    check(lambda a, b: np.stack([a, b], dtype=np.float32, casting="same_kind"), a, b)


# Each raises the same error as NumPy (checked by ``check``).
ERRORS = {
    "reshape_size": lambda x: np.reshape(x, (5, 5)),
    "reshape_two_unknowns": lambda x: np.reshape(x, (-1, -1)),
    "reshape_order": lambda x: np.reshape(x, 24, order="X"),
    "transpose_axes": lambda x: np.transpose(x, (0, 1)),
    "transpose_repeated": lambda x: np.transpose(x, (0, 0, 1)),
    "transpose_axis_range": lambda x: np.transpose(x, (0, 1, 3)),
    "swapaxes_range": lambda x: np.swapaxes(x, 0, 3),
    "moveaxis_lengths": lambda x: np.moveaxis(x, (0, 1), 2),
    "moveaxis_range": lambda x: np.moveaxis(x, 3, 0),
    "expand_dims_range": lambda x: np.expand_dims(x, 4),
    "expand_dims_repeated": lambda x: np.expand_dims(x, (1, 1)),
    "squeeze_not_one": lambda x: np.squeeze(x, 1),
    "broadcast_to": lambda x: np.broadcast_to(x, (3, 4)),
    "broadcast_arrays": lambda x: np.broadcast_arrays(x, x[:, :2]),
    "concatenate_ndim": lambda x: np.concatenate([x, x[0]]),
    "concatenate_shape": lambda x: np.concatenate([x, x[:, :2]], axis=0),
    "concatenate_axis": lambda x: np.concatenate([x, x], axis=3),
    "concatenate_0d": lambda x: np.concatenate([x[0, 0, 0], x[0, 0, 1]]),
    "stack_shapes": lambda x: np.stack([x, x[:1]]),
    "concatenate_ranks": lambda x: np.concatenate([x[0, 0], x[0]]),
    "stack_axis": lambda x: np.stack([x, x], axis=4),
    "split_unequal": lambda x: np.split(x, 5, axis=2),
    "array_split_zero": lambda x: np.array_split(x, 0),
    "flip_axis": lambda x: np.flip(x, 3),
    "roll_axis": lambda x: np.roll(x, 1, axis=5),
    "repeat_negative": lambda x: np.repeat(x, -1),
    "repeat_counts_length": lambda x: np.repeat(x, [1, 2], axis=2),
    "pad_negative": lambda x: np.pad(x, -1),
    "pad_empty_axis_by_reflecting": lambda x: np.pad(x[:, :0], 1, mode="reflect"),
    "sort_axis": lambda x: np.sort(x, axis=3),
    "sort_0d": lambda x: np.sort(x[0, 0, 0]),
    "argsort_axis": lambda x: np.argsort(x, axis=-4),
    "diff_axis": lambda x: np.diff(x, axis=3),
    "diff_negative_order": lambda x: np.diff(x, -1),
    "size_axis": lambda x: np.size(x, 3),
    "tile_float": lambda x: np.tile(x, 1.5),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_numpy(name):
    error = check(ERRORS[name], X)
    assert isinstance(error, Exception), f"NumPy raised nothing for {name}"


def test_error_names_the_user_line():
    error = check_raises(ValueError, lambda x: np.concatenate([x, x[:, :2]]), X)
    assert isinstance(error, cf.CofactorError)
    assert "test_shape.py:" in str(error)


def test_unsupported():
    check_unsupported(lambda m: np.sort(m, order="x"), M, name="order")
    check_unsupported(lambda m, r: np.repeat(m, r), M, np.int64(2), name="repeat")
    check_unsupported(lambda m: np.trim_zeros(m), M, name="numpy.trim_zeros")  # (of a vector only)


# --- sorting ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_sort(dtype):
    x = sample((3, 5), dtype)
    check(lambda x: (np.sort(x), np.sort(x, axis=0), np.sort(x, axis=None), np.argsort(x, kind="stable"),
                     np.argsort(x, axis=0, kind="stable"), np.argsort(x, axis=None, kind="stable"),
                     x.argsort(kind="stable"), np.sort(x, stable=True)), x)


def test_sort_puts_nan_last():
    x = np.array([[3.0, np.nan, -np.inf, 1.0, np.nan, -0.5, np.inf], [np.nan, 2.0, 2.0, -1.0, 0.0, np.nan, 5.0]])
    check(lambda x: (np.sort(x), np.argsort(x, kind="stable"), np.sort(x, axis=0), np.argsort(x, axis=None,
                                                                                           kind="stable")), x)


def test_sort_complex_nan_and_ties():
    """NumPy's order: no NaN, then a NaN imaginary part (by real part), a NaN real part (by imaginary part), both;
    a comparison with a NaN in either part is false (0+nanj sorted second and compared below 0.5)."""
    z = np.array([1 + 2j, np.nan + 0j, 1 + 1j, 0 + 5j, 1j * np.nan, 1 + 1j, -2 + 0j, complex(0, np.nan),
                  complex(np.nan, 1), complex(5, np.nan), complex(-2, np.nan), complex(np.nan, -1), complex(np.nan, np.nan)])
    w = np.roll(z, 3)
    check(lambda z, w: (np.sort(z), np.argsort(z, kind="stable"), np.unique(z), z < 0.5, z <= w, z > w, z >= w,
                        np.maximum(z, w)), z, w)


def test_argsort_default_kind_on_distinct_values():
    check(lambda x: (np.argsort(x), np.argsort(x, axis=1), x.argsort(axis=0)), sample((4, 5)))


def test_sort_method_sorts_in_place():
    def f(x):
        y = x.copy()
        y.sort()
        z = x.copy()
        z.sort(axis=0)
        return y, z
    check(f, M)


@given(array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), st.data())
@settings(max_examples=10, deadline=None)
def test_random_reshape_transpose_concatenate(shape, data):
    x = sample(shape)
    perm = data.draw(st.permutations(range(len(shape))))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    check(lambda x: (np.transpose(x, perm), np.reshape(x, (-1,) + shape[1:]), np.concatenate([x, x], axis),
                     np.flip(x, axis), np.roll(x, 3, axis), np.sort(x, axis)), x)


def test_uneven_repeat_keeps_the_optimizer():
    with warnings.catch_warnings():
        warnings.simplefilter("error", cf.OptimizationWarning)
        check(lambda m: np.repeat(m, [2, 1, 1, 0], axis=-1), M)


def _later_write(a):
    windows = np.lib.stride_tricks.sliding_window_view(a, 3)
    a[0] = 100.0  # a view: it sees the write
    return windows.max(-1)


@pytest.mark.parametrize("f", [
    lambda a: np.lib.stride_tricks.sliding_window_view(a, 3).mean(-1),
    lambda a: np.lib.stride_tricks.sliding_window_view(a[::2], (2,)).sum(axis=1),
    lambda a: np.lib.stride_tricks.sliding_window_view(a.reshape(2, 5), (2, 3)),
    lambda a: np.lib.stride_tricks.sliding_window_view(a.reshape(5, 2).T, 2, axis=-1),
    lambda a: np.lib.stride_tricks.sliding_window_view(a.reshape(5, 2), (2, 2), axis=(0, 0)),
    lambda a: np.lib.stride_tricks.sliding_window_view(a, 11),  # NumPy's error
    _later_write,
])
def test_sliding_window_view(f):
    check(f, np.arange(10.0) ** 1.5)


def test_sliding_window_view_is_read_only():
    check_raises(ValueError, lambda a: np.lib.stride_tricks.sliding_window_view(a, 3).__setitem__(0, 1.0),
                 np.arange(5.0), match="read-only")


def _shape_assigned(x):
    x = x + 0  # check() runs NumPy on the same argument first
    y = x.copy()
    y.shape = (3, 2)
    row = x[0]
    row.shape = (3, 1)
    row *= 2  # writes x's first row through the reshaped view
    return y, x, row


@pytest.mark.parametrize("f", [
    _shape_assigned,
    lambda x: setattr(x.T, "shape", (6,)),   # NumPy's AttributeError: it would need a copy
    lambda x: setattr(x, "shape", (4,)),     # NumPy's ValueError
    lambda x: setattr(x.sum(), "shape", (1,)),
])
def test_shape_assignment(f):
    check(f, np.arange(6.0).reshape(2, 3))


def _bits(x):
    x = x + 0  # check() runs NumPy on the same argument first
    y = x.copy()
    yi = y.view(np.uint64)
    yi[0] = 0  # writes y[0] = 0.0 through the view
    yi[1] ^= np.uint64(1 << 63)  # flips the sign of y[1]
    exponent = x.astype(np.float32).view(np.int32) >> 23
    return x.view(np.int64), y, exponent, (x.view(np.int64) & 0xFF).view(np.float64)


def _bytes(x):
    x = x + 0  # check() runs NumPy on the same argument first
    y = x.copy()
    b = y.view(np.uint8)
    b[..., 7] ^= np.uint8(0x80)  # flips the sign of every element, through the bytes (little-endian)
    halves = x.view(np.int32).reshape(*x.shape[:-1], -1, 2)
    return x.view(np.uint8), y, halves, x.view(np.uint8).view(np.float64), x.view(np.int16)[..., 1::4]


@pytest.mark.parametrize("f", [
    _bits, _bytes,
    lambda x: x.astype(np.int8).view(np.int16),
    lambda x: x[:, ::2].view(np.uint8),   # NumPy's error: the last axis is not contiguous
    lambda x: x[0, 0].view(np.int32),     # NumPy's error: a 0-d array
    lambda x: x[:, :3].astype(np.int16).view(np.int32),  # NumPy's error: 6 bytes do not divide by 4
])
def test_view_as_another_dtype(f):
    check(f, np.array([[1.5, -2.25, 3.0, 0.5], [7.0, -0.125, 2.0, -9.5]]))


def test_view_as_a_complex_dtype_is_refused():
    check_unsupported(lambda x: x.astype(np.float32).view(np.complex64), np.ones(2), name="ndarray.view")


def _windows(x, w=3):
    from numpy.lib.stride_tricks import as_strided
    return as_strided(x, shape=(x.shape[0] - w + 1, w), strides=(x.strides[0], x.strides[0])).mean(-1)


def _toeplitz(c):
    from numpy.lib.stride_tricks import as_strided
    both = np.concatenate([c[::-1], c[1:]])
    n = c.shape[0]
    return as_strided(both[n - 1:], shape=(n, n), strides=(-both.strides[0], both.strides[0])).copy()


def _blocks(x):
    from numpy.lib.stride_tricks import as_strided
    m = x[:9].reshape(3, 3)
    s0, s1 = m.strides
    return as_strided(m, shape=(2, 2, 2, 2), strides=(s0, s1, s0, s1)).sum(axis=(2, 3)), m.T.strides, x[::-3].strides


@pytest.mark.parametrize("f", [
    _windows, _toeplitz, _blocks,
    lambda x: np.lib.stride_tricks.as_strided(x[1::2], shape=(3, 2), strides=(16, 8)),  # memory outside the view
    lambda x: np.lib.stride_tricks.as_strided(x),
])
def test_as_strided_reads_what_numpy_reads(f):
    check(f, np.arange(10.0) ** 1.5)


@pytest.mark.parametrize("f, match", [
    (lambda x: np.lib.stride_tricks.as_strided(x, shape=(4,), strides=(32,)), "outside the array's memory"),
    (lambda x: np.lib.stride_tricks.as_strided(x, shape=(2,), strides=(4,)), "whole elements"),
    (lambda x: np.lib.stride_tricks.as_strided(x, shape=(2, 2), strides=(8, 8)).__setitem__(0, 1.0), "writing through"),
])
def test_as_strided_refuses_clearly(f, match):
    with pytest.raises(cf.UnsupportedError, match=match):
        cf.jit(f)(np.arange(5.0))


def _layout_program(perm, steps, perm2, make):
    """A view of a fresh array with NumPy's strides of ``perm``, ``steps`` and ``perm2``, flattened or
    reshaped by ``make``, then written: the write reaches the array where NumPy's result is a view."""
    def program(x):
        y = x.copy()
        r = make(y.transpose(perm)[tuple(slice(None, None, s) for s in steps)].transpose(perm2))
        r += 1.0
        return y, r
    return program


_ORDERED = [lambda v: v.ravel(), lambda v: v.ravel("F"), lambda v: np.ravel(v, "A"), lambda v: v.ravel("K"),
            lambda v: v.flatten("K"), lambda v: v.reshape(-1, order="F"), lambda v: np.reshape(v, (1, -1), order="A"),
            lambda v: v.reshape(-1, copy=True)]


@pytest.mark.parametrize("seed", range(6))
def test_ravel_and_reshape_orders_are_views_where_numpy_views(seed):
    """Each order's elements in NumPy's order, and a view exactly where NumPy's is one (a write through
    it reaches the array), over random layouts: transposed, stepped, reversed."""
    rng = np.random.default_rng(seed)
    for _ in range(6):
        ndim = int(rng.integers(1, 4))
        steps = tuple(int(rng.choice([1, 1, 2, -1, -2])) for _ in range(ndim))
        program = _layout_program(tuple(rng.permutation(ndim)), steps, tuple(rng.permutation(ndim)),
                                  _ORDERED[int(rng.integers(len(_ORDERED)))])
        x = rng.normal(size=tuple(int(n) for n in rng.integers(1, 5, ndim)))
        check(program, x)


def _rolled_by_traced_shifts(x, s):
    out = np.zeros_like(x)
    for k in np.array([0, 1, -1]):  # (a constant array's elements: the shift is known)
        out = out + np.roll(x, k, axis=0)
    return out, np.roll(x, s), np.roll(x, s, axis=1), np.roll(x, -s, axis=0), np.roll(x.ravel(), s)


@pytest.mark.parametrize("s", [1, -5, 7, 0, 24])
def test_roll_by_a_traced_shift(s):
    check(_rolled_by_traced_shifts, sample((3, 4)), np.int64(s))


@pytest.mark.parametrize("f", [
    lambda x: np.pad(x, {1: (1, 2)}),
    lambda x: np.pad(x, {-1: 1, 0: (0, 1)}, constant_values=7),
    lambda x: np.pad(x, 1, constant_values=np.nan),
    lambda x: np.pad(x, 1, constant_values=1e30),
    lambda x: np.pad(x, 1, constant_values=2.5),
    lambda x: np.pad(x[0, 0] * 1.0 + np.ones(()), 2),
    lambda x: np.pad(x, {3: 1}),
], ids=["dict", "dict_negative_axis", "nan_into_ints", "huge_into_ints", "float_into_ints", "zero_d", "bad_axis"])
def test_pad_widths_by_axis_zero_d_arrays_and_fills_ints_cannot_hold(f):
    """(A dict of widths and a 0-d array were internal errors; NaN padded an int32 array with its least value.)"""
    check(f, np.arange(6, dtype=np.int32).reshape(2, 3))
