"""The decision stages: pure functions over plain state, shared by both drivers.

A BO run's state is :class:`State`: fixed-size data buffers (padding masked out), the
number of filled rows, the number of BO steps taken, the size of the initial design and
the last hyper-parameters. One decision is three compiled stages,

    fit_stage       refit the hyper-parameters (on the steps of :func:`refit_at`) and
                    condition on the buffers;
    gstar_stage     samples of g* (rules with ``uses_gstar``; zeros otherwise);
    maximise_stage  the rule's proposal (:func:`mumbo_jax.bo.rules.propose`);

then :func:`observe` appends the evaluation and :func:`incumbent_row` names the
incumbent. Evaluations handed out but not returned yet ("pending", the asynchronous
ask/tell driver) enter between the fit and the g* stage: :func:`believe_stage`
conditions the fitted posterior on them at their posterior mean (kriging believer), or
:func:`gibbon_stage` replaces the maximisation by GIBBON's pending-aware gain. The key of step k is ``fold_in(loop_key, k)`` (:func:`step_keys`), so the
ask/tell driver and the compiled driver make the same decisions for the same seed.

The stages are separate ``jax.jit`` programs with no host callbacks: the drivers time
around them, and JAX's persistent compilation cache can keep them. Buffers grow through
geometric size classes (32, 64, 96, 160, 256, 384, 576, 768, 1024, ...;
:func:`buffer_size`): a run to 3,000 points compiles 12 sizes, and a step pays for at
most 1.67 times the rows it has.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.acquisition import gibbon, maxvalue
from mumbo_jax.bo import batch, optimize, rules
from mumbo_jax.runtime import programs
from mumbo_jax.bo import incumbent as incumbent_module
from mumbo_jax.bo.incumbent import incumbent_by_rule
from mumbo_jax.bo.settings import ApproxSettings, BOSettings, FitSettings, GstarSettings, Task
from mumbo_jax.gp import fitting, marginal, models, moments, posterior, sparse
from mumbo_jax.runtime.tracing import is_concrete
from mumbo_jax.runtime.xla_options import jit

__all__ = [
    "MIN_BUFFER", "Buffers", "State", "as_params", "as_count", "buffer_size", "pad_buffers", "grow", "initial_design",
    "init", "observe", "step_keys", "refit_at", "cold_at", "fit_stage", "gstar_stage",
    "maximise_stage", "decision_settings", "decision_posterior", "batch_stage", "incumbent_row", "recommend", "decide", "believe_stage",
    "gibbon_stage", "believer_rows", "PENDING_MODES",
]

PENDING_MODES = ("believer", "gibbon")  # how pending evaluations enter a decision
PENDING_PAD = 8  # pending points are predicted in blocks of 8, 16, 32, ... (one program per block size)

MIN_BUFFER = 32
BUFFER_STEP = 32  # buffer rows are multiples of this (the blocked algebra's alignment)
# buffer sizes: as before up to 96 rows, then powers of two and 1.5 times powers of two
# (both split into 32-aligned halves by the blocked algebra, mumbo_jax.gp.linalg), then
# growth by 1.5: a run from 0 to 3,000 points meets these 12 sizes
SIZE_CLASSES = (32, 64, 96, 160, 256, 384, 576, 768, 1024, 1536, 2048, 3072)
BUFFER_GROWTH = 1.5  # beyond the table each size is the multiple of 32 at or above 1.5 times the last


def _size_classes(top: int) -> list[int]:
    """The buffer sizes up to at least ``top`` rows: :data:`SIZE_CLASSES`, then each the
    multiple of :data:`BUFFER_STEP` at or above :data:`BUFFER_GROWTH` times the last
    (4608, 6912, 10368, ...)."""
    sizes = list(SIZE_CLASSES)
    while sizes[-1] < top:
        sizes.append(-(-int(BUFFER_GROWTH * sizes[-1]) // BUFFER_STEP) * BUFFER_STEP)
    return sizes


class Buffers(NamedTuple):
    """Fixed-size data buffers: rows with mask 0 are padding."""

    x: jax.Array  # [B, d]
    z: jax.Array  # [B] fidelities (float; cast to int for discrete models)
    y: jax.Array  # [B] observations, maximisation convention
    mask: jax.Array  # [B]


class State(NamedTuple):
    """The decision state (plain arrays; a leading seed axis when batched).

    Attributes:
        buffers: the data so far, the initial design first.
        n: rows filled.
        k: BO steps taken (evaluations after the design).
        n_design: rows that hold the initial design.
        params: the last hyper-parameters (the warm start of the next fit).
    """

    buffers: Buffers
    n: jax.Array
    k: jax.Array
    n_design: jax.Array
    params: dict


def buffer_size(n: int, min_buffer: int = MIN_BUFFER) -> int:
    """Rows of the buffer holding n + 1 points (at least ``min_buffer``): the smallest
    size class (:data:`SIZE_CLASSES`, growing by 1.33 to 2 and by 1.5 beyond 3,072
    rows) that holds them. A run from 0 to 3,000 points meets 12 sizes, each compiled
    once; beyond 96 rows a step pays for at most 1.67 times the rows it has
    (``experiments/performance/bench_size_classes.py`` compares the padding with the
    earlier 32-row steps)."""
    need = max(int(n) + 1, int(min_buffer))
    return next(s for s in _size_classes(need) if s >= need)


def pad_buffers(x, z, y, size: int) -> Buffers:
    """Buffers of ``size`` rows holding ``x [n, d]``, ``z [n]``, ``y [n]`` first (numpy
    for concrete inputs: eager jnp padding would compile one program per n)."""
    traced = not is_concrete(x, z, y)
    if not traced:
        programs.on_buffer_size(size)  # a new size compiles new programs: keep under the map limit
    xp = jnp if traced else np
    n, d = x.shape
    pad = size - n
    return Buffers(
        xp.concatenate([xp.asarray(x, float), xp.zeros((pad, d))]),
        xp.concatenate([xp.asarray(z, float).reshape(n), xp.zeros(pad)]),
        xp.concatenate([xp.asarray(y, float).reshape(n), xp.zeros(pad)]),
        xp.concatenate([xp.ones(n), xp.zeros(pad)]),
    )


def grow(state: State, size: int, axis: int = 0) -> State:
    """Pad the buffers along their data ``axis`` (1 with a leading seed axis) to ``size``."""
    programs.on_buffer_size(size)  # a new size compiles new programs: keep under the map limit

    def pad(a):
        widths = [(0, 0)] * a.ndim
        widths[axis] = (0, size - a.shape[axis])
        return jnp.pad(a, widths)

    return state._replace(buffers=Buffers(*map(pad, state.buffers)))


def initial_design(task: Task, key, n_per_fidelity: int | None = None):
    """The paper's design: ``2 d`` uniform points, each evaluated at every fidelity
    (a continuous fidelity at its lower bound, midpoint and upper bound).

    Returns:
        ``(x [n0, d], z [n0])``.
    """
    spec = task.spec
    n = 2 * spec.dim if n_per_fidelity is None else n_per_fidelity
    b = jnp.asarray(spec.bounds)
    x = b[:, 0] + (b[:, 1] - b[:, 0]) * jax.random.uniform(key, (n, spec.dim))
    if spec.discrete:
        fids = jnp.arange(spec.n_fidelities, dtype=float)
    else:
        lo, hi = spec.fidelity_bounds
        fids = jnp.asarray([lo, 0.5 * (lo + hi), hi])
    return jnp.tile(x, (fids.shape[0], 1)), jnp.repeat(fids, n)


def init(task: Task, x, z, y, n_design: int | None = None, params=None, min_buffer: int = MIN_BUFFER) -> State:
    """The state after the evaluations ``x [n, d]``, ``z [n]``, ``y [n]`` (the design
    first; ``n_design`` defaults to all of them), with ``params`` (default: the model's
    defaults) as the next fit's warm start."""
    n = x.shape[0]
    params = models.default_params(task.spec) if params is None else params
    return State(pad_buffers(x, z, y, buffer_size(n, min_buffer)), jnp.asarray(n, jnp.int32),
                 jnp.asarray(0, jnp.int32), as_count(n if n_design is None else n_design), as_params(params))


