"""The learned cost model: recovery of known costs, a dense numpy reference, the
learned-cost plug in the decision rule and in ask/tell."""

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.gp import costmodel, models, posterior
from mumbo_jax.bo import optimize, rules, stages
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.settings import BOSettings, make_task

BOX = ((-10.0, 10.0), (-10.0, 10.0))
ZB = (-6.0, 0.0)


def _log_linear(x, z):
    """A known cost, log-linear in z (a power law in the data fraction 2^z) with a
    smooth dependence on x."""
    return np.exp(-4.0 + 1.2 * (z - ZB[0]) + 0.08 * x[:, 1] + 0.3 * np.sin(x[:, 0] / 4))


@pytest.fixture(scope="module")
def continuous_fit():
    rng = np.random.default_rng(0)
    x = rng.uniform(-10, 10, (40, 2))
    z = rng.uniform(-6, -3, 40)  # only the cheaper half of the fidelity range
    cost = _log_linear(x, z) * np.exp(0.03 * rng.normal(size=40))
    model = costmodel.continuous_cost_model(BOX, ZB)
    return model, x, z, cost, costmodel.fit_cost(model, x, z, cost, jax.random.PRNGKey(1))


def test_recovers_a_log_linear_cost_and_extrapolates_in_z(continuous_fit):
    _, _, _, _, fitted = continuous_fit
    rng = np.random.default_rng(1)
    xt = rng.uniform(-10, 10, (300, 2))
    for z, tol in ((-4.5, 0.05), (-1.5, 0.15), (0.0, 0.25)):
        pred = np.asarray(costmodel.predict_cost(fitted, xt, np.full(300, z)))
        err = np.abs(np.log(pred / _log_linear(xt, np.full(300, z))))
        # the (1, z) basis extrapolates the trend to unobserved fidelities: a stationary
        # kernel would revert to the mean log cost, a factor ~e^3 too cheap at z = 0
        assert np.median(err) < tol, (z, np.median(err))


def _matern52(r):
    s = np.sqrt(5.0) * r
    return (1 + s + s * s / 3) * np.exp(-s)


def test_prediction_matches_a_dense_numpy_gp(continuous_fit):
    model, x, z, cost, fitted = continuous_fit
    p = {k: np.asarray(v) for k, v in fitted.params.items()}
    # L from the packed entries, written out here: row-major lower triangle, log diagonal
    L = np.array([[np.exp(p["S_chol"][0]), 0.0], [p["S_chol"][1], np.exp(p["S_chol"][2])]])
    S, ls, noise = L @ L.T, np.exp(p["log_ls"]), 1e-4 + np.exp(p["log_noise"][0])
    b = np.asarray(BOX)

    def k(xa, za, xb, zb):
        ua, ub = (xa - b[:, 0]) / 20 / ls, (xb - b[:, 0]) / 20 / ls
        r = np.sqrt(np.sum((ua[:, None] - ub[None]) ** 2, -1))
        pa = np.stack([np.ones_like(za), (za + 6) / 6], 1)
        pb = np.stack([np.ones_like(zb), (zb + 6) / 6], 1)
        return _matern52(r) * (pa @ S @ pb.T)

    y = np.log(cost)
    ys = (y - y.mean()) / y.std()
    K = k(x, z, x, z) + noise * np.eye(len(y))
    xt = np.random.default_rng(2).uniform(-10, 10, (7, 2))
    zt = np.linspace(-6, 0, 7)
    ks = k(x, z, xt, zt)
    mean = ks.T @ np.linalg.solve(K, ys) * y.std() + y.mean()
    var = (np.diag(k(xt, zt, xt, zt)) - np.sum(ks * np.linalg.solve(K, ks), 0)) * y.var()
    mu, v = costmodel.log_cost_moments(fitted, xt, zt)
    np.testing.assert_allclose(np.asarray(mu), mean, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(v), var, rtol=1e-5, atol=1e-9)
    # median exp(mu) and log-normal mean exp(mu + v/2)
    np.testing.assert_allclose(np.asarray(costmodel.predict_cost(fitted, xt, zt)), np.exp(mean), rtol=1e-6)
    mean_model = costmodel.continuous_cost_model(BOX, ZB, prediction="mean")
    f2 = dataclasses.replace(fitted, model=mean_model)
    np.testing.assert_allclose(np.asarray(costmodel.predict_cost(f2, xt, zt)), np.exp(mean + var / 2), rtol=1e-5)


def test_cost_function_is_traceable_with_finite_gradients(continuous_fit):
    *_, fitted = continuous_fit
    c = costmodel.cost_function(fitted)
    g = jax.jit(jax.grad(lambda x, z: jnp.sum(c(x, z)), argnums=(0, 1)))(
        jnp.asarray([[10.0, -10.0], [0.0, 0.0]]), jnp.asarray([-6.0, 0.0]))
    assert all(np.all(np.isfinite(np.asarray(a))) for a in g)


