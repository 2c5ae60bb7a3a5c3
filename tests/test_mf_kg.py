"""The multi-fidelity knowledge gradient rule ``mf_kg`` (mumbo_jax/rules_contrib/mf_kg.py).

References are independent of the code under test: Frazier, Powell & Dayanik's sorted
upper-envelope algorithm in numpy for the closed form, Monte Carlo over the standard
normal for the envelope expectation, and for the rule's value a brute-force Monte Carlo
over fantasies: a dense numpy GP (Gram matrices of the model's kernel, numpy solves)
conditioned on each sampled y, the new posterior mean of g taken at every point of the
discrete set, its maximum averaged.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import rules
from mumbo_jax.gp import models, posterior
from mumbo_jax.rules_contrib import mf_kg
from tests.bo_helpers import FAST, with_


# --------------------------------------------------------------------------- the closed form


def _kg_sorted(a, b):
    """Frazier, Powell & Dayanik (2009), Algorithm 1: sort by slope, drop dominated lines,
    sum (b_{k+1} - b_k) f(-|c_k|) over the envelope's breakpoints, f(t) = t Phi(t) + phi(t)."""
    order = np.lexsort((a, b))  # by slope, then intercept
    a, b = a[order], b[order]
    keep = np.r_[b[1:] != b[:-1], True]  # equal slopes: the largest intercept stays
    a, b = a[keep], b[keep]
    env, cs = [0], [-np.inf]
    for i in range(1, len(a)):
        while True:
            j = env[-1]
            c = (a[j] - a[i]) / (b[i] - b[j])
            if len(env) > 1 and c <= cs[-1]:
                env.pop()
                cs.pop()
            else:
                break
        env.append(i)
        cs.append(c)
    b_env, c_env = b[env], np.asarray(cs[1:])
    f = lambda t: t * stats.norm.cdf(t) + stats.norm.pdf(t)
    return float(np.sum(np.diff(b_env) * f(-np.abs(c_env))))


def test_discrete_kg_matches_the_sorted_envelope_algorithm_and_monte_carlo():
    rng = np.random.default_rng(0)
    n_sets, size = 40, 9
    a = rng.normal(size=(n_sets, size)) * rng.uniform(0.1, 3, size=(n_sets, 1))
    b = rng.normal(size=(n_sets, size))
    a[::3, -1], b[::3, -1] = a[::3, 0], b[::3, 0]  # repeated lines, as a candidate at a point of A makes
    b[::3, 1] = b[::3, 0]  # repeated slopes
    b[1::3, 2:5] = 0.0  # several lines the observation cannot move
    got = np.asarray(mf_kg.discrete_kg(a, b))  # one vectorised call
    want = np.asarray([_kg_sorted(ai, bi) for ai, bi in zip(a, b)])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)
    z = rng.standard_normal(1_000_000)
    for i in range(4):
        mc = np.max(a[i][None] + b[i][None] * z[:, None], axis=1) - a[i].max()
        assert abs(got[i] - mc.mean()) < 4 * mc.std() / np.sqrt(z.size)


