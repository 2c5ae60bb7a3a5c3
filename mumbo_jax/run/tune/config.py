"""The tuning configuration (``mumbo-jax tune``): its schema, :class:`TuneConfig` and
the task it defines.

The sections are described once, in :data:`TUNE_SECTIONS` (``mumbo-jax config-help
tune`` prints them)::

    [objective]    function, direction, time_limit_s, isolate, retries, max_consecutive_failures,
                   failures
    [parameters]   name = {low = ..., high = ..., log = false}, one per tuned parameter
    [fidelity]     kind = "discrete" (costs, values, model, rank) or "continuous"
                   (bounds, target, cost = {offset, scale, power}, model); learn_cost
    [budget]       cost, wall_clock_s, evaluations: at least one; the first reached stops.
                   Budgets here INCLUDE the initial design (unlike `mumbo-jax run`).
    [run]          strategy, seed, out
    [workers]      n, executor ("process" or "dask"), scheduler, connect_timeout_s, pending
    [settings.*]   mumbo_jax.bo.settings.BOSettings records (as in `mumbo-jax run`)

Every problem raises :class:`~mumbo_jax.run.schema.ConfigError` naming the key.
"""

from __future__ import annotations

import dataclasses
import math
import types
from pathlib import Path

import numpy as np
from typing import Any, Mapping

from mumbo_jax.bo import rules
from mumbo_jax.gp import models
from mumbo_jax.run.config import MAX_BUDGET, MAX_RANK, read_toml, settings_tables, strategy_misfit
from mumbo_jax.run.settings_config import OLD_SECTION, SETTINGS, SETTINGS_SECTIONS, build_settings
from mumbo_jax.run.schema import ConfigError, Field, Section, check_sections, toml_type, type_ok

__all__ = ["Parameter", "TuneConfig", "TUNE_SECTIONS", "load_tune_config", "parse_tune_config", "make_tune_task"]

MAX_TUNE_EVALUATIONS = 100_000  # evaluations of one tuning run (an ask at 2,000 points already takes minutes)
MAX_WORKERS = 4096
MAX_CHOICES = 64  # choices of a categorical parameter (one model coordinate each)

_DIRECTIONS = {"maximise": "maximise", "maximize": "maximise", "minimise": "minimise", "minimize": "minimise"}

