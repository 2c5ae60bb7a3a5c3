"""Every decision rule of strategies.propose on fitted posteriors: valid proposals, the
rule's own choice where it has a known answer, and clear errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.acquisition import baselines
from mumbo_jax.gp import fitting
from mumbo_jax.bo import loop, strategies
from mumbo_jax.benchmarks import problems

SMALL = dict(n_candidates=200, n_starts=2, n_polish_steps=3, gstar_grid=500)


def _fitted(name, n_per_level=6, key=0):
    prob = problems.get_problem(name)
    task = loop.problem_task(prob)
    x0, z0 = loop.initial_design(task, jax.random.PRNGKey(key), n_per_level)
    zp = z0.astype(int) if prob.is_discrete else z0
    y = jax.vmap(lambda x, z: problems.objective(prob, x, z))(x0, zp)
    post = fitting.fit(task.spec, x0, zp, y, jax.random.PRNGKey(1), n_restarts=1, max_iter=60)
    return prob, task, post


@pytest.fixture(scope="module")
def discrete():
    return _fitted("forrester")


@pytest.fixture(scope="module")
def continuous():
    return _fitted("currin_continuous", 4)


def _propose(task, post, strategy, **kw):
    settings = loop.BOSettings(strategy=strategy, **SMALL, **kw)
    gstar = loop.gstar_stage(settings, task, post, jax.random.PRNGKey(2))
    return loop.maximise_stage(settings, task, post, gstar, jax.random.PRNGKey(3))


@pytest.mark.parametrize("strategy", ["mumbo", "mes", "random", "ei", "ucb", "mt_ei", "mf_gp_ucb", "mtbo"])
def test_discrete_strategies_propose_valid_points(discrete, strategy):
    prob, task, post = discrete
    prop = _propose(task, post, strategy, mtbo_samples=20, mtbo_representers=10)
    x, z = np.asarray(prop.x), int(prop.z)
    b = np.asarray(prob.bounds)
    assert np.all(x >= b[:, 0]) and np.all(x <= b[:, 1])
    assert 0 <= z < prob.n_fidelities and np.isfinite(float(prop.score))
    if strategy in strategies.TARGET_ONLY:
        assert z == 0


@pytest.mark.parametrize("strategy", [pytest.param("mumbo", marks=pytest.mark.slow),
                                      pytest.param("ei", marks=pytest.mark.slow),
                                      pytest.param("mt_ei", marks=pytest.mark.slow), "boca", "mtbo"])
def test_continuous_strategies_propose_valid_points(continuous, strategy):
    prob, task, post = continuous
    prop = _propose(task, post, strategy, mtbo_samples=20, mtbo_representers=10)
    z = float(prop.z)
    lo, hi = prob.fidelity_bounds
    assert lo <= z <= hi and np.isfinite(float(prop.score))
    if strategy == "ei":
        assert z == 1.0


def test_two_stage_rules_pick_their_x_by_the_target_acquisition(discrete):
    """MT-EI's x is the EI maximiser at the target (the same maximiser call), and its
    fidelity maximises EI_z(x) / cost(z) over the three fidelities."""
    _, task, post = discrete
    ei = _propose(task, post, "ei")
    mt = _propose(task, post, "mt_ei")
    np.testing.assert_allclose(np.asarray(mt.x), np.asarray(ei.x), atol=1e-12)
    zs = jnp.arange(3)
    xs = jnp.broadcast_to(mt.x, (3, 1))
    etas = jnp.stack([baselines.fidelity_incumbent(post, z) for z in range(3)])
    per_cost = baselines.fidelity_ei(post, xs, zs, etas) / jnp.asarray(task.space.cost(zs))
    assert int(mt.z) == int(jnp.argmax(per_cost))


def test_mf_gp_ucb_goes_to_the_target_with_a_zero_beta(discrete):
    """beta = 0: sqrt(beta) sd = 0 is below every positive threshold, so the target."""
    _, task, post = discrete
    assert int(_propose(task, post, "mf_gp_ucb", ucb_beta=0.0).z) == 0
    # with a huge beta every cheaper fidelity is uncertain enough: the cheapest
    assert int(_propose(task, post, "mf_gp_ucb", ucb_beta=1e8).z) == 2


def test_wrong_kind_of_fidelity_space_is_a_clear_error(discrete, continuous):
    with pytest.raises(ValueError, match="continuous fidelity"):
        strategies.check_strategy_for_task("boca", discrete[1])
    with pytest.raises(ValueError, match="discrete fidelities"):
        strategies.check_strategy_for_task("mf_gp_ucb", continuous[1])
    with pytest.raises(ValueError, match="unknown strategy"):
        loop.BOSettings(strategy="kg")
    with pytest.raises(ValueError, match="ucb_beta"):
        loop.BOSettings(strategy="ucb", ucb_beta=-1.0)
    with pytest.raises(ValueError, match="mtbo_samples"):
        loop.BOSettings(strategy="mtbo", mtbo_samples=0)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", strategies.STRATEGIES)
def test_every_strategy_runs_the_compiled_loop(strategy):
    name = "currin_continuous" if strategy == "boca" else "forrester"
    prob = problems.get_problem(name)
    settings = loop.BOSettings(strategy=strategy, **SMALL, mtbo_samples=20, mtbo_representers=10)
    h = loop.run_compiled(prob, 50.0, [0], settings, max_evals=6)
    n = int(h.n_evals[0])
    assert n >= 1 and np.all(np.isfinite(np.asarray(h.regret[0, : n + 1])))
