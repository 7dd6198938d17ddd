"""numpy.fft on traced arrays: every transform is ``stablehlo.fft``, which XLA runs on any device.

``stablehlo.fft`` transforms the trailing (at most three) dimensions, so the transformed axes
are moved to the end and back.  NumPy's ``n``/``s`` crop or zero-pad the input first, and its
``norm`` is a scale applied to XLA's result (XLA's inverse transforms already divide by n).
Result dtypes follow NumPy 2: float32/float16 inputs give complex64, integers complex128.
fftfreq and rfftfreq need no entry here: NumPy's own code computes them, and only arithmetic on
``d`` is traced when ``d`` is.
"""
from __future__ import annotations

import operator

import numpy as np

from ..ir import ops
from ..tracing.dispatch import implements
from ._core import array_like, axis_index, full, reject, value, wrap

_INVERSE = {"FFT": False, "RFFT": False, "IFFT": True, "IRFFT": True}


def _scale(norm, n: int, kind: str) -> float:
    """NumPy's ``norm`` as a factor on XLA's result, whose inverse transforms divide by n."""
    if norm not in (None, "backward", "ortho", "forward"):
        separator = ", " if _INVERSE[kind] else ","  # NumPy's two messages differ so
        raise ValueError(f'Invalid norm value {norm}; should be "backward"{separator}"ortho" or "forward".')
    if norm in (None, "backward"):
        return 1.0
    if norm == "ortho":
        return np.sqrt(n) if _INVERSE[kind] else 1 / np.sqrt(n)
    return float(n) if _INVERSE[kind] else 1.0 / n


def _resize(v, axis: int, n: int):
    """Crop or zero-pad ``v`` along ``axis`` to length ``n``, as NumPy does with ``n``."""
    have = v.shape[axis]
    if have > n:
        limit = list(v.shape)
        limit[axis] = n
        return ops.slice(v, [0] * v.type.rank, limit)
    if have < n:
        high = [0] * v.type.rank
        high[axis] = n - have
        return ops.pad(v, ops.constant(np.zeros((), v.dtype)), [0] * v.type.rank, high)
    return v


def _fft_axes(v, kind: str, axes, lengths):
    """One ``stablehlo.fft`` over distinct ``axes`` (more than three become several, complex
    transforms of the outer axes applied after a forward and before an inverse one)."""
    if len(axes) > 3:
        outer, inner = (axes[:-3], lengths[:-3]), (axes[-3:], lengths[-3:])
        if _INVERSE[kind]:
            return _fft_axes(_fft_axes(v, "IFFT", *outer), kind, *inner)
        return _fft_axes(_fft_axes(v, kind, *inner), "FFT", *outer)
    perm = [d for d in range(v.type.rank) if d not in axes] + list(axes)
    return ops.transpose(ops.fft(ops.transpose(v, perm), kind, lengths), np.argsort(perm))


def _input_dtypes(kind: str, dtype, length: int):
    """(dtype the input is converted to, dtype of the result) for one transform."""
    complex_dtype = np.result_type(dtype, 1j)
    if kind == "RFFT":
        if dtype.kind == "c":
            parity = "even" if length % 2 == 0 else "odd"
            raise TypeError(f"ufunc 'rfft_n_{parity}' not supported for the input types, and the inputs could not "
                            "be safely coerced to any supported types according to the casting rule ''safe''")
        return np.empty(0, complex_dtype).real.dtype, complex_dtype
    if kind == "IRFFT":
        real = np.result_type(np.empty(0, dtype).real.dtype, 1.0)
        return np.result_type(real, np.complex64), real
    return complex_dtype, complex_dtype


