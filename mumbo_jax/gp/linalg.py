"""Triangular algebra by matrix products: the fit's and the posterior's inverses.

A GP step needs L^-1 (L the Cholesky factor of K + noise) and K^-1 = L^-T L^-1 (the
gradient of the marginal likelihood). XLA
on CPU lowers ``solve_triangular`` to a triangular solve that does not know a right-hand
side is the identity and runs well below matrix-product speed, and a plain product
ignores the zeros of a triangular factor. Here each is split recursively into 2 x 2
blocks (rows rounded to multiples of 32), so nearly all the work is in matrix
products:

    tri_inv(L)          L^-1                    ~ n^3 / 3 flops  (a solve with I: n^3)
    lower_gram(Li)      Li^T Li                 ~ n^3 / 3 flops  (a product: 2 n^3)
    tri_matmul(Li, B)   Li B, B [n, m]          ~ n^2 m flops    (a product: 2 n^2 m)

Measured on one core at n = 320 (the fit's buffer at 300 points): L^-1 and K^-1 from L
in 1.2 ms against 4.3 ms by ``solve_triangular`` and a product
(``experiments/performance/profile_decision.py``). The results agree with the direct forms to
rounding (tests/test_linalg.py, against numpy). Pure algebra in the dtype it is given;
it runs inside the checked entry points of :mod:`mumbo_jax.gp.fitting` and
:mod:`mumbo_jax.gp.posterior`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular

__all__ = ["BASE_BLOCK", "TRI_MATMUL_BLOCK", "cholesky_symmetric", "tri_inv", "lower_gram", "tri_matmul"]

# blocks of at most this many rows use the direct forms: 128 rather than 64 runs as fast (the
# objective with its gradient 4.1, 95 and 1651 ms at 320, 1024 and 3072 rows against 4.1, 94
# and 1626) and compiles a shallower recursion (the fit 3.6 s instead of 4.3 s at 320 rows)
BASE_BLOCK = 128
# tri_matmul splits only factors of more than 2 * this many rows: below that a plain
# product is about as fast on one core and smaller to compile
TRI_MATMUL_BLOCK = 128
_ALIGN = 32


def _half(n: int) -> int:
    """Rows of the leading block: about n / 2, a multiple of 32 when n > 2 * 32."""
    h = n // 2
    return -(-h // _ALIGN) * _ALIGN if n > 2 * _ALIGN else h


def cholesky_symmetric(cov: jax.Array) -> jax.Array:
    """``[n, n]`` lower Cholesky factor of a symmetric ``cov`` (``[n, n]``; NaN where it
    is not positive definite), factorised as its transpose: LAPACK wants a column-major
    matrix and reads one triangle, and the transpose of a row-major matrix is a free
    column-major view, so XLA copies neither ``cov`` nor every step that builds it
    (docs/performance.md, "Refits at large n"). ``cov`` must be symmetric: it is not
    symmetrised."""
    return jax.lax.linalg.cholesky(cov.T, symmetrize_input=False)


def tri_inv(L: jax.Array) -> jax.Array:
    """``[n, n]`` inverse of the lower-triangular ``L`` (``[n, n]``), lower-triangular.

    L = [[A, 0], [C, D]] gives L^-1 = [[A^-1, 0], [-D^-1 C A^-1, D^-1]], recursively;
    blocks of at most :data:`BASE_BLOCK` rows by ``solve_triangular``. A singular L gives
    inf/NaN, as the solve does."""
    n = L.shape[0]
    if n <= BASE_BLOCK:
        return solve_triangular(L, jnp.eye(n, dtype=L.dtype), lower=True)
    h = _half(n)
    a_inv, d_inv = tri_inv(L[:h, :h]), tri_inv(L[h:, h:])
    lower_left = -(d_inv @ (L[h:, :h] @ a_inv))
    return jnp.block([[a_inv, jnp.zeros((h, n - h), L.dtype)], [lower_left, d_inv]])


def lower_gram(Li: jax.Array) -> jax.Array:
    """``[n, n]`` symmetric ``Li^T Li`` for a lower-triangular ``Li`` (``[n, n]``):
    K^-1 from L^-1. With Li = [[P, 0], [Q, R]],
    Li^T Li = [[P^T P + Q^T Q, Q^T R], [R^T Q, R^T R]], recursively."""
    n = Li.shape[0]
    if n <= BASE_BLOCK:
        return Li.T @ Li
    h = _half(n)
    P, Q, R = Li[:h, :h], Li[h:, :h], Li[h:, h:]
    top = lower_gram(P) + Q.T @ Q
    off = R.T @ Q  # [h:, :h] block
    return jnp.block([[top, off.T], [off, lower_gram(R)]])



def tri_matmul(Li: jax.Array, B: jax.Array) -> jax.Array:
    """``[n, m]`` product ``Li @ B`` of a lower-triangular ``Li`` (``[n, n]``) and ``B``
    (``[n, m]``): the whitened cross-covariances ``L^-1 k`` of every prediction.
    With Li = [[P, 0], [Q, R]], Li B = [P B1; Q B1 + R B2], recursively, so the zero
    half of ``Li`` is skipped: on one core about 1.4x faster than the plain product at
    n = 1024 to 3072 (``experiments/performance/bench_linalg.py``).
    Factors of at most 2 * :data:`TRI_MATMUL_BLOCK` rows take the plain product."""
    n = Li.shape[0]
    if n <= 2 * TRI_MATMUL_BLOCK:
        return Li @ B
    h = _half(n)
    top = tri_matmul(Li[:h, :h], B[:h])
    bottom = Li[h:, :h] @ B[:h] + tri_matmul(Li[h:, h:], B[h:])
    return jnp.concatenate([top, bottom])
