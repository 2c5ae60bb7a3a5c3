"""Regenerate every results table of docs/RESULTS.md and docs/performance.md (and any in README.md)
from committed data.

    python experiments/render_results.py            # rewrite the tables in place
    python experiments/render_results.py --check    # exit 1 and name what is stale

A table lives between two markers in the markdown,

    <!-- render: NAME ARG -->
    ...generated text...
    <!-- /render -->

and is rebuilt from the data named by ``NAME ARG`` (the renderers are in ``RENDERERS``):

* ``compare DIR``: the summary and the paired table (Wilcoxon, Holm-adjusted) of
  ``docs/results/DIR/results.json`` (``mumbo-jax compare`` output); also rewrites
  ``docs/results/DIR/table.md`` (the same text ``mumbo-jax compare --render-only`` writes).
* ``summary DIR``: the summary table alone.
* ``sweep DIR``: what a sweep cost: wall time per strategy, runs stopped by the
  evaluation cap, the largest one-step overhead.
* ``verdict``: the Figure 3 claim, paired and Holm-adjusted, over the paper-sized sweeps.
* ``overhead_mtbo``: ``data/overhead_mumbo_vs_mtbo.json``
  (``experiments/paper/overhead_mumbo_vs_mtbo.py``).
* ``speed``: ``data/speed.json`` (``experiments/performance/bench_acquisition.py``).
* ``bo_studies``: ``data/bench_bo.jsonl`` and the GPU runs in ``data/gpu/``
  (``experiments/paper/bench_bo.py regret``).
* ``step_overhead``: the ``overhead`` record of ``data/bench_bo.jsonl``
  (``experiments/paper/bench_bo.py overhead``).
* ``decision``: ``data/bench_decision.json`` (``experiments/performance/bench_decision.py``):
  one ``ask()`` against n, the last run of each label.
* ``fit_speed_seed_study``: ``data/fit_speed_seed_study.json`` (``experiments/ablations/seed_study_fit_speed.py``):
  which fit-speed piece changes MUMBO's results.
* ``profile_decision``: the last run in ``data/profile_decision.json``
  (``experiments/performance/profile_decision.py``): where one decision's time goes.
* ``sweep_timing``: ``data/sweep_timing/sweeps.json`` (``experiments/performance/time_sweep.py``): a
  sweep's wall time.
* ``compare_workers``: ``data/compare_workers.json``
  (``experiments/performance/bench_compare_workers.py``).
* ``fastcv MODEL``: ``data/fastcv_MODEL.json`` (``experiments/paper/fastcv.py``).
* ``async_study NAME``: ``data/NAME`` (``experiments/studies/async_study.py``).
* ``batch_study REL``: ``data/ablations/batch_REL`` and ``s10_REL``
  (``experiments/ablations/ablation_mumbo.py --tag batch``).
* ``batch_study_defaults REL``: ``data/ablations/batchd_REL`` (``--tag batchd
  --base-defaults``) and the default's row of ``s10b_REL``.

``tests/test_results.py`` checks that the committed files equal what this renders (no
runs: it reads the data only).
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import re
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/RESULTS.md", "docs/performance.md", "docs/results/mumbo_more_problems.md")
MARKER = re.compile(r"(<!-- render: *([a-z_0-9]+)(?: +([A-Za-z0-9_./-]+))? *-->\n)(.*?)(<!-- /render -->)", re.S)
ALPHA = 0.05


def _compare_module():
    try:
        from mumbo_jax.run import compare
    except ImportError:  # a plain checkout: the package beside this script
        sys.path.insert(0, str(ROOT))
        from mumbo_jax.run import compare
    return compare


def _load(root, rel):
    path = pathlib.Path(root) / rel
    if not path.is_file():
        raise ValueError(f"{rel} not found: the data behind this table is not committed")
    return json.loads(path.read_text())


def _jsonl(root, rel):
    path = pathlib.Path(root) / rel
    if not path.is_file():
        raise ValueError(f"{rel} not found: the data behind this table is not committed")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --------------------------------------------------------------------------- compare sweeps


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


# --------------------------------------------------------------------------- timing studies


def _num(v: float) -> str:
    """A regret for prose-like tables: 3 significant digits from 0.01 up, else 1.3e-4."""
    if v == 0 or abs(v) >= 0.01:
        return f"{v:.3g}"
    mant, exp = f"{v:.1e}".split("e")
    return f"{mant}e{int(exp)}"


def _load_note(rec) -> str:
    la = rec.get("loadavg_start") or rec.get("loadavg")
    return "" if la is None else f", load average {la[0]:.1f}"


def render_overhead_mtbo(root, _arg=None):
    data = _load(root, "data/overhead_mumbo_vs_mtbo.json")
    rows = data["rows"]
    lines = [f"`{data['command'].strip()}` on {_machine(data)} (jax {data['jax']}{_load_note(data)}), "
             f"median of {data['repeats']} decisions after compilation:", "",
             "| problem | observations | N | MUMBO-N (s) | MTBO-N (s) | MTBO / MUMBO |", "|---|---|---|---|---|---|"]
    for prob in dict.fromkeys(r["problem"] for r in rows):
        for n in dict.fromkeys(r["samples"] for r in rows if r["problem"] == prob):
            get = lambda s: next(r for r in rows if (r["problem"], r["samples"], r["strategy"]) == (prob, n, s))
            a, b = get("mumbo"), get("mtbo")
            lines.append(f"| {prob} | {a['observations']} | {n} | {a['decision_s']:.3f} | {b['decision_s']:.3f} | "
                         f"{b['decision_s'] / a['decision_s']:.1f} |")
    return "\n".join(lines) + "\n"


def render_speed(root, _arg=None):
    d = _load(root, "data/speed.json")
    per = d["mumbo_s"] / (d["candidates"] * d["fidelities"]) * 1e6
    lines = [f"`{d['command']}` on {_machine(d)} (jax {d['jax']}{_load_note(d)}), "
             f"median of {d['repeats']} calls after compilation:", "",
             "| piece | time | target |", "|---|---|---|",
             f"| MUMBO, N = {d['n_gstar']} g*, {d['candidates']:,} candidates x {d['fidelities']} fidelities, joint "
             f"moments included | {d['mumbo_s'] * 1e3:.0f} ms ({per:.1f} us per (x, z); the joint moments alone "
             f"{d['joint_moments_s'] * 1e3:.0f} ms) | <= 250 ms |",
             f"| Gumbel g* on the 30,000-point grid (grid posterior + in-graph fit) | {d['gstar_s'] * 1e3:.0f} ms "
             f"(the fit alone {d['gumbel_fit_s'] * 1e3:.0f} ms) | <= 100 ms |",
             f"| hyper-parameter fit, 8 restarts, {d['observations']} points | {d['fit_8_restarts_s']:.2f} s | <= 2 s |"]
    return "\n".join(lines) + "\n"


# README "BO studies": (problem, budget, batching) -> the record of bench_bo.jsonl (the last one wins)
CPU_STUDIES = (("forrester", 200.0), ("currin", 200.0), ("borehole", 200.0))
OPTIMA = {"borehole": "optimum 309.83"}


def _study_command(r) -> str:
    cmd = f"--problem {r['problem']} --budget {r['budget']:g} --seeds {r['seeds']} --max-evals {r['max_evals']}"
    if r.get("refit_every", 1) != 1:
        cmd += f" --refit-every {r['refit_every']}"
    if r.get("batching", "map") != "map":
        cmd += f" --batching {r['batching']}"
    if r.get("min_buffer") not in (None, 32):
        cmd += f" --min-buffer {r['min_buffer']}"
    return cmd


def _device(r) -> str:
    return "2-core CPU, one core" if r["device"] == "cpu" else f"one {r['device']} GPU"


def _machine(d) -> str:
    return f"the {d['cpu_count']}-core CPU" if d["device"] == "cpu" else f"one {d['device']}"


def render_bo_studies(root, _arg=None):
    recs = [r for r in _jsonl(root, "data/bench_bo.jsonl") if r["study"] == "regret"]
    gpu_h3 = [r for r in _jsonl(root, "data/gpu/h3.jsonl") if r["study"] == "regret"][-1]
    lines = ["| problem | command (`python experiments/paper/bench_bo.py regret ...`) | median final simple regret "
             "(quartiles) | evaluations per seed | wall time | device |", "|---|---|---|---|---|---|"]

    def row(r, note=None):
        q = r["quartiles"]
        med = f"{_num(r['median_final_regret'])} ({_num(q[0])}, {_num(q[1])})"
        if r["problem"] in OPTIMA:
            med += f", {OPTIMA[r['problem']]}"
        if not r["budget_reached"]:
            med = "budget not reached: " + med
        n = r["n_evals"]
        evals = f"{min(n)}" if min(n) == max(n) else f"{min(n)}-{max(n)}"
        lines.append(f"| {r['problem']}, budget {r['budget']:g} | `{_study_command(r)}` | {med} | {evals} | "
                     f"{note or '%.0f s' % r['wall_s']} | {_device(r)}{_load_note(r)} |")

    for prob, budget in CPU_STUDIES:
        mine = [r for r in recs if r["problem"] == prob and r["budget"] == budget and r["device"] == "cpu"]
        if not mine:
            raise ValueError(f"data/bench_bo.jsonl has no CPU record for {prob}, budget {budget:g}")
        row(mine[-1])
    row(gpu_h3)
    # Hartmann-6 on the GPU: the run was stopped before its budget; its last saved curves
    # (bench_bo.py --partial) hold the state after n_evals - 1 evaluations
    p = _load(root, "data/gpu/h6_partial.json")
    n = np.asarray(p["n_evals"])
    k = int(n.min()) - 1
    regret = np.asarray(p["regret"], float)[:, k]
    spent = np.asarray(p["cost_spent"], float)[:, k]
    h6 = {"problem": "hartmann6", "budget": 6000.0, "seeds": len(n), "max_evals": 2000, "refit_every": 20,
          "batching": "vmap", "min_buffer": 256, "median_final_regret": float(np.median(regret)),
          "quartiles": np.quantile(regret, [0.25, 0.75]).tolist(), "budget_reached": False, "n_evals": [k],
          "device": "NVIDIA H200"}
    row(h6, note=f"stopped; last saved state at {p['wall_s']:.0f} s (cost spent {spent.min():.0f}-{spent.max():.0f} "
                 f"of 6000)")
    return "\n".join(lines) + "\n"


def render_step_overhead(root, _arg=None):
    r = [r for r in _jsonl(root, "data/bench_bo.jsonl") if r["study"] == "overhead"][-1]
    lo, hi = r["observations"]
    return (f"Overhead per BO step on Hartmann-3 while the data grow from {lo} to {hi} observations "
            f"(`python experiments/paper/bench_bo.py overhead`, ask/tell loop, {_device(r)}{_load_note(r)}): median "
            f"{r['median_step_s']:.2f} s (fit {r['median_fit_s']:.2f} s, g* {r['median_gstar_s']:.3f} s, "
            f"maximisation {r['median_maximise_s']:.3f} s).\n")


# --------------------------------------------------------------------------- tuning studies


def render_fastcv(root, model):
    d = _load(root, f"data/fastcv_{model}.json")
    loss = "error" if model == "svm" else "log-loss"
    mid, end = d["design_fits"] + d["fits"] // 2, d["design_fits"] + d["fits"]
    names = {"mumbo": "MUMBO (one fold per query)", "mt_ei": "FASTCV two-stage EI", "cv_ei": "EI on the full K-fold CV"}
    lines = [f"| tuner | CV {loss} after {mid} fits | after {end} fits | held-out {loss} after {end} fits | "
             "median overhead (s) |", "|---|---|---|---|---|"]
    for method, row in d["table"].items():
        lines.append(f"| {names.get(method, method)} | {row['cv_mean'][mid]:.4f} +- {row['cv_se'][mid]:.4f} | "
                     f"{row['cv_mean'][end]:.4f} +- {row['cv_se'][end]:.4f} | {row['test_mean'][end]:.4f} +- "
                     f"{row['test_se'][end]:.4f} | {row['median_overhead_s']:.2f} |")
    return "\n".join(lines) + "\n"


def render_ablation(root, rel):
    """An issue-13 screen (``experiments/ablations/ablation_mumbo.py``, JSON under
    data/ablations/): per variant, median regret of the recommendation at cost
    25 / 50 / 100 / the budget, the worst rise of a run's recommended regret above its
    running minimum, the share of evaluations at the target, the coverage of the model's
    95 % interval at the recommendation (share of steps whose true value lies in it; "-"
    for runs recorded before it was) and the median overhead per step (s)."""
    compare = _compare_module()
    res = _load(root, f"data/ablations/{rel}")
    checkpoints = [c for c in (25.0, 50.0, 100.0) if c < res["budget"]] + [float(res["budget"])]
    if "table_checkpoints" in res:  # a file may name its own columns (a long run)
        checkpoints = [float(c) for c in res["table_checkpoints"]]
    head = " | ".join(f"@{c:g}" for c in checkpoints)
    ref = next(iter(res["variants"]))  # the paired tests compare every variant with the first (base MUMBO)
    finals = {name: np.asarray([compare.regret_at_cost(s["cost_spent"], s["regret"], checkpoints[-1])
                                for s in rec["per_seed"]]) for name, rec in res["variants"].items()}
    others = [n for n in finals if n != ref]
    raw = [_paired_p(finals[n], finals[ref]) for n in others]
    holm = dict(zip(others, compare.holm_adjust([p for _, _, p in raw])))
    paired = dict(zip(others, raw))
    lines = [f"{res['problem']}, budget {res['budget']:g}, seeds {res['seeds']} (median over seeds; paired: seeds "
             f"where the variant ends lower / higher than {ref} at cost {checkpoints[-1]:g}, Wilcoxon signed-rank "
             "p Holm-adjusted over the table)", "",
             f"| variant | {head} | worst rise | at target | coverage | s / step | vs {ref} | p (Holm) |",
             "|---" * (len(checkpoints) + 7) + "|"]
    for name, rec in res["variants"].items():
        seeds = rec["per_seed"]
        cells = [_num(float(np.median([compare.regret_at_cost(s["cost_spent"], s["regret"], c) for s in seeds])))
                 + _stopped_mark(seeds, c) for c in checkpoints]
        rise = max(float(np.nanmax(np.asarray(s["regret"], float) - np.fmin.accumulate(np.asarray(s["regret"], float))))
                   for s in seeds)
        share = sum(s["n_target"] for s in seeds) / max(1, sum(s["n_evals"] for s in seeds))
        cover = (f"{100 * float(np.mean(np.concatenate([s['covered'] for s in seeds]))):.0f} %"
                 if all("covered" in s for s in seeds) else "-")
        over = [o for s in seeds for o in s["overheads"][1:] if o is not None]  # step 0 compiles
        step = f"{float(np.median(over)):.2g}" if over else "-"
        vs = "-" if name == ref else f"{paired[name][0]} / {paired[name][1]}"
        p_holm = "-" if name == ref else f"{holm[name]:.2g}"
        lines.append(f"| {name} | {' | '.join(cells)} | {_num(rise)} | {100 * share:.1f} % | {cover} | {step} | "
                     f"{vs} | {p_holm} |")
    if any(_stopped_mark(rec["per_seed"], c) for rec in res["variants"].values() for c in checkpoints):
        lines += ["", "† k: k seeds stopped (the evaluation cap) before that cost; each counts with the regret "
                      "at which it stopped."]
    return "\n".join(lines) + "\n"


def _stopped_mark(seeds, cost) -> str:
    """`` †k`` when k of ``seeds`` stopped before spending ``cost`` (else empty)."""
    k = sum(1 for s in seeds if float(s["cost_spent"][-1]) < cost - 1e-9)
    return f" †{k}" if k else ""


def _paired_p(a, b):
    """``(seeds where a < b, seeds where a > b, two-sided Wilcoxon signed-rank p)`` of
    paired regrets, the test on their log10 (as ``mumbo-jax compare`` and the protocol:
    regrets span orders of magnitude; floored at 1e-12; p = 1 when they never differ)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    la, lb = np.log10(np.maximum(a, 1e-12)), np.log10(np.maximum(b, 1e-12))
    p = 1.0 if np.all(la == lb) else _compare_module().wilcoxon_p(la - lb)
    return int(np.sum(a < b)), int(np.sum(a > b)), p


