"""The multi-fidelity GP models, one class per model, and their functional API.

Each model is a frozen dataclass (static and hashable: a ``jit`` static argument) that
subclasses :class:`~mumbo_jax.gp.modelbase.DiscreteModel` or
:class:`~mumbo_jax.gp.modelbase.ContinuousModel` and carries its own behaviour as
methods (defaults, kernel, signal variances; the base gives noise, priors, scaling and
input checks). Hyper-parameters are a plain dict of unconstrained arrays.

Seven models (``kind``, their name in configs, and the constructor that validates them):

* :class:`ICMModel` ``"icm"`` (:func:`icm_model`): intrinsic coregionalisation
  k_X(x,x') B[i,j], B = W W^T + diag(kappa).
* :class:`ICMDiscModel` ``"icm_disc"`` (:func:`icm_disc_model`): ICM plus a target-only
  discrepancy GP with its own ARD lengthscales and variance: k = k_X(x,x') B[i,j] +
  [i = j = 0] k_D(x,x') (a linear model of coregionalisation whose second component
  drives only the target, fidelity 0).
* :class:`AR1Model` ``"ar1"`` (:func:`ar1_model`): the linear AR(1) multi-fidelity model
  of Kennedy & O'Hagan.
* :class:`ProductModel` ``"product"`` (:func:`product_model`): continuous fidelity,
  k_X(x,x') k_Z(z,z') with Matern-5/2 on both.
* :class:`FabolasModel` ``"fabolas"`` (:func:`fabolas_model`): continuous fidelity,
  k_X(x,x') phi(z)^T S phi(z'), phi(z)=(z,(1-z)^2).
* :class:`LinearBasisModel` ``"linear_basis"`` / :class:`TaskBasisModel` ``"task_basis"``
  (:func:`basis_model`): k_X(x,x') phi(z)^T S phi(z') with phi(z) = (1, z) for a
  continuous fidelity or one_hot(z) for discrete tasks, a full S = L L^T and one noise
  variance: the learned cost model's GP on log cost (:mod:`mumbo_jax.gp.costmodel`).

``target_floor`` (the ICM models) keeps the target's own variance from vanishing:
``icm`` adds ``target_floor * (W W^T)_00`` to kappa_0, ``icm_disc`` to the discrepancy's
variance, so no cheap fidelity can be fitted as perfectly correlated with the target.
Off by default everywhere (:data:`DEFAULT_TARGET_FLOOR`); the benchmarks'
tasks and the ``run`` / ``compare`` / ``tune`` configs take it as ``target_floor``
(docs/RESULTS.md, "A floor under the target's own variance").

:data:`MODELS` is the one table of models (configurations, the benchmarks' tasks and the
tuner build from it, :func:`build_model`). A new model is one more class, registered with
:func:`register` (docs/howto/write-a-model.md). The module-level functions
(:func:`default_params`, :func:`build_kernel`, ...) are the functional form of the
methods, ``f(spec, ...) == spec.f(...)``.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.gp import kernels
from mumbo_jax.gp.modelbase import (NOISE_FLOOR, ContinuousModel, DiscreteModel, ModelSpec, Scaling, check_bounds,
                                    check_count, check_data, check_in_box)
from mumbo_jax.registry import Names, Registry

__all__ = [
    "KINDS", "DISCRETE_KINDS", "CONTINUOUS_KINDS", "BASIS_KINDS", "ICM_KINDS", "MODELS", "DEFAULT_TARGET_FLOOR",
    "ENTRY_POINT_GROUP", "register", "unregister", "kinds_for", "default_kind", "model_options", "floor_kinds",
    "build_model",
    "ModelSpec", "DiscreteModel", "ContinuousModel", "ICMModel", "ICMDiscModel", "AR1Model", "ProductModel",
    "FabolasModel", "BasisKernelModel", "LinearBasisModel", "TaskBasisModel",
    "check_bounds", "icm_model", "ar1_model", "product_model", "fabolas_model", "icm_disc_model", "basis_model",
    "icm_kappa", "discrepancy_variance", "absorb_target_floor", "basis_size", "basis_chol", "default_params",
    "random_params", "build_kernel", "noise_variances", "signal_variances", "log_prior", "Scaling",
    "make_scaling", "scale_inputs", "check_inputs", "check_in_box", "check_data",
]

# The target-specific share of an ICM's target variance in the benchmarks' tasks and the
# CLI when none is given: 0, the paper's plain ICM. A 1 % floor lowered the regret on the
# two-fidelity problems and the literature pair but raised it 50-fold on Rosenbrock (cost
# ratio 1000), where the cheap fidelity is nearly exact (docs/RESULTS.md, "Levers tried").
DEFAULT_TARGET_FLOOR = 0.0

_LOG_LS0 = 0.3  # default lengthscale (unit cube) of the BO models


# --------------------------------------------------------------------------- ICM


@dataclasses.dataclass(frozen=True, kw_only=True)
class ICMModel(DiscreteModel):
    """Intrinsic coregionalisation: k((x,i),(x',j)) = k_X(x,x') B[i,j] with k_X an ARD
    Matern-5/2 and B = W W^T + diag(kappa); one noise variance per fidelity.

    Parameters: ``log_ls [d]``, ``W [L, rank]``, ``log_kappa [L]``, ``log_noise [L]``.

    Attributes:
        rank: rank of W.
        target_floor: the target-specific variance kappa_0 is at least this fraction of
            the shared target variance (W W^T)_00; then |rho| <= 1 / sqrt(1 +
            target_floor) between the target and any fidelity at equal x. 0 (the
            default): the plain model.
    """

    rank: int = 2
    target_floor: float = DEFAULT_TARGET_FLOOR

    kind: ClassVar[str] = "icm"

    def __post_init__(self):
        object.__setattr__(self, "rank", check_count(self.rank, "rank"))
        f = self.target_floor
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0.0 <= f < float("inf"):
            raise ValueError(f"target_floor must be a finite number >= 0, got {f!r}")
        super().__post_init__()

    @property
    def n_noise(self) -> int:
        return self.n_fidelities

    def default_params(self) -> dict:
        L = self.n_fidelities
        return {"log_noise": jnp.full(L, jnp.log(1e-3)), "log_ls": jnp.full(self.dim, jnp.log(_LOG_LS0)),
                "W": jnp.full((L, self.rank), 0.7 / np.sqrt(self.rank)), "log_kappa": jnp.full(L, jnp.log(0.1))}

    def shared_target_variance(self, params: dict) -> jax.Array:
        """(W W^T)_00, the target's variance shared with the other fidelities."""
        return jnp.sum(params["W"][0] ** 2)

    def kappa(self, params: dict) -> jax.Array:
        """``[L]`` exp(log_kappa), kappa_0 raised by ``target_floor * (W W^T)_00``."""
        kappa = jnp.exp(params["log_kappa"])
        if self.target_floor > 0:
            kappa = kappa.at[0].add(self.target_floor * self.shared_target_variance(params))
        return kappa

    def coregionalisation(self, params: dict) -> jax.Array:
        """``[L, L]`` B = W W^T + diag(kappa)."""
        return kernels.icm_matrix(params["W"], self.kappa(params))

    def build_kernel(self, params: dict):
        kx = kernels.matern52_ard(jnp.exp(params["log_ls"]))
        return kernels.ICM(kx, self.coregionalisation(params))

    def signal_variances(self, params: dict) -> jax.Array:
        """diag(B)."""
        return jnp.sum(params["W"] ** 2, axis=1) + self.kappa(params)

    def absorb_target_floor(self, params: dict) -> dict:
        """Hyper-parameters of the model with ``target_floor = 0`` whose kernel equals
        that of ``params`` under this floor: ``target_floor * (W W^T)_00`` moved into
        kappa_0. Lets fits under different floors be compared and used by one
        floor-free program. Traceable."""
        if self.target_floor == 0:
            return params
        extra = self.target_floor * self.shared_target_variance(params)
        out = dict(params)
        out["log_kappa"] = params["log_kappa"].at[0].set(jnp.logaddexp(params["log_kappa"][0], jnp.log(extra)))
        return out

    def gram(self, params: dict, xu, zu, mask) -> jax.Array:
        """The fit's Gram matrix built densely: pairwise differences broadcast
        (:func:`mumbo_jax.gp.kernels.matern52_gram`, gradient in closed form), B by
        one-hot products; the arithmetic of :meth:`build_kernel`'s tinygp kernel without
        its doubly vmapped ``evaluate`` (tests/test_fit_dense.py compares value and
        gradient; docs/performance.md, "One ICM kernel or two", what it saves)."""
        k = kernels.matern52_gram(xu / jnp.exp(params["log_ls"]))
        B = self.coregionalisation(params)
        onehot = jax.nn.one_hot(zu, self.n_fidelities, dtype=k.dtype) * mask[:, None]
        return k * (onehot @ B @ onehot.T)

    def cross(self, params: dict, xa, za, xb, zb) -> jax.Array:
        """The cross-covariance built densely (:func:`mumbo_jax.gp.kernels.matern52_cross`,
        B by one-hot products), as :meth:`gram` for the fit: the candidates' and g*'s
        grid's moments without the tinygp kernel's doubly vmapped ``evaluate``
        (tests/test_cross.py compares them)."""
        ls = jnp.exp(params["log_ls"])
        k = kernels.matern52_cross(xa / ls, xb / ls)
        onehot = lambda z: jax.nn.one_hot(z, self.n_fidelities, dtype=k.dtype)
        return k * (onehot(za) @ self.coregionalisation(params) @ onehot(zb).T)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ICMDiscModel(ICMModel):
    """ICM plus a target-only discrepancy: k((x,i),(x',j)) = k_X(x,x') B[i,j] +
    [i = j = 0] k_D(x,x'), k_D an ARD Matern-5/2 with its own lengthscales and variance,
    the variance floored at ``target_floor`` (W W^T)_00 (kappa is not floored).

    Parameters: those of :class:`ICMModel` and ``log_ls_d [d]``, ``log_amp_d []``.
    """

    target_floor: float = 0.05

    kind: ClassVar[str] = "icm_disc"

    def default_params(self) -> dict:
        params = super().default_params()
        params["log_ls_d"] = jnp.full(self.dim, jnp.log(_LOG_LS0))
        params["log_amp_d"] = jnp.log(jnp.asarray(0.1))
        return params

    def kappa(self, params: dict) -> jax.Array:
        return jnp.exp(params["log_kappa"])

    def discrepancy_variance(self, params: dict) -> jax.Array:
        """Scalar variance of the discrepancy, floored at ``target_floor * (W W^T)_00``."""
        return jnp.exp(params["log_amp_d"]) + self.target_floor * self.shared_target_variance(params)

    def build_kernel(self, params: dict):
        kx = kernels.matern52_ard(jnp.exp(params["log_ls"]))
        kd = kernels.matern52_ard(jnp.exp(params["log_ls_d"]), self.discrepancy_variance(params))
        return kernels.ICMDiscrepancy(kx, self.coregionalisation(params), kd)

    def signal_variances(self, params: dict) -> jax.Array:
        """diag(B), then the discrepancy's variance."""
        b = jnp.sum(params["W"] ** 2, axis=1) + self.kappa(params)
        return jnp.concatenate([b, self.discrepancy_variance(params)[None]])

    def log_lengthscales(self, params: dict) -> tuple:
        return params["log_ls"], params["log_ls_d"]

    def absorb_target_floor(self, params: dict) -> dict:
        """As :meth:`ICMModel.absorb_target_floor`, the floor moved into the
        discrepancy's variance."""
        if self.target_floor == 0:
            return params
        extra = self.target_floor * self.shared_target_variance(params)
        out = dict(params)
        out["log_amp_d"] = jnp.logaddexp(params["log_amp_d"], jnp.log(extra))
        return out

    gram = ModelSpec.gram  # the tinygp kernel's Gram
    cross = ModelSpec.cross  # and cross-covariance


# --------------------------------------------------------------------------- AR(1)


@dataclasses.dataclass(frozen=True, kw_only=True)
class AR1Model(DiscreteModel):
    """Linear AR(1) multi-fidelity model (Kennedy & O'Hagan); fidelity 0 is the highest
    (the target): f_{L-1} = delta_{L-1}, f_i = rho_i f_{i+1} + delta_i with an ARD
    Matern-5/2 per level; one noise variance per fidelity.

    Parameters: ``log_ls [L, d]``, ``log_amp [L]``, ``rho [L - 1]``, ``log_noise [L]``.
    """

    kind: ClassVar[str] = "ar1"

    @property
    def n_noise(self) -> int:
        return self.n_fidelities

    def default_params(self) -> dict:
        L = self.n_fidelities
        return {"log_noise": jnp.full(L, jnp.log(1e-3)),
                "log_ls": jnp.tile(jnp.full(self.dim, jnp.log(_LOG_LS0)), (L, 1)),
                "log_amp": jnp.concatenate([jnp.full(L - 1, jnp.log(0.1)), jnp.zeros(1)]),
                "rho": jnp.ones(L - 1)}

    def build_kernel(self, params: dict):
        kxs = tuple(
            kernels.matern52_ard(jnp.exp(params["log_ls"][l]), jnp.exp(params["log_amp"][l]))
            for l in range(self.n_fidelities)
        )
        return kernels.AR1(kxs, kernels.ar1_coefficients(params["rho"]))

    def signal_variances(self, params: dict) -> jax.Array:
        """Each level's amplitude."""
        return jnp.exp(jnp.atleast_1d(params["log_amp"]))


# --------------------------------------------------------------------------- continuous


@dataclasses.dataclass(frozen=True, kw_only=True)
class ProductModel(ContinuousModel):
    """Continuous fidelity with a product kernel k_X(x,x') k_Z(z,z'), Matern-5/2 on both.

    Parameters: ``log_ls [d]``, ``log_amp []``, ``log_ls_z []``, ``log_noise [1]``.
    """

    kind: ClassVar[str] = "product"

    def default_params(self) -> dict:
        return {"log_noise": jnp.full(1, jnp.log(1e-3)), "log_ls": jnp.full(self.dim, jnp.log(_LOG_LS0)),
                "log_amp": jnp.zeros(()), "log_ls_z": jnp.log(jnp.asarray(1.0))}

    def build_kernel(self, params: dict):
        kx = kernels.matern52_ard(jnp.exp(params["log_ls"]), jnp.exp(params["log_amp"]))
        kz = kernels.matern52_scalar(jnp.exp(params["log_ls_z"]))
        return kernels.ContinuousProduct(kx, kz)

    def signal_variances(self, params: dict) -> jax.Array:
        """The amplitude."""
        return jnp.exp(jnp.atleast_1d(params["log_amp"]))


@dataclasses.dataclass(frozen=True, kw_only=True)
class FabolasModel(ContinuousModel):
    """Continuous fidelity with FABOLAS' basis kernel k_X(x,x') phi(z)^T S phi(z'),
    phi(z) = (z, (1 - z)^2) over the scaled fidelity, S = Lc Lc^T with
    Lc = [[exp(a), 0], [b, exp(c)]].

    Parameters: ``log_ls [d]``, ``S_chol [3]`` = (a, b, c), ``log_noise [1]``.
    """

    kind: ClassVar[str] = "fabolas"

    def default_params(self) -> dict:
        return {"log_noise": jnp.full(1, jnp.log(1e-3)), "log_ls": jnp.full(self.dim, jnp.log(_LOG_LS0)),
                "S_chol": jnp.asarray([0.0, 0.0, jnp.log(0.5)])}

    def build_kernel(self, params: dict):
        a, b, c = params["S_chol"]
        chol = jnp.asarray([[jnp.exp(a), 0.0], [b, jnp.exp(c)]])
        return kernels.FabolasBasis(kernels.matern52_ard(jnp.exp(params["log_ls"])), chol @ chol.T)

    def signal_variances(self, params: dict) -> jax.Array:
        """diag(S)."""
        a, b, c = params["S_chol"]
        return jnp.stack([jnp.exp(2 * a), b**2 + jnp.exp(2 * c)])


# --------------------------------------------------------------------------- basis (cost GP)


class BasisKernelModel:
    """The behaviour shared by the basis models (a mixin before their fidelity family):
    k_X(x,x') phi(z)^T S phi(z') with a full S = L L^T (:meth:`basis_chol`), one noise
    variance, lengthscales 0.5, S = 0.5 I and noise 1e-2 (standardised units) to start.

    Parameters: ``log_ls [d]``, ``S_chol [p (p + 1) / 2]``, ``log_noise [1]``.
    """

    one_hot: ClassVar[bool] = False

    @property
    def basis_size(self) -> int:
        """p, the length of phi(z)."""
        raise NotImplementedError

    def basis_chol(self, s_chol: jax.Array) -> jax.Array:
        """``[p, p]`` lower-triangular L (S = L L^T) from its packed row-major entries
        ``s_chol [p (p + 1) / 2]``, the diagonal stored as logs (so L has a positive one)."""
        p = self.basis_size
        rows, cols = np.tril_indices(p)
        vals = jnp.where(jnp.asarray(rows == cols), jnp.exp(s_chol), s_chol)
        return jnp.zeros((p, p), s_chol.dtype).at[rows, cols].set(vals)

    def default_params(self) -> dict:
        rows, cols = np.tril_indices(self.basis_size)
        return {"log_noise": jnp.full(1, jnp.log(1e-2)), "log_ls": jnp.full(self.dim, jnp.log(0.5)),
                "S_chol": jnp.asarray(np.where(rows == cols, np.log(np.sqrt(0.5)), 0.0))}

    def build_kernel(self, params: dict):
        chol = self.basis_chol(params["S_chol"])
        return kernels.BasisKernel(kernels.matern52_ard(jnp.exp(params["log_ls"])), chol @ chol.T,
                                   one_hot=self.one_hot)

    def signal_variances(self, params: dict) -> jax.Array:
        """diag(S)."""
        return jnp.sum(self.basis_chol(params["S_chol"]) ** 2, axis=1)


@dataclasses.dataclass(frozen=True, kw_only=True)
class LinearBasisModel(BasisKernelModel, ContinuousModel):
    """The basis model over a continuous fidelity, phi(z) = (1, z) on the scaled
    fidelity: linear in z for each x, so it extrapolates a trend."""

    kind: ClassVar[str] = "linear_basis"

    @property
    def basis_size(self) -> int:
        return 2


@dataclasses.dataclass(frozen=True, kw_only=True)
class TaskBasisModel(BasisKernelModel, DiscreteModel):
    """The basis model over discrete tasks, phi(z) = one_hot(z): a full-rank ICM with
    one noise variance."""

    kind: ClassVar[str] = "task_basis"
    one_hot: ClassVar[bool] = True

    @property
    def basis_size(self) -> int:
        return self.n_fidelities


# --------------------------------------------------------------------------- the registry

ENTRY_POINT_GROUP = "mumbo_jax.models"  # installed packages register models through this group
MODELS: Registry = Registry("model", ModelSpec, (ICMModel, AR1Model, ProductModel, FabolasModel, LinearBasisModel,
                                                 TaskBasisModel, ICMDiscModel), key="kind", classes=True,
                            entry_point_group=ENTRY_POINT_GROUP)
"""``kind -> class``: the models that configurations, the benchmarks' tasks and the tuner
build (:func:`build_model`); :func:`register` or an entry point of :data:`ENTRY_POINT_GROUP`
(loaded on first use) adds one's own (docs/howto/write-a-model.md)."""

KINDS = Names(MODELS, doc="every model's kind")
DISCRETE_KINDS = Names(MODELS, lambda c: c.discrete, "the models of discrete fidelities or tasks")
CONTINUOUS_KINDS = Names(MODELS, lambda c: not c.discrete, "the models of a continuous fidelity")
ICM_KINDS = Names(MODELS, lambda c: issubclass(c, ICMModel), "the intrinsic coregionalisation models")
BASIS_KINDS = Names(MODELS, lambda c: issubclass(c, BasisKernelModel), "the basis models (the cost GP)")


def register(cls: type) -> type:
    """Add a model class (a frozen dataclass subclassing :class:`DiscreteModel` or
    :class:`ContinuousModel`, a snake_case ``kind``) to :data:`MODELS` and return it (a
    class decorator too); another class under a taken kind is a ValueError."""
    if not (isinstance(cls, type) and issubclass(cls, (DiscreteModel, ContinuousModel))):
        raise TypeError(f"register expects a subclass of DiscreteModel or ContinuousModel, got {cls!r}")
    return MODELS.register(cls)


def unregister(kind: str) -> type:
    """Remove a model class registered at run time (not a built-in one) and return it."""
    return MODELS.unregister(kind)


def kinds_for(discrete: bool) -> Names:
    """The kinds of the models of discrete fidelities (``True``) or of a continuous one."""
    return DISCRETE_KINDS if discrete else CONTINUOUS_KINDS


def default_kind(discrete: bool) -> str:
    """The first registered model of the family: ``"icm"`` (discrete), ``"product"``."""
    return kinds_for(discrete)[0]


def model_options(kind: str) -> tuple:
    """The model's own fields beyond its family's: ``target_floor`` and ``rank`` for ICM."""
    cls = MODELS.lookup(kind, "model")
    family = DiscreteModel if cls.discrete else ContinuousModel
    base = {f.name for f in dataclasses.fields(family)}
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in base and f.init)


