"""An inducing-point posterior for the decisions at large n: m rows instead of n.

Every prediction of a :class:`mumbo_jax.gp.posterior.Posterior` costs O(n^2) (the
whitened cross-covariance ``L^-1 k``), and a decision makes tens of thousands of them
(g*'s grid, the maximiser's candidates). :func:`inducing_posterior` returns a posterior
of the same type over m << n inducing rows, the deterministic training conditional
(DTC; Seeger et al. 2003, Quinonero-Candela & Rasmussen 2005, the predictive of
Titsias' variational bound) with the hyper-parameters, scaling and noise of ``post``:

    mean(x) = k_xU S^-1 K_Uf L^-1 y            S = K_UU + K_Uf L^-1 K_fU   (L the noise)
    var(x)  = k_xx - k_xU (K_UU^-1 - S^-1) k_Ux

stored as ``alpha`` and ``chol_inv`` (``W`` lower-triangular with ``W^T W = K_UU^-1 -
S^-1``, from a QR factorisation, no jitter), so every acquisition runs on it unchanged at O(m^2) a prediction. The inducing
rows are the data rows a greedy pivoted Cholesky of the prior covariance picks (each the
row the earlier ones explain least, Harbrecht et al. 2012), until m are chosen or the
largest unexplained prior variance falls below ``tol`` of the largest prior variance
(the rest are padding, mask 0). The mean and variance match the exact posterior's where
the inducing rows explain the data (tests/test_sparse.py); elsewhere the variance is
larger than the exact one. The fit, the recommendation and the rules that replay the
data rows keep the exact posterior (:func:`mumbo_jax.bo.stages.decision_posterior`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from mumbo_jax.gp import models, posterior
from mumbo_jax.gp.kernels import Masked
from mumbo_jax.runtime.xla_options import jit

__all__ = ["pivoted_rows", "inducing_posterior"]

_JITTER = 1e-10  # relative, on K_UU: round-off of near-duplicate inducing rows


def pivoted_rows(kernel, x, z, mask, m: int, tol: float):
    """``(rows [m], used [m])``: the data rows a greedy pivoted Cholesky of the masked
    prior covariance picks, and whether each was needed (its unexplained variance above
    ``tol`` times the largest prior variance; later picks of an explained set are
    padding). O(n m^2)."""
    n = mask.shape[0]
    diag = jax.vmap(lambda a, b: kernel.evaluate((a, b), (a, b)))(x, z) * mask
    scale = jnp.max(diag)

    def step(j, state):
        resid, cols, rows, used = state
        i = jnp.argmax(resid)
        ok = resid[i] > tol * scale
        k_i = jax.vmap(lambda a, b: kernel.evaluate((a, b), (x[i], z[i])))(x, z) * mask
        col = (k_i - cols @ cols[i]) * jax.lax.rsqrt(jnp.maximum(resid[i], 1e-300))
        col = jnp.where(ok, col, 0.0)
        resid = jnp.maximum(resid - col ** 2, 0.0).at[i].set(0.0)
        return resid, cols.at[:, j].set(col), rows.at[j].set(i.astype(rows.dtype)), used.at[j].set(ok)

    init = (diag, jnp.zeros((n, m), x.dtype), jnp.zeros(m, jnp.int32), jnp.zeros(m, bool))
    _, _, rows, used = jax.lax.fori_loop(0, m, step, init)
    return rows, used


@functools.partial(jit, static_argnames=("m",))
def _inducing(post, m, tol):
    spec = post.spec
    kernel = models.build_kernel(spec, post.params)
    rows, used = pivoted_rows(kernel, post.x, post.z, post.mask, m, tol)
    u = used.astype(post.mask.dtype)
    xu, zu = post.x[rows], post.z[rows]
    masked = Masked(kernel)
    k_uu = masked((xu, zu, u), (xu, zu, u))
    k_uu = k_uu + jnp.diag(_JITTER * jnp.max(jnp.diag(k_uu)) * u + (1.0 - u))  # unused rows: identity
    k_uf = masked((xu, zu, u), (post.x, post.z, post.mask))  # [m, n], 0 at padding
    noise = posterior.observation_diag(spec, post.z, post.mask, post.noise)  # [n], 1 at padding
    l_uu = jnp.linalg.cholesky(k_uu)
    a = jax.scipy.linalg.solve_triangular(l_uu, k_uf, lower=True) * jax.lax.rsqrt(noise)  # L_U^-1 K_Uf L^-1/2
    b = jnp.eye(m, dtype=a.dtype) + a @ a.T
    l_b = jnp.linalg.cholesky(b)
    # mean weights: K_UU^-1 ... = L_U^-T L_B^-T L_B^-1 A L^-1/2 y
    c = jax.scipy.linalg.solve_triangular(l_b, a @ (post.y * jax.lax.rsqrt(noise)), lower=True)
    alpha = jax.scipy.linalg.solve_triangular(l_uu.T, jax.scipy.linalg.solve_triangular(l_b.T, c, lower=False),
                                              lower=False) * u
    # K_UU^-1 - S^-1 = L_U^-T (I - B^-1) L_U^-1 = D^T D with D = diag(sqrt(1 - 1/s)) V^T L_U^-1
    # (B = V diag(s) V^T); its QR, columns reversed, gives the same Gram from a lower-triangular
    # W = J R J: (D J) = Q R makes D^T D = J R^T R J = W^T W, no jitter
    s, v = jnp.linalg.eigh(b)
    l_uu_inv = jax.scipy.linalg.solve_triangular(l_uu, jnp.eye(m, dtype=a.dtype), lower=True)
    d = jnp.sqrt(jnp.clip(1.0 - 1.0 / s, 0.0, 1.0))[:, None] * (v.T @ l_uu_inv)
    r = jnp.linalg.qr(d[:, ::-1], mode="r")
    w = r[::-1, ::-1] * u[:, None] * u[None, :]
    return posterior.Posterior(spec, post.params, post.scaling, xu, zu, u, w, alpha, post.noise, post.y[rows] * u)


def inducing_posterior(post: posterior.Posterior, m: int, tol: float = 1e-8) -> posterior.Posterior:
    """A :class:`mumbo_jax.gp.posterior.Posterior` of ``m`` inducing rows (module
    docstring) standing in for ``post`` in predictions: O(m^2) a prediction instead of
    O(n^2), O(n m^2) to build. ``tol``: the relative prior variance left unexplained at
    which the pivoted Cholesky stops choosing rows (the rest are padding). Its rows are
    a subset of ``post``'s: functions that read the data rows as evaluations (the
    replaying rules, the leave-one-out scores) need the exact ``post``."""
    if m < 1 or m != int(m):
        raise ValueError(f"m (inducing rows) must be a positive integer, got {m!r}")
    if post.mask.ndim > 1:
        return jax.vmap(lambda p: _inducing(p, int(m), tol))(post)
    return _inducing(post, int(m), tol)
