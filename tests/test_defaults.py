"""The library's defaults: the robust rule and the robust recommendation, everywhere a user
meets them (settings, ask/tell, run and tune configs), while the shipped paper configs keep
the paper's MUMBO and the recommendation of their committed runs; and one set of defaults
for the functional API and the loop."""

import inspect

import jax
import numpy as np
import pytest

import mumbo_jax as mj
from mumbo_jax import BOSettings, FitSettings, MaximiserSettings, MCMCSettings
from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import rules
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.gp import marginal
from mumbo_jax.run.config import find_config, load_config, parse_config, settings_from_config
from mumbo_jax.run.tune.config import parse_tune_config


def test_settings_default_to_the_robust_rule_and_recommendation():
    s = BOSettings()
    assert (s.strategy, s.recommendation.rule) == ("robust", "robust")
    rule = rules.rule_for(s)
    assert rule is rules.RULES["robust"] and rule.second_stage is not None  # the guard stage
    assert rules.RULES["mumbo"].second_stage is None  # the paper's rule, unguarded


def test_configs_without_a_strategy_run_the_robust_rule():
    cfg = parse_config({"run": {"problem": "currin", "budget": 50}})
    assert cfg.strategy == "robust"
    assert settings_from_config(cfg).recommendation.rule == "robust"
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
    assert (settings.strategy, settings.recommendation.rule) == ("mumbo", "global")


@pytest.mark.slow  # ~23 s of the default run; the default rule's spend bound over a compiled run
# (tests/test_robust.py) and the robust rule's ask/tell decisions (tests/test_decisions.py,
# currin-robust) stay in CI
def test_asktell_defaults_decide_with_the_guard():
    """One default decision after the design on a problem whose cheap source is
    anti-correlated: the guard's cheap spend bound holds (share 0.5 of the BO spend plus
    one target evaluation) and the recommendation is finite."""
    jax.config.update("jax_enable_x64", True)
    prob = problems.get_problem("unrel_currin_negated")
    settings = BOSettings(gstar={"samples": 5, "grid": 500}, fit={"restarts": 2, "max_iter": 30},
                          maximiser={"n_candidates": 200, "n_starts": 2, "polish_steps": 5})
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


def test_the_functional_api_defaults_are_the_loops():
    """maximise, fit and nuts_samples take their defaults from the records the loop uses:
    a loop rebuilt from the functional pieces runs the loop's algorithm."""
    def defaults(f):
        return {k: p.default for k, p in inspect.signature(f).parameters.items() if p.default is not p.empty}

    m, f, mc = MaximiserSettings(), FitSettings(), MCMCSettings()
    assert BOSettings().maximiser == m and BOSettings().fit == f and BOSettings().mcmc == mc
    got = defaults(mj.maximise)
    assert (got["n_candidates"], got["n_starts"], got["n_steps"], got["learning_rate"], got["boundary_frac"],
            got["local_frac"]) == (m.n_candidates, m.n_starts, m.polish_steps, m.learning_rate, m.boundary_frac,
                                   m.local_frac) == (2000, 8, 40, 0.03, 0.25, 0.25)
    for fit in (mj.fit, mj.fit_params):
        assert (defaults(fit)["n_restarts"], defaults(fit)["max_iter"]) == (f.restarts, f.max_iter) == (2, 50)
    nuts = defaults(marginal.nuts_samples)
    assert (nuts["n_warmup"], nuts["max_doublings"]) == (mc.warmup, mc.max_doublings)


# ----------------------------------------------------------------------------------------------
# Every statement of a default in the docs, the README, the configs' comments, the tutorials and
# the library's docstrings and plot captions agrees with the settings records.

import pathlib  # noqa: E402
import re  # noqa: E402

from mumbo_jax import knobs  # noqa: E402
from mumbo_jax.bo.settings import RECORDS  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
# pages that record committed measurements (each names the settings it ran), not defaults
HISTORY = {"RESULTS.md", "performance.md"}


