"""Predictive moments of candidates given a conditioned GP (:class:`mumbo_jax.gp.posterior.Posterior`).

:func:`joint_moments` gives, for candidates ``(x, z)``, the moments of the bivariate
Gaussian of ``(g(x), y(x, z))`` that MUMBO needs, without forming any M x M matrix:

    mu_g, var_g   predictive mean/variance of the target g(x)
    mu_y, var_y   predictive mean of f(x, z) and variance of the NOISY y = f + eps
    cov           Cov(f(x, z), g(x))

The target g is a :class:`mumbo_jax.gp.posterior.Target` (a weighted sum of
fidelities). The g-only moments (:func:`target_moments`, :func:`target_moments_where`,
:func:`target_joint`), the latent prediction of f (:func:`predict`) and the incumbent
(:func:`incumbent`, the evaluated row with the best mean of g) are here too. All
moments are returned in the units of y.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.gp import linalg, models
from mumbo_jax.gp.posterior import Posterior, Target, check_target, evaluated_inputs, internal_target, noise_index
from mumbo_jax.gp.precision import require_x64
from mumbo_jax.runtime.tracing import is_concrete
from mumbo_jax.runtime.xla_options import jit

__all__ = [
    "Moments", "target_part", "joint_moments", "joint_moments_fidelities", "CHUNK", "target_moments",
    "target_moments_where", "target_moments_bound", "target_joint", "predict", "incumbent",
]

_VAR_FLOOR = 1e-12  # standardised units: round-off can make a posterior variance <= 0


class Moments(NamedTuple):
    """Joint moments of (g(x), y(x, z)); every field has the candidates' shape."""

    mu_g: jax.Array
    var_g: jax.Array
    mu_y: jax.Array
    var_y: jax.Array
    cov: jax.Array


def _cross(post: Posterior, kernel, xu, zu):
    """``[n, M]`` prior cross-covariance between training points and candidates.

    Not masked: padded rows meet zero rows of ``chol_inv`` and zero ``alpha`` entries
    (cheaper than masking an n x M matrix). The model's :meth:`cross` (``kernel``, the
    tinygp form of the same covariance, is not read)."""
    return post.spec.cross(post.params, post.x, post.z, xu, zu)


def _paired(kernel, xu, za, zb):
    """``[M]`` prior covariances k((x_m, za_m), (x_m, zb_m)) at the same x."""
    return jax.vmap(kernel.evaluate)((xu, za), (xu, zb))


def _target_cross(post: Posterior, kernel, xu, zt, w):
    """``(k, c)``: the cross-covariance ``k_n(g) = c k`` ([n, M]) between the data and g
    at ``xu``. k_n(g) is linear in the target weights, one cross-covariance per target
    point; a single target point leaves its weight ``c`` to be folded into the small
    n x n and n-vector factors (scaling the n x M matrix costs as much as building it);
    with several, ``c`` is None."""
    m = xu.shape[0]
    if zt.shape[0] == 1:
        return _cross(post, kernel, xu, jnp.full(m, zt[0])), w[0]
    return sum(w[j] * _cross(post, kernel, xu, jnp.full(m, zt[j])) for j in range(zt.shape[0])), None


def _folded(c, a):
    return a if c is None else c * a


def _target_prior_var(kernel, xu, zt, w):
    """``[M]`` prior variance of g at ``xu``."""
    m, J = xu.shape[0], zt.shape[0]
    return sum(
        w[i] * w[j] * _paired(kernel, xu, jnp.full(m, zt[i]), jnp.full(m, zt[j])) for i in range(J) for j in range(J)
    )


def target_part(post: Posterior, kernel, xu, target: Target):
    """Standardised mean and variance of g at ``xu`` ([M]) and its whitened
    cross-covariance ``v_g = L^-1 k_n(g)`` ([n, M])."""
    zt = internal_target(post, target)
    w = jnp.asarray(target.weights, xu.dtype)
    k_g, c = _target_cross(post, kernel, xu, zt, w)
    v_g = linalg.tri_matmul(_folded(c, post.chol_inv), k_g)
    mean = _folded(c, post.alpha) @ k_g  # k_g^T alpha: a vector times k_g, no transposed copy of it
    var = _target_prior_var(kernel, xu, zt, w) - jnp.sum(v_g**2, axis=0)
    return mean, jnp.maximum(var, _VAR_FLOOR), v_g, zt, w


