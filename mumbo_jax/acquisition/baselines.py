"""The paper's baseline acquisitions, as pure functions (maximisation convention).

Two layers, like :mod:`mumbo_jax.acquisition.acquisitions`:

* closed forms on predictive moments (any batch shape), tested against references:
  :func:`expected_improvement`, :func:`ucb`, :func:`ucb_beta`, :func:`mf_gp_ucb_bound`,
  :func:`mf_gp_ucb_fidelity`, :func:`boca_fidelity`, :func:`pmin_from_samples`,
  :func:`pmin_entropy`, :func:`pmin_after_fantasy`, :func:`mtbo_gain`;
* the same acquisitions on a fitted :class:`mumbo_jax.gp.posterior.Posterior`
  (``*_alpha`` functions with the ``alpha(x [M, d], z [M]) -> [M]`` signature that
  :func:`mumbo_jax.bo.optimize.maximise` takes), used by :func:`mumbo_jax.bo.rules.propose`.
  Each one is the posterior's moments fed to the closed form above (one copy of each
  formula: the tested closed form is the code that runs).

Every public function needs float64 and raises
:class:`mumbo_jax.gp.precision.PrecisionError` without it.

The rules, with the sources they follow:

EI (Jones et al. 1998) of g over the incumbent eta (the best posterior mean of g at an
evaluated x, as in the paper's incumbent):
    EI = sigma (u Phi(u) + phi(u)),  u = (mu - eta) / sigma.
UCB (Srinivas et al. 2010): mu + sqrt(beta) sigma with Kandasamy et al.'s practical
schedule beta_t = 0.2 d log(2 t) (their released MF-GP-UCB code).
MT-EI (Swersky et al. 2013, the FASTCV two-stage rule): x maximises EI of the target;
then z maximises EI_z(x) / cost(z), EI_z of f(x, z) over the best posterior mean of
f(., z) at the evaluated x.
MF-GP-UCB (Kandasamy et al. 2016): x maximises
    phi(x) = min_m [ mu_m(x) + sqrt(beta) sigma_m(x) + zeta_m ]   (zeta_target = 0);
the fidelity is the cheapest m whose sqrt(beta) sigma_m(x) >= gamma_m (else the
target). Thresholds as in the released code: zeta_m = 2 * the largest gap
|mu_target - mu_m| at the evaluated x (the code's 2 * max observed gap), re-estimated
from the posterior at every step; gamma_m = 0.01 * range of y, multiplied by 5 each
time the run has stayed below the target for cost(m - 1)/cost(m) queries in a row,
which :func:`mf_gp_ucb_gamma_exponents` replays from the run's history (so the rule
stays a pure function of the posterior and the evaluated fidelities).
BOCA (Kandasamy et al. 2017), continuous fidelity: x maximises UCB of the target;
z is the cheapest fidelity with cost(z) < 0.9 cost(z0), posterior sd
sigma(x, z) > gamma(z) = c * range(y) * xi(z) * (cost(z)/cost(z0))^q (q = 1/(d + 3),
c = 0.01 as Dragonfly's initial coefficient) and xi(z) > max xi / sqrt(beta), where
xi(z) = sqrt(1 - corr(f(x, z), f(x, z0))^2) under the prior ("information gap");
else z0.
MTBO (entropy search over the location of the optimum, Hennig & Schuler 2012, as used
by Swersky et al. 2013 and FABOLAS): P representer points drawn in proportion to EI
(base measure u), S Monte Carlo joint samples of g there give
    p_min[i] = P(argmax_j g(r_j) = i),   H = -sum p log(p / u);
a fantasised y(x, z) ~ N(mu_y, s_y^2) at Gauss-Hermite nodes updates the samples by
Matheron's rule with common random numbers, and
    alpha(x, z) = H(p_min) - E_y[ H(p_min | y) ]   (divided by cost by the maximiser).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import ndtr

from mumbo_jax.gp import models, moments, posterior
from mumbo_jax.gp.precision import require_x64
from mumbo_jax.runtime.tracing import is_concrete
from mumbo_jax.runtime.xla_options import jit

__all__ = [
    "MF_GAMMA_COEFF", "MF_ZETA_FACTOR", "BOCA_COEFF", "BOCA_MAX_COST_RATIO",
    "expected_improvement", "ucb", "ucb_beta", "mf_gp_ucb_bound", "mf_gp_ucb_fidelity", "boca_fidelity",
    "boca_exponent", "pmin_from_samples", "pmin_entropy", "pmin_after_fantasy", "mtbo_gain", "robust_cholesky",
    "gauss_hermite", "incumbent_value", "fidelity_incumbent", "ei_alpha", "ucb_alpha", "fidelity_ei",
    "mf_gp_ucb_thresholds", "mf_gp_ucb_alpha", "mf_gp_ucb_gamma_exponents", "boca_coefficient", "data_range",
    "n_observations", "MTBOState", "mtbo_state", "mtbo_alpha", "prior_information_gap",
]

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_SD_FLOOR = 1e-150
_EI_ASYM = -8.0  # below this u Phi(u) + phi(u) uses the Mills-ratio series (no cancellation)
MF_GAMMA_COEFF = 0.01  # Kandasamy et al.'s code: gamma = 0.01 * range(y)
MF_ZETA_FACTOR = 2.0  # ... and zeta = 2 * the largest observed fidelity gap
BOCA_COEFF = 0.01  # Dragonfly's initial BOCA threshold coefficient
BOCA_MAX_COST_RATIO = 0.9  # Dragonfly: no cheaper fidelity within 90% of the target's cost


def _check_finite(name, x):
    if is_concrete(x):
        a = np.asarray(x)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite")


def _check_var(var):
    if is_concrete(var):
        v = np.asarray(var)
        if np.any(~np.isfinite(v)) or np.any(v < 0):
            raise ValueError("var must be finite and >= 0")


# --------------------------------------------------------------------------- closed forms


def _ei_h(u):
    """h(u) = u Phi(u) + phi(u) >= 0, accurate for all finite u."""
    ua = jnp.minimum(u, _EI_ASYM)
    iz = 1.0 / (ua * ua)
    # phi(u) sum_k (-1)^k (2k+1)!! / u^(2k+2): 9 terms, relative error < 4e-8 for u <= -8
    poly = 0.0
    for coef in (34459425.0, -2027025.0, 135135.0, -10395.0, 945.0, -105.0, 15.0, -3.0, 1.0):
        poly = coef + iz * poly
    series = jnp.exp(-0.5 * ua * ua - _LOG_SQRT_2PI) * iz * poly
    um = jnp.maximum(u, _EI_ASYM)
    direct = um * ndtr(um) + jnp.exp(-0.5 * um * um - _LOG_SQRT_2PI)
    return jnp.maximum(jnp.where(u < _EI_ASYM, series, direct), 0.0)


@jit
def _expected_improvement(mu, var, best):
    sd = jnp.sqrt(jnp.maximum(var, 0.0))
    sd_safe = jnp.maximum(sd, _SD_FLOOR)
    u = (mu - best) / sd_safe
    # sd -> 0: EI -> max(mu - best, 0)
    return jnp.where(sd > _SD_FLOOR, sd_safe * _ei_h(u), jnp.maximum(mu - best, 0.0))


def expected_improvement(mu, var, best):
    """Expected improvement E[max(g - best, 0)] for g ~ N(mu, var).

    Args:
        mu, var: predictive mean and variance (broadcasting shapes), var >= 0.
        best: the incumbent value (broadcasts).

    Returns:
        EI, ``>= 0``, finite for all finite inputs (var = 0 gives max(mu - best, 0)).
    """
    require_x64("calling expected_improvement")
    for name, a in (("mu", mu), ("best", best)):
        _check_finite(name, a)
    _check_var(var)
    return _expected_improvement(jnp.asarray(mu, float), jnp.asarray(var, float), jnp.asarray(best, float))


def ucb(mu, var, beta):
    """Upper confidence bound ``mu + sqrt(beta) sqrt(var)`` (beta >= 0)."""
    require_x64("calling ucb")
    _check_finite("mu", mu)
    _check_var(var)
    if is_concrete(beta) and not (np.all(np.isfinite(beta)) and np.all(np.asarray(beta) >= 0)):
        raise ValueError(f"beta must be finite and >= 0, got {beta}")
    return jnp.asarray(mu) + jnp.sqrt(jnp.asarray(beta) * jnp.maximum(jnp.asarray(var), 0.0))


def ucb_beta(dim, t):
    """Kandasamy et al.'s practical GP-UCB schedule ``beta_t = 0.2 d log(2 t)`` (t >= 1;
    smaller t is treated as 1)."""
    require_x64("calling ucb_beta")
    return 0.2 * dim * jnp.log(2.0 * jnp.maximum(jnp.asarray(t, float), 1.0))


def mf_gp_ucb_bound(mu, var, zeta, beta):
    """MF-GP-UCB's upper bound on the target: ``min_m mu_m + sqrt(beta) sigma_m + zeta_m``.

    Args:
        mu, var: ``[F, M]`` latent predictive moments of f(x, m) at M candidates.
        zeta: ``[F]`` bounds on |f_target - f_m| (0 for the target).
        beta: UCB coefficient.

    Returns:
        ``[M]``.
    """
    require_x64("calling mf_gp_ucb_bound")
    mu, var, zeta = jnp.asarray(mu), jnp.asarray(var), jnp.asarray(zeta)
    if mu.ndim != 2 or var.shape != mu.shape or zeta.shape != mu.shape[:1]:
        raise ValueError(f"mu and var must be [F, M] and zeta [F]; got {mu.shape}, {var.shape}, {zeta.shape}")
    return jnp.min(mu + jnp.sqrt(beta * jnp.maximum(var, 0.0)) + zeta[:, None], axis=0)


def mf_gp_ucb_fidelity(sd, beta, gammas, costs, target: int = 0):
    """MF-GP-UCB's fidelity at the chosen x: the cheapest fidelity m != target whose
    ``sqrt(beta) sd_m >= gammas_m``; the target if there is none.

    Args:
        sd: ``[F]`` posterior sd of f(x, m) at the chosen x.
        beta: UCB coefficient; gammas: ``[F]`` thresholds; costs: ``[F]`` query costs.
        target: index of the target fidelity.

    Returns:
        integer fidelity index.
    """
    require_x64("calling mf_gp_ucb_fidelity")
    sd, gammas, costs = jnp.asarray(sd), jnp.asarray(gammas), jnp.asarray(costs)
    fids = jnp.arange(sd.shape[0])
    ok = (jnp.sqrt(beta) * sd >= gammas) & (fids != target)
    key = jnp.where(ok, costs, jnp.inf)
    return jnp.where(jnp.any(ok), jnp.argmin(key), target)


def boca_exponent(dim: int, fidelity_dim: int = 1) -> float:
    """BOCA's q = 1 / (p + d + 2) for a p-dimensional fidelity space."""
    return 1.0 / (fidelity_dim + dim + 2)


