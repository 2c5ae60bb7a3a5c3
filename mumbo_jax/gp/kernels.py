"""Kernels over X x Z for multi-fidelity and multi-task GPs, built on tinygp.

Every kernel here takes inputs as a pair ``(x, z)``: ``x`` of shape ``[d]`` (already
scaled to the unit cube) and ``z`` a scalar, either an integer fidelity/task index
(discrete models) or a float fidelity in ``[0, 1]`` (continuous models). tinygp builds
Gram matrices from ``evaluate`` by vmap, so ``k((X, Z), (X2, Z2))`` with ``X`` of shape
``[n, d]`` and ``Z`` of shape ``[n]`` gives an ``[n, m]`` matrix.

Fidelity 0 is the target (highest) fidelity throughout the library.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from tinygp import kernels, transforms

__all__ = [
    "EuclideanDistance", "matern52_ard", "matern52_scalar", "ICM", "ICMDiscrepancy", "icm_matrix", "ar1_coefficients", "AR1",
    "ContinuousProduct", "fabolas_basis", "FabolasBasis", "linear_basis", "BasisKernel", "Masked", "matern52_gram",
    "matern52_cross",
]


class EuclideanDistance(kernels.distance.Distance):
    """r = sqrt(||x - x'||^2 + tiny): the L2 distance with finite gradients at r = 0.

    Used instead of tinygp's ``L2Distance``, whose ``where(r2 == 0, r1, sqrt(r2))`` form
    XLA on CPU (jaxlib 0.10.2) miscompiled inside larger jitted graphs: whole columns
    of Gram matrices came back wrong (tests/test_posterior.py guards against it).
    """

    def distance(self, X1, X2):
        sq = jnp.sum(jnp.square(X1 - X2))
        return jnp.sqrt(sq + jnp.finfo(sq.dtype).tiny)

    def squared_distance(self, X1, X2):
        return jnp.sum(jnp.square(X1 - X2))


def matern52_ard(lengthscales: jax.Array, amplitude: jax.Array | float = 1.0):
    """ARD Matern-5/2 on the Euclidean distance.

    k(x, x') = a * (1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r), r = ||(x - x') / l||_2.

    tinygp's Matern default in d > 1 is the L1 distance; we pass an L2 distance
    explicitly (:class:`EuclideanDistance`).

    Args:
        lengthscales: ``[d]`` positive lengthscales.
        amplitude: scalar signal variance ``a``.
    """
    base = kernels.Matern52(distance=EuclideanDistance())
    return amplitude * transforms.Linear(1.0 / jnp.asarray(lengthscales), base)


def matern52_scalar(lengthscale: jax.Array | float):
    """Matern-5/2 on a scalar input (a continuous fidelity), lengthscale ``l``."""
    return kernels.Matern52(scale=lengthscale)


class ICM(kernels.Kernel):
    """Intrinsic coregionalisation: k((x,i),(x',j)) = k_X(x,x') B[i,j].

    Attributes:
        kx: kernel on x.
        B: ``[L, L]`` positive semi-definite coregionalisation matrix
            (``W W^T + diag(kappa)``, see :func:`icm_matrix`).
    """

    kx: kernels.Kernel
    B: jax.Array

    def evaluate(self, X1, X2):
        (x1, z1), (x2, z2) = X1, X2
        return self.kx.evaluate(x1, x2) * self.B[z1, z2]


class ICMDiscrepancy(kernels.Kernel):
    """ICM plus a target-only discrepancy (a two-component linear model of
    coregionalisation): k((x,i),(x',j)) = k_X(x,x') B[i,j] + [i = j = 0] k_D(x,x').

    The discrepancy has its own lengthscales and variance, so the target's departure
    from the cheap fidelities is modelled instead of fitted away.

    Attributes:
        kx: shared kernel on x.
        B: ``[L, L]`` coregionalisation matrix.
        kd: the target discrepancy's kernel on x (own lengthscales and amplitude).
    """

    kx: kernels.Kernel
    B: jax.Array
    kd: kernels.Kernel

    def evaluate(self, X1, X2):
        (x1, z1), (x2, z2) = X1, X2
        on_target = jnp.logical_and(z1 == 0, z2 == 0)
        return self.kx.evaluate(x1, x2) * self.B[z1, z2] + jnp.where(on_target, self.kd.evaluate(x1, x2), 0.0)


def icm_matrix(W: jax.Array, kappa: jax.Array) -> jax.Array:
    """B = W W^T + diag(kappa); ``W`` is ``[L, rank]``, ``kappa`` is ``[L]``."""
    return W @ W.T + jnp.diag(kappa)


def ar1_coefficients(rho: jax.Array) -> jax.Array:
    """Coefficients C[i, l] of f_i = sum_l C[i, l] delta_l for the AR(1) recursion.

    Fidelities are ordered target first: f_{L-1} = delta_{L-1} and
    f_i = rho_i f_{i+1} + delta_i, so C[i, l] = prod_{m=i}^{l-1} rho_m for l >= i, else 0.

    Args:
        rho: ``[L - 1]`` scaling factors.

    Returns:
        ``[L, L]`` upper-triangular matrix with unit diagonal.
    """
    n_levels = rho.shape[0] + 1
    # log-free cumulative products: P[i, l] = prod_{m < l} rho_m / prod_{m < i} rho_m is
    # unstable when a rho is 0, so build each row by masked cumulative product instead.
    idx = jnp.arange(n_levels)
    rho_pad = jnp.concatenate([rho, jnp.ones(1, rho.dtype)])

    def row(i):
        factors = jnp.where((idx >= i) & (idx < n_levels - 1), rho_pad, 1.0)
        # C[i, l] = prod_{m=i}^{l-1} rho_m: exclusive cumulative product from i.
        cum = jnp.concatenate([jnp.ones(1, rho.dtype), jnp.cumprod(factors)[:-1]])
        return jnp.where(idx >= i, cum, 0.0)

    return jax.vmap(row)(idx)


class AR1(kernels.Kernel):
    """Linear auto-regressive multi-fidelity kernel (Kennedy & O'Hagan 2000).

    Cov(f_i(x), f_j(x')) = sum_l C[i, l] C[j, l] k_l(x, x'), with C from
    :func:`ar1_coefficients` and an independent kernel ``k_l`` per level.

    Attributes:
        kxs: tuple of ``L`` kernels on x (one per level's discrepancy delta_l).
        C: ``[L, L]`` AR(1) coefficients.
    """

    kxs: tuple
    C: jax.Array

    def evaluate(self, X1, X2):
        (x1, z1), (x2, z2) = X1, X2
        k = jnp.stack([kx.evaluate(x1, x2) for kx in self.kxs])
        return jnp.sum(self.C[z1] * self.C[z2] * k)


class ContinuousProduct(kernels.Kernel):
    """Continuous fidelity product kernel k_X(x,x') k_Z(z,z').

    Attributes:
        kx: kernel on x.
        kz: kernel on the scalar fidelity z in [0, 1].
    """

    kx: kernels.Kernel
    kz: kernels.Kernel

    def evaluate(self, X1, X2):
        (x1, z1), (x2, z2) = X1, X2
        return self.kx.evaluate(x1, x2) * self.kz.evaluate(z1, z2)


def fabolas_basis(z: jax.Array) -> jax.Array:
    """phi(z) = (z, (1 - z)^2): FABOLAS' basis for the fidelity (data fraction) z."""
    return jnp.stack([z, (1.0 - z) ** 2], axis=-1)


class FabolasBasis(kernels.Kernel):
    """FABOLAS' degenerate kernel k_X(x,x') phi(z)^T S phi(z').

    Attributes:
        kx: kernel on x.
        S: ``[2, 2]`` positive semi-definite matrix (``L L^T``).
    """

    kx: kernels.Kernel
    S: jax.Array

    def evaluate(self, X1, X2):
        (x1, z1), (x2, z2) = X1, X2
        return self.kx.evaluate(x1, x2) * (fabolas_basis(z1) @ self.S @ fabolas_basis(z2))


def linear_basis(z: jax.Array) -> jax.Array:
    """phi(z) = (1, z): an intercept and a slope in the (scaled) fidelity."""
    return jnp.stack([jnp.ones_like(z), z], axis=-1)


class BasisKernel(kernels.Kernel):
    """A degenerate basis kernel over the fidelity: k_X(x,x') phi(z)^T S phi(z').

    ``phi(z) = (1, z)`` for a float z in [0, 1] (:func:`linear_basis`: for each x the
    function is linear in z, with an intercept and a slope that vary smoothly with x, so
    it extrapolates a trend to unobserved fidelities), or ``one_hot(z)`` for an integer
    task index (``one_hot=True``: an intrinsic coregionalisation k_X S[z, z'] with a
    full-rank S). The learned cost model's kernel.

    Attributes:
        kx: kernel on x.
        S: ``[p, p]`` positive semi-definite matrix (``L L^T``); p = 2 or the number of tasks.
        one_hot: static; which basis.
    """

    kx: kernels.Kernel
    S: jax.Array
    one_hot: bool = dataclasses.field(default=False, metadata={"static": True})

    def _phi(self, z):
        if self.one_hot:
            return jax.nn.one_hot(z, self.S.shape[0], dtype=self.S.dtype)
        return linear_basis(z)

    def evaluate(self, X1, X2):
        (x1, z1), (x2, z2) = X1, X2
        return self.kx.evaluate(x1, x2) * (self._phi(z1) @ self.S @ self._phi(z2))


class Masked(kernels.Kernel):
    """k((x,z,m),(x',z',m')) = m m' k((x,z),(x',z')): padded rows drop out."""

    k: kernels.Kernel

    def evaluate(self, X1, X2):
        (x1, z1, m1), (x2, z2, m2) = X1, X2
        return m1 * m2 * self.k.evaluate((x1, z1), (x2, z2))


def _matern52_fwd(s):
    sq = jnp.sum(jnp.square(s[:, None, :] - s[None, :, :]), axis=-1)
    # + tiny as in EuclideanDistance: a finite gradient at r = 0
    a = jnp.sqrt(5.0) * jnp.sqrt(sq + jnp.finfo(sq.dtype).tiny)
    e = (1.0 + a) * jnp.exp(-a)
    return e + jnp.square(a) / 3.0 * jnp.exp(-a), (s, e)


def _matern52_bwd(res, c):
    # dk/d(sq) = -(5/6) (1 + a) e^-a, d(sq_ij)/ds_i = 2 (s_i - s_j): with P = (C + C^T) o e,
    # d/ds_i = -(5/3) (s_i sum_j P_ij - (P s)_i), O(n^2 d) without [n, n, d] temporaries
    # e is symmetric, so P = Q + Q^T with Q = C o e: row sums and products by Q and Q^T
    # (a transposed product is a BLAS flag) instead of materialising C^T
    s, e = res
    q = c * e
    return (-(5.0 / 3.0) * (s * (jnp.sum(q, axis=1) + jnp.sum(q, axis=0))[:, None] - (q @ s + q.T @ s)),)


def matern52_cross(sa, sb):
    """``[n, m]`` Matern-5/2 cross-covariance of scaled inputs ``sa [n, d]`` and ``sb [m, d]``
    (unit amplitude): the arithmetic of :func:`matern52_ard`'s tinygp kernel, the squared
    distance summed one dimension at a time (no ``[n, m, d]`` temporary, no ``|a|^2 +
    |b|^2 - 2 a.b`` cancellation). Alone 2-5x faster than the doubly vmapped
    ``evaluate`` on one core at n = 1024, m = 512; inside g*'s grid moments and the
    candidates' scores the ``L^-1 k`` product dominates and the two forms cost the same
    (``experiments/performance/bench_cross.py``)."""
    sq = sum(jnp.square(sa[:, j, None] - sb[None, :, j]) for j in range(sa.shape[1]))
    a = jnp.sqrt(5.0) * jnp.sqrt(sq + jnp.finfo(sq.dtype).tiny)
    return (1.0 + a + jnp.square(a) / 3.0) * jnp.exp(-a)


@jax.custom_vjp
def matern52_gram(s):
    """Matern-5/2 Gram matrix of scaled inputs, with its gradient in closed form: the
    dense form of :func:`matern52_ard` that the ICM model's fit uses
    (:meth:`mumbo_jax.gp.models.ICMModel.gram`).

    k_ij = (1 + a + a^2 / 3) e^-a with a = sqrt(5 (r_ij^2 + tiny)), r_ij = |s_i - s_j|
    (the ``tiny`` of the dtype keeps the gradient finite at r = 0, as in
    :func:`matern52_ard`). The VJP costs O(n^2 d) without ``[n, n, d]`` temporaries
    (tests/test_fit_dense.py checks it against autodiff).

    Args:
        s: ``[n, d]`` inputs divided by their lengthscales.

    Returns:
        ``[n, n]`` the Gram matrix (unit amplitude).
    """
    return _matern52_fwd(s)[0]


matern52_gram.defvjp(_matern52_fwd, _matern52_bwd)