def test_discrete_costs_per_task():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, (36, 1))
    z = np.tile(np.arange(3), 12)
    levels = np.asarray([10.0, 1.0, 0.1])
    cost = levels[z] * np.exp(0.5 * x[:, 0])
    fitted = costmodel.fit_cost(costmodel.discrete_cost_model([(0.0, 1.0)], 3), x, z, cost)
    xt = np.asarray([[0.2], [0.5], [0.9]])
    for task in range(3):
        pred = np.asarray(costmodel.predict_cost(fitted, xt, np.full(3, task)))
        np.testing.assert_allclose(pred, levels[task] * np.exp(0.5 * xt[:, 0]), rtol=0.05)


def test_constant_cost_and_a_single_point_are_finite():
    m = costmodel.continuous_cost_model(BOX, ZB)
    f = costmodel.fit_cost(m, [[0.0, 0.0]], [-3.0], [2.0])
    np.testing.assert_allclose(np.asarray(costmodel.predict_cost(f, [[1.0, 1.0]], [-3.0])), 2.0, rtol=1e-6)
    f = costmodel.fit_cost(m, np.zeros((5, 2)) + np.arange(5)[:, None], np.full(5, -2.0), np.full(5, 0.5))
    pred = np.asarray(costmodel.predict_cost(f, [[9.0, -9.0]], [0.0]))
    assert np.isfinite(pred).all() and pred > 0


@pytest.mark.parametrize("args,match", [
    (dict(cost=[1.0, 0.0]), "costs must be finite and > 0"),
    (dict(cost=[1.0, np.nan]), "costs must be finite and > 0"),
    (dict(z=[-3.0, 1.0]), "outside the fidelity bounds"),
    (dict(x=[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]), "x must have shape"),
    (dict(z=[-3.0]), "one per row of x"),
])
def test_bad_inputs_are_named(args, match):
    data = dict(x=[[0.0, 0.0], [1.0, 1.0]], z=[-3.0, -2.0], cost=[1.0, 2.0])
    data.update(args)
    with pytest.raises(ValueError, match=match):
        costmodel.fit_cost(costmodel.continuous_cost_model(BOX, ZB), **data)


def test_bad_models_are_named():
    with pytest.raises(ValueError, match="prediction"):
        costmodel.continuous_cost_model(BOX, ZB, prediction="mode")
    with pytest.raises(ValueError, match="fidelity_bounds"):
        costmodel.continuous_cost_model(BOX, (1.0, 1.0))
    with pytest.raises(ValueError, match="n_fidelities"):
        costmodel.discrete_cost_model(BOX, 0)
    with pytest.raises(ValueError, match="fidelity indices"):
        costmodel.fit_cost(costmodel.discrete_cost_model(BOX, 2), [[0.0, 0.0]], [2], [1.0])


# --------------------------------------------------------------------------- the plug

SMALL = BOSettings(strategy="mumbo", recommendation={"rule": "global"}, fit={"restarts": 1, "max_iter": 40},
                   maximiser={"n_candidates": 300, "n_starts": 4, "polish_steps": 10},
                   gstar={"grid": 1000, "samples": 4})


def _toy(x, z):
    """A smooth 2-D objective with a continuous fidelity z in [-6, 0]."""
    x = np.asarray(x, float) / 10
    return float(-np.sum((x - 0.2) ** 2) - 0.05 * (z / 6) ** 2 * np.sin(3 * x[0]))


def _wall(scale, x, z):
    """The toy task's known cost 2^z, times ``scale`` where x0 > 0."""
    return 2.0**z * jnp.where(x[:, 0] > 0, scale, 1.0)


@pytest.fixture(scope="module")
def toy_task():
    spec = models.fabolas_model(BOX, ZB)
    return make_task(spec, posterior.target_value(0.0), optimize.continuous_fidelity(ZB, lambda z: 2.0 ** z))