def boca_fidelity(z_grid, sd, xi, cost, cost_target, beta, scale, q, z_target, coeff=BOCA_COEFF,
                  max_cost_ratio=BOCA_MAX_COST_RATIO):
    """BOCA's fidelity choice at the chosen x over a grid of candidate fidelities.

    Admissible z: ``cost(z) < max_cost_ratio * cost_target``,
    ``sd(z) > coeff * scale * xi(z) * (cost(z) / cost_target)^q`` and
    ``xi(z) > max(xi) / sqrt(beta)``; returns the cheapest admissible z, else
    ``z_target``.

    Args:
        z_grid, sd, xi, cost: ``[G]`` fidelities, posterior sd of f(x, z), information
            gaps and costs.
        cost_target: cost of the target fidelity; beta: UCB coefficient; scale: the
            range of y; q: :func:`boca_exponent`; z_target: the target fidelity.
    """
    require_x64("calling boca_fidelity")
    ratio = cost / cost_target
    gamma = coeff * scale * xi * jnp.power(jnp.maximum(ratio, 0.0), q)
    ok = (ratio < max_cost_ratio) & (sd > gamma) & (xi > jnp.max(xi) / jnp.sqrt(jnp.maximum(beta, 1e-12)))
    i = jnp.argmin(jnp.where(ok, cost, jnp.inf))
    return jnp.where(jnp.any(ok), z_grid[i], z_target)