def test_discrete_kg_limits_and_extremes_stay_finite():
    # one line, or lines that all move together: the best point cannot change
    assert float(mf_kg.discrete_kg(jnp.asarray([0.3]), jnp.asarray([2.0]))) == 0.0
    assert float(mf_kg.discrete_kg(jnp.asarray([0.0, -1.0, 2.0]), jnp.full(3, 0.7))) == 0.0
    assert float(mf_kg.discrete_kg(jnp.zeros(4), jnp.zeros(4))) == 0.0
    # two lines through the same point with slopes +-s: E[s |Z|] = s sqrt(2 / pi)
    np.testing.assert_allclose(float(mf_kg.discrete_kg(jnp.zeros(2), jnp.asarray([-1.5, 1.5]))),
                               1.5 * np.sqrt(2 / np.pi), rtol=1e-13)
    # far-apart intercepts (the crossing at |Z| ~ 1e8): no measurable gain, no NaN
    cases = [
        (jnp.asarray([0.0, -1e8]), jnp.asarray([0.0, 1.0])),
        (jnp.asarray([0.0, -1e-300]), jnp.asarray([1e-300, 0.0])),
        (jnp.asarray([1e300, -1e300, 0.0]), jnp.asarray([1.0, -1.0, 1e-20])),
        (jnp.asarray([0.0, 1e-15, 0.0]), jnp.asarray([1.0, 1.0 + 1e-15, -1.0])),
    ]
    grad = jax.grad(lambda a, b: mf_kg.discrete_kg(a, b), argnums=(0, 1))
    for a, b in cases:
        value = float(mf_kg.discrete_kg(a, b))
        assert np.isfinite(value) and value >= 0.0
        ga, gb = grad(a, b)
        assert np.all(np.isfinite(np.asarray(ga))) and np.all(np.isfinite(np.asarray(gb)))
    assert float(mf_kg.discrete_kg(*cases[0])) < 1e-300
    # vectorised over leading axes, as the rule calls it
    a = np.random.default_rng(1).normal(size=(3, 5, 6))
    b = np.random.default_rng(2).normal(size=(3, 5, 6))
    out = np.asarray(mf_kg.discrete_kg(a, b))
    assert out.shape == (3, 5)
    np.testing.assert_allclose(out[2, 4], _kg_sorted(a[2, 4], b[2, 4]), rtol=1e-10)


# --------------------------------------------------------------------------- the rule's value


def _posterior(problem_name, n_per=5, seed=0):
    prob = problems.get_problem(problem_name)
    task = tasks.problem_task(prob)
    rng = np.random.default_rng(seed)
    b = np.asarray(task.spec.bounds)
    fids = np.arange(prob.n_fidelities) if prob.is_discrete else np.array([0.2, 0.6, 1.0])
    x = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=(n_per * len(fids), prob.dim))
    z = np.repeat(fids, n_per).astype(float)
    y = np.array([float(problems.objective(prob, jnp.asarray(xi), int(zi) if prob.is_discrete else zi))
                  for xi, zi in zip(x, z)])
    params = models.default_params(task.spec)
    params["log_noise"] = jnp.full_like(params["log_noise"], np.log(1e-3))
    post = posterior.condition(task.spec, params, x, z, y)
    return prob, task, post, x, z, y


def _brute_force_kg(task, post, x, z, y, xa, xc, zc, n_fantasies, rng):
    """E over fantasies y_c ~ p(y_c | data) of max over xa u {xc} of the new mean of g,
    minus the current max, by conditioning a dense numpy GP on every fantasy (units of y)."""
    spec, sc = task.spec, post.scaling
    kxz = models.build_kernel(spec, post.params)
    noise = np.asarray(post.noise)[np.asarray(posterior.noise_index(spec, jnp.asarray(models.scale_inputs(
        spec, sc, x, z)[1])))]
    xs = np.vstack([x, xc[None]])
    zs = np.append(z, zc)
    xu, zu = (np.asarray(a) for a in models.scale_inputs(spec, sc, xs, zs))
    zu = zu.astype(np.int32) if spec.discrete else zu
    k_all = np.asarray(kxz((jnp.asarray(xu), jnp.asarray(zu)), (jnp.asarray(xu), jnp.asarray(zu))))
    noise_c = float(np.asarray(post.noise)[np.asarray(posterior.noise_index(spec, jnp.asarray(zu[-1:])))][0])
    n = len(z)
    ys = (y - float(sc.y_mean)) / float(sc.y_scale)
    # the fantasy's predictive distribution under the dense GP
    k_nn = k_all[:n, :n] + np.diag(noise)
    k_nc = k_all[:n, n]
    mu_c = k_nc @ np.linalg.solve(k_nn, ys)
    var_c = k_all[n, n] - k_nc @ np.linalg.solve(k_nn, k_nc) + noise_c
    fantasies = mu_c + np.sqrt(var_c) * rng.standard_normal(n_fantasies)
    # the target at the discrete set and at the candidate's x
    pts = np.vstack([xa, xc[None]])
    zt = np.asarray(posterior.internal_target(post, task.target))
    w = np.asarray(task.target.weights)
    pu, _ = models.scale_inputs(spec, sc, pts, np.zeros(len(pts)))
    k_g = sum(w[j] * np.asarray(kxz((jnp.asarray(pu), jnp.full(len(pts), zt[j])),
                                       (jnp.asarray(xu), jnp.asarray(zu)))) for j in range(len(zt)))  # [P+1, n+1]
    mean_now = k_g[:, :n] @ np.linalg.solve(k_nn, ys)
    k_aug = k_all + np.diag(np.append(noise, noise_c))
    y_aug = np.vstack([np.repeat(ys[:, None], n_fantasies, axis=1), fantasies[None]])  # [n+1, S]
    mean_new = k_g @ np.linalg.solve(k_aug, y_aug)  # every fantasy conditioned on
    gain = (mean_new.max(axis=0) - mean_now.max()) * float(sc.y_scale)
    return gain.mean(), gain.std() / np.sqrt(n_fantasies)


