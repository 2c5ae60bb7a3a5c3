"""The paper's benchmark functions (Moss et al. 2020, Appendix B)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.benchmarks.problems.problem import Array, as_x, eval_discrete, switch_core
from mumbo_jax.runtime.xla_options import jit

__all__ = ["BOREHOLE_BOUNDS", "currin_continuous_cost", "forrester", "currin", "currin_continuous", "hartmann3", "hartmann6", "borehole", "rosenbrock"]


# --------------------------------------------------------------------------
# Forrester (1-D, 3 fidelities)
# --------------------------------------------------------------------------
def _forrester_high(x1: Array) -> Array:
    return (6.0 * x1 - 2.0) ** 2 * jnp.sin(12.0 * x1 - 4.0)


_forrester_core = switch_core(
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
    return eval_discrete(_forrester_core, x, z, 1, 3, "forrester")


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


_currin_core = switch_core(
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
    return eval_discrete(_currin_core, x, z, 2, 2, "currin")


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
    return _currin_continuous_core(as_x(x, 2), jnp.asarray(z, dtype=jnp.float64))


@jit
def _currin_continuous_core(x: Array, z: Array) -> Array:
    lead = 1.0 - 0.1 * (1.0 - z) * _currin_exp_term(x[1])
    return lead * _currin_rational(x[0])


def currin_continuous_cost(z) -> Array:
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

    @jit
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
    return eval_discrete(_hartmann3_core, x, z, 3, 3, "hartmann3")


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
    return eval_discrete(_hartmann6_core, x, z, 6, 4, "hartmann6")


# --------------------------------------------------------------------------
# Borehole (8-D, 2 fidelities)
# --------------------------------------------------------------------------
BOREHOLE_BOUNDS = np.array(
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


_borehole_core = switch_core(
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
    return eval_discrete(_borehole_core, x, z, 8, 2, "borehole")


# --------------------------------------------------------------------------
# Rosenbrock (2-D, 2 noisy fidelities)
# --------------------------------------------------------------------------
def _rosenbrock_high(x: Array) -> Array:
    return (1.0 - x[0]) ** 2 + 100.0 * (x[1] - x[0] ** 2) ** 2


_rosenbrock_core = switch_core(
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
    return eval_discrete(_rosenbrock_core, x, z, 2, 2, "rosenbrock")


