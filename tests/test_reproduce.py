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
