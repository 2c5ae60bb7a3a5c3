"""Both drivers on every rule (tiny budgets), their agreement, and the compiled history."""

import functools
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import rules, stages
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.compiled import backend_batching, run_compiled
from mumbo_jax import BOSettings
from mumbo_jax.runtime.timing import StepClock
from tests.bo_helpers import FAST, drive, with_

N_STEPS = 2
# Measured: the drivers run the same compiled programs on the same data, so their
# decisions agree to the last bit (max |dx| = 0 on every rule); y computed eagerly here and
# inside a compiled program in run_compiled may differ in the last ulp, hence a tolerance.
X_TOL = 1e-9


def _problem(strategy):
    return problems.get_problem("currin_continuous" if strategy == "boca" else "forrester")


# the robust wrapper's variants share its code: the default robust rule stands for them (CI time)
ROBUST_VARIANTS = ("robust_ei", "robust_mt_ei", "robust_mf_gp_ucb")


# BOCA's continuous-fidelity programs cost ~15 s of the default run: under -m slow (as are its
# decisions in tests/test_decisions.py); MF-GP-UCB's second stage shares its code path
SLOW_IN_CI = ("boca",)


@pytest.mark.parametrize("strategy", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW_IN_CI else s
                                      for s in rules.STRATEGIES if s not in ROBUST_VARIANTS])
def test_every_rule_makes_the_same_decisions_in_both_loops(strategy):
    prob = _problem(strategy)
    settings = with_(FAST, strategy=strategy)
    clock = StepClock()
    t0 = time.perf_counter()
    h = tasks.run_problem(prob, 1e9, [0], settings, max_evals=N_STEPS, clock=clock)
    wall = time.perf_counter() - t0
    opt = AskTell(tasks.problem_task(prob), settings, seed=0)
    chosen = drive(opt, prob, N_STEPS)

    assert int(h.n_evals[0]) == N_STEPS  # the evaluation cap stops the run
    xs = np.stack([x for x, _ in chosen])
    zs = np.asarray([z for _, z in chosen], float)
    np.testing.assert_allclose(xs, h.x[0, :N_STEPS], rtol=0, atol=X_TOL)
    np.testing.assert_allclose(zs, h.z[0, :N_STEPS], rtol=0, atol=X_TOL)
    if strategy in rules.TARGET_ONLY:
        assert np.all(zs == prob.target_fidelity)
    # the history is what the problem says it is
    cost = np.asarray([float(problems.cost(prob, int(z) if prob.is_discrete else z)) for z in h.z[0, :N_STEPS]])
    np.testing.assert_allclose(h.cost[0, :N_STEPS], cost, rtol=1e-12)
    np.testing.assert_allclose(h.cost_spent[0, :N_STEPS + 1], np.concatenate([[0.0], np.cumsum(cost)]), rtol=1e-12)
    z_eval = [int(z) if prob.is_discrete else float(z) for z in h.z[0, :N_STEPS]]
    y = [float(problems.objective(prob, jnp.asarray(x), z)) for x, z in zip(h.x[0, :N_STEPS], z_eval)]
    np.testing.assert_allclose(h.y[0, :N_STEPS], y, rtol=1e-12)
    regret = [float(problems.simple_regret(prob, jnp.asarray(x))) for x in h.incumbent_x[0, :N_STEPS + 1]]
    np.testing.assert_allclose(h.regret[0, :N_STEPS + 1], regret, rtol=1e-12, atol=1e-14)
    # the model's prediction at the incumbent is recorded for coverage checks
    assert np.all(np.isfinite(h.incumbent_mean[0, :N_STEPS + 1])) and np.all(h.incumbent_sd[0, :N_STEPS + 1] >= 0)
    # the incumbent (incumbent_rule's recommendation) from the fit of step N: the same in both loops
    opt.ask()
    x_inc, _ = opt.incumbent()
    np.testing.assert_allclose(x_inc, h.incumbent_x[0, N_STEPS], rtol=0, atol=X_TOL)
    # per-step stage times: all measured, and together within the run's wall time
    over = clock.overheads(0, N_STEPS)
    assert all(o["fit"] > 0 and o["gstar"] > 0 and o["maximise"] > 0 for o in over)
    assert sum(o["total"] for o in over) < wall