def _transform(a, kind: str, lengths, axes, norm):
    """NumPy's transform of ``kind`` with output lengths ``lengths`` along ``axes`` (IRFFT: the
    last axis is the real one); repeated axes are transformed one after the other, as NumPy does."""
    v = value(a)
    axes = [axis_index(ax, v.type.rank) for ax in axes]
    for n in lengths:
        if n < 1:
            raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    factor = _scale(norm, int(np.prod(lengths)), kind)
    if kind == "IRFFT" and len(axes) > 1:
        v = ops.convert(v, np.result_type(v.dtype, 1j))  # NumPy's inverse transforms of the other axes come first
    compute, result = _input_dtypes(kind, v.dtype, lengths[-1])
    v = ops.convert(v, compute)
    if len(set(axes)) == len(axes):
        for ax, n in zip(axes, lengths):
            v = _resize(v, ax, n // 2 + 1 if kind == "IRFFT" and ax == axes[-1] else n)
        out = _fft_axes(v, kind, axes, lengths)
    else:
        out = _one_axis_at_a_time(v, kind, axes, lengths)
    if factor != 1.0:
        out = ops.binary("stablehlo.multiply", out, full(out.shape, factor, out.dtype))
    return wrap(ops.convert(out, result))


def _one_axis_at_a_time(v, kind, axes, lengths):
    """NumPy's order: RFFT on the last axis then FFTs backwards; IFFTs forwards then IRFFT on the
    last axis; FFT/IFFT backwards over all axes."""
    complex_kind = "IFFT" if _INVERSE[kind] else "FFT"
    steps = [(complex_kind, ax, n) for ax, n in zip(axes, lengths)]
    if kind == "RFFT":
        steps = [(kind, axes[-1], lengths[-1])] + steps[-2::-1]
    elif kind == "IRFFT":
        steps = steps[:-1] + [(kind, axes[-1], lengths[-1])]
    else:
        steps = steps[::-1]
    for step, ax, n in steps:
        v = _fft_axes(_resize(v, ax, n // 2 + 1 if step == "IRFFT" else n), step, [ax], [n])
    return v


def _nd_arguments(shape, s, axes, inverse_real: bool):
    """NumPy's ``_cook_nd_args``: the lengths and axes of an n-d transform."""
    for ax in axes if axes is not None else ():
        if not -len(shape) <= operator.index(ax) < len(shape):
            raise IndexError(f"index {ax} is out of bounds for axis 0 with size {len(shape)}")
    if s is None:
        lengths = [_extent(shape, ax) for ax in axes] if axes is not None else list(shape)
    else:
        lengths = [operator.index(n) for n in s]
    if axes is None:
        axes = list(range(-len(lengths), 0))
    axes = [operator.index(ax) for ax in axes]
    if len(lengths) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if inverse_real and s is None:
        lengths[-1] = (shape[axes[-1]] - 1) * 2
    return [_extent(shape, ax) if n == -1 else n for n, ax in zip(lengths, axes)], axes


def _extent(shape, axis) -> int:
    """``shape[axis]``, with NumPy's IndexError for an axis past the array's (raised as NumPy's, not as cofactor's)."""
    if not -len(shape) <= operator.index(axis) < len(shape):
        raise IndexError("tuple index out of range")
    return shape[axis]


def _one_dim(name, kind, default_length):
    @implements(getattr(np.fft, name))
    def impl(a, n=None, axis=-1, norm=None, out=None):
        reject(f"numpy.fft.{name}", out=(out, None))
        a = array_like(a)
        length = default_length(_extent(np.shape(a), axis)) if n is None else operator.index(n)
        return _transform(a, kind, [length], [axis], norm)
    return impl


def _n_dim(name, kind, default_axes=None):
    @implements(getattr(np.fft, name))
    def impl(a, s=None, axes=default_axes, norm=None, out=None):
        reject(f"numpy.fft.{name}", out=(out, None))
        a = array_like(a)
        lengths, transform_axes = _nd_arguments(np.shape(a), s, axes, kind == "IRFFT")
        return _transform(a, kind, lengths, transform_axes, norm)
    return impl


_one_dim("fft", "FFT", lambda n: n)
_one_dim("ifft", "IFFT", lambda n: n)
_one_dim("rfft", "RFFT", lambda n: n)
_one_dim("irfft", "IRFFT", lambda n: (n - 1) * 2)
_n_dim("fftn", "FFT")
_n_dim("ifftn", "IFFT")
_n_dim("rfftn", "RFFT")
_n_dim("irfftn", "IRFFT")
_n_dim("fft2", "FFT", (-2, -1))
_n_dim("ifft2", "IFFT", (-2, -1))
_n_dim("rfft2", "RFFT", (-2, -1))
_n_dim("irfft2", "IRFFT", (-2, -1))

_SWAPPED_NORM = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _swap(norm):
    if norm not in _SWAPPED_NORM:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return _SWAPPED_NORM[norm]


@implements(np.fft.hfft)
def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The FFT of a Hermitian-symmetric signal: NumPy's ``irfft(conj(a))`` with the norm swapped."""
    reject("numpy.fft.hfft", out=(out, None))
    length = (_extent(np.shape(a), axis) - 1) * 2 if n is None else operator.index(n)
    return _transform(np.conjugate(a), "IRFFT", [length], [axis], _swap(norm))


@implements(np.fft.ihfft)
def ihfft(a, n=None, axis=-1, norm=None, out=None):
    reject("numpy.fft.ihfft", out=(out, None))
    length = _extent(np.shape(a), axis) if n is None else operator.index(n)
    return np.conjugate(_transform(a, "RFFT", [length], [axis], _swap(norm)))


def _shift(name, sign):
    @implements(getattr(np.fft, name))
    def impl(x, axes=None):
        shape = np.shape(x)
        if axes is None:
            axes = tuple(range(len(shape)))
        shift = sign * (_extent(shape, axes) // 2) if isinstance(axes, (int, np.integer)) else \
            [sign * (_extent(shape, ax) // 2) for ax in axes]
        return np.roll(x, shift, axes)
    return impl


_shift("fftshift", 1)
_shift("ifftshift", -1)
