"""Warm start of a tuning run from a CSV file or another run's journal (``--warm-start``)."""

import io
import json

import pytest

from mumbo_jax.run import cli
from mumbo_jax.run import tune as tuning
from mumbo_jax.run.schema import ConfigError
from mumbo_jax.run.tune.config import make_tune_task, parse_tune_config
from tests.test_tuning import N_DESIGN, config, journal

CSV = """learning_rate,weight_decay,score,z
0.01,0.0001,0.95,0
0.1,0.001,0.80,0
0.001,0.00001,0.70,1
0.05,0.01,0.60,1
"""


def test_csv_warm_start_takes_the_place_of_design_points(tmp_path):
    (tmp_path / "old.csv").write_text(CSV)
    cfg = config(budget={"evaluations": 4})
    res = tuning.tune(cfg, out=tmp_path / "r", stream=io.StringIO(), warm_start=[tmp_path / "old.csv"])
    header, records, _ = journal(tmp_path / "r")
    warm = [r for r in records if r["type"] == "warm"]
    assert [r["type"] for r in records[:4]] == ["warm"] * 4  # journaled before any evaluation
    assert [r["score"] for r in warm] == [0.95, 0.8, 0.7, 0.6] and [r["z"] for r in warm] == [0, 0, 1, 1]
    assert warm[0]["x"] == {"learning_rate": 0.01, "weight_decay": 0.0001}
    assert warm[2]["cost"] == 1.0  # the configured cost of fidelity 1
    assert header["warm_start"] == [str(tmp_path / "old.csv")]
    evals = [r for r in records if r["type"] == "eval"]
    assert len(evals) == 4 and res["counts"]["evaluations"] == 4 and res["warm_start"] == 4  # not in the budget
    # the replayed optimiser: the 4 warm points took 4 of the 8 design slots
    parsed = parse_tune_config(header["config"])
    opt = tuning.replay(make_tune_task(parsed), parsed.settings(), 0, evals, warm=warm)
    n_ok = sum(r["status"] == "ok" for r in evals)
    assert opt.n_design == N_DESIGN == 8 and len(opt.x) == 4 + n_ok and len(opt.state_dict()["design_done"]) == 4 + n_ok
    # another run warm-started from this run's journal (its folder) by the command line
    (tmp_path / "t.toml").write_text(
        '[objective]\nfunction = "mumbo_jax.benchmarks.examples:train_demo"\ndirection = "maximise"\n'
        '[parameters]\nlearning_rate = {low = 1e-4, high = 1.0, log = true}\n'
        'weight_decay = {low = 1e-6, high = 0.1, log = true}\n'
        '[fidelity]\nkind = "discrete"\ncosts = [10.0, 1.0]\nvalues = [1.0, 0.1]\n[budget]\nevaluations = 1\n')
    assert cli.main(["tune", str(tmp_path / "t.toml"), "--out", str(tmp_path / "r2"), "--warm-start",
                     str(tmp_path / "r")]) == 0
    res2 = json.loads((tmp_path / "r2" / "results.json").read_text())
    assert res2["warm_start"] == 4 + sum(r["status"] == "ok" for r in evals)


@pytest.mark.parametrize("text, words", [
    ("learning_rate,weight_decay\n0.01,0.001\n", "needs a 'score' column"),
    ("learning_rate,weight_decay,score\n5.0,0.001,0.3\n", "row 2: learning_rate = 5 is outside"),
    ("learning_rate,score\n0.01,0.3\n", "row 2: no value for parameter 'weight_decay'"),
    ("learning_rate,weight_decay,score\n0.01,0.001,nan\n", "score must be finite"),
    ("learning_rate,weight_decay,score,z\n0.01,0.001,0.5,4\n", "z = '4' is not a fidelity index"),
    ("learning_rate,weight_decay,score,cost\n0.01,0.001,0.5,-1\n", "cost must be a finite number > 0"),
])
def test_bad_warm_start_files_are_config_errors(tmp_path, text, words):
    (tmp_path / "w.csv").write_text(text)
    with pytest.raises(ConfigError, match=words):
        tuning.tune(config(), out=tmp_path / "r", stream=io.StringIO(), warm_start=tmp_path / "w.csv")
    assert not (tmp_path / "r").exists()  # refused before the run folder is made


def test_warm_start_from_a_journal_of_other_parameters_is_refused(tmp_path, capsys):
    cfg = config(budget={"evaluations": 1})
    tuning.tune(cfg, out=tmp_path / "a", stream=io.StringIO())
    other = config(budget={"evaluations": 1}, parameters={"alpha": {"low": 0.0, "high": 1.0}})
    other["parameters"] = {"alpha": {"low": 0.0, "high": 1.0}}
    with pytest.raises(ConfigError, match="its parameters .* are not this run's"):
        tuning.tune(other, out=tmp_path / "b", stream=io.StringIO(), warm_start=[tmp_path / "a"])
    assert cli.main(["tune", "tune_example", "--out", str(tmp_path / "c"), "--warm-start",
                     str(tmp_path / "missing.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
