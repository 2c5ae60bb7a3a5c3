"""The registry: every problem with its box, fidelities, costs, noise and verified optimum.

One entry per problem, in the order ``mumbo-jax list`` shows them: a built-in problem is
its function (in :mod:`~mumbo_jax.benchmarks.problems.paper`, ``literature``,
``unreliable`` or ``real``) plus one entry of the table here; a problem of one's own is a
:func:`register` call in one's own code, at run time (docs/howto/own-problem.md). The
package's names (``problems.<name>`` is the registered problem's function), the config
schema's choices, ``mumbo-jax list`` and the tests read :data:`PROBLEMS`; a config per problem (``configs/<name>.toml``) is optional.
"""

from __future__ import annotations

import numpy as np

from mumbo_jax.benchmarks.problems import heldout, literature, paper, real, unreliable
from mumbo_jax.benchmarks.problems.problem import Problem
from mumbo_jax.registry import Registry

__all__ = ["PROBLEMS", "SUITES", "ENTRY_POINT_GROUP", "register", "unregister", "get_problem", "suite"]


# --------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------
# Optima computed numerically in float64 (multistart L-BFGS-B, then polished
# by Newton/root finding on the gradient); verified in tests/test_problems.py.
# Forrester: root of f'(x) on [0.7, 0.8].  Currin: x1 = 13/60 is an exact root
# of the rational's derivative, and x2 = 0 makes the exp factor vanish.
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

ENTRY_POINT_GROUP = "mumbo_jax.problems"  # installed packages register problems through this group


# the built-in problems, in the order ``mumbo-jax list`` shows them (the table below fills it)
_BUILTIN: list[Problem] = []


def _builtin(problem: Problem) -> Problem:
    _BUILTIN.append(problem)
    return problem


def _discrete_problem(**fields) -> Problem:
    """A discrete-fidelity :class:`Problem` whose target is fidelity 0."""
    return Problem(fidelity_kind="discrete", fidelity_bounds=None, target_fidelity=0, cost_function=None, **fields)


def _continuous_problem(**fields) -> Problem:
    """A noiseless :class:`Problem` with one continuous fidelity in [0, 1] whose target is 1."""
    return Problem(fidelity_kind="continuous", n_fidelities=None, fidelity_bounds=(0.0, 1.0), target_fidelity=1.0,
                   costs=None, noise_variances=(0.0,), **fields)


_builtin(
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
        f=paper.forrester,
    )
)
_builtin(
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
        f=paper.currin,
    )
)
_builtin(
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
        f=paper.hartmann3,
    )
)
_builtin(
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
        f=paper.hartmann6,
    )
)
_BOREHOLE_XSTAR = (0.15, 100.0, 115_600.0, 1110.0, 116.0, 700.0, 1120.0, 12_055.0)
_builtin(
    _discrete_problem(
        name="borehole",
        dim=8,
        bounds=paper.BOREHOLE_BOUNDS,
        n_fidelities=2,
        costs=(10.0, 1.0),
        noise_variances=(0.0, 0.0),
        maximise=True,
        optimum_value=309.83086904533246,
        optimum_location=_BOREHOLE_XSTAR,
        f=paper.borehole,
    )
)
_builtin(
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
        f=paper.rosenbrock,
    )
)
_builtin(
    _continuous_problem(
        name="currin_continuous",
        dim=2,
        bounds=[[0.0, 1.0], [0.0, 1.0]],
        cost_function=paper.currin_continuous_cost,
        maximise=True,
        optimum_value=13.798722044728434,
        optimum_location=[_CURRIN_X1STAR, 0.0],
        f=paper.currin_continuous,
        reference="Moss, Leslie & Rayson (2020), MUMBO, Appendix B "
        "('Wider Comparison'); Kandasamy et al. (2017), BOCA",
    )
)


# Two-fidelity literature problems (costs 10 and 1): the held-out suite and the unreliable one
_BRANIN_BOUNDS = [[-5.0, 10.0], [0.0, 15.0]]
_BRANIN_MIN = 0.39788735772973816
_BRANIN_XSTAR = [np.pi, 2.275]


