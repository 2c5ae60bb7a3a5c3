"""Asynchronous ask/tell: pending evaluations enter the decision, results come back in
any order, a pending point told twice is an error, the state keeps pending points."""

import json

import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.acquisition import fantasy
from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import stages
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.gp import moments
from tests.bo_helpers import FAST, drive, with_


def _f(prob, x, z):
    return float(problems.objective(prob, jnp.asarray(x), z))


@pytest.fixture(scope="module")
def after_design():
    """A forrester optimiser with its design told (state dict), shared by the tests."""
    prob = problems.get_problem("forrester")
    opt = AskTell(tasks.problem_task(prob), FAST, seed=3)
    drive(opt, prob, 1)
    return prob, opt.state_dict()


def _restore(prob, state, **kw):
    return AskTell.from_state(tasks.problem_task(prob), FAST, json.loads(json.dumps(state)), **kw)


@pytest.mark.parametrize("mode", ["believer", "gibbon"])
def test_second_ask_with_one_pending_is_another_point(after_design, mode):
    prob, state = after_design
    opt = _restore(prob, state, pending=mode)
    x1, z1 = opt.ask()
    x2, z2 = opt.ask()
    assert [p.design_index for p in opt.pending()] == [None, None]
    assert not (z1 == z2 and np.allclose(x1, x2, atol=1e-3)), (x1, z1, x2, z2)
    # nothing pending: the sequential decision, whatever the mode
    ref = _restore(prob, state)
    xr, zr = ref.ask()
    if mode == "believer":
        np.testing.assert_array_equal(x1, xr)
        assert z1 == zr


def test_believer_posterior_is_the_fantasy_posterior(after_design):
    """stages.believe_stage (padded buffers) against fantasy.fantasize (independent
    construction: training values recovered from the factorisation)."""
    prob, state = after_design
    opt = _restore(prob, state)
    opt.ask()
    _, post, buffers = opt.last_fit
    xp, zp = np.asarray([[0.3], [0.71]]), np.asarray([2, 0])
    believed = stages.believe_stage(opt.task, post, buffers, len(opt.x), xp, zp.astype(float))
    ref = fantasy.fantasize(post, xp, zp)
    xs = np.linspace(0, 1, 17)[:, None]
    for z in (0, 1, 2):
        m1, v1 = moments.predict(believed, xs, np.full(17, z))
        m2, v2 = moments.predict(ref, xs, np.full(17, z))
        m0, _ = moments.predict(post, xs, np.full(17, z))
        np.testing.assert_allclose(m1, m2, rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(v1, v2, rtol=1e-6, atol=1e-10)
        np.testing.assert_allclose(m1, m0, rtol=1e-7, atol=1e-7)  # the believer keeps the mean
    v_at = moments.predict(believed, xp[:1], zp[:1])[1]
    v_before = moments.predict(post, xp[:1], zp[:1])[1]
    assert float(v_at[0]) < 0.5 * float(v_before[0])


def test_tell_in_any_order_cancel_and_told_twice(after_design):
    prob, state = after_design
    opt = _restore(prob, state)
    n0 = len(opt.x)
    asked = [opt.ask() for _ in range(3)]
    assert len(opt.pending()) == 3
    x3, z3 = asked[2]
    opt.tell(x3, z3, _f(prob, x3, z3))  # the last one first
    assert [p.x for p in opt.pending()] == [tuple(asked[0][0]), tuple(asked[1][0])]
    with pytest.raises(ValueError, match="a pending point told twice"):
        opt.tell(x3, z3, 0.0)
    opt.cancel(*asked[0])
    with pytest.raises(ValueError, match="no pending evaluation at .*nothing to cancel"):
        opt.cancel(*asked[0])
    opt.tell(asked[1][0], asked[1][1], _f(prob, *asked[1]))
    assert opt.pending() == [] and len(opt.x) == n0 + 2
    opt.tell([0.123], 0, 1.0)  # a user's own point is still welcome
    assert len(opt.x) == n0 + 3


def test_design_is_handed_out_while_pending_and_told_out_of_order():
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    opt = AskTell(task, FAST, seed=1)
    first = [opt.ask() for _ in range(3)]
    assert opt.in_initial_design and opt.asks_design
    assert [p.design_index for p in opt.pending()] == [0, 1, 2]
    for (x, z), (xd, zd) in zip(first, opt.design[:3]):
        np.testing.assert_array_equal(x, xd)
        assert z == zd
    opt.tell(*first[1], 0.5)
    opt.cancel(*first[0])  # dropped: handed out again by the next ask
    x, z = opt.ask()
    np.testing.assert_array_equal(x, first[0][0])
    restored = AskTell.from_state(task, FAST, json.loads(json.dumps(opt.state_dict())))
    assert restored.pending() == opt.pending()
    assert restored.ask()[1] == opt.ask()[1] == opt.design[3][1]  # both go on with row 3


def test_a_bo_step_needs_one_told_result():
    opt = AskTell(tasks.problem_task(problems.get_problem("forrester")), FAST, seed=1)
    for _ in range(opt.n_design):
        opt.ask()
    # every design point handed out: the next ask is a BO step, but the design is not complete
    assert opt.in_initial_design and not opt.asks_design
    with pytest.raises(ValueError, match="nothing told yet and all 6 design points are pending"):
        opt.ask()


def test_state_keeps_pending_and_restores_the_decision(after_design):
    prob, state = after_design
    opt = _restore(prob, state)
    opt.ask()
    restored = _restore(prob, opt.state_dict())
    assert restored.pending() == opt.pending()
    x1, z1 = opt.ask()
    x2, z2 = restored.ask()
    assert z1 == z2
    np.testing.assert_allclose(x1, x2, rtol=0, atol=1e-12)


def test_bad_pending_mode():
    task = tasks.problem_task(problems.get_problem("forrester"))
    with pytest.raises(ValueError, match="pending must be one of believer, gibbon, got 'x'"):
        AskTell(task, FAST, pending="x")
    with pytest.raises(ValueError, match="pending='gibbon' needs a rule that samples g"):
        AskTell(task, with_(FAST, strategy="mf_gp_ucb"), pending="gibbon")
