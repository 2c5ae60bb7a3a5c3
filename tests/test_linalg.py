"""gp.linalg's blocked triangular algebra against numpy, and the fit's duplicate start."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.gp import fitting, linalg, models

# fitting.fit_from is traceable but not jitted: called eagerly, each call traces and compiles
# its L-BFGS scan anew (~4 s each). Jitted here, calls with the same shapes and static
# arguments share one program: the two fit tests below use 30 rows, 3 starts and 20
# iterations, so their scan-batched runs compile once.
fit_from = jax.jit(fitting.fit_from, static_argnames=("spec", "max_iter", "tol", "ftol", "batching"))


def _spd(n, seed=0, noise=1e-4):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 3))
    r = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1)) / 0.3
    return (1 + np.sqrt(5) * r + 5 * r ** 2 / 3) * np.exp(-np.sqrt(5) * r) + noise * np.eye(n)


@pytest.mark.parametrize("n", [1, 7, 64, 65, 100, 128, 129, 160, 320])
def test_inverses_match_numpy(n):
    K = _spd(n, seed=n)
    L = np.linalg.cholesky(K)
    Li = np.asarray(jax.jit(linalg.tri_inv)(jnp.asarray(L)))
    ref = np.linalg.inv(L)
    assert np.all(np.triu(Li, 1) == 0.0)  # exactly lower-triangular
    scale = np.max(np.abs(ref))
    np.testing.assert_allclose(Li, ref, rtol=0, atol=1e-11 * scale)
    Ki = np.asarray(jax.jit(linalg.lower_gram)(jnp.asarray(Li)))
    np.testing.assert_array_equal(Ki, Ki.T)
    ref_inv = np.linalg.inv(K)
    np.testing.assert_allclose(Ki, ref_inv, rtol=0, atol=1e-10 * np.max(np.abs(ref_inv)))


def test_lower_gram_of_any_lower_triangle():
    rng = np.random.default_rng(1)
    A = np.tril(rng.standard_normal((200, 200)))
    np.testing.assert_allclose(np.asarray(linalg.lower_gram(jnp.asarray(A))), A.T @ A, atol=1e-11)


@pytest.mark.parametrize("n, m", [(5, 3), (256, 7), (257, 1), (600, 40), (1100, 9)])
def test_tri_matmul_matches_numpy(n, m):
    """The blocked product of a lower-triangular factor and a matrix: the plain product
    to rounding, at sizes below the split, just past it, unaligned and two levels deep;
    its gradient in B (the maximiser differentiates predictions) is Li^T G."""
    rng = np.random.default_rng(n)
    Li = np.tril(rng.standard_normal((n, n)))
    B = rng.standard_normal((n, m))
    out = np.asarray(jax.jit(linalg.tri_matmul)(jnp.asarray(Li), jnp.asarray(B)))
    np.testing.assert_allclose(out, Li @ B, rtol=0, atol=1e-12 * np.sqrt(n) * np.max(np.abs(Li @ B)))
    G = rng.standard_normal((n, m))
    grad = jax.grad(lambda b: jnp.sum(linalg.tri_matmul(jnp.asarray(Li), b) * G))(jnp.asarray(B))
    np.testing.assert_allclose(np.asarray(grad), Li.T @ G, rtol=0, atol=1e-12 * np.sqrt(n) * np.max(np.abs(Li.T @ G)))


def test_singular_factor_is_not_finite():
    L = np.tril(np.ones((100, 100)))
    L[70, 70] = 0.0
    assert not np.all(np.isfinite(np.asarray(linalg.tri_inv(jnp.asarray(L)))))


def test_failed_factorisation_is_inf_not_nan():
    """Above BASE_BLOCK rows too (the blocked inverse of a NaN factor)."""
    K = _spd(100)
    K[60, 60] = -1.0
    assert fitting.gaussian_nll(jnp.asarray(K), jnp.ones(100)) == jnp.inf


def test_a_repeated_start_gives_the_result_of_running_it_again():
    """fit_from skips a start equal to the previous one: the same losses and the same
    best hyper-parameters as running both (two different starts still both run)."""
    spec = models.icm_model([(0.0, 1.0)] * 2, 2)
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(size=(30, 2)))
    z = jnp.asarray(rng.integers(0, 2, 30))
    y = jnp.sin(6 * x[:, 0]) + x[:, 1] - 0.3 * z
    mask = jnp.ones(30)
    scaling = models.make_scaling(spec, y, mask)
    d = models.default_params(spec)
    same = fitting.restart_inits(spec, jax.random.PRNGKey(0), 3, first=d)  # defaults twice, then random
    # batching "scan" (the CPU default) named: the skip belongs to it, and the call below
    # in the lock-step test names it too (a static argument: the same program)
    _, _, losses = fit_from(spec, scaling, x, z, y, mask, same, 20, 1e-5, batching="scan")
    one = jax.tree_util.tree_map(lambda a: a[:1], same)
    third = jax.tree_util.tree_map(lambda a: a[2:], same)
    _, l1, _ = fit_from(spec, scaling, x, z, y, mask, one, 20, 1e-5, batching="scan")
    _, l3, _ = fit_from(spec, scaling, x, z, y, mask, third, 20, 1e-5, batching="scan")  # the one-start program
    assert float(losses[0]) == float(losses[1])  # the repeated start's result
    # the three-start and the one-start programs, compiled separately: the same to rounding
    # (XLA fuses each program its own way)
    np.testing.assert_allclose(np.asarray(losses), [float(l1), float(l1), float(l3)], rtol=1e-8)
    assert float(l3) != float(l1)


def test_starts_in_lock_step_give_the_starts_one_after_another():
    """fit_from's vmap batching (the accelerator default) finds, from every start, the
    optimum the scan batching (the CPU default) finds; a bad name is an error."""
    spec = models.icm_model([(0.0, 1.0)] * 2, 2)
    rng = np.random.default_rng(1)
    # 30 rows and 20 iterations (were 25 and 8): the shapes and static arguments of the
    # test above, whose scan-batched program this reuses; the starts still differ
    x = jnp.asarray(rng.uniform(size=(30, 2)))
    z = jnp.asarray(rng.integers(0, 2, 30))
    y = jnp.cos(5 * x[:, 0]) * x[:, 1] + 0.2 * z
    mask = jnp.ones(30)
    scaling = models.make_scaling(spec, y, mask)
    inits = fitting.restart_inits(spec, jax.random.PRNGKey(3), 3)
    args = (spec, scaling, x, z, y, mask, inits, 20, 1e-5)
    best_s, loss_s, losses_s = fit_from(*args, batching="scan")
    best_v, loss_v, losses_v = fit_from(*args, batching="vmap")
    assert len(set(np.round(np.asarray(losses_s), 6))) == 3  # three distinct starts
    np.testing.assert_allclose(np.asarray(losses_v), np.asarray(losses_s), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(best_v["log_ls"]), np.asarray(best_s["log_ls"]), rtol=1e-4)
    assert fitting.starts_batching() == "scan"  # the tests run on CPU
    with pytest.raises(ValueError, match="batching must be"):
        fitting.fit_from(*args, batching="pmap")
