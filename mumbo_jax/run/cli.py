"""Command line: ``mumbo-jax run CONFIG.toml [--seeds N] [--out DIR]``.

Runs a benchmark configuration (:mod:`mumbo_jax.run.config`) with the compiled loop
(:func:`mumbo_jax.bo.loop.run_compiled`), prints progress while it runs, and writes into
the output folder:

* ``results.json``: the configuration, the problem (with its optimum), and per seed
  every BO evaluation ``{x, z, y, cost}``, the initial design's cost, the curves
  (``cost_spent``, ``regret``, ``incumbent_x``, ``incumbent_value``: entry k is the
  state after k BO evaluations) and the per-step overheads ``{fit, gstar, maximise,
  total}`` in seconds; plus the run's wall time.
* ``regret.png``: simple regret against cost spent (mean +- standard error over seeds).

Exit codes: 0 done, 2 invalid configuration or arguments (one line on stderr, nothing
written), 130 interrupted.

``mumbo-jax tune CONFIG.toml [--out RUN_DIR]`` and ``mumbo-jax resume RUN_DIR`` run a
crash-safe, journaled tuning of your own objective (:mod:`mumbo_jax.run.tuning`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from mumbo_jax.run.config import ConfigError, RunConfig, load_config, settings_from_config

__all__ = ["main", "run_config", "results_dict"]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mumbo-jax", description="Multi-fidelity Bayesian optimisation with MUMBO, in JAX.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="run a benchmark configuration (TOML)",
                         description="Run a benchmark configuration and write results.json and regret.png.")
    run.add_argument("config", metavar="CONFIG.toml", help="run configuration (see configs/)")
    run.add_argument("--seeds", type=_positive_int, default=None, metavar="N",
                     help="number of seeds (runs seeds 0..N-1; overrides [run] seeds)")
    run.add_argument("--out", default=None, metavar="DIR", help="output folder (overrides [run] out)")
    run.add_argument("--all-seeds", action="store_true",
                     help="print a progress line for every seed (default: seed 0 only, plus each seed's end)")
    # -- tune / resume (mumbo_jax.run.tuning)
    tune = sub.add_parser("tune", help="tune your own objective, crash-safe (journaled; see `resume`)",
                          description="Tune a Python objective from a TOML config (mumbo_jax/tuning.py has the "
                                      "schema); every evaluation is journaled in the run folder.")
    tune.add_argument("config", metavar="CONFIG.toml", help="tuning configuration (e.g. configs/tune_example.toml)")
    tune.add_argument("--out", default=None, metavar="RUN_DIR", help="run folder (overrides [run] out)")
    resume = sub.add_parser("resume", help="continue a killed or interrupted tuning run from its journal",
                            description="Continue a tuning run from RUN_DIR/journal.jsonl (or rewrite the "
                                        "results of a finished one).")
    resume.add_argument("run_dir", metavar="RUN_DIR", help="the run folder of `mumbo-jax tune`")
    # -- compare (mumbo_jax.run.compare)
    cmp = sub.add_parser("compare", help="compare strategies on a benchmark over seeds (TOML)",
                         description="Run every strategy of a comparison config over the same seeds and write "
                                     "results.json, comparison.png and table.md.")
    cmp.add_argument("config", metavar="CONFIG.toml", help="comparison configuration (see configs/compare_*.toml)")
    cmp.add_argument("--seeds", type=_positive_int, default=None, metavar="N", help="seeds 0..N-1 (overrides)")
    cmp.add_argument("--budget", type=float, default=None, help="cost after the initial design (overrides)")
    cmp.add_argument("--max-evals", type=_positive_int, default=None, metavar="N",
                     help="cap on BO evaluations per seed (overrides)")
    cmp.add_argument("--strategies", default=None, metavar="A,B,...",
                     help="run only these labels of the config, comma-separated")
    cmp.add_argument("--out", default=None, metavar="DIR", help="output folder (overrides [compare] out)")
    cmp.add_argument("--resume", action="store_true",
                     help="keep the strategies already in OUT/results.json (same problem, budget, seeds, cap)")
    cmp.add_argument("--render-only", action="store_true",
                     help="only redraw table.md and comparison.png from OUT/results.json")
    return parser


def _tune_command(args) -> int:
    """``tune`` and ``resume``: exit 0 done, 2 bad config / journal / objective, 130
    interrupted (the journal keeps every finished evaluation)."""
    from mumbo_jax.run import tuning
    from mumbo_jax.run.journal import JournalError

    run_dir = getattr(args, "run_dir", None)
    try:
        if args.command == "tune":
            cfg = tuning.load_tune_config(args.config)
            run_dir = args.out or cfg.out
            tuning.tune(cfg, out=run_dir)
        else:
            tuning.resume(run_dir)
    except (ConfigError, JournalError) as e:
        print(f"mumbo-jax: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"mumbo-jax: interrupted; every finished evaluation is in the journal: mumbo-jax resume {run_dir}",
              file=sys.stderr)
        return 130
    return 0


def _fmt_z(z, discrete: bool) -> str:
    return str(int(round(z))) if discrete else f"{z:.3g}"


class _Progress:
    """``on_step`` for :class:`mumbo_jax.bo.loop.StepClock`: one line per evaluation of the
    printed seeds, one line when a seed stops. Under vmap a finished seed keeps
    reporting its last step; only its first report is printed."""

    def __init__(self, budget: float, max_evals: int, discrete: bool, all_seeds: bool, stream):
        self.budget, self.max_evals, self.discrete = budget, max_evals, discrete
        self.all_seeds, self.stream = all_seeds, stream
        self.done: set[int] = set()
        self.last = time.perf_counter()

    def __call__(self, seed: int, k: int, info: dict):
        if seed in self.done:
            return
        spent = float(info["spent"])
        regret = float(info["regret"])
        if not info["running"]:
            self.done.add(seed)
            why = " (max_evals reached)" if k >= self.max_evals and spent < self.budget else ""
            print(f"seed {seed} done: {k} BO evaluations{why}, cost {spent:.6g}/{self.budget:g}, "
                  f"incumbent regret {regret:.2e}", file=self.stream, flush=True)
            return
        if seed != 0 and not self.all_seeds:
            return
        now = time.perf_counter()
        dt, self.last = now - self.last, now
        pct = 100.0 * spent / self.budget
        print(f"seed {seed} step {k}: cost {spent:.6g}/{self.budget:g} ({pct:.0f}%), "
              f"fidelity {_fmt_z(float(info['z']), self.discrete)}, incumbent regret {regret:.2e} "
              f"[{dt:.2f} s]", file=self.stream, flush=True)


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


def results_dict(cfg: RunConfig, problem, settings, history, overheads: list[list[dict]], wall_time: float) -> dict:
    """The content of ``results.json`` (plain data, strict JSON: NaN written as null).

    ``y`` is in maximisation convention (``-f`` for a minimised problem);
    ``incumbent_value`` is ``f`` at the target in the problem's own sense.
    """
    h = {name: np.asarray(v) for name, v in history._asdict().items()}
    seeds = []
    for i, seed in enumerate(cfg.seed_list):
        n = int(h["n_evals"][i])
        evals = [{"x": _finite(h["x"][i, j]), "z": (int(round(float(h["z"][i, j]))) if problem.is_discrete
                                                   else float(h["z"][i, j])),
                  "y": float(h["y"][i, j]), "cost": float(h["cost"][i, j])} for j in range(n)]
        totals = [o["total"] for o in overheads[i] if o["total"] is not None]
        seeds.append({
            "seed": seed,
            "n_evals": n,
            "initial_cost": float(h["initial_cost"][i]),
            "evaluations": evals,
            "cost_spent": _finite(h["cost_spent"][i, :n + 1]),
            "regret": _finite(h["regret"][i, :n + 1]),
            "incumbent_x": _finite(h["incumbent_x"][i, :n + 1]),
            "incumbent_value": _finite(h["incumbent_value"][i, :n + 1]),
            "final_regret": _finite(h["regret"][i, n]),
            "overheads": overheads[i],
            "median_overhead": float(np.median(totals)) if totals else None,
        })
    finals = [s["final_regret"] for s in seeds if s["final_regret"] is not None]
    totals = [o["total"] for per_seed in overheads for o in per_seed if o["total"] is not None]
    return {
        "config": cfg.to_dict(),
        "config_file": cfg.source,
        "settings": dataclasses.asdict(settings),
        "problem": _problem_info(problem),
        "conventions": {
            "y": "maximisation convention: -f for a minimised problem",
            "incumbent_value": "f at the target fidelity, in the problem's own sense",
            "cost_spent": "cumulative cost after the initial design; entry k is after k BO evaluations",
            "overheads": "seconds per BO step (fit, g* sampling, acquisition maximisation); "
                         "seeds run batched, so a step's time is that of the batch",
        },
        "wall_time_s": wall_time,
        "summary": {
            "median_final_regret": float(np.median(finals)) if finals else None,
            "median_overhead_s": float(np.median(totals)) if totals else None,
            "n_evals": [s["n_evals"] for s in seeds],
        },
        "seeds": seeds,
    }


def run_config(cfg: RunConfig, all_seeds: bool = False, stream=None) -> dict:
    """Run a validated configuration, write ``results.json`` and ``regret.png`` into
    ``cfg.out``, print progress and a summary to ``stream`` (default stdout); returns
    the results dict."""
    import jax

    stream = sys.stdout if stream is None else stream
    jax.config.update("jax_enable_x64", True)
    from mumbo_jax.bo import loop
    from mumbo_jax.run import plots
    from mumbo_jax.benchmarks import problems, tasks

    problem = problems.get_problem(cfg.problem)
    settings = settings_from_config(cfg)
    out = Path(cfg.out)
    say = lambda *a: print(*a, file=stream, flush=True)
    say(f"mumbo-jax: {problem.name} (d={problem.dim}, "
        + (f"{problem.n_fidelities} fidelities, costs {list(problem.costs)}" if problem.is_discrete
           else f"continuous fidelity in {list(problem.fidelity_bounds)}")
        + f", optimum {problem.optimum_value:g})")
    say(f"  strategy {cfg.strategy}, budget {cfg.budget:g} after the initial design, seeds 0..{cfg.seeds - 1}, "
        f"at most {cfg.max_evals} BO evaluations per seed, model {cfg.model or 'default'}")
    say(f"  output {out}/")
    say("  compiling: the first step (and the first step of each larger buffer: 32, 64, ... points) "
        "waits for XLA; this can take a minute")

    task = tasks.problem_task(problem, cfg.model, cfg.rank)
    clock = loop.StepClock(on_step=_Progress(cfg.budget, cfg.max_evals, problem.is_discrete, all_seeds, stream))
    t0 = time.perf_counter()
    history = tasks.run_problem(problem, cfg.budget, cfg.seed_list, settings, task=task, max_evals=cfg.max_evals,
                                clock=clock, **loop.backend_batching())
    history = jax.tree_util.tree_map(np.asarray, history)
    wall = time.perf_counter() - t0

    n_evals = np.asarray(history.n_evals)
    overheads = [clock.overheads(seed, int(n)) for seed, n in zip(cfg.seed_list, n_evals)]
    results = results_dict(cfg, problem, settings, history, overheads, wall)

    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "results.json"
    json_path.write_text(json.dumps(results, indent=1, allow_nan=False) + "\n")
    curves = [(history.cost_spent[i, :n + 1], history.regret[i, :n + 1]) for i, n in enumerate(n_evals)]
    png_path = plots.plot_regret(curves, out / "regret.png",
                                 title=f"{problem.name}: {cfg.strategy} ({cfg.seeds} seed{'s' * (cfg.seeds > 1)})",
                                 budget=cfg.budget)

    summary = results["summary"]
    fmt = lambda v, f: "n/a" if v is None else format(v, f)
    say(f"done in {wall:.1f} s: median final regret {fmt(summary['median_final_regret'], '.3e')} over "
        f"{cfg.seeds} seed{'s' * (cfg.seeds > 1)}, BO evaluations per seed {summary['n_evals']}, "
        f"median overhead per step {fmt(summary['median_overhead_s'], '.3f')} s")
    say(f"  results: {json_path}")
    say(f"  plot:    {png_path}")
    return results


def _compare_command(args) -> int:
    """``compare``: exit 0 done, 2 bad config or arguments, 130 interrupted."""
    from mumbo_jax.run import compare
    from mumbo_jax.run.config import load_compare_config

    try:
        cfg = load_compare_config(args.config).replace(seeds=args.seeds, budget=args.budget,
                                                       max_evals=args.max_evals, out=args.out)
        only = None if args.strategies is None else [s.strip() for s in args.strategies.split(",") if s.strip()]
        if only is not None and (not only or any(s not in cfg.strategies for s in only)):
            raise ConfigError(f"--strategies {args.strategies!r}: labels must be among {', '.join(cfg.strategies)}")
    except ConfigError as e:
        print(f"mumbo-jax: error: {e}", file=sys.stderr)
        return 2
    try:
        if args.render_only:
            compare.render(cfg.out)
        else:
            compare.run_compare(cfg, only=only, resume=args.resume)
    except ValueError as e:
        print(f"mumbo-jax: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mumbo-jax: interrupted (results.json holds the strategies that finished)", file=sys.stderr)
        return 130
    return 0


def _enable_compilation_cache(jax) -> None:
    """Keep compiled XLA programs on disk (``$MUMBO_JAX_CACHE``, default
    ``~/.cache/mumbo-jax/xla``; ``MUMBO_JAX_CACHE=off`` disables it): a second run or a
    ``resume`` of the same problem skips most compilation (first ask/tell step on
    Forrester: 21 s cold, 3 s from the cache on a 2-core CPU)."""
    import os

    cache = os.environ.get("MUMBO_JAX_CACHE", str(Path.home() / ".cache" / "mumbo-jax" / "xla"))
    if cache.strip().lower() in ("", "0", "off", "none", "false"):
        return
    jax.config.update("jax_compilation_cache_dir", cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


def main(argv=None) -> int:
    """Entry point of ``mumbo-jax`` and ``python -m mumbo_jax``; returns the exit code."""
    import jax

    jax.config.update("jax_enable_x64", True)
    # the step clock's host callbacks inside the compiled while_loop can hang the CPU
    # client under asynchronous dispatch (jax-ml/jax#25861): dispatch synchronously
    jax.config.update("jax_cpu_enable_async_dispatch", False)
    _enable_compilation_cache(jax)
    args = _parser().parse_args(argv)
    if args.command == "compare":
        return _compare_command(args)
    if args.command in ("tune", "resume"):
        return _tune_command(args)
    if args.command == "run":
        try:
            cfg = load_config(args.config).replace(seeds=args.seeds, out=args.out)
        except ConfigError as e:
            print(f"mumbo-jax: error: {e}", file=sys.stderr)
            return 2
        out = Path(cfg.out)
        if out.exists() and not out.is_dir():
            print(f"mumbo-jax: error: output path {out} exists and is not a folder", file=sys.stderr)
            return 2
        try:
            run_config(cfg, all_seeds=args.all_seeds)
        except KeyboardInterrupt:
            print("mumbo-jax: interrupted", file=sys.stderr)
            return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