def _fidelity_part(post: Posterior, kernel, xu, zu, v_g, zt, w):
    """Standardised moments of f(x, z) and its covariance with g, per candidate."""
    k_f = _cross(post, kernel, xu, zu)
    v_f = linalg.tri_matmul(post.chol_inv, k_f)
    mean = post.alpha @ k_f
    var = kernel((xu, zu)) - jnp.sum(v_f**2, axis=0)

    prior_cov = sum(w[j] * _paired(kernel, xu, zu, jnp.full(zu.shape, zt[j])) for j in range(zt.shape[0]))
    cov = prior_cov - jnp.sum(v_f * v_g, axis=0)
    var_y = jnp.maximum(var, _VAR_FLOOR) + post.noise[noise_index(post.spec, zu)]
    return mean, var_y, cov


def _to_raw(post: Posterior, mu_g, var_g, mu_y, var_y, cov) -> Moments:
    s, m = post.scaling.y_scale, post.scaling.y_mean
    s2 = s * s
    return Moments(mu_g * s + m, var_g * s2, mu_y * s + m, var_y * s2, cov * s2)


@jit
def _joint_moments(post, x, z, target):
    kernel = models.build_kernel(post.spec, post.params)
    xu, zu = models.scale_inputs(post.spec, post.scaling, x, z)
    mu_g, var_g, v_g, zt, w = target_part(post, kernel, xu, target)
    mu_y, var_y, cov = _fidelity_part(post, kernel, xu, zu, v_g, zt, w)
    return _to_raw(post, mu_g, var_g, mu_y, var_y, cov)


def joint_moments(post: Posterior, x, z, target: Target) -> Moments:
    """Joint moments of (g(x), y(x, z)) for M candidate pairs.

    Args:
        post: the posterior.
        x: ``[M, d]`` candidates in the search box; z: ``[M]`` (or scalar) fidelities.
        target: what g is (:func:`target_fidelity`, :func:`target_value`, :func:`task_mean`).

    Returns:
        :class:`Moments` with fields of shape ``[M]``, in the units of y. ``var_y``
        includes the observation noise at fidelity z.
    """
    require_x64("calling moments.joint_moments")
    x, z = models.check_inputs(post.spec, x, z)
    check_target(post.spec, target)
    return _joint_moments(post, x, z, target)


@jit
def _joint_moments_fidelities(post, x, zs, target):
    kernel = models.build_kernel(post.spec, post.params)
    xu, _ = models.scale_inputs(post.spec, post.scaling, x, zs[0])
    mu_g, var_g, v_g, zt, w = target_part(post, kernel, xu, target)

    def one(z):
        _, zu = models.scale_inputs(post.spec, post.scaling, x, jnp.full(x.shape[0], z))
        return _fidelity_part(post, kernel, xu, zu, v_g, zt, w)

    mu_y, var_y, cov = jax.lax.map(one, zs)
    f = zs.shape[0]
    tile = lambda a: jnp.broadcast_to(a, (f,) + a.shape)
    return _to_raw(post, tile(mu_g), tile(var_g), mu_y, var_y, cov)


def joint_moments_fidelities(post: Posterior, x, fidelities, target: Target) -> Moments:
    """Joint moments for every candidate x at each of F fidelities, sharing the target
    part (computed once). Fields have shape ``[F, M]``."""
    require_x64("calling moments.joint_moments_fidelities")
    fidelities = jnp.atleast_1d(jnp.asarray(fidelities))
    x, _ = models.check_inputs(post.spec, x, jnp.full(jnp.shape(x)[0], fidelities[0]))
    for f in np.asarray(fidelities) if is_concrete(fidelities) else ():
        models.check_inputs(post.spec, x[:1], jnp.asarray([f]), name_z="fidelities")
    check_target(post.spec, target)
    return _joint_moments_fidelities(post, x, fidelities, target)


def _check_target_inputs(post: Posterior, x, target: Target):
    """Validate candidates x (``[M, d]``) and the target for the g-only predictions."""
    spec = post.spec
    m = jnp.shape(x)[0]
    z = jnp.zeros(m, jnp.int32) if spec.discrete else jnp.full(m, spec.fidelity_bounds[0])
    x, _ = models.check_inputs(spec, x, z)
    check_target(spec, target)
    return x


