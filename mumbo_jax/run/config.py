"""Benchmark configurations (``mumbo-jax run`` and ``mumbo-jax compare``): strict TOML
files described once by the schema below (:mod:`mumbo_jax.run.schema`).

A run configuration::

    [run]
    problem = "forrester"      # required
    budget = 200               # required: cost spent AFTER the initial design
    strategy = "mumbo"
    seeds = 10
    [settings.gstar]           # optional: any record of mumbo_jax.bo.settings.BOSettings
    samples = 10

``mumbo-jax config-help run`` (and ``compare``) prints every key with its type, default,
range and meaning, from :data:`RUN_SECTIONS` / :data:`COMPARE_SECTIONS` (the ``[settings]``
sections are generated from the settings records: :mod:`mumbo_jax.run.settings_config`). Everything is
checked before any JAX compilation; every problem raises :class:`ConfigError` (a
``ValueError``) whose one-line message starts with the file name and names the key.
A relative ``out`` is relative to the working directory.

The configs of the paper's problems ship inside the package (:func:`find_config`):
``mumbo-jax run forrester`` runs ``configs/forrester.toml`` of an installed wheel.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import warnings
from pathlib import Path
from typing import Any, Mapping

from mumbo_jax.benchmarks import problems
from mumbo_jax.bo import batch, incumbent, rules
from mumbo_jax.bo.settings import BOSettings
from mumbo_jax.gp import models
from mumbo_jax.run.schema import ConfigError, Field, Section, check_sections, did_you_mean
from mumbo_jax.run.settings_config import (OLD_SECTION, SETTINGS, SETTINGS_SECTIONS, build_settings, merge,
                                           read_settings)

__all__ = ["ConfigError", "RunConfig", "load_config", "parse_config", "settings_from_config",
           "CompareConfig", "load_compare_config",
           "parse_compare_config", "STRATEGY_PRESETS", "DEPRECATED_LABELS", "RUN_SECTIONS", "COMPARE_SECTIONS",
           "SETTINGS_SECTIONS", "read_toml", "check_command", "check_settings", "settings_tables", "strategy_misfit",
           "find_config",
           "packaged_configs",
           "BUDGET_RULE"]

BUDGET_RULE = ("the cost spent AFTER the initial design (2 d random points at every fidelity; its cost is "
               "reported separately)")
CONFIG_DIR = Path(__file__).resolve().parent / "configs"  # shipped as package data


# ---------------------------------------------------------------------------- schema


# What a machine can do: caps on the numeric keys, so that a typo (1e9 candidates, 10^20
# seeds) is a one-line error before any work instead of an overflow or an allocation
# of tens of GB deep inside JAX
MAX_SEEDS = 10_000
MAX_BUDGET = 1e12
MAX_EVALS = 10_000
MAX_RANK = 64
_PROBLEM = Field("problem", str, "The benchmark (mumbo-jax list shows them).", required=True,
                 choices=lambda: tuple(problems.PROBLEMS),
                 hint="a problem of your own: build it with mumbo_jax.benchmarks.problems.discrete_problem and "
                      "register it through an entry point of the group 'mumbo_jax.problems'; see the how-to "
                      "'Benchmark your own problem over seeds'")
_BUDGET = Field("budget", float, "Budget per seed: " + BUDGET_RULE + ".", required=True, low=0,
                low_open=True, high=MAX_BUDGET)
_MAX_EVALS = Field("max_evals", int, "Cap on BO evaluations per seed (initial design not counted).", default=200,
                   low=1, high=MAX_EVALS)
_MODEL = Field("model", str, "GP model, one of mumbo_jax.gp.models.MODELS for the problem's kind of fidelity: icm, "
               "ar1, icm_disc (ICM plus a target-only discrepancy) or task_basis for discrete fidelities, product, "
               "fabolas or linear_basis for a continuous one, or a model registered with "
               "mumbo_jax.register_model; default icm / product.",
               choices=lambda: tuple(models.MODELS))
_RANK = Field("rank", int, "Rank of the ICM coregionalisation matrix.", default=2, low=1, high=MAX_RANK)
_TARGET_FLOOR = Field("target_floor", float, "ICM models: the target's own variance is at least this share of "
                      "the variance it shares with the other fidelities (e.g. 0.01 where a cheap fidelity may "
                      "mislead); default 0 for icm (the paper's plain ICM), 0.05 for icm_disc.", low=0)
_OUT = Field("out", str, "Output folder; default runs/<config file stem>.")

RUN = Section("run", "One strategy on one benchmark over seeds 0 .. seeds-1.", (
    _PROBLEM, _BUDGET,
    Field("strategy", str, "The decision rule (mumbo-jax list shows which fidelity kinds each supports).",
          default="robust", choices=rules.STRATEGIES),
    Field("seeds", int, "Runs with seeds 0 .. seeds-1 (a seed fixes the initial design).", default=1, low=1,
          high=MAX_SEEDS),
    _MAX_EVALS, _MODEL, _RANK, _TARGET_FLOOR, _OUT), required=True)

RUN_SECTIONS = (RUN,) + SETTINGS_SECTIONS


# ---------------------------------------------------------------------------- shared checks


def read_toml(path) -> dict:
    """The parsed TOML file at ``path``; :class:`ConfigError` (naming the file) when it
    is missing, a folder, or not valid UTF-8 TOML."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a config file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None


