"""Compiling the next buffer size's programs while the run goes on at this one.

Every buffer size compiles its own programs (the fit, g*, the maximisation, the
recommendation; 10-14 s on one CPU core), and a run waits for them each time its data
outgrow the buffer. The drivers hand a :class:`Prefetcher` a ``warm`` function that
calls those programs once on the current data padded to the next size; it runs on a
background thread, so the compilation overlaps the decisions made at this size and,
above all, the black box's evaluations. When the run reaches that size, JAX finds the
programs compiled (the driver first waits for the warm-up to end, so a program is
never compiled twice). The programs are the same, so the decisions are the same to
the last bit; the warm-up's results are thrown away. Ask/tell also compiles the first BO
step's programs while the initial design is evaluated (on the design's points with
stand-in values: the programs depend on the shapes only).

What it costs: the background compile takes CPU time and, while it traces, Python's
lock, so the decisions made meanwhile run slower. It pays where the process waits for a
black box between decisions: ask/tell (:class:`mumbo_jax.bo.asktell.AskTell`,
``mumbo-jax tune``). Where the black box is a formula evaluated inside the process
(``run_compiled``, ``mumbo-jax run``) nothing waits, and on two cores the run took as
long with it as without (docs/performance.md). A run that ends before the next size has
compiled it for nothing (at most one size per run; ``run_compiled`` skips a size its
budget or ``max_evals`` cannot reach).

A library user's process starts no thread unless it asks for one: ``prefetch=True``
(a driver's argument), ``$MUMBO_JAX_PREFETCH=on``, or :func:`enable`, which makes each
driver's own default apply (on for ask/tell, off for ``run_compiled``). The CLI calls
:func:`enable` (through :func:`mumbo_jax.runtime.process_options.enable`), so ``mumbo-jax tune``
compiles ahead and ``mumbo-jax run`` does not.

``$MUMBO_JAX_PREFETCH``: ``auto`` (the default: each driver's default once
:func:`enable` is in force, off before), ``on`` or ``off``; a driver's ``prefetch=``
argument overrides it.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from typing import Callable

import jax

__all__ = ["ENV", "mode", "enable", "disable", "prefetch_enabled", "Prefetcher"]

ENV = "MUMBO_JAX_PREFETCH"
_MODES = ("auto", "on", "off")
_log = logging.getLogger(__name__)
_threads: list[threading.Thread] = []  # warm-ups still running: joined at exit (see _join_all)
_joined_at_exit: list = [False]  # whether _join_all is registered with atexit
_drivers_default: list = [False]  # whether "auto" means each driver's default (enable) or off


def mode(environ=None) -> str:
    """``auto``, ``on`` or ``off`` from ``$MUMBO_JAX_PREFETCH`` (default ``auto``); any
    other value is a ValueError that names the variable."""
    environ = os.environ if environ is None else environ
    value = environ.get(ENV, "auto").strip().lower() or "auto"
    if value not in _MODES:
        raise ValueError(f"{ENV}={environ[ENV]!r}: expected one of {', '.join(_MODES)}")
    return value


def enable() -> None:
    """Let each driver's default apply where prefetching is not asked for nor refused
    (``prefetch=None`` and ``$MUMBO_JAX_PREFETCH`` unset or ``auto``)."""
    _drivers_default[0] = True


def disable() -> None:
    """Back to the default: no driver prefetches unless asked to."""
    _drivers_default[0] = False


def prefetch_enabled(requested: bool | None, default: bool) -> bool:
    """Whether a driver prefetches: ``requested`` if given, else ``$MUMBO_JAX_PREFETCH``
    (``auto``: the driver's ``default`` once :func:`enable` is in force, else off)."""
    if requested is not None:
        if not isinstance(requested, bool):
            raise ValueError(f"prefetch must be True, False or None (the default), got {requested!r}")
        return requested
    m = mode()
    return (default and _drivers_default[0]) if m == "auto" else m == "on"


class Prefetcher:
    """At most one background warm-up at a time, one per buffer size.

    Args:
        on: whether :meth:`start` does anything (see :func:`prefetch_enabled`).
    """

    def __init__(self, on: bool):
        self.on = bool(on)
        self._started: set[int] = set()
        self._thread: threading.Thread | None = None
        self._size: int | None = None
        self.errors: list[tuple[int, BaseException]] = []  # (size, error) of warm-ups that failed

    def start(self, size: int, warm: Callable[[], object]) -> bool:
        """Run ``warm()`` (the programs of buffer ``size`` called once) on a background
        thread, unless prefetching is off, ``size`` was started before, or another
        warm-up is still running. Returns whether it started one."""
        if not self.on or size in self._started or self.busy:
            return False
        if not jax.config.jax_enable_x64:  # the programs would fail their x64 check: nothing to compile
            return False
        self._started.add(size)

        def body():
            try:
                jax.block_until_ready(warm())
            except Exception as err:  # the run compiles the program itself and raises there if it must
                self.errors.append((size, err))
                _log.debug("mumbo-jax: compiling buffer size %d in the background failed: %r", size, err)

        self._size = size
        if not _joined_at_exit[0]:  # registered at the first warm-up, not at import
            _joined_at_exit[0] = True
            atexit.register(_join_all)
        _threads[:] = [t for t in _threads if t.is_alive()]
        self._thread = threading.Thread(target=body, name=f"mumbo-jax-compile-{size}", daemon=True)
        _threads.append(self._thread)
        self._thread.start()
        return True

    @property
    def busy(self) -> bool:
        """Whether a warm-up is running."""
        return self._thread is not None and self._thread.is_alive()

    def wait(self, size: int | None = None) -> None:
        """Wait for the running warm-up (only if it is for ``size``, when given): the
        caller is about to use those programs, and JAX should not compile them twice."""
        if self._thread is not None and (size is None or size == self._size):
            self._thread.join()


def _join_all() -> None:
    # A warm-up still compiling when the interpreter exits would run inside XLA while its
    # static objects are destroyed; waiting costs at most one buffer size's compilation.
    for t in _threads:
        t.join()