@pytest.mark.parametrize("problem_name", ["forrester", "currin_continuous"])
def test_mf_kg_gain_matches_monte_carlo_over_fantasies(problem_name):
    prob, task, post, x, z, y = _posterior(problem_name, n_per=2)  # few data: KG far from 0
    rng = np.random.default_rng(3)
    b = np.asarray(task.spec.bounds)
    xa = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=(12, prob.dim))
    xa[0] = x[0]  # a point of A that is also a data point
    dset = mf_kg.discrete_set(post, task.target, jnp.asarray(xa))
    xc = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=(4, prob.dim))
    xc[1] = xa[3]  # the candidate's x already in A
    zc = np.array([0, 1, 2, 1]) if prob.is_discrete else np.array([1.0, 0.3, 0.7, 0.5])
    got = np.asarray(mf_kg.mf_kg_gain(post, task.target, dset, jnp.asarray(xc), jnp.asarray(zc)))
    assert got.shape == (4,) and np.all(got >= 0)
    for i in range(4):
        mc, se = _brute_force_kg(task, post, x, z, y, xa, xc[i], zc[i], 200_000, rng)
        assert abs(got[i] - mc) < 4 * se + 1e-9 * abs(mc), (i, got[i], mc, se)
    assert np.max(got) > 1e-2 * float(post.scaling.y_scale)  # the reference is not trivially 0


def test_mf_kg_gain_is_finite_with_finite_gradients_at_data_and_far_away():
    prob, task, post, x, z, y = _posterior("forrester")
    dset = mf_kg.discrete_set(post, task.target, jnp.asarray(x[:6]))
    xc = jnp.asarray(np.vstack([x[:3], [[0.0]], [[1.0]]]))
    zc = jnp.asarray([0, 1, 2, 0, 2])
    vals = np.asarray(mf_kg.mf_kg_gain(post, task.target, dset, xc, zc))
    assert np.all(np.isfinite(vals)) and np.all(vals >= 0)
    grad = jax.grad(lambda xx: jnp.sum(mf_kg.mf_kg_gain(post, task.target, dset, xx, zc)))(xc)
    assert np.all(np.isfinite(np.asarray(grad)))
    # more candidates than one block: the blocks give the same values as one call each
    many = jnp.asarray(np.random.default_rng(5).uniform(size=(mf_kg.CHUNK + 7, 1)))
    zz = jnp.asarray(np.arange(mf_kg.CHUNK + 7) % 3)
    out = np.asarray(jax.jit(mf_kg.mf_kg_gain)(post, task.target, dset, many, zz))
    one = np.asarray(mf_kg.mf_kg_gain(post, task.target, dset, many[-5:], zz[-5:]))
    np.testing.assert_allclose(out[-5:], one, rtol=1e-10, atol=1e-14)