def floor_kinds() -> tuple:
    """The kinds of the models with a ``target_floor`` field (``icm``, ``icm_disc``)."""
    return tuple(k for k in MODELS if "target_floor" in model_options(k))


def build_model(kind: str, bounds, *, n_fidelities: int | None = None, fidelity_bounds=None, rank: int | None = None,
                target_floor: float | None = None, noise=None) -> ModelSpec:
    """The model of kind ``kind`` (:data:`MODELS`) over ``bounds``, with ``n_fidelities``
    (discrete) or ``fidelity_bounds`` (continuous). ``rank`` (capped at ``n_fidelities``)
    and ``target_floor`` (``None``: the model's default) go to the models with such a
    field. ValueError for an unknown kind, a model of the other family, or a nonzero
    ``target_floor`` for a model without one."""
    cls = MODELS.lookup(kind, "model")
    discrete = n_fidelities is not None
    if discrete == (fidelity_bounds is not None):
        raise ValueError("build_model needs exactly one of n_fidelities (discrete fidelities) or fidelity_bounds "
                         "(a continuous fidelity)")
    if cls.discrete != discrete:
        what = "discrete fidelities" if discrete else "a continuous fidelity"
        raise ValueError(f"model {kind!r} is not for {what}; allowed: {', '.join(kinds_for(discrete))}")
    own = model_options(kind)
    kwargs = {"n_fidelities": n_fidelities} if discrete else {"fidelity_bounds": fidelity_bounds}
    if rank is not None and "rank" in own:
        kwargs["rank"] = min(rank, n_fidelities) if discrete else rank
    if target_floor is not None:
        if "target_floor" in own:
            kwargs["target_floor"] = target_floor
        elif target_floor != 0:
            raise ValueError(f"target_floor applies to the models with a target floor ({', '.join(floor_kinds())}), "
                             f"not {kind!r}")
    return cls(bounds=bounds, noise=noise, **kwargs)


