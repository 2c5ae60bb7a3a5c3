"""GP posterior over X x Z: factorise once, then predict many candidates cheaply.

:func:`condition` builds a :class:`Posterior` (a pytree: Cholesky inverse and weights
in standardised units); :func:`recondition` conditions it afresh on other rows. The
predictions of candidates given a posterior (the joint moments of ``(g(x), y(x, z))``
that MUMBO needs, g's moments, the latent prediction, the incumbent) are in
:mod:`mumbo_jax.gp.moments`.

The target g is a weighted sum of fidelities, ``g(x) = sum_j w_j f(x, z_j)``
(:class:`Target`), which covers a target fidelity index, a target value z0 of a
continuous fidelity, and FASTCV's mean over K tasks.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from tinygp import GaussianProcess

from mumbo_jax.gp import linalg, models
from mumbo_jax.gp.kernels import Masked
from mumbo_jax.gp.models import ModelSpec, Scaling
from mumbo_jax.gp.precision import require_x64
from mumbo_jax.runtime.tracing import is_concrete
from mumbo_jax.runtime.xla_options import jit

__all__ = [
    "Target", "target_fidelity", "target_value", "task_mean", "Posterior", "Masked", "noise_index", "masked_gp",
    "observation_diag", "covariance", "standardise", "condition", "recondition", "internal_target", "check_target",
    "loo_zscores", "loo_log_density", "evaluated_inputs",
]


class Target(NamedTuple):
    """The target g(x) = sum_j weights[j] f(x, z[j]).

    Attributes:
        z: ``[J]`` fidelity indices (discrete models) or fidelity values in the units
            of the fidelity (continuous models).
        weights: ``[J]`` weights.
    """

    z: jax.Array
    weights: jax.Array


def target_fidelity(index: int = 0) -> Target:
    """g is one discrete fidelity (by default 0, the highest)."""
    return Target(jnp.asarray([index]), jnp.ones(1))


def target_value(z0: float = 1.0) -> Target:
    """g is f at the value ``z0`` of a continuous fidelity."""
    return Target(jnp.asarray([float(z0)]), jnp.ones(1))


def task_mean(n_tasks: int) -> Target:
    """g is the mean over tasks 0..K-1 (FASTCV: the mean score over K folds)."""
    if int(n_tasks) != n_tasks or n_tasks < 1:
        raise ValueError(f"n_tasks must be a positive integer, got {n_tasks}")
    return Target(jnp.arange(int(n_tasks)), jnp.full(int(n_tasks), 1.0 / n_tasks))




@functools.partial(
    jax.tree_util.register_dataclass,
    data_fields=["params", "scaling", "x", "z", "mask", "chol_inv", "alpha", "noise", "y"],
    meta_fields=["spec"],
)
@dataclasses.dataclass(frozen=True)
class Posterior:
    """A conditioned GP (a pytree; ``spec`` is static).

    Attributes:
        spec: the model.
        params: hyper-parameters (unconstrained dict).
        scaling: maps raw to internal units.
        x: ``[n, d]`` training inputs on the unit cube; z: ``[n]`` internal fidelities.
        mask: ``[n]`` 1 for real observations, 0 for padding (fixed-size buffers).
        chol_inv: ``[n, n]`` inverse Cholesky factor L^-1 of K + noise, rows of
            padding zeroed.
        alpha: ``[n]`` (K + noise)^-1 y in standardised units, 0 at padding.
        noise: ``[n_noise]`` noise variance per fidelity, standardised units.
        y: ``[n]`` the observations in standardised units, 0 at padding (what
            :func:`recondition` conditions other rows on).
    """

    spec: ModelSpec
    params: dict
    scaling: Scaling
    x: jax.Array
    z: jax.Array
    mask: jax.Array
    chol_inv: jax.Array
    alpha: jax.Array
    noise: jax.Array
    y: jax.Array


def noise_index(spec: ModelSpec, z):
    """Index into the ``[n_noise]`` noise variances for internal fidelities ``z``."""
    return z if spec.n_noise > 1 else jnp.zeros(jnp.shape(z), jnp.int32)


def observation_diag(spec: ModelSpec, zu, mask, noise, extra_noise=None):
    """``[n]`` the diagonal added to the masked Gram matrix: each row's noise variance
    (plus the optional ``extra_noise [n]``, standardised units); padded rows (mask 0)
    become independent N(0, 1) with y = 0, which adds only a constant to the log
    likelihood."""
    noise_rows = noise[noise_index(spec, zu)]
    if extra_noise is not None:
        noise_rows = noise_rows + extra_noise
    return mask * noise_rows + (1.0 - mask)


def covariance(spec: ModelSpec, params: dict, xu, zu, mask, noise, extra_noise=None):
    """``[n, n]`` covariance of the observations on internal inputs: the model's dense
    Gram matrix (:meth:`ModelSpec.gram`, masked) plus :func:`observation_diag`; the
    matrix of :func:`masked_gp`, shared by the fit and the posterior."""
    return spec.gram(params, xu, zu, mask) + jnp.diag(observation_diag(spec, zu, mask, noise, extra_noise))


def masked_gp(spec: ModelSpec, params: dict, xu, zu, mask, noise, extra_noise=None) -> GaussianProcess:
    """tinygp GP on internal inputs (the tinygp form of :func:`covariance`, the
    reference the fit is tested against); padded rows as in :func:`observation_diag`."""
    kernel = Masked(models.build_kernel(spec, params))
    return GaussianProcess(kernel, (xu, zu, mask), diag=observation_diag(spec, zu, mask, noise, extra_noise))


def standardise(scaling: Scaling, y, mask):
    """``[n]`` y in standardised units, 0 at padding."""
    return mask * (y - scaling.y_mean) / scaling.y_scale


@functools.partial(jit, static_argnums=0)
def _condition(spec, params, scaling, x, z, y, mask):
    xu, zu = models.scale_inputs(spec, scaling, x, z)
    noise = models.noise_variances(spec, params, scaling.y_scale)
    return _factorise(spec, params, scaling, xu, zu, standardise(scaling, y, mask), mask, noise)


def _factorise(spec, params, scaling, xu, zu, y_std, mask, noise, extra_noise=None) -> "Posterior":
    chol_inv = linalg.tri_inv(linalg.cholesky_symmetric(covariance(spec, params, xu, zu, mask, noise, extra_noise)))
    alpha = (chol_inv @ (mask * y_std)) @ chol_inv  # chol_inv^T (.) without a transposed copy
    # padded rows: K is the identity there, so chol_inv is block diagonal; zeroing those
    # rows (and alpha there, already 0) removes padding from every prediction
    chol_inv = chol_inv * mask[:, None]
    alpha = alpha * mask
    return Posterior(spec, params, scaling, xu, zu, mask, chol_inv, alpha, noise, mask * y_std)


def recondition(post: "Posterior", mask, z=None, y=None, extra_noise=None) -> "Posterior":
    """The same model, hyper-parameters and scaling conditioned on other rows of the
    same buffers: a subset (``mask``), some rows moved to another fidelity (``z``) or
    given other values (``y``), some observed with extra noise (``extra_noise``).

    Args:
        post: a posterior (its buffers and hyper-parameters are reused).
        mask: ``[n]`` 0/1, the rows to condition on (rows that were padding in ``post``
            must stay 0).
        z: optional ``[n]`` fidelities in the model's internal units (indices or [0, 1]).
        y: optional ``[n]`` observations in standardised units.
        extra_noise: optional ``[n]`` variances in standardised units added to the rows'
            noise (pseudo-observations known only up to that variance).

    Traceable; O(n^3). Used by :mod:`mumbo_jax.gp.reliability` for the target-only model.
    """
    require_x64("calling posterior.recondition")
    z = post.z if z is None else z
    y = post.y if y is None else y
    mask = jnp.asarray(mask, post.mask.dtype)
    return _factorise(post.spec, post.params, post.scaling, post.x, z, y, mask, post.noise, extra_noise)


def condition(spec: ModelSpec, params: dict, x, z, y, mask=None, scaling: Scaling | None = None) -> Posterior:
    """Condition the GP with hyper-parameters ``params`` on data.

    Args:
        spec: the model.
        params: hyper-parameters (see :func:`mumbo_jax.gp.models.default_params`).
        x: ``[n, d]`` inputs in the box of ``spec``; z: ``[n]`` fidelities; y: ``[n]``.
        mask: optional ``[n]`` 0/1 weights marking padding in fixed-size buffers.
        scaling: optional fixed scaling (default: from ``spec.bounds`` and the data).
    """
    require_x64("calling posterior.condition")
    x, z, y, mask = models.check_data(spec, x, z, y, mask)
    if scaling is None:
        scaling = models.make_scaling(spec, y, mask)
    return _condition(spec, params, scaling, x, z, y, mask)


# --------------------------------------------------------------------------- prediction


def internal_target(post: Posterior, target: Target):
    """``[J]`` target fidelities in the model's internal units (indices or [0, 1])."""
    z = jnp.asarray(target.z)
    if post.spec.discrete:
        return z.astype(jnp.int32)
    return (z - post.scaling.z_lower) / post.scaling.z_width


