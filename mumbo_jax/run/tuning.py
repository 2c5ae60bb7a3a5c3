"""Crash-safe tuning of your own model: a journaled ask/tell run from a TOML config.

The objective is plain Python, ``objective(x, fidelity)``:

* ``x``: a dict ``{parameter name: float}`` in the parameters' own units (a log-scale
  parameter arrives as its value, not its logarithm);
* ``fidelity``: for discrete fidelities the entry of ``[fidelity] values`` (default: the
  index, an ``int``; index 0 is the target), for a continuous fidelity a ``float``;
* returns the score (a number), or ``(score, cost)``, or ``{"score": ..., "cost": ...}``.
  A returned cost replaces the configured cost of that evaluation in the budget (the
  configured costs still drive the decisions, information per unit cost).

The run is :class:`mumbo_jax.bo.loop.AskTell` (the initial design first, then the strategy's
proposals) with a journal (:mod:`mumbo_jax.run.journal`): the header (configuration) is
synced before the first evaluation and every evaluation is appended and fsync'ed as
soon as it returns. :func:`resume` (``mumbo-jax resume RUN_DIR``) replays the journal
through ``AskTell.from_state`` (the told data and the last fitted hyper-parameters) and
continues: the keys of BO step k are ``fold_in(key(seed), k)``, so the resumed optimiser
proposes what the killed one would have, and no finished evaluation is lost or redone.
The evaluation that was running at the kill is redone.

Failures: an objective that raises, returns NaN/inf (or a malformed value), or overruns
``time_limit_s`` is recorded as failed (with the error and traceback) and never told
to the model. ``retries`` re-evaluates the same point that many more times; a point
that still fails is abandoned and replaced by a uniform random point at the same
fidelity (deterministic in the seed): ``AskTell`` would otherwise propose the same point
again, since its data did not change; a later proposal at an abandoned point (within
:data:`SAME_POINT_TOL` of the box) is replaced the same way, without evaluating it. An
abandoned design point is replaced by the same point at every fidelity.
``max_consecutive_failures`` stops a run whose objective is broken. A failed
evaluation counts towards the evaluation budget and costs its fidelity's configured
cost. Limitation: the model knows nothing of failures, so a failing region that looks
unexplored (a corner of the box, say) keeps attracting proposals near, not at, the
failed points; avoiding it needs a failure model in the decision rule.

Where an evaluation runs: in-process by default (no start-up cost, any callable,
shared memory and accelerators; but a hang blocks the run and a crash, segfault or
out-of-memory kill ends it; ``resume`` then recovers). With ``time_limit_s`` (or
``isolate = true``) each evaluation runs in a worker process
(:mod:`mumbo_jax.run._tuning_worker`, a fresh Python that imports only the objective's
module): an overrun is killed and recorded as a failure, and so is a worker that dies;
the cost is a process start (the objective module's imports) at the beginning and
after each kill, module-level state of the objective lives in the worker (and is lost
at a kill), and the objective must be importable by name (``module:function``,
``path/file.py:function``, or a module-level callable of an importable module) with
picklable fidelity values and results. POSIX only (``select`` on a pipe).

Wall-clock accounting: each record carries ``eval_s`` (the objective), ``ask_s`` (the
optimiser: fit, g* sampling, maximisation, split in ``timings``) and ``other_s`` (the
rest: journal writes, replay, worker starts, printing); they add up to ``elapsed_s``,
the run's wall-clock summed over sessions. Time between the last record and a kill is
lost (it is not in the journal).

The configuration (all sections but ``[run]`` and ``[acquisition]`` required)::

    [objective]
    function = "mumbo_jax.benchmarks.examples:train_demo"  # "module:function" or "path/file.py:function"
    direction = "maximise"                    # or "minimise"
    time_limit_s = 60.0                       # optional: seconds per evaluation (worker process)
    isolate = false                           # optional: worker process even without a limit
    retries = 1                               # re-evaluations of a failed point (default 0)
    max_consecutive_failures = 10             # stop after this many failures in a row

    [parameters]                              # the search box, one entry per parameter
    learning_rate = {low = 1e-4, high = 1.0, log = true}
    momentum = {low = 0.0, high = 0.99}

    [fidelity]                                # discrete: fidelity 0 is the target
    kind = "discrete"
    costs = [10.0, 1.0]
    values = [1.0, 0.1]                       # optional: what the objective receives
    model = "icm"                             # "icm" (default, with rank) | "ar1"
    learn_cost = false                        # true: decide by a GP on log seconds (below)
    # or: kind = "continuous", bounds = [0.0625, 1.0], target = 1.0 (default: upper),
    #     cost = {offset = 0.05, scale = 1.0, power = 1.0}  (cost = offset + scale z^power),
    #     model = "product" (default) | "fabolas"

    [budget]                                  # at least one; the first reached stops the run
    cost = 200.0                              # total cost, initial design included
    wall_clock_s = 3600.0                     # total wall-clock over all sessions
    evaluations = 60                          # total evaluations, failed ones included

    [run]
    strategy = "mumbo"                        # a name in mumbo_jax.bo.strategies.STRATEGIES
    seed = 0
    out = "runs/my_tuning"                    # default runs/<config stem>

    [acquisition]                             # optional: mumbo_jax.bo.loop.BOSettings fields
    n_candidates = 2000

With ``learn_cost = true`` each evaluation costs what the objective reports, or else its
measured seconds, and the decisions divide the acquisition by a GP on log cost over
(x, z) (:mod:`mumbo_jax.gp.costmodel`, refitted before every decision) instead of the
configured costs, which then only describe the fidelities.

A relative ``path/file.py`` in ``function`` is relative to the config file's folder.
Every problem in the file raises :class:`mumbo_jax.run.config.ConfigError` naming the key.

Output in the run folder: ``journal.jsonl``, ``results.json`` (every evaluation, the
incumbent, counts, cost and the wall-clock split) and ``tuning.png``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
import select
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from mumbo_jax.run import _tuning_worker as _tw
from mumbo_jax.run.config import (CONTINUOUS_MODELS, DISCRETE_MODELS, ConfigError, _toml_type, _type_ok,
                              check_acquisition, check_table, read_toml)
from mumbo_jax.run.journal import JOURNAL_NAME, Journal, JournalError
from mumbo_jax.bo.strategies import STRATEGIES

__all__ = ["Parameter", "TuneConfig", "load_tune_config", "parse_tune_config", "resolve_objective",
           "make_tune_task", "tune", "resume", "results_from_journal", "plot_tuning", "RESULTS_NAME",
           "PLOT_NAME"]

RESULTS_NAME = "results.json"
PLOT_NAME = "tuning.png"
FORMAT = 1  # journal format version

_DIRECTIONS = {"maximise": "maximise", "maximize": "maximise", "minimise": "minimise", "minimize": "minimise"}

# section -> key -> (type, required, default)
_SCHEMA: dict[str, dict[str, tuple[type, bool, Any]]] = {
    "objective": {
        "function": (str, False, None),
        "direction": (str, True, None),
        "time_limit_s": (float, False, None),
        "isolate": (bool, False, None),
        "retries": (int, False, 0),
        "max_consecutive_failures": (int, False, 10),
    },
    "fidelity": {
        "kind": (str, True, None),
        "costs": (list, False, None),
        "values": (list, False, None),
        "bounds": (list, False, None),
        "target": (float, False, None),
        "cost": (dict, False, None),
        "model": (str, False, None),
        "rank": (int, False, 2),
        "learn_cost": (bool, False, False),
    },
    "budget": {
        "cost": (float, False, None),
        "wall_clock_s": (float, False, None),
        "evaluations": (int, False, None),
    },
    "run": {
        "strategy": (str, False, "mumbo"),
        "seed": (int, False, 0),
        "out": (str, False, None),
    },
}
_PARAM_KEYS = {"low": (float, True, None), "high": (float, True, None), "log": (bool, False, False)}
_COST_KEYS = {"offset": (float, False, 0.0), "scale": (float, False, 1.0), "power": (float, False, 1.0)}
_REQUIRED_SECTIONS = ("objective", "parameters", "fidelity", "budget")
_ALL_SECTIONS = ("objective", "parameters", "fidelity", "budget", "run", "acquisition")


# ---------------------------------------------------------------------------- config


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One tuned parameter: ``low <= value <= high``; a log-scale parameter is modelled
    (and searched) as ``log10(value)``."""

    name: str
    low: float
    high: float
    log: bool = False

    @property
    def internal_bounds(self) -> tuple[float, float]:
        """Bounds in the model's coordinates (log10 for a log-scale parameter)."""
        return (math.log10(self.low), math.log10(self.high)) if self.log else (self.low, self.high)

    def from_internal(self, u: float) -> float:
        """The value handed to the objective (clipped into ``[low, high]``)."""
        v = 10.0 ** u if self.log else u
        return float(min(max(v, self.low), self.high))


