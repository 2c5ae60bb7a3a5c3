"""One writer per run folder: the lock refuses a second writer (naming the holder),
survives nothing of a killed holder, and guards run, compare, tune and resume. Tested
with real concurrent processes."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mumbo_jax.run import cli
from mumbo_jax.run import journal as jr
from mumbo_jax.run import lock

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "MUMBO_JAX_CACHE": "off"}

HOLD = """
import sys, time
from mumbo_jax.run import lock
held = lock.acquire(sys.argv[1], "test holder")
print("held", flush=True)
time.sleep(60)
"""


def hold(folder) -> subprocess.Popen:
    """A process that takes ``folder``'s lock and sleeps (returns once it holds it)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], env=ENV, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def kill(proc):
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()


def test_second_writer_refused_naming_the_holder_and_dead_holder_taken_over(tmp_path):
    proc = hold(tmp_path)
    try:
        with pytest.raises(lock.RunLockedError) as e:
            lock.acquire(tmp_path, "second")
        msg = str(e.value)
        assert f"pid {proc.pid}" in msg and socket.gethostname() in msg and "started 20" in msg
        assert "test holder" in msg
        info = lock.read_holder(tmp_path)
        assert info["pid"] == proc.pid and lock.holder_alive(info) is True
    finally:
        kill(proc)
    # the kernel released the dead holder's lock; its identity is reported as stale
    assert lock.holder_alive(info) is False
    said = []
    with lock.run_lock(tmp_path, "third", say=said.append) as held:
        assert held.stale["pid"] == proc.pid
        assert said and f"pid {proc.pid}" in said[0] and "no longer running" in said[0]
        assert lock.read_holder(tmp_path)["pid"] == os.getpid()
        with pytest.raises(lock.RunLockedError):  # a second lock in the same process is refused too
            lock.acquire(tmp_path, "fourth")
    assert lock.read_holder(tmp_path) is None  # released: no identity left
    with lock.run_lock(tmp_path, "fifth") as held:  # and a clean release is not stale
        assert held.stale is None


def test_lock_file_problems_are_config_errors(tmp_path):
    (tmp_path / lock.LOCK_NAME).mkdir()
    with pytest.raises(lock.ConfigError, match="lock file"):
        lock.acquire(tmp_path, "x")


def test_every_command_refuses_a_locked_folder(tmp_path, capsys):
    """run, compare, tune, resume and compare --render-only: exit 2 naming the holder,
    before any work."""
    out = tmp_path / "out"
    out.mkdir()
    (out / jr.JOURNAL_NAME).write_text('{"type":"header"}\n')  # resume checks there is a journal first
    (out / "results.json").write_text("{}")
    compare_cfg = tmp_path / "c.toml"
    compare_cfg.write_text('[compare]\nproblem = "forrester"\nstrategies = ["random"]\nseeds = 1\nbudget = 5\n')
    proc = hold(out)
    try:
        for argv in (["run", "forrester", "--out", str(out), "--seeds", "1"],
                     ["compare", str(compare_cfg), "--out", str(out)],
                     ["compare", str(compare_cfg), "--out", str(out), "--render-only"],
                     ["resume", str(out)]):
            t0 = time.perf_counter()
            assert cli.main(argv) == 2, argv
            err = capsys.readouterr().err
            assert f"pid {proc.pid}" in err and "in use by" in err, (argv, err)
            assert time.perf_counter() - t0 < 20
        fresh = tmp_path / "fresh"
        fresh.mkdir()
        kill(proc)
        proc = hold(fresh)
        assert cli.main(["tune", "tune_example", "--out", str(fresh)]) == 2
        err = capsys.readouterr().err
        assert f"pid {proc.pid}" in err and not (fresh / jr.JOURNAL_NAME).exists()
    finally:
        kill(proc)


KILL_CONFIG = """\
[objective]
function = "mumbo_jax.benchmarks.examples:slow_train_demo"
direction = "maximise"

[parameters]
learning_rate = {low = 1e-4, high = 0.2, log = true}
weight_decay = {low = 1e-6, high = 1e-1, log = true}

[fidelity]
kind = "discrete"
costs = [10.0, 1.0]
values = [1.0, 0.5]

[budget]
evaluations = 7

[run]
strategy = "random"
seed = 3
"""


