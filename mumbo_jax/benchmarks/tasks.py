"""Benchmark problems as BO tasks: the bridge from :mod:`mumbo_jax.benchmarks.problems`
to the problem-agnostic BO layer.

* :func:`problem_task`: the model, target and costs of a registered problem;
* :func:`problem_benchmark`: what the compiled driver needs of it (a noisy traceable
  objective and the true value / regret of an incumbent);
* :func:`run_problem`: :func:`mumbo_jax.bo.compiled.run_compiled` on a problem.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from mumbo_jax.benchmarks import problems
from mumbo_jax.bo import optimize
from mumbo_jax.bo.compiled import History, run_compiled
from mumbo_jax.bo.settings import BOSettings, Task, make_task
from mumbo_jax.gp import models, posterior

__all__ = ["ProblemBenchmark", "problem_task", "problem_benchmark", "run_problem"]


def problem_task(problem: problems.Problem, model: str | None = None, rank: int = 2,
                 target_floor: float | None = None) -> Task:
    """The task of a benchmark problem: the model of kind ``model`` from
    :data:`mumbo_jax.gp.models.MODELS` (``None``: :func:`mumbo_jax.gp.models.default_kind`,
    ICM for discrete fidelities, the product kernel for a continuous one; a model of
    one's own once registered), the problem's noise learned, its known costs, its target
    fidelity (or the weighted sum of fidelities of a problem with ``target_weights``,
    FASTCV's fold mean). ``rank`` and ``target_floor`` go to the models that have them
    (:func:`mumbo_jax.gp.models.build_model`; ``target_floor=None``: the model's default,
    0 for ``icm``, the paper's plain ICM, 5 % for ``icm_disc``).

    Raises:
        ValueError: an unknown model, one for the other kind of fidelity, or a nonzero
            ``target_floor`` for a model without one.
    """
    kind = model or models.default_kind(problem.is_discrete)
    if problem.is_discrete:
        spec = models.build_model(kind, problem.bounds, n_fidelities=problem.n_fidelities, rank=rank,
                                  target_floor=target_floor)
        target = (posterior.target_fidelity(problem.target_fidelity) if problem.target_weights is None else
                  posterior.Target(jnp.arange(problem.n_fidelities), jnp.asarray(problem.target_weights, float)))
        return make_task(spec, target, optimize.discrete_fidelities(problem.costs))
    spec = models.build_model(kind, problem.bounds, fidelity_bounds=problem.fidelity_bounds, rank=rank,
                              target_floor=target_floor)
    return make_task(spec, posterior.target_value(problem.target_fidelity),
                     optimize.continuous_fidelity(problem.fidelity_bounds, problem.cost_function))


@dataclasses.dataclass(frozen=True)
class ProblemBenchmark:
    """A registered problem as a :class:`mumbo_jax.bo.compiled.Benchmark` (hashes by the
    problem's identity, so it is a static jit argument)."""

    problem: problems.Problem

    def observe(self, key, x, z):
        """Noisy f(x, z) in maximisation convention."""
        return problems.noisy_objective(self.problem, key, x, z)

    def score(self, x):
        """``(f(x, target) in the problem's own sense, simple regret)``."""
        return problems.target_value(self.problem, x), problems.simple_regret(self.problem, x)


def problem_benchmark(problem: problems.Problem) -> ProblemBenchmark:
    """The compiled driver's view of ``problem``."""
    if not isinstance(problem, problems.Problem):
        raise ValueError(f"problem must be a mumbo_jax.benchmarks.problems.Problem, got {type(problem).__name__}")
    return ProblemBenchmark(problem)


def run_problem(problem: problems.Problem, budget: float, seeds, settings: BOSettings = BOSettings(),
                task: Task | None = None, **kwargs) -> History:
    """:func:`mumbo_jax.bo.compiled.run_compiled` on a registered problem (``task``
    defaults to :func:`problem_task`); ``kwargs`` go to ``run_compiled``."""
    task = problem_task(problem) if task is None else task
    return run_compiled(problem_benchmark(problem), task, budget, seeds, settings, **kwargs)