def check_target(spec: ModelSpec, target: Target):
    """ValueError for a target that does not fit the model (concrete values only)."""
    z, w = target
    if not is_concrete(z, w):
        return
    z, w = np.asarray(z), np.asarray(w)
    if z.ndim != 1 or w.shape != z.shape:
        raise ValueError(f"target z and weights must both have shape [J], got {z.shape} and {w.shape}")
    if spec.discrete and (np.any(z < 0) or np.any(z >= spec.n_fidelities)):
        raise ValueError(f"target fidelity {z.tolist()} does not exist; the model has 0..{spec.n_fidelities - 1}")
    if not spec.discrete and (np.any(z < spec.fidelity_bounds[0]) or np.any(z > spec.fidelity_bounds[1])):
        raise ValueError(f"target fidelity {z.tolist()} is outside the fidelity bounds {spec.fidelity_bounds}")



def loo_zscores(post: Posterior) -> jax.Array:
    """``[n]`` leave-one-out z-scores of the observations, 0 at padding: row i's
    (y_i - mu_-i) / sd_-i under the posterior of the other rows with the same
    hyper-parameters (noise included in sd_-i), in closed form (Rasmussen & Williams
    eq. 5.12): alpha_i / sqrt([K^-1]_ii). O(n^2) from ``chol_inv``; a calibrated model
    has z-scores of unit mean square (tests/test_calibration.py against refitting
    without the row)."""
    require_x64("calling posterior.loo_zscores")
    kinv_diag = jnp.sum(jnp.square(post.chol_inv), axis=0)  # diag(L^-T L^-1)
    safe = jnp.where(post.mask > 0, kinv_diag, 1.0)
    return jnp.where(post.mask > 0, post.alpha / jnp.sqrt(safe), 0.0)


