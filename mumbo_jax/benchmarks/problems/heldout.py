r"""The ``ho`` suite: a FROZEN held-out test suite of eight multi-fidelity problems.

Chosen from the literature and frozen (issue 41, item 4) before any strategy was run on them,
none of them used to screen or tune any lever: they are TEST problems in the sense of the
measurement protocol ("tune defaults on a development set; report a test set once, after the
default is frozen"). Run them once, at the end, with 30 seeds and
the default levers (the command is in docs/problems.md, "The frozen held-out suite").

FROZEN: ``data/heldout_suite.json`` records, per problem, the source, equation, box, costs,
noise, optimum and kind of cheap source, and the sha256 of this file;
``tests/test_heldout_suite.py`` fails when this file changes and the manifest does not. Do
not edit a formula, a constant, a cost or a box here to make a strategy look better: a change
is a new suite, with a new manifest entry that says why.

Every problem has two fidelities, the target (index 0) and one cheap source (index 1), at
costs 10 and 1 (our convention, the ``unreliable`` suite's: none of the source papers gives
query costs; they study surrogate accuracy). All are minimised, as in their sources.

==========================  ===  ===================  =====================================
name                        d    cheap source         source of the pair
==========================  ===  ===================  =====================================
``ho_bohachevsky``          2    reliable             Dong et al. (2015)
``ho_booth``                2    biased               Dong et al. (2015)
``ho_himmelblau``           2    biased               Dong et al. (2015)
``ho_sixhump``              2    biased               Dong et al. (2015)
``ho_rastrigin``            2    reliable             Mainini et al. (2022), phi = 2500
``ho_paciorek_noisy``       2    noisy                Toal (2015) Paciorek, A = 0.25
``ho_trid4``                4    reliable             Toal (2015) Trid, A = 1, d = 4
``ho_trid8_anti``           8    anti-correlated      Toal (2015) Trid, A = 0, d = 8
==========================  ===  ===================  =====================================

Source kinds (:data:`SOURCE_KIND`) are measured, not assumed: the Pearson correlation of
the two fidelities over a 4096-point scrambled Sobol sample of the box (seed 0), and the
target regret of the cheap source's minimiser (multistart L-BFGS-B) as a share of the
target's range over the same sample; ``tests/test_heldout_suite.py`` checks each number.
"reliable": correlation >= 0.85 and the cheap minimiser within 2 % of the range of the
target's; "biased": correlated (>= 0.7) but the cheap minimiser >= 10 % of the range away;
"anti-correlated": correlation <= -0.3; "noisy": the noise-free cheap source is correlated
>= 0.85 with the target but one observation carries Gaussian noise whose sd is at least half
the sd of the cheap values over the box.

References:
    Dong, Song, Wang & Huang (2015), "Multi-fidelity information fusion based on prediction
    of kriging", Struct. Multidisc. Optim. 51, 1267-1280, doi:10.1007/s00158-014-1213-9
    (the two-fidelity Bohachevsky, Booth, Himmelblau and six-hump camel-back pairs).
    Toal (2015), "Some considerations regarding the use of multi-fidelity Kriging in the
    construction of surrogate models", Struct. Multidisc. Optim. 51, 1223-1245,
    doi:10.1007/s00158-014-1209-5 (the adjustable Paciorek and Trid pairs).
    Mainini et al. (2022), "Analytical benchmark problems for multifidelity optimization
    methods", arXiv:2204.07867 (the shifted-rotated Rastrigin with resolution-error
    fidelities).
    The definitions were cross-checked against the public ``mf2`` package (van Rijn &
    Schmitt 2020, JOSS) where it has them; the code here is our own.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from mumbo_jax.benchmarks.problems.problem import Array, eval_discrete, switch_core

__all__ = [
    "SUITE", "SOURCE_KIND", "SPECS", "COSTS", "PACIOREK_A", "PACIOREK_NOISY_VARIANCE", "TRID_A",
    "RASTRIGIN_THETA", "RASTRIGIN_SHIFT", "RASTRIGIN_PHI",
    "ho_bohachevsky", "ho_booth", "ho_himmelblau", "ho_sixhump", "ho_rastrigin", "ho_paciorek_noisy",
    "ho_trid4", "ho_trid8_anti",
]

#: The suite's problems, in the order ``suite("ho")`` returns them.
SUITE = ("ho_bohachevsky", "ho_booth", "ho_himmelblau", "ho_sixhump", "ho_rastrigin", "ho_paciorek_noisy",
         "ho_trid4", "ho_trid8_anti")

#: Per problem: the kind of its cheap source (see the module docstring for the thresholds).
SOURCE_KIND: dict[str, str] = {
    "ho_bohachevsky": "reliable",
    "ho_booth": "biased",
    "ho_himmelblau": "biased",
    "ho_sixhump": "biased",
    "ho_rastrigin": "reliable",
    "ho_paciorek_noisy": "noisy",
    "ho_trid4": "reliable",
    "ho_trid8_anti": "anti-correlated",
}

#: Query costs, target first (our convention; the sources give none).
COSTS = (10.0, 1.0)


# --------------------------------------------------------------------------
# Dong et al. (2015): four two-fidelity 2-D pairs
# --------------------------------------------------------------------------
def _bohachevsky_hf(x: Array) -> Array:
    x1, x2 = x[0], x[1]
    return x1**2 + 2.0 * x2**2 - 0.3 * jnp.cos(3.0 * jnp.pi * x1) - 0.4 * jnp.cos(4.0 * jnp.pi * x2) + 0.7


def _bohachevsky_lf(x: Array) -> Array:
    return _bohachevsky_hf(jnp.stack([0.7 * x[0], x[1]])) + x[0] * x[1] - 12.0


def _booth_hf(x: Array) -> Array:
    x1, x2 = x[0], x[1]
    return (x1 + 2.0 * x2 - 7.0) ** 2 + (2.0 * x1 + x2 - 5.0) ** 2


def _booth_lf(x: Array) -> Array:
    x1, x2 = x[0], x[1]
    return _booth_hf(jnp.stack([0.4 * x1, x2])) + 1.7 * x1 * x2 - x1 + 2.0 * x2


def _himmelblau_hf(x: Array) -> Array:
    x1, x2 = x[0], x[1]
    return (x1**2 + x2 - 11.0) ** 2 + (x2**2 + x1 - 7.0) ** 2


def _himmelblau_lf(x: Array) -> Array:
    x1, x2 = x[0], x[1]
    return _himmelblau_hf(jnp.stack([0.5 * x1, 0.8 * x2])) + x2**3 - (x1 + 1.0) ** 2


def _sixhump_hf(x: Array) -> Array:
    x1, x2 = x[0], x[1]
    return (4.0 - 2.1 * x1**2 + x1**4 / 3.0) * x1**2 + x1 * x2 + (-4.0 + 4.0 * x2**2) * x2**2


def _sixhump_lf(x: Array) -> Array:
    return _sixhump_hf(0.7 * x) + x[0] * x[1] - 15.0


_bohachevsky_core = switch_core((_bohachevsky_hf, _bohachevsky_lf))
_booth_core = switch_core((_booth_hf, _booth_lf))
_himmelblau_core = switch_core((_himmelblau_hf, _himmelblau_lf))
_sixhump_core = switch_core((_sixhump_hf, _sixhump_lf))


def ho_bohachevsky(x: Array, z) -> Array:
    r"""Dong et al.'s (2015) two-fidelity Bohachevsky function, ``x in [-5, 5]^2``:

    .. math::
        f(x, 0) &= x_1^2 + 2x_2^2 - 0.3\cos(3\pi x_1) - 0.4\cos(4\pi x_2) + 0.7 \\
        f(x, 1) &= f((0.7x_1, x_2), 0) + x_1x_2 - 12

    Minimised (optimum 0 at (0, 0)); costs 10, 1. RELIABLE: correlation 0.86 with the
    target and the same minimiser.
    """
    return eval_discrete(_bohachevsky_core, x, z, 2, 2, "ho_bohachevsky")


def ho_booth(x: Array, z) -> Array:
    r"""Dong et al.'s (2015) two-fidelity Booth function, ``x in [-10, 10]^2``:

    .. math::
        f(x, 0) &= (x_1 + 2x_2 - 7)^2 + (2x_1 + x_2 - 5)^2 \\
        f(x, 1) &= f((0.4x_1, x_2), 0) + 1.7x_1x_2 - x_1 + 2x_2

    Minimised (optimum 0 at (1, 3)); costs 10, 1. BIASED: correlation 0.93 with the target,
    but the cheap minimiser is the edge point (-10, 8.5), target regret 272 (11 % of the
    range).
    """
    return eval_discrete(_booth_core, x, z, 2, 2, "ho_booth")


def ho_himmelblau(x: Array, z) -> Array:
    r"""Dong et al.'s (2015) two-fidelity Himmelblau function, ``x in [-4, 4]^2``:

    .. math::
        f(x, 0) &= (x_1^2 + x_2 - 11)^2 + (x_2^2 + x_1 - 7)^2 \\
        f(x, 1) &= f((0.5x_1, 0.8x_2), 0) + x_2^3 - (x_1 + 1)^2

    Minimised (optimum 0 at (3, 2) and at three other points of the box, about
    (-2.805118, 3.131312), (-3.779310, -3.283186) and (3.584428, -1.848126)); costs 10, 1.
    BIASED: correlation 0.76; the cheap minimiser (4, 2.365) has target regret 61 (20 % of
    the range).
    """
    return eval_discrete(_himmelblau_core, x, z, 2, 2, "ho_himmelblau")


def ho_sixhump(x: Array, z) -> Array:
    r"""Dong et al.'s (2015) two-fidelity six-hump camel-back function, ``x in [-2, 2]^2``:

    .. math::
        f(x, 0) &= \big(4 - 2.1x_1^2 + \tfrac{x_1^4}{3}\big)x_1^2 + x_1x_2
            + (-4 + 4x_2^2)x_2^2 \\
        f(x, 1) &= f(0.7x, 0) + x_1x_2 - 15

    Minimised (optimum -1.0316285 at (0.089842, -0.712656) and (-0.089842, 0.712656));
    costs 10, 1. BIASED: correlation 0.74; the cheap minimisers lie on the edges x1 = -2
    and x1 = 2 ((-2, 1.276) and its mirror image), target regret 6.3 (11 % of the range).
    """
    return eval_discrete(_sixhump_core, x, z, 2, 2, "ho_sixhump")


# --------------------------------------------------------------------------
# Mainini et al. (2022): shifted-rotated Rastrigin with resolution-error fidelities
# --------------------------------------------------------------------------
#: Rotation angle, shift (x*) and the cheap fidelity's phi of ``ho_rastrigin`` (the target
#: is phi = 10000, where the resolution error vanishes).
RASTRIGIN_THETA = 0.2
RASTRIGIN_SHIFT = 0.1
RASTRIGIN_PHI = 2500.0
_RAS_ROT = np.array([[np.cos(RASTRIGIN_THETA), -np.sin(RASTRIGIN_THETA)],
                     [np.sin(RASTRIGIN_THETA), np.cos(RASTRIGIN_THETA)]])
_RAS_T = 1.0 - 1e-4 * RASTRIGIN_PHI  # Theta(phi) = 1 - 0.0001 phi, 0.75 at phi = 2500


def _rastrigin_z(x: Array) -> Array:
    return jnp.asarray(_RAS_ROT) @ (x - RASTRIGIN_SHIFT)


def _rastrigin_hf(x: Array) -> Array:
    z = _rastrigin_z(x)
    return jnp.sum(z**2 + 1.0 - jnp.cos(10.0 * jnp.pi * z))


def _rastrigin_lf(x: Array) -> Array:
    z = _rastrigin_z(x)
    t = _RAS_T
    error = jnp.sum(t * jnp.cos(10.0 * jnp.pi * t * z + 0.5 * jnp.pi * t + jnp.pi) ** 2)
    return _rastrigin_hf(x) + error


_rastrigin_core = switch_core((_rastrigin_hf, _rastrigin_lf))


def ho_rastrigin(x: Array, z) -> Array:
    r"""Mainini et al.'s (2022) shifted-rotated Rastrigin with fidelity by resolution error,
    2-D, ``x in [-0.1, 0.2]^2``, with ``z = R(theta)(x - x*)``, ``theta = 0.2``,
    ``x* = (0.1, 0.1)``:

    .. math::
        f(x, \phi) &= \sum_{i=1}^{2}\big(z_i^2 + 1 - \cos(10\pi z_i)\big) + e_r(z, \phi), \\
        e_r(z, \phi) &= \sum_{i=1}^{2} a(\phi)\cos^2\big(w(\phi) z_i + b(\phi) + \pi\big),
        \quad a = \Theta,\; w = 10\pi\Theta,\; b = 0.5\pi\Theta,\; \Theta = 1 - 10^{-4}\phi

    Target ``phi = 10000`` (``Theta = 0``, no error); cheap source ``phi = 2500`` (the
    paper's lowest fidelity, ``Theta = 0.75``). Minimised (optimum 0 at (0.1, 0.1)); costs
    10, 1 (our convention). RELIABLE: correlation 0.94, the cheap minimiser
    (0.109, 0.106) has target regret 0.056 (1.4 % of the range).
    """
    return eval_discrete(_rastrigin_core, x, z, 2, 2, "ho_rastrigin")


# --------------------------------------------------------------------------
# Toal (2015): adjustable Paciorek and Trid pairs
# --------------------------------------------------------------------------
#: Toal's adjustable parameter of the Paciorek pair (0.25: the reliable end) and the cheap
#: source's observation-noise variance (sd 0.5, 71 % of the sd 0.71 of the cheap values over
#: the box; the level is our convention).
PACIOREK_A = 0.25
PACIOREK_NOISY_VARIANCE = 0.25
#: Toal's adjustable parameter of the Trid pairs, per problem.
TRID_A = {"ho_trid4": 1.0, "ho_trid8_anti": 0.0}


def _paciorek_hf(x: Array) -> Array:
    return jnp.sin(1.0 / (x[0] * x[1]))


def _paciorek_lf(x: Array) -> Array:
    u = 1.0 / (x[0] * x[1])
    return jnp.sin(u) - 9.0 * PACIOREK_A**2 * jnp.cos(u)


_paciorek_core = switch_core((_paciorek_hf, _paciorek_lf))


def ho_paciorek_noisy(x: Array, z) -> Array:
    r"""Toal's (2015) adjustable Paciorek pair at ``A = 0.25``, ``x in [0.3, 1]^2``, the cheap
    source observed with Gaussian noise of variance 0.25 (:data:`PACIOREK_NOISY_VARIANCE`;
    the registered problem's ``noise_variances`` are (0, 0.25)):

    .. math::
        f(x, 0) = \sin\Big(\frac{1}{x_1x_2}\Big), \qquad
        f(x, 1) = f(x, 0) - 9A^2\cos\Big(\frac{1}{x_1x_2}\Big)

    Minimised (optimum -1 on the curves ``x1 x2 = 2/(3 pi)`` and ``2/(7 pi)``; stored at
    ``x1 = x2 = sqrt(2/(3 pi))``); costs 10, 1. NOISY: the noise-free cheap source is
    correlated 0.90 with the target (its minimiser at target regret 0.13, 6 % of the range),
    the noisy observations about 0.74. Toal's pair is
    noise-free; the noise level is our convention (Mainini et al. 2022 list a noisy
    Paciorek among their benchmarks, a definition we could not check from here).
    Returns the noise-free value (see :func:`~mumbo_jax.benchmarks.problems.noisy_observation`).
    """
    return eval_discrete(_paciorek_core, x, z, 2, 2, "ho_paciorek_noisy")


def _trid_hf(x: Array) -> Array:
    return jnp.sum((x - 1.0) ** 2) - jnp.sum(x[1:] * x[:-1])


def _trid_lf(x: Array, a: float) -> Array:
    i = jnp.arange(2, x.shape[0] + 1, dtype=jnp.float64)
    return jnp.sum((x - a) ** 2) - (a - 0.65) * jnp.sum(i * x[1:] * x[:-1])


_trid4_core = switch_core((_trid_hf, lambda x: _trid_lf(x, TRID_A["ho_trid4"])))
_trid8_core = switch_core((_trid_hf, lambda x: _trid_lf(x, TRID_A["ho_trid8_anti"])))


def ho_trid4(x: Array, z) -> Array:
    r"""Toal's (2015) adjustable Trid pair at ``A = 1``, in ``d = 4`` (Toal's is 10-D; the
    box ``[-d^2, d^2]^d`` is his rule, ``[-16, 16]^4``):

    .. math::
        f(x, 0) &= \sum_{i=1}^{d}(x_i - 1)^2 - \sum_{i=2}^{d} x_i x_{i-1} \\
        f(x, 1) &= \sum_{i=1}^{d}(x_i - A)^2 - (A - 0.65)\sum_{i=2}^{d} i\, x_i x_{i-1}

    (the factor ``i`` as in ``mf2``'s code of Toal's function). Minimised (optimum
    ``-d(d+4)(d-1)/6 = -16`` at ``x_i = i(d + 1 - i)`` = (4, 6, 6, 4)); costs 10, 1.
    RELIABLE: correlation 0.98; the cheap minimiser has target regret 29 (1.9 % of the range).
    """
    return eval_discrete(_trid4_core, x, z, 4, 2, "ho_trid4")


def ho_trid8_anti(x: Array, z) -> Array:
    r"""Toal's (2015) adjustable Trid pair (formulas of :func:`ho_trid4`) at ``A = 0``, in
    ``d = 8``, ``x in [-64, 64]^8``. Minimised (optimum ``-112`` at
    (8, 14, 18, 20, 20, 18, 14, 8)); costs 10, 1. ANTI-CORRELATED: correlation -0.46 with the
    target; the cheap source falls where the target rises, so its minimiser lies on the
    faces of the box (seven of its eight coordinates at +-64), where the target's regret
    (57716) exceeds its range over the box.
    """
    return eval_discrete(_trid8_core, x, z, 8, 2, "ho_trid8_anti")


# --------------------------------------------------------------------------
# The registry's fields per problem (registry.py registers these; the manifest records them)
# --------------------------------------------------------------------------
_PACIOREK_X = float(np.sqrt(2.0 / (3.0 * np.pi)))
_DONG = "Dong, Song, Wang & Huang (2015), Struct. Multidisc. Optim. 51, 1267-1280"
_TOAL = "Toal (2015), Struct. Multidisc. Optim. 51, 1223-1245"

#: name -> the fields of its :class:`~mumbo_jax.benchmarks.problems.Problem` (two fidelities,
#: costs :data:`COSTS`, all minimised).
SPECS: dict[str, dict] = {
    "ho_bohachevsky": dict(f=ho_bohachevsky, dim=2, bounds=[[-5.0, 5.0]] * 2, noise_variances=(0.0, 0.0),
                           optimum_value=0.0, optimum_location=[0.0, 0.0],
                           reference=_DONG + ", two-fidelity Bohachevsky"),
    "ho_booth": dict(f=ho_booth, dim=2, bounds=[[-10.0, 10.0]] * 2, noise_variances=(0.0, 0.0),
                     optimum_value=0.0, optimum_location=[1.0, 3.0],
                     reference=_DONG + ", two-fidelity Booth"),
    "ho_himmelblau": dict(f=ho_himmelblau, dim=2, bounds=[[-4.0, 4.0]] * 2, noise_variances=(0.0, 0.0),
                          optimum_value=0.0, optimum_location=[3.0, 2.0],
                          reference=_DONG + ", two-fidelity Himmelblau"),
    "ho_sixhump": dict(f=ho_sixhump, dim=2, bounds=[[-2.0, 2.0]] * 2, noise_variances=(0.0, 0.0),
                       optimum_value=-1.0316284534898774,
                       optimum_location=[0.08984201310031807, -0.7126564030207396],
                       reference=_DONG + ", two-fidelity six-hump camel-back"),
    "ho_rastrigin": dict(f=ho_rastrigin, dim=2, bounds=[[-0.1, 0.2]] * 2, noise_variances=(0.0, 0.0),
                         optimum_value=0.0, optimum_location=[RASTRIGIN_SHIFT, RASTRIGIN_SHIFT],
                         reference="Mainini et al. (2022), arXiv:2204.07867, shifted-rotated Rastrigin, "
                         "resolution-error fidelities phi = 10000 (target) and 2500"),
    "ho_paciorek_noisy": dict(f=ho_paciorek_noisy, dim=2, bounds=[[0.3, 1.0]] * 2,
                              noise_variances=(0.0, PACIOREK_NOISY_VARIANCE), optimum_value=-1.0,
                              optimum_location=[_PACIOREK_X, _PACIOREK_X],
                              reference=_TOAL + ", adjustable Paciorek at A = 0.25; cheap source observed "
                              "with noise variance 0.25 (our level)"),
    "ho_trid4": dict(f=ho_trid4, dim=4, bounds=[[-16.0, 16.0]] * 4, noise_variances=(0.0, 0.0),
                     optimum_value=-16.0, optimum_location=[4.0, 6.0, 6.0, 4.0],
                     reference=_TOAL + ", adjustable Trid at A = 1, d = 4"),
    "ho_trid8_anti": dict(f=ho_trid8_anti, dim=8, bounds=[[-64.0, 64.0]] * 8, noise_variances=(0.0, 0.0),
                          optimum_value=-112.0, optimum_location=[8.0, 14.0, 18.0, 20.0, 20.0, 18.0, 14.0, 8.0],
                          reference=_TOAL + ", adjustable Trid at A = 0, d = 8"),
}
