"""The maximiser's pruned scoring (mumbo_jax.bo.optimize.pruned_scores, a rule's ``bound``):
the max-value gains' bound holds against MUMBO's gain (table and Simpson paths) and MES's
at every fidelity, and a maximisation with the bound makes the choice of one without it."""

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.acquisition import acquisitions, maxvalue
from mumbo_jax.acquisition import baselines
from mumbo_jax.bo import bounds, optimize, rules
from mumbo_jax.gp import moments, posterior

from .test_maxvalue import _posterior_2fid

BOUND_ROWS = 8  # a loose bound: variances given the first 8 of the 60 rows


def _setup(seed=0, n=60):
    """A 2-fidelity posterior and g* samples just above the largest mean of g on a grid
    (sampled g* sit far above it here, where every gain is below 0.01)."""
    _, post, x = _posterior_2fid(seed, n, lengthscale=0.3)
    target = posterior.target_fidelity(0)
    rng = np.random.default_rng(seed + 100)
    grid = np.column_stack([rng.uniform(size=4000), rng.uniform(-2, 2, 4000)])
    top = float(jnp.max(moments.target_moments(post, grid, target)[0]))
    gstar = top + jnp.linspace(0.01, 0.3, 10) * float(post.scaling.y_scale)
    return post, target, gstar, x


def _bound(post, target, gstar, x):
    mean, var_bound = moments.target_moments_bound(post, x, target, BOUND_ROWS)
    return acquisitions.mes_gain_bound(mean, var_bound, gstar)


def test_the_bound_is_above_mumbos_and_mes_gain_at_every_fidelity():
    post, target, gstar, x_data = _setup()
    rng = np.random.default_rng(1)
    x = np.column_stack([rng.uniform(size=400), rng.uniform(-2, 2, 400)])
    x = np.concatenate([x, x_data + rng.normal(scale=0.01, size=x_data.shape)])  # near the data too
    b = np.asarray(_bound(post, target, gstar, x))
    exact_mean, exact_var = moments.target_moments(post, x, target)
    mes = np.asarray(acquisitions.mes_gain(exact_mean, exact_var, gstar))
    assert np.all(b >= mes * (1 - 1e-9))
    for z in (0, 1):
        zz = jnp.full(x.shape[0], z)
        for gain in (rules.mumbo_alpha, rules.mumbo_alpha_simpson):
            g = np.asarray(gain(post, target, gstar, x, zz))
            assert np.all(g <= b * (1 + bounds.BOUND_SLACK)), (z, gain, np.max(g / b))
    # the gains are not negligible here, and the bound is finite where every sample is above the mean
    assert np.max(mes) > 0.3
    finite = np.all(np.asarray(gstar)[None, :] >= np.asarray(exact_mean)[:, None], axis=1)
    assert np.all(np.isfinite(b[finite])) and np.all(np.isinf(b[~finite]))


def test_the_ei_bound_is_above_ei():
    post, target, _, x_data = _setup(seed=3)
    rng = np.random.default_rng(2)
    x = np.concatenate([np.column_stack([rng.uniform(size=500), rng.uniform(-2, 2, 500)]), x_data])
    eta = moments.incumbent(post, target)[1]
    mean, var_bound = moments.target_moments_bound(post, x, target, BOUND_ROWS)
    b = np.asarray(baselines.expected_improvement(mean, var_bound, eta))
    ei = np.asarray(baselines.ei_alpha(post, target, eta, x, None))
    assert np.all(ei <= b * (1 + 1e-9) + 1e-300) and np.max(ei) > 0
    assert np.mean(b > 1.01 * ei) > 0.5  # and a loose one, given 8 of the 60 rows


def test_the_mes_bound_by_hand():
    # two samples above the mean: the MES gain at the bounded variance; one below: unbounded
    gstar = jnp.array([1.0, 2.0])
    mu, var = jnp.array([0.0, 1.5]), jnp.array([4.0, 1.0])
    b = np.asarray(acquisitions.mes_gain_bound(mu, var, gstar))
    np.testing.assert_allclose(b[0], float(acquisitions.mes_gain(mu[:1], var[:1], gstar)[0]), rtol=1e-12)
    assert np.isinf(b[1])
    # larger variance bounds, larger bounds (gamma >= 0)
    assert float(acquisitions.mes_gain_bound(mu[:1], 2 * var[:1], gstar)[0]) > b[0]


def test_pruned_scores_keep_the_best_starts_of_scoring_every_candidate():
    rng = np.random.default_rng(0)
    m, n_starts = 3000, 8
    x = jnp.asarray(rng.uniform(size=(m, 2)))
    z = jnp.asarray(rng.integers(0, 3, m))
    cost = lambda z: jnp.asarray([1.0, 3.0, 10.0])[z]
    acq = lambda x, z: jnp.exp(-20 * jnp.sum((x - 0.3) ** 2, axis=1)) * (1.0 + 0.1 * z)
    full = np.asarray(acq(x, z) / cost(z))
    slack = jnp.asarray(rng.uniform(0, 0.05, m))
    bound = (jnp.exp(-20 * jnp.sum((x - 0.3) ** 2, axis=1)) * 1.2 + slack) / cost(z)
    scores = np.asarray(jax.jit(lambda b: optimize.pruned_scores(acq, b, x, z, cost, n_starts))(bound))
    top_full = np.argsort(-full)[:n_starts]
    top_pruned = np.argsort(-scores)[:n_starts]
    np.testing.assert_array_equal(top_pruned, top_full)
    np.testing.assert_allclose(scores[top_pruned], full[top_full], rtol=1e-13)
    evaluated = np.isfinite(scores)
    assert evaluated.sum() < m / 2  # most candidates were never scored exactly
    np.testing.assert_allclose(scores[evaluated], full[evaluated], rtol=1e-13)
    # an unknown bound (inf or NaN) is always scored
    bound = bound.at[5].set(jnp.nan).at[7].set(jnp.inf)
    scores = np.asarray(optimize.pruned_scores(acq, bound, x, z, cost, n_starts))
    assert np.isfinite(scores[5]) and np.isfinite(scores[7])


def test_a_maximisation_with_the_bound_makes_the_same_choice():
    post, target, gstar, _ = _setup(seed=2)
    acq = jax.tree_util.Partial(rules.mumbo_alpha, post, target, gstar)
    bound = jax.tree_util.Partial(_bound, post, target, gstar)
    bounds = jnp.asarray([[0.0, 1.0], [-2.0, 2.0]])
    space = optimize.discrete_fidelities(jnp.asarray([1.0, 0.2]))
    key = jax.random.PRNGKey(4)
    plain = optimize.maximise(key, acq, bounds, space, n_candidates=1500)
    pruned = optimize.maximise(key, acq, bounds, space, n_candidates=1500, bound=bound)
    np.testing.assert_allclose(np.asarray(pruned.x), np.asarray(plain.x), rtol=1e-9, atol=1e-12)
    assert int(pruned.z) == int(plain.z)
    np.testing.assert_allclose(float(pruned.score), float(plain.score), rtol=1e-9)


def test_mumbo_mes_and_the_robust_default_carry_the_bound():
    from mumbo_jax.bo import robust  # noqa: F401  (registers the robust rules)

    assert rules.RULES["mumbo"].bound is not None and rules.RULES["mes"].bound is not None
    assert rules.RULES["robust"].bound is rules.RULES["mumbo"].bound
    assert rules.RULES["ei"].bound is None  # no bound: every candidate is scored