def mf_gp_ucb_gamma_exponents(z_hist, valid, costs, target: int = 0):
    """Kandasamy et al.'s adaptive thresholds, replayed from the run's history.

    Their code multiplies gamma_m by 5 each time the run has queried fidelities below
    the target ``cost(m - 1) / cost(m)`` times in a row (m the last one queried, m - 1
    the next more expensive), and lifts every gamma to at least gamma_m. This replays
    that rule over the BO evaluations so far.

    Args:
        z_hist: ``[B]`` fidelities of the evaluations, in order; valid: ``[B]`` bool,
            which of them are BO evaluations (not padding or initial design).
        costs: ``[F]``; target: the target fidelity.

    Returns:
        ``[F]`` exponents e: gamma_m = gamma_0 * 5^e_m.
    """
    require_x64("calling mf_gp_ucb_gamma_exponents")
    costs = jnp.asarray(costs, float)
    n_fid = costs.shape[0]
    z_hist = jnp.asarray(z_hist).astype(jnp.int32)

    def step(carry, inp):
        e, counter = carry
        z, ok = inp
        at_target = z == target
        counter_new = jnp.where(at_target, 0, counter + 1)
        ratio = costs[jnp.maximum(z - 1, 0)] / costs[z]
        escalate = (~at_target) & (counter_new >= ratio)
        e_up = e.at[z].add(1)
        e_up = jnp.maximum(e_up, e_up[z])
        e = jnp.where(ok & escalate, e_up, e)
        counter = jnp.where(ok, jnp.where(escalate, 0, counter_new), counter)
        return (e, counter), None

    (e, _), _ = jax.lax.scan(step, (jnp.zeros(n_fid), jnp.asarray(0)), (z_hist, jnp.asarray(valid)))
    return e


