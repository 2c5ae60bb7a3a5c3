"""Tests for mumbo_jax.acquisition.acquisitions (MUMBO, MES, cost weighting).

The MUMBO reference is independent of the library's (gamma, rho) reduction: the
entropy of y | g <= g* is integrated with scipy.quad from its density in y units,
p(y) = N(y; mu_y, var_y) Phi((g* - E[g|y]) / sd[g|y]) / Phi((g* - mu_g)/sd_g),
and subtracted from H(y) = log(2 pi e var_y)/2.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from tests.quad_refs import log_phi

from mumbo_jax.acquisition import acquisitions as acq
from mumbo_jax.acquisition.acquisitions import (
    cost_weighted,
    esg_gain,
    esg_gain_simpson,
    mes_gain,
    mes_per_sample,
    mumbo_gain,
    mumbo_gain_simpson,
)

# Tolerances are the measured errors (jaxlib 0.10.2, CPU, float64) with a margin of
# about 1.5x, so a loss of accuracy in the table or the Simpson rule fails a test:
TOL_TABLE_QUAD = 4e-6  # table vs scipy.quad, gamma in [-10, 8]: measured 2.8e-6
TOL_SIMPSON_QUAD = 3e-8  # direct Simpson (101 nodes) vs scipy.quad: measured 1.7e-8
TOL_TABLE_AVG = 4e-7  # table averaged over 5 g* samples: measured 2.2e-7
TOL_SIMPSON_AVG = 1e-10  # Simpson averaged over 5 g* samples: measured 4.2e-11
TOL_TABLE_SIMPSON = 6e-6  # table vs Simpson (201 nodes), gamma in [-40, 8]: measured 4.5e-6
TOL_RHO1_TABLE = 1e-6  # MUMBO at |rho| = 1 vs MES through the moments: measured 7.6e-7
TOL_RHO1_SIMPSON = 5e-7  # Simpson with s floored at 1e-8: measured 3.6e-7

RHOS = (0.0, 0.3, -0.3, 0.7, -0.7, 0.9, -0.9, 0.99, -0.99, 0.9999, -0.9999)
GAMMAS = np.linspace(-10.0, 8.0, 19)


# ------------------------------------------------------------------ references (scipy)
def quad_gain(mu_g, var_g, mu_y, var_y, cov, gstar):
    """H(y) - H(y | g <= g*) by scipy.quad over the conditional density of y."""
    sd_g, sd_y = np.sqrt(var_g), np.sqrt(var_y)
    slope = cov / var_y  # E[g | y] = mu_g + slope (y - mu_y)
    sd_c = np.sqrt(max(var_g - cov**2 / var_y, 1e-300))  # sd[g | y]
    gamma = (gstar - mu_g) / sd_g
    log_norm = special.log_ndtr(gamma)

    def log_p(t):  # t = (y - mu_y)/sd_y; density in y units
        y = mu_y + sd_y * t
        return (log_phi(t) - np.log(sd_y)  # log N(y; mu_y, sd_y^2)
                + special.log_ndtr((gstar - mu_g - slope * (y - mu_y)) / sd_c) - log_norm)

    def integrand(t):
        lp = log_p(t)
        return -np.exp(lp) * lp * sd_y  # dy = sd_y dt

    # window and break points only steer quad: bulk of y|g<=g* and its sharp layer
    rho = cov / (sd_g * sd_y)
    m = np.exp(stats.norm.logpdf(gamma) - log_norm)
    mean = -rho * m
    sd = np.sqrt(max(1 - rho**2 * m * (gamma + m), 1e-300))
    lo, hi = min(mean - 14 * sd, mean - 14.0 * abs(rho)), mean + 14 * sd
    if rho < 0:
        lo, hi = mean - 14 * sd, max(mean + 14 * sd, mean + 14.0 * abs(rho))
    pts = [mean, mean - 3 * sd, mean + 3 * sd]
    if rho != 0:
        layer, width = gamma / rho, np.sqrt(1 - rho**2) / abs(rho)
        pts += [layer, layer - 5 * width, layer + 5 * width]
    pts = sorted(p for p in set(pts) if lo < p < hi)
    h_cond, _ = integrate.quad(integrand, lo, hi, points=pts, epsabs=1e-12, epsrel=1e-11,
                               limit=400)
    return 0.5 * np.log(2 * np.pi * np.e * var_y) - h_cond


def moments_for(rho, noise_frac, var_g=0.7, var_f=2.5):
    """GP-like moments (var_g, var_y, cov) realising correlation rho with noise
    variance noise_frac * (1/rho^2 - 1) * var_f (so different noise gives the same rho)."""
    nu = 0.0 if rho == 0 else noise_frac * (1.0 / rho**2 - 1.0)
    corr_fg = rho * np.sqrt(1.0 + nu)  # corr(f, g); |corr_fg| <= 1 by construction
    cov = corr_fg * np.sqrt(var_g * var_f)
    return var_g, var_f * (1.0 + nu), cov


# ------------------------------------------------------------------ MUMBO vs scipy.quad
@pytest.mark.parametrize("noise_frac", [0.0, 0.6])
def test_mumbo_gain_matches_quad_reference(noise_frac):
    gstar = 1.3
    for rho in RHOS:
        var_g, var_y, cov = moments_for(rho, noise_frac)
        mu_g = gstar - GAMMAS * np.sqrt(var_g)  # gamma grid in [-10, 8]
        mu_y = 0.4 - mu_g
        ref = np.array([quad_gain(a, var_g, b, var_y, cov, gstar) for a, b in zip(mu_g, mu_y)])
        args = (jnp.asarray(mu_g), var_g, jnp.asarray(mu_y), var_y, cov, jnp.array([gstar]))
        got = np.asarray(mumbo_gain(*args))
        got_simpson = np.asarray(mumbo_gain_simpson(*args))
        assert got.shape == mu_g.shape
        err = np.max(np.abs(got - ref))
        assert err <= TOL_TABLE_QUAD, (rho, noise_frac, err)
        assert np.max(np.abs(got_simpson - ref)) <= TOL_SIMPSON_QUAD, (rho, noise_frac)


def test_mumbo_gain_averages_over_gstar_samples():
    gstar = np.array([0.8, 1.1, 1.6, 2.4, 3.0])
    mu_g = np.array([-1.0, 0.5, 1.0, 2.0])
    var_g, mu_y = np.array([0.3, 1.0, 0.05, 2.0]), np.zeros(4)
    var_y = np.array([1.2, 0.9, 0.4, 3.0])
    cov = np.array([0.5, -0.9, 0.1, 0.999]) * np.sqrt(var_g * var_y)
    ref = np.array([[quad_gain(mu_g[i], var_g[i], mu_y[i], var_y[i], cov[i], g) for g in gstar]
                    for i in range(4)]).mean(axis=1)
    got = mumbo_gain(mu_g, var_g, mu_y, var_y, cov, gstar)
    np.testing.assert_allclose(got, ref, atol=TOL_TABLE_AVG, rtol=0)
    np.testing.assert_allclose(mumbo_gain_simpson(mu_g, var_g, mu_y, var_y, cov, gstar), ref,
                               atol=TOL_SIMPSON_AVG, rtol=0)
    # broadcasting: a [2, 4] batch of candidates gives shape [2, 4]
    got2 = mumbo_gain(np.stack([mu_g, mu_g]), var_g, mu_y, var_y, cov, gstar)
    assert got2.shape == (2, 4)
    np.testing.assert_allclose(got2[1], got, rtol=0, atol=0)


def test_esg_gain_table_vs_direct_simpson_random_points():
    rng = np.random.default_rng(3)
    gamma = rng.uniform(-40.0, 8.0, 4000)
    rho = np.concatenate([rng.uniform(-1, 1, 2000), 1 - 10 ** rng.uniform(-9, 0, 2000)])
    diff = np.abs(esg_gain(gamma, rho) - esg_gain_simpson(gamma, rho, n_nodes=201))
    assert np.max(diff) < TOL_TABLE_SIMPSON


# ---------------------------------------------------------------------------- limits
def test_rho_one_equals_mes():
    gamma = np.linspace(-40.0, 40.0, 321)
    var_g, gstar = 0.5, np.array([0.7])
    mu_g = gstar[0] - gamma * np.sqrt(var_g)
    # noiseless target fidelity: y = g, cov^2 = var_g var_y
    got = mumbo_gain(mu_g, var_g, mu_g, var_g, var_g, gstar)
    mes = mes_gain(mu_g, var_g, gstar)
    np.testing.assert_allclose(got, mes, atol=TOL_RHO1_TABLE, rtol=0)
    # the table holds G/MES = 1 exactly at rho = 1 (measured 4e-14)
    np.testing.assert_allclose(esg_gain(gamma, 1.0), mes_per_sample(gamma), atol=1e-12, rtol=0)
    np.testing.assert_allclose(esg_gain_simpson(gamma[gamma < 30], -1.0),
                               mes_per_sample(gamma[gamma < 30]), atol=TOL_RHO1_SIMPSON, rtol=0)


def test_rho_zero_gives_zero():
    gamma = np.linspace(-40.0, 40.0, 161)
    gstar = np.array([0.2, 1.0])
    got = mumbo_gain(gstar[0] - gamma, 1.0, 0.0, 2.0, 0.0, gstar)
    # exact zeros: the table stores 0 at rho = 0, and Simpson's integrand vanishes there
    assert np.max(np.abs(got)) <= 1e-15
    assert np.max(np.abs(esg_gain_simpson(gamma, 0.0))) <= 1e-15


def test_symmetric_in_sign_of_rho():
    rng = np.random.default_rng(1)
    mu_g, mu_y = rng.normal(size=200), rng.normal(size=200)
    var_g, var_y = rng.uniform(0.1, 2.0, 200), rng.uniform(0.1, 2.0, 200)
    cov = rng.uniform(-1, 1, 200) * np.sqrt(var_g * var_y)
    gstar = np.array([0.5, 1.5])
    np.testing.assert_allclose(mumbo_gain(mu_g, var_g, mu_y, var_y, cov, gstar),
                               mumbo_gain(mu_g, var_g, mu_y, var_y, -cov, gstar), rtol=1e-14,
                               atol=0)
    np.testing.assert_allclose(mumbo_gain_simpson(mu_g, var_g, mu_y, var_y, cov, gstar),
                               mumbo_gain_simpson(mu_g, var_g, mu_y, var_y, -cov, gstar),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("gamma", [-40.0, -10.0, -3.0, -0.5, 0.0, 1.0, 2.5, 5.0, 12.0])
def test_increasing_in_abs_rho(gamma):
    r = np.linspace(0.0, 1.0, 20001)
    r = np.sort(np.concatenate([r, 1 - np.logspace(-4, -15, 300)]))
    v = np.asarray(esg_gain(np.full_like(r, gamma), r))
    assert np.all(np.diff(v) >= 0), np.min(np.diff(v))
    assert np.all(v >= 0) and np.all(v <= float(mes_per_sample(gamma)) * (1 + 1e-12))


# ------------------------------------------------------------------------------- MES
def test_mes_gain_matches_truncated_normal_entropy():
    mu, sd = 0.3, 1.7
    gstar = np.array([-4.0, 0.1, 2.0, 5.5])
    mu_g = mu + sd * np.linspace(-8.0, 30.0, 77)
    ref = np.zeros_like(mu_g)
    for g in gstar:
        b = (g - mu_g) / sd  # truncated at g* from above: entropy drop of g | g <= g*
        ref += stats.norm(mu_g, sd).entropy() - stats.truncnorm(-60.0, b, mu_g, sd).entropy()
    ref /= len(gstar)
    np.testing.assert_allclose(mes_gain(mu_g, sd**2, gstar), ref, atol=1e-10, rtol=1e-8)
    # single-sample closed form over a wide gamma range (asymptotic branch below -20)
    gam = np.linspace(-35.0, 8.0, 87)
    ref1 = stats.norm.entropy() - np.array([stats.truncnorm(-80.0, x).entropy() for x in gam])
    np.testing.assert_allclose(mes_per_sample(gam), ref1, atol=1e-10, rtol=1e-8)


def test_cost_weighted():
    np.testing.assert_allclose(cost_weighted(jnp.array([1.0, 2.0]), jnp.array([2.0, 4.0])),
                               [0.5, 0.5])
    assert float(cost_weighted(3.0, 1.5)) == 2.0
    for bad in (0.0, -1.0, np.array([1.0, 0.0]), np.nan):
        with pytest.raises(ValueError, match="cost"):
            cost_weighted(1.0, bad)
    # a traced cost is not checked, so it jits
    assert float(jax.jit(cost_weighted)(1.0, 4.0)) == 0.25


# ------------------------------------------------------------ numerics: NaN / inf free
def _all_grads(fn, args):
    return jax.grad(lambda *a: jnp.sum(fn(*a)), argnums=(0, 1, 2, 3, 4))(*args)


def test_no_nan_or_inf_values_and_gradients_dense_grid():
    gamma = np.linspace(-40.0, 40.0, 81)
    rho = np.array([0.0, 1e-9, 0.3, 0.9, 0.999999, 1 - 1e-15, 1.0, -1.0, -0.5])
    var_g = np.array([1e-12, 1e-6, 1.0, 1e3])
    gg, rr, vv = (a.ravel() for a in np.meshgrid(gamma, rho, var_g, indexing="ij"))
    gstar = np.array([1.0, 1.5])
    mu_g = gstar[0] - gg * np.sqrt(vv)
    var_y = 0.8 * np.ones_like(gg)
    cov = rr * np.sqrt(vv * var_y)
    # plus degenerate candidates: zero variances and covariance (a noiseless data point),
    # and gamma ~ -+1e6 from var_g = 1e-12
    extra = np.array([[0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0, 0.0],
                      [5.0, 0.0, 0.0, 0.0, 0.0], [1.0 + 1.0, 1e-12, 0.0, 1.0, 1e-7],
                      [1.0 - 1.0, 1e-12, 0.0, 1e-12, 1e-12]])
    cols = [np.concatenate([a, extra[:, k]]) for k, a in enumerate((mu_g, vv, mu_g, var_y, cov))]
    args = tuple(jnp.asarray(a) for a in cols)
    for fn in (mumbo_gain, mumbo_gain_simpson):
        val = fn(*args, gstar)
        assert np.all(np.isfinite(val)) and np.all(np.asarray(val) > -1e-9)
        grads = _all_grads(lambda *a, f=fn: f(*a, gstar), args)
        for name, g in zip(("mu_g", "var_g", "mu_y", "var_y", "cov"), grads):
            assert np.all(np.isfinite(g)), name
    val = mes_gain(args[0], args[1], gstar)
    assert np.all(np.isfinite(val))
    dmu, dvar = jax.grad(lambda m, v: jnp.sum(mes_gain(m, v, gstar)), argnums=(0, 1))(
        args[0], args[1])
    assert np.all(np.isfinite(dmu)) and np.all(np.isfinite(dvar))


@settings(max_examples=30, deadline=None)
@given(
    gamma=st.floats(-40.0, 40.0),
    rho=st.floats(-1.0, 1.0),
    log_var_g=st.floats(-12.0, 4.0),
    log_var_y=st.floats(-12.0, 4.0),
)
def test_no_nan_hypothesis(gamma, rho, log_var_g, log_var_y):
    var_g, var_y = 10.0**log_var_g, 10.0**log_var_y
    gstar = jnp.array([0.3, 0.9])
    mu_g = 0.3 - gamma * np.sqrt(var_g)
    args = tuple(jnp.array([a]) for a in (mu_g, var_g, 0.0, var_y,
                                           rho * np.sqrt(var_g * var_y)))
    val = mumbo_gain(*args, gstar)
    assert np.all(np.isfinite(val))
    for g in _all_grads(lambda *a: mumbo_gain(*a, gstar), args):
        assert np.all(np.isfinite(g))


def test_gradients_match_finite_differences_of_reference():
    rng = np.random.default_rng(7)
    n = 300
    mu_g, var_g = rng.normal(size=n), rng.uniform(0.2, 2.0, n)
    var_y = rng.uniform(0.2, 2.0, n)
    cov = rng.uniform(-0.98, 0.98, n) * np.sqrt(var_g * var_y)
    gstar = np.array([1.0, 2.0])
    args = [jnp.asarray(a) for a in (mu_g, var_g, np.zeros(n), var_y, cov)]
    grads = _all_grads(lambda *a: mumbo_gain(*a, gstar), args)
    for k in (0, 1, 3, 4):  # mu_y has no effect (gradient 0)
        h = 1e-5 * (1.0 + np.abs(np.asarray(args[k])))
        up = list(args)
        dn = list(args)
        up[k] = args[k] + h
        dn[k] = args[k] - h
        fd = (mumbo_gain_simpson(*up, gstar, n_nodes=201)
              - mumbo_gain_simpson(*dn, gstar, n_nodes=201)) / (2 * h)
        np.testing.assert_allclose(grads[k], fd, atol=2e-4, rtol=1e-2)
    assert np.all(np.asarray(grads[2]) == 0.0)


# --------------------------------------------------------------------- jit / vmap / api
def test_jit_and_vmap_agree_with_eager():
    rng = np.random.default_rng(2)
    mu_g, var_g = rng.normal(size=50), rng.uniform(0.1, 1.0, 50)
    var_y = rng.uniform(0.1, 1.0, 50)
    cov = 0.8 * np.sqrt(var_g * var_y)
    gstar = jnp.array([1.0, 1.7, 2.2])
    eager = mumbo_gain(mu_g, var_g, mu_g, var_y, cov, gstar)
    jitted = jax.jit(mumbo_gain)(mu_g, var_g, mu_g, var_y, cov, gstar)
    vmapped = jax.vmap(mumbo_gain, in_axes=(0, 0, 0, 0, 0, None))(
        mu_g, var_g, mu_g, var_y, cov, gstar)
    np.testing.assert_allclose(jitted, eager, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(vmapped, eager, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(jax.jit(mes_gain)(mu_g, var_g, gstar),
                               mes_gain(mu_g, var_g, gstar), rtol=1e-13)


def test_table_builds_inside_a_trace():
    acq.ratio_table.cache_clear()
    fn = jax.jit(lambda g, r: esg_gain(g, r))  # first use of the table is under jit
    np.testing.assert_allclose(fn(jnp.array([0.5]), jnp.array([0.7])),
                               esg_gain_simpson(0.5, 0.7), atol=TOL_TABLE_SIMPSON)
    assert isinstance(acq.ratio_table(), np.ndarray) and acq.ratio_table().shape == (96 * 87, 16)


# ------------------------------------------------------------------------ bad inputs
def test_bad_inputs_raise_value_error():
    ok = dict(mu_g=np.zeros(3), var_g=np.ones(3), mu_y=np.zeros(3), var_y=np.ones(3),
              cov=0.5 * np.ones(3), gstar=np.array([1.0, 2.0]))

    def call(fn=mumbo_gain, **kw):
        return fn(**{**ok, **kw})

    for fn in (mumbo_gain, mumbo_gain_simpson):
        with pytest.raises(ValueError, match="var_g"):
            call(fn, var_g=np.array([1.0, -0.5, 1.0]))
        with pytest.raises(ValueError, match="var_y"):
            call(fn, var_y=-1.0)
        with pytest.raises(ValueError, match="gstar"):
            call(fn, gstar=np.ones((2, 2)))
        with pytest.raises(ValueError, match="gstar"):
            call(fn, gstar=1.0)
        with pytest.raises(ValueError, match="gstar"):
            call(fn, gstar=np.array([]))
        with pytest.raises(ValueError, match="mu_g"):
            call(fn, mu_g=np.array([0.0, np.nan, 0.0]))
        with pytest.raises(ValueError, match="cov"):
            call(fn, cov=np.array([0.0, np.inf, 0.0]))
        with pytest.raises(ValueError, match="broadcast"):
            call(fn, mu_y=np.zeros(4))
    with pytest.raises(ValueError, match="var_g"):
        mes_gain(np.zeros(2), np.array([1.0, -2.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="gstar"):
        mes_gain(np.zeros(2), np.ones(2), np.ones((1, 1)))
    with pytest.raises(ValueError, match="n_nodes"):
        esg_gain_simpson(0.0, 0.5, n_nodes=100)
    # round-off negatives (GP variances like -1e-17) are floored, not rejected
    assert np.isfinite(call(var_g=np.array([1.0, -1e-17, 1.0]))).all()
    # tracers skip value checks, so the functions jit; shape checks still apply
    with pytest.raises(ValueError, match="gstar"):
        jax.jit(mumbo_gain)(ok["mu_g"], ok["var_g"], ok["mu_y"], ok["var_y"], ok["cov"],
                            np.ones((2, 2)))
