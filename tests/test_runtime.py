"""ConcreteArray and to_device: device buffers, host copies, pytrees."""
import copy
import pickle

import numpy as np
import pytest

import cofactor as cf


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int8, np.uint32, np.bool_,
                                   np.complex128, np.complex64])
def test_round_trip_keeps_values_and_dtype(dtype):
    x = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    a = cf.to_device(x)
    assert isinstance(a, cf.ConcreteArray)
    assert a.shape == (2, 3) and a.dtype == np.dtype(dtype) and a.ndim == 2 and a.size == 6
    back = np.asarray(a)
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, x)


def test_to_device_copies_so_later_host_writes_do_not_leak():
    x = np.zeros(3)
    a = cf.to_device(x)
    x[:] = 5
    np.testing.assert_array_equal(np.asarray(a), np.zeros(3))


def test_pytree_to_device_leaves_non_arrays_alone():
    tree = {"w": np.ones(2), "cfg": (3, "name"), "xs": [np.zeros((1, 2))]}
    out = cf.to_device(tree)
    assert isinstance(out["w"], cf.ConcreteArray) and isinstance(out["xs"][0], cf.ConcreteArray)
    assert out["cfg"] == (3, "name")


def test_repr_scalars_and_len():
    a = cf.to_device(np.array([[6.0, 6.0], [6.0, 6.0]]))
    assert repr(a).startswith("ConcreteArray([[6., 6.],")
    assert len(a) == 2
    s = cf.to_device(np.float64(2.5))
    assert float(s) == 2.5 and s.shape == ()
    with pytest.raises(TypeError):
        float(a)


def host_code(r, i, s):
    """What code after a call does with the results: each line's value, as NumPy gives it."""
    return [r == 7, r != r[0], r < s, r + 1, 2 * r, -r, abs(r), r @ r, r ** 2, r // 2, r % 3, r[1:], r[::-1],
            r[r > 2], list(r), r.sum(), r.max(), r.tolist(), r.T, r.astype(np.float32), r.reshape(2, 2),
            i == 7, i + 1, list(range(i)), int(i), [1, 2, 3][i - 6], np.add(r, r), np.where(r > 2, r, 0), r.item(0),
            s > 1, s * r, s.item(), f"{s:.3f}", "{:>8}".format(i), round(s, 1), round(s)]


def test_results_read_in_host_code_give_numpy_s_values():
    """A ConcreteArray a compiled function returns acts as the ndarray NumPy would have returned, in
    the code after the call (``result == 7`` compared identities before: False, silently)."""
    def f(a):
        return a * 2, int(a.shape[0] + a[0]), a.sum()

    a = np.array([3.5, 1.0, 2.0, 4.0])
    want, got = host_code(*f(a)), host_code(*cf.jit(f)(a))
    assert len(want) == len(got)
    for w, g in zip(want, got):  # (a Python int result is a 0-d array: its == gives a NumPy bool)
        assert not isinstance(g, cf.ConcreteArray) and isinstance(g, list) == isinstance(w, list), (w, g)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert np.asarray(g).dtype == np.asarray(w).dtype


def test_a_result_is_read_only_with_a_clear_error_and_keeps_identity_hashing():
    r = cf.jit(lambda a: a + 1)(np.ones(3))
    with pytest.raises(TypeError, match="ConcreteArray is read-only"):
        r += 1
    with pytest.raises(ValueError, match="read-only"):
        r.fill(0)
    with pytest.raises(AttributeError, match="no attribute 'lens'"):
        r.lens
    assert {r: 1}[r] == 1
    for copied in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r)):  # jaxlib's pickling made it float32
        assert isinstance(copied, cf.ConcreteArray) and copied.dtype == np.float64
        np.testing.assert_array_equal(copied, r)
    np.testing.assert_array_equal(np.array(r) + 1, [3.0, 3.0, 3.0])


def test_device_and_devices():
    devices = cf.devices()
    assert len(devices) >= 1
    assert cf.to_device(np.ones(1)).device == devices[0]


def test_unsupported_dtype_is_refused():
    with pytest.raises(TypeError, match="dtype"):
        cf.to_device(np.array(["a", "b"]))


