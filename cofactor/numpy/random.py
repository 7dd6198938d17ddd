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
from ..tracing.checks import numpy_error_if
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
        return _one(wrap(self._unit(_size(size), np.dtype(dtype))), size, float)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        _no_out("standard_normal", out)
        shape, dtype = _size(size), np.dtype(dtype)
        u = self._unit(shape, dtype, open_low=True)  # in (0, 1): erfinv(2u - 1) is finite
        centered = ops.binary("stablehlo.subtract", ops.binary("stablehlo.multiply", u, full(shape, 2, dtype)),
                              full(shape, 1, dtype))
        return _one(wrap(ops.binary("stablehlo.multiply", ops.unary("chlo.erf_inv", centered),
                                    full(shape, math.sqrt(2), dtype))), size, float)

    def _scaled(self, draw, loc, scale, size):
        shape = _fitted_size(size, loc, scale)
        return _one(np.add(np.multiply(draw(shape), scale), loc), size, float)

    def normal(self, loc=0.0, scale=1.0, size=None):
        _check(np.less(scale, 0), "scale < 0")
        return self._scaled(self.standard_normal, loc, scale, size)

    def uniform(self, low=0.0, high=1.0, size=None):
        span = np.subtract(high, low)
        _check(np.less(span, 0), "high - low < 0")
        return self._scaled(self.random, low, span, size)

    def standard_exponential(self, size=None, dtype=np.float64, method="zig", out=None):
        _no_out("standard_exponential", out)
        u = wrap(self._unit(_size(size), np.dtype(dtype)))
        return _one(np.negative(np.log1p(np.negative(u))), size, float)

    def exponential(self, scale=1.0, size=None):
        _check(np.less(scale, 0), "scale < 0")
        return self._scaled(self.standard_exponential, 0.0, scale, size)

    # --- distributions by transforming uniform, exponential or normal draws (NumPy's distributions) ---------

    def _transformed(self, draw, transform, params, size, python=float):
        """``transform(draw(shape), *params)``: one draw per element of ``size`` (or of the parameters'
        broadcast shape)."""
        shape = _fitted_size(size, *params)
        return _one(transform(draw(shape), *params), size, python)

    def _uniform_open(self, shape):
        return wrap(self._unit(shape, open_low=True))  # (in (0, 1): every logarithm below is finite)

    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        _check(np.less(sigma, 0), "sigma < 0")
        return self._transformed(self.standard_normal, lambda z, m, s: np.exp(np.add(np.multiply(z, s), m)),
                                 (mean, sigma), size)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        _check(np.less(scale, 0), "scale < 0")
        def transform(u, loc, scale):
            centered = np.subtract(u, 0.5)
            return np.subtract(loc, np.multiply(np.multiply(scale, np.sign(centered)),
                                                np.log1p(np.multiply(-2.0, np.abs(centered)))))
        return self._transformed(self._uniform_open, transform, (loc, scale), size)

    def logistic(self, loc=0.0, scale=1.0, size=None):
        _check(np.less(scale, 0), "scale < 0")
        return self._transformed(self._uniform_open, lambda u, loc, scale: np.add(
            loc, np.multiply(scale, np.log(np.divide(u, np.subtract(1.0, u))))), (loc, scale), size)

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        _check(np.less(scale, 0), "scale < 0")
        return self._transformed(self._uniform_open, lambda u, loc, scale: np.subtract(
            loc, np.multiply(scale, np.log(np.negative(np.log(u))))), (loc, scale), size)

    def rayleigh(self, scale=1.0, size=None):
        _check(np.less(scale, 0), "scale < 0")
        return self._transformed(self.standard_exponential, lambda e, scale: np.multiply(
            scale, np.sqrt(np.multiply(2.0, e))), (scale,), size)

    def weibull(self, a, size=None):
        _check(np.less(a, 0), "a < 0")
        return self._transformed(self.standard_exponential, lambda e, a: np.where(  # (a == 0: NumPy's 0)
            np.equal(a, 0), 0.0, np.power(e, np.divide(1.0, np.where(np.equal(a, 0), 1.0, a)))), (a,), size)

    def pareto(self, a, size=None):
        _check(np.less_equal(a, 0), "a <= 0")
        return self._transformed(self.standard_exponential, lambda e, a: np.expm1(np.divide(e, a)), (a,), size)

    def power(self, a, size=None):
        _check(np.less_equal(a, 0), "a <= 0")
        return self._transformed(self.standard_exponential, lambda e, a: np.power(
            np.negative(np.expm1(np.negative(e))), np.divide(1.0, a)), (a,), size)

    def standard_cauchy(self, size=None):
        return self._transformed(self._uniform_open, lambda u: np.tan(np.multiply(np.pi, np.subtract(u, 0.5))),
                                 (), size)

    def geometric(self, p, size=None):
        _check(np.logical_not(np.logical_and(np.greater(p, 0), np.less_equal(p, 1))),
               "p <= 0, p > 1 or p contains NaNs")
        return self._transformed(self.standard_exponential, lambda e, p: np.maximum(np.ceil(np.divide(
            np.negative(e), np.log1p(np.negative(p)))), 1).astype(np.int64), (p,), size, python=int)

    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8, *, method="svd"):
        """``mean + z @ A.T`` with ``A A.T = cov`` (from its eigenvectors: a covariance that is only positive
        semi-definite too): NumPy's distribution, from another factor of ``cov`` than its SVD's."""
        mean, cov = asarray(mean).astype(np.float64), asarray(cov).astype(np.float64)
        if mean.ndim != 1 or cov.shape != (mean.shape[0], mean.shape[0]):
            raise ValueError("mean and cov must have same length" if mean.ndim == 1 else "mean must be 1 dimensional")
        w, v = np.linalg.eigh(cov)
        factor = np.multiply(v, np.sqrt(np.maximum(w, 0.0)))
        z = self.standard_normal(_size(size) + mean.shape)
        return np.add(np.matmul(z, np.transpose(factor)), mean)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        if high is None:
            low, high = 0, low
        empty = np.greater(low, high) if endpoint else np.greater_equal(low, high)
        if np.ndim(low) == 0 and np.ndim(high) == 0:  # (NumPy's message names high alone where low is 0)
            at_zero = np.equal(low, 0)
            _check(np.logical_and(empty, at_zero), "high < 0" if endpoint else "high <= 0")
            empty = np.logical_and(empty, np.logical_not(at_zero))
        _check(empty, "low > high" if endpoint else "low >= high")
        if endpoint:
            high = np.add(high, 1)
        shape = _size(size) if size is not None else np.broadcast_shapes(np.shape(low), np.shape(high))
        span = ops.convert(value(np.subtract(high, low)), np.uint64)
        offset = ops.binary("stablehlo.remainder", self._bits(shape), ops.broadcast_in_dim(
            span, shape, range(len(shape) - span.type.rank, len(shape))))
        drawn = np.add(wrap(ops.convert(offset, np.int64)), low).astype(dtype)
        if isinstance(low, numbers.Integral) and isinstance(high, numbers.Integral) and low < high:
            drawn = with_value_bounds(drawn, int(low), int(high) - 1)
        return _one(drawn, size, None)

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
        count = int(np.prod(shape, dtype=np.int64))
        if n == 0 and count:
            raise ValueError("a cannot be empty unless no samples are taken")
        if p is not None:
            p = asarray(p).astype(np.float64)
            if p.ndim != 1:
                raise ValueError("p must be 1-dimensional")
            if p.shape[0] != n:
                raise ValueError("a and p must have same size")
            total = np.sum(p)
            _check(np.isnan(total), "Probabilities contain NaN")
            _check(np.less(p, 0), "Probabilities are not non-negative")
            _check(np.greater(np.abs(np.subtract(total, 1.0)), math.sqrt(np.finfo(np.float64).eps)),
                   "Probabilities do not sum to 1. See Notes section of docstring for more information.")
        if not replace:
            if count > n:
                raise ValueError("Cannot take a larger sample than population when replace is False")
            if p is None:
                picks = np.reshape(self.permutation(n)[:count], shape)
            else:  # successive draws in proportion to p among those left: the largest keys log(u) / p
                _check(np.less(np.count_nonzero(np.greater(p, 0)), count), "Fewer non-zero entries in p than size")
                keys = np.divide(np.log(wrap(self._unit((n,), open_low=True))), p)
                picks = np.reshape(np.argsort(np.negative(keys), kind="stable")[:count], shape)
        elif p is None:
            picks = self.integers(0, n, size=shape)
        else:  # inverse transform sampling: how many cumulative probabilities lie at or below u
            cdf = np.cumsum(p)
            u = np.multiply(self.random(shape), cdf[-1])
            picks = np.sum(np.expand_dims(u, -1) >= cdf, axis=-1)
            picks = np.minimum(picks, n - 1)
        return _one(np.take(population, picks, axis=0), size, int if isinstance(a, numbers.Integral) else None)