def render_decision(root, _arg=None):
    runs = {r["label"]: r for r in _load(root, "data/bench_decision.json")}  # the last run of each label
    ns = sorted({row["n"] for r in runs.values() for row in r["rows"]})
    lines = ["One decision (`AskTell.ask()`: a full refit, g*, the maximisation) on Hartmann-3 after n told "
             "points, after compilation, median of the runs' repeats; seconds (buffer rows):", "",
             "| run | command (`python experiments/performance/bench_decision.py ...`) | "
             + " | ".join(f"n = {n}" for n in ns) + " | n = 300 / n = 40 | machine |",
             "|---|---|" + "---|" * len(ns) + "---|---|"]
    for label, r in runs.items():
        by_n = {row["n"]: row for row in r["rows"]}
        cells = [f"{by_n[n]['ask_s']:.3g} ({by_n[n]['buffer_rows']})" if n in by_n else "" for n in ns]
        ratio = "" if r.get("ratio_300_40") is None else f"{r['ratio_300_40']:.1f}x"
        args = r["command"].replace("python experiments/performance/bench_decision.py", "").replace(f"--label {label}", "")
        args = " ".join(args.split()) or "(defaults)"
        lines.append(f"| {label} | `{args}` | {' | '.join(cells)} | {ratio} | {_machine(r)}, one core"
                     f"{_load_note(r)} |")
    return "\n".join(lines) + "\n"


