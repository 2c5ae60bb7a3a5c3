"""The extension surface: a decision rule with a knob, a benchmark problem and a GP model,
each one file (tests/extensions/) written from its how-to with the top-level names of
``mumbo_jax``, are names everywhere once imported: ``mumbo-jax run`` runs the problem
with the model and the rule from a config, and ask/tell runs them from Python."""

import importlib
import json
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mumbo_jax as mj
from mumbo_jax.benchmarks import problems
from mumbo_jax.gp import models
from mumbo_jax.run import cli, config
from tests.bo_helpers import FAST, FAST_TOML

TOYS = ("toy_rule", "toy_problem", "toy_model")


@pytest.fixture(scope="module")
def toys():
    """Import the three files (each registers itself); remove their records afterwards."""
    mods = {name: importlib.import_module(f"tests.extensions.{name}") for name in TOYS}
    yield mods
    for rule in ("toy_sd_wide", "toy_sd"):
        mj.RULES.unregister(rule)
    problems.unregister("toy_bowl")
    models.unregister("se_icm")
    for name in TOYS:
        sys.modules.pop(f"tests.extensions.{name}", None)


def test_the_extension_surface_is_at_the_top_level():
    for name in ("Context", "rule_option", "mean_over_samples", "ModelSpec", "DiscreteModel", "ContinuousModel",
                 "register_rule",
                 "register_batch_rule", "register_recommendation_rule", "register_problem", "register_model",
                 "discrete_problem", "continuous_problem"):
        assert name in mj.__all__ and hasattr(mj, name), name
    mj.AskTell  # every top-level name loaded, with the modules behind them
    for runtime in ("xla_options", "compilation_cache", "programs", "prefetch", "timing", "sharding", "draws",
                    "process_options", "StepClock"):
        assert runtime not in mj.__all__ and not hasattr(mj, runtime), runtime  # they live in mumbo_jax.runtime


def test_the_old_register_name_warns_and_forwards():
    with pytest.warns(DeprecationWarning, match="mumbo_jax.register is renamed mumbo_jax.register_rule"):
        old = mj.register
    assert old is mj.register_rule
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new names warn nothing
        assert callable(mj.register_rule) and callable(mj.register_problem) and callable(mj.register_model)


def test_each_toy_is_a_name_everywhere(toys):
    assert mj.RULES["toy_sd"] is toys["toy_rule"].TOY_SD and mj.RULES["toy_sd_wide"].options["scale"] == 2.0
    assert problems.get_problem("toy_bowl") is toys["toy_problem"].TOY_BOWL
    assert models.MODELS["se_icm"] is toys["toy_model"].SquaredExpICM and "se_icm" in models.DISCRETE_KINDS
    assert "se_icm" in config.RUN.field("model").allowed() and "toy_bowl" in config.RUN.field("problem").allowed()
    listing = cli.list_text()
    assert "  toy_sd" in listing and "  toy_bowl" in listing and "  se_icm          discrete fidelities" in listing
    assert "se_icm" in cli.config_help("run") and "se_icm" in cli.config_help("tune")
    # a model of the other family, or an option it lacks, is refused by name
    with pytest.raises(config.ConfigError, match="unknown model 'se_icm' for 'currin_continuous'"):
        config.parse_config({"run": {"problem": "currin_continuous", "budget": 5, "model": "se_icm"}})
    assert "[settings.options.toy_sd]" in cli.config_help("run")  # the knob, documented
    with pytest.raises(config.ConfigError, match=r"\[settings.options.toy_sd\] scale must be > 0, got -1"):
        config.parse_config({"run": {"problem": "toy_bowl", "budget": 5, "strategy": "toy_sd"},
                             "settings": {"options": {"toy_sd": {"scale": -1}}}})
    with pytest.raises(config.ConfigError, match="target_floor: applies to the models with a target floor"):
        config.parse_config({"run": {"problem": "toy_bowl", "budget": 5, "model": "se_icm", "target_floor": 0.1}})


