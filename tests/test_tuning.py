"""The crash-safe tuning runner: config validation, objectives, failures, time limits,
wall-clock accounting, resume (in-process and after a real SIGKILL), CLI."""

import io
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mumbo_jax.run import cli
from mumbo_jax.run import tune as tuning
from mumbo_jax.benchmarks import examples
from mumbo_jax.run import journal as jr
from mumbo_jax.run.config import ConfigError

ROOT = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TINY_SETTINGS = {"gstar": {"samples": 3, "grid": 300}, "fit": {"restarts": 1, "max_iter": 20},
                 "maximiser": {"n_candidates": 200, "n_starts": 2, "polish_steps": 5}}
N_DESIGN = 8  # 2 d points at each of 2 fidelities, d = 2


def config(**sections) -> dict:
    """A valid TOML-like config (train_demo, 2 fidelities), sections overridden."""
    cfg = {
        "objective": {"function": "mumbo_jax.benchmarks.examples:train_demo", "direction": "maximise"},
        "parameters": {"learning_rate": {"low": 1e-4, "high": 1.0, "log": True},
                       "weight_decay": {"low": 1e-6, "high": 0.1, "log": True}},
        "fidelity": {"kind": "discrete", "costs": [10.0, 1.0], "values": [1.0, 0.1]},
        "budget": {"evaluations": N_DESIGN},
        "run": {"seed": 0},
        "settings": dict(TINY_SETTINGS),
    }
    for name, value in sections.items():
        if value is None:
            cfg.pop(name, None)
        else:
            cfg[name] = {**cfg.get(name, {}), **value}
    return cfg


def run(cfg: dict, tmp_path, objective=None, name="run"):
    out = io.StringIO()
    res = tuning.tune(cfg, objective=objective, out=tmp_path / name, stream=out)
    return res, out.getvalue()


def journal(run_dir):
    return jr.read_journal(Path(run_dir) / jr.JOURNAL_NAME)


def evals_of(run_dir):
    return [r for r in journal(run_dir)[1] if r["type"] == "eval"]


def write_objective(tmp_path, body: str, name="obj.py") -> str:
    (tmp_path / name).write_text(body)
    return str(tmp_path / name)


# ---------------------------------------------------------------------------- config


def test_example_config_loads_and_roundtrips():
    cfg = tuning.load_tune_config(ROOT / "configs" / "tune_example.toml")
    assert cfg.names == ["learning_rate", "weight_decay"] and all(p.log for p in cfg.parameters)
    assert cfg.discrete and cfg.costs == (10.0, 1.0) and cfg.fidelity_value(1) == 0.1
    assert cfg.time_limit_s == 30.0 and cfg.isolate and cfg.objective == "mumbo_jax.benchmarks.examples:train_demo"
    again = tuning.parse_tune_config(cfg.to_dict(), source=cfg.source, base_dir=cfg.base_dir)
    assert again == cfg


def test_parameters_in_their_own_units():
    p = tuning.Parameter("lr", 1e-4, 1.0, log=True)
    assert p.internal_bounds == (-4.0, 0.0)
    assert p.from_internal(-2.0) == pytest.approx(0.01, rel=1e-12)
    assert p.from_internal(0.0) <= 1.0 and p.from_internal(-4.0) >= 1e-4  # clipped, never out of the box
    q = tuning.Parameter("m", -1.0, 2.0)
    assert q.internal_bounds == (-1.0, 2.0) and q.from_internal(0.5) == 0.5


BAD = [
    (dict(objective={"direction": "up"}), "[objective] direction"),
    (dict(objective={"function": "no_colon"}), "[objective] function"),
    (dict(objective={"retries": -1}), "[objective] retries"),
    (dict(objective={"retries": 1.5}), "[objective] retries must be an integer"),
    (dict(objective={"time_limit_s": 0}), "[objective] time_limit_s"),
    (dict(objective={"time_limit_s": 5, "isolate": False}), "isolate = false"),
    (dict(objective={"colour": 1}), "unknown key 'colour' in [objective]"),
    (dict(parameters={"lr": {"low": 1.0, "high": 0.1}}), "[parameters] lr"),
    (dict(parameters={"lr": {"low": 0.0, "high": 1.0, "log": True}}), "log-scale parameter needs low > 0"),
    (dict(parameters={"lr": [0, 1]}), "[parameters] lr must be a table"),
    (dict(parameters={"lr": {"low": 0, "high": 1, "step": 2}}), "unknown key 'step'"),
    (dict(fidelity={"costs": [10.0, 0.0]}), "[fidelity] costs"),
    (dict(fidelity={"values": [1.0]}), "[fidelity] values must have one entry per cost"),
    (dict(fidelity={"bounds": [0, 1]}), "[fidelity] bounds is for a continuous fidelity"),
    (dict(fidelity={"model": "fabolas"}), "[fidelity] model"),
    (dict(fidelity={"kind": "fuzzy"}), "[fidelity] kind"),
    (dict(budget={"evaluations": 0}), "[budget] evaluations"),
    (dict(budget={"cost": -1.0}), "[budget] cost"),
    (dict(budget={"cost": True}), "[budget] cost must be a number"),
    (dict(run={"strategy": "simulated_annealing"}), "[run] strategy"),
    (dict(run={"seed": -2}), "[run] seed"),
    (dict(settings={"gstar": {"samples": 0}}), "[settings.gstar] samples"),
    (dict(settings={"strategy": "mes"}), "strategy belongs in [run]"),
    (dict(settings={"batch": {"size": 4}}), "[settings.batch] size = 4 is for the compiled loop"),
    (dict(fidelity=None), "missing section [fidelity]"),
    (dict(extra={"a": 1}), "unknown section or key 'extra'"),
]


