"""Hyper-parameters by (weakly regularised) maximum marginal likelihood with optax.

:func:`fit_params` runs L-BFGS (:mod:`mumbo_jax.gp.lbfgs`: optax's L-BFGS direction and a
strong-Wolfe line search, the objective compiled once) from several starts in one
compiled call: the deterministic defaults plus random perturbations, one after
another on CPU (``lax.scan``; a start equal to the previous one reuses its result), all
at once on an accelerator (``vmap``: one batched Cholesky per iteration instead of eight
launches; the vmapped ``while_loop`` runs every lane until the slowest stops, which on
one CPU core cost more than it saved: 100 Hartmann-3 points, 3 fidelities, 8 restarts,
lax.map 0.75 s, vmap 3.4 s). The restart with the lowest objective is kept.

The objective (:func:`neg_log_marginal`) takes the model's Gram matrix
(:meth:`mumbo_jax.gp.modelbase.ModelSpec.gram`: built densely for the ICM model,
:func:`matern52_gram`) and differentiates through one Cholesky factor in closed form
(the inverses by matrix products, :mod:`mumbo_jax.gp.linalg`).
:func:`neg_log_marginal_reference` is the tinygp formulation it is tested against.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.gp import kernels, linalg, models, posterior
from mumbo_jax.gp.lbfgs import minimize
from mumbo_jax.gp.kernels import matern52_gram
from mumbo_jax.gp.models import ModelSpec, Scaling
from mumbo_jax.gp.precision import require_x64
from mumbo_jax.runtime.xla_options import jit

__all__ = ["RESTARTS", "MAX_ITER", "WARM_STEP", "neg_log_marginal", "neg_log_marginal_reference", "gaussian_nll", "matern52_gram", "lbfgs",
           "starts_batching", "fit_from", "restart_inits", "fit_params", "fit"]

RESTARTS = 2  # L-BFGS starts of a fit (and the BO loops\' default, FitSettings.restarts)
MAX_ITER = 50  # L-BFGS iterations per start (FitSettings.max_iter)

_LOG_2PI = float(np.log(2.0 * np.pi))


@jax.custom_vjp
def gaussian_nll(cov, r):
    """-log N(r | 0, cov) through one Cholesky factor; ``inf`` (not NaN) if the
    factorisation fails (``cov`` not positive definite). Gradient in closed form,
    d/dcov = (cov^-1 - a a^T) / 2 and d/dr = a with a = cov^-1 r: one triangular
    inverse instead of autodiff through the Cholesky (both inverses by matrix
    products, :mod:`mumbo_jax.gp.linalg`). The objective of :func:`neg_log_marginal`.

    Args:
        cov: ``[n, n]`` symmetric positive definite covariance.
        r: ``[n]`` residuals.

    Returns:
        scalar, the negative log density in nats.
    """
    return _gaussian_nll_fwd(cov, r)[0]


def _gaussian_nll_fwd(cov, r):
    chol = linalg.cholesky_symmetric(cov)  # no column-major copies of the steps building cov
    chol_inv = linalg.tri_inv(chol)
    w = chol_inv @ r
    nll = 0.5 * jnp.dot(w, w) + jnp.sum(jnp.log(jnp.diag(chol))) + 0.5 * _LOG_2PI * r.shape[0]
    nll = jnp.where(jnp.isnan(nll), jnp.inf, nll)
    return nll, (chol_inv, w)


def _gaussian_nll_bwd(res, g):
    chol_inv, w = res
    alpha = w @ chol_inv  # chol_inv^T w without a transposed copy of chol_inv
    cov_inv = linalg.lower_gram(chol_inv)
    return g * 0.5 * (cov_inv - jnp.outer(alpha, alpha)), g * alpha


gaussian_nll.defvjp(_gaussian_nll_fwd, _gaussian_nll_bwd)


def neg_log_marginal(spec: ModelSpec, params: dict, scaling: Scaling, x, z, y, mask) -> jax.Array:
    """Objective minimised by :func:`fit_params`: -(log p(y | params) + log prior).

    ``y`` is in raw units; the likelihood is that of the standardised data (a constant
    shift for fixed scaling). Padded rows (mask 0) contribute nothing. The value of
    :func:`neg_log_marginal_reference` (tinygp) with a cheaper gradient; ``inf`` where
    the covariance does not factorise.
    """
    require_x64("fitting a GP")  # at trace time only: every fit (fit_from too) comes here
    xu, zu = models.scale_inputs(spec, scaling, x, z)
    noise = models.noise_variances(spec, params, scaling.y_scale)
    cov = posterior.covariance(spec, params, xu, zu, mask, noise)
    nll = gaussian_nll(cov, posterior.standardise(scaling, y, mask))
    nll = nll - 0.5 * _LOG_2PI * jnp.sum(1.0 - mask)  # remove the padding's constant
    return nll - models.log_prior(spec, params)


def neg_log_marginal_reference(spec: ModelSpec, params: dict, scaling: Scaling, x, z, y, mask) -> jax.Array:
    """:func:`neg_log_marginal` through tinygp's ``GaussianProcess`` (autodiff
    gradient): the reference the fast objective is tested against."""
    require_x64("fitting a GP")
    xu, zu = models.scale_inputs(spec, scaling, x, z)
    noise = models.noise_variances(spec, params, scaling.y_scale)
    gp = posterior.masked_gp(spec, params, xu, zu, mask, noise)
    log_lik = gp.log_probability(posterior.standardise(scaling, y, mask))
    log_lik = log_lik + 0.5 * _LOG_2PI * jnp.sum(1.0 - mask)  # remove the padding's constant
    return -(log_lik + models.log_prior(spec, params))


# The length of a warm-only refit's first L-BFGS step in the log hyper-parameters (fit_from's
# step_scale): from a converged fit, one new point among 1000 moves them by less. With
# a unit first step a zoom line search (optax's) took 15 evaluations to the first iterate at
# 1000 observations, with 0.01 three (docs/performance.md, Refits at large n).
WARM_STEP = 0.01


lbfgs = minimize  # the fits' L-BFGS (mumbo_jax.gp.lbfgs: the objective compiled once)


def _run_starts(run, inits):
    """``run`` (one L-BFGS start) over the stacked ``inits`` one after another
    (``lax.scan``; ``run`` is traced once); a start equal to the one before it reuses
    that start's result (the same deterministic run) instead of running again: a fresh
    fit's previous hyper-parameters are the defaults, its second start
    (:func:`restart_inits`). Under vmap the branch becomes a select and every start
    runs, as before."""
    first = jax.tree_util.tree_map(lambda a: a[0], inits)
    none = jax.tree_util.tree_map(lambda a: jnp.full_like(a, jnp.nan), first)  # equal to no start
    blank = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), jax.eval_shape(run, first))

    def step(carry, p):
        prev, out = carry
        same = jax.tree_util.tree_reduce(jnp.logical_and, jax.tree_util.tree_map(
            lambda a, b: jnp.all(a == b), p, prev))
        out = jax.lax.cond(same, lambda _: out, run, p)
        return (p, out), out

    return jax.lax.scan(step, (none, blank), inits)[1]


def starts_batching() -> str:
    """How :func:`fit_from` runs its starts when not told: ``"scan"`` (one after another)
    on CPU, ``"vmap"`` (in lock-step) on an accelerator, read from the default backend
    at trace time."""
    return "scan" if jax.default_backend() == "cpu" else "vmap"


def fit_from(spec: ModelSpec, scaling: Scaling, x, z, y, mask, inits: dict, max_iter: int, tol: float,
             ftol: float = 0.0, batching: str | None = None, step_scale=None):
    """Run L-BFGS from each of the stacked starts ``inits`` (leading axis R) and keep
    the best. Traceable (no validation): the building block of :func:`fit_params` and of
    the BO loops' warm-started refits. ``batching``: ``"scan"`` (one start after another;
    a start equal to the one before it is not run twice), ``"vmap"`` (all at once), or
    None (:func:`starts_batching`: scan on CPU, vmap on accelerators). Both give the
    same optimum from each start, to rounding (tests/test_linalg.py). ``max_iter`` may be
    a traced scalar (the BO loops' warm-only refits cap it per step in one program).
    ``step_scale`` s (None: 1; may be traced): below 1, each start p0 runs in the
    coordinates u of ``p0 + s u`` from u = 0, so that L-BFGS's first step, a unit step
    along the normalised gradient, is s long (a warm start is near its optimum, and a unit
    first step made the line search shrink it for a dozen evaluations); later steps are
    the same in either coordinates, and the gradient test is scaled with them. s = 1 is
    the plain run, to the last bit.

    Returns:
        ``(params, loss, losses [R])``.
    """
    objective = lambda p: neg_log_marginal(spec, p, scaling, x, z, y, mask)
    batching = starts_batching() if batching is None else batching
    if step_scale is None:
        run = lambda p: lbfgs(objective, p, max_iter, tol, ftol)
    else:
        def run(p):
            # s = 1: base 0 and u = p, exactly the plain run (0 + 1 * u == u); s < 1: base p
            anchored = step_scale != 1.0
            base = jax.tree_util.tree_map(lambda a: jnp.where(anchored, a, 0.0), p)
            start = jax.tree_util.tree_map(lambda a: jnp.where(anchored, 0.0, a), p)
            at = lambda u: jax.tree_util.tree_map(lambda b, v: b + step_scale * v, base, u)
            u, value = lbfgs(lambda u: objective(at(u)), start, max_iter, tol * step_scale, ftol)
            return at(u), value
    if batching == "scan":
        params, losses = _run_starts(run, inits)
    elif batching == "vmap":
        params, losses = jax.vmap(run)(inits)
    else:
        raise ValueError(f"batching must be 'scan', 'vmap' or None, got {batching!r}")
    n_starts = losses.shape[0]
    finite = jnp.isfinite(losses) & jax.tree_util.tree_reduce(
        jnp.logical_and,
        jax.tree_util.tree_map(lambda a: jnp.all(jnp.isfinite(a.reshape(n_starts, -1)), axis=1), params),
    )
    losses = jnp.where(finite, losses, jnp.inf)
    best = jnp.argmin(losses)
    best_params = jax.tree_util.tree_map(lambda a: a[best], params)
    # if every start failed, fall back to the defaults rather than return NaN
    ok = jnp.isfinite(losses[best])
    best_params = jax.tree_util.tree_map(
        lambda b, d: jnp.where(ok, b, d), best_params, models.default_params(spec)
    )
    return best_params, losses[best], losses


def restart_inits(spec: ModelSpec, key, n_restarts: int, first: dict | None = None) -> dict:
    """Stacked starts ``[n_restarts, ...]``: ``first`` (or the defaults) then random
    perturbations; when ``first`` is given the defaults come second (even when ``first``
    equals them: replacing that duplicate by a random start was measured to hurt MUMBO
    on Forrester, median final regret over 12 seeds 0.05 against 0.001). Traceable."""
    fixed = [models.default_params(spec)] if first is None else [first, models.default_params(spec)]
    fixed = [jax.tree_util.tree_map(jnp.asarray, p) for p in fixed[:n_restarts]]
    # start i is random with key i of the split; only those draws are traced (each draw is
    # compiled code, and the default refit's two starts are both fixed)
    random = jax.vmap(lambda k: models.random_params(spec, k))(jax.random.split(key, n_restarts)[len(fixed):])
    dtypes = jax.tree_util.tree_map(lambda r: r.dtype, random)
    fixed = [jax.tree_util.tree_map(lambda v, t: v.astype(t)[None], p, dtypes) for p in fixed]
    return jax.tree_util.tree_map(lambda *parts: jnp.concatenate(parts), *fixed, random)


@functools.partial(jit, static_argnames=("spec", "n_restarts", "max_iter", "batching"))
def _fit(spec, scaling, x, z, y, mask, key, n_restarts, max_iter, tol, batching=None):
    inits = restart_inits(spec, key, n_restarts)
    return fit_from(spec, scaling, x, z, y, mask, inits, max_iter, tol, batching=batching)


def fit_params(spec: ModelSpec, x, z, y, key, mask=None, n_restarts: int = RESTARTS,
               max_iter: int = MAX_ITER,
               tol: float = 1e-5, scaling: Scaling | None = None, batching: str | None = None):
    """Fit hyper-parameters by maximum marginal likelihood, best of ``n_restarts``.

    Args:
        spec: the model; x ``[n, d]``, z ``[n]``, y ``[n]`` the data (raw units).
        key: PRNG key for the random restarts.
        mask: optional ``[n]`` 0/1 padding mask.
        n_restarts: starts (the first is the deterministic default); default
            :class:`mumbo_jax.bo.settings.FitSettings`' (the BO loops').
        max_iter, tol: L-BFGS iteration cap and gradient-norm tolerance per start.
        batching: how the starts run (:func:`fit_from`; None: scan on CPU, vmap on
            accelerators).

    Returns:
        ``(params, loss, all_losses)``: the best params dict, its objective value
        (:func:`neg_log_marginal`), and every restart's final objective ``[n_restarts]``.
    """
    require_x64("calling fitting.fit_params")
    if int(n_restarts) != n_restarts or n_restarts < 1:
        raise ValueError(f"n_restarts must be a positive integer, got {n_restarts}")
    x, z, y, mask = models.check_data(spec, x, z, y, mask)
    if scaling is None:
        scaling = models.make_scaling(spec, y, mask)
    return _fit(spec, scaling, x, z, y, mask, key, int(n_restarts), int(max_iter), tol, batching)


def fit(spec: ModelSpec, x, z, y, key, mask=None, n_restarts: int = RESTARTS,
        max_iter: int = MAX_ITER,
        tol: float = 1e-5) -> posterior.Posterior:
    """Fit hyper-parameters (see :func:`fit_params`) and condition: a ready posterior."""
    require_x64("calling fitting.fit")
    x, z, y, mask = models.check_data(spec, x, z, y, mask)
    models.check_in_box(spec, x, mask)
    scaling = models.make_scaling(spec, y, mask)
    params, _, _ = fit_params(spec, x, z, y, key, mask, n_restarts, max_iter, tol, scaling)
    return posterior.condition(spec, params, x, z, y, mask, scaling)
