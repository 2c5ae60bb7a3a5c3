"""Soak study: a long ``mumbo-jax tune`` on a Dask cluster whose workers are killed at
random and whose driver is killed with SIGKILL several times, resumed each time.

What it checks (the answer is written to ``OUT/soak.json`` and printed):

* no finished evaluation is lost: the ``eval`` records journaled before each driver
  kill are, unchanged, the first records of the final journal;
* none is paid twice: every evaluation (its id, and its point number with its attempt)
  is journaled once, and the objective calls that completed (the objective logs each
  one, :mod:`experiments.soak_objective`) are one per journaled evaluation
  (``paid_twice`` counts the extra ones); calls that completed for no journaled
  evaluation are counted separately (``completed_calls_not_journaled``: work a kill
  threw away);
* the run ends with exactly the budgeted number of evaluations.

Setup: one ``dask scheduler`` and ``--workers`` ``dask worker`` processes (no nanny,
one thread each) started here; a killer thread SIGKILLs a random worker every
``--worker-kill-every`` seconds and starts a replacement a second later; the driver
(``python -m mumbo_jax tune``, then ``resume``) is SIGKILLed when the journal reaches
each of ``--driver-kills`` random evaluation counts. The decision rule is ``random``
with a minimal GP fit, so that the study measures the crash safety of the run folder
and the executor, not the optimiser's speed.

    python experiments/soak_study.py --evaluations 500 --workers 4 --driver-kills 3 --out runs/soak

A shortened run (``--evaluations 60 --workers 2 --driver-kills 1``) is the slow test
``tests/test_soak.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CONFIG = """\
[objective]
function = "experiments.soak_objective:objective"
direction = "maximise"
retries = 1
max_consecutive_failures = 50

[parameters]
learning_rate = {{low = 1e-4, high = 0.2, log = true}}
weight_decay = {{low = 1e-6, high = 1e-1, log = true}}

[fidelity]
kind = "discrete"
costs = [10.0, 1.0]
values = [1.0, 0.5]

[budget]
evaluations = {n}

[run]
strategy = "random"
seed = {seed}

[workers]
n = {workers}
executor = "dask"
scheduler = "{scheduler}"
connect_timeout_s = 60

[settings.fit]
restarts = 1
max_iter = 2

[settings.maximiser]
n_candidates = 64
n_starts = 1
polish_steps = 1
boundary_frac = 0.0
local_frac = 0.0
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _read_evals(path: Path) -> list[dict]:
    """The journal's ``eval`` records (a torn last line ignored)."""
    from mumbo_jax.run import journal as jr

    try:
        return [r for r in jr.read_journal(path, warn=lambda m: None)[1] if r["type"] == "eval"]
    except jr.JournalError:
        return []