# --------------------------------------------------------------------------- constructors


def icm_model(bounds, n_fidelities, rank=2, noise=None, noise_floor=NOISE_FLOOR, target_floor=0.0) -> ICMModel:
    """Intrinsic coregionalisation over ``n_fidelities`` discrete fidelities or tasks
    (:class:`ICMModel`)."""
    return ICMModel(bounds=bounds, n_fidelities=n_fidelities, rank=rank, noise=noise, noise_floor=noise_floor,
                    target_floor=target_floor)


def icm_disc_model(bounds, n_fidelities, rank=2, noise=None, noise_floor=NOISE_FLOOR, target_floor=0.05) -> ICMDiscModel:
    """ICM plus a target-only discrepancy GP (own ARD lengthscales and variance, the
    variance floored at ``target_floor`` (W W^T)_00); fidelity 0 is the target
    (:class:`ICMDiscModel`)."""
    return ICMDiscModel(bounds=bounds, n_fidelities=n_fidelities, rank=rank, noise=noise, noise_floor=noise_floor,
                        target_floor=target_floor)


def ar1_model(bounds, n_fidelities, noise=None, noise_floor=NOISE_FLOOR) -> AR1Model:
    """Linear AR(1) multi-fidelity model; fidelity 0 is the highest, the target
    (:class:`AR1Model`)."""
    return AR1Model(bounds=bounds, n_fidelities=n_fidelities, noise=noise, noise_floor=noise_floor)