def test_concurrent_tune_and_resumes_never_pay_twice(tmp_path):
    """A live ``tune`` refuses a ``resume``; after its kill -9, two ``resume`` started at
    once: one runs, the other is refused (exit 2); every evaluation is journaled once."""
    (tmp_path / "t.toml").write_text(KILL_CONFIG)
    run_dir = tmp_path / "run"
    env = {**ENV, "MUMBO_DEMO_SLEEP": "0.6"}
    cmd = [sys.executable, "-m", "mumbo_jax"]
    a = subprocess.Popen(cmd + ["tune", str(tmp_path / "t.toml"), "--out", str(run_dir)], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = run_dir / jr.JOURNAL_NAME
    deadline = time.time() + 60
    while time.time() < deadline and not path.exists():
        time.sleep(0.05)
    assert a.poll() is None and path.exists()
    b = subprocess.run(cmd + ["resume", str(run_dir)], env=env, capture_output=True, text=True, timeout=120)
    alive = a.poll() is None
    os.kill(a.pid, signal.SIGKILL)
    a.wait()
    assert alive, "the first run ended before the second one was tried: raise MUMBO_DEMO_SLEEP"
    assert b.returncode == 2 and f"pid {a.pid}" in b.stderr and "mumbo-jax tune" in b.stderr, b.stderr
    before = [r for r in jr.read_journal(path, warn=lambda m: None)[1] if r["type"] == "eval"]
    assert len(before) < 7

    env["MUMBO_DEMO_SLEEP"] = "0.05"
    both = [subprocess.Popen(cmd + ["resume", str(run_dir)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=180) for p in both]
    codes = sorted(p.returncode for p in both)
    assert codes == [0, 2], outs
    winner = outs[[p.returncode for p in both].index(0)]
    assert "taking over the lock" in winner[0] and f"pid {a.pid}" in winner[0]
    evals = [r for r in jr.read_journal(path)[1] if r["type"] == "eval"]
    assert [r["n"] for r in evals] == list(range(7))
    ids = [r["id"] for r in evals]
    assert len(set(ids)) == len(ids)  # no evaluation paid twice
    res = json.loads((run_dir / "results.json").read_text())
    assert res["counts"]["evaluations"] == 7 and res["cost"]["spent"] == sum(r["cost"] for r in evals)


def test_a_released_lock_leaves_no_file_and_a_killed_holder_leaves_its_identity(tmp_path):
    with lock.run_lock(tmp_path, "mumbo-jax run"):
        assert (tmp_path / lock.LOCK_NAME).is_file()
    assert not (tmp_path / lock.LOCK_NAME).exists()  # a finished command leaves the folder as it was
    proc = hold(tmp_path)
    kill(proc)
    assert json.loads((tmp_path / lock.LOCK_NAME).read_text())["pid"] == proc.pid  # for the next holder to report


def test_check_free_refuses_a_live_holder_and_creates_nothing(tmp_path):
    lock.check_free(tmp_path)
    assert not (tmp_path / lock.LOCK_NAME).exists()
    proc = hold(tmp_path)
    try:
        with pytest.raises(lock.RunLockedError, match=f"in use by test holder .*pid {proc.pid}"):
            lock.check_free(tmp_path)
        with pytest.raises(lock.RunLockedError):
            lock.check_free(str(tmp_path))
    finally:
        kill(proc)
    lock.check_free(tmp_path)  # a dead holder's file: free
    with lock.run_lock(tmp_path, "next") as held:  # and still reported as stale by the next holder
        assert held.stale["pid"] == proc.pid


RACE = """
import os, sys, time
from mumbo_jax.run import lock
folder, n = sys.argv[1], int(sys.argv[2])
busy = os.path.join(folder, "busy")
done = 0
while done < n:
    try:
        held = lock.acquire(folder, "racer")
    except lock.RunLockedError:
        continue
    try:
        fd = os.open(busy, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # fails if another racer holds the lock too
        os.close(fd)
        time.sleep(0.0005)
        os.unlink(busy)
        done += 1
    finally:
        held.release()
print(done)
"""


def test_removing_the_lock_file_keeps_one_holder_at_a_time(tmp_path):
    """Racers take, hold and release (remove) the lock in a loop: never two at once
    (a holder that locked a file removed meanwhile would be a second holder)."""
    racers = [subprocess.Popen([sys.executable, "-c", RACE, str(tmp_path), "150"], env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=240) for p in racers]
    assert [p.returncode for p in racers] == [0, 0, 0], [o[1][-2000:] for o in outs]
    assert [o[0].strip() for o in outs] == ["150"] * 3
    assert not (tmp_path / lock.LOCK_NAME).exists()


REFUSE = """
import sys, time
t0 = time.perf_counter()
from mumbo_jax.run import cli
code = cli.main(sys.argv[1:])
print(code, "jax" in sys.modules, round(time.perf_counter() - t0, 3))
"""


def test_a_held_folder_is_refused_before_jax_is_imported(tmp_path):
    """resume RUN_DIR, tune --out, run with the config's own out (a shipped name's
    default, runs/forrester), compare: exit 2 naming the holder, and JAX never imported."""
    out = tmp_path / "run"
    out.mkdir()
    (out / jr.JOURNAL_NAME).write_text('{"type":"header"}\n')
    (tmp_path / "runs" / "forrester").mkdir(parents=True)
    (tmp_path / "c.toml").write_text('[compare]\nproblem = "forrester"\nstrategies = ["random"]\nbudget = 5\n'
                                     f'out = "{out}"\n')
    holders = [hold(out), hold(tmp_path / "runs" / "forrester")]
    try:
        for argv, pid in ((["resume", str(out)], holders[0].pid),
                          (["tune", "tune_example", "--out", str(out)], holders[0].pid),
                          (["compare", "c.toml"], holders[0].pid),
                          (["run", "forrester"], holders[1].pid)):
            got = subprocess.run([sys.executable, "-c", REFUSE, *argv], env=ENV, capture_output=True, text=True,
                                 timeout=120, cwd=tmp_path)
            code, jax_imported, _ = got.stdout.split()
            assert (code, jax_imported) == ("2", "False"), (argv, got.stdout, got.stderr)
            assert f"in use by test holder (host {socket.gethostname()}, pid {pid}" in got.stderr, (argv, got.stderr)
    finally:
        for proc in holders:
            kill(proc)


def test_tune_names_the_live_holder_of_a_folder_with_a_journal(tmp_path):
    """From Python too: a live holder is named before "already holds a run"."""
    from mumbo_jax.run import tune

    (tmp_path / jr.JOURNAL_NAME).write_text('{"type":"header"}\n')
    proc = hold(tmp_path)
    try:
        with pytest.raises(lock.RunLockedError, match=f"pid {proc.pid}"):
            tune.tune(tune.load_tune_config(cli_config("tune_example")), out=tmp_path)
    finally:
        kill(proc)
    with pytest.raises(jr.JournalError, match="already holds a run"):
        tune.tune(tune.load_tune_config(cli_config("tune_example")), out=tmp_path)


def cli_config(name):
    from mumbo_jax.run.config import find_config

    return find_config(name)


def test_the_package_claims_only_the_systems_the_lock_runs_on():
    import tomllib

    classifiers = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["classifiers"]
    systems = [c for c in classifiers if c.startswith("Operating System")]
    assert systems and "Operating System :: OS Independent" not in systems  # fcntl.flock is POSIX only
    assert all(c.startswith("Operating System :: POSIX") for c in systems)


def test_the_top_level_names_load_on_first_use():
    """``import mumbo_jax`` starts no JAX (the lock check above relies on it); every name
    of ``__all__`` resolves to the object of its home module."""
    got = subprocess.run([sys.executable, "-c", "import sys, mumbo_jax; print('jax' in sys.modules); "
                          "print(all(hasattr(mumbo_jax, n) for n in mumbo_jax.__all__), 'jax' in sys.modules)"],
                         env=ENV, capture_output=True, text=True, timeout=300)
    assert got.stdout.split() == ["False", "True", "True"], got.stderr
    import importlib

    import mumbo_jax

    pairs = [(module, n if isinstance(n, tuple) else (n, n))  # (public name, the home's name)
             for module, names in mumbo_jax._HOMES.items() for n in names]
    assert sorted(public for _, (public, _) in pairs) == sorted(set(mumbo_jax.__all__) - {"__version__"})
    for module, (public, attr) in pairs:
        assert getattr(mumbo_jax, public) is getattr(importlib.import_module(module), attr)