def as_params(params: dict) -> dict:
    """Hyper-parameters as strongly typed float64 arrays: the one jit signature of the
    stages (weakly typed defaults would compile every stage a second time)."""
    return jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float64), params)


def as_count(n):
    """A row count as the stages take it (int32 scalar)."""
    return jnp.asarray(n, jnp.int32)


def observe(state: State, x, z, y, go=True) -> State:
    """Append the evaluation ``(x [d], z, y)`` as a BO step (where ``go``; else keep the
    state). Needs a free row (:func:`grow` first when ``n`` reaches the buffer size)."""
    b, n = state.buffers, state.n
    new = state._replace(
        buffers=Buffers(b.x.at[n].set(x), b.z.at[n].set(jnp.asarray(z, float)), b.y.at[n].set(y),
                        b.mask.at[n].set(1.0)),
        n=n + 1, k=state.k + 1)
    return jax.tree_util.tree_map(lambda a, o: jnp.where(go, a, o), new, state)


def step_keys(loop_key, k):
    """Keys of BO step k (fit, g*, maximisation), the same in both loops."""
    return jax.random.split(jax.random.fold_in(loop_key, k), 3)


def refit_at(settings: BOSettings, k):
    """Whether BO step ``k`` refits the hyper-parameters (the same rule in both loops)."""
    return k % settings.fit.refit_every == 0


