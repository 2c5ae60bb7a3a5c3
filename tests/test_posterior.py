"""Posterior moments against dense numpy GP algebra, for every model and target kind."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.gp import models, moments, posterior

BOUNDS = [(-1.0, 2.0), (10.0, 20.0)]
ZB = (0.1, 2.0)


def np_matern52(X1, X2, ls, amp=1.0):
    r = np.sqrt(np.sum(((X1[:, None, :] - X2[None, :, :]) / ls) ** 2, axis=-1))
    return amp * (1 + np.sqrt(5) * r + 5 / 3 * r**2) * np.exp(-np.sqrt(5) * r)


def np_ar1_coef(rho):
    L = len(rho) + 1
    C = np.zeros((L, L))
    for i in range(L):
        for l in range(i, L):
            C[i, l] = np.prod(rho[i:l])
    return C


def np_kernel(spec, p, X1, Z1, X2, Z2):
    """Kernel on unit-cube x and internal z, written independently of the library."""
    p = jax.tree_util.tree_map(np.asarray, p)
    if spec.kind in ("icm", "icm_disc"):
        kappa = np.exp(p["log_kappa"])
        share = spec.target_floor * np.sum(p["W"][0] ** 2)  # the target floor's addition
        if spec.kind == "icm":
            kappa[0] += share
        B = p["W"] @ p["W"].T + np.diag(kappa)
        k = np_matern52(X1, X2, np.exp(p["log_ls"])) * B[np.ix_(Z1, Z2)]
        if spec.kind == "icm_disc":  # the target-only discrepancy
            on0 = np.outer(np.asarray(Z1) == 0, np.asarray(Z2) == 0)
            k = k + on0 * np_matern52(X1, X2, np.exp(p["log_ls_d"]), np.exp(p["log_amp_d"]) + share)
        return k
    if spec.kind == "ar1":
        C = np_ar1_coef(p["rho"])
        return sum(
            np.outer(C[Z1, l], C[Z2, l]) * np_matern52(X1, X2, np.exp(p["log_ls"][l]), np.exp(p["log_amp"][l]))
            for l in range(spec.n_fidelities)
        )
    if spec.kind == "product":
        kz = np_matern52(Z1[:, None], Z2[:, None], np.exp(p["log_ls_z"]))
        return np_matern52(X1, X2, np.exp(p["log_ls"]), np.exp(p["log_amp"])) * kz
    if spec.kind == "fabolas":
        a, b, c = p["S_chol"]
        Lc = np.array([[np.exp(a), 0], [b, np.exp(c)]])
        phi = lambda z: np.stack([z, (1 - z) ** 2], -1)
        return np_matern52(X1, X2, np.exp(p["log_ls"])) * (phi(Z1) @ Lc @ Lc.T @ phi(Z2).T)
    if spec.kind in ("linear_basis", "task_basis"):
        # S = L L^T, L's lower triangle packed row by row with the diagonal as logs
        n_basis = spec.n_fidelities if spec.kind == "task_basis" else 2
        Lc = np.zeros((n_basis, n_basis))
        Lc[np.tril_indices(n_basis)] = p["S_chol"]
        Lc[np.diag_indices(n_basis)] = np.exp(np.diag(Lc))
        if spec.kind == "task_basis":
            phi = lambda z: np.eye(n_basis)[z]
        else:
            phi = lambda z: np.stack([np.ones_like(z), z], -1)
        return np_matern52(X1, X2, np.exp(p["log_ls"])) * (phi(Z1) @ Lc @ Lc.T @ phi(Z2).T)
    raise AssertionError


SPECS = {
    "icm": models.icm_model(BOUNDS, 3, rank=2),
    "icm_floor": models.icm_model(BOUNDS, 3, rank=2, target_floor=0.3),
    "icm_disc": models.icm_disc_model(BOUNDS, 3, rank=2, target_floor=0.1),
    "ar1": models.ar1_model(BOUNDS, 3),
    "product": models.product_model(BOUNDS, ZB),
    "fabolas": models.fabolas_model(BOUNDS, ZB),
    "linear_basis": models.basis_model(BOUNDS, fidelity_bounds=ZB),
    "task_basis": models.basis_model(BOUNDS, n_fidelities=3),
}
TARGETS = {
    "icm": [posterior.target_fidelity(0), posterior.target_fidelity(2), posterior.task_mean(3)],
    "icm_floor": [posterior.target_fidelity(0)],
    "icm_disc": [posterior.target_fidelity(0), posterior.task_mean(3)],
    "ar1": [posterior.target_fidelity(0), posterior.task_mean(3)],
    "product": [posterior.target_value(2.0), posterior.target_value(0.7)],
    "fabolas": [posterior.target_value(2.0), posterior.target_value(0.7)],
    "linear_basis": [posterior.target_value(2.0), posterior.target_value(0.7)],
    "task_basis": [posterior.target_fidelity(0), posterior.task_mean(3)],
}


def make_data(spec, n, seed):
    rng = np.random.default_rng(seed)
    b = np.asarray(spec.bounds)
    x = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=(n, spec.dim))
    z = rng.integers(0, spec.n_fidelities, n) if spec.discrete else rng.uniform(*spec.fidelity_bounds, n)
    y = np.sin(x[:, 0] * 2) + 0.1 * x[:, 1] + (0.3 * z if True else 0) + 0.05 * rng.normal(size=n)
    return x, z, y


def internal(spec, x, z):
    b = np.asarray(spec.bounds)
    xu = (x - b[:, 0]) / (b[:, 1] - b[:, 0])
    if spec.discrete:
        return xu, z.astype(int)
    lo, hi = spec.fidelity_bounds
    return xu, (z - lo) / (hi - lo)


def dense_reference(spec, p, x, z, y, xc, zc, target):
    """Moments of (g, y) by dense numpy algebra on the joint test covariance."""
    ym, ys = y.mean(), y.std()
    yst = (y - ym) / ys
    noise = spec.noise_floor + np.exp(np.asarray(p["log_noise"]))
    xu, zu = internal(spec, x, z)
    noise_obs = noise[zu] if noise.size > 1 else np.full(len(y), noise[0])  # basis kinds: one noise
    K = np_kernel(spec, p, xu, zu, xu, zu) + np.diag(noise_obs)
    tz = np.asarray(target.z, float)
    w = np.asarray(target.weights)
    out = {k: [] for k in ("mu_g", "var_g", "mu_y", "var_y", "cov")}
    for xi, zi in zip(xc, zc):
        # test set: the candidate (x, z) followed by (x, z_j) for every target point
        Xt = np.repeat(xi[None], 1 + len(tz), axis=0)
        Zt = np.concatenate([[zi], tz])
        Xtu, Ztu = internal(spec, Xt, Zt)
        Ks = np_kernel(spec, p, xu, zu, Xtu, Ztu)
        Kss = np_kernel(spec, p, Xtu, Ztu, Xtu, Ztu)
        mean = Ks.T @ np.linalg.solve(K, yst)
        cov = Kss - Ks.T @ np.linalg.solve(K, Ks)
        A = np.zeros((2, 1 + len(tz)))
        A[0, 1:] = w  # g
        A[1, 0] = 1.0  # f(x, z)
        m2, c2 = A @ mean, A @ cov @ A.T
        nz = noise[int(Ztu[0])] if noise.size > 1 else noise[0]
        out["mu_g"].append(m2[0] * ys + ym)
        out["var_g"].append(c2[0, 0] * ys**2)
        out["mu_y"].append(m2[1] * ys + ym)
        out["var_y"].append((c2[1, 1] + nz) * ys**2)
        out["cov"].append(c2[0, 1] * ys**2)
    return {k: np.asarray(v) for k, v in out.items()}


CASES = [(kind, i) for kind in SPECS for i in range(len(TARGETS[kind]))]


@pytest.mark.parametrize("kind,ti", CASES)
def test_joint_moments_match_dense_numpy(kind, ti):
    spec, target = SPECS[kind], TARGETS[kind][ti]
    x, z, y = make_data(spec, 25, seed=1)
    p = models.random_params(spec, jax.random.PRNGKey(3))
    post = posterior.condition(spec, p, x, z, y)
    xc, zc, _ = make_data(spec, 9, seed=2)
    got = moments.joint_moments(post, xc, zc, target)
    ref = dense_reference(spec, p, x, z, y, xc, zc, target)
    for name in ref:
        np.testing.assert_allclose(np.asarray(getattr(got, name)), ref[name], rtol=1e-6, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("kind", ["icm", "ar1", "product"])
def test_fidelity_grid_matches_pairwise(kind):
    spec = SPECS[kind]
    target = TARGETS[kind][0]
    x, z, y = make_data(spec, 20, seed=4)
    post = posterior.condition(spec, models.default_params(spec), x, z, y)
    xc, _, _ = make_data(spec, 6, seed=5)
    fids = jnp.arange(3) if spec.discrete else jnp.asarray([0.2, 1.0, 2.0])
    grid = moments.joint_moments_fidelities(post, xc, fids, target)
    for i, f in enumerate(fids):
        pair = moments.joint_moments(post, xc, jnp.full(6, f), target)
        for a, b in zip(grid, pair):
            np.testing.assert_allclose(a[i], b, rtol=1e-10, atol=1e-12)


def test_target_joint_and_predict_consistent():
    spec = SPECS["icm"]
    x, z, y = make_data(spec, 20, seed=6)
    post = posterior.condition(spec, models.default_params(spec), x, z, y)
    xc, _, _ = make_data(spec, 8, seed=7)
    target = posterior.task_mean(3)
    mean, cov = moments.target_joint(post, xc, target)
    mu_g, var_g = moments.target_moments(post, xc, target)
    np.testing.assert_allclose(mean, mu_g, rtol=1e-10)
    np.testing.assert_allclose(np.diag(cov), var_g, rtol=1e-8)
    assert np.all(np.linalg.eigvalsh(cov) > -1e-8)
    # the mean over tasks of the per-task predictions equals the task-mean target
    means = [moments.predict(post, xc, jnp.full(8, k))[0] for k in range(3)]
    np.testing.assert_allclose(np.mean(means, axis=0), mu_g, rtol=1e-10)


def test_padding_mask_changes_nothing():
    spec = SPECS["icm"]
    x, z, y = make_data(spec, 15, seed=8)
    p = models.default_params(spec)
    post = posterior.condition(spec, p, x, z, y)
    xp = np.concatenate([x, np.full((5, 2), [0.0, 15.0])])
    zp = np.concatenate([z, np.zeros(5, int)])
    yp = np.concatenate([y, np.full(5, 123.0)])
    mask = np.concatenate([np.ones(15), np.zeros(5)])
    post_p = posterior.condition(spec, p, xp, zp, yp, mask=mask)
    xc, zc, _ = make_data(spec, 7, seed=9)
    for a, b in zip(moments.joint_moments(post, xc, zc, TARGETS["icm"][0]),
                    moments.joint_moments(post_p, xc, zc, TARGETS["icm"][0])):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)



def test_evaluated_inputs_in_box_units_and_of_a_stacked_posterior():
    """The training inputs back in box units (padding rows kept); a stacked posterior
    (hyper-parameter samples) gives the same rows: the data of every sample."""
    spec = SPECS["icm"]
    x, z, y = make_data(spec, 12, seed=3)
    mask = np.r_[np.ones(10), 0.0, 0.0]
    p = models.default_params(spec)
    post = posterior.condition(spec, p, x, z, y, mask=mask)
    np.testing.assert_allclose(posterior.evaluated_inputs(post), x, rtol=1e-12, atol=1e-12)
    other = models.random_params(spec, jax.random.PRNGKey(1))
    params = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), p, other)
    stacked = jax.vmap(lambda q: posterior.condition(spec, q, x, z, y, mask=mask))(params)
    assert stacked.alpha.shape == (2, 12)
    np.testing.assert_array_equal(posterior.evaluated_inputs(stacked), posterior.evaluated_inputs(post))

def test_moments_differentiable_in_x():
    spec = SPECS["fabolas"]
    x, z, y = make_data(spec, 15, seed=10)
    post = posterior.condition(spec, models.default_params(spec), x, z, y)
    target = posterior.target_value(2.0)

    def total(xc):
        m = moments.joint_moments(post, xc, jnp.full(4, 1.0), target)
        return sum(jnp.sum(a) for a in m)

    xc = jnp.asarray(make_data(spec, 4, seed=11)[0])
    g = jax.grad(total)(xc)
    assert np.all(np.isfinite(g)) and np.any(g != 0)
    # at a training point the posterior variance is small but the gradient is finite
    g0 = jax.grad(total)(jnp.asarray(x[:4]))
    assert np.all(np.isfinite(g0))


def test_bad_inputs_raise_clear_errors():
    spec = SPECS["icm"]
    x, z, y = make_data(spec, 10, seed=12)
    p = models.default_params(spec)
    with pytest.raises(ValueError, match="fidelity 3 does not exist"):
        posterior.condition(spec, p, x, np.full(10, 3), y)
    with pytest.raises(ValueError, match=r"x must have shape \[n, 2\]"):
        posterior.condition(spec, p, x[:, :1], z, y)
    with pytest.raises(ValueError, match="y must have shape"):
        posterior.condition(spec, p, x, z, y[:-1])
    with pytest.raises(ValueError, match="z must have shape"):
        posterior.condition(spec, p, x, z[:-1], y)
    y_bad = y.copy()
    y_bad[4] = np.nan
    with pytest.raises(ValueError, match="non-finite values at rows \\[4\\]"):
        posterior.condition(spec, p, x, z, y_bad)
    post = posterior.condition(spec, p, x, z, y)
    with pytest.raises(ValueError, match="target fidelity"):
        moments.joint_moments(post, x, z, posterior.target_fidelity(5))
    with pytest.raises(ValueError, match="lower bound must be below upper bound"):
        models.icm_model([(1.0, 0.0)], 2)
    with pytest.raises(ValueError, match="outside its bounds"):
        cspec = SPECS["product"]
        xc, zc, yc = make_data(cspec, 5, seed=1)
        posterior.condition(cspec, models.default_params(cspec), xc, zc + 10.0, yc)
    with pytest.raises(ValueError, match="n_fidelities"):
        models.icm_model(BOUNDS, 0)
    with pytest.raises(ValueError, match="noise must be"):
        models.icm_model(BOUNDS, 3, noise=(1e-3, 1e-3))
    with pytest.raises(ValueError, match="exactly one of n_fidelities"):
        models.basis_model(BOUNDS)
    with pytest.raises(ValueError, match="exactly one of n_fidelities"):
        models.basis_model(BOUNDS, n_fidelities=2, fidelity_bounds=ZB)
    with pytest.raises(ValueError, match="n_fidelities must be a positive integer"):
        models.basis_model(BOUNDS, n_fidelities=0)


@pytest.mark.parametrize("n_fid,n,size", [(3, 16, 32), (3, 25, 25), (2, 10, 32)])
def test_predict_at_training_points_jitted(n_fid, n, size):
    """Regression: with tinygp's L2Distance, XLA on CPU (jaxlib 0.10.2) miscompiled the
    jitted prediction and returned means off by 1e3 on well-conditioned problems."""
    rng = np.random.default_rng(0)
    spec = models.icm_model([(0.0, 1.0)], n_fid)
    x = rng.uniform(size=(n, 1))
    z = rng.integers(0, n_fid, n)
    y = rng.normal(size=n)
    pad = size - n
    mask = np.concatenate([np.ones(n), np.zeros(pad)])
    p = models.random_params(spec, jax.random.PRNGKey(1))
    post = posterior.condition(spec, p, np.concatenate([x, np.zeros((pad, 1))]),
                               np.concatenate([z, np.zeros(pad, int)]), np.concatenate([y, np.zeros(pad)]), mask)
    mu, _ = moments.predict(post, x, z)
    K = np_kernel(spec, p, x, z, x, z)
    noise = spec.noise_floor + np.exp(np.asarray(p["log_noise"]))
    ys = (y - y.mean()) / y.std()
    ref = K @ np.linalg.solve(K + np.diag(noise[z]), ys) * y.std() + y.mean()
    np.testing.assert_allclose(np.asarray(mu), ref, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("kind, floor", [("icm", 0.05), ("icm_disc", 0.05), ("icm", 0.2)])
def test_target_floor_bounds_the_cheap_correlation(kind, floor):
    """With target_floor f no fidelity correlates with the target above 1/sqrt(1+f) at the
    same x, even where the fit's failure mode drives kappa (and the discrepancy) to ~0;
    without the floor the same parameters give rho ~ 1."""
    make = models.icm_model if kind == "icm" else models.icm_disc_model
    for f, bound in ((floor, 1 / np.sqrt(1 + floor)), (0.0, None)):
        spec = make([[0.0, 1.0]] * 2, 3, rank=2, target_floor=f)
        p = models.default_params(spec)
        p["log_kappa"] = jnp.full(3, -60.0)
        if kind == "icm_disc":
            p["log_amp_d"] = jnp.asarray(-60.0)
        x = jnp.asarray([[0.3, 0.6]] * 3)
        z = jnp.asarray([0, 1, 2])
        K = np.asarray(models.build_kernel(spec, p)((x, z), (x, z)))
        rho = K[0, 1:] / np.sqrt(K[0, 0] * np.diag(K)[1:])
        if bound is None:
            assert np.all(rho > 1 - 1e-9), rho
        else:
            np.testing.assert_allclose(rho, bound, rtol=1e-9)  # W rows are equal: the bound is attained


def test_target_floor_is_checked():
    with pytest.raises(ValueError, match="target_floor"):
        models.icm_model(BOUNDS, 2, target_floor=-0.1)
    with pytest.raises(ValueError, match="target_floor"):
        models.icm_model(BOUNDS, 2, target_floor=float("nan"))
    # only the ICM models have a floor: the others take no target_floor (and read 0)
    assert models.ar1_model(BOUNDS, 2).target_floor == 0.0
    with pytest.raises(TypeError, match="target_floor"):
        dataclasses.replace(models.ar1_model(BOUNDS, 2), target_floor=0.1)


def test_many_points_in_chunks_match_dense_numpy():
    """g*'s grid path: more than moments.CHUNK points go through lax.map in blocks
    (the last one padded) and match the one-block path and a dense numpy reference,
    on a posterior over more than linalg.BASE_BLOCK rows (the blocked inverse)."""
    spec, target = SPECS["icm"], TARGETS["icm"][0]
    x, z, y = make_data(spec, 90, seed=4)
    p = models.random_params(spec, jax.random.PRNGKey(5))
    post = posterior.condition(spec, p, x, z, y)
    xc, zc, _ = make_data(spec, moments.CHUNK + 37, seed=6)
    mean, var = moments.target_moments(post, xc, target)
    assert mean.shape == var.shape == (moments.CHUNK + 37,)
    half = moments.CHUNK // 2
    parts = [moments.target_moments(post, xc[i:i + half], target) for i in range(0, xc.shape[0], half)]
    np.testing.assert_allclose(np.asarray(mean), np.concatenate([m for m, _ in parts]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(var), np.concatenate([v for _, v in parts]), rtol=1e-10, atol=1e-14)
    pick = np.r_[0:3, moments.CHUNK - 1:moments.CHUNK + 2, -3:0]
    ref = dense_reference(spec, p, x, z, y, xc[pick], zc[pick], target)
    np.testing.assert_allclose(np.asarray(mean)[pick], ref["mu_g"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(var)[pick], ref["var_g"], rtol=1e-6, atol=1e-8)