def _known_defaults() -> dict[str, set]:
    """``{key: {defaults}}`` for ``record.field``, the bare field name (every record's field of
    that name) and its old flat name, from the records' knob metadata; plus ``strategy``."""
    out: dict[str, set] = {"strategy": {BOSettings().strategy}}
    for record, cls in RECORDS.items():
        for k in knobs.fields(cls):
            if k.default is None:
                continue  # "unset" is described in words, never as a literal
            for key in (f"{record}.{k.name}", k.name, k.old):
                if key:
                    out.setdefault(key, set()).add(k.default)
    return out


_VALUE = r"""(?P<v>"[\w.-]+"|'[\w.-]+'|-?\d[\d_.e+-]*)"""
_STOP = r"[^.;\n]"  # a claim stays inside one sentence and one line


def default_claims(text: str, known: dict[str, set]):
    """``(key, value, excerpt)`` for each phrase of ``text`` that ties a literal value of a
    settings key to the word "default": ``key = value`` (the default), by default (key value),
    key (default value), key defaults to value."""
    keys = "|".join(sorted((re.escape(k) for k in known), key=len, reverse=True))
    key = rf"(?<![\w.])`?(?P<k>{keys})`?(?![\w])"
    pair = rf"{key}\s*(?:=|:|\s)\s*`?{_VALUE}`?"
    patterns = [rf"{pair}{_STOP}{{0,24}}?\bdefaults?\b",  # key = value (the default) / ..., by default
                rf"\bdefault{_STOP}{{0,24}}?{pair}",  # by default (key value)
                rf"{key}{_STOP}{{0,12}}?\bdefaults?\s+(?:to\s+|is\s+|=\s*)?`?{_VALUE}"]  # key (default value)
    for pat in patterns:
        for m in re.finditer(pat, text):
            yield m.group("k"), m.group("v").strip("'\""), m.group(0)


def _agrees(value: str, defaults: set) -> bool:
    for d in defaults:
        if isinstance(d, bool) or isinstance(d, str):
            if str(d).lower() == value.lower():
                return True
        else:
            try:
                if float(value.replace("_", "")) == float(d):
                    return True
            except ValueError:
                pass
    return False


def _sources():
    docs = [p for p in (ROOT / "docs").rglob("*.md") if p.name not in HISTORY and "results" not in p.parts
            and "data" not in p.parts]
    return (docs + [ROOT / "README.md"] + sorted((ROOT / "configs").glob("*.toml"))
            + sorted((ROOT / "docs" / "tutorials").glob("*.py")) + sorted((ROOT / "mumbo_jax").rglob("*.py")))


def test_default_claims_finds_the_false_statements_it_guards_against():
    known = _known_defaults()
    false = ["INCUMBENT = \"incumbent: the recommendation; by default (incumbent_rule 'global') the mean\"",
             'settings = mj.BOSettings(strategy="mumbo")  # the library defaults',
             '`recommendation.rule = "mean"` (the default)', "`gstar.samples` (default 5)"]
    for text in false:
        claims = list(default_claims(text, known))
        assert claims and not all(_agrees(v, known[k]) for k, v, _ in claims), text
    true = ['`recommendation.rule = "robust"` (the default)', "gstar.samples (default 10)",
            '`recommendation.rule = "global"` is the maximiser of the mean. The default, `"robust"`, guards it']
    for text in true:
        assert all(_agrees(v, known[k]) for k, v, _ in default_claims(text, known)), text


def test_every_stated_default_is_the_records_default():
    """Pages, README, configs, tutorials, docstrings and plot captions (mumbo_jax/run/plots.py)."""
    known = _known_defaults()
    wrong, found = [], 0
    for path in _sources():
        for key, value, excerpt in default_claims(path.read_text(), known):
            found += 1
            if not _agrees(value, known[key]):
                wrong.append(f"{path.relative_to(ROOT)}: {excerpt!r} (the default of {key} is {known[key]})")
    assert not wrong, "\n".join(wrong)
    assert found >= 4  # the scan reads real statements (README, configs how-to, batches, ask/tell)