def _failer(source):
    where = f"{source}: " if source else ""

    def fail(msg):
        raise ConfigError(where + msg)

    return fail


def strategy_misfit(strategy: str, discrete: bool) -> str | None:
    """Why ``strategy`` cannot run on this kind of fidelity (``None``: it can), from its
    record in :data:`mumbo_jax.bo.rules.RULES`."""
    kinds = rules.RULES[strategy].kinds
    if ("discrete" if discrete else "continuous") in kinds:
        return None
    return "needs discrete fidelities" if kinds == ("discrete",) else "needs a continuous fidelity"


def settings_tables(data: Mapping, fail, allow: tuple = ()) -> dict:
    """The keys given in the ``[settings]`` table of a parsed file, checked:
    ``{record: {field: value}}``. A deprecated ``[acquisition]`` table (the flat keys of
    before the settings were grouped) is read first, with a DeprecationWarning."""
    given = {}
    if OLD_SECTION in data:
        old = data[OLD_SECTION]
        if not isinstance(old, dict):
            fail(f"{OLD_SECTION!r} must be a section [{OLD_SECTION}], got {old!r}")
        warnings.warn(f"[{OLD_SECTION}] is deprecated; its keys go in [{SETTINGS}], one table per record (e.g. "
                      f"[{SETTINGS}.fit] restarts = 2; mumbo-jax config-help lists them)", DeprecationWarning,
                      stacklevel=3)
        given = check_settings(old, fail, f"[{OLD_SECTION}]")
    return merge(given, check_settings(data.get(SETTINGS, {}), fail))


def check_settings(table: Mapping, fail, where: str = f"[{SETTINGS}]") -> dict:
    """Validate a ``[settings]``-like table against :data:`SETTINGS_SECTIONS`: the keys
    given, ``{record: {field: value}}``; ``fail(message)`` raises."""
    if "strategy" in table:
        fail(f"strategy belongs in [run] (or a [strategies.<label>] table), not {where}")
    return read_settings(table, fail, where)


def _without_old(data: Mapping) -> dict:
    return {k: v for k, v in data.items() if k != OLD_SECTION}


# the sections that say which command a file is for
TUNE_MARKS = ("objective", "parameters")


def check_command(data: Mapping, command: str, fail) -> None:
    """A file written for another command (a tuning config given to ``run``, a
    comparison given to ``run``, a run config given to ``compare``) fails naming the
    command that reads it, before its keys are checked."""
    if any(k in data for k in TUNE_MARKS):
        kind, other = "a tuning configuration ([objective], [parameters])", "tune"
    elif command == "run" and "compare" in data and "run" not in data:
        kind, other = "a comparison configuration ([compare])", "compare"
    elif command == "compare" and "run" in data and "compare" not in data:
        kind, other = "a run configuration ([run])", "run"
    else:
        return
    fail(f"this is {kind}, not one for `mumbo-jax {command}`: run it with `mumbo-jax {other} FILE`")


