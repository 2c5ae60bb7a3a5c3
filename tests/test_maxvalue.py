"""Tests for mumbo_jax.acquisition.maxvalue: max-value (g*) samplers for MES / MUMBO.

References are computed independently with scipy/numpy: quantiles of the product-of-normals
CDF by brentq on sums of norm.logcdf, and joint-sample maxima with
numpy.random.multivariate_normal.
"""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from mumbo_jax.acquisition import maxvalue
from mumbo_jax.acquisition.maxvalue import (
    exact_max_samples,
    fit_gumbel,
    gumbel_max_samples,
    max_value_quantiles,
)

N_BIG = 20_000


# ---------------------------------------------------------------------------- references


def scipy_quantile(mean, var, p):
    """y with prod_i Phi((y - mu_i)/s_i) = p, by brentq on the log CDF."""
    mean, sd = np.asarray(mean, float), np.sqrt(np.asarray(var, float))

    def f(y):
        return np.sum(stats.norm.logcdf((y - mean) / sd)) - math.log(p)

    lo, hi = np.max(mean - 12 * sd), np.max(mean + 12 * sd)
    return optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-14, maxiter=500)


def scipy_gumbel(mean, var):
    """(a, b) of the Wang & Jegelka Gumbel fit, from the scipy quartiles."""
    y25, y50, y75 = (scipy_quantile(mean, var, p) for p in (0.25, 0.5, 0.75))
    b = (y75 - y25) / (math.log(-math.log(0.25)) - math.log(-math.log(0.75)))
    return y50 + b * math.log(math.log(2.0)), b


def rbf_grid(m=50, lengthscale=0.2, seed=0):
    x = np.linspace(0.0, 1.0, m)
    cov = 0.8 * np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / lengthscale**2)
    mean = np.sin(5.0 * x) + 0.3 * np.random.default_rng(seed).normal(size=m)
    return mean, cov


@pytest.fixture(scope="module")
def grid():
    rng = np.random.default_rng(1)
    m = 2_000
    return rng.normal(size=m), rng.uniform(0.05, 1.0, size=m)


# ---------------------------------------------------------------- quantiles of the CDF


@pytest.mark.parametrize("m", [1, 7, 2_000, 30_000])
def test_quantiles_match_scipy_brentq(m):
    rng = np.random.default_rng(m)
    mean = 3.0 * rng.normal(size=m)
    var = rng.uniform(0.01, 2.0, size=m)
    probs = np.array([0.01, 0.25, 0.5, 0.75, 0.99])
    got = np.asarray(max_value_quantiles(mean, var, probs))
    want = np.array([scipy_quantile(mean, var, p) for p in probs])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert np.all(np.diff(got) > 0)


def test_quantiles_default_are_quartiles_and_scalar_prob(grid):
    mean, var = grid
    q = np.asarray(max_value_quantiles(mean, var))
    assert q.shape == (3,)
    np.testing.assert_allclose(q[1], float(max_value_quantiles(mean, var, 0.5)), atol=1e-12)
    assert jnp.shape(max_value_quantiles(mean, var, 0.5)) == ()


def test_fit_gumbel_matches_scipy(grid):
    mean, var = grid
    a, b = fit_gumbel(mean, var)
    a_ref, b_ref = scipy_gumbel(mean, var)
    np.testing.assert_allclose([float(a), float(b)], [a_ref, b_ref], atol=1e-9)
    assert b > 0


@settings(max_examples=25, deadline=None)
@given(
    m=st.sampled_from([1, 3, 40]),
    seed=st.integers(0, 2**31 - 1),
    log_scale=st.floats(-3.0, 3.0),
    p=st.floats(1e-6, 1 - 1e-6),
)
def test_quantile_property_against_scipy(m, seed, log_scale, p):
    rng = np.random.default_rng(seed)
    scale = 10.0**log_scale
    mean = scale * rng.normal(size=m) + rng.normal()
    var = (scale * rng.uniform(0.01, 1.0, size=m)) ** 2
    got = float(max_value_quantiles(mean, var, p))
    want = scipy_quantile(mean, var, p)
    assert abs(got - want) <= 1e-9 * scale + 1e-12 * abs(want)


