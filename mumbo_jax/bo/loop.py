"""The BO decision rule, and the two loops that drive it.

One decision rule (:func:`propose`): fit the GP (warm-started from the previous
step's hyper-parameters), sample g*, maximise alpha / cost over (x, z). Two loops use it:

* :class:`AskTell` for black boxes that cannot be traced (a model being trained):
  ``ask()`` returns the next (x, z), ``tell(x, z, y)`` records the result. Its state is
  plain data (:meth:`AskTell.state_dict`) that can be saved and restored.
* :func:`run_compiled` for JAX-traceable benchmark problems: fixed-size buffers with
  masks, each buffer size one ``lax.while_loop`` mapped (or vmapped) over seeds, so a
  multi-seed sweep is one XLA program per buffer size.

Both start from the paper's design (2 d random points at every fidelity) and derive the
key of step k as ``fold_in(key, k)``, so for the same key they make the same decisions.
Buffers grow geometrically (32, 64, 128, ...): a step pays for the data it has, not for
the largest buffer of the run.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.gp import costmodel, fitting, models, posterior
from mumbo_jax.acquisition import maxvalue
from mumbo_jax.bo import optimize, strategies
from mumbo_jax.benchmarks import problems
from mumbo_jax.bo.strategies import STRATEGIES

MIN_BUFFER = 32


@dataclasses.dataclass(frozen=True)
class BOSettings:
    """Static settings of the decision rule.

    Attributes:
        strategy: a name in :data:`mumbo_jax.bo.strategies.STRATEGIES`: ``"mumbo"``
            (multi-fidelity, the default), ``"mes"`` (max-value entropy search at the
            target only), ``"random"`` (uniform x at the target), or a baseline of
            :mod:`mumbo_jax.acquisition.baselines` (``"ei"``, ``"ucb"``, ``"mt_ei"``,
            ``"mf_gp_ucb"``, ``"boca"``, ``"mtbo"``).
        n_gstar: samples of g* per step.
        gstar_method: ``"gumbel"`` or ``"exact"``.
        gstar_grid: random grid size for g* (None: the sampler's default, 10,000 d).
        n_candidates: random candidates scored per fidelity.
        n_starts: best candidates polished by projected Adam.
        n_polish_steps: Adam steps per start.
        learning_rate: Adam step on the unit cube.
        fit_restarts: L-BFGS starts per refit (previous params, defaults, random). The
            refit dominates a step's cost inside the compiled loop; the warm start from
            the previous step usually converges in a few iterations.
        fit_max_iter: L-BFGS iterations per start.
        refit_every: refit the hyper-parameters at BO steps k with
            ``k % refit_every == 0``; the steps between condition on all the data with the
            previous hyper-parameters (one Cholesky). 1 (the default) refits every step;
            long runs with hundreds of observations use 10-25, where a refit costs
            seconds and the hyper-parameters barely move from step to step.
        ucb_beta: UCB coefficient of ``"ucb"``, ``"mf_gp_ucb"`` and ``"boca"`` (None:
            Kandasamy et al.'s 0.2 d log(2 t), t = observations so far).
        mtbo_samples: ``"mtbo"``: Monte Carlo samples of g at the representer points
            (the paper's MTBO-N).
        mtbo_representers: ``"mtbo"``: representer points (drawn in proportion to EI).
        mtbo_fantasies: ``"mtbo"``: Gauss-Hermite nodes over the fantasised observation.
    """

    strategy: str = "mumbo"
    n_gstar: int = 10
    gstar_method: str = "gumbel"
    gstar_grid: int | None = None
    n_candidates: int = 2000
    n_starts: int = 8
    n_polish_steps: int = 40
    learning_rate: float = 0.03
    fit_restarts: int = 2
    fit_max_iter: int = 50
    refit_every: int = 1
    ucb_beta: float | None = None
    mtbo_samples: int = 50
    mtbo_representers: int = 50
    mtbo_fantasies: int = 5

    def __post_init__(self):
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}; allowed: {STRATEGIES}")
        if self.gstar_method not in maxvalue.GSTAR_METHODS:
            raise ValueError(f"unknown gstar_method {self.gstar_method!r}; allowed: {maxvalue.GSTAR_METHODS}")
        for name in ("n_gstar", "n_candidates", "n_starts", "n_polish_steps", "fit_restarts", "fit_max_iter",
                     "refit_every", "mtbo_samples", "mtbo_representers", "mtbo_fantasies"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.ucb_beta is not None and not (isinstance(self.ucb_beta, (int, float))
                                              and not isinstance(self.ucb_beta, bool)
                                              and 0 <= self.ucb_beta < float("inf")):
            raise ValueError(f"ucb_beta must be a finite number >= 0 or None, got {self.ucb_beta!r}")
        if self.strategy == "mtbo" and self.mtbo_representers > strategies.MTBO_POOL:
            raise ValueError(f"mtbo_representers must be <= {strategies.MTBO_POOL}, got {self.mtbo_representers}")


@functools.partial(jax.tree_util.register_dataclass, data_fields=["space"],
                   meta_fields=["spec", "target_z", "target_w"])
@dataclasses.dataclass(frozen=True)
class Task:
    """What is optimised: the model over X x Z, the target g and the fidelity space.

    Attributes:
        spec: the GP model (its bounds are the search box).
        target_z, target_w: the :class:`mumbo_jax.gp.posterior.Target` as tuples (static).
        space: :class:`mumbo_jax.bo.optimize.FidelitySpace` with the cost model.
    """

    spec: models.ModelSpec
    target_z: tuple
    target_w: tuple
    space: optimize.FidelitySpace

    @property
    def target(self) -> posterior.Target:
        return posterior.Target(jnp.asarray(self.target_z), jnp.asarray(self.target_w))


def make_task(spec: models.ModelSpec, target: posterior.Target, space: optimize.FidelitySpace) -> Task:
    """Bundle a model, a target and a fidelity space (checked for consistency)."""
    posterior.check_target(spec, target)
    if spec.discrete != (space.n_fidelities is not None):
        raise ValueError("a discrete model needs discrete fidelities and a continuous model a continuous one")
    if spec.discrete and space.n_fidelities != spec.n_fidelities:
        raise ValueError(f"the model has {spec.n_fidelities} fidelities but the cost model {space.n_fidelities}")
    z = tuple(np.asarray(target.z).tolist())
    return Task(spec, z, tuple(float(w) for w in np.asarray(target.weights)), space)


def problem_task(problem: problems.Problem, model: str | None = None, rank: int = 2) -> Task:
    """The task of a benchmark problem: ICM (discrete) or product kernel (continuous)
    by default, the problem's noise learned, its known costs, its target fidelity."""
    if problem.is_discrete:
        model = model or "icm"
        if model == "icm":
            spec = models.icm_model(problem.bounds, problem.n_fidelities, rank=min(rank, problem.n_fidelities))
        elif model == "ar1":
            spec = models.ar1_model(problem.bounds, problem.n_fidelities)
        else:
            raise ValueError(f"model {model!r} is not for discrete fidelities; allowed: ('icm', 'ar1')")
        return make_task(spec, posterior.target_fidelity(problem.target_fidelity),
                         optimize.discrete_fidelities(problem.costs))
    model = model or "product"
    if model not in ("product", "fabolas"):
        raise ValueError(f"model {model!r} is not for a continuous fidelity; allowed: ('product', 'fabolas')")
    make = models.product_model if model == "product" else models.fabolas_model
    spec = make(problem.bounds, problem.fidelity_bounds)
    return make_task(spec, posterior.target_value(problem.target_fidelity),
                     optimize.continuous_fidelity(problem.fidelity_bounds, problem.cost_function))


# --------------------------------------------------------------------------- the rule


class Buffers(NamedTuple):
    """Fixed-size data buffers: rows with mask 0 are padding."""

    x: jax.Array  # [B, d]
    z: jax.Array  # [B] fidelities (float; cast to int for discrete models)
    y: jax.Array  # [B] observations, maximisation convention
    mask: jax.Array  # [B]


def buffer_size(n: int) -> int:
    """Smallest power-of-two buffer (at least MIN_BUFFER) holding n + 1 points."""
    size = MIN_BUFFER
    while size < n + 1:
        size *= 2
    return size


def pad_buffers(x, z, y, size: int) -> Buffers:
    n, d = x.shape
    pad = size - n
    return Buffers(
        jnp.concatenate([jnp.asarray(x, float), jnp.zeros((pad, d))]),
        jnp.concatenate([jnp.asarray(z, float), jnp.zeros(pad)]),
        jnp.concatenate([jnp.asarray(y, float), jnp.zeros(pad)]),
        jnp.concatenate([jnp.ones(n), jnp.zeros(pad)]),
    )


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


class Timings(NamedTuple):
    fit: float
    gstar: float
    maximise: float


@functools.partial(jax.jit, static_argnames=("settings",))
def fit_stage(settings: BOSettings, task: Task, buffers: Buffers, params: dict, key,
              refit=True) -> posterior.Posterior:
    """Refit hyper-parameters (warm start from ``params``; skipped when ``refit`` is
    False, see :func:`refit_at`) and condition on the buffers."""
    spec = task.spec
    scaling = models.make_scaling(spec, buffers.y, buffers.mask)

    def refit_params(params):
        inits = fitting.restart_inits(spec, key, settings.fit_restarts, first=params)
        best, _, _ = fitting.fit_from(spec, scaling, buffers.x, buffers.z, buffers.y, buffers.mask, inits,
                                      settings.fit_max_iter, 1e-5)
        return best

    params = jax.tree_util.tree_map(jnp.asarray, params)
    best = jax.lax.cond(refit, refit_params, lambda p: p, params)
    return posterior.condition(spec, best, buffers.x, buffers.z, buffers.y, buffers.mask, scaling)


def refit_at(settings: BOSettings, k):
    """Whether BO step ``k`` refits the hyper-parameters (the same rule in both loops)."""
    return k % settings.refit_every == 0


@functools.partial(jax.jit, static_argnames=("settings",))
def gstar_stage(settings: BOSettings, task: Task, post: posterior.Posterior, key):
    if settings.strategy not in strategies.USES_GSTAR:
        # zeros that depend on the posterior, so that the step clock's "g*" stamp fires
        # after the fit, not as soon as the step starts
        return jnp.zeros(settings.n_gstar) + 0.0 * jnp.nan_to_num(post.alpha[0])
    n_grid = settings.gstar_grid or maxvalue.default_grid_size(task.spec.dim, settings.gstar_method)
    return maxvalue.sample_gstar(key, post, task.target, settings.n_gstar, settings.gstar_method, n_grid)


@functools.partial(jax.jit, static_argnames=("settings",))
def maximise_stage(settings: BOSettings, task: Task, post: posterior.Posterior, gstar, key,
                   cost=None) -> optimize.Proposal:
    """The strategy's choice of the next (x, z) (:func:`mumbo_jax.bo.strategies.propose`);
    ``cost``: an optional learned ``c(x, z)`` replacing the task's known cost."""
    return strategies.propose(settings, task, post, gstar, key, cost)


def incumbent(task: Task, post: posterior.Posterior, buffers: Buffers):
    """The evaluated x with the best posterior mean of g: ``(x [d], mean)``."""
    mu, _ = posterior.target_moments(post, buffers.x, task.target)
    mu = jnp.where(buffers.mask > 0, mu, -jnp.inf)
    i = jnp.argmax(mu)
    return buffers.x[i], mu[i]


def step_keys(key, k):
    """Keys of BO step k (fit, g*, maximisation), the same in both loops."""
    return jax.random.split(jax.random.fold_in(key, k), 3)


def _validate_settings_for_task(settings: BOSettings, task: Task):
    if task.space.n_fidelities is not None and settings.n_starts > settings.n_candidates * task.space.n_fidelities:
        raise ValueError("n_starts exceeds the number of scored candidates")


# --------------------------------------------------------------------------- ask / tell


def _check_design(task: Task, design):
    """A user's initial design ``(x [n0, d], z [n0])``, validated against the task."""
    try:
        x0, z0 = design
    except (TypeError, ValueError):
        raise ValueError("design must be a pair (x [n0, d], z [n0])") from None
    x0, z0 = np.asarray(x0, float), np.asarray(z0, float).reshape(-1)
    if x0.ndim != 2 or x0.shape[0] < 1:
        raise ValueError(f"design x must have shape [n0, {task.spec.dim}] with n0 >= 1, got {x0.shape}")
    models.check_inputs(task.spec, x0, z0, "design x", "design z")
    b = np.asarray(task.spec.bounds)
    if np.any(x0 < b[:, 0]) or np.any(x0 > b[:, 1]):
        raise ValueError("design x lies outside the search box")
    return jnp.asarray(x0), jnp.asarray(z0)


class AskTell:
    """Ask/tell optimiser for black boxes.

    ``ask()`` returns the next ``(x, z)``; ``tell(x, z, y, cost=None)`` records a result
    (y in maximisation convention: negate a loss). The first asks return the initial
    design. ``state_dict()`` is plain data (lists and floats) that :meth:`from_state`
    restores exactly.

    Args:
        task: model, target and fidelity space (:func:`make_task`, :func:`problem_task`).
        settings: the decision rule's settings.
        seed: integer seed; the same seed gives the same decisions as :func:`run_compiled`.
        cost_model: optional :class:`mumbo_jax.gp.costmodel.CostModel` (e.g.
            :func:`mumbo_jax.gp.costmodel.cost_model_for`): before each proposal a GP on log
            cost is fitted to the costs told so far and the acquisition is divided by
            its prediction c(x, z) instead of the task's known cost (tell the measured
            cost, e.g. seconds). Its fitting time counts in ``timings[k].fit``; the last
            fit is ``self.cost_fit``. ``None``: the known cost, as before.
        design: optional initial design ``(x [n0, d], z [n0])`` replacing the paper's
            default (:func:`initial_design`), e.g. FABOLAS' few settings at small data
            fractions. The same ``design`` (and ``cost_model``) must be passed to
            :meth:`from_state`.
    """

    def __init__(self, task: Task, settings: BOSettings = BOSettings(), seed: int = 0,
                 cost_model: costmodel.CostModel | None = None, design=None):
        _validate_settings_for_task(settings, task)
        if cost_model is not None and not isinstance(cost_model, costmodel.CostModel):
            raise ValueError(f"cost_model must be a mumbo_jax.gp.costmodel.CostModel, got {type(cost_model).__name__}")
        self.task, self.settings, self.seed = task, settings, int(seed)
        self.cost_model, self.cost_fit = cost_model, None
        self.key = jax.random.PRNGKey(self.seed)
        design_key, self.loop_key = jax.random.split(self.key)
        x0, z0 = initial_design(task, design_key) if design is None else _check_design(task, design)
        self.design = [(np.asarray(x), float(z)) for x, z in zip(x0, z0)]
        self.n_design = len(self.design)
        self.x, self.z, self.y, self.costs = [], [], [], []
        # numpy leaves, as after every fit: one jit signature for every ask (a first ask
        # with jax-array defaults would compile the fit stage a second time)
        self.params = jax.tree_util.tree_map(np.asarray, models.default_params(task.spec))
        self.timings: list[Timings] = []
        self._post = None

    # -- the protocol
    def ask(self):
        """Next ``(x [d] numpy array, z)`` to evaluate: the initial design first, in
        order (asking again before telling returns the same point)."""
        if self.in_initial_design:
            x, z = self.design[len(self.x)]
            return np.array(x), self._fidelity(z)
        k = len(self.x) - self.n_design
        buffers = pad_buffers(np.asarray(self.x), np.asarray(self.z), np.asarray(self.y), buffer_size(len(self.x)))
        k_fit, k_gstar, k_max = step_keys(self.loop_key, k)
        t0 = time.perf_counter()
        post = jax.block_until_ready(fit_stage(self.settings, self.task, buffers, self.params, k_fit,
                                                refit_at(self.settings, k)))
        cost = None
        if self.cost_model is not None:
            self.cost_fit = costmodel.fit_cost(self.cost_model, np.asarray(self.x), np.asarray(self.z),
                                               np.asarray(self.costs), jax.random.fold_in(k_fit, 1))
            cost = costmodel.cost_function(jax.block_until_ready(self.cost_fit))
        t1 = time.perf_counter()
        gstar = jax.block_until_ready(gstar_stage(self.settings, self.task, post, k_gstar))
        t2 = time.perf_counter()
        prop = jax.block_until_ready(maximise_stage(self.settings, self.task, post, gstar, k_max, cost))
        t3 = time.perf_counter()
        self.params = jax.tree_util.tree_map(np.asarray, post.params)
        self.timings.append(Timings(t1 - t0, t2 - t1, t3 - t2))
        self._post = (post, buffers)
        return np.asarray(prop.x), self._fidelity(prop.z)

    def tell(self, x, z, y, cost=None):
        """Record an evaluation. ``y`` must be finite (maximisation convention)."""
        x = np.asarray(x, float).reshape(-1)
        if x.shape != (self.task.spec.dim,):
            raise ValueError(f"x must have {self.task.spec.dim} coordinates, got {x.shape[0]}")
        if not np.isfinite(y):
            raise ValueError(f"y must be finite, got {y}; record failed evaluations elsewhere")
        models.check_inputs(self.task.spec, x[None], np.asarray([z]))
        c = float(self.task.space.cost(jnp.asarray([z]))[0]) if cost is None else float(cost)
        self.x.append(x)
        self.z.append(float(z))
        self.y.append(float(y))
        self.costs.append(c)

    def incumbent(self):
        """``(x, posterior mean of g)`` of the best evaluated x (refits on all data; also
        while the initial design is incomplete, once anything has been told)."""
        if not self.x:
            raise ValueError("no evaluations yet: tell at least one before asking for the incumbent")
        buffers = pad_buffers(np.asarray(self.x), np.asarray(self.z), np.asarray(self.y), buffer_size(len(self.x)))
        k_fit, _, _ = step_keys(self.loop_key, max(len(self.x) - self.n_design, 0))
        post = fit_stage(self.settings, self.task, buffers, self.params, k_fit)
        x, mu = incumbent(self.task, post, buffers)
        return np.asarray(x), float(mu)

    @property
    def in_initial_design(self) -> bool:
        return len(self.x) < self.n_design

    def _fidelity(self, z):
        return int(z) if self.task.spec.discrete else float(z)

    # -- plain-data state
    def state_dict(self) -> dict:
        return {
            "seed": self.seed,
            "x": [list(map(float, x)) for x in self.x],
            "z": list(self.z),
            "y": list(self.y),
            "costs": list(self.costs),
            "params": {k: np.asarray(v).tolist() for k, v in self.params.items()},
        }

    @classmethod
    def from_state(cls, task: Task, settings: BOSettings, state: dict,
                   cost_model: costmodel.CostModel | None = None, design=None) -> "AskTell":
        opt = cls(task, settings, state["seed"], cost_model=cost_model, design=design)
        for x, z, y, c in zip(state["x"], state["z"], state["y"], state["costs"]):
            opt.tell(x, z, y, c)
        opt.params = {k: np.asarray(v) for k, v in state["params"].items()}
        return opt


# --------------------------------------------------------------------------- compiled loop


class History(NamedTuple):
    """A run's record (leading seed axis when vmapped). Evaluation k is the k-th BO
    evaluation after the initial design; entry k of the curves is the state after k of
    them (entry 0: after the initial design)."""

    x: jax.Array  # [S, d] chosen inputs
    z: jax.Array  # [S] chosen fidelities
    y: jax.Array  # [S] observations (maximisation convention)
    cost: jax.Array  # [S] cost of each evaluation
    cost_spent: jax.Array  # [S + 1] cumulative BO cost (initial design excluded)
    incumbent_x: jax.Array  # [S + 1, d]
    incumbent_value: jax.Array  # [S + 1] true target value (problem's own sense)
    regret: jax.Array  # [S + 1] simple regret of the incumbent
    n_evals: jax.Array  # number of BO evaluations made
    initial_cost: jax.Array  # cost of the initial design


class _Carry(NamedTuple):
    buffers: Buffers
    n: jax.Array
    k: jax.Array
    spent: jax.Array
    params: dict
    history: History
    running: jax.Array


class StepClock:
    """Host-side clock for the compiled loop: ``jax.debug.callback`` stamps the time at
    the start of each step and after each stage (the stamp depends on the stage's
    output, so it fires once that output exists). Gives per-step overheads split into
    fit / g* / maximisation, and calls ``on_step(seed, k, info)`` after each step.

    Under vmap the seeds advance together, so a stage's time is that of the batch."""

    STAGES = ("start", "fit", "gstar", "maximise", "end")

    def __init__(self, on_step=None):
        self.stamps: dict = {}
        self.on_step = on_step

    def stamp(self, stage, seed, k, *payload):
        self.stamps.setdefault((int(seed), int(k)), {})[stage] = time.perf_counter()
        if stage == "end" and self.on_step is not None:
            self.on_step(int(seed), int(k), {name: np.asarray(v).tolist() for name, v in zip(
                ("running", "spent", "z", "regret"), payload)})

    def overheads(self, seed: int, n_steps: int) -> list[dict]:
        """``[{fit, gstar, maximise, total}]`` seconds for steps 0..n_steps-1 of ``seed``."""
        out = []
        for k in range(n_steps):
            t = self.stamps.get((seed, k), {})
            if not all(s in t for s in self.STAGES[:4]):
                out.append({"fit": None, "gstar": None, "maximise": None, "total": None})
                continue
            fit, gst, mx = t["fit"] - t["start"], t["gstar"] - t["fit"], t["maximise"] - t["gstar"]
            out.append({"fit": fit, "gstar": gst, "maximise": mx, "total": fit + gst + mx})
        return out


_ACTIVE_CLOCK: list = [None]  # the StepClock of the run in progress (callbacks read it)


def _stamp(stage, seed, k, *payload):
    clock = _ACTIVE_CLOCK[0]
    if clock is not None:
        clock.stamp(stage, seed, k, *payload)


def _step(settings, task, problem, budget, max_evals, key, seed, c: _Carry, refit) -> _Carry:
    """One BO step of one seed: fit (or condition), record the incumbent, and (while
    budget and evaluation cap allow) propose and evaluate one point."""
    loop_key = jax.random.split(key)[1]
    noise_key = jax.random.fold_in(key, 7)

    def stamp(stage, k, *deps):
        jax.debug.callback(functools.partial(_stamp, stage), seed, k, *deps)

    stamp("start", c.k, c.spent)
    k_fit, k_gstar, k_max = step_keys(loop_key, c.k)
    post = fit_stage(settings, task, c.buffers, c.params, k_fit, refit)
    stamp("fit", c.k, post.alpha[0])
    gstar = gstar_stage(settings, task, post, k_gstar)
    # A stamp fires once all its operands exist; strategies without g* return a constant,
    # so the g* stamp also waits for the fit (else it could fire first: negative times).
    stamp("gstar", c.k, gstar[0], post.alpha[0])
    prop = maximise_stage(settings, task, post, gstar, k_max)
    stamp("maximise", c.k, prop.x[0], gstar[0], post.alpha[0])
    x_inc, _ = incumbent(task, post, c.buffers)
    h = c.history
    h = h._replace(
        incumbent_x=h.incumbent_x.at[c.k].set(x_inc),
        incumbent_value=h.incumbent_value.at[c.k].set(problems.target_value(problem, x_inc)),
        regret=h.regret.at[c.k].set(problems.simple_regret(problem, x_inc)),
        cost_spent=h.cost_spent.at[c.k].set(c.spent),
    )
    go = (c.spent < budget) & (c.k < max_evals)
    z = prop.z.astype(float)
    y = problems.noisy_objective(problem, jax.random.fold_in(noise_key, c.k), prop.x, prop.z)
    cost = task.space.cost(jnp.atleast_1d(prop.z))[0]
    kk = jnp.minimum(c.k, max_evals - 1)
    h_new = h._replace(
        x=h.x.at[kk].set(prop.x), z=h.z.at[kk].set(z), y=h.y.at[kk].set(y), cost=h.cost.at[kk].set(cost),
        n_evals=c.k + 1,
    )
    b = c.buffers
    b_new = Buffers(b.x.at[c.n].set(prop.x), b.z.at[c.n].set(z), b.y.at[c.n].set(y), b.mask.at[c.n].set(1.0))
    pick = lambda new, old: jax.tree_util.tree_map(lambda a, o: jnp.where(go, a, o), new, old)
    stamp("end", c.k, go, c.spent + jnp.where(go, cost, 0.0), z, h.regret[c.k])
    return _Carry(
        pick(b_new, b), c.n + go, c.k + go, c.spent + jnp.where(go, cost, 0.0),
        jax.tree_util.tree_map(jnp.asarray, post.params), pick(h_new, h), go,
    )


def _run_bucket(settings, task, problem, budget, max_evals, key, seed, carry: _Carry) -> _Carry:
    """One seed's steps while there is room in this buffer size."""
    size = carry.buffers.x.shape[0]
    return jax.lax.while_loop(
        lambda c: c.running & (c.n < size),
        lambda c: _step(settings, task, problem, budget, max_evals, key, seed, c, refit_at(settings, c.k)),
        carry)


def _run_bucket_lockstep(settings, task, problem, budget, max_evals, keys, seed_ids, carry: _Carry) -> _Carry:
    """All seeds' steps in lock-step (vmap inside one while_loop).

    The seeds start from designs of the same size and each running seed makes one
    evaluation per iteration, so every running seed is at the same step k. Taking the
    refit decision from that shared k keeps it an unbatched ``lax.cond`` (a real
    branch), where a vmapped while_loop would turn it into a select that always refits.
    """
    size = carry.buffers.x.shape[1]

    def active(c):
        return c.running & (c.n < size)

    def body(cs):
        k = jnp.max(jnp.where(active(cs), cs.k, 0))
        new = jax.vmap(lambda key, seed, c: _step(settings, task, problem, budget, max_evals, key, seed, c,
                                                  refit_at(settings, k)))(keys, seed_ids, cs)
        on = active(cs)
        return jax.tree_util.tree_map(
            lambda a, o: jnp.where(on.reshape(on.shape + (1,) * (a.ndim - 1)), a, o), new, cs)

    return jax.lax.while_loop(lambda cs: jnp.any(active(cs)), body, carry)


def _initial_carry(settings, task, problem, key, max_evals):
    design_key, loop_key = jax.random.split(key)
    x0, z0 = initial_design(task, design_key)
    zp = z0.astype(jnp.int32) if task.spec.discrete else z0  # problems index fidelities by int
    y0 = jax.vmap(lambda x, z, i: problems.noisy_objective(problem, jax.random.fold_in(design_key, i), x, z))(
        x0, zp, jnp.arange(x0.shape[0]))
    n0 = x0.shape[0]
    buffers = pad_buffers(x0, z0, y0, buffer_size(n0))
    d = task.spec.dim
    history = History(
        jnp.zeros((max_evals, d)), jnp.zeros(max_evals), jnp.zeros(max_evals), jnp.zeros(max_evals),
        jnp.full(max_evals + 1, jnp.nan), jnp.full((max_evals + 1, d), jnp.nan), jnp.full(max_evals + 1, jnp.nan),
        jnp.full(max_evals + 1, jnp.nan), jnp.asarray(0), jnp.sum(task.space.cost(zp)),
    )
    return _Carry(buffers, jnp.asarray(n0), jnp.asarray(0), jnp.asarray(0.0), models.default_params(task.spec),
                  history, jnp.asarray(True))


def _grow(carry: _Carry, size: int) -> _Carry:
    """Pad the (seed-batched) buffers along their data axis to ``size`` rows."""
    pad = lambda a: jnp.pad(a, [(0, 0), (0, size - a.shape[1])] + [(0, 0)] * (a.ndim - 2))
    return carry._replace(buffers=Buffers(*map(pad, carry.buffers)))


def backend_batching() -> dict:
    """:func:`run_compiled`'s ``batching`` and ``min_buffer`` for the default backend:
    seeds one after another (``lax.map``) from 32-row buffers on CPU, where the vmapped
    program deadlocks; seeds in lock-step (``vmap``) from 256-row buffers on an
    accelerator, where a step costs about the same at 32 or 256 rows and each buffer
    size is one more compilation."""
    if jax.default_backend() == "cpu":
        return {"batching": "map", "min_buffer": MIN_BUFFER}
    return {"batching": "vmap", "min_buffer": 256}


def run_compiled(problem: problems.Problem, budget: float, seeds, settings: BOSettings = BOSettings(),
                 task: Task | None = None, max_evals: int = 200, progress=None,
                 clock: StepClock | None = None, batching: str = "map", min_buffer: int = MIN_BUFFER) -> History:
    """Run BO on a traceable benchmark for several seeds at once.

    Each buffer size (32, 64, ...) is one compiled ``lax.while_loop`` over BO steps,
    batched over seeds by ``lax.map`` or ``vmap``.

    Args:
        problem: a :class:`mumbo_jax.benchmarks.problems.Problem`.
        budget: cost to spend after the initial design (> 0).
        seeds: integer seeds (one run each).
        settings: the decision rule.
        task: defaults to :func:`problem_task`.
        max_evals: cap on BO evaluations per seed (sizes the buffers).
        progress: optional ``callback(history)`` called after each buffer size.
        clock: optional :class:`StepClock` for per-step overheads and progress. Its
            host callbacks run inside the compiled while_loop; on CPU call
            ``jax.config.update("jax_cpu_enable_async_dispatch", False)`` before any
            JAX work (as the CLI does): with asynchronous dispatch such callbacks can
            hang the client (jax-ml/jax#25861).
        batching: ``"map"`` (default: seeds one after another inside the compiled
            program, ``lax.map``) or ``"vmap"`` (seeds in lock-step). On CPU with
            jaxlib 0.10.2 the vmapped program deadlocks (0% CPU, never returns) once
            the buffers reach 64 rows with 4 or more Hartmann-3 seeds; lax.map does not.
            vmap is kept for accelerators.
        min_buffer: rows of the first buffer (rounded up to a power of two). Each
            buffer size compiles once; on an accelerator, where a step costs about the
            same at 32 or 512 rows, starting larger saves compilations.

    Returns:
        :class:`History` with a leading seed axis.
    """
    if not budget > 0:
        raise ValueError(f"budget must be > 0, got {budget}")
    if batching not in ("map", "vmap"):
        raise ValueError(f"batching must be 'map' or 'vmap', got {batching!r}")
    task = task or problem_task(problem)
    _validate_settings_for_task(settings, task)
    keys = jnp.stack([jax.random.PRNGKey(int(s)) for s in np.atleast_1d(seeds)])
    seed_ids = jnp.asarray(np.atleast_1d(seeds), jnp.int32)
    carry = _initial_carries(settings, task, problem, keys, max_evals)
    size = buffer_size(int(carry.n[0]))
    if min_buffer > size:
        size = buffer_size(min_buffer - 1)
        carry = _grow(carry, size)
    budget = jnp.asarray(budget, float)
    _ACTIVE_CLOCK[0] = clock
    try:
        while True:
            carry = _run_buckets(settings, task, problem, budget, max_evals, keys, seed_ids, carry, batching)
            if progress is not None:
                progress(carry.history)
            if not bool(jnp.any(carry.running)):
                break
            size *= 2
            carry = _grow(carry, size)
    finally:
        _ACTIVE_CLOCK[0] = None
    return carry.history


# Module-level compiled programs: a second run with the same settings, problem and
# buffer size reuses them (the task and budget are traced).
@functools.partial(jax.jit, static_argnames=("settings", "problem", "max_evals"))
def _initial_carries(settings, task, problem, keys, max_evals):
    return jax.vmap(lambda k: _initial_carry(settings, task, problem, k, max_evals))(keys)


@functools.partial(jax.jit, static_argnames=("settings", "problem", "max_evals", "batching"),
                   donate_argnames=("carry",))
def _run_buckets(settings, task, problem, budget, max_evals, keys, seed_ids, carry, batching):
    if batching == "vmap":
        return _run_bucket_lockstep(settings, task, problem, budget, max_evals, keys, seed_ids, carry)
    # lax.map: each seed's while_loops (L-BFGS, line search, BO steps) stop on their own
    # instead of every lane running until the slowest one stops
    run = lambda args: _run_bucket(settings, task, problem, budget, max_evals, *args)
    return jax.lax.map(run, (keys, seed_ids, carry))
