"""The incumbent: the evaluated x the run recommends, by a rule on the posterior of g.

The BO layer's incumbent: both loops record it after every fit, and the
target-protecting rule (:func:`mumbo_jax.bo.strategies.protect_target`) checks it.

Rules (``BOSettings.incumbent_rule``; issue 13, ``"mean"`` is the default):

* ``"mean"``: the best posterior mean of g over the evaluated x (the paper's protocol;
  :func:`mumbo_jax.gp.posterior.incumbent`, also EI's and MT-EI's threshold eta);
* ``"target"``: the best posterior mean among the x evaluated AT the target fidelity
  (every evaluated x while none is), so the recommendation is never a value the model
  only extrapolates from cheap data;
* ``"lcb"``: the best lower confidence bound ``mu_g - 2 sd_g``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from mumbo_jax.gp import posterior

__all__ = ["INCUMBENT_RULES", "LCB_SD", "evaluated_inputs", "at_target", "incumbent", "best_inputs"]

INCUMBENT_RULES = ("mean", "target", "lcb")
LCB_SD = 2.0  # the lcb rule's width in posterior sd


def evaluated_inputs(post: posterior.Posterior):
    """``[n, d]`` evaluated inputs in box units: :func:`mumbo_jax.gp.posterior.evaluated_inputs`."""
    return posterior.evaluated_inputs(post)


def at_target(post: posterior.Posterior, target: posterior.Target):
    """``[n]`` bool: buffer rows observed at the target's (first) fidelity, padding
    excluded."""
    zt = posterior.internal_target(post, target)[0]
    return (post.mask > 0) & (jnp.abs(post.z - zt) < 1e-9)


def incumbent(post: posterior.Posterior, target: posterior.Target, rule: str = "mean"):
    """``(index, value)``: the buffer row of the evaluated x chosen by ``rule`` (padding
    excluded by the mask) and the posterior mean of g there (units of y).

    Index the drivers' own buffers with ``index`` to get the evaluated x exactly."""
    if rule not in INCUMBENT_RULES:
        raise ValueError(f"unknown incumbent rule {rule!r}; allowed: {INCUMBENT_RULES}")
    if rule == "mean":
        return posterior.incumbent(post, target)
    mu, var = posterior.target_moments(post, evaluated_inputs(post), target)
    valid = post.mask > 0
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
    The maximiser's anchors for its local candidates (``BOSettings.local_frac``)."""
    x = evaluated_inputs(post)
    mu, _ = posterior.target_moments(post, x, target)
    score = jnp.where(post.mask > 0, mu, -jnp.inf)
    top, idx = jax.lax.top_k(score, k)
    idx = jnp.where(jnp.isfinite(top), idx, idx[0])
    return x[idx]
