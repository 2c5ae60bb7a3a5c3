r"""Pending evaluations: conditioning on points whose values are not known yet.

A Gaussian posterior's covariance after adding observations does not depend on their
values, so evaluations still running ("pending") can enter an acquisition through the
joint covariance alone. This module provides that conditioning and the kriging-believer
baseline built on it; :mod:`mumbo_jax.acquisition.gibbon` builds GIBBON on the same
machinery.

Notation (standardised units inside, raw units at the boundary). For candidates
c = (x, z) the posterior gives f_c = f(x, z), y_c = f_c + eps_c and the target g(x_c).
Every evaluation has its own noise, so two evaluations at the same (x, z) have
Cov(y, y') = Cov(f, f) and only the diagonal carries noise(z).

Sequential conditioning (a pivoted Cholesky of the evaluations' joint covariance, one
column per conditioning point). After conditioning on evaluations y_{s_1}, ..., y_{s_k},
for any candidate c

    u_k(f_c) = [Cov_0(f_c, f_{s_k}) - sum_{j<k} u_j(f_c) u_j(f_{s_k})] / sqrt(d_k),
    u_k(g_c) = [Cov_0(g_c, f_{s_k}) - sum_{j<k} u_j(g_c) u_j(f_{s_k})] / sqrt(d_k),
    d_k = Var_{k-1}(y_{s_k}),
    Var_k(y_c) = Var_{k-1}(y_c) - u_k(f_c)^2,   Var_k(g_c) = Var_{k-1}(g_c) - u_k(g_c)^2,
    Cov_k(f_c, g_c) = Cov_{k-1}(f_c, g_c) - u_k(f_c) u_k(g_c),

where Cov_0 is the current posterior. Each step costs O(M (n + K)) for M candidates,
n training points and K conditioning points: no M x M matrix is formed. Pending points
are appended to the candidate set, so a conditioning point is always one column j.

Kriging believer (the baseline): condition the posterior on the pending points with
y_P set to its posterior mean. The posterior mean is then unchanged everywhere
(mu + S_{.P} S_PP^-1 (y_P - mu_P) = mu) and the covariances are those above, so the
baseline's score is the ordinary MUMBO gain (paper eq. 4) on the conditioned moments.
:func:`fantasize` builds that posterior literally (a new :class:`Posterior` through
:func:`mumbo_jax.gp.posterior.condition`); :func:`pending_moments` is the fast path.
"""

from __future__ import annotations

import functools
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.acquisition import acquisitions
from mumbo_jax.gp import linalg, models, moments, posterior
from mumbo_jax.gp.moments import Moments
from mumbo_jax.gp.posterior import Posterior, Target
from mumbo_jax.runtime.tracing import is_concrete
from mumbo_jax.runtime.xla_options import jit

__all__ = [
    "Batch",
    "CandidateFactors",
    "Conditioned",
    "candidate_factors",
    "init_conditioning",
    "condition_on",
    "greedy_select",
    "check_batch_inputs",
    "check_gstar",
    "observation_cov",
    "pending_moments",
    "fantasize",
    "kriging_believer_gain",
    "kriging_believer_batch",
]

VAR_FLOOR = 1e-12  # standardised units, as in mumbo_jax.gp.posterior


class CandidateFactors(NamedTuple):
    """What the sequential conditioning needs per candidate, standardised units.

    Attributes:
        xu: ``[M, d]`` inputs on the unit cube; zu: ``[M]`` internal fidelities.
        vf: ``[n, M]`` whitened cross-covariances L^-1 k(X, (x, z)) of f.
        vg: ``[n, M]`` whitened cross-covariances of the target g(x).
        zt, w: ``[J]`` internal target fidelities and weights.
        mu_g, var_g, mu_y, var_y, cov: ``[M]`` joint moments of (g, y), the same
            quantities as :func:`mumbo_jax.gp.moments.joint_moments` (standardised).
        noise: ``[M]`` noise variance of an evaluation at each candidate.
    """

    xu: jax.Array
    zu: jax.Array
    vf: jax.Array
    vg: jax.Array
    zt: jax.Array
    w: jax.Array
    mu_g: jax.Array
    var_g: jax.Array
    mu_y: jax.Array
    var_y: jax.Array
    cov: jax.Array
    noise: jax.Array


