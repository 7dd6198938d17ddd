"""ConcreteArray and to_device: device buffers, host copies, pytrees."""
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


def test_device_and_devices():
    devices = cf.devices()
    assert len(devices) >= 1
    assert cf.to_device(np.ones(1)).device == devices[0]


def test_unsupported_dtype_is_refused():
    with pytest.raises(TypeError, match="dtype"):
        cf.to_device(np.array(["a", "b"]))
