"""The thinned refit schedule (mumbo_jax.bo.refits): when it refits, that the posterior it
carries between refits is the exact posterior of the held model, that both drivers make
the same decisions with it, and that an ask/tell run restored from its state goes on
exactly as the uninterrupted run."""

import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax import AskTell, BOSettings, FitSettings
from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import refits, stages
from mumbo_jax.gp import models, moments, posterior
from tests.bo_helpers import FAST, drive, with_

# Forrester: 6 design rows; from the 8th observation on, refits when the data grow by 25 %
THIN = with_(FAST, fit={"refit_growth": 0.25, "incremental_from": 8, "warm_from": 8, "cold_every": 2})


def test_plan_refits_every_step_below_incremental_from_and_thins_above():
    s = BOSettings(fit=FitSettings(refit_growth=0.05, incremental_from=500, warm_from=500, cold_every=10))
    sched, refit_ns, cold_ns = refits.Schedule(), [], []
    for k, n in enumerate(range(18, 3001)):
        refit, cold, append = refits.plan(s, k, n, sched)
        assert refit != append
        if n < 500:  # the guard: every step refits with all its starts, as without the schedule
            assert refit and cold
        refit_ns += [n] if refit else []
        cold_ns += [n] if refit and cold else []
        sched = refits.after(sched, n, refit, cold, append)
    thinned = [n for n in refit_ns if n >= 500]
    # a refit each time the data grow by 5 %: log(3000 / 500) / log(1.05) = 36.7 of them
    assert 35 <= len(thinned) <= 38
    assert all(b >= 1.05 * a for a, b in zip(thinned, thinned[1:]))
    # all starts once the data grew by 1.05 ** 10 = 1.63 since the last full refit
    cold_thinned = [n for n in cold_ns if n >= 500]
    assert 3 <= len(cold_thinned) <= 4 and all(b >= 1.62 * a for a, b in zip(cold_thinned, cold_thinned[1:]))
    # refit_growth 0: the schedule of refit_every, whatever n
    legacy = BOSettings(fit=FitSettings(refit_growth=0.0, refit_every=3))
    assert [refits.plan(legacy, k, 2000, refits.Schedule(1000, 1000))[0] for k in range(4)] == [True, False,
                                                                                               False, True]


def test_plan_thinned_from_the_first_step_runs_every_start_below_warm_from():
    """incremental_from = 1: refits only when the data grew by refit_growth, from the first
    BO step; below warm_from each of them runs every start (the guard against the
    Forrester basin that warm-only refits at small n fell into), above it the warm ones."""
    s = BOSettings(fit=FitSettings(refit_growth=0.05, incremental_from=1, warm_from=500, cold_every=10))
    sched, refit_ns, cold_ns = refits.Schedule(), [], []
    for k, n in enumerate(range(18, 1001)):
        refit, cold, append = refits.plan(s, k, n, sched)
        assert refit != append
        refit_ns += [n] if refit else []
        cold_ns += [n] if refit and cold else []
        sched = refits.after(sched, n, refit, cold, append)
    small = [n for n in refit_ns if n < 500]
    assert small[0] == 18 and all(n in cold_ns for n in small)  # every refit below warm_from is a full one
    assert all(b >= 1.05 * a and b <= 1.05 * a + 1 for a, b in zip(small, small[1:]))  # on 5 % growth, no later
    # at most log(500 / 18) / log(1.05) = 68 refits below 500 (fewer: n is a whole number, so a
    # step grows by 5 % or more) instead of 482 every-step ones
    assert 55 <= len(small) <= 69
    assert any(n not in cold_ns for n in refit_ns if n >= 500)  # warm-only refits from warm_from


def test_out_of_range_schedule_settings_name_the_field():
    with pytest.raises(ValueError, match="refit_growth"):
        FitSettings(refit_growth=-0.1)
    with pytest.raises(ValueError, match="incremental_from"):
        FitSettings(incremental_from=0)


def test_carried_posterior_is_the_held_models_exact_posterior():
    prob = problems.get_problem("forrester")
    opt = AskTell(tasks.problem_task(prob), THIN, seed=1)
    appended = 0
    for _ in range(14):
        design = opt.in_initial_design
        x, z = opt.ask()
        if not design:
            n, post, buffers = opt.last_fit
            plan = refits.plan(THIN, 0, n, refits.Schedule(None))
            assert not plan[2]  # (a sanity check of the helper: no anchor means no appends)
            if opt._carry[1] == n and opt.schedule.anchor < n:  # this ask appended rows
                appended += 1
                fresh = posterior.condition(opt.task.spec, post.params, buffers.x, buffers.z, buffers.y,
                                            buffers.mask, post.scaling)
                xq = np.linspace(0, 1, 9)[:, None]
                for zq in (0, 1, 2):
                    got = moments.predict(post, xq, np.full(9, zq))
                    want = moments.predict(fresh, xq, np.full(9, zq))
                    np.testing.assert_allclose(got[0], want[0], rtol=1e-8, atol=1e-10)
                    np.testing.assert_allclose(got[1], want[1], rtol=1e-8, atol=1e-10)
                # the scaling is the anchor's, not the one of all the data
                held = models.make_scaling(opt.task.spec, np.asarray(opt.y[:opt.schedule.anchor]))
                assert float(post.scaling.y_mean) == pytest.approx(float(held.y_mean), rel=1e-12)
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
    assert appended >= 3


