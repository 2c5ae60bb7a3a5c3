"""Run configurations: strict validation (before any JAX work) and the shipped configs."""

import dataclasses
import warnings
from pathlib import Path

import pytest

from mumbo_jax import BOSettings, FitSettings, GstarSettings, MaximiserSettings
from mumbo_jax.benchmarks import problems
from mumbo_jax.bo.settings import old_keys
from mumbo_jax.run.config import ConfigError, RunConfig, load_config, parse_config, settings_from_config
from mumbo_jax.run.settings_config import upgrade_record

# the benchmark run configs (compare_*.toml and tune_*.toml are tested with their commands)
CONFIGS = sorted(p for p in (Path(__file__).resolve().parents[1] / "configs").glob("*.toml")
                 if p.stem in problems.PROBLEMS)

VALID = """\
[run]
problem = "currin"
strategy = "mes"
budget = 50
seeds = 4
max_evals = 30
model = "ar1"
out = "somewhere/else"

[settings.gstar]
samples = 3
method = "exact"
grid = 500

[settings.maximiser]
n_candidates = 300
n_starts = 5
polish_steps = 7
learning_rate = 0.1

[settings.fit]
restarts = 2
max_iter = 11
"""


def write(tmp_path, text, name="cfg.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def minimal(**run):
    """TOML text of a [run] section with problem and budget plus ``run``."""
    keys = {"problem": '"forrester"', "budget": "10", **run}
    return "[run]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items())


def test_valid_round_trip(tmp_path):
    cfg = load_config(write(tmp_path, VALID))
    assert isinstance(cfg, RunConfig)
    assert (cfg.problem, cfg.strategy, cfg.budget, cfg.seeds, cfg.max_evals, cfg.model, cfg.out) == (
        "currin", "mes", 50.0, 4, 30, "ar1", "somewhere/else")
    assert isinstance(cfg.budget, float)
    assert cfg.seed_list == [0, 1, 2, 3]
    settings = settings_from_config(cfg)
    assert settings == BOSettings(strategy="mes", gstar=GstarSettings(samples=3, method="exact", grid=500),
                                  maximiser=MaximiserSettings(n_candidates=300, n_starts=5, polish_steps=7,
                                                              learning_rate=0.1),
                                  fit=FitSettings(restarts=2, max_iter=11))
    # to_dict -> parse_config gives the same config back
    again = parse_config(cfg.to_dict(), source=cfg.source)
    assert again == cfg
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.budget = 3.0


def test_defaults_and_default_out(tmp_path):
    cfg = load_config(write(tmp_path, minimal(), name="my_study.toml"))
    assert cfg.out == str(Path("runs") / "my_study")
    assert (cfg.strategy, cfg.seeds, cfg.model) == ("robust", 1, None)
    assert settings_from_config(cfg) == BOSettings()  # no [settings]: the defaults


def test_replace_overrides_are_validated(tmp_path):
    cfg = load_config(write(tmp_path, minimal()))
    new = cfg.replace(seeds=7, out="x/y")
    assert (new.seeds, new.out, new.problem) == (7, "x/y", "forrester")
    assert cfg.replace(seeds=None, out=None) == cfg
    with pytest.raises(ConfigError, match="seeds"):
        cfg.replace(seeds=0)


@pytest.mark.parametrize("text, words", [
    # unknown section / key: names it and lists what is allowed
    ("[run]\nproblem='forrester'\nbudget=1\n[setings.gstar]\nsamples=2\n", ["setings", "[run]", "[settings]"]),
    (minimal(budgt="1"), ["'budgt'", "[run]", "budget", "max_evals"]),
    (minimal() + "[settings.gstar]\nsampels = 3\n", ["'sampels'", "[settings.gstar]", "samples", "method"]),
    (minimal() + "[settings.gstr]\nsamples = 3\n", ["'gstr'", "gstar", "[settings.fit]"]),
    (minimal() + "[settings]\nstrategy = 'mes'\n", ["strategy", "[run]"]),
    (minimal() + "[settings]\nfit = 3\n", ["fit", "table", "restarts"]),
    ("problem = 'forrester'\n", ["'problem'", "[run]"]),
    # wrong types: key, expected type, what was given
    (minimal(budget='"abc"'), ["budget", "number", "string", "abc"]),
    (minimal(seeds="2.5"), ["seeds", "integer", "float", "2.5"]),
    (minimal(seeds="true"), ["seeds", "integer", "boolean"]),
    (minimal(max_evals="[1, 2]"), ["max_evals", "integer", "array"]),
    (minimal(problem="3"), ["problem", "string", "integer"]),
    (minimal() + "[settings.maximiser]\nn_candidates = 10.0\n", ["n_candidates", "integer", "float"]),
    (minimal() + "[settings.maximiser]\nlearning_rate = 'fast'\n", ["learning_rate", "number", "string"]),
    (minimal() + "[settings.fit]\nrestarts = false\n", ["[settings.fit] restarts", "integer", "boolean"]),
    ("run = 3\n", ["'run'", "section", "integer"]),
    # unknown names: what is allowed
    (minimal(problem='"forester"'), ["forester", "forrester", "hartmann6", "currin_continuous"]),
    (minimal(strategy='"nonsense"'), ["nonsense", "mumbo", "mes", "random"]),
    (minimal(model='"product"'), ["product", "icm", "ar1"]),
    (minimal(problem='"currin_continuous"', model='"icm"'), ["icm", "product", "fabolas"]),
    (minimal() + "[settings.gstar]\nmethod = 'magic'\n", ["method", "magic", "gumbel", "exact"]),
    # values
    (minimal(budget="0"), ["budget", "> 0"]),
    (minimal(budget="-5.0"), ["budget", "> 0"]),
    (minimal(budget="inf"), ["budget"]),
    (minimal(budget="nan"), ["budget"]),
    (minimal(seeds="0"), ["seeds", ">= 1"]),
    (minimal(max_evals="-1"), ["max_evals", ">= 1"]),
    (minimal(out='""'), ["out"]),
    (minimal() + "[settings.gstar]\nsamples = 0\n", ["[settings.gstar] samples", ">= 1"]),
    (minimal() + "[settings.maximiser]\nlearning_rate = -0.1\n", ["learning_rate", "> 0"]),
    (minimal() + "[settings.maximiser]\nn_candidates = 10\nn_starts = 20\n", ["n_starts", "n_candidates"]),
    (minimal() + "[settings.mcmc]\nsamples = 4\n[settings.batch]\nsize = 2\n", ["mcmc.samples", "batch.size"]),
    # missing
    ("[settings.gstar]\nsamples = 2\n", ["[run]"]),
    ("[run]\nproblem = 'forrester'\n", ["budget", "required"]),
    ("[run]\nbudget = 3\n", ["problem", "required"]),
])
def test_invalid_configs_name_the_key(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: ")
    for word in words:
        assert word in msg, (word, msg)
    assert "\n" not in msg
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("text", ["[run\nproblem = 'x'\n", "[run]\nbudget = \n", "[run]\nbudget = 1\nbudget = 2\n"])
def test_malformed_toml_names_the_file(tmp_path, text):
    path = write(tmp_path, text, name="broken.toml")
    with pytest.raises(ConfigError, match="broken.toml: invalid TOML: .*line"):
        load_config(path)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="nope.toml: config file not found"):
        load_config(tmp_path / "nope.toml")


def test_budget_int_is_float_and_gstar_grid_optional(tmp_path):
    cfg = load_config(write(tmp_path, minimal(budget="7") + "[settings.maximiser]\nlearning_rate = 1\n"))
    assert cfg.budget == 7.0 and isinstance(cfg.budget, float)
    settings = settings_from_config(cfg)
    assert settings.maximiser.learning_rate == 1.0 and isinstance(settings.maximiser.learning_rate, float)
    assert settings.gstar.grid is None
    assert MaximiserSettings(learning_rate=1).learning_rate == 1.0  # Python: an int for a float field too


def test_dotted_keys_and_sub_tables_are_the_same_settings(tmp_path):
    a = load_config(write(tmp_path, minimal() + "[settings]\nfit.restarts = 4\ngstar = {samples = 3}\n", "a.toml"))
    b = load_config(write(tmp_path, minimal() + "[settings.fit]\nrestarts = 4\n[settings.gstar]\nsamples = 3\n",
                          "b.toml"))
    assert settings_from_config(a) == settings_from_config(b) == BOSettings(fit=FitSettings(restarts=4),
                                                                            gstar=GstarSettings(samples=3))


def test_old_flat_keys_load_with_a_warning_naming_the_new_key(tmp_path):
    """Configurations written before the settings were grouped: an [acquisition] table
    and flat keys load as the new keys, each with a DeprecationWarning naming it."""
    old = minimal() + "[acquisition]\nfit_restarts = 3\nn_gstar = 4\nincumbent_rule = 'mean'\n"
    with pytest.warns(DeprecationWarning) as record:
        cfg = load_config(write(tmp_path, old))
    messages = " ".join(str(w.message) for w in record)
    for text in ("[acquisition] is deprecated", "fit_restarts is deprecated; use restarts in [settings.fit]",
                 "n_gstar is deprecated; use samples in [settings.gstar]",
                 "incumbent_rule is deprecated; use rule in [settings.recommendation]"):
        assert text in messages, (text, messages)
    new = BOSettings(fit=FitSettings(restarts=3), gstar=GstarSettings(samples=4), recommendation={"rule": "mean"})
    assert settings_from_config(cfg) == new
    with pytest.warns(DeprecationWarning, match="n_gstar is deprecated"):  # a flat key in [settings] too
        assert settings_from_config(load_config(write(tmp_path, minimal() + "[settings]\nn_gstar = 4\n"))).gstar \
            == GstarSettings(samples=4)
    with pytest.raises(ConfigError, match="n_gstar must be >= 1"):  # checked as the new key
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            load_config(write(tmp_path, minimal() + "[acquisition]\nn_gstar = 0\n"))


def test_removed_levers_load_only_off(tmp_path):
    with pytest.warns(DeprecationWarning, match="protect_target was removed"):
        cfg = load_config(write(tmp_path, minimal() + "[acquisition]\nprotect_target = false\nfit_ftol = 0.0\n"))
    assert settings_from_config(cfg) == BOSettings()
    with pytest.raises(ConfigError, match=r"batch_polish was removed .*\(git checkout ablation-levers\)"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            load_config(write(tmp_path, minimal() + "[acquisition]\nbatch_polish = true\n"))


def test_the_suites_problems_have_configs():
    """The studies run a suite's problems by their configs (a config is optional for
    any other registered problem)."""
    names = {p.stem for p in CONFIGS}
    assert {n for suite in problems.SUITES.values() for n in suite} <= names


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_shipped_configs_validate(path):
    cfg = load_config(path)
    assert cfg.problem == path.stem
    assert cfg.strategy == "mumbo"
    assert cfg.out == str(Path("runs") / path.stem)
    settings_from_config(cfg)
    # each file says what it reproduces in a comment at the top
    assert path.read_text().lstrip().startswith("#")


PAPER_BUDGETS = {"forrester": 200, "currin": 200, "hartmann3": 1500, "hartmann6": 6000, "borehole": 200}


@pytest.mark.parametrize("name, budget", sorted(PAPER_BUDGETS.items()))
def test_shipped_budgets_are_the_papers(name, budget):
    assert load_config(Path(CONFIGS[0].parent) / f"{name}.toml").budget == budget


def test_results_written_before_the_records_upgrade_for_resume():
    """compare --resume reads the flat settings of an older results.json as today's records
    (a removed lever that was on cannot be read: None, so the strategy reruns)."""
    s = BOSettings(strategy="mes", gstar=GstarSettings(samples=3), recommendation={"rule": "mean"})
    flat = {"strategy": "mes", "fit_ftol": 0.0, "protect_target": False}
    for old, (record, name) in old_keys().items():
        flat[old] = getattr(getattr(s, record), name)
    # the flat records predate warm-only refits: read with fit.warm_from = 0 (and no ftol
    # test in warm refits), as written
    as_written = {**dataclasses.asdict(s), "fit": {**dataclasses.asdict(s)["fit"], "warm_from": 0, "warm_ftol": 0.0}}
    assert upgrade_record(flat) == as_written
    assert upgrade_record(dataclasses.asdict(s)) == dataclasses.asdict(s)
    assert upgrade_record({**flat, "protect_target": True}) is None
    # a nested record written before fit.warm_from and its companions existed: the values
    # that keep its writer's behaviour (every refit full), not today's warm_from default
    older = dataclasses.asdict(s)
    for added in ("warm_from", "cold_every", "warm_iter", "warm_ftol"):
        del older["fit"][added]
    upgraded = upgrade_record(older)
    assert upgraded["fit"]["warm_from"] == 0 != s.fit.warm_from
    assert upgraded == as_written
    # one written with warm-only refits but before their ftol test: all warm_iter iterations
    del older["fit"]
    older["fit"] = {k: v for k, v in dataclasses.asdict(s)["fit"].items() if k != "warm_ftol"}
    assert upgrade_record(older)["fit"] == {**dataclasses.asdict(s)["fit"], "warm_ftol": 0.0}


def test_rules_knobs_in_a_config_and_their_old_home():
    """[settings.options.<rule>] tables set rules' knobs (each rule's Rule.options); the
    keys of the RuleSettings of before are a one-line error naming the new home, and an
    older results.json's record reads as the options its strategy read."""
    from mumbo_jax.bo import rules
    base = {"problem": "forrester", "budget": 10.0, "strategy": "mtbo"}
    cfg = parse_config({"run": base, "settings": {"options": {"mtbo": {"samples": 200}, "ucb": {"beta": 0.5}}}})
    s = settings_from_config(cfg)
    assert rules.rule_for(s).options["samples"] == 200 and s.options["ucb"]["beta"] == 0.5
    assert parse_config(cfg.to_dict(), source=cfg.source) == cfg
    with pytest.raises(ConfigError, match=r"rule.mtbo_samples is now the option 'samples' of the rules that read it "
                                          r"\(mtbo\): write \[settings.options.mtbo\] samples = 200"):
        parse_config({"run": base, "settings": {"rule": {"mtbo_samples": 200}}})
    with pytest.raises(ConfigError, match="rule.ucb_beta is now the option 'beta'"):
        parse_config({"run": base, "settings": {"ucb_beta": 0.5}})
    with pytest.raises(ConfigError, match=r"\[settings.options.mtbo\] representers must be <= 2000"):
        parse_config({"run": base, "settings": {"options": {"mtbo": {"representers": 5000}}}})
    with pytest.raises(ConfigError, match=r"unknown key 'beta' in \[settings.options.mtbo\]"):
        parse_config({"run": base, "settings": {"options": {"mtbo": {"beta": 1.0}}}})
    old = dataclasses.asdict(BOSettings(strategy="mtbo"))
    del old["options"]
    old["rule"] = {"gain": None, "ucb_beta": 0.5, "mtbo_samples": 200, "mtbo_representers": 50, "mtbo_fantasies": 5}
    assert upgrade_record(old) == dataclasses.asdict(BOSettings(strategy="mtbo", options={"mtbo": {"samples": 200}}))


def test_run_resume_reads_a_results_json_written_before_the_records(tmp_path):
    import json

    from mumbo_jax.run import runner

    old = {"run": {"problem": "forrester", "budget": 10.0, "strategy": "mumbo", "seeds": 1, "out": "x"},
           "acquisition": {"n_gstar": 3, "fit_restarts": 1}}
    (tmp_path / runner.RESULTS_NAME).write_text(json.dumps({"config": old, "seeds": [{"seed": 0}]}))
    same = parse_config({"run": {**old["run"], "seeds": 2}, "settings": {"gstar": {"samples": 3},
                                                                          "fit": {"restarts": 1}}})
    assert runner.previous_seeds(same, tmp_path, resume=True, force=False) == [{"seed": 0}]
    other = parse_config({"run": old["run"], "settings": {"gstar": {"samples": 4}, "fit": {"restarts": 1}}})
    with pytest.raises(ConfigError, match=r"\[settings\] gstar differ"):
        runner.previous_seeds(other, tmp_path, resume=True, force=False)


def test_the_tests_fast_tables_load_as_fast(tmp_path):
    """tests/bo_helpers.FAST_TOML (+ its recommendation table) is FAST as config tables:
    the config-file tests compile the programs the in-process tests compile."""
    from tests.bo_helpers import FAST, FAST_RECOMMENDATION_TOML, FAST_TOML

    cfg = load_config(write(tmp_path, minimal(strategy='"mumbo"') + FAST_TOML + FAST_RECOMMENDATION_TOML))
    settings = settings_from_config(cfg)
    for record in ("strategy", "gstar", "maximiser", "fit", "recommendation"):
        assert getattr(settings, record) == getattr(FAST, record), record
