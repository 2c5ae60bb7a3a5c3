"""Hyper-parameter fitting: optimum against scipy's L-BFGS-B, recovery on known GPs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
from jax.flatten_util import ravel_pytree

from mumbo_jax.gp import fitting as fit, models

from .test_posterior import np_matern52


def synthetic_data(spec, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, spec.dim))
    z = rng.integers(0, spec.n_fidelities, n) if spec.discrete else rng.uniform(size=n)
    y = np.sin(4 * x[:, 0]) + np.cos(3 * x[:, 1]) * (1 + 0.2 * z) + 0.02 * rng.normal(size=n)
    return x, z, y


@pytest.mark.parametrize("kind", ["icm", "product", "linear_basis"])
def test_fit_reaches_scipy_lbfgsb_optimum(kind):
    bounds = [(0.0, 1.0)] * 2
    spec = {"icm": lambda: models.icm_model(bounds, 2, rank=1), "product": lambda: models.product_model(bounds),
            "linear_basis": lambda: models.basis_model(bounds, fidelity_bounds=(0.0, 1.0))}[kind]()
    x, z, y = synthetic_data(spec, 40, seed=0)
    x, z, y, mask = models.check_data(spec, x, z, y)
    scaling = models.make_scaling(spec, y, mask)
    objective = jax.jit(lambda p: fit.neg_log_marginal(spec, p, scaling, x, z, y, mask))

    params, loss, _ = fit.fit_params(spec, x, z, y, jax.random.PRNGKey(0), n_restarts=4, max_iter=200)

    # scipy's L-BFGS-B on the same objective, from the same deterministic start
    flat0, unravel = ravel_pytree(models.default_params(spec))
    vg = jax.jit(jax.value_and_grad(lambda f: objective(unravel(f))))
    res = scipy.optimize.minimize(
        lambda f: tuple(np.asarray(a, float) for a in vg(jnp.asarray(f))),
        np.asarray(flat0), jac=True, method="L-BFGS-B", options={"maxiter": 2000, "gtol": 1e-9},
    )
    assert np.isfinite(loss)
    assert float(loss) <= res.fun + 1e-4, (float(loss), res.fun)
    assert abs(float(objective(params)) - float(loss)) < 1e-9


def test_fit_recovers_lengthscales_of_a_known_gp():
    rng = np.random.default_rng(1)
    n, ls_true = 300, np.array([0.15, 0.6])
    x = rng.uniform(size=(n, 2))
    K = np_matern52(x, x, ls_true) + 1e-4 * np.eye(n)
    y = np.linalg.cholesky(K) @ rng.normal(size=n)
    spec = models.icm_model([(0.0, 1.0)] * 2, 1, rank=1)
    params, _, _ = fit.fit_params(spec, x, np.zeros(n, int), y, jax.random.PRNGKey(2), n_restarts=4, max_iter=200)
    ls = np.exp(np.asarray(params["log_ls"]))
    np.testing.assert_allclose(ls, ls_true, rtol=0.3)
    assert ls[0] < ls[1]


@pytest.mark.slow  # ~12 s of the default run; lengthscale recovery and the scipy optimum checks stay in CI
def test_fit_recovers_coregionalisation_of_a_known_icm():
    rng = np.random.default_rng(3)
    n = 240
    x = rng.uniform(size=(n, 1))
    z = rng.integers(0, 2, n)
    B = np.array([[1.0, 0.9], [0.9, 1.0]])
    K = np_matern52(x, x, np.array([0.3])) * B[np.ix_(z, z)] + 1e-4 * np.eye(n)
    y = np.linalg.cholesky(K) @ rng.normal(size=n)
    spec = models.icm_model([(0.0, 1.0)], 2, rank=1)
    params, _, _ = fit.fit_params(spec, x, z, y, jax.random.PRNGKey(4), n_restarts=4, max_iter=200)
    W, kappa = np.asarray(params["W"]), np.exp(np.asarray(params["log_kappa"]))
    Bhat = W @ W.T + np.diag(kappa)
    corr = Bhat[0, 1] / np.sqrt(Bhat[0, 0] * Bhat[1, 1])
    assert 0.75 < corr <= 1.0
    assert abs(np.exp(params["log_ls"][0]) - 0.3) < 0.12


def test_fit_posterior_interpolates_and_handles_constant_y():
    spec = models.ar1_model([(0.0, 1.0)] * 2, 2)
    x, z, y = synthetic_data(spec, 30, seed=5)
    post = fit.fit(spec, x, z, y, jax.random.PRNGKey(0), n_restarts=2, max_iter=200)
    from mumbo_jax.gp import moments

    mu, _ = moments.predict(post, x, z)
    assert np.max(np.abs(np.asarray(mu) - y)) < 0.1
    # constant observations: no division by zero, finite parameters and predictions
    post_c = fit.fit(spec, x, z, np.full(30, 2.5), jax.random.PRNGKey(0), n_restarts=2, max_iter=200)
    mu_c, var_c = moments.predict(post_c, x[:3], z[:3])
    assert np.all(np.isfinite(mu_c)) and np.all(np.isfinite(var_c))
    np.testing.assert_allclose(mu_c, 2.5, atol=1e-6)


def test_fit_rejects_bad_arguments():
    spec = models.icm_model([(0.0, 1.0)], 2)
    x, z, y = synthetic_data(models.icm_model([(0.0, 1.0)] * 2, 2), 10, seed=0)
    with pytest.raises(ValueError, match="n_restarts"):
        fit.fit_params(spec, x[:, :1], z, y, jax.random.PRNGKey(0), n_restarts=0)
    with pytest.raises(ValueError, match="non-finite"):
        fit.fit_params(spec, x[:, :1], z, np.where(np.arange(10) == 2, np.inf, y), jax.random.PRNGKey(0))


def test_fit_names_rows_outside_the_models_box():
    spec = models.icm_model([(0.0, 1.0)] * 2, 2)
    x = np.array([[0.1, 0.2], [0.5, 0.5], [10.0, 0.3], [0.2, 0.9]])
    z = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"rows \[2\] lie outside the model's box"):
        fit.fit(spec, x, z, np.arange(4.0), jax.random.PRNGKey(0), n_restarts=1, max_iter=2)
    # padding rows (mask 0) may hold anything
    models.check_in_box(spec, x, mask=np.array([1, 1, 0, 1]))
