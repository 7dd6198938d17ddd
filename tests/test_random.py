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
        "lognormal": rng.lognormal(0.5, 0.7, N),
        "laplace": rng.laplace(1.0, 2.0, N),
        "logistic": rng.logistic(0.0, 1.5, N),
        "gumbel": rng.gumbel(1.0, 2.0, N),
        "rayleigh": rng.rayleigh(2.0, N),
        "weibull": rng.weibull(1.5, N),
        "pareto": rng.pareto(3.0, N),
        "power": rng.power(2.5, N),
        "standard_cauchy": rng.standard_cauchy(N),
        "geometric": rng.geometric(0.3, N),
        "multivariate_normal": rng.multivariate_normal([1.0, -1.0], [[2.0, 0.8], [0.8, 1.0]], N)[:, 1],
    }


SUPPORT = {"random": (0, 1), "uniform": (-1, 4), "exponential": (0, np.inf), "integers": (2, 12),
           "choice_p": (0, 3), "lognormal": (0, np.inf), "rayleigh": (0, np.inf), "weibull": (0, np.inf),
           "pareto": (0, np.inf), "power": (0, 1.0000001), "geometric": (1, np.inf)}


@pytest.fixture(scope="module")
def samples():
    got = cf.jit(draws)(np.random.default_rng(1))
    return {k: np.asarray(v) for k, v in got.items()}, draws(np.random.default_rng(2))


@pytest.mark.parametrize("name", ["random", "standard_normal", "normal", "uniform", "exponential",
                                  "integers", "choice_p", "lognormal", "laplace", "logistic", "gumbel", "rayleigh",
                                  "weibull", "pareto", "power", "standard_cauchy", "geometric", "multivariate_normal"])
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


def _gamma(x):
    return np.random.gamma(2.0, size=3)


@pytest.mark.parametrize("draw", [_poisson, _binomial, _gamma], ids=lambda f: f.__name__[1:])
def test_the_global_generators_other_distributions_are_refused_not_drawn_once(draw):
    """(NumPy drew them while tracing: the same numbers at every call, with a warning.)"""
    with pytest.raises(cf.UnsupportedError, match=f"numpy.random.{draw.__name__[1:]} is not supported"):
        cf.jit(draw)(np.ones(3))


def test_choice_without_replacement_follows_p():
    """Successive draws in proportion to p among the items left: the pairs' frequencies are NumPy's."""
    p = np.array([0.1, 0.2, 0.7])
    pick = cf.jit(lambda rng, p: rng.choice(3, size=2, replace=False, p=p))
    rng, ref = np.random.default_rng(3), np.random.default_rng(4)
    got = np.array([np.asarray(pick(rng, p)) for _ in range(3000)])
    want = np.array([ref.choice(3, size=2, replace=False, p=p) for _ in range(3000)])
    frequencies = [[np.mean((s[:, 0] == i) & (s[:, 1] == j)) for i in range(3) for j in range(3)] for s in (got, want)]
    np.testing.assert_allclose(*frequencies, atol=0.035)   # (NumPy's: about 0.02, 0.08, 0.03, 0.17, 0.23, 0.47)


def _draw_types(x, rng):
    return (x * rng.random(), x * rng.standard_normal(), x * rng.normal(), x * rng.uniform(), x * rng.exponential(),
            x * rng.choice(5), x * rng.integers(5), x * np.random.randint(5), x * np.random.normal(),
            isinstance(rng.random(), float), isinstance(rng.choice(5), int), isinstance(rng.choice(x), np.float32))


def test_one_draw_is_a_python_number_as_numpys():
    """(A float32 array times a NumPy float64 draw was float64.)"""
    x = np.ones(2, np.float32)
    want, got = _draw_types(x, np.random.default_rng(0)), cf.jit(_draw_types)(x, np.random.default_rng(0))
    for w, g in zip(want, got):
        assert np.asarray(g).dtype == np.asarray(w).dtype
    assert [bool(g) for g in got[-3:]] == [True, True, True]


def _bootstrap(rng, x):
    return rng.integers(0, len(x[x > 0]), size=3)


@pytest.mark.parametrize("draw, message", [
    (lambda rng, x: rng.integers(5, 5, size=3), "low >= high"),
    (lambda rng, x: rng.integers(x.shape[0], 2, endpoint=True), "low > high"),
    (lambda rng, x: rng.normal(0.0, x[0]), "scale < 0"),
    (lambda rng, x: rng.exponential(x), "scale < 0"),
    (lambda rng, x: rng.uniform(1.0, x[0]), "high - low < 0"),
    (lambda rng, x: rng.choice(2, p=np.abs(x[:2])), "Probabilities do not sum to 1"),
    (lambda rng, x: rng.choice(2, p=np.array([1.0, 0.0]) + x[:2] * 0.5), "Probabilities are not non-negative"),
    (lambda rng, x: rng.choice(3, size=2, replace=False, p=np.array([1.0, 0.0, 0.0]) + x[:3] * 0), "Fewer non-zero"),
    (lambda rng, x: rng.choice(x[:0]), "a cannot be empty"),
    (lambda rng, x: rng.lognormal(0.0, x[0]), "sigma < 0"),
    (lambda rng, x: rng.weibull(x[0]), "a < 0"),
    (lambda rng, x: rng.pareto(x[0] + 1.0), "a <= 0"),
    (lambda rng, x: rng.geometric(x[0] + 2.5), "p <= 0, p > 1"),
    (lambda rng, x: rng.laplace(np.zeros((2, 1)), np.ones(3), size=(3,)), "Output size"),
])
def test_numpys_argument_errors_of_the_distributions(draw, message):
    x = -np.ones(3)
    with pytest.raises(ValueError, match=message):
        draw(np.random.default_rng(0), x)
    with pytest.raises(ValueError, match=message):
        cf.jit(draw)(np.random.default_rng(0), x)


def test_an_empty_range_of_run_time_length_is_numpys_error_when_the_function_runs():
    f = cf.jit(_bootstrap)
    assert np.asarray(f(np.random.default_rng(0), np.ones(4))).max() < 4
    with pytest.raises(ValueError, match="high <= 0"):
        f(np.random.default_rng(0), -np.ones(4))


def test_a_random_state_argument_advances_at_every_call():
    """(It drew once, when traced: every call returned the same numbers.)"""
    def noise(rs, n):
        return rs.normal(size=n), rs.randint(0, 10, size=2), rs.rand(2), rs.randn(), rs.random_sample(2)
    f, rs = cf.jit(noise), np.random.RandomState(0)
    first, second = [np.asarray(f(rs, 3)[0]) for _ in range(2)]
    assert not np.array_equal(first, second) and len(f.cache) == 1
    np.testing.assert_array_equal(np.asarray(f(np.random.RandomState(0), 3)[0]), first)
    with pytest.raises(cf.UnsupportedError, match="RandomState.poisson"):
        cf.jit(lambda rs: rs.poisson(3))(rs)


def test_default_rng_of_a_generator_is_that_generator():
    def simulate(n, seed=None):
        rng = np.random.default_rng(seed)
        return rng.standard_normal(n)
    f, rng = cf.jit(simulate), np.random.default_rng(0)
    assert not np.array_equal(np.asarray(f(3, rng)), np.asarray(f(3, rng)))


def test_weibull_of_a_zero_shape_is_zero():
    got = cf.jit(lambda rng: rng.weibull(np.array([0.0, 2.0]), size=(3, 2)))(np.random.default_rng(0))
    assert np.all(np.asarray(got)[:, 0] == 0) and np.all(np.isfinite(np.asarray(got)))
