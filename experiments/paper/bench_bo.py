"""Multi-seed MUMBO studies on the paper's synthetic problems, and per-step overhead.

    python experiments/paper/bench_bo.py regret --problem forrester --budget 200 --seeds 10 --max-evals 80
    python experiments/paper/bench_bo.py overhead            # Hartmann-3, 20..60 observations

``regret`` runs the compiled loop (all seeds in one vmapped program per buffer size)
and prints the median / quartiles of the final simple regret, the wall time, and the
median overhead per step (fit / g* / maximisation, from the step clock).
``overhead`` drives the ask/tell loop on Hartmann-3 and prints the median time per
step (fit + g* + maximisation) while the data grow from 20 to 60 observations.
Results are appended as JSON lines to ``data/bench_bo.jsonl`` (committed: the README's
"BO studies" rows are rendered from it by ``experiments/render_results.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)
# The step clock's host callbacks inside the compiled while_loop can hang the CPU
# client under asynchronous dispatch (jax-ml/jax#25861); run synchronously.
try:
    jax.config.update("jax_cpu_enable_async_dispatch", False)
except AttributeError:  # a jax without the flag
    pass

try:
    import mumbo_jax  # noqa: F401
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax.bo import rules
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.stages import MIN_BUFFER
from mumbo_jax.bo.settings import BOSettings
from mumbo_jax.runtime.timing import StepClock
from mumbo_jax.benchmarks import problems, tasks  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[2] / "data" / "bench_bo.jsonl"


def _record(row, out=None):
    row = {**row, "jax": jax.__version__, "loadavg": list(os.getloadavg())}
    out = pathlib.Path(out) if out else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row))


def regret(args):
    prob = problems.get_problem(args.problem)
    settings = BOSettings(strategy=args.strategy, fit={"refit_every": args.refit_every})
    clock = StepClock(on_step=lambda s, k, info: print(
        f"  seed {s} step {k}: cost {info['spent']:.0f}/{args.budget:g}, fidelity {info['z']:g}, "
        f"regret {info['regret']:.2e}", flush=True) if s == 0 and k % args.print_every == 0 else None)
    t0 = time.perf_counter()

    def bucket_done(h):  # after each buffer size: a line, and the curves so far (a run may be cut short)
        n = np.asarray(h.n_evals)
        # curve entry k is written when step k starts: the cost after n evaluations is the
        # last entry plus the last evaluation's cost
        spent = [float(h.cost_spent[s, n[s] - 1] + h.cost[s, n[s] - 1]) if n[s] else 0.0 for s in range(args.seeds)]
        print(f"  [{time.perf_counter() - t0:.0f} s] evaluations per seed {n.min()}-{n.max()}, "
              f"cost spent {min(spent):.0f}-{max(spent):.0f}", flush=True)
        if args.partial:
            pathlib.Path(args.partial).write_text(json.dumps({
                "wall_s": time.perf_counter() - t0, "n_evals": n.tolist(),
                "cost_spent": np.asarray(h.cost_spent).tolist(), "regret": np.asarray(h.regret).tolist(),
                "z": np.asarray(h.z).tolist()}))

    h = tasks.run_problem(prob, args.budget, list(range(args.seeds)), settings, max_evals=args.max_evals,
                          clock=clock, progress=bucket_done, batching=args.batching, min_buffer=args.min_buffer)
    wall = time.perf_counter() - t0
    n = np.asarray(h.n_evals)
    final = np.asarray([float(h.regret[s, n[s]]) for s in range(args.seeds)])
    spent = np.asarray([float(h.cost_spent[s, n[s]]) for s in range(args.seeds)])
    over = [o["total"] for s in range(args.seeds) for o in clock.overheads(s, int(n[s])) if o["total"]]
    _record({
        "study": "regret", "problem": args.problem, "strategy": args.strategy, "budget": args.budget,
        "seeds": args.seeds, "max_evals": args.max_evals, "refit_every": args.refit_every,
        "batching": args.batching, "min_buffer": args.min_buffer, "wall_s": round(wall, 1),
        "median_final_regret": float(np.median(final)), "quartiles": np.quantile(final, [0.25, 0.75]).tolist(),
        "final_regrets": final.tolist(), "n_evals": n.tolist(), "cost_spent": spent.tolist(),
        "budget_reached": bool(np.all(spent >= args.budget)),
        "median_step_s_all_seeds": float(np.median(over)) if over else None,
        "device": jax.devices()[0].device_kind,
    }, args.jsonl)


def overhead(args):
    prob = problems.get_problem("hartmann3")
    task = tasks.problem_task(prob)
    opt = AskTell(task, BOSettings(strategy="mumbo", recommendation={"rule": "global"}), seed=args.seed)
    times = []
    while len(opt.x) < 60:
        design = opt.in_initial_design
        x, z = opt.ask()
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
        if not design and len(opt.x) > 20:
            t = opt.timings[-1]
            times.append((len(opt.x) - 1, t.fit, t.gstar, t.maximise))
    steps = np.asarray(times)[1:]  # the first BO step compiles
    total = steps[:, 1:].sum(axis=1)
    _record({
        "study": "overhead", "problem": "hartmann3", "observations": [int(steps[0, 0]), int(steps[-1, 0])],
        "median_step_s": float(np.median(total)), "median_fit_s": float(np.median(steps[:, 1])),
        "median_gstar_s": float(np.median(steps[:, 2])), "median_maximise_s": float(np.median(steps[:, 3])),
        "max_step_s": float(np.max(total)), "device": jax.devices()[0].device_kind,
    })


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("regret")
    r.add_argument("--problem", default="forrester", choices=sorted(problems.PROBLEMS))
    r.add_argument("--strategy", default="mumbo", choices=rules.STRATEGIES)
    r.add_argument("--budget", type=float, default=200.0)
    r.add_argument("--seeds", type=int, default=10)
    r.add_argument("--max-evals", type=int, default=100)
    r.add_argument("--refit-every", type=int, default=1, help="BOSettings.refit_every")
    r.add_argument("--batching", default="map", choices=("map", "vmap"))
    r.add_argument("--min-buffer", type=int, default=MIN_BUFFER, help="rows of the first buffer")
    r.add_argument("--print-every", type=int, default=1, help="print seed 0's every k-th step")
    r.add_argument("--partial", default=None, help="JSON file rewritten after each buffer size")
    r.add_argument("--jsonl", default=None, help="results file (default data/bench_bo.jsonl)")
    o = sub.add_parser("overhead")
    o.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    regret(args) if args.cmd == "regret" else overhead(args)


if __name__ == "__main__":
    main()
