"""The ``[settings]`` table of the configurations: :class:`mumbo_jax.bo.settings.BOSettings`
as TOML, one sub-table per record::

    [settings.fit]
    restarts = 2
    [settings.gstar]
    samples = 10

(or, equivalently, dotted keys inside ``[settings]``: ``fit.restarts = 2``). The strategy
is a key of ``[run]`` (``[strategies.<label>]`` tables in a comparison).

The schema (:data:`SETTINGS_SECTIONS`: types, defaults, ranges, allowed values, docs) is
generated from the records' field metadata (:func:`mumbo_jax.knobs.knob`): a field added
to a record is a configuration key, documented, at once.

Configurations written before the settings were grouped still load: an ``[acquisition]``
table, and flat keys (``fit_restarts``, ``n_gstar``, ...) in ``[settings]`` or in a
``[strategies.<label>]`` table, are read as the new keys with a DeprecationWarning that
names the new key (:func:`mumbo_jax.bo.settings.old_keys`, from the same metadata). The
levers removed from the library (:data:`REMOVED`) load only at the value they always had
(their default, i.e. off), with a DeprecationWarning; any other value is an error that
says where they still run (the git tag ``ablation-levers``).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Mapping

from mumbo_jax import knobs
from mumbo_jax.bo.settings import RECORDS, BOSettings, old_keys
from mumbo_jax.run.schema import Section, did_you_mean

__all__ = ["SETTINGS", "OLD_SECTION", "SETTINGS_SECTIONS", "REMOVED", "ADDED_AS", "INT_CAP", "record_fields", "read_settings",
           "merge", "build_settings", "upgrade_record"]

SETTINGS = "settings"  # the section of the settings
OLD_SECTION = "acquisition"  # its name before the settings were grouped (deprecated)
INT_CAP = 1_000_000  # integer keys without a cap of their own
# the levers removed from the library (measured dead ends, docs/RESULTS.md): their only
# accepted value, the default they always had
REMOVED = {"fit_ftol": 0.0, "full_refit_every": 1, "protect_target": False, "batch_polish": False,
           "batch_rescaled_repulsion": False, "batch_marginal_cost": False, "target_floor_cv": 0.0}


def record_fields(cls) -> tuple:
    """The :class:`~mumbo_jax.knobs.Field` of every field of a settings record as a
    configuration key: its :func:`mumbo_jax.knobs.knob` field, an integer without an upper
    bound capped (its ``cap``, else :data:`INT_CAP`)."""
    out = []
    for k in knobs.fields(cls):
        if k.type is int and k.high is None:
            k = dataclasses.replace(k, high=k.cap if k.cap is not None else INT_CAP)
        out.append(k)
    return tuple(out)


def _doc(cls) -> str:
    return (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")


SETTINGS_SECTIONS = tuple(Section(f"{SETTINGS}.{name}", f"BOSettings.{name}: {_doc(cls)}", record_fields(cls))
                          for name, cls in RECORDS.items())
_BY_RECORD = dict(zip(RECORDS, SETTINGS_SECTIONS))


def read_settings(table: Mapping, fail, where: str = f"[{SETTINGS}]", allow: tuple = ()) -> dict:
    """Check a settings table (``[settings]``, a ``[strategies.<label>]`` table, an old
    ``[acquisition]`` table) and return the keys given as ``{record: {field: value}}``.

    Sub-tables are records, checked against their section; flat keys of the old
    spelling are moved to their record with a DeprecationWarning naming the new key;
    ``allow`` names other keys of the table, left to the caller. ``fail(message)``
    raises."""
    old = old_keys()
    out: dict = {}
    for key, value in table.items():
        if key in allow:
            continue
        if key in RECORDS:
            if not isinstance(value, dict):
                fail(f"{where} {key} must be a table [{SETTINGS}.{key}] of {', '.join(_BY_RECORD[key].keys())}, "
                     f"got {value!r}")
            sub = f"{where[:-1]}.{key}]"
            given = _BY_RECORD[key].validate(value, fail, sub)
            out.setdefault(key, {}).update({k: v for k, v in given.items() if k in value})
        elif key in old:
            record, name = old[key]
            warnings.warn(f"{where} {key} is deprecated; use {name} in [{SETTINGS}.{record}] (its new spelling)",
                          DeprecationWarning, stacklevel=4)
            field = dataclasses.replace(_BY_RECORD[record].field(name), name=key)  # messages name the key given
            out.setdefault(record, {})[name] = field.check(value, where, fail)
        elif key in REMOVED:
            if value != REMOVED[key] or type(value) is not type(REMOVED[key]):
                fail(f"{where} {key} was removed from the library (a lever measured as a dead end, "
                     f"docs/RESULTS.md); it runs with the library at the git tag ablation-levers "
                     f"(git checkout ablation-levers)")
            warnings.warn(f"{where} {key} was removed from the library; its value {value!r} (off) is ignored",
                          DeprecationWarning, stacklevel=4)
        else:
            names = list(RECORDS) + list(allow)
            fail(f"unknown key {key!r} in {where}{did_you_mean(key, names + list(old))}; allowed: "
                 f"{', '.join(f'[{SETTINGS}.{r}]' for r in RECORDS)}"
                 + (f", {', '.join(allow)}" if allow else ""))
    return out


def merge(*tables: Mapping) -> dict:
    """Settings tables ``{record: {field: value}}`` merged in order (later wins, field
    by field)."""
    out: dict = {}
    for table in tables:
        for record, values in table.items():
            out.setdefault(record, {}).update(values)
    return out


def build_settings(strategy: str, table: Mapping, fail, where: str = f"[{SETTINGS}]") -> BOSettings:
    """The :class:`BOSettings` of a strategy and a checked settings table; the records'
    own checks (between keys) fail with ``where`` in front."""
    try:
        return BOSettings(strategy=strategy, **{k: dict(v) for k, v in table.items()})
    except (TypeError, ValueError) as e:
        fail(f"{where} {e}")


# fields added to a record with a default other than the behaviour before them: a record
# written without them is read with these values (record -> field -> value)
ADDED_AS = {"fit": {"warm_from": 0, "warm_ftol": 0.0}}


def upgrade_record(flat: Mapping) -> dict | None:
    """A ``dataclasses.asdict(BOSettings)`` written before the settings were grouped (flat
    keys, e.g. the ``settings`` of an older ``results.json``) in today's nested form;
    ``None`` where a removed lever was on (those settings cannot be expressed today). A
    nested record is returned as it is. In both, a field added to a record since (absent
    from the record read) takes the value that keeps the behaviour of the library that
    wrote the record: its default, or its :data:`ADDED_AS` value where the default changed
    that behaviour (``fit.warm_from = 0``: every refit full; ``fit.warm_ftol = 0``: warm-only
    refits run all ``warm_iter`` iterations)."""
    if any(isinstance(v, dict) for v in flat.values()):
        out = {k: dict(v) if isinstance(v, dict) else v for k, v in flat.items()}
    else:
        old, out = old_keys(), {"strategy": flat.get("strategy")}
        out.update({name: {} for name in RECORDS})
        for key, value in flat.items():
            if key in old:
                record, name = old[key]
                out[record][name] = value
            elif key in REMOVED and value != REMOVED[key]:
                return None
    for name, cls in RECORDS.items():
        if isinstance(out.get(name), dict):
            defaults = {**dataclasses.asdict(cls()), **ADDED_AS.get(name, {})}
            out[name] = {**{k: v for k, v in defaults.items() if k not in out[name]}, **out[name]}
    return out
