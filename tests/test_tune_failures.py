"""Failures the model learns from (AskTell.tell_failure: a pessimistic imputed value),
and a tuning run without any successful evaluation ends aborted (exit 1)."""

import json

import numpy as np
import pytest

from mumbo_jax.bo import asktell
from mumbo_jax.run import cli
from mumbo_jax.run import tune as tuning
from mumbo_jax.run.tune.config import make_tune_task, parse_tune_config
from tests.test_tuning import TINY_SETTINGS, config, evals_of, write_objective

NEVER = """\
[objective]
function = "obj.py:f"
direction = "minimise"

[parameters]
a = {low = 0.0, high = 1.0}

[fidelity]
kind = "discrete"
costs = [1.0]

[budget]
evaluations = 3
"""


def test_no_successful_evaluation_exits_1_below_max_consecutive_failures(tmp_path, capsys):
    """3 evaluations, all failing, against max_consecutive_failures = 10 (the default)."""
    write_objective(tmp_path, "def f(x, z):\n    return float('nan')\n")
    (tmp_path / "never.toml").write_text(NEVER)
    assert cli.main(["tune", str(tmp_path / "never.toml"), "--out", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "aborted" in err and "no evaluation succeeded" in err
    assert err.count("no evaluation succeeded") == 1
    res = json.loads((tmp_path / "r" / tuning.RESULTS_NAME).read_text())
    assert res["aborted"] is True and res["counts"]["ok"] == 0 and "budget" in res["stop_reason"]


def opt_of(**sections):
    cfg = parse_tune_config(config(**sections))
    return asktell.AskTell(make_tune_task(cfg), cfg.settings(), seed=0), cfg


def test_tell_failure_is_imputed_pessimistically_and_kept_in_the_state():
    opt, cfg = opt_of()
    xs = []
    for y in (0.2, 0.5, 0.9, 0.4):
        x, z = opt.ask()
        opt.tell(x, z, y)
        xs.append((x, z))
    assert opt.imputed_value() == pytest.approx(0.2 - asktell.FAILURE_MARGIN * 0.7)
    x, z = opt.ask()
    opt.tell_failure(x, z)
    opt.tell_failure(x, z)  # the same failure twice (a retry) is one row
    assert len(opt.failed) == 1 and len(opt.pending()) == 1  # a failure leaves the pending point pending
    b = opt.buffers()
    assert int(b.mask.sum()) == 5 and b.y[4] == pytest.approx(opt.imputed_value())
    np.testing.assert_allclose(b.x[4], x)
    state = json.loads(json.dumps(opt.state_dict()))
    again = asktell.AskTell.from_state(opt.task, opt.settings, state)
    assert again.failed == opt.failed
    np.testing.assert_array_equal(again.buffers().y, b.y)
    with pytest.raises(ValueError, match="outside the search box"):
        opt.tell_failure(np.asarray(x) + 100.0, z)


def test_failure_before_any_success_waits_for_a_value():
    opt, _ = opt_of()
    x, z = opt.ask()
    opt.tell_failure(x, z)
    assert opt.imputed_value() is None and int(opt.buffers().mask.sum()) == 0


# a known failing region: f(a) = a on [0, 1] maximised, failing for a > 0.6 (the optimum
# of what succeeds is at the edge of the failing region)
REGION = "def f(x, z):\n    if x['a'] > 0.6:\n        raise RuntimeError('diverged')\n    return x['a']\n"


@pytest.mark.parametrize("failures", ["impute", "ignore"])
def test_a_failing_region_stops_attracting_proposals(tmp_path, failures):
    write_objective(tmp_path, REGION, "region.py")
    cfg = {"objective": {"function": str(tmp_path / "region.py") + ":f", "direction": "maximise",
                         "failures": failures, "max_consecutive_failures": 50},
           "parameters": {"a": {"low": 0.0, "high": 1.0}},
           "fidelity": {"kind": "discrete", "costs": [1.0]},
           "budget": {"evaluations": 14}, "run": {"seed": 1, "strategy": "ei"}, "settings": dict(TINY_SETTINGS)}
    import io

    tuning.tune(cfg, out=tmp_path / "r", stream=io.StringIO())
    evals = evals_of(tmp_path / "r")
    proposed_failing = sum(r["source"] == "bo" and r["x"]["a"] > 0.6 for r in evals)
    if failures == "impute":
        assert proposed_failing <= 2, [r["x"]["a"] for r in evals]
    else:  # the measurement's other arm: without imputation EI keeps returning there
        assert proposed_failing >= 3, [r["x"]["a"] for r in evals]


def test_failure_classifier_learns_the_failing_region():
    cfg = parse_tune_config({"objective": {"direction": "maximise"}, "parameters": {"a": {"low": 0.0, "high": 1.0},
                                                                                    "b": {"low": 0.0, "high": 1.0}},
                             "fidelity": {"kind": "discrete", "costs": [1.0]}, "budget": {"evaluations": 5},
                             "settings": dict(TINY_SETTINGS)})
    opt = asktell.AskTell(make_tune_task(cfg), cfg.settings(), seed=0)
    rng = np.random.default_rng(0)
    for a in (0.05, 0.15, 0.25, 0.35, 0.45, 0.5, 0.3, 0.1):
        opt.tell([a, rng.uniform()], 0, a)
    for a, b in ((0.75, 0.1), (0.9, 0.5), (0.8, 0.9)):  # failing for a > 0.6, whatever b
        opt.tell_failure([a, b], 0)
    classifier = opt.failure_classifier()
    assert opt.likely_failure(classifier, [0.95, 0.0], 0)  # a corner no failure was seen at
    assert opt.likely_failure(classifier, [0.85, 0.7], 0)
    assert not opt.likely_failure(classifier, [0.2, 0.5], 0)
    assert not opt.likely_failure(classifier, [0.4, 1.0], 0)
    x, z = opt.ask()  # the proposal avoids the failing region
    assert x[0] < 0.6, x