def _fitted_size(size, *params) -> tuple:
    """The draws' shape: ``size``, which the parameters' broadcast shape must fit (NumPy's error), or that."""
    inputs = np.broadcast_shapes(*(np.shape(p) for p in params))
    if size is None:
        return inputs
    shape = _size(size)
    try:
        fits = np.broadcast_shapes(shape, inputs) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"Output size {shape} is not compatible with broadcast dimensions of inputs {inputs}.")
    return shape


def _check(failed, message):
    """NumPy's ValueError where an element of ``failed`` holds: now where it is known, else when the program runs."""
    failed = np.any(failed)
    if isinstance(failed, TracedArray):
        numpy_error_if(ops.reshape(failed.value, ()), lambda: ValueError(message))
    elif failed:
        raise ValueError(message)


def _one(drawn, size, python):
    """A draw with no ``size`` of scalar parameters: NumPy's Python number (``python``: float for the
    continuous distributions, whatever their dtype; int for ``choice`` of an int), else its NumPy scalar."""
    if size is not None or not isinstance(drawn, TracedArray) or drawn.ndim:
        return drawn
    v = ops.reshape(drawn.value, ())
    if python is float:
        return TracedArray(ops.convert(v, np.float64), scalar=True, weak=float)
    return TracedArray(v, scalar=True, weak=python)


