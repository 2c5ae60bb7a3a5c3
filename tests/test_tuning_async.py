"""Parallel tuning runs: several evaluations in flight (local worker processes, a real
Dask LocalCluster), the issued/result journal, resume after a crash (in-process and
after a SIGKILL of the driver), and one-line errors for bad worker settings."""

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mumbo_jax.run import cli
from mumbo_jax.run import journal as jr
from mumbo_jax.run import tune as tuning
from mumbo_jax.run.config import ConfigError
from tests.test_tuning import KILL_CONFIG, N_DESIGN, ROOT, config, evals_of, journal

distributed = pytest.importorskip("distributed")

DIE_ONCE = '''
import os
import time
from pathlib import Path
from mumbo_jax.benchmarks.examples import train_demo_accuracy


def train_demo(x, fidelity):  # never diverges: every failure here is a dying worker
    return train_demo_accuracy(x["learning_rate"], x["weight_decay"], fidelity)


def f(x, fidelity):
    marker = Path(__file__).with_name("died")
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(3)  # the worker process dies mid-evaluation
    time.sleep(0.3)
    return train_demo(x, fidelity)


def where(x, fidelity):
    return {"score": train_demo(x, fidelity), "cost": 1.0 + os.getpid() % 1000 / 1e6}
'''


@pytest.fixture(scope="module")
def dask_cluster():
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):  # a dying worker fails the task at once
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                           worker_dashboard_address=None)
    yield cluster
    cluster.close()


def records(run_dir):
    return journal(run_dir)[1]


def check_ledger(run_dir):
    """Every issued evaluation has exactly one result, or was lost and issued again;
    no finished (point, attempt) is finished twice."""
    recs = records(run_dir)
    issued = [r for r in recs if r["type"] == "issued"]
    evals = [r for r in recs if r["type"] == "eval"]
    done = [r["id"] for r in evals]
    assert len(done) == len(set(done))
    reissued = {r["reissue_of"] for r in issued if r.get("reissue_of") is not None}
    for r in issued:
        assert (r["id"] in done) != (r["id"] in reissued), r
    keys = [(r["point"], r["attempt"]) for r in evals]
    assert len(keys) == len(set(keys))
    return issued, evals


def max_in_flight(run_dir):
    depth = best = 0
    for r in records(run_dir):
        depth += {"issued": 1, "eval": -1}.get(r["type"], 0)
        best = max(best, depth)
    return best


@pytest.mark.slow  # ~18 s of the default run; workers, pending points and reissues stay in CI (the crash, dying-worker and Dask tests, test_asktell_async)
def test_local_worker_pool_runs_several_at_once_and_tells_bo_with_pending(tmp_path):
    (tmp_path / "obj.py").write_text(DIE_ONCE)
    cfg = config(budget={"evaluations": N_DESIGN + 3}, objective={"function": str(tmp_path / "obj.py") + ":where"})
    res = tuning.tune(cfg, out=tmp_path / "run", stream=io.StringIO(), workers=3)
    issued, evals = check_ledger(tmp_path / "run")
    assert len(evals) == N_DESIGN + 3 and res["counts"]["evaluations"] == N_DESIGN + 3
    assert max_in_flight(tmp_path / "run") == 3
    bo = [r for r in issued if r["source"] == "bo"]
    assert len(bo) == 3 and all(r["params"] is not None for r in bo)
    points = [(tuple(r["u"]), r["z"]) for r in issued if r["source"] == "bo"]
    assert len(set(points)) == len(points)  # asks with pending points never repeat a running one
    assert all(r["session"] == 1 and r["holds"] is not None for r in evals)


def test_any_concurrent_futures_executor(tmp_path):
    import concurrent.futures

    cfg = config(budget={"evaluations": N_DESIGN})  # the initial design only: no compilation
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        res = tuning.tune(cfg, out=tmp_path / "run", stream=io.StringIO(), executor=ex, workers=2)
    check_ledger(tmp_path / "run")
    assert res["counts"]["evaluations"] == N_DESIGN and max_in_flight(tmp_path / "run") == 2
    session = next(r for r in records(tmp_path / "run") if r["type"] == "session")
    assert session["executor"] == "user" and session["workers"] == 2