class Cluster:
    """A Dask scheduler and ``n`` workers (no nanny), with random worker kills."""

    def __init__(self, n: int, env: dict, log):
        self.env, self.log, self.n = env, log, n
        port = _free_port()
        self.address = f"tcp://127.0.0.1:{port}"
        self.scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--port",
                                           str(port), "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL)
        time.sleep(3)
        self.workers = [self._worker() for _ in range(n)]
        self.kills = 0
        self._stop = threading.Event()

    def _worker(self) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--no-nanny",
                                 "--nthreads", "1", "--no-dashboard"], env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, cwd=str(ROOT))

    def killer(self, every: float, rng: random.Random):
        """SIGKILL a random worker every ``every`` seconds (jittered); replace it 1 s later."""
        while not self._stop.wait(every * rng.uniform(0.5, 1.5)):
            i = rng.randrange(self.n)
            try:
                os.kill(self.workers[i].pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.workers[i].wait()
            self.kills += 1
            self.log(f"  killed Dask worker {i} (pid {self.workers[i].pid}); {self.kills} worker kills so far")
            time.sleep(1.0)
            self.workers[i] = self._worker()

    def close(self):
        self._stop.set()
        for p in [*self.workers, self.scheduler]:
            if p.poll() is None:
                p.terminate()
        for p in [*self.workers, self.scheduler]:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def soak(evaluations: int, workers: int, driver_kills: int, worker_kill_every: float, out: Path, seed: int = 0,
         sleep: float = 0.2, timeout: float = 7200.0, stream=sys.stdout) -> dict:
    """Run the study; returns (and writes to ``out/soak.json``) its findings."""
    log = lambda *a: print(*a, file=stream, flush=True)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    run_dir, calls_log = out / "run", out / "calls.jsonl"
    for p in (calls_log,):
        if p.exists():
            p.unlink()
    if run_dir.exists():
        raise SystemExit(f"{run_dir} exists: choose a fresh --out")
    rng = random.Random(seed)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "SOAK_LOG": str(calls_log), "SOAK_SLEEP": str(sleep), "MUMBO_JAX_CACHE": str(out / "xla-cache")}
    cluster = Cluster(workers, env, log)
    killer = threading.Thread(target=cluster.killer, args=(worker_kill_every, rng), daemon=True)
    cfg_path = out / "soak.toml"
    cfg_path.write_text(CONFIG.format(n=evaluations, seed=seed, workers=workers, scheduler=cluster.address))
    kill_at = sorted(rng.sample(range(max(2, evaluations // 10), max(3, evaluations * 9 // 10)), driver_kills))
    log(f"soak: {evaluations} evaluations on {workers} Dask workers ({cluster.address}), a worker killed every "
        f"~{worker_kill_every:g} s, the driver SIGKILLed at {kill_at} journaled evaluations")
    snapshots, sessions, t0 = [], [], time.time()
    cmd = [sys.executable, "-m", "mumbo_jax"]
    killer.start()
    try:
        argv = ["tune", str(cfg_path), "--out", str(run_dir)]
        for k in [*kill_at, None]:
            driver = subprocess.Popen(cmd + argv, env=env, cwd=str(ROOT), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True)
            journal = run_dir / "journal.jsonl"
            while driver.poll() is None and time.time() - t0 < timeout:
                if k is not None and len(_read_evals(journal)) >= k:
                    os.kill(driver.pid, signal.SIGKILL)
                    driver.wait()
                    break
                time.sleep(0.05)
            if driver.poll() is None:
                driver.kill()
                raise SystemExit("soak: the study ran past its timeout")
            err = driver.stderr.read()
            driver.stderr.close()
            code = driver.returncode
            before = _read_evals(journal)
            sessions.append({"command": argv[0], "exit": code, "evaluations_journaled": len(before)})
            log(f"  {argv[0]}: exit {code} with {len(before)} evaluations journaled")
            if code == -signal.SIGKILL:
                snapshots.append(before)
            elif code != 0:
                raise SystemExit(f"soak: {argv[0]} failed (exit {code}): {err[-2000:]}")
            argv = ["resume", str(run_dir), "--scheduler", cluster.address]
    finally:
        cluster.close()
    final = _read_evals(run_dir / "journal.jsonl")
    calls = [json.loads(line) for line in calls_log.read_text().splitlines()] if calls_log.exists() else []

    def key(x, fidelity):
        return tuple(round(float(v), 12) for v in x.values()) + (round(float(fidelity), 12),)

    journaled = {}
    for r in final:
        journaled.setdefault(key(r["x"], r["fidelity"]), []).append(r)
    called = {}
    for c in calls:
        called[key(c["x"], c["fidelity"])] = called.get(key(c["x"], c["fidelity"]), 0) + 1
    ok_keys = [key(r["x"], r["fidelity"]) for r in final if r["status"] == "ok"]
    findings = {
        "evaluations": len(final),
        "budget": evaluations,
        "driver_kills": len(snapshots),
        "worker_kills": cluster.kills,
        "sessions": sessions,
        "wall_clock_s": time.time() - t0,
        "ok": sum(r["status"] == "ok" for r in final),
        "failed": sum(r["status"] == "failed" for r in final),
        "lost_finished": sum(snap != final[:len(snap)] for snap in snapshots),
        "ids_journaled_twice": len(final) - len({r["id"] for r in final}),
        # one evaluation (point number and attempt; a reissue keeps both) with two results
        "evaluations_journaled_twice": len(final) - len({(r["point"], r["attempt"]) for r in final}),
        "reused_outcomes": sum(bool(r.get("reused")) for r in final),
        "ok_evaluations_without_a_completed_call": sum(called.get(k, 0) == 0 for k in ok_keys),
        "completed_calls": len(calls),
        # paid twice: completed objective calls beyond one per journaled evaluation of the point
        "paid_twice": sum(max(0, n - len(journaled.get(k, []))) for k, n in called.items() if k in journaled),
        "completed_calls_not_journaled": sum(n for k, n in called.items() if k not in journaled),
        "in_order": [r["n"] for r in final] == list(range(len(final))),
    }
    findings["passed"] = (findings["evaluations"] == evaluations and findings["lost_finished"] == 0
                          and findings["ids_journaled_twice"] == 0 and findings["evaluations_journaled_twice"] == 0
                          and findings["paid_twice"] == 0
                          and findings["ok_evaluations_without_a_completed_call"] == 0 and findings["in_order"])
    (out / "soak.json").write_text(json.dumps(findings, indent=1) + "\n")
    log(json.dumps({k: v for k, v in findings.items() if k != "sessions"}, indent=1))
    return findings


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--evaluations", type=int, default=500)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--driver-kills", type=int, default=3)
    p.add_argument("--worker-kill-every", type=float, default=10.0, metavar="SECONDS")
    p.add_argument("--sleep", type=float, default=0.2, help="seconds per evaluation at the target fidelity")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=7200.0, metavar="SECONDS")
    p.add_argument("--out", default="runs/soak")
    a = p.parse_args(argv)
    found = soak(a.evaluations, a.workers, a.driver_kills, a.worker_kill_every, Path(a.out), a.seed, a.sleep,
                 a.timeout)
    return 0 if found["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