class Conditioned(NamedTuple):
    """Moments of the candidates after conditioning on K evaluations (no values).

    Attributes:
        uf: ``[K, M]`` Cholesky columns of f (rows of slots not used yet are 0).
        ug: ``[K, M]`` the same for g (zeros, ``[K, M]``, when the target is not tracked).
        var_y, var_g, cov: ``[M]`` conditioned Var(y), Var(g), Cov(f, g) (standardised).
    """

    uf: jax.Array
    ug: jax.Array
    var_y: jax.Array
    var_g: jax.Array
    cov: jax.Array


class Batch(NamedTuple):
    """A greedily built batch.

    Attributes:
        index: ``[q]`` chosen rows of the candidate set.
        x: ``[q, d]``; z: ``[q]`` the chosen pairs (raw units).
        gain: ``[q]`` each slot's gain given the pending points and earlier slots (nats).
        score: ``[q]`` the value that chose each slot (gain, or gain per unit cost of
            the batch so far when costs are given).
    """

    index: jax.Array
    x: jax.Array
    z: jax.Array
    gain: jax.Array
    score: jax.Array


# --------------------------------------------------------------------------- factors


def _paired(kernel, xu, za, zb):
    """``[M]`` prior covariances k((x_m, za_m), (x_m, zb_m))."""
    return jax.vmap(kernel.evaluate)((xu, za), (xu, zb))


def candidate_factors(post: Posterior, x, z, target: Target) -> CandidateFactors:
    """Factors of M candidates ``x [M, d]``, ``z [M]`` (raw units; traceable).

    The moments repeat :func:`mumbo_jax.gp.moments.joint_moments` (same floors); the
    whitened ``vf`` and ``vg`` are what that function computes and discards.
    """
    kernel = models.build_kernel(post.spec, post.params)
    xu, zu = models.scale_inputs(post.spec, post.scaling, x, z)
    mu_g, var_g, vg, zt, w = moments.target_part(post, kernel, xu, target)
    kf = post.spec.cross(post.params, post.x, post.z, xu, zu)  # [n, M]
    vf = linalg.tri_matmul(post.chol_inv, kf)
    mu_y = post.alpha @ kf
    var_f = jnp.maximum(kernel((xu, zu)) - jnp.sum(vf**2, axis=0), VAR_FLOOR)
    m = xu.shape[0]
    prior_cov = sum(w[j] * _paired(kernel, xu, zu, jnp.full(m, zt[j])) for j in range(zt.shape[0]))
    cov = prior_cov - jnp.sum(vf * vg, axis=0)
    noise = post.noise[posterior.noise_index(post.spec, zu)]
    return CandidateFactors(xu, zu, vf, vg, zt, w, mu_g, var_g, mu_y, var_f + noise, cov, noise)


def init_conditioning(fac: CandidateFactors, n_slots: int, track_target: bool = True) -> Conditioned:
    """Empty conditioning state with room for ``n_slots`` evaluations."""
    m = fac.xu.shape[0]
    zeros = jnp.zeros((n_slots, m), fac.var_y.dtype)
    return Conditioned(zeros, zeros if track_target else jnp.zeros((n_slots, m), fac.var_y.dtype),
                       fac.var_y, fac.var_g, fac.cov)


def condition_on(post: Posterior, fac: CandidateFactors, state: Conditioned, slot, j,
                 track_target: bool = True) -> Conditioned:
    """Condition every candidate on one more evaluation at candidate ``j`` (slot ``slot``).

    ``slot`` and ``j`` may be traced; ``track_target`` is static (GIBBON needs only y).
    """
    kernel = models.build_kernel(post.spec, post.params)
    xs, zs = fac.xu[j][None], fac.zu[j][None]
    v_s = fac.vf[:, j]
    u_s = state.uf[:, j]  # earlier Cholesky columns of the new point
    d = jnp.maximum(state.var_y[j], VAR_FLOOR)
    a_f = kernel((fac.xu, fac.zu), (xs, zs))[:, 0] - fac.vf.T @ v_s
    new_f = (a_f - state.uf.T @ u_s) / jnp.sqrt(d)
    uf = state.uf.at[slot].set(new_f)
    var_y = jnp.maximum(state.var_y - new_f**2, VAR_FLOOR)
    if not track_target:
        return Conditioned(uf, state.ug, var_y, state.var_g, state.cov)
    m = fac.xu.shape[0]
    k_g = sum(fac.w[t] * kernel((fac.xu, jnp.full(m, fac.zt[t])), (xs, zs))[:, 0]
              for t in range(fac.zt.shape[0]))
    a_g = k_g - fac.vg.T @ v_s
    new_g = (a_g - state.ug.T @ u_s) / jnp.sqrt(d)
    return Conditioned(uf, state.ug.at[slot].set(new_g), var_y,
                       jnp.maximum(state.var_g - new_g**2, VAR_FLOOR), state.cov - new_f * new_g)


