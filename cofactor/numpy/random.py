"""np.random inside compiled code: ``default_rng`` Generators, Generators passed in, and the
legacy global functions (``np.random.rand``, ``np.random.seed``, ...).

Numbers come from XLA's counter-based Threefry generator (``rng_bit_generator``) turned into
NumPy's distributions: the same distributions as NumPy, not the same stream.  The generator's
key is traced state: a Generator argument, or NumPy's global generator, gives the compiled
function a fresh key at every call (drawn from it, which advances it), so two calls give
different numbers and seeding makes them reproducible.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import UnsupportedError, located
from ..ir import ops
from ..ir.types import TensorType
from ..tracing import context
from ..tracing.array import TracedArray
from ..tracing.dispatch import CONSTRUCTORS, constructs
from ._core import asarray, full, value, with_value_bounds, wrap

_KEY = TensorType((2,), np.uint64)


def _draw_key(bit_generator) -> np.ndarray:
    return bit_generator.random_raw(2).astype(np.uint64)


def _size(size) -> tuple:
    if size is None:
        return ()
    return (int(size),) if isinstance(size, numbers.Integral) else tuple(int(d) for d in size)


class TracedGenerator:
    """What user code sees in place of a ``numpy.random.Generator``: NumPy's Generator methods,
    drawing from a traced key that each draw advances."""
    traced_state = True  # control flow looks into it for the arrays it holds

    def __init__(self, key):
        self._key = TracedArray(key)  # storage: a draw inside a traced branch or loop is carried like a write

    @property
    def key(self):
        return self._key.value

    @key.setter
    def key(self, value):
        self._key.value = value

    def __getattr__(self, name):  # (only for what the class does not define)
        if not name.startswith("_") and hasattr(np.random.Generator, name):
            raise located(UnsupportedError(f"numpy.random.Generator.{name} is not supported in compiled code yet; "
                                           "draw uniform or normal numbers and transform them, or call it outside"))
        raise AttributeError(f"'numpy.random.Generator' object has no attribute {name!r}")

    def _bits(self, shape):
        self.key, bits = ops.rng_bit_generator(self.key, shape)
        return bits

    def _unit(self, shape, dtype=np.float64, open_low=False):
        """Uniform floats in [0, 1) (or (0, 1)) from the top mantissa-width bits."""
        mantissa = np.finfo(dtype).nmant + 1
        bits = ops.binary("stablehlo.shift_right_logical", self._bits(shape), full(shape, 64 - mantissa, np.uint64))
        u = ops.convert(bits, dtype)
        if open_low:
            u = ops.binary("stablehlo.add", u, full(shape, 0.5, dtype))
        return ops.binary("stablehlo.multiply", u, full(shape, 2.0 ** -mantissa, dtype))

    def random(self, size=None, dtype=np.float64, out=None):
        _no_out("random", out)
        return wrap(self._unit(_size(size), np.dtype(dtype)))

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        _no_out("standard_normal", out)
        shape, dtype = _size(size), np.dtype(dtype)
        u = self._unit(shape, dtype, open_low=True)  # in (0, 1): erfinv(2u - 1) is finite
        centered = ops.binary("stablehlo.subtract", ops.binary("stablehlo.multiply", u, full(shape, 2, dtype)),
                              full(shape, 1, dtype))
        return wrap(ops.binary("stablehlo.multiply", ops.unary("chlo.erf_inv", centered),
                               full(shape, math.sqrt(2), dtype)))

    def _scaled(self, draw, loc, scale, size):
        shape = _size(size) if size is not None else np.broadcast_shapes(np.shape(loc), np.shape(scale))
        return np.add(np.multiply(draw(shape), scale), loc)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return self._scaled(self.standard_normal, loc, scale, size)

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._scaled(self.random, low, np.subtract(high, low), size)

    def standard_exponential(self, size=None, dtype=np.float64, method="zig", out=None):
        _no_out("standard_exponential", out)
        u = self.random(size, dtype)
        return np.negative(np.log1p(np.negative(u)))

    def exponential(self, scale=1.0, size=None):
        return self._scaled(self.standard_exponential, 0.0, scale, size)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        if high is None:
            low, high = 0, low
        if endpoint:
            high = np.add(high, 1)
        shape = _size(size) if size is not None else np.broadcast_shapes(np.shape(low), np.shape(high))
        span = ops.convert(value(np.subtract(high, low)), np.uint64)
        offset = ops.binary("stablehlo.remainder", self._bits(shape), ops.broadcast_in_dim(
            span, shape, range(len(shape) - span.type.rank, len(shape))))
        drawn = np.add(wrap(ops.convert(offset, np.int64)), low).astype(dtype)
        if isinstance(low, numbers.Integral) and isinstance(high, numbers.Integral) and low < high:
            drawn = with_value_bounds(drawn, int(low), int(high) - 1)
        return drawn

    def permutation(self, x, axis=0):
        if axis != 0:
            raise UnsupportedError("Generator.permutation with axis != 0 is not supported")
        array = asarray(np.arange(x) if isinstance(x, numbers.Integral) else x)
        n = np.shape(array)[0]
        order = np.argsort(wrap(self._bits((n,))))
        return np.take(array, order, axis=0)

    def shuffle(self, x, axis=0):
        if not isinstance(x, TracedArray):
            raise UnsupportedError("Generator.shuffle needs an array created or passed in the compiled function")
        x[...] = self.permutation(x, axis)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        if axis != 0:
            raise UnsupportedError("Generator.choice with axis != 0 is not supported")
        population = asarray(np.arange(a) if isinstance(a, numbers.Integral) else a)
        n = np.shape(population)[0]
        shape = _size(size)
        if not replace:
            count = int(np.prod(shape, dtype=np.int64))
            if count > n:
                raise ValueError("Cannot take a larger sample than population when replace is False")
            picks = np.reshape(self.permutation(n)[:count], shape)
        elif p is None:
            picks = self.integers(0, n, size=shape)
        else:  # inverse transform sampling: how many cumulative probabilities lie at or below u
            cdf = np.cumsum(p)
            u = np.multiply(self.random(shape), cdf[-1])
            picks = np.sum(np.expand_dims(u, -1) >= cdf, axis=-1)
            picks = np.minimum(picks, n - 1)
        return np.take(population, picks, axis=0)


def _no_out(name, out):
    if out is not None:
        raise UnsupportedError(f"Generator.{name}(..., out=...) is not supported")


def _generator_argument(generator, fetch):
    """A Generator passed to a compiled function, or read from a global or an object's attribute: a
    fresh key from it at every call."""
    return TracedGenerator(context.current().host_input(_KEY, lambda leaves: _draw_key(fetch(leaves).bit_generator)))


context.STATEFUL_TYPES[np.random.Generator] = _generator_argument


def _seeded_key(seed):
    if isinstance(seed, TracedArray):
        mixed, _ = ops.rng_bit_generator(ops.concatenate(
            [ops.reshape(ops.convert(value(seed), np.uint64), (1,)), ops.constant(np.zeros(1, np.uint64))], 0), (1,))
        return mixed
    return ops.constant(_draw_key(np.random.default_rng(seed).bit_generator))


@constructs(np.random.default_rng)
def default_rng(seed=None):
    if seed is None:  # fresh entropy at every call, as NumPy
        return TracedGenerator(context.current().host_input(
            _KEY, lambda leaves: _draw_key(np.random.default_rng().bit_generator)))
    return TracedGenerator(_seeded_key(seed))


def _global():
    """The traced stand-in of NumPy's global generator, keyed from it at every call."""
    return context.current().per_trace("numpy.random", lambda: TracedGenerator(context.current().host_input(
        _KEY, lambda leaves: np.random.randint(0, 2 ** 62, size=2).astype(np.uint64))))


