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
    """The task of a benchmark problem: ICM (discrete) or product kernel (continuous)
    by default, the problem's noise learned, its known costs, its target fidelity (or the
    weighted sum of fidelities of a problem with ``target_weights``, FASTCV's fold mean).
    ``model``: ``"icm"``, ``"icm_disc"`` (ICM plus a target-only discrepancy, see
    :func:`mumbo_jax.gp.models.icm_disc_model`) or ``"ar1"`` for discrete fidelities,
    ``"product"`` or ``"fabolas"`` for a continuous one. ``target_floor``: the ICM kinds'
    ``ModelSpec.target_floor`` (``None``: :data:`mumbo_jax.gp.models.DEFAULT_TARGET_FLOOR`,
    the paper's plain ICM, for ``icm``; 5 % for ``icm_disc``); other models take none."""
    if target_floor is not None and (not problem.is_discrete or (model or "icm") not in models.ICM_KINDS):
        if target_floor != 0:
            raise ValueError(f"target_floor applies to the ICM models {models.ICM_KINDS}, not {model or 'product'!r}")
        target_floor = None
    if problem.is_discrete:
        model = model or "icm"
        r = min(rank, problem.n_fidelities)
        if model == "icm":
            floor = models.DEFAULT_TARGET_FLOOR if target_floor is None else target_floor
            spec = models.icm_model(problem.bounds, problem.n_fidelities, rank=r, target_floor=floor)
        elif model == "icm_disc":
            spec = models.icm_disc_model(problem.bounds, problem.n_fidelities, rank=r,
                                         **({} if target_floor is None else {"target_floor": target_floor}))
        elif model == "ar1":
            spec = models.ar1_model(problem.bounds, problem.n_fidelities)
        else:
            raise ValueError(f"model {model!r} is not for discrete fidelities; allowed: ('icm', 'icm_disc', 'ar1')")
        target = (posterior.target_fidelity(problem.target_fidelity) if problem.target_weights is None else
                  posterior.Target(jnp.arange(problem.n_fidelities), jnp.asarray(problem.target_weights, float)))
        return make_task(spec, target, optimize.discrete_fidelities(problem.costs))
    model = model or "product"
    if model not in ("product", "fabolas"):
        raise ValueError(f"model {model!r} is not for a continuous fidelity; allowed: ('product', 'fabolas')")
    make = models.product_model if model == "product" else models.fabolas_model
    spec = make(problem.bounds, problem.fidelity_bounds)
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
