"""Synchronous batches: q evaluations chosen per BO step.

A batch step fits the model once and samples g* once, then chooses q pairs (x, z)
before any of them is evaluated; the q evaluations run together (q workers) and are
appended at once (:func:`mumbo_jax.bo.compiled.run_compiled` with
``BOSettings.batch.size = q``; the compiled step is :func:`mumbo_jax.bo.stages.batch_stage`). The batch rule (``BOSettings.batch.rule``, a name in
:data:`BATCH_RULES`) builds the batch from the same fitted posterior. The built-in rules
build it greedily:

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
Every rule is a pure function of (posterior, g*, key, buffers): one jit program per
buffer size and q, vmapped over seeds by the lock-step driver like the other stages.

A batch rule is a :class:`BatchRule` record: ``build(ctx)`` maps a :class:`BatchContext`
to a :class:`mumbo_jax.bo.optimize.Proposal` with a leading slot axis of length q.
:func:`register` adds one at run time; the settings' check, the config schema's choices
and ``mumbo-jax list`` read :data:`BATCH_RULES`, so a registered rule is accepted
everywhere at once (docs/howto/write-a-rule.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

import jax
import jax.numpy as jnp

from mumbo_jax.acquisition import gibbon
from mumbo_jax.bo import optimize, rules
from mumbo_jax.bo.incumbent import N_ANCHORS, best_inputs
from mumbo_jax.registry import Registry, check_name, frozen_options
from mumbo_jax.gp import moments, posterior

if TYPE_CHECKING:  # annotations only: settings imports this module (the batch rules' names)
    from mumbo_jax.bo.settings import BOSettings, Task

__all__ = ["BatchRule", "BatchContext", "BATCH_RULES", "register", "unregister", "check_batch_rule", "propose",
           "candidate_pairs", "CONTINUOUS_FIDELITIES"]

CONTINUOUS_FIDELITIES = 5  # a continuous fidelity enters GIBBON's candidate set at this many values


class BatchContext(NamedTuple):
    """What a batch rule sees (inside the compiled batch step).

    Attributes:
        settings: :class:`mumbo_jax.bo.settings.BOSettings` (static).
        task: :class:`mumbo_jax.bo.settings.Task`.
        post: the posterior fitted to ``buffers`` (the first ``n`` rows are data).
        gstar: ``[N]`` g* samples (zeros for rules without g*).
        key: the step's maximiser key.
        buffers: :class:`mumbo_jax.bo.stages.Buffers` with at least ``n + q - 1`` rows
            (room for fantasised slots after row n).
        n: rows filled; n_design: rows of the initial design.
    """

    settings: Any
    task: Any
    post: posterior.Posterior
    gstar: jax.Array
    key: jax.Array
    buffers: Any
    n: jax.Array
    n_design: jax.Array

    @property
    def q(self) -> int:
        """The batch size (static)."""
        return self.settings.batch.size

    @property
    def options(self) -> Mapping[str, Any]:
        """The knobs of the batch rule deciding: its record's :attr:`BatchRule.options`."""
        return BATCH_RULES[self.settings.batch.rule].options


@dataclasses.dataclass(frozen=True)
class BatchRule:
    """One way to build a synchronous batch (``BOSettings.batch_rule``).

    Attributes:
        name: snake_case, the one spelling in settings and configs.
        build: ``build(ctx: BatchContext) -> Proposal`` with a leading slot axis:
            ``x [q, d]``, ``z [q]``, ``score [q]``, ``alpha [q]``. Traceable.
        uses_gstar: the rule needs a decision rule that samples g* (GIBBON's forms).
        summary: one line for ``mumbo-jax list``.
        options: the rule's own knobs (read-only; ``ctx.options``). A variant with other
            values is another record, :meth:`with_options`, under its own name.
    """

    name: str
    build: Callable[[BatchContext], optimize.Proposal]
    uses_gstar: bool = False
    summary: str = ""
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict, hash=False)

    def __post_init__(self):
        check_name(self.name, "batch rule")
        if not callable(self.build):
            raise ValueError(f"batch rule {self.name!r}: build must be callable, a function of a BatchContext")
        object.__setattr__(self, "options", frozen_options(self.options, "batch rule", self.name))

    def with_options(self, name: str | None = None, **changes) -> "BatchRule":
        """A copy with some knobs changed (and, to register it beside this one, a new
        ``name``); ValueError for a knob the rule does not have."""
        unknown = sorted(set(changes) - set(self.options))
        if unknown:
            raise ValueError(f"batch rule {self.name!r} has no option {unknown[0]!r}; its options: "
                             f"{', '.join(self.options) or 'none'}")
        return dataclasses.replace(self, name=name or self.name, options={**self.options, **changes})


def propose(ctx: BatchContext, key=None, post=None) -> optimize.Proposal:
    """The sequential decision rule's proposal (:func:`mumbo_jax.bo.rules.propose`) on
    ``post`` (default ``ctx.post``) with maximiser ``key`` (default ``ctx.key``): the
    building block of a batch rule."""
    return rules.propose(ctx.settings, ctx.task, ctx.post if post is None else post, ctx.gstar,
                          ctx.key if key is None else key, None, ctx.n_design)


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


