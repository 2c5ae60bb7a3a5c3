"""The :class:`Problem` record, the helpers the benchmark functions share, and the
functions of a problem (objective in maximisation form, cost, noise, regret, sampling)."""

from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.runtime.xla_options import jit

Array = jax.Array

__all__ = ["Problem", "Array", "discrete_problem", "continuous_problem", "check_concrete_fidelity", "switch_core", "eval_discrete", "as_x", "objective",
           "target_value", "cost", "noise_variance", "noisy_observation", "noisy_objective", "simple_regret",
           "sample_inputs"]


# --------------------------------------------------------------------------
# The problem description
# --------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False)
class Problem:
    """An immutable multi-fidelity benchmark problem.

    Instances hash by identity, so a problem can be passed to ``jax.jit`` as a
    static argument (``static_argnums``) or simply closed over.

    Attributes:
        name: registry key, e.g. ``"hartmann3"``.
        dim: input dimension ``d``.
        bounds: read-only float64 array ``[d, 2]`` of lower/upper bounds.
        fidelity_kind: ``"discrete"`` or ``"continuous"``.
        n_fidelities: number of discrete fidelities (``None`` if continuous).
        fidelity_bounds: ``(low, high)`` of a continuous fidelity
            (``None`` if discrete).
        target_fidelity: ``0`` for discrete problems (fidelity 0 is the
            target), ``1.0`` for the continuous Currin problem.
        costs: query cost per discrete fidelity, target first (``None`` if
            continuous).
        cost_function: ``z -> cost`` for a continuous fidelity (``None`` if
            discrete).  Use :func:`cost` for either kind.
        noise_variances: Gaussian observation-noise variance per discrete
            fidelity; for a continuous problem a 1-tuple applying to every z.
            Zero means noiseless.  Use :func:`noise_variance`.
        maximise: ``True`` if the benchmark maximises ``f``, ``False`` if it
            minimises it.
        optimum_value: the optimum of the target ``f(., target_fidelity)`` in
            the problem's own sense (max if ``maximise`` else min).
        optimum_location: read-only float64 array ``[d]``: a point attaining
            ``optimum_value`` (for ``currin_continuous`` the optimiser is not
            unique, see its docstring).
        f: the pure function ``f(x, z) -> scalar`` (``x`` shape ``[d]``).
        reference: where the formula comes from.
        target_weights: for a discrete problem whose target combines its fidelities
            (FASTCV's fold mean): one weight per fidelity, the target being
            ``g(x) = sum_j w_j f(x, j)``; ``None`` (every other problem): the target
            is ``f(x, target_fidelity)``.
    """

    name: str
    dim: int
    bounds: np.ndarray
    fidelity_kind: str
    n_fidelities: int | None
    fidelity_bounds: tuple[float, float] | None
    target_fidelity: int | float
    costs: tuple[float, ...] | None
    cost_function: Callable[[Array], Array] | None
    noise_variances: tuple[float, ...]
    maximise: bool
    optimum_value: float
    optimum_location: np.ndarray
    f: Callable[[Array, Array], Array]
    reference: str = "Moss, Leslie & Rayson (2020), MUMBO, Appendix B"
    target_weights: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        bounds = np.array(self.bounds, dtype=np.float64).reshape(self.dim, 2)
        bounds.setflags(write=False)
        loc = np.array(self.optimum_location, dtype=np.float64).reshape(self.dim)
        loc.setflags(write=False)
        object.__setattr__(self, "bounds", bounds)
        object.__setattr__(self, "optimum_location", loc)
        if self.fidelity_kind not in ("discrete", "continuous"):
            raise ValueError(
                f"fidelity_kind must be 'discrete' or 'continuous', got "
                f"{self.fidelity_kind!r}"
            )
        if self.fidelity_kind == "discrete":
            if self.n_fidelities is None or self.costs is None:
                raise ValueError("a discrete problem needs n_fidelities and costs")
            if len(self.costs) != self.n_fidelities or len(
                self.noise_variances
            ) != self.n_fidelities:
                raise ValueError("costs/noise_variances need one entry per fidelity")
            if self.target_weights is not None and len(self.target_weights) != self.n_fidelities:
                raise ValueError("target_weights need one entry per fidelity")
        else:
            if self.fidelity_bounds is None or self.cost_function is None:
                raise ValueError(
                    "a continuous problem needs fidelity_bounds and cost_function"
                )
            if self.target_weights is not None:
                raise ValueError("target_weights are for discrete fidelities")

    @property
    def lower(self) -> np.ndarray:
        """Lower bounds, shape ``[d]``."""
        return self.bounds[:, 0]

    @property
    def upper(self) -> np.ndarray:
        """Upper bounds, shape ``[d]``."""
        return self.bounds[:, 1]

    @property
    def is_discrete(self) -> bool:
        """Whether the fidelity space is a finite set of integers."""
        return self.fidelity_kind == "discrete"

    @property
    def fidelities(self) -> tuple[int, ...]:
        """The discrete fidelity indices ``(0, ..., n_fidelities - 1)``."""
        if not self.is_discrete:
            raise ValueError(f"{self.name!r} has a continuous fidelity")
        return tuple(range(self.n_fidelities))

    def __repr__(self) -> str:  # arrays and callables make the default noisy
        fid = (
            f"n_fidelities={self.n_fidelities}, costs={self.costs}"
            if self.is_discrete
            else f"fidelity_bounds={self.fidelity_bounds}"
        )
        return (
            f"Problem(name={self.name!r}, dim={self.dim}, {fid}, "
            f"maximise={self.maximise}, optimum_value={self.optimum_value})"
        )


