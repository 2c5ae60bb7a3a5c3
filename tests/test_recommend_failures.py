"""The recommendation never points where evaluations fail (mumbo_jax.bo.safe_recommendation):
a deterministic objective whose unconstrained optimum lies in a failing region."""

import warnings

import numpy as np
import pytest

from mumbo_jax.bo import stages
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.safe_recommendation import UnsafeRecommendationWarning
from mumbo_jax.bo.settings import BOSettings, make_task
from mumbo_jax.bo import optimize
from mumbo_jax.gp import models, posterior
from tests.bo_helpers import FAST

FAILS_ABOVE = 0.3  # the objective raises for a > 0.3; its unconstrained maximum is at a = 0.5


def objective(a, z):
    return -(a - 0.5) ** 2 - 0.05 * z


def told_opt(rule="global"):
    spec = models.icm_model(((0.0, 1.0),), 2, rank=2)
    task = make_task(spec, posterior.target_fidelity(0), optimize.discrete_fidelities((10.0, 1.0)))
    settings = FAST.replace(recommendation={"rule": rule})
    opt = AskTell(task, settings, seed=0, design=(np.asarray([[0.05], [0.2], [0.05], [0.2]]), np.asarray([0, 0, 1, 1])))
    for a in (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3):
        for z in (0, 1):
            opt.tell([a], z, objective(a, z))
    for a in (0.45, 0.7, 0.95):
        opt.tell_failure([a], 1)
    return opt


# both rules extrapolate the rising curve into the failing region; the robust rule does so
# only because both of its models are sure, at 2 sd, that x is better than the best measured
# point (it is: the objective peaks at 0.5), and the failure check replaces it all the same
@pytest.mark.parametrize("rule", ["global", "robust"])
def test_recommendation_falls_back_to_the_best_successful_point(rule):
    opt = told_opt(rule)
    post = stages.fit_stage(opt.settings, opt.task, opt.buffers(failures=False), opt.params,
                            stages.step_keys(opt.loop_key, max(len(opt.x) - opt.n_design, 0))[0], True)
    raw_x, _, _ = stages.recommend(opt.task, post, opt.buffers(failures=False).x, rule, True)
    with pytest.warns(UnsafeRecommendationWarning, match="best successful point"):
        x, mu, sd = opt.recommendation()
    # the unguarded rule extrapolates the rising curve into the failing region
    assert float(raw_x[0]) > FAILS_ABOVE
    assert x.tolist() == [0.3]  # the best successful target evaluation
    assert abs(mu - objective(0.3, 0)) < 1e-3 and np.isfinite(sd)
    assert "failure" in opt.recommendation_note and "[0.3]" in opt.recommendation_note
    assert isinstance(mu, float) and isinstance(sd, float)


def test_a_failed_point_is_never_recommended(monkeypatch):
    opt = told_opt()
    # a rule whose choice is a failed x: rejected even where the classifier is not asked
    from mumbo_jax.bo import safe_recommendation

    assert "failed" in safe_recommendation.unsafe_reason(opt, np.asarray([0.7]))
    assert safe_recommendation.unsafe_reason(opt, np.asarray([0.2])) is None


def test_without_failures_the_rule_stands():
    opt = told_opt()
    opt.failed.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnsafeRecommendationWarning)
        x, mu, sd = opt.recommendation()
    assert opt.recommendation_note is None


def test_tune_reports_the_fallback_in_results_and_summary(tmp_path, monkeypatch):
    """``mumbo-jax tune``'s incumbent line and results.json: never inside the failing region."""
    import io
    import json

    from mumbo_jax.run import tune as tuning
    from tests.test_tuning import TINY_SETTINGS

    (tmp_path / "obj.py").write_text(
        "def f(x, z):\n"
        "    a = x['a']\n"
        f"    if a > {FAILS_ABOVE}:\n"
        "        raise FloatingPointError('diverged')\n"
        "    return -(a - 0.5) ** 2 - 0.05 * z\n")
    cfg = {"objective": {"function": str(tmp_path / "obj.py") + ":f", "direction": "maximise",
                         "failures": "ignore"},
           "parameters": {"a": {"low": 0.0, "high": 1.0}},
           "fidelity": {"kind": "discrete", "costs": [10.0, 1.0]},
           "budget": {"evaluations": 9}, "run": {"seed": 1, "strategy": "mumbo"},
           "settings": {**TINY_SETTINGS, "recommendation": {"rule": "global"}}}
    from mumbo_jax.bo import safe_recommendation

    reasons = []  # what the guard said about the rule's x
    real = safe_recommendation.unsafe_reason
    monkeypatch.setattr(safe_recommendation, "unsafe_reason",
                        lambda opt, x: reasons.append(real(opt, x)) or reasons[-1])
    out = io.StringIO()
    res = tuning.tune(cfg, out=tmp_path / "r", stream=out)
    assert len(reasons) == 1  # the final recommendation was vetted
    assert any(e["status"] == "failed" for e in res["evaluations"])
    inc = res["incumbent"]
    failed = [e["x"]["a"] for e in res["evaluations"] if e["status"] == "failed"]
    ok = [e["x"]["a"] for e in res["evaluations"] if e["status"] == "ok"]
    # below every failure, and a measured success unless the failure model is sure of success there
    assert inc["x"]["a"] < min(failed)
    assert inc["x"]["a"] <= FAILS_ABOVE + 1e-9 or inc["x"]["a"] in ok
    saved = json.loads((tmp_path / "r" / tuning.RESULTS_NAME).read_text())["incumbent"]
    assert saved["note"] == inc["note"]
    # the global rule's optimum (a = 0.356 here) lies between the last success and the first
    # failure, where the failure model is not sure of success: the fallback, said in the summary
    assert reasons[0] is not None and inc["note"] is not None and "failure model" in inc["note"]
    assert "best successful evaluation" in out.getvalue() and inc["x"]["a"] in ok
