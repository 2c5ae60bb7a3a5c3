"""Running a benchmark configuration (``mumbo-jax run``): the compiled loop over seeds,
one live progress line, and results written as seeds finish.

Output folder (checked writable before any work):

* ``results.json``: the configuration, the problem (with its optimum), the settings,
  and per seed: the initial design's evaluations ``{x, z, y, cost}`` and cost, every BO
  evaluation, the curves (``cost_spent``, ``regret``, ``incumbent_x``,
  ``incumbent_value``: entry k is the state after k BO evaluations) and the per-step
  overheads ``{fit, gstar, maximise, total}`` in seconds; ``complete`` says whether
  every seed is in. Rewritten (atomically) after every seed on CPU, where seeds run one
  after another, and after the whole batch on an accelerator, where they run in
  lock-step: a failure late in a study loses no finished seed.
* ``evaluations.csv``: every evaluation of every seed, initial design included, one row
  each (``seed, phase, step, z, cost, y, cost_spent, x0 .. x{d-1}``).
* ``regret.png``: simple regret of the incumbent against the cost spent after the
  initial design: median over seeds with the 25-75 % quartile band, each seed faint;
  redrawn (atomically) with ``results.json``, so an interrupted run keeps the plot of
  its finished seeds.

The budget is the cost spent AFTER the initial design (``mumbo-jax tune`` budgets
include it); the design's cost is reported per seed as ``initial_cost``.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from mumbo_jax.run.config import RunConfig, parse_config, settings_from_config
from mumbo_jax.run.output import prepare_output, write_atomic
from mumbo_jax.run.schema import ConfigError
from mumbo_jax.run.settings_config import OLD_SECTION
from mumbo_jax.run.x64 import with_x64

__all__ = ["run_config", "previous_seeds", "results_dict", "seed_record", "design_evaluations", "evaluations_csv",
           "RunProgress",
           "RESULTS_NAME", "CSV_NAME", "PLOT_NAME"]

RESULTS_NAME, CSV_NAME, PLOT_NAME = "results.json", "evaluations.csv", "regret.png"


def _finite(a):
    """An array as (nested) lists of floats with NaN/inf as None (strict JSON)."""
    a = np.asarray(a, float)
    if a.ndim == 0:
        return float(a) if np.isfinite(a) else None
    return [_finite(v) for v in a]


def _problem_info(problem) -> dict:
    return {
        "name": problem.name,
        "dim": problem.dim,
        "bounds": np.asarray(problem.bounds).tolist(),
        "fidelity_kind": problem.fidelity_kind,
        "n_fidelities": problem.n_fidelities,
        "fidelity_bounds": None if problem.fidelity_bounds is None else list(problem.fidelity_bounds),
        "target_fidelity": problem.target_fidelity,
        "costs": None if problem.costs is None else list(problem.costs),
        "noise_variances": list(problem.noise_variances),
        "maximise": problem.maximise,
        "optimum_value": problem.optimum_value,
        "optimum_location": np.asarray(problem.optimum_location).tolist(),
    }


def design_evaluations(problem, task, seed: int) -> list[dict]:
    """The initial design of ``seed`` as the compiled loop evaluates it: ``[{x, z, y,
    cost}]`` (y in maximisation convention). The compiled loop keeps only its cost; this
    recomputes the points from the same keys (``split(key(seed))[0]``, observation i
    with ``fold_in(design_key, i)``)."""
    import jax
    import jax.numpy as jnp

    from mumbo_jax.benchmarks import problems
    from mumbo_jax.bo import stages

    design_key = jax.random.split(jax.random.PRNGKey(int(seed)))[0]
    x0, z0 = stages.initial_design(task, design_key)
    zp = z0.astype(jnp.int32) if task.spec.discrete else z0
    y0 = jax.vmap(lambda x, z, i: problems.noisy_objective(problem, jax.random.fold_in(design_key, i), x, z))(
        x0, zp, jnp.arange(x0.shape[0]))
    c0 = task.space.cost(zp)
    x0, z0, y0, c0 = map(np.asarray, (x0, z0, y0, c0))
    return [{"x": _finite(x), "z": int(round(float(z))) if problem.is_discrete else float(z), "y": float(y),
             "cost": float(c)} for x, z, y, c in zip(x0, z0, y0, c0)]


def seed_record(problem, task, history, i: int, seed: int, overheads: list[dict]) -> dict:
    """One seed's entry of ``results.json`` from row ``i`` of a (seed-batched)
    :class:`~mumbo_jax.bo.compiled.History`."""
    h = {name: np.asarray(v) for name, v in history._asdict().items()}
    n = int(h["n_evals"][i])
    evals = [{"x": _finite(h["x"][i, j]), "z": (int(round(float(h["z"][i, j]))) if problem.is_discrete
                                               else float(h["z"][i, j])),
              "y": float(h["y"][i, j]), "cost": float(h["cost"][i, j])} for j in range(n)]
    totals = [o["total"] for o in overheads if o["total"] is not None]
    return {
        "seed": seed,
        "n_evals": n,
        "initial_cost": float(h["initial_cost"][i]),
        "initial_design": design_evaluations(problem, task, seed),
        "evaluations": evals,
        "cost_spent": _finite(h["cost_spent"][i, :n + 1]),
        "regret": _finite(h["regret"][i, :n + 1]),
        "incumbent_x": _finite(h["incumbent_x"][i, :n + 1]),
        "incumbent_value": _finite(h["incumbent_value"][i, :n + 1]),
        "final_regret": _finite(h["regret"][i, n]),
        "overheads": overheads,
        "median_overhead": float(np.median(totals)) if totals else None,
    }


def results_dict(cfg: RunConfig, problem, settings, seeds: list[dict], wall_time: float) -> dict:
    """The content of ``results.json`` from the finished seeds' records (plain data,
    strict JSON: NaN written as null)."""
    finals = [s["final_regret"] for s in seeds if s["final_regret"] is not None]
    totals = [o["total"] for s in seeds for o in s["overheads"] if o["total"] is not None]
    return {
        "config": cfg.to_dict(),
        "config_file": cfg.source,
        "settings": dataclasses.asdict(settings),
        "problem": _problem_info(problem),
        "conventions": {
            "y": "maximisation convention: -f for a minimised problem",
            "incumbent": "the recommendation made by settings.recommendation.rule (mumbo_jax.bo.incumbent): 'global' "
                         "(the paper configs') the maximiser of the posterior mean at the target fidelity over the "
                         "whole box, possibly never evaluated; 'mean': the evaluated x with the highest posterior "
                         "mean there; 'robust' (the default) guards 'global' by the best point measured at the target",
            "regret": "simple regret of the incumbent: |optimum - f(incumbent)| at the target, in f's own sense",
            "incumbent_value": "f at the target fidelity, in the problem's own sense",
            "budget": "cost spent AFTER the initial design; the design's cost is initial_cost",
            "cost_spent": "cumulative cost after the initial design; entry k is after k BO evaluations",
            "initial_design": "the design's evaluations (2 d random points at every fidelity), before any BO step",
            "overheads": "seconds per BO step (fit, g* sampling, acquisition maximisation); "
                         "seeds batched in lock-step share a step's time",
        },
        "complete": len(seeds) == cfg.seeds,
        "wall_time_s": wall_time,
        "summary": {
            "statistic": "median over seeds",
            "median_final_regret": float(np.median(finals)) if finals else None,
            "quartiles_final_regret": [float(q) for q in np.quantile(finals, [0.25, 0.75])] if finals else None,
            "median_overhead_s": float(np.median(totals)) if totals else None,
            "n_evals": [s["n_evals"] for s in seeds],
        },
        "seeds": seeds,
    }


def evaluations_csv(results: dict) -> str:
    """Every evaluation of every seed (initial design first) as CSV text."""
    d = results["problem"]["dim"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["seed", "phase", "step", "z", "cost", "y", "cost_spent"] + [f"x{j}" for j in range(d)])
    for s in results["seeds"]:
        for e in s["initial_design"]:
            w.writerow([s["seed"], "design", "", e["z"], e["cost"], e["y"], ""] + e["x"])
        for k, e in enumerate(s["evaluations"]):
            w.writerow([s["seed"], "bo", k, e["z"], e["cost"], e["y"], s["cost_spent"][k + 1]] + e["x"])
    return buf.getvalue()


class RunProgress:
    """``on_step`` of :class:`mumbo_jax.runtime.timing.StepClock`: one live tqdm line for the
    whole run (seeds done, cost spent over all seeds, the running seed's incumbent
    regret, the median final regret so far, elapsed and ETA), a line per finished seed,
    and with ``steps`` a line per BO step. Under vmap a finished seed keeps reporting
    its last step; only its first report counts."""

    def __init__(self, n_seeds: int, budget: float, max_evals: int, discrete: bool, stream, steps: bool = False):
        from tqdm import tqdm

        self.n_seeds, self.budget, self.max_evals, self.discrete = n_seeds, budget, max_evals, discrete
        self.steps, self.stream = steps, stream
        self.spent: dict[int, float] = {}
        self.finals: dict[int, float] = {}
        self.last = time.perf_counter()
        tty = bool(getattr(stream, "isatty", lambda: False)())
        self.bar = tqdm(total=n_seeds * budget, file=stream, unit="cost", dynamic_ncols=True, leave=True,
                        mininterval=0.2 if tty else 30.0,
                        bar_format="{percentage:3.0f}%|{bar:20}| cost {n:.5g}/{total:.5g} [{elapsed}<{remaining}]"
                                   "{postfix}")  # tqdm puts ", " before the postfix
        self.bar.set_postfix_str(f"seeds done 0/{n_seeds}, compiling", refresh=True)

    def write(self, line: str):
        self.bar.write(line, file=self.stream)

    def __call__(self, seed: int, k: int, info: dict):
        if seed in self.finals:
            return
        spent, regret = float(info["spent"]), float(info["regret"])
        if not info["running"]:
            self.finals[seed] = regret
            self.spent[seed] = self.budget  # a seed stopped by max_evals counts as done
            why = " (max_evals reached)" if k >= self.max_evals and spent < self.budget else ""
            self.write(f"seed {seed} done: {k} BO evaluations{why}, cost {spent:.6g}/{self.budget:g} after the "
                       f"initial design, incumbent regret {regret:.2e}")
        else:
            self.spent[seed] = min(spent, self.budget)
            if self.steps:
                now = time.perf_counter()
                dt, self.last = now - self.last, now
                z = str(int(round(float(info["z"])))) if self.discrete else f"{float(info['z']):.3g}"
                self.write(f"seed {seed} step {k}: cost {spent:.6g}/{self.budget:g}, fidelity {z}, incumbent "
                           f"regret {regret:.2e} [{dt:.2f} s]")
        median = f", median final regret {np.median(list(self.finals.values())):.2e}" if self.finals else ""
        self.bar.set_postfix_str(f"seeds done {len(self.finals)}/{self.n_seeds}, seed {seed} regret {regret:.2e}"
                                 f"{median}", refresh=False)
        self.bar.update(sum(self.spent.values()) - self.bar.n)

    def close(self):
        self.bar.close()


def _comparable(config: dict) -> dict:
    """A run's configuration without what a resumed run may change (the seed count, the
    output folder). One written before the settings were grouped (an ``[acquisition]``
    table of flat keys) is read as today's ``[settings]`` tables."""
    if OLD_SECTION in config:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                config = parse_config(config).to_dict()
            except ConfigError:  # e.g. a removed lever that was on: not today's configuration
                pass
    run = {k: v for k, v in config.get("run", {}).items() if k not in ("seeds", "out")}
    return {**config, "run": run}


