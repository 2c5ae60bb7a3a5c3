"""Decision rules: given a fitted posterior (and g* samples), choose the next (x, z).

A strategy is a name in :data:`STRATEGIES`; :func:`propose` dispatches on it. Every
rule shares the model, the g* sampler and the maximiser of :mod:`mumbo_jax.bo.optimize`,
so strategies differ only in what they maximise:

* ``"mumbo"``: MUMBO's information gain about g* per unit cost, over X x Z.
* ``"mes"``: max-value entropy search at the target fidelity only.
* ``"random"``: uniform x at the target fidelity.

The paper's baselines (:mod:`mumbo_jax.acquisition.baselines` has the acquisitions and their
sources):

* ``"ei"``, ``"ucb"``: expected improvement / GP-UCB of the target, at the target only.
* ``"mt_ei"``: Swersky et al.'s two-stage rule: x by EI of the target, then the
  fidelity with the largest EI_z(x) per unit cost.
* ``"mf_gp_ucb"``: Kandasamy et al. (2016), discrete fidelities.
* ``"boca"``: Kandasamy et al. (2017), a continuous fidelity.
* ``"mtbo"``: entropy search over the optimum's location per unit cost (Swersky et al.
  2013, FABOLAS), over X x Z.

The ``task`` argument is a :class:`mumbo_jax.bo.loop.Task` (model spec, target, fidelity
space); it is used by attribute only, so this module does not import the loops.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from mumbo_jax.acquisition import acquisitions, baselines
from mumbo_jax.bo import optimize
from mumbo_jax.gp import posterior

STRATEGIES = ("mumbo", "mes", "random", "ei", "ucb", "mt_ei", "mf_gp_ucb", "boca", "mtbo")
# strategies that use samples of g* (the others skip the sampler)
USES_GSTAR = ("mumbo", "mes")
# strategies that query the target only
TARGET_ONLY = ("mes", "random", "ei", "ucb")
# strategies for one kind of fidelity space only
DISCRETE_ONLY = ("mf_gp_ucb",)
CONTINUOUS_ONLY = ("boca",)
# grid of a continuous fidelity for the two-stage rules' fidelity choice
FIDELITY_GRID = 64
# uniform pool from which MTBO draws its representer points (in proportion to EI)
MTBO_POOL = 2000


def mumbo_alpha(post, target, gstar, x, z):
    """MUMBO's gain ``[M]`` at inputs ``x [M, d]`` and fidelities ``z [M]``."""
    m = posterior.joint_moments(post, x, z, target)
    return acquisitions.mumbo_gain(m.mu_g, m.var_g, m.mu_y, m.var_y, m.cov, gstar)


def mes_alpha(post, target, gstar, x, z):
    """MES gain ``[M]`` of observing g itself at ``x [M, d]`` (z is ignored)."""
    mu, var = posterior.target_moments(post, x, target)
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
        settings: :class:`mumbo_jax.bo.loop.BOSettings` (static).
        task: :class:`mumbo_jax.bo.loop.Task`.
        post: the posterior fitted to the data so far.
        gstar: ``[N]`` samples of g* (ignored by strategies not in :data:`USES_GSTAR`).
        key: PRNG key of the maximiser.
        cost: optional learned cost ``c(x [M, d], z [M]) -> [M]`` (a
            ``jax.tree_util.Partial``, e.g. :func:`mumbo_jax.gp.costmodel.cost_function`):
            the maximiser then scores ``alpha(x, z) / c(x, z)`` instead of dividing by
            the task's known ``cost(z)`` (the proposal's ``score`` and ``alpha`` are both
            per unit of the learned cost). ``None`` keeps the known cost.

    Returns:
        :class:`mumbo_jax.bo.optimize.Proposal`.
    """
    s = settings.strategy
    check_strategy_for_task(s, task)
    if s in ("mt_ei", "mf_gp_ucb", "boca"):
        return _two_stage(settings, task, post, key, cost)
    if s == "mumbo":
        acq, space = jax.tree_util.Partial(mumbo_alpha, post, task.target, gstar), task.space
    elif s == "mes":
        acq, space = jax.tree_util.Partial(mes_alpha, post, task.target, gstar), target_only(task)
    elif s == "random":
        acq, space = jax.tree_util.Partial(random_alpha, key), target_only(task)
    elif s == "ei":
        eta = baselines.incumbent_value(post, task.target)
        acq, space = jax.tree_util.Partial(baselines.ei_alpha, post, task.target, eta), target_only(task)
    elif s == "ucb":
        beta = _beta(settings, task, post)
        acq, space = jax.tree_util.Partial(baselines.ucb_alpha, post, task.target, beta), target_only(task)
    elif s == "mtbo":
        state = baselines.mtbo_state(jax.random.fold_in(key, 11), post, task.target, settings.mtbo_representers,
                                     settings.mtbo_samples, settings.mtbo_fantasies, MTBO_POOL)
        acq, space = jax.tree_util.Partial(baselines.mtbo_alpha, post, task.target, state), task.space
    else:
        raise ValueError(f"unknown strategy {s!r}; allowed: {STRATEGIES}")
    if cost is not None:
        acq = jax.tree_util.Partial(_per_unit_cost, acq, cost)
        space = optimize.FidelitySpace(space.n_fidelities, space.bounds, jax.tree_util.Partial(_unit_cost))
    return optimize.maximise(key, acq, jnp.asarray(task.spec.bounds), space, settings.n_candidates,
                              settings.n_starts, settings.n_polish_steps, settings.learning_rate)


# --------------------------------------------------------------------------- two-stage rules


def check_strategy_for_task(strategy: str, task) -> None:
    """ValueError if ``strategy`` cannot run on the task's kind of fidelity space."""
    discrete = task.space.n_fidelities is not None
    if strategy in DISCRETE_ONLY and not discrete:
        raise ValueError(f"strategy {strategy!r} needs discrete fidelities; for a continuous fidelity use 'boca'")
    if strategy in CONTINUOUS_ONLY and discrete:
        raise ValueError(f"strategy {strategy!r} needs a continuous fidelity; for discrete fidelities use "
                         "'mf_gp_ucb'")


