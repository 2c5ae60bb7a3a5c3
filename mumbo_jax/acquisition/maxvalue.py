r"""Samples of the maximum value :math:`g^* = \max_x g(x)` of a GP target.

MES (Wang & Jegelka, 2017) and MUMBO (Moss et al., 2020) average their acquisition over a
handful of samples of :math:`g^*`. Both samplers here are array-level, pure, and run
entirely inside the compiled graph (no host round trip, no scipy root finding), so they
``jax.jit`` and ``jax.vmap`` over PRNG keys. The caller builds the grid (typically
~10,000 d random points plus the evaluated points) and the GP posterior of :math:`g` on it.

Two samplers:

* :func:`gumbel_max_samples` -- the Gumbel approximation of Wang & Jegelka. Treating the
  grid values as independent, :math:`g^*` has the CDF

  .. math::
      F(y) = P(g^* \le y) = \prod_{i=1}^M \Phi\!\left(\frac{y - \mu_i}{\sigma_i}\right).

  Its quartiles :math:`y_{25}, y_{50}, y_{75}` (:func:`max_value_quantiles`, by vectorised
  bisection on :math:`\log F`) fix a Gumbel for maxima, :math:`G(y) = \exp(-e^{-(y-a)/b})`,

  .. math::
      b = \frac{y_{75} - y_{25}}{\log(-\log 0.25) - \log(-\log 0.75)}, \qquad
      a = y_{50} + b \log\log 2,

  sampled by inversion: :math:`g^* = a - b \log(-\log u)`, :math:`u \sim U(0, 1)`.
  Only marginal variances are needed: :math:`O(M)` per bisection step.

* :func:`exact_max_samples` -- joint samples of :math:`g` on a (smaller) grid from its
  full posterior covariance, by Cholesky with adaptive jitter, and their maxima.

Both clamp :math:`g^* \ge` ``floor``. :func:`sample_gstar`, the glue from a fitted
posterior, sets the floor to the best posterior mean of :math:`g` at the evaluated points
plus 5 noise standard deviations (as in Wang & Jegelka's code): the maximum cannot be
below a value :math:`g` is known to reach, and a sample equal to the incumbent's mean
would give a spurious gain for re-evaluating the incumbent.

Every public function needs float64 and raises
:class:`mumbo_jax.gp.precision.PrecisionError` without it (call
``jax.config.update("jax_enable_x64", True)`` first).
"""

from __future__ import annotations

import functools
import math
import operator

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.runtime import draws
from mumbo_jax.gp import moments, posterior
from mumbo_jax.gp.precision import require_x64
from mumbo_jax.runtime.tracing import is_concrete
from mumbo_jax.runtime.xla_options import jit

__all__ = [
    "max_value_quantiles",
    "fit_gumbel",
    "gumbel_max_samples",
    "exact_max_samples",
    "GSTAR_METHODS",
    "FLOOR_NOISE_SD",
    "PRUNE_FROM_ROWS",
    "PRUNE_BOUND_ROWS",
    "can_move_quartiles",
    "default_grid_size",
    "gstar_floor",
    "sample_gstar",
]

# Denominator of the Gumbel scale: log(-log 0.25) - log(-log 0.75) ~= 1.5725.
_GUMBEL_IQR = math.log(-math.log(0.25)) - math.log(-math.log(0.75))
_LOG_LOG_2 = math.log(math.log(2.0))
_QUARTILES = (0.25, 0.5, 0.75)
# The bisection bracket spans max_i(mu_i -/+ _BRACKET_SD * sd_i). The lower end has
# F <= Phi(-10) ~ 7.6e-24 and the upper end F >= Phi(10)^M ~ 1 - M * 7.6e-24, so every
# probability in [1e-20, 1 - 1e-10] is bracketed for any grid of fewer than 1e12 points.
_BRACKET_SD = 10.0
# 64 halvings shrink a bracket of width W to W * 5e-20: below float64 resolution for any
# W, so the result is the root to rounding. Each step costs one erfc per grid point.
_N_BISECT = 64
# In the BO step 44 halvings suffice: the bracket (~20 sd) shrinks to ~1e-12 sd, far below
# the Monte Carlo error of N = 10 samples, and each step costs 30,000 erfc calls.
_N_BISECT_BO = 44
_SQRT_HALF = 1.0 / math.sqrt(2.0)
# Cholesky jitter schedule, as multiples of the mean diagonal: 0 first (exact when the
# matrix is numerically positive definite), then 1e-12, 1e-10, ..., 1.
_JITTERS = (0.0, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2, 1.0)


