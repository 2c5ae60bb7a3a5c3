"""Compiled programs held in memory, kept under the kernel's limit on memory maps.

XLA's CPU backend maps memory for the machine code of every program it compiles: about
1,100 maps for one buffer size's programs of the default rule (fit, g*, maximiser,
recommendation; Hartmann-3; about 2,100 under XLA's default compile options,
:mod:`mumbo_jax.runtime.xla_options`). Linux allows a process ``vm.max_map_count`` maps (65,530 by
default); past it, a memory map fails inside XLA's compiler and the process dies of a
segmentation fault. A run that grows to a thousand points compiles two dozen buffer
sizes, and a process that runs many configurations (a sweep, a test session) keeps every
program it ever compiled, so both can reach it.

The drivers call :func:`on_buffer_size` whenever they make buffers; when the size is new
to the process and the process holds more than :data:`MAP_SHARE` of its limit, JAX's
in-memory caches are cleared (:func:`jax.clear_caches`): the programs still in use
compile again, or load from the persistent cache (:mod:`mumbo_jax.runtime.compilation_cache`).
Results do not change. Where ``/proc`` does not exist (not Linux) nothing is counted.

Clearing JAX's caches drops the user's compiled programs too, so it is off unless switched
on (:func:`enable`; the CLI and the benchmark scripts do, through
:func:`mumbo_jax.runtime.process_options.enable`). Off, a crowded process gets one
``RuntimeWarning`` that names :func:`enable` and nothing is cleared.
"""

from __future__ import annotations

import warnings

import jax

__all__ = ["MAP_SHARE", "enable", "disable", "enabled", "maps_in_use", "map_limit", "release_if_crowded",
           "on_buffer_size"]

MAP_SHARE = 0.5  # clear the compiled programs past this share of vm.max_map_count
_last_size: list = [None]  # the last buffer size seen (a new one triggers the check)
_warned: list = [False]
_enabled: list = [False]  # whether on_buffer_size may clear JAX's caches (enable)


def enable() -> None:
    """Let :func:`on_buffer_size` clear JAX's in-memory caches when the process is crowded."""
    _enabled[0] = True


def disable() -> None:
    """Back to the default: never clear them, warn once instead."""
    _enabled[0] = False


def enabled() -> bool:
    """Whether :func:`enable` is in force."""
    return _enabled[0]


def maps_in_use() -> int | None:
    """Memory maps of this process (lines of ``/proc/self/maps``), or None without /proc."""
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return None


def map_limit() -> int | None:
    """``vm.max_map_count``, or None where it cannot be read."""
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def release_if_crowded(share: float = MAP_SHARE, maps: int | None = None, limit: int | None = None,
                       clear: bool = True) -> bool:
    """Clear JAX's in-memory caches if this process holds more than ``share`` of its
    memory-map limit; returns whether it is crowded. ``maps`` and ``limit`` default to
    :func:`maps_in_use` and :func:`map_limit` (given for tests). ``clear=False`` only
    warns (once per process, as the clearing does), naming :func:`enable`."""
    maps = maps_in_use() if maps is None else maps
    limit = map_limit() if limit is None else limit
    if maps is None or not limit or maps <= share * limit:
        return False
    if clear:
        jax.clear_caches()
    if not _warned[0]:
        _warned[0] = True
        head = (f"mumbo-jax: this process holds {maps} memory maps, over {share:.0%} of the system's limit "
                f"({limit}, vm.max_map_count), most of them compiled programs")
        tail = (": cleared JAX's compiled programs (those still in use compile again or load from the persistent "
                "cache)" if clear else "; past the limit XLA's compiler fails. jax.clear_caches() drops them, and "
                "mumbo_jax.runtime.programs.enable() lets the library do so as a run grows")
        warnings.warn(head + tail, RuntimeWarning, stacklevel=3)
    return True


def on_buffer_size(size: int) -> None:
    """Called by the drivers when they make buffers of ``size`` rows: a size new to the
    process (a run grew, or a new run began) triggers :func:`release_if_crowded`, which
    clears only once :func:`enable` is in force (otherwise it warns)."""
    if size != _last_size[0]:
        _last_size[0] = size
        release_if_crowded(clear=_enabled[0])