@dataclasses.dataclass(frozen=True)
class TuneConfig:
    """A validated tuning configuration (see the module docstring for the schema).

    Discrete fidelities set ``costs`` (and optionally ``values``); a continuous one sets
    ``fidelity_bounds``, ``target`` and ``cost_offset + cost_scale z^cost_power``.
    ``direction`` is ``"maximise"`` or ``"minimise"``; the budget fields that are
    ``None`` do not apply. ``base_dir`` resolves a relative ``path/file.py`` objective.
    """

    parameters: tuple
    fidelity_kind: str
    direction: str
    objective: str | None = None
    time_limit_s: float | None = None
    isolate: bool = False
    retries: int = 0
    max_consecutive_failures: int = 10
    costs: tuple | None = None
    values: tuple | None = None
    fidelity_bounds: tuple | None = None
    target: float | None = None
    cost_offset: float = 0.0
    cost_scale: float = 1.0
    cost_power: float = 1.0
    model: str = "icm"
    rank: int = 2
    learn_cost: bool = False
    budget_cost: float | None = None
    budget_wall_clock_s: float | None = None
    budget_evaluations: int | None = None
    strategy: str = "mumbo"
    seed: int = 0
    out: str = "runs/tune"
    acquisition: Mapping[str, Any] = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
    source: str | None = None
    base_dir: str = "."

    @property
    def discrete(self) -> bool:
        return self.fidelity_kind == "discrete"

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parameters]

    @property
    def dim(self) -> int:
        return len(self.parameters)

    @property
    def maximise(self) -> bool:
        return self.direction == "maximise"

    def settings(self):
        """The :class:`mumbo_jax.bo.loop.BOSettings` of the run."""
        from mumbo_jax.bo.loop import BOSettings

        return BOSettings(strategy=self.strategy, **dict(self.acquisition))

    def cost_of(self, z) -> float:
        """Configured cost of fidelity ``z`` (an index, or a value of a continuous one)."""
        if self.discrete:
            return float(self.costs[int(z)])
        return float(self.cost_offset + self.cost_scale * float(z) ** self.cost_power)

    def fidelity_value(self, z):
        """What the objective receives for fidelity ``z``."""
        if self.discrete:
            return self.values[int(z)] if self.values is not None else int(z)
        return float(z)

    def is_target(self, z) -> bool:
        return int(z) == 0 if self.discrete else abs(float(z) - self.target) <= 1e-12 * max(1.0, abs(self.target))

    def to_dict(self) -> dict:
        """The configuration as TOML-like plain data (``parse_tune_config`` reads it back)."""
        objective = {"direction": self.direction, "retries": self.retries,
                     "max_consecutive_failures": self.max_consecutive_failures, "isolate": self.isolate}
        if self.objective is not None:
            objective["function"] = self.objective
        if self.time_limit_s is not None:
            objective["time_limit_s"] = self.time_limit_s
        params = {p.name: {"low": p.low, "high": p.high, "log": p.log} for p in self.parameters}
        fid: dict[str, Any] = {"kind": self.fidelity_kind, "model": self.model, "learn_cost": self.learn_cost}
        if self.discrete:
            fid.update(costs=list(self.costs), rank=self.rank)
            if self.values is not None:
                fid["values"] = list(self.values)
        else:
            fid.update(bounds=list(self.fidelity_bounds), target=self.target,
                       cost={"offset": self.cost_offset, "scale": self.cost_scale, "power": self.cost_power})
        budget = {k: v for k, v in (("cost", self.budget_cost), ("wall_clock_s", self.budget_wall_clock_s),
                                    ("evaluations", self.budget_evaluations)) if v is not None}
        return {"objective": objective, "parameters": params, "fidelity": fid, "budget": budget,
                "run": {"strategy": self.strategy, "seed": self.seed, "out": self.out},
                "acquisition": dict(self.acquisition)}

    def describe(self) -> str:
        """One line per part of the search space, for progress output."""
        ps = ", ".join(f"{p.name} in [{p.low:g}, {p.high:g}]{' (log)' if p.log else ''}" for p in self.parameters)
        if self.discrete:
            fids = ", ".join(f"{self.fidelity_value(i)!r} (cost {c:g})" for i, c in enumerate(self.costs))
            fid = f"{len(self.costs)} fidelities: {fids}; target {self.fidelity_value(0)!r}"
        else:
            lo, hi = self.fidelity_bounds
            fid = (f"continuous fidelity in [{lo:g}, {hi:g}], target {self.target:g}, cost "
                   f"{self.cost_offset:g} + {self.cost_scale:g} z^{self.cost_power:g}")
        budget = ", ".join(f"{k} {v:g}" for k, v in (("cost", self.budget_cost),
                                                     ("wall-clock s", self.budget_wall_clock_s),
                                                     ("evaluations", self.budget_evaluations)) if v is not None)
        return f"{ps}\n  {fid}\n  budget: {budget}; strategy {self.strategy}, seed {self.seed}, {self.direction}"


