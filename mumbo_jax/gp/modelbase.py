"""The base of every model: :class:`ModelSpec` and its two fidelity families.

A model is a frozen (hashable) dataclass: static configuration (the search box, the
fidelities, fixed or learned noise), usable as a static argument of ``jax.jit``. Its
hyper-parameters are a plain dict of unconstrained arrays, so they can be optimised by
optax, vmapped over restarts and saved. Its methods carry its behaviour, in the manner of
tinygp's kernel classes: a concrete model (:mod:`mumbo_jax.gp.models`) subclasses
:class:`DiscreteModel` or :class:`ContinuousModel` and writes three methods,
:meth:`ModelSpec.default_params`, :meth:`ModelSpec.build_kernel` and
:meth:`ModelSpec.signal_variances`; the base provides the rest (random restarts, noise,
priors, scaling, input checks, the Gram matrix of the fit), each overridable.

Inputs are scaled to the unit cube (and a continuous z to [0, 1]) and outputs
standardised inside the model (:class:`Scaling`); lengthscales live on the unit cube.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.gp import kernels
from mumbo_jax.runtime.tracing import is_concrete

__all__ = ["NOISE_FLOOR", "ModelSpec", "DiscreteModel", "ContinuousModel", "Scaling", "check_bounds", "check_noise",
           "check_count", "lengthscale_misfit", "check_in_box", "check_data"]

# The default lower bound of a learned noise variance (standardised units of y). It sets the
# finest difference the model resolves on a noiseless target: at 1e-6 (sd 1e-3 of y's spread)
# every rule ground to a halt about 1e-4 from Currin's optimum, sampling beside its best point;
# at 1e-9 (sd 3e-5) the default's final median regret there fell from 7.7e-5 to 2.2e-8
# (docs/concepts.md). Float64 Cholesky factors stay positive definite far
# below it (the backward error is about n * 1e-16 of the kernel's scale).
NOISE_FLOOR = 1e-9


def check_bounds(bounds, name="bounds"):
    """``d`` pairs ``(lower, upper)`` as a tuple of float pairs; ValueError naming the
    problem (shape, non-finite values, a lower bound not below its upper bound)."""
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


def check_noise(noise, n_noise):
    """``None`` (learned noise) or ``n_noise`` fixed variances as a tuple of floats (a
    single value is repeated); ValueError on a wrong count, non-finite or negative values."""
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


def check_count(value, name):
    """A positive integer (an int or an integral float), else ValueError."""
    if int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def lengthscale_misfit(log_ls: jax.Array) -> jax.Array:
    """sum ((log l - log 0.5) / 1.2)^2 over lengthscales on the unit cube: -2 x the log of
    the weak prior logN(log 0.5, 1.2^2) of :meth:`ModelSpec.log_prior` (without its constant)."""
    return jnp.sum(jnp.square((log_ls - jnp.log(0.5)) / 1.2))


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


@dataclasses.dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """Base of the multi-fidelity GP models (static, hashable, a valid ``jit`` static
    argument). Subclass :class:`DiscreteModel` or :class:`ContinuousModel` rather than
    this class; fields are keyword-only and normalised in ``__post_init__``.

    Attributes:
        bounds: ``d`` pairs ``(lower, upper)`` of the search box for x.
        noise: ``None`` to learn the noise variance(s) (``n_noise`` of them), or fixed
            variances in the units of y (a float or one per noise variance).
        noise_floor: lower bound of the noise variance, in standardised units of y.
        kind: class attribute, the model's name in configs and ``KINDS`` (``"icm"``, ...).
        discrete: class attribute, True for integer fidelities/tasks.
        target_floor: class attribute 0.0; a field of the ICM models only
            (:class:`mumbo_jax.gp.models.ICMModel`).
    """

    bounds: tuple
    noise: tuple | None = None
    noise_floor: float = NOISE_FLOOR

    kind: ClassVar[str] = ""
    discrete: ClassVar[bool]
    # attributes every model answers (the fields of some models): n_fidelities for
    # continuous models, fidelity_bounds for discrete ones, target_floor outside ICM
    target_floor: ClassVar[float] = 0.0

    def __post_init__(self):
        object.__setattr__(self, "bounds", check_bounds(self.bounds))
        object.__setattr__(self, "noise", check_noise(self.noise, self.n_noise))
        object.__setattr__(self, "noise_floor", float(self.noise_floor))

    # ------------------------------------------------------------------ shape
    @property
    def dim(self) -> int:
        """d, the dimension of x."""
        return len(self.bounds)

    @property
    def n_noise(self) -> int:
        """How many noise variances the model has (one, unless a subclass says otherwise)."""
        return 1

    # ------------------------------------------------------------------ to write
    def default_params(self) -> dict:
        """Deterministic starting hyper-parameters (unconstrained), a dict of arrays;
        it must hold ``"log_noise"`` ``[n_noise]`` (see :meth:`noise_variances`)."""
        raise NotImplementedError(f"{type(self).__name__} must define default_params")

    def build_kernel(self, params: dict):
        """The tinygp kernel over internal inputs ``(x_unit, z)`` for ``params``."""
        raise NotImplementedError(f"{type(self).__name__} must define build_kernel")

    def signal_variances(self, params: dict) -> jax.Array:
        """Prior variances of the model's components (standardised units), the
        amplitudes :meth:`log_prior` puts its prior on."""
        raise NotImplementedError(f"{type(self).__name__} must define signal_variances")

    # ------------------------------------------------------------------ provided
    def random_params(self, key: jax.Array) -> dict:
        """Random restart: the defaults perturbed in log space (traceable, vmappable)."""
        base = self.default_params()
        leaves, treedef = jax.tree_util.tree_flatten(base)
        keys = jax.random.split(key, len(leaves))
        noisy = [leaf + 0.7 * jax.random.normal(k, leaf.shape, leaf.dtype) for leaf, k in zip(leaves, keys)]
        return jax.tree_util.tree_unflatten(treedef, noisy)

    def noise_variances(self, params: dict, y_std) -> jax.Array:
        """Noise variance per fidelity (``[n_noise]``) in standardised units of y."""
        if self.noise is None:
            return self.noise_floor + jnp.exp(params["log_noise"])
        fixed = jnp.asarray(self.noise) / jnp.square(y_std)
        return jnp.maximum(fixed, self.noise_floor)

    def log_lengthscales(self, params: dict) -> tuple:
        """The arrays of log lengthscales :meth:`log_prior` puts its prior on
        (default: ``params["log_ls"]``)."""
        return (params["log_ls"],)

    def log_prior(self, params: dict) -> jax.Array:
        """Weak log-normal priors that keep fits sane on the few points BO starts with:
        lengthscales (unit cube) ~ logN(log 0.5, 1.2^2) and signal variances (standardised
        y) ~ logN(0, 1.5^2). Without them two points in 1-D are fitted by a near-linear
        function of huge amplitude and lengthscale; with many points the data dominate."""
        first, *rest = self.log_lengthscales(params)
        lp = -0.5 * lengthscale_misfit(first)
        for log_ls in rest:
            lp = lp - 0.5 * lengthscale_misfit(log_ls)
        return lp - 0.5 * jnp.sum(jnp.square(jnp.log(self.signal_variances(params)) / 1.5))

    def absorb_target_floor(self, params: dict) -> dict:
        """Hyper-parameters under which the same model without a target floor has the
        same kernel (only the ICM models have a floor; here ``params`` unchanged)."""
        return params

    def gram(self, params: dict, xu, zu, mask) -> jax.Array:
        """``[n, n]`` masked prior covariance m m' k((x, z), (x', z')) on internal inputs,
        the fit's Gram matrix (default: the tinygp kernel of :meth:`build_kernel`)."""
        kernel = kernels.Masked(self.build_kernel(params))
        X = (xu, zu, mask)
        return kernel(X, X)

    def cross(self, params: dict, xa, za, xb, zb) -> jax.Array:
        """``[n, m]`` prior cross-covariance k((xa, za), (xb, zb)) on internal inputs, what
        the posterior's moments at candidates are built from (default: the tinygp
        kernel of :meth:`build_kernel`; a model may give a dense form of the same
        arithmetic, as the ICM model does)."""
        return self.build_kernel(params)((xa, za), (xb, zb))

    # ------------------------------------------------------------------ units
    def fidelity_scale(self) -> tuple:
        """``(z_lower, z_width)`` of the map of z to internal units."""
        raise NotImplementedError

    def scale_fidelity(self, scaling: Scaling, z, dtype):
        """Raw fidelities ``z`` in internal units (an index, or a float in [0, 1])."""
        raise NotImplementedError

    def check_fidelities(self, zn: np.ndarray, name_z: str = "z"):
        """ValueError when a concrete fidelity does not exist in this model."""
        raise NotImplementedError

    def make_scaling(self, y, mask=None) -> Scaling:
        """Scaling from the model's box and the (masked) mean and sd of ``y``."""
        b = jnp.asarray(self.bounds)
        zl, zw = self.fidelity_scale()
        y = jnp.asarray(y)
        m = jnp.ones_like(y) if mask is None else jnp.asarray(mask, y.dtype)
        count = jnp.maximum(jnp.sum(m), 1.0)
        mean = jnp.sum(m * y) / count
        var = jnp.sum(m * jnp.square(y - mean)) / count
        # a constant y (or a single point) must not divide by zero
        scale = jnp.where(var > 1e-24, jnp.sqrt(jnp.maximum(var, 1e-24)), 1.0)
        return Scaling(b[:, 0], b[:, 1] - b[:, 0], jnp.asarray(zl), jnp.asarray(zw), mean, scale)

    def scale_inputs(self, scaling: Scaling, x, z):
        """Raw ``(x [..., d], z [...])`` to the kernel's ``(x_unit, z)`` inputs."""
        xu = (jnp.asarray(x) - scaling.x_lower) / scaling.x_width
        return xu, self.scale_fidelity(scaling, z, xu.dtype)

    def check_inputs(self, x, z, name_x="x", name_z="z"):
        """Validate candidate or training inputs; returns ``(x [n, d], z [n])`` arrays.

        Raises ValueError naming the problem: wrong shapes, non-finite values, a fidelity
        that does not exist (:meth:`check_fidelities`). Traced inputs (inside jit) are
        only shape-checked.
        """
        x = jnp.asarray(x)
        z = jnp.asarray(z)
        if x.ndim == 1 and self.dim == 1 and (z.ndim == 1 and z.shape[0] == x.shape[0] and x.shape[0] != 1):
            x = x[:, None]
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"{name_x} must have shape [n, {self.dim}] for this {self.dim}-D model, "
                             f"got {tuple(x.shape)}")
        if z.ndim == 0:
            z = jnp.broadcast_to(z, x.shape[:1])
        if z.shape != x.shape[:1]:
            raise ValueError(f"{name_z} must have shape [{x.shape[0]}] (one fidelity per row of {name_x}), "
                             f"got {tuple(z.shape)}")
        if not is_concrete(x, z):
            return x, z
        if not np.all(np.isfinite(np.asarray(x))):
            raise ValueError(f"{name_x} contains non-finite values")
        self.check_fidelities(np.asarray(z), name_z)
        return x, z


