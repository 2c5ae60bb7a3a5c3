"""A small declarative schema for the TOML configurations: one description per key drives
validation, the one-line error messages and the documentation (``mumbo-jax config-help``
and the README's configuration reference, kept in sync by a test).

A :class:`Field` is a key: its TOML type, default (or ``required``), allowed values
(``choices``, possibly a callable that reads a registry), range (``low``/``high``, open
or closed) and a doc string. A :class:`Section` is a table of fields. Checks between
keys (a model that fits the problem's fidelities, a strategy that fits them, ...) stay
in the code of each configuration (:mod:`mumbo_jax.run.config`,
:mod:`mumbo_jax.run.tune.config`), next to the schema they complete.

Messages: ``unknown key 'x' in [run]; allowed keys: ...``, ``[run] seeds must be an
integer, got float 2.5``, ``[run] budget must be > 0, got -1.0``, ``[run] strategy:
unknown strategy 'x'; allowed: ...``, ``[run] budget is required``. Every one names the
section and the key; :class:`ConfigError` prefixes the file name.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from typing import Any, Callable, Mapping, Sequence

__all__ = ["ConfigError", "Field", "Section", "did_you_mean", "toml_type", "type_ok", "check_sections",
           "render_text",
           "render_markdown"]


class ConfigError(ValueError):
    """An invalid configuration (bad TOML, unknown key, wrong type or value)."""


_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "a boolean", list: "an array",
               dict: "a table"}
_DOC_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array", dict: "table"}


def did_you_mean(value, allowed) -> str:
    """`` (did you mean 'x'?)`` for the allowed string closest to a misspelt ``value``
    (``difflib``), or ``""`` when none is close."""
    if not isinstance(value, str):
        return ""
    words = [str(a) for a in allowed]
    close = difflib.get_close_matches(value, words, n=1, cutoff=0.6)
    if not close:
        close = [w for w in words if w.lower() == value.lower().replace("-", "_")][:1]
    return f" (did you mean {close[0]!r}?)" if close else ""


def toml_type(value) -> str:
    """The TOML name of a parsed value's type (for messages)."""
    names = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}
    return names.get(type(value), type(value).__name__)


def type_ok(value, kind: type) -> bool:
    """Whether a parsed TOML value has type ``kind`` (an integer is a number; a boolean
    is never a number)."""
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind is float:
        return isinstance(value, (int, float))
    return isinstance(value, kind)


@dataclasses.dataclass(frozen=True)
class Field:
    """One key of a section.

    Attributes:
        name: the key.
        type: ``int``, ``float`` (an integer is accepted and made a float), ``str``,
            ``bool``, ``list`` or ``dict``.
        doc: one sentence for the reference.
        default: the value when the key is absent (``None``: absent means "not set").
        required: the key must be given.
        choices: allowed values, or a callable returning them (a registry read late).
        noun: what a value is called in "unknown <noun> 'x'" (default: the key).
        low, high: the closed range of a number (``low_open``/``high_open``: open end).
        finite: numbers must be finite (default true).
        items: the type of an array's elements; ``nonempty``: the array must not be empty.
    """

    name: str
    type: type
    doc: str
    default: Any = None
    required: bool = False
    choices: Sequence | Callable[[], Sequence] | None = None
    noun: str | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    finite: bool = True
    items: type | None = None
    nonempty: bool = False
    hint: str | None = None  # added to the error for a value outside ``choices``

    def allowed(self) -> tuple | None:
        if self.choices is None:
            return None
        return tuple(self.choices() if callable(self.choices) else self.choices)

    def check(self, value, where: str, fail) -> Any:
        """The checked value (a number of a ``float`` field as a float); ``fail(message)``
        raises."""
        if not type_ok(value, self.type):
            fail(f"{where} {self.name} must be {_TYPE_NAMES[self.type]}, got {toml_type(value)} {value!r}")
        if self.type is list:
            if self.nonempty and not value:
                fail(f"{where} {self.name} must be a non-empty array, got []")
            if self.items is not None and not all(type_ok(v, self.items) for v in value):
                fail(f"{where} {self.name} must be an array of {_DOC_TYPES[self.items]}s, got {value!r}")
        if self.type in (int, float):
            if self.finite and not math.isfinite(value):
                fail(f"{where} {self.name} must be a finite number, got {value!r}")
            if self.low is not None and (value <= self.low if self.low_open else value < self.low):
                fail(f"{where} {self.name} must be {'>' if self.low_open else '>='} {self.low:g}, got {value!r}")
            if self.high is not None and (value >= self.high if self.high_open else value > self.high):
                fail(f"{where} {self.name} must be {'<' if self.high_open else '<='} {self.high:g}, got {value!r}")
            if self.type is float:
                value = float(value)
        if self.type is str and self.choices is None and not value.strip():
            fail(f"{where} {self.name} must be a non-empty string")
        allowed = self.allowed()
        if allowed is not None and value not in allowed:
            fail(f"{where} {self.name}: unknown {self.noun or self.name} {value!r}{did_you_mean(value, allowed)}; "
                 "allowed: " + ", ".join(map(str, allowed)) + (f" ({self.hint})" if self.hint else ""))
        return value

    def describe_type(self) -> str:
        """The type and constraints in words, for the reference."""
        text = _DOC_TYPES[self.type]
        if self.type is list and self.items is not None:
            text = f"array of {_DOC_TYPES[self.items]}s"
        rng = []
        if self.low is not None:
            rng.append(f"{'>' if self.low_open else '>='} {self.low:g}")
        if self.high is not None:
            rng.append(f"{'<' if self.high_open else '<='} {self.high:g}")
        if rng:
            text += " " + ", ".join(rng)
        allowed = self.allowed()
        if allowed is not None:
            text += ": " + " | ".join(f'"{a}"' if isinstance(a, str) else str(a) for a in allowed)
        return text

    def describe_default(self) -> str:
        if self.required:
            return "required"
        if self.default is None:
            return "-"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        return f'"{self.default}"' if isinstance(self.default, str) else f"{self.default!r}"


