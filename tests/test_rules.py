"""The decision-rule records and their table: derived names, checks, errors."""

import dataclasses
import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import optimize, rules
from mumbo_jax.bo.asktell import AskTell
import mumbo_jax as mj
from mumbo_jax import BOSettings, make_task
from mumbo_jax.gp import models, moments, posterior


BUILTIN = ("mumbo", "mes", "random", "ei", "ucb", "mt_ei", "mf_gp_ucb", "boca", "mtbo")
CONTRIB = ("mf_gibbon", "mf_kg")  # mumbo_jax.rules_contrib, registered on first listing


def test_table_and_derived_names():
    assert rules.STRATEGIES[:len(BUILTIN)] == BUILTIN
    assert set(CONTRIB) <= set(rules.STRATEGIES)
    assert set(rules.USES_GSTAR) >= {"mumbo", "mes", "mf_gibbon"} and "ei" not in rules.USES_GSTAR
    assert [n for n in rules.TARGET_ONLY if n in BUILTIN] == ["mes", "random", "ei", "ucb"]
    assert rules.DISCRETE_ONLY[:1] == ("mf_gp_ucb",) and rules.CONTINUOUS_ONLY[:1] == ("boca",)
    # one home for the names: the re-export modules bo/loop.py and bo/strategies.py are gone
    assert importlib.util.find_spec("mumbo_jax.bo.loop") is None
    assert importlib.util.find_spec("mumbo_jax.bo.strategies") is None
    builtin = {n: rules.RULES[n] for n in BUILTIN}
    assert {n for n, r in builtin.items() if r.second_stage is not None} == {"mt_ei", "mf_gp_ucb", "boca"}
    assert {n for n, r in builtin.items() if r.replays_history} == {"mf_gp_ucb", "boca"}
    # every rule's knobs are its options (issue 42): MUMBO's gain path, the UCB rules' beta, MTBO's three
    assert {n: tuple(r.options) for n, r in builtin.items() if r.options} == {
        "mumbo": ("gain",), "ucb": ("beta",), "mf_gp_ucb": ("beta",), "boca": ("beta",),
        "mtbo": ("samples", "representers", "fantasies")}
    assert rules.RULES["mumbo"].options["gain"] == "table" and rules.RULES["ucb"].options["beta"] is None
    assert dict(rules.RULES["mtbo"].options) == {"samples": 50, "representers": 50, "fantasies": 5}
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
    task = make_task(spec, posterior.task_mean(3), optimize.discrete_fidelities([1.0, 1.0, 1.0]))
    for name in ("ei", "mes", "random", "ucb", "mf_gp_ucb"):
        with pytest.raises(ValueError, match=f"strategy '{name}' needs the target to be one fidelity"):
            rules.check_rule_for_task(name, task)
        with pytest.raises(ValueError, match="needs the target to be one fidelity"):
            AskTell(task, BOSettings(strategy=name))
    for name in ("mumbo", "mt_ei", "mtbo"):
        assert rules.check_rule_for_task(name, task).name == name


def test_settings_checks():
    with pytest.raises(ValueError, match="unknown strategy 'nonsense'"):
        BOSettings(strategy="nonsense")
    with pytest.raises(ValueError, match="gstar.samples must be >= 1"):
        BOSettings(gstar={"samples": 0})
    with pytest.raises(ValueError, match=r"n_starts \(9\) exceeds the number of scored candidates \(8 = n_candidates 8 x 1"):
        BOSettings(maximiser={"n_candidates": 8, "n_starts": 9})
    with pytest.raises(ValueError, match="unknown mumbo option gain 'quad'"):
        BOSettings(options={"mumbo": {"gain": "quad"}})
    with pytest.raises(ValueError, match=r"rule 'ei' has no option 'gain'; its options: none"):
        BOSettings(strategy="ei", options={"ei": {"gain": "simpson"}})
    with pytest.raises(ValueError, match="ucb option beta must be >= 0"):
        BOSettings(strategy="ucb", options={"ucb": {"beta": -1.0}})
    with pytest.raises(ValueError, match="mtbo option representers must be <="):
        BOSettings(strategy="mtbo", options={"mtbo": {"representers": rules.MTBO_POOL + 1}})
    with pytest.raises(ValueError, match="options: unknown rule 'mtb' \\(did you mean 'mtbo'\\?\\)"):
        BOSettings(options={"mtb": {"samples": 3}})
    s = BOSettings(strategy="mumbo", options={"mumbo": {"gain": "simpson"}, "ucb": {"beta": 0.5}})
    assert rules.rule_for(s).options["gain"] == "simpson" and rules.rule_for(BOSettings()).options["gain"] == "table"
    assert s.options["ucb"]["beta"] == 0.5  # another rule's knobs wait for the runs where it decides
    # a value equal to the default is dropped: the same settings, the same programs
    assert BOSettings(options={"mtbo": {"samples": 50}, "ucb": {"beta": None}}) == BOSettings()
    assert hash(s) == hash(BOSettings(strategy="mumbo", options={"ucb": {"beta": 0.5}, "mumbo": {"gain": "simpson"}}))
    with pytest.raises(TypeError, match="read-only"):
        s.options["ucb"] = {}
    # the knobs' old home, RuleSettings: a one-line error that names the new one
    with pytest.raises(TypeError, match=r"rule.ucb_beta is now the option 'beta' of the rules that read it "
                                        r"\(ucb, mf_gp_ucb, boca, robust_mf_gp_ucb\): write options=\{'ucb': "
                                        r"\{'beta': 0.5\}\}"):
        BOSettings(strategy="ucb", rule={"ucb_beta": 0.5})
    with pytest.raises(TypeError, match="rule.mtbo_samples is now the option 'samples'"):
        BOSettings(mtbo_samples=200)
    with pytest.raises(AttributeError, match="RuleSettings is gone: rules' knobs are each rule's Rule.options"):
        mj.RuleSettings
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
    settings = BOSettings(strategy="mf_gp_ucb", maximiser={"n_candidates": 20, "n_starts": 2})
    with pytest.raises(ValueError, match="replays its own BO evaluations: pass n_design"):
        rules.propose(settings, task, post, jnp.zeros(10), None)


