"""Tables and plots of the robust-default study (experiments/studies/robust.py).

Reads every ``<problem>__<strategy>.json`` in ``--data`` and writes ``--md`` (markdown:
one table per checkpoint, the paired tests, the recommendation's checks, overheads) and
``--png`` (regret of the recommendation against cost, median over seeds, per problem).

Statistics (docs/RESULTS.md, protocol): regret at 25 / 50 / 100 % of the budget (cost
spent after the design) of the recommendation and of the best point measured at the
target; a seed that stopped before a checkpoint (the evaluation cap) is marked and left
out of that checkpoint; paired two-sided Wilcoxon signed-rank tests on log regret of the
reference strategy against each other one, Holm-adjusted over the comparisons of one
problem; "better"/"worse" only where the adjusted p < 0.05, else "level".

    python experiments/studies/robust_report.py --data docs/data/robust
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINTS = (0.25, 0.5, 1.0)
FLOOR = 1e-12  # log regret floor (an exact optimum)


def at_cost(cost, values, c):
    """The value after the last evaluation with cost spent <= c; NaN if the seed
    stopped before spending c (cap) -- it is then not counted at that checkpoint."""
    cost, values = np.asarray(cost, float), np.asarray(values, float)
    if cost[-1] < c - 1e-9 and len(cost) > 0:
        return math.nan  # stopped early (the evaluation cap)
    ok = np.flatnonzero(cost <= c + 1e-9)
    return float(values[ok[-1]]) if ok.size else math.nan


def holm(ps):
    ps = np.asarray(ps, float)
    order = np.argsort(ps)
    adj = np.empty_like(ps)
    run = 0.0
    for rank, i in enumerate(order):
        run = max(run, min(1.0, (len(ps) - rank) * ps[i]))
        adj[i] = run
    return adj


def paired(a, b):
    """``(p, a_lower, b_lower)`` of paired log regrets (NaN pairs dropped)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = np.isfinite(a) & np.isfinite(b)
    la, lb = np.log(np.maximum(a[ok], FLOOR)), np.log(np.maximum(b[ok], FLOOR))
    if ok.sum() < 2 or np.allclose(la, lb):
        return 1.0, int(np.sum(la < lb)), int(np.sum(lb < la))
    p = stats.wilcoxon(la, lb, zero_method="zsplit").pvalue
    return float(p), int(np.sum(la < lb)), int(np.sum(lb < la))


def load(data: Path, only=None, relabel=None, n_seeds=None):
    """``{problem: {strategy: run}}`` of the files in ``data``; ``only``: the problems to
    keep (after relabelling); ``relabel``: ``{(problem, strategy): (problem, strategy)}``
    (a companion problem's run shown under another problem, e.g. BO by K-fold CV under
    FASTCV's fold problem: the same target, the same regret); ``n_seeds``: keep seeds
    0 .. n_seeds - 1 only (the tests pair seeds by position: every run needs the same ones)."""
    runs = defaultdict(dict)
    for f in sorted(data.glob("*__*.json")):
        r = json.loads(f.read_text())
        if n_seeds:
            r["seeds"] = [s for s in r["seeds"] if s["seed"] < n_seeds]
        key = (relabel or {}).get((r["problem"], r["strategy"]), (r["problem"], r["strategy"]))
        if only and key[0] not in only:
            continue
        runs[key[0]][key[1]] = r
    return runs


def per_seed(run, budget):
    rec = {f"{c:g}": [] for c in CHECKPOINTS}
    best = {f"{c:g}": [] for c in CHECKPOINTS}
    share, rise, cover, viol, over, stopped = [], [], [], [], [], 0
    tz = run["target_z"]
    for s in run["seeds"]:
        cost = s["cost_spent"]
        for c in CHECKPOINTS:
            rec[f"{c:g}"].append(at_cost(cost, s["regret"], c * budget))
            best[f"{c:g}"].append(at_cost(cost, s["best_regret"], c * budget))
        stopped += cost[-1] < budget - 1e-9
        z = np.asarray(s["z"], float)
        # a combined target (FASTCV's fold mean) is no one fidelity: no share to report
        single = len(run.get("target_fidelities", [tz])) == 1
        share.append(float(np.mean(np.abs(z - tz) < 1e-9)) if z.size and single else math.nan)
        r = np.asarray(s["regret"], float)
        rise.append(float(np.max(r - np.minimum.accumulate(r))))
        mean, sd, value = (np.asarray(s[k], float) for k in ("mean", "sd", "value"))
        sign = 1.0 if run.get("maximise", True) in (True, None) else -1.0
        truth = sign * value  # the model's mean is in maximisation convention
        cover.append(float(np.mean(np.abs(truth - mean) <= 1.96 * sd)))
        gap = r - np.asarray(s["best_regret"], float)
        viol.append(float(np.mean(gap > 1.96 * sd)))
        tot = [o["total"] for o in s["overheads"] if o["total"] is not None][1:]  # step 0 compiles
        over.append(float(np.median(tot)) if tot else math.nan)
    return dict(rec=rec, best=best, share=share, rise=rise, cover=cover, viol=viol, over=over, stopped=stopped)


