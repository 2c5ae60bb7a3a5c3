"""Compare strategies on a benchmark: ``mumbo-jax compare CONFIG.toml``.

Runs every strategy of a :class:`mumbo_jax.run.config.CompareConfig` over the same seeds
(the same initial designs: a seed fixes its design whatever the strategy) with the
compiled loop, and writes into the output folder:

* ``results.json``: per strategy its settings, per seed the curves (``cost_spent``,
  ``regret``), the fidelities queried, the per-step overheads, and the summary row;
  rewritten after each strategy, so an interrupted sweep keeps what it finished.
* ``comparison.png``: the paper's figure: simple regret against cost spent (mean +-
  standard error over seeds, log scale) and the overhead per BO step (median over
  seeds, log scale).
* ``table.md``: final regret (median; mean +- s.e.), cost to reach regret 1e-2 and
  1e-3 (median over seeds; a seed that never reaches it counts as infinite), median
  overhead per step, and the mean number of target-fidelity queries; then a paired
  comparison of every strategy with a reference one (``mumbo-10`` when run): on how
  many seeds each has the lower final regret, and the Wilcoxon signed-rank p-value,
  raw and Holm-adjusted over the table's comparisons.
"""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
import os
import sys
import time
from pathlib import Path

import numpy as np

from mumbo_jax.run.config import CompareConfig
from mumbo_jax.run.lock import run_lock
from mumbo_jax.run.output import prepare_output, write_atomic
from mumbo_jax.run.paired_tests import holm_adjust, wilcoxon_p
from mumbo_jax.run.schema import ConfigError
from mumbo_jax.run.settings_config import upgrade_record
from mumbo_jax.run.x64 import with_x64

__all__ = ["wilcoxon_p", "THRESHOLDS", "cost_to_reach", "regret_at_cost", "summarise_strategy", "markdown_table", "paired_comparison",
           "holm_adjust", "paired_comparisons", "paired_table", "plot_comparison", "seed_groups", "merge_records",
           "run_compare", "render"]

THRESHOLDS = (1e-2, 1e-3)


def cost_to_reach(cost_spent, regret, threshold: float) -> float:
    """The cost spent when the regret first falls to ``threshold`` or below (``inf`` if
    it never does). ``cost_spent[k]``, ``regret[k]``: state after k evaluations."""
    c, r = np.asarray(cost_spent, float), np.asarray(regret, float)
    keep = np.isfinite(c) & np.isfinite(r)
    c, r = c[keep], r[keep]
    hit = np.nonzero(r <= threshold)[0]
    return float(c[hit[0]]) if hit.size else math.inf


def regret_at_cost(cost_spent, regret, cost: float) -> float:
    """The regret of the recommendation once ``cost`` has been spent: the last state
    with ``cost_spent <= cost`` (NaN if there is none)."""
    c, r = np.asarray(cost_spent, float), np.asarray(regret, float)
    ok = np.isfinite(c) & np.isfinite(r) & (c <= cost + 1e-9)
    return float(r[ok][-1]) if ok.any() else math.nan


def _finite_or_none(v):
    return None if v is None or not math.isfinite(v) else float(v)


def summarise_strategy(seeds: list[dict], thresholds=THRESHOLDS) -> dict:
    """The summary row of one strategy from its per-seed records (``cost_spent``,
    ``regret``, ``overheads`` lists, ``n_target``)."""
    finals = np.array([s["regret"][-1] for s in seeds], float)
    n = finals.size
    reach = {}
    for thr in thresholds:
        costs = np.array([cost_to_reach(s["cost_spent"], s["regret"], thr) for s in seeds])
        reached = int(np.sum(np.isfinite(costs)))
        med = float(np.median(costs)) if n else math.inf
        reach[f"{thr:g}"] = {"median_cost": _finite_or_none(med), "reached": reached}
    totals = [o for s in seeds for o in s["overheads"] if o is not None]
    return {
        "n_seeds": n,
        "final_regret_median": float(np.median(finals)),
        "final_regret_mean": float(np.mean(finals)),
        "final_regret_se": float(np.std(finals, ddof=1) / np.sqrt(n)) if n > 1 else 0.0,
        "cost_to_reach": reach,
        "median_overhead_s": float(np.median(totals)) if totals else None,
        "mean_evaluations": float(np.mean([len(s["regret"]) - 1 for s in seeds])),
        "mean_target_queries": float(np.mean([s["n_target"] for s in seeds])),
    }