def cold_at(settings: BOSettings, k, n):
    """Whether a refit at BO step ``k`` with ``n`` observations runs all its restarts
    (``fit.warm_from`` 0, fewer than ``fit.warm_from`` observations, or every
    ``fit.cold_every``-th refit); else only the warm start. ``k`` and ``n`` may be traced."""
    f = settings.fit
    if not f.warm_from:
        return True
    return (n < f.warm_from) | ((k // f.refit_every) % f.cold_every == 0)


def fit_stage(settings: BOSettings, task: Task, buffers: Buffers, params: dict, key,
              refit=True, cold=True) -> posterior.Posterior:
    """Refit hyper-parameters (skipped when ``refit`` is False, see :func:`refit_at`)
    and condition on the buffers. A refit runs ``settings.fit.restarts`` L-BFGS starts
    beginning with ``params``; with ``cold`` False (:func:`cold_at`) only that first,
    warm start, for at most ``fit.warm_iter`` iterations or until one gains under
    ``fit.warm_ftol`` of the objective (the others are set equal to it,
    which the CPU's one-after-another starts skip and lock-step starts run in step). The drivers keep ``refit`` unbatched, so
    that under vmap the ``lax.cond`` stays a real branch.

    Compiled per (fit.restarts, fit.max_iter, mcmc) only: every rule shares the
    program."""
    m = settings.mcmc
    hmc = (m.samples, m.warmup, m.max_doublings) if m.samples else None
    f = settings.fit
    return _fit(f.restarts, f.max_iter, min(f.warm_iter, f.max_iter), f.warm_ftol, task, buffers, params, key, refit,
                cold, hmc)


@functools.partial(jit, static_argnames=("n_restarts", "max_iter", "warm_iter", "hmc"))
def _fit(n_restarts, max_iter, warm_iter, warm_ftol, task, buffers, params, key, refit, cold=True, hmc=None):
    spec = task.spec
    scaling = models.make_scaling(spec, buffers.y, buffers.mask)

    def refit_params(params):
        inits = fitting.restart_inits(spec, key, n_restarts, first=params)
        warm_only = jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a[0], a.shape), inits)
        inits = jax.tree_util.tree_map(lambda a, w: jnp.where(cold, a, w), inits, warm_only)
        # one program for both: the iteration cap is a traced bound of L-BFGS's while_loop
        cap = jnp.where(cold, max_iter, warm_iter)
        best, _, _ = fitting.fit_from(spec, scaling, buffers.x, buffers.z, buffers.y, buffers.mask, inits,
                                      cap, 1e-5, jnp.where(cold, 0.0, warm_ftol),
                                      step_scale=jnp.where(cold, 1.0, fitting.WARM_STEP))
        return models.absorb_target_floor(spec, best)

    params = jax.tree_util.tree_map(jnp.asarray, params)
    if hmc is not None:
        # hmc = (S, warm-up, depth). params: [S] samples (sample 0 the MAP) or one set (a
        # MAP start). A refit refits the MAP from sample 0 and redraws the rest by NUTS;
        # other steps condition on the previous samples. One vmap conditions all S.
        n_samples, n_warmup, depth = hmc
        if not marginal.n_samples(params):
            params = marginal.stack(params, n_samples)

        def resample(ps):
            best = refit_params(marginal.map_params(ps))
            return marginal.nuts_samples(spec, scaling, buffers.x, buffers.z, buffers.y, buffers.mask, best,
                                         jax.random.fold_in(key, 1), n_samples, n_warmup, depth)

        samples = jax.lax.cond(refit, resample, lambda p: p, params)
        return jax.vmap(lambda p: posterior.condition(spec, p, buffers.x, buffers.z, buffers.y, buffers.mask,
                                                      scaling))(samples)
    best = jax.lax.cond(refit, refit_params, lambda p: p, params)
    return posterior.condition(spec, best, buffers.x, buffers.z, buffers.y, buffers.mask, scaling)