# --------------------------------------------------------------------------- robustness levers


def _cheap_outlier_posterior():
    """Currin with 3 target and 6 cheap evaluations; the cheap y at row 5 is far above
    everything, so the best posterior mean of g sits at x[5], never seen at the target."""
    from mumbo_jax.bo import stages
    from tests.bo_helpers import FAST
    prob = problems.get_problem("currin")
    task = tasks.problem_task(prob)
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(9, 2))
    z = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1], float)
    y = np.array([float(problems.objective(prob, jnp.asarray(xi), int(zi))) for xi, zi in zip(x, z)])
    y[5] = 40.0
    buffers = stages.pad_buffers(x, z, y, 16)
    post = stages.fit_stage(FAST, task, buffers, models.default_params(task.spec), jax.random.PRNGKey(0))
    return task, post, x, z, y


def test_incumbent_rules_against_a_direct_argmax():
    from mumbo_jax.bo.incumbent import incumbent_by_rule as incumbent
    task, post, x, z, y = _cheap_outlier_posterior()
    mu, var = (np.asarray(a) for a in moments.target_moments(post, jnp.asarray(x), task.target))
    i_mean, v_mean = incumbent(post, task.target, "mean")
    assert int(i_mean) == int(np.argmax(mu)) == 5
    np.testing.assert_allclose(float(v_mean), mu[5], rtol=1e-10)
    i_tgt, v_tgt = incumbent(post, task.target, "target")  # only rows 0-2 are at the target
    assert int(i_tgt) == int(np.argmax(np.where(z == 0, mu, -np.inf))) and int(i_tgt) < 3
    np.testing.assert_allclose(float(v_tgt), mu[int(i_tgt)], rtol=1e-10)
    i_lcb, _ = incumbent(post, task.target, "lcb")
    assert int(i_lcb) == int(np.argmax(mu - 2 * np.sqrt(var)))
    with pytest.raises(ValueError, match="unknown incumbent_rule .best."):
        incumbent(post, task.target, "best")
    with pytest.raises(ValueError, match="unknown recommendation.rule 'best'"):
        BOSettings(recommendation={"rule": "best"})
    with pytest.raises(ValueError, match="fit: .*unexpected keyword argument 'ftol'"):
        BOSettings(fit={"ftol": 1e-9})  # a removed lever (docs/RESULTS.md) is no field
    with pytest.raises(TypeError, match="protect_target"):
        BOSettings(protect_target=True)
    with pytest.raises(ValueError, match="boundary_frac"):
        BOSettings(maximiser={"boundary_frac": 2.0})
    with pytest.raises(ValueError, match="local_frac"):
        BOSettings(maximiser={"local_frac": -0.5})
    with pytest.raises(ValueError, match="at most 1"):
        BOSettings(maximiser={"local_frac": 0.5, "boundary_frac": 0.75})