CHUNK = 512  # g-only moments of more points than this are computed this many at a time


def _in_chunks(fn, x, chunk: int = CHUNK):
    """``fn`` (rows of ``x [M, d]`` -> arrays ``[M]``) over blocks of ``chunk`` rows
    (``lax.map``; the last block padded with copies of the first row): every
    ``[n, chunk]`` intermediate stays in cache instead of ``[n, M]`` ones going
    through memory. The same arithmetic per point (``tests/test_posterior.py``)."""
    m = x.shape[0]
    if m <= chunk:
        return fn(x)
    blocks = -(-m // chunk)
    xs = jnp.concatenate([x, jnp.broadcast_to(x[:1], (blocks * chunk - m,) + x.shape[1:])])
    out = jax.lax.map(fn, xs.reshape((blocks, chunk) + x.shape[1:]))
    return jax.tree_util.tree_map(lambda a: a.reshape(-1)[:m], out)


@jit
def _target_moments(post, x, target):
    kernel = models.build_kernel(post.spec, post.params)

    def moments(xc):
        xu, _ = models.scale_inputs(post.spec, post.scaling, xc, jnp.zeros(xc.shape[0]))
        mean, var, *_ = target_part(post, kernel, xu, target)
        return mean, var

    mean, var = _in_chunks(moments, x)
    s = post.scaling.y_scale
    return mean * s + post.scaling.y_mean, var * s * s


def target_moments_where(post: Posterior, x, target: Target, needed, bound_rows: int):
    """Means of g at ``x`` (``[M, d]``) and variances exact where they can matter.

    A cheap first pass gives every point its mean and an upper bound of its variance,
    g's variance given the first ``bound_rows`` observations only (more observations
    never raise a GP's variance; the bound is the leading block of ``L^-1 k``, about
    ``(bound_rows / n)^2`` of the work). ``needed(mean [M], var_bound [M]) -> bool [M]``
    (standardised units; it must not depend on the units) names the points whose exact
    variance is wanted; they are computed :data:`CHUNK` at a time, the needed points
    first, until none is left. The other points keep their bound.

    Returns:
        ``(mean [M], var [M])`` in the units of y: the means exact, the variances exact
        at every needed point (and at the rest of its last chunk), bounds elsewhere.
    """
    require_x64("calling moments.target_moments_where")
    x = _check_target_inputs(post, x, target)
    return _target_moments_where(post, x, target, needed, int(bound_rows))


def _bounded_pass(post, kernel, target, bound_rows):
    """``xc [M, d] -> (mean [M], var_bound [M])`` in standardised units: the exact mean
    and g's variance given the first ``bound_rows`` data rows (the leading block of
    ``L^-1 k``)."""
    zt, w = internal_target(post, target), jnp.asarray(target.weights, post.x.dtype)
    rows = min(int(bound_rows), post.x.shape[0])

    def bounded(xc):
        xu = models.scale_inputs(post.spec, post.scaling, xc, jnp.zeros(xc.shape[0]))[0]
        k_g, c = _target_cross(post, kernel, xu, zt, w)
        v_top = linalg.tri_matmul(_folded(c, post.chol_inv[:rows, :rows]), k_g[:rows])
        var = _target_prior_var(kernel, xu, zt, w) - jnp.sum(v_top**2, axis=0)
        return _folded(c, post.alpha) @ k_g, jnp.maximum(var, _VAR_FLOOR)

    return bounded


def target_moments_bound(post: Posterior, x, target: Target, bound_rows: int):
    """Means of g at ``x`` (``[M, d]``) and upper bounds of its variance, both ``[M]``
    in the units of y: g's variance given the first ``bound_rows`` observations only
    (more observations never raise a GP's variance), about ``(bound_rows / n)^2`` of the
    exact variances' work. The cheap first pass of :func:`target_moments_where`, also
    the maximiser's bound of the max-value gains (:func:`mumbo_jax.bo.rules.mes_bound`)."""
    require_x64("calling moments.target_moments_bound")
    x = _check_target_inputs(post, x, target)
    return _target_moments_bound(post, x, target, int(bound_rows))


@functools.partial(jit, static_argnames=("bound_rows",))
def _target_moments_bound(post, x, target, bound_rows):
    kernel = models.build_kernel(post.spec, post.params)
    mean, var = _in_chunks(_bounded_pass(post, kernel, target, bound_rows), x)
    s = post.scaling.y_scale
    return mean * s + post.scaling.y_mean, var * s * s


@functools.partial(jit, static_argnames=("needed", "bound_rows"))
def _target_moments_where(post, x, target, needed, bound_rows):
    kernel = models.build_kernel(post.spec, post.params)
    scaled = lambda xc: models.scale_inputs(post.spec, post.scaling, xc, jnp.zeros(xc.shape[0]))[0]
    mean, var = _in_chunks(_bounded_pass(post, kernel, target, bound_rows), x)
    keep = needed(mean, var)
    m = x.shape[0]
    blocks = -(-m // CHUNK)
    order = jnp.argsort(~keep, stable=True)  # the needed points first
    order = jnp.concatenate([order, order[: blocks * CHUNK - m]])  # a short last chunk repeats points
    n_needed = jnp.sum(keep)

    def exact_chunk(state):
        b, var = state
        idx = jax.lax.dynamic_slice(order, (b * CHUNK,), (CHUNK,))
        _, var_c, *_ = target_part(post, kernel, scaled(x[idx]), target)
        return b + 1, var.at[idx].set(var_c)

    _, var = jax.lax.while_loop(lambda state: state[0] * CHUNK < n_needed, exact_chunk, (jnp.int32(0), var))
    s = post.scaling.y_scale
    return mean * s + post.scaling.y_mean, var * s * s


def target_moments(post: Posterior, x, target: Target):
    """Predictive mean and variance of g at ``x`` (``[M, d]``); both ``[M]``. Many
    points (g*'s grid) are taken :data:`CHUNK` at a time."""
    require_x64("calling moments.target_moments")
    x = _check_target_inputs(post, x, target)
    return _target_moments(post, x, target)


@jit
def _target_joint(post, x, target):
    kernel = models.build_kernel(post.spec, post.params)
    xu, _ = models.scale_inputs(post.spec, post.scaling, x, jnp.zeros(x.shape[0]))
    zt, w = internal_target(post, target), jnp.asarray(target.weights, xu.dtype)
    m, J = xu.shape[0], zt.shape[0]
    mean, _, v_g, _, _ = target_part(post, kernel, xu, target)
    prior = sum(
        w[i] * w[j] * kernel((xu, jnp.full(m, zt[i])), (xu, jnp.full(m, zt[j])))
        for i in range(J) for j in range(J)
    )
    cov = prior - v_g.T @ v_g
    s = post.scaling.y_scale
    return mean * s + post.scaling.y_mean, cov * s * s


def target_joint(post: Posterior, x, target: Target):
    """Joint posterior of g at ``x`` (``[M, d]``): mean ``[M]`` and covariance
    ``[M, M]`` (for exact max-value sampling on a modest grid)."""
    require_x64("calling moments.target_joint")
    x = _check_target_inputs(post, x, target)
    return _target_joint(post, x, target)


@jit
def _predict(post, x, z):
    kernel = models.build_kernel(post.spec, post.params)
    xu, zu = models.scale_inputs(post.spec, post.scaling, x, z)
    k = _cross(post, kernel, xu, zu)
    v = linalg.tri_matmul(post.chol_inv, k)
    var = jnp.maximum(kernel((xu, zu)) - jnp.sum(v**2, axis=0), _VAR_FLOOR)
    s = post.scaling.y_scale
    return (post.alpha @ k) * s + post.scaling.y_mean, var * s * s


def predict(post: Posterior, x, z):
    """Predictive mean and variance of the latent f(x, z) (no noise); both ``[M]``."""
    require_x64("calling moments.predict")
    x, z = models.check_inputs(post.spec, x, z)
    return _predict(post, x, z)


# --------------------------------------------------------------------------- the incumbent


def incumbent(post: Posterior, target: Target):
    """``(index, value)``: the training row with the best posterior mean of g (padding
    excluded) and that mean, in the units of y. The one copy of the incumbent: the BO
    loops record it, EI / MT-EI / MTBO use its value as their threshold, and the g*
    floor starts from it."""
    require_x64("calling moments.incumbent")
    mu, _ = target_moments(post, evaluated_inputs(post), target)
    mu = jnp.where(post.mask > 0, mu, -jnp.inf)
    i = jnp.argmax(mu)
    return i, mu[i]