def _finite_number(value) -> bool:
    return _type_ok(value, float) and math.isfinite(value)


def load_tune_config(path) -> TuneConfig:
    """Read and validate a TOML tuning configuration (:class:`ConfigError` naming the
    file and the key on any problem)."""
    path = Path(path)
    return parse_tune_config(read_toml(path), source=str(path), base_dir=str(path.resolve().parent))


def parse_tune_config(data: Mapping, source: str | None = None, base_dir: str | None = None) -> TuneConfig:
    """Validate already-parsed TOML data (sections as in the module docstring).

    ``source`` names the file in messages and gives the default ``out``
    (``runs/<stem>``); ``base_dir`` (default: the working directory) resolves a
    relative ``path/file.py`` objective.
    """
    where = f"{source}: " if source else ""

    def fail(msg):
        raise ConfigError(where + msg)

    for name, value in data.items():
        if name not in _ALL_SECTIONS:
            fail(f"unknown section or key {name!r}; allowed sections: " + ", ".join(f"[{s}]" for s in _ALL_SECTIONS))
        if not isinstance(value, dict):
            fail(f"{name!r} must be a section [{name}], got {_toml_type(value)} {value!r}")
    for name in _REQUIRED_SECTIONS:
        if name not in data:
            fail(f"missing section [{name}]")

    # -- [objective]
    obj = check_table(data["objective"], _SCHEMA["objective"], "[objective]", fail)
    func = obj["function"]
    if func is not None:
        mod, sep, attr = func.rpartition(":")
        if not sep or not mod.strip() or not attr.strip():
            fail(f"[objective] function must be 'module:function' or 'path/file.py:function', got {func!r}")
    direction = _DIRECTIONS.get(obj["direction"])
    if direction is None:
        fail(f"[objective] direction must be 'maximise' or 'minimise', got {obj['direction']!r}")
    limit = obj["time_limit_s"]
    if limit is not None and not (math.isfinite(limit) and limit > 0):
        fail(f"[objective] time_limit_s must be a finite number > 0, got {limit!r}")
    isolate = obj["isolate"]
    if isolate is False and limit is not None:
        fail("[objective] isolate = false cannot enforce time_limit_s: a time limit needs a worker process")
    isolate = bool(isolate) or limit is not None
    if obj["retries"] < 0:
        fail(f"[objective] retries must be >= 0, got {obj['retries']!r}")
    if obj["max_consecutive_failures"] < 1:
        fail(f"[objective] max_consecutive_failures must be >= 1, got {obj['max_consecutive_failures']!r}")

    # -- [parameters]
    params = []
    if not data["parameters"]:
        fail("[parameters] needs at least one parameter, e.g. lr = {low = 1e-4, high = 1.0, log = true}")
    for name, spec in data["parameters"].items():
        if not isinstance(spec, dict):
            fail(f"[parameters] {name} must be a table {{low = ..., high = ...}}, got {_toml_type(spec)} {spec!r}")
        p = check_table(spec, _PARAM_KEYS, f"[parameters] {name}:", fail)
        lo, hi = p["low"], p["high"]
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            fail(f"[parameters] {name}: need finite low < high, got low = {lo!r}, high = {hi!r}")
        if p["log"] and lo <= 0:
            fail(f"[parameters] {name}: a log-scale parameter needs low > 0, got {lo!r}")
        params.append(Parameter(str(name), lo, hi, p["log"]))

    # -- [fidelity]
    fid = check_table(data["fidelity"], _SCHEMA["fidelity"], "[fidelity]", fail)
    kind = fid["kind"]
    given = set(data["fidelity"])
    fields: dict[str, Any] = {"fidelity_kind": kind, "rank": fid["rank"]}
    if kind == "discrete":
        for key in ("bounds", "target", "cost"):
            if key in given:
                fail(f"[fidelity] {key} is for a continuous fidelity; a discrete one has costs (and values)")
        costs = fid["costs"]
        if costs is None:
            fail("[fidelity] costs is required for a discrete fidelity (one per fidelity, the target first)")
        if not costs or not all(_finite_number(c) and c > 0 for c in costs):
            fail(f"[fidelity] costs must be a non-empty array of finite numbers > 0, got {costs!r}")
        fields["costs"] = tuple(float(c) for c in costs)
        values = fid["values"]
        if values is not None:
            if len(values) != len(costs):
                fail(f"[fidelity] values must have one entry per cost ({len(costs)}), got {len(values)}")
            if not all(isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in values):
                fail(f"[fidelity] values must be numbers or strings, got {values!r}")
            fields["values"] = tuple(values)
        model = fid["model"] or "icm"
        if model not in DISCRETE_MODELS:
            fail(f"[fidelity] model: unknown model {model!r} for discrete fidelities; "
                 f"allowed: {', '.join(DISCRETE_MODELS)}")
        if fid["rank"] < 1:
            fail(f"[fidelity] rank must be >= 1, got {fid['rank']!r}")
    elif kind == "continuous":
        for key in ("costs", "values", "rank"):
            if key in given:
                fail(f"[fidelity] {key} is for discrete fidelities; a continuous one has bounds, target and cost")
        bounds = fid["bounds"]
        if bounds is None:
            fail("[fidelity] bounds = [low, high] is required for a continuous fidelity")
        if len(bounds) != 2 or not all(_finite_number(b) for b in bounds) or not bounds[0] < bounds[1]:
            fail(f"[fidelity] bounds must be [low, high] with finite low < high, got {bounds!r}")
        lo, hi = float(bounds[0]), float(bounds[1])
        target = hi if fid["target"] is None else fid["target"]
        if not (lo <= target <= hi):
            fail(f"[fidelity] target must lie in bounds [{lo:g}, {hi:g}], got {target!r}")
        cost = check_table(fid["cost"] or {}, _COST_KEYS, "[fidelity] cost:", fail)
        if not all(math.isfinite(v) for v in cost.values()):
            fail(f"[fidelity] cost: offset, scale and power must be finite, got {cost!r}")
        if cost["offset"] < 0 or cost["scale"] < 0 or cost["power"] <= 0:
            fail(f"[fidelity] cost: need offset >= 0, scale >= 0 and power > 0, got {cost!r}")
        if not cost["offset"] + cost["scale"] * lo ** cost["power"] > 0:
            fail(f"[fidelity] cost must be > 0 over the whole interval, but cost({lo:g}) = 0: "
                 "set cost.offset > 0 or a lower bound > 0")
        model = fid["model"] or "product"
        if model not in CONTINUOUS_MODELS:
            fail(f"[fidelity] model: unknown model {model!r} for a continuous fidelity; "
                 f"allowed: {', '.join(CONTINUOUS_MODELS)}")
        fields.update(fidelity_bounds=(lo, hi), target=float(target), cost_offset=cost["offset"],
                      cost_scale=cost["scale"], cost_power=cost["power"], rank=2)
    else:
        fail(f"[fidelity] kind must be 'discrete' or 'continuous', got {kind!r}")
    fields["model"] = model
    fields["learn_cost"] = bool(fid["learn_cost"])

    # -- [budget]
    budget = check_table(data["budget"], _SCHEMA["budget"], "[budget]", fail)
    if all(v is None for v in budget.values()):
        fail("[budget] needs at least one of cost, wall_clock_s, evaluations")
    for key in ("cost", "wall_clock_s"):
        if budget[key] is not None and not (math.isfinite(budget[key]) and budget[key] > 0):
            fail(f"[budget] {key} must be a finite number > 0, got {budget[key]!r}")
    if budget["evaluations"] is not None and budget["evaluations"] < 1:
        fail(f"[budget] evaluations must be >= 1, got {budget['evaluations']!r}")

    # -- [run]
    run = check_table(data.get("run", {}), _SCHEMA["run"], "[run]", fail)
    if run["strategy"] not in STRATEGIES:
        fail(f"[run] strategy: unknown strategy {run['strategy']!r}; allowed: {', '.join(STRATEGIES)}")
    if run["seed"] < 0:
        fail(f"[run] seed must be >= 0, got {run['seed']!r}")
    out = run["out"]
    if out is None:
        out = str(Path("runs") / (Path(source).stem if source else "tune"))
    elif not out.strip():
        fail("[run] out must be a non-empty path")

    # -- [acquisition]
    acq, settings = check_acquisition(data.get("acquisition", {}), run["strategy"], fail)
    if kind == "discrete" and settings.n_starts > settings.n_candidates * len(fields["costs"]):
        fail("[acquisition] n_starts exceeds the number of scored candidates")

    return TuneConfig(
        parameters=tuple(params), direction=direction, objective=func, time_limit_s=limit, isolate=isolate,
        retries=obj["retries"], max_consecutive_failures=obj["max_consecutive_failures"],
        budget_cost=budget["cost"], budget_wall_clock_s=budget["wall_clock_s"],
        budget_evaluations=budget["evaluations"], strategy=run["strategy"], seed=run["seed"], out=out,
        acquisition=types.MappingProxyType(acq), source=source,
        base_dir=str(Path(base_dir).resolve()) if base_dir is not None else str(Path.cwd()), **fields)


