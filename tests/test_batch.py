"""Synchronous batches: q evaluations per step of the compiled loop.

The believer's slots are rebuilt independently (the sequential maximiser on the
posterior conditioned by ``stages.believe_stage``), GIBBON's slot gains against the
dense batch gain (``gibbon.gibbon_batch_gain``: log-det of the joint correlation), and
the compiled loop's bookkeeping against the recorded evaluations."""

import json

import jax
import numpy as np
import pytest

from mumbo_jax.acquisition import gibbon
from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import batch, stages
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.incumbent import N_ANCHORS, best_inputs
from mumbo_jax.bo.settings import BOSettings
from mumbo_jax.bo.compiled import run_compiled
from mumbo_jax.run import config
from tests.bo_helpers import FAST, drive, with_


@pytest.fixture(scope="module")
def fitted():
    """A Forrester optimiser after its design and 3 BO steps: (task, post, buffers, n, n_design, gstar).
    ``n_design`` is an int32 count as the drivers pass it (:func:`stages.as_count`), so the
    maximiser calls below run the programs ask/tell compiled here, not new ones."""
    prob = problems.get_problem("forrester")
    opt = AskTell(tasks.problem_task(prob), FAST, seed=4)
    drive(opt, prob, 3)
    opt.ask()
    _, post, buffers = opt.last_fit
    gstar = stages.gstar_stage(FAST, opt.task, post, jax.random.PRNGKey(11))
    return opt.task, post, buffers, len(opt.x), stages.as_count(opt.n_design), gstar


def test_believer_slots_are_the_sequential_decisions_on_fantasised_posteriors(fitted):
    task, post, buffers, n, n_design, gstar = fitted
    key = jax.random.PRNGKey(3)
    props = stages.batch_stage(with_(FAST, batch={"size": 3, "rule": "believer"}), task, post, gstar, key, buffers,
                              stages.as_count(n), n_design)
    assert props.x.shape == (3, 1) and props.z.shape == (3,)
    first = stages.maximise_stage(FAST, task, post, gstar, key, None, n_design)
    np.testing.assert_array_equal(props.x[0], first.x)  # slot 0: the sequential step exactly
    assert props.z[0] == first.z
    fantasised = post
    for k in (1, 2):
        fantasised = stages.believe_stage(task, post, buffers, n, np.asarray(props.x[:k]), np.asarray(props.z[:k]))
        ref = stages.maximise_stage(FAST, task, fantasised, gstar, jax.random.fold_in(key, k), None, n_design)
        np.testing.assert_allclose(props.x[k], ref.x, atol=1e-6)
        assert props.z[k] == ref.z
    # believing a point removes (most of) its own information: no slot repeats the last
    assert not np.allclose(props.x[1], props.x[0], atol=1e-4) or props.z[1] != props.z[0]


def test_gibbon_slot_gains_add_up_to_the_dense_batch_gain(fitted):
    task, post, buffers, n, n_design, gstar = fitted
    props = stages.batch_stage(with_(FAST, batch={"size": 4, "rule": "gibbon"}), task, post, gstar,
                              jax.random.PRNGKey(5), buffers, stages.as_count(n), n_design)
    z = np.asarray(props.z).astype(int)
    dense = gibbon.gibbon_batch_gain(post, props.x, z, task.target, gstar)
    np.testing.assert_allclose(float(np.sum(props.alpha)), float(dense), rtol=1e-6, atol=1e-9)
    cost = np.asarray(task.space.cost(z))
    # the last slot's score is the whole batch's gain per unit of its cost
    np.testing.assert_allclose(float(props.score[-1]), float(dense) / cost.sum(), rtol=1e-6)
    pairs = {(round(float(a), 6), int(b)) for a, b in zip(np.asarray(props.x)[:, 0], z)}
    assert len(pairs) == 4  # four distinct evaluations
    # the batch is GIBBON's greedy batch over the candidate set
    first = stages.maximise_stage(FAST, task, post, gstar, jax.random.PRNGKey(5), None, n_design)
    local = best_inputs(post, task.target, N_ANCHORS)  # FAST.maximiser.local_frac > 0
    x, zc = batch.candidate_pairs(FAST, task, jax.random.fold_in(jax.random.PRNGKey(5), 4), first.x, local)
    greedy = gibbon.gibbon_batch(post, task.target, gstar, x, zc.astype(int), 4,
                                 cost=task.space.cost(zc.astype(int)))
    np.testing.assert_array_equal(np.asarray(greedy.z), z)
    np.testing.assert_allclose(np.asarray(greedy.x), np.asarray(props.x), rtol=0, atol=1e-8)


