"""Named records in one table each: the registry shared by the decision rules
(:data:`mumbo_jax.bo.rules.RULES`), the batch rules (:data:`mumbo_jax.bo.batch.BATCH_RULES`),
the recommendation rules (:data:`mumbo_jax.bo.incumbent.INCUMBENT_RULES`), the benchmark
problems (:data:`mumbo_jax.benchmarks.problems.PROBLEMS`) and the GP models
(:data:`mumbo_jax.gp.models.MODELS`, whose records are classes named by ``kind``).

A :class:`Registry` maps a name to a record (a frozen dataclass with a ``name``, or a
class named by a class attribute), in registration order. ``register(record)`` adds one
at run time; the config schema's choices, ``mumbo-jax list`` and the settings' checks read the table when they run, and a
:class:`Names` view (tuple-like: ``in``, iteration, ``len``, indexing, ``==`` with a
tuple) lists the names of the records that satisfy a predicate, recomputed at every use,
so a rule registered after import appears in every view. A registry with an
``entry_point_group`` imports the plug-ins of that group (installed packages) the first
time a name outside the table is looked up or the table is listed: each entry point
names a module that registers its records on import, or a record itself.

A name means one record for the life of the process: compiled programs are cached by the
settings, which name the record. Registering the same record again is a no-op (a module
imported twice); another record under a taken name is a ValueError.

This module imports nothing from the package, so every layer (``gp``, ``bo``,
``benchmarks``) keeps its table with it.
"""

from __future__ import annotations

import re
import types
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Iterable, Iterator

__all__ = ["Registry", "Names", "check_name", "frozen_options"]

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
        record_type: the class every registered record must be (with ``classes``, the
            class every registered record must subclass).
        records: the built-in records (they cannot be unregistered).
        key: the attribute that names a record (``"name"``; the models' ``"kind"``).
        classes: the records are classes (subclasses of ``record_type``), not instances.
        entry_point_group: the group of installed packages' plug-ins, loaded on first
            use (module docstring); ``None``: none.
    """

    def __init__(self, kind: str, record_type: type, records: Iterable = (), *, key: str = "name",
                 classes: bool = False, entry_point_group: str | None = None):
        self.kind = kind
        self.record_type = record_type
        self.key = key
        self.classes = classes
        self.entry_point_group = entry_point_group
        self._plugins_loaded = entry_point_group is None
        self._records: dict[str, Any] = {}
        for r in records:
            self.register(r)
        self._builtin = frozenset(self._records)

    def _load(self) -> None:
        """Import the plug-ins on first use (a subclass may add its own sources first)."""
        if self._plugins_loaded:
            return
        self._plugins_loaded = True  # before importing: the modules register through this table
        try:
            from importlib.metadata import entry_points
            plugins = entry_points(group=self.entry_point_group)
        except Exception:  # a broken distribution's metadata must not hide the built-in records
            plugins = ()
        for ep in plugins:
            try:
                got = ep.load()
                if self._is_record(got):
                    self.register(got)
            except Exception as e:  # a broken plug-in is reported, the others still load
                warnings.warn(f"mumbo_jax: {self.kind} plug-in {ep.name!r} ({ep.value}) failed to load: {e}",
                              RuntimeWarning, stacklevel=3)

    def _is_record(self, record) -> bool:
        if self.classes:
            return isinstance(record, type) and issubclass(record, self.record_type)
        return isinstance(record, self.record_type)

    def __getitem__(self, name: str):
        if name not in self._records:
            self._load()
        return self._records[name]

    def __contains__(self, name) -> bool:
        try:
            if name in self._records:
                return True
        except TypeError:  # an unhashable "name"
            return False
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
        """Add ``record`` under its name (``record.<key>``) and return it (see the module
        docstring)."""
        if not self._is_record(record):
            what = f"a subclass of {self.record_type.__name__}" if self.classes else f"a {self.record_type.__name__}"
            got = f"class {record.__name__}" if isinstance(record, type) else type(record).__name__
            raise TypeError(f"register expects {what}, got {got}")
        name = getattr(record, self.key)
        if self.classes:
            check_name(name, self.kind)
        old = self._records.get(name)
        if old is not None:
            if old is record or old == record:
                return old
            raise ValueError(f"a {self.kind} named {name!r} is already registered; choose another name")
        self._records[name] = record
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