def test_numpy_allocates_64_byte_aligned_data_once_cofactor_is_imported():
    """The allocator (runtime/_aligned.c) is built by the install and installed by ``import cofactor``;
    its realloc (ndarray.resize, np.fromiter) keeps the data and the alignment."""
    from cofactor.runtime import _aligned  # noqa: F401  (built: the test environment has a C compiler)
    rng = np.random.default_rng(3)
    for n in [0, 1, 3, 100, 5000, 1 << 20]:
        for make in (np.ones, np.zeros, np.empty):
            assert make(n).ctypes.data % 64 == 0
    for _ in range(300):
        n, m = (int(k) for k in rng.integers(0, 40000, 2))
        a = rng.normal(size=n)
        kept = a[:m].copy()
        a.resize(m, refcheck=False)
        assert a.ctypes.data % 64 == 0 and np.array_equal(a[:min(n, m)], kept) and not a[n:].any()
    assert np.fromiter(range(10000), float).ctypes.data % 64 == 0


def _reads(x, y):
    return x * 2 + y.sum(), x[::-1]


def _updates(x, y):
    x += y
    return y.reshape(-1, 2)


def test_large_numpy_arguments_are_read_in_place_and_may_be_written_right_after_the_call():
    from cofactor.runtime.host import IN_PLACE_MIN_BYTES
    n = IN_PLACE_MIN_BYTES // 8
    x, y = np.arange(float(n)), np.ones(n)
    f = cf.jit(_reads)
    want = _reads(x.copy(), y.copy())
    got = f(x, y)
    x[:], y[:] = -1, -7  # the run has ended: the results do not change
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    compiled = next(iter(f.cache.values()))
    buffers, waits = compiled.executable.buffers([x, y])
    assert waits and buffers[0].unsafe_buffer_pointer() == x.ctypes.data  # no copy
    small = np.arange(8.0)
    assert compiled.executable.buffers([small])[0][0].unsafe_buffer_pointer() != small.ctypes.data


def test_an_updated_numpy_argument_is_donated_as_a_copy_beside_one_read_in_place():
    from cofactor.runtime.host import IN_PLACE_MIN_BYTES
    n = IN_PLACE_MIN_BYTES // 8
    x, y = np.zeros(n), np.arange(float(n))
    f = cf.jit(_updates)
    got = f(x, y)
    y[:] = 0
    np.testing.assert_array_equal(x, np.arange(float(n)))
    np.testing.assert_array_equal(np.asarray(got), np.arange(float(n)).reshape(-1, 2))
    compiled = next(iter(f.cache.values()))
    assert compiled._donated == {0}


def _reversed_sum(x, y):
    return x + y[::-1], x[::-1]


@pytest.mark.filterwarnings("ignore::cofactor.RecompileWarning")
def test_numpy_arguments_through_jaxlibs_native_dispatch():
    """Calls after the first take jaxlib's C++ route for NumPy arguments (xla/executable.py,
    _NativeCaller): every dtype keeps its width (JAX's own 64-bit flag stays as the user left it),
    an argument read in place may be written as soon as the call returns, and non-contiguous
    arguments and ConcreteArrays beside NumPy arrays still work."""
    import jax
    from cofactor.runtime.host import IN_PLACE_MIN_BYTES
    f = cf.jit(_reversed_sum)
    rng = np.random.default_rng(5)
    for dtype in (np.float64, np.int64, np.uint64, np.float32, np.int8, np.bool_, np.complex128, np.float16):
        for n in (4, IN_PLACE_MIN_BYTES // 8):
            for call in range(3):
                x, y = (rng.normal(size=n) * 100).astype(dtype), (rng.normal(size=n) * 100).astype(dtype)
                want = _reversed_sum(x.copy(), y.copy())
                got = f(x, y) if call < 2 else f(x, cf.to_device(y))
                x[:], y[:] = 0, 0
                for g, w in zip(got, want):
                    assert np.asarray(g).dtype == w.dtype
                    np.testing.assert_array_equal(np.asarray(g), w)
    x = np.arange(12.0).reshape(3, 4).T
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(x, x)[0]), _reversed_sum(x, x)[0])
    assert not jax.config.jax_enable_x64 and jax.numpy.ones(2).dtype == np.float32
