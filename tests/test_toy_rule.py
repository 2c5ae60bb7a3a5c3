"""A rule registered at run time (tests/toy_rule.py, one knob) is a strategy everywhere:
the settings, the config schema and ``config-help``, ``mumbo-jax list``, the compare
presets, ``mumbo-jax run``, ``mumbo-jax compare`` and ask/tell, with no edit to the
library. (The rule file plus this test are the two files a new rule takes.)"""

import importlib
import json
import sys

import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import rules
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax import BOSettings
from mumbo_jax.run import cli, config
from tests.bo_helpers import FAST, FAST_TOML, drive, with_

NAME = "variance_reduction"
SMALL = FAST_TOML


@pytest.fixture
def toy():
    """Import the rule's file (it registers itself), remove it afterwards."""
    assert NAME not in rules.STRATEGIES
    module = importlib.import_module("tests.toy_rule")
    yield module
    rules.unregister(NAME)
    sys.modules.pop("tests.toy_rule", None)
    assert NAME not in rules.STRATEGIES


def test_a_registered_rule_is_in_every_list_at_once(toy):
    assert rules.RULES[NAME] is toy.VARIANCE_REDUCTION
    assert NAME in rules.STRATEGIES and rules.STRATEGIES[-1] == NAME
    assert NAME not in rules.TARGET_ONLY and NAME not in rules.USES_GSTAR
    assert NAME not in rules.DISCRETE_ONLY and NAME not in rules.CONTINUOUS_ONLY
    assert BOSettings(strategy=NAME).strategy == NAME
    assert config.STRATEGY_PRESETS[NAME] == {"strategy": NAME}
    assert NAME in config.RUN.field("strategy").allowed()
    assert NAME in config.STRATEGY_TABLE.field("strategy").allowed()
    assert NAME in cli.config_help("run") and NAME in cli.config_help("compare")
    assert f"  {NAME}" in cli.list_text()
    # registering the same record again is harmless; another rule under the name is refused
    assert rules.register(toy.VARIANCE_REDUCTION) is toy.VARIANCE_REDUCTION
    with pytest.raises(ValueError, match=f"a rule named '{NAME}' is already registered"):
        rules.register(toy.VARIANCE_REDUCTION.with_options(power=3.0))


def test_the_toy_rule_through_ask_tell(toy):
    prob = problems.get_problem("forrester")
    opt = AskTell(tasks.problem_task(prob), with_(FAST, strategy=NAME), seed=0)
    chosen = drive(opt, prob, 2)
    assert len(chosen) == 2
    for x, z in chosen:
        assert 0.0 <= float(np.asarray(x)[0]) <= 1.0 and int(z) in (0, 1, 2)


def test_the_toy_rule_through_mumbo_jax_run_and_compare(toy, tmp_path, capsys):
    run_cfg = tmp_path / "run.toml"
    run_cfg.write_text(f"""
[run]
problem = "forrester"
budget = 15
strategy = "{NAME}"
max_evals = 2
out = "{tmp_path / 'run'}"
{SMALL}""")
    assert cli.main(["run", str(run_cfg)]) == 0
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["settings"]["strategy"] == NAME and res["complete"]
    evaluations = res["seeds"][0]["evaluations"]
    assert res["seeds"][0]["n_evals"] == len(evaluations) == 2 and all(e["z"] in (0, 1, 2) for e in evaluations)
    # its knob: a variant under its own name, listed by its label in a comparison
    rules.register(toy.VARIANCE_REDUCTION.with_options(name=f"{NAME}_sq", power=2.0))
    try:
        cmp_cfg = tmp_path / "compare.toml"
        cmp_cfg.write_text(f"""
[compare]
problem = "forrester"
budget = 15
seeds = 1
max_evals = 2
strategies = ["{NAME}", "{NAME}_sq", "ei"]
out = "{tmp_path / 'compare'}"
{SMALL}""")
        assert cli.main(["compare", str(cmp_cfg)]) == 0
        out = json.loads((tmp_path / "compare" / "results.json").read_text())
        assert list(out["strategies"]) == [NAME, f"{NAME}_sq", "ei"]
        assert out["strategies"][f"{NAME}_sq"]["settings"]["strategy"] == f"{NAME}_sq"
        assert f"| {NAME} |" in (tmp_path / "compare" / "table.md").read_text()
    finally:
        rules.unregister(f"{NAME}_sq")