def test_crash_in_process_then_resume_reissues_the_lost_ones(tmp_path, monkeypatch):
    """Crash the driver (an exception out of the loop, as a Ctrl-C would) with
    evaluations in flight on 3 local workers; resume: each lost evaluation issued once
    more, no finished one repeated or lost."""
    cfg = config(budget={"evaluations": N_DESIGN}, objective={"function": "mumbo_jax.benchmarks.examples:"
                                                                           "slow_train_demo"})
    monkeypatch.setenv("MUMBO_DEMO_SLEEP", "0.3")
    real = jr.Journal.append
    seen = []

    def crashing(self, record):
        real(self, record)
        seen.append(record["type"])
        if seen.count("eval") == 3:
            raise KeyboardInterrupt("injected crash")

    monkeypatch.setattr(jr.Journal, "append", crashing)
    with pytest.raises(KeyboardInterrupt):
        tuning.tune(cfg, out=tmp_path / "run", stream=io.StringIO(), workers=3)
    monkeypatch.setattr(jr.Journal, "append", real)
    before = evals_of(tmp_path / "run")
    lost = [r for r in records(tmp_path / "run") if r["type"] == "issued" and r["id"] not in {e["id"] for e in before}]
    assert len(before) == 3 and len(lost) >= 1
    out = io.StringIO()
    res = tuning.resume(tmp_path / "run", stream=out)
    assert f"issuing again {len(lost)} lost with the crash" in out.getvalue()
    issued, evals = check_ledger(tmp_path / "run")
    assert evals[:3] == before and len(evals) == N_DESIGN and res["finished"]
    again = [r for r in issued if r.get("reissue_of") is not None]
    assert sorted((tuple(r["u"]), r["z"]) for r in again) == sorted((tuple(r["u"]), r["z"]) for r in lost)
    design = [(tuple(r["u"]), r["z"]) for r in evals]
    assert len(set(design)) == N_DESIGN  # the whole design, each point once


def test_dask_cluster_runs_the_evaluations_on_its_workers(tmp_path, dask_cluster):
    (tmp_path / "obj.py").write_text(DIE_ONCE)
    (tmp_path / "died").write_text("no dying here")
    cfg = config(objective={"function": str(tmp_path / "obj.py") + ":where"}, budget={"evaluations": N_DESIGN},
                 workers={"n": 2, "executor": "dask", "scheduler": dask_cluster.scheduler_address})
    res = tuning.tune(cfg, out=tmp_path / "run", stream=io.StringIO())
    _, evals = check_ledger(tmp_path / "run")
    assert res["counts"]["ok"] == N_DESIGN and max_in_flight(tmp_path / "run") == 2
    pids = {round((r["cost"] - 1.0) * 1e6) for r in evals if r["status"] == "ok"}  # where each one ran
    with distributed.Client(dask_cluster) as client:
        worker_pids = {p % 1000 for p in client.run(os.getpid).values()}
    assert pids and pids <= worker_pids and os.getpid() % 1000 not in pids
    assert journal(tmp_path / "run")[0]["config"]["workers"]["executor"] == "dask"


