"""A learned evaluation-cost model: a GP on log wall-clock seconds over (x, z).

FABOLAS (Klein et al. 2017) models the log cost of training with a degenerate basis
kernel over the fidelity times a Matern-5/2 kernel over the hyper-parameters:

    log c(x, z) ~ GP(m, k_X(x, x') phi_c(z)^T S phi_c(z') + noise),

* continuous fidelity: phi_c(z) = (1, z) with z scaled to [0, 1]: for each x, log c is
  linear in z with an intercept and slope that vary smoothly with x (a cost polynomial
  in the data size when z is a log data fraction, as in the study of
  ``experiments/fabolas_svm.py``); the linear basis extrapolates beyond the observed
  fidelities instead of reverting to the mean;
* discrete fidelities/tasks: phi_c(z) = one-hot(z), i.e. an intrinsic coregionalisation
  k_X(x, x') S[z, z'] with a full-rank S (each fidelity its own cost level, shared
  structure in x).

S = L L^T (L lower triangular), k_X is the library's ARD Matern-5/2
(:func:`mumbo_jax.gp.kernels.matern52_ard`), log costs are standardised, and the
hyper-parameters are fitted by weakly regularised maximum marginal likelihood with the
library's optax L-BFGS driver from several starts (``lax.map``). The library's model
kinds (:mod:`mumbo_jax.gp.models`) have no linear basis over z, so the kernel lives here;
fitting reuses :mod:`mumbo_jax.gp.fitting`'s optimiser and the prediction the
factorise-once pattern of :mod:`mumbo_jax.gp.posterior`.

Prediction: the GP gives log c ~ N(mu, v). :func:`predict_cost` returns the median
exp(mu) (``prediction="median"``, as FABOLAS divides by exp of the predicted log cost)
or the log-normal mean exp(mu + v / 2) (``prediction="mean"``).

Plugging it into a strategy: :func:`cost_function` gives a traceable ``c(x, z)`` that
:func:`mumbo_jax.bo.strategies.propose` (argument ``cost``) divides the acquisition by
inside the maximiser; :class:`mumbo_jax.bo.loop.AskTell` (argument ``cost_model``) refits
it on the told costs before each proposal.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import solve_triangular
from tinygp import GaussianProcess
from tinygp import kernels as tk

from mumbo_jax.gp import fitting, kernels, models, posterior

PREDICTIONS = ("median", "mean")
_VAR_FLOOR = 1e-12


@dataclasses.dataclass(frozen=True)
class CostModel:
    """Static description of a cost GP (hashable: a jit static argument).

    Attributes:
        bounds: ``d`` pairs ``(lower, upper)``: the search box of x.
        fidelity_bounds: ``(lower, upper)`` of a continuous fidelity, or ``None``.
        n_fidelities: number of discrete fidelities/tasks, or ``None``.
        n_restarts: L-BFGS starts per fit (defaults first, then random perturbations).
        max_iter: L-BFGS iterations per start.
        prediction: ``"median"`` (exp(mu)) or ``"mean"`` (exp(mu + v/2)).
        noise_floor: lower bound of the noise variance of standardised log cost.
    """

    bounds: tuple
    fidelity_bounds: tuple | None = None
    n_fidelities: int | None = None
    n_restarts: int = 3
    max_iter: int = 100
    prediction: str = "median"
    noise_floor: float = 1e-4

    @property
    def dim(self) -> int:
        return len(self.bounds)

    @property
    def discrete(self) -> bool:
        return self.n_fidelities is not None

    @property
    def n_basis(self) -> int:
        return self.n_fidelities if self.discrete else 2


def _check_common(bounds, n_restarts, max_iter, prediction):
    checked = models.check_bounds(bounds)  # the GP models' own check of the search box
    for name, v in (("n_restarts", n_restarts), ("max_iter", max_iter)):
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if prediction not in PREDICTIONS:
        raise ValueError(f"prediction must be one of {PREDICTIONS}, got {prediction!r}")
    return checked


def continuous_cost_model(bounds, fidelity_bounds, n_restarts: int = 3, max_iter: int = 100,
                          prediction: str = "median") -> CostModel:
    """Cost GP for a continuous fidelity in ``fidelity_bounds``: basis (1, z)."""
    b = _check_common(bounds, n_restarts, max_iter, prediction)
    zb = np.asarray(fidelity_bounds, dtype=float)
    if zb.shape != (2,) or not np.all(np.isfinite(zb)) or not zb[0] < zb[1]:
        raise ValueError(f"fidelity_bounds must be (lower, upper) with lower < upper, got {fidelity_bounds}")
    return CostModel(b, (float(zb[0]), float(zb[1])), None, int(n_restarts), int(max_iter), prediction)


def discrete_cost_model(bounds, n_fidelities: int, n_restarts: int = 3, max_iter: int = 100,
                        prediction: str = "median") -> CostModel:
    """Cost GP for discrete fidelities/tasks 0..F-1: one-hot basis (full-rank ICM)."""
    b = _check_common(bounds, n_restarts, max_iter, prediction)
    if int(n_fidelities) != n_fidelities or n_fidelities < 1:
        raise ValueError(f"n_fidelities must be a positive integer, got {n_fidelities}")
    return CostModel(b, None, int(n_fidelities), int(n_restarts), int(max_iter), prediction)


def cost_model_for(task, **kwargs) -> CostModel:
    """The cost model matching a :class:`mumbo_jax.bo.loop.Task`'s search box and fidelities."""
    spec = task.spec
    if spec.discrete:
        return discrete_cost_model(spec.bounds, spec.n_fidelities, **kwargs)
    return continuous_cost_model(spec.bounds, spec.fidelity_bounds, **kwargs)


