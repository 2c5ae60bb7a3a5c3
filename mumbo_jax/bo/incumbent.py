"""The incumbent: the evaluated x the run recommends, by a rule on the posterior of g.

The BO layer's incumbent: both loops record it after every fit.

Rules (``BOSettings.recommendation.rule``; ``"robust"`` is the default, ``"global"`` the paper configs'):

* ``"mean"``: the best posterior mean of g over the evaluated x (the paper's protocol;
  :func:`mumbo_jax.gp.posterior.incumbent`, also EI's and MT-EI's threshold eta);
* ``"target"``: the best posterior mean among the x evaluated AT the target fidelity
  (every evaluated x while none is), so the recommendation is never a value the model
  only extrapolates from cheap data;
* ``"lcb"``: the best lower confidence bound ``mu_g - 2 sd_g``;
* ``"global"``: the maximiser of the posterior mean of g over the whole box (found by
  :func:`mumbo_jax.bo.optimize.maximise` from random candidates and candidates around the
  best evaluated x; the best evaluated x where that is no better): the model's believed
  optimum, which need not have been evaluated. BoTorch's multi-fidelity tutorials
  recommend this way; it uses what a rule learned from exploring cheap fidelities, where
  the evaluated x of an exploring rule (MUMBO) lag behind;
* ``"global_lcb"``: the same search for the maximiser of the lower bound
  ``mu_g - 2 sd_g`` over the box (evaluated x included): the believed optimum once the
  model is sure of it, an evaluated x while it is not (early in a run the mean's
  maximiser is an extrapolation, and ``"global"``'s recommendation then jumps about).
* ``"global_safe"``: ``"global"``'s maximiser only where the model is sure it beats the
  best evaluated x (``"mean"``'s): the posterior mean of g(x_global) - g(x_mean) above
  :data:`SAFE_SD` sd of that difference (joint posterior, the sd widened by
  :func:`interval_scale`); else the evaluated x. Meant to keep the global rule's gains
  late in a run without its early jumps to an extrapolated optimum.
* ``"robust"``: the model that predicts the target's own observations better, left out
  in turn (:func:`mumbo_jax.gp.reliability.better_model`: the multi-fidelity model, or
  the target-only one where the cheap data mislead), decides: its maximiser of the
  posterior mean of g over the box where the lower bound ``mu_g - ROBUST_SD sd_g`` (sd
  widened by :func:`interval_scale`) under that model AND under the target-only model
  beats the better model's mean at the best x measured AT the target, else that
  measured x; the mean and interval are the better model's. Never silently worse than
  a measured target point; single-fidelity targets.
* ``"global_guard"``: ``"global"``'s maximiser only where its lower bound
  ``mu_g - SAFE_SD sd_g`` (sd widened by :func:`interval_scale`) clears the posterior mean
  at ``"target"``'s x, an x evaluated AT the target; else that x. The fallback is a
  measured target value, never one extrapolated from cheap data, so without noise the
  recommendation can rise only by a jump the model was sure of.

:func:`incumbent_by_rule` names a buffer row (for the row rules; ``"global"`` names the best
evaluated row, its starting point); :func:`recommend` gives the recommended x itself
with the model's mean and sd of g there.

Every rule also takes a stacked posterior (hyper-parameter samples,
:mod:`mumbo_jax.gp.marginal`): the means and variances of g are then the mixture's.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from mumbo_jax.bo import optimize
from mumbo_jax.gp import marginal, posterior, reliability

__all__ = ["INCUMBENT_RULES", "GLOBAL_RULES", "LCB_SD", "GLOBAL_SEARCH", "N_ANCHORS", "at_target", "incumbent_by_rule", "best_inputs",
           "interval_scale", "recommend", "SAFE_SD", "ROBUST_SD"]

INCUMBENT_RULES = ("mean", "target", "lcb", "global", "global_lcb", "global_safe", "global_guard", "robust")
GLOBAL_RULES = ("global", "global_lcb", "global_safe", "global_guard", "robust")
LCB_SD = 2.0  # the lcb rule's width in posterior sd
SAFE_SD = 2.0  # "global_safe": the margin, in sd of the difference, the maximiser must clear
ROBUST_SD = 1.0  # "robust": the global maximiser's lower bound mu - ROBUST_SD sd must clear the measured best
# the "global" rule's search for the maximiser of the posterior mean of g: candidates,
# polished starts, Adam steps, step size, share of candidates around the 4 best evaluated x
GLOBAL_SEARCH = dict(n_candidates=1000, n_starts=8, n_steps=40, learning_rate=0.03, boundary_frac=0.0,
                     local_frac=0.5)
N_ANCHORS = 4  # the best evaluated x that local candidates surround (maximiser and global search)


def at_target(post: posterior.Posterior, target: posterior.Target):
    """``[n]`` bool: buffer rows observed at the target's (first) fidelity, padding
    excluded."""
    return reliability.target_rows(post, target)


def incumbent_by_rule(post: posterior.Posterior, target: posterior.Target, rule: str = "mean"):
    """``(index, value)``: the buffer row of the evaluated x chosen by ``rule`` (padding
    excluded by the mask) and the posterior mean of g there (units of y). Rule ``"mean"``
    on a single posterior is :func:`mumbo_jax.gp.posterior.incumbent` (EI's threshold).

    Index the drivers' own buffers with ``index`` to get the evaluated x exactly."""
    if rule not in INCUMBENT_RULES:
        raise ValueError(f"unknown incumbent rule {rule!r}; allowed: {INCUMBENT_RULES}")
    if rule == "global_lcb":
        rule = "lcb"
    if rule in ("global_guard", "robust"):
        rule = "target"
    if rule in ("mean", "global", "global_safe") and not marginal.is_stacked(post):
        return posterior.incumbent(post, target)
    mu, var = marginal.target_moments(post, posterior.evaluated_inputs(post), target)
    valid = marginal.first(post).mask > 0
    score = mu
    if rule == "target":
        on = at_target(post, target)
        valid = jnp.where(jnp.any(on), on, valid)
    elif rule == "lcb":
        score = mu - LCB_SD * jnp.sqrt(jnp.maximum(var, 0.0))
    i = jnp.argmax(jnp.where(valid, score, -jnp.inf))
    return i, mu[i]


def best_inputs(post: posterior.Posterior, target: posterior.Target, k: int):
    """``[k, d]`` the evaluated x with the k best posterior means of g, best first (box
    units; padding excluded; while fewer than k rows are observed the best repeats).
    The maximiser's anchors for its local candidates (``BOSettings.maximiser.local_frac``)."""
    x = posterior.evaluated_inputs(post)
    mu, _ = marginal.target_moments(post, x, target)
    score = jnp.where(marginal.first(post).mask > 0, mu, -jnp.inf)
    top, idx = jax.lax.top_k(score, k)
    idx = jnp.where(jnp.isfinite(top), idx, idx[0])
    return x[idx]


def _score_of_g(post, target, width, x, z):
    """``mu_g - width sd_g`` at ``x [M, d]`` (``z`` ignored): the global rules' score."""
    mu, var = marginal.target_moments(post, x, target)
    return mu - width * jnp.sqrt(jnp.maximum(var, 1e-300))  # the floor keeps the gradient finite


def interval_scale(post: posterior.Posterior, target: posterior.Target) -> jax.Array:
    """The factor (>= 1) that widens the model's sd of g at a recommendation: the root
    mean square of the leave-one-out z-scores (:func:`mumbo_jax.gp.posterior.loo_zscores`)
    of the rows observed at the target, 1 while none is (or where they are no worse than
    calibrated). An ICM that fits cheap fidelities as nearly decisive about the target
    predicts its own target observations, left out, many sd off (the ablation: the truth at
    the recommendation inside the 95 % interval at a fifth of the steps on Hartmann-3);
    this measures that overconfidence where it matters, from data the run already has."""
    on = at_target(post, target)
    # a stacked posterior: the samples' mean square
    z2 = jnp.where(on, marginal.mean_over_samples(lambda p: jnp.square(posterior.loo_zscores(p)), post), 0.0)
    ms = jnp.sum(z2) / jnp.maximum(jnp.sum(on), 1)
    return jnp.sqrt(jnp.maximum(ms, 1.0))


def recommend(post: posterior.Posterior, target: posterior.Target, bounds, rule: str, rows_x,
              calibrate: bool = False):
    """``(x [d], mean, sd)``: the recommended x under ``rule`` and the model's posterior
    mean and sd of g there (units of y; sd of g itself, noise excluded). ``calibrate``:
    the sd widened by :func:`interval_scale` (the interval a user is shown).

    ``rows_x [n, d]``: the driver's own buffer of evaluated x (a row rule's x is taken
    from it exactly); ``bounds [d, 2]``: the box searched by the global rules. Traceable;
    the global search uses a fixed key, so both drivers recommend the same x."""
    if rule == "robust":
        return _recommend_robust(post, target, bounds, rows_x, calibrate)
    i, _ = incumbent_by_rule(post, target, rule)
    x = rows_x[i]
    # the leave-one-out widening, O(n^2): once, and only where a rule or the interval uses it
    scale = interval_scale(post, target) if calibrate or rule in ("global_safe", "global_guard") else 1.0
    if rule in GLOBAL_RULES:
        width = LCB_SD if rule == "global_lcb" else 0.0
        score = jax.tree_util.Partial(_score_of_g, post, target, width)
        anchors = best_inputs(post, target, N_ANCHORS)
        found = optimize.maximise(jax.random.PRNGKey(0), score, bounds, optimize.discrete_fidelities([1.0]),
                                  anchors=anchors, **GLOBAL_SEARCH)
        score_x = score(x[None], None)[0]
        better = found.alpha > score_x  # never below the best row
        if rule == "global_safe":
            mu2, cov2 = marginal.target_joint(post, jnp.stack([found.x, x]), target)
            var_diff = jnp.maximum(cov2[0, 0] + cov2[1, 1] - 2.0 * cov2[0, 1], 0.0)
            sd_diff = jnp.sqrt(var_diff) * scale
            better = better & (mu2[0] - mu2[1] > SAFE_SD * sd_diff)
        if rule == "global_guard":
            mu_f, var_f = marginal.target_moments(post, found.x[None], target)
            sd_f = jnp.sqrt(jnp.maximum(var_f[0], 0.0)) * scale
            better = better & (mu_f[0] - SAFE_SD * sd_f > score_x)
        x = jnp.where(better, found.x, x)
    mu, var = marginal.target_moments(post, x[None], target)
    sd = jnp.sqrt(jnp.maximum(var[0], 0.0))
    if calibrate:
        sd = sd * scale
    return x, mu[0], sd


def _recommend_robust(post, target, bounds, rows_x, calibrate):
    """The ``"robust"`` rule of :func:`recommend` (see the module docstring)."""
    model, _, sf = reliability.better_model(post, target)
    i, best = incumbent_by_rule(model, target, "target")  # the best mean among the x measured at the target
    x = rows_x[i]
    scale = interval_scale(model, target)
    score = jax.tree_util.Partial(_score_of_g, model, target, 0.0)
    found = optimize.maximise(jax.random.PRNGKey(0), score, bounds, optimize.discrete_fidelities([1.0]),
                              anchors=best_inputs(model, target, N_ANCHORS), **GLOBAL_SEARCH)
    def lower_bound(m, widen):
        mu_f, var_f = posterior.target_moments(m, found.x[None], target)
        return mu_f[0] - ROBUST_SD * jnp.sqrt(jnp.maximum(var_f[0], 0.0)) * widen

    # both models must be sure: an ICM that fits a cheap source as decisive can be
    # confidently wrong where the target was never measured, as its own LOO may not show
    sure = (lower_bound(model, scale) > best) & (lower_bound(sf, interval_scale(sf, target)) > best)
    x = jnp.where(sure, found.x, x)
    mu, var = posterior.target_moments(model, x[None], target)
    sd = jnp.sqrt(jnp.maximum(var[0], 0.0))
    return x, mu[0], sd * scale if calibrate else sd
