"""The reproduce check of the studies (experiments/studies/reproduce.py): a record written
at this code reproduces; the same record with one regret or one fidelity changed does not,
and the check names where. Subprocesses: the study scripts set their own XLA flags and
compilation cache, which must not leak into the test process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ROOT / "experiments" / "studies"


def _run(args, tmp_path):
    env = {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, *map(str, args)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)


@pytest.mark.slow  # three processes that compile a short Forrester run: about a minute
def test_a_fresh_record_reproduces_and_a_changed_one_does_not(tmp_path):
    out = tmp_path / "records"
    made = _run([STUDIES / "robust.py", "--one", "forrester", "ei", "--seeds", "1", "--max-evals", "4",
                 "--budget", "20", "--fast", "--out", out], tmp_path)
    assert made.returncode == 0, made.stderr[-2000:]
    record = out / "forrester__ei.json"
    rec = json.loads(record.read_text())
    assert rec["seeds"][0]["code"]  # the code that produced it is recorded
    same = _run([STUDIES / "reproduce.py", record], tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr[-2000:]
    assert "reproduces" in same.stdout

    rec["seeds"][0]["regret"][2] *= 1.5
    rec["seeds"][0]["z"][1] = 1.0 - rec["seeds"][0]["z"][1] if rec["seeds"][0]["z"][1] in (0.0, 1.0) else 0.0
    changed = tmp_path / "forrester__ei_changed.json"
    changed.write_text(json.dumps(rec))
    differs = _run([STUDIES / "reproduce.py", changed], tmp_path)
    assert differs.returncode == 1
    assert "DIFFERS: evaluation 2 at fidelity" in differs.stdout


def test_the_levers_a_record_names_rebuild_its_settings(tmp_path):
    """reproduce.settings_of inverts robust._levers (one table for both): the settings
    rebuilt from a record's levers record the same levers, the refit schedule included
    where it is not the default (a subprocess: robust.py sets process-wide XLA flags)."""
    code = """
import sys; sys.path.insert(0, sys.argv[1])
import robust, reproduce
from mumbo_jax.bo.settings import BOSettings
cases = [{}, {"fit": {"incremental_from": 1}}, {"fit": {"refit_growth": 0.1, "warm_from": 0}},
         {"maximiser": {"n_candidates": 500, "polish_steps": 15, "gradient": "differences"}, "fit": {"max_iter": 30}}]
for case in cases:
    levers = robust._levers(BOSettings(**case))
    maximiser, fit = reproduce.settings_of({"levers": levers})
    again = robust._levers(BOSettings(maximiser=maximiser, fit=fit))
    assert again == levers, (case, levers, again)
assert "fit_incremental_from" not in robust._levers(BOSettings())  # old records still extend
assert robust._levers(BOSettings(fit={"incremental_from": 1}))["fit_incremental_from"] == 1
print("ok")
"""
    done = _run(["-c", code, STUDIES], tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_records_from_another_machine_merge_and_name_their_stack(tmp_path):
    """merge_records appends only the seeds a study's file lacks and refuses a record of
    other settings, naming the setting; run_chunks reads a plan longest first and names a
    malformed line; reproduce tells a seed of another stack from one of this stack."""
    code = """
import sys; sys.path.insert(0, sys.argv[1])
import merge_records, reproduce, run_chunks
base = dict(problem="p", strategy="s", incumbent_rule="robust", budget=10.0, max_evals=5, levers={"a": 1})
old = {**base, "wall_s": 3.0, "seeds": [{"seed": 0}, {"seed": 1}]}
new = {**base, "wall_s": 2.0, "seeds": [{"seed": 1, "x": "new"}, {"seed": 2}]}
merged, added = merge_records.merge(old, new)
assert added == [2] and [r["seed"] for r in merged["seeds"]] == [0, 1, 2] and "x" not in merged["seeds"][1]
assert merged["wall_s"] == 5.0
try:
    merge_records.merge(old, {**new, "budget": 20.0}); raise SystemExit("no error")
except ValueError as err:
    assert "budget differs" in str(err), err
plan = run_chunks.read_plan("# c\\np s 0,1 10\\nq s 2 30\\n")
assert [j[0] for j in plan] == ["q", "p"] and plan[1][2] == "0,1"
try:
    run_chunks.read_plan("p s 0\\n"); raise SystemExit("no error")
except ValueError as err:
    assert "plan line 1" in str(err), err
here = {"jax": "0.10.2", "backend": "cpu", "cpu": "A"}
assert reproduce.other_stack(None, here) is None and reproduce.other_stack(dict(here), here) is None
assert reproduce.other_stack({**here, "jax": "0.11.2"}, here) == "jax 0.11.2"
print("ok")
"""
    done = _run(["-c", code, STUDIES], tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr[-2000:]