@pytest.mark.slow  # ~8 s of the default run; the Simpson gain against quadrature stays in CI (test_acquisitions)
def test_simpson_gain_makes_the_same_decisions_as_the_table():
    """The direct vmapped-Simpson path (the design card's reference) and the default table
    choose the same points on a short run. (Moved here from tests/test_strategies.py: the
    table run is FAST's MUMBO on Forrester, whose programs the [mumbo] case above compiled,
    so only Simpson's maximiser compiles for it.)"""
    prob = problems.get_problem("forrester")
    # FAST leaves MUMBO's option gain at its default, the table
    assert FAST.strategy == "mumbo" and "mumbo" not in FAST.options and rules.rule_for(FAST).options["gain"] == "table"
    runs = {"table": tasks.run_problem(prob, 1e9, [0], FAST, max_evals=3),
            "simpson": tasks.run_problem(prob, 1e9, [0], with_(FAST, options={"mumbo": {"gain": "simpson"}}),
                                         max_evals=3)}
    np.testing.assert_array_equal(runs["table"].z, runs["simpson"].z)
    # the gains differ by ~3e-6 (the table's interpolation error), too little to move the
    # chosen candidate or its polished x: measured max |dx| = 0 over seeds 0-2, 3 steps each
    np.testing.assert_allclose(runs["table"].x, runs["simpson"].x, rtol=0, atol=1e-9)


def test_initial_design_counts_and_cost():
    prob = problems.get_problem("forrester")
    h = tasks.run_problem(prob, 1e9, [3], FAST, max_evals=1)
    assert float(h.initial_cost[0]) == 2 * (10 + 5 + 2)  # 2 d points at every fidelity
    x, z = stages.initial_design(tasks.problem_task(prob), jax.random.PRNGKey(0))
    assert x.shape == (6, 1) and np.bincount(np.asarray(z, int)).tolist() == [2, 2, 2]


def test_budget_stops_the_run_and_seeds_differ():
    prob = problems.get_problem("forrester")
    settings = with_(FAST, strategy="ei")  # EI: 10 per evaluation at the target
    h = tasks.run_problem(prob, 25.0, [0, 1], settings, max_evals=10)
    for s in range(2):
        n = int(h.n_evals[s])
        assert n == 3  # 0, 10, 20 are below 25: three evaluations, the last one crosses it
        assert np.all(h.cost_spent[s, :n] < 25.0) and h.cost_spent[s, n] >= 25.0
        assert np.all(np.isnan(h.regret[s, n + 1:]))
    assert not np.allclose(h.x[0, :n], h.x[1, :n])


def test_lockstep_batching_and_a_refit_schedule_agree_with_ask_tell():
    prob = problems.get_problem("forrester")
    settings = with_(FAST, strategy="ei", fit={"refit_every": 2})  # EI: the cheapest lock-step programs to compile
    runs = {b: tasks.run_problem(prob, 1e9, [0, 1], settings, max_evals=3, batching=b) for b in ("map", "vmap")}
    np.testing.assert_array_equal(runs["map"].n_evals, runs["vmap"].n_evals)
    np.testing.assert_array_equal(runs["map"].z, runs["vmap"].z)
    # vmapped programs fuse differently: agreement to rounding (measured max |dx| 8.9e-12)
    np.testing.assert_allclose(runs["map"].x, runs["vmap"].x, rtol=0, atol=1e-10)
    chosen = drive(AskTell(tasks.problem_task(prob), settings, seed=1), prob, 3)
    np.testing.assert_allclose(np.stack([x for x, _ in chosen]), runs["map"].x[1], rtol=0, atol=X_TOL)


@functools.lru_cache(maxsize=None)
def _forrester_design_buffers():
    """``(task, buffers)``: Forrester's initial design (seed 0), evaluated, in 32 rows (made
    once: the fit tests below share its task and buffers, so their programs compile once)."""
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    x, z = stages.initial_design(task, jax.random.PRNGKey(0))
    y = jax.vmap(lambda a, b: problems.objective(prob, a, b))(x, z.astype(int))
    return task, stages.pad_buffers(np.asarray(x), np.asarray(z), np.asarray(y), 32)


