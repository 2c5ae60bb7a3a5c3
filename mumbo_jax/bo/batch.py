"""Synchronous batches: q evaluations chosen per BO step.

A batch step fits the model once and samples g* once, then chooses q pairs (x, z)
before any of them is evaluated; the q evaluations run together (q workers) and are
appended at once (:func:`mumbo_jax.bo.compiled.run_compiled` with
``BOSettings.batch.size = q``). The rules (``BOSettings.batch.rule``) build the batch
greedily from the same fitted posterior:

    "believer"  the kriging believer (the default): slot k is the rule's ordinary
                proposal (the full maximiser) on the posterior conditioned on slots
                < k at their posterior mean. Any rule; slot 0 is the sequential
                decision, so q = 1 is the sequential step exactly.
    "gibbon"    GIBBON's batch lower bound in its multi-fidelity form
                (:func:`mumbo_jax.acquisition.gibbon.gibbon_batch`): slot k takes the
                candidate maximising the batch's gain per unit cost given slots < k,
                which enter through the joint covariance of the evaluations (no
                fantasised values). Candidates: ``n_candidates`` random x drawn as
                the sequential maximiser draws them (faces and near the best points
                by ``maximiser.boundary_frac`` / ``local_frac``) and the sequential
                rule's polished choice, each at every fidelity of the rule's space (a
                continuous fidelity at 5 evenly spaced values).
    "gibbon_kb" GIBBON as above, choosing among the believer's q slots and the
                uniform candidates.
    "gibbon_seq" slot 0 the sequential decision (as the believer's); slots 1..q-1
                GIBBON's greedy batch given slot 0 as a pending evaluation, from the
                same candidate set.
    "gibbon_mumbo" GIBBON's greedy batch with each point's own term MUMBO's gain
                instead of GIBBON's Gaussian bound of it (``quality = "mumbo"``): the
                bound undervalues high-correlation (target) points by the ESG's
                negentropy, so GIBBON's batches lean to the cheap fidelities; with
                MUMBO's term a batch of one is MUMBO's decision over the candidates,
                and the log-det term only adds the batch's repulsion.

On Currin and Hartmann-3 (10 seeds, q = 4; docs/RESULTS.md) the believer was level
with sequential MUMBO against cost and every GIBBON form behind it, hence the default.

Slot k of the believer uses the maximiser key ``fold_in(key, k)`` (slot 0: ``key``).
Both rules are pure functions of (posterior, g*, key, buffers): one jit program per
buffer size and q, vmapped over seeds by the lock-step driver like the other stages.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from mumbo_jax.acquisition import gibbon
from mumbo_jax.bo import kernel, optimize, rules
from mumbo_jax.bo.incumbent import N_ANCHORS, best_inputs
from mumbo_jax.bo.settings import BOSettings, Task
from mumbo_jax.gp import posterior

__all__ = ["batch_stage", "candidate_pairs", "CONTINUOUS_FIDELITIES"]

CONTINUOUS_FIDELITIES = 5  # a continuous fidelity enters GIBBON's candidate set at this many values


def candidate_pairs(settings: BOSettings, task: Task, key, anchors, local_anchors=None):
    """GIBBON's candidate set: ``(x [F M, d], z [F M])`` with M = n_candidates + A (the
    random x from ``key`` and ``anchors [A, d]``, e.g. the sequential rule's choice) at
    each of the F fidelities of the rule's space (traceable).

    The random x are drawn as the sequential maximiser draws its candidates: uniform,
    ``settings.maximiser.boundary_frac`` of them snapped onto the box's faces and, given
    ``local_anchors [K, d]`` (the best evaluated x), ``maximiser.local_frac`` of them near
    those; so GIBBON and the believer's slots search the same kind of set."""
    spec = task.spec
    b = jnp.asarray(spec.bounds)
    lo, width = b[:, 0], b[:, 1] - b[:, 0]
    m = settings.maximiser
    u = jax.random.uniform(key, (m.n_candidates, spec.dim), dtype=b.dtype)
    u = optimize.snap_to_faces(jax.random.fold_in(key, 1), u, m.boundary_frac)
    if local_anchors is not None and m.local_frac > 0:
        u = optimize.near_anchors(jax.random.fold_in(key, 2), u, (jnp.asarray(local_anchors, b.dtype) - lo) / width,
                                  m.local_frac)
    anchors = jnp.asarray(anchors, b.dtype).reshape(-1, spec.dim)
    xs = jnp.concatenate([anchors, b[:, 0] + (b[:, 1] - b[:, 0]) * u])
    if rules.rule_for(settings).space == "target":
        fids = jnp.asarray(task.target_z, float)
    elif spec.discrete:
        fids = jnp.arange(spec.n_fidelities, dtype=float)
    else:
        fids = jnp.linspace(*spec.fidelity_bounds, CONTINUOUS_FIDELITIES)
    return jnp.tile(xs, (fids.shape[0], 1)), jnp.repeat(fids, xs.shape[0])


def _local_anchors(settings: BOSettings, task: Task, post):
    """The best evaluated x that GIBBON's local candidates surround (None without them)."""
    return best_inputs(post, task.target, N_ANCHORS) if settings.maximiser.local_frac > 0 else None


def _as_fidelity(task: Task, z):
    return z.astype(jnp.int32) if task.spec.discrete else z


