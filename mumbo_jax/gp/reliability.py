"""Is the cheap data helping? The multi-fidelity model against a target-only model.

A multi-fidelity model (the ICM over X x Z) borrows strength from cheap fidelities. Where
a cheap source is biased, noisy or informative only in part of the box, it can predict
the target worse than the target's own data would. This module measures that from data
a run already has: the target's own observations, each left out in turn (closed-form
leave-one-out, Rasmussen & Williams eq. 5.10-5.12), predicted by

* the multi-fidelity model (every other row, cheap ones included), and
* the target-only model: the same kernel and hyper-parameters conditioned on the target
  rows alone (:func:`target_only`).

:func:`loo_advantage` is the difference of their summed log predictive densities;
:func:`better_model` the posterior of whichever predicts the target better. The robust
decision rule (:mod:`mumbo_jax.bo.robust`) and the robust recommendation
(:func:`mumbo_jax.bo.incumbent.recommend`, rule ``"robust"``) read them.

Single-fidelity targets (g = f(., z0)); a stacked posterior (hyper-parameter samples) is
judged by its first sample (the MAP).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from mumbo_jax.gp import marginal, posterior

__all__ = ["target_rows", "target_only", "loo_advantage", "better_model"]


def target_rows(post: posterior.Posterior, target: posterior.Target) -> jax.Array:
    """``[n]`` bool: buffer rows observed at the target's (first) fidelity, padding
    excluded."""
    post = marginal.first(post)
    zt = posterior.internal_target(post, target)[0]
    return (post.mask > 0) & (jnp.abs(post.z - zt) < 1e-9)


def target_only(post: posterior.Posterior, target: posterior.Target) -> posterior.Posterior:
    """The target-only model: ``post``'s kernel, hyper-parameters and scaling
    conditioned on the rows observed at the target fidelity alone."""
    post = marginal.first(post)
    return posterior.recondition(post, target_rows(post, target))


def loo_advantage(post: posterior.Posterior, target: posterior.Target, sf=None) -> jax.Array:
    """Scalar: the summed leave-one-out log predictive density of the target's
    observations under the multi-fidelity model minus the same under
    :func:`target_only` (standardised units). >= 0: the cheap data help predict the
    target; < 0: they mislead. 0 while no row is at the target; -inf if either model's
    densities are not finite (a broken comparison never trusts the cheap data). ``sf``:
    :func:`target_only`'s posterior when the caller has it already."""
    post = marginal.first(post)
    on = target_rows(post, target)
    sf = target_only(post, target) if sf is None else sf
    diff = posterior.loo_log_density(post) - posterior.loo_log_density(sf)
    total = jnp.sum(jnp.where(on, diff, 0.0))
    return jnp.where(jnp.isfinite(total), total, -jnp.inf)


def better_model(post: posterior.Posterior, target: posterior.Target):
    """``(model, multi_fidelity, target_only_model)``: the posterior that predicts the
    target's own observations better (the multi-fidelity one on a tie), whether it is
    the multi-fidelity one (a traced bool), and :func:`target_only`'s posterior. Both
    share buffers and shapes, so the choice is an elementwise select and stays
    traceable."""
    post = marginal.first(post)
    sf = target_only(post, target)
    use_mf = loo_advantage(post, target, sf) >= 0.0
    return jax.tree_util.tree_map(lambda a, b: jnp.where(use_mf, a, b), post, sf), use_mf, sf
