"""Model specifications, their hyper-parameter pytrees and kernels.

A :class:`ModelSpec` is static, hashable configuration (which kernel, the search box,
the fidelities, fixed or learned noise). Hyper-parameters are a plain dict of
unconstrained arrays, so they can be optimised by optax, vmapped over restarts and
saved. :func:`build_kernel` turns (spec, params) into a tinygp kernel over ``(x, z)``.

Seven kinds:

* ``"icm"``: intrinsic coregionalisation k_X(x,x') B[i,j], B = W W^T + diag(kappa).
* ``"ar1"``: the linear AR(1) multi-fidelity model of Kennedy & O'Hagan.
* ``"product"``: continuous fidelity, k_X(x,x') k_Z(z,z') with Matern-5/2 on both.
* ``"fabolas"``: continuous fidelity, k_X(x,x') phi(z)^T S phi(z'), phi(z)=(z,(1-z)^2).
* ``"linear_basis"`` / ``"task_basis"`` (:func:`basis_model`): k_X(x,x') phi(z)^T S phi(z')
  with phi(z) = (1, z) for a continuous fidelity or one_hot(z) for discrete tasks, a
  full S = L L^T and one noise variance: the learned cost model's GP on log cost
  (:mod:`mumbo_jax.gp.costmodel`).
* ``"icm_disc"``: ICM plus a target-only discrepancy GP with its own ARD lengthscales
  and variance: k = k_X(x,x') B[i,j] + [i = j = 0] k_D(x,x') (a linear model of
  coregionalisation whose second component drives only the target, fidelity 0).

``ModelSpec.target_floor`` (ICM kinds) keeps the target's own variance from vanishing:
``icm`` adds ``target_floor * (W W^T)_00`` to kappa_0, ``icm_disc`` to the discrepancy's
variance, so no cheap fidelity can be fitted as perfectly correlated with the target.
Off by default everywhere (:data:`DEFAULT_TARGET_FLOOR`); the benchmarks'
tasks and the ``run`` / ``compare`` / ``tune`` configs take it as ``target_floor``
(docs/RESULTS.md, "A floor under the target's own variance").

Inputs are scaled to the unit cube (and a continuous z to [0, 1]) and outputs
standardised inside the model (:class:`Scaling`); lengthscales live on the unit cube.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.gp import kernels

__all__ = [
    "KINDS", "DISCRETE_KINDS", "BASIS_KINDS", "ICM_KINDS", "DEFAULT_TARGET_FLOOR", "ModelSpec", "check_bounds", "icm_model", "ar1_model",
    "product_model", "fabolas_model", "icm_disc_model", "icm_kappa", "discrepancy_variance", "absorb_target_floor", "basis_model", "basis_size", "basis_chol", "default_params",
    "random_params", "build_kernel", "noise_variances", "signal_variances", "log_prior", "Scaling",
    "make_scaling", "scale_inputs", "check_inputs", "check_in_box", "check_data",
]

KINDS = ("icm", "ar1", "product", "fabolas", "linear_basis", "task_basis", "icm_disc")
DISCRETE_KINDS = ("icm", "ar1", "task_basis", "icm_disc")
ICM_KINDS = ("icm", "icm_disc")
# The target-specific share of an ICM's target variance in the benchmarks' tasks and the
# CLI when none is given: 0, the paper's plain ICM. A 1 % floor lowered the regret on the
# two-fidelity problems and the literature pair but raised it 50-fold on Rosenbrock (cost
# ratio 1000), where the cheap fidelity is nearly exact (docs/RESULTS.md, "Levers tried").
DEFAULT_TARGET_FLOOR = 0.0
BASIS_KINDS = ("linear_basis", "task_basis")


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """Static description of a multi-fidelity GP model.

    Attributes:
        kind: one of ``KINDS``.
        bounds: ``d`` pairs ``(lower, upper)`` of the search box for x.
        n_fidelities: number of discrete fidelities/tasks (``icm``, ``ar1``).
        fidelity_bounds: ``(lower, upper)`` of a continuous fidelity
            (``product``, ``fabolas``).
        rank: rank of W in the ICM coregionalisation matrix.
        noise: ``None`` to learn the noise variance (one per discrete fidelity of
            ``icm``/``ar1``, one for a continuous fidelity and for the basis kinds), or
            fixed variances in the units of y (a float or one per noise variance).
        noise_floor: lower bound of the noise variance, in standardised units of y.
        target_floor: ICM kinds: the target-specific variance (kappa_0 for ``icm``, the
            discrepancy's variance for ``icm_disc``) is at least this fraction of the
            shared target variance (W W^T)_00; then |rho| <= 1 / sqrt(1 + target_floor)
            between the target and any fidelity at equal x. 0 (the default): the plain
            model.
    """

    kind: str
    bounds: tuple
    n_fidelities: int | None = None
    fidelity_bounds: tuple | None = None
    rank: int = 2
    noise: tuple | None = None
    noise_floor: float = 1e-6
    target_floor: float = 0.0

    def __post_init__(self):
        f = self.target_floor
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0.0 <= f < float("inf"):
            raise ValueError(f"target_floor must be a finite number >= 0, got {f!r}")
        if f > 0 and self.kind not in ICM_KINDS:
            raise ValueError(f"target_floor applies to the ICM kinds {ICM_KINDS}, not {self.kind!r}")

    @property
    def dim(self) -> int:
        return len(self.bounds)

    @property
    def discrete(self) -> bool:
        return self.kind in DISCRETE_KINDS

    @property
    def n_noise(self) -> int:
        return self.n_fidelities if self.kind in ("icm", "ar1", "icm_disc") else 1


def check_bounds(bounds, name="bounds"):
    arr = np.asarray(bounds, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 1:
        raise ValueError(f"{name} must have shape [d, 2] (lower, upper pairs), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr.tolist()}")
    bad = np.nonzero(arr[:, 0] >= arr[:, 1])[0]
    if bad.size:
        raise ValueError(
            f"{name}: lower bound must be below upper bound; dimension(s) {bad.tolist()} "
            f"have {[tuple(arr[i]) for i in bad]}"
        )
    return tuple((float(lo), float(hi)) for lo, hi in arr)


def _check_noise(noise, n_noise):
    if noise is None:
        return None
    arr = np.atleast_1d(np.asarray(noise, dtype=float))
    if arr.size == 1:
        arr = np.full(n_noise, arr[0])
    if arr.shape != (n_noise,):
        raise ValueError(f"noise must be a float or {n_noise} values (one per fidelity), got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"noise variances must be finite and >= 0, got {arr.tolist()}")
    return tuple(float(v) for v in arr)


def _discrete_spec(kind, bounds, n_fidelities, rank, noise, noise_floor, target_floor=0.0):
    if int(n_fidelities) != n_fidelities or n_fidelities < 1:
        raise ValueError(f"n_fidelities must be a positive integer, got {n_fidelities}")
    if int(rank) != rank or rank < 1:
        raise ValueError(f"rank must be a positive integer, got {rank}")
    n_fidelities = int(n_fidelities)
    return ModelSpec(
        kind=kind,
        bounds=check_bounds(bounds),
        n_fidelities=n_fidelities,
        rank=int(rank),
        noise=_check_noise(noise, n_fidelities),
        noise_floor=float(noise_floor),
        target_floor=target_floor,
    )


def _continuous_spec(kind, bounds, fidelity_bounds, noise, noise_floor):
    (zb,) = check_bounds([fidelity_bounds], "fidelity_bounds")
    return ModelSpec(
        kind=kind,
        bounds=check_bounds(bounds),
        fidelity_bounds=zb,
        noise=_check_noise(noise, 1),
        noise_floor=float(noise_floor),
    )


def icm_model(bounds, n_fidelities, rank=2, noise=None, noise_floor=1e-6, target_floor=0.0) -> ModelSpec:
    """Intrinsic coregionalisation over ``n_fidelities`` discrete fidelities or tasks."""
    return _discrete_spec("icm", bounds, n_fidelities, rank, noise, noise_floor, target_floor)


def icm_disc_model(bounds, n_fidelities, rank=2, noise=None, noise_floor=1e-6, target_floor=0.05) -> ModelSpec:
    """ICM plus a target-only discrepancy GP (own ARD lengthscales and variance, the
    variance floored at ``target_floor`` (W W^T)_00); fidelity 0 is the target."""
    return _discrete_spec("icm_disc", bounds, n_fidelities, rank, noise, noise_floor, target_floor)


def ar1_model(bounds, n_fidelities, noise=None, noise_floor=1e-6) -> ModelSpec:
    """Linear AR(1) multi-fidelity model; fidelity 0 is the highest (the target)."""
    return _discrete_spec("ar1", bounds, n_fidelities, 1, noise, noise_floor)


def product_model(bounds, fidelity_bounds=(0.0, 1.0), noise=None, noise_floor=1e-6) -> ModelSpec:
    """Continuous fidelity z in ``fidelity_bounds`` with a product Matern kernel."""
    return _continuous_spec("product", bounds, fidelity_bounds, noise, noise_floor)


def fabolas_model(bounds, fidelity_bounds=(0.0, 1.0), noise=None, noise_floor=1e-6) -> ModelSpec:
    """Continuous fidelity with FABOLAS' basis kernel over the scaled fidelity."""
    return _continuous_spec("fabolas", bounds, fidelity_bounds, noise, noise_floor)


def basis_model(bounds, n_fidelities=None, fidelity_bounds=None, noise=None, noise_floor=1e-6) -> ModelSpec:
    """k_X(x,x') phi(z)^T S phi(z') with a full S and one noise variance (the cost GP).

    Give exactly one of ``fidelity_bounds`` (kind ``"linear_basis"``, phi(z) = (1, z) on
    the scaled fidelity: linear in z for each x, so it extrapolates a trend) or
    ``n_fidelities`` (kind ``"task_basis"``, phi(z) = one_hot(z): a full-rank ICM).
    """
    if (n_fidelities is None) == (fidelity_bounds is None):
        raise ValueError("basis_model needs exactly one of n_fidelities (discrete tasks) or fidelity_bounds "
                         f"(a continuous fidelity); got n_fidelities={n_fidelities}, fidelity_bounds={fidelity_bounds}")
    if fidelity_bounds is not None:
        return _continuous_spec("linear_basis", bounds, fidelity_bounds, noise, noise_floor)
    if int(n_fidelities) != n_fidelities or n_fidelities < 1:
        raise ValueError(f"n_fidelities must be a positive integer, got {n_fidelities}")
    return ModelSpec(kind="task_basis", bounds=check_bounds(bounds), n_fidelities=int(n_fidelities),
                     noise=_check_noise(noise, 1), noise_floor=float(noise_floor))


def basis_size(spec: ModelSpec) -> int:
    """p, the length of phi(z) in a basis kind: 2 for (1, z), the number of tasks for one-hot."""
    return spec.n_fidelities if spec.kind == "task_basis" else 2


def basis_chol(spec: ModelSpec, s_chol: jax.Array) -> jax.Array:
    """``[p, p]`` lower-triangular L (S = L L^T) from its packed row-major entries
    ``s_chol [p (p + 1) / 2]``, the diagonal stored as logs (so L has a positive one)."""
    p = basis_size(spec)
    rows, cols = np.tril_indices(p)
    vals = jnp.where(jnp.asarray(rows == cols), jnp.exp(s_chol), s_chol)
    return jnp.zeros((p, p), s_chol.dtype).at[rows, cols].set(vals)


# --------------------------------------------------------------------------- params


def default_params(spec: ModelSpec) -> dict:
    """Deterministic starting hyper-parameters (unconstrained), as a dict of arrays."""
    d = spec.dim
    log_ls = jnp.full(d, jnp.log(0.3))
    params = {"log_noise": jnp.full(spec.n_noise, jnp.log(1e-3))}
    if spec.kind in ICM_KINDS:
        L = spec.n_fidelities
        params["log_ls"] = log_ls
        params["W"] = jnp.full((L, spec.rank), 0.7 / np.sqrt(spec.rank))
        params["log_kappa"] = jnp.full(L, jnp.log(0.1))
        if spec.kind == "icm_disc":
            params["log_ls_d"] = log_ls
            params["log_amp_d"] = jnp.log(jnp.asarray(0.1))
    elif spec.kind == "ar1":
        L = spec.n_fidelities
        params["log_ls"] = jnp.tile(log_ls, (L, 1))
        params["log_amp"] = jnp.concatenate([jnp.full(L - 1, jnp.log(0.1)), jnp.zeros(1)])
        params["rho"] = jnp.ones(L - 1)
    elif spec.kind == "product":
        params["log_ls"] = log_ls
        params["log_amp"] = jnp.zeros(())
        params["log_ls_z"] = jnp.log(jnp.asarray(1.0))
    elif spec.kind == "fabolas":
        params["log_ls"] = log_ls
        # S = Lc Lc^T with Lc = [[exp(a), 0], [b, exp(c)]]
        params["S_chol"] = jnp.asarray([0.0, 0.0, jnp.log(0.5)])
    elif spec.kind in BASIS_KINDS:
        # lengthscales 0.5 of the unit cube, S = 0.5 I, noise 1e-2 (standardised units)
        rows, cols = np.tril_indices(basis_size(spec))
        params["log_ls"] = jnp.full(d, jnp.log(0.5))
        params["S_chol"] = jnp.asarray(np.where(rows == cols, np.log(np.sqrt(0.5)), 0.0))
        params["log_noise"] = jnp.full(1, jnp.log(1e-2))
    else:
        raise ValueError(f"unknown model kind {spec.kind!r}; allowed: {KINDS}")
    return params


def random_params(spec: ModelSpec, key: jax.Array) -> dict:
    """Random restart: the defaults perturbed in log space (traceable, vmappable)."""
    base = default_params(spec)
    leaves, treedef = jax.tree_util.tree_flatten(base)
    keys = jax.random.split(key, len(leaves))
    noisy = [leaf + 0.7 * jax.random.normal(k, leaf.shape, leaf.dtype) for leaf, k in zip(leaves, keys)]
    return jax.tree_util.tree_unflatten(treedef, noisy)


def icm_kappa(spec: ModelSpec, params: dict) -> jax.Array:
    """``[L]`` kappa of the ICM kinds: exp(log_kappa), kappa_0 raised by
    ``target_floor * (W W^T)_00`` (``icm`` only; ``icm_disc`` floors its discrepancy)."""
    kappa = jnp.exp(params["log_kappa"])
    if spec.kind == "icm" and spec.target_floor > 0:
        kappa = kappa.at[0].add(spec.target_floor * jnp.sum(params["W"][0] ** 2))
    return kappa


def discrepancy_variance(spec: ModelSpec, params: dict) -> jax.Array:
    """Scalar variance of ``icm_disc``'s target-only discrepancy, floored at
    ``target_floor * (W W^T)_00``."""
    return jnp.exp(params["log_amp_d"]) + spec.target_floor * jnp.sum(params["W"][0] ** 2)


def absorb_target_floor(spec: ModelSpec, params: dict) -> dict:
    """Hyper-parameters of ``spec`` with ``target_floor = 0`` whose kernel equals that of
    ``params`` under ``spec``'s floor: the floor's ``target_floor * (W W^T)_00`` moved into
    kappa_0 (``icm``) or the discrepancy's variance (``icm_disc``). Lets fits under
    different floors be compared and used by one floor-free program
    (``BOSettings.target_floor_cv``). Traceable."""
    if spec.kind not in ICM_KINDS or spec.target_floor == 0:
        return params
    extra = spec.target_floor * jnp.sum(params["W"][0] ** 2)
    out = dict(params)
    if spec.kind == "icm":
        out["log_kappa"] = params["log_kappa"].at[0].set(jnp.logaddexp(params["log_kappa"][0], jnp.log(extra)))
    else:
        out["log_amp_d"] = jnp.logaddexp(params["log_amp_d"], jnp.log(extra))
    return out


def build_kernel(spec: ModelSpec, params: dict):
    """The tinygp kernel over ``(x_unit, z)`` for these hyper-parameters."""
    if spec.kind == "icm":
        kx = kernels.matern52_ard(jnp.exp(params["log_ls"]))
        return kernels.ICM(kx, kernels.icm_matrix(params["W"], icm_kappa(spec, params)))
    if spec.kind == "icm_disc":
        kx = kernels.matern52_ard(jnp.exp(params["log_ls"]))
        kd = kernels.matern52_ard(jnp.exp(params["log_ls_d"]), discrepancy_variance(spec, params))
        return kernels.ICMDiscrepancy(kx, kernels.icm_matrix(params["W"], icm_kappa(spec, params)), kd)
    if spec.kind == "ar1":
        kxs = tuple(
            kernels.matern52_ard(jnp.exp(params["log_ls"][l]), jnp.exp(params["log_amp"][l]))
            for l in range(spec.n_fidelities)
        )
        return kernels.AR1(kxs, kernels.ar1_coefficients(params["rho"]))
    if spec.kind == "product":
        kx = kernels.matern52_ard(jnp.exp(params["log_ls"]), jnp.exp(params["log_amp"]))
        kz = kernels.matern52_scalar(jnp.exp(params["log_ls_z"]))
        return kernels.ContinuousProduct(kx, kz)
    if spec.kind == "fabolas":
        a, b, c = params["S_chol"]
        chol = jnp.asarray([[jnp.exp(a), 0.0], [b, jnp.exp(c)]])
        return kernels.FabolasBasis(kernels.matern52_ard(jnp.exp(params["log_ls"])), chol @ chol.T)
    if spec.kind in BASIS_KINDS:
        chol = basis_chol(spec, params["S_chol"])
        return kernels.BasisKernel(kernels.matern52_ard(jnp.exp(params["log_ls"])), chol @ chol.T,
                                   one_hot=spec.kind == "task_basis")
    raise ValueError(f"unknown model kind {spec.kind!r}; allowed: {KINDS}")


def noise_variances(spec: ModelSpec, params: dict, y_std) -> jax.Array:
    """Noise variance per fidelity (``[n_noise]``) in standardised units of y."""
    if spec.noise is None:
        return spec.noise_floor + jnp.exp(params["log_noise"])
    fixed = jnp.asarray(spec.noise) / jnp.square(y_std)
    return jnp.maximum(fixed, spec.noise_floor)


def signal_variances(spec: ModelSpec, params: dict) -> jax.Array:
    """Prior variances of the model's components (standardised units): diag(B) for ICM,
    each level's amplitude for AR(1), the amplitude of the product kernel, diag(S)
    for FABOLAS and the basis kinds."""
    if spec.kind == "icm":
        return jnp.sum(params["W"] ** 2, axis=1) + icm_kappa(spec, params)
    if spec.kind == "icm_disc":  # diag(B), then the discrepancy's variance
        b = jnp.sum(params["W"] ** 2, axis=1) + icm_kappa(spec, params)
        return jnp.concatenate([b, discrepancy_variance(spec, params)[None]])
    if spec.kind in ("ar1", "product"):
        return jnp.exp(jnp.atleast_1d(params["log_amp"]))
    if spec.kind in BASIS_KINDS:
        return jnp.sum(basis_chol(spec, params["S_chol"]) ** 2, axis=1)
    a, b, c = params["S_chol"]
    return jnp.stack([jnp.exp(2 * a), b**2 + jnp.exp(2 * c)])


def log_prior(spec: ModelSpec, params: dict) -> jax.Array:
    """Weak log-normal priors that keep fits sane on the few points BO starts with:
    lengthscales (unit cube) ~ logN(log 0.5, 1.2^2) and signal variances (standardised
    y) ~ logN(0, 1.5^2). Without them two points in 1-D are fitted by a near-linear
    function of huge amplitude and lengthscale; with many points the data dominate."""
    lp = -0.5 * jnp.sum(jnp.square((params["log_ls"] - jnp.log(0.5)) / 1.2))
    if "log_ls_d" in params:  # icm_disc: the discrepancy's lengthscales, same prior
        lp = lp - 0.5 * jnp.sum(jnp.square((params["log_ls_d"] - jnp.log(0.5)) / 1.2))
    return lp - 0.5 * jnp.sum(jnp.square(jnp.log(signal_variances(spec, params)) / 1.5))


# --------------------------------------------------------------------------- scaling


class Scaling(NamedTuple):
    """Affine maps to the model's internal units.

    x_unit = (x - x_lower) / x_width;  z_unit = (z - z_lower) / z_width (continuous);
    y_std = (y - y_mean) / y_scale.
    """

    x_lower: jax.Array
    x_width: jax.Array
    z_lower: jax.Array
    z_width: jax.Array
    y_mean: jax.Array
    y_scale: jax.Array


def make_scaling(spec: ModelSpec, y, mask=None) -> Scaling:
    """Scaling from the box in ``spec`` and the (masked) mean and sd of ``y``."""
    b = jnp.asarray(spec.bounds)
    zl, zw = (0.0, 1.0)
    if not spec.discrete:
        zl, zw = spec.fidelity_bounds[0], spec.fidelity_bounds[1] - spec.fidelity_bounds[0]
    y = jnp.asarray(y)
    m = jnp.ones_like(y) if mask is None else jnp.asarray(mask, y.dtype)
    count = jnp.maximum(jnp.sum(m), 1.0)
    mean = jnp.sum(m * y) / count
    var = jnp.sum(m * jnp.square(y - mean)) / count
    # a constant y (or a single point) must not divide by zero
    scale = jnp.where(var > 1e-24, jnp.sqrt(jnp.maximum(var, 1e-24)), 1.0)
    return Scaling(b[:, 0], b[:, 1] - b[:, 0], jnp.asarray(zl), jnp.asarray(zw), mean, scale)


def scale_inputs(spec: ModelSpec, scaling: Scaling, x, z):
    """Raw ``(x [..., d], z [...])`` to the kernel's ``(x_unit, z)`` inputs."""
    xu = (jnp.asarray(x) - scaling.x_lower) / scaling.x_width
    if spec.discrete:
        return xu, jnp.asarray(z, dtype=jnp.int32)
    return xu, (jnp.asarray(z, dtype=xu.dtype) - scaling.z_lower) / scaling.z_width


# --------------------------------------------------------------------------- data


def check_inputs(spec: ModelSpec, x, z, name_x="x", name_z="z"):
    """Validate candidate or training inputs; returns ``(x [n, d], z [n])`` arrays.

    Raises ValueError naming the problem: wrong shapes, non-finite values, a fidelity
    index that does not exist, or a continuous fidelity outside its bounds. Traced
    inputs (inside jit) are only shape-checked.
    """
    x = jnp.asarray(x)
    z = jnp.asarray(z)
    if x.ndim == 1 and spec.dim == 1 and (z.ndim == 1 and z.shape[0] == x.shape[0] and x.shape[0] != 1):
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != spec.dim:
        raise ValueError(f"{name_x} must have shape [n, {spec.dim}] for this {spec.dim}-D model, got {tuple(x.shape)}")
    if z.ndim == 0:
        z = jnp.broadcast_to(z, x.shape[:1])
    if z.shape != x.shape[:1]:
        raise ValueError(f"{name_z} must have shape [{x.shape[0]}] (one fidelity per row of {name_x}), got {tuple(z.shape)}")
    if isinstance(x, jax.core.Tracer) or isinstance(z, jax.core.Tracer):
        return x, z
    xn, zn = np.asarray(x), np.asarray(z)
    if not np.all(np.isfinite(xn)):
        raise ValueError(f"{name_x} contains non-finite values")
    if spec.discrete:
        if not np.all(np.mod(zn, 1) == 0) or np.any(zn < 0) or np.any(zn >= spec.n_fidelities):
            bad = sorted(set(np.asarray(zn).ravel().tolist()) - set(range(spec.n_fidelities)))
            raise ValueError(
                f"{name_z}: fidelity {bad[0]} does not exist; this model has fidelities "
                f"0..{spec.n_fidelities - 1} (0 is the target)"
            )
    else:
        lo, hi = spec.fidelity_bounds
        if not np.all(np.isfinite(zn)) or np.any(zn < lo) or np.any(zn > hi):
            raise ValueError(f"{name_z}: continuous fidelity outside its bounds [{lo}, {hi}]")
    return x, z


def check_in_box(spec: ModelSpec, x, mask=None, name: str = "x"):
    """ValueError naming the rows of concrete ``x [n, d]`` (those with mask > 0) that lie
    outside the model's box by more than 1e-9 of its width (traced inputs pass)."""
    if isinstance(x, jax.core.Tracer) or isinstance(mask, jax.core.Tracer):
        return
    b = np.asarray(spec.bounds, float)
    xn = np.asarray(x, float).reshape(-1, b.shape[0])
    live = np.ones(xn.shape[0], bool) if mask is None else np.asarray(mask) > 0
    tol = 1e-9 * (b[:, 1] - b[:, 0])
    out = np.nonzero(live & np.any((xn < b[:, 0] - tol) | (xn > b[:, 1] + tol), axis=1))[0]
    if out.size:
        raise ValueError(f"{name} rows {out[:10].tolist()} lie outside the model's box {b.tolist()}; the model "
                         "scales inputs to its box, so fit on the box the data come from")


def check_data(spec: ModelSpec, x, z, y, mask=None):
    """Validate training data; returns ``(x [n, d], z [n], y [n], mask [n])``."""
    x, z = check_inputs(spec, x, z)
    y = jnp.asarray(y, dtype=x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else None)
    if y.shape != x.shape[:1]:
        raise ValueError(f"y must have shape [{x.shape[0]}] (one value per row of x), got {tuple(y.shape)}")
    mask = jnp.ones(y.shape, y.dtype) if mask is None else jnp.asarray(mask, y.dtype)
    if mask.shape != y.shape:
        raise ValueError(f"mask must have shape {tuple(y.shape)}, got {tuple(mask.shape)}")
    if not isinstance(y, jax.core.Tracer) and not isinstance(mask, jax.core.Tracer):
        yn, mn = np.asarray(y), np.asarray(mask)
        bad = np.nonzero(~np.isfinite(yn) & (mn > 0))[0]
        if bad.size:
            raise ValueError(f"y contains non-finite values at rows {bad[:10].tolist()}; drop or fix them before fitting")
        if mn.sum() < 1:
            raise ValueError("no observations: at least one (unmasked) data point is needed")
    return x, z, y, mask
