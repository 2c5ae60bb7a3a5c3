"""GIBBON batches, pending evaluations and the kriging-believer baseline.

References are independent of the code under test: scipy quadrature for the truncated
normal and the ESG (variance, entropy), and a dense numpy GP (its own Matern-5/2 ICM
kernel, numpy solves) for joint covariances, conditioning on pending points and
log-determinants.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, special, stats

from tests.quad_refs import log_phi

from mumbo_jax.acquisition import acquisitions, fantasy, gibbon
from mumbo_jax.gp import models, moments, posterior

# --------------------------------------------------------------------------- fixtures


def _data(spec, n_per, seed=0):
    rng = np.random.default_rng(seed)
    d = spec.dim
    x = rng.uniform(size=(n_per, d))
    if spec.discrete:
        fids = np.arange(spec.n_fidelities)
    else:
        fids = np.array([0.0, 0.5, 1.0])
    xs, zs = np.tile(x, (len(fids), 1)), np.repeat(fids, n_per)
    y = np.sin(3 * xs[:, 0]) + xs[:, -1] ** 2 - 0.3 * zs
    return xs, zs, y


def _icm_post(noise_free=False, log_ls=None, seed=0):
    """2-D ICM posterior, 2 fidelities, 12 points; every variant has the same spec and
    shapes, so the compiled functions are shared across tests."""
    spec = models.icm_model([(0.0, 1.0), (-1.0, 2.0)], 2)
    x, z, y = _data(spec, 6, seed)
    params = models.default_params(spec)
    params["W"] = jnp.asarray([[0.9, 0.2], [0.6, 0.5]])
    if noise_free:  # learned noise -> the model's floor (NOISE_FLOOR, standardised)
        params["log_noise"] = jnp.full(2, -60.0)
    if log_ls is not None:
        params["log_ls"] = jnp.full(2, np.log(log_ls))
    return posterior.condition(spec, params, x, z, y), y


M = 24  # candidates in most tests (one compiled shape)


def _candidates(spec, m=M, seed=1):
    rng = np.random.default_rng(seed)
    b = np.asarray(spec.bounds)
    x = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=(m, spec.dim))
    z = np.tile(np.arange(spec.n_fidelities), m // spec.n_fidelities + 1)[:m]
    return x, z


TARGET = posterior.target_fidelity(0)


def _gstar(y):
    return jnp.asarray([np.max(y) + 0.2, np.max(y) + 0.5, np.max(y) + 1.0])


# dense numpy reference of the ICM posterior (own Matern-5/2, own solves) ---------------


def _np_kernel(post, xa, za, xb, zb):
    p = post.params
    ls = np.exp(np.asarray(p["log_ls"]))
    W = np.asarray(p["W"])
    B = W @ W.T + np.diag(np.exp(np.asarray(p["log_kappa"])))
    r = np.sqrt(np.sum(((xa[:, None, :] - xb[None, :, :]) / ls) ** 2, -1))
    s5 = np.sqrt(5.0) * r
    return (1 + s5 + s5**2 / 3) * np.exp(-s5) * B[np.ix_(za, zb)]


def _unit(post, x):
    sc = post.scaling
    return (np.asarray(x) - np.asarray(sc.x_lower)) / np.asarray(sc.x_width)


def _np_posterior_cov(post, xa, za, xb, zb, cond_x=(), cond_z=()):
    """Posterior covariance of latent f between sets a and b (raw units), after the
    training data and, optionally, extra noisy evaluations at (cond_x, cond_z)."""
    noise = np.asarray(post.noise)
    xt, zt = np.asarray(post.x), np.asarray(post.z)
    if len(cond_x):
        xt = np.concatenate([xt, _unit(post, cond_x)])
        zt = np.concatenate([zt, np.asarray(cond_z, int)])
    ua, ub = _unit(post, xa), _unit(post, xb)
    za, zb = np.asarray(za, int), np.asarray(zb, int)
    K = _np_kernel(post, xt, zt, xt, zt) + np.diag(noise[zt])
    Ka, Kb = _np_kernel(post, xt, zt, ua, za), _np_kernel(post, xt, zt, ub, zb)
    cov = _np_kernel(post, ua, za, ub, zb) - Ka.T @ np.linalg.solve(K, Kb)
    return cov * float(post.scaling.y_scale) ** 2


def _np_obs_cov(post, x, z, cond_x=(), cond_z=()):
    cov = _np_posterior_cov(post, x, z, x, z, cond_x, cond_z)
    noise = np.asarray(post.noise)[np.asarray(z, int)] * float(post.scaling.y_scale) ** 2
    return cov + np.diag(noise)


def _np_half_logdet_corr(cov):
    d = np.sqrt(np.diag(cov))
    return 0.5 * np.linalg.slogdet(cov / np.outer(d, d))[1]


# --------------------------------------------------------------------------- scalar maths


def _truncated_variance_quad(gamma):
    """Var(theta | theta <= gamma) by quadrature in u = theta - gamma <= 0 (no cancellation)."""
    if gamma < 0:
        logp = lambda u: -0.5 * u * u - gamma * u  # exp(-theta^2/2) / exp(-gamma^2/2)
        width = 60.0 / abs(gamma) if gamma < -2 else 60.0
    else:
        logp = lambda u: -0.5 * (u + gamma) ** 2
        width = 60.0 + gamma
    kw = dict(epsabs=0, epsrel=1e-13, limit=400)
    z0 = integrate.quad(lambda u: np.exp(logp(u)), -width, 0.0, **kw)[0]
    m1 = integrate.quad(lambda u: u * np.exp(logp(u)), -width, 0.0, **kw)[0] / z0
    m2 = integrate.quad(lambda u: u * u * np.exp(logp(u)), -width, 0.0, **kw)[0] / z0
    return m2 - m1 * m1


@pytest.mark.parametrize("gamma", [-1e4, -300.0, -40.0, -20.5, -19.5, -8.0, -2.0, 0.0, 1.0, 5.0])
def test_truncated_variance_matches_quadrature(gamma):
    ref = _truncated_variance_quad(gamma)
    got = float(gibbon.truncated_variance(gamma))
    assert got == pytest.approx(ref, rel=1e-9)


def test_truncated_variance_series_is_continuous_at_the_switch():
    # the direct form keeps ~1e-10 relative near -20 (cancellation in 1 - m (gamma + m));
    # the series (11 terms) is exact there to ~1e-16: the switch adds no larger jump
    g = np.array([-20.0 - 1e-9, -20.0, -20.0 + 1e-9])
    v = np.asarray(gibbon.truncated_variance(g))
    assert np.all(np.abs(np.diff(v)) < 2e-10 * v[0])


def _esg_quad(gamma, rho):
    """Variance and entropy of the ESG p(t) = phi(t) Phi((gamma - rho t)/s) / Phi(gamma)."""
    s = np.sqrt(1 - rho**2)
    lpg = special.log_ndtr(gamma)
    logp = lambda t: log_phi(t) + special.log_ndtr((gamma - rho * t) / s) - lpg
    mean = -rho * np.exp(stats.norm.logpdf(gamma) - lpg)
    pts = [gamma / rho] if abs(gamma / rho) < 30 else None
    kw = dict(epsabs=1e-14, epsrel=1e-13, limit=500, points=pts)
    lo, hi = mean - 40, mean + 40
    z0 = integrate.quad(lambda t: np.exp(logp(t)), lo, hi, **kw)[0]
    m1 = integrate.quad(lambda t: (t - mean) * np.exp(logp(t)), lo, hi, **kw)[0] / z0
    m2 = integrate.quad(lambda t: (t - mean) ** 2 * np.exp(logp(t)), lo, hi, **kw)[0] / z0
    ent = integrate.quad(lambda t: -logp(t) * np.exp(logp(t)), lo, hi, **kw)[0]
    return m2 - m1 * m1, ent


@pytest.mark.parametrize("gamma", [-5.0, -1.0, 0.0, 1.5, 3.0])
@pytest.mark.parametrize("rho", [0.2, 0.5, 0.8, 0.95, 0.999])
def test_q1_gibbon_is_mumbo_with_a_gaussian_esg(gamma, rho):
    """q = 1: Q = -1/2 log Var(ESG) exactly, and MUMBO - GIBBON = negentropy(ESG) >= 0."""
    var, ent = _esg_quad(gamma, rho)
    q = float(gibbon.gibbon_quality_per_sample(gamma, rho))
    assert q == pytest.approx(-0.5 * np.log(var), rel=1e-9, abs=1e-13)
    negentropy = 0.5 * np.log(2 * np.pi * np.e * var) - ent
    mumbo = float(acquisitions.esg_gain_simpson(gamma, rho, 201))
    assert mumbo - q == pytest.approx(negentropy, abs=1e-8)
    assert q <= mumbo + 1e-9
    assert float(gibbon.gibbon_quality_per_sample(gamma, -rho)) == q  # even in rho


@pytest.mark.parametrize("gamma", [-5.0, 0.0, 3.0])
def test_q1_gap_to_mumbo_is_sixth_order_in_rho(gamma):
    """The ESG's skewness is O(rho^3), so its negentropy is O(rho^6): halving rho divides
    the gap by ~64 while the gain itself (~rho^2) drops by ~4."""
    gaps = []
    for rho in (0.2, 0.1):
        var, ent = _esg_quad(gamma, rho)
        gaps.append(0.5 * np.log(2 * np.pi * np.e * var) - ent)
    assert 55 < gaps[0] / gaps[1] < 75  # 2^6 = 64; 4th order would give 16, 8th 256


def test_quality_limits():
    g = np.linspace(-30, 10, 41)
    assert np.all(np.asarray(gibbon.gibbon_quality_per_sample(g, 0.0)) == 0.0)
    full = np.asarray(gibbon.gibbon_quality_per_sample(g, 1.0))
    np.testing.assert_allclose(full, -0.5 * np.log(np.asarray(gibbon.truncated_variance(g))), rtol=1e-12)
    # rho = 1: a lower bound of MES (Gaussian at the truncated normal's variance)
    assert np.all(full <= np.asarray(acquisitions.mes_per_sample(g)) + 1e-12)
    q = np.asarray(gibbon.gibbon_quality_per_sample(g[:, None], np.linspace(0, 1, 11)))
    assert np.all(np.diff(q, axis=1) >= -1e-15)  # increasing in |rho|
    assert np.all(q >= 0)


def test_no_nan_at_extremes_values_and_gradients():
    gammas = jnp.asarray([-1e300, -1e8, -1e4, -40.0, -20.0, 0.0, 40.0, 1e8, 1e300])
    rhos = jnp.asarray([0.0, 1e-8, 0.5, 1 - 1e-16, 1.0, -1.0, 1.5])
    q = gibbon.gibbon_quality_per_sample(gammas[:, None], rhos)
    assert np.all(np.isfinite(q)) and np.all(np.asarray(q) >= 0)
    # rho = 1, gamma = -1e4: -1/2 log v ~ log|gamma|
    assert float(gibbon.gibbon_quality_per_sample(-1e4, 1.0)) == pytest.approx(np.log(1e4), rel=1e-6)
    grad = jax.grad(lambda g, r: jnp.sum(gibbon.gibbon_quality_per_sample(g, r)), argnums=(0, 1))
    for g in (-1e4, -40.0, -20.0, 0.0, 8.0):
        for r in (0.0, 0.7, 1.0):
            dg, dr = grad(g, r)
            assert np.isfinite(dg) and np.isfinite(dr)
    # degenerate moments: var -> 0 everywhere
    z = jnp.zeros(3)
    out = gibbon.gibbon_quality(z, z, z, z, z, jnp.asarray([1.0, -1.0]))
    assert np.all(np.isfinite(out))
    out = gibbon.gibbon_quality(jnp.zeros(2), jnp.asarray([1e-30, 1.0]), 0.0, jnp.asarray([1e-30, 1.0]),
                                jnp.asarray([1e-30, 1.0]), jnp.asarray([-1e3]))
    assert np.all(np.isfinite(out))


def test_log_det_correlation_limits():
    assert float(gibbon.log_det_correlation(np.diag([1.0, 4.0, 9.0]))) == pytest.approx(0.0, abs=1e-15)
    assert float(gibbon.log_det_correlation(np.zeros((0, 0)))) == 0.0
    assert float(gibbon.log_det_correlation(np.ones((2, 2)) * 3.0)) == -np.inf  # singular: -inf, not NaN
    r = 0.6
    c = np.array([[2.0, r * 2.0], [r * 2.0, 2.0]])
    assert float(gibbon.log_det_correlation(c)) == pytest.approx(0.5 * np.log(1 - r * r), rel=1e-12)


# --------------------------------------------------------------------------- posterior pieces


def test_candidate_factors_repeat_joint_moments():
    post, _ = _icm_post()
    x, z = _candidates(post.spec)
    fac = jax.jit(fantasy.candidate_factors)(post, jnp.asarray(x), jnp.asarray(z), TARGET)
    mom = moments.joint_moments(post, x, z, TARGET)
    s, m = post.scaling.y_scale, post.scaling.y_mean
    for got, ref in ((fac.mu_g * s + m, mom.mu_g), (fac.var_g * s * s, mom.var_g), (fac.mu_y * s + m, mom.mu_y),
                     (fac.var_y * s * s, mom.var_y), (fac.cov * s * s, mom.cov)):
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)


def test_observation_cov_and_log_det_against_dense_numpy():
    post, y = _icm_post()
    x, z = _candidates(post.spec, 5)
    x[3] = x[1]
    z[3] = z[1]  # a repeated evaluation: independent noise, so still non-singular
    got = np.asarray(fantasy.observation_cov(post, x, z))
    ref = _np_obs_cov(post, x, z)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
    assert float(gibbon.log_det_correlation(got)) == pytest.approx(_np_half_logdet_corr(ref), rel=1e-8)
    # the batch gain = its log-det part + the quality sum
    gstar = _gstar(y)
    gain = float(gibbon.gibbon_batch_gain(post, x, z, TARGET, gstar))
    quality = np.asarray(gibbon.gibbon_quality(*moments.joint_moments(post, x, z, TARGET), gstar))
    assert gain == pytest.approx(_np_half_logdet_corr(ref) + quality.sum(), rel=1e-8)


def test_pending_moments_against_dense_numpy_conditioning():
    post, _ = _icm_post()
    x, z = _candidates(post.spec)
    xp, zp = _candidates(post.spec, 2, seed=7)
    got = fantasy.pending_moments(post, x, z, TARGET, xp, zp)
    before = moments.joint_moments(post, x, z, TARGET)
    z0 = np.zeros(len(z), int)
    var_f = np.diag(_np_posterior_cov(post, x, z, x, z, xp, zp))
    var_g = np.diag(_np_posterior_cov(post, x, z0, x, z0, xp, zp))
    cov = np.diag(_np_posterior_cov(post, x, z, x, z0, xp, zp))
    noise = np.asarray(post.noise)[z] * float(post.scaling.y_scale) ** 2
    np.testing.assert_allclose(got.var_y, var_f + noise, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(got.var_g, var_g, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(got.cov, cov, rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(got.mu_g, before.mu_g)  # the believer's mean is unchanged
    assert np.all(np.asarray(got.var_g) <= np.asarray(before.var_g) + 1e-15)


@pytest.mark.parametrize("kind", ["icm", "product"])
def test_pending_moments_equal_a_fantasized_posterior(kind):
    """The fast path equals conditioning a new posterior on y_P = E[y_P] (both routes)."""
    if kind == "product":
        spec = models.product_model([(0.0, 1.0), (0.0, 1.0)], (0.0, 1.0))
        target = posterior.target_value(1.0)
        zc, zp = np.linspace(0, 1, 9), np.array([1.0, 0.3])
    else:
        spec = models.icm_model([(0.0, 1.0), (0.0, 1.0)], 3)
        target = posterior.task_mean(3)  # a target with J = 3 points
        zc, zp = np.arange(9) % 3, np.array([1, 2])
    x, z, y = _data(spec, 5)
    post = posterior.condition(spec, models.default_params(spec), x, z, y)
    rng = np.random.default_rng(3)
    xc, xp = rng.uniform(size=(9, 2)), rng.uniform(size=(2, 2))
    fast = fantasy.pending_moments(post, xc, zc, target, xp, zp)
    slow = moments.joint_moments(fantasy.fantasize(post, xp, zp), xc, zc, target)
    for a, b in zip(fast, slow):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)


# --------------------------------------------------------------------------- batches


def test_greedy_batch_with_pending_matches_dense_gain():
    post, y = _icm_post()
    x, z = _candidates(post.spec)
    xp, zp = _candidates(post.spec, 2, seed=9)
    gstar = _gstar(y)
    b = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 3, xp, zp)
    dense = float(gibbon.gibbon_batch_gain(post, b.x, b.z, TARGET, gstar, xp, zp))
    assert float(np.sum(b.gain)) == pytest.approx(dense, rel=1e-8, abs=1e-12)
    # and against numpy: log det over pending + batch, minus the pending part, + quality
    xa, za = np.concatenate([xp, b.x]), np.concatenate([zp, b.z])
    cov = _np_obs_cov(post, xa, za)
    quality = np.asarray(gibbon.gibbon_quality(*moments.joint_moments(post, b.x, b.z, TARGET), gstar))
    ref = _np_half_logdet_corr(cov) - _np_half_logdet_corr(cov[:2, :2]) + quality.sum()
    assert dense == pytest.approx(ref, rel=1e-8)
    # each slot was the best increment given what came before (brute force over candidates)
    for k in range(3):
        gain = jax.vmap(lambda xc, zc: gibbon.gibbon_batch_gain(  # every candidate as slot k
            post, jnp.concatenate([b.x[:k], xc[None]]), jnp.concatenate([b.z[:k], zc[None]]), TARGET, gstar, xp, zp))
        assert int(b.index[k]) == int(np.argmax(np.asarray(gain(jnp.asarray(x), jnp.asarray(z)))))


def test_rescaled_repulsion_divides_each_log_det_increment_by_m_squared():
    """Slot k joining m = P + k points: gain = Q + (log-det increment) / m^2, rebuilt from
    dense batch gains of the prefixes (the log-det increment) and the single-point gains (Q)."""
    post, y = _icm_post()
    x, z = _candidates(post.spec)
    xp, zp = _candidates(post.spec, 2, seed=9)
    gstar = _gstar(y)
    b = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 3, xp, zp, rescaled_repulsion=True)
    prefix = [float(gibbon.gibbon_batch_gain(post, b.x[:k], b.z[:k], TARGET, gstar, xp, zp)) if k else 0.0
              for k in range(4)]
    for k in range(3):
        quality = float(gibbon.gibbon_batch_gain(post, b.x[k:k + 1], b.z[k:k + 1], TARGET, gstar))
        log_det = prefix[k + 1] - prefix[k] - quality
        assert float(b.gain[k]) == pytest.approx(quality + log_det / (2 + k) ** 2, rel=1e-8, abs=1e-12)
    full = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 3, xp, zp)
    assert float(b.gain[0]) >= float(full.gain[0]) - 1e-12  # log-det increments are <= 0: a smaller penalty


def test_q1_batch_is_the_gibbon_argmax():
    post, y = _icm_post()
    x, z = _candidates(post.spec)
    gstar = _gstar(y)
    quality = np.asarray(gibbon.gibbon_quality(*moments.joint_moments(post, x, z, TARGET), gstar))
    b = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 1)
    assert int(b.index[0]) == int(np.argmax(quality))
    assert float(b.gain[0]) == pytest.approx(quality.max(), rel=1e-10)
    cost = np.where(z == 0, 10.0, 1.0)
    bc = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 1, cost=cost)
    assert int(bc.index[0]) == int(np.argmax(quality / cost))
    # a constant cost does not change any slot
    b4 = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 3)
    b4c = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 3, cost=3.0)
    np.testing.assert_array_equal(b4.index, b4c.index)


def test_mumbo_quality_batch_of_one_is_mumbo_and_slots_add_up():
    """quality = "mumbo": a batch of one is MUMBO's choice (acquisitions.mumbo_gain on the
    raw-unit moments, per unit cost); a batch's slot gains add up to its dense gain, which
    is the GIBBON gain with each point's Q replaced by MUMBO's G (>= Q)."""
    post, y = _icm_post()
    x, z = _candidates(post.spec)
    xp, zp = _candidates(post.spec, 2, seed=9)
    gstar = _gstar(y)
    mumbo = np.asarray(acquisitions.mumbo_gain(*moments.joint_moments(post, x, z, TARGET), gstar))
    cost = np.where(z == 0, 10.0, 1.0)
    b1 = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 1, cost=cost, quality="mumbo")
    assert int(b1.index[0]) == int(np.argmax(mumbo / cost))
    assert float(b1.gain[0]) == pytest.approx(mumbo[int(b1.index[0])], rel=1e-8)
    b = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 3, xp, zp, quality="mumbo")
    dense = float(gibbon.gibbon_batch_gain(post, b.x, b.z, TARGET, gstar, xp, zp, quality="mumbo"))
    assert float(np.sum(b.gain)) == pytest.approx(dense, rel=1e-8, abs=1e-12)
    bound = float(gibbon.gibbon_batch_gain(post, b.x, b.z, TARGET, gstar, xp, zp))
    g = np.asarray(acquisitions.mumbo_gain(*moments.joint_moments(post, b.x, b.z, TARGET), gstar))
    q = np.asarray(gibbon.gibbon_quality(*moments.joint_moments(post, b.x, b.z, TARGET), gstar))
    assert dense - bound == pytest.approx(float(np.sum(g - q)), rel=1e-6, abs=1e-10)
    assert np.all(g >= q - 1e-9)
    with pytest.raises(ValueError, match="quality must be one of"):
        gibbon.gibbon_batch(post, TARGET, gstar, x, z, 1, quality="mes")


def test_marginal_cost_slots_maximise_their_own_gain_per_own_cost():
    """marginal_cost: slot k is the candidate with the largest (dense gain of the batch with
    it) - (dense gain of the slots before), divided by its own cost (brute force); the
    batch-ratio rule can choose differently."""
    post, y = _icm_post()
    x, z = _candidates(post.spec)
    xp, zp = _candidates(post.spec, 2, seed=9)
    gstar = _gstar(y)
    cost = np.where(z == 0, 10.0, 1.0)
    for quality in gibbon.QUALITIES:
        b = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 3, xp, zp, cost=cost, quality=quality,
                                marginal_cost=True)
        for k in range(3):
            before = float(gibbon.gibbon_batch_gain(post, b.x[:k], b.z[:k], TARGET, gstar, xp, zp,
                                                    quality=quality)) if k else 0.0
            gain = jax.vmap(lambda xc, zc: gibbon.gibbon_batch_gain(
                post, jnp.concatenate([b.x[:k], xc[None]]), jnp.concatenate([b.z[:k], zc[None]]), TARGET, gstar,
                xp, zp, quality=quality))(jnp.asarray(x), jnp.asarray(z))
            ratio = (np.asarray(gain) - before) / cost
            assert int(b.index[k]) == int(np.argmax(ratio))
            assert float(b.gain[k]) == pytest.approx(float(np.asarray(gain)[int(b.index[k])]) - before, rel=1e-8,
                                                     abs=1e-12)


def test_adding_an_uncorrelated_point_adds_its_quality():
    """Theory: the log-det increment is <= 0 (Fischer) and 0 for a point uncorrelated with
    the batch, so the gain cannot decrease by adding such a point (it adds Q >= 0)."""
    post, y = _icm_post(log_ls=0.01)  # correlation ~0 beyond a few hundredths
    gstar = _gstar(y)
    xb = np.array([[0.2, 0.0], [0.8, 1.5]])
    zb = np.array([0, 1])
    xn, zn = np.array([[0.5, -0.8]]), np.array([0])
    before = float(gibbon.gibbon_batch_gain(post, xb, zb, TARGET, gstar))
    after = float(gibbon.gibbon_batch_gain(post, np.concatenate([xb, xn]), np.concatenate([zb, zn]), TARGET, gstar))
    q_new = float(gibbon.gibbon_quality(*moments.joint_moments(post, xn, zn, TARGET), gstar)[0])
    assert q_new > 0
    assert after - before == pytest.approx(q_new, rel=1e-9)
    assert after >= before


def test_log_det_part_never_increases_and_quality_never_decreases():
    post, y = _icm_post()
    gstar = _gstar(y)
    x, z = _candidates(post.spec, 6, seed=11)
    cov = np.asarray(fantasy.observation_cov(post, x, z))
    mom = moments.joint_moments(post, x, z, TARGET)
    quality = np.asarray(gibbon.gibbon_quality(*mom, gstar))
    ld = [float(gibbon.log_det_correlation(cov[:k, :k])) for k in range(7)]
    assert np.all(np.diff(ld) <= 1e-14)
    assert np.all(quality >= 0)


def test_repeat_of_a_noise_free_pending_point_gains_nothing():
    post, y = _icm_post(noise_free=True)  # noise at the model's floor: a noise-free target
    gstar = _gstar(y)
    x, z = _candidates(post.spec)
    mu_g = np.asarray(moments.joint_moments(post, x, z, TARGET).mu_g)
    c = int(np.argmin(np.where(z == 0, mu_g, np.inf)))  # a target point, far below g*
    xp, zp = x[c:c + 1], z[c:c + 1]
    alone = float(gibbon.gibbon_batch_gain(post, xp, zp, TARGET, gstar))
    again = float(gibbon.gibbon_batch_gain(post, xp, zp, TARGET, gstar, xp, zp))
    assert alone > 0
    assert again < -1.0  # the bound is very negative where the exact gain is 0
    b = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 3, np.concatenate([xp, xp]), np.concatenate([zp, zp]))
    assert c not in np.asarray(b.index).tolist()
    assert np.all(np.isfinite(np.asarray(b.gain)))
    kb_alone = float(fantasy.kriging_believer_gain(post, xp, zp, TARGET, gstar)[0])
    kb_again = float(fantasy.kriging_believer_gain(post, xp, zp, TARGET, gstar, xp, zp)[0])
    assert kb_again <= 1e-3 * kb_alone


def test_kriging_believer_batch_is_sequential_mumbo_on_fantasies():
    post, y = _icm_post()
    x, z = _candidates(post.spec)
    xp, zp = _candidates(post.spec, 1, seed=5)
    gstar = _gstar(y)
    b = fantasy.kriging_believer_batch(post, TARGET, gstar, x, z, 2, xp, zp)
    for k in range(2):
        # independent route: a fantasized posterior on pending + slots so far, then MUMBO
        fx, fz = np.concatenate([xp, b.x[:k]]), np.concatenate([zp, b.z[:k]])
        gains = acquisitions.mumbo_gain(*moments.joint_moments(fantasy.fantasize(post, fx, fz), x, z, TARGET),
                                        gstar)
        assert int(b.index[k]) == int(np.argmax(gains))
        assert float(b.gain[k]) == pytest.approx(float(np.max(gains)), rel=1e-6)


def test_jit_and_vmap():
    post, y = _icm_post()
    x, z = _candidates(post.spec)
    gstar = _gstar(y)
    batches = jnp.asarray(x[:12].reshape(4, 3, 2)), jnp.asarray(z[:12].reshape(4, 3))
    vm = jax.vmap(lambda bx, bz: gibbon.gibbon_batch_gain(post, bx, bz, TARGET, gstar))(*batches)
    loop = [float(gibbon.gibbon_batch_gain(post, bx, bz, TARGET, gstar)) for bx, bz in zip(*batches)]
    np.testing.assert_allclose(vm, loop, rtol=1e-12)
    eager = gibbon.gibbon_batch(post, TARGET, gstar, x, z, 3)
    jitted = jax.jit(lambda p, g: gibbon.gibbon_batch(p, TARGET, g, x, z, 3))(post, gstar)
    np.testing.assert_array_equal(eager.index, jitted.index)
    # vmapped over g* sets (e.g. seeds): each lane equals its own call
    g2 = jnp.stack([gstar, gstar + 0.3])
    lanes = jax.vmap(lambda g: gibbon.gibbon_batch(post, TARGET, g, x, z, 3).index)(g2)
    np.testing.assert_array_equal(lanes[1], gibbon.gibbon_batch(post, TARGET, g2[1], x, z, 3).index)


def test_bad_inputs_raise_clear_errors():
    post, y = _icm_post()
    x, z = _candidates(post.spec)
    g = _gstar(y)
    with pytest.raises(ValueError, match="q"):
        gibbon.gibbon_batch(post, TARGET, g, x, z, 0)
    with pytest.raises(ValueError, match="q"):
        gibbon.gibbon_batch(post, TARGET, g, x, z, 1.5)
    with pytest.raises(ValueError, match="cost"):
        gibbon.gibbon_batch(post, TARGET, g, x, z, 2, cost=-np.ones(M))
    with pytest.raises(ValueError, match="cost"):
        gibbon.gibbon_batch(post, TARGET, g, x, z, 2, cost=np.ones(3))
    with pytest.raises(ValueError, match="x_pending and z_pending"):
        gibbon.gibbon_batch(post, TARGET, g, x, z, 2, x_pending=x[:1])
    with pytest.raises(ValueError, match="z_pending"):
        gibbon.gibbon_batch(post, TARGET, g, x, z, 2, x[:1], np.array([5]))
    with pytest.raises(ValueError, match="gstar"):
        gibbon.gibbon_batch(post, TARGET, jnp.zeros(0), x, z, 2)
    with pytest.raises(ValueError, match="gstar"):
        fantasy.kriging_believer_batch(post, TARGET, jnp.asarray([np.nan]), x, z, 2)
    with pytest.raises(ValueError, match="repulsion_weight"):
        gibbon.gibbon_batch(post, TARGET, g, x, z, 2, repulsion_weight=-1.0)
    with pytest.raises(ValueError, match="var_g"):
        gibbon.gibbon_quality(0.0, -1.0, 0.0, 1.0, 0.0, g)
    with pytest.raises(ValueError, match="mu_g"):
        gibbon.gibbon_quality(np.nan, 1.0, 0.0, 1.0, 0.0, g)
    with pytest.raises(ValueError, match="x must have shape"):
        gibbon.gibbon_batch_gain(post, x[:, :1], z, TARGET, g)