def product_model(bounds, fidelity_bounds=(0.0, 1.0), noise=None, noise_floor=NOISE_FLOOR) -> ProductModel:
    """Continuous fidelity z in ``fidelity_bounds`` with a product Matern kernel
    (:class:`ProductModel`)."""
    return ProductModel(bounds=bounds, fidelity_bounds=fidelity_bounds, noise=noise, noise_floor=noise_floor)


def fabolas_model(bounds, fidelity_bounds=(0.0, 1.0), noise=None, noise_floor=NOISE_FLOOR) -> FabolasModel:
    """Continuous fidelity with FABOLAS' basis kernel over the scaled fidelity
    (:class:`FabolasModel`)."""
    return FabolasModel(bounds=bounds, fidelity_bounds=fidelity_bounds, noise=noise, noise_floor=noise_floor)


def basis_model(bounds, n_fidelities=None, fidelity_bounds=None, noise=None, noise_floor=NOISE_FLOOR) -> ModelSpec:
    """k_X(x,x') phi(z)^T S phi(z') with a full S and one noise variance (the cost GP).

    Give exactly one of ``fidelity_bounds`` (:class:`LinearBasisModel`, kind
    ``"linear_basis"``, phi(z) = (1, z) on the scaled fidelity: linear in z for each x, so
    it extrapolates a trend) or ``n_fidelities`` (:class:`TaskBasisModel`, kind
    ``"task_basis"``, phi(z) = one_hot(z): a full-rank ICM).
    """
    if (n_fidelities is None) == (fidelity_bounds is None):
        raise ValueError("basis_model needs exactly one of n_fidelities (discrete tasks) or fidelity_bounds "
                         f"(a continuous fidelity); got n_fidelities={n_fidelities}, fidelity_bounds={fidelity_bounds}")
    if fidelity_bounds is not None:
        return LinearBasisModel(bounds=bounds, fidelity_bounds=fidelity_bounds, noise=noise, noise_floor=noise_floor)
    return TaskBasisModel(bounds=bounds, n_fidelities=n_fidelities, noise=noise, noise_floor=noise_floor)


