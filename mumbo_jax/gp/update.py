"""Grow a conditioned posterior by one observation at a time, in O(n^2): no refactorisation.

Between hyper-parameter refits the BO loops add each evaluation to the posterior's
factor instead of factorising K + noise again (O(n^3)). With the hyper-parameters, the
y scaling and the noise variances held (those of the last refit: the update is exact
only for a fixed model), appending row r to the inverse factor ``Li = L^-1`` of the
rows observed so far (all at indices below r, so ``Li`` stays lower-triangular) is

    b = k(rows, new)             [B] prior cross-covariances, 0 at padding
    v = Li b                     [B] whitened
    s^2 = k(new, new) + noise - v.v        the Schur complement, > 0 for a positive definite K
    Li[r] = (e_r - Li^T v) / s   the new row; the rows above are unchanged
    alpha += Li[r] (y_r - b.alpha) / s

three matrix-vector products of the buffer's size B. Where ``s^2`` is not safely
positive (the point duplicates one already observed, with no noise to separate them)
the posterior is refactorised from scratch instead (:func:`append_row` says which).

:func:`grow` pads a posterior to a larger buffer (padding rows are zero in every factor,
as :func:`mumbo_jax.gp.posterior.condition` leaves them). Everything here is traceable
and checked against a fresh factorisation in tests/test_update.py.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from mumbo_jax.gp import models, posterior
from mumbo_jax.gp.kernels import Masked
from mumbo_jax.runtime.xla_options import jit

__all__ = ["SCHUR_FLOOR", "append", "append_row", "grow"]

# relative floor of the Schur complement s^2 / (k(new, new) + noise): below it the new row
# is (numerically) a linear combination of the old ones and the update would lose
# positive definiteness to rounding, so the posterior is refactorised instead
SCHUR_FLOOR = 1e-10


def grow(post: posterior.Posterior, size: int) -> posterior.Posterior:
    """``post`` in buffers of ``size`` rows (at least its own): padding appended, zero
    in every factor, so predictions are unchanged."""
    n = post.mask.shape[-1]
    if size < n:
        raise ValueError(f"cannot shrink a posterior of {n} rows to {size}")
    pad = size - n

    def rows(a, axes):
        widths = [(0, 0)] * a.ndim
        for ax in axes:
            widths[ax] = (0, pad)
        return jnp.pad(a, widths)

    lead = post.mask.ndim - 1  # a leading axis of hyper-parameter samples, if stacked
    return posterior.Posterior(
        post.spec, post.params, post.scaling, rows(post.x, (lead,)), rows(post.z, (lead,)),
        rows(post.mask, (lead,)), rows(post.chol_inv, (lead, lead + 1)), rows(post.alpha, (lead,)), post.noise,
        rows(post.y, (lead,)))


def append(post: posterior.Posterior, row, x, z, y):
    """Traceable :func:`append_row` (one posterior, no leading axis)."""
    spec, s = post.spec, post.scaling
    xu, zu = models.scale_inputs(spec, s, x[None, :], jnp.reshape(z, (1,)))
    zu = zu.astype(post.z.dtype)
    y_std = (y - s.y_mean) / s.y_scale
    kernel = Masked(models.build_kernel(spec, post.params))
    one = jnp.ones(1, post.mask.dtype)
    b = kernel((post.x, post.z, post.mask), (xu, zu, one))[:, 0]  # [B], 0 at padding and at row itself
    prior = kernel((xu, zu, one), (xu, zu, one))[0, 0] + post.noise[posterior.noise_index(spec, zu[0])]
    v = post.chol_inv @ b
    schur = prior - v @ v
    ok = schur > SCHUR_FLOOR * prior
    inv_s = jax.lax.rsqrt(jnp.where(ok, schur, prior))
    e_r = jnp.zeros_like(b).at[row].set(1.0)
    new_row = (e_r - v @ post.chol_inv) * inv_s  # v^T Li: Li^T v without a transposed copy
    alpha = post.alpha + new_row * ((y_std - b @ post.alpha) * inv_s)
    updated = posterior.Posterior(
        spec, post.params, s, post.x.at[row].set(xu[0]), post.z.at[row].set(zu[0]), post.mask.at[row].set(1.0),
        post.chol_inv.at[row].set(new_row), alpha, post.noise, post.y.at[row].set(y_std))

    # the same model on the same rows, factorised afresh (the hyper-parameters, scaling and noise held)
    return jax.lax.cond(ok, lambda _: updated, lambda _: posterior.recondition(updated, updated.mask), None), ok


@jit
def _append_jit(post, row, x, z, y):
    return append(post, row, x, z, y)


@jit
def _append_stacked(post, row, x, z, y):
    return jax.vmap(lambda p: append(p, row, x, z, y))(post)


def append_row(post: posterior.Posterior, row, x, z, y):
    """``(posterior, exact)``: ``post`` with the observation ``y`` at raw ``(x [d], z)``
    added as buffer row ``row`` (a padding row above every observed one), the
    hyper-parameters, scaling and noise of ``post`` held.

    ``exact`` is True where the rank-one update of the factor was used, False where the
    new row was (numerically) dependent on the old ones and the posterior was
    refactorised from scratch instead (never NaN). O(B^2) for B buffer rows; a stacked
    posterior (hyper-parameter samples) is updated sample by sample."""
    row = jnp.asarray(row, jnp.int32)
    x, z, y = jnp.asarray(x, float), jnp.asarray(z, float), jnp.asarray(y, float)
    if post.mask.ndim > 1:
        return _append_stacked(post, row, x, z, y)
    return _append_jit(post, row, x, z, y)
