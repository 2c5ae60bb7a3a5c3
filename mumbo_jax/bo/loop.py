"""The BO loop's public names in one place (kept for existing imports).

The loop lives in modules of one concept each:

* :mod:`mumbo_jax.bo.settings`: :class:`BOSettings`, :class:`Task`, :func:`make_task`;
* :mod:`mumbo_jax.bo.rules`: the decision-rule records and their table;
* :mod:`mumbo_jax.bo.kernel`: the decision kernel (state, stages, buffers, design);
* :mod:`mumbo_jax.bo.asktell`: :class:`AskTell` for black boxes;
* :mod:`mumbo_jax.bo.compiled`: :func:`run_compiled` for traceable benchmarks;
* :mod:`mumbo_jax.bo.timing`: :class:`StepClock`, :class:`Timings`.

A registered benchmark's task and its compiled run are in
:mod:`mumbo_jax.benchmarks.tasks` (``problem_task``, ``run_problem``).
"""

from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.compiled import Benchmark, History, backend_batching, run_compiled
from mumbo_jax.bo.kernel import (
    MIN_BUFFER, Buffers, State, buffer_size, fit_stage, gstar_stage, initial_design, maximise_stage, pad_buffers,
    refit_at, step_keys,
)
from mumbo_jax.bo.rules import STRATEGIES
from mumbo_jax.bo.settings import BOSettings, Task, make_task
from mumbo_jax.bo.timing import StepClock, Timings

__all__ = [
    "AskTell", "Benchmark", "History", "backend_batching", "run_compiled", "MIN_BUFFER", "Buffers", "State",
    "buffer_size", "fit_stage", "gstar_stage", "initial_design", "maximise_stage", "pad_buffers", "refit_at",
    "step_keys", "STRATEGIES", "BOSettings", "Task", "make_task", "StepClock", "Timings",
]