def make_tune_task(cfg: TuneConfig):
    """The :class:`mumbo_jax.bo.loop.Task` of a configuration: the model over the internal
    box (log10 for log-scale parameters), the target (fidelity 0, or ``target``) and the
    configured costs."""
    import jax
    import jax.numpy as jnp

    from mumbo_jax.bo import loop, optimize
    from mumbo_jax.gp import models, posterior

    bounds = [p.internal_bounds for p in cfg.parameters]
    if cfg.discrete:
        n = len(cfg.costs)
        spec = (models.icm_model(bounds, n, rank=min(cfg.rank, n)) if cfg.model == "icm"
                else models.ar1_model(bounds, n))
        return loop.make_task(spec, posterior.target_fidelity(0), optimize.discrete_fidelities(cfg.costs))
    make = models.product_model if cfg.model == "product" else models.fabolas_model
    spec = make(bounds, cfg.fidelity_bounds)
    cost = jax.tree_util.Partial(_power_cost, jnp.asarray(cfg.cost_offset), jnp.asarray(cfg.cost_scale),
                                 jnp.asarray(cfg.cost_power))
    return loop.make_task(spec, posterior.target_value(cfg.target), optimize.continuous_fidelity(cfg.fidelity_bounds,
                                                                                                 cost))


def _power_cost(offset, scale, power, z):
    """``offset + scale z^power`` (z [M] -> [M])."""
    return offset + scale * z ** power


# ---------------------------------------------------------------------------- the objective


def resolve_objective(ref: str, base_dir: str | None = None) -> Callable:
    """The callable named by ``"package.module:function"`` or ``"path/file.py:function"``
    (a relative path is relative to ``base_dir``); ``function`` may be dotted
    (``module:Class.method``). Raises :class:`ConfigError` naming what failed."""
    try:
        return _tw.resolve(ref, base_dir)
    except _tw.ObjectiveError as e:
        raise ConfigError(f"[objective] {e}") from None


def _objective_ref(fn: Callable) -> str | None:
    """``module:qualname`` of a callable if importing it gives the same object (so a
    resumed run or a worker process can find it), else ``None``."""
    mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not mod or not qual or "<" in qual or mod == "__main__":
        return None
    try:
        return f"{mod}:{qual}" if resolve_objective(f"{mod}:{qual}") is fn else None
    except ConfigError:
        return None


_evaluate_here = _tw.evaluate


def _worker_ref(objective) -> str:
    """The name a worker process imports the objective by."""
    ref = objective if isinstance(objective, str) else _objective_ref(objective)
    if ref is None:
        raise ConfigError("[objective] with time_limit_s or isolate the objective runs in a worker process, which "
                          f"imports it by name: {objective!r} is not importable (define it at module level in an "
                          "importable module or file, and give 'module:function' or 'path/file.py:function')")
    return ref


