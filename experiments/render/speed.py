"""README and the performance page, speed: one decision's pieces, the BO studies' regrets
and step overheads, one ``ask()`` against n, where its time goes, a sweep's wall time,
``compare --workers``, which fit-speed piece moves decisions, the fit on a GPU.

* ``overhead_mtbo``: ``data/overhead_mumbo_vs_mtbo.json`` (``experiments/paper/overhead_mumbo_vs_mtbo.py``).
* ``speed``: ``data/speed.json`` (``experiments/performance/bench_acquisition.py``).
* ``bo_studies``: ``data/bench_bo.jsonl`` and the GPU runs in ``data/gpu/``
  (``experiments/paper/bench_bo.py regret``).
* ``step_overhead``: the ``overhead`` record of ``data/bench_bo.jsonl``
  (``experiments/paper/bench_bo.py overhead``).
* ``decision``: ``data/bench_decision.json`` (``experiments/performance/bench_decision.py``):
  one ``ask()`` against n, the last run of each label.
* ``profile_decision``: the last run in ``data/profile_decision.json``
  (``experiments/performance/profile_decision.py``).
* ``sweep_timing``: ``data/sweep_timing/sweeps.json`` (``experiments/performance/time_sweep.py``).
* ``compare_workers``: ``data/compare_workers.json`` (``experiments/performance/bench_compare_workers.py``).
* ``fit_speed_seed_study``: ``data/fit_speed_seed_study.json``
  (``experiments/ablations/seed_study_fit_speed.py``).
* ``gpu_fit_speed DIR``: ``data/gpu/DIR`` (``experiments/performance/gpu_fit_speed.sh``).
"""

from __future__ import annotations

import json

import numpy as np

from .common import _device, _jsonl, _load, _load_note, _machine, _num


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


SEED_STUDY_VARIANTS = {"tinygp": "tinygp objective (before the dense fit)", "dense": "dense objective (default)",
                       "ftol": "+ fit_ftol = 1e-9", "warm": "+ full_refit_every = 10",
                       "ftol_warm": "+ both (a rejected variant)",
                       "pow2": "dense objective, power-of-two buffers",
                       "linalg10c": "defaults after the blocked-inverse fit (blocked inverses, Matern gradient, g* in chunks)"}


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



def render_gpu_fit_speed(root, rel=None):
    """The fit-speed accelerator checks (``bash experiments/performance/gpu_fit_speed.sh`` and
    ``bench_acquisition.py --fit-batching both --fit-max-iter 200,50`` on a GPU;
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