def test_mf_kg_gain_of_a_stacked_posterior_is_the_mean_over_its_samples():
    prob, task, post, x, z, y = _posterior("forrester", n_per=2)
    params2 = {**post.params, "log_ls": post.params["log_ls"] + 0.5}
    post2 = posterior.condition(task.spec, params2, x, z, y)
    stacked = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), post, post2)
    xa = jnp.asarray(np.linspace(0.05, 0.95, 7)[:, None])
    xc, zc = jnp.asarray([[0.3], [0.8]]), jnp.asarray([1, 2])
    each = [np.asarray(mf_kg.mf_kg_gain(p, task.target, mf_kg.discrete_set(p, task.target, xa), xc, zc))
            for p in (post, post2)]
    both = np.asarray(mf_kg.mf_kg_gain(stacked, task.target, mf_kg.discrete_set(stacked, task.target, xa), xc, zc))
    np.testing.assert_allclose(both, 0.5 * (each[0] + each[1]), rtol=1e-10)
    assert not np.allclose(each[0], each[1])  # the samples differ, so the mean is a real check


# --------------------------------------------------------------------------- the rule in the loops


def test_mf_kg_is_registered_with_its_options():
    rule = rules.RULES["mf_kg"]
    assert rule is mf_kg.MF_KG and not rule.uses_gstar and rule.space == "all"
    assert dict(rule.options) == {"n_best": 8, "n_random": 64}
    assert "mf_kg" in rules.STRATEGIES and "mf_kg" not in rules.TARGET_ONLY
    with pytest.raises(ValueError, match="has no option 'n_points'"):
        rule.with_options(n_points=3)
    with pytest.raises(ValueError, match="mf_kg option n_best must be >= 0"):  # declared: checked where set
        rule.with_options(n_best=-1)
    for bad, words in (({"n_best": -1}, "n_best must be an integer >= 0"), ({"n_random": 2.5}, "n_random must be"),
                       ({"n_best": 0, "n_random": 0}, "at least one point")):
        with pytest.raises(ValueError, match=words):
            mf_kg.check_options({**rule.options, **bad})


@pytest.mark.slow  # ~10 s of the default run; tests/test_loop.py runs mf_kg through both drivers in CI
def test_mf_kg_runs_in_the_loop():
    prob = problems.get_problem("forrester")
    h = tasks.run_problem(prob, 1e9, [0], with_(FAST, strategy="mf_kg"), max_evals=2)
    assert int(h.n_evals[0]) == 2 and np.all(np.isfinite(h.regret[0, :3]))
    assert set(h.z[0, :2].astype(int)) <= {0, 1, 2}


def test_a_variant_of_mf_kg_sees_its_own_options():
    # a variant registered under its own name sees its own options
    prob = problems.get_problem("forrester")
    small = rules.register(mf_kg.MF_KG.with_options(name="mf_kg_small_test", n_random=4, n_best=1))
    try:
        seen = []
        task = tasks.problem_task(prob)
        post = _posterior("forrester")[2]
        settings = with_(FAST, strategy="mf_kg_small_test")
        ctx = rules.Context.from_settings(settings, task, post, jnp.zeros(5), jax.random.PRNGKey(0), jnp.asarray(0))
        seen.append(ctx.options["n_random"])
        acq = small.acquisition(ctx)
        assert acq.args[2].xu.shape == (5, 1)  # n_best + n_random points in A
        prop = rules.propose(settings, task, post, jnp.zeros(5), jax.random.PRNGKey(0))
        assert np.isfinite(float(prop.alpha)) and float(prop.alpha) >= 0 and seen == [4]
    finally:
        rules.unregister("mf_kg_small_test")
