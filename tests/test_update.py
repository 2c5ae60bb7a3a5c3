"""The O(n^2) update of a conditioned posterior (mumbo_jax.gp.update) against a fresh
factorisation and against dense numpy algebra."""

import jax
import numpy as np
import pytest

from mumbo_jax.gp import models, moments, posterior, update


def _data(spec, n, seed):
    rng = np.random.default_rng(seed)
    b = np.asarray(spec.bounds)
    x = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=(n, spec.dim))
    if spec.discrete:
        z = rng.integers(0, spec.n_fidelities, n).astype(float)
    else:
        z = rng.uniform(*spec.fidelity_bounds, n)
    y = np.sin(3 * x.sum(1)) + 0.3 * z + 0.01 * rng.standard_normal(n)
    return x, z, y


def _pad(a, size):
    a = np.asarray(a, float)
    return np.concatenate([a, np.zeros((size - a.shape[0],) + a.shape[1:])])


def _fresh(spec, params, scaling, x, z, y, size):
    n = x.shape[0]
    mask = _pad(np.ones(n), size)
    return posterior.condition(spec, params, _pad(x, size), _pad(z, size), _pad(y, size), mask, scaling)


def _dense_check(post, spec, params, scaling, x, z, y):
    """K^-1 from the updated factor against numpy's inverse of the dense covariance,
    and alpha against a dense solve (rows of real data only)."""
    n = x.shape[0]
    xu, zu = models.scale_inputs(spec, scaling, x, z)
    noise = models.noise_variances(spec, params, scaling.y_scale)
    K = np.asarray(posterior.covariance(spec, params, xu, zu, np.ones(n), noise))
    Li = np.asarray(post.chol_inv)[:n, :n]
    k_inv = Li.T @ Li
    ref = np.linalg.inv(K)
    assert np.max(np.abs(k_inv - ref)) <= 1e-8 * np.max(np.abs(ref))
    y_std = (y - float(scaling.y_mean)) / float(scaling.y_scale)
    a_ref = np.linalg.solve(K, y_std)
    assert np.max(np.abs(np.asarray(post.alpha)[:n] - a_ref)) <= 1e-8 * np.max(np.abs(a_ref))
    assert np.allclose(np.tril(Li), Li)  # still lower-triangular


@pytest.mark.parametrize("kind", ["icm", "product"])
def test_long_sequence_with_growing_buffer_matches_fresh_factorisation(kind):
    if kind == "icm":
        spec = models.icm_model([(0.0, 1.0)] * 3, 3)
    else:
        spec = models.product_model([(0.0, 1.0)] * 2, (0.0, 1.0))
    x, z, y = _data(spec, 90, 0)
    params = models.random_params(spec, jax.random.PRNGKey(3))
    n0 = 20
    scaling = models.make_scaling(spec, y[:n0])  # held from the "refit" at n0 rows
    post = _fresh(spec, params, scaling, x[:n0], z[:n0], y[:n0], 32)
    for r in range(n0, x.shape[0]):
        if r + 1 > post.mask.shape[0]:
            post = update.grow(post, post.mask.shape[0] + 32)
        post, exact = update.append_row(post, r, x[r], z[r], y[r])
        assert bool(exact)
    _dense_check(post, spec, params, scaling, x, z, y)
    fresh = _fresh(spec, params, scaling, x, z, y, post.mask.shape[0])
    xq, zq, _ = _data(spec, 50, 9)
    zq_in = zq.astype(int) if spec.discrete else zq
    mu_u, var_u = moments.predict(post, xq, zq_in)
    mu_f, var_f = moments.predict(fresh, xq, zq_in)
    np.testing.assert_allclose(mu_u, mu_f, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(var_u, var_f, rtol=1e-8, atol=1e-10)


def test_pending_rows_appended_to_a_copy_and_cancelled():
    """Believer rows appended to a copy leave the carried posterior as it was: a
    cancelled pending point needs no downdate."""
    spec = models.icm_model([(0.0, 1.0)] * 2, 2)
    x, z, y = _data(spec, 30, 1)
    params = models.default_params(spec)
    scaling = models.make_scaling(spec, y[:25])
    base = _fresh(spec, params, scaling, x[:25], z[:25], y[:25], 32)
    before = np.asarray(base.chol_inv).copy()
    pend, _ = update.append_row(base, 25, x[25], z[25], y[25])
    pend, _ = update.append_row(pend, 26, x[26], z[26], y[26])
    _dense_check(pend, spec, params, scaling, x[:27], z[:27], y[:27])
    np.testing.assert_array_equal(np.asarray(base.chol_inv), before)
    # the pending point at 25 cancelled: the next told point takes row 25
    told, _ = update.append_row(base, 25, x[27], z[27], y[27])
    keep = [*range(25), 27]
    _dense_check(told, spec, params, scaling, x[keep], z[keep], y[keep])


def test_duplicate_noiseless_point_refactorises_without_nan():
    """A repeated input with (near) zero noise makes the Schur complement vanish: the
    update falls back to a fresh factorisation and stays finite."""
    spec = models.icm_model([(0.0, 1.0)] * 2, 2, noise=[1e-12, 1e-12], noise_floor=1e-12)
    x, z, y = _data(spec, 12, 2)
    params = models.default_params(spec)
    scaling = models.make_scaling(spec, y[:10])
    post = _fresh(spec, params, scaling, x[:10], z[:10], y[:10], 32)
    post, exact = update.append_row(post, 10, x[3], z[3], y[3])  # the same (x, z) as row 3
    assert not bool(exact)
    for a in (post.chol_inv, post.alpha):
        assert np.all(np.isfinite(np.asarray(a)))
    mu, var = moments.predict(post, x[:5], z[:5].astype(int))
    assert np.all(np.isfinite(np.asarray(mu))) and np.all(np.isfinite(np.asarray(var)))


def test_grow_keeps_predictions_and_refuses_to_shrink():
    spec = models.icm_model([(0.0, 1.0)] * 2, 2)
    x, z, y = _data(spec, 20, 4)
    params = models.default_params(spec)
    post = _fresh(spec, params, models.make_scaling(spec, y), x, z, y, 32)
    big = update.grow(post, 96)
    assert big.chol_inv.shape == (96, 96)
    np.testing.assert_allclose(moments.predict(big, x[:4], z[:4].astype(int))[1],
                               moments.predict(post, x[:4], z[:4].astype(int))[1], rtol=1e-12)
    with pytest.raises(ValueError, match="cannot shrink"):
        update.grow(post, 16)