@dataclasses.dataclass(frozen=True, kw_only=True)
class DiscreteModel(ModelSpec):
    """A model over ``n_fidelities`` discrete fidelities or tasks ``z = 0, 1, ...``
    (0 is the target), passed to the kernel as integer indices.

    Attributes:
        n_fidelities: the number of fidelities/tasks.
    """

    n_fidelities: int

    discrete: ClassVar[bool] = True
    fidelity_bounds: ClassVar[None] = None

    def __post_init__(self):
        object.__setattr__(self, "n_fidelities", check_count(self.n_fidelities, "n_fidelities"))
        super().__post_init__()

    def fidelity_scale(self) -> tuple:
        return (0.0, 1.0)

    def scale_fidelity(self, scaling: Scaling, z, dtype):
        return jnp.asarray(z, dtype=jnp.int32)

    def check_fidelities(self, zn, name_z="z"):
        if not np.all(np.mod(zn, 1) == 0) or np.any(zn < 0) or np.any(zn >= self.n_fidelities):
            bad = sorted(set(np.asarray(zn).ravel().tolist()) - set(range(self.n_fidelities)))
            raise ValueError(
                f"{name_z}: fidelity {bad[0]} does not exist; this model has fidelities "
                f"0..{self.n_fidelities - 1} (0 is the target)"
            )


