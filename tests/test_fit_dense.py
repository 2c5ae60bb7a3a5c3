"""The dense ICM objective of gp/fitting.py and its closed-form gradient: against tinygp
(:func:`fitting.neg_log_marginal_reference`), an independent numpy/scipy construction,
and the optimum the tinygp objective reaches."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
import scipy.stats
from jax.flatten_util import ravel_pytree

from mumbo_jax.bo import stages
from mumbo_jax.gp import fitting as fit, models

from .test_fit import synthetic_data


def _setup(n, rows, kind="icm", seed=0, target_floor=0.0):
    bounds = [(0.0, 1.0)] * 3
    spec = {"icm": lambda: models.icm_model(bounds, 3, rank=2, target_floor=target_floor),
            "product": lambda: models.product_model(bounds),
            "linear_basis": lambda: models.basis_model(bounds, fidelity_bounds=(0.0, 1.0))}[kind]()
    x, z, y = synthetic_data(spec, n, seed)
    if spec.discrete:  # the paper's design evaluates one x at every fidelity: r = 0 pairs
        x[1:4] = x[0]
    b = stages.pad_buffers(np.asarray(x), np.asarray(z, float), np.asarray(y), rows)
    z = jnp.asarray(b.z).astype(jnp.int32) if spec.discrete else jnp.asarray(b.z)
    scaling = models.make_scaling(spec, jnp.asarray(b.y), jnp.asarray(b.mask))
    return spec, scaling, jnp.asarray(b.x), z, jnp.asarray(b.y), jnp.asarray(b.mask)


def _numpy_nlml(spec, params, scaling, x, z, y, mask):
    """The ICM objective from scratch: numpy Gram, scipy's Gaussian log density."""
    p = {k: np.asarray(v) for k, v in params.items()}
    keep = np.asarray(mask) > 0
    x, z, y = np.asarray(x)[keep], np.asarray(z)[keep], np.asarray(y)[keep]
    xu = (x - np.asarray(scaling.x_lower)) / np.asarray(scaling.x_width)
    s = xu / np.exp(p["log_ls"])
    r = np.sqrt(((s[:, None, :] - s[None, :, :]) ** 2).sum(-1))
    kx = (1 + np.sqrt(5) * r + 5 * r ** 2 / 3) * np.exp(-np.sqrt(5) * r)
    kappa = np.exp(p["log_kappa"])
    kappa[0] += spec.target_floor * np.sum(p["W"][0] ** 2)
    B = p["W"] @ p["W"].T + np.diag(kappa)
    noise = np.asarray(models.noise_variances(spec, params, scaling.y_scale))
    cov = kx * B[z][:, z] + np.diag(noise[z] if noise.size > 1 else np.full(len(z), noise[0]))
    r_std = (y - float(scaling.y_mean)) / float(scaling.y_scale)
    nll = -scipy.stats.multivariate_normal(np.zeros(len(y)), cov).logpdf(r_std)
    return nll - float(models.log_prior(spec, params))


@pytest.mark.parametrize("target_floor", [0.0, 0.05])
def test_dense_icm_objective_against_numpy(target_floor):
    spec, scaling, x, z, y, mask = _setup(45, 64, target_floor=target_floor)
    for p in (models.default_params(spec), models.random_params(spec, jax.random.PRNGKey(3))):
        np.testing.assert_allclose(float(fit.neg_log_marginal(spec, p, scaling, x, z, y, mask)),
                                   _numpy_nlml(spec, p, scaling, x, z, y, mask), rtol=1e-10)


@pytest.mark.parametrize("kind", ["icm", "product", "linear_basis"])
def test_objective_matches_tinygp_value_and_gradient(kind):
    spec, scaling, x, z, y, mask = _setup(45, 64, kind)
    vg = jax.jit(jax.value_and_grad(lambda p: fit.neg_log_marginal(spec, p, scaling, x, z, y, mask)))
    vg_ref = jax.jit(jax.value_and_grad(lambda p: fit.neg_log_marginal_reference(spec, p, scaling, x, z, y, mask)))
    for p in (models.default_params(spec), models.random_params(spec, jax.random.PRNGKey(1))):
        v, g = vg(p)
        vr, gr = vg_ref(p)
        np.testing.assert_allclose(v, vr, rtol=1e-10)
        np.testing.assert_allclose(ravel_pytree(g)[0], ravel_pytree(gr)[0], rtol=1e-7, atol=1e-8)
    # padding changes nothing
    spec2, scaling2, x2, z2, y2, mask2 = _setup(45, 45, kind)
    p = models.default_params(spec)
    np.testing.assert_allclose(fit.neg_log_marginal(spec, p, scaling, x, z, y, mask),
                               fit.neg_log_marginal(spec2, p, scaling2, x2, z2, y2, mask2), rtol=1e-10)


