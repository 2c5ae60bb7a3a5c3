"""The inducing-point posterior (mumbo_jax.gp.sparse) against the exact posterior and a
dense numpy DTC reference."""

import jax
import numpy as np
import pytest

from mumbo_jax.gp import models, moments, posterior, sparse


def _post(spec, n, seed=0, size=None):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, spec.dim))
    z = rng.integers(0, spec.n_fidelities, n).astype(float)
    y = np.sin(4 * x.sum(1)) + 0.2 * z + 0.05 * rng.standard_normal(n)
    size = size or n
    pad = lambda a: np.concatenate([a, np.zeros((size - n,) + a.shape[1:])])
    params = models.random_params(spec, jax.random.PRNGKey(seed))
    return posterior.condition(spec, params, pad(x), pad(z), pad(y), pad(np.ones(n))), x, z


def test_all_rows_as_inducing_rows_is_the_exact_posterior():
    spec = models.icm_model([(0.0, 1.0)] * 2, 2, noise_floor=1e-3)
    post, _, _ = _post(spec, 40, size=64)
    sp = sparse.inducing_posterior(post, 64, tol=0.0)
    assert int(np.sum(np.asarray(sp.mask))) == 40  # padding rows never chosen
    xq = np.random.default_rng(5).uniform(size=(30, 2))
    for zq in (0, 1):
        m_s, v_s = moments.predict(sp, xq, np.full(30, zq))
        m_e, v_e = moments.predict(post, xq, np.full(30, zq))
        np.testing.assert_allclose(m_s, m_e, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(v_s, v_e, rtol=1e-5, atol=1e-8)
    w = np.asarray(sp.chol_inv)
    assert np.allclose(w, np.tril(w))


def test_subset_matches_a_dense_dtc_reference():
    """m < n rows: the predictive equals the DTC formulas evaluated densely in numpy on
    the rows the pivoted Cholesky chose."""
    spec = models.icm_model([(0.0, 1.0)] * 2, 2, noise_floor=1e-4)
    post, x, z = _post(spec, 120, seed=1, size=160)
    m = 48
    sp = sparse.inducing_posterior(post, m)
    kern = models.build_kernel(spec, post.params)
    rows = np.asarray(sparse.pivoted_rows(kern, post.x, post.z, post.mask, m, 1e-8)[0])
    xs, zs = np.asarray(post.x)[:120], np.asarray(post.z)[:120]
    K = lambda a, b: np.asarray(kern((a[0], a[1]), (b[0], b[1])))
    U = (xs[rows], zs[rows])
    F = (xs, zs)
    lam = np.asarray(posterior.observation_diag(spec, post.z, post.mask, post.noise))[:120]
    kuu, kuf = K(U, U), K(U, F)
    S = kuu + (kuf / lam) @ kuf.T
    y = np.asarray(post.y)[:120]
    xq = np.random.default_rng(6).uniform(size=(25, 2))
    for zq in (0, 1):
        xu_q, zu_q = models.scale_inputs(spec, post.scaling, xq, np.full(25, zq))
        kqu = K((np.asarray(xu_q), np.asarray(zu_q)), U)
        mean_ref = kqu @ np.linalg.solve(S, kuf @ (y / lam))
        kqq = np.asarray(jax.vmap(lambda a, b: kern.evaluate((a, b), (a, b)))(xu_q, zu_q))
        var_ref = kqq - np.einsum("ij,ij->i", kqu @ (np.linalg.inv(kuu) - np.linalg.inv(S)), kqu)
        m_s, v_s = moments.predict(sp, xq, np.full(25, zq))
        s = float(post.scaling.y_scale)
        np.testing.assert_allclose((np.asarray(m_s) - float(post.scaling.y_mean)) / s, mean_ref, rtol=1e-6,
                                   atol=1e-7)
        np.testing.assert_allclose(np.asarray(v_s) / s ** 2, np.maximum(var_ref, 1e-12), rtol=1e-5, atol=1e-8)


def test_accuracy_grows_with_m_and_nothing_is_nan():
    spec = models.icm_model([(0.0, 1.0)] * 2, 2, noise_floor=1e-6)
    post, _, _ = _post(spec, 300, seed=2, size=384)
    xq = np.random.default_rng(7).uniform(size=(200, 2))
    m_e, v_e = moments.predict(post, xq, np.zeros(200, int))
    errs = []
    for m in (16, 64, 256):
        sp = sparse.inducing_posterior(post, m)
        m_s, v_s = moments.predict(sp, xq, np.zeros(200, int))
        assert np.all(np.isfinite(np.asarray(m_s))) and np.all(np.asarray(v_s) > 0)
        errs.append(float(np.max(np.abs(np.asarray(m_s) - np.asarray(m_e)))))
    assert errs[2] < errs[0]
    with pytest.raises(ValueError, match="inducing rows"):
        sparse.inducing_posterior(post, 0)


def test_decisions_on_the_inducing_posterior_in_both_drivers():
    from mumbo_jax import AskTell, BOSettings
    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo import stages
    from tests.bo_helpers import FAST, drive, with_

    with pytest.raises(ValueError, match="approx.inducing"):
        BOSettings(approx={"inducing": 64})  # the default robust rule replays its evaluations
    with pytest.raises(ValueError, match="approx.inducing"):
        BOSettings(approx={"inducing": -1})
    settings = with_(FAST, approx={"inducing": 8, "from_rows": 8})
    prob = problems.get_problem("forrester")
    opt = AskTell(tasks.problem_task(prob), settings, seed=0)
    chosen = drive(opt, prob, 4)
    n, post, _ = opt.last_fit
    stand_in = stages.decision_posterior(settings, post, n)
    assert stand_in.x.shape[0] == 8 and post.x.shape[0] == 32
    assert stages.decision_posterior(settings, post, 7) is post  # below from_rows: exact
    h = tasks.run_problem(prob, 1e9, [0], settings, max_evals=4)
    np.testing.assert_allclose(np.stack([x for x, _ in chosen]), h.x[0, :4], rtol=0, atol=1e-9)
    np.testing.assert_allclose([float(z) for _, z in chosen], h.z[0, :4], rtol=0, atol=0)
