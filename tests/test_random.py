"""np.random in compiled code: NumPy's distributions (checked statistically), traced state."""
import numpy as np
import pytest

import cofactor as cf

N = 20000


def draws(rng):
    return {
        "random": rng.random(N),
        "standard_normal": rng.standard_normal(N),
        "normal": rng.normal(3.0, 2.0, size=N),
        "uniform": rng.uniform(-1.0, 4.0, size=N),
        "exponential": rng.exponential(2.0, size=N),
        "integers": rng.integers(2, 12, size=N),
        "choice_p": rng.choice(3, size=N, p=[0.2, 0.5, 0.3]),
    }


SUPPORT = {"random": (0, 1), "uniform": (-1, 4), "exponential": (0, np.inf), "integers": (2, 12),
           "choice_p": (0, 3)}


@pytest.fixture(scope="module")
def samples():
    got = cf.jit(draws)(np.random.default_rng(1))
    return {k: np.asarray(v) for k, v in got.items()}, draws(np.random.default_rng(2))


@pytest.mark.parametrize("name", ["random", "standard_normal", "normal", "uniform", "exponential",
                                  "integers", "choice_p"])
def test_same_distribution_as_numpy(samples, name):
    got, want = samples[0][name], samples[1][name]
    assert got.dtype == want.dtype and got.shape == want.shape
    # Two-sample Kolmogorov-Smirnov statistic: 0.025 is far above what N=20000 allows by chance.
    grid = np.unique(np.concatenate([got, want]))
    cdf = lambda s: np.searchsorted(np.sort(s), grid, side="right") / len(s)  # noqa: E731
    assert np.max(np.abs(cdf(got) - cdf(want))) < 0.025
    low, high = SUPPORT.get(name, (-np.inf, np.inf))
    assert got.min() >= low and got.max() < high


def test_generator_argument_advances_so_calls_differ_and_seeds_repeat():
    f = cf.jit(lambda rng: rng.random(4))
    rng = np.random.default_rng(0)
    first, second = np.asarray(f(rng)), np.asarray(f(rng))
    assert not np.array_equal(first, second)
    again = np.asarray(f(np.random.default_rng(0)))
    np.testing.assert_array_equal(first, again)
    assert len(f.cache) == 1


def test_legacy_global_functions_follow_np_random_seed():
    def g():
        return np.random.rand(3), np.random.randn(2, 2), np.random.randint(5, size=4)

    f = cf.jit(g)
    np.random.seed(0)
    a = [np.asarray(v) for v in f()]
    np.random.seed(0)
    b = [np.asarray(v) for v in f()]
    c = [np.asarray(v) for v in f()]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0])
    assert a[0].shape == (3,) and a[1].shape == (2, 2) and a[2].dtype == np.int64
    assert np.all((a[2] >= 0) & (a[2] < 5))


def test_seeded_generator_inside_is_deterministic():
    def h(x):
        rng = np.random.default_rng(42)
        return rng.random(3) + x

    f = cf.jit(h)
    np.testing.assert_array_equal(np.asarray(f(np.zeros(3))), np.asarray(f(np.zeros(3))))


def test_permutation_shuffle_and_choice_without_replacement():
    def f(x, rng):
        p = rng.permutation(x)
        y = x.copy()
        rng.shuffle(y)
        return p, y, rng.choice(10, size=6, replace=False)

    x = np.arange(8.0)
    p, y, c = (np.asarray(v) for v in cf.jit(f)(x, np.random.default_rng(3)))
    np.testing.assert_array_equal(np.sort(p), x)
    np.testing.assert_array_equal(np.sort(y), x)
    assert len(set(c.tolist())) == 6 and c.min() >= 0 and c.max() < 10


def test_too_large_sample_without_replacement_raises():
    with pytest.raises(ValueError, match="larger sample"):
        cf.jit(lambda rng: rng.choice(3, size=4, replace=False))(np.random.default_rng(0))


def test_random_numbers_baked_in_at_trace_time_are_reported():
    unconvertible = eval("lambda x: x + np.random.rand(3)")  # no source file: cannot be converted
    with pytest.warns(cf.TraceTimeRandomWarning, match="constants"):
        cf.jit(unconvertible)(np.zeros(3))


def test_a_generator_method_cofactor_lacks_is_named():
    with pytest.raises(cf.UnsupportedError, match=r"numpy.random.Generator.poisson is not supported"):
        cf.jit(lambda x, rng: x + rng.poisson(3.0, size=x.shape))(np.ones(2), np.random.default_rng(0))


def _poisson(x):
    return np.random.poisson(3.0, size=x.shape)


def _binomial(x):
    return np.random.binomial(10, 0.5, size=x.shape) + x


def _multivariate_normal(x):
    return np.random.multivariate_normal(np.zeros(2), np.eye(2), size=3)


@pytest.mark.parametrize("draw", [_poisson, _binomial, _multivariate_normal], ids=lambda f: f.__name__[1:])
def test_the_global_generators_other_distributions_are_refused_not_drawn_once(draw):
    """(NumPy drew them while tracing: the same numbers at every call, with a warning.)"""
    with pytest.raises(cf.UnsupportedError, match=f"numpy.random.{draw.__name__[1:]} is not supported"):
        cf.jit(draw)(np.ones(3))