def greedy_select(post: Posterior, fac: CandidateFactors, state: Conditioned,
                  increment: Callable[[Conditioned, jax.Array], jax.Array], q: int, n_select: int,
                  n_pending: int, cost=None, track_target: bool = True, marginal_cost: bool = False):
    """Condition on the pending points, then fill ``q`` slots greedily.

    The candidate set holds ``n_select`` selectable rows followed by ``n_pending``
    pending rows (never selected). ``increment(state, k)`` scores all rows at once for
    slot k (k = 0, 1, ...)
    (``[n_select + n_pending]``, vectorised: no loop over candidates). Slot k takes
    argmax increment, or with ``cost [n_select]`` argmax (G + increment) / (C + cost),
    the batch's gain per unit cost (G, C: gain and cost of the slots already filled),
    or with ``marginal_cost`` argmax increment / cost, the slot's own gain per unit of
    its own cost (as each slot of the kriging believer is chosen).

    Returns:
        ``(index [q], gain [q], score [q], state)``.
    """
    if n_pending:  # static; a zero-trip loop would still trace its body
        state = jax.lax.fori_loop(
            0, n_pending, lambda i, st: condition_on(post, fac, st, i, n_select + i, track_target), state)
    selectable = jnp.arange(fac.xu.shape[0]) < n_select
    if cost is not None:
        cost = jnp.concatenate([cost, jnp.ones(n_pending, cost.dtype)])

    def slot(k, carry):
        st, idx, gains, scores, g_tot, c_tot = carry
        delta = increment(st, k)
        if cost is None:
            score = delta
        else:
            score = delta / cost if marginal_cost else (g_tot + delta) / (c_tot + cost)
        score = jnp.where(selectable & jnp.isfinite(score), score, -jnp.inf)
        j = jnp.argmax(score)
        st = condition_on(post, fac, st, n_pending + k, j, track_target)
        c_j = 0.0 if cost is None else cost[j]
        return (st, idx.at[k].set(j.astype(jnp.int32)), gains.at[k].set(delta[j]), scores.at[k].set(score[j]),
                g_tot + delta[j], c_tot + c_j)

    dt = fac.var_y.dtype
    init = (state, jnp.zeros(q, jnp.int32), jnp.zeros(q, dt), jnp.zeros(q, dt), jnp.zeros((), dt),
            jnp.zeros((), dt))
    state, idx, gains, scores, _, _ = jax.lax.fori_loop(0, q, slot, init)
    return idx, gains, scores, state


# --------------------------------------------------------------------------- checks


def check_batch_inputs(post: Posterior, x, z, x_pending=None, z_pending=None, cost=None, q=None):
    """Validate candidates, pending points, costs and q; returns arrays
    ``(x [M, d], z [M], x_pending [P, d], z_pending [P], cost [M] or None)``."""
    x, z = models.check_inputs(post.spec, x, z)
    if (x_pending is None) != (z_pending is None):
        raise ValueError("give both x_pending and z_pending, or neither")
    if x_pending is None:
        x_pending = jnp.zeros((0, post.spec.dim), x.dtype)
        z_pending = jnp.zeros((0,), z.dtype)
    else:
        x_pending, z_pending = jnp.asarray(x_pending), jnp.asarray(z_pending)
        if x_pending.ndim == 2 and x_pending.shape[0] == 0:
            z_pending = jnp.reshape(z_pending, (0,))
        else:
            x_pending, z_pending = models.check_inputs(post.spec, x_pending, z_pending, "x_pending", "z_pending")
    if cost is not None:
        cost = jnp.broadcast_to(jnp.asarray(cost, x.dtype), z.shape) if jnp.ndim(cost) == 0 else jnp.asarray(cost)
        if cost.shape != z.shape:
            raise ValueError(f"cost must have shape [{z.shape[0]}] (one per candidate), got {tuple(cost.shape)}")
        if is_concrete(cost):
            c = np.asarray(cost)
            if not np.all(np.isfinite(c)) or np.any(c <= 0):
                raise ValueError(f"cost must be finite and > 0, got min {np.min(c)}")
    if q is not None and (not isinstance(q, (int, np.integer)) or isinstance(q, bool) or q < 1):
        raise ValueError(f"q (the batch size) must be a positive integer, got {q!r}")
    return x, z, x_pending, z_pending, cost