# --------------------------------------------------------------------------
# Building a problem of one's own
# --------------------------------------------------------------------------
def _checked_common(name, bounds, optimum_value, optimum_location):
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a name like 'my_branin' (letters, digits, _), got {name!r}")
    b = np.asarray(bounds, dtype=np.float64)
    if b.ndim != 2 or b.shape[1] != 2 or b.shape[0] < 1 or not np.all(np.isfinite(b)) or np.any(b[:, 0] >= b[:, 1]):
        raise ValueError(f"{name}: bounds must be [[low, high], ...], one finite pair with low < high per input "
                         f"dimension, got {np.asarray(bounds).tolist()}")
    loc = np.asarray(optimum_location, dtype=np.float64).reshape(-1)
    if loc.shape != (b.shape[0],) or np.any(loc < b[:, 0]) or np.any(loc > b[:, 1]):
        raise ValueError(f"{name}: optimum_location must be a point of the box, {b.shape[0]} numbers within bounds, "
                         f"got {np.asarray(optimum_location).tolist()}")
    if not np.isfinite(float(optimum_value)):
        raise ValueError(f"{name}: optimum_value must be a finite number, got {optimum_value!r}")
    return b, loc


def _check_optimum(problem: "Problem") -> "Problem":
    """The target at ``optimum_location`` must be ``optimum_value`` (regrets are measured
    against it): a wrong sign or a stale value fails here, not as negative regrets."""
    got = float(target_value(problem, jnp.asarray(problem.optimum_location)))
    if not abs(got - problem.optimum_value) <= 1e-6 * max(1.0, abs(problem.optimum_value)):
        raise ValueError(f"{problem.name}: the target at optimum_location is {got!r}, not optimum_value "
                         f"{problem.optimum_value!r} (give f's value there, in f's own sense)")
    return problem


def discrete_problem(name: str, f, bounds, costs, optimum_value: float, optimum_location, *,
                     maximise: bool = False, noise_variances=None, reference: str = "user-defined") -> "Problem":
    """A problem of one's own with discrete fidelities, fidelity 0 the target (register
    it with :func:`~mumbo_jax.benchmarks.problems.register` to run it by name).

    Args:
        name: its registry name (``problem = "..."`` in a config).
        f: one function ``f_j(x) -> scalar`` per fidelity, target first (a list), or one
            JAX-traceable ``f(x, z)`` taking a possibly traced integer ``z``. ``x`` has
            shape ``[d]``; use ``jax.numpy``.
        bounds: ``[[low, high], ...]``, one pair per input dimension.
        costs: the cost of a query per fidelity, target first (all > 0).
        optimum_value: the best value of the target in ``f``'s own sense (the regrets
            are measured against it: for a problem without a known optimum, the best
            value of a dense search); checked against ``f`` at ``optimum_location``.
        optimum_location: a point of the box where the target takes ``optimum_value``.
        maximise: whether ``f`` is maximised (default: minimised).
        noise_variances: Gaussian observation-noise variance per fidelity (default 0).
        reference: where the function comes from.

    Raises:
        ValueError: naming the first field that is wrong.
    """
    b, loc = _checked_common(name, bounds, optimum_value, optimum_location)
    try:
        costs = tuple(float(c) for c in costs)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: costs must be a list of numbers, target first, got {costs!r}") from None
    if not costs or not all(0 < c < float("inf") for c in costs):
        raise ValueError(f"{name}: costs must be finite numbers > 0, one per fidelity, got {list(costs)}")
    n, dim = len(costs), b.shape[0]
    noise = (0.0,) * n if noise_variances is None else tuple(float(v) for v in noise_variances)
    if len(noise) != n or not all(0 <= v < float("inf") for v in noise):
        raise ValueError(f"{name}: noise_variances must be {n} finite numbers >= 0 (one per fidelity), got {list(noise)}")
    if callable(f):
        fn = f
    elif isinstance(f, (list, tuple)) and len(f) == n and all(callable(g) for g in f):
        branches = tuple((lambda x, g=g: jnp.asarray(g(x), dtype=jnp.float64).reshape(())) for g in f)
        core = switch_core(branches)

        def fn(x, z):
            return eval_discrete(core, x, z, dim, n, name)
    else:
        raise ValueError(f"{name}: f must be a function f(x, z) or a list of {n} functions f_j(x), one per cost")
    problem = Problem(name=name, dim=dim, bounds=b, fidelity_kind="discrete", n_fidelities=n, fidelity_bounds=None,
                      target_fidelity=0, costs=costs, cost_function=None, noise_variances=noise,
                      maximise=bool(maximise), optimum_value=float(optimum_value), optimum_location=loc, f=fn,
                      reference=reference)
    return _check_optimum(problem)