# --------------------------------------------------------------------------- kernel


class BasisKernel(tk.Kernel):
    """k((x, z), (x', z')) = k_X(x, x') phi(z)^T S phi(z'); phi = (1, z) for a float z
    in [0, 1] (``one_hot=False``) or one-hot(z) for an integer task index."""

    kx: tk.Kernel
    S: jax.Array
    one_hot: bool = dataclasses.field(default=False, metadata={"static": True})

    def _phi(self, z):
        if self.one_hot:
            return jax.nn.one_hot(z, self.S.shape[0], dtype=self.S.dtype)
        return jnp.stack([jnp.ones_like(z), z])

    def evaluate(self, X1, X2):
        (x1, z1), (x2, z2) = X1, X2
        return self.kx.evaluate(x1, x2) * (self._phi(z1) @ self.S @ self._phi(z2))


def _tril_size(p):
    return p * (p + 1) // 2


def chol_S(model: CostModel, s_chol):
    """Lower-triangular L from its packed entries (log of the diagonal)."""
    p = model.n_basis
    rows, cols = np.tril_indices(p)
    vals = jnp.where(jnp.asarray(rows == cols), jnp.exp(s_chol), s_chol)
    return jnp.zeros((p, p), s_chol.dtype).at[rows, cols].set(vals)


def default_params(model: CostModel) -> dict:
    """Starting hyper-parameters (unconstrained): lengthscales 0.5 on the unit cube,
    S = 0.5 I, noise 1e-2 (standardised log cost)."""
    p = model.n_basis
    rows, cols = np.tril_indices(p)
    s = np.where(rows == cols, np.log(np.sqrt(0.5)), 0.0)
    return {"log_ls": jnp.full(model.dim, jnp.log(0.5)), "S_chol": jnp.asarray(s),
            "log_noise": jnp.asarray(np.log(1e-2))}


def build_kernel(model: CostModel, params: dict) -> BasisKernel:
    L = chol_S(model, params["S_chol"])
    return BasisKernel(kernels.matern52_ard(jnp.exp(params["log_ls"])), L @ L.T, model.discrete)


def _log_prior(model: CostModel, params: dict):
    """Weak priors as in :func:`mumbo_jax.gp.models.log_prior`: lengthscales ~ logN(log 0.5,
    1.2^2) and diag(S) ~ logN(0, 1.5^2)."""
    L = chol_S(model, params["S_chol"])
    diag_s = jnp.sum(L**2, axis=1)
    lp = -0.5 * jnp.sum(jnp.square((params["log_ls"] - jnp.log(0.5)) / 1.2))
    return lp - 0.5 * jnp.sum(jnp.square(jnp.log(diag_s) / 1.5))


# --------------------------------------------------------------------------- fit


@functools.partial(jax.tree_util.register_dataclass,
                   data_fields=["params", "x_lower", "x_width", "z_lower", "z_width", "y_mean", "y_scale",
                                "x", "z", "chol_inv", "alpha"],
                   meta_fields=["model"])
@dataclasses.dataclass(frozen=True)
class FittedCost:
    """A cost GP conditioned on data (a pytree; ``model`` is static).

    Attributes:
        model: the :class:`CostModel`.
        params: fitted hyper-parameters.
        x_lower, x_width, z_lower, z_width: raw -> unit maps of x and a continuous z.
        y_mean, y_scale: standardisation of log cost.
        x: ``[B, d]`` unit-cube inputs; z: ``[B]`` unit fidelities (or int indices),
            padded to a power of two B >= max(n, 64) (padding has zero rows in ``chol_inv``).
        chol_inv: ``[n, n]`` inverse Cholesky factor of K + noise.
        alpha: ``[n]`` (K + noise)^-1 y_std.
    """

    model: CostModel
    params: dict
    x_lower: jax.Array
    x_width: jax.Array
    z_lower: jax.Array
    z_width: jax.Array
    y_mean: jax.Array
    y_scale: jax.Array
    x: jax.Array
    z: jax.Array
    chol_inv: jax.Array
    alpha: jax.Array