# --------------------------------------------------------------------- Gumbel sampler


def test_gumbel_samples_match_fitted_and_true_quantiles(grid):
    mean, var = grid
    g = np.asarray(gumbel_max_samples(jax.random.key(0), mean, var, N_BIG))
    assert g.shape == (N_BIG,) and g.dtype == np.float64
    y25, y50, y75 = (scipy_quantile(mean, var, p) for p in (0.25, 0.5, 0.75))
    a, b = scipy_gumbel(mean, var)
    # MC sd of a sample quantile of a Gumbel(b) with n = 20k is ~0.01 b; allow 4 sd.
    tol = 0.04 * b
    e25, e50, e75 = np.quantile(g, [0.25, 0.5, 0.75])
    # The fit is exact at the median and in the interquartile range...
    assert abs(e50 - y50) < tol
    assert abs((e75 - e25) - (y75 - y25)) < tol
    # ...and each quartile is the fitted Gumbel's, close to the true one.
    gumbel = stats.gumbel_r(loc=a, scale=b)
    assert abs(e25 - gumbel.ppf(0.25)) < tol and abs(e75 - gumbel.ppf(0.75)) < tol
    assert abs(e25 - y25) < 0.1 * b and abs(e75 - y75) < 0.1 * b
    # Whole distribution: a Gumbel for MAXIMA with the scipy-fitted (a, b).
    assert stats.kstest(g, gumbel.cdf).pvalue > 1e-3


def test_gumbel_samples_maxima_not_minima():
    # 1000 iid N(0, 1) values: the max is ~3.2, below 0 with probability 2^-1000.
    m = 1_000
    mean, var = np.zeros(m), np.ones(m)
    g = np.asarray(gumbel_max_samples(jax.random.key(1), mean, var, 5_000))
    assert np.mean(g < 0.0) < 1e-3
    assert 2.5 < np.median(g) < 4.0
    # Heavy RIGHT tail (a minimum-Gumbel would be skewed left).
    assert stats.skew(g) > 0.8
    # One dominant mean, the others 20 sd below: g* ~ N(10, 1), median 10.
    mean = np.concatenate([np.zeros(99), [10.0]])
    g = np.asarray(gumbel_max_samples(jax.random.key(2), mean, np.ones(100), N_BIG))
    assert abs(np.median(g) - 10.0) < 0.05
    assert np.mean(g > mean.max() - 3.0) > 0.99


def test_gumbel_floor_clamps(grid):
    mean, var = grid
    key = jax.random.key(3)
    free = np.asarray(gumbel_max_samples(key, mean, var, 1_000))
    np.testing.assert_array_equal(
        free, np.asarray(gumbel_max_samples(key, mean, var, 1_000, -np.inf))
    )
    mid = float(np.median(free))
    clamped = np.asarray(gumbel_max_samples(key, mean, var, 1_000, mid))
    np.testing.assert_array_equal(clamped, np.maximum(free, mid))
    assert np.any(clamped == mid) and np.any(clamped > mid)
    high = float(free.max()) + 1.0
    np.testing.assert_array_equal(
        np.asarray(gumbel_max_samples(key, mean, var, 1_000, jnp.asarray(high))), high
    )


# ---------------------------------------------------------------------- exact sampler


def test_exact_matches_numpy_monte_carlo():
    mean, cov = rbf_grid()
    g = np.asarray(exact_max_samples(jax.random.key(4), mean, cov, N_BIG))
    rng = np.random.default_rng(4)
    ref = rng.multivariate_normal(mean, cov, size=N_BIG, method="eigh").max(axis=1)
    se = np.sqrt(g.var() / N_BIG + ref.var() / N_BIG)
    assert abs(g.mean() - ref.mean()) < 4 * se
    assert abs(g.std() - ref.std()) < 0.05 * ref.std()
    sd = ref.std()
    for q in (0.1, 0.25, 0.5, 0.75, 0.9):
        assert abs(np.quantile(g, q) - np.quantile(ref, q)) < 0.05 * sd
    assert stats.ks_2samp(g, ref).pvalue > 1e-3


