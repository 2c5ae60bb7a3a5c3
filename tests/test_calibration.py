"""The recommendation's interval: leave-one-out z-scores in closed form
against conditioning without the row, and the widening they give."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.bo import incumbent
from mumbo_jax.bo.settings import BOSettings
from mumbo_jax.gp import models, moments, posterior


def calibration_data(n=24, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 2))
    z = rng.integers(0, 2, n)
    y = np.sin(5 * x[:, 0]) + x[:, 1] ** 2 - 0.4 * z * x[:, 0]
    return x, z, y


def _posterior(x, z, y, pad=8, ls=(-1.0, -0.5)):
    spec = models.icm_model([(0.0, 1.0)] * 2, 2)
    params = dict(models.default_params(spec))
    params["log_ls"] = jnp.asarray(ls)
    n = len(y)
    mask = np.r_[np.ones(n), np.zeros(pad)]
    xb, zb, yb = np.r_[x, np.full((pad, 2), 0.5)], np.r_[z, np.zeros(pad, int)], np.r_[y, np.zeros(pad)]
    post = posterior.condition(spec, params, jnp.asarray(xb), jnp.asarray(zb), jnp.asarray(yb), jnp.asarray(mask))
    return spec, params, post


def test_loo_zscores_match_conditioning_without_the_row():
    x, z, y = calibration_data()
    spec, params, post = _posterior(x, z, y)
    got = np.asarray(posterior.loo_zscores(post))
    s2 = float(post.scaling.y_scale) ** 2
    noise = np.asarray(post.noise)[np.asarray(posterior.noise_index(spec, jnp.asarray(z)))] * s2
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        p_i = posterior.condition(spec, params, jnp.asarray(x[keep]), jnp.asarray(z[keep]), jnp.asarray(y[keep]),
                                  scaling=post.scaling)
        mean, var = moments.predict(p_i, jnp.asarray(x[i:i + 1]), jnp.asarray(z[i:i + 1]))
        ref = (y[i] - float(mean[0])) / np.sqrt(float(var[0]) + noise[i])
        np.testing.assert_allclose(got[i], ref, rtol=1e-6, atol=1e-8)
    assert np.all(got[len(y):] == 0.0)  # padding


def test_interval_scale_is_the_rms_of_the_target_rows_and_never_below_one():
    x, z, y = calibration_data(seed=1)
    target = posterior.target_fidelity(0)
    # lengthscales far too long: the model is overconfident, its left-out rows miss
    _, _, post = _posterior(x, z, y, ls=(1.5, 1.5))
    zs = np.asarray(posterior.loo_zscores(post))[: len(y)]
    rms = np.sqrt(np.mean(zs[z == 0] ** 2))
    assert rms > 1.0
    np.testing.assert_allclose(float(incumbent.interval_scale(post, target)), rms, rtol=1e-10)
    # no row at the target: no evidence, no widening
    _, _, post1 = _posterior(x, np.ones_like(z), y, ls=(1.5, 1.5))
    assert float(incumbent.interval_scale(post1, target)) == 1.0


def test_recommend_widens_the_sd_by_the_scale():
    x, z, y = calibration_data(seed=2)
    target = posterior.target_fidelity(0)
    _, _, post = _posterior(x, z, y, ls=(1.5, 1.5))
    bounds = jnp.asarray([(0.0, 1.0)] * 2)
    rows = posterior.evaluated_inputs(post)
    x0, m0, s0 = incumbent.recommend(post, target, bounds, "mean", rows)
    x1, m1, s1 = incumbent.recommend(post, target, bounds, "mean", rows, calibrate=True)
    np.testing.assert_array_equal(np.asarray(x0), np.asarray(x1))
    assert float(m0) == float(m1)
    np.testing.assert_allclose(float(s1), float(s0) * float(incumbent.interval_scale(post, target)), rtol=1e-12)
    assert float(s1) > float(s0)


def test_a_bad_interval_calibration_is_an_error():
    with pytest.raises(ValueError, match="unknown recommendation.calibration 'bootstrap'"):
        BOSettings(recommendation={"calibration": "bootstrap"})


def _recommend_case(seed):
    """A fitted-looking posterior on 20 points and what the recommendation rules take."""
    x, z, y = calibration_data(n=20, seed=seed)
    _, _, post = _posterior(x, z, y)
    return x, z, posterior.target_fidelity(0), post, jnp.asarray([(0.0, 1.0)] * 2), posterior.evaluated_inputs(post)


@pytest.mark.parametrize("seed", [0, 3])
def test_global_safe_takes_the_maximiser_only_when_the_model_is_sure(seed, monkeypatch):
    """"global_safe" is "global"'s x where mean(g(x_g) - g(x_e)) > SAFE_SD sd (joint
    posterior, sd widened by interval_scale), else "mean"'s evaluated x; with the margin
    at -inf / +inf it is exactly those rules."""
    x, z, target, post, bounds, rows = _recommend_case(seed)
    xg, *_ = incumbent.recommend(post, target, bounds, "global", rows)
    xe, *_ = incumbent.recommend(post, target, bounds, "mean", rows)
    xs, *_ = incumbent.recommend(post, target, bounds, "global_safe", rows)
    mu, cov = moments.target_joint(post, jnp.stack([xg, xe]), target)
    sd = np.sqrt(max(float(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]), 0.0)) * float(incumbent.interval_scale(post, target))
    sure = float(mu[0] - mu[1]) > incumbent.SAFE_SD * sd
    np.testing.assert_allclose(np.asarray(xs), np.asarray(xg if sure else xe), rtol=0, atol=1e-12)
    for margin, ref in ((-np.inf, xg), (np.inf, xe)):
        monkeypatch.setattr(incumbent, "SAFE_SD", margin)
        got, *_ = incumbent.recommend(post, target, bounds, "global_safe", rows)
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 3])
def test_global_guard_falls_back_to_a_measured_target_point(seed, monkeypatch):
    """"global_guard" is "global"'s x where mu_g - SAFE_SD sd_g there (sd widened by
    interval_scale) beats the mean at "target"'s x, an x evaluated AT the target; else
    that x. With the margin at +inf it is "target"'s x, at -inf "global"'s."""
    x, z, target, post, bounds, rows = _recommend_case(seed)
    xg, *_ = incumbent.recommend(post, target, bounds, "global", rows)
    xt, mt, _ = incumbent.recommend(post, target, bounds, "target", rows)
    assert any(np.allclose(np.asarray(xt), x[i]) for i in range(len(z)) if z[i] == 0)  # measured at the target
    xs, *_ = incumbent.recommend(post, target, bounds, "global_guard", rows)
    mu, var = moments.target_moments(post, xg[None], target)
    lower = float(mu[0]) - incumbent.SAFE_SD * np.sqrt(float(var[0])) * float(incumbent.interval_scale(post, target))
    np.testing.assert_allclose(np.asarray(xs), np.asarray(xg if lower > float(mt) else xt), rtol=0, atol=1e-12)
    for margin, ref in ((-np.inf, xg), (np.inf, xt)):
        monkeypatch.setattr(incumbent, "SAFE_SD", margin)
        got, *_ = incumbent.recommend(post, target, bounds, "global_guard", rows)
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=0, atol=1e-12)