def _scale(model: CostModel, x_lower, x_width, z_lower, z_width, x, z):
    xu = (x - x_lower) / x_width
    if model.discrete:
        return xu, jnp.asarray(z).astype(jnp.int32)
    return xu, (jnp.asarray(z, xu.dtype) - z_lower) / z_width


def _noise(model: CostModel, params):
    return model.noise_floor + jnp.exp(params["log_noise"])


def _masked_gp(model, params, xu, zu, mask):
    """Padded rows (mask 0) become independent N(0, 1) points with y = 0: they add a
    constant to the log likelihood and nothing to predictions (as in
    :func:`mumbo_jax.gp.posterior.masked_gp`)."""
    kernel = posterior.Masked(build_kernel(model, params))
    return GaussianProcess(kernel, (xu, zu, mask), diag=mask * _noise(model, params) + (1.0 - mask))


def _neg_log_marginal(model, params, xu, zu, y, mask):
    gp = _masked_gp(model, params, xu, zu, mask)
    return -(gp.log_probability(y) + _log_prior(model, params))


def _bucket(n: int) -> int:
    """Power-of-two data size (at least 64): a growing data set recompiles the fit
    only when it crosses a power of two (a 64 x 64 Cholesky costs next to nothing)."""
    size = 64
    while size < n:
        size *= 2
    return size


@functools.partial(jax.jit, static_argnames=("model",))
def _fit(model: CostModel, x, z, log_cost, mask, key) -> FittedCost:
    b = jnp.asarray(model.bounds)
    x_lower, x_width = b[:, 0], b[:, 1] - b[:, 0]
    zl, zw = (0.0, 1.0) if model.discrete else (model.fidelity_bounds[0],
                                                 model.fidelity_bounds[1] - model.fidelity_bounds[0])
    z_lower, z_width = jnp.asarray(zl), jnp.asarray(zw)
    xu, zu = _scale(model, x_lower, x_width, z_lower, z_width, x, z)
    count = jnp.sum(mask)
    y_mean = jnp.sum(mask * log_cost) / count
    sd = jnp.sqrt(jnp.sum(mask * (log_cost - y_mean) ** 2) / count)
    # a constant log cost (or a single point) must not divide by zero
    y_scale = jnp.where(sd > 1e-12, sd, 1.0)
    y = mask * (log_cost - y_mean) / y_scale

    base = default_params(model)
    leaves, treedef = jax.tree_util.tree_flatten(base)

    def perturbed(k):
        ks = jax.random.split(k, len(leaves))
        return jax.tree_util.tree_unflatten(
            treedef, [v + 0.7 * jax.random.normal(kk, v.shape, v.dtype) for v, kk in zip(leaves, ks)])

    inits = jax.vmap(perturbed)(jax.random.split(key, model.n_restarts))
    inits = jax.tree_util.tree_map(lambda r, v: r.at[0].set(v), inits, base)
    objective = lambda p: _neg_log_marginal(model, p, xu, zu, y, mask)
    params, losses = jax.lax.map(lambda p: fitting.lbfgs(objective, p, model.max_iter, 1e-5), inits)
    ok = jnp.isfinite(losses) & jax.tree_util.tree_reduce(
        jnp.logical_and,
        jax.tree_util.tree_map(lambda a: jnp.all(jnp.isfinite(a.reshape(model.n_restarts, -1)), axis=1), params))
    losses = jnp.where(ok, losses, jnp.inf)
    best = jnp.argmin(losses)
    params = jax.tree_util.tree_map(lambda a: a[best], params)
    # every start failed: fall back to the defaults rather than return NaN
    params = jax.tree_util.tree_map(lambda p, d: jnp.where(jnp.isfinite(losses[best]), p, d), params, base)

    chol = _masked_gp(model, params, xu, zu, mask).solver.scale_tril
    chol_inv = solve_triangular(chol, jnp.eye(chol.shape[0], dtype=chol.dtype), lower=True)
    alpha = chol_inv.T @ (chol_inv @ y)
    # K is the identity on padded rows: zeroing their rows of L^-1 (and alpha there)
    # removes the padding from every prediction
    chol_inv, alpha = chol_inv * mask[:, None], alpha * mask
    return FittedCost(model, params, x_lower, x_width, z_lower, z_width, y_mean, y_scale, xu, zu, chol_inv, alpha)