OBJECTIVE = Section("objective", "The function to tune and how failures are handled.", (
    Field("function", str, "'module:function' or 'path/file.py:function' (relative to the config's folder); "
          "may be omitted when tune() is given a callable."),
    Field("direction", str, "Whether the returned score is maximised or minimised.", required=True,
          choices=tuple(_DIRECTIONS)),
    Field("time_limit_s", float, "Seconds per evaluation; each runs in a worker process, killed when over.", low=0,
          low_open=True, high=1e8),
    Field("isolate", bool, "Run each evaluation in a worker process (default: only with time_limit_s)."),
    Field("retries", int, "Re-evaluations of a failed point before it is abandoned.", default=0, low=0, high=1000),
    Field("max_consecutive_failures", int, "Stop the run (exit code 1) after this many failures in a row.",
          default=10, low=1, high=MAX_TUNE_EVALUATIONS),
    Field("failures", str, "What the model learns from a failed evaluation: impute (it is modelled as the worst "
          "score seen so far minus a margin, so the optimiser steers away from a failing region) or ignore.",
          default="impute", choices=("impute", "ignore")),
    Field("deterministic", bool, "The objective returns the same score for the same point and fidelity (no noise): "
          "the model's noise is held at its floor instead of learned, so a measured point holds no more to learn "
          "and is not proposed again. false: the noise is learned, and a repeat is the model's choice for a noisy "
          "objective.", default=False),
), required=True)
PARAMETER = Section("parameters.<name>", "One entry per tuned parameter: name = {low = ..., high = ...} (a number), "
                    "{low = ..., high = ..., type = 'int'} or {choices = [...]} (categorical); at least one.", (
    Field("low", float, "Lower bound (> 0 for a log-scale parameter); not for a categorical one."),
    Field("high", float, "Upper bound (> low); not for a categorical one."),
    Field("log", bool, "Model and search log10 of the value (the objective receives the value).", default=False),
    Field("type", str, "float (default), int (the objective receives integers in [low, high]; the model sees the "
          "rounded values) or categorical (give choices).", choices=("float", "int", "categorical")),
    Field("choices", list, "A categorical parameter's values (strings, numbers or booleans; at least 2), modelled "
          "one-hot: one coordinate per choice, the objective receives the choice whose coordinate is largest.",
          nonempty=True),
), required=True)
FIDELITY = Section("fidelity", "The fidelities: discrete (index 0 is the target) or one continuous.", (
    Field("kind", str, "discrete: costs (and values); continuous: bounds, target, cost.", required=True,
          choices=("discrete", "continuous")),
    Field("costs", list, "Discrete: cost of each fidelity, the target first (finite, > 0).", items=float,
          nonempty=True),
    Field("values", list, "Discrete: what the objective receives for each fidelity (default its index).",
          nonempty=True),
    Field("bounds", list, "Continuous: [low, high] of the fidelity.", items=float),
    Field("target", float, "Continuous: the target fidelity, in bounds (default: high)."),
    Field("cost", dict, "Continuous: {offset, scale, power}: cost = offset + scale z^power (default 0, 1, 1)."),
    Field("model", str, "GP model, one of mumbo_jax.gp.models.MODELS for this kind of fidelity: icm (default), "
          "ar1, icm_disc or task_basis for discrete; product (default), fabolas or linear_basis for continuous; or a "
          "model registered with mumbo_jax.register_model.", choices=lambda: tuple(models.MODELS)),
    Field("rank", int, "Discrete: rank of the ICM coregionalisation matrix.", default=2, low=1, high=MAX_RANK),
    Field("target_floor", float, "Discrete ICM models: the target's own variance is at least this share of the "
          "variance it shares with the cheaper fidelities (e.g. 0.01 where a cheap fidelity may mislead); default 0 "
          "for icm (plain ICM), 0.05 for icm_disc.",
          low=0),
    Field("learn_cost", bool, "Cost = what the objective reports, else its measured seconds; decide by a GP on log "
          "cost instead of the configured costs.", default=False),
), required=True)
COST = Section("fidelity.cost", "Continuous fidelity: the configured cost offset + scale z^power (> 0 on the whole "
               "interval).", (
    Field("offset", float, "Cost at z = 0.", default=0.0, low=0),
    Field("scale", float, "Factor of z^power.", default=1.0, low=0),
    Field("power", float, "Exponent of z.", default=1.0, low=0, low_open=True),
))
BUDGET = Section("budget", "At least one key; the first budget reached stops the run. Tuning budgets INCLUDE the "
                 "initial design (2 d points at every fidelity), unlike mumbo-jax run.", (
    Field("cost", float, "Total cost, the initial design included (a reported cost replaces the configured one).",
          low=0, low_open=True, high=MAX_BUDGET),
    Field("wall_clock_s", float, "Total wall-clock seconds over all sessions.", low=0, low_open=True, high=1e9),
    Field("evaluations", int, "Total evaluations, failed ones and the initial design included.", low=1,
          high=MAX_TUNE_EVALUATIONS),
), required=True)
TUNE_RUN = Section("run", "The decision rule, the seed and the run folder.", (
    Field("strategy", str, "The decision rule (mumbo-jax list shows which fidelity kinds each supports).",
          default="robust", choices=rules.STRATEGIES),
    Field("seed", int, "Seed of the initial design and of every decision.", default=0, low=0, high=10**9),
    Field("out", str, "Run folder (journal, results, plot); default runs/<config file stem>."),
))
WORKERS = Section("workers", "Parallel evaluations: how many run at once and where (command-line --workers, "
                  "--executor, --scheduler override these).", (
    Field("n", int, "Evaluations in flight at once (1: one at a time, in the driver or its worker process).",
          default=1, low=1, high=MAX_WORKERS),
    Field("executor", str, "process: n isolated local worker processes (they die with the driver); dask: the "
          "workers of a Dask cluster (needs scheduler; pip install '.[workers]' in the mumbo-jax checkout, or pip install 'dask[distributed]').", default="process",
          choices=("process", "dask")),
    Field("scheduler", str, "Dask scheduler address, e.g. 'tcp://10.0.0.5:8786' (executor = 'dask')."),
    Field("connect_timeout_s", float, "Seconds to wait for the Dask scheduler before giving up.", default=10.0,
          low=0, low_open=True, high=1e6),
    Field("pending", str, "How evaluations still running enter the next decision: believer (kriging-believer "
          "fantasies, any strategy) or gibbon (GIBBON's pending-aware gain, max-value strategies).",
          default="believer", choices=("believer", "gibbon")),
))
TUNE_SECTIONS = (OBJECTIVE, PARAMETER, FIDELITY, COST, BUDGET, TUNE_RUN, WORKERS) + SETTINGS_SECTIONS


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One tuned parameter: ``low <= value <= high``; a log-scale parameter is modelled
    (and searched) as ``log10(value)``.

    Kinds (``kind``): ``"float"``; ``"int"`` (integers in ``[low, high]``, log-scaled or
    not: a proposal is rounded before it is evaluated and the model is told the rounded
    point, so its data lie on the integers); ``"categorical"`` (``choices``, modelled
    one-hot: one coordinate in [0, 1] per choice; a proposal evaluates the choice with
    the largest coordinate and the model is told that choice's one-hot vector).
    """

    name: str
    low: float = 0.0
    high: float = 1.0
    log: bool = False
    kind: str = "float"
    choices: tuple = ()

    @property
    def dims(self) -> int:
        """Coordinates in the model (one, or one per choice)."""
        return len(self.choices) if self.kind == "categorical" else 1

    @property
    def internal_bounds(self) -> tuple[float, float]:
        """Bounds in the model's coordinates (log10 for a log-scale parameter; [0, 1]
        for each coordinate of a categorical one)."""
        if self.kind == "categorical":
            return (0.0, 1.0)
        return (math.log10(self.low), math.log10(self.high)) if self.log else (self.low, self.high)

    def from_internal(self, u):
        """The value handed to the objective from its coordinate(s) ``u`` (a float for
        one coordinate, a sequence for a categorical parameter): clipped into ``[low,
        high]``, rounded for an integer, the largest coordinate's choice."""
        if self.kind == "categorical":
            return self.choices[int(np.argmax(np.asarray(u, float)))]
        v = 10.0 ** float(u) if self.log else float(u)
        v = min(max(v, self.low), self.high)
        return int(round(v)) if self.kind == "int" else float(v)

    def snap(self, u):
        """The model's coordinate(s) of the value :meth:`from_internal` gives (equal to
        ``u`` for a float parameter)."""
        if self.kind == "categorical":
            onehot = np.zeros(self.dims)
            onehot[int(np.argmax(np.asarray(u, float)))] = 1.0
            return onehot.tolist()
        if self.kind == "int":
            v = self.from_internal(u)
            return math.log10(v) if self.log else float(v)
        return float(u)

    def to_dict(self) -> dict:
        if self.kind == "categorical":
            return {"type": "categorical", "choices": list(self.choices)}
        out = {"low": self.low, "high": self.high, "log": self.log}
        if self.kind == "int":
            out["type"] = "int"
        return out

    def describe(self) -> str:
        if self.kind == "categorical":
            return f"{self.name} in {{{', '.join(map(repr, self.choices))}}}"
        kind = " integer" if self.kind == "int" else ""
        return f"{self.name}{kind} in [{self.low:g}, {self.high:g}]{' (log)' if self.log else ''}"


