"""The compiled driver: BO on a JAX-traceable benchmark, many seeds, state on device.

:func:`run_compiled` runs the decision stages (:mod:`mumbo_jax.bo.stages`) with the
objective evaluated inside compiled programs: each stage (fit, incumbent score, g*,
maximisation, evaluate-and-append) is one XLA program per buffer size, reused by every
step and every seed; the loop over steps is a thin host loop that times the stages
(no host callbacks inside any program, so JAX's persistent compilation cache keeps
them all: with ``JAX_COMPILATION_CACHE_DIR`` set, a second run compiles nothing).

With ``settings.batch.size = q > 1`` a step chooses q evaluations at once
(:mod:`mumbo_jax.bo.batch`: GIBBON's batch bound or the kriging believer), evaluates
them together and appends them: the History keeps one row per evaluation (a batch's
rows share the recommendation made before it), the step clock one record per batch
(keyed by the index of its first evaluation).

Seeds run one after another (``batching="map"``, the same programs as
:class:`mumbo_jax.bo.asktell.AskTell`, so the two drivers make the same decisions), in
lock-step (``"vmap"``: one vmapped program per stage, for accelerators) or in lock-step
with the seed axis sharded over every device (``"shard"``, :mod:`mumbo_jax.runtime.sharding`;
several processes too, after :func:`mumbo_jax.runtime.sharding.initialize`).

The driver knows nothing of a benchmark registry: it takes a :class:`Benchmark`, any
hashable object with ``observe`` and ``score`` (see
:func:`mumbo_jax.benchmarks.tasks.problem_benchmark`).
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.bo import refits, rules, stages
from mumbo_jax.runtime import sharding
from mumbo_jax.runtime.prefetch import Prefetcher, prefetch_enabled
from mumbo_jax.bo.settings import BOSettings, Task
from mumbo_jax.runtime.timing import StepClock, Timings, timed
from mumbo_jax.gp.precision import require_x64
from mumbo_jax.runtime.xla_options import jit

__all__ = ["Benchmark", "History", "run_compiled", "backend_batching", "initial_states"]


@runtime_checkable
class Benchmark(Protocol):
    """What :func:`run_compiled` needs of a problem. Hashable (a static jit argument;
    equal objects must trace to the same program)."""

    def observe(self, key, x, z):
        """A noisy observation y of f(x [d], z), maximisation convention (traceable;
        z an int32 index for discrete fidelities, a float for a continuous one)."""

    def score(self, x):
        """``(value, regret)`` of an incumbent x [d]: the true target value (in the
        problem's own sense) and its simple regret (traceable)."""


class History(NamedTuple):
    """A run's record (numpy, leading seed axis). Evaluation k is the k-th BO
    evaluation after the initial design; entry k of the curves is the state after k of
    them (entry 0: after the initial design)."""

    x: np.ndarray  # [S, E, d] chosen inputs (E = max_evals)
    z: np.ndarray  # [S, E] chosen fidelities
    y: np.ndarray  # [S, E] observations (maximisation convention)
    cost: np.ndarray  # [S, E] cost of each evaluation
    cost_spent: np.ndarray  # [S, E + 1] cumulative BO cost (initial design excluded)
    incumbent_x: np.ndarray  # [S, E + 1, d]
    incumbent_value: np.ndarray  # [S, E + 1] true target value (problem's own sense)
    regret: np.ndarray  # [S, E + 1] simple regret of the incumbent
    incumbent_mean: np.ndarray  # [S, E + 1] the model's posterior mean of g there (maximisation convention)
    incumbent_sd: np.ndarray  # [S, E + 1] its posterior sd (of g, noise excluded): coverage checks
    n_evals: np.ndarray  # [S] number of BO evaluations made
    initial_cost: np.ndarray  # [S] cost of the initial design


def backend_batching() -> dict:
    """:func:`run_compiled`'s ``batching`` and ``min_buffer`` for the default backend:
    seeds one after another from 32-row buffers on CPU; seeds in lock-step (vmap) from
    256-row buffers on an accelerator, where a step costs about the same at 32 or 256
    rows and each buffer size is one more compilation."""
    if jax.default_backend() == "cpu":
        return {"batching": "map", "min_buffer": stages.MIN_BUFFER}
    return {"batching": "vmap", "min_buffer": 256}


# --------------------------------------------------------------------------- one seed's programs


@functools.partial(jit, static_argnames=("bench", "min_buffer"))
def _init(task: Task, bench, key, min_buffer):
    """The design evaluated: ``(state, loop_key, noise_key, initial_cost)``."""
    design_key, loop_key = jax.random.split(key)
    x0, z0 = stages.initial_design(task, design_key)
    zq = z0.astype(jnp.int32) if task.spec.discrete else z0
    y0 = jax.vmap(lambda x, z, i: bench.observe(jax.random.fold_in(design_key, i), x, z))(
        x0, zq, jnp.arange(x0.shape[0]))
    state = stages.init(task, x0, z0, y0, min_buffer=min_buffer)
    return state, loop_key, jax.random.fold_in(key, 7), jnp.sum(task.space.cost(zq))


@functools.partial(jit, static_argnames=("bench", "rule", "calibrate"))
def _score(task: Task, bench, post, buffers, rule="mean", calibrate=False):
    """The incumbent's ``(x [d], true value, regret, posterior mean of g, its sd)``
    (``rule``: the incumbent rule; ``calibrate``: the sd widened by the leave-one-out
    scale)."""
    x, mu, sd = stages.recommend(task, post, buffers.x, rule, calibrate)
    value, regret = bench.score(x)
    return x, value, regret, mu, sd


@functools.partial(jit, static_argnames=("bench",))
def _observe(task: Task, bench, state, params, prop, noise_key, go):
    """Evaluate the proposal and append it (where ``go``): ``(state, y, cost)``."""
    zq = prop.z.astype(jnp.int32) if task.spec.discrete else prop.z
    y = bench.observe(jax.random.fold_in(noise_key, state.k), prop.x, zq)
    cost = task.space.cost(jnp.atleast_1d(zq))[0]
    state = stages.observe(state._replace(params=params), prop.x, prop.z, y, go)
    return state, y, cost


@functools.partial(jit, static_argnames=("bench",))
def _observe_batch(task: Task, bench, state, params, props, noise_key, go):
    """Evaluate a batch (``props`` with a leading slot axis) and append it slot by slot
    (the noise key of each evaluation as in the sequential loop): ``(state, y [q], cost [q])``."""

    def one(st, prop):
        st, y, cost = _observe(task, bench, st, params, prop, noise_key, go)
        return st, (y, cost)

    state, (y, cost) = jax.lax.scan(one, state, props)
    return state, y, cost


class _Stages(NamedTuple):
    init: callable
    fit: callable
    score: callable
    gstar: callable
    maximise: callable
    observe: callable


def _one_seed(settings: BOSettings, task: Task, bench) -> _Stages:
    """The stages of one seed: the decision stages' programs, as in ask/tell."""
    seed_stages = _Stages(
        init=lambda key, mb: _init(task, bench, key, mb),
        fit=lambda s, k, refit, cold: stages.fit_stage(settings, task, s.buffers, s.params, k, refit, cold),
        score=lambda post, b: _score(task, bench, post, b, settings.recommendation.rule,
                                     settings.recommendation.calibrated),
        gstar=lambda post, k: stages.gstar_stage(settings, task, post, k),
        maximise=lambda post, g, k, s: stages.maximise_stage(settings, task, post, g, k, None, s.n_design),
        observe=lambda s, p, prop, nk, go: _observe(task, bench, s, p, prop, nk, go),
    )
    if settings.batch.size > 1:  # q evaluations per step: the batch rule and a q-row append
        seed_stages = seed_stages._replace(
            maximise=lambda post, g, k, s: stages.batch_stage(settings, task, post, g, k, s.buffers, s.n, s.n_design),
            observe=lambda s, p, prop, nk, go: _observe_batch(task, bench, s, p, prop, nk, go))
    return seed_stages


# --------------------------------------------------------------------------- lock-step programs


@functools.partial(jit, static_argnames=("bench", "min_buffer"))
def initial_states(task, bench, keys, min_buffer):
    """The lock-step loop's first states, one per key (``keys [S, 2]``): each seed's
    initial design evaluated on ``bench`` and padded into buffers of at least
    ``min_buffer`` rows. A pytree with a leading seed axis ``S``."""
    return jax.vmap(lambda k: _init(task, bench, k, min_buffer))(keys)


@jit
def _fit_all(settings, task, state, keys, refit, cold):
    # refit is shared by the seeds (they step in lock-step): an unbatched lax.cond stays
    # a real branch, where a batched one would become a select that runs both branches
    return jax.vmap(lambda s, k: stages.fit_stage(settings, task, s.buffers, s.params, k, refit, cold))(state,
                                                                                                      keys)


@functools.partial(jit, static_argnames=("bench", "rule", "calibrate"))
def _score_all(task, bench, post, buffers, rule, calibrate=False):
    return jax.vmap(lambda p, b: _score(task, bench, p, b, rule, calibrate))(post, buffers)


@jit
def _gstar_all(settings, task, post, keys):
    return jax.vmap(lambda p, k: stages.gstar_stage(settings, task, p, k))(post, keys)


@jit
def _maximise_all(settings, task, post, gstar, keys, n_design):
    return jax.vmap(lambda p, g, k, n0: stages.maximise_stage(settings, task, p, g, k, None, n0))(post, gstar, keys,
                                                                                             n_design)


@jit
def _batch_all(settings, task, post, gstar, keys, state):
    return jax.vmap(lambda p, g, k, s: stages.batch_stage(settings, task, p, g, k, s.buffers, s.n, s.n_design))(
        post, gstar, keys, state)


@functools.partial(jit, static_argnames=("bench",))
def _observe_all(task, bench, state, params, prop, noise_keys, go):
    return jax.vmap(lambda *a: _observe(task, bench, *a))(state, params, prop, noise_keys, go)


@functools.partial(jit, static_argnames=("bench",))
def _observe_batch_all(task, bench, state, params, props, noise_keys, go):
    return jax.vmap(lambda *a: _observe_batch(task, bench, *a))(state, params, props, noise_keys, go)


@jit
def _step_keys_all(loop_keys, t):
    # in one program: a seed-sharded (possibly multi-process) array is not iterable on the host
    keys = jax.vmap(stages.step_keys, (0, None))(loop_keys, t)
    return keys[:, 0], keys[:, 1], keys[:, 2]


def _lock_step(settings: BOSettings, task: Task, bench) -> _Stages:
    return _Stages(
        init=lambda keys, mb: initial_states(task, bench, keys, mb),
        fit=lambda s, k, refit, cold: _fit_all(settings, task, s, k, refit, cold),
        score=lambda post, b: _score_all(task, bench, post, b, settings.recommendation.rule,
                                         settings.recommendation.calibrated),
        gstar=lambda post, k: _gstar_all(settings, task, post, k),
        maximise=(lambda post, g, k, s: _maximise_all(settings, task, post, g, k, s.n_design))
        if settings.batch.size == 1 else (lambda post, g, k, s: _batch_all(settings, task, post, g, k, s)),
        observe=(lambda s, p, prop, nk, go: _observe_all(task, bench, s, p, prop, nk, go)) if settings.batch.size == 1
        else (lambda s, p, prop, nk, go: _observe_batch_all(task, bench, s, p, prop, nk, go)),
    )


# --------------------------------------------------------------------------- the host loop


def _cheapest_cost(space) -> float:
    """The lowest cost of one evaluation: over the discrete fidelities the maximiser
    scores, or a 257-point grid of a continuous fidelity's interval (0.0 if unknown)."""
    try:
        if space.n_fidelities is not None:
            z = np.asarray(space.fidelities, float)
        else:
            z = np.linspace(*map(float, space.bounds), 257)
        return max(float(np.min(np.asarray(space.cost(jnp.asarray(z))))), 0.0)
    except Exception:  # a cost the host cannot evaluate: assume any number of evaluations fits the budget
        return 0.0


def _reaches(free_rows: int, q: int, evals_left: int, budget_left: float, cheapest: float) -> bool:
    """Whether a run with ``free_rows`` rows left in its buffer can outgrow it: the step
    that outgrows it comes after about ``free_rows`` more evaluations (of at least
    ``cheapest`` cost each; steps of ``q``), and the run stops at ``max_evals`` or once
    its budget is spent."""
    more = max(free_rows - q + 1, 0)  # evaluations before a step finds too few free rows
    if evals_left < more:
        return False
    return not (cheapest > 0 and more > 0 and (more - 1) * cheapest >= budget_left)


def _warm_up(seed_stages: _Stages, state, size: int, lead: int, keys, noise_keys, batched: bool, n_seeds: int):
    """Every program of one step at buffer ``size`` (:mod:`mumbo_jax.runtime.prefetch`), called
    once on ``state`` padded to it, with arguments of the kinds the loop passes; the
    results are thrown away."""
    k_fit, k_gstar, k_max = keys
    grown = stages.grow(state, size, lead)
    post = seed_stages.fit(grown, k_fit, False, False)  # the same program as a refit's (a traced branch), run cheaply
    seed_stages.score(post, grown.buffers)
    gstar = seed_stages.gstar(post, k_gstar)
    prop = seed_stages.maximise(post, gstar, k_max, grown)
    go = jnp.asarray(np.zeros(n_seeds, bool)) if batched else False
    return seed_stages.observe(grown, post.params, prop, noise_keys, go)


def _run_group(seed_stages: _Stages, settings, budget, max_evals, seeds, rows, batched, min_buffer,
               hist: dict, clock: StepClock, progress, layout=None, n_real=None, prefetcher: Prefetcher | None = None,
               cheapest=0.0):
    """Run the seeds ``seeds`` (history rows ``rows``) to the end; fills ``hist``.
    ``layout``: a seed sharding for the lock-step inputs; ``n_real``: rows from which on
    the seeds only pad the batch to the mesh (not reported). ``prefetcher``: compiles
    the next buffer size in the background (:mod:`mumbo_jax.runtime.prefetch`) where the
    run can reach it (``cheapest``: the lowest cost of an evaluation)."""
    prefetcher = prefetcher or Prefetcher(False)
    keys = jnp.stack([jax.random.PRNGKey(int(s)) for s in seeds])
    if layout is not None:
        keys = sharding.put(keys, layout)
    state, loop_keys, noise_keys, init_cost = seed_stages.init(keys if batched else keys[0], min_buffer)
    lead = int(batched)  # arrays of a lock-step batch have a leading seed axis
    as_rows = lambda a: sharding.to_host(a).reshape((len(seeds),) + np.shape(a)[lead:])
    hist["initial_cost"][rows] = as_rows(init_cost)
    n0 = int(sharding.to_host(state.n).reshape(-1)[0])
    n_real = len(hist["n_evals"]) if n_real is None else n_real
    size = state.buffers.x.shape[lead]
    split = _step_keys_all if batched else stages.step_keys
    q = settings.batch.size  # evaluations per step
    running = np.ones(len(seeds), bool)
    spent = np.zeros(len(seeds))
    t = 0  # the step of every running seed (they advance together)
    schedule, carried = refits.Schedule(), None  # the refit schedule and the posterior it carries
    while running.any():
        e = t * q  # evaluations made before this step
        while n0 + e + q > size:  # too few free rows: the next buffer size (compiled once per size)
            size = stages.buffer_size(size, min_buffer)
            prefetcher.wait(size)  # its programs may be compiling in the background
            state = stages.grow(state, size, lead)
            if progress is not None:
                progress(History(**hist))
        k_fit, k_gstar, k_max = split(loop_keys, t)
        if prefetcher.on and not prefetcher.busy:
            nxt = stages.buffer_size(size, min_buffer)
            if _reaches(size - (n0 + e), q, max_evals - e, budget - spent[running].min(), cheapest):
                prefetcher.start(nxt, functools.partial(_warm_up, seed_stages, state, nxt, lead,
                                                        (k_fit, k_gstar, k_max), noise_keys, batched, len(seeds)))
        plan = refits.plan(settings, t, n0 + e, schedule)  # a refit, a fresh conditioning or appends
        post, t_fit = timed(refits.step_posterior, settings, None, state.buffers, n0 + e, None, k_fit, plan,
                            carried, lambda refit, cold: seed_stages.fit(state, k_fit, refit, cold), min_buffer, batched)
        schedule, carried = refits.after(schedule, n0 + e, *plan), (post, n0 + e)
        (x_inc, value, regret, mu, sd), t_score = timed(seed_stages.score, post, state.buffers)
        inc = {"incumbent_x": as_rows(x_inc), "incumbent_value": as_rows(value), "regret": as_rows(regret),
               "incumbent_mean": as_rows(mu), "incumbent_sd": as_rows(sd)}
        regret = inc["regret"]
        on = rows[running]
        for name, v in inc.items():
            hist[name][on, e] = v[running]
        hist["cost_spent"][on, e] = spent[running]
        go = running & (spent < budget) & (e + q <= max_evals)
        if go.any():
            decide, t_approx = timed(stages.decision_posterior, settings, post, n0 + e)  # post, or its stand-in
            gstar, t_gstar = timed(seed_stages.gstar, decide, k_gstar)
            prop, t_max = timed(seed_stages.maximise, decide, gstar, k_max, state)
            t_gstar += t_approx
            (state, y, cost), t_obs = timed(seed_stages.observe, state, post.params, prop, noise_keys,
                                            jnp.asarray(go) if batched else bool(go[0]))
            n_s = len(seeds)
            x = as_rows(prop.x).reshape(n_s, q, -1)
            z, y, cost = (as_rows(a).reshape(n_s, q).astype(float) for a in (prop.z, y, cost))
            on = rows[go]
            slots = slice(e, e + q)
            hist["x"][on, slots], hist["z"][on, slots], hist["y"][on, slots] = x[go], z[go], y[go]
            hist["cost"][on, slots] = cost[go]
            # inside a batch the recommendation is the one made before it (no refit until it returns)
            for j in range(1, q):
                for name, v in inc.items():
                    hist[name][on, e + j] = v[go]
                hist["cost_spent"][on, e + j] = spent[go] + cost[go, :j].sum(1)
            spent = np.where(go, spent + cost.sum(1), spent)
            timings = Timings(t_fit + t_score, t_gstar, t_max + t_obs)
        for i in np.flatnonzero(running & (rows < n_real)):
            seed = int(seeds[i])
            if go[i]:
                clock.record(seed, e, timings)
                clock.report(seed, e, {"running": True, "spent": float(spent[i]), "z": float(z[i, 0]),
                                       "regret": float(regret[i])})
            else:
                hist["n_evals"][rows[i]] = e
                clock.report(seed, e, {"running": False, "spent": float(spent[i]), "z": float("nan"),
                                       "regret": float(regret[i])})
        running = go
        t += 1
    if progress is not None:
        progress(History(**hist))


def _first(history: History, n: int) -> History:
    return History(*(a[:n] for a in history))


def run_compiled(bench: Benchmark, task: Task, budget: float, seeds, settings: BOSettings = BOSettings(),
                 max_evals: int = 200, progress=None, clock: StepClock | None = None, batching: str = "map",
                 min_buffer: int = stages.MIN_BUFFER, mesh=None, prefetch: bool | None = None) -> History:
    """Run BO on a traceable benchmark for several seeds.

    Examples:
        >>> import jax; jax.config.update("jax_enable_x64", True)
        >>> import mumbo_jax as mj
        >>> from mumbo_jax.benchmarks import problems, tasks
        >>> problem = problems.get_problem("forrester")
        >>> hist = mj.run_compiled(tasks.problem_benchmark(problem), tasks.problem_task(problem),
        ...                        budget=10.0, seeds=[0, 1], max_evals=4)
        >>> hist.regret.shape[0]  # a leading seed axis
        2

    Args:
        bench: a :class:`Benchmark` (e.g.
            :func:`mumbo_jax.benchmarks.tasks.problem_benchmark`).
        task: the model, target and fidelity space
            (:func:`mumbo_jax.benchmarks.tasks.problem_task` for a registered problem).
        budget: cost to spend after the initial design (> 0).
        seeds: integer seeds (one run each).
        settings: the decision rule.
        max_evals: cap on BO evaluations per seed (with ``settings.batch.size = q > 1``
            a step makes q of them; the run stops before a batch would exceed the cap).
        progress: optional ``callback(history)`` called when the buffers grow and when
            a seed (or the lock-step batch) finishes.
        clock: optional :class:`mumbo_jax.runtime.timing.StepClock`: per-step overheads and
            an ``on_step`` hook after every step (timed on the host around the compiled
            stages).
        batching: ``"map"`` (seeds one after another, the default; on CPU with jaxlib
            0.10.2 the vmapped Hartmann-3 program deadlocked at 64 rows with 4 or more
            seeds), ``"vmap"`` (seeds in lock-step, for accelerators) or ``"shard"``
            (in lock-step, the seeds split over the devices of ``mesh``; the same
            decisions as ``"vmap"``, tests/test_sharding.py).
        min_buffer: rows of the first buffer (rounded up as by
            :func:`mumbo_jax.bo.stages.buffer_size`). Each buffer size compiles once.
        mesh: ``"shard"``: a mesh with a ``"seeds"`` axis (default
            :func:`mumbo_jax.runtime.sharding.seed_mesh`: every device of every process).
            The seeds are padded to a multiple of its size by repeating the last.
        prefetch: compile the next buffer size's programs on a background thread while
            the run goes on (:mod:`mumbo_jax.runtime.prefetch`; the same decisions). None:
            ``$MUMBO_JAX_PREFETCH``, off (nothing waits for a black box here: on two
            cores the run took as long with it).

    Returns:
        :class:`History` with a leading seed axis.
    """
    require_x64("running the compiled loop (run_compiled)")
    if not isinstance(bench, Benchmark):
        raise ValueError(f"bench must have observe(key, x, z) and score(x) (a Benchmark), got {type(bench).__name__}")
    if not isinstance(task, Task):
        raise ValueError(f"task must be a mumbo_jax.bo.settings.Task, got {type(task).__name__}")
    if not budget > 0:
        raise ValueError(f"budget must be > 0, got {budget}")
    if batching not in ("map", "vmap", "shard"):
        raise ValueError(f"batching must be 'map', 'vmap' or 'shard', got {batching!r}")
    if mesh is not None and batching != "shard":
        raise ValueError(f"a mesh is for batching='shard', got batching={batching!r}")
    if not isinstance(max_evals, int) or max_evals < 1:
        raise ValueError(f"max_evals must be a positive integer, got {max_evals!r}")
    rules.check_rule_for_task(settings.strategy, task)
    prefetcher = Prefetcher(prefetch_enabled(prefetch, default=False))
    cheapest = _cheapest_cost(task.space) if prefetcher.on else 0.0
    seeds = np.atleast_1d(np.asarray(seeds, int))
    min_buffer = stages.buffer_size(int(min_buffer) - 1, 1)
    n_seeds, d, e = len(seeds), task.spec.dim, max_evals
    hist = dict(x=np.zeros((n_seeds, e, d)), z=np.zeros((n_seeds, e)), y=np.zeros((n_seeds, e)),
                cost=np.zeros((n_seeds, e)), cost_spent=np.full((n_seeds, e + 1), np.nan),
                incumbent_x=np.full((n_seeds, e + 1, d), np.nan), incumbent_value=np.full((n_seeds, e + 1), np.nan),
                regret=np.full((n_seeds, e + 1), np.nan), incumbent_mean=np.full((n_seeds, e + 1), np.nan),
                incumbent_sd=np.full((n_seeds, e + 1), np.nan), n_evals=np.zeros(n_seeds, int),
                initial_cost=np.zeros(n_seeds))
    clock = StepClock() if clock is None else clock
    rows = np.arange(n_seeds)
    if batching == "shard":
        mesh = sharding.seed_mesh() if mesh is None else mesh
        n_pad = sharding.padded_count(n_seeds, mesh)
        padded = np.concatenate([seeds, np.full(n_pad - n_seeds, seeds[-1])])
        wide = {k: np.concatenate([v, v[-1:].repeat(n_pad - n_seeds, 0)]) for k, v in hist.items()}
        _run_group(_lock_step(settings, task, bench), settings, budget, max_evals, padded, np.arange(n_pad), True,
                   min_buffer, wide, clock, progress and (lambda h: progress(_first(h, n_seeds))),
                   sharding.seed_sharding(mesh), n_seeds, prefetcher, cheapest)
        hist = {k: v[:n_seeds] for k, v in wide.items()}
    elif batching == "vmap":
        _run_group(_lock_step(settings, task, bench), settings, budget, max_evals, seeds, rows, True, min_buffer,
                   hist, clock, progress, prefetcher=prefetcher, cheapest=cheapest)
    else:
        seed_stages = _one_seed(settings, task, bench)
        for i in rows:
            _run_group(seed_stages, settings, budget, max_evals, seeds[i:i + 1], rows[i:i + 1], False, min_buffer,
                       hist, clock, progress, prefetcher=prefetcher, cheapest=cheapest)
    return History(**hist)
