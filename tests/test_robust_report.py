"""The robust-default summary in docs/RESULTS.md is what experiments/studies/robust_report.py
renders from the committed data in docs/data/robust (no runs: the data are read)."""

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _report():
    spec = importlib.util.spec_from_file_location("robust_report", ROOT / "experiments" / "studies" / "robust_report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_results_summary_is_rendered_from_the_committed_data():
    rr = _report()
    data = ROOT / "docs" / "data" / "robust"
    if not any(data.glob("*__*.json")):
        pytest.skip("no robust-study data committed")
    _, summary, _, _ = rr.analyse(rr.load(data), "robust", "ei,mes,mumbo,mt_ei,mf_gp_ucb,boca".split(","))
    text = (ROOT / "docs" / "RESULTS.md").read_text()
    assert rr.with_summary(text, summary) == text, "stale: run python experiments/studies/robust_report.py"


def test_checkpoint_values_mark_seeds_that_stopped_early():
    rr = _report()
    cost, regret = [0.0, 5.0, 9.0], [3.0, 2.0, 1.0]
    assert rr.at_cost(cost, regret, 5.0) == 2.0
    assert rr.at_cost(cost, regret, 9.0) == 1.0
    assert rr.at_cost(cost, regret, 20.0) != rr.at_cost(cost, regret, 20.0)  # NaN: stopped before the checkpoint