@dataclasses.dataclass(frozen=True)
class Section:
    """A TOML table: ``name`` as written (``"run"``; ``"parameters.<name>"`` for a
    table of tables), its fields and a doc string. ``required``: the section must be
    present."""

    name: str
    doc: str
    fields: tuple
    required: bool = False

    @property
    def where(self) -> str:
        return f"[{self.name}]"

    def keys(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    def validate(self, table: Mapping, fail, where: str | None = None) -> dict:
        """Check one table: unknown keys, types, values, required keys. Returns every
        field's value (the default where absent)."""
        where = where or self.where
        names = self.keys()
        for key in table:
            if key not in names:
                fail(f"unknown key {key!r} in {where}{did_you_mean(key, names)}; allowed keys: {', '.join(names)}")
        out = {}
        for f in self.fields:
            if f.name in table:
                out[f.name] = f.check(table[f.name], where, fail)
            elif f.required:
                fail(f"{where} {f.name} is required")
            else:
                out[f.name] = f.default
        return out


def check_sections(data: Mapping, sections: Sequence[Section], fail, extra: Sequence[str] = ()) -> None:
    """Top level of a file: every entry is a known section (``extra`` names sections
    checked elsewhere) and a table; every required section is present."""
    allowed = [s.name for s in sections] + list(extra)
    for name, value in data.items():
        if name not in allowed:
            fail(f"unknown section or key {name!r}{did_you_mean(name, allowed)}; allowed sections: "
                 + ", ".join(f"[{s}]" for s in allowed))
        if not isinstance(value, dict):
            fail(f"{name!r} must be a section [{name}], got {toml_type(value)} {value!r}")
    for s in sections:
        if s.required and s.name not in data:
            keys = [f.name for f in s.fields if f.required]
            fail(f"missing section [{s.name}]" + (f" (it needs at least {', '.join(keys)})" if keys else ""))


def render_text(sections: Sequence[Section]) -> str:
    """A plain-text reference of sections (``mumbo-jax config-help``)."""
    lines = []
    for s in sections:
        lines.append(f"[{s.name}]{'  (required)' if s.required else ''}")
        lines.extend(f"  {line}" for line in _wrap(s.doc, 86))
        width = max(len(f.name) for f in s.fields)
        for f in s.fields:
            lines.append(f"  {f.name:<{width}}  {f.describe_type()}; default {f.describe_default()}")
            lines.extend(" " * (width + 4) + line for line in _wrap(f.doc, 84 - width))
        lines.append("")
    return "\n".join(lines)


def render_markdown(sections: Sequence[Section]) -> str:
    """A markdown reference: one table per section (the README's configuration
    reference)."""
    # no HTML tags, no cell breaks: a choice list's " | " reads "or", any other | (|value|) is kept as &#124;
    esc = lambda text: text.replace("<", "&lt;").replace(" | ", " or ").replace("|", "&#124;")
    lines = []
    for s in sections:
        lines += [f"`[{s.name}]`{' (required)' if s.required else ''}: {esc(s.doc)}", "",
                  "| key | type | default | meaning |", "|---|---|---|---|"]
        for f in s.fields:
            lines.append(f"| `{f.name}` | {esc(f.describe_type())} | {f.describe_default()} | {esc(f.doc)} |")
        lines.append("")
    return "\n".join(lines)


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) or [""]