def check_gstar(gstar):
    """Validate g* samples: a non-empty finite 1-D array."""
    if jnp.ndim(gstar) != 1 or jnp.shape(gstar)[0] == 0:
        raise ValueError(f"gstar must be a non-empty 1-D array of max-value samples, got shape {jnp.shape(gstar)}")
    if is_concrete(gstar) and not np.all(np.isfinite(np.asarray(gstar))):
        raise ValueError("gstar contains NaN or inf")
    return jnp.asarray(gstar, float)


def _join(x, z, x_pending, z_pending):
    dt = jnp.result_type(z, z_pending, float)
    return (jnp.concatenate([x, x_pending.astype(x.dtype)]),
            jnp.concatenate([z.astype(dt), z_pending.astype(dt)]))


# --------------------------------------------------------------------------- dense pieces


@jit
def _observation_cov(post, x, z):
    kernel = models.build_kernel(post.spec, post.params)
    xu, zu = models.scale_inputs(post.spec, post.scaling, x, z)
    v = post.chol_inv @ post.spec.cross(post.params, post.x, post.z, xu, zu)
    cov = kernel((xu, zu), (xu, zu)) - v.T @ v
    noise = post.noise[posterior.noise_index(post.spec, zu)]
    return (cov + jnp.diag(noise)) * post.scaling.y_scale**2


def observation_cov(post: Posterior, x, z):
    """Joint posterior covariance ``[m, m]`` of m evaluations y_i = f(x_i, z_i) + eps_i
    (raw units). Each row is a separate evaluation: noise only on the diagonal, so a
    repeated (x, z) is two evaluations with independent noise."""
    x, z = models.check_inputs(post.spec, x, z)
    return _observation_cov(post, x, z)


@jit
def _pending_moments(post, x, z, target, x_pending, z_pending):
    m, p = x.shape[0], x_pending.shape[0]
    fac = candidate_factors(post, *_join(x, z, x_pending, z_pending), target)
    st = init_conditioning(fac, p)
    if p:
        st = jax.lax.fori_loop(0, p, lambda i, s: condition_on(post, fac, s, i, m + i), st)
    s, mean = post.scaling.y_scale, post.scaling.y_mean
    s2 = s * s
    return Moments(fac.mu_g[:m] * s + mean, st.var_g[:m] * s2, fac.mu_y[:m] * s + mean,
                   st.var_y[:m] * s2, st.cov[:m] * s2)


def pending_moments(post: Posterior, x, z, target: Target, x_pending=None, z_pending=None) -> Moments:
    """Joint moments of (g(x), y(x, z)) after conditioning on pending evaluations.

    Means are unchanged (the kriging-believer fantasy y_P = E[y_P]); variances and the
    covariance are those of the posterior conditioned on the pending evaluations,
    which need no values.

    Args:
        post, target: as for :func:`mumbo_jax.gp.moments.joint_moments`.
        x: ``[M, d]``; z: ``[M]`` candidates; x_pending ``[P, d]``, z_pending ``[P]``.

    Returns:
        :class:`Moments` with ``[M]`` fields, raw units (``var_y`` with noise).
    """
    x, z, xp, zp, _ = check_batch_inputs(post, x, z, x_pending, z_pending)
    posterior.check_target(post.spec, target)
    return _pending_moments(post, x, z, target, xp, zp)


