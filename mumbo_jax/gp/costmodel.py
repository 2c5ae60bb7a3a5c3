"""A learned evaluation-cost model: a GP on log wall-clock seconds over (x, z).

FABOLAS (Klein et al. 2017) models the log cost of training with a degenerate basis
kernel over the fidelity times a Matern-5/2 kernel over the hyper-parameters:

    log c(x, z) ~ GP(m, k_X(x, x') phi(z)^T S phi(z') + noise),

* continuous fidelity: phi(z) = (1, z) with z scaled to [0, 1]: for each x, log c is
  linear in z with an intercept and slope that vary smoothly with x (a cost polynomial
  in the data size when z is a log data fraction, as in ``experiments/paper/fabolas_svm.py``);
  the linear basis extrapolates beyond the observed fidelities instead of reverting to
  the mean;
* discrete fidelities/tasks: phi(z) = one_hot(z), an intrinsic coregionalisation
  k_X(x, x') S[z, z'] with a full-rank S (each fidelity its own cost level, shared
  structure in x).

The GP is one more model kind of the library's GP stack (:func:`mumbo_jax.gp.models.basis_model`,
kinds ``"linear_basis"`` and ``"task_basis"``): it is fitted by
:func:`mumbo_jax.gp.fitting.fit` (weakly regularised maximum marginal likelihood, optax
L-BFGS from several starts, log costs standardised inside the model) and predicted by
:func:`mumbo_jax.gp.moments.predict`. This module adds only what is particular to costs:
positive costs in log space, padding to a few buffer sizes, and the prediction rule.

Prediction: the GP gives log c ~ N(mu, v). :func:`predict_cost` returns the median
exp(mu) (``prediction="median"``, as FABOLAS divides by exp of the predicted log cost)
or the log-normal mean exp(mu + v / 2) (``prediction="mean"``).

Plugging it into a strategy: :func:`cost_function` gives a traceable ``c(x, z)`` that
:func:`mumbo_jax.bo.rules.propose` (argument ``cost``) divides the acquisition by
inside the maximiser; :class:`mumbo_jax.bo.asktell.AskTell` (argument ``cost_model``) refits
it on the told costs before each proposal.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.gp import fitting, models, moments, posterior
from mumbo_jax.gp.models import ModelSpec
from mumbo_jax.gp.precision import require_x64

__all__ = [
    "PREDICTIONS", "CostModel", "continuous_cost_model", "discrete_cost_model", "cost_model_for", "FittedCost",
    "fit_cost", "log_cost_moments", "predict_cost", "cost_function",
]

PREDICTIONS = ("median", "mean")
NOISE_FLOOR = 1e-4  # variance of standardised log cost: timings are never exact
MIN_BUFFER = 64  # a 64 x 64 Cholesky costs next to nothing


@dataclasses.dataclass(frozen=True)
class CostModel:
    """Static description of a cost GP (hashable: a jit static argument).

    Attributes:
        spec: the GP, a :func:`mumbo_jax.gp.models.basis_model` over the task's box and
            fidelities (noise floor 1e-4 of the variance of log cost).
        n_restarts: L-BFGS starts per fit (defaults first, then random perturbations).
        max_iter: L-BFGS iterations per start.
        prediction: ``"median"`` (exp(mu)) or ``"mean"`` (exp(mu + v/2)).
    """

    spec: ModelSpec
    n_restarts: int = 3
    max_iter: int = 100
    prediction: str = "median"

    @property
    def bounds(self) -> tuple:
        return self.spec.bounds

    @property
    def fidelity_bounds(self) -> tuple | None:
        return self.spec.fidelity_bounds

    @property
    def n_fidelities(self) -> int | None:
        return self.spec.n_fidelities

    @property
    def dim(self) -> int:
        return self.spec.dim

    @property
    def discrete(self) -> bool:
        return self.spec.discrete


def _make(spec, n_restarts, max_iter, prediction) -> CostModel:
    for name, v in (("n_restarts", n_restarts), ("max_iter", max_iter)):
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if prediction not in PREDICTIONS:
        raise ValueError(f"prediction must be one of {PREDICTIONS}, got {prediction!r}")
    return CostModel(spec, int(n_restarts), int(max_iter), prediction)


def continuous_cost_model(bounds, fidelity_bounds, n_restarts: int = 3, max_iter: int = 100,
                          prediction: str = "median") -> CostModel:
    """Cost GP for a continuous fidelity in ``fidelity_bounds``: basis (1, z)."""
    spec = models.basis_model(bounds, fidelity_bounds=fidelity_bounds, noise_floor=NOISE_FLOOR)
    return _make(spec, n_restarts, max_iter, prediction)


def discrete_cost_model(bounds, n_fidelities: int, n_restarts: int = 3, max_iter: int = 100,
                        prediction: str = "median") -> CostModel:
    """Cost GP for discrete fidelities/tasks 0..F-1: one-hot basis (full-rank ICM)."""
    spec = models.basis_model(bounds, n_fidelities=n_fidelities, noise_floor=NOISE_FLOOR)
    return _make(spec, n_restarts, max_iter, prediction)


def cost_model_for(task, **kwargs) -> CostModel:
    """The cost model matching a :class:`mumbo_jax.bo.settings.Task`'s search box and fidelities."""
    spec = task.spec
    if spec.discrete:
        return discrete_cost_model(spec.bounds, spec.n_fidelities, **kwargs)
    return continuous_cost_model(spec.bounds, spec.fidelity_bounds, **kwargs)


