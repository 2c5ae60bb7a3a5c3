"""Compiling the next buffer size in the background (mumbo_jax.runtime.prefetch): the same
decisions, the programs found compiled when the run reaches the size, and the switches."""

import os
import pathlib
import subprocess
import sys
import textwrap
import threading

import jax
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import compiled, stages
from mumbo_jax.runtime import prefetch
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.compiled import run_compiled
from mumbo_jax.runtime.prefetch import ENV, Prefetcher, mode, prefetch_enabled
from tests.bo_helpers import FAST


def test_the_switch_reads_the_argument_then_the_environment(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert mode() == "auto"
    monkeypatch.setattr(prefetch, "_drivers_default", [False])
    assert not prefetch_enabled(None, default=True)  # a library user's process: no thread unless asked
    prefetch.enable()  # the CLI's opt-in: each driver's default
    assert prefetch_enabled(None, default=True) and not prefetch_enabled(None, default=False)
    monkeypatch.setenv(ENV, "on")
    assert prefetch_enabled(None, default=False)
    assert not prefetch_enabled(False, default=False)  # the argument wins
    monkeypatch.setenv(ENV, " OFF ")
    assert not prefetch_enabled(None, default=True) and prefetch_enabled(True, default=True)
    monkeypatch.setenv(ENV, "sometimes")
    with pytest.raises(ValueError, match="MUMBO_JAX_PREFETCH='sometimes'.*auto, on, off"):
        prefetch_enabled(None, default=True)
    with pytest.raises(ValueError, match="prefetch must be True, False or None"):
        prefetch_enabled("yes", default=True)


def test_a_prefetcher_warms_each_size_once_and_keeps_a_failure_to_itself():
    calls = []
    off = Prefetcher(False)
    assert not off.start(64, lambda: calls.append(64))
    p = Prefetcher(True)
    gate = threading.Event()
    assert p.start(64, lambda: (gate.wait(5), calls.append(64)))
    assert p.busy and not p.start(96, lambda: calls.append(96))  # one warm-up at a time
    gate.set()
    p.wait(64)
    assert not p.busy and calls == [64]
    assert not p.start(64, lambda: calls.append("again"))  # a size is warmed once

    def broken():
        raise RuntimeError("no such program")

    assert p.start(96, broken)
    p.wait()
    assert [(size, str(err)) for size, err in p.errors] == [(96, "no such program")]


@pytest.mark.parametrize("free, q, evals_left, budget_left, cheapest, expected", [
    (10, 1, 10, 1e9, 1.0, True),  # the 10th evaluation from now needs the next size
    (10, 1, 9, 1e9, 1.0, False),  # max_evals ends the run first
    (10, 1, 50, 9.5, 1.0, True),  # 9 more evaluations of cost 1 leave budget for the 10th
    (10, 1, 50, 9.0, 1.0, False),  # the budget is spent after 9
    (10, 4, 7, 1e9, 1.0, True),  # steps of 4: a step finds too few rows after 7 evaluations
    (0, 1, 0, 0.0, 1.0, True),  # no free row: the next size is needed now
    (10, 1, 50, 1.0, 0.0, True),  # a cost that is not known limits nothing
])
def test_a_size_is_prefetched_only_if_the_run_can_reach_it(free, q, evals_left, budget_left, cheapest, expected):
    assert compiled._reaches(free, q, evals_left, budget_left, cheapest) is expected


@pytest.fixture()
def traces():
    """Tracing events on the main thread while the test runs: a program the run had to
    build itself."""
    seen = []

    def listen(event, duration, **_):
        if event == "/jax/core/compile/jaxpr_trace_duration" and threading.current_thread() is threading.main_thread():
            seen.append(event)

    jax.monitoring.register_event_duration_secs_listener(listen)
    yield seen
    jax.monitoring.unregister_event_duration_listener(listen)


def _told(opt, prob, n, seed=0):
    rng = np.random.default_rng(seed)
    for x in rng.uniform(size=(n, prob.dim)):
        z = int(rng.integers(prob.n_fidelities))
        opt.tell(x, z, float(problems.objective(prob, jax.numpy.asarray(x), z)))


def test_asktell_finds_the_next_size_compiled_and_decides_the_same(traces):
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    jax.clear_caches()  # no program of this test's sizes in memory from an earlier test
    opts = {on: AskTell(task, FAST, seed=4, prefetch=on) for on in (True, False)}  # with it first
    proposals = {}
    for on, opt in opts.items():
        _told(opt, prob, 30)
        assert stages.buffer_size(len(opt.x)) == 32
        first = opt.ask()  # at 32 rows; the prefetcher starts on 64
        opt.tell(*first, float(problems.objective(prob, jax.numpy.asarray(first[0]), first[1])))
        _told(opt, prob, 1, seed=1)
        assert stages.buffer_size(len(opt.x)) == 64
        if on:
            opt._prefetcher.wait()
            assert opt._prefetcher.errors == [] and 64 in opt._prefetcher._started
            traces.clear()
        second = opt.ask()
        if on:
            assert traces == [], "the ask at 64 rows traced a program the prefetcher should have compiled"
        proposals[on] = (first, second, opt.recommendation())
    (a1, a2, ar), (b1, b2, br) = proposals[False], proposals[True]
    for a, b in ((a1, b1), (a2, b2)):
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1] == b[1]
    np.testing.assert_array_equal(ar[0], br[0])
    assert ar[1:] == br[1:]


def test_the_first_bo_step_is_compiled_while_the_design_is_evaluated(traces):
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    jax.clear_caches()  # no program of this test in memory from an earlier test
    firsts = {}
    for on in (True, False):
        opt = AskTell(task, FAST, seed=6, prefetch=on)
        while opt.asks_design:
            x, z = opt.ask()
            opt.tell(x, z, float(problems.objective(prob, jax.numpy.asarray(x), z)))
        if on:
            opt._prefetcher.wait()
            assert opt._prefetcher.errors == [] and stages.buffer_size(opt.n_design) in opt._prefetcher._started
            traces.clear()
        firsts[on] = opt.ask()
        if on:
            assert traces == [], "the first BO step traced a program the prefetcher should have compiled"
    np.testing.assert_array_equal(firsts[True][0], firsts[False][0])
    assert firsts[True][1] == firsts[False][1]


def test_run_compiled_decides_the_same_with_the_next_size_compiled_in_the_background():
    prob = problems.get_problem("forrester")
    task, bench = tasks.problem_task(prob), tasks.problem_benchmark(prob)
    n0 = len(stages.initial_design(task, jax.random.PRNGKey(0))[1])
    runs = [run_compiled(bench, task, 1e9, [2], FAST, max_evals=34 - n0, prefetch=on) for on in (False, True)]
    for a, b in zip(*runs):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_process_that_ends_while_compiling_in_the_background_exits_cleanly(tmp_path):
    """The warm-up of the first BO step is still compiling when the script ends: the
    interpreter waits for it (prefetch's exit hook) and exits with status 0."""

    script = textwrap.dedent("""
        import jax
        jax.config.update("jax_enable_x64", True)
        from mumbo_jax.benchmarks import problems, tasks
        from mumbo_jax.bo.asktell import AskTell
        from tests.bo_helpers import FAST
        opt = AskTell(tasks.problem_task(problems.get_problem("forrester")), FAST, seed=1, prefetch=True)
        opt.ask()  # the first design point: the first BO step starts compiling
        assert opt._prefetcher.busy
        print("asked", flush=True)
    """)
    root = pathlib.Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root), MUMBO_JAX_CACHE="off")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "asked"