def markdown_table(summaries: dict, thresholds=THRESHOLDS) -> str:
    """A markdown table, one row per strategy (``summaries``: label -> summary row)."""
    head = ["strategy", "final regret: median", "mean \u00b1 s.e."]
    head += [f"cost to {thr:g} (seeds reaching)" for thr in thresholds]
    head += ["overhead / step (s)", "evaluations (target)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, s in summaries.items():
        row = [label, f"{s['final_regret_median']:.2e}", f"{s['final_regret_mean']:.2e} \u00b1 {s['final_regret_se']:.1e}"]
        for thr in thresholds:
            r = s["cost_to_reach"][f"{thr:g}"]
            med = "not reached" if r["median_cost"] is None else f"{r['median_cost']:.4g}"
            row.append(f"{med} ({r['reached']}/{s['n_seeds']})")
        oh = s["median_overhead_s"]
        row.append("n/a" if oh is None else f"{oh:.3f}")
        row.append(f"{s['mean_evaluations']:.1f} ({s['mean_target_queries']:.1f})")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def paired_comparison(reference: list[dict], other: list[dict], floor: float = 1e-12) -> dict:
    """Final regrets of two strategies compared seed by seed (the same seed means the
    same initial design, so the pairs share their start).

    Args:
        reference, other: per-seed records (``seed``, ``regret`` lists).
        floor: regrets below it count as ``floor`` (log scale; exact zeros tie).

    Returns:
        ``{n, reference_lower, other_lower, ties, median_log10_ratio, p_value}``:
        ``median_log10_ratio`` is the median over seeds of log10(reference / other)
        (negative: the reference ends lower); ``p_value`` the two-sided Wilcoxon
        signed-rank test on the log10 differences (``None`` when every pair ties).
    """
    from scipy import stats

    ref = {int(s["seed"]): s["regret"][-1] for s in reference}
    oth = {int(s["seed"]): s["regret"][-1] for s in other}
    common = sorted(set(ref) & set(oth))
    a = np.log10(np.maximum([ref[k] for k in common], floor))
    b = np.log10(np.maximum([oth[k] for k in common], floor))
    d = a - b
    tied = np.isclose(a, b, rtol=0.0, atol=1e-9)
    p = None
    if common and not tied.all():
        p = wilcoxon_p(d[~tied])
    return {"n": len(common), "reference_lower": int(np.sum((d < 0) & ~tied)),
            "other_lower": int(np.sum((d > 0) & ~tied)), "ties": int(np.sum(tied)),
            "median_log10_ratio": float(np.median(d)) if common else None, "p_value": p}


def paired_comparisons(records: dict, reference: str | None = None) -> tuple[str, dict]:
    """Every strategy against ``reference`` (default ``mumbo-10`` if present, else the
    first label) by :func:`paired_comparison`, with Holm-adjusted p-values over the
    comparisons made (the family is this set: one reference against the others).

    Returns:
        ``(reference, {label: paired_comparison(...) plus "p_holm"})`` in label order.
    """
    if not records:
        raise ValueError("no strategies to compare")
    reference = reference or ("mumbo-10" if "mumbo-10" in records else next(iter(records)))
    if reference not in records:
        raise ValueError(f"reference {reference!r} is not among the strategies {list(records)}")
    rows = {label: paired_comparison(records[reference], seeds)
            for label, seeds in records.items() if label != reference}
    for row, p in zip(rows.values(), holm_adjust([r["p_value"] for r in rows.values()])):
        row["p_holm"] = p
    return reference, rows


def paired_table(records: dict, reference: str | None = None) -> str:
    """Markdown: every strategy against ``reference`` (default ``mumbo-10`` if present,
    else the first label), seed by seed; ``records``: label -> per-seed records. The
    last column is the Wilcoxon p-value after Holm's adjustment over the table's rows."""
    if not records:
        return ""
    reference, rows = paired_comparisons(records, reference)
    n_tests = sum(r["p_value"] is not None for r in rows.values())
    head = ["strategy", f"{reference} lower on", "strategy lower on", "ties",
            f"median log10({reference} / strategy)", "Wilcoxon p", f"Holm p ({n_tests} test{'s' * (n_tests != 1)})"]
    lines = [f"Paired final regrets (same seeds, same initial designs) against {reference}:", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    fmt = lambda p: "n/a" if p is None else f"{p:.2g}"
    for label, c in rows.items():
        ratio = "n/a" if c["median_log10_ratio"] is None else f"{c['median_log10_ratio']:+.2f}"
        lines.append(f"| {label} | {c['reference_lower']}/{c['n']} | {c['other_lower']}/{c['n']} | {c['ties']} | "
                     f"{ratio} | {fmt(c['p_value'])} | {fmt(c['p_holm'])} |")
    return "\n".join(lines) + "\n"


def plot_comparison(records: dict, path, title: str = "", budget: float | None = None):
    """Two panels: regret vs cost (mean +- s.e. over seeds) and overhead per step
    (median over seeds). ``records``: label -> list of per-seed dicts."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from mumbo_jax.run import plots

    batched = any(s.get("batch_size", 1) > 1 for seeds in records.values() for s in seeds)
    fig = Figure(figsize=(16.5 if batched else 11.5, 4.4), dpi=120)
    FigureCanvasAgg(fig)
    if batched:  # a third panel: regret against the number of batches (BO steps)
        ax, ax3, ax2 = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.5, 1.2, 1]})
    else:
        ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.5, 1]})
    styles = ["-", "--", "-.", ":"]
    for i, (label, seeds) in enumerate(records.items()):
        color, ls = f"C{i % 10}", styles[(i // 10) % 4]
        curves = [(s["cost_spent"], s["regret"]) for s in seeds]
        # the curve ends where this strategy's longest run ended (a run stopped by the
        # evaluation cap before its budget is not drawn on to the budget)
        reached = max(float(np.nanmax(np.asarray(c, float))) for c, _ in curves)
        grid, mean, se = plots.regret_statistics(curves, max_cost=reached if budget is None else min(budget, reached))
        floor = plots.REGRET_FLOOR
        ax.plot(grid, np.maximum(mean, floor), color=color, ls=ls, lw=1.8, label=f"{label} ({len(seeds)})")
        if len(seeds) > 1:
            ax.fill_between(grid, np.maximum(mean - se, floor), np.maximum(mean + se, floor), color=color, alpha=0.15,
                            lw=0)
        q = seeds[0].get("batch_size", 1)
        if batched:
            steps = _per_step(seeds, "regret", q, np.nanmean, last=True)
            ax3.plot(np.arange(len(steps)), np.maximum(steps, floor), color=color, ls=ls, lw=1.8, label=label)
        med = _per_step(seeds, "overheads", q, np.nanmedian)
        n_steps = len(med)
        ax2.plot(np.arange(1, n_steps + 1), med, color=color, ls=ls, lw=1.5, label=label)
    if budget is not None:
        ax.axvline(budget, color="k", ls=":", lw=1)
    ax.set_yscale("log")
    ax.set_xlabel("cost spent after the initial design")
    ax.set_ylabel("simple regret of the incumbent")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="x-small", ncol=2, loc="best")
    if batched:
        ax3.set_yscale("log")
        ax3.set_xlabel("BO steps (batches of q evaluations; q = 1: one)")
        ax3.set_ylabel("simple regret (mean over seeds)")
        ax3.set_title("regret against the number of batches")
        ax3.grid(True, alpha=0.3)
    ax2.set_yscale("log")
    ax2.set_xlabel("BO step")
    ax2.set_ylabel("overhead per step (s, median over seeds)")
    ax2.set_title("decision overhead")
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    return path


def _per_step(seeds, key, q, reduce, last=False):
    """Per BO step (every q-th entry of ``key``: a batch's first evaluation), reduced
    over seeds (NaN where a seed has no such step, or with ``last`` its last value:
    a finished run keeps its final recommendation)."""
    rows = [np.asarray([np.nan if v is None else v for v in s[key]], float)[::q] for s in seeds]
    n_steps = max((len(r) for r in rows), default=0)
    table = np.full((len(rows), n_steps), np.nan)
    for j, r in enumerate(rows):
        table[j, :len(r)] = r
        if last and len(r):
            table[j, len(r):] = r[-1]
    with np.errstate(all="ignore"):
        return reduce(table, axis=0) if n_steps else np.zeros(0)


def _strict(obj):
    """Plain data with non-finite floats as None (strict JSON)."""
    if isinstance(obj, dict):
        return {k: _strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_strict(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _machine() -> dict:
    import os
    import platform

    import jax

    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "jax": jax.__version__, "backend": jax.default_backend(),
            "note": "shared machine: timings include contention from other processes"}


def _seed_records(problem, settings, history, clock, seeds, target_z) -> list[dict]:
    h = {k: np.asarray(v) for k, v in history._asdict().items()}
    out = []
    for i, seed in enumerate(seeds):
        n = int(h["n_evals"][i])
        z = h["z"][i, :n]
        over = clock.overheads(seed, n)
        out.append({
            "seed": seed,
            "cost_spent": h["cost_spent"][i, :n + 1].tolist(),
            "regret": h["regret"][i, :n + 1].tolist(),
            "z": (np.round(z).astype(int).tolist() if problem.is_discrete else z.tolist()),
            "n_target": int(np.sum(np.abs(z - target_z) < 1e-9)),
            "initial_cost": float(h["initial_cost"][i]),
            "overheads": [o["total"] for o in over],
            "batch_size": settings.batch.size,
            "overhead_parts": {p: [o[p] for o in over] for p in ("fit", "gstar", "maximise")},
        })
    return out


def render(out, stream=None) -> dict:
    """Rewrite ``table.md`` and ``comparison.png`` in ``out`` from its ``results.json``
    (e.g. of an interrupted sweep); returns the results dict."""
    out = Path(out)
    path = out / "results.json"
    if not path.is_file():
        raise ValueError(f"{path} not found: nothing to render")
    with run_lock(out, "mumbo-jax compare --render-only"):
        results = json.loads(path.read_text())
        _write_outputs(results, out, stream)
    return results


def _write_outputs(results, out, stream=None):
    stream = sys.stdout if stream is None else stream
    records = {lab: r["per_seed"] for lab, r in results["strategies"].items()}
    if not records:
        return
    summaries = {lab: r["summary"] for lab, r in results["strategies"].items()}
    table = markdown_table(summaries)
    if len(records) > 1:
        table += "\n" + paired_table(records)
    (out / "table.md").write_text(table)
    n = len(results["seeds"])
    png = plot_comparison(records, out / "comparison.png",
                          title=f"{results['problem']} ({n} seed{'s' * (n > 1)}, budget {results['budget']:g})",
                          budget=results["budget"])
    print(table, file=stream, flush=True)
    print(f"  results: {out / 'results.json'}\n  table:   {out / 'table.md'}\n  figure:  {png}", file=stream,
          flush=True)


@with_x64
def _run_strategy(cfg: CompareConfig, label: str, say, seeds: list[int] | None = None) -> dict:
    """One strategy over every seed (or over ``seeds``): its ``results.json`` record."""
    import jax

    jax.config.update("jax_cpu_enable_async_dispatch", False)
    from mumbo_jax.bo.compiled import backend_batching
    from mumbo_jax.runtime.timing import StepClock
    from mumbo_jax.benchmarks import problems, tasks

    problem = problems.get_problem(cfg.problem)
    task = tasks.problem_task(problem, cfg.model, cfg.rank, cfg.target_floor)
    settings = cfg.settings[label]
    seeds = cfg.seed_list if seeds is None else list(seeds)
    done = {}

    def on_step(seed, k, info, done=done):
        if not info["running"] and seed not in done:
            done[seed] = k
            say(f"  {label}: seed {seed} done, {k} evaluations, cost {float(info['spent']):.5g}, "
                f"regret {float(info['regret']):.2e}")

    clock = StepClock(on_step=on_step)
    say(f"[{label}] strategy {settings.strategy} (compiling first)")
    t0 = time.perf_counter()

    def progress(h, t0=time.perf_counter()):
        n = np.asarray(h.n_evals)
        say(f"  {label}: {time.perf_counter() - t0:.0f} s, evaluations per seed so far {n.tolist()}")

    history = tasks.run_problem(problem, cfg.budget, seeds, settings, task=task, max_evals=cfg.max_evals,
                                clock=clock, progress=progress, **backend_batching())
    history = jax.tree_util.tree_map(np.asarray, history)
    wall = time.perf_counter() - t0
    seeds = _seed_records(problem, settings, history, clock, seeds, float(task.target_z[0]))
    summary = summarise_strategy(seeds)
    say(f"[{label}] {wall:.0f} s: median final regret {summary['final_regret_median']:.2e}, median overhead "
        f"{summary['median_overhead_s'] or float('nan'):.3f} s/step")
    return {"settings": dataclasses.asdict(settings), "wall_time_s": wall, "summary": summary, "per_seed": seeds}


# one XLA thread per worker process: each owns one core
WORKER_XLA_FLAGS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def _strategy_worker(cfg, job, core, queue, cache=None):
    """A worker process: one ``job`` = ``(label, seeds)`` pinned to one core; puts
    ``(job, record, error)``. ``cache``: the parent's persistent compilation cache
    folder (a spawned process does not inherit JAX's configuration)."""
    label, seeds = job
    try:
        if core is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {core})
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {WORKER_XLA_FLAGS}".strip()
        from mumbo_jax.runtime import process_options

        process_options.enable(cache=False)  # as the parent command (its cache folder: below)
        if cache:
            import jax

            jax.config.update("jax_compilation_cache_dir", cache)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        queue.put((job, _run_strategy(cfg, label, lambda *a: print(*a, flush=True), list(seeds)), None))
    except BaseException as e:  # reported by the parent, which names the strategy
        queue.put((job, None, f"{type(e).__name__}: {e}"))


def seed_groups(seeds: list[int], n_strategies: int, workers: int) -> list[list[int]]:
    """How ``compare --workers`` splits one strategy's seeds: into ``workers //
    n_strategies`` groups (at least 1, at most one per seed), seeds dealt in turn (0, 2,
    4, ... and 1, 3, 5, ... for two groups), so that fewer strategies than workers still
    keep every worker busy. Each group is one process that compiles its own programs."""
    parts = max(1, min(len(seeds), workers // max(n_strategies, 1)))
    return [list(seeds[i::parts]) for i in range(parts)]


def merge_records(parts: list[dict]) -> dict:
    """One strategy's record from the records of its seed groups (run side by side):
    per-seed records in seed order, the summary over all of them, the wall time of the
    slowest group, and each group's seeds and wall time (``seed_groups``)."""
    if len(parts) == 1:
        return parts[0]
    per_seed = sorted((s for p in parts for s in p["per_seed"]), key=lambda s: s["seed"])
    return {"settings": parts[0]["settings"], "wall_time_s": max(p["wall_time_s"] for p in parts),
            "summary": summarise_strategy(per_seed), "per_seed": per_seed,
            "seed_groups": [{"seeds": [s["seed"] for s in p["per_seed"]], "wall_time_s": p["wall_time_s"]}
                            for p in parts]}


def _run_parallel(cfg, labels, workers, finished):
    """Run ``labels`` in up to ``workers`` processes, each pinned to its own core (a
    strategy's seeds split over several when there are fewer strategies than workers,
    :func:`seed_groups`); ``finished(label, record)`` as each strategy ends."""
    import jax

    cache = jax.config.jax_compilation_cache_dir  # the workers share the parent's cache
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    free = list(cores[:workers]) if len(cores) >= workers else [None] * workers
    ctx = multiprocessing.get_context("spawn")  # never fork a process that has started XLA
    cfg = dataclasses.replace(cfg, settings=dict(cfg.settings), data={})  # picklable (no mapping proxies)
    queue = ctx.Queue()
    groups = seed_groups(cfg.seed_list, len(labels), workers)
    pending = [(label, tuple(g)) for label in labels for g in groups]
    parts = {label: {} for label in labels}
    running = {}
    try:
        while pending or running:
            while pending and free:
                job, core = pending.pop(0), free.pop(0)
                proc = ctx.Process(target=_strategy_worker, args=(cfg, job, core, queue, cache), daemon=True)
                proc.start()
                running[job] = (proc, core)
            job, record, error = queue.get()
            proc, core = running.pop(job)
            proc.join()
            free.append(core)
            label = job[0]
            if error is not None:
                raise RuntimeError(f"strategy {label} failed in its worker process: {error}")
            parts[label][job[1]] = record
            if len(parts[label]) == len(groups):
                finished(label, merge_records([parts[label][tuple(g)] for g in groups]))
    finally:
        for proc, _ in running.values():
            proc.terminate()


@with_x64
def run_compare(cfg: CompareConfig, stream=None, only: list[str] | None = None, resume: bool = False,
                workers: int = 1, force: bool = False) -> dict:
    """Run every strategy of ``cfg`` (or the labels in ``only``), write results.json,
    comparison.png and table.md into ``cfg.out``; returns the results dict.

    With ``resume``, strategies already in ``cfg.out/results.json`` from a run with the
    same problem, budget, seeds and evaluation cap are kept and not run again. With
    ``workers`` > 1, strategies run in that many processes at once (spawned, each pinned
    to its own core with one XLA thread; each compiles its own programs); with fewer
    strategies than workers, each strategy's seeds are split over them
    (:func:`seed_groups`; every seed's run is the one it makes alone).

    The output folder is locked for the whole comparison (:mod:`mumbo_jax.run.lock`).
    An earlier ``results.json`` there is refused unless ``resume`` (from a run with a
    different problem, budget, seeds, cap or strategy settings: refused unless
    ``force``) or ``force`` (overwrite it).

    Raises:
        ConfigError: the folder is in use by another command, or holds an earlier
            comparison that would be overwritten (checked before any work)."""
    from mumbo_jax.benchmarks import problems, tasks

    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")

    stream = sys.stdout if stream is None else stream
    say = lambda *a: print(*a, file=stream, flush=True)
    labels = list(cfg.strategies) if only is None else list(only)
    unknown = [lab for lab in labels if lab not in cfg.settings]
    if unknown:
        raise ValueError(f"strategies {unknown} are not in the config; it has {list(cfg.strategies)}")
    problem = problems.get_problem(cfg.problem)
    tasks.problem_task(problem, cfg.model, cfg.rank, cfg.target_floor)  # checks the model before any work
    out = prepare_output(cfg.out)
    with run_lock(out, "mumbo-jax compare", say=say):
        return _compare_locked(cfg, labels, problem, out, say, stream, resume, workers, force)


def _kept_strategies(old: dict, results: dict, cfg: CompareConfig, labels, force: bool) -> dict:
    """The strategies of an earlier ``results.json`` that a resumed comparison keeps, or
    a :class:`ConfigError` for a mismatched one (``{}`` with ``force``)."""
    diff = [k for k in ("problem", "budget", "seeds", "max_evals") if old.get(k) != results[k]]
    strategies = old.get("strategies")
    if not isinstance(strategies, dict):
        diff.append("strategies (unreadable)")
        strategies = {}
    for label, rec in strategies.items():
        if label in cfg.settings and isinstance(rec, dict) and isinstance(rec.get("settings"), dict):
            now = json.loads(json.dumps(_strict(dataclasses.asdict(cfg.settings[label]))))
            if upgrade_record(rec["settings"]) != now:  # results written before the records: flat keys
                diff.append(f"the settings of {label}")
    if diff:
        if force:
            return {}
        raise ConfigError(f"--resume: {results_path(cfg)} is from a different comparison ({', '.join(diff)} "
                          "differ); --force starts afresh over it, or choose another --out")
    return {k: v for k, v in strategies.items() if k in cfg.settings}


def results_path(cfg: CompareConfig) -> Path:
    """Where a comparison writes its results."""
    return Path(cfg.out) / "results.json"


def _compare_locked(cfg, labels, problem, out: Path, say, stream, resume: bool, workers: int, force: bool) -> dict:
    """The body of :func:`run_compare` once the output folder is locked."""
    say(f"mumbo-jax compare: {problem.name}, budget {cfg.budget:g} after the initial design, seeds 0..{cfg.seeds - 1}, "
        f"at most {cfg.max_evals} BO evaluations per seed; strategies: {', '.join(labels)}")
    say(f"  output {out}/ (results.json is rewritten after each strategy)")
    results = {"config_file": cfg.source, "problem": problem.name, "budget": cfg.budget, "seeds": cfg.seed_list,
               "max_evals": cfg.max_evals, "machine": _machine(), "strategies": {}}
    previous = out / "results.json"
    if previous.is_file() and not resume and not force:
        raise ConfigError(f"{out} already holds an earlier comparison (results.json): --resume keeps its finished "
                          "strategies, --force overwrites it, or choose another --out")
    if resume and previous.is_file():
        try:
            old = json.loads(previous.read_text())
            if not isinstance(old, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            if not force:
                raise ConfigError(f"--resume: {previous} is unreadable ({e}); --force starts afresh over it") from None
            old = {}
        results["strategies"] = _kept_strategies(old, results, cfg, labels, force) if old else {}
        say(f"  resuming: keeping {', '.join(results['strategies']) or 'nothing'}")
    todo = [label for label in labels if label not in results["strategies"]]

    def finished(label, record):
        results["strategies"][label] = record
        write_atomic(out / "results.json", json.dumps(_strict(results), allow_nan=False) + "\n")

    if workers > 1 and todo and (len(todo) > 1 or len(cfg.seed_list) > 1):
        groups = seed_groups(cfg.seed_list, len(todo), workers)
        say(f"  {min(workers, len(todo) * len(groups))} worker processes, one core each"
            + (f"; each strategy's seeds in {len(groups)} groups: {groups}" if len(groups) > 1 else ""))
        _run_parallel(cfg, todo, workers, finished)
        order = [label for label in results["strategies"] if label not in todo] + todo
        results["strategies"] = {label: results["strategies"][label] for label in order}
        write_atomic(out / "results.json", json.dumps(_strict(results), allow_nan=False) + "\n")
    else:
        for label in todo:
            finished(label, _run_strategy(cfg, label, say))
    _write_outputs(results, out, stream)
    return results
