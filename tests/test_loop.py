"""The decision rule and the two loops (short runs; the studies are in experiments/)."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.bo import loop
from mumbo_jax.benchmarks import problems

FAST = loop.BOSettings(n_candidates=300, n_starts=4, n_polish_steps=15, fit_restarts=2, fit_max_iter=60,
                       gstar_grid=2000)


@pytest.fixture(scope="module")
def forrester_run():
    prob = problems.get_problem("forrester")
    clock = loop.StepClock()
    hist = loop.run_compiled(prob, 60.0, [0, 1], FAST, max_evals=16, clock=clock)
    return prob, hist, clock


def test_compiled_history_is_consistent(forrester_run):
    prob, h, clock = forrester_run
    for s in range(2):
        n = int(h.n_evals[s])
        assert 1 <= n <= 16
        costs = np.asarray(h.cost[s, :n])
        np.testing.assert_allclose(costs, np.asarray(prob.costs)[np.asarray(h.z[s, :n]).astype(int)])
        np.testing.assert_allclose(np.asarray(h.cost_spent[s, : n + 1]), np.concatenate([[0], np.cumsum(costs)]))
        # the budget stops the run: every evaluation started below it, the last one crossed it (or the cap hit)
        assert np.all(np.asarray(h.cost_spent[s, :n]) < 60.0)
        assert float(h.cost_spent[s, n]) >= 60.0 or n == 16
        y_true = [float(problems.objective(prob, h.x[s, i], int(h.z[s, i]))) for i in range(n)]
        np.testing.assert_allclose(np.asarray(h.y[s, :n]), y_true, rtol=1e-12)
        reg = np.asarray(h.regret[s, : n + 1])
        assert np.all(reg >= 0) and np.all(np.isfinite(reg))
        inc = [float(problems.simple_regret(prob, h.incumbent_x[s, i])) for i in range(n + 1)]
        np.testing.assert_allclose(reg, inc, rtol=1e-10, atol=1e-12)
        assert float(h.initial_cost[s]) == 2 * (10 + 5 + 2)  # 2 d points at every fidelity
        over = clock.overheads(s, n)
        assert all(o["total"] is not None and o["total"] > 0 for o in over)
    assert not np.allclose(h.x[0, :3], h.x[1, :3])  # seeds differ


def _bo_choices(opt, prob, n):
    """Drive ``opt`` on ``prob`` through its design and ``n`` BO steps: the BO ``(x, z)``."""
    chosen = []
    while len(chosen) < n:
        design = opt.in_initial_design
        x, z = opt.ask()
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
        if not design:
            chosen.append((x, z))
    return chosen


def test_ask_tell_makes_the_same_decisions_as_the_compiled_loop(forrester_run):
    prob, h, _ = forrester_run
    task = loop.problem_task(prob)
    opt = loop.AskTell(task, FAST, seed=1)
    chosen = _bo_choices(opt, prob, 4)
    assert [z for _, z in chosen] == [int(v) for v in h.z[1, :4]]
    # the same XLA operations, fused differently inside the compiled while_loop: equal to
    # rounding, which the L-BFGS fit and the Adam polish can amplify a little
    np.testing.assert_allclose(np.concatenate([x for x, _ in chosen]), np.asarray(h.x[1, :4, 0]), atol=2e-2)
    assert np.abs(chosen[0][0] - float(h.x[1, 0, 0])) < 1e-6
    assert len(opt.timings) == 4 and all(t.fit > 0 and t.gstar > 0 and t.maximise > 0 for t in opt.timings)


def test_regret_falls_on_short_runs(forrester_run):
    _, h, _ = forrester_run
    first = np.asarray(h.regret[:, 0])
    last = np.asarray([h.regret[s, int(h.n_evals[s])] for s in range(2)])
    assert np.all(last <= first + 1e-12) and np.mean(last) < 0.5 * np.mean(first)


def test_ask_tell_state_round_trip_and_bad_tells():
    prob = problems.get_problem("forrester")
    task = loop.problem_task(prob)
    opt = loop.AskTell(task, FAST, seed=3)
    for _ in range(opt.n_design + 1):
        x, z = opt.ask()
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
    state = json.loads(json.dumps(opt.state_dict()))  # plain data
    restored = loop.AskTell.from_state(task, FAST, state)
    x1, z1 = opt.ask()
    x2, z2 = restored.ask()
    assert z1 == z2
    np.testing.assert_allclose(x1, x2, atol=1e-8)
    with pytest.raises(ValueError, match="y must be finite"):
        opt.tell(x1, z1, float("nan"))
    with pytest.raises(ValueError, match="x must have 1 coordinates"):
        opt.tell(np.zeros(2), z1, 1.0)
    with pytest.raises(ValueError, match="fidelity 5 does not exist"):
        opt.tell(x1, 5, 1.0)
    assert len(opt.x) == len(restored.x)  # nothing recorded by the failed tells


def test_bad_settings_and_budget():
    with pytest.raises(ValueError, match="unknown strategy 'nonsense'"):
        loop.BOSettings(strategy="nonsense")
    with pytest.raises(ValueError, match="n_gstar must be a positive integer"):
        loop.BOSettings(n_gstar=0)
    with pytest.raises(ValueError, match="budget must be > 0"):
        loop.run_compiled(problems.get_problem("forrester"), 0.0, [0], FAST)


def test_fit_stage_without_refit_keeps_the_hyper_parameters():
    prob = problems.get_problem("forrester")
    task = loop.problem_task(prob)
    x, z = loop.initial_design(task, jax.random.PRNGKey(0))
    y = jax.vmap(lambda a, b: problems.objective(prob, a, b))(x, z.astype(int))
    b = loop.pad_buffers(x, z, y, 32)
    params = loop.models.default_params(task.spec)
    kept = loop.fit_stage(FAST, task, b, params, jax.random.PRNGKey(1), False)
    fitted = loop.fit_stage(FAST, task, b, params, jax.random.PRNGKey(1), True)
    for name in params:
        np.testing.assert_array_equal(np.asarray(kept.params[name]), np.asarray(params[name]))
    nlml = lambda p: float(loop.fitting.neg_log_marginal(task.spec, p, kept.scaling, b.x, b.z, b.y, b.mask))
    assert nlml(fitted.params) < nlml(params) - 1.0
    assert [bool(loop.refit_at(loop.BOSettings(refit_every=3), k)) for k in range(5)] == [True, False, False, True,
                                                                                         False]


def test_lockstep_batching_and_ask_tell_agree_with_a_refit_schedule():
    prob = problems.get_problem("forrester")
    settings = loop.BOSettings(**{**FAST.__dict__, "refit_every": 2})
    runs = {b: loop.run_compiled(prob, 40.0, [0, 1], settings, max_evals=5, batching=b) for b in ("map", "vmap")}
    for s in range(2):
        n = int(runs["map"].n_evals[s])
        assert n == int(runs["vmap"].n_evals[s])
        np.testing.assert_array_equal(np.asarray(runs["map"].z[s, :n]), np.asarray(runs["vmap"].z[s, :n]))
        np.testing.assert_allclose(np.asarray(runs["map"].x[s, :n]), np.asarray(runs["vmap"].x[s, :n]), atol=2e-2)
    chosen = _bo_choices(loop.AskTell(loop.problem_task(prob), settings, seed=0), prob, 3)
    assert [z for _, z in chosen] == [int(v) for v in runs["map"].z[0, :3]]


def test_ask_tell_incumbent_during_the_initial_design():
    prob = problems.get_problem("forrester")
    opt = loop.AskTell(loop.problem_task(prob), FAST, seed=4)
    with pytest.raises(ValueError, match="no evaluations yet"):
        opt.incumbent()
    ys = []
    for _ in range(3):  # part of the design only
        x, z = opt.ask()
        ys.append(float(problems.objective(prob, jnp.asarray(x), z)))
        opt.tell(x, z, ys[-1])
    x_inc, mu = opt.incumbent()
    assert any(np.allclose(x_inc, x) for x in opt.x) and np.isfinite(mu)


def test_step_clock_splits_a_strategy_without_gstar():
    prob = problems.get_problem("forrester")
    clock = loop.StepClock()
    settings = loop.BOSettings(**{**FAST.__dict__, "strategy": "ei"})
    h = loop.run_compiled(prob, 30.0, [0], settings, max_evals=3, clock=clock)
    over = clock.overheads(0, int(h.n_evals[0]))
    assert over and all(o["fit"] > 0 and o["gstar"] >= 0 and o["maximise"] > 0 for o in over)


def test_backend_batching_is_map_on_cpu():
    assert jax.default_backend() != "cpu" or loop.backend_batching() == {"batching": "map",
                                                                        "min_buffer": loop.MIN_BUFFER}
