"""Does ``mumbo-jax compare --workers 2`` pay on the 2-core machine? One comparison run
twice, one strategy after another (``--workers 1``) and two at once in pinned worker
processes (``--workers 2``), wall time of each:

    python experiments/performance/bench_compare_workers.py [--config compare_currin] [--strategies mumbo-10,ei]
        [--seeds 3] [--budget 60] [--max-evals 30]

Not pinned itself (the workers pin themselves; ``--workers 1`` runs in this process
with one XLA thread, pinned to the first allowed core). Writes
``data/compare_workers.json`` (appended: wall times, the load average before and after each,
and whether both runs made the same decisions).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"

from mumbo_jax.run import cli  # noqa: E402

OUT = ROOT / "data" / "compare_workers.json"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="compare_currin")
    p.add_argument("--strategies", default="mumbo-10,ei")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--budget", type=float, default=60.0)
    p.add_argument("--max-evals", type=int, default=30)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (2, 1):
            out = pathlib.Path(tmp) / f"w{workers}"
            cmd = ["compare", args.config, "--strategies", args.strategies, "--seeds", str(args.seeds), "--budget",
                   str(args.budget), "--max-evals", str(args.max_evals), "--out", str(out), "--workers", str(workers)]
            if workers == 1 and hasattr(os, "sched_setaffinity"):
                os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
            load0, t0 = os.getloadavg(), time.perf_counter()
            assert cli.main(cmd) == 0
            wall = time.perf_counter() - t0
            res = json.loads((out / "results.json").read_text())
            runs[workers] = {"wall_s": wall, "loadavg_start": load0, "loadavg_end": os.getloadavg(),
                             "strategy_wall_s": {k: v["wall_time_s"] for k, v in res["strategies"].items()},
                             "z": {k: [s["z"] for s in v["per_seed"]] for k, v in res["strategies"].items()}}
            print(f"workers {workers}: {wall:.0f} s (load average {load0[0]:.1f})", flush=True)
    same = runs[1]["z"] == runs[2]["z"]
    record = {"command": "python experiments/performance/bench_compare_workers.py " + " ".join(argv or sys.argv[1:]),
              "config": args.config, "strategies": args.strategies, "seeds": args.seeds, "budget": args.budget,
              "max_evals": args.max_evals, "cpu_count": os.cpu_count(), "same_fidelities": same,
              "time": time.strftime("%Y-%m-%d %H:%M:%S"),
              "runs": {str(k): {kk: vv for kk, vv in v.items() if kk != "z"} for k, v in runs.items()},
              "speedup": runs[1]["wall_s"] / runs[2]["wall_s"]}
    out = pathlib.Path(args.out)
    records = json.loads(out.read_text()) if out.exists() else []
    out.write_text(json.dumps(records + [record], indent=1) + "\n")
    print(f"speed-up of --workers 2: {record['speedup']:.2f}x; same fidelities chosen: {same}")


if __name__ == "__main__":
    main()
