"""What a tuning run writes at its end: ``results.json`` (from the journal) and
``tuning.png`` (scores and the wall-clock split against the run's wall-clock)."""

from __future__ import annotations

from pathlib import Path

from mumbo_jax.run.tune.config import TuneConfig

__all__ = ["RESULTS_NAME", "PLOT_NAME", "best_at_target", "results_from_journal", "plot_tuning"]

RESULTS_NAME = "results.json"
PLOT_NAME = "tuning.png"


def best_at_target(cfg: TuneConfig, evals: list[dict]):
    """The successful evaluation with the best score at the target (``None`` if none)."""
    best = None
    for r in evals:
        if r["status"] == "ok" and cfg.is_target(r["z"]):
            if best is None or (r["score"] > best["score"] if cfg.maximise else r["score"] < best["score"]):
                best = r
    return best


def results_from_journal(cfg: TuneConfig, records: list[dict], incumbent: dict | None = None,
                         run_dir: str | None = None) -> dict:
    """The content of ``results.json``, from journal records (plain data, strict JSON).

    ``wall_clock`` splits the run's wall-clock (summed over sessions) into evaluation,
    optimiser (the ask: fit / g* / maximisation) and other time; ``curves`` has one
    entry per evaluation (cumulative cost and times, best score observed at the target).
    """
    evals = [r for r in records if r.get("type") == "eval"]
    end = next((r for r in records if r.get("type") == "end"), None)
    total = max([r.get("elapsed_s", 0.0) for r in records] + [0.0])
    ev = sum(r["eval_s"] for r in evals)
    opt_s = sum(r["ask_s"] for r in evals)
    parts = {k: sum((r["timings"] or {}).get(k, 0.0) for r in evals) for k in ("fit", "gstar", "maximise")}
    best = best_at_target(cfg, evals)
    curves: dict[str, list] = {k: [] for k in ("elapsed_s", "cost_spent", "evaluation_s", "optimiser_s", "other_s",
                                                "best_score_at_target")}
    acc = {"cost": 0.0, "eval": 0.0, "opt": 0.0, "other": 0.0}
    running = None
    for r in evals:
        acc["cost"] += r["cost"]
        acc["eval"] += r["eval_s"]
        acc["opt"] += r["ask_s"]
        acc["other"] += r["other_s"]
        if r["status"] == "ok" and cfg.is_target(r["z"]):
            if running is None or (r["score"] > running if cfg.maximise else r["score"] < running):
                running = r["score"]
        for k, v in zip(curves, (r["elapsed_s"], acc["cost"], acc["eval"], acc["opt"], acc["other"], running)):
            curves[k].append(v)
    strip = ("params", "type")
    return {
        "config": cfg.to_dict(),
        "config_file": cfg.source,
        "run_dir": run_dir,
        "finished": end is not None,
        "stop_reason": None if end is None else end["reason"],
        "aborted": bool(end is not None and end.get("aborted", False)),
        "direction": cfg.direction,
        "fidelity": {"kind": cfg.fidelity_kind,
                     "target": cfg.fidelity_value(0) if cfg.discrete else cfg.target,
                     "values": None if not cfg.discrete else [cfg.fidelity_value(i) for i in range(len(cfg.costs))]},
        "incumbent": incumbent,
        "best_observed": None if best is None else {"n": best["n"], "x": best["x"], "score": best["score"]},
        "counts": {
            "evaluations": len(evals),
            "ok": sum(r["status"] == "ok" for r in evals),
            "failed": sum(r["status"] == "failed" for r in evals),
            "timed_out": sum(bool(r.get("timed_out")) for r in evals),
            "retries": sum(r["attempt"] > 0 for r in evals),
            "fallbacks": sum(r["source"] == "fallback" for r in evals),
            "design": sum(r["source"] == "design" for r in evals),
            "sessions": sum(r.get("type") == "session" for r in records),
        },
        "cost": {"spent": sum(r["cost"] for r in evals), "budget": cfg.budget_cost},
        "wall_clock": {"total_s": total, "evaluation_s": ev, "optimiser_s": opt_s,
                       "optimiser_parts_s": parts, "other_s": max(total - ev - opt_s, 0.0),
                       "budget_s": cfg.budget_wall_clock_s},
        "conventions": {
            "score": "as returned by the objective (direction says whether it is maximised)",
            "y": "the value told to the model (maximisation convention: -score when minimising)",
            "u": "the model's coordinates: log10 of log-scale parameters",
            "elapsed_s": "wall-clock of the run summed over sessions (time lost to a crash is not counted)",
            "other_s": "wall-clock that is neither evaluation nor optimiser: journal, replay, worker starts, "
                       "printing, the final incumbent fit",
        },
        "curves": curves,
        "evaluations": [{k: v for k, v in r.items() if k not in strip} for r in evals],
    }


