"""Property-based tests: every input to the configuration schema and the public ask/tell
API either works or raises the library's own error (ConfigError / ValueError raised by
mumbo_jax code, one line naming the problem), never an exception from inside JAX, NumPy
or the standard library."""

import copy
import json
import math
import os
import traceback

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mumbo_jax
from mumbo_jax.bo import asktell
from mumbo_jax.run import config as run_config
from mumbo_jax.run.schema import ConfigError
from mumbo_jax.run.tune.config import make_tune_task, parse_tune_config
from tests.test_tuning import config as tune_config

# TOML-like values, the awkward ones included
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10 ** 25, max_value=10 ** 25),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                    st.sampled_from(["mumbo", "forrester", "ei", "icm", "", " ", "discrete", "continuous",
                                     "maximise", "impute"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=8)


PACKAGE_DIR = os.path.dirname(os.path.abspath(mumbo_jax.__file__))


def raised_by_library(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by a line of mumbo_jax (not inside a dependency)."""
    frames = traceback.extract_tb(exc.__traceback__)  # the package's own folder, wherever it is installed
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(PACKAGE_DIR + os.sep)


def check_library_error(call):
    try:
        return call()
    except ConfigError as e:
        assert "\n" not in str(e), str(e)
        return None
    except Exception as e:  # noqa: BLE001 - the property under test
        raise AssertionError(f"{type(e).__name__} from outside the library's checks: {e}") from e


RUN_KEYS = [f.name for f in run_config.RUN.fields] + ["bogus"]
SETTINGS_KEYS = [(s.name.split(".")[1], f.name) for s in run_config.SETTINGS_SECTIONS for f in s.fields]


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(run=st.dictionaries(st.sampled_from(RUN_KEYS), values, max_size=6),
       acq=st.dictionaries(st.sampled_from(SETTINGS_KEYS), values, max_size=3),
       base=st.booleans())
def test_run_config_schema(run, acq, base):
    if base:
        run = {"problem": "forrester", "budget": 5.0, **run}
    data = {"run": run}
    if acq:
        data["settings"] = {}
        for (record, name), value in acq.items():
            data["settings"].setdefault(record, {})[name] = value
    check_library_error(lambda: run_config.parse_config(data))


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(section=st.sampled_from(["objective", "parameters", "fidelity", "budget", "run", "workers", "settings",
                                "bogus"]),
       table=st.dictionaries(st.sampled_from(["low", "high", "log", "kind", "costs", "values", "bounds", "target",
                                              "cost", "evaluations", "seed", "n", "retries", "direction", "a",
                                              "function", "failures", "strategy", "model", "rank", "n_candidates"]),
                             values, max_size=4),
       replace=st.booleans())
def test_tune_config_schema(section, table, replace):
    data = tune_config()
    data[section] = table if replace or section not in data else {**data[section], **table}
    check_library_error(lambda: parse_tune_config(data))


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(compare=st.dictionaries(st.sampled_from(["problem", "budget", "strategies", "seeds", "max_evals", "out",
                                                "model", "bogus"]), values, max_size=5),
       strategies=st.dictionaries(st.text(max_size=6), values, max_size=2))
def test_compare_config_schema(compare, strategies):
    data = {"compare": {"problem": "forrester", "budget": 5.0, "strategies": ["random"], **compare}}
    if strategies:
        data["strategies"] = strategies
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        check_library_error(lambda: run_config.parse_compare_config(data))


# ---------------------------------------------------------------------------- the ask/tell API


@pytest.fixture(scope="module")
def opt_state():
    cfg = parse_tune_config(tune_config())
    opt = asktell.AskTell(make_tune_task(cfg), cfg.settings(), seed=0)
    for y in (0.1, 0.4, 0.3):
        x, z = opt.ask()
        opt.tell(x, z, y)
    return opt, json.loads(json.dumps(opt.state_dict()))


numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10 ** 20, 10 ** 20),
                    st.booleans(), st.text(max_size=3), st.none())
arrays = st.one_of(numbers, st.lists(numbers, max_size=4), st.lists(st.lists(numbers, max_size=3), max_size=2))


def check_value_error(call):
    try:
        call()
    except ValueError as e:
        assert raised_by_library(e), "".join(traceback.format_exception(e))
        assert "\n" not in str(e), str(e)
    except Exception as e:  # noqa: BLE001 - the property under test
        raise AssertionError("".join(traceback.format_exception(e))) from e


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(x=arrays, z=arrays, y=arrays, cost=arrays, what=st.sampled_from(["tell", "tell_failure", "cancel"]))
def test_tell_any_input(opt_state, x, z, y, cost, what):
    opt, state = opt_state
    fresh = asktell.AskTell.from_state(opt.task, opt.settings, state)
    if what == "tell":
        check_value_error(lambda: fresh.tell(x, z, y, cost))
    elif what == "tell_failure":
        check_value_error(lambda: fresh.tell_failure(x, z))
    else:
        check_value_error(lambda: fresh.cancel(x, z))


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(["seed", "x", "z", "y", "costs", "params", "pending", "design_done", "asked_told",
                            "failed", "extra"]),
       index=st.integers(0, 3), value=st.one_of(arrays, values), drop=st.booleans())
def test_from_state_any_field(opt_state, key, index, value, drop):
    opt, state = opt_state
    state = copy.deepcopy(state)
    if drop:
        state.pop(key, None)
    elif isinstance(state.get(key), list) and state[key] and index < len(state[key]):
        state[key][index] = value
    else:
        state[key] = value
    check_value_error(lambda: asktell.AskTell.from_state(opt.task, opt.settings, state))


def test_the_properties_can_fail():
    """The checker itself: an error from inside NumPy is caught as a failure."""
    with pytest.raises(AssertionError):
        check_value_error(lambda: np.zeros(2).reshape(3))
    with pytest.raises(AssertionError):
        check_library_error(lambda: math.sqrt(-1))