def gstar_stage(settings: BOSettings, task: Task, post: posterior.Posterior, key):
    """``[n_gstar]`` samples of g* for rules that use them; zeros for the others
    (``[S, n_gstar]`` for a stacked posterior, one set per hyper-parameter sample).
    Compiled per sampler settings only."""
    return _gstar(rules.rule_for(settings).uses_gstar, settings.gstar.samples, settings.gstar.method,
                  gstar_grid_size(settings, task), task, post, key)


def gstar_grid_size(settings: BOSettings, task: Task) -> int:
    """Random grid points per posterior for g*: ``settings.gstar.grid``, else the
    sampler's default (10,000 d for the Gumbel fit) shared out over the ``mcmc.samples``
    hyper-parameter samples, each fitting its own g* on its own share: the Gumbel fit's
    bisection over the grid is most of a marginalised step, and S samples on one grid's
    worth of points cost what the MAP costs."""
    if settings.gstar.grid:
        return settings.gstar.grid
    n_grid = maxvalue.default_grid_size(task.spec.dim, settings.gstar.method)
    samples = settings.mcmc.samples
    return -(-n_grid // samples) if samples else n_grid


@functools.partial(jit, static_argnames=("uses_gstar", "n_gstar", "method", "n_grid"))
def _gstar(uses_gstar, n_gstar, method, n_grid, task, post, key):
    stacked = marginal.is_stacked(post)
    if not uses_gstar:
        return jnp.zeros((post.alpha.shape[0], n_gstar) if stacked else n_gstar)
    if stacked:  # [S, N]: g* under each hyper-parameter sample
        keys = jax.random.split(key, post.alpha.shape[0])
        return jax.vmap(lambda k, p: maxvalue.sample_gstar(k, p, task.target, n_gstar, method, n_grid))(keys, post)
    return maxvalue.sample_gstar(key, post, task.target, n_gstar, method, n_grid)


def maximise_stage(settings: BOSettings, task: Task, post: posterior.Posterior, gstar, key, cost=None,
                   n_design=None) -> optimize.Proposal:
    """The rule's choice of the next (x, z) (:func:`mumbo_jax.bo.rules.propose`);
    ``cost``: an optional learned ``c(x, z)`` replacing the task's known cost;
    ``n_design``: the rows of the buffers that hold the initial design.

    Compiled per decision settings' structure only (:func:`decision_settings`): settings
    that differ in a number (``maximiser.learning_rate``), the fit or the g* sampler
    share the program."""
    return _maximise(decision_settings(settings), task, post, gstar, key, cost, n_design)


def batch_stage(settings: BOSettings, task: Task, post: posterior.Posterior, gstar, key, buffers, n,
                n_design) -> optimize.Proposal:
    """``settings.batch.size`` pairs chosen at once by ``settings.batch.rule`` (a record of
    :data:`mumbo_jax.bo.batch.BATCH_RULES`).

    Args:
        post: the posterior fitted to ``buffers`` (the first ``n`` rows are data).
        gstar: ``[N]`` g* samples; key: the step's maximiser key.
        buffers: :class:`Buffers` with at least ``n + q - 1`` rows
            (the believer writes its fantasies after row n).
        n: rows filled; n_design: rows of the initial design.

    Returns:
        :class:`mumbo_jax.bo.optimize.Proposal` with a leading slot axis: ``x [q, d]``,
        ``z [q]``, ``score [q]`` (GIBBON: the batch's gain per unit cost when the slot
        was chosen; believer: the rule's score on the fantasised posterior) and
        ``alpha [q]`` (GIBBON: the slot's gain increment; believer: the rule's alpha).
    """
    return _batch(decision_settings(settings), task, post, gstar, key, buffers, n, n_design)


@jit
def _batch(settings, task, post, gstar, key, buffers, n, n_design):
    ctx = batch.BatchContext(settings, task, post, gstar, key, buffers, n, n_design)
    return batch.BATCH_RULES[settings.batch.rule].build(ctx)


_DECISION_FIT = FitSettings()  # the fit is not the decision's: its structure at the defaults


def decision_settings(settings: BOSettings) -> BOSettings:
    """``settings`` with the fit, the approximations and the g* sampler (but the number of
    samples) at their defaults: the settings are a traced argument of the decision
    programs, which are keyed on their structure (:func:`mumbo_jax.knobs.record`), and
    these records' structure (the fit's counts, the sampler's grid) is not read there, so
    settings differing in it share the programs too."""
    return dataclasses.replace(settings, fit=_DECISION_FIT, gstar=GstarSettings(samples=settings.gstar.samples),
                               approx=ApproxSettings())


def decision_posterior(settings: BOSettings, post: posterior.Posterior, n: int) -> posterior.Posterior:
    """The posterior the g* and maximisation stages see at a step with ``n`` observations:
    ``post`` itself, or from ``approx.from_rows`` observations on with ``approx.inducing``
    = m > 0, its inducing-point stand-in of m rows (:func:`mumbo_jax.gp.sparse.inducing_posterior`),
    whose programs compile once for every n."""
    a = settings.approx
    if not a.inducing or n < a.from_rows:
        return post
    return sparse.inducing_posterior(post, a.inducing)


@jit
def _maximise(settings, task, post, gstar, key, cost, n_design):
    return rules.propose(settings, task, post, gstar, key, cost, n_design)


@functools.partial(jit, static_argnames=("rule", "calibrate"))
def recommend(task: Task, post: posterior.Posterior, rows_x, rule: str = "mean", calibrate: bool = False):
    """``(x [d], mean, sd)``: the x recommended by ``rule`` (``BOSettings.recommendation.rule``;
    ``rows_x``: the buffer of evaluated x) and the model's mean and sd of g there, the sd
    widened by the leave-one-out scale where ``calibrate`` (``recommendation.calibration``;
    :func:`mumbo_jax.bo.incumbent.recommend`)."""
    return incumbent_module.recommend(post, task.target, jnp.asarray(task.spec.bounds), rule, rows_x, calibrate)


@functools.partial(jit, static_argnames=("rule",))
def incumbent_row(task: Task, post: posterior.Posterior, rule: str = "mean"):
    """``(row, mean)``: the buffer row of the evaluated x recommended by ``rule``
    (``BOSettings.recommendation.rule``; default the best posterior mean of g) and the
    posterior mean of g there (:func:`mumbo_jax.bo.incumbent.incumbent_by_rule`)."""
    return incumbent_by_rule(post, task.target, rule)


def decide(settings: BOSettings, task: Task, state: State, loop_key, cost=None):
    """One decision from ``state`` without timing: ``(posterior, proposal)``."""
    k_fit, k_gstar, k_max = step_keys(loop_key, state.k)
    post = fit_stage(settings, task, state.buffers, state.params, k_fit, refit_at(settings, state.k),
                     cold_at(settings, state.k, state.n))
    gstar = gstar_stage(settings, task, post, k_gstar)
    # cost passed positionally as in the drivers: jit keys on how arguments are passed
    return post, maximise_stage(settings, task, post, gstar, k_max, cost, state.n_design)


def believe_stage(task: Task, post: posterior.Posterior, buffers: Buffers, n: int, x_pending,
                  z_pending) -> posterior.Posterior:
    """The posterior conditioned on pending evaluations at their posterior mean (kriging
    believer; the same posterior as :func:`mumbo_jax.acquisition.fantasy.fantasize`).

    Same hyper-parameters and scaling as ``post``; the pending rows follow the ``n``
    data rows of ``buffers`` in buffers of :func:`buffer_size` ``(n + P)`` rows, and the
    pending points are predicted in blocks of 8, 16, ... rows, so every program compiles
    per buffer size, not per number of pending points.

    Args:
        post: the posterior fitted to ``buffers`` (raw units inside the buffers).
        x_pending: ``[P, d]``; z_pending: ``[P]`` the pending evaluations (P >= 1).
    """
    b = believer_rows(task, post, buffers, n, x_pending, z_pending)
    return posterior.condition(task.spec, post.params, b.x, b.z, b.y, b.mask, scaling=post.scaling)


def believer_rows(task: Task, post: posterior.Posterior, buffers: Buffers, n: int, x_pending, z_pending) -> Buffers:
    """The ``n`` data rows of ``buffers`` followed by the pending evaluations ``(x [P, d],
    z [P])`` at their posterior mean under ``post``, in buffers of :func:`buffer_size`
    ``(n + P)`` rows (the means predicted in blocks of 8, 16, ... rows: one program per
    block size, not per P)."""
    xp = np.asarray(x_pending, float).reshape(-1, task.spec.dim)
    zp = np.asarray(z_pending, float).reshape(-1)
    p = xp.shape[0]
    width = max(PENDING_PAD, 1 << (p - 1).bit_length())
    xq = np.concatenate([xp, np.repeat(xp[:1], width - p, axis=0)])
    zq = np.concatenate([zp, np.repeat(zp[:1], width - p)])
    mean, _ = moments.predict(post, xq, zq.astype(int) if task.spec.discrete else zq)
    return pad_buffers(np.concatenate([np.asarray(buffers.x[:n]), xp]), np.concatenate([np.asarray(buffers.z[:n]), zp]),
                       np.concatenate([np.asarray(buffers.y[:n]), np.asarray(mean)[:p]]), buffer_size(n + p))


GIBBON_CONTINUOUS_FIDELITIES = 5  # a continuous fidelity is scored on this many evenly spaced values


def gibbon_stage(settings: BOSettings, task: Task, post: posterior.Posterior, gstar, key, x_pending, z_pending,
                 cost=None) -> optimize.Proposal:
    """The next (x, z) by GIBBON's pending-aware gain per unit cost
    (:func:`mumbo_jax.acquisition.gibbon.gibbon_batch` with q = 1): the gain of a
    candidate given the pending evaluations through their joint covariance.

    Candidates: ``settings.maximiser.n_candidates`` uniform x (from ``key``) at every fidelity (a
    continuous fidelity at 5 evenly spaced values); no gradient polish. Compiles per
    number of pending points (a repeated pending point would count twice, so they are
    not padded).

    Args:
        x_pending: ``[P, d]``; z_pending: ``[P]`` the pending evaluations.
        cost: optional learned ``c(x [M, d], z [M]) -> [M]``; default the task's cost(z).

    Returns:
        :class:`mumbo_jax.bo.optimize.Proposal` (``alpha``: the GIBBON gain, ``score``:
        gain per unit cost).
    """
    rule = rules.rule_for(settings)
    if not rule.uses_gstar:
        raise ValueError(f"pending='gibbon' needs a max-value rule (one that samples g*: "
                         f"{', '.join(rules.USES_GSTAR)}); strategy {settings.strategy!r} does not")
    spec = task.spec
    b = np.asarray(spec.bounds)
    u = jax.random.uniform(key, (settings.maximiser.n_candidates, spec.dim))
    xs = b[:, 0] + (b[:, 1] - b[:, 0]) * np.asarray(u)
    if rule.space == "target":
        fids = np.asarray(task.target_z, float)
    elif spec.discrete:
        fids = np.arange(spec.n_fidelities, dtype=float)
    else:
        fids = np.linspace(*spec.fidelity_bounds, GIBBON_CONTINUOUS_FIDELITIES)
    x = np.tile(xs, (fids.shape[0], 1))
    z = np.repeat(fids, xs.shape[0])
    z_in = z.astype(int) if spec.discrete else z
    zp = np.asarray(z_pending, float)
    c = task.space.cost(jnp.asarray(z_in)) if cost is None else cost(jnp.asarray(x), jnp.asarray(z_in))
    batch = gibbon.gibbon_batch(post, task.target, gstar, x, z_in, 1, np.asarray(x_pending, float),
                                zp.astype(int) if spec.discrete else zp, cost=c)
    return optimize.Proposal(batch.x[0], batch.z[0], batch.score[0], batch.gain[0])
