"""The decision-rule records and their table: derived names, checks, errors."""

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import loop, optimize, rules, strategies
from mumbo_jax.gp import models, posterior


def test_table_and_derived_names():
    assert rules.STRATEGIES == ("mumbo", "mes", "random", "ei", "ucb", "mt_ei", "mf_gp_ucb", "boca", "mtbo")
    assert rules.USES_GSTAR == ("mumbo", "mes")
    assert rules.TARGET_ONLY == ("mes", "random", "ei", "ucb")
    assert rules.DISCRETE_ONLY == ("mf_gp_ucb",) and rules.CONTINUOUS_ONLY == ("boca",)
    # the names run/ reads today are the table's
    assert strategies.STRATEGIES is rules.STRATEGIES and loop.STRATEGIES is rules.STRATEGIES
    assert strategies.DISCRETE_ONLY is rules.DISCRETE_ONLY
    two_stage = {n for n, r in rules.RULES.items() if r.second_stage is not None}
    assert two_stage == {"mt_ei", "mf_gp_ucb", "boca"}
    assert {n for n, r in rules.RULES.items() if r.replays_history} == {"mf_gp_ucb", "boca"}
    assert rules.RULES["mumbo"].gain == "table" and all(r.gain is None for n, r in rules.RULES.items()
                                                       if n != "mumbo")
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.RULES["ei"].space = "all"


def test_check_rule_one_line_errors():
    with pytest.raises(ValueError, match=r"^strategy 'boca' needs a continuous fidelity; problem has discrete "
                                         r"fidelities$"):
        rules.check_rule("boca", discrete=True)
    with pytest.raises(ValueError, match=r"^strategy 'mf_gp_ucb' needs discrete fidelities; problem has a "
                                         r"continuous fidelity$"):
        rules.check_rule("mf_gp_ucb", discrete=False)
    with pytest.raises(ValueError, match="unknown strategy 'kg'"):
        rules.check_rule("kg", discrete=True)
    for name in rules.STRATEGIES:  # every other pairing is fine
        kinds = rules.RULES[name].kinds
        for discrete in (True, False):
            if ("discrete" if discrete else "continuous") in kinds:
                assert rules.check_rule(name, discrete) is rules.RULES[name]


def test_rules_that_need_one_target_fidelity_reject_a_combined_target():
    spec = models.icm_model([(0.0, 1.0)], 3)
    task = loop.make_task(spec, posterior.task_mean(3), optimize.discrete_fidelities([1.0, 1.0, 1.0]))
    for name in ("ei", "mes", "random", "ucb", "mf_gp_ucb"):
        with pytest.raises(ValueError, match=f"strategy '{name}' needs the target to be one fidelity"):
            rules.check_rule_for_task(name, task)
        with pytest.raises(ValueError, match="needs the target to be one fidelity"):
            loop.AskTell(task, loop.BOSettings(strategy=name))
    for name in ("mumbo", "mt_ei", "mtbo"):
        assert rules.check_rule_for_task(name, task).name == name


def test_settings_checks():
    with pytest.raises(ValueError, match="unknown strategy 'nonsense'"):
        loop.BOSettings(strategy="nonsense")
    with pytest.raises(ValueError, match="n_gstar must be a positive integer"):
        loop.BOSettings(n_gstar=0)
    with pytest.raises(ValueError, match=r"n_starts \(9\) exceeds the number of scored candidates \(8 = n_candidates 8 x 1"):
        loop.BOSettings(n_candidates=8, n_starts=9)
    with pytest.raises(ValueError, match="unknown gain 'quad'"):
        loop.BOSettings(gain="quad")
    with pytest.raises(ValueError, match="strategy 'ei' has no gain path"):
        loop.BOSettings(strategy="ei", gain="simpson")
    with pytest.raises(ValueError, match="ucb_beta"):
        loop.BOSettings(strategy="ucb", ucb_beta=-1.0)
    with pytest.raises(ValueError, match="mtbo_representers must be <="):
        loop.BOSettings(strategy="mtbo", mtbo_representers=rules.MTBO_POOL + 1)
    assert rules.rule_for(loop.BOSettings(gain="simpson")).gain == "simpson"
    assert rules.rule_for(loop.BOSettings()).gain == "table"
    # the maximiser's own check is the same function
    with pytest.raises(ValueError, match=r"n_starts \(8\) exceeds the number of scored candidates \(4 = n_candidates 4 x 1"):
        optimize.maximise(None, lambda x, z: x[:, 0], jnp.asarray([[0.0, 1.0]]), optimize.discrete_fidelities([1.0]),
                          n_candidates=4, n_starts=8)


def test_bo_evaluations_skip_the_design_rows():
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    x = np.linspace(0, 1, 10)[:, None]
    z = np.zeros(10)
    y = -(x[:, 0] - 0.5) ** 2
    mask = np.r_[np.ones(7), np.zeros(3)]
    post = posterior.condition(task.spec, models.default_params(task.spec), x, z, y, mask)
    np.testing.assert_array_equal(np.asarray(rules.bo_evaluations(post, 4)), [0, 0, 0, 0, 1, 1, 1, 0, 0, 0])
    # a rule that replays its history cannot run without the count
    settings = loop.BOSettings(strategy="mf_gp_ucb", n_candidates=20, n_starts=2)
    with pytest.raises(ValueError, match="replays its own BO evaluations: pass n_design"):
        strategies.propose(settings, task, post, jnp.zeros(10), None)