def fmt(v):
    return "-" if v is None or not np.isfinite(v) else f"{v:.3g}"


def render(runs, reference, baselines, md: Path, png: Path | None):
    """Write the full report (``md``) and the plot (``png``); returns ``(verdicts, summary)``."""
    detail, summary_lines, verdicts, summary = analyse(runs, reference, baselines)
    lines = ["<!-- generated by experiments/studies/robust_report.py; do not edit -->", ""]
    lines += summary_lines + [""] + detail
    md.parent.mkdir(parents=True, exist_ok=True)
    md.write_text("\n".join(lines) + "\n")
    if png is not None:
        plot(runs, png)
    return verdicts, summary


def analyse(runs, reference, baselines):
    """``(detail lines, summary lines, verdicts, per-problem stats)`` of the study."""
    lines = []
    verdicts = []
    summary = {}
    for problem in sorted(runs):
        strategies = runs[problem]
        any_run = next(iter(strategies.values()))
        budget = any_run["budget"]
        stats_ = {s: per_seed(r, budget) for s, r in strategies.items()}
        n_seeds = len(any_run["seeds"])
        lines += [f"### {problem} (budget {budget:g}, {n_seeds} seeds)", "",
                  "| strategy | rec. 25 % | rec. 50 % | rec. 100 % | best meas. 100 % | target share | "
                  "worst rise | coverage | rec. worse than meas. | overhead s | stopped by cap |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        order = [reference] + [s for s in sorted(strategies) if s != reference]
        for s in order:
            if s not in stats_:
                continue
            st = stats_[s]
            med = lambda v: float(np.nanmedian(v)) if np.isfinite(v).any() else math.nan
            lines.append(f"| {s} | {fmt(med(st['rec']['0.25']))} | {fmt(med(st['rec']['0.5']))} | "
                         f"{fmt(med(st['rec']['1']))} | {fmt(med(st['best']['1']))} | "
                         f"{fmt(float(np.nanmean(st['share'])))} | {fmt(float(np.nanmax(st['rise'])))} | "
                         f"{fmt(float(np.nanmin(st['cover'])))}-{fmt(float(np.nanmax(st['cover'])))} | "
                         f"{fmt(float(np.nanmean(st['viol'])))} | {fmt(med(st['over']))} | {st['stopped']}/{n_seeds} |")
        if reference in stats_:
            lines += ["", f"Paired tests, {reference} against each (Wilcoxon on log regret of the recommendation, "
                      "Holm over this problem's comparisons; lower/higher = seeds where the reference is lower/higher):",
                      "", "| against | checkpoint | median ref. | median other | ref. lower / higher | p | Holm p | verdict |",
                      "|---|---|---|---|---|---|---|---|"]
            rows, ps = [], []
            for other in [b for b in baselines if b in stats_ and b != reference]:
                for c in CHECKPOINTS:
                    a, b = stats_[reference]["rec"][f"{c:g}"], stats_[other]["rec"][f"{c:g}"]
                    p, lo, hi = paired(a, b)
                    rows.append((other, c, np.nanmedian(a), np.nanmedian(b), lo, hi, p))
                    ps.append(p)
            adj = holm(ps) if ps else []
            for (other, c, ma, mb, lo, hi, p), pa in zip(rows, adj):
                verdict = "level" if pa >= 0.05 else ("better" if ma < mb else "worse")
                verdicts.append((problem, other, c, verdict, ma, mb))
                lines.append(f"| {other} | {c:.0%} | {fmt(ma)} | {fmt(mb)} | {lo}/{hi} | {p:.3g} | {pa:.3g} | {verdict} |")
        lines.append("")
        summary[problem] = stats_
    table = summary_table(summary, verdicts, reference, baselines)
    return lines, table + [""] + target_lines(summary, verdicts, reference), verdicts, summary


# problems whose cheap sources are reliable: the suite's own labels, the paper's problems,
# and the held-out Park functions (correlation 0.99 and 1)
RELIABLE = {"currin", "borehole", "hartmann3", "hartmann6", "forrester", "park", "park91b"}


def _reliable(problem: str) -> bool:
    from mumbo_jax.benchmarks.problems import SOURCE_KIND
    return problem in RELIABLE or SOURCE_KIND.get(problem) == "reliable"


def _median(st, key="rec", c="1"):
    v = np.asarray(st[key][c], float)
    return float(np.nanmedian(v)) if np.isfinite(v).any() else math.nan


def target_lines(summary, verdicts, reference):
    """The issue's targets, checked on these data: one bullet each (problems named where
    a target is missed)."""
    probs = [p for p in sorted(summary) if reference in summary[p]]
    n = len(probs)

    def worse(p, others, c=None):
        return any(v == "worse" for q, o, cc, v, _, _ in verdicts if q == p and o in others and (c is None or cc == c))

    def better(p, other, c):
        return any(v == "better" for q, o, cc, v, _, _ in verdicts if q == p and o == other and cc == c)

    def ratio(p, other):
        a, b = _median(summary[p][reference]), _median(summary[p][other])
        return f"{p} {fmt(a)} against {fmt(b)}"

    def names(ps):
        return ", ".join(ps) if ps else "none"

    sig_worse = [p for p in probs if worse(p, ("ei", "mes"))]
    above_ei = [p for p in probs if "ei" in summary[p] and _median(summary[p][reference]) > _median(summary[p]["ei"])]
    reliable = [p for p in probs if _reliable(p) and "ei" in summary[p]]
    half = [p for p in reliable if better(p, "ei", 0.5)]
    two_stage = [p for p in probs if any(b in summary[p] for b in ("mt_ei", "mf_gp_ucb", "boca"))]
    def best_two_stage(p):  # a heuristic whose median run stopped before the budget (NaN) does not count
        meds = [_median(summary[p][b]) for b in ("mt_ei", "mf_gp_ucb", "boca") if b in summary[p]]
        return min((m for m in meds if np.isfinite(m)), default=math.inf)

    at_or_below = [p for p in two_stage if _median(summary[p][reference]) <= best_two_stage(p)]
    two_worse = [p for p in two_stage if worse(p, ("mt_ei", "mf_gp_ucb", "boca"))]
    viol = [p for p in probs if float(np.nanmean(summary[p][reference]["viol"])) > 0.05]
    cover = [p for p in probs if float(np.nanmean(summary[p][reference]["cover"])) < 0.9]
    cov = [float(np.nanmean(summary[p][reference]["cover"])) for p in probs]
    return [
        f"Targets, checked on these {n} problems ({reference}; Holm-adjusted paired tests at 25, 50 and 100 % of the budget):",
        "",
        f"* Significantly worse than EI or MES at some checkpoint: {names(sig_worse)}. "
        f"Median final regret above EI's: {names([ratio(p, 'ei') for p in above_ei])}.",
        f"* Cheap source reliable: significantly better than EI at half the budget on {len(half)} of {len(reliable)} "
        f"({names(half)}).",
        f"* At or below the best of MT-EI and MF-GP-UCB (BOCA) on {len(at_or_below)} of {len(two_stage)}; "
        f"one of them significantly better: {names(two_worse)}.",
        f"* Against MUMBO: significantly better at some checkpoint on "
        f"{names([p for p in probs if any(better(p, 'mumbo', c) for c in CHECKPOINTS)])}; worse on "
        f"{names([p for p in probs if worse(p, ('mumbo',))])}.",
        f"* Recommendation worse than the best measured target point by more than its interval at over 5 % of the "
        f"steps: {names(viol)}. Its 95 % interval covers the truth at {fmt(min(cov))} to {fmt(max(cov))} of the steps; "
        f"under 0.9 on {names(cover)}.",
    ]


def summary_table(summary, verdicts, reference, baselines):
    """One line per problem: the reference's final median regret against EI, MES and
    the better of the two-stage heuristics, the worst verdict against each over the
    checkpoints, and the reference's recommendation checks."""
    med = _median

    def verdict(problem, other):
        vs = [v for p, o, _, v, _, _ in verdicts if p == problem and o == other]
        if not vs:
            return "-"
        return "worse" if "worse" in vs else ("better" if "better" in vs else "level")

    def better_at_half(problem, other):
        vs = [v for p, o, c, v, _, _ in verdicts if p == problem and o == other and c == 0.5]
        return vs[0] if vs else "-"

    head = [f"| problem | {reference} | EI | MES | MUMBO | best of MT-EI, MF-GP-UCB / BOCA | vs EI (50 % / any) | "
            "vs MES | vs MUMBO | vs two-stage | target share | coverage | rec. worse than meas. |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for problem, st in sorted(summary.items()):
        if reference not in st:
            continue
        r = st[reference]
        two = [(med(st[b]), b) for b in ("mt_ei", "mf_gp_ucb", "boca") if b in st and np.isfinite(med(st[b]))]
        two_best = min(two) if two else (math.nan, "-")
        two_verdicts = [verdict(problem, b) for b in ("mt_ei", "mf_gp_ucb", "boca") if b in st]
        two_v = "worse" if "worse" in two_verdicts else ("better" if "better" in two_verdicts else
                                                        ("level" if two_verdicts else "-"))
        rows.append(f"| {problem} | {fmt(med(r))} | {fmt(med(st['ei'])) if 'ei' in st else '-'} | "
                    f"{fmt(med(st['mes'])) if 'mes' in st else '-'} | {fmt(med(st['mumbo'])) if 'mumbo' in st else '-'} | "
                    f"{fmt(two_best[0])} ({two_best[1]}) | {better_at_half(problem, 'ei')} / {verdict(problem, 'ei')} | "
                    f"{verdict(problem, 'mes')} | {verdict(problem, 'mumbo')} | {two_v} | "
                    f"{fmt(float(np.nanmean(r['share'])))} | {fmt(float(np.nanmean(r['cover'])))} | "
                    f"{fmt(float(np.nanmean(r['viol'])))} |")
    return head + rows


def plot(runs, png: Path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    problems = sorted(runs)
    cols = min(4, len(problems))  # one problem: one panel
    rows = -(-len(problems) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax, problem in zip(axes.flat, problems):
        budget = next(iter(runs[problem].values()))["budget"]
        grid = np.linspace(0, budget, 60)
        for s, r in sorted(runs[problem].items()):
            curves = np.array([[at_cost(seed["cost_spent"], seed["regret"], c) for c in grid] for seed in r["seeds"]])
            with np.errstate(all="ignore"):
                med = np.nanmedian(np.maximum(curves, FLOOR), axis=0)
            ax.plot(grid, med, label=s, lw=2 if s.startswith("robust") else 1)
        ax.set_yscale("log")
        ax.set_title(problem, fontsize=9)
        ax.set_xlabel("cost spent after the design")
    for ax in list(axes.flat)[len(problems):]:
        ax.axis("off")
    axes.flat[0].set_ylabel("regret of the recommendation (median)")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)


def summary_markers(name: str = "robust-summary") -> tuple[str, str]:
    """The comment lines around a rendered summary called ``name`` in a page."""
    return f"<!-- {name}: experiments/studies/robust_report.py -->", f"<!-- /{name} -->"




def with_summary(text: str, summary_lines, name: str = "robust-summary") -> str:
    """``text`` with the lines between the markers of ``name`` replaced by the summary."""
    start, end = summary_markers(name)
    head, sep, rest = text.partition(start)
    if not sep:
        raise ValueError(f"no {start} marker")
    _, sep2, tail = rest.partition(end)
    if not sep2:
        raise ValueError(f"no {end} marker")
    return head + start + "\n" + "\n".join(summary_lines) + "\n" + end + tail


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT / "docs" / "data" / "robust"))
    ap.add_argument("--reference", default="robust")
    ap.add_argument("--baselines", default="ei,mes,mumbo,mt_ei,mf_gp_ucb,boca")
    ap.add_argument("--md", default=str(ROOT / "docs" / "results" / "robust.md"))
    ap.add_argument("--png", default=str(ROOT / "docs" / "results" / "robust.png"))
    ap.add_argument("--results", default=str(ROOT / "docs" / "RESULTS.md"),
                    help="a page whose --marker comments get the summary table ('' for none)")
    ap.add_argument("--marker", default="robust-summary",
                    help="name of the marker pair around the summary (robust-heldout-summary for the test problems)")
    ap.add_argument("--problems", default="", help="comma-separated problems to report (default: all)")
    ap.add_argument("--seeds", type=int, default=None, help="report seeds 0 .. SEEDS - 1 only (default: all)")
    ap.add_argument("--relabel", default="",
                    help="comma-separated PROBLEM/STRATEGY=PROBLEM/STRATEGY: report a run under another name")
    args = ap.parse_args(argv)
    relabel = {tuple(a.split("/")): tuple(b.split("/")) for a, b in
               (item.split("=") for item in args.relabel.split(",") if item)}
    runs = load(Path(args.data), [p for p in args.problems.split(",") if p], relabel, args.seeds)
    verdicts, _ = render(runs, args.reference, args.baselines.split(","), Path(args.md), Path(args.png))
    if args.results:
        page = Path(args.results)
        page.write_text(with_summary(page.read_text(), analyse(runs, args.reference, args.baselines.split(","))[1],
                                     args.marker))
    counts = defaultdict(int)
    for _, other, _, v, _, _ in verdicts:
        counts[(other, v)] += 1
    for (other, v), n in sorted(counts.items()):
        print(f"{args.reference} vs {other}: {v} at {n} checkpoints")


if __name__ == "__main__":
    main()