def boca_coefficient(is_target, valid, init=BOCA_COEFF, window: int = 20, low: float = 0.25, high: float = 0.5,
                     multiplier: float = 1.1):
    """Dragonfly's adaptive BOCA threshold coefficient, replayed from the history.

    Before each BO step the fraction of target queries among the last ``window`` BO
    evaluations (divided by ``window`` even when fewer exist) is computed; the
    coefficient is multiplied by ``multiplier`` if it is <= ``low`` and divided by it if
    it is >= ``high``.

    Args:
        is_target: ``[B]`` bool, evaluation at the target fidelity; valid: ``[B]`` bool,
            BO evaluations (in order, padding and initial design False).

    Returns:
        the coefficient for the next step.
    """
    require_x64("calling boca_coefficient")
    tgt = (jnp.asarray(is_target) & jnp.asarray(valid)).astype(float)
    valid = jnp.asarray(valid).astype(float)
    # BO-evaluation counts up to each position: step t sees the t evaluations before it
    c_tgt = jnp.concatenate([jnp.zeros(1), jnp.cumsum(tgt)])
    c_bo = jnp.concatenate([jnp.zeros(1), jnp.cumsum(valid)])
    n_bo = c_bo[-1]
    steps = jnp.arange(c_bo.shape[0] + 0.0)  # step t = 0 .. B
    # number of target queries among BO evaluations t - window .. t - 1
    pos_t = jnp.searchsorted(c_bo, steps, side="left")  # first position where c_bo reaches t
    pos_w = jnp.searchsorted(c_bo, jnp.maximum(steps - window, 0.0), side="left")
    frac = (c_tgt[pos_t] - c_tgt[pos_w]) / window
    vote = jnp.where(frac <= low, 1.0, jnp.where(frac >= high, -1.0, 0.0))
    vote = jnp.where(steps <= n_bo, vote, 0.0)
    return init * jnp.power(multiplier, jnp.sum(vote))