def _no_out(name, out):
    if out is not None:
        raise UnsupportedError(f"Generator.{name}(..., out=...) is not supported")


class TracedRandomState(TracedGenerator):
    """What user code sees in place of a ``numpy.random.RandomState`` passed in: its legacy methods
    (``rand``, ``randn``, ``randint``, ``random_sample``, and the Generator methods they share)."""

    def __getattr__(self, name):
        if not name.startswith("_") and hasattr(np.random.RandomState, name):
            raise located(UnsupportedError(f"numpy.random.RandomState.{name} is not supported in compiled code yet; "
                                           "draw uniform or normal numbers and transform them, or call it outside"))
        raise AttributeError(f"'numpy.random.RandomState' object has no attribute {name!r}")

    def rand(self, *shape):
        return self.random(shape or None)

    def randn(self, *shape):
        return self.standard_normal(shape or None)

    def random_sample(self, size=None):
        return self.random(size)

    def randint(self, low, high=None, size=None, dtype=int):
        drawn = self.integers(low, high, size, np.int64 if dtype is int else dtype)
        return _one(drawn, size, int) if dtype is int else drawn


def _generator_argument(generator, fetch):
    """A Generator passed to a compiled function, or read from a global or an object's attribute: a
    fresh key from it at every call (a RandomState's too: the same distributions, not its stream)."""
    kind = TracedRandomState if isinstance(generator, np.random.RandomState) else TracedGenerator
    return kind(context.current().host_input(_KEY, lambda leaves: _draw_key(_bits_of(fetch(leaves)))))


def _bits_of(generator):
    return generator._bit_generator if isinstance(generator, np.random.RandomState) else generator.bit_generator


context.STATEFUL_TYPES[np.random.Generator] = _generator_argument
context.STATEFUL_TYPES[np.random.RandomState] = _generator_argument


def _seeded_key(seed):
    if isinstance(seed, TracedArray):
        mixed, _ = ops.rng_bit_generator(ops.concatenate(
            [ops.reshape(ops.convert(value(seed), np.uint64), (1,)), ops.constant(np.zeros(1, np.uint64))], 0), (1,))
        return mixed
    return ops.constant(_draw_key(np.random.default_rng(seed).bit_generator))


@constructs(np.random.default_rng)
def default_rng(seed=None):
    if isinstance(seed, TracedGenerator):  # (NumPy's default_rng of a Generator is that Generator)
        return seed
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
              "choice", "permutation", "shuffle", "lognormal", "laplace", "logistic", "gumbel", "rayleigh", "weibull",
              "pareto", "power", "standard_cauchy", "geometric", "multivariate_normal"]:
    _legacy(_name, _name)


@constructs(np.random.randint)
def randint(low, high=None, size=None, dtype=int):
    return TracedRandomState.randint(_global(), low, high, size, dtype)


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


