"""numpy.fft against NumPy: lengths (crop and zero-pad), axes, norms, NumPy 2's result dtypes."""
import numpy as np
import pytest

from conftest import check, dtype_id, sample

FFT = np.fft
NORMS = [None, "backward", "ortho", "forward"]


def tolerance(dtype):
    """By the precision of the input (integers transform in double).  XLA's FFT and pocketfft
    round differently, and outputs near zero need an absolute tolerance."""
    precision = np.empty(0, np.result_type(dtype, 1.0)).real.dtype.itemsize
    tol = {2: 2e-3, 4: 1e-4, 8: 1e-10}[precision]
    return {"rtol": tol, "atol": tol}


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float16, np.float32, np.float64, np.complex64,
                                   np.complex128], ids=dtype_id)
def test_complex_transforms(dtype):
    x = sample((2, 5), dtype)
    check(lambda x: (FFT.fft(x), FFT.ifft(x), FFT.fft(x, n=3), FFT.fft(x, n=8), FFT.ifft(x, n=7, axis=0),
                     *(FFT.fft(x, norm=norm) for norm in NORMS), *(FFT.ifft(x, axis=0, norm=norm) for norm in NORMS)),
          x, **tolerance(dtype))


@pytest.mark.parametrize("dtype", [np.int64, np.float16, np.float32, np.float64], ids=dtype_id)
def test_real_transforms(dtype):
    x = sample((3, 6), dtype)
    check(lambda x: (FFT.rfft(x), FFT.rfft(x, n=5), FFT.rfft(x, n=9, axis=0), FFT.irfft(x), FFT.irfft(x, n=7),
                     FFT.irfft(x, n=3, axis=0), *(FFT.rfft(x, norm=norm) for norm in NORMS),
                     *(FFT.irfft(x, norm=norm) for norm in NORMS), FFT.hfft(x), FFT.hfft(x, n=4, norm="ortho"),
                     FFT.ihfft(x), FFT.ihfft(x, n=4, axis=0, norm="forward"), FFT.irfftn(x)),
          x, **tolerance(dtype))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=dtype_id)
def test_inverse_real_transforms_of_complex(dtype):
    x = sample((4, 5), dtype)
    check(lambda x: (FFT.irfft(x), FFT.irfft(x, n=9), FFT.irfft(x, axis=0, norm="ortho"), FFT.hfft(x),
                     FFT.irfft2(x), FFT.irfftn(x, s=(3, 6), axes=(0, 1)), FFT.irfftn(x, axes=(1, 0))),
          x, **tolerance(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128], ids=dtype_id)
def test_multidimensional(dtype):
    x = sample((2, 3, 4), dtype)
    check(lambda x: (FFT.fft2(x), FFT.ifft2(x, s=(5, 2)), FFT.fftn(x), FFT.ifftn(x, axes=(0, 2)),
                     FFT.fftn(x, s=(3, 2), axes=(2, 0), norm="ortho"), FFT.ifftn(x, s=(2, 2, 2), axes=(0, 1, 2)),
                     FFT.fftn(x, s=(-1, 6), axes=(1, 2)), FFT.irfftn(x), FFT.irfft2(x, s=(4, 5), norm="forward")),
          x, **tolerance(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=dtype_id)
def test_multidimensional_real(dtype):
    x = sample((2, 3, 4), dtype)
    check(lambda x: (FFT.rfft2(x), FFT.rfftn(x), FFT.rfftn(x, s=(5, 3), axes=(2, 0)), FFT.rfft2(x, axes=(0, 1)),
                     FFT.irfftn(FFT.rfftn(x), s=x.shape, axes=(0, 1, 2))),
          x, **tolerance(dtype))


def test_more_than_three_axes_and_repeated_axes():
    # XLA transforms at most three trailing dims in one op; NumPy repeats a repeated axis.
    x, r = sample((2, 2, 3, 2, 2), np.complex128), sample((2, 3, 4, 2))
    check(lambda x, r: (FFT.fftn(x), FFT.ifftn(x, axes=(4, 0, 1, 3)), FFT.rfftn(r), FFT.irfftn(x, axes=(0, 1, 2, 3)),
                        FFT.fftn(x, axes=(1, 1), s=(3, 4)), FFT.rfftn(r, axes=(2, 0, 2)),
                        FFT.irfftn(x, axes=(2, 2, 0))), x, r, **tolerance(np.float64))


def test_shifts_and_frequencies():
    x = sample((3, 4), np.complex64)
    check(lambda x, d: (FFT.fftshift(x), FFT.ifftshift(x), FFT.fftshift(x, axes=1), FFT.ifftshift(x, axes=(0,)),
                        FFT.fftshift(FFT.fftfreq(5, d)), FFT.rfftfreq(6, d), FFT.fftfreq(4, d[0]),
                        FFT.fftfreq(7)),
          x, np.array([0.25], np.float32))


ERRORS = {
    "zero length": (lambda x: FFT.fft(x, n=0), sample((4,))),
    "one point to irfft": (lambda x: FFT.irfft(x), sample((1,), np.complex128)),
    "bad norm": (lambda x: FFT.fft(x, norm="none"), sample((4,))),
    "bad inverse norm": (lambda x: FFT.ifftn(x, norm="none"), sample((4,))),
    "complex rfft": (FFT.rfft, sample((4,), np.complex128)),
    "complex odd rfftn": (FFT.rfftn, sample((3,), np.complex128)),
    "s and axes": (lambda x: FFT.fftn(x, s=(2, 2), axes=(0,)), sample((2, 2))),
    "axis": (lambda x: FFT.fftn(x, axes=(2,)), sample((2, 2))),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_match_numpy(case):
    check(*ERRORS[case])


def test_out_writes_the_array():
    def transform(x):
        y = np.empty_like(x)
        return FFT.fft(x, out=y), y
    check(transform, sample((4,), np.complex128))