def previous_seeds(cfg: RunConfig, out: Path, resume: bool, force: bool) -> list[dict]:
    """The finished seed records of an earlier run in ``out`` that this run keeps.

    Without ``resume`` an earlier ``results.json`` is refused unless ``force`` (then it is
    overwritten); with ``resume`` its seeds among ``cfg.seed_list`` are kept when its
    configuration equals ``cfg`` apart from ``seeds`` and ``out`` (a mismatch is refused
    unless ``force``, which starts afresh).

    Raises:
        ConfigError: an earlier run would be overwritten or mixed with a different one.
    """
    path = out / RESULTS_NAME
    if not path.is_file():
        return []
    if not resume:
        if force:
            return []
        raise ConfigError(f"{out} already holds an earlier run ({RESULTS_NAME}): --resume continues its seeds, "
                          "--force overwrites it, or choose another --out")
    try:
        old = json.loads(path.read_text())
        kept = [s for s in old["seeds"] if s["seed"] in set(cfg.seed_list)]
        mine = _comparable(old["config"])
    except (ValueError, KeyError, TypeError) as e:
        if force:
            return []
        raise ConfigError(f"{path} cannot be resumed (unreadable: {e}); --force starts afresh over it") from None
    want = _comparable(json.loads(json.dumps(cfg.to_dict())))
    if mine != want:
        if force:
            return []
        diff = sorted({f"[{sec}] {k}" for sec in set(mine) | set(want)
                       for k in set(mine.get(sec, {})) | set(want.get(sec, {}))
                       if mine.get(sec, {}).get(k) != want.get(sec, {}).get(k)})
        raise ConfigError(f"--resume: {path} is from a different configuration ({', '.join(diff)} differ); "
                          "--force starts afresh over it, or choose another --out")
    return sorted(kept, key=lambda s: s["seed"])