def loo_log_density(post: Posterior) -> jax.Array:
    """``[n]`` leave-one-out log predictive densities log p(y_i | y_-i) of the
    observations in standardised units, 0 at padding (Rasmussen & Williams eq. 5.10-5.11:
    mean y_i - alpha_i / [K^-1]_ii, variance 1 / [K^-1]_ii). Summed over some rows it
    scores a model by how well it predicts them from the rest
    (the robust rule's model comparison; tests/test_floor_cv.py against dense conditioning)."""
    require_x64("calling posterior.loo_log_density")
    kinv_diag = jnp.sum(jnp.square(post.chol_inv), axis=0)  # diag(L^-T L^-1) > 0
    safe = jnp.where(post.mask > 0, kinv_diag, 1.0)
    lp = 0.5 * jnp.log(safe) - 0.5 * jnp.square(post.alpha) / safe - 0.5 * np.log(2 * np.pi)
    return jnp.where(post.mask > 0, lp, 0.0)


# --------------------------------------------------------------------------- the incumbent


def evaluated_inputs(post: Posterior):
    """``[n, d]`` the training inputs in the units of the search box (the posterior keeps
    them on the unit cube); padding rows included (``post.mask`` marks them). Of a
    stacked posterior (a leading hyper-parameter sample axis, :mod:`mumbo_jax.gp.marginal`)
    the first sample's: the data are the same in every sample."""
    if post.alpha.ndim == 2:  # stacked: [S, n]
        return post.scaling.x_lower[0] + post.scaling.x_width[0] * post.x[0]
    return post.scaling.x_lower + post.scaling.x_width * post.x