@dataclasses.dataclass(frozen=True, kw_only=True)
class ContinuousModel(ModelSpec):
    """A model over a continuous fidelity z in ``fidelity_bounds``, passed to the kernel
    scaled to [0, 1].

    Attributes:
        fidelity_bounds: ``(lower, upper)`` of the fidelity.
    """

    fidelity_bounds: tuple = (0.0, 1.0)

    discrete: ClassVar[bool] = False
    n_fidelities: ClassVar[None] = None

    def __post_init__(self):
        (zb,) = check_bounds([self.fidelity_bounds], "fidelity_bounds")
        object.__setattr__(self, "fidelity_bounds", zb)
        super().__post_init__()

    def fidelity_scale(self) -> tuple:
        return self.fidelity_bounds[0], self.fidelity_bounds[1] - self.fidelity_bounds[0]

    def scale_fidelity(self, scaling: Scaling, z, dtype):
        return (jnp.asarray(z, dtype=dtype) - scaling.z_lower) / scaling.z_width

    def check_fidelities(self, zn, name_z="z"):
        lo, hi = self.fidelity_bounds
        if not np.all(np.isfinite(zn)) or np.any(zn < lo) or np.any(zn > hi):
            raise ValueError(f"{name_z}: continuous fidelity outside its bounds [{lo}, {hi}]")


def check_in_box(spec: ModelSpec, x, mask=None, name: str = "x"):
    """ValueError naming the rows of concrete ``x [n, d]`` (those with mask > 0) that lie
    outside the model's box by more than 1e-9 of its width (traced inputs pass)."""
    if not is_concrete(x, mask):
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
    x, z = spec.check_inputs(x, z)
    y = jnp.asarray(y, dtype=x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else None)
    if y.shape != x.shape[:1]:
        raise ValueError(f"y must have shape [{x.shape[0]}] (one value per row of x), got {tuple(y.shape)}")
    mask = jnp.ones(y.shape, y.dtype) if mask is None else jnp.asarray(mask, y.dtype)
    if mask.shape != y.shape:
        raise ValueError(f"mask must have shape {tuple(y.shape)}, got {tuple(mask.shape)}")
    if is_concrete(y, mask):
        yn, mn = np.asarray(y), np.asarray(mask)
        bad = np.nonzero(~np.isfinite(yn) & (mn > 0))[0]
        if bad.size:
            raise ValueError(f"y contains non-finite values at rows {bad[:10].tolist()}; drop or fix them before fitting")
        if mn.sum() < 1:
            raise ValueError("no observations: at least one (unmasked) data point is needed")
    return x, z, y, mask
