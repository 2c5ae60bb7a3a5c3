"""The ask/tell driver: what tell accepts and rejects, the incumbent without a refit,
the initial design's size carried to the rules, and its plain-data state."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import stages
from mumbo_jax.bo.asktell import AskTell
from tests.bo_helpers import FAST, drive, with_


@pytest.fixture()
def forrester_opt():
    prob = problems.get_problem("forrester")
    return prob, AskTell(tasks.problem_task(prob), FAST, seed=3)


def test_tell_accepts_numpy_scalars_integral_floats_and_one_element_arrays(forrester_opt):
    _, opt = forrester_opt
    opt.tell(np.asarray([0.5]), 1.0, np.float64(-1.5))
    opt.tell([0.25], np.int64(2), np.asarray([2.0]))
    opt.tell(jnp.asarray([0.75]), np.float32(0.0), jnp.asarray(0.5), cost=np.asarray([3.0]))
    assert opt.z == [1.0, 2.0, 0.0] and opt.y == [-1.5, 2.0, 0.5]
    assert opt.costs == [5.0, 2.0, 3.0]  # known costs of fidelities 1 and 2, then the told one
    # rounding just past the box is clipped, not rejected
    opt.tell([1.0 + 1e-12], 0, 0.0)
    assert opt.x[-1][0] == 1.0


@pytest.mark.parametrize("args,message", [
    (([0.5], 0, "0.5"), "y must be a real number, got str '0.5'"),
    (([0.5], 0, float("nan")), "y must be finite, got nan"),
    (([0.5], 0, np.asarray([1.0, 2.0])), r"y must be a real number \(or a 1-element array\)"),
    (([0.5], 0, None), "y must be a real number"),
    (([1.5], 0, 1.0), r"x \[1.5\] lies outside the search box \[\[0.0, 1.0\]\]"),
    (([0.5, 0.5], 0, 1.0), "x must have 1 coordinates"),
    (([np.nan], 0, 1.0), "x must be finite"),
    (([0.5], 1.5, 1.0), "fidelity 1.5 does not exist; this task has fidelities 0..2"),
    (([0.5], 5, 1.0), "fidelity 5 does not exist"),
    (([0.5], "1", 1.0), "z must be a real number, got str"),
    (([0.5], 0, 1.0, -2.0), "cost must be > 0"),
])
def test_tell_rejects_bad_input_with_our_message(forrester_opt, args, message):
    _, opt = forrester_opt
    with pytest.raises(ValueError, match=message):
        opt.tell(*args)
    assert opt.x == []  # nothing recorded


def test_continuous_fidelity_tell():
    prob = problems.get_problem("currin_continuous")
    opt = AskTell(tasks.problem_task(prob), FAST, seed=0)
    opt.tell([0.5, 0.5], np.float64(0.25), 1.0)
    assert opt.z == [0.25]
    with pytest.raises(ValueError, match=r"fidelity 1.5 is outside the fidelity bounds \[0, 1\]"):
        opt.tell([0.5, 0.5], 1.5, 1.0)


def test_incumbent_reuses_the_last_fit(forrester_opt, monkeypatch):
    prob, opt = forrester_opt
    with pytest.raises(ValueError, match="no evaluations yet"):
        opt.incumbent()
    drive(opt, prob, 1)
    x, z = opt.ask()  # a fit on everything told so far
    calls = []
    fit = stages.fit_stage
    monkeypatch.setattr(stages, "fit_stage", lambda *a: calls.append(a[-1]) or fit(*a))
    compiles = []

    def listen(event, duration, **kw):
        # a program compiled, or read from the persistent compilation cache that the test
        # run shares (tests/conftest.py): either way one that the asks had not compiled
        if event in ("/jax/core/compile/backend_compile_duration", "/jax/compilation_cache/cache_retrieval_time_sec"):
            compiles.append(duration)

    x_inc, mu = opt.incumbent()
    assert calls == [] and opt.incumbent() == (x_inc, mu)  # the ask's posterior, as is
    opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
    params = {k: np.asarray(v) for k, v in opt.params.items()}
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        x2, mu2 = opt.incumbent()
        opt.incumbent()
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert calls == [False]  # one conditioning on the new point, no refit, then reused
    assert compiles == []  # the asks' compiled programs
    for k, v in opt.params.items():
        np.testing.assert_array_equal(np.asarray(v), params[k])
    # independent check: the incumbent (the default rule "global") maximises the posterior mean
    # of g over the box: its mean is the model's there, at least that of every told x and of
    # every point of a dense grid (Forrester is 1-D on [0, 1])
    post = opt.last_fit[1]

    def mean_at(xs):
        xs = np.asarray(xs, float).reshape(-1, 1)
        return np.asarray(stages.moments.predict(post, xs, np.zeros(len(xs), int))[0])

    assert mu2 == pytest.approx(float(mean_at(x2)[0]), rel=1e-10)
    assert mu2 >= float(mean_at(np.asarray(opt.x)).max()) - 1e-12
    assert mu2 >= float(mean_at(np.linspace(0.0, 1.0, 2001)).max()) - 1e-6 * (1.0 + abs(mu2))


def test_design_size_is_carried_to_the_rules(monkeypatch):
    """A custom design of 4 points (the paper's would have 6): the rules are told 4, in
    ask/tell and from a restored state; the compiled driver tells them its own design's size."""
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    design = (np.asarray([[0.1], [0.5], [0.9], [0.3]]), np.asarray([0, 1, 2, 2]))
    seen = []
    stage = stages.maximise_stage
    monkeypatch.setattr(stages, "maximise_stage", lambda *a: seen.append(int(a[-1])) or stage(*a))
    opt = AskTell(task, with_(FAST, strategy="mf_gp_ucb"), seed=0, design=design)
    assert opt.n_design == 4
    drive(opt, prob, 2)
    restored = AskTell.from_state(task, opt.settings, opt.state_dict(), design=design)
    restored.ask()
    assert seen == [4, 4, 4]
    state = stages.init(task, *design, np.zeros(4))
    assert int(state.n_design) == 4 and int(state.n) == 4 and state.buffers.x.shape[0] == 32


def test_state_round_trip(forrester_opt):
    prob, opt = forrester_opt
    drive(opt, prob, 1)
    state = json.loads(json.dumps(opt.state_dict()))  # plain data
    restored = AskTell.from_state(opt.task, opt.settings, state)
    x1, z1 = opt.ask()
    x2, z2 = restored.ask()
    assert z1 == z2
    np.testing.assert_array_equal(x1, x2)


def test_kernel_decide_is_the_first_bo_ask():
    """The decision stages over plain state makes ask/tell's first BO decision."""
    prob = problems.get_problem("forrester")
    opt = AskTell(tasks.problem_task(prob), FAST, seed=5)
    for _ in range(opt.n_design):
        x, z = opt.ask()
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
    state = stages.init(opt.task, np.asarray(opt.x), np.asarray(opt.z), np.asarray(opt.y))
    _, prop = stages.decide(FAST, opt.task, state, opt.loop_key)
    x, z = opt.ask()
    assert int(prop.z) == z
    np.testing.assert_array_equal(np.asarray(prop.x), x)


def test_recommendation_gives_the_incumbent_with_a_widened_sd(forrester_opt):
    """recommendation(): the incumbent's x and mean, and an sd no narrower than the
    model's own (interval_calibration = "none"), wider by exactly the leave-one-out
    scale of the target rows."""
    from mumbo_jax.bo import incumbent as inc

    prob, opt = forrester_opt
    rng = np.random.default_rng(0)
    for z in (0, 0, 0, 1, 1, 2, 2, 2):
        x = rng.uniform(size=1)
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
    x, mean, sd = opt.recommendation()
    xi, mi = opt.incumbent()
    np.testing.assert_array_equal(x, xi)
    assert mean == mi and np.isfinite(sd) and sd > 0
    raw = AskTell(opt.task, with_(FAST, recommendation={"calibration": "none"}), seed=3)
    for xs, zs, ys in zip(opt.x, opt.z, opt.y):
        raw.tell(xs, zs, ys)
    _, mean0, sd0 = raw.recommendation()
    assert mean0 == pytest.approx(mean, rel=1e-12)
    post = opt.last_fit[1]
    np.testing.assert_allclose(sd, sd0 * float(inc.interval_scale(post, opt.task.target)), rtol=1e-9)
