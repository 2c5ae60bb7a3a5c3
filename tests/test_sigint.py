"""Ctrl-C ends a command within a second, even inside a long compiled computation."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bo_helpers import FAST_TOML

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "MUMBO_JAX_CACHE": "off"}

SLOW_RUN = """\
[run]
problem = "hartmann3"
strategy = "mumbo"
budget = 1000
seeds = 3
max_evals = 100
"""


def _child_signals(blocked: bool):
    """The child's SIGINT as a terminal gives it (default disposition: a test process can
    inherit it ignored, e.g. from a library's helper-process launch earlier in the same
    worker, and an ignored SIGINT is inherited across exec), optionally blocked."""
    def setup():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if blocked:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    return setup


def interrupt_after(argv, ready: str, tmp_path, wait=3.0, blocked=False):
    """Start ``mumbo-jax argv`` (with SIGINT blocked in its mask if ``blocked``, as a
    library's helper-process launch can leave it), wait for ``ready`` on stdout and
    ``wait`` s more, send SIGINT: ``(exit code, seconds to exit, stderr)``."""
    proc = subprocess.Popen([sys.executable, "-m", "mumbo_jax", *argv], env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            preexec_fn=_child_signals(blocked))
    deadline = time.time() + 120
    while time.time() < deadline:
        line = proc.stdout.readline()
        if ready in line or not line:
            break
    time.sleep(wait)
    assert proc.poll() is None, proc.stderr.read()
    # the child's signal masks (blocked, ignored, caught), named if it does not stop
    masks = {k: v.strip() for k, v in (line.split(":", 1) for line in Path(f"/proc/{proc.pid}/status").read_text()
                                       .splitlines() if line.startswith(("SigBlk", "SigIgn", "SigCgt")))}
    t0 = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"no exit 30 s after SIGINT; the child's signal masks then: {masks}; this "
                             f"process's SIGINT handler {signal.getsignal(signal.SIGINT)}, blocked "
                             f"{sorted(signal.pthread_sigmask(signal.SIG_BLOCK, []))}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    took = time.perf_counter() - t0
    err = proc.stderr.read()
    proc.stdout.close(), proc.stderr.close()
    return proc.returncode, took, err


@pytest.mark.parametrize("blocked", [False, True], ids=["plain", "started-with-sigint-blocked"])
def test_run_stops_within_a_second_inside_the_compiled_loop(tmp_path, blocked):
    (tmp_path / "slow.toml").write_text(SLOW_RUN)
    code, took, err = interrupt_after(["run", "slow.toml", "--out", "o"], "compiles", tmp_path, blocked=blocked)
    assert code == 130, err
    assert took < 1.5, took
    assert "interrupted" in err


def test_run_interrupted_while_compiling_says_nothing_was_written(tmp_path):
    """One line, naming no file (none was written), saying how to continue; the lock
    file is removed (the watcher ends the process inside the compile)."""
    (tmp_path / "slow.toml").write_text(SLOW_RUN)
    code, took, err = interrupt_after(["run", "slow.toml", "--out", "o"], "compiles", tmp_path, wait=1.0)
    assert code == 130 and took < 1.5, (code, took, err)
    lines = [line for line in err.splitlines() if "interrupted" in line]
    assert len(lines) == 1, err
    assert "before the first seed finished; no results were written to o/" in lines[0]
    assert "`mumbo-jax run slow.toml --out o --resume`" in lines[0] and "journal" not in err
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == []  # no results, and no lock file left


MANY_SEEDS = """\
[run]
problem = "forrester"
strategy = "ei"
budget = 40
seeds = 40
max_evals = 6
""" + FAST_TOML


def test_run_interrupted_after_seeds_finished_names_their_files_and_plots_them(tmp_path):
    """After a seed finished: one line naming the files that hold the finished seeds
    (results.json, evaluations.csv and their regret.png, all on disk) and the command
    that runs the others."""
    (tmp_path / "many.toml").write_text(MANY_SEEDS)
    code, took, err = interrupt_after(["run", "many.toml", "--out", "o", "--force"], "seed 1 done", tmp_path,
                                      wait=0.5)
    assert code == 130 and took < 1.5, (code, took, err)
    lines = [line for line in err.splitlines() if "interrupted" in line]
    assert len(lines) == 1, err
    out = tmp_path / "o"
    res = json.loads((out / "results.json").read_text())
    done = [s["seed"] for s in res["seeds"]]
    assert done and len(done) < 40 and not res["complete"]
    plural = "s" * (len(done) > 1)
    assert f"interrupted; seed{plural} {', '.join(map(str, done))} of 40 finished, in o/results.json, " \
           "o/evaluations.csv, o/regret.png; `mumbo-jax run many.toml --out o --resume` runs the others" in lines[0]
    assert (out / "regret.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert {int(row.split(",")[0]) for row in (out / "evaluations.csv").read_text().splitlines()[1:]} == set(done)
    assert not (out / ".mumbo-lock").exists()


def test_tune_stops_within_a_second_inside_a_long_evaluation(tmp_path):
    (tmp_path / "obj.py").write_text("import time\ndef f(x, z):\n    time.sleep(60)\n    return 1.0\n")
    (tmp_path / "t.toml").write_text('[objective]\nfunction = "obj.py:f"\ndirection = "maximise"\n'
                                     '[parameters]\na = {low = 0.0, high = 1.0}\n'
                                     '[fidelity]\nkind = "discrete"\ncosts = [1.0]\n[budget]\nevaluations = 3\n')
    code, took, err = interrupt_after(["tune", "t.toml", "--out", "r"], "run folder", tmp_path, wait=1.0)
    assert code == 130 and took < 1.5, (code, took, err)
    lines = [line for line in err.splitlines() if "interrupted" in line]
    assert len(lines) == 1 and "every finished evaluation is in r/journal.jsonl; `mumbo-jax resume r` continues" \
        in lines[0], err
    assert not (tmp_path / "r" / ".mumbo-lock").exists()  # released by the watcher before it ended the process


def test_the_watcher_is_removed_after_an_in_process_command(tmp_path):
    from mumbo_jax.run import cli

    before = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(before)
    assert cli.main(["run", "forrester", "--seeds", "1", "--budget", "1e300", "--out", str(tmp_path)]) == 2
    now = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(now)
    assert now == before
    import threading

    assert not any(t.name == "mumbo-jax-sigint" for t in threading.enumerate())
