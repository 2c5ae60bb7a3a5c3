"""Hyper-parameter marginalisation (the NUTS lever, ``mcmc.samples``): BlackJAX NUTS samples, the
mixture they define, MUMBO averaged over them, and the loop that uses them."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("blackjax")

from mumbo_jax.benchmarks import problems, tasks  # noqa: E402
from mumbo_jax.bo import incumbent, rules  # noqa: E402
from mumbo_jax.bo.asktell import AskTell  # noqa: E402
from mumbo_jax.bo.settings import make_task  # noqa: E402
from mumbo_jax.gp import fitting, marginal, models, moments, posterior  # noqa: E402
from tests.bo_helpers import FAST, drive, with_  # noqa: E402
from tests.test_calibration import calibration_data  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    x, z, y = calibration_data(n=20)
    spec = models.icm_model([(0.0, 1.0)] * 2, 2)
    mask = np.ones(len(y))
    scaling = models.make_scaling(spec, jnp.asarray(y), jnp.asarray(mask))
    map_params, map_loss, _ = fitting.fit_params(spec, x, z, y, jax.random.PRNGKey(0), n_restarts=4, max_iter=200)
    return spec, scaling, (jnp.asarray(x), jnp.asarray(z), jnp.asarray(y), jnp.asarray(mask)), map_params, float(map_loss)


def test_nuts_draws_start_at_the_map_move_and_stay_in_the_posterior_bulk(fitted):
    spec, scaling, data, start, map_loss = fitted
    s = 12
    draws = marginal.nuts_samples(spec, scaling, *data, start, jax.random.PRNGKey(1), s, n_warmup=100)
    for k, v in start.items():
        assert draws[k].shape == (s,) + np.shape(v)
        np.testing.assert_array_equal(np.asarray(draws[k][0]), np.asarray(v))  # sample 0 is the MAP
        assert np.all(np.isfinite(np.asarray(draws[k])))
    assert float(np.std(np.asarray(draws["log_ls"][1:]), axis=0).min()) > 1e-3  # the chain moved
    losses = np.asarray([fitting.neg_log_marginal(spec, jax.tree_util.tree_map(lambda a: a[i], draws), scaling, *data)
                         for i in range(s)])
    p = sum(int(np.size(v)) for v in start.values())
    # posterior draws lie above the mode by ~chi2_p / 2 (mean p / 2); a sampler with the
    # wrong sign or a diverging step would leave this band (and none is far below the MAP)
    excess = losses[1:] - map_loss
    assert np.all(excess > -1.0), excess
    assert np.all(excess < p / 2 + 6 * np.sqrt(p)), excess


def _stacked(fitted, n=3):
    spec, scaling, data, start, _ = fitted
    sets = [jax.tree_util.tree_map(lambda a, i=i: a + 0.15 * i, start) for i in range(n)]
    params = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *sets)
    post = jax.vmap(lambda p: posterior.condition(spec, p, *data, scaling))(params)
    singles = [posterior.condition(spec, p, *data, scaling) for p in sets]
    return post, singles


def test_mixture_moments_are_the_law_of_total_variance(fitted):
    post, singles = _stacked(fitted)
    assert marginal.is_stacked(post) and not marginal.is_stacked(singles[0])
    target = posterior.target_fidelity(0)
    xq = jnp.asarray(np.random.default_rng(2).uniform(size=(7, 2)))
    mus, vs = zip(*[(np.asarray(m), np.asarray(v)) for m, v in (moments.target_moments(p, xq, target)
                                                                for p in singles)])
    mus, vs = np.stack(mus), np.stack(vs)
    mean, var = marginal.target_moments(post, xq, target)
    np.testing.assert_allclose(np.asarray(mean), mus.mean(0), rtol=1e-10)
    # atol: a variance of 3e-6 differs by 3e-16 between two programs' rounding
    np.testing.assert_allclose(np.asarray(var), vs.mean(0) + mus.var(0), rtol=1e-10, atol=1e-15)
    mj, cj = marginal.target_joint(post, xq, target)
    np.testing.assert_allclose(np.asarray(mj), mus.mean(0), rtol=1e-10)
    np.testing.assert_allclose(np.diag(np.asarray(cj)), vs.mean(0) + mus.var(0), rtol=1e-8)
    # the recommendation's sd is the mixture's
    bounds = jnp.asarray([[0.0, 1.0]] * 2)
    x, mu, sd = incumbent.recommend(post, target, bounds, "mean", marginal.first(post).x)
    m1, v1 = marginal.target_moments(post, x[None], target)
    np.testing.assert_allclose([float(mu), float(sd)], [float(m1[0]), float(np.sqrt(v1[0]))], rtol=1e-10)


def test_mumbo_on_samples_is_the_mean_of_the_per_sample_gains(fitted):
    post, singles = _stacked(fitted)
    target = posterior.target_fidelity(0)
    rng = np.random.default_rng(3)
    xq, zq = jnp.asarray(rng.uniform(size=(9, 2))), jnp.asarray(rng.integers(0, 2, 9))
    mv = [moments.target_moments(p, xq, target) for p in singles]
    top = max(float(jnp.max(m)) for m, _ in mv)
    sd = max(float(jnp.sqrt(jnp.max(v))) for _, v in mv)
    gstar = jnp.asarray(top + sd * (0.5 + np.abs(rng.standard_normal((3, 5)))))  # g* just above the means
    ref = np.mean([np.asarray(rules.mumbo_alpha(p, target, gstar[i], xq, zq)) for i, p in enumerate(singles)], axis=0)
    np.testing.assert_allclose(np.asarray(rules.mumbo_alpha(post, target, gstar, xq, zq)), ref, rtol=1e-8)
    assert np.all(np.isfinite(ref)) and np.all(ref >= 0) and np.max(ref) > 1e-3


@pytest.mark.slow  # ~25 s of the default run (NUTS programs only it compiles); the NUTS draws and g* under samples stay in CI
def test_asktell_with_nuts_keeps_samples_decides_and_refuses_pending():
    prob = problems.get_problem("forrester")
    settings = with_(FAST, mcmc={"samples": 3, "warmup": 10, "max_doublings": 3}, fit={"refit_every": 2})
    opt = AskTell(tasks.problem_task(prob), settings, seed=0)
    chosen = drive(opt, prob, 3)
    assert len(chosen) == 3
    assert np.asarray(opt.params["log_ls"]).shape[0] == 3  # the samples are the next warm start
    x, mu, sd = opt.recommendation()
    assert np.all(np.isfinite(x)) and np.isfinite(mu) and np.isfinite(sd) and sd > 0
    # a state saved with samples restores under MAP settings from the saved MAP
    state = opt.state_dict()
    back = AskTell.from_state(opt.task, FAST, state)
    np.testing.assert_array_equal(np.asarray(back.params["log_ls"]), np.asarray(opt.params["log_ls"])[0])
    xb, _ = back.ask()
    assert np.all(np.isfinite(xb))
    opt.ask()
    with pytest.raises(ValueError, match="pending.*mcmc.samples = 0"):
        opt.ask()


@pytest.mark.parametrize("changes,message", [
    (dict(mcmc={"samples": 1}), "mcmc.samples must be 0 .* or at least 2"),
    (dict(mcmc={"samples": -2}), "mcmc.samples must be >= 0"),
    (dict(mcmc={"samples": 4}, strategy="mt_ei"), "needs a rule that samples g\\*"),
    (dict(mcmc={"samples": 4}, batch={"size": 4}), "needs batch.size = 1"),
    (dict(mcmc={"samples": 4, "warmup": 0}), "mcmc.warmup and mcmc.max_doublings must be >= 1"),
])
def test_bad_hmc_settings_are_named(changes, message):
    with pytest.raises(ValueError, match=message):
        with_(FAST, **changes)


def test_gstar_under_samples_shares_one_grid_out_over_the_samples(fitted):
    # each hyper-parameter sample fits its own g* on 1/S of the default grid (so S
    # samples cost one grid's worth of Gumbel bisection): the stage must equal S separate
    # samplers with that grid and the same keys, and an explicit gstar.grid wins
    from mumbo_jax.acquisition import maxvalue
    from mumbo_jax.bo import optimize, stages
    from mumbo_jax import BOSettings

    post, singles = _stacked(fitted, n=4)
    spec = fitted[0]
    task = make_task(spec, posterior.target_fidelity(0), optimize.discrete_fidelities([10.0, 1.0]))
    settings = BOSettings(mcmc={"samples": 4})
    full = maxvalue.default_grid_size(spec.dim, "gumbel")
    assert stages.gstar_grid_size(settings, task) == full // 4
    assert stages.gstar_grid_size(BOSettings(), task) == full
    assert stages.gstar_grid_size(BOSettings(mcmc={"samples": 4}, gstar={"grid": 999}), task) == 999
    key = jax.random.PRNGKey(3)
    got = np.asarray(stages.gstar_stage(settings, task, post, key))
    keys = jax.random.split(key, 4)
    ref = np.stack([np.asarray(maxvalue.sample_gstar(k, p, task.target, settings.gstar.samples, "gumbel", full // 4))
                    for k, p in zip(keys, singles)])
    assert got.shape == (4, settings.gstar.samples)
    np.testing.assert_allclose(got, ref, rtol=1e-9)