@dataclasses.dataclass(frozen=True)
class TuneConfig:
    """A validated tuning configuration (:data:`TUNE_SECTIONS`).

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
    failures: str = "impute"
    deterministic: bool = False
    costs: tuple | None = None
    values: tuple | None = None
    fidelity_bounds: tuple | None = None
    target: float | None = None
    cost_offset: float = 0.0
    cost_scale: float = 1.0
    cost_power: float = 1.0
    model: str = "icm"
    rank: int = 2
    target_floor: float | None = None
    learn_cost: bool = False
    budget_cost: float | None = None
    budget_wall_clock_s: float | None = None
    budget_evaluations: int | None = None
    strategy: str = "robust"
    seed: int = 0
    out: str = "runs/tune"
    workers: int = 1
    executor: str = "process"
    scheduler: str | None = None
    connect_timeout_s: float = 10.0
    pending: str = "believer"
    settings_table: Mapping[str, Any] = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
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
        """Coordinates of the model's box (one per parameter, one per choice of a categorical one)."""
        return sum(p.dims for p in self.parameters)

    @property
    def internal_bounds(self) -> list[tuple[float, float]]:
        """The model's box: one ``(low, high)`` per coordinate."""
        return [p.internal_bounds for p in self.parameters for _ in range(p.dims)]

    def _slices(self, u):
        u, i = list(u), 0
        for p in self.parameters:
            yield p, (u[i:i + p.dims] if p.kind == "categorical" else u[i])
            i += p.dims

    def values_of(self, u) -> dict:
        """``{name: value}`` handed to the objective for the model's coordinates ``u``."""
        return {p.name: p.from_internal(v) for p, v in self._slices(u)}

    def snap(self, u) -> list[float]:
        """``u`` moved onto the point the objective is evaluated at (integers rounded,
        categoricals one-hot); unchanged for float parameters."""
        out = []
        for p, v in self._slices(u):
            s = p.snap(v)
            out += s if isinstance(s, list) else [s]
        return out

    @property
    def snaps(self) -> bool:
        """Whether any parameter is an integer or categorical one."""
        return any(p.kind != "float" for p in self.parameters)

    @property
    def maximise(self) -> bool:
        return self.direction == "maximise"

    def settings(self):
        """The :class:`mumbo_jax.bo.settings.BOSettings` of the run."""
        from mumbo_jax.bo.settings import BOSettings

        return BOSettings(strategy=self.strategy, **{k: dict(v) for k, v in self.settings_table.items()})

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

    def describe_fidelity(self, z) -> str:
        """``z`` for progress lines: the index and the value the objective receives
        (``1 (=0.1)``), or the continuous value."""
        if not self.discrete:
            return f"{float(z):.4g}"
        if self.values is None:
            return str(int(z))
        value = self.fidelity_value(z)
        return f"{int(z)} (={value:.4g})" if isinstance(value, float) else f"{int(z)} (={value})"

    def is_target(self, z) -> bool:
        return int(z) == 0 if self.discrete else abs(float(z) - self.target) <= 1e-12 * max(1.0, abs(self.target))

    def to_dict(self) -> dict:
        """The configuration as TOML-like plain data (``parse_tune_config`` reads it back)."""
        objective = {"direction": self.direction, "retries": self.retries,
                     "max_consecutive_failures": self.max_consecutive_failures, "isolate": self.isolate,
                     "failures": self.failures, "deterministic": self.deterministic}
        if self.objective is not None:
            objective["function"] = self.objective
        if self.time_limit_s is not None:
            objective["time_limit_s"] = self.time_limit_s
        params = {p.name: p.to_dict() for p in self.parameters}
        fid: dict[str, Any] = {"kind": self.fidelity_kind, "model": self.model, "learn_cost": self.learn_cost}
        if self.discrete:
            fid.update(costs=list(self.costs), rank=self.rank)
            if self.target_floor is not None:
                fid["target_floor"] = self.target_floor
            if self.values is not None:
                fid["values"] = list(self.values)
        else:
            fid.update(bounds=list(self.fidelity_bounds), target=self.target,
                       cost={"offset": self.cost_offset, "scale": self.cost_scale, "power": self.cost_power})
        budget = {k: v for k, v in (("cost", self.budget_cost), ("wall_clock_s", self.budget_wall_clock_s),
                                    ("evaluations", self.budget_evaluations)) if v is not None}
        return {"objective": objective, "parameters": params, "fidelity": fid, "budget": budget,
                "run": {"strategy": self.strategy, "seed": self.seed, "out": self.out},
                "workers": {k: v for k, v in (("n", self.workers), ("executor", self.executor),
                                              ("scheduler", self.scheduler),
                                              ("connect_timeout_s", self.connect_timeout_s),
                                              ("pending", self.pending)) if v is not None},
                SETTINGS: {k: dict(v) for k, v in self.settings_table.items()}}

    def describe(self) -> str:
        """One line per part of the search space, for progress output."""
        ps = ", ".join(p.describe() for p in self.parameters)
        if self.discrete:
            fids = ", ".join(f"{i}: {self.fidelity_value(i)!r} (cost {c:g})" for i, c in enumerate(self.costs))
            fid = f"{len(self.costs)} fidelities {fids}; target {self.fidelity_value(0)!r}"
        else:
            lo, hi = self.fidelity_bounds
            fid = (f"continuous fidelity in [{lo:g}, {hi:g}], target {self.target:g}, cost "
                   f"{self.cost_offset:g} + {self.cost_scale:g} z^{self.cost_power:g}")
        budget = ", ".join(f"{k} {v:g}" for k, v in (("cost", self.budget_cost),
                                                     ("wall-clock s", self.budget_wall_clock_s),
                                                     ("evaluations", self.budget_evaluations)) if v is not None)
        where = "" if self.workers == 1 and self.executor == "process" else (
            f"\n  workers: {self.workers} at once on {self.executor}"
            f"{f' ({self.scheduler})' if self.scheduler else ''}, pending points by {self.pending}")
        return (f"{ps}\n  {fid}\n  budget: {budget} (the initial design included); strategy {self.strategy}, "
                f"seed {self.seed}, {self.direction}{where}")