def continuous_problem(name: str, f, bounds, cost_function, optimum_value: float, optimum_location, *,
                       fidelity_bounds=(0.0, 1.0), maximise: bool = False, noise_variance: float = 0.0,
                       reference: str = "user-defined") -> "Problem":
    """A problem of one's own with one continuous fidelity ``z`` in ``fidelity_bounds``,
    its upper end the target.

    Args:
        name, bounds, optimum_value, optimum_location, maximise, reference: as for
            :func:`discrete_problem` (the optimum is that of ``f(x, high)``).
        f: a JAX-traceable ``f(x, z) -> scalar`` (``x`` shape ``[d]``, ``z`` a float).
        cost_function: a JAX-traceable ``z -> cost > 0``, e.g. ``lambda z: 0.1 + z ** 2``.
        fidelity_bounds: ``(low, high)``; ``high`` is the target.
        noise_variance: Gaussian observation-noise variance at every ``z`` (default 0).

    Raises:
        ValueError: naming the first field that is wrong.
    """
    b, loc = _checked_common(name, bounds, optimum_value, optimum_location)
    if not callable(f) or not callable(cost_function):
        raise ValueError(f"{name}: f(x, z) and cost_function(z) must be functions")
    try:
        lo, hi = (float(v) for v in fidelity_bounds)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: fidelity_bounds must be (low, high), got {fidelity_bounds!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"{name}: fidelity_bounds must be finite with low < high, got {fidelity_bounds!r}")
    ends = [float(cost_function(jnp.asarray(v, dtype=jnp.float64))) for v in (lo, hi)]
    if not all(0 < c < float("inf") for c in ends):
        raise ValueError(f"{name}: cost_function must be finite and > 0; at z = {lo:g} and {hi:g} it is {ends}")
    if not 0 <= float(noise_variance) < float("inf"):
        raise ValueError(f"{name}: noise_variance must be a finite number >= 0, got {noise_variance!r}")
    problem = Problem(name=name, dim=b.shape[0], bounds=b, fidelity_kind="continuous", n_fidelities=None,
                      fidelity_bounds=(lo, hi), target_fidelity=hi, costs=None, cost_function=cost_function,
                      noise_variances=(float(noise_variance),), maximise=bool(maximise),
                      optimum_value=float(optimum_value), optimum_location=loc, f=f, reference=reference)
    return _check_optimum(problem)


# --------------------------------------------------------------------------
# Helpers for the fidelity index
# --------------------------------------------------------------------------
def check_concrete_fidelity(z, n: int, name: str) -> None:
    """Validate a discrete fidelity index.

    Rejects booleans, floats (concrete or traced: the dtype is static) and
    concrete integers outside ``0..n-1``.  A traced integer cannot be checked
    and is clamped into range by the evaluation.
    """
    if isinstance(z, (bool, np.bool_, float, np.floating)) or (
        hasattr(z, "dtype") and not jnp.issubdtype(z.dtype, jnp.integer)
    ):
        raise ValueError(f"{name}: fidelity must be an integer index, got {z!r}")
    if isinstance(z, (int, np.integer)) and not 0 <= int(z) < n:
        raise ValueError(
            f"{name}: fidelity {int(z)} out of range; allowed 0..{n - 1} "
            "(0 is the target)"
        )


