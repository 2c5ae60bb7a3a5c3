"""The soak study, shortened (slow: a Dask cluster, worker kills and a driver kill -9;
the full study is ``python experiments/soak_study.py``)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_shortened_soak_loses_nothing_and_pays_nothing_twice(tmp_path):
    pytest.importorskip("distributed")
    spec = importlib.util.spec_from_file_location("soak_study", ROOT / "experiments" / "soak_study.py")
    soak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(soak)
    found = soak.soak(evaluations=40, workers=2, driver_kills=1, worker_kill_every=8.0, out=tmp_path / "soak",
                      seed=1, sleep=0.1, timeout=1200)
    assert found["evaluations"] == 40 and found["driver_kills"] == 1 and found["worker_kills"] >= 1
    assert found["lost_finished"] == 0 and found["ids_journaled_twice"] == 0
    assert found["evaluations_journaled_twice"] == 0
    assert found["paid_twice"] == 0 and found["ok_evaluations_without_a_completed_call"] == 0
    assert found["passed"]
