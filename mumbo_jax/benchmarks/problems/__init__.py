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
``perdikaris``         1    2           10, 1                   min   -1.352006
``park91b``            4    2           10, 1                   min   0.666667
``branin_ackley``      2    2           10, 1                   min   0.397887
``svm_fabolas``        2    z in [0,1]  measured, 10 at z = 1   min   (table)
``fastcv_svm``         2    10 folds    1 each; target = mean   min   (table)
``fastcv_svm_cv``      2    1           10                      min   (table)
=====================  ===  ==========  ======================  ====  ==============

``park`` (Park 1991, fidelities of Xiong et al. 2013) and ``branin_aug`` (Wu et al.
2019's augmented Branin at s = 1, 0.5) are not in the MUMBO paper: a
near-perfectly correlated cheap fidelity, and a correlated one with its optimum elsewhere;
``perdikaris`` (Perdikaris et al. 2017's nonlinear pair) has a cheap fidelity that
determines the target but is linearly uncorrelated with it (-0.10); ``park91b`` (Park's
second function, Xiong et al.'s affine cheap fidelity) a perfectly correlated one;
``branin_ackley`` (after Mikkola et al. 2023) an unrelated one. These five form the
``heldout`` suite: the robust rule's test problems, not used while it was tuned.

The ``unreliable`` suite (module :mod:`~mumbo_jax.benchmarks.problems.unreliable`) adds ten
literature problems, none in the paper, each with one cheap source of cost 1 against the
target's 10 (one with a continuous fidelity, cost ``1 + 9 z^2``): reliable sources and
sources with a bias that moves the optimum, heavy noise, anti-correlation, information in
part of the box only, and a correlated auxiliary task with its optimum elsewhere.
``suite("unreliable")`` returns them in order; ``SOURCE_KIND`` labels each cheap source.

The ``ho`` suite (module :mod:`~mumbo_jax.benchmarks.problems.heldout`) is the FROZEN held-out
test suite: eight two-fidelity literature problems (Dong et al. 2015, Toal 2015, Mainini et al.
2022), 2 to 8 inputs, with reliable, biased, noisy and anti-correlated cheap sources (costs 10,
1), chosen and frozen before anything ran on them; ``data/heldout_suite.json`` records the
module's sha256 and a test fails if it changes unrecorded. They are to be run once, with the
final default (docs/problems.md); ``heldout.SOURCE_KIND`` labels their cheap sources.

The ``real`` suite (module :mod:`~mumbo_jax.benchmarks.problems.real`) is the paper's two
real tasks, tabulated once with scikit-learn and interpolated: FABOLAS-style SVM tuning with
the training-data fraction ``2^(6 (z - 1))`` as the fidelity (cost: the measured fit time), and
FASTCV with the 10 folds of a cross-validation as tasks whose mean is the target
(``Problem.target_weights``); ``fastcv_svm_cv`` is that target as one query of cost 10.
Their optima are the best table entries (exact: the interpolation is piecewise linear).

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


from mumbo_jax.benchmarks.problems.problem import (
    Problem, continuous_problem, cost, discrete_problem, noise_variance, noisy_objective, noisy_observation, objective, sample_inputs, simple_regret,
    target_value,
)
from mumbo_jax.benchmarks.problems.registry import (
    ENTRY_POINT_GROUP, PROBLEMS, SUITES, get_problem, register, suite, unregister,
)
from mumbo_jax.benchmarks.problems.unreliable import SOURCE_KIND

__all__ = [
    "Problem", "discrete_problem", "continuous_problem", "PROBLEMS", "register", "unregister", "get_problem",
    "ENTRY_POINT_GROUP", "objective", "target_value", "cost",
    "noise_variance", "noisy_observation", "noisy_objective", "simple_regret", "sample_inputs",
    "SUITES", "suite", "SOURCE_KIND",
]


def __getattr__(name: str):
    """``problems.<name>``: the function of the registered problem called ``name`` (read
    from :data:`PROBLEMS`, so a problem registered at run time is there too; each
    function is documented in its own module)."""
    problem = PROBLEMS.get(name)
    if problem is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return problem.f


def __dir__():
    return sorted(set(globals()) | set(PROBLEMS))