def fit_cost(model: CostModel, x, z, cost, key=None) -> FittedCost:
    """Fit the cost GP to observed costs.

    Args:
        model: :func:`continuous_cost_model` or :func:`discrete_cost_model`.
        x: ``[n, d]`` evaluated inputs (raw units, inside ``model.bounds``).
        z: ``[n]`` their fidelities (values, or integer indices for discrete models).
        cost: ``[n]`` observed costs (seconds), finite and > 0.
        key: PRNG key for the random restarts (default ``PRNGKey(0)``).

    Returns:
        :class:`FittedCost`, the GP of log cost conditioned on the data.
    """
    x = np.asarray(x, dtype=float)
    z = np.asarray(z, dtype=float).reshape(-1)
    cost = np.asarray(cost, dtype=float).reshape(-1)
    if x.ndim == 1 and model.dim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != model.dim:
        raise ValueError(f"x must have shape [n, {model.dim}], got {x.shape}")
    n = x.shape[0]
    if n < 1:
        raise ValueError("at least one observed cost is needed to fit a cost model")
    if z.shape != (n,) or cost.shape != (n,):
        raise ValueError(f"z and cost must have shape [{n}] (one per row of x), got {z.shape} and {cost.shape}")
    if not np.all(np.isfinite(x)) or not np.all(np.isfinite(z)):
        raise ValueError("x and z must be finite")
    if not np.all(np.isfinite(cost)) or np.any(cost <= 0):
        raise ValueError(f"costs must be finite and > 0 (they are modelled in log space), got {cost[~(cost > 0)][:5]}")
    if model.discrete:
        if np.any(np.mod(z, 1) != 0) or np.any(z < 0) or np.any(z >= model.n_fidelities):
            raise ValueError(f"z must be fidelity indices 0..{model.n_fidelities - 1}")
    elif np.any(z < model.fidelity_bounds[0]) or np.any(z > model.fidelity_bounds[1]):
        raise ValueError(f"z outside the fidelity bounds {model.fidelity_bounds}")
    key = jax.random.PRNGKey(0) if key is None else key
    pad = _bucket(n) - n
    mask = np.concatenate([np.ones(n), np.zeros(pad)])
    x = np.concatenate([x, np.tile(np.asarray(model.bounds)[:, 0], (pad, 1))])
    z = np.concatenate([z, np.full(pad, 0.0 if model.discrete else model.fidelity_bounds[0])])
    log_cost = np.concatenate([np.log(cost), np.zeros(pad)])
    return _fit(model, jnp.asarray(x), jnp.asarray(z), jnp.asarray(log_cost), jnp.asarray(mask), key)


# --------------------------------------------------------------------------- predict


def _log_moments(fitted: FittedCost, x, z):
    """Mean and variance ``[M]`` of log cost at raw ``x [M, d]``, ``z [M]`` (traceable)."""
    model = fitted.model
    kernel = build_kernel(model, fitted.params)
    xu, zu = _scale(model, fitted.x_lower, fitted.x_width, fitted.z_lower, fitted.z_width, x, z)
    k = kernel((fitted.x, fitted.z), (xu, zu))  # [n, M]
    v = fitted.chol_inv @ k
    mean = k.T @ fitted.alpha
    var = jnp.maximum(kernel((xu, zu)) - jnp.sum(v**2, axis=0), _VAR_FLOOR)
    return mean * fitted.y_scale + fitted.y_mean, var * fitted.y_scale**2


def _predict_cost(fitted: FittedCost, x, z):
    mean, var = _log_moments(fitted, x, z)
    if fitted.model.prediction == "mean":
        mean = mean + 0.5 * var
    # exp of a huge log cost would be inf: keep the divisor finite and positive
    return jnp.exp(jnp.clip(mean, -700.0, 700.0))


def _check_query(fitted: FittedCost, x, z):
    x = jnp.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[None] if fitted.model.dim > 1 or jnp.ndim(z) == 0 else x[:, None]
    z = jnp.broadcast_to(jnp.asarray(z, dtype=float), x.shape[:1])
    if x.ndim != 2 or x.shape[1] != fitted.model.dim:
        raise ValueError(f"x must have shape [M, {fitted.model.dim}], got {tuple(x.shape)}")
    return x, z


def log_cost_moments(fitted: FittedCost, x, z):
    """Predictive mean and variance of log cost at ``x [M, d]``, ``z [M]``; both ``[M]``."""
    x, z = _check_query(fitted, x, z)
    return jax.jit(_log_moments)(fitted, x, z)


def predict_cost(fitted: FittedCost, x, z):
    """Predicted cost ``[M]`` (median exp(mu) or log-normal mean, per the model)."""
    x, z = _check_query(fitted, x, z)
    return jax.jit(_predict_cost)(fitted, x, z)


def cost_function(fitted: FittedCost) -> jax.tree_util.Partial:
    """``c(x [M, d], z [M]) -> [M]`` as a ``jax.tree_util.Partial`` (traceable,
    differentiable in x and a continuous z): the ``cost`` argument of
    :func:`mumbo_jax.bo.strategies.propose`."""
    return jax.tree_util.Partial(_predict_cost, fitted)