def test_gaussian_nll_against_scipy_and_inf_when_indefinite():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 6))
    cov, r = a @ a.T + 0.5 * np.eye(6), rng.normal(size=6)
    ref = -scipy.stats.multivariate_normal(np.zeros(6), cov).logpdf(r)
    np.testing.assert_allclose(float(fit.gaussian_nll(jnp.asarray(cov), jnp.asarray(r))), ref, rtol=1e-12)
    # closed-form gradient against autodiff through the Cholesky (symmetrised: only
    # symmetric perturbations of a covariance are meaningful)
    auto = jax.grad(lambda c: -jax.scipy.stats.multivariate_normal.logpdf(jnp.asarray(r), jnp.zeros(6), c))
    sym = lambda g: 0.5 * (g + g.T)
    np.testing.assert_allclose(sym(jax.grad(fit.gaussian_nll)(jnp.asarray(cov), jnp.asarray(r))),
                               sym(auto(jnp.asarray(cov))), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(jax.grad(fit.gaussian_nll, 1)(jnp.asarray(cov), jnp.asarray(r)),
                               np.linalg.solve(cov, r), rtol=1e-10)
    indefinite = jnp.asarray([[1.0, 2.0], [2.0, 1.0]])
    assert fit.gaussian_nll(indefinite, jnp.ones(2)) == jnp.inf


@pytest.mark.slow  # ~12 s of the default run; it composes two checks that stay in CI: the objective
# equals tinygp's in value and gradient (above), and the fit reaches scipy L-BFGS-B's optimum of
# it (tests/test_fit.py)
def test_fit_reaches_the_tinygp_objectives_optimum():
    """fit_params (dense objective) against scipy's L-BFGS-B on the tinygp objective."""
    spec, scaling, x, z, y, mask = _setup(60, 64)
    params, loss, _ = fit.fit_params(spec, x, z, y, jax.random.PRNGKey(0), mask=mask, n_restarts=4, max_iter=200,
                                     scaling=scaling)
    ref = lambda p: fit.neg_log_marginal_reference(spec, p, scaling, x, z, y, mask)
    flat0, unravel = ravel_pytree(models.default_params(spec))
    vg = jax.jit(jax.value_and_grad(lambda f: ref(unravel(f))))
    res = scipy.optimize.minimize(lambda f: tuple(np.asarray(a, float) for a in vg(jnp.asarray(f))),
                                  np.asarray(flat0), jac=True, method="L-BFGS-B",
                                  options={"maxiter": 3000, "gtol": 1e-9})
    assert float(loss) <= res.fun + 1e-4, (float(loss), res.fun)
    np.testing.assert_allclose(float(ref(params)), float(loss), rtol=1e-10)


def test_matern_gram_gradient_against_autodiff():
    """The Matern-5/2 Gram's closed-form VJP against autodiff of the same formula, with
    repeated rows (r = 0) and a non-symmetric cotangent."""
    rng = np.random.default_rng(2)
    s = rng.uniform(size=(40, 3)) * 3.0
    s[5] = s[7]

    def plain(s):
        sq = jnp.sum(jnp.square(s[:, None, :] - s[None, :, :]), axis=-1)
        a = jnp.sqrt(5.0) * jnp.sqrt(sq + jnp.finfo(sq.dtype).tiny)
        return (1.0 + a + jnp.square(a) / 3.0) * jnp.exp(-a)

    c = jnp.asarray(rng.standard_normal((40, 40)))
    np.testing.assert_allclose(fit.matern52_gram(jnp.asarray(s)), plain(jnp.asarray(s)), rtol=1e-15, atol=0)
    got = jax.vjp(fit.matern52_gram, jnp.asarray(s))[1](c)[0]
    ref = jax.vjp(plain, jnp.asarray(s))[1](c)[0]
    np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-12 * float(jnp.max(jnp.abs(ref))))
