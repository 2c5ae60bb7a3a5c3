"""Baseline acquisitions against closed forms, scipy and Monte Carlo references."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from mumbo_jax.acquisition import baselines
from mumbo_jax.gp import fitting, models, moments, posterior
from mumbo_jax.benchmarks import problems

from .test_posterior import internal, np_kernel


# --------------------------------------------------------------------------- EI and UCB


def _ei_scipy(mu, sd, best):
    u = (mu - best) / sd
    return (mu - best) * stats.norm.cdf(u) + sd * stats.norm.pdf(u)


def test_ei_matches_closed_form_and_monte_carlo():
    rng = np.random.default_rng(0)
    mu, sd = rng.normal(size=50), rng.uniform(0.1, 3, size=50)
    best = 0.3
    ei = np.asarray(baselines.expected_improvement(mu, sd**2, best))
    np.testing.assert_allclose(ei, _ei_scipy(mu, sd, best), rtol=1e-12, atol=1e-14)
    # Monte Carlo E[max(g - best, 0)] for three of them
    g = mu[:3, None] + sd[:3, None] * rng.normal(size=(3, 400_000))
    mc = np.maximum(g - best, 0).mean(axis=1)
    np.testing.assert_allclose(ei[:3], mc, rtol=0.02, atol=2e-3)


def test_ei_extremes_are_finite_and_accurate():
    # far below the incumbent: the series branch against mpmath-free high-precision form
    u = np.array([-7.9, -8.0, -8.1, -12.0, -30.0, -40.0])
    ei = np.asarray(baselines.expected_improvement(u, 1.0, 0.0))
    assert np.all(np.isfinite(ei)) and np.all(ei >= 0)
    # reference: phi(u) - |u| Phi(u) with Phi from the log-space survival function
    ref = np.exp(stats.norm.logpdf(u)) * (1 - np.abs(u) * np.exp(stats.norm.logcdf(u) - stats.norm.logpdf(u)))
    np.testing.assert_allclose(ei[:3], ref[:3], rtol=1e-6)
    # leading asymptotics phi(u)/u^2 for very negative u
    np.testing.assert_allclose(ei[3:], stats.norm.pdf(u[3:]) / u[3:] ** 2 * (1 - 3 / u[3:] ** 2), rtol=1e-3)
    # zero variance: the plain improvement
    np.testing.assert_allclose(np.asarray(baselines.expected_improvement([1.0, -1.0], 0.0, 0.0)), [1.0, 0.0])
    grad = jax.grad(lambda m: baselines.expected_improvement(m, 1.0, 0.0))(-35.0)
    assert np.isfinite(grad) and grad >= 0


def test_ei_and_ucb_reject_bad_inputs():
    with pytest.raises(ValueError, match="var"):
        baselines.expected_improvement(0.0, -1.0, 0.0)
    with pytest.raises(ValueError, match="best"):
        baselines.expected_improvement(0.0, 1.0, np.nan)
    with pytest.raises(ValueError, match="beta"):
        baselines.ucb(0.0, 1.0, -2.0)


def test_ucb_and_beta_schedule():
    mu, var = np.array([0.0, 1.0, -2.0]), np.array([1.0, 4.0, 0.0])
    np.testing.assert_allclose(np.asarray(baselines.ucb(mu, var, 2.0)), mu + np.sqrt(2.0 * var))
    np.testing.assert_allclose(float(baselines.ucb_beta(3, 10)), 0.2 * 3 * np.log(20.0))
    np.testing.assert_allclose(float(baselines.ucb_beta(3, 0)), 0.2 * 3 * np.log(2.0))


# --------------------------------------------------------------------------- MF-GP-UCB, BOCA


def test_mf_gp_ucb_bound_and_fidelity():
    mu = np.array([[1.0, 0.0], [0.5, 0.2]])  # target row 0, one cheaper fidelity
    var = np.array([[1.0, 4.0], [0.25, 0.01]])
    zeta = np.array([0.0, 0.3])
    beta = 4.0
    bound = np.asarray(baselines.mf_gp_ucb_bound(mu, var, zeta, beta))
    np.testing.assert_allclose(bound, np.min(mu + 2 * np.sqrt(var) + zeta[:, None], axis=0))
    costs = np.array([100.0, 10.0, 1.0])
    # the cheapest fidelity whose sqrt(beta) sd is still above its threshold
    assert int(baselines.mf_gp_ucb_fidelity(np.array([1.0, 1.0, 1.0]), 1.0, np.array([0.0, 0.5, 0.5]), costs)) == 2
    assert int(baselines.mf_gp_ucb_fidelity(np.array([1.0, 1.0, 0.1]), 1.0, np.array([0.0, 0.5, 0.5]), costs)) == 1
    assert int(baselines.mf_gp_ucb_fidelity(np.array([1.0, 0.1, 0.1]), 1.0, np.array([0.0, 0.5, 0.5]), costs)) == 0


def test_mf_gp_ucb_gamma_replay():
    costs = jnp.array([100.0, 10.0])  # ratio 10: ten low-fidelity queries in a row escalate
    z = jnp.array([1] * 9 + [0] + [1] * 10 + [1] * 10 + [0, 0])
    e = baselines.mf_gp_ucb_gamma_exponents(z, jnp.ones(z.shape[0], bool), costs)
    np.testing.assert_allclose(np.asarray(e), [2.0, 2.0])  # two runs of ten (the first run of 9 is reset)
    # padding does not count
    e = baselines.mf_gp_ucb_gamma_exponents(z, jnp.arange(z.shape[0]) < 19, costs)
    np.testing.assert_allclose(np.asarray(e), [0.0, 0.0])


def test_boca_coefficient_replay():
    valid = jnp.ones(40, bool)
    # never at the target: every one of the 41 steps (t = 0..40) raises the coefficient
    c = baselines.boca_coefficient(jnp.zeros(40, bool), valid)
    np.testing.assert_allclose(float(c), 0.01 * 1.1**41)
    # always at the target: fractions t/20 for t < 20 (<= 0.25 for t <= 5, >= 0.5 from t = 10)
    c = baselines.boca_coefficient(jnp.ones(40, bool), valid)
    votes = sum(1 if min(t, 20) / 20 <= 0.25 else (-1 if min(t, 20) / 20 >= 0.5 else 0) for t in range(41))
    np.testing.assert_allclose(float(c), 0.01 * 1.1**votes)
    # rows that are not BO evaluations are skipped
    c2 = baselines.boca_coefficient(jnp.ones(50, bool), jnp.arange(50) >= 10)
    np.testing.assert_allclose(float(c2), float(c))


def test_boca_fidelity_rule():
    z = jnp.linspace(0.0, 1.0, 5)
    cost = 0.1 + z**2
    xi = jnp.array([0.9, 0.8, 0.5, 0.2, 0.0])
    sd = jnp.array([0.5, 0.5, 0.5, 0.5, 0.5])
    # everything cheap is admissible: the cheapest
    assert float(baselines.boca_fidelity(z, sd, xi, cost, 1.1, 4.0, 1.0, 0.2, 1.0)) == 0.0
    # z = 0 too certain: the next cheapest with xi > 0.9 / 2
    sd2 = sd.at[0].set(1e-6)
    assert float(baselines.boca_fidelity(z, sd2, xi, cost, 1.1, 4.0, 1.0, 0.2, 1.0)) == 0.25
    # nothing admissible: the target
    assert float(baselines.boca_fidelity(z, sd * 0, xi, cost, 1.1, 4.0, 1.0, 0.2, 1.0)) == 1.0


# --------------------------------------------------------------------------- MTBO


@pytest.fixture(scope="module")
def forrester_data():
    prob = problems.get_problem("forrester")
    x = jnp.concatenate([jnp.linspace(0.05, 0.95, 5), jnp.linspace(0.0, 1.0, 9), jnp.linspace(0.0, 1.0, 9)])[:, None]
    z = jnp.concatenate([jnp.zeros(5), jnp.ones(9), 2 * jnp.ones(9)]).astype(int)
    y = jax.vmap(lambda xx, zz: problems.objective(prob, xx, zz))(x, z)
    return models.icm_model(prob.bounds, 3, rank=2), np.asarray(x), np.asarray(z), np.asarray(y)


@pytest.fixture(scope="module")
def forrester_post(forrester_data):
    spec, x, z, y = forrester_data
    return fitting.fit(spec, x, z, y, jax.random.PRNGKey(0), n_restarts=3, max_iter=100)


def test_pmin_matches_monte_carlo_on_a_1d_grid(forrester_post):
    grid = jnp.linspace(0.0, 1.0, 25)[:, None]
    mean, cov = moments.target_joint(forrester_post, grid, posterior.target_fidelity(0))
    mean, cov = np.asarray(mean), np.asarray(cov)
    s = 40_000
    w = jax.random.normal(jax.random.PRNGKey(1), (25, s))
    chol = np.asarray(baselines.robust_cholesky(jnp.asarray(cov)))
    p = np.asarray(baselines.pmin_from_samples(mean[:, None] + chol @ np.asarray(w)))
    # independent reference: numpy's multivariate normal sampler and argmax counts
    ref_draws = np.random.default_rng(2).multivariate_normal(mean, cov + 1e-8 * np.mean(np.diag(cov)) * np.eye(25),
                                                              size=s, method="eigh")
    ref = np.bincount(np.argmax(ref_draws, axis=1), minlength=25) / s
    tol = 5 * np.sqrt(np.maximum(ref * (1 - ref), 1e-4) * 2 / s)
    assert np.all(np.abs(p - ref) <= tol), (p, ref)
    assert abs(p.sum() - 1) < 1e-12 and p.max() > 0.2  # a fitted posterior concentrates p_min


def test_pmin_entropy():
    np.testing.assert_allclose(float(baselines.pmin_entropy(jnp.ones(4) / 4)), np.log(4))
    assert float(baselines.pmin_entropy(jnp.array([1.0, 0, 0]))) == 0.0
    # relative to a base measure u: -sum p log(p/u)
    p, lu = jnp.array([0.5, 0.5, 0.0]), jnp.log(jnp.array([0.25, 0.25, 0.5]))
    np.testing.assert_allclose(float(baselines.pmin_entropy(p, lu)), -np.log(2.0))


def _mtbo_problem(p=6, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(p, p))
    cov = a @ a.T / p + 0.2 * np.eye(p)
    mean = rng.normal(scale=0.3, size=p)
    return mean, cov


def test_mtbo_gain_against_direct_conditioning():
    """The Matheron-updated samples give the same expected entropy drop as conditioning
    the Gaussian on y directly (fresh Cholesky, independent samples)."""
    p, s = 6, 60_000
    mean, cov = _mtbo_problem(p)
    # observe g at representer 2 plus noise 0.05: c = cov[:, 2], var_y = cov[2, 2] + 0.05
    c, var_y = cov[:, 2], cov[2, 2] + 0.05
    nodes, weights = baselines.gauss_hermite(7)
    key = jax.random.PRNGKey(3)
    w = jax.random.normal(key, (p + 1, s))
    gain = float(baselines.mtbo_gain(mean, cov, c[None], jnp.array([var_y]), w[:-1], w[-1], nodes, weights)[0])
    # reference: y = mu_y + s_y t, posterior N(mean + c (y - mu_y)/var_y, cov - c c^T / var_y)
    rng = np.random.default_rng(4)
    h0 = stats.entropy(np.bincount(np.argmax(rng.multivariate_normal(mean, cov, size=s), 1), minlength=p) / s)
    hs = []
    for t in np.asarray(nodes):
        m = mean + c * t / np.sqrt(var_y)
        cv = cov - np.outer(c, c) / var_y
        draws = rng.multivariate_normal(m, cv + 1e-12 * np.eye(p), size=s, method="eigh")
        hs.append(stats.entropy(np.bincount(np.argmax(draws, 1), minlength=p) / s))
    ref = h0 - float(np.dot(np.asarray(weights), hs))
    assert gain > 0.05
    np.testing.assert_allclose(gain, ref, atol=0.02)


def test_mtbo_gain_known_answers():
    p, s = 5, 20_000
    mean, cov = _mtbo_problem(p, seed=1)
    key = jax.random.PRNGKey(5)
    w = jax.random.normal(key, (p + 1, s))
    nodes, weights = baselines.gauss_hermite(25)
    # an observation uncorrelated with g changes nothing
    zero = baselines.mtbo_gain(mean, cov, jnp.zeros((1, p)), jnp.array([1.0]), w[:-1], w[-1], nodes, weights)
    assert float(zero[0]) == 0.0
    # the fantasised p_min averages back to p_min (the law of total probability)
    chol = baselines.robust_cholesky(jnp.asarray(cov))
    base = jnp.asarray(mean)[:, None] + chol @ w[:-1]
    c = jnp.asarray(cov[:, 0] + cov[:, 3]) * 0.5
    var_y = 0.25 * (cov[0, 0] + cov[3, 3] + 2 * cov[0, 3]) + 0.1
    a = jax.scipy.linalg.solve_triangular(chol, c, lower=True)
    e = (a @ w[:-1] + jnp.sqrt(var_y - a @ a) * w[-1]) / jnp.sqrt(var_y)
    mix = sum(wk * baselines.pmin_after_fantasy(base, e, c, jnp.sqrt(var_y), t) for t, wk in zip(nodes, weights))
    p0 = baselines.pmin_from_samples(base)
    np.testing.assert_allclose(np.asarray(mix), np.asarray(p0), atol=0.02)
    # the more informative (less noisy) observation gains more
    gains = baselines.mtbo_gain(mean, cov, jnp.stack([c, c]), jnp.array([var_y, var_y + 5.0]), w[:-1], w[-1],
                                nodes, weights)
    assert float(gains[0]) > float(gains[1]) > -0.02


def test_mtbo_alpha_matches_moments_at_the_target(forrester_post):
    """On the posterior, observing the target at x has Cov(g(R), y) = Cov(g(R), g(x))."""
    post = forrester_post
    target = posterior.target_fidelity(0)
    state = baselines.mtbo_state(jax.random.PRNGKey(7), post, target, 12, 500, 5, 300)
    x = jnp.array([[0.3], [0.75], [0.9]])
    alpha = baselines.mtbo_alpha(post, target, state, x, jnp.zeros(3, int))
    pts = jnp.concatenate([state.rep_x, x])
    _, cov = moments.target_joint(post, pts, target)
    c = cov[12:, :12]
    m = moments.joint_moments(post, x, jnp.zeros(3, int), target)
    ref = baselines.mtbo_gain(state.mean_r, cov[:12, :12], c, m.var_y, state.w, state.w0, state.nodes,
                              state.weights, state.log_base)
    np.testing.assert_allclose(np.asarray(alpha), np.asarray(ref), atol=1e-6)
    assert np.all(np.isfinite(np.asarray(alpha)))


def _dense_moments(post, data):
    """Moments of the latent f(x, z) by dense numpy GP algebra on the raw data: an
    independent reference for everything the ``*_alpha`` functions read from the
    posterior (same hyper-parameters, none of the library's factorisation)."""
    spec, x, z, y = data
    p = post.params
    ym, ys = y.mean(), y.std()
    noise = spec.noise_floor + np.exp(np.asarray(p["log_noise"]))
    xu, zu = internal(spec, x, z)
    K = np_kernel(spec, p, xu, zu, xu, zu) + np.diag(noise[zu])
    weights = np.linalg.solve(K, (y - ym) / ys)

    def moments(xq, zq):
        xq, zq = np.asarray(xq, float), np.broadcast_to(np.asarray(zq, int), (len(xq),))
        qu, _ = internal(spec, xq, zq)
        ks = np_kernel(spec, p, qu, zq, xu, zu)
        var = np.diag(np_kernel(spec, p, qu, zq, qu, zq)) - np.sum(ks * np.linalg.solve(K, ks.T).T, axis=1)
        return ks @ weights * ys + ym, var * ys**2

    return moments


def test_alphas_on_a_posterior_match_dense_numpy_and_scipy(forrester_post, forrester_data):
    """EI, UCB, MT-EI's fidelity EI and MF-GP-UCB on a fitted posterior, with their
    incumbents and thresholds, against dense numpy moments and scipy's normal law."""
    post, moments = forrester_post, _dense_moments(forrester_post, forrester_data)
    _, x_eval, z_eval, _ = forrester_data
    target = posterior.target_fidelity(0)
    x = np.array([[0.2], [0.6], [0.78], [0.72], [0.01]])
    z = np.array([1, 2, 1, 1, 0])
    mus, vars_ = zip(*(moments(x, f) for f in range(3)))
    mus, vars_ = np.stack(mus), np.stack(vars_)
    close = dict(rtol=1e-6, atol=1e-9)

    # incumbents: the best posterior mean at an evaluated x, of g and of f(., 1)
    eta = baselines.incumbent_value(post, target)
    np.testing.assert_allclose(float(eta), np.max(moments(x_eval, 0)[0]), **close)
    eta1 = baselines.fidelity_incumbent(post, 1)
    np.testing.assert_allclose(float(eta1), np.max(moments(x_eval, 1)[0]), **close)
    # EI of g; EI of f(x, z) (MT-EI's second stage); UCB of g
    np.testing.assert_allclose(np.asarray(baselines.ei_alpha(post, target, eta, x, z)),
                               _ei_scipy(mus[0], np.sqrt(vars_[0]), float(eta)), **close)
    mu_z, var_z = moments(x, z)
    np.testing.assert_allclose(np.asarray(baselines.fidelity_ei(post, x, z, eta1)),
                               _ei_scipy(mu_z, np.sqrt(var_z), float(eta1)), **close)
    np.testing.assert_allclose(np.asarray(baselines.ucb_alpha(post, target, 2.5, x, z)),
                               mus[0] + np.sqrt(2.5 * vars_[0]), **close)
    # MF-GP-UCB: zeta_m = 2 max |mu_0 - mu_m| over the evaluated x, gamma = 0.01 range of
    # the means at the evaluated (x, z); the bound is min_m mu_m + sqrt(beta) sd_m + zeta_m
    zeta, gamma = baselines.mf_gp_ucb_thresholds(post, 3)
    at_eval = np.stack([moments(x_eval, f)[0] for f in range(3)])
    np.testing.assert_allclose(np.asarray(zeta), 2 * np.max(np.abs(at_eval - at_eval[0]), axis=1), **close)
    means_seen = moments(x_eval, z_eval)[0]
    np.testing.assert_allclose(np.asarray(gamma), np.full(3, 0.01 * np.ptp(means_seen)), **close)
    np.testing.assert_allclose(np.asarray(baselines.mf_gp_ucb_alpha(post, zeta, 2.5, x, z)),
                               np.min(mus + np.sqrt(2.5 * vars_) + np.asarray(zeta)[:, None], axis=0), **close)