def pmin_from_samples(samples):
    """Monte Carlo p_min: ``[P]`` frequencies with which each of P points is the
    argmax over ``samples [P, S]`` (S joint samples of g at P representer points)."""
    require_x64("calling pmin_from_samples")
    samples = jnp.asarray(samples)
    if samples.ndim != 2:
        raise ValueError(f"samples must be [P, S], got shape {samples.shape}")
    return _pmin(samples)


def _pmin(samples):
    return jnp.mean(jax.nn.one_hot(jnp.argmax(samples, axis=0), samples.shape[0], dtype=samples.dtype), axis=0)


def pmin_entropy(p, log_base=None):
    """Entropy of p_min relative to the representer measure u:
    ``-sum_i p_i log(p_i / u_i)`` (``log_base`` = log u up to a constant; None: uniform,
    the plain discrete entropy). 0 log 0 = 0."""
    require_x64("calling pmin_entropy")
    p = jnp.asarray(p)
    plogp = jnp.where(p > 0, p * jnp.log(jnp.where(p > 0, p, 1.0)), 0.0)
    h = -jnp.sum(plogp, axis=-1)
    if log_base is not None:
        h = h + jnp.sum(p * jnp.asarray(log_base), axis=-1)
    return h


def gauss_hermite(n: int):
    """Nodes t and weights w (summing to 1) with sum w f(t) ~ E f(T), T ~ N(0, 1)."""
    require_x64("calling gauss_hermite")
    if int(n) != n or n < 1:
        raise ValueError(f"the number of Gauss-Hermite nodes must be a positive integer, got {n}")
    t, w = np.polynomial.hermite_e.hermegauss(int(n))
    return jnp.asarray(t), jnp.asarray(w / w.sum())


def pmin_after_fantasy(base, normals_y, c, s_y, t):
    """p_min after observing y = mu_y + s_y t, by Matheron's rule on shared samples.

    With joint samples g_s = base (``[P, S]``, mean + L W) and y_s whose standardised
    value is ``normals_y`` (``[S]``, ``(y_s - mu_y) / s_y``), the samples
    ``g_s + (c / s_y) (t - normals_y)`` are draws of g | y (c = Cov(g(R), y), ``[P]``).

    Returns:
        ``[P]`` p_min | y.
    """
    require_x64("calling pmin_after_fantasy")
    return _pmin(base + (c / s_y)[:, None] * (t - normals_y)[None, :])


def _gain_one(base, log_base, chol, w, w0, nodes, weights, h0, c, var_y):
    """Expected entropy drop for one candidate (c ``[P]``, var_y scalar)."""
    s_y = jnp.sqrt(jnp.maximum(var_y, 1e-300))
    a = jax.scipy.linalg.solve_triangular(chol, c, lower=True)  # Cov(g_s, y_s) = L a = c
    b = jnp.sqrt(jnp.maximum(var_y - jnp.sum(a * a), 1e-300))
    e = (a @ w + b * w0) / s_y  # standardised fantasy draws, [S]
    h = jax.vmap(lambda t: pmin_entropy(pmin_after_fantasy(base, e, c, s_y, t), log_base))(nodes)
    return h0 - jnp.sum(weights * h)