def _gibbon(settings, task, post, gstar, key, q, n_design, anchors=None):
    first = kernel.propose(settings, task, post, gstar, key, None, n_design)
    anchors = first.x[None] if anchors is None else anchors
    local = _local_anchors(settings, task, post)
    x, z = candidate_pairs(settings, task, jax.random.fold_in(key, q), anchors, local)
    z_in = _as_fidelity(task, z)
    quality = "mumbo" if settings.batch.rule == "gibbon_mumbo" else "gibbon"
    greedy = gibbon.gibbon_batch(post, task.target, gstar, x, z_in, q, cost=task.space.cost(z_in), quality=quality)
    xb = greedy.x
    # each slot's share of the batch gain (the chain rule of eq. 2 over the prefixes)
    # and the prefix's gain per unit cost, as the greedy slots report them
    prefix = jnp.stack([gibbon.gibbon_batch_gain(post, xb[:k], greedy.z[:k], task.target, gstar, quality=quality)
                        for k in range(1, q + 1)])
    gain = jnp.diff(prefix, prepend=0.0)
    score = prefix / jnp.cumsum(task.space.cost(greedy.z))
    return optimize.Proposal(xb, greedy.z.astype(jnp.asarray(first.z).dtype), score, gain)


def _believer(settings, task, post, gstar, key, q, buffers, n, n_design):
    spec = task.spec

    def slot(carry, k):
        b, p = carry
        prop = kernel.propose(settings, task, p, gstar, jnp.where(k == 0, key, jax.random.fold_in(key, k)),
                                  None, n_design)
        mean, _ = posterior.predict(p, prop.x[None], _as_fidelity(task, jnp.atleast_1d(prop.z)))
        row = n + k
        b = b._replace(x=b.x.at[row].set(prop.x), z=b.z.at[row].set(jnp.asarray(prop.z, float)),
                       y=b.y.at[row].set(mean[0]), mask=b.mask.at[row].set(1.0))
        p = posterior.condition(spec, post.params, b.x, b.z, b.y, b.mask, scaling=post.scaling)
        return (b, p), prop

    _, props = jax.lax.scan(slot, (buffers, post), jnp.arange(q))
    return props


def batch_stage(settings: BOSettings, task: Task, post: posterior.Posterior, gstar, key, buffers, n,
                n_design) -> optimize.Proposal:
    """``settings.batch.size`` pairs chosen at once by ``settings.batch.rule``.

    Args:
        post: the posterior fitted to ``buffers`` (the first ``n`` rows are data).
        gstar: ``[N]`` g* samples; key: the step's maximiser key.
        buffers: :class:`mumbo_jax.bo.kernel.Buffers` with at least ``n + q - 1`` rows
            (the believer writes its fantasies after row n).
        n: rows filled; n_design: rows of the initial design.

    Returns:
        :class:`mumbo_jax.bo.optimize.Proposal` with a leading slot axis: ``x [q, d]``,
        ``z [q]``, ``score [q]`` (GIBBON: the batch's gain per unit cost when the slot
        was chosen; believer: the rule's score on the fantasised posterior) and
        ``alpha [q]`` (GIBBON: the slot's gain increment; believer: the rule's alpha).
    """
    return _batch(kernel.decision_settings(settings), task, post, gstar, key, buffers, n, n_design)


@functools.partial(jax.jit, static_argnames=("settings",))
def _batch(settings, task, post, gstar, key, buffers, n, n_design):
    q = settings.batch.size
    if settings.batch.rule in ("gibbon", "gibbon_mumbo"):
        return _gibbon(settings, task, post, gstar, key, q, n_design)
    if settings.batch.rule == "gibbon_kb":  # GIBBON choosing among the believer's slots and uniform x
        slots = _believer(settings, task, post, gstar, key, q, buffers, n, n_design)
        return _gibbon(settings, task, post, gstar, key, q, n_design, slots.x)
    if settings.batch.rule == "gibbon_seq":
        return _gibbon_seq(settings, task, post, gstar, key, q, n_design)
    return _believer(settings, task, post, gstar, key, q, buffers, n, n_design)


def _gibbon_seq(settings, task, post, gstar, key, q, n_design):
    """Slot 0: the sequential decision (the full maximiser, as the believer's slot 0);
    slots 1..q-1: GIBBON's greedy batch given slot 0 as a pending evaluation (it enters
    through the joint covariance, as pending points do in ask/tell)."""
    first = kernel.propose(settings, task, post, gstar, key, None, n_design)
    if q == 1:
        return jax.tree_util.tree_map(lambda a: jnp.asarray(a)[None], first)
    local = _local_anchors(settings, task, post)
    x, z = candidate_pairs(settings, task, jax.random.fold_in(key, q), first.x[None], local)
    z_in = _as_fidelity(task, z)
    z0 = _as_fidelity(task, jnp.atleast_1d(jnp.asarray(first.z, float)))
    rest = gibbon.gibbon_batch(post, task.target, gstar, x, z_in, q - 1, first.x[None], z0,
                               cost=task.space.cost(z_in))
    zd = jnp.asarray(first.z).dtype
    return optimize.Proposal(jnp.concatenate([first.x[None], rest.x]),
                             jnp.concatenate([jnp.atleast_1d(first.z), rest.z.astype(zd)]),
                             jnp.concatenate([jnp.atleast_1d(first.score), rest.score]),
                             jnp.concatenate([jnp.atleast_1d(first.alpha), rest.gain]))