def _check_benchmark(values: dict, where: str, source, fail) -> problems.Problem:
    """Checks between the keys shared by [run] and [compare]: the model fits the
    problem's fidelities; ``out`` defaults to ``runs/<config stem>``."""
    problem = problems.get_problem(values["problem"])
    model = values["model"]
    if model is not None:
        allowed = models.kinds_for(problem.is_discrete)
        if model not in allowed:
            kind = "discrete" if problem.is_discrete else "continuous"
            fail(f"{where} model: unknown model {model!r} for {problem.name!r} ({kind} fidelities); "
                 f"allowed: {', '.join(allowed)}")
    floor = values.get("target_floor")
    if floor:
        kind = model or models.default_kind(problem.is_discrete)
        if "target_floor" not in models.model_options(kind):
            fail(f"{where} target_floor: applies to the models with a target floor "
                 f"({', '.join(models.floor_kinds())}), not {kind!r}")
    if values["out"] is None:
        values["out"] = str(Path("runs") / (Path(source).stem if source else where.strip("[]")))
    return problem


# ---------------------------------------------------------------------------- [run]


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """A validated run configuration (:data:`RUN_SECTIONS`).

    Attributes:
        problem, strategy, budget, seeds, max_evals, model, rank, target_floor, out: the ``[run]``
            keys (``out`` resolved to its default ``runs/<config stem>``; ``model``
            ``None`` means the problem's default model).
        settings_table: the ``[settings]`` keys that were given, ``{record: {field:
            value}}`` (read-only mapping).
        source: the file it was read from (``None`` when parsed from a dict).
    """

    problem: str
    budget: float
    strategy: str = "robust"
    seeds: int = 1
    max_evals: int = 200
    model: str | None = None
    rank: int = 2
    target_floor: float | None = None
    out: str = "runs/run"
    settings_table: Mapping[str, Any] = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
    source: str | None = None

    @property
    def seed_list(self) -> list[int]:
        """The seeds of the run: ``0 .. seeds - 1``."""
        return list(range(self.seeds))

    def replace(self, **changes) -> "RunConfig":
        """A copy with some ``[run]`` keys changed (command-line overrides; ``None``
        keeps a key), validated like the file."""
        data = self.to_dict()
        data["run"].update({k: v for k, v in changes.items() if v is not None})
        return parse_config(data, source=self.source)

    def to_dict(self) -> dict:
        """The configuration as TOML-like plain data (omitted optional keys absent)."""
        run = {k: getattr(self, k) for k in RUN.keys() if getattr(self, k) is not None}
        return {"run": run, SETTINGS: {k: dict(v) for k, v in self.settings_table.items()}}


def settings_from_config(cfg: RunConfig) -> BOSettings:
    """The :class:`BOSettings` of a configuration (``[settings]`` over the defaults)."""
    return BOSettings(strategy=cfg.strategy, **{k: dict(v) for k, v in cfg.settings_table.items()})


def load_config(path) -> RunConfig:
    """Read and validate a TOML run configuration (:class:`ConfigError` naming the file
    and the key on any problem)."""
    return parse_config(read_toml(path), source=str(path))


def parse_config(data: Mapping, source: str | None = None) -> RunConfig:
    """Validate already-parsed TOML data (``{"run": {...}, "settings": {...}}``).

    ``source`` names the file in error messages and gives the default ``out``."""
    fail = _failer(source)
    check_command(data, "run", fail)
    check_sections(_without_old(data), (RUN,), fail, extra=(SETTINGS,))
    values = RUN.validate(data["run"], fail)
    problem = _check_benchmark(values, "[run]", source, fail)
    why = strategy_misfit(values["strategy"], problem.is_discrete)
    if why:
        fail(f"[run] strategy: {values['strategy']!r} {why}; {problem.name!r} has "
             f"{'discrete ones' if problem.is_discrete else 'a continuous one'} (mumbo-jax list shows what fits)")
    given = settings_tables(data, fail)
    build_settings(values["strategy"], given, fail)
    return RunConfig(**values, settings_table=types.MappingProxyType(given), source=source)


# ---------------------------------------------------------------------------- [compare]