@functools.partial(jit, static_argnames=("batch_size",))
def _mtbo_gain(mean_r, chol, w, w0, log_base, nodes, weights, c, var_y, batch_size=32):
    base = mean_r[:, None] + chol @ w
    h0 = pmin_entropy(_pmin(base), log_base)
    one = functools.partial(_gain_one, base, log_base, chol, w, w0, nodes, weights, h0)
    # lax.map in batches: a [batch, nodes, P, S] block at a time, not [M, nodes, P, S]
    return jax.lax.map(lambda args: one(*args), (c, var_y), batch_size=batch_size)


def mtbo_gain(mean_r, cov_r, c, var_y, w, w0, nodes, weights, log_base=None, batch_size: int = 32):
    """MTBO's expected reduction of the entropy of p_min from observing y at M candidates.

    Args:
        mean_r, cov_r: ``[P]``, ``[P, P]`` posterior of g at the representer points.
        c: ``[M, P]`` Cov(g(r_j), y_m); var_y: ``[M]`` predictive variance of y_m (noise
            included).
        w: ``[P, S]`` and w0: ``[S]`` standard normals (common random numbers).
        nodes, weights: Gauss-Hermite rule over the fantasised y (:func:`gauss_hermite`).
        log_base: ``[P]`` log density of the representer measure (None: uniform).

    Returns:
        ``[M]`` H(p_min) - E_y H(p_min | y).
    """
    require_x64("calling mtbo_gain")
    mean_r, cov_r = jnp.asarray(mean_r, float), jnp.asarray(cov_r, float)
    p = mean_r.shape[0]
    if cov_r.shape != (p, p) or jnp.shape(c)[-1] != p or jnp.shape(w)[0] != p:
        raise ValueError(f"shapes do not agree: mean_r {mean_r.shape}, cov_r {cov_r.shape}, c {jnp.shape(c)}, "
                         f"w {jnp.shape(w)}")
    log_base = jnp.zeros(p) if log_base is None else jnp.asarray(log_base, float)
    chol = robust_cholesky(cov_r)
    return _mtbo_gain(mean_r, chol, jnp.asarray(w), jnp.asarray(w0), log_base, jnp.asarray(nodes),
                      jnp.asarray(weights), jnp.asarray(c, float), jnp.asarray(var_y, float), batch_size=batch_size)


def robust_cholesky(cov):
    """Cholesky with a relative jitter (representer points may nearly coincide)."""
    require_x64("calling robust_cholesky")
    p = cov.shape[0]
    scale = jnp.maximum(jnp.mean(jnp.diag(cov)), 1e-300)
    return jnp.linalg.cholesky(cov + 1e-8 * scale * jnp.eye(p))


# --------------------------------------------------------------------------- on a posterior


def incumbent_value(post, target):
    """The best posterior mean of g at an evaluated x (EI's incumbent)."""
    require_x64("calling incumbent_value")
    return moments.incumbent(post, target)[1]


def fidelity_incumbent(post, z):
    """The best posterior mean of f(., z) at the evaluated x (MT-EI's per-fidelity eta)."""
    require_x64("calling fidelity_incumbent")
    x = posterior.evaluated_inputs(post)
    mu, _ = moments.predict(post, x, jnp.full(x.shape[0], z))
    return jnp.max(jnp.where(post.mask > 0, mu, -jnp.inf))


def ei_alpha(post, target, eta, x, z):
    """EI of g at ``x [M, d]`` over ``eta`` (z ignored)."""
    require_x64("calling ei_alpha")
    mu, var = moments.target_moments(post, x, target)
    return expected_improvement(mu, var, eta)


def ucb_alpha(post, target, beta, x, z):
    """UCB of g at ``x [M, d]`` (z ignored)."""
    require_x64("calling ucb_alpha")
    mu, var = moments.target_moments(post, x, target)
    return ucb(mu, var, beta)


def fidelity_ei(post, x, z, eta):
    """EI of the latent f(x, z) over ``eta`` at ``x [M, d]``, ``z [M]``."""
    require_x64("calling fidelity_ei")
    mu, var = moments.predict(post, x, z)
    return expected_improvement(mu, var, eta)


