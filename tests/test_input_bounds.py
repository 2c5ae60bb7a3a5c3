"""Numeric keys bounded by what a machine can do, and "did you mean" for misspelt
names: each a one-line error (exit 2) before any work."""

import time

import pytest

from mumbo_jax.run import cli, config
from mumbo_jax.run.tune.config import parse_tune_config
from tests.test_tuning import config as tune_config

RUN = '[run]\nproblem = "forrester"\nbudget = 5\n'


@pytest.mark.parametrize("extra, words", [
    ("[run]\nproblem = \"forrester\"\nbudget = 1e300\n", "budget must be <= 1e+12"),
    (RUN.replace("budget = 5", "budget = 5\nseeds = 99999999999999999999"), "seeds must be <= 10000"),
    (RUN.replace("budget = 5", "budget = 5\nmax_evals = 100000000"), "max_evals must be <= 10000"),
    (RUN + "[settings.maximiser]\nn_candidates = 1e9\n", "n_candidates must be an integer"),
    (RUN + "[settings.maximiser]\nn_candidates = 1000000000\n", "n_candidates must be <= 200000"),
    (RUN + "[settings.gstar]\nsamples = 9223372036854775808\n", "samples must be <= 10000"),
    (RUN.replace("forrester", "forester"), "did you mean 'forrester'?"),
    (RUN + 'strategy = "mumob"\n', "did you mean 'mumbo'?"),
    (RUN + "seed = 3\n", "did you mean 'seeds'?"),
    (RUN + "[setings.gstar]\nsamples = 3\n", "did you mean 'settings'?"),
    (RUN + "[settings.maximiser]\nn_candidate = 30\n", "did you mean 'n_candidates'?"),
    (RUN + "[settings.maximser]\nn_candidates = 30\n", "did you mean 'maximiser'?"),
])
def test_run_config_errors(tmp_path, capsys, extra, words):
    path = tmp_path / "c.toml"
    path.write_text(extra)
    t0 = time.perf_counter()
    assert cli.main(["run", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err
    assert time.perf_counter() - t0 < 10
    assert not (tmp_path / "o" / "results.json").exists()


@pytest.mark.parametrize("argv, words", [
    (["--seeds", "100000000"], "seeds must be <= 10000"),
    (["--budget", "1e300"], "budget must be <= 1e+12"),
    (["--max-evals", "99999999999"], "max_evals must be <= 10000"),
])
def test_command_line_overrides_are_bounded(tmp_path, capsys, argv, words):
    t0 = time.perf_counter()
    assert cli.main(["run", "forrester", "--out", str(tmp_path / "o"), *argv]) == 2
    assert words in capsys.readouterr().err and time.perf_counter() - t0 < 10
    assert cli.main(["compare", "compare_currin", "--out", str(tmp_path / "c"), *argv]) == 2
    assert words in capsys.readouterr().err


def test_shipped_config_names_suggested(capsys):
    with pytest.raises(config.ConfigError, match="did you mean 'tune_example'"):
        config.find_config("tune_exmaple")
    assert cli.main(["compare", "compare_curin"]) == 2
    assert "did you mean 'compare_currin'" in capsys.readouterr().err


@pytest.mark.parametrize("change, words", [
    ({"run": {"seed": 10 ** 20}}, "seed must be <= 1e+09"),
    ({"budget": {"evaluations": 10 ** 9}}, "evaluations must be <= 100000"),
    ({"budget": {"cost": 1e300}}, "cost must be <= 1e+12"),
    ({"workers": {"n": 10 ** 6}}, "n must be <= 4096"),
    ({"run": {"strategy": "mumob"}}, "did you mean 'mumbo'?"),
    ({"objective": {"direction": "maximize", "retrys": 2}}, "did you mean 'retries'?"),
    ({"objective": {"direction": "maximze"}}, "did you mean 'maximize'?"),
    ({"fidelity": {"kind": "discrete", "costs": [1.0], "model": "icn"}}, "unknown model 'icn'"),
])
def test_tune_config_errors(change, words):
    with pytest.raises(config.ConfigError, match=words.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")
                       .replace("+", r"\+")):
        parse_tune_config(tune_config(**change))


def test_tune_workers_override_is_bounded(tmp_path):
    from mumbo_jax.run import tune

    with pytest.raises(config.ConfigError, match="--workers must be <= 4096"):
        tune.tune(tune_config(), out=tmp_path / "r", workers=10 ** 7)
    assert not (tmp_path / "r").exists()
