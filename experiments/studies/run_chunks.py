"""Run shares of a study's seeds in parallel, one process each, until a deadline.

For a machine with many cores for a short while (a lent machine, a cluster node): each
line of ``--plan`` is ``PROBLEM STRATEGY SEEDS EXPECTED_S`` (seeds comma-separated, the
seconds the share is expected to take on one core). Shares start longest first, one per
core; a share is started only while the time left exceeds its expected time by
``--margin``, and every process is stopped at the deadline (its seeds are lost, the
others kept). Each share writes ``<out>/<problem>__<strategy>__<first seed>/`` with the
``--one`` record of ``robust.py``; ``merge_records.py`` adds them to the study's folder.

    python experiments/studies/run_chunks.py --plan plan.txt --out /tmp/shares --jobs 16 \
        --deadline-s 480 -- --max-evals 1000 --paper-budgets
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

STUDY = Path(__file__).resolve().parent / "robust.py"


def read_plan(text: str) -> list[tuple[str, str, str, float]]:
    """``[(problem, strategy, seeds, expected seconds)]``, longest first. Raises ValueError
    naming the line that is not ``PROBLEM STRATEGY SEEDS EXPECTED_S``."""
    plan = []
    for k, line in enumerate(text.splitlines(), 1):
        if not line.split() or line.lstrip().startswith("#"):
            continue
        try:
            p, s, seeds, expected = line.split()
            [int(x) for x in seeds.split(",")]
            plan.append((p, s, seeds, float(expected)))
        except ValueError:
            raise ValueError(f"plan line {k} is not 'PROBLEM STRATEGY SEEDS EXPECTED_S': {line!r}") from None
    return sorted(plan, key=lambda j: -j[3])


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    study_flags = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plan", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--deadline-s", type=float, required=True, help="seconds from now at which every process stops")
    ap.add_argument("--margin", type=float, default=1.2, help="start a share only if time left > margin x expected")
    args = ap.parse_args(argv)
    plan, t0 = read_plan(args.plan.read_text()), time.time()
    running, done, skipped = [], [], []
    while plan or running:
        left = args.deadline_s - (time.time() - t0)
        while plan and len(running) < args.jobs:
            p, s, seeds, expected = plan.pop(0)
            if left < args.margin * expected:
                skipped.append(f"{p} {s} {seeds}")
                continue
            out = args.out / f"{p}__{s}__{seeds.split(',')[0]}"
            cmd = [sys.executable, str(STUDY), "--one", p, s, "--seed-list", seeds, "--out", str(out), *study_flags]
            with open(out.with_suffix(".log"), "w") as log:  # the child keeps its own handle
                running.append(((p, s, seeds), subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT),
                                time.time()))
        if left <= 0:
            for job, proc, _ in running:
                proc.kill()
                done.append((job, "stopped at the deadline"))
            break
        time.sleep(1.0)
        still = []
        for job, proc, start in running:
            if proc.poll() is None:
                still.append((job, proc, start))
            else:
                done.append((job, f"exit {proc.returncode} after {time.time() - start:.0f} s"))
                print(" ".join(job), done[-1][1], flush=True)
        running = still
    print(f"{sum(d[1].startswith('exit 0') for d in done)} shares done, "
          f"{sum(not d[1].startswith('exit 0') for d in done)} failed or stopped, {len(skipped)} not started",
          flush=True)
    for line in skipped:
        print("not started:", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