def load_tune_config(path) -> TuneConfig:
    """Read and validate a TOML tuning configuration (:class:`ConfigError` naming the
    file and the key on any problem)."""
    path = Path(path)
    return parse_tune_config(read_toml(path), source=str(path), base_dir=str(path.resolve().parent))


def parse_tune_config(data: Mapping, source: str | None = None, base_dir: str | None = None) -> TuneConfig:
    """Validate already-parsed TOML data (:data:`TUNE_SECTIONS`).

    ``source`` names the file in messages and gives the default ``out``
    (``runs/<stem>``); ``base_dir`` (default: the working directory) resolves a
    relative ``path/file.py`` objective.
    """
    where = f"{source}: " if source else ""

    def fail(msg):
        raise ConfigError(where + msg)

    parameters = Section("parameters", PARAMETER.doc, (), required=True)  # a table of tables
    check_sections({k: v for k, v in data.items() if k != OLD_SECTION},
                   (OBJECTIVE, parameters, FIDELITY, BUDGET, TUNE_RUN, WORKERS), fail, extra=(SETTINGS,))
    obj = OBJECTIVE.validate(data["objective"], fail)
    func = obj["function"]
    if func is not None:
        mod, sep, attr = func.rpartition(":")
        if not sep or not mod.strip() or not attr.strip():
            fail(f"[objective] function must be 'module:function' or 'path/file.py:function', got {func!r}")
    limit = obj["time_limit_s"]
    if obj["isolate"] is False and limit is not None:
        fail("[objective] isolate = false cannot enforce time_limit_s: a time limit needs a worker process")

    params = []
    if not data["parameters"]:
        fail("[parameters] needs at least one parameter, e.g. lr = {low = 1e-4, high = 1.0, log = true}")
    for name, spec in data["parameters"].items():
        if not isinstance(spec, dict):
            fail(f"[parameters] {name} must be a table {{low = ..., high = ...}}, got {toml_type(spec)} {spec!r}")
        params.append(_parameter(str(name), spec, fail))

    fields = _fidelity_fields(data["fidelity"], fail)
    budget = BUDGET.validate(data["budget"], fail)
    if all(v is None for v in budget.values()):
        fail("[budget] needs at least one of cost, wall_clock_s, evaluations")
    run = TUNE_RUN.validate(data.get("run", {}), fail)
    why = strategy_misfit(run["strategy"], fields["fidelity_kind"] == "discrete")
    if why:
        fail(f"[run] strategy: {run['strategy']!r} {why}; [fidelity] kind is {fields['fidelity_kind']!r} "
             "(mumbo-jax list shows what fits)")
    out = run["out"] or str(Path("runs") / (Path(source).stem if source else "tune"))
    given = settings_tables(data, fail)
    settings = build_settings(run["strategy"], given, fail)
    if settings.batch.size != 1:
        fail(f"[settings.batch] size = {settings.batch.size} is for the compiled loop (run, compare); tune "
             "evaluates in parallel with --workers N or [workers] n (asynchronous, pending points)")
    workers = WORKERS.validate(data.get("workers", {}), fail)
    if workers["executor"] == "dask" and not workers["scheduler"]:
        fail("[workers] executor = 'dask' needs scheduler = 'tcp://host:port' (the Dask scheduler's address)")
    if workers["pending"] == "gibbon" and not rules.rule_for(settings).uses_gstar:
        fail(f"[workers] pending = 'gibbon' needs a max-value strategy (one that samples g*); {run['strategy']!r} "
             "does not: use pending = 'believer'")
    return TuneConfig(
        parameters=tuple(params), direction=_DIRECTIONS[obj["direction"]], objective=func, time_limit_s=limit,
        isolate=bool(obj["isolate"]) or limit is not None, retries=obj["retries"],
        max_consecutive_failures=obj["max_consecutive_failures"], failures=obj["failures"],
        deterministic=bool(obj["deterministic"]),
        budget_cost=budget["cost"],
        budget_wall_clock_s=budget["wall_clock_s"], budget_evaluations=budget["evaluations"],
        strategy=run["strategy"], seed=run["seed"], out=out, workers=workers["n"], executor=workers["executor"],
        scheduler=workers["scheduler"], connect_timeout_s=workers["connect_timeout_s"], pending=workers["pending"],
        settings_table=types.MappingProxyType(given), source=source,
        base_dir=str(Path(base_dir).resolve()) if base_dir is not None else str(Path.cwd()), **fields)


