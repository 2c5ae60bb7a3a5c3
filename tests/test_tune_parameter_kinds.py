"""Integer and categorical tuning parameters: the objective receives integers and
choices, the model is told the rounded / one-hot point it was evaluated at."""

import io
import json

import numpy as np
import pytest

from mumbo_jax.run import tune as tuning
from mumbo_jax.run.schema import ConfigError
from mumbo_jax.run.tune.config import parse_tune_config
from tests.test_tuning import TINY_SETTINGS, evals_of, write_objective

OBJ = """
def f(x, z):
    assert isinstance(x["layers"], int) and 1 <= x["layers"] <= 6, x
    assert isinstance(x["batch"], int) and 16 <= x["batch"] <= 256, x
    assert x["act"] in ("relu", "tanh", "gelu"), x
    assert isinstance(x["lr"], float), x
    bonus = {"relu": 0.0, "tanh": -0.3, "gelu": 0.2}[x["act"]]
    return -(x["layers"] - 3) ** 2 - (x["lr"] - 0.1) ** 2 + bonus - abs(x["batch"] - 64) / 100
"""


def kinds_config(tmp_path, evaluations=10):
    write_objective(tmp_path, OBJ, "kinds.py")
    return {"objective": {"function": str(tmp_path / "kinds.py") + ":f", "direction": "maximise"},
            "parameters": {"layers": {"low": 1, "high": 6, "type": "int"},
                           "batch": {"low": 16, "high": 256, "type": "int", "log": True},
                           "act": {"choices": ["relu", "tanh", "gelu"]},
                           "lr": {"low": 0.0, "high": 1.0}},
            "fidelity": {"kind": "discrete", "costs": [1.0]},
            "budget": {"evaluations": evaluations}, "run": {"seed": 0, "strategy": "ei"},
            "settings": dict(TINY_SETTINGS)}


def test_config_model_box_and_round_trip(tmp_path):
    cfg = parse_tune_config(kinds_config(tmp_path))
    assert cfg.dim == 6  # layers, batch, 3 one-hot coordinates, lr
    assert cfg.internal_bounds[:2] == [(1.0, 6.0), (np.log10(16), np.log10(256))]
    assert cfg.internal_bounds[2:5] == [(0.0, 1.0)] * 3
    u = [2.6, np.log10(50), 0.1, 0.7, 0.3, 0.25]
    assert cfg.values_of(u) == {"layers": 3, "batch": 50, "act": "tanh", "lr": 0.25}
    assert cfg.snap(u) == [3.0, pytest.approx(np.log10(50)), 0.0, 1.0, 0.0, 0.25]
    again = parse_tune_config(json.loads(json.dumps(cfg.to_dict())))  # the journal header's copy
    assert again.parameters == cfg.parameters
    assert "layers integer in [1, 6]" in cfg.describe() and "act in {'relu', 'tanh', 'gelu'}" in cfg.describe()


@pytest.mark.parametrize("spec, words", [
    ({"low": 1.5, "high": 4, "type": "int"}, "integer low and high"),
    ({"choices": ["a"]}, "at least 2"),
    ({"choices": ["a", "a"]}, "distinct"),
    ({"choices": ["a", "b"], "low": 0}, "has choices, not low"),
    ({"type": "categorical"}, "needs choices"),
    ({"low": 0, "high": 1, "choices": [1, 2], "type": "int"}, "choices are for type = 'categorical'"),
    ({"low": 0}, "high is required"),
    ({"low": 0, "high": 1, "type": "integer"}, "did you mean 'int'"),
    ({"choices": [[1], [2]]}, "strings, numbers or booleans"),
])
def test_bad_parameter_specs(tmp_path, spec, words):
    cfg = kinds_config(tmp_path)
    cfg["parameters"] = {"p": spec}
    with pytest.raises(ConfigError, match=words):
        parse_tune_config(cfg)


def test_a_run_evaluates_and_tells_the_snapped_points(tmp_path):
    res = tuning.tune(kinds_config(tmp_path, evaluations=16), out=tmp_path / "r", stream=io.StringIO())
    evals = evals_of(tmp_path / "r")
    assert len(evals) == 16 and all(r["status"] == "ok" for r in evals)  # the objective's asserts held
    assert any(r["source"] == "bo" for r in evals)
    for r in evals:
        u = r["u"]
        assert u[0] == int(u[0]) and 10 ** u[1] == pytest.approx(round(10 ** u[1]))
        assert sorted(u[2:5]) == [0.0, 0.0, 1.0]
        assert r["x"]["act"] == ["relu", "tanh", "gelu"][int(np.argmax(u[2:5]))]
    assert isinstance(res["incumbent"]["x"]["layers"], int) and res["incumbent"]["x"]["act"] in ("relu", "tanh",
                                                                                                 "gelu")
    again = tuning.resume(tmp_path / "r", stream=io.StringIO())  # a finished run's results rewritten
    assert again["counts"]["evaluations"] == 16
