"""The robust rule and recommendation: the target-only model, the leave-one-out
comparison and the explained variance against dense numpy conditioning; the guard's
vetoes (an unrelated cheap source, a spent cheap share); the recommendation never
below a measured target point without the model's confidence; the spend bound over a
whole compiled run."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import incumbent, optimize, robust, rules, stages
from mumbo_jax.bo.compiled import run_compiled
from mumbo_jax import BOSettings
from mumbo_jax.gp import models, moments, posterior, reliability
from tests import bo_helpers

# the small settings of the other BO tests (their programs are shared within a test run)
FAST = dict(gstar=bo_helpers.FAST.gstar, maximiser=bo_helpers.FAST.maximiser, fit=bo_helpers.FAST.fit)


def _gram(spec, scaling, params, xa, za, xb, zb):
    ua, va = models.scale_inputs(spec, scaling, xa, za)
    ub, vb = models.scale_inputs(spec, scaling, xb, zb)
    return np.asarray(models.build_kernel(spec, params)((ua, va), (ub, vb)))


def _full_gram(spec, scaling, params, x, z):
    """The library kernel's gram over all of ``x, z`` once (the references index it with
    numpy: one kernel evaluation instead of one per subset, each compiling its shapes)."""
    return _gram(spec, scaling, params, x, z, x, z)


def _setup(seed=0, n=14, cheap=lambda x: np.sin(6 * x[:, 0]) + x[:, 1]):
    rng = np.random.default_rng(seed)
    spec = models.icm_model([(0.0, 1.0)] * 2, 2)
    params = models.random_params(spec, jax.random.PRNGKey(seed))
    x = rng.uniform(size=(n, 2))
    z = np.arange(n) % 2
    f = np.sin(6 * x[:, 0]) + x[:, 1]
    y = np.where(z == 0, f, cheap(x))
    mask = np.r_[np.ones(n - 2), 0.0, 0.0]  # two padding rows
    post = _condition(spec, params, jnp.asarray(x), jnp.asarray(z), jnp.asarray(y), jnp.asarray(mask))
    return spec, params, x, z, y, mask, post


_condition = jax.jit(posterior.condition, static_argnums=0)  # one program, not every primitive op by op


def _dense_target(spec, post, params, x, z, ys, keep, extra, xt):
    """Mean and variance of g = f(., 0) at ``xt`` given rows ``keep`` (standardised)."""
    noise = np.asarray(post.noise)[z] + extra
    n = len(z)
    full = _full_gram(spec, post.scaling, params, np.concatenate([x, xt]), np.r_[z, np.zeros(len(xt), int)])
    k = full[np.ix_(keep, keep)] + np.diag(noise[keep])
    ks = full[np.ix_(keep, n + np.arange(len(xt)))]
    kss = full[n:, n:]
    w = np.linalg.solve(k, ks)
    return w.T @ ys[keep], np.diag(kss - ks.T @ w)


def test_recondition_matches_dense_conditioning():
    spec, params, x, z, y, mask, post = _setup()
    target = posterior.target_fidelity(0)
    rng = np.random.default_rng(5)
    keep = (mask > 0) & (rng.uniform(size=len(z)) < 0.7)
    extra = np.where(rng.uniform(size=len(z)) < 0.5, 0.05, 0.0)
    ys = rng.normal(size=len(z))
    z_new = np.where(keep & (z == 1) & (extra > 0), 0, z)  # some rows moved to the target
    xt = rng.uniform(size=(5, 2))
    # one compiled program (op by op, JAX would compile every primitive's shapes)
    mu, var = jax.jit(lambda p, *a: moments.target_moments(posterior.recondition(p, *a[:4]), a[4], target))(
        post, jnp.asarray(keep, float), jnp.asarray(z_new, jnp.int32), jnp.asarray(ys), jnp.asarray(extra),
        jnp.asarray(xt))
    ref_mu, ref_var = _dense_target(spec, post, params, x, z_new, ys, np.flatnonzero(keep), extra, xt)
    s = post.scaling
    np.testing.assert_allclose(np.asarray(mu), float(s.y_mean) + float(s.y_scale) * ref_mu, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(np.asarray(var), float(s.y_scale) ** 2 * ref_var, rtol=1e-7, atol=1e-10)


def test_mf_choice_switches_the_target_only_model_to_the_multi_fidelity_one():
    """pseudo_posterior with use_mf: the multi-fidelity model on every row as observed
    (dense numpy on all unpadded rows); without: only target rows (the design here has no
    cheap BO rows, n_design = n), one program for both (use_mf traced)."""
    spec, params, x, z, y, mask, post = _setup()
    target = posterior.target_fidelity(0)
    xt = np.random.default_rng(6).uniform(size=(5, 2))
    moments_of = jax.jit(lambda p, use_mf, xt: moments.target_moments(
        robust.pseudo_posterior(p, target, len(z), use_mf), xt, target))
    s = post.scaling
    ys = (y - float(s.y_mean)) / float(s.y_scale)
    zero = np.zeros(len(z))
    for use_mf, keep in ((True, mask > 0), (False, (mask > 0) & (z == 0))):
        mu, var = moments_of(post, jnp.asarray(use_mf), jnp.asarray(xt))
        ref_mu, ref_var = _dense_target(spec, post, params, x, z, ys, np.flatnonzero(keep), zero, xt)
        np.testing.assert_allclose(np.asarray(mu), float(s.y_mean) + float(s.y_scale) * ref_mu, rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(np.asarray(var), float(s.y_scale) ** 2 * ref_var, rtol=1e-7, atol=1e-10)
    assert moments_of._cache_size() == 1


def test_loo_advantage_matches_brute_force():
    spec, params, x, z, y, mask, post = _setup()
    target = posterior.target_fidelity(0)
    ys = np.asarray(post.y)
    noise = np.asarray(post.noise)[z]
    real = np.flatnonzero(mask > 0)
    full = _full_gram(spec, post.scaling, params, x, z)
    total = 0.0
    for i in real[z[real] == 0]:
        for pool, sign in ((real, 1.0), (real[z[real] == 0], -1.0)):
            rest = pool[pool != i]
            k = full[np.ix_(rest, rest)] + np.diag(noise[rest])
            kr = full[rest, i]
            w = np.linalg.solve(k, kr)
            var = full[i, i] - w @ kr
            total += sign * stats.norm.logpdf(ys[i], w @ ys[rest], np.sqrt(var + noise[i]))
    assert float(jax.jit(reliability.loo_advantage)(post, target)) == pytest.approx(total, rel=1e-6, abs=1e-8)


def test_the_comparison_tells_a_faithful_source_from_an_unrelated_one():
    target = posterior.target_fidelity(0)
    faithful = _setup(n=22, cheap=lambda x: np.sin(6 * x[:, 0]) + x[:, 1])[-1]
    rng = np.random.default_rng(3)
    unrelated = _setup(n=22, cheap=lambda x: rng.normal(size=len(x)))[-1]
    loo_advantage, better_model = jax.jit(reliability.loo_advantage), jax.jit(reliability.better_model)
    assert float(loo_advantage(faithful, target)) > 0
    model, mf, _ = better_model(unrelated, target)
    if float(loo_advantage(unrelated, target)) < 0:  # the target-only model is then chosen
        assert not bool(mf)
        np.testing.assert_array_equal(np.asarray(model.mask), np.asarray(reliability.target_rows(unrelated, target)))


def test_explained_matches_the_dense_joint_covariance():
    spec, params, x, z, y, mask, post = _setup()
    target = posterior.target_fidelity(0)
    rng = np.random.default_rng(7)
    xq, zq, xt = rng.uniform(size=(4, 2)), np.array([0, 1, 1, 0]), rng.uniform(size=2)
    got = np.asarray(jax.jit(robust.explained)(post, target, jnp.asarray(xq), jnp.asarray(zq, jnp.int32),
                                               jnp.asarray(xt)))
    real = np.flatnonzero(mask > 0)
    noise = np.asarray(post.noise)
    n = len(z)
    full = _full_gram(spec, post.scaling, params, np.concatenate([x, xq, xt[None]]), np.r_[z, zq, 0])
    k = full[np.ix_(real, real)] + np.diag(noise[z[real]])
    for j in range(4):
        pts = np.array([n + j, n + 4])  # the query (xq[j], zq[j]) and (xt, the target)
        kp = full[np.ix_(pts, pts)]
        kr = full[np.ix_(real, pts)]
        cov = kp - kr.T @ np.linalg.solve(k, kr)
        rho2 = cov[0, 1] ** 2 / ((cov[0, 0] + noise[zq[j]]) * cov[1, 1])
        assert got[j] == pytest.approx(rho2, rel=1e-6, abs=1e-9)
    assert np.all((got >= 0) & (got < 1))


@pytest.fixture(scope="module")
def currin():
    pb = problems.get_problem("currin")
    return pb, tasks.problem_task(pb), tasks.problem_benchmark(pb)


def _state(task, bench, x, z, n_design):
    y = jnp.stack([bench.observe(jax.random.PRNGKey(i), jnp.asarray(x[i]), int(z[i])) for i in range(len(z))])
    return stages.init(task, jnp.asarray(x), jnp.asarray(z, float), y, n_design=n_design)


def _dense_joint_diff(spec, post, params, x, z, keep, xa, xb):
    """Mean and sd of g(xa) - g(xb) given rows ``keep`` (standardised units, dense numpy)."""
    n = len(z)
    noise = np.asarray(post.noise)[z]
    full = _full_gram(spec, post.scaling, params, np.concatenate([x, [xa, xb]]), np.r_[z, 0, 0])
    k = full[np.ix_(keep, keep)] + np.diag(noise[keep])
    ks = full[np.ix_(keep, [n, n + 1])]
    w = np.linalg.solve(k, ks)
    mu = w.T @ np.asarray(post.y)[keep]
    cov = full[n:, n:] - ks.T @ w
    return mu[0] - mu[1], np.sqrt(max(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1], 0.0))


@pytest.mark.parametrize("log_noise", [-9.0, -1.0])
def test_robust_falls_back_to_the_best_observed_target_point_unless_both_models_are_sure(log_noise):
    """Where the noise is large the models' means reorder the target observations: the
    fallback keeps the best observed point unless the multi-fidelity model and the
    target-only one are both sure (SAFE_SD sd of the difference) the best mean is better."""
    spec, params, x, z, y, mask, _ = _setup(seed=4, n=22)
    params = dict(params, log_noise=jnp.full(2, log_noise))
    post = _condition(spec, params, jnp.asarray(x), jnp.asarray(z), jnp.asarray(y), jnp.asarray(mask))
    target = posterior.target_fidelity(0)
    model, sf = post, reliability.target_only(post, target)
    scale, scale_sf = (float(jax.jit(incumbent.interval_scale)(m, target)) for m in (model, sf))
    i, _ = jax.jit(incumbent._measured_best_row)(model, sf, target, scale, scale_sf)
    real = np.flatnonzero(mask > 0)
    on = real[z[real] == 0]
    ys = np.asarray(post.y)
    i_obs = on[np.argmax(ys[on])]
    mu_rows = np.asarray(jax.jit(moments.target_moments)(post, jnp.asarray(x[on]), target)[0])
    i_mean = on[np.argmax(mu_rows)]
    sure = i_mean != i_obs
    for keep, widen in ((real, scale), (on, scale_sf)):
        d, sd = _dense_joint_diff(spec, post, params, x, z, keep, x[i_mean], x[i_obs])
        sure &= d > incumbent.SAFE_SD * sd * widen
    assert int(i) == (i_mean if sure else i_obs)
    if log_noise == -1.0:  # the case the fallback exists for: the means reorder the observations
        assert i_mean != i_obs
    # calibrated, the interval at a measured x reaches the value observed there
    rec = jax.jit(incumbent._recommend_robust, static_argnums=4)
    bounds = jnp.asarray([[0.0, 1.0]] * 2)
    (xr, mu, sd), (_, _, sd_model) = (rec(post, target, bounds, jnp.asarray(x), c) for c in (True, False))
    measured = np.flatnonzero(np.all(np.abs(x - np.asarray(xr)) < 1e-12, axis=1))
    assert measured.size or log_noise == -9.0  # the bent model's case is a measured x (checked: it is)
    if measured.size:
        noise_sd = np.sqrt(float(post.noise[0])) * float(post.scaling.y_scale)
        assert abs(y[measured[0]] - float(mu)) + incumbent.Z95 * noise_sd <= incumbent.Z95 * float(sd) * (1 + 1e-9)
        better, _, _ = jax.jit(reliability.better_model)(post, target)  # whose interval is shown
        widen = float(jax.jit(incumbent.interval_scale)(better, target))
        assert float(sd) >= float(sd_model) * widen * (1 - 1e-12)
    assert np.isfinite(float(mu)) and np.isfinite(float(sd))


def test_guard_spends_no_more_than_its_share(currin):
    pb, task, bench = currin
    rng = np.random.default_rng(0)
    x0 = rng.uniform(size=(4, 2))
    # the design at both fidelities, then 30 BO evaluations at the cheap one: 30 of 30 spent cheaply
    x = np.concatenate([x0, x0, rng.uniform(size=(30, 2))])
    z = np.r_[np.zeros(4), np.ones(4), np.ones(30)].astype(int)
    state = _state(task, bench, x, z, 8)
    post, prop = stages.decide(BOSettings(strategy="robust", **FAST), task, state, jax.random.PRNGKey(1))
    assert int(prop.z) == 0  # cheap spend 30 + 1 > 0.5 * 31 + 10: the target, at target-only EI's choice


def test_robust_recommendation_is_a_measured_point_or_a_confident_one(currin):
    pb, task, bench = currin
    rng = np.random.default_rng(2)
    n = incumbent.jump_min_target(2)  # enough target rows for a jump to be allowed
    x0 = rng.uniform(size=(n, 2))
    state = _state(task, bench, np.concatenate([x0, x0]), np.r_[np.zeros(n), np.ones(n)].astype(int), 2 * n)
    post, _ = stages.decide(BOSettings(strategy="mumbo", **FAST), task, state, jax.random.PRNGKey(0))
    x, mu, sd = stages.recommend(task, post, state.buffers.x, "robust", False)
    model, _, sf = jax.jit(reliability.better_model)(post, task.target)
    scales = [jax.jit(incumbent.interval_scale)(m, task.target) for m in (model, sf)]
    i, best = jax.jit(incumbent._measured_best_row)(model, sf, task.target, *scales)
    measured = np.any(np.all(np.abs(np.asarray(state.buffers.x[:n]) - np.asarray(x)) < 1e-12, axis=1))
    if not measured:  # a jump needs the lower bound (sd widened by the model's own scale) above the best
        scale = float(jax.jit(incumbent.interval_scale)(model, task.target))
        assert float(mu) - incumbent.ROBUST_SD * float(sd) * scale > float(best)
    else:
        assert float(mu) == pytest.approx(float(best))
    assert np.isfinite(float(mu)) and float(sd) >= 0


def test_robust_recommendation_does_not_jump_on_a_handful_of_target_points(monkeypatch):
    """Negated Currin's design (seed 1 of the studies: 4 target points, the cheap source
    their mirror image): both fitted models are sure, at sd 0.56, that the corner x = 0
    beats the measured best by 1.5, where it is 10.6 worse. With fewer than
    jump_min_target(d) target rows the measured best is recommended; without that
    minimum the rule jumps there."""
    pb = problems.get_problem("unrel_currin_negated")
    task, bench = tasks.problem_task(pb), tasks.problem_benchmark(pb)
    design_key, _ = jax.random.split(jax.random.PRNGKey(1))
    x0, z0 = stages.initial_design(task, design_key)
    y0 = jnp.stack([bench.observe(jax.random.fold_in(design_key, i), x0[i], z0[i].astype(jnp.int32))
                    for i in range(x0.shape[0])])
    state = stages.init(task, x0, z0, y0, n_design=x0.shape[0])
    on = np.flatnonzero(np.asarray(z0) == 0)
    assert on.size < incumbent.jump_min_target(pb.dim)
    post, _ = stages.decide(BOSettings(strategy="robust"), task, state, jax.random.PRNGKey(0))
    bounds = jnp.asarray(task.spec.bounds)

    def recommend():  # a fresh trace each call (a new function), so the patched minimum is read
        return jax.jit(lambda p, b, rx: incumbent._recommend_robust(p, task.target, b, rx, False))(
            post, bounds, state.buffers.x)

    x, mu, sd = recommend()
    i_best = on[np.argmax(np.asarray(y0)[on])]
    np.testing.assert_array_equal(np.asarray(x), np.asarray(x0[i_best]))
    monkeypatch.setattr(incumbent, "jump_min_target", lambda dim: 0)
    xj, muj, sdj = recommend()
    value, regret = bench.score(xj)
    assert float(muj) - 2 * float(sdj) > float(np.max(np.asarray(y0)[on]))  # sure of it
    assert float(value) < float(np.max(np.asarray(y0)[on])) - 5.0  # and far worse in truth


def test_a_robust_run_keeps_its_spend_bound_and_target_choices():
    pb = problems.get_problem("unrel_forrester_reliable")
    task, bench = tasks.problem_task(pb), tasks.problem_benchmark(pb)
    # 4 design rows + 27 evaluations fill one 32-row buffer: one set of programs to compile
    h = run_compiled(bench, task, 60.0, [0], BOSettings(strategy="robust", recommendation={"rule": "robust"}, **FAST),
                     max_evals=27)
    n = int(h.n_evals[0])
    cost, z = h.cost[0, :n], h.z[0, :n]
    c_target = float(np.max(np.asarray(task.space.cost(jnp.arange(pb.n_fidelities)))))
    cheap = np.cumsum(np.where(z != 0, cost, 0.0))
    total = np.cumsum(cost)
    assert np.all(cheap <= robust.SHARE * total + c_target + 1e-9)
    assert np.all(np.isfinite(h.regret[0, :n + 1])) and np.all(np.isfinite(h.incumbent_sd[0, :n + 1]))


def test_robust_rules_are_registered_and_checked():
    for name in ("robust", "robust_mt_ei", "robust_mf_gp_ucb"):
        assert name in rules.RULES and rules.RULES[name].single_target and rules.RULES[name].replays_history
    with pytest.raises(ValueError, match="x option share must be < 1"):
        robust.robust(rules.RULES["mumbo"], name="x", share=1.5)
    with pytest.raises(ValueError, match="x option min_explained must be > 0"):
        robust.robust(rules.RULES["mumbo"], name="x", min_explained=0.0)
    with pytest.raises(ValueError, match="unknown x option target_rule 'ucb'"):
        robust.robust(rules.RULES["mumbo"], name="x", target_rule="ucb")
    # the guard's knobs are options of the robust rules, beside the inner rule's own; a run sets them
    assert dict(rules.RULES["robust"].options) == {"gain": "table", "share": robust.SHARE,
                                                   "min_explained": robust.MIN_EXPLAINED, "target_rule": "ei",
                                                   "trust": None, "mf_choice": None, "mf_target": "ei"}
    assert rules.RULES["robust_mes"].options["target_rule"] == "mes"
    assert rules.RULES["robust_mf_gp_ucb"].options["beta"] is None
    s = BOSettings(options={"robust": {"share": 0.3, "trust": 3}})
    assert rules.rule_for(s).options["share"] == 0.3 and rules.rule_for(s).options["trust"] == 3.0
    with pytest.raises(ValueError, match="robust option share must be < 1"):
        BOSettings(options={"robust": {"share": 1.0}})


def test_trust_lets_the_inner_rules_cheap_query_through_once_the_evidence_is_strong(currin):
    pb, task, bench = currin
    rng = np.random.default_rng(4)
    x0 = rng.uniform(size=(8, 2))
    state = _state(task, bench, np.concatenate([x0, x0]), np.r_[np.zeros(8), np.ones(8)].astype(int), 16)
    settings = BOSettings(strategy="robust", **FAST)
    post, _ = stages.decide(BOSettings(strategy="mumbo", **FAST), task, state, jax.random.PRNGKey(0))
    ctx = rules.Context.from_settings(settings, task, post, jnp.zeros(settings.gstar.samples),
                                      jax.random.PRNGKey(3), jnp.asarray(16), None)
    advantage = float(jax.jit(reliability.loo_advantage)(post, task.target))
    assert advantage > 0.5  # the precondition: Currin's cheap source is reliable on these data
    x_sf = np.asarray(robust.target_only_choice(ctx, robust.pseudo_posterior(post, task.target, ctx.n_design)))
    corners = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    x_q = corners[np.argmax(np.sum((corners - x_sf) ** 2, axis=1))]  # far from the target-only choice
    prop = optimize.Proposal(jnp.asarray(x_q), jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0))
    rho2 = float(jax.jit(robust.explained)(post, task.target, jnp.asarray(x_q)[None], jnp.asarray([1]),
                                           jnp.asarray(x_sf))[0])  # one program, not op by op
    assert rho2 < robust.MIN_EXPLAINED  # so only trust can let it through
    # the context is closed over (its options and maximiser settings are static), the proposal traced
    off = jax.jit(lambda p: robust.guard(ctx, p))(prop)  # the default, trust None
    assert not np.allclose(np.asarray(off.x), x_q)  # without trust: vetoed
    # a set trust is a threshold on the advantage (advantage >= trust): traced, so that both
    # thresholds below run one compiled guard
    trusting = jax.jit(lambda p, trust: robust.guard(ctx, p, trust=trust))
    on = trusting(prop, jnp.asarray(0.5))
    np.testing.assert_allclose(np.asarray(on.x), x_q)
    assert int(on.z) == 1
    beyond = trusting(prop, jnp.asarray(advantage + 1.0))  # evidence below the threshold: vetoed as before
    np.testing.assert_allclose(np.asarray(beyond.x), np.asarray(off.x))
    # mf_target "inner": from mf_choice's threshold on, x_sf is the inner rule's own x (so the
    # proposal's x is queried, at its fidelity or the target's); below it, the guard as before
    inner = jax.jit(lambda p, t: robust.guard(ctx, p, mf_choice=t, mf_target="inner"))
    np.testing.assert_allclose(np.asarray(inner(prop, jnp.asarray(advantage - 1.0)).x), x_q)
    np.testing.assert_allclose(np.asarray(inner(prop, jnp.asarray(advantage + 1.0)).x), np.asarray(off.x))
    with pytest.raises(ValueError, match="trust"):
        robust.robust(rules.RULES["mumbo"], name="x", trust=-1.0)
    assert robust.robust(rules.RULES["mumbo"], name="x", mf_choice=3).options["mf_choice"] == 3.0
    with pytest.raises(ValueError, match="mf_choice"):
        BOSettings(options={"robust": {"mf_choice": "high"}})
