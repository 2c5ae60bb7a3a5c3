"""Run configurations: strict TOML files for benchmark runs.

A configuration has two sections (Python 3.11's :mod:`tomllib` reads it)::

    [run]
    problem = "forrester"      # required: a name in mumbo_jax.benchmarks.problems.PROBLEMS
    budget = 200.0             # required: cost spent AFTER the initial design (> 0)
    strategy = "mumbo"         # a name in mumbo_jax.bo.strategies.STRATEGIES (default "mumbo")
    seeds = 10                 # runs with seeds 0 .. seeds-1 (>= 1)    (default 1)
    max_evals = 150            # cap on BO evaluations per seed (>= 1)  (default 200)
    model = "icm"              # optional: "icm" | "ar1" (discrete), "product" | "fabolas"
    rank = 2                   # optional: ICM rank (>= 1)              (default 2)
    out = "runs/forrester"     # optional: output folder (default runs/<config stem>)

    [acquisition]              # optional: any field of mumbo_jax.bo.loop.BOSettings
    n_gstar = 10               # but strategy (which lives in [run])
    n_candidates = 2000
    ...

Everything is checked before any JAX compilation: unknown sections and keys, value
types (``true`` is not an integer, ``2.5`` is not an integer, ``"abc"`` is not a
number), problem / strategy / model / g* method names, and value ranges. Every problem
raises :class:`ConfigError` (a ``ValueError``) whose message starts with the file name
and names the offending key. A relative ``out`` is relative to the working directory.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, Mapping

from mumbo_jax.benchmarks import problems
from mumbo_jax.bo.loop import STRATEGIES, BOSettings

__all__ = ["ConfigError", "RunConfig", "load_config", "parse_config", "settings_from_config",
           "DISCRETE_MODELS", "CONTINUOUS_MODELS", "CompareConfig", "load_compare_config",
           "parse_compare_config", "STRATEGY_PRESETS"]

DISCRETE_MODELS = ("icm", "ar1")
CONTINUOUS_MODELS = ("product", "fabolas")


class ConfigError(ValueError):
    """An invalid configuration (bad TOML, unknown key, wrong type or value)."""


# ---------------------------------------------------------------------------- schema

# [run]: key -> (type, required, default). ``float`` accepts TOML integers too.
_RUN_KEYS: dict[str, tuple[type, bool, Any]] = {
    "problem": (str, True, None),
    "budget": (float, True, None),
    "strategy": (str, False, "mumbo"),
    "seeds": (int, False, 1),
    "max_evals": (int, False, 200),
    "model": (str, False, None),
    "rank": (int, False, 2),
    "out": (str, False, None),
}


def _acquisition_keys() -> dict[str, tuple[type | None, bool]]:
    """``[acquisition]`` keys from :class:`BOSettings`' fields: key -> (type, optional).

    ``strategy`` is excluded (it is a ``[run]`` key). A type that is not a plain
    ``int``/``float``/``str``/``bool`` (or one of them ``| None``) maps to ``None``: any
    TOML value, left for ``BOSettings`` to check."""
    hints = typing.get_type_hints(BOSettings)
    out = {}
    for field in dataclasses.fields(BOSettings):
        if field.name == "strategy":
            continue
        hint = hints.get(field.name)
        optional = False
        args = typing.get_args(hint)
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
            rest = [a for a in args if a is not type(None)]
            optional = len(rest) < len(args)
            hint = rest[0] if len(rest) == 1 else None
        out[field.name] = (hint if hint in (int, float, str, bool) else None, optional)
    return out


_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "a boolean", list: "an array",
               dict: "a table"}


def _type_ok(value, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):  # TOML true/false is never a number
        return False
    if kind is float:
        return isinstance(value, (int, float))
    return isinstance(value, kind)


def check_table(table: Mapping, schema: Mapping, where: str, fail) -> dict:
    """Keys, types and required keys of one TOML table against ``schema``
    (``key -> (type, required, default)``); returns ``{key: value or default}`` with
    numbers of ``float`` keys as floats. ``fail(message)`` raises."""
    for key, value in table.items():
        if key not in schema:
            fail(f"unknown key {key!r} in {where}; allowed keys: {', '.join(schema)}")
        kind = schema[key][0]
        if not _type_ok(value, kind):
            fail(f"{where} {key} must be {_TYPE_NAMES[kind]}, got {_toml_type(value)} {value!r}")
    for key, (_, required, _) in schema.items():
        if required and key not in table:
            fail(f"{where} {key} is required")
    out = {k: table.get(k, default) for k, (_, _, default) in schema.items()}
    return {k: float(v) if schema[k][0] is float and v is not None else v for k, v in out.items()}


def _toml_type(value) -> str:
    names = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}
    return names.get(type(value), type(value).__name__)


# ---------------------------------------------------------------------------- the config


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """A validated run configuration (see the module docstring for the schema).

    Attributes:
        problem, strategy, budget, seeds, max_evals, model, rank, out: the ``[run]``
            keys (``out`` resolved to its default ``runs/<config stem>``; ``model``
            ``None`` means the problem's default model).
        acquisition: the ``[acquisition]`` keys that were given (read-only mapping);
            the other :class:`BOSettings` fields keep their defaults.
        source: the file it was read from (``None`` when parsed from a dict).
    """

    problem: str
    budget: float
    strategy: str = "mumbo"
    seeds: int = 1
    max_evals: int = 200
    model: str | None = None
    rank: int = 2
    out: str = "runs/run"
    acquisition: Mapping[str, Any] = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
    source: str | None = None

    @property
    def seed_list(self) -> list[int]:
        """The seeds of the run: ``0 .. seeds - 1``."""
        return list(range(self.seeds))

    def replace(self, **changes) -> "RunConfig":
        """A copy with some ``[run]`` keys changed (e.g. command-line overrides),
        validated like the file."""
        data = self.to_dict()
        data["run"].update({k: v for k, v in changes.items() if v is not None})
        return parse_config(data, source=self.source)

    def to_dict(self) -> dict:
        """The configuration as TOML-like plain data ``{"run": {...}, "acquisition": {...}}``
        (omitted optional keys absent)."""
        run = {k: getattr(self, k) for k in _RUN_KEYS if getattr(self, k) is not None}
        return {"run": run, "acquisition": dict(self.acquisition)}


def settings_from_config(cfg: RunConfig) -> BOSettings:
    """The :class:`BOSettings` of a configuration (``[acquisition]`` over the defaults)."""
    return BOSettings(strategy=cfg.strategy, **dict(cfg.acquisition))


def load_config(path) -> RunConfig:
    """Read and validate a TOML run configuration.

    Raises:
        ConfigError: the file is missing or not valid TOML, or any key, type or value
            is wrong; the message starts with the file name and names the key.
    """
    return parse_config(read_toml(path), source=str(path))


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


def _check_benchmark(values: dict, where: str, source, fail) -> problems.Problem:
    """The values shared by [run] and [compare]: problem, budget (made a float), seeds,
    max_evals, rank, model (for the problem's kind of fidelity) and out (defaulted to
    ``runs/<config stem>``)."""
    if values["problem"] not in problems.PROBLEMS:
        fail(f"{where} problem: unknown problem {values['problem']!r}; allowed: {', '.join(problems.PROBLEMS)}")
    problem = problems.get_problem(values["problem"])
    budget = float(values["budget"])
    if not (math.isfinite(budget) and budget > 0):
        fail(f"{where} budget must be a finite number > 0 (cost spent after the initial design), got {budget!r}")
    values["budget"] = budget
    for key in ("seeds", "max_evals", "rank"):
        if values[key] < 1:
            fail(f"{where} {key} must be >= 1, got {values[key]!r}")
    model = values["model"]
    if model is not None:
        allowed = DISCRETE_MODELS if problem.is_discrete else CONTINUOUS_MODELS
        if model not in allowed:
            kind = "discrete" if problem.is_discrete else "continuous"
            fail(f"{where} model: unknown model {model!r} for {problem.name!r} ({kind} fidelities); "
                 f"allowed: {', '.join(allowed)}")
    if values["out"] is None:
        values["out"] = str(Path("runs") / (Path(source).stem if source else where.strip("[]")))
    elif not values["out"].strip():
        fail(f"{where} out must be a non-empty path")
    return problem


def parse_config(data: Mapping, source: str | None = None) -> RunConfig:
    """Validate already-parsed TOML data (``{"run": {...}, "acquisition": {...}}``).

    ``source`` names the file in error messages and gives the default ``out``
    (``runs/<stem>``; ``runs/run`` without a source)."""
    where = f"{source}: " if source else ""

    def fail(msg):
        raise ConfigError(where + msg)

    sections = {"run": _RUN_KEYS, "acquisition": _acquisition_keys()}
    for name, value in data.items():
        if name not in sections:
            fail(f"unknown section or key {name!r}; allowed sections: "
                 + ", ".join(f"[{s}]" for s in sections))
        if not isinstance(value, dict):
            fail(f"{name!r} must be a section [{name}], got {_toml_type(value)} {value!r}")
    if "run" not in data:
        fail("missing section [run] (it needs at least problem and budget)")

    # -- [run]: keys and types
    values = check_table(data["run"], _RUN_KEYS, "[run]", fail)

    # -- [run]: values
    _check_benchmark(values, "[run]", source, fail)
    if values["strategy"] not in STRATEGIES:
        fail(f"[run] strategy: unknown strategy {values['strategy']!r}; allowed: {', '.join(STRATEGIES)}")

    acq, _ = check_acquisition(data.get("acquisition", {}), values["strategy"], fail)
    return RunConfig(**values, acquisition=types.MappingProxyType(acq), source=source)


def check_acquisition(table: Mapping, strategy: str, fail) -> tuple[dict, BOSettings]:
    """Validate an ``[acquisition]`` table (any :class:`BOSettings` field but
    ``strategy``): ``(cleaned table, settings)``; ``fail(message)`` raises on a problem.
    Shared by the benchmark runner and :mod:`mumbo_jax.run.tuning`."""
    acq_keys = _acquisition_keys()
    acq = dict(table)
    for key, value in acq.items():
        if key == "strategy":
            fail("strategy belongs in [run], not [acquisition]")
        if key not in acq_keys:
            fail(f"unknown key {key!r} in [acquisition]; allowed keys: {', '.join(acq_keys)}")
        kind, _ = acq_keys[key]
        if kind is not None and not _type_ok(value, kind):
            fail(f"[acquisition] {key} must be {_TYPE_NAMES[kind]}, got {_toml_type(value)} {value!r}")
        if kind is float:
            acq[key] = float(value)
        if kind in (int, float) and not (math.isfinite(value) and value > 0):
            fail(f"[acquisition] {key} must be > 0, got {value!r}")
    try:
        settings = BOSettings(strategy=strategy, **acq)
    except (TypeError, ValueError) as e:  # BOSettings' own checks
        fail(f"[acquisition] {e}")
    if settings.n_starts > settings.n_candidates:
        fail(f"[acquisition] n_starts ({settings.n_starts}) must be <= n_candidates ({settings.n_candidates})")
    return acq, settings


# ---------------------------------------------------------------------------- compare

# Named strategies a comparison config may list without a table of its own: the paper's
# line-up. A [strategies.<label>] table overrides (or defines) a label.
STRATEGY_PRESETS: dict[str, dict] = {
    "mumbo-1": {"strategy": "mumbo", "n_gstar": 1},
    "mumbo-10": {"strategy": "mumbo", "n_gstar": 10},
    "mumbo-50": {"strategy": "mumbo", "n_gstar": 50},
    "mumbo-1-exact": {"strategy": "mumbo", "n_gstar": 1, "gstar_method": "exact"},
    "mumbo-10-exact": {"strategy": "mumbo", "n_gstar": 10, "gstar_method": "exact"},
    "mumbo-50-exact": {"strategy": "mumbo", "n_gstar": 50, "gstar_method": "exact"},
    "mes": {"strategy": "mes", "n_gstar": 10},
    "ei": {"strategy": "ei"},
    "ucb": {"strategy": "ucb"},
    "mt-ei": {"strategy": "mt_ei"},
    "mf-gp-ucb": {"strategy": "mf_gp_ucb"},
    "boca": {"strategy": "boca"},
    "mtbo-50": {"strategy": "mtbo", "mtbo_samples": 50},
    "mtbo-200": {"strategy": "mtbo", "mtbo_samples": 200},
    "random": {"strategy": "random"},
}

_COMPARE_KEYS: dict[str, tuple[type, bool, Any]] = {
    "problem": (str, True, None),
    "budget": (float, True, None),
    "strategies": (list, True, None),
    "seeds": (int, False, 20),
    "max_evals": (int, False, 200),
    "model": (str, False, None),
    "rank": (int, False, 2),
    "out": (str, False, None),
}


@dataclasses.dataclass(frozen=True)
class CompareConfig:
    """A validated comparison configuration (``mumbo-jax compare``)::

        [compare]
        problem = "currin"            # required
        budget = 200                  # required: cost after the initial design
        strategies = ["mumbo-10", "ei", "mtbo-50"]   # required: labels, run in order
        seeds = 20                    # seeds 0 .. seeds-1       (default 20)
        max_evals = 150               # BO evaluations per seed  (default 200)
        model, rank, out              # as in [run]; out default runs/<config stem>

        [acquisition]                 # optional: BOSettings fields shared by all
        n_candidates = 2000

        [strategies.mumbo-fast]       # optional: define or override a label
        strategy = "mumbo"            # required unless the label is a preset
        n_gstar = 5

    A label is one of :data:`STRATEGY_PRESETS` or has a ``[strategies.<label>]``
    table; its settings are the defaults, then ``[acquisition]``, then the preset,
    then its table.

    Attributes:
        problem, budget, seeds, max_evals, model, rank, out: as above.
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
    """Read and validate a comparison configuration (see :class:`CompareConfig`).

    Raises:
        ConfigError: as :func:`load_config`.
    """
    return parse_compare_config(read_toml(path), source=str(path))


def parse_compare_config(data: Mapping, source: str | None = None) -> CompareConfig:
    """Validate parsed TOML data of a comparison configuration."""
    from mumbo_jax.bo import strategies as _strategies

    where = f"{source}: " if source else ""

    def fail(msg):
        raise ConfigError(where + msg)

    allowed = ("compare", "acquisition", "strategies")
    for name, value in data.items():
        if name not in allowed:
            fail(f"unknown section or key {name!r}; allowed sections: " + ", ".join(f"[{s}]" for s in allowed))
        if not isinstance(value, dict):
            fail(f"{name!r} must be a section [{name}], got {_toml_type(value)} {value!r}")
    if "compare" not in data:
        fail("missing section [compare] (it needs at least problem, budget and strategies)")
    section = data["compare"]
    for key, (kind, _, _) in _COMPARE_KEYS.items():
        value = section.get(key)
        if kind is list and key in section and (
                not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value)):
            fail(f"[compare] {key} must be a non-empty array of strings, got {_toml_type(value)} {value!r}")
    values = check_table(section, _COMPARE_KEYS, "[compare]", fail)

    problem = _check_benchmark(values, "[compare]", source, fail)
    budget = values["budget"]

    labels = values["strategies"]
    if len(set(labels)) != len(labels):
        fail(f"[compare] strategies: duplicate labels in {labels}")
    tables = data.get("strategies", {})
    for label, table in tables.items():
        if not isinstance(table, dict):
            fail(f"[strategies] {label!r} must be a table [strategies.{label}], got {_toml_type(table)}")
        if label not in labels:
            fail(f"[strategies.{label}] is not listed in [compare] strategies")
    shared = dict(data.get("acquisition", {}))
    if "strategy" in shared:
        fail("strategy belongs in [strategies.<label>] tables or [compare] strategies, not [acquisition]")
    check_acquisition(shared, "mumbo", fail)  # the shared table on its own
    settings = {}
    for label in labels:
        if label not in STRATEGY_PRESETS and label not in tables:
            fail(f"[compare] strategies: {label!r} is neither a preset ({', '.join(STRATEGY_PRESETS)}) nor "
                 f"defined by a [strategies.{label}] table")
        merged = {**shared, **STRATEGY_PRESETS.get(label, {}), **tables.get(label, {})}
        strategy = merged.pop("strategy", None)
        if strategy is None:
            fail(f"[strategies.{label}] needs a strategy (one of {', '.join(STRATEGIES)})")
        if not isinstance(strategy, str) or strategy not in STRATEGIES:
            fail(f"[strategies.{label}] strategy: unknown strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}")
        if strategy in _strategies.DISCRETE_ONLY and not problem.is_discrete:
            fail(f"[compare] strategies: {label!r} ({strategy}) needs discrete fidelities; {problem.name!r} has a "
                 "continuous one")
        if strategy in _strategies.CONTINUOUS_ONLY and problem.is_discrete:
            fail(f"[compare] strategies: {label!r} ({strategy}) needs a continuous fidelity; {problem.name!r} has "
                 "discrete ones")

        def fail_label(msg, label=label):
            fail(msg.replace("[acquisition]", f"[strategies.{label}]"))

        _, settings[label] = check_acquisition(merged, strategy, fail_label)
    return CompareConfig(problem=values["problem"], budget=budget, strategies=tuple(labels),
                         settings=types.MappingProxyType(settings), seeds=values["seeds"],
                         max_evals=values["max_evals"], model=values["model"], rank=values["rank"], out=values["out"],
                         source=source, data=data)