def test_learned_cost_steers_the_proposal(toy_task):
    """The same posterior and key: a learned cost equal to the known one gives the same
    proposal as no cost; a cost a million times higher for x0 > 0 moves it to x0 <= 0."""
    opt = AskTell(toy_task, SMALL, seed=0)
    while opt.in_initial_design:
        x, z = opt.ask()
        opt.tell(x, z, _toy(x, z))
    buffers = stages.pad_buffers(np.asarray(opt.x), np.asarray(opt.z), np.asarray(opt.y), 32)
    k_fit, k_g, k_max = stages.step_keys(opt.loop_key, 0)
    post = stages.fit_stage(SMALL, toy_task, buffers, opt.params, k_fit)
    gstar = stages.gstar_stage(SMALL, toy_task, post, k_g)
    base = rules.propose(SMALL, toy_task, post, gstar, k_max)
    same = rules.propose(SMALL, toy_task, post, gstar, k_max, jax.tree_util.Partial(_wall, jnp.asarray(1.0)))
    np.testing.assert_allclose(np.asarray(same.x), np.asarray(base.x), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(float(same.z), float(base.z), atol=1e-9)
    moved = rules.propose(SMALL, toy_task, post, gstar, k_max, jax.tree_util.Partial(_wall, jnp.asarray(1e6)))
    assert float(moved.x[0]) <= 0.0


def test_ask_tell_with_a_cost_model_and_a_custom_design(toy_task):
    design = (np.asarray([[-5.0, 5.0], [5.0, -5.0], [0.0, 0.0], [8.0, 8.0]] * 2),
              np.repeat([-6.0, -4.0], 4))
    cm = costmodel.cost_model_for(toy_task)  # the fixture's settings: one compiled fit
    opt = AskTell(toy_task, SMALL, seed=2, cost_model=cm, design=design)
    asked = []
    for _ in range(10):
        x, z = opt.ask()
        asked.append((x, z))
        opt.tell(x, z, _toy(x, z), cost=float(np.exp(1.5 * (z + 6))))
    for i in range(8):  # the custom design comes first, in order
        np.testing.assert_allclose(asked[i][0], design[0][i])
        assert asked[i][1] == design[1][i]
    assert opt.cost_fit is not None and len(opt.timings) == 2
    # the learned cost saw seconds growing as exp(1.5 (z + 6)): it predicts the target's
    np.testing.assert_allclose(float(costmodel.predict_cost(opt.cost_fit, [[0.0, 0.0]], [0.0])[0]),
                               np.exp(9.0), rtol=0.2)
    # plain-data round trip with the same design and cost model: the same next decision
    state = json.loads(json.dumps(opt.state_dict()))
    back = AskTell.from_state(toy_task, SMALL, state, cost_model=cm, design=design)
    x1, z1 = opt.ask()
    x2, z2 = back.ask()
    np.testing.assert_allclose(x1, x2, rtol=1e-6, atol=1e-6)
    assert abs(z1 - z2) < 1e-6


def test_ask_tell_rejects_bad_designs_and_cost_models(toy_task):
    with pytest.raises(ValueError, match="outside its bounds"):
        AskTell(toy_task, SMALL, design=(np.zeros((2, 2)), np.asarray([-3.0, 1.0])))
    with pytest.raises(ValueError, match="search box"):
        AskTell(toy_task, SMALL, design=(np.full((2, 2), 11.0), np.asarray([-3.0, -2.0])))
    with pytest.raises(ValueError, match="pair"):
        AskTell(toy_task, SMALL, design=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="CostModel"):
        AskTell(toy_task, SMALL, cost_model=lambda x, z: 1.0)


# --------------------------------------------------------------------------- the FABOLAS study, short


@pytest.mark.slow  # ~8 s of the default run: a short study
def test_fabolas_study_short(toy_task):
    """experiments/paper/fabolas_svm.py, a couple of BO steps on the digits SVM (moved here from
    tests/test_hpo.py): its task is this file's toy task up to the known cost's Python
    function (a pytree's static part), so the study runs on ``toy_task`` and its MUMBO leg
    (SMALL, an 8-point design, the learned cost, two decisions) reuses the compiled programs
    of the ask/tell test above instead of compiling its own."""
    import importlib.util
    import pathlib

    from mumbo_jax.benchmarks import hpo

    spec = importlib.util.spec_from_file_location(
        "fabolas_svm", pathlib.Path(__file__).resolve().parents[1] / "experiments" / "paper" / "fabolas_svm.py")
    fab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fab)
    obj = hpo.SubsetSVM(hpo.digits_split(0, augment=False))
    # the study's own task is this one: model, target and fidelity box equal, the same cost
    own = fab.make_task(obj)
    assert (own.spec, own.target_z, own.target_w) == (toy_task.spec, toy_task.target_z, toy_task.target_w)
    assert (own.space.n_fidelities, own.space.bounds, own.space.choices) == (
        toy_task.space.n_fidelities, toy_task.space.bounds, toy_task.space.choices)
    zs = jnp.linspace(*ZB, 7)
    np.testing.assert_allclose(np.asarray(own.space.cost(zs)), np.asarray(toy_task.space.cost(zs)), rtol=1e-15)
    task = toy_task
    mumbo = fab.run_bo("mumbo", obj, task, 1e9, 0, settings=SMALL, n_design_settings=2, log=lambda s: None,
                       max_evals=10)
    ev = mumbo["evals"]
    assert len(ev) == 10
    np.testing.assert_allclose([e["z"] for e in ev[:8]], np.repeat([-6, -5, -4, -3], 2))
    assert all(e["seconds"] > 0 for e in ev) and len(mumbo["trace"]) == 2
    assert mumbo["optimiser"].cost_fit is not None  # MUMBO divided by the learned cost
    ei = fab.run_bo("ei", obj, task, 1e9, 0, settings=SMALL, log=lambda s: None, max_evals=5)
    assert [e["z"] for e in ei["evals"]] == [0.0] * 5  # full data only
    rs = fab.run_random(obj, 1e9, 0, log=lambda s: None, max_evals=3)
    grid, table = fab.summarise([mumbo, ei, rs], obj, budget=max(r["evals"][-1]["elapsed"] for r in (mumbo, ei, rs)))
    for row in table.values():
        final = np.asarray(row["final_test_error_per_seed"])
        assert np.all((final >= 0) & (final <= 1))
