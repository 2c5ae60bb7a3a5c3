"""Decision rules: given a fitted posterior (and g* samples), choose the next (x, z).

A strategy is a name in :data:`STRATEGIES`; :func:`propose` dispatches on it. Every
rule shares the model, the g* sampler and the maximiser of :mod:`mumbo_jax.optimize`,
so strategies differ only in what they maximise:

* ``"mumbo"``: MUMBO's information gain about g* per unit cost, over X x Z.
* ``"mes"``: max-value entropy search at the target fidelity only.
* ``"random"``: uniform x at the target fidelity.

The ``task`` argument is a :class:`mumbo_jax.loop.Task` (model spec, target, fidelity
space); it is used by attribute only, so this module does not import the loops.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from mumbo_jax import acquisitions, optimize, posterior

STRATEGIES = ("mumbo", "mes", "random")
# strategies that use samples of g* (the others skip the sampler)
USES_GSTAR = ("mumbo", "mes")


def mumbo_alpha(post, target, gstar, x, z):
    """MUMBO's gain ``[M]`` at inputs ``x [M, d]`` and fidelities ``z [M]``."""
    m = posterior._joint_moments(post, x, z, target)
    return acquisitions.mumbo_gain(m.mu_g, m.var_g, m.mu_y, m.var_y, m.cov, gstar)


def mes_alpha(post, target, gstar, x, z):
    """MES gain ``[M]`` of observing g itself at ``x [M, d]`` (z is ignored)."""
    mu, var = posterior._target_moments(post, x, target)
    return acquisitions.mes_gain(mu, var, gstar)


def random_alpha(key, x, z):
    """i.i.d. uniform scores: the maximiser's best random candidate is a uniform draw."""
    u = jax.random.uniform(jax.random.fold_in(key, 0), x.shape[:1])
    return u + 0.0 * jnp.sum(x, axis=-1)


def target_only(task) -> optimize.FidelitySpace:
    """The task's fidelity space restricted to its target (single-fidelity strategies)."""
    space = task.space
    if space.n_fidelities is not None:
        # fidelity 0 is the target of every discrete problem in this library
        return optimize.FidelitySpace(1, None, space.cost)
    z0 = float(task.target_z[0])
    return optimize.FidelitySpace(None, (z0, z0), space.cost)


def _per_unit_cost(acq, cost, x, z):
    """alpha(x, z) / c(x, z) for a cost that depends on x as well (a learned cost)."""
    return acq(x, z) / cost(x, z)


def _unit_cost(z):
    return jnp.ones(jnp.shape(z))


def propose(settings, task, post: posterior.Posterior, gstar, key, cost=None) -> optimize.Proposal:
    """The next evaluation under ``settings.strategy``.

    Args:
        settings: :class:`mumbo_jax.loop.BOSettings` (static).
        task: :class:`mumbo_jax.loop.Task`.
        post: the posterior fitted to the data so far.
        gstar: ``[N]`` samples of g* (ignored by strategies not in :data:`USES_GSTAR`).
        key: PRNG key of the maximiser.
        cost: optional learned cost ``c(x [M, d], z [M]) -> [M]`` (a
            ``jax.tree_util.Partial``, e.g. :func:`mumbo_jax.costmodel.cost_function`):
            the maximiser then scores ``alpha(x, z) / c(x, z)`` instead of dividing by
            the task's known ``cost(z)`` (the proposal's ``score`` and ``alpha`` are both
            per unit of the learned cost). ``None`` keeps the known cost.

    Returns:
        :class:`mumbo_jax.optimize.Proposal`.
    """
    s = settings.strategy
    if s == "mumbo":
        acq, space = jax.tree_util.Partial(mumbo_alpha, post, task.target, gstar), task.space
    elif s == "mes":
        acq, space = jax.tree_util.Partial(mes_alpha, post, task.target, gstar), target_only(task)
    elif s == "random":
        acq, space = jax.tree_util.Partial(random_alpha, key), target_only(task)
    else:
        raise ValueError(f"unknown strategy {s!r}; allowed: {STRATEGIES}")
    if cost is not None:
        acq = jax.tree_util.Partial(_per_unit_cost, acq, cost)
        space = optimize.FidelitySpace(space.n_fidelities, space.bounds, jax.tree_util.Partial(_unit_cost))
    return optimize._maximise(key, acq, jnp.asarray(task.spec.bounds), space, settings.n_candidates,
                              settings.n_starts, settings.n_polish_steps, settings.learning_rate)
