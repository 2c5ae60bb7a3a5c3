"""Warm start: evaluations made before a tuning run, told to its optimiser first.

``mumbo-jax tune CONFIG --warm-start FILE`` (repeatable) or ``tune(..., warm_start=[...])``
reads earlier evaluations from

* another run's journal (``RUN_DIR/journal.jsonl`` or its folder): its successful
  evaluations, with their fidelity and cost; the parameter names must be this run's;
* a CSV file with a header row: one column per parameter (in its own units: the value
  the objective received), ``score`` (as the objective returned it), and optionally
  ``z`` (the fidelity: its index for discrete fidelities, its value for a continuous
  one; default the target) and ``cost`` (default the fidelity's configured cost).

They are journaled as ``warm`` records right after the header (so ``resume`` replays
them), told to the optimiser as the user's own evaluations (they take the place of
initial-design points while it lasts) and do not count towards the run's budget.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from mumbo_jax.run.schema import ConfigError
from mumbo_jax.run.tune.config import TuneConfig

__all__ = ["read_warm_start", "internal_of"]

MAX_WARM = 100_000


def internal_of(cfg: TuneConfig, x: dict, where: str) -> list[float]:
    """The model's coordinates of parameter values ``x`` (``{name: value}``); a
    :class:`ConfigError` naming ``where`` for a missing or out-of-range value."""
    u = []
    for p in cfg.parameters:
        if p.name not in x:
            raise ConfigError(f"{where}: no value for parameter {p.name!r}")
        v = x[p.name]
        if p.kind == "categorical":
            matches = [i for i, c in enumerate(p.choices) if c == v or str(c) == str(v)]
            if not matches:
                raise ConfigError(f"{where}: {p.name} = {v!r} is not one of {list(p.choices)}")
            u += [1.0 if i == matches[0] else 0.0 for i in range(p.dims)]
            continue
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: {p.name} must be a number, got {v!r}") from None
        if not (math.isfinite(f) and p.low <= f <= p.high):
            raise ConfigError(f"{where}: {p.name} = {f:g} is outside [{p.low:g}, {p.high:g}]")
        if p.kind == "int" and f != round(f):
            raise ConfigError(f"{where}: {p.name} = {f:g} must be an integer")
        u.append(math.log10(f) if p.log else f)
    return u


def _fidelity(cfg: TuneConfig, z, where: str):
    if z is None or z == "":
        return 0 if cfg.discrete else cfg.target
    try:
        f = float(z)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: z must be a number, got {z!r}") from None
    if cfg.discrete:
        if f != int(f) or not 0 <= f < len(cfg.costs):
            raise ConfigError(f"{where}: z = {z!r} is not a fidelity index (0..{len(cfg.costs) - 1})")
        return int(f)
    lo, hi = cfg.fidelity_bounds
    if not lo <= f <= hi:
        raise ConfigError(f"{where}: z = {f:g} is outside the fidelity bounds [{lo:g}, {hi:g}]")
    return f


def _record(cfg: TuneConfig, x: dict, z, score, cost, where: str, source: str) -> dict:
    u = internal_of(cfg, x, where)
    z = _fidelity(cfg, z, where)
    try:
        s = float(score)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: score must be a number, got {score!r}") from None
    if not math.isfinite(s):
        raise ConfigError(f"{where}: score must be finite, got {score!r}")
    if cost is None or cost == "":
        c = cfg.cost_of(z)
    else:
        try:
            c = float(cost)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: cost must be a number, got {cost!r}") from None
        if not (math.isfinite(c) and c > 0):
            raise ConfigError(f"{where}: cost must be a finite number > 0, got {cost!r}")
    return {"type": "warm", "source": source, "x": cfg.values_of(u), "u": u, "z": z,
            "fidelity": cfg.fidelity_value(z), "score": s, "y": s if cfg.maximise else -s, "cost": c}


def read_warm_start(cfg: TuneConfig, paths) -> list[dict]:
    """The ``warm`` records of the files ``paths`` (journals or CSV files).

    Raises:
        ConfigError: a file that cannot be read, or a row naming what is wrong with it.
    """
    from mumbo_jax.run.journal import JOURNAL_NAME, JournalError, read_journal

    out = []
    for path in paths or ():
        path = Path(path)
        if path.is_dir():
            path = path / JOURNAL_NAME
        if not path.is_file():
            raise ConfigError(f"--warm-start {path}: no such file (a run's journal.jsonl or a CSV file)")
        if path.suffix == ".jsonl":
            try:
                header, records, _ = read_journal(path, warn=lambda m: None)
            except JournalError as e:
                raise ConfigError(f"--warm-start {e}") from None
            theirs = list(header.get("config", {}).get("parameters", {}))
            if sorted(theirs) != sorted(cfg.names):
                raise ConfigError(f"--warm-start {path}: its parameters {theirs} are not this run's {cfg.names}")
            for r in records:
                if r.get("type") in ("eval", "warm") and r.get("status", "ok") == "ok" and r.get("score") is not None:
                    out.append(_record(cfg, r["x"], r["z"], r["score"], r.get("cost"),
                                       f"--warm-start {path} evaluation {r.get('n', '?')}", str(path)))
        else:
            try:
                with open(path, newline="") as fh:
                    rows = list(csv.DictReader(fh))
            except (OSError, UnicodeDecodeError, csv.Error) as e:
                raise ConfigError(f"--warm-start {path}: cannot read it as CSV ({e})") from None
            if rows and "score" not in rows[0]:
                raise ConfigError(f"--warm-start {path}: needs a 'score' column (and one per parameter: "
                                  f"{', '.join(cfg.names)})")
            for i, row in enumerate(rows):
                out.append(_record(cfg, row, row.get("z"), row.get("score"), row.get("cost"),
                                   f"--warm-start {path} row {i + 2}", str(path)))
        if len(out) > MAX_WARM:
            raise ConfigError(f"--warm-start: more than {MAX_WARM} evaluations")
    return out
