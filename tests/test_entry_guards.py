"""Entry points in a fresh process: 64-bit mode is checked when an AskTell or a
compiled run is constructed (before any black-box evaluation), the drivers run in
64-bit without changing the global flag, and the CLI sets single-threaded XLA flags
before JAX starts unless the user set XLA_FLAGS."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_ENABLE_X64")}
ENV.update(PYTHONPATH=str(ROOT), MUMBO_JAX_CACHE="off")

X64_SCRIPT = r"""
import io, json, sys
import jax
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.gp.precision import PrecisionError
from mumbo_jax.run import tune
from mumbo_jax.run.tune.config import make_tune_task, parse_tune_config

calls = []
def black_box(x, z):
    calls.append(1)
    return x["a"]

cfg = {"objective": {"direction": "maximise"}, "parameters": {"a": {"low": 0.0, "high": 1.0}},
       "fidelity": {"kind": "discrete", "costs": [1.0]}, "budget": {"evaluations": 2}}
out = {}
try:
    AskTell(make_tune_task(parse_tune_config(cfg)))
    out["asktell"] = "constructed"
except PrecisionError as e:
    out["asktell"] = str(e)
try:
    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo import compiled
    p = problems.get_problem("forrester")
    compiled.run_compiled(tasks.problem_benchmark(p), tasks.problem_task(p), 1.0, [0])
    out["compiled"] = "ran"
except PrecisionError as e:
    out["compiled"] = str(e)
res = tune.tune(cfg, objective=black_box, out=sys.argv[1], stream=io.StringIO())
out["tune_ok"] = res["counts"]["ok"]
out["flag_after"] = bool(jax.config.jax_enable_x64)
out["calls"] = len(calls)
print(json.dumps(out))
"""


def test_x64_checked_at_construction_and_never_changed(tmp_path):
    proc = subprocess.run([sys.executable, "-c", X64_SCRIPT, str(tmp_path / "r")], env=ENV, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "64-bit" in out["asktell"] and "constructing an AskTell" in out["asktell"]
    assert "64-bit" in out["compiled"] and "run_compiled" in out["compiled"]
    assert out["tune_ok"] == 2 and out["calls"] == 2  # tune runs in 64-bit ...
    assert out["flag_after"] is False  # ... and leaves the global flag as it was


FLAGS_OBJECTIVE = """
import os
def f(x, z):
    with open(os.environ["FLAGS_SEEN"], "a") as fh:
        fh.write(repr(os.environ.get("XLA_FLAGS")) + "\\n")
    return x["a"]
"""

FLAGS_CONFIG = """\
[objective]
function = "flags_obj.py:f"
direction = "maximise"

[parameters]
a = {low = 0.0, high = 1.0}

[fidelity]
kind = "discrete"
costs = [1.0]

[budget]
evaluations = 1
"""


def test_cli_sets_single_thread_xla_flags_unless_the_user_did(tmp_path):
    from mumbo_jax.run import cli

    (tmp_path / "flags_obj.py").write_text(FLAGS_OBJECTIVE)
    (tmp_path / "t.toml").write_text(FLAGS_CONFIG)
    seen = tmp_path / "seen.txt"
    for i, user in enumerate((None, "--xla_cpu_enable_fast_math=false", "")):
        env = {**ENV, "FLAGS_SEEN": str(seen)}
        if user is not None:
            env["XLA_FLAGS"] = user
        proc = subprocess.run([sys.executable, "-m", "mumbo_jax", "tune", str(tmp_path / "t.toml"), "--out",
                               str(tmp_path / f"r{i}")], env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    lines = seen.read_text().splitlines()
    assert lines == [repr(cli.DETERMINISTIC_XLA_FLAGS), repr("--xla_cpu_enable_fast_math=false"), repr("")]
    env = {}
    assert cli.deterministic_xla_flags(env) and env["XLA_FLAGS"] == cli.DETERMINISTIC_XLA_FLAGS
    env = {"XLA_FLAGS": "--mine"}
    assert not cli.deterministic_xla_flags(env) and env == {"XLA_FLAGS": "--mine"}
