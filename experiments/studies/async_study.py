"""Simulated-cost study of asynchronous MUMBO through Dask workers.

Hartmann-3 with 3 fidelities (costs 100, 10, 1): each evaluation is a Dask task that
sleeps ``sleep_per_cost * cost`` seconds (the objective's value is computed in the
driver: only the waiting is simulated). The driver keeps ``w`` evaluations in flight
(w = 1, 2, 4, 8) with :class:`mumbo_jax.bo.asktell.AskTell` (pending points by the
kriging believer) over the same cost budget, and records every completion's
wall-clock time. Afterwards the regret of the model's incumbent after each completion
is computed offline (conditioning on the data told so far with the hyper-parameters
of that moment: what ``AskTell.incumbent`` would have said, without its cost inside
the timed run).

Reported per worker count (median over seeds, and per seed): wall-clock to regret
1e-2 and 1e-3 (``null``: not reached within the budget), regret at fixed wall-clock
times, final regret at the common cost budget, the number of evaluations and the time
the driver spent deciding (fit, g*, maximisation).

Caveat (stated in the output): the decisions run on the driver's CPU; on a small
machine (2 cores here) the BO step competes with the workers' processes and its time
does not shrink with more workers, so the speed-up is bounded by how much of the
wall-clock the sleeps are.

Run (the study in docs/RESULTS.md: 40 runs at once, 4 worker counts x 10 seeds, about
40 minutes on one core):

    taskset -c 0 python experiments/studies/async_study.py --seeds 10 --budget 1000 --sleep-per-cost 2 \\
        --fixed-times 300 600 1200 --concurrent --out data/async_study10.json

It also draws the runs to the ``--out`` file's ``.png`` (not committed: no page shows it).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["main", "run_one", "summarise"]

THRESHOLDS = (1e-2, 1e-3)


def _settings():
    from mumbo_jax.bo.settings import BOSettings

    # MUMBO with the global recommendation: the rule and recommendation of the committed study
    return BOSettings(strategy="mumbo", recommendation={"rule": "global"}, gstar={"samples": 10, "grid": 2000},
                      maximiser={"n_candidates": 500, "n_starts": 3, "polish_steps": 10},
                      fit={"restarts": 2, "max_iter": 50})


def warm_up(prob, settings):
    """Compile every stage the runs will use outside the timed runs: the buffer sizes
    32 to 256 (a budget of 800 allows at most 152 evaluations: the design's 18 at cost
    666, then 134 at the cheapest cost 1) with and without pending points (predicted in
    blocks of 8: one program for 1 to 8 of them). The runs reuse the compiled programs."""
    import jax.numpy as jnp

    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo.asktell import AskTell

    task = tasks.problem_task(prob)
    rng = np.random.default_rng(0)
    for n, pending in ((20, (0, 1)), (40, (0, 1)), (100, (0, 1)), (200, (0, 1))):
        x = rng.uniform(size=(n, prob.dim))
        z = rng.integers(0, prob.n_fidelities, size=n)
        y = [float(problems.objective(prob, jnp.asarray(a), int(b))) for a, b in zip(x, z)]
        state = {"seed": 0, "x": x.tolist(), "z": z.tolist(), "y": y, "costs": [1.0] * n,
                 "params": {k: np.asarray(v).tolist() for k, v in AskTell(task, settings).params.items()}}
        for p in pending:  # n >= the design's 18 points: every ask is a BO step
            opt = AskTell.from_state(task, settings, state)
            for _ in range(p + 1):
                opt.ask()


def run_one(executor, prob, settings, workers: int, seed: int, budget: float, sleep_per_cost: float) -> dict:
    """One asynchronous run: ``workers`` evaluations in flight until ``budget`` is
    issued. Returns the completions (time, cost so far, x, z, y, params)."""
    import jax.numpy as jnp

    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo.asktell import AskTell

    task = tasks.problem_task(prob)
    opt = AskTell(task, settings, seed=seed)
    in_flight, issued, spent, done = {}, 0.0, 0.0, []
    t0 = time.perf_counter()
    decide_s = 0.0
    while True:
        while len(in_flight) < workers and issued < budget:
            ta = time.perf_counter()
            x, z = opt.ask()
            decide_s += time.perf_counter() - ta
            c = float(prob.costs[int(z)])
            issued += c
            in_flight[executor.submit(time.sleep, c * sleep_per_cost)] = (x, z, c)
        if not in_flight:
            break
        finished, _ = concurrent.futures.wait(in_flight, return_when=concurrent.futures.FIRST_COMPLETED)
        for fut in finished:
            fut.result()
            x, z, c = in_flight.pop(fut)
            y = float(problems.objective(prob, jnp.asarray(x), z))
            opt.tell(x, z, y)
            spent += c
            done.append({"t": time.perf_counter() - t0, "cost": spent, "x": np.asarray(x).tolist(), "z": int(z),
                         "y": y, "params": {k: np.asarray(v).tolist() for k, v in opt.params.items()}})
    return {"workers": workers, "seed": seed, "budget": budget, "wall_s": time.perf_counter() - t0,
            "decide_s": decide_s,
            "n_design": opt.n_design, "completions": done}


def incumbent_regrets(prob, settings, run: dict) -> list[float]:
    """Regret of the incumbent after each completion (``nan`` before the design is told)."""
    import jax

    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo import stages

    task = tasks.problem_task(prob)
    gstar = prob.optimum_value if prob.maximise else -prob.optimum_value
    comp = run["completions"]
    x = np.asarray([c["x"] for c in comp])
    z = np.asarray([c["z"] for c in comp], float)
    y = np.asarray([c["y"] for c in comp])
    out = []
    for i in range(len(comp)):
        n = i + 1
        if n < run["n_design"]:
            out.append(float("nan"))
            continue
        buffers = stages.pad_buffers(x[:n], z[:n], y[:n], stages.buffer_size(n))
        params = stages.as_params({k: np.asarray(v) for k, v in comp[i]["params"].items()})
        post = stages.fit_stage(settings, task, buffers, params, jax.random.PRNGKey(0), False)
        row, _ = stages.incumbent_row(task, post, settings.recommendation.rule)
        g = float(problems.objective(prob, jax.numpy.asarray(x[int(row)]), 0))
        out.append(max(gstar - g, 0.0))
    return out


def _time_to(times, regrets, thr):
    hit = [t for t, r in zip(times, regrets) if np.isfinite(r) and r <= thr]
    return hit[0] if hit else None


def _regret_at(times, regrets, t):
    before = [r for s, r in zip(times, regrets) if s <= t and np.isfinite(r)]
    return before[-1] if before else None


def summarise(runs: list[dict], fixed_times) -> dict:
    """Per worker count: medians over seeds and the per-seed figures."""
    out = {}
    for w in sorted({r["workers"] for r in runs}):
        rs = [r for r in runs if r["workers"] == w]
        per_seed = []
        for r in rs:
            times = [c["t"] for c in r["completions"]]
            reg = r["regrets"]
            per_seed.append({
                "seed": r["seed"], "wall_s": r["wall_s"], "decide_s": r["decide_s"],
                "n_evaluations": len(times), "final_regret": reg[-1], "cost": r["completions"][-1]["cost"],
                "regret_at_budget": _regret_at([c["cost"] for c in r["completions"]], reg, r["budget"]),
                "time_to": {f"{thr:g}": _time_to(times, reg, thr) for thr in THRESHOLDS},
                "regret_at": {f"{t:g}": _regret_at(times, reg, t) for t in fixed_times},
            })

        def med(values):
            vals = [v for v in values if v is not None]
            return float(np.median(vals)) if len(vals) == len(values) and vals else None

        out[str(w)] = {
            "median_wall_s": med([p["wall_s"] for p in per_seed]),
            "median_decide_s": med([p["decide_s"] for p in per_seed]),
            "median_final_regret": med([p["final_regret"] for p in per_seed]),
            "median_regret_at_budget": med([p["regret_at_budget"] for p in per_seed]),
            "median_time_to": {k: med([p["time_to"][k] for p in per_seed]) for k in per_seed[0]["time_to"]},
            "median_regret_at": {k: med([p["regret_at"][k] for p in per_seed]) for k in per_seed[0]["regret_at"]},
            "per_seed": per_seed,
        }
    return out


def plot(runs: list[dict], path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    colours = {1: "C0", 2: "C1", 4: "C2", 8: "C3"}
    for r in runs:
        t = [c["t"] for c in r["completions"]]
        ax.step(t, np.maximum(r["regrets"], 1e-6), where="post", color=colours.get(r["workers"], "k"), alpha=0.8,
                label=f"{r['workers']} workers" if r["seed"] == min(s["seed"] for s in runs) else None)
    for thr in THRESHOLDS:
        ax.axhline(thr, color="0.6", lw=0.8, ls="--")
    ax.set_yscale("log")
    ax.set_xlabel("wall-clock (s)")
    ax.set_ylabel("regret of the incumbent")
    ax.set_title("asynchronous MUMBO, Hartmann-3, simulated costs (Dask workers)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--budget", type=float, default=800.0, help="cost budget per run (the design included)")
    ap.add_argument("--sleep-per-cost", type=float, default=0.05, help="seconds of sleep per unit of cost")
    ap.add_argument("--fixed-times", type=float, nargs="+", default=[20.0, 40.0])
    ap.add_argument("--out", default="data/async_study10.json")
    ap.add_argument("--concurrent", action="store_true",
                    help="run every (seed, workers) run at once, each driver in its own thread of this process "
                         "(they share the compiled programs and the CPU; their evaluations share one Dask worker "
                         "process with a thread per evaluation slot)")
    args = ap.parse_args(argv)

    import jax

    jax.config.update("jax_enable_x64", True)
    from mumbo_jax.runtime import process_options

    process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release
    import distributed

    from mumbo_jax.benchmarks import problems

    prob = problems.get_problem("hartmann3")
    settings = _settings()
    load_start = os.getloadavg()
    # the simulated evaluations only sleep: with --concurrent one worker process holds a
    # thread per evaluation that can be in flight at once
    slots = sum(args.workers) * args.seeds if args.concurrent else max(args.workers)
    cluster = distributed.LocalCluster(n_workers=1 if args.concurrent else max(args.workers),
                                       threads_per_worker=slots if args.concurrent else 1, processes=True,
                                       dashboard_address=":0")
    client = distributed.Client(cluster)
    executor = client.get_executor(pure=False)
    runs = []
    try:
        t = time.perf_counter()
        warm_up(prob, settings)
        print(f"warm-up (compiling) {time.perf_counter() - t:.0f} s", flush=True)
        jobs = [(seed, w) for seed in range(args.seeds) for w in args.workers]
        if args.concurrent:  # every run at once, one driver thread each (they mostly wait)
            with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
                futs = [pool.submit(run_one, executor, prob, settings, w, seed, args.budget, args.sleep_per_cost)
                        for seed, w in jobs]
                finished = [f.result() for f in futs]
        else:
            finished = (run_one(executor, prob, settings, w, seed, args.budget, args.sleep_per_cost)
                        for seed, w in jobs)
        for r in finished:
            r["regrets"] = incumbent_regrets(prob, settings, r)
            runs.append(r)
            print(f"seed {r['seed']} workers {r['workers']}: {len(r['completions'])} evaluations in "
                  f"{r['wall_s']:.1f} s (deciding {r['decide_s']:.1f} s), final regret {r['regrets'][-1]:.3g}",
                  flush=True)
    finally:
        client.close()
        cluster.close()
    summary = summarise(runs, args.fixed_times)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "study": "async_study", "problem": "hartmann3", "costs": list(prob.costs), "seeds": args.seeds,
        "workers": args.workers, "budget": args.budget, "sleep_per_cost_s": args.sleep_per_cost,
        "thresholds": list(THRESHOLDS), "fixed_times_s": args.fixed_times, "pending": "believer",
        "concurrent": args.concurrent,
        "settings": dataclasses.asdict(settings),
        "machine": {"cpus": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)), "python": sys.version.split()[0],
                    "platform": platform.platform(), "loadavg_start": list(load_start),
                    "loadavg_end": list(os.getloadavg())},
        "command": "python experiments/studies/async_study.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "summary": summary,
        "runs": [{k: v for k, v in r.items() if k != "completions"}
                 | {"times": [c["t"] for c in r["completions"]], "costs": [c["cost"] for c in r["completions"]],
                    "z": [c["z"] for c in r["completions"]]} for r in runs],
    }
    out.write_text(json.dumps(data, indent=1, allow_nan=True) + "\n")
    plot(runs, out.with_suffix(".png"))
    for w, s in summary.items():
        print(f"workers {w}: median wall {s['median_wall_s']:.1f} s, to 1e-2 {s['median_time_to']['0.01']}, "
              f"to 1e-3 {s['median_time_to']['0.001']}, final regret {s['median_final_regret']:.3g}, "
              f"regret at {args.fixed_times} s: {list(s['median_regret_at'].values())}")


if __name__ == "__main__":
    main()