# ----------------------------------------------------------------------------------------
# Input validation. Shape checks always run (shapes are static even under jit); value
# checks run only on concrete arrays, so traced calls (jit, vmap, grad) are unaffected.
# ----------------------------------------------------------------------------------------


def _check_n_samples(n_samples) -> int:
    try:
        n = operator.index(n_samples)
    except TypeError:
        raise ValueError(
            f"n_samples must be a positive Python int (static under jit), got {n_samples!r}"
        ) from None
    if n <= 0:
        raise ValueError(f"n_samples must be positive, got {n}")
    return n


def _check_finite(name: str, x) -> None:
    if is_concrete(x) and not np.all(np.isfinite(np.asarray(x))):
        raise ValueError(f"{name} contains non-finite values (NaN or inf)")


def _negative_tolerance(v: np.ndarray) -> float:
    # Posterior variances computed as k(x, x) - a^T a can come out a few ulps below zero;
    # only reject values that round-off cannot explain.
    return -1e-8 * max(1.0, float(np.max(np.abs(v), initial=0.0)))


def _as_float(x):
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.result_type(float))
    return x


def _check_mean_var(mean, var):
    if jnp.ndim(mean) != 1:
        raise ValueError(f"mean must have shape [M], got shape {jnp.shape(mean)}")
    if jnp.shape(mean)[0] == 0:
        raise ValueError("mean must hold at least one grid point, got M = 0")
    if jnp.shape(var) != jnp.shape(mean):
        raise ValueError(
            f"var must have the shape of mean {jnp.shape(mean)}, got {jnp.shape(var)}"
        )
    _check_finite("mean", mean)
    _check_finite("var", var)
    if is_concrete(var):
        v = np.asarray(var)
        if np.any(v < _negative_tolerance(v)):
            raise ValueError(f"var must be non-negative, got min(var) = {v.min():.3g}")
    dtype = jnp.result_type(_as_float(mean), _as_float(var))
    return jnp.asarray(mean, dtype), jnp.asarray(var, dtype)


def _check_floor(floor, dtype):
    if jnp.ndim(floor) != 0:
        raise ValueError(f"floor must be a scalar, got shape {jnp.shape(floor)}")
    if is_concrete(floor) and np.isnan(np.asarray(floor)):
        raise ValueError("floor must not be NaN (use -inf for no floor)")
    return jnp.asarray(floor, dtype)


def _check_probs(probs, dtype):
    probs = jnp.asarray(probs, dtype)
    if probs.ndim > 1:
        raise ValueError(f"probs must be a scalar or have shape [Q], got {probs.shape}")
    if is_concrete(probs):
        p = np.asarray(probs)
        if np.any(~(p > 0.0)) or np.any(~(p < 1.0)):
            raise ValueError(f"probs must lie strictly inside (0, 1), got {p}")
    return probs


# ----------------------------------------------------------------------------------------
# Gumbel sampler
# ----------------------------------------------------------------------------------------


def _floored_sd(mean, var):
    """sd_i = sqrt(var_i), floored so that z = (y - mu_i) / sd_i is never 0/0.

    The floor (1e-6 of the largest sd, and 1e-12 of the mean's magnitude for an all-zero
    variance) turns a zero-variance point into a step of negligible width at mu_i, which
    is what it is: P(g* <= y) = 0 for y < mu_i.
    """
    sd = jnp.sqrt(jnp.maximum(var, 0.0))
    floor = jnp.maximum(1e-6 * jnp.max(sd), 1e-12 * (1.0 + jnp.max(jnp.abs(mean))))
    return jnp.maximum(sd, floor)


def _log_cdf_max(y, mean, inv_sd):
    r"""log F(y) = sum_i log Phi((y - mu_i)/sd_i) for y of shape [Q]; returns [Q].

    log(erfc(-z / sqrt 2) / 2) rather than ``log_ndtr``: ~10x faster on CPU (one erfc, no
    three-branch select). Its absolute error is <= 3e-16 per term for z > 0, relative
    1e-15 for z in [-37, 0], and -inf (not NaN) below z ~ -37.5 where erfc underflows:
    any such term puts y far below the root, which is all bisection needs to know.
    """
    z = (y[:, None] - mean[None, :]) * inv_sd[None, :]
    return jnp.sum(jnp.log(0.5 * jax.scipy.special.erfc(-_SQRT_HALF * z)), axis=-1)


