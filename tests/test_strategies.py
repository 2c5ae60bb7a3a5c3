"""Rules with a known answer, checked against independent references (scipy, dense
numpy), the declared target honoured, and the gain paths agreeing."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from mumbo_jax.acquisition import acquisitions
from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import optimize, rules, stages
from mumbo_jax.bo.settings import make_task
from mumbo_jax.gp import fitting, models, moments, posterior
from tests.bo_helpers import FAST, with_


def _fitted(task, prob, n_per_level=6, key=0):
    x0, z0 = stages.initial_design(task, jax.random.PRNGKey(key), n_per_level)
    zp = z0.astype(int) if prob.is_discrete else z0
    y = jax.vmap(lambda x, z: problems.objective(prob, x, z))(x0, zp)
    return fitting.fit(task.spec, x0, zp, y, jax.random.PRNGKey(1), n_restarts=1, max_iter=60)


@pytest.fixture(scope="module")
def discrete():
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    return prob, task, _fitted(task, prob)


def _propose(task, post, strategy, key=3, **kw):
    """A proposal straight from the rule (the maximiser compiles once per acquisition
    structure, whatever the settings' numbers)."""
    settings = with_(FAST, strategy=strategy, **kw)
    gstar = stages.gstar_stage(settings, task, post, jax.random.PRNGKey(2))
    return rules.propose(settings, task, post, gstar, jax.random.PRNGKey(key), None, jnp.asarray(0))


def _ei_reference(mu, sd, eta):
    u = (mu - eta) / sd
    return sd * (u * stats.norm.cdf(u) + stats.norm.pdf(u))


def test_mt_ei_against_a_scipy_reference(discrete):
    """MT-EI's x maximises EI of the target (checked on a dense grid with scipy's normal)
    and its fidelity maximises EI_z(x) / cost(z), eta_z the best posterior mean of f(., z)
    at the evaluated x (scipy again)."""
    _, task, post = discrete
    prop = _propose(task, post, "mt_ei")
    grid = np.linspace(0.0, 1.0, 4001)[:, None]
    x_eval = np.asarray(post.scaling.x_lower + post.scaling.x_width * post.x)
    mu0, var0 = (np.asarray(a) for a in moments.predict(post, grid, np.zeros(len(grid), int)))
    mu_e, _ = moments.predict(post, x_eval, np.zeros(len(x_eval), int))
    ei = _ei_reference(mu0, np.sqrt(var0), float(np.max(mu_e)))
    i = int(np.argmax(ei))
    mu_x, var_x = (float(a[0]) for a in moments.predict(post, np.asarray(prop.x)[None], np.zeros(1, int)))
    ei_x = float(_ei_reference(mu_x, np.sqrt(var_x), float(np.max(mu_e))))
    assert ei_x >= ei[i] * (1 - 1e-6), (ei_x, ei[i], grid[i])  # no grid point beats the polished x
    per_cost = []
    for z in range(3):
        m, v = (float(a[0]) for a in moments.predict(post, np.asarray(prop.x)[None], np.full(1, z)))
        eta_z = float(np.max(moments.predict(post, x_eval, np.full(len(x_eval), z))[0]))
        per_cost.append(_ei_reference(m, np.sqrt(v), eta_z) / problems.get_problem("forrester").costs[z])
    assert int(prop.z) == int(np.argmax(per_cost))
    np.testing.assert_allclose(float(prop.score), max(per_cost), rtol=1e-6)


def test_mf_gp_ucb_fidelity_follows_beta(discrete):
    """beta = 0: sqrt(beta) sd = 0 is below every positive threshold, so the target; with
    a huge beta every cheaper fidelity is uncertain enough: the cheapest."""
    _, task, post = discrete
    assert int(_propose(task, post, "mf_gp_ucb", options={"mf_gp_ucb": {"beta": 0.0}}).z) == 0
    assert int(_propose(task, post, "mf_gp_ucb", options={"mf_gp_ucb": {"beta": 1e8}}).z) == 2


@pytest.mark.parametrize("strategy", ["ei", "random", "mes", "ucb"])
def test_target_only_rules_query_the_declared_target(discrete, strategy):
    prob, task0, post = discrete
    task1 = make_task(task0.spec, posterior.target_fidelity(1), task0.space)
    assert int(_propose(task1, post, strategy).z) == 1
    assert int(_propose(task0, post, strategy).z) == 0


def test_mumbo_scores_the_declared_target(discrete):
    """With target_fidelity(1), MUMBO's score at its proposal is the gain about g = f(., 1)
    (recomputed from the joint moments for that target), not about f(., 0)."""
    _, task0, post = discrete
    task1 = make_task(task0.spec, posterior.target_fidelity(1), task0.space)
    settings = with_(FAST, strategy="mumbo")
    gstar = stages.gstar_stage(settings, task1, post, jax.random.PRNGKey(2))
    prop = rules.propose(settings, task1, post, gstar, jax.random.PRNGKey(3), None, jnp.asarray(0))
    x, z = prop.x[None], jnp.atleast_1d(prop.z)

    def gain(target):
        m = moments.joint_moments(post, x, z, target)
        return float(acquisitions.mumbo_gain(m.mu_g, m.var_g, m.mu_y, m.var_y, m.cov, gstar)[0])

    np.testing.assert_allclose(float(prop.alpha), gain(posterior.target_fidelity(1)), rtol=1e-10)
    assert abs(gain(posterior.target_fidelity(0)) - float(prop.alpha)) > 1e-3 * float(prop.alpha)
    # the incumbent follows the target too: the evaluated x with the best mean of f(., 1)
    i, mu = stages.incumbent_row(task1, post)
    x_eval = post.scaling.x_lower + post.scaling.x_width * post.x
    mu1, _ = moments.predict(post, x_eval, jnp.ones(x_eval.shape[0], int))
    # the design repeats each x at every fidelity: the best mean is tied across those rows
    # (to the last bit or not, by the reduction order), so the row's mean is checked, not its index
    mu1 = np.asarray(mu1)
    assert mu1[int(i)] == pytest.approx(np.max(mu1), rel=1e-12) and float(mu) == pytest.approx(np.max(mu1), rel=1e-12)


def test_learned_cost_divides_single_stage_rules_only(discrete):
    """A constant learned cost c leaves the choice unchanged and divides the score."""
    _, task, post = discrete
    settings = with_(FAST, strategy="ei")
    gstar = jnp.zeros(FAST.gstar.samples)
    key = jax.random.PRNGKey(3)
    base = rules.propose(settings, task, post, gstar, key, None, jnp.asarray(0))
    const = jax.tree_util.Partial(lambda c, x, z: c * jnp.ones(x.shape[0]), jnp.asarray(4.0))
    scaled = rules.propose(settings, task, post, gstar, key, const, jnp.asarray(0))
    np.testing.assert_allclose(np.asarray(scaled.x), np.asarray(base.x), atol=1e-12)
    # known cost at the target is 10, the learned one 4
    np.testing.assert_allclose(float(scaled.score) * 4.0, float(base.score) * 10.0, rtol=1e-10)


def test_fidelity_space_restriction():
    space = optimize.discrete_fidelities([10.0, 5.0, 2.0])
    one = optimize.restrict(space, 2)
    assert one.fidelities.tolist() == [2] and one.n_choices == 1 and one.n_fidelities == 3
    with pytest.raises(ValueError, match="fidelity 3 does not exist"):
        optimize.restrict(space, 3)
    cont = optimize.restrict(optimize.continuous_fidelity((0.0, 1.0), lambda z: 0.1 + z**2), 0.5)
    assert cont.bounds == (0.5, 0.5)
    spec = models.icm_model([(0.0, 1.0)], 3)
    prop = optimize.maximise(jax.random.PRNGKey(0), lambda x, z: -(x[:, 0] - 0.3) ** 2 + 0.0 * z, spec.bounds, one,
                             n_candidates=50, n_starts=2)
    assert int(prop.z) == 2