@pytest.mark.parametrize("change, words", BAD)
def test_invalid_configs_name_the_key(change, words):
    with pytest.raises(ConfigError) as info:
        tuning.parse_tune_config(config(**change), source="my.toml")
    assert str(info.value).startswith("my.toml: ") and words in str(info.value)


def test_budget_needs_one_key_and_continuous_fidelity_checks():
    cfg = config()
    cfg["budget"] = {}
    with pytest.raises(ConfigError, match=r"\[budget\] needs at least one"):
        tuning.parse_tune_config(cfg)
    cont = config()
    cont["fidelity"] = {"kind": "continuous", "bounds": [0.0, 1.0]}
    with pytest.raises(ConfigError, match=r"cost\(0\) = 0"):  # cost 0 + 1 z at z = 0
        tuning.parse_tune_config(cont)
    cont["fidelity"] = {"kind": "continuous", "bounds": [0.1, 1.0], "target": 2.0}
    with pytest.raises(ConfigError, match=r"\[fidelity\] target must lie in bounds"):
        tuning.parse_tune_config(cont)
    cont["fidelity"] = {"kind": "continuous", "bounds": [0.1, 1.0], "costs": [1.0]}
    with pytest.raises(ConfigError, match=r"\[fidelity\] costs is for discrete"):
        tuning.parse_tune_config(cont)


