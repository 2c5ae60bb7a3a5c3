"""Overhead of the robust rules beside today's MUMBO default: one whole decision (fit,
g*, maximisation, recommendation) on the same data, interleaved, median of R.

    python experiments/performance/bench_robust.py --problem unrel_branin_reliable --reps 5

Prints seconds per decision and the ratios to MUMBO; appends a record to
data/bench_robust.json. Single-thread XLA flags unless XLA_FLAGS is set.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from mumbo_jax.benchmarks import problems, tasks  # noqa: E402
from mumbo_jax.bo import stages  # noqa: E402
from mumbo_jax.bo.settings import BOSettings  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def state_with(task, bench, n_bo: int, seed: int = 0):
    """The design plus ``n_bo`` random evaluations, half of them cheap."""
    key = jax.random.PRNGKey(seed)
    x0, z0 = stages.initial_design(task, key)
    rng = np.random.default_rng(seed)
    b = np.asarray(task.spec.bounds)
    xb = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=(n_bo, task.spec.dim))
    zb = np.where(np.arange(n_bo) % 2 == 0, float(task.target_z[0]), 1.0 if task.spec.discrete else 0.0)
    x = np.concatenate([np.asarray(x0), xb])
    z = np.concatenate([np.asarray(z0), zb])
    zq = z.astype(int) if task.spec.discrete else z
    y = np.asarray(jax.vmap(lambda xi, zi, i: bench.observe(jax.random.fold_in(key, i), xi, zi))(
        jnp.asarray(x), jnp.asarray(zq), jnp.arange(len(z))))
    return stages.init(task, jnp.asarray(x), jnp.asarray(z), jnp.asarray(y), n_design=len(z0))


def one(settings, task, state, key):
    post, prop = stages.decide(settings, task, state, key)
    rec = stages.recommend(task, post, state.buffers.x, settings.recommendation.rule, True)
    return jax.block_until_ready((prop, rec))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problem", default="unrel_branin_reliable")
    ap.add_argument("--n-bo", type=int, default=30)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--fast", action="store_true", help="the study's cheaper maximiser and fit")
    ap.add_argument("--out", default=str(ROOT / "data" / "bench_robust.json"))
    args = ap.parse_args(argv)
    pb = problems.get_problem(args.problem)
    task, bench = tasks.problem_task(pb), tasks.problem_benchmark(pb)
    state = state_with(task, bench, args.n_bo)
    levers = dict(maximiser={"n_candidates": 500, "polish_steps": 15}, fit={"max_iter": 30}) if args.fast else {}
    variants = {"mumbo (global)": BOSettings(strategy="mumbo", recommendation={"rule": "global"}, **levers),
                "robust": BOSettings(strategy="robust", recommendation={"rule": "robust"}, **levers),
                "robust_mes": BOSettings(strategy="robust_mes", recommendation={"rule": "robust"}, **levers)}
    times = {k: [] for k in variants}
    for k, s in variants.items():  # compile
        one(s, task, state, jax.random.PRNGKey(99))
    for r in range(args.reps):  # interleaved: a load change hits every variant alike
        for k, s in variants.items():
            t0 = time.perf_counter()
            one(s, task, state, jax.random.PRNGKey(r))
            times[k].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    base = med["mumbo (global)"]
    for k, v in med.items():
        print(f"{k:16s} {v:.3f} s per decision, {v / base:.2f}x MUMBO's")
    rec = {"problem": args.problem, "n": int(state.n), "reps": args.reps, "fast": args.fast, "seconds": med,
           "ratio": {k: v / base for k, v in med.items()}, "loadavg": list(os.getloadavg()),
           "command": f"python experiments/performance/bench_robust.py --problem {args.problem} --n-bo {args.n_bo} "
                      f"--reps {args.reps}" + (" --fast" if args.fast else "")}
    path = Path(args.out)
    old = json.loads(path.read_text()) if path.exists() else []
    path.write_text(json.dumps(old + [rec], indent=1) + "\n")


if __name__ == "__main__":
    main()
