"""Where the recommendation goes wrong: at a measured target point or at a jump.

Runs one strategy on problems (the default levers, uncapped, the deterministic flags
``robust.py`` sets) and classifies every step's recommendation: a point measured at the
target (initial design included) or an x the model jumped to. For each kind it counts
the steps where the recommendation is worse than the best measured target point by more
than its 95 % interval (``robust_report.py``'s "rec. worse than meas.") and the steps
where that interval covers the truth; and how often a measured recommendation is not
the best measured point.

    python experiments/studies/recommendation_audit.py --problems unrel_hartmann3_twotask,unrel_hartmann3_partial \
        --seeds 6 [--strategy robust] [--rule robust] [--paper-budgets] [--robust-sd 2] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import robust as study  # noqa: E402  (sets the deterministic XLA flags and the cache before jax loads)


def audit(problem: str, strategy: str, rule: str, seeds: list[int], figures: bool) -> dict:
    import jax
    jax.config.update("jax_enable_x64", True)
    import numpy as np

    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo import stages
    from mumbo_jax.bo.compiled import run_compiled
    from mumbo_jax.bo.settings import BOSettings
    from mumbo_jax.runtime import process_options

    process_options.enable()
    pb = problems.get_problem(problem)
    task, bench = tasks.problem_task(pb), tasks.problem_benchmark(pb)
    h = run_compiled(bench, task, study._budget(problem, None, figures), seeds,
                     BOSettings(strategy=strategy, recommendation={"rule": rule}), max_evals=1000)
    score = jax.jit(jax.vmap(lambda x: bench.score(x)[1]))
    z_target = float(task.target_z[0])
    sign = 1.0 if getattr(pb, "maximise", True) in (True, None) else -1.0
    counts = {k: 0 for k in ("steps", "measured", "measured_not_best", "measured_worse", "measured_covered",
                             "jump", "jump_worse", "jump_covered")}
    finals = []
    for i, seed in enumerate(seeds):
        n = int(h.n_evals[i])
        x0, z0 = (np.asarray(a) for a in stages.initial_design(task, jax.random.split(jax.random.PRNGKey(seed))[0]))
        xs = np.concatenate([x0, h.x[i, :n]])
        on = np.abs(np.concatenate([z0, h.z[i, :n]]) - z_target) < 1e-9
        regret_rows = np.full(len(xs), np.inf)
        regret_rows[on] = np.asarray(score(xs[on]))
        for t in range(n + 1):
            rows = np.flatnonzero(on[:len(x0) + t])
            best = regret_rows[rows].min()
            x, r, sd = h.incumbent_x[i, t], h.regret[i, t], h.incumbent_sd[i, t]
            measured = np.abs(xs[rows] - x).max(axis=1).min() < 1e-9
            worse = (r - best) > 1.96 * sd
            covered = abs(sign * h.incumbent_value[i, t] - h.incumbent_mean[i, t]) <= 1.96 * sd
            kind = "measured" if measured else "jump"
            counts["steps"] += 1
            counts[kind] += 1
            counts[f"{kind}_worse"] += bool(worse)
            counts[f"{kind}_covered"] += bool(covered)
            counts["measured_not_best"] += bool(measured and r > best + 1e-12)
        finals.append(float(h.regret[i, n]))
    return {"problem": problem, "strategy": strategy, "rule": rule, "seeds": seeds, "counts": counts,
            "final_regret": finals, "median_final_regret": float(np.median(finals)), "code": library_version()}


def library_version() -> str:
    """``git describe --always --dirty`` of the checkout the imported ``mumbo_jax`` comes
    from (PYTHONPATH may point at another worktree than this script's)."""
    import subprocess

    import mumbo_jax
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=Path(mumbo_jax.__file__).parent,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", required=True, help="comma-separated problems")
    ap.add_argument("--strategy", default="robust")
    ap.add_argument("--rule", default="robust", help="the recommendation rule")
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--paper-budgets", action="store_true", help="as robust.py's")
    ap.add_argument("--robust-sd", type=float, default=None,
                    help="study only: the robust recommendation's jump margin (incumbent.ROBUST_SD) for this run")
    ap.add_argument("--out", default="", help="a JSON file for the results (default: print only)")
    args = ap.parse_args(argv)
    if args.robust_sd is not None:  # read when the recommendation is traced, so set before any run
        from mumbo_jax.bo import incumbent
        incumbent.ROBUST_SD = float(args.robust_sd)
    results = []
    for problem in args.problems.split(","):
        res = audit(problem, args.strategy, args.rule, list(range(args.seeds)), args.paper_budgets)
        res["robust_sd"] = args.robust_sd
        c = res["counts"]
        print(f"{problem}: {c['steps']} steps; measured {c['measured']} (not the best {c['measured_not_best']}, "
              f"worse beyond the interval {c['measured_worse']}, covered {c['measured_covered']}); jumps {c['jump']} "
              f"(worse {c['jump_worse']}, covered {c['jump_covered']}); median final regret "
              f"{res['median_final_regret']:.3g}", flush=True)
        results.append(res)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