def _bifidelity(name: str, f, dim: int, bounds, maximise: bool, optimum_value: float, optimum_location,
                reference: str, noise: tuple[float, float] = (0.0, 0.0)) -> Problem:
    """A built-in two-fidelity problem: costs 10 (target) and 1, noiseless unless ``noise``."""
    return _builtin(_discrete_problem(
        name=name, dim=dim, bounds=bounds, n_fidelities=2, costs=(10.0, 1.0), noise_variances=noise,
        maximise=maximise, optimum_value=optimum_value, optimum_location=optimum_location, f=f,
        reference=reference))


_NOT_IN_PAPER = "not in the MUMBO paper"
_bifidelity("park", literature.park, 4, [[0.0, 1.0]] * 4, True, 25.589254158606547, [1.0, 1.0, 1.0, 1.0],
            "Park (1991); two fidelities of Xiong, Qian & Wu (2013); " + _NOT_IN_PAPER)
_bifidelity("branin_aug", literature.branin_aug, 2, _BRANIN_BOUNDS, False, _BRANIN_MIN, _BRANIN_XSTAR,
            "Wu et al. (2019) augmented Branin at s = 1, 0.5; " + _NOT_IN_PAPER)
_bifidelity("perdikaris", literature.perdikaris, 1, [[0.0, 1.0]], False, -1.3520062598112021, [0.06191468962834021],
            "Perdikaris et al. (2017) nonlinear pair sin(8 pi x), (x - sqrt 2) sin^2(8 pi x); " + _NOT_IN_PAPER)
_bifidelity("park91b", literature.park91b, 4, [[0.0, 1.0]] * 4, False, 2.0 / 3.0, [0.0, 0.0, 0.0, 0.5],
            "Park (1991) second function; cheap fidelity 1.2 f - 1 of Xiong, Qian & Wu (2013); " + _NOT_IN_PAPER)
_bifidelity("branin_ackley", literature.branin_ackley, 2, _BRANIN_BOUNDS, False, _BRANIN_MIN, _BRANIN_XSTAR,
            "Branin with an unrelated Ackley source, after Mikkola et al. (2023), AISTATS; " + _NOT_IN_PAPER)


# --------------------------------------------------------------------------
# The ``unreliable`` suite (module ``unreliable``): literature problems not in the paper,
# each with one cheap source (cost 1 against the target's 10), reliable or not. Their
# targets are Forrester, Branin, Hartmann-3 and Currin, so the optima are those above
# (Branin's as for branin_aug); tests/test_unreliable_problems.py verifies each again.
# --------------------------------------------------------------------------
_FORRESTER_MIN = -6.0207400557670825
_bifidelity("unrel_forrester_reliable", unreliable.unrel_forrester_reliable, 1, [[0.0, 1.0]], False, _FORRESTER_MIN,
            [_FORRESTER_XSTAR], "Mainini et al. (2022), arXiv:2204.07867, multi-fidelity Forrester f1 and f3")
_bifidelity("unrel_forrester_biased", unreliable.unrel_forrester_biased, 1, [[0.0, 1.0]], False, _FORRESTER_MIN,
            [_FORRESTER_XSTAR], "Forrester, Sobester & Keane (2007), Proc. R. Soc. A 463, A = 0.5, B = 10, C = -5")
_bifidelity("unrel_branin_reliable", unreliable.unrel_branin_reliable, 2, _BRANIN_BOUNDS, False, _BRANIN_MIN,
            _BRANIN_XSTAR, "Toal (2015), Struct. Multidisc. Optim. 51, adjustable Branin at a = 0")
_bifidelity("unrel_branin_anti", unreliable.unrel_branin_anti, 2, _BRANIN_BOUNDS, False, _BRANIN_MIN,
            _BRANIN_XSTAR, "Toal (2015), Struct. Multidisc. Optim. 51, adjustable Branin at a = 1")
_H3_MIN = -3.862779787332663
_bifidelity("unrel_hartmann3_reliable", unreliable.unrel_hartmann3_reliable, 3, [[0.0, 1.0]] * 3, False, _H3_MIN,
            _H3_XSTAR, "Toal (2015), Struct. Multidisc. Optim. 51, adjustable Hartmann-3 at a = 0.3")