def test_global_recommendation_maximises_the_posterior_mean_over_the_box():
    """The "global" rule's x beats the posterior mean of g at every evaluated x and on a
    dense grid of the box (to the grid's resolution); the row rules return the row's x."""
    from mumbo_jax.bo import stages
    task, post, x, z, y = _cheap_outlier_posterior()
    rows = stages.pad_buffers(x, z, y, 16).x
    xg, mg, sg = stages.recommend(task, post, rows, "global")
    u = np.stack(np.meshgrid(np.linspace(0, 1, 201), np.linspace(0, 1, 201)), -1).reshape(-1, 2)
    b = np.asarray(task.spec.bounds)
    grid = b[:, 0] + u * (b[:, 1] - b[:, 0])
    mu_grid, _ = moments.target_moments(post, jnp.asarray(grid), task.target)
    mu_rows, _ = moments.target_moments(post, jnp.asarray(x), task.target)
    mu_x, var_x = moments.target_moments(post, xg[None], task.target)
    np.testing.assert_allclose(float(mg), float(mu_x[0]), rtol=1e-12)
    np.testing.assert_allclose(float(sg), float(np.sqrt(var_x[0])), rtol=1e-10)
    assert float(mg) >= float(np.max(mu_rows)) - 1e-12
    assert float(mg) >= float(np.max(mu_grid)) - 1e-3 * float(np.ptp(mu_grid))
    assert np.all(np.asarray(xg) >= b[:, 0]) and np.all(np.asarray(xg) <= b[:, 1])
    # "global_lcb": the lower bound's maximiser, never below the best row's lower bound
    xl, ml, sl = stages.recommend(task, post, rows, "global_lcb")
    mu_g, var_g = moments.target_moments(post, jnp.asarray(grid), task.target)
    lcb_grid = np.asarray(mu_g) - 2 * np.sqrt(np.maximum(np.asarray(var_g), 0))
    lcb_rows = np.asarray(mu_rows) - 2 * np.sqrt(np.maximum(np.asarray(moments.target_moments(
        post, jnp.asarray(x), task.target)[1]), 0))
    assert float(ml - 2 * sl) >= float(np.max(lcb_rows)) - 1e-9
    assert float(ml - 2 * sl) >= float(np.max(lcb_grid)) - 1e-3 * float(np.ptp(lcb_grid))
    xm, mm, _ = stages.recommend(task, post, rows, "mean")
    np.testing.assert_array_equal(np.asarray(xm), np.asarray(rows[int(np.argmax(mu_rows))]))
    np.testing.assert_allclose(float(mm), float(np.max(mu_rows)), rtol=1e-12)


def test_best_inputs_are_the_top_posterior_means_best_first():
    from mumbo_jax.bo.incumbent import best_inputs
    task, post, x, z, y = _cheap_outlier_posterior()
    mu = np.asarray(moments.target_moments(post, jnp.asarray(x), task.target)[0])
    top = np.argsort(-mu)[:4]
    np.testing.assert_allclose(np.asarray(best_inputs(post, task.target, 4)), x[top], atol=1e-12)
    # more anchors than observations: the padding rows are never chosen, the best repeats
    many = np.asarray(best_inputs(post, task.target, 12))
    np.testing.assert_allclose(many[:9], x[np.argsort(-mu)], atol=1e-12)
    np.testing.assert_allclose(many[9:], np.repeat(x[top[:1]], 3, axis=0), atol=1e-12)


# --------------------------------------------------------------------------- the registry


def _toy_acquisition(ctx):
    return jax.tree_util.Partial(rules.random_alpha, ctx.key)


def test_a_rules_declared_knobs_are_checked_wherever_they_are_set():
    rule = rules.Rule("toy_knob", _toy_acquisition, "target", options={
        "k": rules.option(2, "A count.", low=1, high=9), "mode": rules.option("a", "A choice.", choices=("a", "b")),
        "plain": 0.5})
    assert dict(rule.options) == {"k": 2, "mode": "a", "plain": 0.5} and set(rule.option_fields) == {"k", "mode"}
    with pytest.raises(ValueError, match="toy_knob option k must be <= 9, got 10"):
        rule.with_options(k=10)
    with pytest.raises(ValueError, match="unknown toy_knob option mode 'c'"):
        rule.with_options(mode="c")
    variant = rule.with_options(name="toy_knob_b", mode="b", plain="anything")  # undeclared: not checked
    assert variant.options["mode"] == "b" and dict(variant.option_fields) == dict(rule.option_fields)
    with pytest.raises(ValueError, match="toy_knob option k must be an integer"):
        rules.Rule("toy_knob", _toy_acquisition, options={"k": rules.option(2.5, "A count.", type=int)})
    with pytest.raises(ValueError, match="give type="):
        rules.option(None, "Unset by default.")
    # what a rule sees: its knobs with the run's values over them and the maximiser's settings, not BOSettings
    s = BOSettings(strategy="ucb", options={"ucb": {"beta": 2.0}}, maximiser={"n_starts": 3})
    ctx = rules.Context.from_settings(s, None, None, jnp.zeros(3), jax.random.PRNGKey(0))
    assert dict(ctx.options) == {"beta": 2.0} and ctx.maximiser == s.maximiser and not hasattr(ctx, "settings")
    assert dict(rules.Context.from_settings(BOSettings(strategy="ucb"), None, None, None, None).options) == {
        "beta": None}


