"""A batch rule and a recommendation rule registered at run time, as a user writes them
(the rule in a few lines, ``register``, nothing else in the library changed), are
accepted everywhere at once: the settings, the config schema and ``config-help``,
``mumbo-jax list``, the compiled batch step, ask/tell's recommendation and
``mumbo-jax run``."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import batch, incumbent, stages
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.settings import BOSettings
from mumbo_jax.gp import marginal, posterior
from mumbo_jax.run import cli
from mumbo_jax.run.settings_config import SETTINGS_SECTIONS
from tests.bo_helpers import FAST, FAST_TOML, drive, with_

BATCH = "independent"
LATEST = "latest"


def independent(ctx: batch.BatchContext):
    """Slot k: the sequential rule's proposal on the same posterior with the maximiser key
    ``fold_in(key, k)`` (no fantasies: slots repeat where the maximiser does)."""
    props = [batch.propose(ctx, jax.random.fold_in(ctx.key, k)) for k in range(ctx.q)]
    return jax.tree_util.tree_map(lambda *a: jnp.stack([jnp.asarray(v) for v in a]), *props)


def latest_row(post, target):
    """The most recent evaluated row and the posterior mean of g there."""
    mask = marginal.first(post).mask
    i = jnp.max(jnp.where(mask > 0, jnp.arange(mask.shape[0]), -1))
    mu, _ = marginal.target_moments(post, posterior.evaluated_inputs(post), target)
    return i, mu[i]


@pytest.fixture
def toys():
    assert BATCH not in batch.BATCH_RULES and LATEST not in incumbent.INCUMBENT_RULES
    b = batch.register(batch.BatchRule(BATCH, independent, summary="slots drawn independently (a toy)"))
    r = incumbent.register(incumbent.IncumbentRule(LATEST, latest_row, summary="the last evaluated x (a toy)"))
    yield b, r
    batch.unregister(BATCH)
    incumbent.unregister(LATEST)
    assert BATCH not in batch.BATCH_RULES and LATEST not in incumbent.INCUMBENT_RULES


def test_registered_rules_are_in_every_list_at_once(toys):
    b, r = toys
    assert batch.BATCH_RULES[BATCH] is b and list(batch.BATCH_RULES)[-1] == BATCH
    assert incumbent.INCUMBENT_RULES[LATEST] is r and LATEST not in incumbent.GLOBAL_RULES
    s = BOSettings(strategy="ei", batch={"size": 2, "rule": BATCH}, recommendation={"rule": LATEST})
    assert (s.batch.rule, s.recommendation.rule) == (BATCH, LATEST)
    sections = {section.name: section for section in SETTINGS_SECTIONS}
    assert BATCH in sections["settings.batch"].field("rule").allowed()
    assert LATEST in sections["settings.recommendation"].field("rule").allowed()
    assert f'"{BATCH}"' in cli.config_help("run") and f'"{LATEST}"' in cli.config_help("run")
    listing = cli.list_text()
    assert f"  {BATCH}" in listing.split("batch rules")[1] and f"  {LATEST}" in listing.split("recommendation")[1]
    # the same record again is harmless; another under the name, or removing a built-in, is refused
    assert batch.register(b) is b and incumbent.register(r) is r
    with pytest.raises(ValueError, match=f"a batch rule named '{BATCH}' is already registered"):
        batch.register(batch.BatchRule(BATCH, independent, summary="another"))
    with pytest.raises(ValueError, match="built-in"):
        incumbent.unregister("mean")
    with pytest.raises(ValueError, match="snake_case"):
        batch.BatchRule("my-rule", independent)


def test_the_toy_batch_rule_in_the_compiled_batch_step(toys):
    prob = problems.get_problem("forrester")
    opt = AskTell(tasks.problem_task(prob), FAST, seed=4)
    drive(opt, prob, 1)
    opt.ask()
    _, post, buffers = opt.last_fit
    gstar = stages.gstar_stage(FAST, opt.task, post, jax.random.PRNGKey(11))
    n_design, key = stages.as_count(opt.n_design), jax.random.PRNGKey(3)
    props = stages.batch_stage(with_(FAST, batch={"size": 2, "rule": BATCH}), opt.task, post, gstar, key, buffers,
                              stages.as_count(len(opt.x)), n_design)
    assert props.x.shape == (2, 1) and props.z.shape == (2,)
    for k in range(2):  # each slot is the sequential step with its own key
        ref = stages.maximise_stage(FAST, opt.task, post, gstar, jax.random.fold_in(key, k), None, n_design)
        np.testing.assert_allclose(props.x[k], ref.x, atol=1e-9)
        assert props.z[k] == ref.z


def test_the_toy_recommendation_through_ask_tell(toys):
    prob = problems.get_problem("forrester")
    opt = AskTell(tasks.problem_task(prob), with_(FAST, recommendation={"rule": LATEST}), seed=0)
    drive(opt, prob, 1)
    x, mu, sd = opt.recommendation()
    np.testing.assert_array_equal(x, np.asarray(opt.x[-1]))
    assert np.isfinite(mu) and sd >= 0.0


def test_both_toys_through_mumbo_jax_run(toys, tmp_path):
    cfg = tmp_path / "run.toml"
    cfg.write_text(f"""
[run]
problem = "forrester"
budget = 15
strategy = "ei"
max_evals = 2
out = "{tmp_path / 'run'}"
[settings.batch]
size = 2
rule = "{BATCH}"
[settings.recommendation]
rule = "{LATEST}"
""" + FAST_TOML)
    assert cli.main(["run", str(cfg)]) == 0
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["complete"] and res["settings"]["batch"]["rule"] == BATCH
    assert res["settings"]["recommendation"]["rule"] == LATEST
    seed = res["seeds"][0]
    assert seed["n_evals"] == len(seed["evaluations"]) == 2