# --------------------------------------------------------------------------- functional API


def default_params(spec: ModelSpec) -> dict:
    """Deterministic starting hyper-parameters (unconstrained), as a dict of arrays
    (:meth:`ModelSpec.default_params`)."""
    return spec.default_params()


def random_params(spec: ModelSpec, key: jax.Array) -> dict:
    """Random restart: the defaults perturbed in log space (traceable, vmappable)."""
    return spec.random_params(key)


def build_kernel(spec: ModelSpec, params: dict):
    """The tinygp kernel over ``(x_unit, z)`` for these hyper-parameters."""
    return spec.build_kernel(params)


def noise_variances(spec: ModelSpec, params: dict, y_std) -> jax.Array:
    """Noise variance per fidelity (``[n_noise]``) in standardised units of y."""
    return spec.noise_variances(params, y_std)


def signal_variances(spec: ModelSpec, params: dict) -> jax.Array:
    """Prior variances of the model's components (standardised units): diag(B) for ICM
    (then the discrepancy's variance for ``icm_disc``), each level's amplitude for AR(1),
    the amplitude of the product kernel, diag(S) for FABOLAS and the basis models."""
    return spec.signal_variances(params)


def log_prior(spec: ModelSpec, params: dict) -> jax.Array:
    """The weak log-normal priors on lengthscales and signal variances
    (:meth:`ModelSpec.log_prior`)."""
    return spec.log_prior(params)


