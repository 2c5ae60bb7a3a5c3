"""A target floor chosen from the data (``BOSettings.target_floor_cv``, issue 13): the
floored fit is moved into the plain model's parameters without changing its kernel, the
leave-one-out log density matches dense conditioning, and the refit keeps whichever fit
predicts the target's own observations better (both outcomes reached on real designs)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.benchmarks.problems.problem import objective
from mumbo_jax.bo import kernel
from mumbo_jax.bo.settings import BOSettings
from mumbo_jax.gp import fitting, models, posterior


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


def _design_state(problem_name, seed):
    prob = problems.get_problem(problem_name)
    task = tasks.problem_task(prob)
    x, z = kernel.initial_design(task, jax.random.PRNGKey(seed))
    y = jax.vmap(lambda a, b: objective(prob, a, b))(x, z.astype(jnp.int32))
    return task, kernel.init(task, x, z, y)


def _target_loo(task, state, params):
    b = state.buffers
    post = posterior.condition(task.spec, params, b.x, b.z, b.y, b.mask)
    on = np.asarray(b.mask) * (np.asarray(b.z) == task.target_z[0])
    return float(np.sum(on * np.asarray(posterior.loo_log_density(post))))


def _candidate(task, state, floor, key, settings):
    """The refit under ``floor`` as fit_stage runs it, in the plain parametrisation."""
    spec = dataclasses.replace(task.spec, target_floor=floor)
    b = state.buffers
    scaling = models.make_scaling(spec, b.y, b.mask)
    inits = fitting.restart_inits(spec, key, settings.fit_restarts, first=state.params)
    best, _, _ = fitting.fit_from(spec, scaling, b.x, b.z, b.y, b.mask, inits, settings.fit_max_iter, 1e-5)
    return models.absorb_target_floor(spec, best)


@pytest.mark.parametrize("seed, floor_wins", [(0, False), (2, True)])
def test_the_refit_keeps_the_fit_that_predicts_the_target_better(seed, floor_wins):
    # Currin's 2-D design (4 points at each fidelity): on seed 0 the plain ICM predicts the
    # target's own points better from the rest, on seed 2 the ICM with a 1 % floor does
    settings = BOSettings(target_floor_cv=0.01)
    task, state = _design_state("currin", seed)
    key = jax.random.PRNGKey(7)
    post = kernel.fit_stage(settings, task, state.buffers, state.params, key)
    plain = _candidate(task, state, 0.0, key, settings)
    floored = _candidate(task, state, 0.01, key, settings)
    assert (_target_loo(task, state, floored) > _target_loo(task, state, plain)) == floor_wins
    expected = floored if floor_wins else plain
    for name in expected:
        np.testing.assert_allclose(np.asarray(post.params[name]), np.asarray(expected[name]), rtol=1e-6, atol=1e-9)
    share = float(models.icm_kappa(task.spec, post.params)[0] / jnp.sum(post.params["W"][0] ** 2))
    # the two fits differ: the kept one has the floor exactly when the floored fit won
    assert (share >= 0.01 * (1 - 1e-9)) == floor_wins


def test_bad_target_floor_cv_is_named():
    with pytest.raises(ValueError, match="target_floor_cv must be a finite number >= 0"):
        BOSettings(target_floor_cv=-0.01)
    with pytest.raises(ValueError, match="target_floor_cv must be a finite number >= 0"):
        BOSettings(target_floor_cv=float("nan"))
    with pytest.raises(ValueError, match="does not combine with hmc_samples"):
        BOSettings(target_floor_cv=0.01, hmc_samples=4)
    task, state = _design_state("currin", 0)
    ar1 = dataclasses.replace(task, spec=models.ar1_model(task.spec.bounds, 2))
    with pytest.raises(ValueError, match="target_floor_cv applies to the ICM models"):
        kernel.fit_stage(BOSettings(target_floor_cv=0.01), ar1, state.buffers, models.default_params(ar1.spec),
                         jax.random.PRNGKey(0))
    floored = dataclasses.replace(task, spec=dataclasses.replace(task.spec, target_floor=0.05))
    with pytest.raises(ValueError, match="already has target_floor = 0.05"):
        kernel.fit_stage(BOSettings(target_floor_cv=0.01), floored, state.buffers, state.params, jax.random.PRNGKey(0))