def test_fit_stage_without_refit_keeps_the_hyper_parameters():
    task, b = _forrester_design_buffers()
    params = stages.as_params(stages.models.default_params(task.spec))
    kept = stages.fit_stage(FAST, task, b, params, jax.random.PRNGKey(1), False)
    fitted = stages.fit_stage(FAST, task, b, params, jax.random.PRNGKey(1), True)
    for name in params:
        np.testing.assert_array_equal(np.asarray(kept.params[name]), np.asarray(params[name]))
    nlml = lambda p: float(stages.fitting.neg_log_marginal(task.spec, p, kept.scaling, b.x, b.z, b.y, b.mask))
    assert nlml(fitted.params) < nlml(params) - 1.0
    assert [bool(stages.refit_at(BOSettings(fit={"refit_every": 3}), k)) for k in range(5)] == [True, False, False,
                                                                                      True, False]


def test_cold_restarts_follow_the_schedule():
    every = BOSettings(fit={"restarts": 3, "warm_from": 0})
    assert all(stages.cold_at(every, k, n) for k in range(4) for n in (5, 5000))
    # the default: full refits below 500 observations, from 500 on every 10th refit only
    default = BOSettings(fit={"restarts": 3})
    assert [bool(stages.cold_at(default, k, 499)) for k in range(12)] == [True] * 12
    assert [bool(stages.cold_at(default, k, 500)) for k in range(12)] == [k % 10 == 0 for k in range(12)]
    s = BOSettings(fit={"restarts": 3, "warm_from": 100, "cold_every": 3, "refit_every": 2})
    # below warm_from every refit is cold; from it on, every 3rd refit (refits at k = 0, 2, 4, ...)
    assert [bool(stages.cold_at(s, k, 99)) for k in range(0, 12, 2)] == [True] * 6
    assert [bool(stages.cold_at(s, k, 100)) for k in range(0, 12, 2)] == [True, False, False, True, False, False]
    traced = jax.jit(lambda k, n: stages.cold_at(s, k, n))
    assert [bool(traced(k, 150)) for k in range(0, 12, 2)] == [True, False, False, True, False, False]


@functools.lru_cache(maxsize=None)
def _by_hand_program(task):
    """The warm start's L-BFGS by hand, compiled once for every start, step, iteration cap
    and ftol (all traced; L-BFGS takes a traced cap and tolerances)."""
    @jax.jit
    def run(b, start, s, iters, ftol):
        scaling = stages.models.make_scaling(task.spec, b.y, b.mask)
        objective = lambda p: stages.fitting.neg_log_marginal(task.spec, p, scaling, b.x, b.z, b.y, b.mask)
        at = lambda u: jax.tree_util.tree_map(lambda a, v: a + s * v, start, u)
        zero = jax.tree_util.tree_map(jnp.zeros_like, start)
        u, _ = stages.fitting.lbfgs(lambda u: objective(at(u)), zero, iters, 1e-5 * s, ftol)
        return at(u)

    return run


def _warm_start_by_hand(task, b, start, iters, ftol=0.0, step=None):
    """The warm start's L-BFGS run by hand in the coordinates ``start + s u`` from u = 0
    (s = fitting.WARM_STEP, fit_from's step_scale): ``(params, objective)``."""
    scaling = stages.models.make_scaling(task.spec, b.y, b.mask)
    objective = lambda p: stages.fitting.neg_log_marginal(task.spec, p, scaling, b.x, b.z, b.y, b.mask)
    s = stages.fitting.WARM_STEP if step is None else step
    params = _by_hand_program(task)(b, start, jnp.asarray(s, jnp.float64), jnp.asarray(iters, jnp.int32),
                                    jnp.asarray(ftol, jnp.float64))
    return params, objective