def test_register_keeps_every_view_live_and_checks_its_input():
    views = (rules.STRATEGIES, rules.USES_GSTAR, rules.TARGET_ONLY, rules.DISCRETE_ONLY, rules.CONTINUOUS_ONLY)
    before = [tuple(v) for v in views]
    rule = rules.register(rules.Rule("toy_target_discrete", _toy_acquisition, "target", uses_gstar=True,
                                     kinds=("discrete",), options={"k": 2}))
    try:
        after = [tuple(v) for v in views]
        assert all(a == b + ("toy_target_discrete",) for a, b in zip(after, before[:4]))
        assert after[4] == before[4]
        assert "toy_target_discrete" in rules.TARGET_ONLY and rules.TARGET_ONLY == before[2] + ("toy_target_discrete",)
        assert rules.check_rule("toy_target_discrete", discrete=True) is rule
        with pytest.raises(ValueError, match="needs discrete fidelities"):
            rules.check_rule("toy_target_discrete", discrete=False)
        assert dict(rule.options) == {"k": 2}
        with pytest.raises(TypeError):
            rule.options["k"] = 3  # read-only: a variant is another record
        variant = rule.with_options(name="toy_target_discrete_k5", k=5)
        assert variant.options["k"] == 5 and rule.options["k"] == 2 and variant.name != rule.name
        with pytest.raises(ValueError, match="has no option 'j'"):
            rule.with_options(j=1)
    finally:
        rules.unregister("toy_target_discrete")
    assert [tuple(v) for v in views] == before
    with pytest.raises(ValueError, match="snake_case"):
        rules.Rule("mt-ei2", _toy_acquisition)
    with pytest.raises(ValueError, match="acquisition must be callable"):
        rules.Rule("toy", None)
    with pytest.raises(TypeError, match="expects a Rule"):
        rules.register("mumbo")
    with pytest.raises(ValueError, match="already registered"):
        rules.register(dataclasses.replace(rules.RULES["ei"], summary="another ei"))
    assert rules.register(rules.RULES["ei"]) is rules.RULES["ei"]  # the same record: a no-op
    with pytest.raises(ValueError, match="built-in rule"):
        rules.unregister("mumbo")


def test_compare_labels_use_the_rule_names_and_the_old_spellings_warn():
    from mumbo_jax.run import config

    base = {"compare": {"problem": "forrester", "budget": 30}}
    names = [n for n in rules.STRATEGIES if "discrete" in rules.RULES[n].kinds]  # forrester's kind
    cfg = config.parse_compare_config({"compare": {**base["compare"], "strategies": names}})
    assert all(cfg.settings[name].strategy == name for name in names) and "mt_ei" in names
    assert cfg.settings["mes"].gstar.samples == 10 and cfg.settings["mf_kg"].strategy == "mf_kg"
    with pytest.warns(DeprecationWarning) as caught:
        old = config.parse_compare_config({"compare": {**base["compare"], "strategies": ["mt-ei", "mf-gp-ucb"]}})
    assert [str(w.message) for w in caught] == [
        "compare label 'mt-ei' is deprecated; use the rule's own name 'mt_ei'",
        "compare label 'mf-gp-ucb' is deprecated; use the rule's own name 'mf_gp_ucb'"]
    assert old.settings["mt-ei"].strategy == "mt_ei" and old.settings["mf-gp-ucb"].strategy == "mf_gp_ucb"
    assert set(config.DEPRECATED_LABELS) <= set(config.STRATEGY_PRESETS)


def test_an_installed_package_registers_rules_through_the_entry_point_group(tmp_path):
    """A distribution declaring ``[mumbo_jax.rules]`` entry points: its rule is listed by
    ``mumbo-jax list`` in a fresh process; a plug-in that fails to import is reported
    with a RuntimeWarning and hides nothing else."""
    import os
    import subprocess
    import sys

    dist = tmp_path / "fake_rules-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-rules\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{rules.ENTRY_POINT_GROUP}]\ngood = fake_rule_mod\nbad = missing_mod\n")
    (tmp_path / "fake_rule_mod.py").write_text(
        "import jax\n"
        "from mumbo_jax import Rule, register_rule\n"
        "from mumbo_jax.bo.rules import random_alpha\n"
        "register_rule(Rule('plugin_random', lambda ctx: jax.tree_util.Partial(random_alpha, ctx.key), 'target'))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    proc = subprocess.run([sys.executable, "-W", "always::RuntimeWarning", "-m", "mumbo_jax", "list"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "  plugin_random" in proc.stdout and "  mf_kg" in proc.stdout
    assert "rule plug-in 'bad' (missing_mod) failed to load" in proc.stderr