def test_compiled_loop_runs_batches():
    """GIBBON batches of 4: the settings of
    test_gibbon_slot_gains_add_up_to_the_dense_batch_gain, so the loop runs the batch
    program that test compiles (the believer's compiled loop runs in tests/test_compare.py)."""
    prob = problems.get_problem("forrester")
    settings = with_(FAST, batch={"size": 4, "rule": "gibbon"})
    h = tasks.run_problem(prob, 12.0, [0], settings, max_evals=10)
    n = int(h.n_evals[0])
    assert n % 4 == 0 and 0 < n <= 8  # whole batches, never beyond max_evals
    spent = np.concatenate([[0.0], np.cumsum(h.cost[0, :n])])
    np.testing.assert_allclose(h.cost_spent[0, :n + 1], spent)
    assert spent[n - 4] < 12.0  # a batch starts only while budget is left
    np.testing.assert_allclose(h.cost[0, :n], np.asarray(prob.costs)[h.z[0, :n].astype(int)])
    for e in range(0, n, 4):  # inside a batch the recommendation is the one made before it
        for j in (1, 2, 3):
            assert h.regret[0, e + j] == h.regret[0, e]
            np.testing.assert_array_equal(h.incumbent_x[0, e + j], h.incumbent_x[0, e])
    assert np.all(np.isfinite(h.regret[0, :n + 1]))


def test_batch_settings_are_checked():
    with pytest.raises(ValueError, match="batch.size must be >= 1"):
        BOSettings(batch={"size": 0})
    with pytest.raises(ValueError, match="unknown batch.rule 'kb'"):
        BOSettings(batch={"rule": "kb"})
    with pytest.raises(ValueError, match="batch.rule 'gibbon' needs a rule that samples g"):
        BOSettings(strategy="ei", batch={"size": 2, "rule": "gibbon"})
    BOSettings(strategy="ei", batch={"size": 2})  # any rule can believe (the default batch rule)
    with pytest.raises(ValueError, match="batch.size = 4 is for the compiled loop"):
        AskTell(tasks.problem_task(problems.get_problem("forrester")), BOSettings(batch={"size": 4}))
    with pytest.raises(config.ConfigError, match=r"\[settings.batch\] rule"):
        config.parse_config(json.loads('{"run": {"problem": "forrester", "budget": 10},'
                                       ' "settings": {"batch": {"rule": "fantasy"}}}'))


def test_gibbon_candidates_are_drawn_as_the_maximiser_draws_them():
    """GIBBON's candidate set: the anchors first, then n_candidates x of which
    boundary_frac lie on the box's faces and local_frac near the best points, at every
    fidelity; without them (fractions 0) only the anchors and uniform x."""
    task = tasks.problem_task(problems.get_problem("hartmann3"))
    key, first = jax.random.PRNGKey(2), np.full((1, 3), 0.5)
    local = np.asarray([[0.2, 0.3, 0.4]])
    s = with_(FAST, maximiser={"n_candidates": 400, "boundary_frac": 0.25, "local_frac": 0.25})
    x, z = batch.candidate_pairs(s, task, key, first, local)
    x, z = np.asarray(x), np.asarray(z)
    m = 401
    assert x.shape == (3 * m, 3) and np.array_equal(z, np.repeat([0.0, 1.0, 2.0], m))
    xs = x[:m]
    np.testing.assert_array_equal(xs[0], first[0])
    on_face = np.any((xs[1:] == 0.0) | (xs[1:] == 1.0), axis=1)
    near = np.max(np.abs(xs[1:] - local[0]), axis=1) < 0.05
    # the first quarter snapped (each coordinate with probability 1/2: 7 / 8 of them touch a face)
    assert on_face[:100].mean() > 0.75 and not on_face[100:300].any()
    assert near[300:].mean() > 0.5 and not near[:300].any()  # the last quarter around the anchor
    uniform = with_(FAST, maximiser={"n_candidates": 400, "boundary_frac": 0.0, "local_frac": 0.0})
    x0, _ = batch.candidate_pairs(uniform, task, key, first, local)
    assert not np.any((np.asarray(x0)[1:m] == 0.0) | (np.asarray(x0)[1:m] == 1.0))


@pytest.mark.slow  # ~15 s of the default run; GIBBON's slot gains and the believer batch stay in CI
def test_gibbon_seq_is_the_sequential_step_then_gibbon_given_it_pending(fitted):
    """"gibbon_seq": slot 0 is the sequential decision; slots 1.. are GIBBON's greedy
    batch over the same candidate set with slot 0 as a pending evaluation."""
    task, post, buffers, n, n_design, gstar = fitted
    key = jax.random.PRNGKey(7)
    props = stages.batch_stage(with_(FAST, batch={"size": 3, "rule": "gibbon_seq"}), task, post, gstar, key, buffers,
                              stages.as_count(n), n_design)
    first = stages.maximise_stage(FAST, task, post, gstar, key, None, n_design)
    np.testing.assert_array_equal(props.x[0], first.x)
    assert props.z[0] == first.z
    local = best_inputs(post, task.target, N_ANCHORS)
    x, zc = batch.candidate_pairs(FAST, task, jax.random.fold_in(key, 3), first.x[None], local)
    ref = gibbon.gibbon_batch(post, task.target, gstar, x, zc.astype(int), 2, first.x[None],
                              np.atleast_1d(np.asarray(first.z)).astype(int), cost=task.space.cost(zc.astype(int)))
    np.testing.assert_allclose(np.asarray(props.x[1:]), np.asarray(ref.x), atol=1e-12)
    np.testing.assert_array_equal(np.asarray(props.z[1:]), np.asarray(ref.z))
    # the pending slot 0 repels: slot 1 is not slot 0 again
    assert not (np.allclose(props.x[1], props.x[0]) and props.z[1] == props.z[0])