def render_profile_decision(root, _arg=None):
    r = _load(root, "data/profile_decision.json")[-1]
    lines = [f"`{r['command']}` on {_machine(r)}, one core (jax {r['jax']}{_load_note(r)}), median of "
             f"{r['reps']} (the unit costs of more):", "",
             "| n (rows) | ask: fit + g* + max (s) | fit: objective evaluations per start | one evaluation, "
             "value and gradient (ms) | its Cholesky (ms) | conditioning (ms) | g*: grid moments (ms, points) | "
             "g*: Gumbel fit (ms) |", "|---|---|---|---|---|---|---|---|"]
    for row in r["rows"]:
        lines.append(f"| {row['n']} ({row['buffer_rows']}) | {row['ask_s']:.3f}: {row['fit_s']:.3f} + "
                     f"{row['gstar_s']:.3f} + {row['maximise_s']:.3f} | "
                     f"{', '.join(str(c) for c in row['evaluations_per_start'])} | {row['evaluation_ms']:.2f} | "
                     f"{row['cholesky_ms']:.2f} | {row['condition_ms']:.2f} | {row['grid_moments_ms']:.0f} "
                     f"({row['grid_points']:,}) | {row['gumbel_ms']:.0f} |")
    return "\n".join(lines) + "\n"


def render_sweep_timing(root, _arg=None):
    runs = _load(root, "data/sweep_timing/sweeps.json")
    lines = ["| run | command | wall time | load average (start, end) | seed groups (wall time) | seeds | "
             "evaluations per seed (mean) | median final regret | stage seconds per seed, compilation included "
             "(median) | largest step |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        for name, st in r["strategies"].items():
            ps = st["per_seed"]
            groups = "; ".join(f"{g['seeds']}: {g['wall_time_s'] / 60:.1f} min" for g in st["seed_groups"] or [])
            lines.append(
                f"| {r['label']} ({name}) | `{r['command']}` (cache: {r['cache']}) | {r['wall_s'] / 60:.1f} min | "
                f"{r['loadavg_start'][0]:.1f}, {r['loadavg_end'][0]:.1f} | {groups or '-'} | {len(ps)} | "
                f"{np.mean([p['evaluations'] for p in ps]):.0f} | {_num(float(np.median([p['final_regret'] for p in ps])))} | "
                f"{np.median([p['stage_s'] for p in ps]):.0f} s | "
                f"{max(p['largest_step_s'] for p in ps):.1f} s |")
    return "\n".join(lines) + "\n"


SEED_STUDY_VARIANTS = {"tinygp": "tinygp objective (main before issue 10)", "dense": "dense objective (default)",
                       "ftol": "+ fit_ftol = 1e-9", "warm": "+ full_refit_every = 10",
                       "ftol_warm": "+ both (the un-landed patch)",
                       "pow2": "dense objective, power-of-two buffers",
                       "linalg10c": "defaults after issue 10c (blocked inverses, Matern gradient, g* in chunks)"}


def render_fit_speed_seed_study(root, _arg=None):
    data = _load(root, "data/fit_speed_seed_study.json")
    lines = ["MUMBO (tests/bo_helpers.FAST settings, compiled driver): Forrester budget 60, at most 25 "
             "evaluations, seeds 0-11; Hartmann-3 budget 300, at most 40 evaluations, seeds 0-4; hartmann3_long: "
             "budget 2000, at most 80 evaluations, seeds 0-4 "
             "(`python experiments/ablations/seed_study_fit_speed.py`). Decisions against the dense default: steps before the "
             "first |dx| > 1e-6 or other fidelity, per seed (all: the whole run agrees).", "",
             "| fit | problem | median final regret | max | seeds with regret > 1 | decisions equal to the "
             "default's for the first ... steps |", "|---|---|---|---|---|---|"]
    base = data.get("dense", {})
    for variant, label in SEED_STUDY_VARIANTS.items():
        for name, r in data.get(variant, {}).items():
            final = np.asarray(r["final_regret"], float)
            agree = ""
            if name in base:
                steps = []
                for s in range(len(final)):
                    dx = np.abs(np.asarray(r["x"][s]) - np.asarray(base[name]["x"][s])).max(-1)
                    bad = np.flatnonzero((dx > 1e-6) | (np.asarray(r["z"][s]) != np.asarray(base[name]["z"][s])))
                    steps.append("all" if bad.size == 0 else str(int(bad[0])))
                agree = ", ".join(steps)
            lines.append(f"| {label} | {name} | {_num(float(np.median(final)))} | {_num(float(final.max()))} | "
                         f"{int(np.sum(final > 1))}/{len(final)} | {agree} |")
    return "\n".join(lines) + "\n"


def render_compare_workers(root, _arg=None):
    lines = []
    for d in _load(root, "data/compare_workers.json"):
        r1, r2 = d["runs"]["1"], d["runs"]["2"]
        lines.append(f"* `{d['command'].strip()}` (`{d['config']}`, strategies {d['strategies']}, {d['seeds']} seeds, "
                     f"budget {d['budget']:g}, at most {d['max_evals']} evaluations) on the {d['cpu_count']}-core CPU: "
                     f"`--workers 1` {r1['wall_s']:.0f} s (load average {r1['loadavg_start'][0]:.1f}), `--workers 2` "
                     f"{r2['wall_s']:.0f} s (load average {r2['loadavg_start'][0]:.1f}): {d['speedup']:.2f}x; the "
                     f"same fidelities chosen: {'yes' if d['same_fidelities'] else 'no'}.")
    return "\n".join(lines) + "\n"


def _per_step_regret(seed: dict, q: int, n_steps: int) -> np.ndarray:
    """The recommendation's regret after each of the first ``n_steps`` BO steps (batches of
    q evaluations); a run that stopped keeps its last value."""
    r = np.asarray(seed["regret"], float)[::q]
    return np.concatenate([r, np.full(max(0, n_steps + 1 - len(r)), r[-1])])[:n_steps + 1]


BATCH_LABELS = {"mumbo+q4gibbon": "GIBBON batches, q = 4", "mumbo+q4kb": "believer batches, q = 4",
                "mumbo+q4gibbonkb": "GIBBON over the believer's slots, q = 4",
                "mumbo+q4gibbonpol": "GIBBON jointly polished, q = 4",
                "mumbo+q4gibbonresc": "GIBBON, rescaled repulsion, q = 4",
                "mumbo+q4gibbonseq": "GIBBON after the sequential slot, q = 4",
                "mumbo+q4gibbonmumbo": "GIBBON with MUMBO's gain per point, q = 4",
                "mumbo+q4gibbonmc": "GIBBON, each slot per its own cost, q = 4",
                "mumbo+q4gibbonmumbomc": "GIBBON with MUMBO's gain, each slot per its own cost, q = 4"}


def render_batch_study(root, rel):
    """Synchronous batches of 4 (``experiments/ablations/ablation_mumbo.py --levers q4gibbon,q4kb
    --tag batch``) beside sequential MUMBO from the issue-13 10-seed file of the same
    problem, seeds and settings (``s10_*``): median regret at cost checkpoints with the
    sequential runs' interquartile range, median regret after k BO steps (one batch or
    one evaluation each), and paired Wilcoxon tests of the believer and every GIBBON
    variant against sequential MUMBO (at the budget), and of every GIBBON variant against
    the believer (after 10 and 20 batches),
    Holm-adjusted over the table's tests."""
    return _batch_study(root, rel, "batch", "s10", "mumbo")


def render_batch_study_defaults(root, rel):
    """:func:`render_batch_study` on today's defaults: ``batchd_REL`` (``--tag batchd
    --base-defaults``) beside the default's sequential row of ``s10b_REL``."""
    return _batch_study(root, rel, "batchd", "s10b", "mumbo+faces+local+inc_global+cal")


def _batch_study(root, rel, tag, seq_tag, seq_variant):
    compare = _compare_module()
    res = _load(root, f"data/ablations/{tag}_{rel}")
    seq_key = "MUMBO, sequential (q = 1)"
    recs = {seq_key: (_load(root, f"data/ablations/{seq_tag}_{rel}")["variants"][seq_variant], 1)}
    recs.update({BATCH_LABELS[v]: (res["variants"][v], 4) for v in BATCH_LABELS if v in res["variants"]})
    budget = float(res["budget"])
    checkpoints = [c for c in (25.0, 50.0, 100.0) if c < budget] + [budget]
    steps = (5, 10, 20)
    at_cost = {k: np.asarray([[compare.regret_at_cost(s["cost_spent"], s["regret"], c) for c in checkpoints]
                              for s in rec["per_seed"]]) for k, (rec, q) in recs.items()}
    at_step = {k: np.asarray([_per_step_regret(s, q, max(steps))[list(steps)] for s in rec["per_seed"]])
               for k, (rec, q) in recs.items()}
    lines = [f"{res['problem']}, budget {budget:g}, seeds {res['seeds']}; medians over seeds (sequential: "
             "interquartile range in brackets, the seed-to-seed spread)", "",
             "| rule | " + " | ".join(f"@{c:g}" for c in checkpoints) + " | "
             + " | ".join(f"after {k} steps" for k in steps) + " | at target | s / step |",
             "|---" * (len(checkpoints) + len(steps) + 3) + "|"]
    for k, (rec, q) in recs.items():
        med = np.median(at_cost[k], axis=0)
        cells = [_num(float(m)) for m in med]
        if k == seq_key:
            lo, hi = np.percentile(at_cost[k], [25, 75], axis=0)
            cells = [f"{c} ({_num(float(a))}-{_num(float(b))})" for c, a, b in zip(cells, lo, hi)]
        ps = rec["per_seed"]
        share = sum(s["n_target"] for s in ps) / max(1, sum(s["n_evals"] for s in ps))
        over = [o for s in ps for o in s["overheads"][1:] if o is not None]
        lines.append(f"| {k} | {' | '.join(cells)} | "
                     + " | ".join(_num(float(v)) for v in np.median(at_step[k], axis=0))
                     + f" | {100 * share:.1f} % | {float(np.median(over)):.2g} |")
    kb = BATCH_LABELS["mumbo+q4kb"]
    tests = [(f"{kb} vs sequential at cost {budget:g}", at_cost[kb][:, -1], at_cost[seq_key][:, -1])]
    for k in recs:
        if k.startswith("GIBBON"):
            tests += [(f"{k} vs sequential at cost {budget:g}", at_cost[k][:, -1], at_cost[seq_key][:, -1]),
                      (f"{k} vs believer after {steps[1]} batches", at_step[k][:, 1], at_step[kb][:, 1]),
                      (f"{k} vs believer after {steps[2]} batches", at_step[k][:, 2], at_step[kb][:, 2])]
    raw = [_paired_p(a, b) for _, a, b in tests]
    adj = compare.holm_adjust([r[2] for r in raw])
    lines += ["", "| paired (regret, per seed) | first lower | second lower | p | p (Holm) |", "|---|---|---|---|---|"]
    for (name, _, _), (lo, hi, p), pa in zip(tests, raw, adj):
        lines.append(f"| {name} | {lo} | {hi} | {p:.2g} | {pa:.2g} |")
    return "\n".join(lines) + "\n"


def render_async_study(root, name=None):
    """The simulated-cost study of asynchronous MUMBO (``experiments/studies/async_study.py``;
    ``name``: the file under data, default async_study.json): medians over seeds; a
    time to a regret is the median over the seeds that reached it (how many did is
    shown) and the speed-up the median over seeds of (1 worker's time) / (this one's)
    where both reached it; "first recommendation" is when as many results as the
    initial design has points had arrived (design or BO points alike); regret at the budget is that of the last
    recommendation whose cost spent is within the common budget, with the seeds where
    it is below one worker's."""
    d = _load(root, f"data/{name or 'async_study.json'}")
    m = d["machine"]
    times = [f"{t:g}" for t in d["fixed_times_s"]]
    load = "" if "loadavg_start" not in m else (f", load average {m['loadavg_start'][0]:.1f} at the start and "
                                                 f"{m['loadavg_end'][0]:.1f} at the end")
    how = ("all runs at once, each driver a thread of one process pinned to one core, the sleeping evaluations "
           "threads of one Dask worker process" if d.get("concurrent") else "one run after another")
    lines = [f"`{d['command']}` on a {m['cpus']}-core CPU ({m['affinity']} core for the drivers and the Dask "
             f"workers{load}; {how}), {d['seeds']} seeds, cost budget {d['budget']:g} (the design included; the "
             f"last evaluations issued may overshoot it), {d['sleep_per_cost_s']:g} s of sleep per unit of cost, "
             f"pending points by the {d['pending']}. Medians over seeds; a time to a regret is the median over the "
             "seeds that reached it (how many did in brackets), the speed-up the median over seeds of one worker's "
             "time over this one's where both reached it:", "",
             "| workers | wall-clock of the run | deciding (driver) | first recommendation | to regret 1e-2 | speed-up to 1e-2 | "
             "to regret 1e-3 | " + " | ".join(f"regret at {t} s" for t in times)
             + " | regret at the budget (seeds below 1 worker's, paired Wilcoxon p) |",
             "|---|---|---|---|---|---|---|" + "---|" * len(times) + "---|"]
    w0 = str(min(d["workers"]))
    base = {p["seed"]: p for p in d["summary"][w0]["per_seed"]}
    runs = {(r["workers"], r["seed"]): r for r in d["runs"]}

    def to(per_seed, key):
        hit = [p["time_to"][key] for p in per_seed if p["time_to"][key] is not None]
        return f"{np.median(hit):.0f} s ({len(hit)}/{len(per_seed)})" if hit else f"not reached (0/{len(per_seed)})"

    def design_told(w, seed):
        r = runs[(w, seed)]
        return next(t for t, g in zip(r["times"], r["regrets"]) if g is not None and np.isfinite(g))

    for w in d["workers"]:
        s = d["summary"][str(w)]
        ps = s["per_seed"]
        ratios = [base[p["seed"]]["time_to"]["0.01"] / p["time_to"]["0.01"] for p in ps
                  if p["time_to"]["0.01"] is not None and base[p["seed"]]["time_to"]["0.01"] is not None]
        speed = f"{np.median(ratios):.1f}x ({len(ratios)} seeds)" if ratios and str(w) != w0 else "-"
        at = [np.median([p["regret_at"][t] for p in ps if p["regret_at"][t] is not None] or [np.nan]) for t in times]
        told = np.median([design_told(w, p["seed"]) for p in ps])
        if "regret_at_budget" in ps[0]:
            mine = [p["regret_at_budget"] for p in ps]
            theirs = [base[p["seed"]]["regret_at_budget"] for p in ps]
            below, _, p_val = _paired_p(mine, theirs)
            final = (f"{_num(float(np.median(mine)))}"
                     + ("" if str(w) == w0 else f" ({below}/{len(ps)}, p {p_val:.2g})"))
        else:
            final = _num(float(np.median([p["final_regret"] for p in ps])))
        lines.append(f"| {w} | {np.median([p['wall_s'] for p in ps]):.0f} s | "
                     f"{np.median([p['decide_s'] for p in ps]):.0f} s | {told:.0f} s | "
                     f"{to(ps, '0.01')} | {speed} | {to(ps, '0.001')} | "
                     + " | ".join("-" if np.isnan(v) else _num(float(v)) for v in at) + f" | {final} |")
    return "\n".join(lines) + "\n"


def render_gpu_fit_speed(root, rel=None):
    """The fit-speed accelerator checks (``bash experiments/performance/gpu_fit_speed.sh`` and
    ``bench_acquisition.py --fit-batching both --fit-max-iter 200,50`` on a lent GPU;
    ``rel``: the folder under data/gpu)."""
    base = f"data/gpu/{rel or 'h100_fit_speed'}"
    speed = _load(root, f"{base}/speed_gpu2.json")
    fits = speed["fit_8_restarts_s_by_batching"]
    sweeps = [json.loads(line) for line in (root / base / "bench_bo_gpu.jsonl").read_text().splitlines() if line.strip()]
    cold, warm = sweeps[0], sweeps[-1]
    dec = _load(root, f"{base}/decision_gpu.json")[-1]
    rows = {r["n"]: r for r in dec["rows"]}
    ms = lambda v: f"{1e3 * v:.0f} ms"
    lines = [f"On one {speed['device']} (jax {speed['jax']}):", "",
             "| what | time | target |", "|---|---|---|",
             f"| one fit, 8 restarts, {speed['observations']} Hartmann-3 points, 50 L-BFGS iterations per start "
             f"(`BOSettings.fit_max_iter`, what a BO step runs) | {ms(fits['vmap, max_iter 50'])} in lock-step "
             f"({ms(fits['scan, max_iter 50'])} one after another) | <= 100 ms |",
             f"| the same, 200 iterations per start (`fitting.fit_params`' default) | "
             f"{ms(fits['vmap, max_iter 200'])} in lock-step ({ms(fits['scan, max_iter 200'])} one after another) "
             "| <= 100 ms |",
             f"| {cold['seeds']}-seed Hartmann-3 paper-budget sweep of MUMBO-10 (`python3 experiments/paper/bench_bo.py "
             f"regret --problem hartmann3 --budget {cold['budget']:g} --seeds {cold['seeds']} --max-evals "
             f"{cold['max_evals']} --refit-every {cold['refit_every']} --batching vmap --min-buffer "
             f"{cold['min_buffer']}`), today's defaults | {cold['wall_s']:.0f} s from an empty compilation cache, "
             f"{warm['wall_s']:.0f} s from the filled one; median final regret "
             f"{_num(cold['median_final_regret'])}, {min(cold['n_evals'])}-{max(cold['n_evals'])} evaluations "
             "per seed | <= 60 s |",
             f"| one decision (`python3 experiments/performance/bench_decision.py --ns 40,300 --reps {dec['reps']}`) | "
             f"n = 40: {rows[40]['ask_s']:.3f} s, n = 300: {rows[300]['ask_s']:.3f} s, ratio "
             f"{rows[300]['ask_s'] / rows[40]['ask_s']:.1f}x | <= 3x |",
             f"| MUMBO, N = 10 g*, 10,000 candidates x 3 fidelities / Gumbel g* on 30,000 points | "
             f"{1e3 * speed['mumbo_s']:.1f} ms / {1e3 * speed['gstar_s']:.1f} ms | |"]
    return "\n".join(lines) + "\n"


def render_gpu_large_n(root, rel=None):
    """One decision at large n on a lent GPU (``bash experiments/performance/gpu_large_n.sh``;
    ``rel``: the file under data/gpu)."""
    runs = _load(root, f"data/gpu/{rel or 'decision_large_n_h200.json'}")
    lines = ["| n | buffer rows | start of the fit | decision | fit | g* | maximisation | first call (compiles) |",
             "|---|---|---|---|---|---|---|---|"]
    for run in runs:
        start = "fitted (two starts)" if run["start"] == "fitted" else "default hyper-parameters"
        for r in run["rows"]:
            lines.append(f"| {r['n']} | {r['buffer_rows']} | {start} | {r['ask_s']:.3f} s | {r['fit_s']:.3f} s | "
                         f"{r['gstar_s']:.3f} s | {r['maximise_s']:.3f} s | {r['first_call_s']:.0f} s |")
    return "\n".join(lines) + "\n"


def render_icm_fit(root, rel=None):
    """The two ICM Grams in the same fit (``python experiments/performance/bench_icm_fit.py``)."""
    data = _load(root, rel or "data/bench_icm_fit.json")
    names = {"dense": "dense (`ICMModel.gram`)", "tinygp": "tinygp (`kernels.ICM`)"}
    lines = ["| n | Gram | trace + lower | XLA compile | fit | best objective |", "|---|---|---|---|---|---|"]
    for r in data["results"]:
        for kind in ("dense", "tinygp"):
            v = r[kind]
            ratio = f" ({v['fit_s'] / r['dense']['fit_s']:.2f}x)" if kind == "tinygp" else ""
            lines.append(f"| {r['n']} | {names[kind]} | {v['lower_s']:.1f} s | {v['compile_s']:.1f} s | "
                         f"{v['fit_s']:.3g} s{ratio} | {v['loss']:.6f} |")
    return "\n".join(lines) + "\n"


def _compile_split_rows(root, first_column, files):
    """Table lines of ``bench_compile.py`` records: one row per n of each (file, label)."""
    lines = [f"| {first_column} | n | first ask (compiles) | trace + lower | XLA compile | of which the "
             "maximisation | of which the fit | warm ask |", "|---|---|---|---|---|---|---|---|"]
    for name, label in files:
        data = _load(root, f"data/compile/{name}")
        for r in data["rows"]:
            programs = dict(r["programs"])
            lines.append(f"| {label} | {r['n']} | {r['cold_s']:.1f} s | {r['trace'] + r['lower']:.1f} s | "
                         f"{r['xla']:.1f} s | {programs.get('jit(_maximise)', 0):.1f} s | "
                         f"{programs.get('jit(_fit)', 0):.1f} s | {r['warm_s']:.3f} s |")
    return lines


def render_compile_polish(root, rel=None):
    """The maximisation with fewer copies of the acquisition, one buffer size at a time
    (``taskset -c 1 python experiments/performance/bench_compile.py --ns 20,40,300,1000 --reps 3
    --set maximiser.gradient=exact|differences --out ...``; the first rows with the code before,
    from a git worktree), and a cold run's share of compiling (``cold_run_split.py --rerun
    --gradient exact|differences``)."""
    lines = _compile_split_rows(root, "code", (
        ("compile_split_robust_before_polish.json", "before: the acquisition traced 4 times per maximiser"),
        ("compile_split_robust_polish_exact.json", "each point once, autodiff"),
        ("compile_split_robust_polish_differences.json", "each point once, forward differences"),
        ("compile_split_robust_base_block_128.json", "each point once, autodiff, direct forms to 128 rows (the default)")))
    lines += ["", "| first run | code | wall | again, compiled | lost to compiling | compiled (trace, lower, XLA) "
              "| programs compiled | BO evaluations |", "|---|---|---|---|---|---|---|---|"]
    for name, label in (("cold_run_split_hartmann3_prefetch_off.json", "before"),
                        ("cold_run_split_hartmann3_exact.json", "each point once, autodiff"),
                        ("cold_run_split_hartmann3_differences.json", "each point once, forward differences"),
                        ("cold_run_split_hartmann3_base_block_128.json",
                         "each point once, autodiff, direct forms to 128 rows (the default)")):
        r = _load(root, f"data/compile/{name}")
        lines.append(f"| `mumbo-jax run {r['config']} --seeds {r['seeds']}` | {label} | {r['wall_s']:.1f} s | "
                     f"{r['warm_wall_s']:.1f} s | {r['lost_to_compiling_s']:.1f} s ({100 * r['lost_share']:.0f} %) | "
                     f"{r['compile_s']:.1f} s | {r['programs_compiled']} | "
                     f"{', '.join(str(v) for v in r['bo_evaluations'])} |")
    return "\n".join(lines) + "\n"


def render_compile_lbfgs(root, rel=None):
    """The fit's L-BFGS with the objective compiled once against optax's (zoom line search):
    one buffer size at a time and a cold run (``bench_compile.py``, ``cold_run_split.py``; the
    code before's rows are the last change's), and the fits themselves on the same data
    (``taskset -c 1 python experiments/performance/bench_fit_search.py``)."""
    lines = _compile_split_rows(root, "fit", (
        ("compile_split_robust_base_block_128.json", "optax's L-BFGS, the objective in 3 places"),
        ("compile_split_robust_lbfgs_once.json", "the objective compiled once (the default)")))
    lines += ["", "| first run | fit | wall | again, compiled | lost to compiling | XLA seconds of the fit "
              "| programs compiled | BO evaluations |", "|---|---|---|---|---|---|---|---|"]
    for name, label in (("cold_run_split_hartmann3_base_block_128.json", "optax's L-BFGS"),
                        ("cold_run_split_hartmann3_lbfgs_once.json", "the objective compiled once (the default)")):
        r = _load(root, f"data/compile/{name}")
        fit_xla = r.get("xla_by_program", {}).get("jit(_fit)", [0, 0.0])[1]
        lines.append(f"| `mumbo-jax run {r['config']} --seeds {r['seeds']}` | {label} | {r['wall_s']:.1f} s | "
                     f"{r['warm_wall_s']:.1f} s | {r['lost_to_compiling_s']:.1f} s ({100 * r['lost_share']:.0f} %) | "
                     f"{fit_xla:.1f} s | {r['programs_compiled']} | "
                     f"{', '.join(str(v) for v in r['bo_evaluations'])} |")
    d = _load(root, "data/compile/fit_line_search.json")
    lines += ["", "| n | buffer rows | the fit's XLA compile, optax's L-BFGS | objective compiled once |",
              "|---|---|---|---|"]
    for r in d["compile"]:
        lines.append(f"| {r['n']} | {r['buffer_rows']} | {r['zoom']['xla_s']:.2f} s | {r['once']['xla_s']:.2f} s |")
    s = d["summary"]
    lines += ["", "| fits | lower objective, optax's L-BFGS | lower, objective compiled once | tied (within 1e-6) "
              "| median difference (once - optax) | fit seconds in all, optax / once |", "|---|---|---|---|---|---|",
              f"| {s['fits']} | {s['zoom_lower']} | {s['once_lower']} | {s['ties']} | {s['median_difference']:+.3g} | "
              f"{s['zoom_fit_s']:.2f} s / {s['once_fit_s']:.2f} s |"]
    return "\n".join(lines) + "\n"


def render_base_block(root, rel=None):
    """The blocked algebra with direct forms up to 64 rows and up to 128
    (``taskset -c 1 python experiments/performance/bench_linalg.py --ns 320,1024,3072`` with
    ``linalg.BASE_BLOCK`` at each value)."""
    runs = {b: {r["rows"]: r for r in _load(root, f"data/compile/bench_linalg_base_block_{b}.json")["rows"]}
            for b in (64, 128)}
    lines = ["| rows | objective + gradient, to 64 rows | to 128 rows | L^-1 K (512 points), to 64 rows | to 128 rows |",
             "|---|---|---|---|---|"]
    for n in sorted(runs[64]):
        a, b = runs[64][n], runs[128][n]
        lines.append(f"| {n} | {1e3 * a['objective_s']:.1f} ms | {1e3 * b['objective_s']:.1f} ms | "
                     f"{1e3 * a['tri_matmul_s']:.1f} ms | {1e3 * b['tri_matmul_s']:.1f} ms |")
    return "\n".join(lines) + "\n"


def render_compile(root, rel=None):
    """XLA compile per buffer size under XLA's default compile options and the library's
    (``python experiments/performance/bench_compile.py --ns 40,300 --out ...``, the first
    with ``MUMBO_JAX_XLA_OPTIONS=default``), and a cold run's share of compiling
    (``python experiments/performance/cold_run_split.py``)."""
    lines = _compile_split_rows(root, "compile options", (
        ("compile_split_robust_xla_defaults.json", "XLA's defaults (`MUMBO_JAX_XLA_OPTIONS=default`)"),
        ("compile_split_robust_library_options.json", "the library's (fusion emitters off)"),
        ("compile_split_robust_large_n_algebra.json", "the library's, after the large-n algebra"),
        ("compile_split_robust_before_draws.json", "before the draws, on a slower machine"),
        ("compile_split_robust_draws.json", "Philox draws, used restarts, two fit traces (the slower machine)")))
    lines += ["", "| first run | compile options | buffers | wall | compiling | share | programs compiled | "
              "BO evaluations |", "|---|---|---|---|---|---|---|---|"]
    growth = {"steps": "steps of 32 rows (the library's)", "doubling": "32, 64, 128, ... rows (experiment)"}
    for name, options in (("cold_run_split_hartmann3.json", "XLA's defaults"),
                          ("cold_run_split_hartmann3_doubling.json", "XLA's defaults"),
                          ("cold_run_split_hartmann3_library_options.json", "the library's"),
                          ("cold_run_split_hartmann3_large_n_algebra.json", "the library's, after the large-n algebra"),
                          ("compile/cold_run_split_hartmann3_before_draws.json", "before the draws, on a slower machine"),
                          ("compile/cold_run_split_hartmann3_draws.json",
                           "Philox draws, used restarts, two fit traces (the slower machine)")):
        cold = _load(root, f"data/{name}")
        lines.append(f"| `mumbo-jax run {cold['config']} --seeds {cold['seeds']}` | {options} | "
                     f"{growth[cold.get('growth', 'steps')]} | "
                     f"{cold['wall_s']:.0f} s | {cold['compile_s']:.0f} s | {100 * cold['compile_share']:.0f} % | "
                     f"{cold['programs_compiled']} | {', '.join(str(v) for v in cold['bo_evaluations'])} |")
    before = _load(root, "data/compile/cold_run_split_hartmann3_before_draws.json").get("xla_by_program", {})
    after = _load(root, "data/compile/cold_run_split_hartmann3_draws.json").get("xla_by_program", {})
    lines += ["", "| program (the slower machine's cold runs) | compiled, before / after | XLA seconds, before the draws | "
              "XLA seconds, Philox draws |", "|---|---|---|---|"]
    for name, (count, secs) in before.items():
        count_after, secs_after = after.get(name, (0, 0.0))
        lines.append(f"| `{name}` | {count} / {count_after} | {secs:.1f} s | {secs_after:.1f} s |")
    return "\n".join(lines) + "\n"


def render_draws(root, rel=None):
    """What one random draw costs XLA's compiler, jax.random against mumbo_jax.draws
    (``python experiments/performance/bench_draws.py --out data/compile/draws.json``)."""
    data = _load(root, "data/compile/draws.json")
    lines = ["| program | compile | one call |", "|---|---|---|"]
    lines += [f"| {r['program']} | {r['compile_s']:.2f} s | {1e3 * r['run_s']:.2f} ms |" for r in data["rows"]]
    return "\n".join(lines) + "\n"


def render_prefetch(root, rel=None):
    """Compiling the next buffer size in the background, off against on: an ask/tell run
    with a waiting black box (``python experiments/performance/bench_prefetch.py --out
    data/compile/prefetch.json``, then ``prefetch_repeat.json``) and a first ``mumbo-jax run hartmann3 --seeds 1``
    (``python experiments/performance/cold_run_split.py --prefetch off|on --rerun``)."""
    runs = [_load(root, f"data/compile/{name}.json") for name in ("prefetch", "prefetch_repeat")]
    data = runs[0]
    lines = [f"Ask/tell on {data['problem']}, {data['evals']} BO evaluations, the black box waiting "
             f"{data['sleep_s']:g} s after its formula, an empty cache, {data['cpu_count']} cores, two runs of the "
             f"command; the same decisions with and without: "
             f"{'yes' if all(r['same_decisions'] for r in runs) else 'no'}.", "",
             "| run | background compile | wall | inside ask() | first ask at each buffer size | longest ask |",
             "|---|---|---|---|---|---|"]
    for i, run in enumerate(runs, 1):
        for r in run["rows"]:
            first = ", ".join(f"{b} rows {v:.1f} s" for b, v in r["first_ask_per_buffer_s"].items())
            lines.append(f"| {i} | {r['prefetch']} | {r['wall_s']:.0f} s | {r['ask_s']:.1f} s | {first} | "
                         f"{r['longest_ask_s']:.1f} s |")
    lines += ["", "`mumbo-jax run hartmann3 --seeds 1`, an empty cache, 2 cores; \"lost\": the wall time minus that of "
              "the same run again in the process, every program compiled:", "",
              "| background compile | wall | again, compiled | lost to compiling | compiling on the run's thread | "
              "compiling in the background | the same decisions |", "|---|---|---|---|---|---|---|"]
    for setting in ("off", "on"):
        r = _load(root, f"data/compile/cold_run_split_hartmann3_prefetch_{setting}.json")
        lines.append(f"| {setting} | {r['wall_s']:.1f} s | {r['warm_wall_s']:.1f} s | {r['lost_to_compiling_s']:.1f} s "
                     f"({100 * r['lost_share']:.0f} %) | {r['compile_s']:.1f} s | {r['background_compile_s']:.1f} s | "
                     f"{'yes' if r['same_decisions'] else 'no'} |")
    return "\n".join(lines) + "\n"


def render_large_n(root, rel):
    """One decision at large n with a full refit and a warm-only one
    (``experiments/performance/bench_decision.py --start previous`` or ``converged``; a row
    is warm-only where n >= ``fit.warm_from``; "code": the run's ``--code``, else "earlier"
    for runs before the large-n algebra, which record only the settings they changed, and
    "current" for the runs after it; ``rel``: the file under data)."""
    runs = _load(root, f"data/{rel}")
    lines = ["| device | code | refit | n | buffer rows | decision | fit | g* | maximisation | first call (compiles) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        # runs since the large-n algebra record the fit settings in effect (defaults included)
        fit = run.get("effective_fit") or run["settings"].get("fit", {})
        device = f"{run['device'].upper()} (jax {run['jax']})"
        code = run.get("code") or ("current" if "effective_fit" in run else "earlier")
        for r in run["rows"]:
            if fit.get("warm_from") and r["n"] >= fit["warm_from"] and fit.get("cold_every", 10) > 1:
                cap = run.get("effective_warm_iter") or min(fit.get("warm_iter", 10), fit.get("max_iter", 50))
                refit = f"warm start only, at most {cap} iterations"
                if run.get("start") == "converged":
                    refit += ", after a full refit"
            else:
                refit = "every start"
            lines.append(f"| {device} | {code} | {refit} | {r['n']} | {r['buffer_rows']} | {r['ask_s']:.3f} s | "
                         f"{r['fit_s']:.3f} s | {r['gstar_s']:.3f} s | {r['maximise_s']:.3f} s | "
                         f"{r['first_call_s']:.0f} s |")
    return "\n".join(lines) + "\n"


def render_botorch_mfmes(root, rel):
    """One decision of mumbo-jax beside BoTorch's MF-MES
    (``experiments/performance/bench_botorch_mfmes.py``; ``rel``: the folder under data
    holding ``botorch_mfmes_tutorial.json`` and ``botorch_mfmes_matched.json``)."""
    runs = {e: _load(root, f"data/{rel}/botorch_mfmes_{e}.json") for e in ("tutorial", "matched")}
    lines = ["| n | buffer rows | mumbo-jax MUMBO | BoTorch MF-MES, tutorial effort | ratio | "
             "BoTorch MF-MES, matched effort | ratio |", "|---|---|---|---|---|---|---|"]
    matched = {r["n"]: r for r in runs["matched"]["rows"]}
    for r in runs["tutorial"]["rows"]:
        m = matched[r["n"]]
        lines.append(f"| {r['n']} | {r['mumbo_jax']['buffer_rows']} | {r['mumbo_jax_s']:.3f} s | "
                     f"{r['botorch_s']:.1f} s | {r['ratio']:.0f} | {m['botorch_s']:.1f} s | {m['ratio']:.0f} |")
    return "\n".join(lines) + "\n"


def render_bench_linalg(root, rel):
    """The fit's objective and L^-1 K at large n before and after the large-n algebra
    (``experiments/performance/bench_linalg.py`` at two commits; ``rel``: the folder under
    data holding ``bench_linalg_before.json`` and ``bench_linalg_after.json``)."""
    before, after = (_load(root, f"data/{rel}/bench_linalg_{w}.json") for w in ("before", "after"))
    old = {r["rows"]: r for r in before["rows"]}
    lines = ["| rows | objective + gradient, before | after | before / after | L^-1 K (512 points), plain product | "
             "tri_matmul | plain / tri_matmul |", "|---|---|---|---|---|---|---|"]
    for r in after["rows"]:
        b = old[r["rows"]]
        lines.append(f"| {r['rows']} | {b['objective_s'] * 1e3:.1f} ms | {r['objective_s'] * 1e3:.1f} ms | "
                     f"{b['objective_s'] / r['objective_s']:.2f} | {r['plain_product_s'] * 1e3:.1f} ms | "
                     f"{r['tri_matmul_s'] * 1e3:.1f} ms | {r['plain_product_s'] / r['tri_matmul_s']:.2f} |")
    return "\n".join(lines) + "\n"


STUDY_LABELS = {"warm_step": {"before": "the earlier warm refits", "after": "short first step and ftol"},
                "warm_iter": {"ten": "10 warm iterations", "five": "5 warm iterations"},
                "draws": {"threefry": "the code before", "philox": "Philox draws, two fit traces"},
                "draws_unreliable": {"threefry": "the code before", "philox": "Philox draws, two fit traces"},
                "polish_gradient": {"exact": "autodiff", "differences": "forward differences"},
                "base_block": {"b64": "direct forms to 64 rows", "b128": "direct forms to 128 rows"}}
STUDY_LABELS["polish_gradient_unreliable"] = STUDY_LABELS["polish_gradient"]
STUDY_LABELS["base_block_unreliable"] = STUDY_LABELS["base_block"]
STUDY_LABELS["polish_once"] = STUDY_LABELS["polish_once_unreliable"] = {
    "before": "the code before", "once": "each point once, direct forms to 128 rows"}
STUDY_LABELS["lbfgs_once"] = STUDY_LABELS["lbfgs_once_unreliable"] = {
    "zoom": "optax's L-BFGS (zoom line search)", "once": "the objective compiled once"}


def render_paired_seed_study(root, study):
    """A paired seed study (``python experiments/ablations/seed_study_paired.py STUDY``)."""
    d = _load(root, f"data/{study}/seed_study.json")
    ref, var = d["reference"], d["variant"]
    label = {"default": "XLA's defaults", "fast": "the library's options", "cold": "full refits",
             "warm": "warm-only refits", "before": "the earlier algebra", "after": "the large-n algebra"}
    label.update(STUDY_LABELS.get(study, {}))
    name = lambda v: label.get(v, v)
    lines = [f"`{d['command']}` (the default rule, at most {d['max_evals']} evaluations; final regret of the "
             "recommendation, paired by seed; \"together\": BO evaluations before the two runs of a seed part, "
             "median over seeds):", "",
             f"| problem | budget | seeds | median final regret, {name(ref)} | median final regret, {name(var)} | "
             f"{name(var)}: lower / higher | Wilcoxon p | together for | fit seconds per run (compiling "
             f"included), {name(ref)} / {name(var)} |",
             "|---|---|---|---|---|---|---|---|---|"]
    for p, r in d["problems"].items():
        together = [len(r["evaluations"][ref]) and (t if t is not None else n)
                    for t, n in zip(r["together_for"], r["evaluations"][ref])]
        lines.append(f"| {p} | {r['budget']:g} | {len(r['seeds'])} | {_num(r['median'][ref])} | "
                     f"{_num(r['median'][var])} | {r['variant_lower']} / {r['variant_higher']} | "
                     f"{r['wilcoxon_p']:.2f} | {float(np.median(together)):.0f} | "
                     f"{r['fit_s'][ref]:.0f} / {r['fit_s'][var]:.0f} |")
    return "\n".join(lines) + "\n"


def render_long_run(root, rel):
    """Amortised seconds per step inside a run against n, every run of
    ``experiments/performance/bench_long_run.py`` with its note (``rel``: the file under data)."""
    lines = []
    for run in _load(root, f"data/{rel}"):
        note = f"; {run['note']}" if run.get("note") else ""
        lines += ([""] if lines else []) + [
            f"`{run['command']}` (jax {run['jax']}, load average {run['loadavg'][0]:.1f}{note}):", "",
            "| n | buffer rows | step between refits | its appends | warm refit (fit) | full refit (fit) | "
            "amortised step | every step a refit (before) | before / amortised |",
            "|---|---|---|---|---|---|---|---|---|"]
        lines += _long_run_rows(run)
    return "\n".join(lines) + "\n"


def _long_run_rows(run):
    lines = []
    for r in run["rows"]:
        step = f"{r['step_s']:.3f} s" if r["incremental"] else "(every step refits)"
        app = f"{r['step_append_s']:.4f} s" if r["incremental"] else "-"
        lines.append(f"| {r['n']} | {r['buffer_rows']} | {step} | {app} | {r['warm_refit_fit_s']:.3f} s | "
                     f"{r['cold_refit_fit_s']:.3f} s | {r['amortised_s']:.3f} s | {r['every_step_refit_s']:.3f} s | "
                     f"{r['every_step_refit_s'] / r['amortised_s']:.2f} |")
    return lines


def render_size_classes(root, rel):
    """Sizes met and padding of the buffer size classes against the earlier 32-row steps
    (``experiments/performance/bench_size_classes.py``)."""
    data = _load(root, f"data/{rel}")
    lines = [f"`{data['command']}`:", "", "| buffers | run | sizes compiled | B^2 / n^2 over the run | "
             "B^3 / n^3 over the run | largest B / n (n >= 96) |", "|---|---|---|---|---|---|"]
    for r in data["rows"]:
        lines.append(f"| {r['rule']} | {r['n0']} to {r['n_max']} points | {r['sizes']} | "
                     f"{r['quadratic_cost_ratio']:.2f} | {r['cubic_cost_ratio']:.2f} | "
                     f"{r['worst_rows_ratio_from_96']:.2f} |")
    return "\n".join(lines) + "\n"


def render_inducing(root, rel):
    """The inducing-point stand-in against exact decisions, every run of
    ``experiments/performance/bench_inducing.py`` (``rel``: the file under data)."""
    lines = ["| n | m | exact decision | stand-in (build + decision) | speed-up | exact score of the stand-in's "
             "choice / of the exact choice (median, min) | the exact rule under another key | same fidelity | "
             "largest mean error (exact sd) | sd / exact sd (median) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for run in _load(root, f"data/{rel}"):
        for r in run["rows"]:
            lines.append(f"| {r['n']} | {r['m']} | {r['exact_decision_s']:.2f} s | "
                         f"{r['stand_in_build_s'] + r['stand_in_decision_s']:.2f} s | {r['speedup']:.1f}x | "
                         f"{r['score_ratio_median']:.3f}, {r['score_ratio_min']:.3f} | "
                         f"{r['exact_other_key_ratio_median']:.2f} | {r['same_fidelity']:.0%} | "
                         f"{r['mean_err_in_sd_max']:.1f} | {r['sd_ratio_median']:.2f} |")
    return "\n".join(lines) + "\n"


def _cpu_wall(cpu, wall, fmt=".3g"):
    return f"{cpu:{fmt}} ({wall:{fmt}})"


def render_botorch_fresh(root, rel):
    """One decision of mumbo-jax beside BoTorch's MF-MES in CPU and wall seconds
    (``experiments/performance/bench_botorch_mfmes.py``; ``rel``: the file under data)."""
    run = _load(root, f"data/{rel}")
    lines = ["| n | buffer rows | mumbo-jax MUMBO, CPU s (wall) | BoTorch qMF-MES, CPU s (wall) | ratio, CPU (wall) | "
             "target 100x |", "|---|---|---|---|---|---|"]
    for r in run["rows"]:
        cpu = r["botorch_cpu_s"] / r["mumbo_jax_cpu_s"]
        lines.append(f"| {r['n']} | {r['mumbo_jax']['buffer_rows']} | {_cpu_wall(r['mumbo_jax_cpu_s'], r['mumbo_jax_s'])} "
                     f"| {_cpu_wall(r['botorch_cpu_s'], r['botorch_s'])} | {cpu:.0f}x ({r['ratio']:.0f}x) | "
                     f"{'met' if cpu >= 100 else 'missed'} |")
    return "\n".join(lines) + "\n"


def render_botorch_in_run(root, rel):
    """A step inside a run on both sides, mumbo-jax amortised over its refit schedule
    (``bench_botorch_mfmes.py --in-run``; ``rel``: the file under data)."""
    run = _load(root, f"data/{rel}")
    lines = ["| n | mumbo-jax: the step at n | its CPU s (wall) | mumbo-jax amortised, CPU s (wall) | BoTorch step, "
             "CPU s (wall) | BoTorch's warm fit, wall s (its cold fit on n - 1) | ratio, amortised, CPU (wall) | "
             "target 100x |", "|---|---|---|---|---|---|---|---|"]
    for r in run["rows"]:
        m, b = r["mumbo_jax"], r["botorch"]
        cpu = r["ratio_amortised_cpu"]
        lines.append(f"| {r['n']} | {m['step_kind']} | {_cpu_wall(m['step']['cpu_s'], m['step']['wall_s'])} | "
                     f"{_cpu_wall(r['mumbo_jax_amortised_cpu_s'], r['mumbo_jax_amortised_s'])} | "
                     f"{_cpu_wall(r['botorch_cpu_s'], r['botorch_s'])} | {r['botorch_fit_s']:.2g} "
                     f"({b['previous_fit_s']:.3g}) | {cpu:.0f}x ({r['ratio_amortised']:.0f}x) | "
                     f"{'met' if cpu >= 100 else 'missed'} |")
    return "\n".join(lines) + "\n"


RENDERERS = {"compare": render_compare, "summary": render_summary, "sweep": render_sweep, "verdict": render_verdict,
             "overhead_mtbo": render_overhead_mtbo, "speed": render_speed, "bo_studies": render_bo_studies,
             "step_overhead": render_step_overhead, "fastcv": render_fastcv,
             "ablation": render_ablation, "decision": render_decision,
             "fit_speed_seed_study": render_fit_speed_seed_study, "compare_workers": render_compare_workers,
             "profile_decision": render_profile_decision, "sweep_timing": render_sweep_timing,
             "async_study": render_async_study, "batch_study": render_batch_study,
             "batch_study_defaults": render_batch_study_defaults,
             "gpu_fit_speed": render_gpu_fit_speed, "gpu_large_n": render_gpu_large_n,
             "icm_fit": render_icm_fit, "compile": render_compile, "compile_polish": render_compile_polish, "compile_lbfgs": render_compile_lbfgs, "base_block": render_base_block, "draws": render_draws, "prefetch": render_prefetch, "large_n": render_large_n,
             "paired_seed_study": render_paired_seed_study, "bench_linalg": render_bench_linalg,
             "botorch_mfmes": render_botorch_mfmes, "long_run": render_long_run,
             "size_classes": render_size_classes, "inducing": render_inducing,
             "botorch_fresh": render_botorch_fresh, "botorch_in_run": render_botorch_in_run}


# --------------------------------------------------------------------------- driver


def render_text(text: str, root=ROOT) -> str:
    """``text`` with every marked region rebuilt from the data under ``root``."""
    def sub(m):
        name, arg = m.group(2), m.group(3)
        if name not in RENDERERS:
            raise ValueError(f"unknown renderer {name!r} in marker {m.group(1).strip()}; known: {sorted(RENDERERS)}")
        return m.group(1) + current_paths(RENDERERS[name](root, arg)) + m.group(5)

    return MARKER.sub(sub, text)


# the data records keep the command they were made with; scripts have since moved into
# experiments/{paper,ablations,performance,studies}: a quoted command names today's path
MOVED = {
    "run_sweeps.sh": "paper", "bench_bo.py": "paper", "fabolas_svm.py": "paper", "fastcv.py": "paper",
    "overhead_mumbo_vs_mtbo.py": "paper", "bench_acquisition.py": "performance",
    "bench_decision.py": "performance", "bench_gain.py": "performance", "bench_gibbon.py": "performance",
    "bench_maxvalue.py": "performance", "bench_nuts.py": "performance", "profile_decision.py": "performance",
    "time_sweep.py": "performance", "bench_compare_workers.py": "performance",
    "gpu_issue10.sh": "performance/gpu_fit_speed.sh", "ablation_mumbo.py": "ablations",
    "merge_rows.py": "ablations", "plot_nuts.py": "ablations", "diag_recommendation.py": "ablations",
    "merge_s10.sh": "ablations/merge_floorcv.sh", "gpu_h6.sh": "ablations/gpu_hartmann6.sh",
    "gpu_h6_6000.sh": "ablations/gpu_hartmann6_6000.sh", "gpu_h6_floorcv.sh": "ablations/gpu_hartmann6_floorcv.sh",
    "gpu_h6_levers.sh": "ablations/gpu_hartmann6_levers.sh", "merge_gpu_h6.py": "ablations/merge_gpu_hartmann6.py",
    "seed_study10.py": "ablations/seed_study_fit_speed.py", "async_study.py": "studies",
}
_MOVED_RE = re.compile(r"experiments/(" + "|".join(re.escape(k) for k in MOVED) + r")\b")


def current_paths(text: str) -> str:
    """``text`` with every old ``experiments/SCRIPT`` path replaced by the script's path today."""
    def sub(m):
        where = MOVED[m.group(1)]
        return "experiments/" + (where if "/" in where else f"{where}/{m.group(1)}")

    text = text.replace("experiments/results13", "data/ablations").replace("docs/data/", "data/")
    for old, new in LABELS.items():
        text = text.replace(old, new)
    return _MOVED_RE.sub(sub, text)


# run labels recorded in the data by development round, as the pages name them
LABELS = {
    "main before issue 10": "before the dense fit", "before issue 10 (": "before the dense fit (",
    "after issue 10c (": "after the blocked-inverse fit (", "(issue 10c: ": "(blocked-inverse fit: ",
    "(the un-landed patch)": "(a rejected variant)",
}


def markers(text: str) -> list[tuple[str, str | None]]:
    return [(m.group(2), m.group(3)) for m in MARKER.finditer(text)]


def render_all(root=ROOT) -> dict[str, str]:
    """Every generated file: ``{path relative to root: its rendered text}``."""
    root = pathlib.Path(root)
    out = {doc: render_text((root / doc).read_text(), root) for doc in DOCS if (root / doc).is_file()}
    for res in sorted((root / "docs" / "results").glob("*/results.json")):
        out[str(res.parent.relative_to(root) / "table.md")] = compare_table(json.loads(res.read_text()))
    return out


def stale(root=ROOT) -> list[str]:
    root = pathlib.Path(root)
    return [rel for rel, text in render_all(root).items()
            if not (root / rel).is_file() or (root / rel).read_text() != text]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report files whose tables are stale (exit 1)")
    args = ap.parse_args(argv)
    if args.check:
        bad = stale()
        for rel in bad:
            print(f"stale: {rel}")
        return 1 if bad else 0
    for rel, text in render_all().items():
        path = ROOT / rel
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            print(f"rewrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