def _gibbon(settings, task, post, gstar, key, q, n_design, anchors=None, quality="gibbon"):
    first = rules.propose(settings, task, post, gstar, key, None, n_design)
    anchors = first.x[None] if anchors is None else anchors
    local = _local_anchors(settings, task, post)
    x, z = candidate_pairs(settings, task, jax.random.fold_in(key, q), anchors, local)
    z_in = _as_fidelity(task, z)
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
        prop = rules.propose(settings, task, p, gstar, jnp.where(k == 0, key, jax.random.fold_in(key, k)),
                                  None, n_design)
        mean, _ = moments.predict(p, prop.x[None], _as_fidelity(task, jnp.atleast_1d(prop.z)))
        row = n + k
        b = b._replace(x=b.x.at[row].set(prop.x), z=b.z.at[row].set(jnp.asarray(prop.z, float)),
                       y=b.y.at[row].set(mean[0]), mask=b.mask.at[row].set(1.0))
        p = posterior.condition(spec, post.params, b.x, b.z, b.y, b.mask, scaling=post.scaling)
        return (b, p), prop

    _, props = jax.lax.scan(slot, (buffers, post), jnp.arange(q))
    return props


def _believer_rule(ctx: BatchContext):
    return _believer(ctx.settings, ctx.task, ctx.post, ctx.gstar, ctx.key, ctx.q, ctx.buffers, ctx.n, ctx.n_design)


def _gibbon_rule(ctx: BatchContext):
    return _gibbon(ctx.settings, ctx.task, ctx.post, ctx.gstar, ctx.key, ctx.q, ctx.n_design,
                   quality=ctx.options["quality"])


def _gibbon_kb_rule(ctx: BatchContext):
    """GIBBON choosing among the believer's slots and uniform x."""
    slots = _believer_rule(ctx)
    return _gibbon(ctx.settings, ctx.task, ctx.post, ctx.gstar, ctx.key, ctx.q, ctx.n_design, slots.x)


def _gibbon_seq_rule(ctx: BatchContext):
    return _gibbon_seq(ctx.settings, ctx.task, ctx.post, ctx.gstar, ctx.key, ctx.q, ctx.n_design)


def _gibbon_seq(settings, task, post, gstar, key, q, n_design):
    """Slot 0: the sequential decision (the full maximiser, as the believer's slot 0);
    slots 1..q-1: GIBBON's greedy batch given slot 0 as a pending evaluation (it enters
    through the joint covariance, as pending points do in ask/tell)."""
    first = rules.propose(settings, task, post, gstar, key, None, n_design)
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


# --------------------------------------------------------------------------- the table

BATCH_RULES: Registry = Registry("batch rule", BatchRule, (
    BatchRule("gibbon", _gibbon_rule, uses_gstar=True, options={"quality": "gibbon"},
              summary="GIBBON's batch lower bound, greedy over a candidate set"),
    BatchRule("believer", _believer_rule,
              summary="kriging believer: the rule's own proposal per slot on the posterior conditioned on the "
                      "earlier slots at their mean (the default)"),
    BatchRule("gibbon_kb", _gibbon_kb_rule, uses_gstar=True,
              summary="GIBBON choosing among the believer's slots and the uniform candidates"),
    BatchRule("gibbon_seq", _gibbon_seq_rule, uses_gstar=True,
              summary="the sequential decision, then GIBBON's greedy slots given it as pending"),
    BatchRule("gibbon_mumbo", _gibbon_rule, uses_gstar=True, options={"quality": "mumbo"},
              summary="GIBBON's greedy batch with MUMBO's gain as each point's own term"),
))
"""name -> :class:`BatchRule`, in registration order (the built-in rules first)."""


def register(rule: BatchRule) -> BatchRule:
    """Add a batch rule to :data:`BATCH_RULES` and return it: settings, configs
    (``batch_rule = "<name>"``), the config schema and ``mumbo-jax list`` accept it at
    once. The same record again is a no-op; another record under a taken name is a
    ValueError."""
    return BATCH_RULES.register(rule)


def unregister(name: str) -> BatchRule:
    """Remove a registered batch rule (not a built-in one) and return it."""
    return BATCH_RULES.unregister(name)


def check_batch_rule(name: str, strategy: str | None = None, batch_size: int = 1) -> BatchRule:
    """The record called ``name``; ValueError (one line) if there is none, or if it
    needs samples of g* (``uses_gstar``), ``batch_size > 1`` and the decision rule
    ``strategy`` does not sample them."""
    rule = BATCH_RULES.lookup(name, "batch_rule")
    if batch_size > 1 and rule.uses_gstar and strategy is not None and not rules.RULES[strategy].uses_gstar:
        raise ValueError(f"batch.rule {name!r} needs a rule that samples g* ({', '.join(rules.USES_GSTAR)}); "
                         f"strategy {strategy!r} does not: use batch.rule = 'believer'")
    return rule
