"""MUMBO's candidates scored at every fidelity in one call (the target's part of the
moments shared, nothing solved again at the target fidelity) against one call of the
per-fidelity gain per fidelity: the same values, and the same choice of the maximiser."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

from mumbo_jax.bo import optimize, rules  # noqa: E402
from mumbo_jax.gp import models, moments, posterior  # noqa: E402


def _posterior(kind="icm", n=30, seed=0):
    bounds = [(0.0, 1.0)] * 2
    spec = models.icm_model(bounds, 3) if kind == "icm" else models.icm_disc_model(bounds, 3)
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 2))
    z = rng.integers(0, 3, n)
    y = np.sin(6 * x[:, 0]) + np.cos(4 * x[:, 1]) - 0.2 * z
    params = models.random_params(spec, jax.random.PRNGKey(seed))
    return posterior.condition(spec, params, x, z, y), y


@pytest.mark.parametrize("kind", ["icm", "icm_disc"])
@pytest.mark.parametrize("alpha", [rules.mumbo_alpha, rules.mumbo_alpha_simpson])
def test_over_fidelities_equals_one_call_per_fidelity(kind, alpha):
    post, y = _posterior(kind)
    target = posterior.target_fidelity(0)
    gstar = jnp.asarray(np.max(y) + np.array([0.1, 0.3, 0.7]))
    x = jax.random.uniform(jax.random.PRNGKey(5), (64, 2))
    fids = jnp.arange(3)
    together = alpha.over_fidelities(post, target, gstar, x, fids)
    one_by_one = jnp.stack([alpha(post, target, gstar, x, jnp.full(64, f)) for f in range(3)])
    assert together.shape == (3, 64)
    np.testing.assert_allclose(np.asarray(together), np.asarray(one_by_one), rtol=1e-9, atol=1e-12)
    assert np.all(np.asarray(together) >= 0) and np.max(np.asarray(together)) > 1e-3  # not all zero


def test_joint_moments_at_the_target_fidelity_need_no_second_solve():
    post, _ = _posterior()
    target = posterior.target_fidelity(0)
    x = jax.random.uniform(jax.random.PRNGKey(1), (40, 2))
    m = moments.joint_moments_fidelities(post, x, jnp.arange(3), target)
    for f in range(3):
        one = moments.joint_moments(post, x, jnp.full(40, f), target)
        for name in ("mu_g", "var_g", "mu_y", "var_y", "cov"):
            np.testing.assert_allclose(np.asarray(getattr(m, name)[f]), np.asarray(getattr(one, name)),
                                       rtol=1e-10, atol=1e-13, err_msg=f"{name} at fidelity {f}")


def test_the_maximiser_chooses_the_same_with_either_form():
    post, y = _posterior()
    target = posterior.target_fidelity(0)
    gstar = jnp.asarray(np.max(y) + np.array([0.2, 0.5]))
    space = optimize.discrete_fidelities([1.0, 0.3, 0.1])
    bounds = jnp.asarray([[0.0, 1.0]] * 2)
    fast = jax.tree_util.Partial(rules.mumbo_alpha, post, target, gstar)
    plain = jax.tree_util.Partial(lambda *a: rules.mumbo_alpha(*a), post, target, gstar)  # no over_fidelities
    key = jax.random.PRNGKey(2)
    a = optimize.maximise(key, fast, bounds, space, n_candidates=300, n_starts=4, n_steps=10)
    b = optimize.maximise(key, plain, bounds, space, n_candidates=300, n_starts=4, n_steps=10)
    np.testing.assert_allclose(np.asarray(a.x), np.asarray(b.x), atol=1e-8)
    assert int(a.z) == int(b.z)