def _parameter(name: str, spec: Mapping, fail) -> Parameter:
    """One ``[parameters]`` entry, checked (``fail`` names the parameter)."""
    p = PARAMETER.validate(spec, fail, f"[parameters] {name}:")
    kind = p["type"] or ("categorical" if p["choices"] is not None else "float")
    if kind == "categorical":
        choices = p["choices"]
        if choices is None:
            fail(f"[parameters] {name}: a categorical parameter needs choices = [...]")
        extra = [k for k in ("low", "high", "log") if k in spec]
        if extra:
            fail(f"[parameters] {name}: a categorical parameter has choices, not {', '.join(extra)}")
        if len(choices) < 2 or not all(isinstance(c, (str, int, float, bool)) for c in choices):
            fail(f"[parameters] {name}: choices must be at least 2 strings, numbers or booleans, got {choices!r}")
        if len({(type(c), c) for c in choices}) != len(choices):
            fail(f"[parameters] {name}: choices must be distinct, got {choices!r}")
        if len(choices) > MAX_CHOICES:
            fail(f"[parameters] {name}: at most {MAX_CHOICES} choices (one model coordinate each), got {len(choices)}")
        return Parameter(name, kind="categorical", choices=tuple(choices))
    if p["choices"] is not None:
        fail(f"[parameters] {name}: choices are for type = 'categorical', not {kind!r}")
    for key in ("low", "high"):
        if p[key] is None:
            fail(f"[parameters] {name} {key} is required")
    if not p["low"] < p["high"]:
        fail(f"[parameters] {name}: need finite low < high, got low = {p['low']!r}, high = {p['high']!r}")
    if p["log"] and p["low"] <= 0:
        fail(f"[parameters] {name}: a log-scale parameter needs low > 0, got {p['low']!r}")
    if kind == "int":
        if p["low"] != int(p["low"]) or p["high"] != int(p["high"]):
            fail(f"[parameters] {name}: an integer parameter needs integer low and high, got {p['low']!r}, "
                 f"{p['high']!r}")
        if abs(p["low"]) > 2 ** 53 or abs(p["high"]) > 2 ** 53:
            fail(f"[parameters] {name}: integer bounds must be within +-2**53 (exact as floats)")
    return Parameter(name, p["low"], p["high"], p["log"], kind)