def test_both_drivers_make_the_same_decisions_with_the_thinned_schedule():
    prob = problems.get_problem("forrester")
    n_steps = 8
    h = tasks.run_problem(prob, 1e9, [0], THIN, max_evals=n_steps)
    opt = AskTell(tasks.problem_task(prob), THIN, seed=0)
    chosen = drive(opt, prob, n_steps)
    assert opt.schedule.anchor < len(opt.x) - 1  # the last steps appended
    np.testing.assert_allclose(np.stack([x for x, _ in chosen]), h.x[0, :n_steps], rtol=0, atol=1e-9)
    np.testing.assert_allclose([float(z) for _, z in chosen], h.z[0, :n_steps], rtol=0, atol=0)


def test_a_restored_run_goes_on_exactly_between_refits():
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    opt = AskTell(task, THIN, seed=2)
    drive(opt, prob, 5)
    state = opt.state_dict()
    assert state["refits"][0] is not None
    again = AskTell.from_state(task, THIN, state)
    assert again.schedule == opt.schedule
    a = drive(opt, prob, 4)
    b = drive(again, prob, 4)
    for (xa, za), (xb, zb) in zip(a, b):
        assert za == zb and np.array_equal(np.asarray(xa), np.asarray(xb))  # bit for bit
    with pytest.raises(ValueError, match="refits"):
        AskTell.from_state(task, THIN, {**state, "refits": [10 ** 6, None]})


def test_the_default_schedule_leaves_small_runs_as_they_were():
    """Below incremental_from the thinned schedule is the every-step schedule: the same
    decisions as refit_growth = 0, bit for bit."""
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    assert FAST.fit.refit_growth > 0 and FAST.fit.incremental_from == 500
    a = drive(AskTell(task, FAST, seed=3), prob, 3)
    b = drive(AskTell(task, with_(FAST, fit={"refit_growth": 0.0}), seed=3), prob, 3)
    for (xa, za), (xb, zb) in zip(a, b):
        assert za == zb and np.array_equal(np.asarray(xa), np.asarray(xb))
    assert stages.buffer_size(5) == 32


def test_believer_by_appends_is_the_believer_posterior():
    """Pending points appended at their posterior mean give the posterior that
    stages.believe_stage factorises afresh, and leave the carried posterior as it was."""
    prob = problems.get_problem("forrester")
    opt = AskTell(tasks.problem_task(prob), THIN, seed=4)
    drive(opt, prob, 4)
    n, post, buffers = opt.last_fit
    before = np.asarray(post.chol_inv).copy()
    xp, zp = np.asarray([[0.3], [0.71], [0.9]]), np.asarray([2.0, 1.0, 0.0])
    a = refits.believe(opt.task, post, buffers, n, xp, zp)
    b = stages.believe_stage(opt.task, post, buffers, n, xp, zp)
    xq = np.linspace(0, 1, 11)[:, None]
    for zq in (0, 2):
        for got, want in zip(moments.predict(a, xq, np.full(11, zq)), moments.predict(b, xq, np.full(11, zq))):
            np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(np.asarray(post.chol_inv), before)
    # an ask with a pending point in the thinned regime runs through it
    x1, z1 = opt.ask()
    x2, z2 = opt.ask()
    assert len(opt.pending()) == 2 and (not np.allclose(x1, x2) or z1 != z2)


def test_a_repeated_noiseless_point_refactorises_with_one_warning():
    spec = models.icm_model([(0.0, 1.0)] * 2, 2, noise=[1e-14, 1e-14], noise_floor=1e-14)
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(12, 2))
    x[11] = x[4]  # row 11 repeats row 4 (same fidelity, same value)
    z = np.asarray([0, 1] * 6, float)
    z[11] = z[4]
    y = np.sin(3 * x.sum(1))
    b = stages.pad_buffers(x, z, y, 32)
    params = models.default_params(spec)
    head = stages.pad_buffers(x[:10], z[:10], y[:10], 32)
    post = posterior.condition(spec, params, head.x, head.z, head.y, head.mask)
    with pytest.warns(refits.FactorUpdateWarning, match="observation 11") as seen:
        out = refits.extend(post, b, 10, 12, 32)
    assert len(seen) == 1
    for a in (out.chol_inv, out.alpha):
        assert np.all(np.isfinite(np.asarray(a)))
    mu, var = moments.predict(out, x[:3], z[:3].astype(int))
    assert np.all(np.isfinite(np.asarray(mu))) and np.all(np.asarray(var) >= 0)
