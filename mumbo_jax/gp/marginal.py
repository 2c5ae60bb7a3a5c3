r"""Hyper-parameter marginalisation: NUTS samples and the mixture they define.

A point estimate (MAP) of the hyper-parameters theta makes the ICM overconfident that a
cheap fidelity equals the target (the target-specific variance fits to ~0).
FABOLAS-style marginalisation replaces it by S samples theta_s ~ p(theta | D), drawn by
BlackJAX's NUTS (Stan's window adaptation of the step size and a diagonal mass matrix,
then NUTS draws), started at the MAP:

    p(f | D) ~= (1/S) sum_s p(f | D, theta_s).

A *stacked* posterior is a :class:`mumbo_jax.gp.posterior.Posterior` whose array leaves
carry a leading sample axis ``[S, ...]`` (``jax.vmap`` of the conditioning; the data
arrays are the same in every sample). Acquisitions are averaged over the samples
(MUMBO's gain of the mixture is approximated by the mean of the per-sample gains, as
FABOLAS and Emukit's MCMC acquisitions do); the moments of g are those of the equally
weighted mixture:

    mean = (1/S) sum_s mu_s,   var = (1/S) sum_s var_s + Var_s(mu_s).

Everything here is pure and traceable; sample 0 is the MAP (it warm-starts the next
MAP refit).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

from mumbo_jax.gp import fitting, moments, posterior
from mumbo_jax.gp.models import ModelSpec, Scaling
from mumbo_jax.gp.precision import require_x64

__all__ = ["WARMUP", "MAX_DOUBLINGS", "nuts_samples", "is_stacked", "first", "stack", "n_samples", "map_params", "target_moments", "target_joint",
           "mean_over_samples"]

WARMUP = 50  # NUTS window-adaptation steps (and the BO loops\' default, MCMCSettings.warmup)
MAX_DOUBLINGS = 4  # NUTS tree depth (MCMCSettings.max_doublings)


def nuts_samples(spec: ModelSpec, scaling: Scaling, x, z, y, mask, start: dict, key, n_samples: int,
                 n_warmup: int = WARMUP,
                 max_doublings: int = MAX_DOUBLINGS) -> dict:
    """``n_samples`` hyper-parameter sets: ``start`` (the MAP) then ``n_samples - 1``
    NUTS draws from p(theta | D) ∝ exp(-neg_log_marginal) (likelihood times the model's
    log-normal priors, :func:`mumbo_jax.gp.fitting.neg_log_marginal`).

    ``n_warmup`` steps of window adaptation from ``start``, then the draws, each a NUTS
    tree of at most ``2 ** max_doublings`` leapfrog steps. A draw that is not finite is
    replaced by ``start`` (never NaN downstream).

    Args:
        x ``[B, d]``, z ``[B]``, y ``[B]``, mask ``[B]``: the (padded) data, raw units.
        start: the MAP hyper-parameters (unconstrained dict).

    Returns:
        the params dict with a leading axis ``[n_samples, ...]`` on every leaf.
    """
    import blackjax  # imported here: only this path needs it

    require_x64("calling marginal.nuts_samples")
    theta0, unravel = ravel_pytree(start)

    def logdensity(theta):
        v = -fitting.neg_log_marginal(spec, unravel(theta), scaling, x, z, y, mask)
        return jnp.where(jnp.isfinite(v), v, -jnp.inf)

    k_warm, k_draw = jax.random.split(key)
    warmup = blackjax.window_adaptation(blackjax.nuts, logdensity, max_num_doublings=max_doublings)
    (state, tuned), _ = warmup.run(k_warm, theta0, num_steps=n_warmup)
    kernel = blackjax.nuts(logdensity, **tuned)

    def one(state, k):
        state, _ = kernel.step(k, state)
        return state, state.position

    _, draws = jax.lax.scan(one, state, jax.random.split(k_draw, n_samples - 1))
    draws = jnp.concatenate([theta0[None], draws])
    ok = jnp.all(jnp.isfinite(draws), axis=1, keepdims=True)
    return jax.vmap(unravel)(jnp.where(ok, draws, theta0[None]))


def is_stacked(post: posterior.Posterior) -> bool:
    """Whether ``post`` holds a leading sample axis (static: read from the shapes)."""
    return post.alpha.ndim == 2


def first(post: posterior.Posterior) -> posterior.Posterior:
    """Sample 0 of a stacked posterior (the MAP); ``post`` itself otherwise. For what
    every sample shares: the data, the mask, the scaling of x."""
    return jax.tree_util.tree_map(lambda a: a[0], post) if is_stacked(post) else post


def stack(params: dict, n_samples: int) -> dict:
    """``params`` tiled to ``[n_samples, ...]`` (a MAP start before any draw)."""
    return jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (n_samples,) + jnp.shape(a)), params)


def n_samples(params: dict) -> int:
    """How many hyper-parameter samples ``params`` stacks (0 for one set). Read from
    ``log_noise``, a vector ``[n_noise]`` in every model."""
    noise = params["log_noise"]
    return int(noise.shape[0]) if jnp.ndim(noise) > 1 else 0


def map_params(params: dict) -> dict:
    """Sample 0 (the MAP) of stacked hyper-parameters; ``params`` itself when one set."""
    return jax.tree_util.tree_map(lambda a: a[0], params) if n_samples(params) else params


def target_moments(post: posterior.Posterior, x, target: posterior.Target):
    """Mean and variance ``[M]`` of g at ``x [M, d]``: the posterior's, or the mixture's
    of a stacked posterior."""
    if not is_stacked(post):
        return moments.target_moments(post, x, target)
    mu, var = jax.vmap(lambda p: moments.target_moments(p, x, target))(post)
    return jnp.mean(mu, axis=0), jnp.mean(var, axis=0) + jnp.var(mu, axis=0)


def target_joint(post: posterior.Posterior, x, target: posterior.Target):
    """Joint mean ``[M]`` and covariance ``[M, M]`` of g at ``x [M, d]`` (the mixture's
    for a stacked posterior: mean covariance plus the covariance of the means)."""
    if not is_stacked(post):
        return moments.target_joint(post, x, target)
    mu, cov = jax.vmap(lambda p: moments.target_joint(p, x, target))(post)
    m = jnp.mean(mu, axis=0)
    dev = mu - m
    return m, jnp.mean(cov, axis=0) + dev.T @ dev / mu.shape[0]


def mean_over_samples(fn, post: posterior.Posterior, *args):
    """``fn(post, *args)`` averaged over the samples of a stacked posterior (the
    leading axis of every arg in ``args`` is the sample axis then); ``fn`` itself
    otherwise."""
    if not is_stacked(post):
        return fn(post, *args)
    return jnp.mean(jax.vmap(fn)(post, *args), axis=0)