def n_observations(post):
    """The number of (unmasked) observations in the posterior."""
    return jnp.sum(post.mask)


def data_range(post):
    """Range of the posterior means at the evaluated (x, z): a noise-free stand-in for
    the range of the observations (the posterior does not keep y)."""
    require_x64("calling data_range")
    mu, _ = moments.predict(post, posterior.evaluated_inputs(post), _raw_z(post))
    lo = jnp.min(jnp.where(post.mask > 0, mu, jnp.inf))
    hi = jnp.max(jnp.where(post.mask > 0, mu, -jnp.inf))
    return jnp.maximum(hi - lo, 1e-12 * post.scaling.y_scale)


def _raw_z(post):
    if post.spec.discrete:
        return post.z
    return post.scaling.z_lower + post.scaling.z_width * post.z


def mf_gp_ucb_thresholds(post, n_fidelities: int, target: int = 0):
    """MF-GP-UCB's ``(zeta [F], gamma [F])`` from the posterior: zeta_m = 2 max over the
    evaluated x of |mu_target - mu_m| (0 at the target), gamma_m = 0.01 range(y)."""
    require_x64("calling mf_gp_ucb_thresholds")
    x = posterior.evaluated_inputs(post)
    n = x.shape[0]
    mus = jnp.stack([moments.predict(post, x, jnp.full(n, f))[0] for f in range(n_fidelities)])
    gap = jnp.max(jnp.where(post.mask > 0, jnp.abs(mus - mus[target]), 0.0), axis=1)
    zeta = MF_ZETA_FACTOR * gap.at[target].set(0.0)
    gamma = jnp.full(n_fidelities, MF_GAMMA_COEFF) * data_range(post)
    return zeta, gamma


def mf_gp_ucb_alpha(post, zeta, beta, x, z):
    """MF-GP-UCB's bound ``phi(x)`` at ``x [M, d]`` (z ignored); ``zeta [F]``, one per
    fidelity."""
    require_x64("calling mf_gp_ucb_alpha")
    m, n_fidelities = x.shape[0], zeta.shape[0]
    preds = [moments.predict(post, x, jnp.full(m, f)) for f in range(n_fidelities)]
    mu = jnp.stack([a for a, _ in preds])
    var = jnp.stack([b for _, b in preds])
    return mf_gp_ucb_bound(mu, var, zeta, beta)


def prior_information_gap(post, x, z, z_target):
    """BOCA's xi(z) = sqrt(1 - corr_prior(f(x, z), f(x, z0))^2) at one ``x [d]`` for
    ``z [G]`` fidelities (continuous models)."""
    require_x64("calling prior_information_gap")
    kernel = models.build_kernel(post.spec, post.params)
    g = z.shape[0]
    xu, zu = models.scale_inputs(post.spec, post.scaling, jnp.broadcast_to(x, (g, x.shape[0])), z)
    _, z0 = models.scale_inputs(post.spec, post.scaling, x[None], jnp.full(1, z_target))
    z0 = jnp.full(g, z0[0])
    kzz = jax.vmap(kernel.evaluate)((xu, zu), (xu, zu))
    k00 = jax.vmap(kernel.evaluate)((xu, z0), (xu, z0))
    kz0 = jax.vmap(kernel.evaluate)((xu, zu), (xu, z0))
    corr = kz0 / jnp.sqrt(jnp.maximum(kzz * k00, 1e-300))
    return jnp.sqrt(jnp.maximum(1.0 - corr * corr, 0.0))


class MTBOState(NamedTuple):
    """What MTBO shares across candidates in one step.

    Attributes:
        rep_x: ``[P, d]`` representer points (box units).
        log_base: ``[P]`` log of their sampling measure (EI, normalised up to a constant).
        mean_r, chol_r: posterior mean ``[P]`` of g there and Cholesky factor ``[P, P]``
            of its covariance.
        v_r: ``[n, P]`` whitened cross-covariance L^-1 k_n(g(R)) (standardised units).
        w, w0: ``[P, S]``, ``[S]`` common random normals.
        nodes, weights: Gauss-Hermite rule over the fantasised y.
    """

    rep_x: jax.Array
    log_base: jax.Array
    mean_r: jax.Array
    chol_r: jax.Array
    v_r: jax.Array
    w: jax.Array
    w0: jax.Array
    nodes: jax.Array
    weights: jax.Array