# Named strategies a comparison config may list without a table of its own: every
# registered rule under its own name (its defaults), plus the paper's line-up with knob
# values. A [strategies.<label>] table overrides (or defines) a label.
_KNOB_PRESETS: dict[str, dict] = {
    "mumbo-1": {"strategy": "mumbo", "gstar": {"samples": 1}},
    "mumbo-10": {"strategy": "mumbo", "gstar": {"samples": 10}},
    "mumbo-50": {"strategy": "mumbo", "gstar": {"samples": 50}},
    "mumbo-1-exact": {"strategy": "mumbo", "gstar": {"samples": 1, "method": "exact"}},
    "mumbo-10-exact": {"strategy": "mumbo", "gstar": {"samples": 10, "method": "exact"}},
    "mumbo-50-exact": {"strategy": "mumbo", "gstar": {"samples": 50, "method": "exact"}},
    "mes": {"strategy": "mes", "gstar": {"samples": 10}},
    "mtbo-50": {"strategy": "mtbo", "options": {"mtbo": {"samples": 50}}},
    "mtbo-200": {"strategy": "mtbo", "options": {"mtbo": {"samples": 200}}},
}
# older spellings of two rules' names, accepted as labels with a DeprecationWarning
DEPRECATED_LABELS = {"mt-ei": "mt_ei", "mf-gp-ucb": "mf_gp_ucb"}


class _Presets(Mapping):
    """label -> preset, rebuilt from :data:`mumbo_jax.bo.rules.RULES` at every use (a
    rule registered at run time is a preset at once)."""

    def _table(self) -> dict:
        table = {k: v for k, v in _KNOB_PRESETS.items() if k.startswith("mumbo-")}
        table.update((name, {"strategy": name}) for name in rules.STRATEGIES)
        table.update(_KNOB_PRESETS)
        table.update((old, {"strategy": new}) for old, new in DEPRECATED_LABELS.items())
        return table

    def __getitem__(self, label):
        return self._table()[label]

    def __iter__(self):
        return iter(self._table())

    def __len__(self):
        return len(self._table())


STRATEGY_PRESETS: Mapping[str, dict] = _Presets()

COMPARE = Section("compare", "Several strategies on one benchmark over the same seeds (the same initial designs).", (
    _PROBLEM, _BUDGET,
    Field("strategies", list, "Labels, run in order: presets (mumbo-jax list) or labels defined by "
          "[strategies.<label>] tables.", required=True, items=str, nonempty=True),
    Field("seeds", int, "Seeds 0 .. seeds-1.", default=20, low=1, high=MAX_SEEDS),
    _MAX_EVALS, _MODEL, _RANK, _TARGET_FLOOR, _OUT), required=True)
STRATEGY_TABLE = Section("strategies.<label>", "Defines or overrides a label: strategy (required unless the label "
                         "is a preset) plus any [settings] record as a sub-table ([strategies.<label>.fit] "
                         "restarts = 4, or fit.restarts = 4 in the label's table) and rules' knobs "
                         "([strategies.<label>.options.ucb] beta = 0.5). A label's settings are the "
                         "defaults, then [settings], then the preset, then its table, field by field.", (
    Field("strategy", str, "The decision rule.", choices=rules.STRATEGIES),))
COMPARE_SECTIONS = (COMPARE,) + SETTINGS_SECTIONS + (STRATEGY_TABLE,)


@dataclasses.dataclass(frozen=True)
class CompareConfig:
    """A validated comparison configuration (:data:`COMPARE_SECTIONS`).

    Attributes:
        problem, budget, seeds, max_evals, model, rank, target_floor, out: the ``[compare]`` keys.
        strategies: the labels, in order.
        settings: label -> :class:`BOSettings`.
        source: the file it was read from.
    """

    problem: str
    budget: float
    strategies: tuple
    settings: Mapping[str, BOSettings]
    seeds: int = 20
    max_evals: int = 200
    model: str | None = None
    rank: int = 2
    target_floor: float | None = None
    out: str = "runs/compare"
    source: str | None = None
    data: Mapping = dataclasses.field(default_factory=dict, repr=False)

    @property
    def seed_list(self) -> list[int]:
        return list(range(self.seeds))

    def replace(self, **changes) -> "CompareConfig":
        """A copy with some ``[compare]`` keys changed (command-line overrides), validated."""
        data = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in self.data.items()}
        data["compare"] = dict(data["compare"])
        data["compare"].update({k: v for k, v in changes.items() if v is not None})
        return parse_compare_config(data, source=self.source)