def test_a_warm_refit_runs_the_warm_start_alone_for_warm_iter_iterations():
    task, b = _forrester_design_buffers()
    # a warm start away from the defaults, so that the cold starts differ from it
    params = stages.as_params(jax.tree_util.tree_map(lambda a: a + 0.7, stages.models.default_params(task.spec)))
    key = jax.random.PRNGKey(3)
    # FAST's fit (2 restarts of 30 iterations, warm_iter 5): the program of the test above
    # (warm_ftol is traced); warm_ftol 0, so the warm start runs all its iterations
    two = with_(FAST, fit={"warm_ftol": 0.0})
    assert (two.fit.restarts, two.fit.max_iter, two.fit.warm_iter) == (2, 30, 5)
    warm = stages.fit_stage(two, task, b, params, key, True, False)  # the warm start, 5 iterations
    alone, _ = _warm_start_by_hand(task, b, params, 5)
    plain, _ = _warm_start_by_hand(task, b, params, 5, step=1.0)  # L-BFGS from the start, a unit first step
    cold = stages.fit_stage(two, task, b, params, key, True, True)
    nlml = lambda p: float(stages.fitting.neg_log_marginal(task.spec, p, warm.scaling, b.x, b.z, b.y, b.mask))
    for name in params:  # the same single L-BFGS run, its first step WARM_STEP long
        np.testing.assert_allclose(np.asarray(warm.params[name]), np.asarray(alone[name]), rtol=1e-10)
    # a full refit's start runs plain L-BFGS (a unit first step): another path from the same start
    assert not np.allclose(np.asarray(plain["log_ls"]), np.asarray(warm.params["log_ls"]), rtol=1e-6)
    assert nlml(cold.params) <= nlml(warm.params) + 1e-9  # the best of two includes the warm start
    assert nlml(warm.params) < nlml(params)


def test_a_warm_refit_stops_when_an_iteration_gains_under_warm_ftol():
    task, b = _forrester_design_buffers()
    key = jax.random.PRNGKey(3)
    # a start near the optimum (30 iterations from the start of the test above, moved by 0.1),
    # where the gains fall under warm_ftol = 1e-3 within FAST's 5 warm iterations: FAST's fit
    # program (2 restarts of 30 iterations, warm_iter 5; warm_ftol is traced), which the tests
    # above compiled, and the by-hand program of the test above
    away = stages.as_params(jax.tree_util.tree_map(lambda a: a + 0.7, stages.models.default_params(task.spec)))
    near, _ = _warm_start_by_hand(task, b, away, 30)
    start = stages.as_params(jax.tree_util.tree_map(lambda a: a + 0.1, near))
    settings = lambda ftol: with_(FAST, fit={"warm_ftol": ftol})
    assert (FAST.fit.restarts, FAST.fit.max_iter, FAST.fit.warm_iter) == (2, 30, 5)
    tested = stages.fit_stage(settings(1e-3), task, b, start, key, True, False)
    untested = stages.fit_stage(settings(0.0), task, b, start, key, True, False)
    alone, objective = _warm_start_by_hand(task, b, start, 5, 1e-3)  # the warm start with the same test
    full, _ = _warm_start_by_hand(task, b, start, 5)
    for name in start:
        np.testing.assert_allclose(np.asarray(tested.params[name]), np.asarray(alone[name]), rtol=1e-8)
        np.testing.assert_allclose(np.asarray(untested.params[name]), np.asarray(full[name]), rtol=1e-8)
    # the test stopped it early: the 5 iterations went further
    assert float(objective(full)) < float(objective(alone)) - 1e-6
    # a full refit ignores warm_ftol
    cold = [stages.fit_stage(settings(f), task, b, start, key, True, True).params for f in (1e-3, 0.0)]
    for name in start:
        np.testing.assert_array_equal(np.asarray(cold[0][name]), np.asarray(cold[1][name]))


def test_lbfgs_ftol_may_be_traced():
    task, b = _forrester_design_buffers()
    start = stages.models.default_params(task.spec)
    scaling = stages.models.make_scaling(task.spec, b.y, b.mask)
    objective = lambda p: stages.fitting.neg_log_marginal(task.spec, p, scaling, b.x, b.z, b.y, b.mask)
    traced = jax.jit(lambda f: stages.fitting.lbfgs(objective, start, 40, 1e-5, f))
    for ftol in (0.0, 1e-4):
        static_p, static_v = jax.jit(lambda: stages.fitting.lbfgs(objective, start, 40, 1e-5, ftol))()
        traced_p, traced_v = traced(ftol)
        np.testing.assert_allclose(float(traced_v), float(static_v), rtol=1e-12)
        for name in start:
            # rounding, amplified by the factor's condition number (the noise at its floor, 1e-9)
            np.testing.assert_allclose(np.asarray(traced_p[name]), np.asarray(static_p[name]), rtol=1e-7)


