"""One descriptor for every checked value: a settings record's field and a configuration
key are the same :class:`Field`, with one set of checks (type, finite, range, choices)
and one set of messages.

A record field is declared with :func:`knob`: its default, one sentence of documentation
and its constraints (range, allowed values, a cap for configuration files, the flat name
it had before the settings were grouped). That metadata is the one source of truth for

* the record's own checks (:func:`check`, called by each record's ``__post_init__``),
* the configuration schema and ``mumbo-jax config-help``
  (:func:`mumbo_jax.run.settings_config.record_fields` reads :func:`fields`),
* the documentation (the configuration reference is rendered from the schema).

A configuration key that is no record field (``[run] budget``, ``[objective] retries``)
is a :class:`Field` written out in its schema (:mod:`mumbo_jax.run.schema` builds the
sections and their references from them).

Records are frozen, hashable pytrees (:func:`record`): each field is either *structure*
(a count, a choice, a switch: anything that sets a shape or a Python branch of a
program), the record's static part, or a *number* declared ``knob(..., traced=True)``
(a float that only enters arithmetic: a learning rate, a tolerance), a leaf that the
compiled programs take as a traced argument. Programs are keyed on the structure only,
so settings that differ in a number share them (a sweep over a learning rate compiles
once).

This module imports nothing from the package, so every layer (``gp``, ``bo``, ``run``)
declares its values with it.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import types
import typing
from typing import Any, Callable, Sequence

__all__ = ["Field", "knob", "fields", "check", "replace", "record", "traced_fields", "is_array", "did_you_mean", "toml_type",
           "type_ok"]

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
    """The TOML name of a value's type (for messages)."""
    names = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}
    return names.get(type(value), type(value).__name__)


def type_ok(value, kind: type) -> bool:
    """Whether ``value`` has type ``kind`` (an integer is a number; a boolean is never a
    number)."""
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind is float:
        return isinstance(value, (int, float))
    return isinstance(value, kind)


def _raise(message: str):
    raise ValueError(message)


@dataclasses.dataclass(frozen=True)
class Field:
    """One checked value: a configuration key or a settings record's field.

    Attributes:
        name: the key (a record field's name).
        type: ``int``, ``float`` (an integer is accepted and made a float), ``str``,
            ``bool``, ``list`` or ``dict``.
        doc: one sentence for the reference.
        default: the value when the key is absent (``None``: absent means "not set").
        required: the key must be given.
        nullable: ``None`` is a valid value (a record field typed ``X | None``).
        choices: allowed values, or a callable returning them (a registry read late).
        noun: what a value is called in "unknown <noun> 'x'" (default: the key).
        low, high: the closed range of a number (``low_open``/``high_open``: open end).
        finite: numbers must be finite (default true).
        items: the type of an array's elements; ``nonempty``: the array must not be empty.
        hint: added to the error for a value outside ``choices``.
        cap: a record field's upper bound that configuration files enforce (what a
            machine can do: a typo of ``1e9`` candidates is an error before any work),
            not Python.
        old: a record field's flat ``BOSettings`` name before the settings were grouped
            (old configuration keys still load, with a DeprecationWarning naming the new
            key).
        traced: a record field that is a number the compiled programs take as a traced
            argument (a pytree leaf of its :func:`record`), not part of their static key;
            false: structure (counts, choices, switches, anything that sets a shape or a
            Python branch, and a ``None``-able value's None or not).
    """

    name: str
    type: type
    doc: str
    default: Any = None
    required: bool = False
    nullable: bool = False
    choices: Sequence | Callable[[], Sequence] | None = None
    noun: str | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    finite: bool = True
    items: type | None = None
    nonempty: bool = False
    hint: str | None = None
    cap: float | None = None
    old: str | None = None
    traced: bool = False

    def allowed(self) -> tuple | None:
        if self.choices is None:
            return None
        return tuple(self.choices() if callable(self.choices) else self.choices)

    def check(self, value, where: str = "", fail: Callable[[str], Any] = _raise, name: str | None = None) -> Any:
        """The checked value (a number of a ``float`` field as a float); ``fail(message)``
        raises (default: ValueError). ``where`` prefixes the messages (a configuration's
        ``[section]``); ``name`` replaces the key in them (a record's checks name the
        record too, ``gstar.samples``)."""
        name = name or self.name
        label = f"{where} {name}" if where else name
        if value is None and self.nullable or is_array(value):  # an array: a traced number, checked when set
            return value
        if not type_ok(value, self.type):
            fail(f"{label} must be {_TYPE_NAMES[self.type]}{' or None' if self.nullable else ''}, got "
                 f"{toml_type(value)} {value!r}")
        if self.type is list:
            if self.nonempty and not value:
                fail(f"{label} must be a non-empty array, got []")
            if self.items is not None and not all(type_ok(v, self.items) for v in value):
                fail(f"{label} must be an array of {_DOC_TYPES[self.items]}s, got {value!r}")
        if self.type in (int, float):
            if self.finite and not math.isfinite(value):
                fail(f"{label} must be a finite number, got {value!r}")
            if self.low is not None and (value <= self.low if self.low_open else value < self.low):
                fail(f"{label} must be {'>' if self.low_open else '>='} {self.low:g}, got {value!r}")
            if self.high is not None and (value >= self.high if self.high_open else value > self.high):
                fail(f"{label} must be {'<' if self.high_open else '<='} {self.high:g}, got {value!r}")
            if self.type is float:
                value = float(value)
        if self.type is str and self.choices is None and not value.strip():
            fail(f"{label} must be a non-empty string")
        allowed = self.allowed()
        if allowed is not None and value not in allowed:
            fail(f"{label + ': ' if where else ''}unknown {self.noun or name} {value!r}"
                 f"{did_you_mean(value, allowed)}; allowed: " + ", ".join(map(str, allowed))
                 + (f" ({self.hint})" if self.hint else ""))
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


