"""Multi-fidelity problems from the literature that are NOT in the MUMBO paper.

Five of them form the ``heldout`` suite (:data:`mumbo_jax.benchmarks.problems.SUITES`):
problems on which the robust rule was not tuned, run once after it was frozen.
"""

from __future__ import annotations


import jax.numpy as jnp
import numpy as np

from mumbo_jax.benchmarks.problems.problem import Array, eval_discrete, switch_core

__all__ = ["park", "park91b", "branin_aug", "branin_ackley", "perdikaris"]


def _park_high(x: Array) -> Array:
    # x1/2 (sqrt(1 + (x2 + x3^2) x4 / x1^2) - 1) written as (sqrt(x1^2 + a) - x1) / 2,
    # equal for x1 > 0 and finite (with finite gradients) at x1 = 0
    x1, x2, x3, x4 = x[0], x[1], x[2], x[3]
    a = (x2 + x3**2) * x4
    return 0.5 * (jnp.sqrt(x1**2 + a + 1e-300) - x1) + (x1 + 3.0 * x4) * jnp.exp(1.0 + jnp.sin(x3))


def _park_low(x: Array) -> Array:
    x1, x2, x3 = x[0], x[1], x[2]
    return (1.0 + jnp.sin(x1) / 10.0) * _park_high(x) - 2.0 * x1 + x2**2 + x3**2 + 0.5


_park_core = switch_core((_park_high, _park_low))


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
    return eval_discrete(_park_core, x, z, 4, 2, "park")


_BRANIN_B = 5.1 / (4.0 * np.pi**2)


def _branin_aug(x: Array, s) -> Array:
    b = _BRANIN_B - 0.1 * (1.0 - s)
    return (x[1] - b * x[0] ** 2 + 5.0 / np.pi * x[0] - 6.0) ** 2 + 10.0 * (1.0 - 1.0 / (8.0 * np.pi)) * jnp.cos(
        x[0]) + 10.0


_branin_aug_core = switch_core((lambda x: _branin_aug(x, 1.0), lambda x: _branin_aug(x, 0.5)))


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
    return eval_discrete(_branin_aug_core, x, z, 2, 2, "branin_aug")



_SQRT2 = float(np.sqrt(2.0))
_perdikaris_core = switch_core((lambda x: (x[0] - _SQRT2) * jnp.sin(8.0 * np.pi * x[0]) ** 2,
                                lambda x: jnp.sin(8.0 * np.pi * x[0])))


def perdikaris(x: Array, z) -> Array:
    r"""The nonlinear two-fidelity pair of Perdikaris, Raissi, Damianou, Lawrence &
    Karniadakis (2017, "Nonlinear information fusion algorithms for data-efficient
    multi-fidelity modelling", Proc. R. Soc. A), ``x in [0, 1]``:

    .. math::
        f(x, 1) = \sin(8 \pi x), \qquad f(x, 0) = (x - \sqrt{2})\, f(x, 1)^2

    Minimised (optimum -1.3520063 at x = 0.0619147; seven more local minima between
    -1.23 and -0.48). Costs 10, 1 (ours; the source has none). The cheap fidelity
    determines the target exactly but not linearly: their linear correlation over the
    box is -0.10, so a linear multi-fidelity model (ICM, AR(1)) must learn that cheap data
    say almost nothing, and a rule that trusts them anyway loses to target-only search.
    """
    return eval_discrete(_perdikaris_core, x, z, 1, 2, "perdikaris")


def _park91b_high(x: Array) -> Array:
    return 2.0 / 3.0 * jnp.exp(x[0] + x[1]) - x[3] * jnp.sin(x[2]) + x[2]


_park91b_core = switch_core((_park91b_high, lambda x: 1.2 * _park91b_high(x) - 1.0))


def park91b(x: Array, z) -> Array:
    r"""Park's (1991) second function with the cheap fidelity of Xiong, Qian & Wu (2013),
    ``x in [0, 1]^4``:

    .. math::
        f(x, 0) = \tfrac{2}{3} e^{x_1 + x_2} - x_4 \sin x_3 + x_3, \qquad
        f(x, 1) = 1.2 f(x, 0) - 1

    Minimised (optimum 2/3 on the edge ``x1 = x2 = x3 = 0``, any ``x4``: there
    ``x3 - x4 sin x3 >= x3 - sin x3 >= 0`` vanishes). Costs 10, 1. RELIABLE: the cheap
    source is an exact affine map of the target (correlation 1).
    """
    return eval_discrete(_park91b_core, x, z, 4, 2, "park91b")


def _ackley(x: Array) -> Array:
    d = x.shape[0]
    return (-20.0 * jnp.exp(-0.2 * jnp.sqrt(jnp.sum(x**2) / d + 1e-300))
            - jnp.exp(jnp.sum(jnp.cos(2.0 * np.pi * x)) / d) + 20.0 + np.e)


_branin_ackley_core = switch_core((lambda x: _branin_aug(x, 1.0), _ackley))


def branin_ackley(x: Array, z) -> Array:
    r"""Branin with an unrelated cheap source, the 2-D Ackley function, after the
    "Branin with Ackley" auxiliary of Mikkola, Martinelli, Filstroff & Kaski (2023,
    AISTATS; their ``BraninMultiple``, here unnormalised, one source only),
    ``x in [-5, 10] x [0, 15]``:

    .. math::
        f(x, 0) = \mathrm{Branin}(x), \qquad
        f(x, 1) = -20 e^{-0.2\sqrt{(x_1^2 + x_2^2)/2}} - e^{(\cos 2\pi x_1 + \cos 2\pi x_2)/2}
            + 20 + e

    Minimised (Branin's 0.397887 at (pi, 2.275) and two other minimisers). Costs 10, 1.
    UNRELIABLE, unrelated: the cheap source's minimiser (0, 0) has target value 55.6, and
    the two are nearly uncorrelated over the box.
    """
    return eval_discrete(_branin_ackley_core, x, z, 2, 2, "branin_ackley")
