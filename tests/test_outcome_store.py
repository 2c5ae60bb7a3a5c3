"""Paid once: a remote evaluation keeps its outcome in the run folder, and another task
of the same evaluation (a Dask recompute, a reissue after a driver crash) reuses it."""

import json

from mumbo_jax.run.tune import executors

COUNTING = """
import os
def f(x, z):
    with open(os.environ["CALLS"], "a") as fh:
        fh.write("call\\n")
    return x["a"] * 2
"""


def test_a_stored_outcome_is_reused_not_paid_again(tmp_path, monkeypatch):
    (tmp_path / "counting.py").write_text(COUNTING)
    monkeypatch.setenv("CALLS", str(tmp_path / "calls.txt"))
    path = str(tmp_path / "run" / executors.OUTCOMES / "7.json")
    first = executors.evaluate_remote("counting.py:f", str(tmp_path), {"a": 1.5}, 0, outcome_path=path)
    assert first["status"] == "ok" and first["score"] == 3.0 and "reused" not in first
    assert json.loads(open(path).read())["score"] == 3.0
    again = executors.evaluate_remote("counting.py:f", str(tmp_path), {"a": 1.5}, 0, outcome_path=path)
    assert again["reused"] is True and again["score"] == 3.0
    assert (tmp_path / "calls.txt").read_text().count("call") == 1  # the objective ran once
    # an unreadable store is ignored (evaluated again), an unwritable one is not an error
    open(path, "w").write("{torn")
    assert executors.read_outcome(path) is None
    assert "reused" not in executors.evaluate_remote("counting.py:f", str(tmp_path), {"a": 1.5}, 0,
                                                     outcome_path=path)
    blocked = tmp_path / "file"
    blocked.write_text("")
    out = executors.evaluate_remote("counting.py:f", str(tmp_path), {"a": 1.0}, 0,
                                    outcome_path=str(blocked / "x" / "1.json"))
    assert out["score"] == 2.0 and (tmp_path / "calls.txt").read_text().count("call") == 3