@functools.partial(jit, static_argnames=("n_bisect",))
def _quantiles(mean, var, probs, n_bisect):
    sd = _floored_sd(mean, var)
    inv_sd = 1.0 / sd
    log_p = jnp.log(probs)
    # F(y) <= Phi((y - mu_i)/sd_i) for every i, and F(y) >= prod_i Phi(...): hence the
    # bracket below (see _BRACKET_SD). All quantiles share it and bisect in lockstep.
    lo = jnp.full_like(log_p, jnp.max(mean - _BRACKET_SD * sd))
    hi = jnp.full_like(log_p, jnp.max(mean + _BRACKET_SD * sd))

    def step(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        below = _log_cdf_max(mid, mean, inv_sd) < log_p  # F(mid) < p: root above mid.
        return jnp.where(below, mid, lo), jnp.where(below, hi, mid)

    lo, hi = jax.lax.fori_loop(0, n_bisect, step, (lo, hi))
    return 0.5 * (lo + hi)


def max_value_quantiles(mean, var, probs=_QUARTILES, *, n_bisect: int = _N_BISECT):
    r"""Quantiles of :math:`F(y) = \prod_i \Phi((y - \mu_i)/\sigma_i)`.

    Solves :math:`\sum_i \log\Phi((y_p - \mu_i)/\sigma_i) = \log p` for every p at once by
    ``n_bisect`` bisection steps (a ``lax.fori_loop``; cost ``n_bisect * Q * M`` erfc's)
    from the bracket :math:`[\max_i(\mu_i - 10\sigma_i), \max_i(\mu_i + 10\sigma_i)]`.
    Sds are floored at ``1e-6 * max(sd)`` so zero variances are safe.

    Args:
        mean: [M] posterior means of g on the grid.
        var: [M] posterior variances (tiny negative round-off is treated as 0).
        probs: scalar or [Q] probabilities in (0, 1); default the quartiles (.25, .5, .75).
        n_bisect: number of bisection steps (static); 64 reaches float64 resolution.

    Returns:
        Array of the shape of ``probs``: the quantiles :math:`y_p` with :math:`F(y_p) = p`.
    """
    require_x64("calling max_value_quantiles")
    mean, var = _check_mean_var(mean, var)
    probs = _check_probs(probs, mean.dtype)
    n_bisect = operator.index(n_bisect)
    return _quantiles(mean, var, jnp.atleast_1d(probs), n_bisect).reshape(probs.shape)


def _gumbel_params(mean, var, n_bisect):
    probs = jnp.asarray(_QUARTILES, mean.dtype)
    y25, y50, y75 = _quantiles(mean, var, probs, n_bisect)
    # y75 >= y25 up to bisection rounding; b = 0 (a point mass at a) is a valid limit.
    b = jnp.maximum(y75 - y25, 0.0) / _GUMBEL_IQR
    a = y50 + b * _LOG_LOG_2
    return a, b


def fit_gumbel(mean, var, *, n_bisect: int = _N_BISECT):
    r"""Location and scale ``(a, b)`` of the Gumbel (for maxima) fitted to the max of g.

    :math:`G(y) = \exp(-e^{-(y - a)/b})` matches the median of
    :math:`F(y) = \prod_i \Phi((y-\mu_i)/\sigma_i)` exactly and its interquartile range:
    :math:`b = (y_{75} - y_{25}) / (\log(-\log .25) - \log(-\log .75))`,
    :math:`a = y_{50} + b \log\log 2`.

    Args:
        mean, var: [M] posterior means and variances of g on the grid.
        n_bisect: bisection steps for the quartiles (static).

    Returns:
        ``(a, b)``, two scalars, ``b >= 0``.
    """
    require_x64("calling fit_gumbel")
    mean, var = _check_mean_var(mean, var)
    return _gumbel_params_jit(mean, var, operator.index(n_bisect))


_gumbel_params_jit = jit(_gumbel_params, static_argnums=2)


@functools.partial(jit, static_argnames=("n_samples", "n_bisect"))
def _gumbel_samples(key, mean, var, floor, n_samples, n_bisect):
    a, b = _gumbel_params(mean, var, n_bisect)
    dtype = mean.dtype
    # u in (0, 1): log(-log u) stays finite at both ends (stream 1: the grid is stream 0)
    u = draws.uniform(key, (n_samples,), dtype, stream=1)
    g = a - b * jnp.log(-jnp.log(u))
    floor = jnp.where(jnp.isnan(floor), -jnp.inf, floor)
    return jnp.maximum(g, floor)


def gumbel_max_samples(key, mean, var, n_samples: int, floor=-jnp.inf, *,
                       n_bisect: int = _N_BISECT):
    r"""Samples of :math:`g^*` from the Gumbel approximation of Wang & Jegelka (2017).

    Fits :math:`G(y) = \exp(-e^{-(y - a)/b})` to
    :math:`F(y) = \prod_i \Phi((y - \mu_i)/\sigma_i)` by its quartiles
    (:func:`fit_gumbel`) and returns
    :math:`g^*_n = \max(a - b \log(-\log u_n), \text{floor})`, :math:`u_n \sim U(0,1)`.
    A Gumbel for maxima: the right tail is the heavy one. Everything runs in the
    compiled graph; jit with ``n_samples`` static and vmap over keys.

    Args:
        key: a PRNG key.
        mean: [M] posterior means of g on the grid.
        var: [M] posterior variances of g (zeros allowed; sds are floored).
        n_samples: number of samples N (a Python int; static under jit).
        floor: scalar lower clamp, e.g. the best posterior mean of g at the evaluated
            points; ``-inf`` (the default) for none.
        n_bisect: bisection steps for the quartiles (static).

    Returns:
        [N] samples of :math:`g^*`.

    Raises:
        ValueError: on concrete inputs with mismatched shapes, ``n_samples <= 0``,
            negative variances, non-finite values or a non-scalar floor.
    """
    require_x64("calling gumbel_max_samples")
    n_samples = _check_n_samples(n_samples)
    mean, var = _check_mean_var(mean, var)
    floor = _check_floor(floor, mean.dtype)
    return _gumbel_samples(key, mean, var, floor, n_samples, operator.index(n_bisect))


# ----------------------------------------------------------------------------------------
# Exact sampler
# ----------------------------------------------------------------------------------------


def _robust_cholesky(cov):
    """Lower Cholesky factor of cov + j I for the first j in the schedule that factors.

    ``jnp.linalg.cholesky`` returns NaNs on failure, so each attempt is checked for
    finiteness; a ``while_loop`` stops at the first success (at most len(_JITTERS)
    factorisations). If even jitter = mean diagonal fails, fall back to the diagonal
    factor sqrt(diag), i.e. independent marginals: never NaN.
    """
    m = cov.shape[0]
    cov = 0.5 * (cov + cov.T)
    diag = jnp.diagonal(cov)
    scale = jnp.mean(jnp.abs(diag))
    # An all-zero covariance (no uncertainty) gets a negligible, non-underflowing jitter.
    scale = jnp.where(scale > 0, scale, jnp.sqrt(jnp.finfo(cov.dtype).tiny))
    jitters = scale * jnp.asarray(_JITTERS, cov.dtype)
    eye = jnp.eye(m, dtype=cov.dtype)

    def factor(j):
        return jnp.linalg.cholesky(cov + j * eye)

    def cond(state):
        k, _, ok = state
        return jnp.logical_and(~ok, k < len(_JITTERS))

    def body(state):
        k, _, _ = state
        chol = factor(jitters[k])
        return k + 1, chol, jnp.all(jnp.isfinite(chol))

    chol0 = factor(jitters[0])
    _, chol, ok = jax.lax.while_loop(cond, body, (1, chol0, jnp.all(jnp.isfinite(chol0))))
    fallback = jnp.diag(jnp.sqrt(jnp.maximum(diag, 0.0)))
    return jnp.where(ok, chol, fallback)


@functools.partial(jit, static_argnames=("n_samples",))
def _exact_samples(key, mean, cov, floor, n_samples):
    chol = _robust_cholesky(cov)
    eps = draws.normal(key, (n_samples, mean.shape[0]), mean.dtype, stream=1)
    g = jnp.max(mean[None, :] + eps @ chol.T, axis=-1)
    floor = jnp.where(jnp.isnan(floor), -jnp.inf, floor)
    return jnp.maximum(g, floor)


def exact_max_samples(key, mean, cov, n_samples: int, floor=-jnp.inf):
    r"""Samples of :math:`g^* = \max_i g_i` from the joint posterior on a grid.

    Draws :math:`g^{(n)} = \mu + L \varepsilon^{(n)}`, :math:`\varepsilon^{(n)} \sim
    N(0, I_M)`, with :math:`L L^\top = \Sigma + jI` (j = 0 if :math:`\Sigma` factors,
    else the smallest of 1e-12, 1e-10, ..., 1 times the mean diagonal that does), and
    returns :math:`\max(\max_i g^{(n)}_i, \text{floor})`. Cost :math:`O(M^3 + N M^2)`:
    meant for grids of hundreds to a few thousand points.

    Args:
        key: a PRNG key.
        mean: [M] posterior mean of g on the grid.
        cov: [M, M] posterior covariance (symmetrised internally; may be singular).
        n_samples: number of samples N (a Python int; static under jit).
        floor: scalar lower clamp; ``-inf`` (the default) for none.

    Returns:
        [N] samples of :math:`g^*`.

    Raises:
        ValueError: on concrete inputs with mismatched shapes, ``n_samples <= 0``,
            a negative diagonal, non-finite values or a non-scalar floor.
    """
    require_x64("calling exact_max_samples")
    n_samples = _check_n_samples(n_samples)
    if jnp.ndim(mean) != 1 or jnp.shape(mean)[0] == 0:
        raise ValueError(f"mean must have shape [M] with M >= 1, got {jnp.shape(mean)}")
    m = jnp.shape(mean)[0]
    if jnp.shape(cov) != (m, m):
        raise ValueError(f"cov must have shape {(m, m)} to match mean, got {jnp.shape(cov)}")
    _check_finite("mean", mean)
    _check_finite("cov", cov)
    if is_concrete(cov):
        d = np.diagonal(np.asarray(cov))
        if np.any(d < _negative_tolerance(d)):
            raise ValueError(
                f"cov must have a non-negative diagonal, got min(diag(cov)) = {d.min():.3g}"
            )
    dtype = jnp.result_type(_as_float(mean), _as_float(cov))
    mean, cov = jnp.asarray(mean, dtype), jnp.asarray(cov, dtype)
    floor = _check_floor(floor, dtype)
    return _exact_samples(key, mean, cov, floor, n_samples)


# ----------------------------------------------------------------------------------------
# Glue: g* for a fitted posterior
# ----------------------------------------------------------------------------------------

GSTAR_METHODS = ("gumbel", "exact")
# g* floor: the best posterior mean of g at an evaluated point plus this many noise sd
FLOOR_NOISE_SD = 5.0


# From this many data rows the Gumbel fit computes exact variances only at the grid points
# that can move the quartiles of the max (can_move_quartiles), bounding the others by
# conditioning on the first PRUNE_BOUND_ROWS rows: the same quartiles to rounding.
PRUNE_FROM_ROWS = 768
PRUNE_BOUND_ROWS = 256
# A point whose value is PRUNE_SD sd below every quartile of the max adds at most
# log Phi(-10) ~ -7.6e-24 to log F: nothing, in float64, for any grid below 1e7 points.
PRUNE_SD = 10.0
_Z_QUARTILE = -0.6744897501960817  # Phi^-1(0.25)


def can_move_quartiles(mean, var_bound):
    """``[M]`` bool: the grid points that can change the quartiles of max_i g(x_i).

    The max is at least any one point's value, so its lower quartile is at least
    ``L = max_i(mu_i + Phi^-1(0.25) s_i)`` for any ``s_i`` at least the sd ``sd_i``.
    A point with ``mu_i + PRUNE_SD s_i < L`` has ``(y - mu_i) / sd_i > PRUNE_SD`` at every y
    from L up, so its factor ``Phi`` of ``F(y)`` is 1 in float64 there; below L the
    bisection's answer (F < 1/4) is the same with or without it. The test does not
    depend on the units of g.

    Args:
        mean: [M] posterior means of g.
        var_bound: [M] upper bounds of the posterior variances.
    """
    sd = jnp.sqrt(jnp.maximum(var_bound, 0.0))
    lower_quartile = jnp.max(mean + _Z_QUARTILE * sd)
    return mean + PRUNE_SD * sd >= lower_quartile


def default_grid_size(dim: int, method: str) -> int:
    """Random grid points: 10,000 d for the Gumbel fit (as in the paper); the exact
    sampler factorises an M x M covariance, so it uses 500 d, at most 2,000."""
    return 10_000 * dim if method == "gumbel" else min(500 * dim, 2_000)


def _floor(post, mu_eval):
    # g* cannot be below the best posterior mean of g at an evaluated point; as in Wang &
    # Jegelka's code the floor sits 5 noise sd above it: a g* equal to the incumbent's
    # mean gives gamma ~ 0 there and a spurious gain for re-sampling the incumbent. The
    # largest noise variance of the model (units of y) sets the sd.
    noise_sd = jnp.sqrt(jnp.max(post.noise)) * post.scaling.y_scale
    return jnp.max(jnp.where(post.mask > 0, mu_eval, -jnp.inf)) + FLOOR_NOISE_SD * noise_sd


def gstar_floor(post, target):
    """The lower clamp of :func:`sample_gstar`'s samples (a scalar, units of y): the best
    posterior mean of g at the evaluated points plus 5 sd of the largest noise variance."""
    require_x64("calling gstar_floor")
    posterior.check_target(post.spec, target)
    mu_eval, _ = moments.target_moments(post, posterior.evaluated_inputs(post), target)
    return _floor(post, mu_eval)


@functools.partial(jit, static_argnames=("n_samples", "method", "n_grid"))
def _sample_gstar(key, post, target, n_samples, method, n_grid):
    sc = post.scaling
    x_eval = posterior.evaluated_inputs(post)
    # the grid is the key's stream 0, the samples' uniforms its stream 1 (mumbo_jax.runtime.draws)
    u = draws.uniform(key, (n_grid, post.x.shape[1]), post.x.dtype, stream=0)
    grid = jnp.concatenate([sc.x_lower + sc.x_width * u, x_eval])
    if method == "gumbel":
        if post.x.shape[0] < PRUNE_FROM_ROWS:
            mean, var = moments.target_moments(post, grid, target)
        else:
            # the bisection runs over the whole grid: the points left with bounds add
            # nothing to it (can_move_quartiles), and trimming them measured no gain
            mean, var = moments.target_moments_where(post, grid, target, can_move_quartiles, PRUNE_BOUND_ROWS)
        return _gumbel_samples(key, mean, var, _floor(post, mean[n_grid:]), n_samples, _N_BISECT_BO)
    mean, cov = moments.target_joint(post, grid, target)
    return _exact_samples(key, mean, cov, _floor(post, mean[n_grid:]), n_samples)


def sample_gstar(key, post, target, n_samples: int = 10, method: str = "gumbel", n_grid: int | None = None):
    """N samples of the max value g* of the target under a fitted posterior.

    The grid is ``n_grid`` uniform random points in the search box (default
    :func:`default_grid_size`) plus every evaluated x; samples are clamped to at least
    :func:`gstar_floor`, the best posterior mean of g at the evaluated points plus 5 noise
    standard deviations. From :data:`PRUNE_FROM_ROWS` data rows the Gumbel fit computes
    exact variances only at the grid points that can move the quartiles of the max
    (:func:`can_move_quartiles`, given variance bounds from the first rows of the data,
    :func:`mumbo_jax.gp.moments.target_moments_where`): the same quartiles to rounding,
    at about half the cost at 1000 rows.

    Args:
        key: PRNG key.
        post: a :class:`mumbo_jax.gp.posterior.Posterior`.
        target: a :class:`mumbo_jax.gp.posterior.Target`.
        n_samples: N (static).
        method: ``"gumbel"`` (Wang & Jegelka's approximation) or ``"exact"`` (maxima of
            joint posterior samples on the grid).
        n_grid: random grid size (static).

    Returns:
        ``[N]`` samples of g*, in the units of y.
    """
    require_x64("calling sample_gstar")
    if method not in GSTAR_METHODS:
        raise ValueError(f"unknown g* method {method!r}; allowed: {GSTAR_METHODS}")
    n_samples = _check_n_samples(n_samples)
    if n_grid is None:
        n_grid = default_grid_size(post.spec.dim, method)
    if int(n_grid) != n_grid or n_grid < 1:
        raise ValueError(f"n_grid must be a positive integer, got {n_grid}")
    posterior.check_target(post.spec, target)
    return _sample_gstar(key, post, target, n_samples, method, int(n_grid))
