"""Named records in one table each: the registry shared by the decision rules
(:data:`mumbo_jax.bo.rules.RULES`), the batch rules (:data:`mumbo_jax.bo.batch.BATCH_RULES`)
and the recommendation rules (:data:`mumbo_jax.bo.incumbent.INCUMBENT_RULES`).

A :class:`Registry` maps a name to a frozen record (a dataclass with a ``name``), in
registration order. ``register(record)`` adds one at run time; the config schema's
choices, ``mumbo-jax list`` and the settings' checks read the table when they run, and a
:class:`Names` view (tuple-like: ``in``, iteration, ``len``, indexing, ``==`` with a
tuple) lists the names of the records that satisfy a predicate, recomputed at every use,
so a rule registered after import appears in every view.

A name means one record for the life of the process: compiled programs are cached by the
settings, which name the record. Registering the same record again is a no-op (a module
imported twice); another record under a taken name is a ValueError.
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Iterable, Iterator

__all__ = ["Registry", "Names", "check_name"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")  # one spelling per record: snake_case


def check_name(name, kind: str) -> None:
    """ValueError unless ``name`` is snake_case (lower-case letters, digits, ``_``)."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"{kind} name must be snake_case (lower-case letters, digits, '_'), got {name!r}")


def frozen_options(options, kind: str, name: str):
    """``options`` as a read-only mapping; ValueError unless it is a mapping with string
    keys (a record's own knobs: ``Rule.options``, ``BatchRule.options``)."""
    if not isinstance(options, Mapping) or not all(isinstance(k, str) for k in options):
        raise ValueError(f"{kind} {name!r}: options must be a mapping with string keys")
    return types.MappingProxyType(dict(options))


class Registry(Mapping):
    """``name -> record`` in registration order.

    Args:
        kind: what a record is, in messages (``"batch rule"``).
        record_type: the class every registered record must be.
        records: the built-in records (they cannot be unregistered).
    """

    def __init__(self, kind: str, record_type: type, records: Iterable = ()):
        self.kind = kind
        self.record_type = record_type
        self._records: dict[str, Any] = {}
        for r in records:
            self.register(r)
        self._builtin = frozenset(self._records)

    def _load(self) -> None:
        """Hook for records that are imported on first use (the decision rules' plug-ins)."""

    def __getitem__(self, name: str):
        if name not in self._records:
            self._load()
        return self._records[name]

    def __contains__(self, name) -> bool:
        if name in self._records:
            return True
        self._load()
        return name in self._records

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(tuple(self._records))

    def __len__(self) -> int:
        self._load()
        return len(self._records)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.kind}: {', '.join(self)})"

    def register(self, record):
        """Add ``record`` under ``record.name`` and return it (see the module docstring)."""
        if not isinstance(record, self.record_type):
            raise TypeError(f"register expects a {self.record_type.__name__}, got {type(record).__name__}")
        old = self._records.get(record.name)
        if old is not None:
            if old is record or old == record:
                return old
            raise ValueError(f"a {self.kind} named {record.name!r} is already registered; choose another name")
        self._records[record.name] = record
        return record

    def unregister(self, name: str):
        """Remove a registered record (not a built-in one) and return it; KeyError if
        absent. For tests and notebooks: a program compiled for it stays in JAX's cache,
        so do not register a different record under the same name afterwards."""
        if name in self._builtin:
            raise ValueError(f"{name!r} is a built-in {self.kind} and cannot be removed")
        return self._records.pop(name)

    def lookup(self, name: str, what: str | None = None):
        """The record called ``name``; ValueError (one line, listing the allowed names)
        if there is none. ``what`` names the setting in the message (default the kind)."""
        if name not in self:
            raise ValueError(f"unknown {what or self.kind} {name!r}; allowed: {', '.join(self)}")
        return self[name]


class Names(Sequence):
    """The names of ``registry``'s records that satisfy ``predicate(record)``, in table
    order, recomputed at every use (a live view; behaves as a tuple of str)."""

    def __init__(self, registry: Mapping, predicate: Callable[[Any], bool] = lambda r: True, doc: str = ""):
        self._registry = registry
        self._predicate = predicate
        self.__doc__ = doc

    def _names(self) -> tuple:
        return tuple(n for n, r in self._registry.items() if self._predicate(r))

    def __getitem__(self, i):
        return self._names()[i]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name) -> bool:
        return name in self._registry and self._predicate(self._registry[name])

    def __eq__(self, other) -> bool:
        if isinstance(other, (Names, tuple, list)):
            return self._names() == tuple(other)
        return NotImplemented

    __hash__ = None

    def __add__(self, other):
        return self._names() + tuple(other)

    def __radd__(self, other):
        return tuple(other) + self._names()

    def __repr__(self) -> str:
        return repr(self._names())
