"""A robust wrapper around any multi-fidelity rule: cheap queries only where they pay.

After rMFBO (Mikkola, Martinelli, Filstroff & Kaski, "Multi-fidelity Bayesian optimization
with unreliable information sources", AISTATS 2023). Beside the multi-fidelity model
(the ICM over X x Z, ``post``) runs a target-only model: the same kernel and
hyper-parameters conditioned on the target's own observations only, plus one
pseudo-observation per cheap BO query (the multi-fidelity model's belief about g there,
its posterior mean, with its posterior variance as the observation's noise). A
target-only rule (EI) chooses ``x_sf`` on that model: the target-only sequence, kept
going by the pseudo-observations while cheap queries stand in for target ones.

One decision of ``robust(inner)``:

1. ``inner`` (MUMBO, MT-EI, MF-GP-UCB, ...) proposes ``(x_q, z_q)``.
2. ``reliable``: the multi-fidelity model predicts the target's own observations, each
   left out in turn, at least as well as the target-only model does (summed
   leave-one-out log predictive density, :func:`mumbo_jax.gp.reliability.loo_advantage`). The initial design
   measures every x at every fidelity, so from the first step this compares "target
   data alone" with "target data plus the cheap data at the same x".
3. A cheap ``(x_q, z_q)`` is queried only if ``reliable``, if it is informative about
   the target-only choice (a noisy y(x_q, z_q) explains at least ``min_explained`` of
   the variance of g(x_sf): rho^2 >= ``min_explained``) and if the cheap spend stays
   within ``share`` of the BO spend (this query included) plus one target evaluation's
   cost (the slack that lets the first cheap queries in). With ``trust`` set, once the
   leave-one-out advantage reaches ``trust`` nats (strong evidence that the cheap data
   help: 3 nats is a likelihood ratio of 20, "strong" on Kass & Raftery's scale) the
   inner rule's cheap queries need not be informative about x_sf: they explore as the
   inner rule would, within the same share.
4. Else, if those hold for the cheapest fidelity at ``x_sf`` itself, that query.
5. Else ``x_sf`` at the target. A target query of ``inner`` is replaced by ``x_sf``
   too: every target evaluation is the target-only rule's.
6. With ``mf_choice`` set (off by default), once the leave-one-out advantage reaches
   ``mf_choice`` nats ``x_sf`` comes from the multi-fidelity model instead: the
   target-only rule on its posterior of g (``mf_target="ei"``) or the inner rule's own x
   (``"inner"``); steps 3-5 are unchanged, and the guarantee below then holds only for
   the steps under the threshold.

What this guarantees, by construction: every target evaluation is target-only EI's
choice on the target data and the pseudo-observations; the cheap spend is at most
``share`` of the BO spend plus one target evaluation's cost; cheap queries stop as soon as the target's own observations
say the cheap data mislead the model. What it does not guarantee: that the
pseudo-observations are right where the model is both reliable by that test and wrong.

Everything is traceable: the wrapper is a second stage of the rule record
(:class:`mumbo_jax.bo.rules.Rule`), run inside the compiled maximisation stage of both
drivers, and reads only the posterior's buffers (no extra state: the pseudo-observations
are recomputed from the cheap BO rows at every decision).

The guard's knobs are options of the robust rule (:data:`OPTIONS`, beside the inner
rule's own): ``share``, ``min_explained``, ``target_rule`` and ``trust``, set for a run
with ``BOSettings(options={"robust": {"share": 0.3}})`` or fixed in a variant,
``robust(inner, name=..., share=0.3)``.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp

from mumbo_jax.acquisition import baselines, maxvalue
from mumbo_jax.bo import bounds as score_bounds
from mumbo_jax.bo import optimize, rules
from mumbo_jax.bo.incumbent import N_ANCHORS, best_inputs, interval_scale
from mumbo_jax.gp import marginal, models, moments, posterior
from mumbo_jax.gp.reliability import loo_advantage, target_rows

__all__ = ["SHARE", "MIN_EXPLAINED", "TRUST", "MF_CHOICE", "TARGET_RULES", "MF_TARGETS", "OPTIONS", "pseudo_posterior",
           "explained", "cheap_spend", "target_only_choice", "guard", "robust"]

SHARE = 0.5  # at most this share of the BO spend on cheap fidelities
MIN_EXPLAINED = 0.5  # a cheap y must explain this share of g's variance at x_sf (rho^2)
TRUST = None  # nats of leave-one-out advantage from which the inner rule's cheap queries pass (None: never)
MF_CHOICE = None  # nats of leave-one-out advantage from which x_sf is chosen on the multi-fidelity model (None: never)


def pseudo_posterior(post: posterior.Posterior, target: posterior.Target, n_design,
                     use_mf=False) -> posterior.Posterior:
    """The target-only model with pseudo-observations: the target's rows, plus every
    cheap BO row (after the ``n_design`` design rows) moved to the target fidelity with
    y = the multi-fidelity posterior mean of g there and the posterior variance of g
    there, widened by :func:`mumbo_jax.bo.incumbent.interval_scale`, as extra noise.
    Where ``use_mf`` (a traced bool) holds, the multi-fidelity model itself instead,
    conditioned on every row as observed (same buffers, so one program serves both)."""
    post = marginal.first(post)
    on = target_rows(post, target)
    cheap = rules.bo_evaluations(post, n_design) & ~on
    zt = posterior.internal_target(post, target)[0]
    mu, var = moments.target_moments(post, posterior.evaluated_inputs(post), target)
    s = post.scaling
    # the model's variance widened by its own miscalibration on the target's observations
    # (left out in turn): an overconfident multi-fidelity model gives weaker pseudo-data
    var = var * jnp.square(interval_scale(post, target))
    y = jnp.where(cheap, (mu - s.y_mean) / s.y_scale, post.y)
    extra = jnp.where(cheap, jnp.maximum(var / s.y_scale ** 2, post.spec.noise_floor), 0.0)
    z = jnp.where(cheap, jnp.asarray(zt, post.z.dtype), post.z)
    use_mf = jnp.asarray(use_mf)
    mask = jnp.where(use_mf, post.mask, (on | cheap).astype(post.mask.dtype))
    return posterior.recondition(post, mask, jnp.where(use_mf, post.z, z), jnp.where(use_mf, post.y, y),
                                 jnp.where(use_mf, 0.0, extra))


def explained(post: posterior.Posterior, target: posterior.Target, x_q, z_q, x_t) -> jax.Array:
    """``[M]`` rho^2: the share of the posterior variance of g(x_t [d]) that a noisy
    observation y(x_q [M, d], z_q [M]) would explain (single-fidelity targets). Squared
    correlation of the joint posterior, in [0, 1)."""
    post = marginal.first(post)
    kernel = posterior.Masked(models.build_kernel(post.spec, post.params))
    zt = posterior.internal_target(post, target)[0]
    train = (post.x, post.z, post.mask)
    xq_unit, zq_unit = models.scale_inputs(post.spec, post.scaling, x_q, z_q)
    xt = models.scale_inputs(post.spec, post.scaling, x_t, zt)[0]

    def one(xq, zq):
        pts = (jnp.stack([xq, xt]), jnp.stack([zq, jnp.asarray(zt, zq.dtype)]), jnp.ones(2))
        v = post.chol_inv @ kernel(train, pts)  # [n, 2]
        cov = kernel(pts, pts) - v.T @ v
        var_y = jnp.maximum(cov[0, 0], 0.0) + post.noise[posterior.noise_index(post.spec, zq)]
        var_g = jnp.maximum(cov[1, 1], 1e-300)
        return jnp.clip(jnp.square(cov[0, 1]) / jnp.maximum(var_y * var_g, 1e-300), 0.0, 1.0 - 1e-12)

    return jax.vmap(one)(xq_unit, zq_unit)


def cheap_spend(ctx: rules.Context):
    """``(cheap, total)``: cost spent so far on the BO rows (after the design) away
    from the target, and on all BO rows (the known cost, or the learned one)."""
    post = marginal.first(ctx.post)
    rows = rules.bo_evaluations(post, ctx.n_design)
    x = posterior.evaluated_inputs(post)
    if post.spec.discrete:
        z_raw = post.z
    else:
        z_raw = post.scaling.z_lower + post.scaling.z_width * post.z
    cost = ctx.cost(x, z_raw) if ctx.cost is not None else ctx.task.space.cost(z_raw)
    cost = jnp.where(rows, cost, 0.0)
    on = target_rows(post, ctx.task.target)
    return jnp.sum(jnp.where(on, 0.0, cost)), jnp.sum(cost)


TARGET_RULES = ("ei", "mes")  # the target-only rules a robust rule can be backed by
MF_TARGETS = ("ei", "inner")  # what chooses x_sf from mf_choice's threshold on


def target_only_choice(ctx: rules.Context, sf: posterior.Posterior, target_rule: str = "ei") -> jax.Array:
    """``[d]`` the target-only rule's choice on ``sf``, maximised with the run's own
    maximiser settings: ``"ei"``, EI of g over the best posterior mean of ``sf`` at its
    rows; ``"mes"``, max-value entropy search with g* sampled under ``sf`` itself (as
    many samples as the decision's, ``ctx.gstar``)."""
    task = ctx.task
    maximiser = ctx.maximiser
    key = jax.random.fold_in(ctx.key, 17)
    if target_rule == "mes":
        n_grid = maxvalue.default_grid_size(task.spec.dim, "gumbel")
        n_gstar = ctx.gstar.shape[-1]
        gstar = maxvalue.sample_gstar(jax.random.fold_in(key, 1), sf, task.target, n_gstar, "gumbel", n_grid)
        acq = jax.tree_util.Partial(rules.mes_alpha, sf, task.target, gstar)
        bound = jax.tree_util.Partial(score_bounds.mes_bound, sf, task.target, gstar)
    else:
        eta = moments.incumbent(sf, task.target)[1]
        acq = jax.tree_util.Partial(baselines.ei_alpha, sf, task.target, eta)
        bound = jax.tree_util.Partial(score_bounds.ei_bound, sf, task.target, eta)
    if sf.x.shape[-2] < maxvalue.PRUNE_FROM_ROWS:  # every candidate scored, as before
        bound = None
    bounds, space = jnp.asarray(task.spec.bounds), rules.target_space(task)
    if maximiser is None:  # a context built without settings: the maximiser's defaults
        anchors = best_inputs(sf, task.target, N_ANCHORS) if optimize.LOCAL_FRAC > 0 else None
        return optimize.maximise(key, acq, bounds, space, anchors=anchors, bound=bound).x
    anchors = best_inputs(sf, task.target, N_ANCHORS) if maximiser.local_frac > 0 else None
    return optimize.maximise_with(maximiser, key, acq, bounds, space, anchors, bound).x


def guard(ctx: rules.Context, prop: optimize.Proposal, share: float = SHARE,
          min_explained: float = MIN_EXPLAINED, target_rule: str = "ei", trust: float | None = TRUST,
          mf_choice: float | None = MF_CHOICE, mf_target: str = "ei") -> optimize.Proposal:
    """The robust choice given the inner rule's proposal ``prop`` (module docstring).
    The returned proposal keeps ``prop``'s score where it is kept, else 0."""
    post, task = marginal.first(ctx.post), ctx.task
    target = task.target
    z_target = jnp.asarray(task.target_z[0], float)
    advantage = loo_advantage(post, target)
    reliable = advantage >= 0.0
    trusted = jnp.asarray(False) if trust is None else advantage >= trust
    # with mf_choice set, strong evidence for the cheap data moves the target-only choice
    # onto the multi-fidelity model's belief about g (all the cheap data, not the BO rows' means)
    use_mf = jnp.asarray(False) if mf_choice is None else advantage >= mf_choice
    on_mf_model = use_mf if mf_target == "ei" else False  # EI (or MES) on the model's posterior of g
    x_sf = target_only_choice(ctx, pseudo_posterior(post, target, ctx.n_design, on_mf_model), target_rule)
    if mf_target == "inner":  # the inner rule's own x (MF-GP-UCB's: its bound's maximiser)
        x_sf = jnp.where(use_mf, prop.x, x_sf)
    cheap_spent, spent = cheap_spend(ctx)
    discrete = task.spec.discrete

    def native(z):  # the fidelity as the cost model and the kernel take it
        return jnp.asarray(z).astype(jnp.int32) if discrete else jnp.asarray(z, float)

    def cost_of(x, z):
        return rules.costs_at(ctx, x, jnp.atleast_1d(native(z)))

    c_target = cost_of(x_sf, z_target)[0]

    def within_share(c):  # one target evaluation's worth of slack lets the first cheap queries in
        return cheap_spent + c <= share * (spent + c) + c_target + 1e-12

    # the inner rule's own cheap query
    zq = native(prop.z)
    q_cheap = jnp.abs(jnp.asarray(zq, float) - z_target) > 1e-9
    c_q = cost_of(prop.x, zq)[0]
    ok_q = (q_cheap & reliable & within_share(c_q)
            & (trusted | (explained(post, target, prop.x[None], zq[None], x_sf)[0] >= min_explained)))
    # the cheapest informative fidelity at x_sf itself
    zs = native(rules.fidelity_choices(task))
    costs = cost_of(x_sf, zs)
    rho2 = explained(post, target, jnp.broadcast_to(x_sf, (zs.shape[0], x_sf.shape[0])), zs, x_sf)
    usable = (costs < c_target) & (rho2 >= min_explained)
    i = jnp.argmin(jnp.where(usable, costs, jnp.inf))
    ok_alt = reliable & usable[i] & within_share(costs[i])
    z_dtype = jnp.asarray(prop.z).dtype
    zero = jnp.zeros_like(prop.score)
    alt = optimize.Proposal(x_sf, zs[i].astype(z_dtype), zero, jnp.zeros_like(prop.alpha))
    fallback = optimize.Proposal(x_sf, z_target.astype(z_dtype), zero, jnp.zeros_like(prop.alpha))
    pick = jax.tree_util.tree_map(lambda a, b: jnp.where(ok_alt, a, b), alt, fallback)
    return jax.tree_util.tree_map(lambda a, b: jnp.where(ok_q, a, b), prop, pick)


# the guard's knobs, options of every robust rule (beside its inner rule's own)
OPTIONS = {
    "share": rules.option(SHARE, "At most this share of the BO spend (plus one target evaluation's cost) goes to "
                          "cheap fidelities.", low=0, high=1, high_open=True, traced=True),
    "min_explained": rules.option(MIN_EXPLAINED, "A cheap query must explain at least this share of the variance "
                                  "of g at the target-only choice (rho^2).", low=0, high=1, low_open=True,
                                  high_open=True, traced=True),
    "target_rule": rules.option("ei", "The target-only rule on the target data and the pseudo-observations: ei or "
                                "mes.", choices=TARGET_RULES),
    "trust": rules.option(TRUST, "Nats of leave-one-out advantage from which the inner rule's cheap queries need "
                          "not be informative about the target-only choice; unset: never (docs/howto/robust.md).",
                          type=float, low=0, traced=True),
    "mf_choice": rules.option(MF_CHOICE, "Nats of leave-one-out advantage from which the target-only choice is made "
                              "on the multi-fidelity model's posterior of g instead of the target data and the "
                              "pseudo-observations; unset: never.", type=float, traced=True),
    "mf_target": rules.option("ei", "The choice made from mf_choice's threshold on: ei (the target-only rule on the "
                              "multi-fidelity model) or inner (the inner rule's own x).", choices=MF_TARGETS),
}


def _second_stage(inner_stage, ctx, first):
    prop = first if inner_stage is None else inner_stage(ctx, first)
    o = ctx.options
    return guard(ctx, prop, o["share"], o["min_explained"], o["target_rule"], o["trust"], o["mf_choice"],
                 o["mf_target"])


def robust(inner: rules.Rule, name: str | None = None, share: float = SHARE,
           min_explained: float = MIN_EXPLAINED, target_rule: str = "ei", trust: float | None = TRUST,
           mf_choice: float | None = MF_CHOICE, mf_target: str = "ei") -> rules.Rule:
    """The rule record of ``inner`` wrapped by :func:`guard`: its options are the inner
    rule's plus the guard's (:data:`OPTIONS`) with these defaults (``share``,
    ``min_explained``, ``target_rule``, one of :data:`TARGET_RULES`, ``trust``,
    ``mf_choice`` and ``mf_target``; a ValueError out of range). Register it with :func:`mumbo_jax.bo.rules.register` to use
    it by name."""
    if "discrete" not in inner.kinds and "continuous" not in inner.kinds:
        raise ValueError(f"rule {inner.name!r} supports no fidelity kind")
    clash = sorted(set(inner.options) & set(OPTIONS))
    if clash:
        raise ValueError(f"rule {inner.name!r} has an option {clash[0]!r}, a knob of the robust guard too")
    name = name or f"robust_{inner.name}"
    given = {"share": share, "min_explained": min_explained, "target_rule": target_rule, "trust": trust,
             "mf_choice": mf_choice, "mf_target": mf_target}
    declared = {k: dataclasses.replace(f, name=k) for k, f in OPTIONS.items()}
    given = {k: declared[k].check(v, name=f"{name} option {k}") for k, v in given.items()}
    summary = (f"{inner.name} behind a target-only {target_rule.upper()} sequence: cheap queries only while the cheap "
               f"data predict the target's observations and explain >= {min_explained:g} of g's variance at its "
               f"choice, <= {share:g} of the spend")
    return dataclasses.replace(inner, name=name, second_stage=functools.partial(_second_stage, inner.second_stage),
                               single_target=True, replays_history=True, summary=summary,
                               options={**inner.options, **given},
                               option_fields={**inner.option_fields, **declared})


# the built-in robust rules: MUMBO's (the name "robust"), MT-EI's and MF-GP-UCB's
for _inner, _name in (("mumbo", "robust"), ("mt_ei", "robust_mt_ei"), ("mf_gp_ucb", "robust_mf_gp_ucb")):
    rules.register(robust(rules.RULES[_inner], name=_name))
rules.register(robust(rules.RULES["mumbo"], name="robust_mes", target_rule="mes"))
del _inner, _name