@pytest.mark.parametrize("where", ["dask", "process"])
def test_a_dying_worker_is_a_failed_evaluation_then_retried(tmp_path, dask_cluster, where):
    (tmp_path / "obj.py").write_text(DIE_ONCE)
    workers = {"n": 2, "executor": where}
    if where == "dask":
        workers["scheduler"] = dask_cluster.scheduler_address
    cfg = config(objective={"function": str(tmp_path / "obj.py") + ":f", "retries": 1},
                 budget={"evaluations": 5}, workers=workers)
    res = tuning.tune(cfg, out=tmp_path / "run", stream=io.StringIO())
    _, evals = check_ledger(tmp_path / "run")
    failed = [r for r in evals if r["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["error"].startswith("WorkerDied: ")
    retry = [r for r in evals if r["point"] == failed[0]["point"] and r["attempt"] == 1]
    assert len(retry) == 1 and retry[0]["status"] == "ok" and res["counts"]["ok"] == 4


def test_bad_worker_settings_are_one_line_errors(tmp_path, capsys):
    cfg_path = tmp_path / "c.toml"
    cfg_path.write_text((ROOT / "configs" / "tune_example.toml").read_text() + "\n[workers]\nconnect_timeout_s = 2\n")
    assert cli.main(["tune", str(cfg_path), "--out", str(tmp_path / "a"), "--workers", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "mumbo-jax: error: --workers must be a positive integer (evaluations at once), got 0"
    t0 = time.time()
    assert cli.main(["tune", str(cfg_path), "--out", str(tmp_path / "b"), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err.strip()
    assert time.time() - t0 < 30 and "\n" not in err
    assert err.startswith("mumbo-jax: error: [workers] cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'")
    assert not (tmp_path / "b" / jr.JOURNAL_NAME).exists()  # nothing started
    with pytest.raises(ConfigError, match=r"\[workers\] n must be >= 1, got 0"):
        tuning.parse_tune_config(config(workers={"n": 0}))
    with pytest.raises(ConfigError, match=r"\[workers\] executor = 'dask' needs scheduler"):
        tuning.parse_tune_config(config(workers={"executor": "dask"}))
    with pytest.raises(ConfigError, match=r"pending = 'gibbon' needs a max-value strategy"):
        tuning.parse_tune_config(config(workers={"pending": "gibbon"}, run={"strategy": "mf_gp_ucb"}))


@pytest.mark.slow  # ~30 s each: two CLI subprocesses; the fast in-process version is test_crash_in_process_...
@pytest.mark.parametrize("executor", ["dask", "process"])
def test_sigkill_with_evaluations_in_flight_then_resume(tmp_path, dask_cluster, executor):
    """``mumbo-jax tune --workers 2`` in a subprocess, SIGKILL once 3 evaluations
    finished (others in flight), ``mumbo-jax resume``: the finished ones kept, never
    repeated; the lost ones issued again; no local worker outlives the driver."""
    (tmp_path / "kill.toml").write_text(KILL_CONFIG.format(n=N_DESIGN - 1))
    run_dir = tmp_path / "run"
    env = {**os.environ, "MUMBO_DEMO_SLEEP": "0.6", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "mumbo_jax"]
    extra = ["--workers", "2"] + (["--scheduler", dask_cluster.scheduler_address] if executor == "dask" else [])
    proc = subprocess.Popen(cmd + ["tune", str(tmp_path / "kill.toml"), "--out", str(run_dir)] + extra, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    path = run_dir / jr.JOURNAL_NAME
    deadline = time.time() + 90
    while time.time() < deadline and proc.poll() is None:
        if path.exists():
            try:
                recs = jr.read_journal(path, warn=lambda m: None)[1]
            except jr.JournalError:  # the header is being written
                recs = []
            n_eval = sum(r["type"] == "eval" for r in recs)
            if n_eval >= 3 and sum(r["type"] == "issued" for r in recs) > n_eval:
                break
        time.sleep(0.02)
    assert proc.poll() is None, proc.stderr.read().decode()
    children = _children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    recs = jr.read_journal(path, warn=lambda m: None)[1]
    before = [r for r in recs if r["type"] == "eval"]
    lost = [r for r in recs if r["type"] == "issued" and r["id"] not in {e["id"] for e in before}]
    assert 3 <= len(before) < N_DESIGN - 1 and lost
    if executor == "process":
        assert children  # the pool's worker processes ...
        time.sleep(1.5)  # ... die with the driver (PR_SET_PDEATHSIG; the watchdog polls)
        assert [p for p in children if _alive(p)] == []
    done = subprocess.run(cmd + ["resume", str(run_dir)] + extra, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"issuing again {len(lost)} lost with the crash" in done.stdout
    issued, evals = check_ledger(run_dir)
    assert evals[:len(before)] == before and len(evals) == N_DESIGN - 1
    assert sorted(r["reissue_of"] for r in issued if r.get("reissue_of") is not None) == [r["id"] for r in lost]
    points = [(tuple(r["u"]), r["z"]) for r in evals]
    assert len(set(points)) == len(points)  # nothing evaluated twice
    res = json.loads((run_dir / tuning.RESULTS_NAME).read_text())
    assert res["finished"] and res["counts"]["sessions"] == 2


def _children(pid):
    import psutil  # a dependency of dask.distributed

    return [c.pid for c in psutil.Process(pid).children(recursive=True)]


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"
