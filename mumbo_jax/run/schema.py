"""A small declarative schema for the TOML configurations: one description per key drives
validation, the one-line error messages and the documentation (``mumbo-jax config-help``
and the README's configuration reference, kept in sync by a test).

A :class:`~mumbo_jax.knobs.Field` is a key: its TOML type, default (or ``required``),
allowed values (``choices``, possibly a callable that reads a registry), range
(``low``/``high``, open or closed) and a doc string; the settings records' fields are the
same descriptor (:mod:`mumbo_jax.knobs`), so a key and a record field are checked by one
piece of code. A :class:`Section` is a table of fields. Checks between
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
from typing import Mapping, Sequence

from mumbo_jax.knobs import Field, did_you_mean, toml_type, type_ok

__all__ = ["ConfigError", "Field", "Section", "did_you_mean", "toml_type", "type_ok", "check_sections",
           "render_text",
           "render_markdown"]


class ConfigError(ValueError):
    """An invalid configuration (bad TOML, unknown key, wrong type or value)."""


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
