"""The library's defaults: the robust rule and the robust recommendation, everywhere a user
meets them (settings, ask/tell, run and tune configs), while the shipped paper configs keep
the paper's MUMBO and the recommendation of their committed runs."""

import jax
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import rules
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.settings import BOSettings
from mumbo_jax.run.config import find_config, load_config, parse_config, settings_from_config
from mumbo_jax.run.tune.config import parse_tune_config


def test_settings_default_to_the_robust_rule_and_recommendation():
    s = BOSettings()
    assert (s.strategy, s.incumbent_rule) == ("robust", "robust")
    rule = rules.rule_for(s)
    assert rule is rules.RULES["robust"] and rule.second_stage is not None  # the guard stage
    assert rules.RULES["mumbo"].second_stage is None  # the paper's rule, unguarded


def test_configs_without_a_strategy_run_the_robust_rule():
    cfg = parse_config({"run": {"problem": "currin", "budget": 50}})
    assert cfg.strategy == "robust"
    assert settings_from_config(cfg).incumbent_rule == "robust"
    tune = parse_tune_config({
        "objective": {"function": "mumbo_jax.benchmarks.examples:train_demo", "direction": "maximise"},
        "parameters": {"lr": {"low": 1e-4, "high": 1.0, "log": True}},
        "fidelity": {"kind": "discrete", "costs": [10.0, 1.0], "values": [1.0, 0.1]},
        "budget": {"cost": 100.0},
    })
    assert tune.strategy == "robust"


@pytest.mark.parametrize("name", ["forrester", "currin", "hartmann3", "borehole"])
def test_paper_configs_keep_the_papers_rule_and_their_recommendation(name):
    settings = settings_from_config(load_config(find_config(name)))
    assert (settings.strategy, settings.incumbent_rule) == ("mumbo", "global")


def test_asktell_defaults_decide_with_the_guard():
    """One default decision after the design on a problem whose cheap source is
    anti-correlated: the guard's cheap spend bound holds (share 0.5 of the BO spend plus
    one target evaluation) and the recommendation is finite."""
    jax.config.update("jax_enable_x64", True)
    prob = problems.get_problem("unrel_currin_negated")
    settings = BOSettings(n_gstar=5, n_candidates=200, n_starts=2, n_polish_steps=5, fit_restarts=2,
                          fit_max_iter=30, gstar_grid=500)
    assert settings.strategy == "robust"
    opt = AskTell(tasks.problem_task(prob), settings, seed=0)
    costs = dict(enumerate(prob.costs))
    spent = {"cheap": 0.0, "all": 0.0}
    for i in range(opt.n_design + 2):
        x, z = opt.ask()
        opt.tell(x, z, float(problems.objective(prob, jax.numpy.asarray(x), z)))
        if i >= opt.n_design:
            spent["all"] += costs[int(z)]
            spent["cheap"] += costs[int(z)] * (int(z) != 0)
    assert spent["cheap"] <= 0.5 * spent["all"] + prob.costs[0]
    x, mu, sd = opt.recommendation()
    assert np.all(np.isfinite(np.asarray(x))) and np.isfinite(mu) and sd >= 0