@with_x64
def run_config(cfg: RunConfig, steps: bool = False, stream=None, batching: str | None = None,
               resume: bool = False, force: bool = False, status: dict | None = None) -> dict:
    """Run a validated configuration: write ``results.json``, ``evaluations.csv`` and
    ``regret.png`` into ``cfg.out`` as seeds finish; print a live
    progress line and a summary to ``stream`` (default stdout). Returns the results.
    ``batching``: None (the backend's choice, :func:`mumbo_jax.bo.compiled.backend_batching`)
    or ``"shard"`` (every seed in lock-step, sharded over every device of every process;
    in a multi-process run only process 0 prints and writes).

    The output folder is locked for the whole run (:mod:`mumbo_jax.run.lock`). An earlier
    run's ``results.json`` there is refused unless ``resume`` (keep its finished seeds
    and run only the missing ones; same configuration apart from ``seeds``) or
    ``force`` (overwrite it): see :func:`previous_seeds`.

    ``status``, a dict, is kept up to date with what is on disk (for a message when the
    run is interrupted): ``out``, ``seeds`` (the run's seed count), ``finished`` (the
    seeds in ``results.json``, kept ones included) and ``files`` (the names written, by
    this run or, for kept seeds, the earlier one).

    Raises:
        ConfigError: ``cfg.out`` is not a writable folder, is in use by another command,
            or holds an earlier run (all checked before any work).
    """
    import jax

    from mumbo_jax.run.lock import run_lock

    stream = sys.stdout if stream is None else stream
    out = prepare_output(cfg.out)
    status = {} if status is None else status
    status.update(out=out, seeds=cfg.seeds, finished=[], files=[])
    if jax.process_index() != 0:  # a multi-process run: process 0 locks, reports and writes
        return _run_locked(cfg, steps, stream, batching, out, resume, force, status)
    with run_lock(out, "mumbo-jax run", say=lambda m: print(m, file=stream, flush=True)):
        return _run_locked(cfg, steps, stream, batching, out, resume, force, status)