def mtbo_state(key, post, target, n_representers: int, n_samples: int, n_fantasies: int, n_pool: int):
    """Representer points (``n_representers`` of ``n_pool`` uniform points, drawn
    without replacement in proportion to EI by the Gumbel top-k trick), their joint
    posterior and the common random numbers of one MTBO step."""
    require_x64("calling mtbo_state")
    k_pool, k_pick, k_w = jax.random.split(key, 3)
    sc = post.scaling
    d = post.x.shape[1]
    pool = sc.x_lower + sc.x_width * jax.random.uniform(k_pool, (n_pool, d), post.x.dtype)
    eta = incumbent_value(post, target)
    ei = ei_alpha(post, target, eta, pool, None)
    log_u = jnp.log(ei + 1e-12 * jnp.max(ei) + 1e-300)
    _, idx = jax.lax.top_k(log_u + jax.random.gumbel(k_pick, log_u.shape), n_representers)
    rep_x, log_base = pool[idx], log_u[idx]
    mean_r, cov_r = moments.target_joint(post, rep_x, target)
    kernel = models.build_kernel(post.spec, post.params)
    xu, _ = models.scale_inputs(post.spec, sc, rep_x, jnp.zeros(n_representers))
    _, _, v_r, _, _ = moments.target_part(post, kernel, xu, target)
    w = jax.random.normal(k_w, (n_representers + 1, n_samples), post.x.dtype)
    nodes, weights = gauss_hermite(n_fantasies)
    return MTBOState(rep_x, log_base, mean_r, robust_cholesky(cov_r), v_r, w[:-1], w[-1], nodes, weights)


def _cross_target(post, target, rep_x, v_r, x, z):
    """Cov(g(r_j), y(x_m, z_m)) ``[M, P]`` (units of y^2) and Var(y) ``[M]``."""
    kernel = models.build_kernel(post.spec, post.params)
    sc = post.scaling
    xu, zu = models.scale_inputs(post.spec, sc, x, z)
    ru, _ = models.scale_inputs(post.spec, sc, rep_x, jnp.zeros(rep_x.shape[0]))
    zt = posterior.internal_target(post, target)
    wts = jnp.asarray(target.weights, xu.dtype)
    prior = sum(wts[j] * kernel((ru, jnp.full(ru.shape[0], zt[j])), (xu, zu)) for j in range(zt.shape[0]))  # [P, M]
    v_f = post.chol_inv @ post.spec.cross(post.params, post.x, post.z, xu, zu)  # [n, M]
    cov = (prior - v_r.T @ v_f).T  # [M, P]
    var_f = kernel((xu, zu)) - jnp.sum(v_f**2, axis=0)
    var_y = jnp.maximum(var_f, 1e-12) + post.noise[posterior.noise_index(post.spec, zu)]
    s2 = sc.y_scale**2
    return cov * s2, var_y * s2


def mtbo_alpha(post, target, state: MTBOState, x, z):
    """MTBO's gain at ``x [M, d]``, ``z [M]``. Piecewise constant in x (Monte Carlo
    argmax counts): inputs are cut from the gradient so the polish costs nothing."""
    require_x64("calling mtbo_alpha")
    x, z = jax.lax.stop_gradient(x), jax.lax.stop_gradient(z)
    c, var_y = _cross_target(post, target, state.rep_x, state.v_r, x, z)
    return _mtbo_gain(state.mean_r, state.chol_r, state.w, state.w0, state.log_base, state.nodes, state.weights,
                      c, var_y)
