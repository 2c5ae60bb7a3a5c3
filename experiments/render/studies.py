"""RESULTS, the levers, batches and asynchronous workers (and the more-problems page):
the ablation files under ``data/ablations/`` and the simulated-cost study of asynchronous
workers.

* ``ablation FILE``: ``data/ablations/FILE`` (``experiments/ablations/ablation_mumbo.py``).
* ``batch_study_defaults REL``: ``data/ablations/batchd_REL`` (``ablation_mumbo.py --tag
  batchd --base-defaults``) beside the default's sequential row of ``s10b_REL``.
* ``async_study NAME``: ``data/NAME`` (``experiments/studies/async_study.py``).
* ``fastcv MODEL``: ``data/fastcv_MODEL.json`` (``experiments/paper/fastcv.py``).
"""

from __future__ import annotations

import numpy as np

from .common import _compare_module, _load, _num, _paired_p, _stopped_mark


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
    """A table of levers (``experiments/ablations/ablation_mumbo.py``, JSON under
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


def render_batch_study_defaults(root, rel):
    """Synchronous batches of 4 on the defaults: ``batchd_REL`` (``experiments/ablations/
    ablation_mumbo.py --levers q4kb,q4gibbon,... --tag batchd --base-defaults``) beside the
    default's sequential row of ``s10b_REL`` (the same problem, seeds and settings): median
    regret at cost checkpoints with the sequential runs' interquartile range, median regret
    after k BO steps (one batch or one evaluation each), and paired Wilcoxon tests of the
    believer and every GIBBON variant against sequential MUMBO (at the budget), and of every
    GIBBON variant against the believer (after 10 and 20 batches), Holm-adjusted over the
    table's tests."""
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