@functools.partial(jax.tree_util.register_dataclass, data_fields=["post"], meta_fields=["model"])
@dataclasses.dataclass(frozen=True)
class FittedCost:
    """A cost GP conditioned on data (a pytree; ``model`` is static).

    Attributes:
        model: the :class:`CostModel`.
        post: the :class:`mumbo_jax.gp.posterior.Posterior` of log cost, on buffers padded
            to a power of two ``B >= max(n, 64)`` (a growing data set recompiles the fit
            only when it crosses a power of two; padding is masked out).
    """

    model: CostModel
    post: posterior.Posterior

    @property
    def params(self) -> dict:
        """The fitted hyper-parameters."""
        return self.post.params


def _buffer(n: int) -> int:
    """Power-of-two buffer size, at least :data:`MIN_BUFFER`."""
    return max(MIN_BUFFER, 1 << (int(n) - 1).bit_length())


def _check_costs(model: CostModel, x, z, cost):
    """numpy ``(x [n, d], z [n], cost [n])``, or ValueError naming the problem."""
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
    return x, z, cost


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
    require_x64("calling costmodel.fit_cost")
    if not isinstance(model, CostModel):
        raise ValueError(f"model must be a CostModel (continuous_cost_model or discrete_cost_model), "
                         f"got {type(model).__name__}")
    x, z, cost = _check_costs(model, x, z, cost)
    key = jax.random.PRNGKey(0) if key is None else key
    n = x.shape[0]
    pad = _buffer(n) - n
    # padding sits inside the box (the GP's own checks apply to it) and is masked out
    lower = np.asarray(model.bounds)[:, 0]
    z_pad = 0.0 if model.discrete else model.fidelity_bounds[0]
    mask = np.concatenate([np.ones(n), np.zeros(pad)])
    x = np.concatenate([x, np.tile(lower, (pad, 1))])
    z = np.concatenate([z, np.full(pad, z_pad)])
    if model.discrete:
        z = z.astype(np.int32)
    log_cost = np.concatenate([np.log(cost), np.zeros(pad)])
    post = fitting.fit(model.spec, x, z, log_cost, key, mask, n_restarts=model.n_restarts, max_iter=model.max_iter)
    return FittedCost(model, post)


# --------------------------------------------------------------------------- predict


def _predict_cost(fitted: FittedCost, x, z):
    mean, var = moments.predict(fitted.post, x, z)
    if fitted.model.prediction == "mean":
        mean = mean + 0.5 * var
    # exp of a huge log cost would be inf: keep the divisor finite and positive
    return jnp.exp(jnp.clip(mean, -700.0, 700.0))


def _check_query(fitted: FittedCost, x, z):
    x = jnp.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[None] if fitted.model.dim > 1 or jnp.ndim(z) == 0 else x[:, None]
    if x.ndim != 2 or x.shape[1] != fitted.model.dim:
        raise ValueError(f"x must have shape [M, {fitted.model.dim}], got {tuple(x.shape)}")
    z = jnp.asarray(z)
    if z.ndim == 0:
        z = jnp.broadcast_to(z, x.shape[:1])
    return x, z


def log_cost_moments(fitted: FittedCost, x, z):
    """Predictive mean and variance of log cost at ``x [M, d]``, ``z [M]``; both ``[M]``."""
    require_x64("calling costmodel.log_cost_moments")
    x, z = _check_query(fitted, x, z)
    return moments.predict(fitted.post, x, z)


def predict_cost(fitted: FittedCost, x, z):
    """Predicted cost ``[M]`` (median exp(mu) or log-normal mean, per the model)."""
    require_x64("calling costmodel.predict_cost")
    x, z = _check_query(fitted, x, z)
    return _predict_cost(fitted, x, z)


def cost_function(fitted: FittedCost) -> jax.tree_util.Partial:
    """``c(x [M, d], z [M]) -> [M]`` as a ``jax.tree_util.Partial`` (traceable,
    differentiable in x and a continuous z): the ``cost`` argument of
    :func:`mumbo_jax.bo.rules.propose`."""
    require_x64("calling costmodel.cost_function")
    return jax.tree_util.Partial(_predict_cost, fitted)