def test_ask_tell_passes_the_cold_schedule_to_the_fit(monkeypatch):
    prob = problems.get_problem("forrester")
    seen = []
    real = stages.fit_stage

    def spy(settings, task, buffers, params, key, refit=True, cold=True):
        seen.append((int(np.sum(np.asarray(buffers.mask))), bool(cold)))
        return real(settings, task, buffers, params, key, refit, cold)

    monkeypatch.setattr(stages, "fit_stage", spy)
    settings = with_(FAST, strategy="ei", fit={"warm_from": 4, "cold_every": 2})
    opt = AskTell(tasks.problem_task(prob), settings, seed=0)
    drive(opt, prob, 4)
    n_design = opt.n_design
    assert [c for n, c in seen] == [bool(stages.cold_at(settings, k, n_design + k)) for k in range(4)]
    assert [c for n, c in seen] != [True] * 4


def test_run_compiled_rejects_bad_arguments():
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    bench = tasks.problem_benchmark(prob)
    with pytest.raises(ValueError, match="budget must be > 0"):
        run_compiled(bench, task, 0.0, [0], FAST)
    with pytest.raises(ValueError, match="a Benchmark"):
        run_compiled(prob, task, 10.0, [0], FAST)
    with pytest.raises(ValueError, match="batching must be"):
        run_compiled(bench, task, 10.0, [0], FAST, batching="pmap")
    with pytest.raises(ValueError, match="strategy 'boca' needs a continuous fidelity; problem has discrete"):
        run_compiled(bench, task, 10.0, [0], BOSettings(strategy="boca"))


def test_backend_batching_is_map_on_cpu():
    assert jax.default_backend() != "cpu" or backend_batching() == {"batching": "map",
                                                                        "min_buffer": stages.MIN_BUFFER}


def test_robustness_levers_make_the_same_decisions_in_both_loops():
    """recommendation.rule, maximiser.boundary_frac and maximiser.local_frac reach both
    drivers: the compiled run and ask/tell agree, and every recorded incumbent (rule
    "target") is an x evaluated at the target."""
    prob = problems.get_problem("forrester")
    settings = with_(FAST, recommendation={"rule": "target"}, maximiser={"boundary_frac": 0.25, "local_frac": 0.25})
    h = tasks.run_problem(prob, 1e9, [0], settings, max_evals=3)
    opt = AskTell(tasks.problem_task(prob), settings, seed=0)
    chosen = drive(opt, prob, 3)
    np.testing.assert_allclose(np.stack([x for x, _ in chosen]), h.x[0, :3], rtol=0, atol=X_TOL)
    np.testing.assert_allclose([z for _, z in chosen], h.z[0, :3], rtol=0, atol=X_TOL)
    # the "global" recommendation: the same x in both drivers, never worse in the model's eyes
    glob = with_(FAST, recommendation={"rule": "global"})
    hg = tasks.run_problem(prob, 1e9, [0], glob, max_evals=2)
    og = AskTell(tasks.problem_task(prob), glob, seed=0)
    drive(og, prob, 2)
    og.ask()  # the fit of step 2, as the compiled run's last record
    xg, mg = og.incumbent()
    np.testing.assert_allclose(xg, hg.incumbent_x[0, 2], rtol=0, atol=X_TOL)
    np.testing.assert_allclose(mg, hg.incumbent_mean[0, 2], rtol=1e-9)
    at_target = np.asarray(opt.x)[np.asarray(opt.z) == 0]
    x_inc, _ = opt.incumbent()
    assert np.any(np.all(np.abs(at_target - x_inc) < 1e-12, axis=1))
    np.testing.assert_allclose(x_inc, h.incumbent_x[0, 3], rtol=0, atol=X_TOL)