@constructs(np.random.seed)
def seed(seed=None):
    _global().key = _seeded_key(seed) if seed is not None else context.current().host_input(
        _KEY, lambda leaves: _draw_key(np.random.default_rng().bit_generator))


def _legacy(name, method, shape_from_args=False):
    def draw(*args, **kwargs):
        generator = _global()
        if shape_from_args:
            return getattr(generator, method)(args or None, **kwargs)
        return getattr(generator, method)(*args, **kwargs)
    constructs(getattr(np.random, name))(draw)


_legacy("rand", "random", shape_from_args=True)
_legacy("randn", "standard_normal", shape_from_args=True)
for _name in ["random", "random_sample", "ranf", "sample"]:
    _legacy(_name, "random")
for _name in ["uniform", "normal", "standard_normal", "exponential", "standard_exponential",
              "choice", "permutation", "shuffle"]:
    _legacy(_name, _name)


@constructs(np.random.randint)
def randint(low, high=None, size=None, dtype=int):
    return _global().integers(low, high, size, dtype)


def _refused(name):
    def refuse(*args, **kwargs):
        raise UnsupportedError(f"numpy.random.{name} is not supported in compiled code yet (run by NumPy while "
                               "tracing, its numbers would be constants of the compiled function, the same at every "
                               "call): draw uniform or normal numbers and transform them, or call it outside")
    constructs(getattr(np.random, name))(refuse)


# The other functions of NumPy's global generator (np.random.poisson, binomial, beta, get_state, ...).
for _name in dir(np.random):
    _function = getattr(np.random, _name)
    if getattr(_function, "__self__", None) is np.random.mtrand._rand and _function not in CONSTRUCTORS:
        _refused(_name)


