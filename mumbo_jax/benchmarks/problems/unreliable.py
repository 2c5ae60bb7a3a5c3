r"""The ``unreliable`` suite: multi-fidelity problems whose cheap source may mislead.

Ten problems from the multi-fidelity literature that are not in the MUMBO paper. Each pairs a
target (fidelity 0) with one cheap source (fidelity 1, cost 1 against the target's 10; one
problem has a continuous fidelity instead). For three base functions (Forrester, Branin,
Hartmann-3) the suite holds a RELIABLE cheap source and at least one UNRELIABLE one, so that
a strategy can be judged on both with the target held fixed. The kinds of unreliability:

==============================  ====  ==============================================
name                            d     cheap source
==============================  ====  ==============================================
``unrel_forrester_reliable``    1     reliable (Mainini et al. 2022, Forrester f3)
``unrel_forrester_biased``      1     bias that moves the optimum to the other basin
``unrel_branin_reliable``       2     reliable (Toal 2015 adjustable Branin, a = 0)
``unrel_branin_anti``           2     anti-correlated (Toal 2015, a = 1)
``unrel_hartmann3_reliable``    3     reliable (Toal 2015 adjustable Hartmann-3)
``unrel_hartmann3_noisy``       3     the reliable mean, observed with heavy noise
``unrel_hartmann3_twotask``     3     auxiliary task, correlated ~0.92, optimum elsewhere
``unrel_hartmann3_partial``     3     informative only where x3 < 0.6
``unrel_currin_negated``        2     anti-correlated (Mikkola et al. 2023)
``unrel_branin_continuous``     2     reliable, continuous z in [0, 1] (BOCA Branin)
==============================  ====  ==============================================

The functions here are pure and JAX-traceable; the registry
(:mod:`mumbo_jax.benchmarks.problems.registry`) attaches the box, costs, noise and the
verified optimum, and lists the suite (``suite("unreliable")``). The correlations and
optimum shifts quoted in the docstrings are over a 4096-point Sobol sample of the box and by
multistart L-BFGS-B; ``tests/test_unreliable_problems.py`` checks each claim.

:data:`SOURCE_KIND` says, per problem, whether its cheap source is reliable and if not how.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.benchmarks.problems.paper import currin, forrester
from mumbo_jax.benchmarks.problems.problem import Array, as_x, eval_discrete, switch_core
from mumbo_jax.runtime.xla_options import jit

__all__ = [
    "SOURCE_KIND", "unrel_forrester_reliable", "unrel_forrester_biased", "unrel_branin_reliable",
    "unrel_branin_anti", "unrel_hartmann3_reliable", "unrel_hartmann3_noisy", "unrel_hartmann3_twotask",
    "unrel_hartmann3_partial", "unrel_currin_negated", "unrel_branin_continuous", "unrel_branin_continuous_cost",
    "TOAL_HARTMANN3_A", "HARTMANN3_NOISY_VARIANCE", "HARTMANN3_PARTIAL_EDGE", "HARTMANN3_PARTIAL_WIDTH",
]

#: Per problem of the suite: ``"reliable"`` or the kind of unreliability of its cheap source
#: (``"bias"``, ``"noise"``, ``"anti-correlation"``, ``"partial"``, ``"two-task"``).
SOURCE_KIND: dict[str, str] = {
    "unrel_forrester_reliable": "reliable",
    "unrel_forrester_biased": "bias",
    "unrel_branin_reliable": "reliable",
    "unrel_branin_anti": "anti-correlation",
    "unrel_hartmann3_reliable": "reliable",
    "unrel_hartmann3_noisy": "noise",
    "unrel_hartmann3_twotask": "two-task",
    "unrel_currin_negated": "anti-correlation",
    "unrel_hartmann3_partial": "partial",
    "unrel_branin_continuous": "reliable",
}


# --------------------------------------------------------------------------
# Forrester (Forrester, Sobester & Keane 2007; Mainini et al. 2022)
# --------------------------------------------------------------------------
def _forrester_target(x: Array) -> Array:
    return forrester(x, 0)


def _forrester_lf(x: Array, a: float, b: float, c: float) -> Array:
    return a * forrester(x, 0) + b * (x[0] - 0.5) + c


_forrester_reliable_core = switch_core((_forrester_target, lambda x: _forrester_lf(x, 0.75, 5.0, -2.0)))
_forrester_biased_core = switch_core((_forrester_target, lambda x: _forrester_lf(x, 0.5, 10.0, -5.0)))


def unrel_forrester_reliable(x: Array, z) -> Array:
    r"""Forrester with the reliable cheap source ``f_3`` of Mainini et al. (2022,
    "Analytical benchmark problems for multifidelity optimization methods",
    arXiv:2204.07867, the multi-fidelity Forrester family), ``x in [0, 1]``:

    .. math::
        f(x, 0) = (6x - 2)^2 \sin(12x - 4), \qquad
        f(x, 1) = 0.75 f(x, 0) + 5(x - 0.5) - 2

    Minimised (target optimum -6.020740 at x = 0.757249); costs 10, 1. RELIABLE: the cheap
    source is correlated 0.94 with the target and its minimiser (x = 0.7508) has target
    regret 0.022 (0.1 % of the target's range of 21.8).

    Args:
        x: shape ``[1]``.
        z: fidelity index in ``{0, 1}`` (0 = target), may be traced.

    Returns:
        Scalar float64.
    """
    return eval_discrete(_forrester_reliable_core, x, z, 1, 2, "unrel_forrester_reliable")


def unrel_forrester_biased(x: Array, z) -> Array:
    r"""Forrester with the classic biased cheap source of Forrester, Sobester & Keane (2007,
    "Multi-fidelity optimization via surrogate modelling", Proc. R. Soc. A 463, Section 4;
    also ``f_4`` of Mainini et al. 2022), ``x in [0, 1]``:

    .. math::
        f(x, 0) = (6x - 2)^2 \sin(12x - 4), \qquad
        f(x, 1) = 0.5 f(x, 0) + 10(x - 0.5) - 5

    Minimised (target optimum -6.020740 at x = 0.757249); costs 10, 1. UNRELIABLE, a bias
    that moves the optimum: the linear trend makes the cheap source's minimiser the other
    basin (x = 0.092), where the target's regret is 5.50; correlation with the target 0.74.

    Args:
        x: shape ``[1]``.
        z: fidelity index in ``{0, 1}`` (0 = target), may be traced.

    Returns:
        Scalar float64.
    """
    return eval_discrete(_forrester_biased_core, x, z, 1, 2, "unrel_forrester_biased")


# --------------------------------------------------------------------------
# Branin (Toal 2015's adjustable pair; Kandasamy et al. 2017's continuous fidelity)
# --------------------------------------------------------------------------
_BRANIN_B0 = 5.1 / (4.0 * np.pi**2)
_BRANIN_C0 = 5.0 / np.pi
_BRANIN_T0 = 1.0 / (8.0 * np.pi)


def _branin_params(x: Array, b, c, t) -> Array:
    return (x[1] - b * x[0] ** 2 + c * x[0] - 6.0) ** 2 + 10.0 * (1.0 - t) * jnp.cos(x[0]) + 10.0


def _branin_quad(x: Array) -> Array:
    """The quadratic term's base, ``x2 - b x1^2 + c x1 - 6``."""
    return x[1] - _BRANIN_B0 * x[0] ** 2 + _BRANIN_C0 * x[0] - 6.0


def _branin(x: Array) -> Array:
    return _branin_params(x, _BRANIN_B0, _BRANIN_C0, _BRANIN_T0)


def _toal_branin_lf(x: Array, a: float) -> Array:
    return _branin(x) - (a + 0.5) * _branin_quad(x) ** 2


_branin_reliable_core = switch_core((_branin, lambda x: _toal_branin_lf(x, 0.0)))
_branin_anti_core = switch_core((_branin, lambda x: _toal_branin_lf(x, 1.0)))



def unrel_branin_reliable(x: Array, z) -> Array:
    r"""Branin with Toal's adjustable cheap source at ``a = 0`` (Toal 2015, "Some
    considerations regarding the use of multi-fidelity Kriging in the construction of
    surrogate models", Struct. Multidisc. Optim. 51, the adjustable Branin pair),
    ``x in [-5, 10] x [0, 15]``, with

    .. math::
        f(x, 0) &= \big(x_2 - \tfrac{5.1}{4\pi^2} x_1^2 + \tfrac{5}{\pi} x_1 - 6\big)^2
            + 10\big(1 - \tfrac{1}{8\pi}\big)\cos x_1 + 10 \\
        f(x, 1) &= f(x, 0) - (a + 0.5)\big(x_2 - \tfrac{5.1}{4\pi^2} x_1^2
            + \tfrac{5}{\pi} x_1 - 6\big)^2, \quad a = 0

    Minimised (target optimum 0.397887 at (pi, 2.275), (-pi, 12.275) and (9.42478, 2.475));
    costs 10, 1. RELIABLE: correlation 0.992 with the target, and the cheap source's
    minimisers are the target's (it halves the quadratic term, which vanishes there).

    Args:
        x: shape ``[2]``.
        z: fidelity index in ``{0, 1}`` (0 = target), may be traced.

    Returns:
        Scalar float64.
    """
    return eval_discrete(_branin_reliable_core, x, z, 2, 2, "unrel_branin_reliable")


def unrel_branin_anti(x: Array, z) -> Array:
    r"""Branin with Toal's (2015) adjustable cheap source at ``a = 1``, the end of his range
    that reverses the quadratic term (same formulas as :func:`unrel_branin_reliable`),
    ``x in [-5, 10] x [0, 15]``:

    .. math::
        f(x, 1) = f(x, 0) - 1.5\big(x_2 - \tfrac{5.1}{4\pi^2} x_1^2
            + \tfrac{5}{\pi} x_1 - 6\big)^2

    Minimised (target optimum 0.397887, three minimisers); costs 10, 1. UNRELIABLE,
    anti-correlated: correlation -0.92 with the target; the cheap source's minimiser is the
    corner (-5, 0), where the target is at its maximum (regret 307.7).

    Args:
        x: shape ``[2]``.
        z: fidelity index in ``{0, 1}`` (0 = target), may be traced.

    Returns:
        Scalar float64.
    """
    return eval_discrete(_branin_anti_core, x, z, 2, 2, "unrel_branin_anti")


# BOCA's perturbations of Branin's b, c and t (Kandasamy et al. 2017), driven by one z
_BOCA_DB, _BOCA_DC, _BOCA_DT = 0.01, 0.1, -0.005


@jit
def _branin_continuous_core(x: Array, z: Array) -> Array:
    return _branin_params(x, _BRANIN_B0 - (1.0 - z) * _BOCA_DB, _BRANIN_C0 - (1.0 - z) * _BOCA_DC,
                          _BRANIN_T0 - (1.0 - z) * _BOCA_DT)


def unrel_branin_continuous(x: Array, z) -> Array:
    r"""Branin with a continuous fidelity ``z in [0, 1]`` (target ``z = 1``), the
    multi-fidelity Branin of Kandasamy, Dasarathy, Schneider & Poczos (2017, "Multi-fidelity
    Bayesian optimisation with continuous approximations", ICML, BOCA; the parameters of
    their code, Dragonfly's ``branin_mf``) with one scalar ``z`` driving all three of its
    fidelity coordinates, ``x in [-5, 10] x [0, 15]``:

    .. math::
        f(x, z) &= \big(x_2 - b(z) x_1^2 + c(z) x_1 - 6\big)^2
            + 10\big(1 - t(z)\big)\cos x_1 + 10, \\
        b(z) &= \tfrac{5.1}{4\pi^2} - 0.01(1 - z), \quad
        c(z) = \tfrac{5}{\pi} - 0.1(1 - z), \quad
        t(z) = \tfrac{1}{8\pi} + 0.005(1 - z)

    Cost ``1 + 9 z^2`` (10 at the target, 1 at z = 0, the suite's 10 : 1; see
    :func:`unrel_branin_continuous_cost`). Minimised (target optimum 0.397887, three
    minimisers). RELIABLE: z = 0 is correlated 0.999 with the target and its minimisers
    have target regret below 0.05 (0.02 % of the range 304).

    Args:
        x: shape ``[2]``.
        z: float fidelity in ``[0, 1]`` (may be traced).

    Returns:
        Scalar float64.
    """
    return _branin_continuous_core(as_x(x, 2), jnp.asarray(z, dtype=jnp.float64))


def unrel_branin_continuous_cost(z) -> Array:
    """Cost ``1 + 9 z^2`` of :func:`unrel_branin_continuous` (traceable; scalar or array ``z``)."""
    z = jnp.asarray(z, dtype=jnp.float64)
    return 1.0 + 9.0 * z**2


# --------------------------------------------------------------------------
# Hartmann-3 (Toal 2015's adjustable pair)
# --------------------------------------------------------------------------
#: Toal's adjustable parameter of the two Hartmann-3 cheap sources: the reliable one
#: (also the mean of the noisy one) and the auxiliary task of the two-task problem.
TOAL_HARTMANN3_A = {"reliable": 0.3, "twotask": 0.45}
#: Observation-noise variance of the cheap source of ``unrel_hartmann3_noisy`` (sd 1, a
#: quarter of the target's range 3.85, above the sd 0.96 of its values over the box); the
#: target is noiseless.
HARTMANN3_NOISY_VARIANCE = 1.0


# the standard Hartmann-3 constants (Dixon & Szego 1978), the target's of ``hartmann3``
_H3_A = np.array([[3.0, 10.0, 30.0], [0.1, 10.0, 35.0], [3.0, 10.0, 30.0], [0.1, 10.0, 35.0]])
_H3_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H3_P = 1e-4 * np.array([[3689.0, 1170.0, 2673.0], [4699.0, 4387.0, 7470.0], [1091.0, 8732.0, 5547.0],
                         [381.0, 5743.0, 8828.0]])


def _hartmann3_scaled(x: Array, factor: float) -> Array:
    """``-sum_i alpha_i exp(-sum_j A_ij (x_j - factor P_ij)^2)`` (target: factor 1)."""
    inner = jnp.sum(jnp.asarray(_H3_A) * (x[None, :] - factor * jnp.asarray(_H3_P)) ** 2, axis=1)
    return -jnp.sum(jnp.asarray(_H3_ALPHA) * jnp.exp(-inner))


def _toal_factor(a: float) -> float:
    return 0.75 * (a + 1.0)


_hartmann3_reliable_core = switch_core(
    (lambda x: _hartmann3_scaled(x, 1.0),
     lambda x: _hartmann3_scaled(x, _toal_factor(TOAL_HARTMANN3_A["reliable"]))))
_hartmann3_twotask_core = switch_core(
    (lambda x: _hartmann3_scaled(x, 1.0),
     lambda x: _hartmann3_scaled(x, _toal_factor(TOAL_HARTMANN3_A["twotask"]))))


def unrel_hartmann3_reliable(x: Array, z) -> Array:
    r"""Hartmann-3 with Toal's (2015) adjustable cheap source, whose bump centres are
    scaled by ``3/4 (a + 1)`` (equal to the target at ``a = 1/3``), here ``a = 0.3``,
    ``x in [0, 1]^3``:

    .. math::
        f(x, 0) &= -\sum_{i=1}^4 \alpha_i \exp\Big(-\sum_{j=1}^3 A_{ij}(x_j - P_{ij})^2\Big) \\
        f(x, 1) &= -\sum_{i=1}^4 \alpha_i \exp\Big(-\sum_{j=1}^3 A_{ij}
            \big(x_j - \tfrac34 (a + 1) P_{ij}\big)^2\Big)

    with the standard ``A``, ``alpha = (1, 1.2, 3, 3.2)`` and ``P`` (Dixon & Szego 1978).
    Minimised (target optimum -3.862780 at (0.114589, 0.555649, 0.852547)); costs 10, 1.
    RELIABLE: correlation 0.991 with the target; the cheap minimiser has target regret 0.055
    (1.4 % of the range 3.85).

    Args:
        x: shape ``[3]``.
        z: fidelity index in ``{0, 1}`` (0 = target), may be traced.

    Returns:
        Scalar float64.
    """
    return eval_discrete(_hartmann3_reliable_core, x, z, 3, 2, "unrel_hartmann3_reliable")


def unrel_hartmann3_noisy(x: Array, z) -> Array:
    r"""The noise-free values of :func:`unrel_hartmann3_reliable` (Toal 2015, ``a = 0.3``);
    the registered problem observes the cheap source with Gaussian noise of variance 1
    (:data:`HARTMANN3_NOISY_VARIANCE`, sd 1 = 26 % of the target's range) and the target
    without noise, following the noisy-source settings of Mikkola, Martinelli, Filstroff &
    Kaski (2023, "Multi-fidelity Bayesian optimization with unreliable information sources",
    AISTATS).

    Minimised (optimum -3.862780); costs 10, 1. UNRELIABLE by noise: the mean is the reliable
    source (correlation 0.99 with the target), but one cheap observation is worth little: the
    noise sd exceeds the sd 0.96 of the cheap values over the box, and the observations are
    correlated only about 0.7 with the target.

    Args:
        x: shape ``[3]``.
        z: fidelity index in ``{0, 1}`` (0 = target), may be traced.

    Returns:
        Scalar float64 (noise-free; see :func:`~mumbo_jax.benchmarks.problems.noisy_observation`).
    """
    return eval_discrete(_hartmann3_reliable_core, x, z, 3, 2, "unrel_hartmann3_noisy")


def unrel_hartmann3_twotask(x: Array, z) -> Array:
    r"""Hartmann-3 with an auxiliary task (index 1): Toal's (2015) adjustable source at
    ``a = 0.45`` (bump centres scaled by 1.0875; formulas of :func:`unrel_hartmann3_reliable`),
    ``x in [0, 1]^3``.

    Minimised (target optimum -3.862780); costs 10, 1. UNRELIABLE, a two-task problem whose
    auxiliary task is correlated 0.92 with the target over the box but has its optimum
    elsewhere: its minimiser (0.118, 0.604, 0.933) has target regret 0.68 (18 % of the range).

    Args:
        x: shape ``[3]``.
        z: task index in ``{0, 1}`` (0 = target), may be traced.

    Returns:
        Scalar float64.
    """
    return eval_discrete(_hartmann3_twotask_core, x, z, 3, 2, "unrel_hartmann3_twotask")


#: Where the cheap source of ``unrel_hartmann3_partial`` fades out (``x3``) and the width of
#: the logistic switch.
HARTMANN3_PARTIAL_EDGE = 0.6
HARTMANN3_PARTIAL_WIDTH = 0.05


def _hartmann3_partial_lf(x: Array) -> Array:
    w = jax.nn.sigmoid((HARTMANN3_PARTIAL_EDGE - x[2]) / HARTMANN3_PARTIAL_WIDTH)
    return w * _hartmann3_scaled(x, _toal_factor(TOAL_HARTMANN3_A["reliable"]))


_hartmann3_partial_core = switch_core((lambda x: _hartmann3_scaled(x, 1.0), _hartmann3_partial_lf))


def unrel_hartmann3_partial(x: Array, z) -> Array:
    r"""Hartmann-3 with a cheap source that is informative only where ``x3 < 0.6``,
    ``x in [0, 1]^3``: there it is the reliable source of :func:`unrel_hartmann3_reliable`
    (Toal 2015, ``a = 0.3``); beyond a logistic switch at ``x3 = 0.6`` (width 0.05) it fades
    to 0, Hartmann's level away from its wells, and so carries no information about the
    part of the box that holds the target's optimum (``x3 = 0.853``):

    .. math::
        f(x, 1) = \big(1 + \exp((x_3 - 0.6) / 0.05)\big)^{-1}\, \ell_{0.3}(x)

    with :math:`\ell_{0.3}` the cheap source of :func:`unrel_hartmann3_reliable`. The
    region-wise construction is ours, after the locally unreliable sources motivating
    Mikkola, Martinelli, Filstroff & Kaski (2023, AISTATS). Minimised (target optimum
    -3.862780); costs 10, 1. UNRELIABLE, informative in part of the box only: on
    ``x3 < 0.5`` correlated 0.995 with the target, over the whole box 0.14; its minimiser
    (0.107, 0.844, 0.503) is the target's second well, at target regret 1.07 (28 % of the
    range 3.85).

    Args:
        x: shape ``[3]``.
        z: fidelity index in ``{0, 1}`` (0 = target), may be traced.

    Returns:
        Scalar float64.
    """
    return eval_discrete(_hartmann3_partial_core, x, z, 3, 2, "unrel_hartmann3_partial")


# --------------------------------------------------------------------------
# Currin negated (Mikkola et al. 2023)
# --------------------------------------------------------------------------
_currin_negated_core = switch_core((lambda x: currin(x, 0), lambda x: -currin(x, 0)))


def unrel_currin_negated(x: Array, z) -> Array:
    r"""The Currin exponential function (Currin, Mitchell, Morris & Ylvisaker 1991) with the
    negated auxiliary source of Mikkola, Martinelli, Filstroff & Kaski (2023, "Multi-fidelity
    Bayesian optimization with unreliable information sources", AISTATS; their
    ``CurrinNegated`` benchmark, here without their normalisation), ``x in [0, 1]^2``:

    .. math::
        f(x, 0) = \Big(1 - \exp\big(-\tfrac{1}{2x_2}\big)\Big)
            \frac{2300x_1^3 + 1900x_1^2 + 2092x_1 + 60}{100x_1^3 + 500x_1^2 + 4x_1 + 20},
        \qquad f(x, 1) = -f(x, 0)

    (at ``x2 = 0`` the factor takes its limit 1). Maximised (target optimum 13.798722 at
    (13/60, 0)); costs 10, 1. UNRELIABLE, anti-correlated: correlation -1; the cheap source's
    maximiser (0, 1) is the target's minimiser. A model that learns a negative cross-covariance
    can still use it; a rule that assumes positive correlation is led to the worst point.

    Args:
        x: shape ``[2]``.
        z: fidelity index in ``{0, 1}`` (0 = target), may be traced.

    Returns:
        Scalar float64.
    """
    return eval_discrete(_currin_negated_core, x, z, 2, 2, "unrel_currin_negated")
