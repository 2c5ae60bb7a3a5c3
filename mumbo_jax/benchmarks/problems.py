"""Synthetic multi-fidelity benchmark problems (Moss et al. 2020, Appendix B).

Every problem is an immutable :class:`Problem` holding a pure, JAX-traceable
function ``f(x, z)`` together with everything a benchmark run needs: the box,
the fidelity space, the query costs, the observation-noise variances, the
direction of optimisation and the optimum of the target.

Conventions
-----------
* ``x`` has shape ``[dim]`` and lives in ``problem.bounds`` (``[dim, 2]``,
  columns lower/upper).  Batch with ``jax.vmap``.
* Discrete fidelities are integers ``z in {0, ..., n_fidelities - 1}`` and
  **fidelity 0 is the target** (highest, most expensive).  ``z`` may be a
  traced integer: the functions select with ``lax.switch`` / indexing, never
  with Python branching on ``z``.  A concrete integer out of range, or a
  float (concrete, or traced with a float dtype), raises ``ValueError``; a
  traced integer is clamped into range.
* The continuous problem (``currin_continuous``) takes a float ``z`` in
  ``fidelity_bounds = (0, 1)``; its target is ``z = 1``.
* ``problem.f`` returns values in the problem's own sense (``maximise`` says
  which).  :func:`objective` always returns the MAXIMISATION form
  (``-f`` for minimised problems), which is what the optimiser consumes.
* Everything is float64: enable ``jax.config.update("jax_enable_x64", True)``.

The problems (costs per fidelity, target first):

=====================  ===  ==========  ======================  ====  ==============
name                   d    fidelities  costs                   sense optimum
=====================  ===  ==========  ======================  ====  ==============
``forrester``          1    3           10, 5, 2                min   -6.020740
``currin``             2    2           10, 1                   max   13.798722
``hartmann3``          3    3           100, 10, 1              min   -3.862780
``hartmann6``          6    4           1000, 100, 10, 1        min   -3.322368
``borehole``           8    2           10, 1                   max   309.830868
``rosenbrock``         2    2           1000, 1 (noisy)         min   0
``currin_continuous``  2    z in [0,1]  0.1 + z^2               max   13.798722
``park``               4    2           10, 1                   max   25.589254
``branin_aug``         2    2           10, 1                   min   0.397887
=====================  ===  ==========  ======================  ====  ==============

``park`` (Park 1991, fidelities of Xiong et al. 2013) and ``branin_aug`` (Wu et al.
2019's augmented Branin at s = 1, 0.5) are not in the MUMBO paper (issue 13): a
near-perfectly correlated cheap fidelity, and a correlated one with its optimum elsewhere.

The optima stored here were computed numerically (multistart L-BFGS-B and
root finding on the gradient) and are checked in ``tests/test_problems.py``.

Example
-------
>>> import jax, jax.numpy as jnp
>>> jax.config.update("jax_enable_x64", True)
>>> from mumbo_jax.benchmarks import problems
>>> p = problems.get_problem("hartmann3")
>>> X = jnp.full((5, 3), 0.5)
>>> jax.vmap(lambda x: problems.objective(p, x, 0))(X).shape
(5,)
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "Problem",
    "PROBLEMS",
    "get_problem",
    "objective",
    "target_value",
    "cost",
    "noise_variance",
    "noisy_observation",
    "noisy_objective",
    "simple_regret",
    "sample_inputs",
    "forrester",
    "currin",
    "hartmann3",
    "hartmann6",
    "borehole",
    "rosenbrock",
    "park",
    "branin_aug",
    "currin_continuous",
]

Array = jax.Array


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
        else:
            if self.fidelity_bounds is None or self.cost_function is None:
                raise ValueError(
                    "a continuous problem needs fidelity_bounds and cost_function"
                )

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
# Helpers for the fidelity index
# --------------------------------------------------------------------------
def _check_concrete_fidelity(z, n: int, name: str) -> None:
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


def _switch_core(branches):
    """A jitted ``(x, z) -> branches[z](x)`` for a possibly traced integer ``z``.

    Jitting once at module level means eager calls hit the compilation cache
    instead of re-tracing ``lax.switch`` every time; inside a user's ``jit``
    or ``vmap`` the call is simply inlined.
    """

    @jax.jit
    def core(x, z):
        return jax.lax.switch(jnp.asarray(z, dtype=jnp.int32), branches, x)

    return core


def _eval_discrete(core, x, z, dim: int, n: int, name: str) -> Array:
    _check_concrete_fidelity(z, n, name)
    return core(_as_x(x, dim), z)


def _as_x(x, dim: int) -> Array:
    x = jnp.asarray(x, dtype=jnp.float64)
    if x.shape != (dim,):
        raise ValueError(f"x must have shape ({dim},), got {x.shape}; use jax.vmap")
    return x


# --------------------------------------------------------------------------
# Forrester (1-D, 3 fidelities)
# --------------------------------------------------------------------------
def _forrester_high(x1: Array) -> Array:
    return (6.0 * x1 - 2.0) ** 2 * jnp.sin(12.0 * x1 - 4.0)


_forrester_core = _switch_core(
    (
        lambda x: _forrester_high(x[0]),
        lambda x: 0.75 * _forrester_high(x[0]) + 3.0 * (x[0] - 0.5) + 2.0,
        lambda x: 0.5 * _forrester_high(x[0]) + 5.0 * (x[0] - 0.5) + 2.0,
    )
)


def forrester(x: Array, z) -> Array:
    r"""Multi-fidelity Forrester function (Appendix B), ``x in [0, 1]``.

    .. math::
        f(x_1, 0) &= (6x_1 - 2)^2 \sin(12x_1 - 4) \\
        f(x_1, 1) &= 0.75 f(x_1, 0) + 3(x_1 - 0.5) + 2 \\
        f(x_1, 2) &= 0.5 f(x_1, 0) + 5(x_1 - 0.5) + 2

    Minimised; costs 10, 5, 2.

    Args:
        x: shape ``[1]``.
        z: fidelity index in ``{0, 1, 2}`` (0 = target), may be traced.
    """
    return _eval_discrete(_forrester_core, x, z, 1, 3, "forrester")


# --------------------------------------------------------------------------
# Currin exponential (2-D, 2 fidelities; and a continuous-fidelity variant)
# --------------------------------------------------------------------------
# Below this x2 the factor exp(-1/(2 x2)) is exactly 0 in float64 (it
# underflows for x2 < ~6.7e-4); the floor keeps 1/x2**2 finite in the
# gradient so that 0 * inf never turns into NaN.
_CURRIN_X2_FLOOR = 1e-10


def _currin_exp_term(x2: Array) -> Array:
    """``exp(-1/(2 x2))`` with its ``x2 -> 0+`` limit 0 at ``x2 <= 0``.

    Uses the double-``where`` trick so that values AND gradients stay finite at
    (and below) ``x2 = 0``.
    """
    positive = x2 > _CURRIN_X2_FLOOR
    safe_x2 = jnp.where(positive, x2, 1.0)
    return jnp.where(positive, jnp.exp(-0.5 / safe_x2), 0.0)


def _currin_rational(x1: Array) -> Array:
    num = 2300.0 * x1**3 + 1900.0 * x1**2 + 2092.0 * x1 + 60.0
    den = 100.0 * x1**3 + 500.0 * x1**2 + 4.0 * x1 + 20.0
    return num / den


def _currin_high(x1: Array, x2: Array) -> Array:
    return (1.0 - _currin_exp_term(x2)) * _currin_rational(x1)


def _currin_low(x1: Array, x2: Array) -> Array:
    x2_down = jnp.maximum(0.0, x2 - 0.05)
    return 0.25 * (
        _currin_high(x1 + 0.05, x2 + 0.05)
        + _currin_high(x1 + 0.05, x2_down)
        + _currin_high(x1 - 0.05, x2 + 0.05)
        + _currin_high(x1 - 0.05, x2_down)
    )


_currin_core = _switch_core(
    (
        lambda x: _currin_high(x[0], x[1]),
        lambda x: _currin_low(x[0], x[1]),
    )
)


def currin(x: Array, z) -> Array:
    r"""Multi-fidelity Currin exponential function (Appendix B), ``x in [0,1]^2``.

    .. math::
        f(x_1, x_2, 0) &= \Big(1 - \exp\big(-\tfrac{1}{2x_2}\big)\Big)
            \frac{2300x_1^3 + 1900x_1^2 + 2092x_1 + 60}
                 {100x_1^3 + 500x_1^2 + 4x_1 + 20} \\
        f(x_1, x_2, 1) &= \tfrac14 f(x_1 + 0.05, x_2 + 0.05, 0)
            + \tfrac14 f(x_1 + 0.05, \max(0, x_2 - 0.05), 0) \\
            &\quad + \tfrac14 f(x_1 - 0.05, x_2 + 0.05, 0)
            + \tfrac14 f(x_1 - 0.05, \max(0, x_2 - 0.05), 0)

    At ``x2 = 0`` the factor takes its limit ``1 - exp(-inf) = 1``; values and
    gradients are finite there.  Maximised; costs 10, 1.

    Args:
        x: shape ``[2]``.
        z: fidelity index in ``{0, 1}`` (0 = target), may be traced.
    """
    return _eval_discrete(_currin_core, x, z, 2, 2, "currin")


def currin_continuous(x: Array, z) -> Array:
    r"""Currin function with a continuous fidelity ``z in [0, 1]``.

    From Appendix B, "Wider Comparison With Existing Methods" (the form of
    Kandasamy et al. 2017, BOCA), target at ``z = 1``, cost ``0.1 + z^2``:

    .. math::
        f(x_1, x_2, z) = \Big(1 - 0.1(1 - z)\exp\big(-\tfrac{1}{2x_2}\big)\Big)
            \frac{2300x_1^3 + 1900x_1^2 + 2092x_1 + 60}
                 {100x_1^3 + 500x_1^2 + 4x_1 + 20}

    Implemented exactly as printed.  Note that at the target ``z = 1`` the
    exponential factor vanishes, so the target depends on ``x1`` only: its
    maximum 13.798722 (the same value as the discrete Currin optimum) is
    attained at ``x1 = 0.216667`` for EVERY ``x2``; ``optimum_location``
    reports ``(0.216667, 0)``.  Maximised.

    Args:
        x: shape ``[2]``.
        z: float fidelity in ``[0, 1]`` (may be traced).
    """
    return _currin_continuous_core(_as_x(x, 2), jnp.asarray(z, dtype=jnp.float64))


@jax.jit
def _currin_continuous_core(x: Array, z: Array) -> Array:
    lead = 1.0 - 0.1 * (1.0 - z) * _currin_exp_term(x[1])
    return lead * _currin_rational(x[0])


def _currin_continuous_cost(z) -> Array:
    """Cost ``0.1 + z^2`` of the continuous Currin problem."""
    z = jnp.asarray(z, dtype=jnp.float64)
    return 0.1 + z**2


# --------------------------------------------------------------------------
# Hartmann 3 and 6
# --------------------------------------------------------------------------
_H3_A = np.array(
    [[3.0, 10.0, 30.0], [0.1, 10.0, 35.0], [3.0, 10.0, 30.0], [0.1, 10.0, 35.0]]
)
_H3_ALPHA = np.array(
    [[1.0, 1.01, 1.02], [1.2, 1.19, 1.18], [3.0, 2.9, 2.8], [3.2, 3.3, 3.4]]
)
_H3_P = 1e-4 * np.array(
    [
        [3689.0, 1170.0, 2673.0],
        [4699.0, 4387.0, 7470.0],
        [1091.0, 8732.0, 5547.0],
        [381.0, 5743.0, 8828.0],
    ]
)

_H6_A = np.array(
    [
        [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
        [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
        [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
        [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
    ]
)
_H6_ALPHA = np.array(
    [
        [1.0, 1.01, 1.02, 1.03],
        [1.2, 1.19, 1.18, 1.17],
        [3.0, 2.9, 2.8, 2.7],
        [3.2, 3.3, 3.4, 3.5],
    ]
)
_H6_P = 1e-4 * np.array(
    [
        [1312.0, 1696.0, 5569.0, 124.0, 8283.0, 5886.0],
        [2329.0, 4135.0, 8307.0, 3736.0, 1004.0, 9991.0],
        [2348.0, 1451.0, 3522.0, 2883.0, 3047.0, 6650.0],
        [4047.0, 8828.0, 8732.0, 5743.0, 1091.0, 381.0],
    ]
)


def _hartmann_core(A: np.ndarray, alpha: np.ndarray, P: np.ndarray):
    """A jitted ``(x, z) -> -sum_i alpha[i, z] exp(-sum_j A_ij (x_j - P_ij)^2)``."""
    n = alpha.shape[1]

    @jax.jit
    def core(x, z):
        index = jnp.clip(jnp.asarray(z, dtype=jnp.int32), 0, n - 1)
        a = jnp.take(jnp.asarray(alpha), index, axis=1)  # [4]
        inner = jnp.sum(jnp.asarray(A) * (x[None, :] - jnp.asarray(P)) ** 2, axis=1)
        return -jnp.sum(a * jnp.exp(-inner))

    return core


_hartmann3_core = _hartmann_core(_H3_A, _H3_ALPHA, _H3_P)
_hartmann6_core = _hartmann_core(_H6_A, _H6_ALPHA, _H6_P)


def hartmann3(x: Array, z) -> Array:
    r"""Multi-fidelity Hartmann-3 function (Appendix B), ``x in [0,1]^3``.

    .. math::
        f(\mathbf{x}, m) = -\sum_{i=1}^4 \alpha_{i,m+1}
            \exp\Big(-\sum_{j=1}^3 A_{ij}(x_j - P_{ij})^2\Big)

    with ``A``, ``alpha`` (one column per fidelity, column 1 = target) and
    ``P`` (printed x 10^4 in the paper, i.e. ``P = 1e-4 * [[3689, ...]]``) as
    in Appendix B.  Minimised; costs 100, 10, 1.

    Args:
        x: shape ``[3]``.
        z: fidelity index in ``{0, 1, 2}`` (0 = target), may be traced.
    """
    return _eval_discrete(_hartmann3_core, x, z, 3, 3, "hartmann3")


def hartmann6(x: Array, z) -> Array:
    r"""Multi-fidelity Hartmann-6 function (Appendix B), ``x in [0,1]^6``.

    .. math::
        f(\mathbf{x}, m) = -\sum_{i=1}^4 \alpha_{i,m+1}
            \exp\Big(-\sum_{j=1}^6 A_{ij}(x_j - P_{ij})^2\Big)

    with ``A``, ``alpha`` (4 columns, column 1 = target) and ``P`` (x 1e-4) as
    in Appendix B.  Minimised; costs 1000, 100, 10, 1.

    Args:
        x: shape ``[6]``.
        z: fidelity index in ``{0, 1, 2, 3}`` (0 = target), may be traced.
    """
    return _eval_discrete(_hartmann6_core, x, z, 6, 4, "hartmann6")


# --------------------------------------------------------------------------
# Borehole (8-D, 2 fidelities)
# --------------------------------------------------------------------------
_BOREHOLE_BOUNDS = np.array(
    [
        [0.05, 0.15],  # x1 = r_w, borehole radius
        [100.0, 50_000.0],  # x2 = r, radius of influence
        [63_070.0, 115_600.0],  # x3 = T_u, upper aquifer transmissivity
        [990.0, 1110.0],  # x4 = H_u, upper aquifer head
        [63.1, 116.0],  # x5 = T_l, lower aquifer transmissivity
        [700.0, 820.0],  # x6 = H_l, lower aquifer head
        [1120.0, 1680.0],  # x7 = L, borehole length
        [9855.0, 12_055.0],  # x8 = K_w, hydraulic conductivity
    ]
)


def _borehole(x: Array, numerator_const: float, denominator_const: float) -> Array:
    x1, x2, x3, x4, x5, x6, x7, x8 = (x[i] for i in range(8))
    log_ratio = jnp.log(x2 / x1)
    denom = log_ratio * (
        denominator_const + 2.0 * x7 * x3 / (log_ratio * x1**2 * x8) + x3 / x5
    )
    return numerator_const * x3 * (x4 - x6) / denom


_borehole_core = _switch_core(
    (
        lambda x: _borehole(x, 2.0 * math.pi, 1.0),
        lambda x: _borehole(x, 5.0, 1.5),
    )
)


def borehole(x: Array, z) -> Array:
    r"""Multi-fidelity Borehole function (Appendix B), 8-D on its physical box.

    .. math::
        f(\mathbf{x}, 0) &= \frac{2\pi x_3(x_4 - x_6)}
            {\log(x_2/x_1)\Big(1 + \frac{2x_7x_3}{\log(x_2/x_1)x_1^2x_8}
             + \frac{x_3}{x_5}\Big)} \\
        f(\mathbf{x}, 1) &= \frac{5x_3(x_4 - x_6)}
            {\log(x_2/x_1)\Big(1.5 + \frac{2x_7x_3}{\log(x_2/x_1)x_1^2x_8}
             + \frac{x_3}{x_5}\Big)}

    on ``[0.05,0.15] x [100,50000] x [63070,115600] x [990,1110] x
    [63.1,116] x [700,820] x [1120,1680] x [9855,12055]`` (``x`` in physical
    units, not the unit cube).  Maximised; costs 10, 1.

    Args:
        x: shape ``[8]``.
        z: fidelity index in ``{0, 1}`` (0 = target), may be traced.
    """
    return _eval_discrete(_borehole_core, x, z, 8, 2, "borehole")


# --------------------------------------------------------------------------
# Rosenbrock (2-D, 2 noisy fidelities)
# --------------------------------------------------------------------------
def _rosenbrock_high(x: Array) -> Array:
    return (1.0 - x[0]) ** 2 + 100.0 * (x[1] - x[0] ** 2) ** 2


_rosenbrock_core = _switch_core(
    (
        _rosenbrock_high,
        lambda x: _rosenbrock_high(x) + 0.1 * jnp.sin(10.0 * x[0] + 5.0 * x[1]),
    )
)


def rosenbrock(x: Array, z) -> Array:
    r"""Multi-fidelity Rosenbrock function (Appendix B), ``x in [-2, 2]^2``.

    .. math::
        f(x_1, x_2, 0) &= (1 - x_1)^2 + 100(x_2 - x_1^2)^2 \\
        f(x_1, x_2, 1) &= f(x_1, x_2, 0) + 0.1\sin(10x_1 + 5x_2)

    Noise-free values; observations carry Gaussian noise of variance 1e-3
    (target) and 1e-6 (low fidelity), see :func:`noisy_observation`.
    Minimised; costs 1000, 1.

    Args:
        x: shape ``[2]``.
        z: fidelity index in ``{0, 1}`` (0 = target), may be traced.
    """
    return _eval_discrete(_rosenbrock_core, x, z, 2, 2, "rosenbrock")


# --------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------
# Optima computed numerically in float64 (multistart L-BFGS-B, then polished
# by Newton/root finding on the gradient); verified in tests/test_problems.py.
# Forrester: root of f'(x) on [0.7, 0.8].  Currin: x1 = 13/60 is an exact root
# of the rational's derivative, and x2 = 0 makes the exp factor vanish.
# --------------------------------------------------------------------------
# Problems from the literature that are NOT in the MUMBO paper (issue 13)
# --------------------------------------------------------------------------
def _park_high(x: Array) -> Array:
    # x1/2 (sqrt(1 + (x2 + x3^2) x4 / x1^2) - 1) written as (sqrt(x1^2 + a) - x1) / 2,
    # equal for x1 > 0 and finite (with finite gradients) at x1 = 0
    x1, x2, x3, x4 = x[0], x[1], x[2], x[3]
    a = (x2 + x3**2) * x4
    return 0.5 * (jnp.sqrt(x1**2 + a + 1e-300) - x1) + (x1 + 3.0 * x4) * jnp.exp(1.0 + jnp.sin(x3))


def _park_low(x: Array) -> Array:
    x1, x2, x3 = x[0], x[1], x[2]
    return (1.0 + jnp.sin(x1) / 10.0) * _park_high(x) - 2.0 * x1 + x2**2 + x3**2 + 0.5


_park_core = _switch_core((_park_high, _park_low))


def park(x: Array, z) -> Array:
    r"""Park (1991) function with the two fidelities of Xiong, Qian & Wu (2013),
    ``x in [0, 1]^4``.

    .. math::
        f(x, 0) &= \tfrac{x_1}{2}\Big(\sqrt{1 + (x_2 + x_3^2) x_4 / x_1^2} - 1\Big)
            + (x_1 + 3 x_4) \exp(1 + \sin x_3) \\
        f(x, 1) &= \big(1 + \tfrac{\sin x_1}{10}\big) f(x, 0) - 2 x_1 + x_2^2 + x_3^2 + 0.5

    Maximised (optimum 25.589254 at the corner (1, 1, 1, 1)); costs 10, 1. The cheap
    fidelity is correlated ~0.994 with the target over the box.
    """
    return _eval_discrete(_park_core, x, z, 4, 2, "park")


_BRANIN_B = 5.1 / (4.0 * np.pi**2)


def _branin_aug(x: Array, s) -> Array:
    b = _BRANIN_B - 0.1 * (1.0 - s)
    return (x[1] - b * x[0] ** 2 + 5.0 / np.pi * x[0] - 6.0) ** 2 + 10.0 * (1.0 - 1.0 / (8.0 * np.pi)) * jnp.cos(
        x[0]) + 10.0


_branin_aug_core = _switch_core((lambda x: _branin_aug(x, 1.0), lambda x: _branin_aug(x, 0.5)))


def branin_aug(x: Array, z) -> Array:
    r"""The augmented Branin function of Wu, Toscano-Palmerin, Frazier & Wilson (2019,
    "Practical multi-fidelity Bayesian optimization for hyperparameter tuning"; BoTorch's
    ``AugmentedBranin``) at two fidelities s = 1 (target) and s = 0.5,
    ``x in [-5, 10] x [0, 15]``:

    .. math::
        f(x, s) = \big(x_2 - (\tfrac{5.1}{4\pi^2} - 0.1(1 - s)) x_1^2 + \tfrac{5}{\pi} x_1
            - 6\big)^2 + 10\big(1 - \tfrac{1}{8\pi}\big)\cos x_1 + 10

    Minimised; at s = 1 it is Branin (0.397887 at (pi, 2.275) and two other minimisers).
    The cheap task (cost 1 against 10) is correlated ~0.91 with the target over the box
    but its minimiser (-3.13, 11.74) has target regret 0.27: a correlated auxiliary task
    with its optimum elsewhere.
    """
    return _eval_discrete(_branin_aug_core, x, z, 2, 2, "branin_aug")


# Hartmann-3: the often-quoted x1 = 0.114614 is 2.5e-5 off (a flat direction,
# value error 4e-10); the polished optimiser is stored.  Borehole: the corner
# (r_w, T_u, H_u, T_l, K_w at their upper bounds; r, H_l, L at their lower).
_FORRESTER_XSTAR = 0.7572487578418557
_CURRIN_X1STAR = 13.0 / 60.0  # exact root of the rational's derivative
_H3_XSTAR = (0.11458887665506896, 0.5556488946169301, 0.8525469846866774)
_H6_XSTAR = (
    0.20168951100670543,
    0.15001069182345797,
    0.47687397422189703,
    0.2753324304940561,
    0.31165161660011326,
    0.6573005340656204,
)

PROBLEMS: dict[str, Problem] = {}


def _discrete_problem(**fields) -> Problem:
    """A discrete-fidelity :class:`Problem` whose target is fidelity 0."""
    return Problem(fidelity_kind="discrete", fidelity_bounds=None, target_fidelity=0, cost_function=None, **fields)


def _register(problem: Problem) -> Problem:
    PROBLEMS[problem.name] = problem
    return problem


_register(
    _discrete_problem(
        name="forrester",
        dim=1,
        bounds=[[0.0, 1.0]],
        n_fidelities=3,
        costs=(10.0, 5.0, 2.0),
        noise_variances=(0.0, 0.0, 0.0),
        maximise=False,
        optimum_value=-6.0207400557670825,
        optimum_location=[_FORRESTER_XSTAR],
        f=forrester,
    )
)
_register(
    _discrete_problem(
        name="currin",
        dim=2,
        bounds=[[0.0, 1.0], [0.0, 1.0]],
        n_fidelities=2,
        costs=(10.0, 1.0),
        noise_variances=(0.0, 0.0),
        maximise=True,
        optimum_value=13.798722044728434,
        optimum_location=[_CURRIN_X1STAR, 0.0],
        f=currin,
    )
)
_register(
    _discrete_problem(
        name="hartmann3",
        dim=3,
        bounds=[[0.0, 1.0]] * 3,
        n_fidelities=3,
        costs=(100.0, 10.0, 1.0),
        noise_variances=(0.0, 0.0, 0.0),
        maximise=False,
        optimum_value=-3.862779787332663,
        optimum_location=_H3_XSTAR,
        f=hartmann3,
    )
)
_register(
    _discrete_problem(
        name="hartmann6",
        dim=6,
        bounds=[[0.0, 1.0]] * 6,
        n_fidelities=4,
        costs=(1000.0, 100.0, 10.0, 1.0),
        noise_variances=(0.0, 0.0, 0.0, 0.0),
        maximise=False,
        optimum_value=-3.322368011415515,
        optimum_location=_H6_XSTAR,
        f=hartmann6,
    )
)
_BOREHOLE_XSTAR = (0.15, 100.0, 115_600.0, 1110.0, 116.0, 700.0, 1120.0, 12_055.0)
_register(
    _discrete_problem(
        name="borehole",
        dim=8,
        bounds=_BOREHOLE_BOUNDS,
        n_fidelities=2,
        costs=(10.0, 1.0),
        noise_variances=(0.0, 0.0),
        maximise=True,
        optimum_value=309.83086904533246,
        optimum_location=_BOREHOLE_XSTAR,
        f=borehole,
    )
)
_register(
    _discrete_problem(
        name="rosenbrock",
        dim=2,
        bounds=[[-2.0, 2.0], [-2.0, 2.0]],
        n_fidelities=2,
        costs=(1000.0, 1.0),
        noise_variances=(1e-3, 1e-6),
        maximise=False,
        optimum_value=0.0,
        optimum_location=[1.0, 1.0],
        f=rosenbrock,
    )
)
_register(
    Problem(
        name="currin_continuous",
        dim=2,
        bounds=[[0.0, 1.0], [0.0, 1.0]],
        fidelity_kind="continuous",
        n_fidelities=None,
        fidelity_bounds=(0.0, 1.0),
        target_fidelity=1.0,
        costs=None,
        cost_function=_currin_continuous_cost,
        noise_variances=(0.0,),
        maximise=True,
        optimum_value=13.798722044728434,
        optimum_location=[_CURRIN_X1STAR, 0.0],
        f=currin_continuous,
        reference="Moss, Leslie & Rayson (2020), MUMBO, Appendix B "
        "('Wider Comparison'); Kandasamy et al. (2017), BOCA",
    )
)


_NOT_IN_PAPER = "not in the MUMBO paper; added for issue 13"
_register(
    _discrete_problem(
        name="park",
        dim=4,
        bounds=[[0.0, 1.0]] * 4,
        n_fidelities=2,
        costs=(10.0, 1.0),
        noise_variances=(0.0, 0.0),
        maximise=True,
        optimum_value=25.589254158606547,
        optimum_location=[1.0, 1.0, 1.0, 1.0],
        f=park,
        reference="Park (1991); two fidelities of Xiong, Qian & Wu (2013); " + _NOT_IN_PAPER,
    )
)
_register(
    _discrete_problem(
        name="branin_aug",
        dim=2,
        bounds=[[-5.0, 10.0], [0.0, 15.0]],
        n_fidelities=2,
        costs=(10.0, 1.0),
        noise_variances=(0.0, 0.0),
        maximise=False,
        optimum_value=0.39788735772973816,
        optimum_location=[np.pi, 2.275],
        f=branin_aug,
        reference="Wu et al. (2019) augmented Branin at s = 1, 0.5; " + _NOT_IN_PAPER,
    )
)


def get_problem(name: str) -> Problem:
    """Return the registered problem called ``name``.

    Raises:
        ValueError: naming the unknown problem and listing the allowed names.
    """
    try:
        return PROBLEMS[name]
    except (KeyError, TypeError):
        allowed = ", ".join(sorted(PROBLEMS))
        raise ValueError(
            f"unknown problem {name!r}; allowed problems: {allowed}"
        ) from None


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
    """``f(x, target_fidelity)`` in the problem's own sense."""
    return problem.f(x, problem.target_fidelity)


def cost(problem: Problem, z) -> Array:
    """Query cost of fidelity ``z`` (traceable).

    Discrete: ``costs[z]`` (a concrete out-of-range ``z`` raises; a traced one
    is clamped).  Continuous: ``cost_function(z)``, e.g. ``0.1 + z^2``.
    """
    if problem.is_discrete:
        _check_concrete_fidelity(z, problem.n_fidelities, problem.name)
        table = jnp.asarray(problem.costs, dtype=jnp.float64)
        return jnp.take(table, jnp.asarray(z, dtype=jnp.int32), mode="clip")
    return problem.cost_function(z)


def noise_variance(problem: Problem, z) -> Array:
    """Observation-noise variance of fidelity ``z`` (traceable; 0 = noiseless)."""
    table = jnp.asarray(problem.noise_variances, dtype=jnp.float64)
    if problem.is_discrete:
        _check_concrete_fidelity(z, problem.n_fidelities, problem.name)
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
