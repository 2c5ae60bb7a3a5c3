"""The maximisation stage of a decision: the rule's score maximised over its space.

:func:`propose` reads the rule's record in :data:`mumbo_jax.bo.rules.RULES`, builds its
acquisition, maximises it over X x (all fidelities or the target) per unit cost with
:func:`mumbo_jax.bo.optimize.maximise`, and hands the result to the rule's second stage
if it has one. The names :data:`STRATEGIES`, :data:`USES_GSTAR`, :data:`TARGET_ONLY`,
:data:`DISCRETE_ONLY` and :data:`CONTINUOUS_ONLY` are re-exported from the table.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from mumbo_jax.bo import optimize
from mumbo_jax.bo.incumbent import N_ANCHORS, best_inputs, evaluated_inputs, incumbent
from mumbo_jax.bo.rules import (  # the names run/ and older code import from here, re-exported
    CONTINUOUS_ONLY, DISCRETE_ONLY, MTBO_POOL, STRATEGIES, TARGET_ONLY, USES_GSTAR, Context, check_rule,
    check_rule_for_task, mumbo_alpha, target_space,
)
from mumbo_jax.gp import marginal, posterior

__all__ = ["propose", "protect_target", "N_ANCHORS", "STRATEGIES", "USES_GSTAR", "TARGET_ONLY", "DISCRETE_ONLY", "CONTINUOUS_ONLY", "MTBO_POOL",
           "check_rule", "mumbo_alpha"]


def _per_unit_cost(acq, cost, x, z):
    """alpha(x, z) / c(x, z) for a cost that depends on x as well (a learned cost)."""
    return acq(x, z) / cost(x, z)


def _unit_cost(z):
    return jnp.ones(jnp.shape(z))


def propose(settings, task, post: posterior.Posterior, gstar, key, cost=None, n_design=None) -> optimize.Proposal:
    """The next evaluation under ``settings.strategy``.

    Args:
        settings: :class:`mumbo_jax.bo.settings.BOSettings` (static).
        task: :class:`mumbo_jax.bo.settings.Task`.
        post: the posterior fitted to the data so far.
        gstar: ``[N]`` samples of g* (ignored by rules without g*).
        key: PRNG key of the maximiser.
        cost: optional learned cost ``c(x [M, d], z [M]) -> [M]`` (a
            ``jax.tree_util.Partial``, e.g. :func:`mumbo_jax.gp.costmodel.cost_function`):
            the maximiser then scores ``alpha(x, z) / c(x, z)`` instead of dividing by
            the task's known ``cost(z)``. ``None`` keeps the known cost.
        n_design: scalar int, the number of initial-design rows at the start of the
            posterior's buffers. Rules with ``replays_history`` (MF-GP-UCB, BOCA) replay
            the BO evaluations after them and need it; the others ignore it.

    Returns:
        :class:`mumbo_jax.bo.optimize.Proposal`.
    """
    rule = check_rule_for_task(settings.strategy, task)
    if rule.replays_history and n_design is None:
        raise ValueError(f"strategy {rule.name!r} replays its own BO evaluations: pass n_design, the number of "
                         "initial-design rows in the posterior's data")
    ctx = Context(settings, task, post, gstar, key, n_design, cost)
    acq = rule.acquisition(ctx)
    space = target_space(task) if rule.space == "target" else task.space
    if cost is not None and rule.second_stage is None:
        acq = jax.tree_util.Partial(_per_unit_cost, acq, cost)
        space = optimize.FidelitySpace(space.n_fidelities, space.bounds, jax.tree_util.Partial(_unit_cost),
                                       space.choices)
    anchors = best_inputs(post, task.target, N_ANCHORS) if settings.local_frac > 0 else None
    first = optimize.maximise(key, acq, jnp.asarray(task.spec.bounds), space, settings.n_candidates,
                              settings.n_starts, settings.n_polish_steps, settings.learning_rate,
                              settings.boundary_frac, anchors, settings.local_frac)
    prop = first if rule.second_stage is None else rule.second_stage(ctx, first)
    if settings.protect_target and settings.strategy not in TARGET_ONLY:
        if len(task.target_z) != 1:
            raise ValueError("protect_target needs the target to be one fidelity; this target combines "
                             f"{len(task.target_z)}")
        prop = protect_target(task, post, prop, settings.incumbent_rule)
    return prop


def protect_target(task, post: posterior.Posterior, prop: optimize.Proposal, rule: str = "mean") -> optimize.Proposal:
    """The target-protecting rule (issue 13): when the evaluated x recommended by
    ``rule`` (:func:`mumbo_jax.bo.incumbent.incumbent`) has never been evaluated at the
    target fidelity, propose the target there instead of ``prop``; else ``prop``.

    The recommendation is then never a value the model only extrapolates from cheap
    data. Traceable; the replacement's ``score`` and ``alpha`` are 0 (it is not the
    acquisition's choice)."""
    i, _ = incumbent(post, task.target, rule)
    x = evaluated_inputs(post)
    post = marginal.first(post)  # the data: the same in every hyper-parameter sample
    zt = posterior.internal_target(post, task.target)[0]
    same_x = jnp.all(jnp.abs(post.x - post.x[i]) < 1e-9, axis=1)
    seen = jnp.any((post.mask > 0) & same_x & (jnp.abs(post.z - zt) < 1e-9))
    z0 = jnp.asarray(task.target_z[0]).astype(jnp.asarray(prop.z).dtype)
    protect = optimize.Proposal(x[i], z0, jnp.zeros_like(prop.score), jnp.zeros_like(prop.alpha))
    return jax.tree_util.tree_map(lambda a, b: jnp.where(seen, a, b), prop, protect)
