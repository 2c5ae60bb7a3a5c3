r"""GIBBON: batch and pending-aware max-value information gain, multi-fidelity form.

GIBBON (Moss, Leslie, Gonzalez & Rayson 2021, JMLR 22(235), "GIBBON: General-purpose
Information-Based Bayesian OptimisatioN") scores a batch B = {(x_i, z_i)}, i = 1..q, by
a lower bound on the information its observations y_B carry about the max value g*
(equation numbers (1), (2) below are this module's own):

    alpha(B) = 1/2 log det C_B + (1/N) sum_{g*} sum_i Q(gamma_i, rho_i),            (1)
    Q(gamma, rho) = -1/2 log(1 - rho^2 m (gamma + m)),   m = phi(gamma) / Phi(gamma),

C_B the q x q predictive CORRELATION matrix of the noisy y_i, gamma_i = (g* - mu_g(x_i))
/ sigma_g(x_i) and rho_i = Corr(y_i, g(x_i)): exactly MUMBO's (gamma, rho) (paper eq. 4
of Moss et al. 2020), so fidelities, tasks and FASTCV targets enter as in MUMBO.

Where (1) comes from (the derivation of GIBBON's bound): I(y_B; g*) = H(y_B) -
E_{g*} H(y_B | g*). H(y_B) is Gaussian: 1/2 log det(2 pi e S_B). Replace the event
{max g = g*} by {g(x_i) <= g*} per point (the MES/MUMBO approximation); then
H(y_B | g*) <= 1/2 log det(2 pi e S_{B|g*}) (a Gaussian has the largest entropy for a
given covariance) <= sum_i 1/2 log(2 pi e Var(y_i | g(x_i) <= g*)) (Hadamard), and
Var(y_i | g(x_i) <= g*) = Var(y_i) (1 - rho_i^2 m (gamma_i + m)), the variance of
MUMBO's extended skew Gaussian (ESG). Subtracting gives (1).

q = 1 (what holds exactly, per g* sample): log det C = 0 and Q is MUMBO's gain with the
ESG replaced by a Gaussian of the same variance:
    G_MUMBO(gamma, rho) - Q(gamma, rho) = J(ESG(gamma, rho)) >= 0,
the negentropy of the ESG (Gaussian entropy at its variance minus its entropy). So
GIBBON <= MUMBO, both are 0 at rho = 0, the gap is O(rho^6) as rho -> 0 (the ESG's
skewness is O(rho^3)), and at |rho| = 1 Q = -1/2 log Var(theta | theta <= gamma) is a
lower bound of MES (gap: the negentropy of the truncated normal).

Pending evaluations P (running, values unknown) and greedy batches. The gain of B
given P is alpha(P u B) - alpha(P):

    alpha(B | P) = 1/2 [log det C_{P u B} - log det C_P] + sum_{i in B} Q_i
                 = sum_{i in B} 1/2 log(Var(y_i | y_P, y_{<i}) / Var(y_i)) + Q_i,      (2)

the chain rule of the determinant (the q x q determinant never needs forming);
Var(y_i | y_P, y_{<i}) is the posterior variance
after conditioning on evaluations without values (:mod:`mumbo_jax.acquisition.fantasy`),
so pending points enter only through the joint covariance. Greedy construction (as in
the paper): slot k takes argmax_c of the increment 1/2 log(Var(y_c | y_P, y_B) /
Var(y_c)) + Q_c, scored for all candidates at once, then conditions on y_c. With costs
the slot takes argmax (alpha(B | P) + increment) / (cost(B) + cost(c)), the batch's
gain per unit cost (for q = 1: MUMBO's decision rule alpha / cost with GIBBON's alpha;
if the bound of every extension is negative, a ratio rule prefers the dearer point).
``repulsion_weight`` scales the log-det term (1: the bound (1); Trieste's
``rescaled_repulsion`` uses 1 / (batch size)^2).

Properties that follow (and are tested): Q >= 0, so adding a point never lowers the
quality sum; the log-det increment is <= 0 (Fischer's inequality) and is exactly 0 for
a point uncorrelated with the batch, whose increment is then Q >= 0; a repeat of a
noise-free pending evaluation has Var(y | y_P) ~ noise, a large negative increment,
where the exact information gain is 0 (the bound is loose there, never optimistic).

Numerics: v(gamma) = 1 - m (gamma + m) (the truncated normal's variance) loses its
digits to cancellation for very negative gamma; below gamma = -20 it uses the series
v = iz (T2 + 2 T + iz T^2) / S^2 with iz = 1/gamma^2, S = 1 + iz T the Mills-ratio
series, T = (S - 1)/iz and T2 = (1 + T)/iz, free of large terms. Q is computed as
-1/2 log((1 - rho^2) + rho^2 v): a sum of two non-negative terms, finite for |rho| -> 1,
var -> 0 and gamma -> -inf alike.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erfcx, log_ndtr

from mumbo_jax.acquisition import acquisitions, fantasy
from mumbo_jax.acquisition.fantasy import Batch
from mumbo_jax.gp import moments, posterior
from mumbo_jax.gp.posterior import Posterior, Target
from mumbo_jax.runtime.tracing import is_concrete
from mumbo_jax.runtime.xla_options import jit

__all__ = [
    "truncated_variance",
    "gibbon_quality_per_sample",
    "gibbon_quality",
    "log_det_correlation",
    "gibbon_batch_gain",
    "gibbon_batch",
    "Batch",
    "QUALITIES",
]

_SERIES_BELOW = -20.0  # v(gamma) from the asymptotic series below this
_GAMMA_MIN = -1e100  # 1/gamma^2 stays representable
_VAR_FLOOR = 1e-100  # as in mumbo_jax.acquisition.acquisitions
_LOG_FLOOR = 1e-300
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_SQRT_2_OVER_PI = float(np.sqrt(2.0 / np.pi))
_SQRT_HALF = float(np.sqrt(0.5))


# T2 = sum_k (-1)^k (2k + 3)!! iz^k; 11 terms: at gamma = -20 (iz = 1/400) the first
# omitted one is ~1e-17 of T2 (7 terms would leave ~5e-10, and v inherits it)
_T2_COEFS = tuple((-1) ** k * float(np.prod(np.arange(1, 2 * k + 4, 2))) for k in range(11))


def _series(iz):
    """T = (S - 1)/iz and T2 = (1 + T)/iz of the Mills-ratio series
    S = 1 - iz + 3 iz^2 - 15 iz^3 + ... (Horner)."""
    t2 = jnp.zeros_like(iz)
    for c in reversed(_T2_COEFS):
        t2 = c + iz * t2
    return -1.0 + iz * t2, t2


@jit
def truncated_variance(gamma):
    r"""v(gamma) = Var(theta | theta <= gamma), theta ~ N(0, 1): 1 - m (gamma + m).

    Any shape; in (0, 1]; ~1/gamma^2 as gamma -> -inf, 1 as gamma -> +inf.
    """
    g = jnp.asarray(gamma, float)
    gd = jnp.maximum(g, _SERIES_BELOW)
    # m = phi/Phi: through erfcx below 0 (log_ndtr loses ~1e-14 of m near -20, which the
    # cancellation in 1 - m (gamma + m) magnifies ~1e4-fold), log_ndtr above
    neg = jnp.minimum(gd, 0.0)
    m = jnp.where(gd < 0, _SQRT_2_OVER_PI / erfcx(-neg * _SQRT_HALF),
                  jnp.exp(-0.5 * gd * gd - _LOG_SQRT_2PI - log_ndtr(jnp.maximum(gd, 0.0))))
    direct = jnp.clip(1.0 - m * (gd + m), _LOG_FLOOR, 1.0)
    ga = jnp.clip(g, _GAMMA_MIN, _SERIES_BELOW)
    iz = 1.0 / (ga * ga)
    t, t2 = _series(iz)
    s = 1.0 + iz * t
    series = iz * (t2 + 2.0 * t + iz * t * t) / (s * s)
    return jnp.where(g < _SERIES_BELOW, series, direct)


def _quality(gamma, rho2):
    rho2 = jnp.clip(rho2, 0.0, 1.0)
    return -0.5 * jnp.log(jnp.maximum((1.0 - rho2) + rho2 * truncated_variance(gamma), _LOG_FLOOR))


@jit
def gibbon_quality_per_sample(gamma, rho):
    r"""GIBBON's per-point, per-sample term Q(gamma, rho) = -1/2 log(1 - rho^2 m (gamma + m)).

    The MUMBO gain with the ESG replaced by a Gaussian of the same variance (a lower
    bound of ``esg_gain``). ``gamma`` and ``rho`` broadcast; |rho| is clipped to 1.
    """
    gamma, rho = jnp.broadcast_arrays(jnp.asarray(gamma, float), jnp.asarray(rho, float))
    return _quality(gamma, rho * rho)


def _gamma_rho2(mu_g, var_g, var_y, cov, gstar):
    var_g = jnp.maximum(var_g, _VAR_FLOOR)
    var_y = jnp.maximum(var_y, _VAR_FLOOR)
    gamma = (gstar - mu_g[..., None]) / jnp.sqrt(var_g)[..., None]
    return gamma, (cov * cov) / (var_g * var_y)


@jit
def _gibbon_quality(mu_g, var_g, var_y, cov, gstar):
    gamma, rho2 = _gamma_rho2(mu_g, var_g, var_y, cov, gstar)
    return jnp.mean(_quality(gamma, rho2[..., None]), axis=-1)


QUALITIES = ("gibbon", "mumbo")  # a point's own term: GIBBON's bound Q or MUMBO's gain G


def _point_quality(quality, mu_g, var_g, var_y, cov, gstar):
    """Each point's own term, mean over g*: GIBBON's Q (the bound) or MUMBO's exact ESG
    gain G >= Q (``quality = "mumbo"``: the batch rule is then sequential MUMBO at q = 1,
    and the log-det term only adds the batch's repulsion)."""
    if quality == "gibbon":
        return _gibbon_quality(mu_g, var_g, var_y, cov, gstar)
    gamma, rho2 = _gamma_rho2(mu_g, var_g, var_y, cov, gstar)
    return jnp.mean(acquisitions.esg_gain(gamma, jnp.sqrt(rho2)[..., None]), axis=-1)


def _check_quality(quality):
    if quality not in QUALITIES:
        raise ValueError(f"quality must be one of {QUALITIES}, got {quality!r}")
    return quality


def _check_moments(arrays):
    names = ("mu_g", "var_g", "mu_y", "var_y", "cov")
    try:
        shape = jnp.broadcast_shapes(*(jnp.shape(a) for a in arrays))
    except ValueError as err:
        raise ValueError("candidate moments do not broadcast: "
                         + ", ".join(f"{n}{tuple(jnp.shape(a))}" for n, a in zip(names, arrays))) from err
    for n, a in zip(names, arrays):
        if not is_concrete(a):
            continue
        v = np.asarray(a, float)
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{n} contains NaN or inf")
        if n.startswith("var") and v.size and v.min() < -1e-10 * max(1.0, float(np.abs(v).max())):
            raise ValueError(f"{n} must be non-negative (a variance); min is {v.min()}")
    return [jnp.broadcast_to(jnp.asarray(a, float), shape) for a in arrays]


def gibbon_quality(mu_g, var_g, mu_y, var_y, cov, gstar):
    r"""GIBBON's gain of single candidates (q = 1): mean over g* of Q(gamma, rho), nats.

    Same arguments as :func:`mumbo_jax.acquisition.acquisitions.mumbo_gain` (moments
    broadcast to a shape S, ``gstar [N]``); returns shape S. For each g* sample
    ``0 <= Q <= G_MUMBO`` (module docstring). Raises ValueError for NaN/inf, negative
    variances, bad shapes (checks skip traced values).
    """
    mu_g, var_g, _, var_y, cov = _check_moments((mu_g, var_g, mu_y, var_y, cov))
    gstar = fantasy.check_gstar(gstar)
    return _gibbon_quality(mu_g, var_g, var_y, cov, gstar)


@jit
def log_det_correlation(cov):
    r"""1/2 log det C for the correlation matrix C of a covariance ``[..., q, q]``.

    Returns ``[...]`` (<= 0 by Hadamard's inequality; 0 for q = 0 or a diagonal
    matrix); -inf, never NaN, when the matrix is not positive definite.
    """
    cov = jnp.asarray(cov, float)
    if cov.shape[-1] == 0:
        return jnp.zeros(cov.shape[:-2])
    d = jnp.sqrt(jnp.maximum(jnp.diagonal(cov, axis1=-2, axis2=-1), _VAR_FLOOR))
    corr = cov / (d[..., :, None] * d[..., None, :])
    chol = jnp.linalg.cholesky(corr)
    half = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return jnp.where(jnp.isnan(half), -jnp.inf, half)


@functools.partial(jit, static_argnames=("quality",))
def _batch_gain(post, x, z, target, gstar, xp, zp, repulsion_weight, quality="gibbon"):
    p = xp.shape[0]
    xa, za = jnp.concatenate([xp, x]), jnp.concatenate([zp.astype(float), z.astype(float)])
    cov = fantasy.observation_cov(post, xa, za)
    log_det = log_det_correlation(cov) - log_det_correlation(cov[:p, :p])
    mom = moments.joint_moments(post, x, z, target)
    own = _point_quality(quality, mom.mu_g, mom.var_g, mom.var_y, mom.cov, gstar)
    return repulsion_weight * log_det + jnp.sum(own)


def _check_weight(repulsion_weight):
    if is_concrete(repulsion_weight):
        w = float(repulsion_weight)
        if not np.isfinite(w) or w < 0:
            raise ValueError(f"repulsion_weight must be finite and >= 0, got {repulsion_weight}")
    return jnp.asarray(repulsion_weight, float)


def gibbon_batch_gain(post: Posterior, x, z, target: Target, gstar, x_pending=None, z_pending=None,
                      *, repulsion_weight=1.0, quality="gibbon"):
    r"""GIBBON's gain alpha(B | P) of one batch given pending evaluations (eq. 2), nats.

    Dense: factorises the (P + q) x (P + q) joint covariance of the evaluations. vmap it
    over batches ``x [..., q, d]``; to build batches use :func:`gibbon_batch`.

    Args:
        post, target: the posterior and what g is.
        gstar: ``[N]`` max-value samples.
        x: ``[q, d]``, z: ``[q]`` the batch; x_pending ``[P, d]``, z_pending ``[P]``.
        repulsion_weight: factor on the log-det term (1: the bound).
        quality: each point's own term, ``"gibbon"`` (Q, the bound) or ``"mumbo"``
            (MUMBO's gain G, see :data:`QUALITIES`).

    Returns:
        scalar: 1/2 w [log det C_{P u B} - log det C_P] + sum_i mean_{g*} Q_i (or G_i).
    """
    x, z, xp, zp, _ = fantasy.check_batch_inputs(post, x, z, x_pending, z_pending)
    posterior.check_target(post.spec, target)
    gstar = fantasy.check_gstar(gstar)
    return _batch_gain(post, x, z, target, gstar, xp, zp, _check_weight(repulsion_weight), _check_quality(quality))


@functools.partial(jit, static_argnames=("q", "rescaled", "quality", "marginal_cost"))
def _gibbon_batch(post, target, gstar, x, z, xp, zp, cost, repulsion_weight, q, rescaled=False, quality="gibbon",
                  marginal_cost=False):
    m, p = x.shape[0], xp.shape[0]
    xa = jnp.concatenate([x, xp.astype(x.dtype)])
    za = jnp.concatenate([z.astype(float), zp.astype(float)])
    fac = fantasy.candidate_factors(post, xa, za, target)
    gs = (gstar - post.scaling.y_mean) / post.scaling.y_scale  # standardised g*
    own = _point_quality(quality, fac.mu_g, fac.var_g, fac.var_y, fac.cov, gs)
    log_var0 = jnp.log(fac.var_y)

    def increment(st: fantasy.Conditioned, k):  # eq. 2's term for every candidate at once
        # rescaled: the repulsion of a point joining m = P + k earlier ones weighs 1 / m^2
        w = repulsion_weight / jnp.maximum(p + k, 1) ** 2 if rescaled else repulsion_weight
        return own + w * 0.5 * (jnp.log(st.var_y) - log_var0)

    state = fantasy.init_conditioning(fac, p + q, track_target=False)
    idx, gain, score, _ = fantasy.greedy_select(post, fac, state, increment, q, m, p, cost,
                                                track_target=False, marginal_cost=marginal_cost)
    return Batch(idx, x[idx], z[idx], gain, score)


def gibbon_batch(post: Posterior, target: Target, gstar, x, z, q: int, x_pending=None, z_pending=None,
                 *, cost=None, repulsion_weight=1.0, rescaled_repulsion=False, quality="gibbon",
                 marginal_cost=False) -> Batch:
    r"""Greedy GIBBON batch of ``q`` pairs from a candidate set, given pending evaluations.

    Slot k takes the candidate maximising its increment of eq. (2) given the pending
    points and slots 0..k-1 (all candidates scored at once), or with ``cost`` the
    batch's gain per unit cost. The candidate set is typically every x of a random or
    Sobol set at every fidelity (``x = tile(xs, F)``, ``z = repeat(fidelities, M)``).

    Args:
        post, target: the posterior and what g is.
        gstar: ``[N]`` max-value samples (one set per BO step).
        x: ``[M, d]``, z: ``[M]`` candidate pairs (raw units).
        q: batch size (static).
        x_pending: ``[P, d]``, z_pending: ``[P]`` evaluations handed out, not returned.
        cost: optional ``[M]`` positive costs of the candidates.
        repulsion_weight: factor on the log-det term (1: the bound).
        rescaled_repulsion: also divide a slot's log-det increment by m^2, m the number
            of pending and earlier-chosen points it joins (the down-weighting GIBBON's
            authors recommend for batches, as Trieste's ``rescaled_repulsion``); the
            returned ``gain`` is then the rescaled increment.
        quality: each point's own term, ``"gibbon"`` (Q) or ``"mumbo"`` (MUMBO's gain).
        marginal_cost: with ``cost``, slot k maximises its own increment per unit of its
            own cost (as the believer's slots) instead of the batch's gain per unit of the
            batch's cost.

    Returns:
        :class:`Batch`: ``index [q]``, ``x [q, d]``, ``z [q]``, ``gain [q]`` (each
        slot's increment, summing to ``gibbon_batch_gain`` of the batch) and ``score``.
    """
    x, z, xp, zp, cost = fantasy.check_batch_inputs(post, x, z, x_pending, z_pending, cost, q)
    posterior.check_target(post.spec, target)
    gstar = fantasy.check_gstar(gstar)
    return _gibbon_batch(post, target, gstar, x, z, xp, zp, cost, _check_weight(repulsion_weight), int(q),
                         bool(rescaled_repulsion), _check_quality(quality), bool(marginal_cost))