def test_the_knob_scales_the_score(toys):
    rng = np.random.default_rng(0)
    x, z = rng.uniform(size=(12, 2)), rng.integers(0, 2, 12)
    y = np.asarray(jax.vmap(lambda xi, zi: problems.objective(toys["toy_problem"].TOY_BOWL, xi, zi))(
        jnp.asarray(x), jnp.asarray(z)))
    spec = toys["toy_model"].SquaredExpICM(bounds=[(0.0, 1.0)] * 2, n_fidelities=2)
    post = mj.fit(spec, x, z, y, jax.random.PRNGKey(0))
    xs, zs = jnp.asarray(rng.uniform(size=(5, 2))), jnp.zeros(5, int)
    score = toys["toy_rule"].sd_score
    one, two = score(post, mj.target_fidelity(0), 1.0, xs, zs), score(post, mj.target_fidelity(0), 2.0, xs, zs)
    assert np.all(np.asarray(one) > 0) and np.allclose(two, 2.0 * one)


def test_the_toys_through_mumbo_jax_run(toys, tmp_path):
    cfg = tmp_path / "toy.toml"
    cfg.write_text(f"""
[run]
problem = "toy_bowl"
model = "se_icm"
strategy = "toy_sd_wide"
budget = 20
max_evals = 2
out = "{tmp_path / 'run'}"
[settings.options.toy_sd_wide]
scale = 3.0
{FAST_TOML}""")
    assert cli.main(["run", str(cfg)]) == 0
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["complete"] and res["settings"]["strategy"] == "toy_sd_wide"
    assert res["settings"]["options"] == {"toy_sd_wide": {"scale": 3.0}}  # the knob, set from the config
    seed = res["seeds"][0]
    assert seed["n_evals"] == len(seed["evaluations"]) == 2
    assert all(e["z"] == 0 for e in seed["evaluations"])  # a target-only rule
    assert np.isfinite(seed["final_regret"]) and seed["final_regret"] >= 0


def test_the_toys_through_ask_tell(toys):
    problem, model = toys["toy_problem"].TOY_BOWL, toys["toy_model"].SquaredExpICM
    task = mj.make_task(model(bounds=problem.bounds, n_fidelities=problem.n_fidelities), mj.target_fidelity(0),
                        mj.discrete_fidelities(problem.costs))
    opt = mj.AskTell(task, FAST.replace(strategy="toy_sd"), seed=0)
    steps = 0
    while steps < 2:
        design = opt.in_initial_design
        x, z = opt.ask()
        opt.tell(x, z, float(problems.objective(problem, jnp.asarray(x), z)))
        if not design:
            steps += 1
            assert int(z) == 0 and np.all((0.0 <= np.asarray(x)) & (np.asarray(x) <= 1.0))
    x_best, mean, sd = opt.recommendation()
    assert np.asarray(x_best).shape == (2,) and np.isfinite(mean) and sd >= 0


def test_a_registry_loads_its_entry_points_once_and_reports_a_broken_one(tmp_path, monkeypatch):
    """The plug-in mechanism the rules, problems and models share
    (:class:`mumbo_jax.registry.Registry`): an entry point naming a record (here a model
    class) is registered on first use; one that fails to load is a RuntimeWarning."""
    from mumbo_jax.registry import Registry

    dist = tmp_path / "toy_models-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-models\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toy_group.models]\nse = toy_model_mod:ToyModel\nbad = missing_mod\n")
    (tmp_path / "toy_model_mod.py").write_text(
        "import dataclasses\nimport mumbo_jax as mj\n\n\n"
        "@dataclasses.dataclass(frozen=True, kw_only=True)\nclass ToyModel(mj.ContinuousModel):\n    kind = 'toy_plugin'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    table = Registry("model", mj.ModelSpec, (models.MODELS["icm"],), key="kind", classes=True,
                     entry_point_group="toy_group.models")
    with pytest.warns(RuntimeWarning, match="model plug-in 'bad' \\(missing_mod\\) failed to load"):
        assert list(table) == ["icm", "toy_plugin"]
    assert table["toy_plugin"].__name__ == "ToyModel" and "toy_plugin" in table
    with pytest.raises(TypeError, match="register expects a subclass of ModelSpec, got int"):
        table.register(3)
    with pytest.raises(ValueError, match="a model named 'icm' is already registered"):
        table.register(type("Other", (models.MODELS["icm"],), {}))
    sys.modules.pop("toy_model_mod", None)
