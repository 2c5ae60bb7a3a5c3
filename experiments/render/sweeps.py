"""RESULTS, the paper's figures: the ``mumbo-jax compare`` sweeps under ``docs/results/``.

* ``compare DIR``: the summary and the paired table (Wilcoxon, Holm-adjusted) of
  ``docs/results/DIR/results.json`` (``mumbo-jax compare`` output); the driver also
  rewrites ``docs/results/DIR/table.md`` (the text ``mumbo-jax compare --render-only`` writes).
* ``summary DIR``: the summary table alone.
* ``sweep DIR``: what a sweep cost: wall time per strategy, runs stopped by the
  evaluation cap, the largest one-step overhead.
* ``verdict``: the Figure 3 claim, paired and Holm-adjusted, over the paper-sized sweeps.
"""

from __future__ import annotations

from .common import ALPHA, _compare_module, _load


def compare_table(results: dict) -> str:
    """The text of ``table.md`` for one ``mumbo-jax compare`` results dict."""
    compare = _compare_module()
    records = {lab: r["per_seed"] for lab, r in results["strategies"].items()}
    table = compare.markdown_table({lab: r["summary"] for lab, r in results["strategies"].items()})
    if len(records) > 1:
        table += "\n" + compare.paired_table(records)
    return table


def render_compare(root, name):
    return compare_table(_load(root, f"docs/results/{name}/results.json"))


def render_summary(root, name):
    """The summary table alone (the reduced sweeps: too few seeds for paired tests)."""
    res = _load(root, f"docs/results/{name}/results.json")
    return _compare_module().markdown_table({lab: r["summary"] for lab, r in res["strategies"].items()})


def render_sweep(root, name):
    res = _load(root, f"docs/results/{name}/results.json")
    strat = res["strategies"]
    total = sum(r["wall_time_s"] for r in strat.values()) / 60
    each = ", ".join(f"{lab} {r['wall_time_s'] / 60:.1f}" for lab, r in strat.items())
    n_seeds = len(res["seeds"])
    capped, short = [], []
    for lab, r in strat.items():
        for s in r["per_seed"]:
            n, spent = len(s["regret"]) - 1, s["cost_spent"][-1]
            if spent < res["budget"]:
                (capped if n >= res["max_evals"] else short).append(f"{lab} seed {s['seed']} ({n} evaluations, "
                                                                     f"cost {spent:.4g})")
    worst = max(((o, lab) for lab, r in strat.items() for s in r["per_seed"] for o in s["overheads"]
                 if o is not None), default=None)
    lines = [f"Run: {len(strat)} strategies x {n_seeds} seeds, {total:.1f} min in all (minutes per strategy: {each})."]
    if capped or short:
        parts = []
        if capped:
            parts.append(f"stopped by the cap of {res['max_evals']} evaluations before the budget: " + "; ".join(capped))
        if short:
            parts.append("stopped short of the budget otherwise: " + "; ".join(short))
        lines.append(f"Every run spent the budget of {res['budget']:g} except: " + ". ".join(parts) + ".")
    else:
        lines.append(f"Every run spent the budget of {res['budget']:g}.")
    if worst:
        lines.append(f"Largest overhead of a single step: {worst[0]:.1f} s ({worst[1]}).")
    return "\n".join(lines) + "\n"


# the Figure 3 claim: MUMBO-10 against these, on the paper-sized sweeps
VERDICT_ROWS = (("Currin", "currin_full"), ("Hartmann-3", "hartmann3_full"), ("Borehole", "borehole_full"),
                ("Continuous Currin (Figure 7)", "currin_continuous_full"))
VERDICT_COLUMNS = ("ei", "mes", "mt_ei", "mf_gp_ucb", "boca", "mtbo-50")
# sweeps run before the configs used the rules' own names hold the older labels
OLD_LABELS = {"mt_ei": "mt-ei", "mf_gp_ucb": "mf-gp-ucb"}


def verdict_cell(c: dict) -> str:
    """``below``/``above`` (MUMBO-10's final regrets against the rule's) where the
    Holm-adjusted p is under ALPHA, else ``level``."""
    p, raw = c["p_holm"], c["p_value"]
    if c.get("n", 1) == 0:
        return "not compared (no seed run by both)"  # no pairs: outside the Holm family
    if p is None:
        return "tied on every seed"
    word = "level"
    if p < ALPHA:
        word = "below" if c["reference_lower"] > c["other_lower"] else "above"
    return f"{word} (p = {raw:.2g}, Holm {p:.2g})"


def render_verdict(root, _arg=None):
    compare = _compare_module()
    head = ["problem (seeds)"] + [f"vs {c.upper().replace('_', '-')}" for c in VERDICT_COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for title, name in VERDICT_ROWS:
        res = _load(root, f"docs/results/{name}/results.json")
        records = {lab: r["per_seed"] for lab, r in res["strategies"].items()}
        _, rows = compare.paired_comparisons(records, "mumbo-10")
        found = [c if c in rows else OLD_LABELS.get(c) for c in VERDICT_COLUMNS]
        cells = [verdict_cell(rows[c]) if c in rows else "not run" for c in found]
        lines.append(f"| {title} ({len(res['seeds'])}) | " + " | ".join(cells) + " |")
    lines.append("| Hartmann-6 | not run at paper size | | | | | |")
    return "\n".join(lines) + "\n"

