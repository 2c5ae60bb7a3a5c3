"""The floor under the target's own ICM variance as an option of the benchmarks' tasks
and the run / compare / tune configs: the plain ICM by default,
the floor where asked, other models refuse one, bad values are named."""

import copy
import pathlib

import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.gp import models
from mumbo_jax.run import config
from mumbo_jax.run import tune as tuning
from mumbo_jax.run.schema import ConfigError

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_problem_tasks_take_a_floor_and_default_to_the_plain_icm():
    currin = problems.get_problem("currin")
    assert tasks.problem_task(currin).spec.target_floor == models.DEFAULT_TARGET_FLOOR == 0.0
    assert tasks.problem_task(currin, target_floor=0.01).spec.target_floor == 0.01
    assert tasks.problem_task(currin, "icm_disc").spec.target_floor == 0.05
    assert tasks.problem_task(currin, "icm", target_floor=0.2).spec.target_floor == 0.2
    assert tasks.problem_task(currin, "ar1", target_floor=0.0).spec.target_floor == 0.0
    with pytest.raises(ValueError, match="target_floor applies to the models with a target floor"):
        tasks.problem_task(currin, "ar1", target_floor=0.01)
    with pytest.raises(ValueError, match="target_floor applies to the models with a target floor"):
        tasks.problem_task(problems.get_problem("currin_continuous"), target_floor=0.01)


def test_a_floor_bounds_the_correlation_with_the_target():
    # |rho| <= 1 / sqrt(1 + floor) between the target and any cheaper fidelity at equal x,
    # whatever the parameters: here W makes the two fidelities identical and kappa ~ 0
    floor = 0.01
    spec = tasks.problem_task(problems.get_problem("currin"), target_floor=floor).spec
    params = models.default_params(spec)
    params["W"] = jnp.ones_like(params["W"])
    kappa = np.asarray(models.icm_kappa(spec, {**params, "log_kappa": jnp.full_like(params["log_kappa"], -30.0)}))
    w = np.asarray(params["W"])
    b = w @ w.T + np.diag(kappa)
    rho = b[0, 1] / np.sqrt(b[0, 0] * b[1, 1])
    assert rho <= 1 / np.sqrt(1 + floor) + 1e-12
    assert rho > 0.99  # and the floor is small: cheap data stay informative
    plain = tasks.problem_task(problems.get_problem("currin")).spec
    kappa0 = np.asarray(models.icm_kappa(plain, {**params, "log_kappa": jnp.full_like(params["log_kappa"], -30.0)}))
    assert kappa0[0] < 1e-12  # without it the target's own variance can vanish


def _compare_data():
    return copy.deepcopy(config.read_toml(ROOT / "configs" / "compare_currin.toml"))


def test_configs_take_target_floor_and_name_a_bad_one():
    assert config.load_compare_config(ROOT / "configs" / "compare_hartmann3.toml").target_floor is None
    run = config.load_config(ROOT / "configs" / "currin.toml")
    assert run.target_floor is None  # problem_task's default: the plain ICM
    assert config.parse_config({**run.to_dict(), "run": {**run.to_dict()["run"], "target_floor": 0.05}}).target_floor \
        == 0.05
    data = _compare_data()
    data["compare"]["target_floor"] = -0.1
    with pytest.raises(ConfigError, match="target_floor"):
        config.parse_compare_config(data)
    data["compare"].update(target_floor=0.01, model="ar1")
    with pytest.raises(ConfigError, match="target_floor: applies to the models with a target floor"):
        config.parse_compare_config(data)


def test_tune_config_takes_a_floor_and_names_one_on_another_model():
    cfg = tuning.load_tune_config(ROOT / "configs" / "tune_example.toml")
    assert tuning.make_tune_task(cfg).spec.target_floor == models.DEFAULT_TARGET_FLOOR
    data = cfg.to_dict()
    data["fidelity"]["target_floor"] = 0.01
    floored = tuning.parse_tune_config(data, source=cfg.source, base_dir=cfg.base_dir)
    assert tuning.make_tune_task(floored).spec.target_floor == 0.01
    assert floored.to_dict()["fidelity"]["target_floor"] == 0.01  # survives the round trip (journal)
    data["fidelity"].update(target_floor=0.01, model="ar1")
    with pytest.raises(ConfigError, match="target_floor: applies to the models with a target floor"):
        tuning.parse_tune_config(data, source=cfg.source, base_dir=cfg.base_dir)