def _beta(settings, task, post):
    """The UCB coefficient: ``settings.ucb_beta`` or Kandasamy et al.'s 0.2 d log(2 t),
    t = the number of observations."""
    if settings.ucb_beta is not None:
        return jnp.asarray(settings.ucb_beta, float)
    return baselines.ucb_beta(task.spec.dim, baselines.n_observations(post))


def _fidelity_choices(task):
    """Fidelities the second stage chooses from: every discrete one, or a grid of a
    continuous one (target included)."""
    space = task.space
    if space.n_fidelities is not None:
        return space.fidelities
    lo, hi = space.bounds
    return jnp.concatenate([jnp.linspace(lo, hi, FIDELITY_GRID), jnp.asarray(task.target_z[:1], float)])


def _costs_at(task, cost, x, zs):
    """Cost of querying ``x [d]`` at each of ``zs [G]`` (learned c(x, z) or known c(z))."""
    if cost is not None:
        return cost(jnp.broadcast_to(x, (zs.shape[0], x.shape[0])), zs)
    return task.space.cost(zs)


def _bo_evaluations(task, post):
    """``[B]`` bool: buffer rows that are BO evaluations. Both loops fill the buffers in
    order, the initial design (2 d points at every fidelity, 3 levels of a continuous
    one) first, so the rules that adapt to their own history can replay it."""
    n_levels = task.space.n_fidelities or 3
    n0 = 2 * task.spec.dim * n_levels
    return (jnp.arange(post.mask.shape[0]) >= n0) & (post.mask > 0)


def _two_stage(settings, task, post, key, cost) -> optimize.Proposal:
    """MT-EI, MF-GP-UCB and BOCA: x first (an acquisition of the target maximised at the
    target), then the fidelity at that x by the rule's own criterion."""
    s = settings.strategy
    target = task.target
    bounds = jnp.asarray(task.spec.bounds)
    space = target_only(task)
    beta = _beta(settings, task, post)
    if s == "mt_ei":
        eta = baselines.incumbent_value(post, target)
        acq = jax.tree_util.Partial(baselines.ei_alpha, post, target, eta)
    elif s == "mf_gp_ucb":
        n_fid = task.space.n_fidelities
        zeta, gamma = baselines.mf_gp_ucb_thresholds(post, n_fid, int(task.target_z[0]))
        valid = _bo_evaluations(task, post)
        e = baselines.mf_gp_ucb_gamma_exponents(post.z, valid, task.space.cost(task.space.fidelities),
                                                int(task.target_z[0]))
        gamma = gamma * jnp.power(5.0, e)
        acq = jax.tree_util.Partial(baselines.mf_gp_ucb_alpha, post, zeta, beta)
    else:  # boca
        acq = jax.tree_util.Partial(baselines.ucb_alpha, post, target, beta)
    first = optimize.maximise(key, acq, bounds, space, settings.n_candidates, settings.n_starts,
                               settings.n_polish_steps, settings.learning_rate)
    x = first.x
    zs = _fidelity_choices(task)
    costs = _costs_at(task, cost, x, zs)
    xs = jnp.broadcast_to(x, (zs.shape[0], x.shape[0]))
    if s == "mt_ei":
        etas = jax.vmap(lambda z: baselines.fidelity_incumbent(post, z))(zs)
        ei = baselines.fidelity_ei(post, xs, zs, etas)
        i = jnp.argmax(ei / costs)
        return optimize.Proposal(x, zs[i], ei[i] / costs[i], ei[i])
    _, var = posterior.predict(post, xs, zs)
    sd = jnp.sqrt(var)
    if s == "mf_gp_ucb":
        z = baselines.mf_gp_ucb_fidelity(sd, beta, gamma, costs, int(task.target_z[0])).astype(zs.dtype)
        i = z
    else:
        z0 = jnp.asarray(task.target_z[0], float)
        xi = baselines.prior_information_gap(post, x, zs, z0)
        c0 = _costs_at(task, cost, x, z0[None])[0]
        q = baselines.boca_exponent(task.spec.dim)
        zt = posterior.internal_target(post, target)[0]
        coeff = baselines.boca_coefficient(jnp.abs(post.z - zt) < 1e-9, _bo_evaluations(task, post))
        z = baselines.boca_fidelity(zs, sd, xi, costs, c0, beta, baselines.data_range(post), q, z0, coeff)
        i = jnp.argmin(jnp.abs(zs - z))
    return optimize.Proposal(x, z, first.alpha / costs[i], first.alpha)