def _fidelity_fields(table: Mapping, fail) -> dict:
    """The :class:`TuneConfig` fields of a ``[fidelity]`` table (checks between its keys)."""
    fid = FIDELITY.validate(table, fail)
    kind = fid["kind"]
    fields: dict[str, Any] = {"fidelity_kind": kind, "rank": fid["rank"], "learn_cost": fid["learn_cost"]}
    if kind == "discrete":
        for key in ("bounds", "target", "cost"):
            if key in table:
                fail(f"[fidelity] {key} is for a continuous fidelity; a discrete one has costs (and values)")
        costs = fid["costs"]
        if costs is None:
            fail("[fidelity] costs is required for a discrete fidelity (one per fidelity, the target first)")
        if not all(math.isfinite(c) and c > 0 for c in costs):
            fail(f"[fidelity] costs must be a non-empty array of finite numbers > 0, got {costs!r}")
        fields["costs"] = tuple(float(c) for c in costs)
        values = fid["values"]
        if values is not None:
            if len(values) != len(costs):
                fail(f"[fidelity] values must have one entry per cost ({len(costs)}), got {len(values)}")
            if not all(type_ok(v, float) or isinstance(v, str) for v in values):
                fail(f"[fidelity] values must be numbers or strings, got {values!r}")
            fields["values"] = tuple(values)
    else:
        for key in ("costs", "values", "rank"):
            if key in table:
                fail(f"[fidelity] {key} is for discrete fidelities; a continuous one has bounds, target and cost")
        bounds = fid["bounds"]
        if bounds is None:
            fail("[fidelity] bounds = [low, high] is required for a continuous fidelity")
        if len(bounds) != 2 or not all(math.isfinite(b) for b in bounds) or not bounds[0] < bounds[1]:
            fail(f"[fidelity] bounds must be [low, high] with finite low < high, got {bounds!r}")
        lo, hi = float(bounds[0]), float(bounds[1])
        target = hi if fid["target"] is None else fid["target"]
        if not (lo <= target <= hi):
            fail(f"[fidelity] target must lie in bounds [{lo:g}, {hi:g}], got {target!r}")
        cost = COST.validate(fid["cost"] or {}, fail, "[fidelity] cost:")
        if not cost["offset"] + cost["scale"] * lo ** cost["power"] > 0:
            fail(f"[fidelity] cost must be > 0 over the whole interval, but cost({lo:g}) = 0: "
                 "set cost.offset > 0 or a lower bound > 0")
        fields.update(fidelity_bounds=(lo, hi), target=float(target), cost_offset=cost["offset"],
                      cost_scale=cost["scale"], cost_power=cost["power"], rank=2)
    discrete = kind == "discrete"
    allowed = models.kinds_for(discrete)
    model = fid["model"] or models.default_kind(discrete)
    if model not in allowed:
        what = "discrete fidelities" if discrete else "a continuous fidelity"
        fail(f"[fidelity] model: unknown model {model!r} for {what}; allowed: {', '.join(allowed)}")
    fields["model"] = model
    floor = fid.get("target_floor")
    if floor is not None:
        has_floor = "target_floor" in models.model_options(model)
        if floor and not has_floor:
            fail(f"[fidelity] target_floor: applies to the models with a target floor "
                 f"({', '.join(models.floor_kinds())}), not {model!r}")
        fields["target_floor"] = floor if has_floor else None
    return fields