class _Worker:
    """One worker process running :mod:`mumbo_jax.run._tuning_worker` (started lazily,
    replaced after a kill or a crash). ``time_limit`` of ``None`` waits forever."""

    START_TIMEOUT_S = 120.0

    def __init__(self, objective: str, base_dir, time_limit: float | None):
        self.objective, self.base_dir, self.time_limit = objective, base_dir, time_limit
        self.proc = None

    def _wait(self, timeout) -> bool:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return bool(ready)

    def _start(self):
        self.proc = subprocess.Popen([sys.executable, _tw.__file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        _tw.send(self.proc.stdin, {"sys_path": list(sys.path), "objective": self.objective, "base_dir": self.base_dir})
        if not self._wait(self.START_TIMEOUT_S):
            self._kill()
            raise RuntimeError(f"the worker process did not load the objective within {self.START_TIMEOUT_S:g} s")
        try:
            kind, msg = _tw.receive(self.proc.stdout)
        except EOFError:
            code = self.proc.wait(5)
            self._kill()
            raise RuntimeError(f"the worker process died while loading the objective (exit code {code})") from None
        if kind == "error":
            self._kill()
            raise ConfigError(f"[objective] the worker process could not load the objective: {msg}")

    def _kill(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc.stdin.close()
            self.proc.stdout.close()
        self.proc = None

    def evaluate(self, x: dict, fidelity) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._kill()
            self._start()
        t0 = time.perf_counter()
        try:
            _tw.send(self.proc.stdin, (x, fidelity))
        except (BrokenPipeError, OSError):
            pass  # it died; the read below reports it
        if not self._wait(self.time_limit):
            self._kill()
            return {"status": "failed", "timed_out": True, "traceback": None, "eval_s": time.perf_counter() - t0,
                    "error": f"TimeoutError: the evaluation exceeded the time limit of {self.time_limit:g} s "
                             "(its worker process was killed)"}
        try:
            _, outcome = _tw.receive(self.proc.stdout)
        except EOFError:
            code = self.proc.wait(5)
            self._kill()
            return {"status": "failed", "traceback": None, "eval_s": time.perf_counter() - t0,
                    "error": f"WorkerDied: the worker process died during the evaluation (exit code {code})"}
        outcome["eval_s"] = time.perf_counter() - t0  # as seen from here (includes the pipe)
        return outcome

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                _tw.send(self.proc.stdin, None)
                self.proc.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()


# ---------------------------------------------------------------------------- the run


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _fmt(v, spec=".4g") -> str:
    return "n/a" if v is None else format(v, spec)


def _replay(task, settings, seed: int, evals: list[dict], learn_cost: bool = False):
    """An :class:`~mumbo_jax.bo.loop.AskTell` holding the journal's successful evaluations
    and the last recorded hyper-parameters (the warm start of the next fit)."""
    from mumbo_jax.bo import loop
    from mumbo_jax.gp import models

    ok = [r for r in evals if r["status"] == "ok"]
    params = next((r["params"] for r in reversed(evals) if r.get("params") is not None), None)
    if params is None:  # plain numpy from the start: the fit then compiles once, not twice
        params = {k: np.asarray(v).tolist() for k, v in models.default_params(task.spec).items()}
    state = {"seed": seed, "x": [r["u"] for r in ok], "z": [r["z"] for r in ok], "y": [r["y"] for r in ok],
             "costs": [r["cost"] for r in ok], "params": params}
    cost_model = None
    if learn_cost:
        from mumbo_jax.gp import costmodel

        cost_model = costmodel.cost_model_for(task)
    return loop.AskTell.from_state(task, settings, state, cost_model=cost_model)


def _stop_reason(cfg: TuneConfig, evals: list[dict], elapsed: float) -> str | None:
    if cfg.budget_evaluations is not None and len(evals) >= cfg.budget_evaluations:
        return f"evaluation budget reached ({len(evals)} evaluations)"
    spent = sum(r["cost"] for r in evals)
    if cfg.budget_cost is not None and spent >= cfg.budget_cost:
        return f"cost budget reached ({spent:.6g} of {cfg.budget_cost:g})"
    if cfg.budget_wall_clock_s is not None and elapsed >= cfg.budget_wall_clock_s:
        return f"wall-clock budget reached ({elapsed:.1f} s of {cfg.budget_wall_clock_s:g} s)"
    run = 0
    for r in reversed(evals):
        if r["status"] != "failed":
            break
        run += 1
    if run >= cfg.max_consecutive_failures:
        return f"stopped after {run} consecutive failed evaluations (max_consecutive_failures); see the journal"
    return None


SAME_POINT_TOL = 1e-3  # proposals this close (fraction of the box, max-norm) to an abandoned point are skipped


def _fallback(cfg: TuneConfig, evals: list[dict], z, replaces, point: int, ask_s=0.0, timings=None) -> dict:
    """A uniform random point at fidelity ``z``: the ``i``-th fallback of the run
    draws from ``default_rng([seed, i])``, so a resumed run draws the same points."""
    n_fallbacks = sum(1 for r in evals if r["source"] == "fallback" and r["attempt"] == 0)
    rng = np.random.default_rng([cfg.seed, n_fallbacks, 0x6d756d62])
    b = np.asarray([p.internal_bounds for p in cfg.parameters])
    u = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=len(b))
    return {"u": u.tolist(), "z": z, "source": "fallback", "point": point, "attempt": 0, "ask_s": ask_s,
            "timings": timings, "replaces": replaces}


def _known_failure(cfg: TuneConfig, evals: list[dict], u, z) -> bool:
    """Whether ``(u, z)`` is (within :data:`SAME_POINT_TOL`) a point abandoned earlier."""
    b = np.asarray([p.internal_bounds for p in cfg.parameters])
    width = b[:, 1] - b[:, 0]
    zw = 1.0 if cfg.discrete else cfg.fidelity_bounds[1] - cfg.fidelity_bounds[0]
    for r in evals:
        if r["status"] == "failed" and r["attempt"] >= cfg.retries:
            if (abs(float(r["z"]) - float(z)) / zw <= (0 if cfg.discrete else SAME_POINT_TOL)
                    and np.max(np.abs(np.asarray(r["u"]) - np.asarray(u)) / width) <= SAME_POINT_TOL):
                return True
    return False


def _next_point(cfg: TuneConfig, task, opt, evals: list[dict]) -> dict:
    """What to evaluate next: a retry of a failed point, a random replacement for an
    abandoned one, or the optimiser's ask (initial design, then the strategy).

    Failed evaluations never reach the model, so the optimiser's data (and its step
    key) are unchanged after a failure and it would propose the same point again:
    an abandoned point is replaced by a random point at the same fidelity, and a later
    proposal at an abandoned point is skipped the same way (without evaluating it)."""
    last = evals[-1] if evals else None
    point = 0 if last is None else last["point"] + 1
    if last is not None and last["status"] == "failed":
        if last["attempt"] < cfg.retries:
            return {"u": last["u"], "z": last["z"], "source": last["source"], "point": last["point"],
                    "attempt": last["attempt"] + 1, "ask_s": 0.0, "timings": None, "replaces": last.get("replaces")}
        return _fallback(cfg, evals, last["z"], last["u"], point)
    in_design, n_timings = opt.in_initial_design, len(opt.timings)
    t0 = time.perf_counter()
    u, z = opt.ask()
    ask_s = time.perf_counter() - t0
    timings = opt.timings[-1]._asdict() if len(opt.timings) > n_timings else None
    u, replaces = [float(v) for v in u], None
    if in_design:
        # the design evaluates each x at every fidelity: an x abandoned at one fidelity
        # is replaced by the same replacement at the others (it would likely fail again)
        replaced = {tuple(r["replaces"]): r["u"] for r in evals if r.get("replaces") is not None}
        while tuple(u) in replaced:
            replaces, u = replaces or u, replaced[tuple(u)]
    elif _known_failure(cfg, evals, u, z):
        return _fallback(cfg, evals, z, u, point, ask_s, timings)
    return {"u": u, "z": z, "source": "design" if in_design else "bo", "replaces": replaces,
            "point": point, "attempt": 0, "ask_s": ask_s, "timings": timings}


def _best_at_target(cfg: TuneConfig, evals: list[dict]):
    best = None
    for r in evals:
        if r["status"] == "ok" and cfg.is_target(r["z"]):
            if best is None or (r["score"] > best["score"] if cfg.maximise else r["score"] < best["score"]):
                best = r
    return best


class _Run:
    """The imperative shell around AskTell: evaluate, journal, tell, print."""

    def __init__(self, cfg: TuneConfig, objective, run_dir: Path, journal: Journal, records: list[dict], stream):
        self.cfg, self.objective, self.run_dir, self.journal = cfg, objective, run_dir, journal
        self.records = list(records)
        self.evals = [r for r in records if r.get("type") == "eval"]
        self.stream = stream

    def say(self, *args):
        print(*args, file=self.stream, flush=True)

    def run(self) -> dict:
        cfg = self.cfg
        ended = next((r for r in self.records if r.get("type") == "end"), None)
        if ended is not None:
            self.say(f"the run already finished ({ended['reason']}); rewriting its results")
            return self.finish(None)
        offset = max([r.get("elapsed_s", 0.0) for r in self.records] + [0.0])
        t_session = time.perf_counter()
        elapsed = lambda: offset + time.perf_counter() - t_session
        session = 1 + sum(r.get("type") == "session" for r in self.records)
        self.append({"type": "session", "session": session, "time": _now(), "elapsed_s": offset,
                     "n_evaluations": len(self.evals), "pid": os.getpid()})
        task = make_tune_task(cfg)
        opt = _replay(task, cfg.settings(), cfg.seed, self.evals, cfg.learn_cost)
        if self.evals:
            n_ok = sum(r["status"] == "ok" for r in self.evals)
            self.say(f"resuming (session {session}): replayed {len(self.evals)} journaled evaluations "
                     f"({n_ok} ok) at {offset:.1f} s of wall-clock")
        isolate = cfg.isolate or cfg.time_limit_s is not None
        worker = _Worker(_worker_ref(self.objective), cfg.base_dir, cfg.time_limit_s) if isolate else None
        fn = None if isolate else (self.objective if callable(self.objective)
                                   else resolve_objective(self.objective, cfg.base_dir))
        prev = offset
        try:
            while True:
                reason = _stop_reason(cfg, self.evals, elapsed())
                if reason is not None:
                    break
                point = _next_point(cfg, task, opt, self.evals)
                x = {p.name: p.from_internal(u) for p, u in zip(cfg.parameters, point["u"])}
                fidelity = cfg.fidelity_value(point["z"])
                outcome = worker.evaluate(x, fidelity) if worker else _evaluate_here(fn, x, fidelity)
                ok = outcome["status"] == "ok"
                score = outcome.get("score") if ok else None
                y = None if score is None else (score if cfg.maximise else -score)
                reported = outcome.get("cost") if ok else None
                if reported is not None:
                    cost = reported
                else:  # a learned cost model learns from the measured seconds
                    cost = outcome["eval_s"] if cfg.learn_cost else cfg.cost_of(point["z"])
                if ok:
                    opt.tell(np.asarray(point["u"]), point["z"], y, cost)
                now = elapsed()
                rec = {"type": "eval", "n": len(self.evals), "point": point["point"], "attempt": point["attempt"],
                       "source": point["source"], "replaces": point.get("replaces"),
                       "status": outcome["status"], "x": x, "u": point["u"],
                       "z": point["z"], "fidelity": fidelity, "score": score, "y": y, "cost": cost,
                       "cost_reported": reported is not None, "error": outcome.get("error"),
                       "traceback": outcome.get("traceback"), "timed_out": bool(outcome.get("timed_out", False)),
                       "eval_s": outcome["eval_s"], "ask_s": point["ask_s"], "timings": point["timings"],
                       "other_s": max(now - prev - outcome["eval_s"] - point["ask_s"], 0.0), "elapsed_s": now,
                       "session": session, "params": opt.state_dict()["params"]}
                self.append(rec)
                self.evals.append(rec)
                prev = now
                self.progress(rec)
        finally:
            if worker is not None:
                worker.close()
        self.say(f"stopping: {reason}")
        return self.finish({"type": "end", "reason": reason, "time": _now(), "session": session,
                            "elapsed_s": elapsed()}, opt)

    def append(self, record: dict):
        self.journal.append(record)
        self.records.append(record)

    def progress(self, r: dict):
        cfg = self.cfg
        xs = " ".join(f"{k}={v:.4g}" for k, v in r["x"].items())
        z = cfg.fidelity_value(r["z"])
        z = f"{z:.4g}" if isinstance(z, float) else str(z)
        spent = sum(e["cost"] for e in self.evals)
        budget = f"/{cfg.budget_cost:g}" if cfg.budget_cost is not None else ""
        n_budget = f"/{cfg.budget_evaluations}" if cfg.budget_evaluations is not None else ""
        head = f"[{r['n'] + 1}{n_budget}] {r['source']:8s} fidelity {z:>6s}  {xs}"
        times = f"eval {r['eval_s']:.2f} s, optimiser {r['ask_s']:.2f} s"
        if r["status"] == "ok":
            best = _best_at_target(cfg, self.evals)
            self.say(f"{head} -> {r['score']:.6g}  ({times}) | cost {spent:.5g}{budget} | "
                     f"best at target {_fmt(best and best['score'], '.6g')}")
        else:
            nxt = (f"retry {r['attempt'] + 1}/{cfg.retries} next" if r["attempt"] < cfg.retries
                   else "point abandoned: a random point at the same fidelity next")
            self.say(f"{head} -> FAILED: {r['error'][:200]}  ({times}; {nxt}) | cost {spent:.5g}{budget}")

    def finish(self, end: dict | None, opt=None) -> dict:
        cfg = self.cfg
        if end is not None:
            self.append(end)
        if opt is None:
            opt = _replay(make_tune_task(cfg), cfg.settings(), cfg.seed, self.evals, cfg.learn_cost)
        incumbent = None
        # AskTell.incumbent derives its key from the BO step count, negative (an error)
        # while the initial design is incomplete: no model incumbent before that
        if any(r["status"] == "ok" for r in self.evals) and not opt.in_initial_design:
            t0 = time.perf_counter()
            u, mu = opt.incumbent()
            incumbent = {"x": {p.name: p.from_internal(v) for p, v in zip(cfg.parameters, u)},
                         "u": [float(v) for v in u], "predicted_score": mu if cfg.maximise else -mu,
                         "fit_s": time.perf_counter() - t0}
        results = results_from_journal(cfg, self.records, incumbent, run_dir=str(self.run_dir))
        path = self.run_dir / RESULTS_NAME
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(results, indent=1, allow_nan=False) + "\n")
        os.replace(tmp, path)  # atomic: a crash never leaves half a results file
        png = plot_tuning(results, self.run_dir / PLOT_NAME)
        w, c = results["wall_clock"], results["counts"]
        self.say(f"done: {c['evaluations']} evaluations ({c['ok']} ok, {c['failed']} failed), cost "
                 f"{results['cost']['spent']:.6g}, wall-clock {w['total_s']:.1f} s = evaluation {w['evaluation_s']:.1f} s "
                 f"+ optimiser {w['optimiser_s']:.1f} s + other {w['other_s']:.1f} s")
        if incumbent is not None:
            xs = ", ".join(f"{k}={v:.6g}" for k, v in incumbent["x"].items())
            self.say(f"  incumbent (best predicted at the target): {xs}; predicted score "
                     f"{incumbent['predicted_score']:.6g}")
        best = results["best_observed"]
        if best is not None:
            xs = ", ".join(f"{k}={v:.6g}" for k, v in best["x"].items())
            self.say(f"  best observed at the target: {xs}; score {best['score']:.6g}")
        self.say(f"  results: {path}\n  plot:    {png}\n  journal: {self.journal.path}")
        return results


def results_from_journal(cfg: TuneConfig, records: list[dict], incumbent: dict | None = None,
                         run_dir: str | None = None) -> dict:
    """The content of ``results.json``, from journal records (plain data, strict JSON).

    ``wall_clock`` splits the run's wall-clock (summed over sessions) into evaluation,
    optimiser (the ask: fit / g* / maximisation) and other time; ``curves`` has one
    entry per evaluation (cumulative cost and times, best score observed at the target).
    """
    evals = [r for r in records if r.get("type") == "eval"]
    end = next((r for r in records if r.get("type") == "end"), None)
    total = max([r.get("elapsed_s", 0.0) for r in records] + [0.0])
    ev = sum(r["eval_s"] for r in evals)
    opt_s = sum(r["ask_s"] for r in evals)
    parts = {k: sum((r["timings"] or {}).get(k, 0.0) for r in evals) for k in ("fit", "gstar", "maximise")}
    best = _best_at_target(cfg, evals)
    curves: dict[str, list] = {k: [] for k in ("elapsed_s", "cost_spent", "evaluation_s", "optimiser_s", "other_s",
                                                "best_score_at_target")}
    acc = {"cost": 0.0, "eval": 0.0, "opt": 0.0, "other": 0.0}
    running = None
    for r in evals:
        acc["cost"] += r["cost"]
        acc["eval"] += r["eval_s"]
        acc["opt"] += r["ask_s"]
        acc["other"] += r["other_s"]
        if r["status"] == "ok" and cfg.is_target(r["z"]):
            if running is None or (r["score"] > running if cfg.maximise else r["score"] < running):
                running = r["score"]
        for k, v in zip(curves, (r["elapsed_s"], acc["cost"], acc["eval"], acc["opt"], acc["other"], running)):
            curves[k].append(v)
    strip = ("params", "type")
    return {
        "config": cfg.to_dict(),
        "config_file": cfg.source,
        "run_dir": run_dir,
        "finished": end is not None,
        "stop_reason": None if end is None else end["reason"],
        "direction": cfg.direction,
        "fidelity": {"kind": cfg.fidelity_kind,
                     "target": cfg.fidelity_value(0) if cfg.discrete else cfg.target,
                     "values": None if not cfg.discrete else [cfg.fidelity_value(i) for i in range(len(cfg.costs))]},
        "incumbent": incumbent,
        "best_observed": None if best is None else {"n": best["n"], "x": best["x"], "score": best["score"]},
        "counts": {
            "evaluations": len(evals),
            "ok": sum(r["status"] == "ok" for r in evals),
            "failed": sum(r["status"] == "failed" for r in evals),
            "timed_out": sum(bool(r.get("timed_out")) for r in evals),
            "retries": sum(r["attempt"] > 0 for r in evals),
            "fallbacks": sum(r["source"] == "fallback" for r in evals),
            "design": sum(r["source"] == "design" for r in evals),
            "sessions": sum(r.get("type") == "session" for r in records),
        },
        "cost": {"spent": sum(r["cost"] for r in evals), "budget": cfg.budget_cost},
        "wall_clock": {"total_s": total, "evaluation_s": ev, "optimiser_s": opt_s,
                       "optimiser_parts_s": parts, "other_s": max(total - ev - opt_s, 0.0),
                       "budget_s": cfg.budget_wall_clock_s},
        "conventions": {
            "score": "as returned by the objective (direction says whether it is maximised)",
            "y": "the value told to the model (maximisation convention: -score when minimising)",
            "u": "the model's coordinates: log10 of log-scale parameters",
            "elapsed_s": "wall-clock of the run summed over sessions (time lost to a crash is not counted)",
            "other_s": "wall-clock that is neither evaluation nor optimiser: journal, replay, worker starts, "
                       "printing, the final incumbent fit",
        },
        "curves": curves,
        "evaluations": [{k: v for k, v in r.items() if k not in strip} for r in evals],
    }


def plot_tuning(results: dict, path) -> Path:
    """Two panels against the run's wall-clock: every evaluation's score (colour:
    fidelity; failures marked x) with the best score observed at the target, and the
    cumulative wall-clock stacked as evaluation, optimiser overhead and other time."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    evals = results["evaluations"]
    fig = Figure(figsize=(7.0, 6.4), dpi=110)
    FigureCanvasAgg(fig)
    ax, ax2 = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    fidelity = results["fidelity"]
    ok = [r for r in evals if r["status"] == "ok"]
    if fidelity["kind"] == "discrete":
        for i, value in enumerate(fidelity["values"]):
            rs = [r for r in ok if r["z"] == i]
            if rs:
                label = f"fidelity {value!r}" + (" (target)" if i == 0 else "")
                ax.scatter([r["elapsed_s"] for r in rs], [r["score"] for r in rs], s=18, color=f"C{i}",
                           label=label, zorder=3)
    elif ok:
        sc = ax.scatter([r["elapsed_s"] for r in ok], [r["score"] for r in ok], c=[r["z"] for r in ok], s=18,
                        cmap="viridis", zorder=3, label="evaluations")
        fig.colorbar(sc, ax=ax, label="fidelity")
    curves = results["curves"]
    pts = [(t, b) for t, b in zip(curves["elapsed_s"], curves["best_score_at_target"]) if b is not None]
    if pts:
        t, b = zip(*pts)
        t = list(t) + [results["wall_clock"]["total_s"]]
        ax.step(t, list(b) + [b[-1]], where="post", color="k", lw=1.6, label="best observed at the target")
    if results["incumbent"] is not None:
        ax.axhline(results["incumbent"]["predicted_score"], color="k", ls="--", lw=1,
                   label="final incumbent (predicted)")
    failed = [r for r in evals if r["status"] == "failed"]
    if failed:
        ax.scatter([r["elapsed_s"] for r in failed], [0.02] * len(failed), marker="x", color="red",
                   transform=ax.get_xaxis_transform(), label=f"failed ({len(failed)})", zorder=4)
    ax.set_ylabel(f"score ({results['direction']}d)")
    ax.set_title(f"{len(evals)} evaluations, cost {results['cost']['spent']:.4g}")
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize="small")

    w = results["wall_clock"]
    t = [0.0] + curves["elapsed_s"]
    stacks = [[0.0] + curves[k] for k in ("evaluation_s", "optimiser_s", "other_s")]
    total = max(w["total_s"], 1e-12)
    labels = [f"evaluation {w['evaluation_s']:.1f} s ({100 * w['evaluation_s'] / total:.0f}%)",
              f"optimiser {w['optimiser_s']:.1f} s ({100 * w['optimiser_s'] / total:.0f}%)",
              f"other {w['other_s']:.1f} s ({100 * w['other_s'] / total:.0f}%)"]
    ax2.stackplot(t, *stacks, labels=labels, colors=["C0", "C1", "0.7"], alpha=0.8)
    ax2.set_xlabel("wall-clock of the run (s, summed over sessions)")
    ax2.set_ylabel("cumulative seconds")
    ax2.grid(True, alpha=0.3)
    ax2.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    return path


# ---------------------------------------------------------------------------- entry points


def _as_config(config) -> TuneConfig:
    if isinstance(config, TuneConfig):
        return config
    if isinstance(config, Mapping):
        return parse_tune_config(config)
    return load_tune_config(config)


def tune(config, objective: Callable | str | None = None, out=None, stream=None) -> dict:
    """Start a journaled tuning run and run it to its budget.

    Args:
        config: a :class:`TuneConfig`, TOML-like plain data, or a path to a TOML file.
        objective: a callable ``f(x: dict, fidelity) -> score | (score, cost) | dict``, or
            a ``"module:function"`` string; default ``[objective] function``.
        out: the run folder (default ``[run] out``); it must not hold a journal yet.
        stream: where progress goes (default stdout).

    Returns:
        The results dict (also written to ``RUN_DIR/results.json``).

    Raises:
        ConfigError: invalid configuration or an objective that cannot be loaded.
        JournalError: the run folder already holds a run (use :func:`resume`).
    """
    import jax

    jax.config.update("jax_enable_x64", True)
    cfg = _as_config(config)
    if out is not None:
        cfg = dataclasses.replace(cfg, out=str(out))
    if objective is None:
        if cfg.objective is None:
            raise ConfigError("no objective: give [objective] function = 'module:function' or pass objective=")
        objective = cfg.objective
    if isinstance(objective, str):
        resolve_objective(objective, cfg.base_dir)  # fail before anything is written
        ref = objective
    elif callable(objective):
        ref = _objective_ref(objective)
    else:
        raise ConfigError(f"objective must be a callable or a 'module:function' string, got {type(objective).__name__}")
    cfg = dataclasses.replace(cfg, objective=ref)
    if cfg.isolate:
        _worker_ref(objective)
    run_dir = Path(cfg.out)
    if run_dir.exists() and not run_dir.is_dir():
        raise JournalError(f"output path {run_dir} exists and is not a folder")
    if (run_dir / JOURNAL_NAME).exists():
        raise JournalError(f"{run_dir} already holds a run ({JOURNAL_NAME}): `mumbo-jax resume {run_dir}` continues "
                           "it; choose another output folder for a new run")
    run_dir.mkdir(parents=True, exist_ok=True)
    from mumbo_jax import __version__

    header = {"format": FORMAT, "created": _now(), "mumbo_jax": __version__, "jax": jax.__version__,
              "config": cfg.to_dict(), "source": cfg.source, "base_dir": cfg.base_dir, "objective": ref}
    stream = sys.stdout if stream is None else stream
    with Journal.create(run_dir / JOURNAL_NAME, header) as journal:
        print(f"mumbo-jax tune: {cfg.describe()}\n  objective {ref or repr(objective)}"
              f"{f', time limit {cfg.time_limit_s:g} s (worker process)' if cfg.time_limit_s else ''}"
              f"\n  run folder {run_dir}/ (every evaluation is journaled and synced; "
              f"`mumbo-jax resume {run_dir}` continues a killed run)", file=stream, flush=True)
        return _Run(cfg, objective, run_dir, journal, [], stream).run()


def resume(run_dir, objective: Callable | str | None = None, stream=None) -> dict:
    """Continue a run from its journal (after a crash, a kill or a Ctrl-C), or rewrite
    the results of a finished one.

    Args:
        run_dir: the run folder (holding ``journal.jsonl``).
        objective: needed only when the run's objective was a callable that cannot be
            imported by name (then pass the same callable again).
        stream: where progress goes (default stdout).

    Raises:
        JournalError: no usable journal (a torn last line is only warned about).
    """
    import jax

    jax.config.update("jax_enable_x64", True)
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise JournalError(f"{run_dir}: no such run folder")
    stream = sys.stdout if stream is None else stream
    journal, header, records = Journal.reopen(run_dir / JOURNAL_NAME)
    with journal:
        if header.get("format") != FORMAT:
            raise JournalError(f"{journal.path}: journal format {header.get('format')!r}, this version reads {FORMAT}")
        try:
            cfg = parse_tune_config(header["config"], source=header.get("source"), base_dir=header.get("base_dir"))
        except ConfigError as e:
            raise JournalError(f"{journal.path}: the header's configuration is invalid: {e}") from None
        cfg = dataclasses.replace(cfg, out=str(run_dir))
        if objective is None:
            objective = header.get("objective")
            if objective is None:
                raise ConfigError("this run's objective was a Python callable that cannot be imported by name; "
                                  "resume it from Python: mumbo_jax.run.tuning.resume(run_dir, objective=f)")
        if isinstance(objective, str):
            resolve_objective(objective, cfg.base_dir)
        print(f"mumbo-jax resume: {run_dir}/ ({sum(r.get('type') == 'eval' for r in records)} evaluations in the "
              f"journal)\n  {cfg.describe()}", file=stream, flush=True)
        return _Run(cfg, objective, run_dir, journal, records, stream).run()