# ---------------------------------------------------------------------------- settings records


def knob(default: Any, doc: str, *, low: float | None = None, high: float | None = None, low_open: bool = False,
         high_open: bool = False, choices: Sequence | Callable[[], Sequence] | None = None,
         cap: float | None = None, old: str | None = None, traced: bool = False) -> Any:
    """A record field with its documentation and constraints (``dataclasses.field``
    whose metadata holds its :class:`Field`; the name and type are the dataclass
    field's, filled in by :func:`fields`).

    Args:
        default: the default value (immutable).
        doc: what the field does, and the default's reason where it has one.
        low, high, low_open, high_open, choices, cap, old, traced: as in :class:`Field`
            (``traced=True``: a number that only enters arithmetic inside the programs,
            never a count, a shape or a Python branch there).
    """
    spec = Field("", object, doc, default=default, choices=choices, low=low, high=high, low_open=low_open,
                 high_open=high_open, cap=cap, old=old, traced=traced)
    return dataclasses.field(default=default, metadata=types.MappingProxyType({"field": spec}))


@functools.lru_cache(maxsize=None)
def fields(cls) -> tuple:
    """The :class:`Field` of every field of the record class ``cls``, in order (fields
    without :func:`knob` metadata are records themselves and are left out)."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if "field" not in f.metadata:
            continue
        hint = hints[f.name]
        args = typing.get_args(hint) if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union \
            else (hint,)
        kind = next(t for t in (bool, int, float, str) if t in args)
        out.append(dataclasses.replace(f.metadata["field"], name=f.name, type=kind, nullable=type(None) in args,
                                       default=f.default))
    return tuple(out)


def is_array(value) -> bool:
    """An array or a tracer in place of a Python number (not a NumPy scalar, which is one)."""
    return hasattr(value, "dtype") and not isinstance(value, (int, float))


def check(record, prefix: str = "") -> None:
    """Check every :func:`knob` field of ``record`` (:meth:`Field.check`: type, range,
    choices) and make integers given for ``float`` fields floats. Raises ValueError
    naming ``prefix + name`` (e.g. ``fit.restarts``). A traced field holding an array (a
    tracer inside a program) is left as it is: it was checked when the record was built
    from numbers."""
    for k in fields(type(record)):
        value = getattr(record, k.name)
        if k.traced and is_array(value):
            continue
        checked = k.check(value, name=prefix + k.name)
        if checked is not value:
            object.__setattr__(record, k.name, checked)


def traced_fields(cls) -> tuple:
    """The names of the record class ``cls``'s pytree leaves: its ``traced`` knobs and
    its fields that are records themselves (made by :func:`record`)."""
    return getattr(cls, "__knob_data__", ())


def record(cls):
    """Register the frozen dataclass ``cls`` as a pytree (a class decorator, after
    ``@dataclasses.dataclass(frozen=True)``). Its leaves (data) are its ``traced`` knobs
    and its fields that are records made by this decorator; the rest is structure, the
    static part that ``jax.jit`` keys its programs on (a record field of a class not made
    by this decorator is structure too, compared and hashed whole).

    A record rebuilt from leaves (inside a program: tracers) is not re-checked and skips
    ``__post_init__``: its checks ran when it was built from numbers."""
    import jax  # here: this module's records are declared by every layer, jax only for pytrees

    hints = typing.get_type_hints(cls)
    by_name = {k.name: k for k in fields(cls)}
    data, meta = [], []
    for f in dataclasses.fields(cls):
        if f.name in by_name:
            (data if by_name[f.name].traced else meta).append(f.name)
        else:  # a record made by this decorator, or a pytree field marked traced (the rules' options)
            is_data = getattr(hints.get(f.name), "__knob_data__", None) is not None or f.metadata.get("traced")
            (data if is_data else meta).append(f.name)
    data, meta = tuple(data), tuple(meta)

    def flatten_with_keys(r):
        return ([(jax.tree_util.GetAttrKey(n), getattr(r, n)) for n in data],
                tuple(getattr(r, n) for n in meta))

    def flatten(r):
        return [getattr(r, n) for n in data], tuple(getattr(r, n) for n in meta)

    def unflatten(aux, children):
        r = object.__new__(cls)
        for n, v in zip(data, children):
            object.__setattr__(r, n, v)
        for n, v in zip(meta, aux):
            object.__setattr__(r, n, v)
        return r

    jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)
    cls.__knob_data__ = data
    return cls


def replace(record, **changes):
    """A copy of ``record`` with some fields changed; a field that is itself a record
    takes a record or a dict of its own fields (merged over its current value)."""
    for name, value in list(changes.items()):
        current = getattr(record, name, None)
        if isinstance(value, dict) and dataclasses.is_dataclass(current):
            changes[name] = replace(current, **value)
    return dataclasses.replace(record, **changes)
