"""The pieces of the target floor that the library keeps: a floored fit moved into
the plain model's parameters keeps its kernel (the loop's refit of a floored model), and
the leave-one-out log density (the robust rule's reliability test) matches dense
conditioning. The floor chosen by leave-one-out (``target_floor_cv``) left the library
(docs/RESULTS.md, Levers tried)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from mumbo_jax.gp import models, posterior


def _gram(spec, params, x, z):
    xu, zu = models.scale_inputs(spec, models.make_scaling(spec, jnp.zeros(x.shape[0])), x, z)
    return np.asarray(models.build_kernel(spec, params)((xu, zu), (xu, zu)))


@pytest.mark.parametrize("kind", ["icm", "icm_disc"])
def test_absorbing_the_floor_keeps_the_kernel(kind):
    rng = np.random.default_rng(0)
    make = {"icm": models.icm_model, "icm_disc": models.icm_disc_model}[kind]
    floored = make([(0.0, 1.0)] * 2, 3, rank=2, target_floor=0.05)
    assert floored.kind == kind and floored.target_floor == 0.05
    plain = dataclasses.replace(floored, target_floor=0.0)
    params = models.random_params(floored, jax.random.PRNGKey(3))
    params["log_kappa"] = params["log_kappa"].at[0].set(-40.0)  # the target's own part fitted away
    x = jnp.asarray(rng.uniform(size=(9, 2)))
    z = jnp.asarray(np.repeat([0, 1, 2], 3))
    k_floored = _gram(floored, params, x, z)
    k_plain = _gram(plain, models.absorb_target_floor(floored, params), x, z)
    np.testing.assert_allclose(k_plain, k_floored, rtol=1e-12, atol=1e-14)
    # and the floor is really there: the plain kernel of the same parameters differs
    assert np.max(np.abs(_gram(plain, params, x, z) - k_floored)) > 1e-3


def test_loo_log_density_matches_dense_conditioning():
    rng = np.random.default_rng(1)
    spec = models.icm_model([(0.0, 1.0)] * 2, 2)
    params = models.random_params(spec, jax.random.PRNGKey(0))
    n = 12
    x = jnp.asarray(rng.uniform(size=(n, 2)))
    z = jnp.asarray(np.arange(n) % 2)
    y = jnp.asarray(np.sin(5 * np.asarray(x[:, 0])) + 0.3 * np.asarray(z) + 0.01 * rng.normal(size=n))
    mask = jnp.asarray(np.r_[np.ones(n - 2), 0.0, 0.0])  # two padding rows
    post = posterior.condition(spec, params, x, z, y, mask)
    got = np.asarray(posterior.loo_log_density(post))
    # the reference: condition on the other real rows with dense numpy, standardised units
    k = _gram(spec, params, x, z) + np.diag(np.asarray(post.noise)[np.asarray(z)])
    ys = np.asarray(posterior.standardise(post.scaling, y, mask))
    real = np.flatnonzero(np.asarray(mask) > 0)
    for i in real:
        rest = real[real != i]
        w = np.linalg.solve(k[np.ix_(rest, rest)], k[rest, i])
        mean, var = w @ ys[rest], k[i, i] - w @ k[rest, i]
        assert got[i] == pytest.approx(stats.norm.logpdf(ys[i], mean, np.sqrt(var)), rel=1e-8, abs=1e-8)
    assert np.all(got[np.asarray(mask) == 0] == 0.0)