def make_tune_task(cfg: TuneConfig):
    """The :class:`mumbo_jax.bo.settings.Task` of a configuration: the model over the internal
    box (log10 for log-scale parameters), the target (fidelity 0, or ``target``) and the
    configured costs."""
    import jax
    import jax.numpy as jnp

    from mumbo_jax.bo import optimize
    from mumbo_jax.bo.settings import make_task
    from mumbo_jax.gp import posterior

    bounds = cfg.internal_bounds
    noise = 0.0 if cfg.deterministic else None  # fixed at the floor, or learned
    if cfg.discrete:
        spec = models.build_model(cfg.model, bounds, n_fidelities=len(cfg.costs), rank=cfg.rank,
                                  target_floor=cfg.target_floor, noise=noise)
        return make_task(spec, posterior.target_fidelity(0), optimize.discrete_fidelities(cfg.costs))
    spec = models.build_model(cfg.model, bounds, fidelity_bounds=cfg.fidelity_bounds, noise=noise)
    cost = jax.tree_util.Partial(power_cost, jnp.asarray(cfg.cost_offset), jnp.asarray(cfg.cost_scale),
                                 jnp.asarray(cfg.cost_power))
    return make_task(spec, posterior.target_value(cfg.target),
                     optimize.continuous_fidelity(cfg.fidelity_bounds, cost))


def power_cost(offset, scale, power, z):
    """``offset + scale z^power`` (z [M] -> [M])."""
    return offset + scale * z ** power
