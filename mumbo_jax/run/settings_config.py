"""The ``[settings]`` table of the configurations: :class:`mumbo_jax.bo.settings.BOSettings`
as TOML, one sub-table per record::

    [settings.fit]
    restarts = 2
    [settings.gstar]
    samples = 10

(or, equivalently, dotted keys inside ``[settings]``: ``fit.restarts = 2``). The strategy
is a key of ``[run]`` (``[strategies.<label>]`` tables in a comparison). The rules' knobs
(:attr:`mumbo_jax.bo.rules.Rule.options`) are one table per rule, ``BOSettings.options``::

    [settings.options.ucb]
    beta = 0.5

checked against the rule's declared knobs (:data:`OPTIONS`, :func:`option_sections`
documents them); a rule's table applies when that rule decides.

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
from mumbo_jax.bo import rules
from mumbo_jax.bo.settings import MOVED_TO_OPTIONS, RECORDS, BOSettings, moved_option_message, old_keys
from mumbo_jax.run.schema import Section, did_you_mean

__all__ = ["SETTINGS", "OLD_SECTION", "OPTIONS", "SETTINGS_SECTIONS", "option_sections", "REMOVED", "ADDED_AS", "INT_CAP", "record_fields", "read_settings",
           "merge", "build_settings", "upgrade_record"]

SETTINGS = "settings"  # the section of the settings
OPTIONS = "options"  # its table of the rules' knobs, one sub-table per rule (BOSettings.options)
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


def option_sections() -> tuple:
    """One ``[settings.options.<rule>]`` section per registered rule with knobs (its
    declared :func:`mumbo_jax.bo.rules.option` fields; a plain value is documented by its
    default), read from :data:`mumbo_jax.bo.rules.RULES` at each call."""
    out = []
    for name, rule in rules.RULES.items():
        if not rule.options:
            continue
        fields = []
        for k, v in rule.options.items():
            f = rule.option_fields.get(k)
            if f is None:
                kind = type(v) if type(v) in (bool, int, float, str) else str
                f = knobs.Field(k, kind, f"A knob of {name} (undeclared: no checks here).", default=v)
            fields.append(dataclasses.replace(f, default=v))  # the rule's own default (a variant's)
        out.append(Section(f"{SETTINGS}.{OPTIONS}.{name}", f"The knobs of the rule {name} (Rule.options), for the "
                           f"runs where it decides.", tuple(fields)))
    return tuple(out)


def _read_options(value, fail, where: str) -> dict:
    """A ``[settings.options]`` table: ``{rule: {knob: value}}``, each rule registered and
    each value checked by the rule's declared knobs."""
    if not isinstance(value, dict):
        fail(f"{where} {OPTIONS} must be a table of rules' knobs ([{SETTINGS}.{OPTIONS}.<rule>]), got {value!r}")
    out = {}
    for name, given in value.items():
        sub = f"{where[:-1]}.{OPTIONS}.{name}]"
        if name not in rules.RULES:
            fail(f"unknown rule {name!r} in {where[:-1]}.{OPTIONS}]{did_you_mean(name, rules.STRATEGIES)}; "
                 f"allowed: {', '.join(rules.STRATEGIES)}")
        if not isinstance(given, dict):
            fail(f"{sub} must be a table of {name}'s knobs, got {given!r}")
        rule = rules.RULES[name]
        for k, v in given.items():
            if k not in rule.options:
                fail(f"unknown key {k!r} in {sub}{did_you_mean(k, rule.options)}; {name}'s options: "
                     f"{', '.join(rule.options) or 'none'}")
            f = rule.option_fields.get(k)
            out.setdefault(name, {})[k] = f.check(v, sub, fail) if f is not None else v
    return out


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
        if key == OPTIONS:
            out.setdefault(OPTIONS, {})
            for name, given in _read_options(value, fail, where).items():
                out[OPTIONS].setdefault(name, {}).update(given)
        elif key == "rule" and isinstance(value, dict):  # RuleSettings, before the knobs moved to the rules
            moved = [k for k in value if k in MOVED_TO_OPTIONS]
            fail(f"{where} " + (moved_option_message(moved[0], value[moved[0]], config=True) if moved else
                                f"[{SETTINGS}.rule] is gone: rules' knobs are tables [{SETTINGS}.{OPTIONS}.<rule>]"))
        elif key in MOVED_TO_OPTIONS:
            fail(f"{where} {moved_option_message(key, value, config=True)}")
        elif key in RECORDS:
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
            names = list(RECORDS) + [OPTIONS] + list(allow)
            fail(f"unknown key {key!r} in {where}{did_you_mean(key, names + list(old))}; allowed: "
                 f"{', '.join(f'[{SETTINGS}.{r}]' for r in RECORDS)}, [{SETTINGS}.{OPTIONS}.<rule>]"
                 + (f", {', '.join(allow)}" if allow else ""))
    return out


def merge(*tables: Mapping) -> dict:
    """Settings tables ``{record: {field: value}}`` merged in order (later wins, field
    by field; the rules' options knob by knob)."""
    out: dict = {}
    for table in tables:
        for record, values in table.items():
            if record == OPTIONS:
                for name, given in values.items():
                    out.setdefault(OPTIONS, {}).setdefault(name, {}).update(given)
            else:
                out.setdefault(record, {}).update(values)
    return out


def build_settings(strategy: str, table: Mapping, fail, where: str = f"[{SETTINGS}]") -> BOSettings:
    """The :class:`BOSettings` of a strategy and a checked settings table; the records'
    own checks (between keys) fail with ``where`` in front."""
    try:
        return BOSettings(strategy=strategy, **{k: ({n: dict(o) for n, o in v.items()} if k == OPTIONS else dict(v))
                                                for k, v in table.items()})
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
    moved = {}  # the knobs of the RuleSettings of before, read by the strategy's rule
    if any(isinstance(v, dict) for v in flat.values()):
        out = {k: dict(v) if isinstance(v, dict) else v for k, v in flat.items()}
        moved = out.pop("rule", None) or {}
    else:
        old, out = old_keys(), {"strategy": flat.get("strategy")}
        out.update({name: {} for name in RECORDS})
        for key, value in flat.items():
            if key in old:
                record, name = old[key]
                out[record][name] = value
            elif key in MOVED_TO_OPTIONS:
                moved[key] = value
            elif key in REMOVED and value != REMOVED[key]:
                return None
    for name, cls in RECORDS.items():
        if isinstance(out.get(name), dict):
            defaults = {**dataclasses.asdict(cls()), **ADDED_AS.get(name, {})}
            out[name] = {**{k: v for k, v in defaults.items() if k not in out[name]}, **out[name]}
    if OPTIONS not in out:
        out[OPTIONS] = _moved_options(out.get("strategy"), moved)
    return out


def _moved_options(strategy, moved: Mapping) -> dict:
    """``BOSettings.options`` of a record written with ``RuleSettings`` (``moved``: its
    fields): the values its strategy's rule read, where they differ from the rule's
    defaults today (the others were never read)."""
    rule = rules.RULES.get(strategy) if isinstance(strategy, str) else None
    if rule is None:
        return {}
    given = {MOVED_TO_OPTIONS[k]: v for k, v in moved.items() if k in MOVED_TO_OPTIONS and v is not None}
    given = {k: v for k, v in given.items() if k in rule.options and v != rule.options[k]}
    return {strategy: given} if given else {}
