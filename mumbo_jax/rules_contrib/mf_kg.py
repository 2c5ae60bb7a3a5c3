r"""The multi-fidelity knowledge gradient, discretised: the rule ``mf_kg``.

MF-KG (Wu, Toscano-Palmerin, Frazier & Wilson, UAI 2019; BoTorch's
``qMultiFidelityKnowledgeGradient``) values an observation y = f(x, z) + eps by how much
it is expected to raise the best posterior mean of the target g, per unit cost:

    KG(x, z) = E_y[ max_{x'} mu_g^{new}(x') ] - max_{x'} mu_g(x'),
    decision: argmax_{(x, z)} KG(x, z) / cost(x, z).

The inner maximum runs over a finite set A of x' (the discretised KG of Frazier, Powell
& Dayanik 2009 and Scott, Frazier & Powell 2011), fixed for one decision: the
``n_best`` evaluated x with the best posterior means of g, ``n_random`` uniform points of
the box, and the candidate's own x (so A always holds the point being measured). Over
a finite set the expectation is exact in closed form. Conditioning on y moves the
posterior mean linearly in the standardised observation Z = (y - mu_y) / s_y ~ N(0, 1):

    mu_g^{new}(x'_i) = a_i + b_i Z,   a_i = mu_g(x'_i),
    b_i = Cov(g(x'_i), y(x, z)) / s_y,   s_y^2 = Var f(x, z) + noise(z),

so E[max_i (a_i + b_i Z)] is the Gaussian expectation of the upper envelope of L = |A|
lines. Line i is the maximum exactly on the interval (l_i, u_i),

    c_ij = (a_i - a_j) / (b_j - b_i)       (where lines i and j cross),
    l_i = max_{j: b_j < b_i} c_ij,   u_i = min_{j: b_j > b_i} c_ij,

empty when l_i >= u_i or when a line of the same slope lies above it (ties: the lower
index stays). With i0 the line of the largest a (the maximum at Z = 0) and
E[Z 1{l < Z < u}] = phi(l) - phi(u),

    KG = sum_i [ (a_i - a_i0) (Phi(u_i) - Phi(l_i)) + (b_i - b_i0) (phi(l_i) - phi(u_i)) ],

a sum of non-negative terms (line i lies above line i0 on its own interval), so KG >= 0
holds term by term. All L x L crossings are formed at once (no sort, no sequential
stack), which vectorises over candidates and differentiates almost everywhere; the
candidates are taken :data:`CHUNK` at a time to bound memory at CHUNK x L x L.

Cost per candidate: O(n L) for the cross-covariances and O(L^2) for the envelope, n
the number of observations. Knobs (:attr:`MF_KG.options`): ``n_best`` and ``n_random``,
the size of A (L = n_best + n_random + 1).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import ndtr

from mumbo_jax.acquisition import fantasy
from mumbo_jax.bo.incumbent import best_inputs
from mumbo_jax.bo.rules import Context, Rule, option, register
from mumbo_jax.gp import marginal, models, moments, posterior
from mumbo_jax.runtime.xla_options import jit

__all__ = ["discrete_kg", "DiscreteSet", "discrete_set", "mf_kg_gain", "check_options", "MF_KG", "CHUNK"]

CHUNK = 256  # candidates per block of the envelope computation
_Z_MAX = 40.0  # |Z| beyond this carries no Gaussian mass in float64
_SLOPE_RTOL = 1e-9  # slopes closer than this (relative to the largest) count as equal
_TINY = 1e-300
_INV_SQRT_2PI = 0.3989422804014327


def _pdf(t):
    return _INV_SQRT_2PI * jnp.exp(-0.5 * t * t)


def _mass(lo, hi):
    """Phi(hi) - Phi(lo) for lo <= hi, from the nearer tail (no cancellation of two
    numbers near 1)."""
    upper = lo > 0
    return jnp.where(upper, ndtr(-lo) - ndtr(-hi), ndtr(hi) - ndtr(lo))


def discrete_kg(a, b):
    r"""E[max_i (a_i + b_i Z)] - max_i a_i for Z ~ N(0, 1): the knowledge gradient over a
    finite set (module docstring), exact.

    Args:
        a: ``[..., L]`` current posterior means; b: ``[..., L]`` their sensitivities to
            the standardised observation (any sign).

    Returns:
        ``[...]`` >= 0; 0 when every b is equal (the observation cannot change which
        point is best). Finite, and finite gradients, for finite inputs.
    """
    return _discrete_kg_jit(jnp.asarray(a, float), jnp.asarray(b, float))


@jit
def _discrete_kg_jit(a, b):
    return jnp.vectorize(_discrete_kg, signature="(l),(l)->()")(a, b)


def _discrete_kg(a, b):
    a = a - jnp.max(a)
    n = a.shape[0]
    idx = jnp.arange(n)
    tol = jax.lax.stop_gradient(_SLOPE_RTOL * jnp.max(jnp.abs(b)) + _TINY)
    db = b[None, :] - b[:, None]  # [i, j]: b_j - b_i
    da = a[:, None] - a[None, :]  # [i, j]: a_i - a_j
    same = jnp.abs(db) <= tol
    above = (a[None, :] > a[:, None]) | ((a[None, :] == a[:, None]) & (idx[None, :] < idx[:, None]))
    dominated = jnp.any(same & above & (idx[None, :] != idx[:, None]), axis=1)
    c = da / jnp.where(same, 1.0, db)
    hi = jnp.min(jnp.where(db > tol, c, jnp.inf), axis=1)
    lo = jnp.max(jnp.where(db < -tol, c, -jnp.inf), axis=1)
    hi = jnp.clip(hi, -_Z_MAX, _Z_MAX)
    lo = jnp.clip(lo, -_Z_MAX, _Z_MAX)
    active = (~dominated) & (lo < hi)
    lo = jnp.where(active, lo, 0.0)  # inactive lines: an empty interval, finite values
    hi = jnp.where(active, hi, 0.0)
    b0 = b[jnp.argmax(a)]
    term = a * _mass(lo, hi) + (b - b0) * (_pdf(lo) - _pdf(hi))
    return jnp.sum(jnp.where(active, jnp.maximum(term, 0.0), 0.0))


class DiscreteSet(NamedTuple):
    """The fixed set A of one decision, with what every candidate shares (standardised
    units of the posterior; a stacked posterior gives every field a leading sample axis).

    Attributes:
        xu: ``[P, d]`` the points on the unit cube.
        mean: ``[P]`` posterior mean of g there.
        v: ``[n, P]`` whitened cross-covariances L^-1 k(X, g(A)).
    """

    xu: jax.Array
    mean: jax.Array
    v: jax.Array


def discrete_set(post: posterior.Posterior, target: posterior.Target, x) -> DiscreteSet:
    """:class:`DiscreteSet` of the points ``x [P, d]`` (box units) under ``post``."""

    def one(p):
        kernel = models.build_kernel(p.spec, p.params)
        xu, _ = models.scale_inputs(p.spec, p.scaling, x, jnp.zeros(x.shape[0]))
        mean, _, v, _, _ = moments.target_part(p, kernel, xu, target)
        return DiscreteSet(xu, mean, v)

    return jax.vmap(one)(post) if marginal.is_stacked(post) else one(post)


def _kg_standardised(post, target, dset: DiscreteSet, x, z):
    """KG ``[M]`` in standardised units for one posterior (not stacked)."""
    kernel = models.build_kernel(post.spec, post.params)
    fac = fantasy.candidate_factors(post, x, z, target)
    zt, w = fac.zt, fac.w
    prior = sum(w[j] * kernel((dset.xu, jnp.full(dset.xu.shape[0], zt[j])), (fac.xu, fac.zu))
                for j in range(zt.shape[0]))  # [P, M]: Cov(g(A), f(x, z)) before the data
    cov_a = prior - dset.v.T @ fac.vf  # [P, M]
    s_y = jnp.sqrt(fac.var_y)
    a = jnp.concatenate([jnp.broadcast_to(dset.mean, (x.shape[0], dset.mean.shape[0])), fac.mu_g[:, None]], axis=1)
    b = jnp.concatenate([cov_a.T, fac.cov[:, None]], axis=1) / s_y[:, None]
    return jnp.vectorize(_discrete_kg, signature="(l),(l)->()")(a, b)


def _kg_chunked(post, target, dset, x, z):
    m = x.shape[0]
    if m <= CHUNK:
        return _kg_standardised(post, target, dset, x, z)
    blocks = -(-m // CHUNK)
    pad = blocks * CHUNK - m
    xs = jnp.concatenate([x, jnp.broadcast_to(x[:1], (pad,) + x.shape[1:])]).reshape((blocks, CHUNK) + x.shape[1:])
    zs = jnp.concatenate([z, jnp.broadcast_to(z[:1], (pad,))]).reshape(blocks, CHUNK)
    out = jax.lax.map(lambda xz: _kg_standardised(post, target, dset, xz[0], xz[1]), (xs, zs))
    return out.reshape(-1)[:m]


def mf_kg_gain(post: posterior.Posterior, target: posterior.Target, dset: DiscreteSet, x, z):
    r"""The discretised knowledge gradient of observing y at each candidate (x, z).

    Args:
        post: the posterior (a stacked posterior averages the per-sample KG).
        target: what g is (one fidelity, a value of a continuous one, or FASTCV's mean).
        dset: the set A (:func:`discrete_set`), shared by every candidate.
        x: ``[M, d]`` inputs in the search box; z: ``[M]`` fidelities.

    Returns:
        ``[M]`` E[max_{A u {x}} mu_g^{new}] - max_{A u {x}} mu_g, units of y, >= 0.
    """
    x = jnp.asarray(x, float)
    return _mf_kg_gain(post, target, dset, x, jnp.broadcast_to(jnp.asarray(z), (x.shape[0],)))


@jit
def _mf_kg_gain(post, target, dset, x, z):
    def one(p, d):
        return _kg_chunked(p, target, d, x, z) * p.scaling.y_scale

    return marginal.mean_over_samples(one, post, dset)


def check_options(opts):
    """ValueError unless the knobs ``n_best`` and ``n_random`` are integers >= 0 with a
    sum >= 1 (checked when a decision builds the score)."""
    n_best, n_random = opts["n_best"], opts["n_random"]
    for name, v in (("n_best", n_best), ("n_random", n_random)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"mf_kg option {name} must be an integer >= 0, got {v!r}")
    if n_best + n_random < 1:
        raise ValueError("mf_kg needs at least one point in its discrete set (n_best + n_random >= 1)")


def _acquisition(ctx: Context):
    opts = ctx.options
    check_options(opts)
    bounds = jnp.asarray(ctx.task.spec.bounds, float)
    lo, hi = bounds[:, 0], bounds[:, 1]
    u = jax.random.uniform(jax.random.fold_in(ctx.key, 23), (int(opts["n_random"]), lo.shape[0]), lo.dtype)
    points = [lo + (hi - lo) * u]
    if int(opts["n_best"]) > 0:
        points.insert(0, best_inputs(ctx.post, ctx.task.target, int(opts["n_best"])))
    dset = discrete_set(ctx.post, ctx.task.target, jnp.concatenate(points))
    return jax.tree_util.Partial(mf_kg_gain, ctx.post, ctx.task.target, dset)


MF_KG = register(Rule(
    "mf_kg", _acquisition, space="all",
    options={"n_best": option(8, "Evaluated x with the best posterior means of g in the discrete set A.", low=0,
                              cap=10_000),
             "n_random": option(64, "Uniform points of the box in the discrete set A (with n_best, at least one "
                                "point).", low=0, cap=100_000)},
    summary="the multi-fidelity knowledge gradient over a discrete set per unit cost, over X x Z "
            "(Wu et al. 2019)",
))