def test_exact_independent_grid_matches_product_cdf():
    rng = np.random.default_rng(5)
    m = 30
    mean, var = rng.normal(size=m), rng.uniform(0.1, 1.0, size=m)
    g = np.asarray(exact_max_samples(jax.random.key(5), mean, np.diag(var), N_BIG))
    sd = np.sqrt(var)

    def cdf(y):
        return np.exp(np.sum(stats.norm.logcdf((y[:, None] - mean) / sd), axis=1))

    assert stats.kstest(g, cdf).pvalue > 1e-3


def test_exact_floor_clamps():
    mean, cov = rbf_grid()
    key = jax.random.key(6)
    free = np.asarray(exact_max_samples(key, mean, cov, 500))
    mid = float(np.median(free))
    np.testing.assert_array_equal(
        np.asarray(exact_max_samples(key, mean, cov, 500, mid)), np.maximum(free, mid)
    )


# ------------------------------------------------------------------------ jit and vmap


SAMPLERS = {
    "gumbel": lambda: (gumbel_max_samples, *(np.linspace(0, 1, 200), np.full(200, 0.1))),
    "exact": lambda: (exact_max_samples, *rbf_grid()),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_and_vmap_over_keys(name):
    sampler, mean, second = SAMPLERS[name]()
    n = 8
    key = jax.random.key(7)
    eager = np.asarray(sampler(key, mean, second, n))
    # jit with n_samples static, both by name and by closure.
    jitted = jax.jit(sampler, static_argnames="n_samples")
    np.testing.assert_allclose(np.asarray(jitted(key, mean, second, n_samples=n)), eager,
                               rtol=1e-12, atol=1e-12)
    closed = jax.jit(lambda k, mu, s, f: sampler(k, mu, s, n, f))
    np.testing.assert_allclose(np.asarray(closed(key, mean, second, -jnp.inf)), eager,
                               rtol=1e-12, atol=1e-12)
    # Same key, same samples; different keys, different samples.
    np.testing.assert_array_equal(np.asarray(sampler(key, mean, second, n)), eager)
    keys = jax.random.split(jax.random.key(8), 5)
    batch = np.asarray(jax.vmap(lambda k: sampler(k, mean, second, n))(keys))
    assert batch.shape == (5, n) and np.all(np.isfinite(batch))
    assert len({tuple(row) for row in batch}) == 5
    np.testing.assert_allclose(batch[2], np.asarray(sampler(keys[2], mean, second, n)),
                               rtol=1e-12, atol=1e-12)
    # Inputs may be traced too (vmap over a batch of posteriors).
    means = jnp.stack([jnp.asarray(mean), jnp.asarray(mean) + 1.0])
    shifted = np.asarray(jax.vmap(lambda mu: sampler(key, mu, second, n))(means))
    assert shifted.shape == (2, n) and np.all(np.isfinite(shifted))
    assert np.all(shifted[1] > shifted[0])


def test_legacy_uint32_keys_accepted():
    g = gumbel_max_samples(jax.random.PRNGKey(0), np.zeros(5), np.ones(5), 4)
    assert np.all(np.isfinite(np.asarray(g)))


# ------------------------------------------------------------------- degenerate inputs


@pytest.mark.parametrize(
    "mean,var",
    [
        (np.linspace(0, 1, 50), np.zeros(50)),  # noiseless everywhere
        (np.linspace(0, 1, 50), np.full(50, 1e-14)),
        (np.full(50, 2.0), np.zeros(50)),  # identical means, no variance
        (np.full(50, 2.0), np.ones(50)),  # identical means
        (np.array([0.3]), np.array([0.0])),  # M = 1, point mass
        (np.array([0.3]), np.array([1.0])),  # M = 1
        (np.linspace(0, 1, 50), np.r_[np.zeros(25), np.ones(25)]),
        (np.zeros(50), np.r_[-1e-17, np.ones(49)]),  # round-off negative variance
        (1e8 + np.linspace(0, 1, 50), np.full(50, 1e-20)),
    ],
)
def test_gumbel_degenerate_inputs_are_finite(mean, var):
    key = jax.random.key(9)
    g = np.asarray(gumbel_max_samples(key, mean, var, 200))
    assert np.all(np.isfinite(g))
    assert np.all(np.isfinite(np.asarray(fit_gumbel(mean, var))))
    if np.all(var <= 1e-14):
        # Point masses: g* is the largest mean, to within the sd floor.
        np.testing.assert_allclose(g, mean.max(), rtol=1e-6, atol=1e-6)


def test_degenerate_inputs_under_outer_jit_and_vmap():
    # The public functions run compiled kernels already; check that the guards also hold
    # when the inputs themselves are traced (no concrete checks, no host round trip).
    keys = jax.random.split(jax.random.key(13), 3)
    f = jax.jit(jax.vmap(lambda k, mu, v: gumbel_max_samples(k, mu, v, 50),
                         in_axes=(0, None, None)))
    assert np.all(np.isfinite(np.asarray(f(keys, jnp.full(20, 2.0), jnp.zeros(20)))))
    g = jax.jit(jax.vmap(lambda k, mu, c: exact_max_samples(k, mu, c, 50),
                         in_axes=(0, None, None)))
    v = jnp.linspace(1.0, 2.0, 20)
    assert np.all(np.isfinite(np.asarray(g(keys, jnp.zeros(20), jnp.outer(v, v)))))
    assert np.all(np.isfinite(np.asarray(g(keys, jnp.zeros(20), jnp.zeros((20, 20))))))


def test_gumbel_m1_is_close_to_the_normal():
    g = np.asarray(gumbel_max_samples(jax.random.key(10), np.array([1.0]), np.array([4.0]),
                                      N_BIG))
    assert abs(np.median(g) - 1.0) < 0.05  # the fit matches the median exactly


def _psd_cases():
    mean, cov = rbf_grid(50, lengthscale=1.0)  # numerically singular
    v = np.linspace(1, 2, 20)
    yield mean, cov
    yield np.zeros(20), np.outer(v, v)  # rank 1
    yield np.zeros(20), np.zeros((20, 20))  # no uncertainty at all
    yield np.ones(20), np.outer(v, v) - 1e-10 * np.eye(20)  # slightly indefinite
    yield np.array([0.5]), np.array([[0.0]])  # M = 1, point mass
    yield np.array([0.5]), np.array([[2.0]])  # M = 1
    yield np.full(10, 3.0), np.full((10, 10), 1.0)  # identical, perfectly correlated


@pytest.mark.parametrize("mean,cov", list(_psd_cases()))
def test_exact_degenerate_inputs_are_finite(mean, cov):
    key = jax.random.key(11)
    g = np.asarray(exact_max_samples(key, mean, cov, 300))
    assert np.all(np.isfinite(g))
    if not np.any(cov):
        np.testing.assert_allclose(g, mean.max(), atol=1e-9)


@pytest.mark.parametrize("shift", [0.0, -1e-9])
def test_exact_rank_one_is_exact(shift):
    # g = mean + v * e with one scalar e ~ N(0, 1): g* = max_i(mean_i + v_i e). The
    # shifted matrix is slightly indefinite: only a jitter (not a fall-back to independent
    # marginals) keeps the rank-one structure.
    v = np.linspace(1.0, 2.0, 20)
    cov = np.outer(v, v) + shift * np.eye(20)
    g = np.asarray(exact_max_samples(jax.random.key(12), np.zeros(20), cov, N_BIG))
    # With mean 0 and v > 0: g* = 2e if e > 0 else 1e, so P(g* > 0) = 1/2 and
    # g* / 2 | g* > 0 ~ half-normal.
    assert abs(np.mean(g > 0) - 0.5) < 0.02
    pos = g[g > 0] / 2.0
    assert stats.kstest(pos, stats.halfnorm.cdf).pvalue > 1e-3


# ------------------------------------------------------------------------- validation


BAD_GUMBEL = [
    (dict(mean=np.zeros((3, 2)), var=np.ones((3, 2))), "mean"),
    (dict(mean=np.zeros(0), var=np.zeros(0)), "mean"),
    (dict(var=np.ones(4)), "var"),
    (dict(var=np.r_[1.0, -0.5, 1.0]), "non-negative"),
    (dict(mean=np.r_[0.0, np.nan, 0.0]), "mean"),
    (dict(var=np.r_[1.0, np.inf, 1.0]), "var"),
    (dict(n_samples=0), "n_samples"),
    (dict(n_samples=-3), "n_samples"),
    (dict(n_samples=2.5), "n_samples"),
    (dict(floor=np.zeros(2)), "floor"),
    (dict(floor=np.nan), "floor"),
]


@pytest.mark.parametrize("override,match", BAD_GUMBEL)
def test_gumbel_bad_input_raises(override, match):
    args = dict(key=jax.random.key(0), mean=np.zeros(3), var=np.ones(3), n_samples=4,
                floor=-np.inf)
    args.update(override)
    with pytest.raises(ValueError, match=match):
        gumbel_max_samples(**args)


BAD_EXACT = [
    (dict(mean=np.zeros((3, 1))), "mean"),
    (dict(cov=np.eye(4)), "cov"),
    (dict(cov=np.ones(3)), "cov"),
    (dict(cov=np.diag([1.0, -1.0, 1.0])), "cov"),
    (dict(cov=np.full((3, 3), np.nan)), "cov"),
    (dict(n_samples=0), "n_samples"),
    (dict(floor=np.ones((1, 1))), "floor"),
]


@pytest.mark.parametrize("override,match", BAD_EXACT)
def test_exact_bad_input_raises(override, match):
    args = dict(key=jax.random.key(0), mean=np.zeros(3), cov=np.eye(3), n_samples=4,
                floor=-np.inf)
    args.update(override)
    with pytest.raises(ValueError, match=match):
        exact_max_samples(**args)


@pytest.mark.parametrize("probs", [0.0, 1.0, [0.5, 1.2], np.nan, np.ones((2, 2)) / 2])
def test_quantiles_bad_probs_raise(probs):
    with pytest.raises(ValueError, match="probs"):
        max_value_quantiles(np.zeros(3), np.ones(3), probs)


def test_shape_checks_still_apply_under_jit():
    f = jax.jit(functools.partial(gumbel_max_samples, n_samples=4))
    with pytest.raises(ValueError, match="var"):
        f(jax.random.key(0), jnp.zeros(3), jnp.ones(4))
    g = jax.jit(functools.partial(exact_max_samples, n_samples=4))
    with pytest.raises(ValueError, match="cov"):
        g(jax.random.key(0), jnp.zeros(3), jnp.eye(2))


# ----------------------------------------------------------------------------------------
# sample_gstar: the glue from a fitted posterior
# ----------------------------------------------------------------------------------------


def _posterior_2fid(seed=0, n=24, lengthscale=None):
    from mumbo_jax.gp import models, posterior

    rng = np.random.default_rng(seed)
    spec = models.icm_model([(0.0, 1.0), (-2.0, 2.0)], 2)
    x = np.column_stack([rng.uniform(size=n), rng.uniform(-2, 2, size=n)])
    z = rng.integers(0, 2, n)
    y = np.sin(5 * x[:, 0]) - 0.3 * x[:, 1] ** 2 + 0.2 * z
    params = models.default_params(spec)
    if lengthscale is not None:
        params = {**params, "log_ls": jnp.log(jnp.full(2, lengthscale))}
    return spec, posterior.condition(spec, params, x, z, y), x


def test_sample_gstar_above_best_posterior_mean_and_methods_agree():
    from mumbo_jax.gp import moments, posterior

    spec, post, x = _posterior_2fid()
    target = posterior.target_fidelity(0)
    mu_eval, _ = moments.target_moments(post, x, target)
    g_gumbel = maxvalue.sample_gstar(jax.random.PRNGKey(0), post, target, n_samples=2000)
    g_exact = maxvalue.sample_gstar(jax.random.PRNGKey(1), post, target, n_samples=2000, method="exact")
    for g in (g_gumbel, g_exact):
        assert g.shape == (2000,)
        assert np.all(np.isfinite(g))
        assert np.min(g) >= np.max(mu_eval) - 1e-12
    # a dense grid of posterior means bounds the max from below: the median sample of a
    # maximum lies above the largest mean
    grid = np.column_stack([np.linspace(0, 1, 4000), np.tile(np.linspace(-2, 2, 80), 50)])
    mu_grid, _ = moments.target_moments(post, grid, target)
    assert np.median(g_gumbel) > np.max(mu_grid) and np.median(g_exact) > np.max(mu_grid)
    # the mean-field Gumbel treats correlated grid points as independent, which can only
    # push the maximum up: its median is not below the exact sampler's
    assert np.median(g_gumbel) >= np.median(g_exact) - 0.02


def test_sample_gstar_jit_vmap_and_errors():
    from mumbo_jax.gp import posterior

    spec, post, _ = _posterior_2fid(1)
    target = posterior.task_mean(2)
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    g = jax.vmap(lambda k: maxvalue.sample_gstar(k, post, target, n_samples=5, n_grid=500))(keys)
    assert g.shape == (3, 5) and np.all(np.isfinite(g))
    assert not np.allclose(g[0], g[1])
    with pytest.raises(ValueError, match="unknown g\\* method"):
        maxvalue.sample_gstar(keys[0], post, target, method="sobol")
    with pytest.raises(ValueError, match="does not exist"):
        maxvalue.sample_gstar(keys[0], post, posterior.target_fidelity(4))


# ----------------------------------------------------------------------------------------
# Large n: exact variances only where they can move the quartiles of the max
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_pruned_points_leave_the_quartiles_unchanged(seed):
    """Points that can_move_quartiles drops, given a variance that is only an upper bound
    (up to 100x the true sd), give the quartiles of the exact grid: scipy's brentq on the
    exact variances is the reference."""
    rng = np.random.default_rng(seed)
    m = 3000
    mean = rng.normal(size=m) * rng.choice([0.3, 3.0])
    var = np.exp(rng.uniform(-12, 0, size=m))
    var[rng.integers(0, m, 20)] = 0.0  # noiseless evaluated points
    bound = var * np.exp(rng.uniform(0, 9, size=m)) + 1e-30
    keep = np.asarray(maxvalue.can_move_quartiles(jnp.asarray(mean), jnp.asarray(bound)))
    assert 0 < keep.sum() < m  # the case prunes something
    mixed = np.where(keep, var, bound)
    for p in (0.25, 0.5, 0.75):
        ref = scipy_quantile(mean, np.maximum(var, 1e-300), p)
        y = float(max_value_quantiles(mean, mixed, p))
        assert abs(y - ref) <= 1e-9 * (1.0 + abs(ref)), (p, y, ref)


def test_can_move_quartiles_by_hand():
    # L = max(mu + Phi^-1(.25) sd) = 1 - 0.6745 at the first point; the second sits
    # 10.5 sd below it (dropped), the third 9.5 sd (kept)
    mean = jnp.array([1.0, 1.0 - 0.6744897501960817 - 10.5 * 0.1, 1.0 - 0.6744897501960817 - 9.5 * 0.1])
    var = jnp.array([1.0, 0.01, 0.01])
    assert np.asarray(maxvalue.can_move_quartiles(mean, var)).tolist() == [True, False, True]


def _large_posterior(n=700, seed=0):
    return _posterior_2fid(seed, n, lengthscale=0.15)[1]


def test_target_moments_where_bounds_then_computes_the_needed_points():
    from mumbo_jax.gp import moments, posterior

    post = _large_posterior()
    target = posterior.target_fidelity(0)
    grid = np.column_stack([np.random.default_rng(1).uniform(size=3000), np.random.default_rng(2).uniform(-2, 2, 3000)])
    mean, var = moments.target_moments(post, grid, target)
    every = moments.target_moments_where(post, grid, target, lambda m, v: jnp.ones(m.shape, bool), 128)
    none = moments.target_moments_where(post, grid, target, lambda m, v: jnp.zeros(m.shape, bool), 128)
    np.testing.assert_array_equal(np.asarray(every[0]), np.asarray(mean))
    np.testing.assert_allclose(np.asarray(every[1]), np.asarray(var), rtol=1e-9, atol=1e-14)
    np.testing.assert_array_equal(np.asarray(none[0]), np.asarray(mean))
    # conditioning on the first 128 observations only: never narrower, and much wider here
    assert np.all(np.asarray(none[1]) >= np.asarray(var) * (1 - 1e-9))
    assert np.median(np.asarray(none[1]) / np.asarray(var)) > 2.0
    # the bound with every row is the exact variance
    whole = moments.target_moments_where(post, grid, target, lambda m, v: jnp.zeros(m.shape, bool), 10_000)
    np.testing.assert_allclose(np.asarray(whole[1]), np.asarray(var), rtol=1e-9, atol=1e-14)
    # the needed points (those whose mean is above the median) are exact, the others bounds
    needed = lambda m, v: m > jnp.median(m)
    some = moments.target_moments_where(post, grid, target, needed, 128)
    high = np.asarray(mean) > np.median(np.asarray(mean))
    np.testing.assert_allclose(np.asarray(some[1])[high], np.asarray(var)[high], rtol=1e-9, atol=1e-14)
    assert np.all(np.asarray(some[1]) >= np.asarray(var) * (1 - 1e-9))


def test_sample_gstar_prunes_from_prune_from_rows_with_the_same_samples(monkeypatch):
    from mumbo_jax.gp import moments, posterior

    post = _large_posterior()
    target = posterior.target_fidelity(0)
    key = jax.random.PRNGKey(5)
    jax.clear_caches()
    monkeypatch.setattr(maxvalue, "PRUNE_FROM_ROWS", 10**9)
    full = maxvalue.sample_gstar(key, post, target, n_samples=7, n_grid=20_000)
    monkeypatch.setattr(maxvalue, "PRUNE_FROM_ROWS", 0)
    monkeypatch.setattr(maxvalue, "PRUNE_BOUND_ROWS", 128)
    jax.clear_caches()
    pruned = maxvalue.sample_gstar(key, post, target, n_samples=7, n_grid=20_000)
    np.testing.assert_allclose(np.asarray(pruned), np.asarray(full), rtol=1e-10)
    jax.clear_caches()
    # most of a grid is pruned here, so the test exercises the pruned path: on this
    # 20,000-point grid a few thousand points are needed
    grid = np.random.default_rng(3).uniform(size=(20_000, 2)) * [1, 4] - [0, 2]
    mean, var = moments.target_moments_where(post, grid, target, maxvalue.can_move_quartiles, 128)
    assert 100 < int(jnp.sum(maxvalue.can_move_quartiles(mean, var))) <= 4096


# ----------------------------------------------------------------------------------------
# The g* floor: best evaluated target mean + 5 noise sd, by hand
# ----------------------------------------------------------------------------------------


def _floor_problem(noise, pad=0):
    """A 1-D ICM posterior with fixed noise variances (units of y) and its dense-numpy
    floor: max over the REAL evaluated x of the posterior mean of g = f(., 0), plus
    5 sd of the largest noise variance. Padding rows sit where the mean of g is highest."""
    from mumbo_jax.gp import models, posterior

    from .test_posterior import internal, np_kernel

    spec = models.icm_model([(0.0, 2.0)], 2, noise=noise)
    p = models.default_params(spec)
    # two high target observations 0.4 apart: the mean overshoots between them (x = 0.6)
    x = np.array([0.4, 0.8, 1.6, 0.2, 1.0, 1.8])[:, None]
    z = np.array([0, 0, 0, 1, 1, 1])
    y = np.array([1.0, 1.0, -0.5, 0.6, 0.2, -0.4])
    ym, ys = y.mean(), y.std()
    noise_std = np.maximum(np.asarray(noise) / ys**2, spec.noise_floor)
    xu, zu = internal(spec, x, z)
    K = np_kernel(spec, p, xu, zu, xu, zu) + np.diag(noise_std[zu])
    weights = np.linalg.solve(K, (y - ym) / ys)

    def mean_g(xq):
        xq = np.asarray(xq, float)[:, None]
        zq = np.zeros(len(xq), int)
        return np_kernel(spec, p, internal(spec, xq, zq)[0], zq, xu, zu) @ weights * ys + ym

    hand = np.max(mean_g(x[:, 0])) + 5.0 * np.sqrt(max(noise))
    grid = np.linspace(0.0, 2.0, 2001)
    x_pad = grid[np.argmax(mean_g(grid))]
    if pad:
        x = np.concatenate([x, np.full((pad, 1), x_pad)])
        z = np.concatenate([z, np.zeros(pad, int)])
        y = np.concatenate([y, np.full(pad, 50.0)])
        mask = np.concatenate([np.ones(6), np.zeros(pad)])
        scaling = models.make_scaling(spec, y, mask)
        post = posterior.condition(spec, p, x, z, y, mask, scaling)
    else:
        post = posterior.condition(spec, p, x, z, y)
    # the padding would raise the floor if it counted: the test can tell the difference
    with_padding = np.max(mean_g(np.append(x[:6, 0], x_pad))) + 5.0 * np.sqrt(max(noise))
    return post, hand, with_padding


@pytest.mark.parametrize("pad", [0, 3])
@pytest.mark.parametrize("method", ["gumbel", "exact"])
def test_gstar_floor_is_best_evaluated_mean_plus_five_noise_sd(method, pad):
    from mumbo_jax.gp import posterior

    target = posterior.target_fidelity(0)
    # large noise on the cheap fidelity: the floor (best mean + 5 x 0.5) lies above every
    # plausible maximum, so every sample IS the floor; the largest noise sets the sd
    post, hand, with_padding = _floor_problem((1e-4, 0.25), pad)
    assert with_padding > hand + 1e-3
    np.testing.assert_allclose(float(maxvalue.gstar_floor(post, target)), hand, rtol=1e-9)
    # 256 samples here as below (was 64): one compiled sampler for both checks, and every one
    # of the 256 must sit on the floor
    g = np.asarray(maxvalue.sample_gstar(jax.random.PRNGKey(0), post, target, 256, method, n_grid=400))
    np.testing.assert_allclose(g, hand, rtol=1e-9)
    # small noise: the floor is best mean + 0.05 and samples lie on or above it
    post, hand, _ = _floor_problem((1e-4, 1e-4), pad)
    np.testing.assert_allclose(float(maxvalue.gstar_floor(post, target)), hand, rtol=1e-9)
    g = np.asarray(maxvalue.sample_gstar(jax.random.PRNGKey(1), post, target, 256, method, n_grid=400))
    assert np.min(g) >= hand - 1e-12 and np.max(g) > hand + 1e-3
