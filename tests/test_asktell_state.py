"""AskTell.from_state checks a state field by field, naming the field."""

import copy
import json

import numpy as np
import pytest

from mumbo_jax.bo import asktell
from mumbo_jax.run.tune.config import make_tune_task, parse_tune_config
from tests.test_tuning import config


@pytest.fixture(scope="module")
def saved():
    cfg = parse_tune_config(config())
    opt = asktell.AskTell(make_tune_task(cfg), cfg.settings(), seed=0)
    for y in (0.1, 0.4):
        x, z = opt.ask()
        opt.tell(x, z, y)
    x, z = opt.ask()  # pending
    x2, z2 = opt.ask()
    opt.tell_failure(x2, z2)
    return opt, json.loads(json.dumps(opt.state_dict()))


def restore(opt, state):
    return asktell.AskTell.from_state(opt.task, opt.settings, state)


def test_a_good_state_round_trips(saved):
    opt, state = saved
    back = restore(opt, state)
    assert back.state_dict() == opt.state_dict()


def _set(path, value):
    def change(state):
        target = state
        for k in path[:-1]:
            target = target[k]
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return change


@pytest.mark.parametrize("change, words", [
    (_set(["y"], []), "state['y'] has 0 entries but state['x'] has 2 rows"),
    (_set(["seed"], KeyError), "state is missing 'seed'"),
    (_set(["params"], KeyError), "state is missing 'params'"),
    (_set(["seed"], 1.5), "state['seed'] must be an integer, got float 1.5"),
    (_set(["seed"], True), "state['seed'] must be an integer"),
    (_set(["seed"], -1), "state['seed'] must be in [0, 2**32)"),
    (_set(["x", 1], [0.0]), "state['x'][1]"),
    (_set(["x", 0, 0], 50.0), "outside the search box"),
    (_set(["z", 0], 7), "fidelity 7 does not exist"),
    (_set(["y", 1], "0.3"), "state['y'][1] must be a real number"),
    (_set(["y", 1], float("nan")), "state['y'][1] must be finite"),
    (_set(["costs", 0], -1.0), "state['costs'][0] must be > 0"),
    (_set(["x"], "abc"), "state['x'] must be a list"),
    (_set(["pending", 0], 3), "state['pending'][0] must be a dict"),
    (_set(["pending", 0, "design_index"], 99), "state['pending'][0]['design_index'] must be <"),
    (_set(["design_done", 0], 99), "state['design_done'][0] must be <"),
    (_set(["failed", 0], [1.0]), "state['failed'][0] must be a pair"),
    (_set(["params"], {"x": 1}), "state['params'] must be a dict with the model's keys"),
    (_set(["bogus"], 1), "unknown keys ['bogus']"),
])
def test_bad_states_name_the_field(saved, change, words):
    opt, state = saved
    state = copy.deepcopy(state)
    change(state)
    with pytest.raises(ValueError) as e:
        restore(opt, state)
    assert words in str(e.value), str(e.value)


def test_bad_params_shapes_and_values(saved):
    opt, state = saved
    key = sorted(state["params"])[0]
    for value, words in (([1.0] * 99, "must have shape"), ("x", "must be numbers"),
                         (np.full(np.shape(state["params"][key]), np.inf).tolist(), "must be finite")):
        bad = copy.deepcopy(state)
        bad["params"][key] = value
        with pytest.raises(ValueError, match=words):
            restore(opt, bad)


def test_not_a_dict_and_constructor_seed(saved):
    opt, _ = saved
    with pytest.raises(ValueError, match="state must be a dict"):
        restore(opt, [1, 2])
    with pytest.raises(ValueError, match="seed must be an integer, got float 1.5"):
        asktell.AskTell(opt.task, opt.settings, seed=1.5)
    assert asktell.AskTell(opt.task, opt.settings, seed=np.int64(3)).seed == 3


def test_many_evaluations_warn_once(saved):
    import warnings

    opt, _ = saved
    fresh = asktell.AskTell(opt.task, opt.settings, seed=0)
    rng = np.random.default_rng(0)
    b = np.asarray(opt.task.spec.bounds)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(asktell.LARGE_N + 5):
            fresh.tell(b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=len(b)), 0, float(rng.normal()))
    large = [w for w in seen if issubclass(w.category, asktell.LargeDataWarning)]
    assert len(large) == 1 and "n^2" in str(large[0].message) and "refit_growth" in str(large[0].message)