def _plot(records: list[dict], cfg: RunConfig, problem, path: Path) -> Path:
    """``regret.png`` of the finished seeds ``records``."""
    from mumbo_jax.run import plots

    curves = [(s["cost_spent"], [np.nan if r is None else r for r in s["regret"]]) for s in records]
    n = f"{len(records)} of {cfg.seeds}" if len(records) < cfg.seeds else f"{cfg.seeds}"
    return plots.plot_regret(curves, path, budget=cfg.budget,
                             title=f"{problem.name}: {cfg.strategy} ({n} seed{'s' * (cfg.seeds > 1)})")


def _run_locked(cfg: RunConfig, steps, stream, batching, out: Path, resume: bool, force: bool, status: dict) -> dict:
    """The body of :func:`run_config` once the output folder is locked."""
    import jax

    kept = previous_seeds(cfg, out, resume, force) if jax.process_index() == 0 else []
    if kept:
        status.update(finished=[s["seed"] for s in kept],
                      files=[n for n in (RESULTS_NAME, CSV_NAME, PLOT_NAME) if (out / n).is_file()])
    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo.compiled import backend_batching
    from mumbo_jax.runtime.timing import StepClock

    problem = problems.get_problem(cfg.problem)
    settings = settings_from_config(cfg)
    task = tasks.problem_task(problem, cfg.model, cfg.rank, cfg.target_floor)
    batching = backend_batching() if batching is None else {**backend_batching(), "batching": batching}
    if jax.process_index() != 0:  # a multi-process run: process 0 reports and writes
        stream = io.StringIO()
    # seeds one per compiled call where they run one after another anyway (CPU): each
    # finished seed is written at once; in lock-step (accelerator) all in one batch
    done = {s["seed"] for s in kept}
    todo = [s for s in cfg.seed_list if s not in done]
    chunks = [[s] for s in todo] if batching["batching"] == "map" else ([todo] if todo else [])
    say = lambda *a: print(*a, file=stream, flush=True)
    say(f"mumbo-jax: {problem.name} (d={problem.dim}, "
        + (f"{problem.n_fidelities} fidelities, costs {list(problem.costs)}" if problem.is_discrete
           else f"continuous fidelity in {list(problem.fidelity_bounds)}")
        + f", optimum {problem.optimum_value:g})")
    say(f"  strategy {cfg.strategy}, seeds 0..{cfg.seeds - 1}, budget {cfg.budget:g} per seed spent AFTER the "
        f"initial design (2 d points at every fidelity, cost reported separately), at most {cfg.max_evals} BO "
        f"evaluations per seed, model {cfg.model or 'default'}")
    say(f"  output {out}/ ({RESULTS_NAME}, {CSV_NAME} and {PLOT_NAME} are rewritten as seeds finish)")
    if kept:
        say(f"  resuming: keeping the finished seeds {sorted(done)} of {out / RESULTS_NAME}; running {todo or 'none'}")
    say("  the first step (and the first at each larger buffer: 32, 64, 96, ... points) compiles; this can take a minute")

    progress = RunProgress(cfg.seeds, cfg.budget, cfg.max_evals, problem.is_discrete, stream, steps)
    clock = StepClock(on_step=progress)
    t0 = time.perf_counter()
    records: list[dict] = list(kept)
    for s in kept:  # the kept seeds count as done in the progress line
        progress.finals[s["seed"]] = s["final_regret"] if s["final_regret"] is not None else float("nan")
        progress.spent[s["seed"]] = cfg.budget
    results = results_dict(cfg, problem, settings, records, 0.0)
    try:
        for chunk in chunks:
            history = tasks.run_problem(problem, cfg.budget, chunk, settings, task=task, max_evals=cfg.max_evals,
                                        clock=clock, **batching)
            history = jax.tree_util.tree_map(np.asarray, history)
            for i, seed in enumerate(chunk):
                n = int(history.n_evals[i])
                records.append(seed_record(problem, task, history, i, seed, clock.overheads(seed, n)))
            records.sort(key=lambda s: s["seed"])
            results = results_dict(cfg, problem, settings, records, time.perf_counter() - t0)
            if jax.process_index() == 0:
                for name, write in ((RESULTS_NAME, lambda p: write_atomic(p, json.dumps(results, indent=1,
                                                                                        allow_nan=False) + "\n")),
                                    (CSV_NAME, lambda p: write_atomic(p, evaluations_csv(results))),
                                    (PLOT_NAME, lambda p: _plot(records, cfg, problem, p))):
                    write(out / name)  # each seed's plot too: an interrupted run keeps that of the seeds done
                    status["files"] = list(dict.fromkeys(status["files"] + [name]))
                    status["finished"] = [s["seed"] for s in records]
    finally:
        progress.close()
    wall = time.perf_counter() - t0
    png = out / PLOT_NAME
    if jax.process_index() == 0 and not chunks:  # all seeds kept: redraw it from them
        _plot(records, cfg, problem, png)
    summary = results["summary"]
    fmt = lambda v, f: "n/a" if v is None else format(v, f)
    quart = summary["quartiles_final_regret"]
    say(f"done in {wall:.1f} s: median final regret {fmt(summary['median_final_regret'], '.3e')}"
        + (f" (quartiles {quart[0]:.2e} .. {quart[1]:.2e})" if quart and cfg.seeds > 1 else "")
        + f" over {cfg.seeds} seed{'s' * (cfg.seeds > 1)}, BO evaluations per seed {summary['n_evals']}, "
        f"median overhead per step {fmt(summary['median_overhead_s'], '.3f')} s")
    say(f"  results: {out / RESULTS_NAME}\n  all evaluations: {out / CSV_NAME}\n  plot:    {png}")
    return results