def load_compare_config(path) -> CompareConfig:
    """Read and validate a comparison configuration (:class:`ConfigError` as
    :func:`load_config`)."""
    return parse_compare_config(read_toml(path), source=str(path))


def parse_compare_config(data: Mapping, source: str | None = None) -> CompareConfig:
    """Validate parsed TOML data of a comparison configuration."""
    fail = _failer(source)
    check_command(data, "compare", fail)
    check_sections(_without_old(data), (COMPARE,), fail, extra=(SETTINGS, "strategies"))
    values = COMPARE.validate(data["compare"], fail)
    problem = _check_benchmark(values, "[compare]", source, fail)
    labels = values["strategies"]
    if len(set(labels)) != len(labels):
        fail(f"[compare] strategies: duplicate labels in {labels}")
    tables = data.get("strategies", {})
    for label in list(labels) + list(tables):
        if not isinstance(label, str) or not label.strip() or not label.isprintable():
            fail(f"strategy labels must be printable, non-empty names, got {label!r}")
    for label, table in tables.items():
        if not isinstance(table, dict):
            fail(f"[strategies] {label!r} must be a table [strategies.{label}], got {type(table).__name__}")
        if label not in labels:
            fail(f"[strategies.{label}] is not listed in [compare] strategies")
    shared = settings_tables(data, fail)
    build_settings("mumbo", shared, fail)  # the shared table on its own
    settings = {}
    for label in labels:
        if label in DEPRECATED_LABELS:
            warnings.warn(f"compare label {label!r} is deprecated; use the rule's own name "
                          f"{DEPRECATED_LABELS[label]!r}", DeprecationWarning, stacklevel=2)
        if label not in STRATEGY_PRESETS and label not in tables:
            fail(f"[compare] strategies: {label!r} is neither a preset{did_you_mean(label, STRATEGY_PRESETS)} "
                 f"({', '.join(STRATEGY_PRESETS)}) nor defined by a [strategies.{label}] table")
        where = f"[strategies.{label}]"
        table = dict(tables.get(label, {}))
        strategy = table.pop("strategy", STRATEGY_PRESETS.get(label, {}).get("strategy"))
        if strategy is None:
            fail(f"{where} needs a strategy (one of {', '.join(rules.STRATEGIES)})")
        strategy = STRATEGY_TABLE.field("strategy").check(strategy, where, fail)
        why = strategy_misfit(strategy, problem.is_discrete)
        if why:
            fail(f"[compare] strategies: {label!r} ({strategy}) {why}; {problem.name!r} has "
                 f"{'discrete ones' if problem.is_discrete else 'a continuous one'}")
        own = read_settings(table, fail, where)  # the label's own keys, named by their table
        preset = {k: v for k, v in STRATEGY_PRESETS.get(label, {}).items() if k != "strategy"}
        settings[label] = build_settings(strategy, merge(shared, preset, own), fail, where)
    return CompareConfig(problem=values["problem"], budget=values["budget"], strategies=tuple(labels),
                         settings=types.MappingProxyType(settings), seeds=values["seeds"],
                         max_evals=values["max_evals"], model=values["model"], rank=values["rank"],
                         target_floor=values["target_floor"], out=values["out"],
                         source=source, data=data)


# ---------------------------------------------------------------------------- shipped configs


def packaged_configs() -> dict[str, Path]:
    """The configs shipped with the package: name (file stem) -> path."""
    return {p.stem: p for p in sorted(CONFIG_DIR.glob("*.toml"))}


def find_config(name_or_path) -> Path:
    """A config file: an existing path, else a shipped config by name (``forrester``,
    ``compare_currin``, ``tune_example``; ``.toml`` optional).

    Raises:
        ConfigError: neither exists (lists the shipped names).
    """
    path = Path(name_or_path)
    if path.exists():
        return path
    shipped = packaged_configs()
    stem = path.name[:-5] if path.name.endswith(".toml") else path.name
    if stem in shipped and path.parent in (Path("."), Path("configs")):
        return shipped[stem]
    raise ConfigError(f"{name_or_path}: config file not found, and not the name of a shipped config"
                      f"{did_you_mean(stem, shipped)} ({', '.join(shipped)})")
