"""Crash-safe tuning of your own model: a journaled ask/tell run from a TOML config
(``mumbo-jax tune CONFIG``, ``mumbo-jax resume RUN_DIR``).

The objective is plain Python, ``objective(x, fidelity)``:

* ``x``: a dict ``{parameter name: float}`` in the parameters' own units (a log-scale
  parameter arrives as its value, not its logarithm);
* ``fidelity``: for discrete fidelities the entry of ``[fidelity] values`` (default: the
  index, an ``int``; index 0 is the target), for a continuous fidelity a ``float``;
* returns the score (a number: not text), or ``(score, cost)``, or ``{"score": ...,
  "cost": ...}``. A returned cost replaces the configured cost of that evaluation in the
  budget (the configured costs still drive the decisions, information per unit cost).

Where an evaluation runs: in-process by default (no start-up cost, any callable; but a
hang blocks the run and a crash ends it; ``resume`` then recovers). With
``time_limit_s`` (or ``isolate = true``) each evaluation runs in a worker process that
imports only the objective's module: an overrun is killed and recorded as a failure,
and so is a worker that dies; a worker never outlives its driver. The objective must
then be importable by name, with picklable fidelity values and results.

The parts, in the order a run uses them:

* :mod:`~mumbo_jax.run.tune.config`: the schema (:data:`TUNE_SECTIONS`),
  :class:`TuneConfig` and the task it defines;
* :mod:`~mumbo_jax.run.tune.objective`: loading and calling the objective, checking
  what it returns; the worker process's main;
* :mod:`~mumbo_jax.run.tune.worker`: the driver's side of the worker process;
* :mod:`~mumbo_jax.run.tune.executors`: where evaluations run (``[workers]``: inline,
  local worker processes, Dask);
* :mod:`~mumbo_jax.run.tune.schedule`: what is issued next (asks, retries, random
  replacements) and what a journal says is still owed after a crash;
* :mod:`~mumbo_jax.run.tune.session`: the run loop, :func:`tune` and :func:`resume`;
* :mod:`~mumbo_jax.run.tune.results`: ``results.json`` and ``tuning.png``.

Output in the run folder: ``journal.jsonl`` (:mod:`mumbo_jax.run.journal`),
``results.json`` (every evaluation, the incumbent, counts, cost and the wall-clock
split) and ``tuning.png``.
"""

from mumbo_jax.run.tune.config import TUNE_SECTIONS, Parameter, TuneConfig, load_tune_config, make_tune_task, \
    parse_tune_config
from mumbo_jax.run.tune.objective import evaluate, parse_return
from mumbo_jax.run.tune.results import PLOT_NAME, RESULTS_NAME, plot_tuning, results_from_journal
from mumbo_jax.run.tune.session import SAME_POINT_TOL, replay, resume, tune
from mumbo_jax.run.tune.worker import Worker, resolve_objective

__all__ = ["TUNE_SECTIONS", "Parameter", "TuneConfig", "load_tune_config", "parse_tune_config", "make_tune_task",
           "evaluate", "parse_return", "Worker", "resolve_objective", "tune", "resume", "replay",
           "results_from_journal", "plot_tuning", "RESULTS_NAME", "PLOT_NAME", "SAME_POINT_TOL"]