def icm_kappa(spec: ICMModel, params: dict) -> jax.Array:
    """``[L]`` kappa of the ICM models: exp(log_kappa), kappa_0 raised by
    ``target_floor * (W W^T)_00`` (``icm`` only; ``icm_disc`` floors its discrepancy)."""
    return spec.kappa(params)


def discrepancy_variance(spec: ICMDiscModel, params: dict) -> jax.Array:
    """Scalar variance of ``icm_disc``'s target-only discrepancy, floored at
    ``target_floor * (W W^T)_00``."""
    return spec.discrepancy_variance(params)


def absorb_target_floor(spec: ModelSpec, params: dict) -> dict:
    """Hyper-parameters of ``spec`` with ``target_floor = 0`` whose kernel equals that of
    ``params`` under ``spec``'s floor (:meth:`ICMModel.absorb_target_floor`; ``params``
    itself for a model without a floor). Traceable."""
    return spec.absorb_target_floor(params)


def basis_size(spec: BasisKernelModel) -> int:
    """p, the length of phi(z) in a basis model: 2 for (1, z), the number of tasks for one-hot."""
    return spec.basis_size


def basis_chol(spec: BasisKernelModel, s_chol: jax.Array) -> jax.Array:
    """``[p, p]`` lower-triangular L (S = L L^T) from its packed entries
    (:meth:`BasisKernelModel.basis_chol`)."""
    return spec.basis_chol(s_chol)


def make_scaling(spec: ModelSpec, y, mask=None) -> Scaling:
    """Scaling from the box in ``spec`` and the (masked) mean and sd of ``y``."""
    return spec.make_scaling(y, mask)


def scale_inputs(spec: ModelSpec, scaling: Scaling, x, z):
    """Raw ``(x [..., d], z [...])`` to the kernel's ``(x_unit, z)`` inputs."""
    return spec.scale_inputs(scaling, x, z)


def check_inputs(spec: ModelSpec, x, z, name_x="x", name_z="z"):
    """Validate candidate or training inputs; returns ``(x [n, d], z [n])`` arrays
    (:meth:`ModelSpec.check_inputs`)."""
    return spec.check_inputs(x, z, name_x, name_z)
