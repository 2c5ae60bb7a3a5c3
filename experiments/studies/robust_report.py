"""Tables and plots of the robust-default study (experiments/studies/robust.py).

Reads every ``<problem>__<strategy>.json`` in ``--data`` and writes ``--md`` (markdown:
one table per checkpoint, the paired tests, the recommendation's checks, overheads) and
``--png`` (regret of the recommendation against cost, median over seeds, per problem).

Statistics (docs/RESULTS.md, protocol): regret at 25 / 50 / 100 % of the budget (cost
spent after the design) of the recommendation and of the best point measured at the
target; a seed that stopped before a checkpoint (the evaluation cap) is carried at the
last regret it reached and marked (``†k``: k seeds carried), never dropped; paired
two-sided Wilcoxon signed-rank tests on log regret of the reference strategy against each
other one over the seeds both ran, Holm-adjusted over the comparisons of one problem that
have pairs (a comparison without pairs is "not compared" and is not in the family);
"better"/"worse" only where the adjusted p < 0.05, else "level". Beside each verdict, the
smallest detectable factor (``detectable_factor``): how many times higher the reference's
regret could be, with the seeds' observed spread, before the test would call it worse.

    python experiments/studies/robust_report.py --data data/robust
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

try:  # scipy's own statistic, so that the fast path below computes scipy's number
    from scipy.stats._wilcoxon import _wilcoxon_statistic
except ImportError:  # another scipy: stats.wilcoxon itself, slower
    _wilcoxon_statistic = None

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINTS = (0.25, 0.5, 1.0)
FLOOR = 1e-12  # log regret floor (an exact optimum)


def at_cost(cost, values, c):
    """The value after the last evaluation with cost spent <= c. A seed that stopped
    before spending c (the evaluation cap) is carried at its last value (``stopped_before``
    says which seeds to mark); NaN only if no evaluation had cost <= c."""
    cost, values = np.asarray(cost, float), np.asarray(values, float)
    ok = np.flatnonzero(cost <= c + 1e-9)
    return float(values[ok[-1]]) if ok.size else math.nan


def stopped_before(cost, c) -> bool:
    """Whether a seed whose cost spent is ``cost`` stopped before spending ``c``."""
    return len(cost) == 0 or float(cost[-1]) < c - 1e-9


def holm(ps):
    ps = np.asarray(ps, float)
    order = np.argsort(ps)
    adj = np.empty_like(ps)
    run = 0.0
    for rank, i in enumerate(order):
        run = max(run, min(1.0, (len(ps) - rank) * ps[i]))
        adj[i] = run
    return adj


def _rank_sum_plus(d, axis=-1):
    """The Wilcoxon statistic r+ (zero-split) along ``axis``, vectorised over sign patterns."""
    return _wilcoxon_statistic(np.moveaxis(d, axis, -1), "auto", "zsplit", xp=np)[0]


def wilcoxon_p(d) -> float:
    """scipy's two-sided zero-split Wilcoxon signed-rank p-value of the differences ``d``,
    the same number: where scipy runs its exact permutation test (2 to 13 differences with
    ties or zeros) the statistic is evaluated over all 2^n sign patterns at once instead of
    one pattern at a time (about 40x faster; the report's power search calls it thousands
    of times)."""
    d = np.asarray(d, float)
    n = d.shape[-1]
    if _wilcoxon_statistic is not None and 2 <= n <= 13 and (np.any(d == 0) or np.unique(np.abs(d)).size < n):
        return float(stats.permutation_test((d,), _rank_sum_plus, vectorized=True, n_resamples=9999,
                                            permutation_type="samples", alternative="two-sided", axis=-1).pvalue)
    return float(stats.wilcoxon(d, zero_method="zsplit").pvalue)


def paired(a, b):
    """``(p, a_lower, b_lower, n_pairs)`` of the log regrets ``a`` and ``b``, dicts
    ``{seed: regret}`` paired by seed (seeds one side lacks, and NaN values, are left out).
    ``p`` is None where there is no pair: no test, "not compared", outside any Holm family."""
    seeds = sorted(k for k in set(a) & set(b) if np.isfinite(a[k]) and np.isfinite(b[k]))
    la = np.log(np.maximum(np.array([a[k] for k in seeds], float), FLOOR))
    lb = np.log(np.maximum(np.array([b[k] for k in seeds], float), FLOOR))
    lo, hi = int(np.sum(la < lb)), int(np.sum(lb < la))
    if not seeds:
        return None, 0, 0, 0
    if np.allclose(la, lb):
        return 1.0, lo, hi, len(seeds)
    return wilcoxon_p(la - lb), lo, hi, len(seeds)


def matched(ca, cb, c):
    """Paired regrets at matched cost: ``(a, b, k)`` with ``a``/``b`` ``{seed: regret}`` over
    the seeds both ran, each pair taken at the smaller of ``c`` and the cost where either
    seed stopped (``ca``/``cb``: ``{seed: (cost spent, regret)}``); ``k`` pairs were matched
    below ``c`` because a seed stopped early."""
    a, b, k = {}, {}, 0
    for seed in sorted(set(ca) & set(cb)):
        (xa, ya), (xb, yb) = ca[seed], cb[seed]
        m = min(c, float(xa[-1]) if len(xa) else 0.0, float(xb[-1]) if len(xb) else 0.0)
        k += m < c - 1e-9
        a[seed], b[seed] = at_cost(xa, ya, m), at_cost(xb, yb, m)
    return a, b, k


def log_differences(a, b):
    """Paired log-regret differences ``log a - log b`` over the seeds both have."""
    seeds = sorted(k for k in set(a) & set(b) if np.isfinite(a[k]) and np.isfinite(b[k]))
    return (np.log(np.maximum(np.array([a[k] for k in seeds], float), FLOOR))
            - np.log(np.maximum(np.array([b[k] for k in seeds], float), FLOOR)))


def detectable_factor(d, family: int, alpha: float = 0.05) -> float:
    """The smallest factor between medians that the test could detect with these seeds
    and this family: ``exp(delta)`` for the smallest ``delta >= 0`` at which the paired
    two-sided Wilcoxon test of the differences ``d - median(d) + delta`` (the seeds'
    observed spread, shifted so that the reference is ``exp(delta)`` times higher) has
    p < alpha / family, the threshold the first step of Holm's procedure sets. ``inf``
    where no shift can reach it (too few pairs: the smallest p with n pairs is 2 / 2^n)."""
    d = np.asarray(d, float)
    d = d[np.isfinite(d)]
    n, level = d.size, alpha / max(int(family), 1)
    if n == 0 or 2.0 / 2.0 ** n >= level:
        return math.inf
    c = d - np.median(d)

    def p(delta):
        x = c + delta
        if np.all(x == 0):
            return 1.0
        return wilcoxon_p(x)

    hi = max(float(np.max(np.abs(c))), 1e-6) * 2 + 1e-6
    for _ in range(60):  # every difference positive gives the smallest p (ties: approximate)
        if p(hi) < level:
            break
        hi *= 2
    else:
        return math.inf
    lo = 0.0
    for _ in range(30):  # hi / 2^30: far below the 2 digits printed
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if p(mid) >= level else (lo, mid)
    return float(math.exp(hi))


def load(data, only=None, relabel=None, n_seeds=None):
    """``{problem: {strategy: run}}`` of the files in ``data`` (a folder, or a list of
    folders: a (problem, strategy) found in several is taken from the first, so a screen's
    folder can be read beside the study it is compared with); ``only``: the problems to
    keep (after relabelling); ``relabel``: ``{(problem, strategy): (problem, strategy)}``
    (a companion problem's run shown under another problem, e.g. BO by K-fold CV under
    FASTCV's fold problem: the same target, the same regret); ``n_seeds``: keep seeds
    0 .. n_seeds - 1 only (the tests pair seeds by position: every run needs the same ones)."""
    runs = defaultdict(dict)
    folders = [data] if isinstance(data, (str, Path)) else list(data)
    for folder in folders:
        earlier = {(p, s) for p, by in runs.items() for s in by}
        for f in sorted(Path(folder).glob("*__*.json")):
            r = json.loads(f.read_text())
            r["seeds_run"] = len(r["seeds"])  # its wall time covers these, whatever is kept below
            if n_seeds:
                r["seeds"] = [s for s in r["seeds"] if s["seed"] < n_seeds]
            key = (relabel or {}).get((r["problem"], r["strategy"]), (r["problem"], r["strategy"]))
            if (only and key[0] not in only) or key in earlier:
                continue
            runs[key[0]][key[1]] = r
    return runs


def per_seed(run, budget):
    """Per-seed checks of one run; ``rec``/``best``: ``{checkpoint: {seed: regret}}`` (a seed
    that stopped early carried at its last value), ``carried``: ``{checkpoint: [seeds]}``."""
    rec = {f"{c:g}": {} for c in CHECKPOINTS}
    best = {f"{c:g}": {} for c in CHECKPOINTS}
    carried = {f"{c:g}": [] for c in CHECKPOINTS}
    share, rise, cover, viol, over, stopped = [], [], [], [], [], 0
    tz = run["target_z"]
    curves = {}
    for s in run["seeds"]:
        cost = s["cost_spent"]
        curves[s["seed"]] = (np.asarray(cost, float), np.asarray(s["regret"], float))
        for c in CHECKPOINTS:
            rec[f"{c:g}"][s["seed"]] = at_cost(cost, s["regret"], c * budget)
            best[f"{c:g}"][s["seed"]] = at_cost(cost, s["best_regret"], c * budget)
            if stopped_before(cost, c * budget):
                carried[f"{c:g}"].append(s["seed"])
        stopped += stopped_before(cost, budget)
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
    return dict(budget=budget, rec=rec, best=best, carried=carried, share=share, rise=rise, cover=cover, viol=viol, over=over,
                stopped=stopped, n=len(run["seeds"]), curves=curves)


def fmt(v):
    return "-" if v is None or not np.isfinite(v) else f"{v:.3g}"


def provenance(runs) -> str:
    """One line naming the code that produced the seeds reported (each seed's ``"code"``,
    ``git describe --dirty`` at its run; "unrecorded" for records older than that field)
    and how to check a record against the code at HEAD."""
    counts, stacks = defaultdict(int), defaultdict(int)
    for by_strategy in runs.values():
        for run in by_strategy.values():
            for s in run["seeds"]:
                counts[s.get("code", "unrecorded")] += 1
                on = s.get("stack")
                stacks[f"jax {on['jax']} ({on['backend']}) on {on['cpu']}" if on else "unrecorded"] += 1
    def named(c):
        return ", ".join(f"{k} ({n} seeds)" for k, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
    # the stacks are named once some seed records one (records older than the field do not)
    on = (f" On the stacks: {named(stacks)}; a seed reproduces bit for bit only on the stack it names."
          if set(stacks) != {"unrecorded"} else "")
    return (f"Produced by the code at: {named(counts)}. `python experiments/studies/reproduce.py RECORD.json` reruns a "
            f"record at HEAD and says whether it reproduces.{on}")


def render(runs, reference, baselines, md: Path, png: Path | None):
    """Write the full report (``md``) and the plot (``png``); returns ``(verdicts, summary lines)``."""
    detail, summary_lines, verdicts, summary = analyse(runs, reference, baselines)
    md.parent.mkdir(parents=True, exist_ok=True)
    md.write_text(report_text(detail, summary_lines, runs))
    if png is not None:
        plot(runs, png)
    return verdicts, summary_lines


def _values(d):
    return np.array(list(d.values()), float)


def _med(d):
    v = _values(d)
    return float(np.nanmedian(v)) if np.isfinite(v).any() else math.nan


def _dagger(st, c="1"):
    """`` †k`` where k seeds of a run were carried at the checkpoint (stopped before it)."""
    k = len(st["carried"][c])
    return f" †{k}" if k else ""


def fmt_factor(f):
    """A detectable factor as printed: ``none`` where no shift could be detected, ``tie``
    where every pair was equal (NaN: both sides at the same regret on every seed)."""
    if f != f:
        return "tie"
    return "none" if not np.isfinite(f) else (f"{f:.2g}x" if f < 100 else f"{f:.0f}x")


def wall_times(runs) -> list[str]:
    """A table of each sweep's wall time: per problem and strategy, the minutes its record
    took over every seed it holds (``wall_s``, summed over the launches that appended
    seeds), with the total."""
    strategies = sorted({s for by_strategy in runs.values() for s in by_strategy})
    lines = ["Wall time of each sweep, minutes (every seed its record holds, one process per sweep, "
             "as run on the study's machine):", "",
             "| problem | " + " | ".join(strategies) + " |", "|---|" + "---|" * len(strategies)]
    total = 0.0
    for problem in sorted(runs):
        cells = []
        for s in strategies:
            run = runs[problem].get(s)
            wall = run.get("wall_s") if run else None
            total += wall or 0.0
            cells.append("-" if wall is None else f"{wall / 60:.1f} ({run.get('seeds_run', len(run['seeds']))})")
        lines.append(f"| {problem} | " + " | ".join(cells) + " |")
    return lines + ["", f"In all {total / 3600:.1f} hours of one process (seeds in brackets)."]


def report_text(detail, summary_lines, runs) -> str:
    """The markdown report (``--md``) of ``analyse``'s detail and summary lines, with the
    :func:`provenance` of ``runs`` and the :func:`wall_times` of its sweeps."""
    lines = ["<!-- generated by experiments/studies/robust_report.py; do not edit -->", "", provenance(runs), ""]
    return "\n".join(lines + summary_lines + [""] + detail + wall_times(runs)) + "\n"


def analyse(runs, reference, baselines):
    """``(detail lines, summary lines, verdicts, per-problem stats)`` of the study.
    ``verdicts``: ``(problem, other, checkpoint, verdict, median ref., median other,
    detectable factor)``, verdict one of better / worse / level / not compared."""
    lines = []
    verdicts = []
    summary = {}
    for problem in sorted(runs):
        strategies = runs[problem]
        any_run = next(iter(strategies.values()))
        budget = any_run["budget"]
        stats_ = {s: per_seed(r, budget) for s, r in strategies.items()}
        counts = sorted({st["n"] for st in stats_.values()})
        n_text = " or ".join(str(n) for n in counts)
        lines += [f"### {problem} (budget {budget:g}, {n_text} seeds)", "",
                  "| strategy | rec. 25 % | rec. 50 % | rec. 100 % | best meas. 100 % | target share | "
                  "worst rise | coverage | rec. worse than meas. | overhead s | stopped by cap |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        order = [reference] + [s for s in sorted(strategies) if s != reference]
        for s in order:
            if s not in stats_:
                continue
            st = stats_[s]
            over = np.asarray(st["over"], float)
            med_over = float(np.nanmedian(over)) if np.isfinite(over).any() else math.nan
            lines.append(f"| {s} | {fmt(_med(st['rec']['0.25']))}{_dagger(st, '0.25')} | "
                         f"{fmt(_med(st['rec']['0.5']))}{_dagger(st, '0.5')} | "
                         f"{fmt(_med(st['rec']['1']))}{_dagger(st)} | {fmt(_med(st['best']['1']))}{_dagger(st)} | "
                         f"{fmt(float(np.nanmean(st['share'])))} | {fmt(float(np.nanmax(st['rise'])))} | "
                         f"{fmt(float(np.nanmin(st['cover'])))}-{fmt(float(np.nanmax(st['cover'])))} | "
                         f"{fmt(float(np.nanmean(st['viol'])))} | {fmt(med_over)} | {st['stopped']}/{st['n']} |")
        lines += ["", "† k: k seeds stopped (the evaluation cap) before that cost; each is carried at the "
                  "last regret it reached, never dropped."]
        if reference in stats_:
            lines += ["", f"Paired tests, {reference} against each (Wilcoxon on log regret of the recommendation "
                      "over the seeds both ran, at matched cost: a pair where either seed stopped before the "
                      "checkpoint is compared at the cost where it stopped, for both sides, and counted as "
                      "matched; medians are of these pairs; Holm over this problem's comparisons that "
                      "have pairs; lower/higher = seeds where the reference is lower/higher; detectable: the "
                      "smallest factor by which the reference could be higher, with this spread, these pairs and "
                      "this family, and be called worse):",
                      "", "| against | checkpoint | median ref. | median other | pairs | ref. lower / higher | p | "
                      "Holm p | verdict | detectable |",
                      "|---|---|---|---|---|---|---|---|---|---|"]
            rows = []
            for other in [b for b in baselines if b in stats_ and b != reference]:
                for c in CHECKPOINTS:
                    a, b, k = matched(stats_[reference]["curves"], stats_[other]["curves"], c * budget)
                    p, lo, hi, n = paired(a, b)
                    rows.append(dict(other=other, c=c, ma=_med(a), mb=_med(b), lo=lo, hi=hi, p=p, n=n,
                                     d=log_differences(a, b), k=k))
            tested = [r for r in rows if r["p"] is not None]
            adj = holm([r["p"] for r in tested]) if tested else []
            for r, pa in zip(tested, adj):
                r["pa"] = float(pa)
            for r in rows:
                if r["p"] is None:
                    verdict, factor = "not compared", math.inf
                    ptext = "- | -"
                else:
                    pa = r["pa"]
                    verdict = "level" if pa >= 0.05 else ("better" if r["ma"] < r["mb"] else "worse")
                    factor = detectable_factor(r["d"], len(tested)) if np.any(r["d"] != 0) else math.nan
                    ptext = f"{r['p']:.3g} | {pa:.3g}"
                verdicts.append((problem, r["other"], r["c"], verdict, r["ma"], r["mb"], factor))
                n_text = f"{r['n']} ({r['k']} matched)" if r["k"] else f"{r['n']}"
                lines.append(f"| {r['other']} | {r['c']:.0%} | {fmt(r['ma'])} | {fmt(r['mb'])} | "
                             f"{n_text} | {r['lo']}/{r['hi']} | {ptext} | {verdict} | {fmt_factor(factor)} |")
        lines.append("")
        summary[problem] = stats_
    table = summary_table(summary, verdicts, reference, baselines)
    return lines, table + [""] + target_lines(summary, verdicts, reference), verdicts, summary


# problems whose cheap sources are reliable: the suite's own labels, the paper's problems,
# and the held-out Park functions (correlation 0.99 and 1)
RELIABLE = {"currin", "borehole", "hartmann3", "hartmann6", "forrester", "park", "park91b"}


def _reliable(problem: str) -> bool:
    from mumbo_jax.benchmarks.problems import SOURCE_KIND, heldout
    return problem in RELIABLE or SOURCE_KIND.get(problem, heldout.SOURCE_KIND.get(problem)) == "reliable"


def _median(st, key="rec", c="1"):
    return _med(st[key][c])


def _worst(vs):
    """One word for a list of verdicts: worse > better > level; "not compared" if no test had pairs."""
    vs = [v for v in vs if v != "not compared"]
    if not vs:
        return "not compared"
    return "worse" if "worse" in vs else ("better" if "better" in vs else "level")


VIOL_LIMIT = 0.02  # the recommendation's target: worse than a measured point beyond its interval at <= 2 % of steps
MUMBO_FACTOR = 1.5  # "level with MUMBO" where MUMBO beats EI: not significantly worse and the median within 1.5x


def beats(stats_a, stats_b) -> bool:
    """Whether run a is significantly lower than run b at some checkpoint (paired at
    matched cost, Holm over the checkpoints that have pairs); ``stats_*``: :func:`per_seed`'s."""
    rows = []
    for c in CHECKPOINTS:
        a, b, _ = matched(stats_a["curves"], stats_b["curves"], c * stats_a["budget"])
        p, *_ = paired(a, b)
        if p is not None:
            rows.append((p, _med(a) < _med(b)))
    return any(pa < 0.05 and lower for pa, (_, lower) in zip(holm([r[0] for r in rows]) if rows else [], rows))


def target_lines(summary, verdicts, reference):
    """The targets, checked on these data: one bullet each (problems named where a target
    is missed; comparisons without pairs named as not compared)."""
    probs = [p for p in sorted(summary) if reference in summary[p]]
    n = len(probs)

    def has(p, others, word, c=None):
        return any(v == word for q, o, cc, v, *_ in verdicts if q == p and o in others and (c is None or cc == c))

    def ratio(p, other):
        a, b = _median(summary[p][reference]), _median(summary[p][other])
        return f"{p} {fmt(a)}{_dagger(summary[p][reference])} against {fmt(b)}{_dagger(summary[p][other])}"

    def names(ps):
        return ", ".join(ps) if ps else "none"

    def factor(p, other="ei", c=1.0):
        fs = [f for q, o, cc, v, _, _, f in verdicts if q == p and o == other and cc == c and v != "not compared"]
        return fs[0] if fs else math.inf

    sig_worse = [p for p in probs if has(p, ("ei", "mes"), "worse")]
    above_ei = [p for p in probs if "ei" in summary[p] and _median(summary[p][reference]) > _median(summary[p]["ei"])]
    with_ei = [p for p in probs if "ei" in summary[p] and reference != "ei"]
    reliable = [p for p in probs if _reliable(p) and "ei" in summary[p]]
    half = [p for p in reliable if has(p, ("ei",), "better", 0.5)]
    two_stage = [p for p in probs if any(b in summary[p] for b in ("mt_ei", "mf_gp_ucb", "boca"))]

    def best_two_stage(p):  # seeds that stopped early are carried (marked in the tables)
        meds = [_median(summary[p][b]) for b in ("mt_ei", "mf_gp_ucb", "boca") if b in summary[p]]
        return min((m for m in meds if np.isfinite(m)), default=math.inf)

    at_or_below = [p for p in two_stage if _median(summary[p][reference]) <= best_two_stage(p)]
    two_worse = [p for p in two_stage if has(p, ("mt_ei", "mf_gp_ucb", "boca"), "worse")]
    viol = {p: float(np.nanmean(summary[p][reference]["viol"])) for p in probs}
    over = [f"{p} {fmt(v)}" for p, v in viol.items() if v > VIOL_LIMIT]
    cover = [p for p in probs if float(np.nanmean(summary[p][reference]["cover"])) < 0.9]
    cov = [float(np.nanmean(summary[p][reference]["cover"])) for p in probs]
    mumbo = [p for p in probs if "mumbo" in summary[p]]
    mumbo_above = [f"{q} {fmt(ma)} against {fmt(mb)}" for q, o, cc, v, ma, mb, _ in verdicts
                   if q in mumbo and o == "mumbo" and cc == 1.0 and ma > mb]
    lines = [
        f"Targets, checked on these {n} problems ({reference}; Holm-adjusted paired tests at 25, 50 and 100 % of "
        "the budget over the tests that have pairs, at matched cost where a seed stopped early (the cost where it "
        "stopped, for both sides); † k: k seeds stopped by the cap before the budget, carried at their last regret "
        "in the medians; detectable: the smallest factor between medians the paired test could call worse with these "
        "seeds and this problem's Holm family):",
        "",
        f"* Significantly worse than EI or MES at some checkpoint: {names(sig_worse)}. "
        f"Median final regret above EI's: {names([ratio(p, 'ei') for p in above_ei])}.",
    ]
    if with_ei:
        lines.append("* Power: the smallest factor by which the final regret could exceed EI's and the test at 100 % "
                     "still not call it worse: " + ", ".join(f"{p} {fmt_factor(factor(p))}" for p in with_ei) + ".")
    lines += [
        f"* Cheap source reliable: significantly better than EI at half the budget on {len(half)} of {len(reliable)} "
        f"({names(half)}).",
        f"* At or below the best of MT-EI and MF-GP-UCB (BOCA) on {len(at_or_below)} of {len(two_stage)}; "
        f"one of them significantly better: {names(two_worse)}.",
    ]
    if mumbo:
        lines.append(
            f"* Against MUMBO (at matched cost): significantly better at some checkpoint on "
            f"{names([p for p in mumbo if has(p, ('mumbo',), 'better')])}; significantly worse on "
            f"{names([p for p in mumbo if has(p, ('mumbo',), 'worse')])}; not compared (no pairs) on "
            f"{names([p for p in mumbo if has(p, ('mumbo',), 'not compared')])}; final median above MUMBO's "
            f"(matched pairs at 100 %): {names(mumbo_above)}.")
        strong = [p for p in mumbo if "ei" in summary[p] and beats(summary[p]["mumbo"], summary[p]["ei"])]
        far = [f"{q} {fmt(ma)} against {fmt(mb)}" for q, o, cc, v, ma, mb, _ in verdicts
               if q in strong and o == "mumbo" and cc == 1.0 and ma > MUMBO_FACTOR * mb]
        lines.append(
            f"* Where MUMBO is significantly better than EI at some checkpoint ({names(strong)}): significantly "
            f"worse than MUMBO on {names([p for p in strong if has(p, ('mumbo',), 'worse')])}; final median above "
            f"{MUMBO_FACTOR:g} times MUMBO's on {names(far)}.")
    lines.append(
        f"* Recommendation worse than the best measured target point by more than its interval: at most "
        f"{fmt(max(viol.values()))} of the steps on a problem; above {VIOL_LIMIT * 100:g} % of the steps on "
        f"{names(over)}. Its 95 % interval covers the truth at {fmt(min(cov))} to {fmt(max(cov))} of the steps; "
        f"under 0.9 on {names(cover)}.")
    return lines


def summary_table(summary, verdicts, reference, baselines):
    """One line per problem: the reference's final median regret against EI, MES and
    the better of the two-stage heuristics, the worst verdict against each over the
    checkpoints, the smallest factor the final test against EI could detect, and the
    reference's recommendation checks. † k: k seeds carried (stopped by the cap)."""
    med = _median

    def verdict(problem, other):
        vs = [v for p, o, _, v, *_ in verdicts if p == problem and o == other]
        return _worst(vs) if vs else "-"

    def at(problem, other, c):
        vs = [(v, f) for p, o, cc, v, _, _, f in verdicts if p == problem and o == other and cc == c]
        return vs[0] if vs else ("-", math.inf)

    def cell(st, s):
        return f"{fmt(med(st[s]))}{_dagger(st[s])}" if s in st else "-"

    head = [f"| problem | {reference} | EI | MES | MUMBO | best of MT-EI, MF-GP-UCB / BOCA | vs EI (50 % / any) | "
            "detectable vs EI (100 %) | vs MES | vs MUMBO | vs two-stage | target share | coverage | "
            "rec. worse than meas. |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for problem, st in sorted(summary.items()):
        if reference not in st:
            continue
        r = st[reference]
        two = [(med(st[b]), b) for b in ("mt_ei", "mf_gp_ucb", "boca") if b in st and np.isfinite(med(st[b]))]
        two_best = min(two) if two else (math.nan, "-")
        two_cell = f"{fmt(two_best[0])}{_dagger(st[two_best[1]]) if two_best[1] in st else ''} ({two_best[1]})"
        two_verdicts = [verdict(problem, b) for b in ("mt_ei", "mf_gp_ucb", "boca") if b in st]
        two_v = _worst(two_verdicts) if two_verdicts else "-"
        ei_factor = at(problem, "ei", 1.0)
        rows.append(f"| {problem} | {cell(st, reference)} | {cell(st, 'ei')} | {cell(st, 'mes')} | "
                    f"{cell(st, 'mumbo')} | {two_cell} | {at(problem, 'ei', 0.5)[0]} / {verdict(problem, 'ei')} | "
                    f"{fmt_factor(ei_factor[1]) if ei_factor[0] not in ('-', 'not compared') else '-'} | "
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
    ap.add_argument("--data", default=str(ROOT / "data" / "robust"),
                    help="the records' folder, or comma-separated folders (a record in several: the first's)")
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
    runs = load([Path(d) for d in args.data.split(",")], [p for p in args.problems.split(",") if p], relabel,
                args.seeds)
    verdicts, summary_lines = render(runs, args.reference, args.baselines.split(","), Path(args.md), Path(args.png))
    if args.results:
        page = Path(args.results)
        page.write_text(with_summary(page.read_text(), summary_lines,
                                     args.marker))
    counts = defaultdict(int)
    for _, other, _, v, *_ in verdicts:
        counts[(other, v)] += 1
    for (other, v), n in sorted(counts.items()):
        print(f"{args.reference} vs {other}: {v} at {n} checkpoints")


if __name__ == "__main__":
    main()