def test_toml_file_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        tuning.load_tune_config(tmp_path / "none.toml")
    (tmp_path / "bad.toml").write_text("[objective\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        tuning.load_tune_config(tmp_path / "bad.toml")


# ---------------------------------------------------------------------------- objectives


def test_resolve_objective_by_module_and_by_file(tmp_path):
    assert tuning.resolve_objective("mumbo_jax.benchmarks.examples:train_demo") is examples.train_demo
    write_objective(tmp_path, "def f(x, z):\n    return x['a'] * 2\n", "my_obj.py")
    f = tuning.resolve_objective("my_obj.py:f", base_dir=str(tmp_path))  # relative to the config's folder
    assert f({"a": 2.0}, 0) == 4.0
    for ref, words in [("no_such_module_xyz:f", "cannot import"), ("mumbo_jax.benchmarks.examples:nope", "no attribute"),
                       ("mumbo_jax.benchmarks.examples:DIVERGES_ABOVE", "not callable"), ("missing.py:f", "no file")]:
        with pytest.raises(ConfigError, match=words):
            tuning.resolve_objective(ref, base_dir=str(tmp_path))


@pytest.mark.parametrize("ret, expect", [
    (0.5, (0.5, None)), (np.float32(0.25), (0.25, None)), ((1.0, 2.0), (1.0, 2.0)),
    ({"score": -3, "cost": 0.5}, (-3.0, 0.5)), ({"score": 1.0}, (1.0, None)), (np.asarray(2.0), (2.0, None)),
])
def test_objective_returns(ret, expect):
    out = tuning.evaluate(lambda x, z: ret, {}, 0)
    assert out["status"] == "ok" and (out["score"], out["cost"]) == expect


@pytest.mark.parametrize("ret, words", [
    (float("nan"), "non-finite score"), (float("inf"), "non-finite score"), ("high", "must be a number"),
    ((1.0, 0.0), "cost 0.0"), ((1.0, float("nan")), "cost nan"), ({"cost": 1.0}, "without 'score'"),
    ({"score": 1.0, "loss": 2.0}, "unknown keys"), ((1, 2, 3), "length 3"), (None, "must be a number"),
    ("0.5", "score must be a number, got str '0.5'"), (True, "score must be a number, got bool"),
    ((1.0, "2"), "cost must be a number, got str '2'"), ({"score": b"1"}, "must be a number, got bytes"),
])
def test_bad_returns_are_failures_not_crashes(ret, words):
    out = tuning.evaluate(lambda x, z: ret, {}, 0)
    assert out["status"] == "failed" and words in out["error"]


def test_raising_objective_is_a_failure_with_traceback():
    out = tuning.evaluate(examples.train_demo, {"learning_rate": 0.9, "weight_decay": 1e-3}, 1.0)
    assert out["status"] == "failed" and out["error"].startswith("FloatingPointError: training diverged")
    assert "train_demo" in out["traceback"]


def test_worker_time_limit_kills_and_recovers(tmp_path):
    write_objective(tmp_path, "import os, time\ndef f(x, z):\n    print('noise on stdout')\n"
                              "    if z == 9:\n        os._exit(3)\n    time.sleep(x['s'])\n    return x['s']\n")
    w = tuning.Worker("obj.py:f", str(tmp_path), time_limit=0.5)
    try:
        assert w.evaluate({"s": 0.01}, 0) == {"status": "ok", "score": 0.01, "cost": None,
                                              "eval_s": pytest.approx(0.01, abs=0.5)}
        t0 = time.perf_counter()
        out = w.evaluate({"s": 30.0}, 0)
        assert time.perf_counter() - t0 < 5 and out["status"] == "failed" and out["timed_out"]
        assert "time limit of 0.5 s" in out["error"]
        assert w.evaluate({"s": 0.02}, 0)["score"] == 0.02  # a fresh worker after the kill
        died = w.evaluate({"s": 0.0}, 9)
        assert died["status"] == "failed" and "exit code 3" in died["error"]
        assert w.evaluate({"s": 0.03}, 0)["score"] == 0.03
    finally:
        w.close()


def test_closing_a_dead_worker_with_unsent_bytes_does_not_raise(tmp_path):
    """A worker that died with a message still buffered for it (a close() during a crash's
    shutdown, whose "stop" could not reach it): closing its pipes flushes into a broken
    pipe, which close() swallows (it raised BrokenPipeError out of the tuner's shutdown)."""
    w = tuning.Worker("obj.py:f", str(tmp_path), time_limit=1.0)
    w.proc = subprocess.Popen([sys.executable, "-c", "pass"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    w.proc.wait()
    w.proc.stdin.write(b"x" * 100)  # buffered, not flushed
    w.close()
    assert w.proc is None


# ---------------------------------------------------------------------------- runs without BO steps


FAILING = """\
import math, time
CALLS = {}
def f(x, z):
    key = (x["a"], z)
    CALLS[key] = CALLS.get(key, 0) + 1
    time.sleep(0.01)
    if x["a"] > 0.7:
        raise RuntimeError("boom at a = %g" % x["a"])
    if x["a"] < 0.2:
        return math.nan
    if CALLS[key] == 1 and x["a"] > 0.45:
        raise OSError("flaky: fails on the first call only")
    return x["a"] + x["b"] - 0.1 * z
"""


def failing_config(tmp_path, **run):
    write_objective(tmp_path, FAILING)
    return config(objective={"function": str(tmp_path / "obj.py") + ":f", **run},
                  parameters=None, budget={"evaluations": 12})


def test_failures_are_recorded_retried_replaced_and_never_told(tmp_path):
    cfg = failing_config(tmp_path, retries=1)
    cfg["parameters"] = {"a": {"low": 0.0, "high": 1.0}, "b": {"low": 0.0, "high": 1.0}}
    res, out = run(cfg, tmp_path)
    ev = evals_of(res["run_dir"])
    assert [r["n"] for r in ev] == list(range(12))
    failed = [r for r in ev if r["status"] == "failed"]
    kinds = {r["error"].split(":")[0] for r in failed}
    assert kinds == {"RuntimeError", "ValueError", "OSError"}, kinds  # raise, NaN, flaky
    for r in failed:
        assert r["score"] is None and r["y"] is None and r["error"]
    for prev, r in zip(ev, ev[1:]):
        if prev["status"] == "failed" and prev["attempt"] < 1:  # a retry of the same point
            assert (r["u"], r["z"], r["attempt"], r["point"]) == (prev["u"], prev["z"], 1, prev["point"])
        elif prev["status"] == "failed":  # abandoned: a random point at the same fidelity
            assert r["source"] == "fallback" and r["z"] == prev["z"] and r["replaces"] == prev["u"]
    flaky = [r for r in ev if r["status"] == "ok" and r["attempt"] == 1]
    assert flaky and all(0.45 < r["x"]["a"] <= 0.7 for r in flaky)  # a retry rescued the flaky point
    # the model holds exactly the successful evaluations
    opt = tuning.replay(tuning.make_tune_task(tuning.parse_tune_config(cfg)), tuning.parse_tune_config(cfg).settings(),
                         0, ev)
    ok = [r for r in ev if r["status"] == "ok"]
    assert len(opt.y) == len(ok) and np.allclose(opt.y, [r["score"] for r in ok])
    assert all(np.isfinite(opt.y))
    assert res["counts"]["failed"] == len(failed) and res["counts"]["ok"] == len(ok)
    assert res["counts"]["retries"] == sum(r["attempt"] > 0 for r in ev)
    assert "FAILED: RuntimeError: boom" in out and "retry 1/1 next" in out


def test_an_abandoned_design_point_is_replaced_at_every_fidelity(tmp_path):
    # the default box (as in bo_run: the model's fit is compiled once for both)
    write_objective(tmp_path, "def f(x, z):\n    if x['learning_rate'] > 0.05:\n        raise RuntimeError('boom')\n"
                              "    return x['weight_decay']\n")
    cfg = config(objective={"function": str(tmp_path / "obj.py") + ":f"}, budget={"evaluations": N_DESIGN})
    res, _ = run(cfg, tmp_path)
    ev = evals_of(res["run_dir"])
    abandoned = [tuple(r["u"]) for r in ev if r["status"] == "failed" and r["z"] == 0 and r["source"] == "design"]
    assert abandoned
    later = [r for r in ev if r["z"] == 1 and r["source"] == "design"]
    assert later and not any(tuple(r["u"]) in abandoned for r in later)
    assert any(r["replaces"] is not None and tuple(r["replaces"]) in abandoned for r in later)


def test_consecutive_failures_stop_the_run(tmp_path):
    write_objective(tmp_path, "def f(x, z):\n    raise ValueError('always')\n")
    cfg = config(objective={"function": str(tmp_path / "obj.py") + ":f", "max_consecutive_failures": 3})
    res, out = run(cfg, tmp_path)
    assert res["counts"] == {**res["counts"], "evaluations": 3, "ok": 0, "failed": 3}
    assert "consecutive" in res["stop_reason"] and res["incumbent"] is None and res["aborted"]
    assert (Path(res["run_dir"]) / tuning.PLOT_NAME).read_bytes()[:8] == PNG_MAGIC


ALWAYS_FAILS = """[objective]
function = "obj.py:f"
direction = "maximise"
max_consecutive_failures = 2
[parameters]
a = {low = 0.0, high = 1.0}
[fidelity]
kind = "discrete"
costs = [10.0, 1.0]
[budget]
evaluations = 4
"""


def test_cli_exits_1_when_the_objective_never_succeeds(tmp_path, capsys):
    """max_consecutive_failures with no success: the run is aborted, exit code 1, and
    stderr says why (the first error); a budget-limited run exits 0."""
    write_objective(tmp_path, "def f(x, z):\n    raise ValueError('bad data path')\n")
    (tmp_path / "fail.toml").write_text(ALWAYS_FAILS)
    assert cli.main(["tune", str(tmp_path / "fail.toml"), "--out", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "aborted" in err and "2 consecutive failed evaluations" in err
    assert "no evaluation succeeded" in err and "ValueError: bad data path" in err
    assert json.loads((tmp_path / "r" / tuning.RESULTS_NAME).read_text())["aborted"] is True
    assert cli.main(["resume", str(tmp_path / "r")]) == 1  # still aborted when its results are rewritten
    capsys.readouterr()
    write_objective(tmp_path, "def f(x, z):\n    return x['a']\n", "ok.py")  # a new file: modules are cached
    (tmp_path / "ok.toml").write_text(ALWAYS_FAILS.replace("obj.py", "ok.py").replace("= 4", "= 3"))  # no fit
    assert cli.main(["tune", str(tmp_path / "ok.toml"), "--out", str(tmp_path / "ok")]) == 0


def test_cost_budget_below_the_design_cost_warns(tmp_path):
    """2 d = 4 points at each of 2 fidelities cost 4 x 10 + 4 x 1 = 44 > 30."""
    cfg = config(budget={"evaluations": None})
    cfg["budget"] = {"cost": 30.0}
    res, out = run(cfg, tmp_path, objective=lambda x, z: x["weight_decay"])
    msg = "warning: the cost budget 30 is smaller than the initial design's cost 44 (8 evaluations"
    assert msg in out and len(res["warnings"]) == 1 and res["warnings"][0].startswith(msg)
    assert "cost budget reached" in res["stop_reason"]
    assert all(r["source"] == "design" for r in res["evaluations"])  # it never left the design
    cfg["budget"] = {"cost": 44.0}
    res, out = run(cfg, tmp_path, objective=lambda x, z: x["weight_decay"], name="enough")
    assert "warning" not in out and res["warnings"] == []


def test_progress_names_the_fidelity_index_and_value(tmp_path):
    cfg = config(budget={"evaluations": 5})  # values [1.0, 0.1]: the design's 5th point is at index 1
    _, out = run(cfg, tmp_path, objective=lambda x, z: x["weight_decay"])
    lines = [ln for ln in out.splitlines() if ln.startswith("[")]
    assert [ln.split()[3] for ln in lines] == ["0", "0", "0", "0", "1"]
    assert all("fidelity 0 (=1)" in ln for ln in lines[:4]) and "fidelity 1 (=0.1)" in lines[4]


def test_reported_cost_drives_the_cost_budget(tmp_path):
    def objective(x, fidelity):
        return {"score": -abs(math.log10(x["learning_rate"]) + 2), "cost": 2.5}

    cfg = config(budget={"cost": 10.0, "evaluations": None})
    cfg["budget"] = {"cost": 10.0}
    res, _ = run(cfg, tmp_path, objective=objective)
    ev = evals_of(res["run_dir"])
    assert len(ev) == 4 and all(r["cost_reported"] and r["cost"] == 2.5 for r in ev)
    assert res["cost"]["spent"] == 10.0 and "cost budget" in res["stop_reason"]


def test_wall_clock_split_adds_up(tmp_path):
    write_objective(tmp_path, "import time\ndef f(x, z):\n    time.sleep(0.03)\n    return x['weight_decay']\n")
    cfg = config(objective={"function": str(tmp_path / "obj.py") + ":f"}, budget={"evaluations": N_DESIGN})
    res, _ = run(cfg, tmp_path)
    ev = evals_of(res["run_dir"])
    assert all(r["eval_s"] >= 0.03 for r in ev)
    parts = np.cumsum([r["eval_s"] + r["ask_s"] + r["other_s"] for r in ev])
    assert np.allclose(parts, [r["elapsed_s"] for r in ev], atol=1e-6)
    w = res["wall_clock"]
    assert w["evaluation_s"] == pytest.approx(sum(r["eval_s"] for r in ev))
    assert w["total_s"] == pytest.approx(w["evaluation_s"] + w["optimiser_s"] + w["other_s"])
    assert w["total_s"] >= ev[-1]["elapsed_s"]
    assert res["curves"]["evaluation_s"][-1] == pytest.approx(w["evaluation_s"])


def test_continuous_fidelity_and_minimisation(tmp_path):
    seen = []

    def objective(x, fidelity):
        seen.append(fidelity)
        return (x["c"] - 0.3) ** 2 + 0.1 * (1 - fidelity)  # a loss: minimised

    # 5 of the 6 design points: the run stops before the model is fitted (no compilation)
    cfg = config(objective={"direction": "minimise"}, parameters=None, fidelity=None, budget={"evaluations": 5})
    cfg["parameters"] = {"c": {"low": 0.0, "high": 1.0}}
    cfg["fidelity"] = {"kind": "continuous", "bounds": [0.25, 1.0], "cost": {"offset": 0.5, "scale": 2.0, "power": 2.0}}
    res, _ = run(cfg, tmp_path, objective=objective)
    ev = evals_of(res["run_dir"])
    assert all(isinstance(f, float) for f in seen)
    assert seen == [0.25, 0.25, 0.625, 0.625, 1.0]  # design: lower, middle, upper (2 d = 2 points each)
    for r in ev:
        assert r["cost"] == pytest.approx(0.5 + 2.0 * r["z"] ** 2) and r["y"] == -r["score"]
    target = [r for r in ev if r["z"] == 1.0]
    assert res["best_observed"]["score"] == min(r["score"] for r in target)
    assert res["fidelity"] == {"kind": "continuous", "target": 1.0, "values": None}


def test_time_limit_in_a_run(tmp_path):
    write_objective(tmp_path, "import time\ndef f(x, z):\n    time.sleep(20 if x['learning_rate'] > 0.01 else 0)\n"
                              "    return x['weight_decay']\n")
    cfg = config(objective={"function": str(tmp_path / "obj.py") + ":f", "time_limit_s": 0.4},
                 budget={"evaluations": 6})
    t0 = time.perf_counter()
    res, _ = run(cfg, tmp_path)
    ev = evals_of(res["run_dir"])
    slow = [r for r in ev if r["x"]["learning_rate"] > 0.01]
    assert slow and all(r["timed_out"] and r["status"] == "failed" and "time limit" in r["error"] for r in slow)
    assert all(r["status"] == "ok" for r in ev if r["x"]["learning_rate"] <= 0.01)
    assert time.perf_counter() - t0 < 20 and res["counts"]["timed_out"] == len(slow)


def test_isolation_needs_an_importable_objective(tmp_path):
    cfg = config(objective={"isolate": True})
    with pytest.raises(ConfigError, match="not importable"):
        run(cfg, tmp_path, objective=lambda x, z: 1.0)
    assert not (tmp_path / "run" / jr.JOURNAL_NAME).exists()


# ---------------------------------------------------------------------------- a run with BO steps


@pytest.fixture(scope="module")
def bo_run(tmp_path_factory):
    """One uninterrupted run through 3 BO steps (shared: it compiles the BO step once)."""
    tmp = tmp_path_factory.mktemp("tune")
    cfg = config(budget={"evaluations": N_DESIGN + 3})
    res, out = run(cfg, tmp)
    return cfg, res, out, Path(res["run_dir"])


def test_bo_run_results_and_plot(bo_run):
    cfg, res, out, run_dir = bo_run
    ev = evals_of(run_dir)
    # the design comes first: exactly N_DESIGN successful evaluations before the first BO
    # step (failed design points are replaced by fallbacks at the same fidelity), and the
    # design points are AskTell's own design, in order
    first_bo = next(i for i, r in enumerate(ev) if r["source"] == "bo")
    assert {r["source"] for r in ev[:first_bo]} <= {"design", "fallback"}
    assert sum(r["status"] == "ok" for r in ev[:first_bo]) == N_DESIGN
    parsed = tuning.parse_tune_config(cfg)
    design = tuning.replay(tuning.make_tune_task(parsed), parsed.settings(), 0, []).design
    expected = [(list(map(float, x)), z) for x, z in design]
    got = [(r["replaces"] or r["u"], r["z"]) for r in ev[:first_bo] if r["source"] == "design"]
    assert got == expected  # one "design" record per design slot, in order
    for r in ev[:first_bo]:
        if r["source"] == "fallback":
            assert r["z"] == ev[r["n"] - 1]["z"] and ev[r["n"] - 1]["status"] == "failed"
    bo = [r for r in ev if r["source"] == "bo" and r["attempt"] == 0]
    assert bo and all(set(r["timings"]) == {"fit", "gstar", "maximise"} for r in bo)
    assert all(r["ask_s"] >= sum(r["timings"].values()) for r in bo)
    assert res["wall_clock"]["optimiser_s"] >= sum(sum(r["timings"].values()) for r in bo)
    on_disk = json.loads((run_dir / tuning.RESULTS_NAME).read_text())
    assert on_disk["counts"] == res["counts"] and on_disk["finished"]
    assert (run_dir / tuning.PLOT_NAME).read_bytes()[:8] == PNG_MAGIC
    inc = res["incumbent"]
    assert 1e-4 <= inc["x"]["learning_rate"] <= 1.0 and 1e-6 <= inc["x"]["weight_decay"] <= 0.1
    assert math.isfinite(inc["predicted_score"])
    best = max(r["score"] for r in ev if r["status"] == "ok" and r["z"] == 0)
    assert res["best_observed"]["score"] == best
    assert "done:" in out and "incumbent" in out and "[1/11] design" in out


def test_resume_replays_the_journal_and_proposes_the_same_points(bo_run, tmp_path):
    """Cut the journal after the first BO evaluation (plus a torn line, as a crash
    mid-write leaves), resume: the run continues exactly as the uninterrupted one."""
    cfg, res, _, run_dir = bo_run
    full = evals_of(run_dir)
    header, records, _ = journal(run_dir)
    k = next(i for i, r in enumerate(full) if r["source"] == "bo") + 1
    cut = [r for r in records if r["type"] != "eval" or r["n"] < k]
    cut = [r for r in cut if r["type"] != "end"]
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    lines = [json.dumps(header)] + [json.dumps(r) for r in cut]
    (crashed / jr.JOURNAL_NAME).write_text("\n".join(lines) + '\n{"type": "eval", "n": %d, "sta' % k)
    with pytest.warns(jr.TornJournalWarning):
        res2 = tuning.resume(crashed, stream=io.StringIO())
    resumed = evals_of(crashed)
    assert len(resumed) == len(full)
    key = lambda r: (r["u"], r["z"], r["status"], r["score"], r["source"])
    assert [key(r) for r in resumed] == [key(r) for r in full]
    assert [r["session"] for r in resumed] == [1] * k + [2] * (len(full) - k)
    assert res2["counts"]["sessions"] == 2 and res2["counts"]["evaluations"] == len(full)
    assert res2["incumbent"]["x"] == pytest.approx(res["incumbent"]["x"])


def test_resume_of_a_finished_run_rewrites_results_only(bo_run, tmp_path):
    _, res, _, run_dir = bo_run
    copy_dir = tmp_path / "copy"
    shutil.copytree(run_dir, copy_dir)
    (copy_dir / tuning.RESULTS_NAME).unlink()
    out = io.StringIO()
    res2 = tuning.resume(copy_dir, stream=out)
    assert "already finished" in out.getvalue()
    assert evals_of(copy_dir) == evals_of(run_dir)
    assert res2["counts"] == res["counts"] and (copy_dir / tuning.RESULTS_NAME).is_file()


def test_tune_refuses_a_folder_that_holds_a_run(bo_run):
    cfg, _, _, run_dir = bo_run
    with pytest.raises(jr.JournalError, match="resume"):
        tuning.tune(cfg, out=run_dir, stream=io.StringIO())


def test_cli_exit_codes(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[objective]\ndirection = "sideways"\n')
    assert cli.main(["tune", str(bad)]) == 2
    assert "missing section [parameters]" in capsys.readouterr().err
    assert cli.main(["resume", str(tmp_path / "nothing")]) == 2
    good = tmp_path / "good.toml"
    good.write_text('[objective]\nfunction = "mumbo_jax.benchmarks.examples:train_demo"\ndirection = "maximise"\n'
                    '[parameters]\nlearning_rate = {low = 1e-4, high = 1.0, log = true}\n'
                    'weight_decay = {low = 1e-6, high = 0.1, log = true}\n'
                    '[fidelity]\nkind = "discrete"\ncosts = [10.0, 1.0]\nvalues = [1.0, 0.1]\n'
                    '[budget]\nevaluations = 3\n')
    assert cli.main(["tune", str(good), "--out", str(tmp_path / "r")]) == 0
    assert len(evals_of(tmp_path / "r")) == 3
    assert cli.main(["resume", str(tmp_path / "r")]) == 0


# ---------------------------------------------------------------------------- a real SIGKILL


KILL_CONFIG = """\
[objective]
function = "mumbo_jax.benchmarks.examples:slow_train_demo"
direction = "maximise"

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
seed = 3

[settings.fit]
restarts = 1
max_iter = 10

[settings.maximiser]
n_candidates = 50
n_starts = 1
polish_steps = 2
"""


@pytest.mark.parametrize("n_total", [N_DESIGN - 1, pytest.param(N_DESIGN + 2, marks=pytest.mark.slow)])
def test_sigkill_mid_run_then_resume_loses_nothing(tmp_path, n_total):
    """Start ``mumbo-jax tune`` in a subprocess, SIGKILL it once some evaluations are
    journaled, ``mumbo-jax resume``: every finished evaluation is there exactly once,
    unchanged, and the run finishes. The default case stays inside the initial design
    (no XLA compilation in the subprocesses: a few seconds); the slow one resumes into
    BO steps (test_resume_replays_the_journal_and_proposes_the_same_points checks
    those replays in-process)."""
    (tmp_path / "kill.toml").write_text(KILL_CONFIG.format(n=n_total))
    run_dir = tmp_path / "run"
    env = {**os.environ, "MUMBO_DEMO_SLEEP": "0.25", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "mumbo_jax"]
    proc = subprocess.Popen(cmd + ["tune", str(tmp_path / "kill.toml"), "--out", str(run_dir)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    path = run_dir / jr.JOURNAL_NAME
    deadline = time.time() + 60
    before = []
    while time.time() < deadline and proc.poll() is None:
        if path.exists():
            try:
                before = [r for r in jr.read_journal(path, warn=lambda m: None)[1] if r["type"] == "eval"]
            except jr.JournalError:
                before = []
            if len(before) >= 3:
                break
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read().decode()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    proc.stderr.close()
    before = [r for r in jr.read_journal(path, warn=lambda m: None)[1] if r["type"] == "eval"]
    assert 3 <= len(before) < n_total  # killed mid-run

    done = subprocess.run(cmd + ["resume", str(run_dir)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "resuming (session 2)" in done.stdout and "done:" in done.stdout
    after = evals_of(run_dir)
    assert [r["n"] for r in after] == list(range(n_total))  # each evaluation exactly once, in order
    assert after[:len(before)] == before  # the journaled ones untouched
    points = [(tuple(r["u"]), r["z"], r["attempt"]) for r in after]
    assert len(set(points)) == len(points)  # nothing evaluated twice
    assert {r["session"] for r in after[len(before):]} == {2}
    assert any(r["source"] == "bo" for r in after) == (n_total > N_DESIGN)
    res = json.loads((run_dir / tuning.RESULTS_NAME).read_text())
    assert res["finished"] and res["counts"]["evaluations"] == n_total and res["counts"]["sessions"] == 2


@pytest.mark.slow  # ~20 s of the default run; the learned cost steering a proposal stays in CI (test_costmodel)
def test_learned_cost_from_measured_seconds_drives_the_decisions(tmp_path, monkeypatch):
    from mumbo_jax.bo import stages
    from mumbo_jax.gp import costmodel

    fits, costs_used = [], []
    real_fit, real_max = costmodel.fit_cost, stages.maximise_stage
    monkeypatch.setattr(costmodel, "fit_cost", lambda *a, **k: fits.append(len(a[1])) or real_fit(*a, **k))
    # the decision's cost argument: the learned c(x, z), not None (the configured cost)
    monkeypatch.setattr(stages, "maximise_stage", lambda *a: costs_used.append(a[5]) or real_max(*a))

    def objective(x, fidelity):  # no reported cost: the measured seconds are the cost
        time.sleep(0.002 + 0.02 * fidelity)
        return -((x["c"] - 0.3) ** 2) - 0.1 * (1 - fidelity)

    cfg = config(parameters=None, fidelity=None, budget={"evaluations": 7})  # 6 design points + 1 BO step
    cfg["parameters"] = {"c": {"low": 0.0, "high": 1.0}}
    cfg["fidelity"] = {"kind": "continuous", "bounds": [0.25, 1.0], "learn_cost": True}
    res, _ = run(cfg, tmp_path, objective=objective)
    ev = evals_of(res["run_dir"])
    assert len(ev) == 7 and fits == [6]  # the cost GP was fitted on the design before the BO step
    for r in ev:
        assert r["cost"] == pytest.approx(r["eval_s"]) and r["cost"] > 0.002
    assert journal(res["run_dir"])[0]["config"]["fidelity"]["learn_cost"] is True
    (cost,) = costs_used
    assert cost is not None
    # the learned cost follows the measured seconds: the target (z = 1, ~22 ms) costs
    # several times the lowest fidelity (z = 0.25, ~7 ms); the configured cost would say 1 vs 0.25
    design = [r for r in ev if r["source"] == "design"]
    pred = np.asarray(cost(np.asarray([r["u"] for r in design]), np.asarray([r["z"] for r in design])))
    seconds = np.asarray([r["eval_s"] for r in design])
    assert np.all(np.abs(np.log(pred / seconds)) < np.log(2.0)), (pred, seconds)
    # a resumed run replays with the cost model and the measured costs
    parsed = tuning.parse_tune_config(cfg)
    opt = tuning.replay(tuning.make_tune_task(parsed), parsed.settings(), 0, ev, learn_cost=True)
    assert opt.cost_model is not None and opt.costs == [r["cost"] for r in ev]


# ---------------------------------------------------------------------------- workers die with their driver


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie left for a reaper counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def wait_until(cond, timeout: float) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


WORKER_CONFIG = """\
[objective]
function = "hang.py:f"
direction = "maximise"
time_limit_s = 300.0
[parameters]
a = {low = 0.0, high = 1.0}
[fidelity]
kind = "discrete"
costs = [10.0, 1.0]
[budget]
evaluations = 2
"""


def test_worker_dies_with_a_killed_driver(tmp_path):
    """SIGKILL `mumbo-jax tune` while its worker is inside a long evaluation: the
    worker must be gone within seconds (it would otherwise run on for minutes and
    overlap with a resumed run)."""
    pid_file = tmp_path / "worker.pid"
    write_objective(tmp_path, f"import os, time\ndef f(x, z):\n    open({str(pid_file)!r}, 'w').write(str(os.getpid()))"
                              "\n    time.sleep(300)\n    return 0.0\n", "hang.py")
    (tmp_path / "w.toml").write_text(WORKER_CONFIG)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "mumbo_jax", "tune", str(tmp_path / "w.toml"), "--out",
                             str(tmp_path / "run")], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    worker = None
    try:
        assert wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), 120), proc.stderr.read()
        worker = int(pid_file.read_text())
        assert worker != proc.pid and alive(worker)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert wait_until(lambda: not alive(worker), 5.0), "the worker outlived its killed driver"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
        if worker is not None and alive(worker):
            os.kill(worker, signal.SIGKILL)


WATCHED_CHILD = """\
import importlib.util, os, sys, time
spec = importlib.util.spec_from_file_location("objective", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
print(mod.watch_parent(os.getppid(), use_prctl=False, poll_s=0.05), flush=True)
time.sleep(300)
"""
PARENT = """\
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]])
print(child.pid, flush=True)
time.sleep(300)
"""


def test_parent_watchdog_without_prctl(tmp_path):
    """The portable path alone (no PR_SET_PDEATHSIG): the watchdog thread sees the
    parent die and ends the process."""
    from mumbo_jax.run.tune import objective

    proc = subprocess.Popen([sys.executable, "-c", PARENT, WATCHED_CHILD, objective.__file__],
                            stdout=subprocess.PIPE, text=True)
    child = None
    try:
        child = int(proc.stdout.readline())
        assert proc.stdout.readline().strip() == "poll"  # the child's watch is set up
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert wait_until(lambda: not alive(child), 5.0), "the watched child outlived its parent"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)



def test_resume_between_thinned_refits_proposes_the_same_points(tmp_path):
    """With the refit schedule thinned from the first BO step (appends between refits),
    the journal keeps the schedule and a resumed run goes on exactly as the uninterrupted
    one."""
    fit = {"restarts": 1, "max_iter": 20, "incremental_from": N_DESIGN + 1, "refit_growth": 0.5}
    cfg = config(budget={"evaluations": N_DESIGN + 5}, settings={"fit": fit}, objective={"failures": "ignore"})
    res, _ = run(cfg, tmp_path, name="full")
    run_dir = Path(res["run_dir"])
    full = evals_of(run_dir)
    bo = [r for r in full if r["source"] == "bo"]
    assert any(r["refits"][0] is not None and r["refits"][0] < r["n"] - 1 for r in bo)  # some steps appended
    header, records, _ = journal(run_dir)
    k = [i for i, r in enumerate(full) if r["source"] == "bo"][2] + 1  # cut after the third BO evaluation
    cut = [r for r in records if (r["type"] != "eval" or r["n"] < k) and r["type"] != "end"]
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    (crashed / jr.JOURNAL_NAME).write_text("\n".join([json.dumps(header)] + [json.dumps(r) for r in cut]) + "\n")
    tuning.resume(crashed, stream=io.StringIO())
    key = lambda r: (r["u"], r["z"], r["status"], r["score"], r["source"], r["refits"])
    assert [key(r) for r in evals_of(crashed)] == [key(r) for r in full]
