"""Wall time of a `mumbo-jax compare` sweep (the target: the 10-seed Hartmann-3
paper-budget sweep of MUMBO-10 in 15 minutes on a 2-core machine).

    python experiments/performance/time_sweep.py [--config compare_hartmann3] [--strategies mumbo-10] [--seeds 10]
        [--workers 2] [--cache fresh|default] [--label NAME]

Runs ``mumbo-jax compare CONFIG --seeds N --strategies S --workers W --out RUN`` in a
fresh process (RUN: a temporary folder), with an empty persistent compilation cache
(``--cache fresh``, the default: every program is compiled, as on a first run) or the
user's cache (``--cache default``); compare's worker processes share it (a fresh one:
each worker compiles what it runs unless the other has already cached it). Appends a small record to
``data/sweep_timing/sweeps.json`` (wall time, load average at start and end, the
seed groups and each group's wall time, per seed the evaluations, cost spent, final
regret, the seconds of its timed stages (compilation included) and its largest step,
and the strategy's summary) and keeps the
command's output as ``data/sweep_timing/<label>.log``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "data" / "sweep_timing"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="compare_hartmann3")
    p.add_argument("--strategies", default="mumbo-10")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--budget", type=float, default=None)
    p.add_argument("--max-evals", type=int, default=None)
    p.add_argument("--cache", choices=["fresh", "default"], default="fresh")
    p.add_argument("--label", default=None)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    label = args.label or f"{args.config}_{args.strategies}_s{args.seeds}_w{args.workers}"
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = pathlib.Path(tmp) / "run"
        cmd = [sys.executable, "-m", "mumbo_jax", "compare", args.config, "--seeds", str(args.seeds),
               "--strategies", args.strategies, "--workers", str(args.workers), "--out", str(run_dir)]
        if args.budget is not None:
            cmd += ["--budget", str(args.budget)]
        if args.max_evals is not None:
            cmd += ["--max-evals", str(args.max_evals)]
        env = dict(os.environ)
        if args.cache == "fresh":
            env["MUMBO_JAX_CACHE"] = str(pathlib.Path(tmp) / "xla_cache")
        load_start, started = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        t0 = time.perf_counter()
        with open(out / f"{label}.log", "w") as log:
            log.write("$ " + " ".join(["mumbo-jax", *cmd[3:]]) + f"  (cache: {args.cache})\n")
            log.flush()
            proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        wall = time.perf_counter() - t0
        load_end = os.getloadavg()
        results = json.loads((run_dir / "results.json").read_text()) if (run_dir / "results.json").exists() else {}
    strategies = {}
    for name, rec in results.get("strategies", {}).items():
        strategies[name] = {
            "wall_time_s": rec["wall_time_s"], "seed_groups": rec.get("seed_groups"), "summary": rec["summary"],
            "per_seed": [{"seed": s["seed"], "evaluations": len(s["regret"]) - 1, "cost_spent": s["cost_spent"][-1],
                          "final_regret": s["regret"][-1], "n_target": s["n_target"],
                          "stage_s": sum(o for o in s["overheads"] if o is not None),
                          "largest_step_s": max((o for o in s["overheads"] if o is not None), default=None)}
                         for s in rec["per_seed"]]}
    i = cmd.index("--out")
    shown = ["mumbo-jax", *cmd[3:i], *cmd[i + 2:]]  # without the temporary --out
    record = {"label": label, "command": " ".join(shown), "cache": args.cache,
              "returncode": proc.returncode, "wall_s": wall, "started_utc": started, "loadavg_start": load_start,
              "loadavg_end": load_end, "machine": platform.node(), "cpu_count": os.cpu_count(), "device": "cpu",
              "problem": results.get("problem"), "budget": results.get("budget"),
              "max_evals": results.get("max_evals"), "seeds": results.get("seeds"), "strategies": strategies}
    path = out / "sweeps.json"
    runs = json.loads(path.read_text()) if path.exists() else []
    runs.append(record)
    path.write_text(json.dumps(runs, indent=1) + "\n")
    print(f"{label}: {wall / 60:.1f} min (exit {proc.returncode}); load average {load_start[0]:.1f} -> "
          f"{load_end[0]:.1f}; log {out / (label + '.log')}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
