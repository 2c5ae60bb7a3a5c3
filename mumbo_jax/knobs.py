"""Settings records: small frozen dataclasses whose fields carry their own documentation.

A field is declared with :func:`knob`: its default, one sentence of documentation and its
constraints (range, allowed values, a cap for configuration files, the flat name it had
before the settings were grouped). That metadata is the one source of truth for

* the record's own checks (:func:`check`, called by each record's ``__post_init__``),
* the configuration schema and ``mumbo-jax config-help``
  (:func:`mumbo_jax.run.config.record_fields` reads :func:`fields`),
* the documentation (the configuration reference is rendered from the schema).

Records are frozen and hashable: a record (and :class:`mumbo_jax.bo.settings.BOSettings`,
which holds several) is a static argument of the compiled programs.

This module imports nothing from the package, so every layer (``gp``, ``bo``) can
declare its records with it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from typing import Any, Callable, NamedTuple, Sequence

__all__ = ["knob", "Knob", "fields", "check", "replace"]


def knob(default: Any, doc: str, *, low: float | None = None, high: float | None = None, low_open: bool = False,
         high_open: bool = False, choices: Sequence | Callable[[], Sequence] | None = None,
         cap: float | None = None, old: str | None = None) -> Any:
    """A record field with its documentation and constraints (``dataclasses.field``).

    Args:
        default: the default value (immutable).
        doc: what the field does, and the default's reason where it has one.
        low, high: closed range of a number (``low_open``/``high_open``: open end).
        choices: allowed values, or a callable returning them (a registry read late).
        cap: an upper bound that configuration files enforce (what a machine can do:
            a typo of ``1e9`` candidates is an error before any work), not Python.
        old: the flat ``BOSettings`` name of the field before the settings were grouped
            (old configuration keys still load, with a DeprecationWarning naming the
            new key).
    """
    meta = dict(doc=doc, low=low, high=high, low_open=low_open, high_open=high_open, choices=choices, cap=cap,
                old=old)
    return dataclasses.field(default=default, metadata=types.MappingProxyType(meta))


class Knob(NamedTuple):
    """One field of a record as the schema and the checks see it.

    Attributes:
        name: the field's name.
        type: ``int``, ``float``, ``str`` or ``bool``.
        nullable: ``None`` is allowed (the field's default is then usually ``None``).
        default: the default value.
        doc, low, high, low_open, high_open, choices, cap, old: as in :func:`knob`.
    """

    name: str
    type: type
    nullable: bool
    default: Any
    doc: str
    low: float | None
    high: float | None
    low_open: bool
    high_open: bool
    choices: Any
    cap: float | None
    old: str | None

    def allowed(self) -> tuple | None:
        if self.choices is None:
            return None
        return tuple(self.choices() if callable(self.choices) else self.choices)


@functools.lru_cache(maxsize=None)
def fields(cls) -> tuple:
    """The :class:`Knob` of every field of the record class ``cls``, in order (fields
    without :func:`knob` metadata are records themselves and are left out)."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if "doc" not in f.metadata:
            continue
        hint = hints[f.name]
        args = typing.get_args(hint) if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union \
            else (hint,)
        nullable = type(None) in args
        kind = next(t for t in (bool, int, float, str) if t in args)
        m = f.metadata
        out.append(Knob(f.name, kind, nullable, f.default, m["doc"], m["low"], m["high"], m["low_open"],
                        m["high_open"], m["choices"], m["cap"], m["old"]))
    return tuple(out)


_TYPE_WORDS = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def check(record, prefix: str = "") -> None:
    """Check every :func:`knob` field of ``record`` against its metadata (type, range,
    choices) and make integers given for ``float`` fields floats. Raises ValueError
    naming ``prefix + name`` (e.g. ``fit.restarts``)."""
    for k in fields(type(record)):
        v = getattr(record, k.name)
        name = prefix + k.name
        if v is None and k.nullable:
            continue
        ok = isinstance(v, bool) if k.type is bool else (
            not isinstance(v, bool) and isinstance(v, (int, float) if k.type is float else k.type))
        if not ok:
            raise ValueError(f"{name} must be {_TYPE_WORDS[k.type]}{' or None' if k.nullable else ''}, got {v!r}")
        if k.type is float and not isinstance(v, float):
            v = float(v)
            object.__setattr__(record, k.name, v)
        if k.type in (int, float):
            if not math.isfinite(v):
                raise ValueError(f"{name} must be a finite number, got {v!r}")
            if k.low is not None and (v <= k.low if k.low_open else v < k.low):
                raise ValueError(f"{name} must be {'>' if k.low_open else '>='} {k.low:g}, got {v!r}")
            if k.high is not None and (v >= k.high if k.high_open else v > k.high):
                raise ValueError(f"{name} must be {'<' if k.high_open else '<='} {k.high:g}, got {v!r}")
        allowed = k.allowed()
        if allowed is not None and v not in allowed:
            raise ValueError(f"unknown {name} {v!r}; allowed: {', '.join(map(str, allowed))}")


def replace(record, **changes):
    """A copy of ``record`` with some fields changed; a field that is itself a record
    takes a record or a dict of its own fields (merged over its current value)."""
    for name, value in list(changes.items()):
        current = getattr(record, name, None)
        if isinstance(value, dict) and dataclasses.is_dataclass(current):
            changes[name] = replace(current, **value)
    return dataclasses.replace(record, **changes)