def switch_core(branches):
    """A jitted ``(x, z) -> branches[z](x)`` for a possibly traced integer ``z``.

    Jitting once at module level means eager calls hit the compilation cache
    instead of re-tracing ``lax.switch`` every time; inside a user's ``jit``
    or ``vmap`` the call is simply inlined.
    """

    @jit
    def core(x, z):
        return jax.lax.switch(jnp.asarray(z, dtype=jnp.int32), branches, x)

    return core


def eval_discrete(core, x, z, dim: int, n: int, name: str) -> Array:
    check_concrete_fidelity(z, n, name)
    return core(as_x(x, dim), z)


def as_x(x, dim: int) -> Array:
    x = jnp.asarray(x, dtype=jnp.float64)
    if x.shape != (dim,):
        raise ValueError(f"x must have shape ({dim},), got {x.shape}; use jax.vmap")
    return x




# --------------------------------------------------------------------------
# Functions of a problem
# --------------------------------------------------------------------------
def _sign(problem: Problem) -> float:
    return 1.0 if problem.maximise else -1.0


def objective(problem: Problem, x: Array, z) -> Array:
    """``f(x, z)`` in MAXIMISATION convention: ``f`` if maximised, else ``-f``.

    Args:
        problem: the benchmark.
        x: shape ``[dim]``.
        z: fidelity (int index or float, may be traced).

    Returns:
        Scalar float64.
    """
    return _sign(problem) * problem.f(x, z)


def target_value(problem: Problem, x: Array) -> Array:
    """``f(x, target_fidelity)`` in the problem's own sense (``sum_j w_j f(x, j)`` for a
    problem with ``target_weights``)."""
    if problem.target_weights is not None:
        return sum(w * problem.f(x, j) for j, w in enumerate(problem.target_weights) if w != 0)
    return problem.f(x, problem.target_fidelity)


def cost(problem: Problem, z) -> Array:
    """Query cost of fidelity ``z`` (traceable).

    Discrete: ``costs[z]`` (a concrete out-of-range ``z`` raises; a traced one
    is clamped).  Continuous: ``cost_function(z)``, e.g. ``0.1 + z^2``.
    """
    if problem.is_discrete:
        check_concrete_fidelity(z, problem.n_fidelities, problem.name)
        table = jnp.asarray(problem.costs, dtype=jnp.float64)
        return jnp.take(table, jnp.asarray(z, dtype=jnp.int32), mode="clip")
    return problem.cost_function(z)


def noise_variance(problem: Problem, z) -> Array:
    """Observation-noise variance of fidelity ``z`` (traceable; 0 = noiseless)."""
    table = jnp.asarray(problem.noise_variances, dtype=jnp.float64)
    if problem.is_discrete:
        check_concrete_fidelity(z, problem.n_fidelities, problem.name)
        return jnp.take(table, jnp.asarray(z, dtype=jnp.int32), mode="clip")
    return jnp.broadcast_to(table[0], jnp.shape(z))


def noisy_observation(problem: Problem, key: Array, x: Array, z) -> Array:
    """``y = f(x, z) + eps``, ``eps ~ N(0, noise_variance(z))``, problem's own sense.

    Noise-free problems return ``f(x, z)`` exactly (the noise term is
    ``sqrt(0) * normal = 0``).
    """
    eps = jax.random.normal(key, (), dtype=jnp.float64)
    return problem.f(x, z) + jnp.sqrt(noise_variance(problem, z)) * eps


def noisy_objective(problem: Problem, key: Array, x: Array, z) -> Array:
    """:func:`noisy_observation` in maximisation convention (sign applied)."""
    return _sign(problem) * noisy_observation(problem, key, x, z)


def simple_regret(problem: Problem, x: Array) -> Array:
    """Simple regret of ``x`` at the target fidelity, ``>= 0``.

    ``optimum_value - f(x, target)`` for a maximised problem and
    ``f(x, target) - optimum_value`` for a minimised one (i.e.
    ``|optimum_value - f(x, target)|`` taken in the right direction), floored
    at 0 to absorb rounding at the optimiser itself.
    """
    gap = _sign(problem) * (problem.optimum_value - target_value(problem, x))
    return jnp.maximum(gap, 0.0)


def sample_inputs(problem: Problem, key: Array, n: int) -> Array:
    """``n`` points drawn uniformly in ``problem.bounds``, shape ``[n, dim]``."""
    u = jax.random.uniform(key, (n, problem.dim), dtype=jnp.float64)
    lo = jnp.asarray(problem.lower)
    hi = jnp.asarray(problem.upper)
    return lo + u * (hi - lo)