def fantasize(post: Posterior, x_pending, z_pending) -> Posterior:
    """The posterior conditioned on pending points at their posterior mean (kriging
    believer), as a new :class:`Posterior` with the same hyper-parameters and scaling.

    The training values are recovered from the factorisation, y = (K + noise) alpha;
    padding rows stay padding. Compiles per data size: for scoring many candidates use
    :func:`pending_moments`, which gives the same moments without refactorising.
    """
    xp, zp = models.check_inputs(post.spec, x_pending, z_pending, "x_pending", "z_pending")
    y_std = _training_values(post)
    sc = post.scaling
    x_raw = posterior.evaluated_inputs(post)
    y_raw = jnp.where(post.mask > 0, y_std * sc.y_scale + sc.y_mean, 0.0)
    y_p, _ = moments.predict(post, xp, zp)
    x_all = jnp.concatenate([x_raw, xp.astype(x_raw.dtype)])
    z_all = jnp.concatenate([_raw_z(post, post.z).astype(float), zp.astype(float)])
    y_all = jnp.concatenate([y_raw, y_p])
    mask = jnp.concatenate([post.mask, jnp.ones(xp.shape[0], post.mask.dtype)])
    return posterior.condition(post.spec, post.params, x_all, z_all, y_all, mask, scaling=sc)


def _raw_z(post: Posterior, zu):
    if post.spec.discrete:
        return zu
    return post.scaling.z_lower + post.scaling.z_width * zu


@jit
def _training_values(post):
    kernel = models.build_kernel(post.spec, post.params)
    k = kernel((post.x, post.z), (post.x, post.z))
    noise = post.noise[posterior.noise_index(post.spec, post.z)]
    return post.mask * (k @ post.alpha + noise * post.alpha)


# --------------------------------------------------------------------------- kriging believer


def kriging_believer_gain(post: Posterior, x, z, target: Target, gstar, x_pending=None, z_pending=None):
    """MUMBO gain of each candidate (``[M]``, nats) given pending evaluations believed
    at their posterior mean: ``mumbo_gain`` on :func:`pending_moments`."""
    gstar = check_gstar(gstar)
    return acquisitions.mumbo_gain(*pending_moments(post, x, z, target, x_pending, z_pending), gstar)


def _kb_increment(post, fac, gstar):
    s, mean = post.scaling.y_scale, post.scaling.y_mean
    s2 = s * s
    mu_g = fac.mu_g * s + mean

    def increment(st: Conditioned, _slot):
        return acquisitions.mumbo_gain(mu_g, st.var_g * s2, mu_g, st.var_y * s2, st.cov * s2, gstar)

    return increment


@functools.partial(jit, static_argnames=("q",))
def _kb_batch(post, target, gstar, x, z, x_pending, z_pending, cost, q):
    m, p = x.shape[0], x_pending.shape[0]
    xa, za = _join(x, z, x_pending, z_pending)
    fac = candidate_factors(post, xa, za, target)
    state = init_conditioning(fac, p + q)
    idx, gain, score, _ = greedy_select(post, fac, state, _kb_increment(post, fac, gstar), q, m, p, cost)
    return Batch(idx, x[idx], z[idx], gain, score)


def kriging_believer_batch(post: Posterior, target: Target, gstar, x, z, q: int, x_pending=None,
                           z_pending=None, cost=None) -> Batch:
    """Greedy batch of ``q`` candidates by the kriging believer (the baseline).

    Slot k takes the candidate with the largest MUMBO gain after conditioning on the
    pending points and slots 0..k-1 at their posterior mean (or the largest gain of the
    batch per unit cost of the batch when ``cost [M]`` is given).

    Args:
        post, target, gstar: posterior, target and ``[N]`` max-value samples.
        x: ``[M, d]``, z: ``[M]`` the candidate pairs (e.g. every x at every fidelity).
        q: batch size (static). x_pending ``[P, d]``, z_pending ``[P]``: running evaluations.
        cost: optional ``[M]`` positive costs.

    Returns:
        :class:`Batch`; ``gain[k]`` is slot k's MUMBO gain given the pending points and
        the earlier slots.
    """
    x, z, xp, zp, cost = check_batch_inputs(post, x, z, x_pending, z_pending, cost, q)
    posterior.check_target(post.spec, target)
    gstar = check_gstar(gstar)
    return _kb_batch(post, target, gstar, x, z, xp, zp, cost, int(q))