def failure_heights(times, span: float) -> list[float]:
    """Heights (axes fraction) of the failure marks at ``times``: 0.03, stacked upwards
    by 0.05 for each earlier failure within 1 % of ``span`` (failures at the same moment,
    e.g. of parallel workers, stay visible one by one)."""
    tol, placed, heights = 0.01 * max(span, 1e-12), [], []
    for t in times:
        heights.append(0.03 + 0.05 * sum(abs(t - u) < tol for u in placed))
        placed.append(t)
    return heights


def plot_tuning(results: dict, path) -> Path:
    """Two panels against the run's wall-clock: every evaluation's score (colour:
    fidelity; failures marked x, one mark each) with the best score observed at the
    target, and the cumulative wall-clock stacked as evaluation, optimiser overhead and
    other time. The legends sit beside the panels, off the data."""
    fig = tuning_figure(results)
    path = Path(path)
    fig.savefig(path)
    return path


def tuning_figure(results: dict):
    """The matplotlib figure of :func:`plot_tuning`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    evals = results["evaluations"]
    fig = Figure(figsize=(9.0, 6.4), dpi=110)
    FigureCanvasAgg(fig)
    ax, ax2 = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    fidelity = results["fidelity"]
    ok = [r for r in evals if r["status"] == "ok"]
    if fidelity["kind"] == "discrete":
        for i, value in enumerate(fidelity["values"]):
            rs = [r for r in ok if r["z"] == i]
            if rs:
                label = f"fidelity {value!r}" + (" (target)" if i == 0 else "")
                ax.scatter([r["elapsed_s"] for r in rs], [r["score"] for r in rs], s=18, color=f"C{i}",
                           label=label, zorder=3)
    elif ok:
        sc = ax.scatter([r["elapsed_s"] for r in ok], [r["score"] for r in ok], c=[r["z"] for r in ok], s=18,
                        cmap="viridis", zorder=3, label="evaluations")
        fig.colorbar(sc, ax=ax, label="fidelity")
    curves = results["curves"]
    pts = [(t, b) for t, b in zip(curves["elapsed_s"], curves["best_score_at_target"]) if b is not None]
    if pts:
        t, b = zip(*pts)
        t = list(t) + [results["wall_clock"]["total_s"]]
        ax.step(t, list(b) + [b[-1]], where="post", color="k", lw=1.6, label="best observed at the target")
    if results["incumbent"] is not None:
        ax.axhline(results["incumbent"]["predicted_score"], color="k", ls="--", lw=1,
                   label="final incumbent (predicted)")
    failed = [r for r in evals if r["status"] == "failed"]
    if failed:
        times = [r["elapsed_s"] for r in failed]
        ax.scatter(times, failure_heights(times, results["wall_clock"]["total_s"]), marker="x", color="red",
                   transform=ax.get_xaxis_transform(), label=f"failed ({len(failed)})", zorder=4)
    ax.set_ylabel(f"score ({results['direction']}d)")
    ax.set_title(f"{len(evals)} evaluations, cost {results['cost']['spent']:.4g}")
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize="small")

    w = results["wall_clock"]
    t = [0.0] + curves["elapsed_s"]
    stacks = [[0.0] + curves[k] for k in ("evaluation_s", "optimiser_s", "other_s")]
    total = max(w["total_s"], 1e-12)
    labels = [f"evaluation {w['evaluation_s']:.1f} s ({100 * w['evaluation_s'] / total:.0f}%)",
              f"optimiser {w['optimiser_s']:.1f} s ({100 * w['optimiser_s'] / total:.0f}%)",
              f"other {w['other_s']:.1f} s ({100 * w['other_s'] / total:.0f}%)"]
    ax2.stackplot(t, *stacks, labels=labels, colors=["C0", "C1", "0.7"], alpha=0.8)
    ax2.set_xlabel("wall-clock of the run (s, summed over sessions)")
    ax2.set_ylabel("cumulative seconds")
    ax2.grid(True, alpha=0.3)
    ax2.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize="small")
    fig.tight_layout()
    return fig