_bifidelity("unrel_hartmann3_noisy", unreliable.unrel_hartmann3_noisy, 3, [[0.0, 1.0]] * 3, False, _H3_MIN,
            _H3_XSTAR, "Toal (2015) adjustable Hartmann-3 at a = 0.3, cheap source observed with noise "
            "variance 1 (after Mikkola et al. 2023, AISTATS)", noise=(0.0, unreliable.HARTMANN3_NOISY_VARIANCE))
_bifidelity("unrel_hartmann3_twotask", unreliable.unrel_hartmann3_twotask, 3, [[0.0, 1.0]] * 3, False, _H3_MIN,
            _H3_XSTAR, "Toal (2015), Struct. Multidisc. Optim. 51, adjustable Hartmann-3 at a = 0.45 "
            "as an auxiliary task")
_bifidelity("unrel_currin_negated", unreliable.unrel_currin_negated, 2, [[0.0, 1.0]] * 2, True, 13.798722044728434,
            [_CURRIN_X1STAR, 0.0], "Mikkola, Martinelli, Filstroff & Kaski (2023), AISTATS, CurrinNegated")
_bifidelity("unrel_hartmann3_partial", unreliable.unrel_hartmann3_partial, 3, [[0.0, 1.0]] * 3, False, _H3_MIN,
            _H3_XSTAR, "Toal (2015) adjustable Hartmann-3 at a = 0.3 where x3 < 0.6, faded to 0 beyond "
            "(a region-wise construction after Mikkola et al. 2023)")
_builtin(
    _continuous_problem(
        name="unrel_branin_continuous",
        dim=2,
        bounds=_BRANIN_BOUNDS,
        cost_function=unreliable.unrel_branin_continuous_cost,
        maximise=False,
        optimum_value=_BRANIN_MIN,
        optimum_location=_BRANIN_XSTAR,
        f=unreliable.unrel_branin_continuous,
        reference="Kandasamy, Dasarathy, Schneider & Poczos (2017), BOCA, ICML: multi-fidelity Branin "
        "with one scalar fidelity; cost 1 + 9 z^2",
    )
)


# --------------------------------------------------------------------------
# The frozen held-out suite ``ho`` (module ``heldout``): eight literature problems chosen and
# frozen before anything ran on them (data/heldout_suite.json records them and the module's
# sha256); the fields are the module's, so the freeze covers them.
# tests/test_heldout_suite.py verifies each optimum.
# --------------------------------------------------------------------------
for _name in heldout.SUITE:
    _builtin(_discrete_problem(name=_name, n_fidelities=2, costs=heldout.COSTS, maximise=False,
                               **heldout.SPECS[_name]))


# --------------------------------------------------------------------------
# The paper's two real tasks, tabulated (module ``real``; tables made by
# experiments/paper/tabulate_real_tasks.py). Minimised validation errors, piecewise-linear
# between grid nodes: the optima below are the best table entries at the target (exact),
# verified in tests/test_real_tasks.py.
# --------------------------------------------------------------------------
_SVM_BOX = [[-10.0, 10.0], [-10.0, 10.0]]  # log2 C, log2 gamma
_SVM_OPT, _SVM_XOPT = 2.0 / 359.0, [0.0, -2.0]  # 2 of 359 validation digits wrong; 6 nodes tie, the first (C-major)
_CV_OPT, _CV_OPT_CV, _CV_XOPT = 0.020000000000000004, 0.02, [1.0, -2.0]  # 10 nodes tie; the first (C-major)
_builtin(
    _continuous_problem(
        name="svm_fabolas",
        dim=2,
        bounds=_SVM_BOX,
        cost_function=real.svm_fabolas_cost,
        maximise=False,
        optimum_value=_SVM_OPT,
        optimum_location=_SVM_XOPT,
        f=real.svm_fabolas,
        reference="Klein et al. (2017), FABOLAS, AISTATS; MUMBO paper Section 4.2: RBF SVM on digits, "
        f"data fraction 2^(6 (z - 1)) as the fidelity, tabulated; cost {real.SVM_FULL_COST:g} at the full data",
    )
)
_builtin(_discrete_problem(
    name="fastcv_svm", dim=2, bounds=_SVM_BOX, n_fidelities=real.N_FOLDS, costs=(1.0,) * real.N_FOLDS,
    noise_variances=(0.0,) * real.N_FOLDS, maximise=False, optimum_value=_CV_OPT, optimum_location=_CV_XOPT,
    f=real.fastcv_svm, target_weights=(1.0 / real.N_FOLDS,) * real.N_FOLDS,
    reference="Swersky, Snoek & Adams (2013), multi-task BO (FASTCV); MUMBO paper Section 4.3: "
    "RBF SVM, 10-fold CV on 200 digits, folds as tasks, target the fold mean, tabulated"))
