"""The incumbent: the evaluated x the run recommends, by a rule on the posterior of g.

The BO layer's incumbent: both loops record it after every fit.

Rules (``BOSettings.recommendation.rule``; ``"robust"`` is the default, ``"global"`` the paper configs'):

* ``"mean"``: the best posterior mean of g over the evaluated x (the paper's protocol;
  :func:`mumbo_jax.gp.moments.incumbent`, also EI's and MT-EI's threshold eta);
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
  beats the better model's mean at the best x measured AT the target (and the target
  has at least :func:`jump_min_target` observations), else that measured x. The best
  measured x is the one with the best observed value, unless both models are sure
  (:data:`SAFE_SD` sd of the difference) that the x with the best posterior mean is
  better: a model's mean need not keep the order of noiseless observations. The mean
  and interval are the better model's; calibrated, the interval at a measured x is
  widened, where needed, to reach the value observed there (plus :data:`Z95` noise
  sd). It can still be worse than a measured target point (where both
  models are wrong, or the observations are noisy; docs/RESULTS.md gives how often);
  single-fidelity targets.
* ``"global_guard"``: ``"global"``'s maximiser only where its lower bound
  ``mu_g - SAFE_SD sd_g`` (sd widened by :func:`interval_scale`) clears the posterior mean
  at ``"target"``'s x, an x evaluated AT the target; else that x. The fallback is a
  measured target value, never one extrapolated from cheap data, so without noise the
  recommendation can rise only by a jump the model was sure of.

Each rule is an :class:`IncumbentRule` record in :data:`INCUMBENT_RULES` (name -> record,
in registration order): ``row(post, target) -> (index, mean)`` names a buffer row (for
the global rules, the evaluated x that the box search starts from and falls back to),
and ``recommend`` (None for the row rules) gives the recommended x itself. :func:`register`
adds a rule at run time; the settings' check, the config schema's choices and
``mumbo-jax list`` read the table, so a registered rule is accepted everywhere at once.
:func:`incumbent_by_rule` and :func:`recommend` look a rule up by name.

Every rule also takes a stacked posterior (hyper-parameter samples,
:mod:`mumbo_jax.gp.marginal`): the means and variances of g are then the mixture's.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import jax
import jax.numpy as jnp

from mumbo_jax.bo import optimize
from mumbo_jax.registry import Names, Registry, check_name
from mumbo_jax.gp import marginal, moments, posterior, reliability

__all__ = ["IncumbentRule", "INCUMBENT_RULES", "GLOBAL_RULES", "register", "unregister", "check_incumbent_rule",
           "LCB_SD", "GLOBAL_SEARCH", "N_ANCHORS", "at_target", "incumbent_by_rule", "best_inputs",
           "interval_scale", "recommend", "SAFE_SD", "ROBUST_SD", "jump_min_target", "Z95"]

LCB_SD = 2.0  # the lcb rule's width in posterior sd
SAFE_SD = 2.0  # "global_safe": the margin, in sd of the difference, the maximiser must clear
# "robust": the global maximiser's lower bound mu - ROBUST_SD sd (under both models) must clear
# the measured best. At 1 sd, 7 of 29 jumps on five development problems (6 seeds) ended worse
# than the best measured point beyond their interval and none changed a final median; at 2 sd
# there were none (data/recommendation_audit)
ROBUST_SD = 2.0


def jump_min_target(dim: int) -> int:
    """``"robust"``: the target observations a jump away from the measured best needs,
    ``2 (d + 1)``. With fewer, the fitted length-scales and amplitude rest on a handful of
    noiseless points, and neither model's leave-one-out check has the rows to reveal that
    its interval is too narrow: on negated Currin (4 target points in the design) both
    models were sure, at sd 0.5, of a corner 12 below the measured best (the uncapped
    study's only misses of the recommendation's target, all in the first three steps)."""
    return 2 * (int(dim) + 1)
Z95 = 1.959963984540054  # the 95 % two-sided normal quantile: the shown interval is mean +- Z95 sd
# the "global" rule's search for the maximiser of the posterior mean of g: candidates,
# polished starts, Adam steps, step size, share of candidates around the 4 best evaluated x
GLOBAL_SEARCH = dict(n_candidates=1000, n_starts=8, n_steps=40, learning_rate=0.03, boundary_frac=0.0,
                     local_frac=0.5)
N_ANCHORS = 4  # the best evaluated x that local candidates surround (maximiser and global search)


@dataclasses.dataclass(frozen=True)
class IncumbentRule:
    """One recommendation rule (``BOSettings.incumbent_rule``).

    Attributes:
        name: snake_case, the one spelling in settings and configs.
        row: ``row(post, target) -> (index, mean)``: the buffer row of the evaluated x the
            rule names (padding excluded by the mask) and the posterior mean of g there
            (units of y). Traceable.
        recommend: ``recommend(post, target, bounds [d, 2], rows_x [n, d], calibrate) ->
            (x [d], mean, sd)``, the recommended x (which need not have been evaluated)
            with the model's mean and sd of g there, the sd widened by
            :func:`interval_scale` where ``calibrate``. None (a row rule): ``rows_x`` at
            ``row``'s index with the model's mean and sd there. Traceable.
        summary: one line for ``mumbo-jax list``.
    """

    name: str
    row: Callable
    recommend: Callable | None = None
    summary: str = ""

    def __post_init__(self):
        check_name(self.name, "incumbent rule")
        if not callable(self.row) or not (self.recommend is None or callable(self.recommend)):
            raise ValueError(f"incumbent rule {self.name!r}: row (and recommend, if given) must be callable")


def at_target(post: posterior.Posterior, target: posterior.Target):
    """``[n]`` bool: buffer rows observed at the target's (first) fidelity, padding
    excluded."""
    return reliability.target_rows(post, target)


def _best_row(post, target, only_target: bool = False, width: float = 0.0):
    """``(index, mean)``: the evaluated row with the best ``mu_g - width sd_g``, among
    the rows observed at the target when ``only_target`` (every row while none is)."""
    mu, var = marginal.target_moments(post, posterior.evaluated_inputs(post), target)
    valid = marginal.first(post).mask > 0
    score = mu
    if only_target:
        on = at_target(post, target)
        valid = jnp.where(jnp.any(on), on, valid)
    elif width:
        score = mu - width * jnp.sqrt(jnp.maximum(var, 0.0))
    i = jnp.argmax(jnp.where(valid, score, -jnp.inf))
    return i, mu[i]


def _row_mean(post, target):
    """The best posterior mean of g over the evaluated x (:func:`mumbo_jax.gp.moments.incumbent`
    on a single posterior: EI's threshold)."""
    if not marginal.is_stacked(post):
        return moments.incumbent(post, target)
    return _best_row(post, target)


def _row_target(post, target):
    """The best posterior mean among the x evaluated at the target (all x while none is)."""
    return _best_row(post, target, only_target=True)


def _row_lcb(post, target):
    """The best lower confidence bound ``mu_g - LCB_SD sd_g`` over the evaluated x."""
    return _best_row(post, target, width=LCB_SD)


def incumbent_by_rule(post: posterior.Posterior, target: posterior.Target, rule: str = "mean"):
    """``(index, value)``: the buffer row of the evaluated x chosen by ``rule`` (its
    record's ``row``; padding excluded by the mask) and the posterior mean of g there
    (units of y). Rule ``"mean"`` on a single posterior is
    :func:`mumbo_jax.gp.moments.incumbent` (EI's threshold).

    Index the drivers' own buffers with ``index`` to get the evaluated x exactly."""
    return check_incumbent_rule(rule).row(post, target)


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
    record = check_incumbent_rule(rule)
    if record.recommend is not None:
        return record.recommend(post, target, bounds, rows_x, calibrate)
    return _recommend_row(post, target, bounds, rows_x, calibrate, row=record.row)


def _moments_at(post, target, x, scale, calibrate):
    mu, var = marginal.target_moments(post, x[None], target)
    sd = jnp.sqrt(jnp.maximum(var[0], 0.0))
    if calibrate:
        sd = sd * scale
    return x, mu[0], sd


def _recommend_row(post, target, bounds, rows_x, calibrate, *, row):
    """A row rule's recommendation: the evaluated x at ``row``'s index."""
    i, _ = row(post, target)
    x = rows_x[i]
    # the leave-one-out widening, O(n^2): once, and only where the interval uses it
    scale = interval_scale(post, target) if calibrate else 1.0
    return _moments_at(post, target, x, scale, calibrate)


def _safe(post, target, found_x, x, score_x, scale):
    """``"global_safe"``: the maximiser beats ``x`` by SAFE_SD sd of the difference."""
    mu2, cov2 = marginal.target_joint(post, jnp.stack([found_x, x]), target)
    var_diff = jnp.maximum(cov2[0, 0] + cov2[1, 1] - 2.0 * cov2[0, 1], 0.0)
    sd_diff = jnp.sqrt(var_diff) * scale
    return mu2[0] - mu2[1] > SAFE_SD * sd_diff


def _guarded(post, target, found_x, x, score_x, scale):
    """``"global_guard"``: the maximiser's lower bound ``mu - SAFE_SD sd`` clears ``x``'s mean."""
    mu_f, var_f = marginal.target_moments(post, found_x[None], target)
    sd_f = jnp.sqrt(jnp.maximum(var_f[0], 0.0)) * scale
    return mu_f[0] - SAFE_SD * sd_f > score_x


def _recommend_global(post, target, bounds, rows_x, calibrate, *, row, width=0.0, guard=None):
    """A global rule's recommendation: the maximiser of ``mu_g - width sd_g`` over the box
    where it beats the score at ``row``'s evaluated x (and ``guard(post, target, x_found,
    x_row, score_row, scale)`` holds), else that evaluated x."""
    i, _ = row(post, target)
    x = rows_x[i]
    # the leave-one-out widening, O(n^2): once, and only where a guard or the interval uses it
    scale = interval_scale(post, target) if calibrate or guard is not None else 1.0
    score = jax.tree_util.Partial(_score_of_g, post, target, width)
    anchors = best_inputs(post, target, N_ANCHORS)
    found = optimize.maximise(jax.random.PRNGKey(0), score, bounds, optimize.discrete_fidelities([1.0]),
                              anchors=anchors, **GLOBAL_SEARCH)
    score_x = score(x[None], None)[0]
    better = found.alpha > score_x  # never below the best row
    if guard is not None:
        better = better & guard(post, target, found.x, x, score_x, scale)
    x = jnp.where(better, found.x, x)
    return _moments_at(post, target, x, scale, calibrate)


def _measured_best_row(model, sf, target, scale, scale_sf):
    """``(index, mean)``: the row measured AT the target with the best observed value,
    or the one with the best posterior mean under ``model`` where ``model`` and the
    target-only ``sf`` are both sure it is better (their means differ by more than
    :data:`SAFE_SD` sd of the difference, each sd widened by its ``scale``). A model
    that smooths noiseless target values (an ICM bent by a misleading cheap source)
    reorders them; the observation stands unless the data say otherwise."""
    on = at_target(model, target)
    valid = jnp.where(jnp.any(on), on, model.mask > 0)
    i_obs = jnp.argmax(jnp.where(valid, model.y, -jnp.inf))
    i_mean, _ = _best_row(model, target, only_target=True)
    x = posterior.evaluated_inputs(model)
    # "global_safe"'s test of one x against another, under each model
    sure = _safe(model, target, x[i_mean], x[i_obs], None, scale) & _safe(sf, target, x[i_mean], x[i_obs], None,
                                                                          scale_sf)
    i = jnp.where(sure, i_mean, i_obs)
    mu, _ = moments.target_moments(model, x[i][None], target)
    return i, mu[0]


def _recommend_robust(post, target, bounds, rows_x, calibrate):
    """The ``"robust"`` rule of :func:`recommend` (see the module docstring)."""
    model, _, sf = reliability.better_model(post, target)
    scale, scale_sf = interval_scale(model, target), interval_scale(sf, target)
    i, best = _measured_best_row(model, sf, target, scale, scale_sf)
    x = rows_x[i]
    score = jax.tree_util.Partial(_score_of_g, model, target, 0.0)
    found = optimize.maximise(jax.random.PRNGKey(0), score, bounds, optimize.discrete_fidelities([1.0]),
                              anchors=best_inputs(model, target, N_ANCHORS), **GLOBAL_SEARCH)
    def lower_bound(m, widen):
        mu_f, var_f = moments.target_moments(m, found.x[None], target)
        return mu_f[0] - ROBUST_SD * jnp.sqrt(jnp.maximum(var_f[0], 0.0)) * widen

    # both models must be sure: an ICM that fits a cheap source as decisive can be
    # confidently wrong where the target was never measured, as its own LOO may not show
    sure = (lower_bound(model, scale) > best) & (lower_bound(sf, scale_sf) > best)
    sure = sure & (jnp.sum(at_target(model, target)) >= jump_min_target(bounds.shape[0]))
    x = jnp.where(sure, found.x, x)
    mu, var = moments.target_moments(model, x[None], target)
    sd = jnp.sqrt(jnp.maximum(var[0], 0.0))
    if not calibrate:
        return x, mu[0], sd
    # at a measured x the interval also reaches the value observed there (with its noise):
    # a model bent by a misleading source can be sure of a mean its own observation refutes
    y_obs = model.y[i] * model.scaling.y_scale + model.scaling.y_mean
    noise = model.noise[posterior.noise_index(model.spec, model.z[i].astype(jnp.int32))]
    noise_sd = jnp.sqrt(noise) * model.scaling.y_scale
    reach = (jnp.abs(y_obs - mu[0]) + Z95 * noise_sd) / Z95
    return x, mu[0], jnp.where(sure, sd * scale, jnp.maximum(sd * scale, reach))


# --------------------------------------------------------------------------- the table

INCUMBENT_RULES: Registry = Registry("incumbent rule", IncumbentRule, (
    IncumbentRule("mean", _row_mean, summary="the evaluated x with the best posterior mean of g (the paper's)"),
    IncumbentRule("target", _row_target, summary="the best mean among the x evaluated at the target"),
    IncumbentRule("lcb", _row_lcb, summary="the evaluated x with the best mu_g - 2 sd_g"),
    IncumbentRule("global", _row_mean, functools.partial(_recommend_global, row=_row_mean),
                  summary="the maximiser of the posterior mean of g over the box"),
    IncumbentRule("global_lcb", _row_lcb, functools.partial(_recommend_global, row=_row_lcb, width=LCB_SD),
                  summary="the maximiser of mu_g - 2 sd_g over the box"),
    IncumbentRule("global_safe", _row_mean, functools.partial(_recommend_global, row=_row_mean, guard=_safe),
                  summary="global's maximiser where the model is sure it beats mean's x, else that x"),
    IncumbentRule("global_guard", _row_target, functools.partial(_recommend_global, row=_row_target, guard=_guarded),
                  summary="global's maximiser where its lower bound beats target's x, else that x"),
    IncumbentRule("robust", _row_target, _recommend_robust,
                  summary="global's maximiser where the better model and the target-only one are sure "
                          "(the default)"),
))
"""name -> :class:`IncumbentRule`, in registration order (the built-in rules first)."""

GLOBAL_RULES = Names(INCUMBENT_RULES, lambda r: r.recommend is not None,
                     "rules whose recommendation searches the box (it need not have been evaluated)")


def register(rule: IncumbentRule) -> IncumbentRule:
    """Add a recommendation rule to :data:`INCUMBENT_RULES` and return it: settings,
    configs (``incumbent_rule = "<name>"``), the config schema and ``mumbo-jax list``
    accept it at once. The same record again is a no-op; another record under a taken
    name is a ValueError."""
    return INCUMBENT_RULES.register(rule)


def unregister(name: str) -> IncumbentRule:
    """Remove a registered recommendation rule (not a built-in one) and return it."""
    return INCUMBENT_RULES.unregister(name)


def check_incumbent_rule(name: str) -> IncumbentRule:
    """The record called ``name``; ValueError ``unknown incumbent_rule ...`` listing the
    allowed names if there is none."""
    return INCUMBENT_RULES.lookup(name, "incumbent_rule")