_builtin(_discrete_problem(
    name="fastcv_svm_cv", dim=2, bounds=_SVM_BOX, n_fidelities=1, costs=(real.CV_COST,), noise_variances=(0.0,),
    maximise=False, optimum_value=_CV_OPT_CV, optimum_location=_CV_XOPT, f=real.fastcv_svm_cv,
    reference="fastcv_svm's target (the 10-fold CV error) as one fidelity at cost 10: standard BO by K-fold CV"))

PROBLEMS: Registry = Registry("problem", Problem, _BUILTIN, entry_point_group=ENTRY_POINT_GROUP)
"""name -> :class:`Problem`, in registration order (:class:`mumbo_jax.registry.Registry`,
as the rules). The built-in problems are there from the start (:func:`unregister` refuses
them); the plug-ins (entry points of the group :data:`ENTRY_POINT_GROUP`, each naming a
module that calls :func:`register` on import, or a :class:`Problem`) are loaded the first
time a name outside the table is looked up or the table is listed, so ``problem =
"my_branin"`` in a config finds an installed package's problem."""


def register(problem: Problem) -> Problem:
    """Add ``problem`` to :data:`PROBLEMS` under ``problem.name`` and return it: ``mumbo-jax
    list``, ``get_problem``, the configs' ``problem`` key and ``problems.<name>`` see it at
    once. Registering the same record again is a no-op; another problem under a taken name
    is a ValueError."""
    return PROBLEMS.register(problem)


def unregister(name: str) -> Problem:
    """Remove a problem registered at run time (not a built-in one) and return it."""
    return PROBLEMS.unregister(name)


#: Named problem suites: suite name -> registry names, in a fixed order.
SUITES: dict[str, tuple[str, ...]] = {
    "unreliable": (
        "unrel_forrester_reliable", "unrel_forrester_biased",
        "unrel_branin_reliable", "unrel_branin_anti",
        "unrel_hartmann3_reliable", "unrel_hartmann3_noisy", "unrel_hartmann3_twotask",
        "unrel_hartmann3_partial", "unrel_currin_negated", "unrel_branin_continuous",
    ),
    # the robust rule's test problems: not looked at while it was built and tuned on the
    # ``unreliable`` suite (its development problems); run once, after it was frozen
    "heldout": ("park", "park91b", "branin_aug", "perdikaris", "branin_ackley"),
    # the frozen held-out TEST suite (issue 41): chosen from the literature and frozen before
    # any run, none used to screen a lever; to be run once, with 30 seeds, after the default
    # is final (docs/problems.md)
    "ho": heldout.SUITE,
    # the paper's real tasks (Sections 4.2, 4.3), tabulated; fastcv_svm_cv is fastcv_svm's
    # target as one query (standard BO by K-fold CV)
    "real": ("svm_fabolas", "fastcv_svm", "fastcv_svm_cv"),
}


def suite(name: str) -> tuple[Problem, ...]:
    """The problems of the suite called ``name``, in the order of :data:`SUITES`.

    ``for p in suite("unreliable"): ...`` iterates the suite; each problem's ``name`` is
    also the stem of its config (``configs/<name>.toml``), and
    :data:`~mumbo_jax.benchmarks.problems.unreliable.SOURCE_KIND` says whether its cheap
    source is reliable and if not how.

    Raises:
        ValueError: naming the unknown suite and listing the allowed ones.
    """
    try:
        names = SUITES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown suite {name!r}; allowed suites: {', '.join(sorted(SUITES))}") from None
    return tuple(PROBLEMS[n] for n in names)


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


