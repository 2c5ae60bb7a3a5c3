"""Compiled programs kept on disk: JAX's persistent compilation cache, switched on by :func:`enable`.

A BO run compiles its stages (fit, g*, maximisation) once per buffer size, tens of
seconds each on a CPU; a second process running the same problem loads them from the
cache instead. JAX's cache folder is process-wide configuration, so the library leaves it
alone unless asked: every command of the CLI and the benchmark scripts call
:func:`enable` (through :func:`mumbo_jax.runtime.process_options.enable`) before they compile
anything; a library user calls it to get the same (``AskTell`` and ``run_compiled`` do not):

* the folder is ``$MUMBO_JAX_CACHE``, default ``~/.cache/mumbo-jax/xla``;
* ``MUMBO_JAX_CACHE=off`` (or ``none``, ``false``, ``0``, empty) leaves JAX's
  configuration alone;
* a cache folder the user configured (``jax_compilation_cache_dir``, or JAX's
  ``JAX_COMPILATION_CACHE_DIR``) is kept: the library never moves it.

JAX keeps only programs without host callbacks, and only those that took at least
``jax_persistent_cache_min_compile_time_secs`` to compile (JAX's default 1 s unless
``min_compile_time_s`` is given, so a user's small programs do not fill the folder; 0 for
the CLI, whose processes run only the library's programs). A cached program is the same
executable: results do not change.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ENV", "default_dir", "cache_dir", "enable"]

ENV = "MUMBO_JAX_CACHE"
_OFF = ("", "0", "off", "none", "false")


def default_dir() -> Path:
    """``~/.cache/mumbo-jax/xla``."""
    return Path.home() / ".cache" / "mumbo-jax" / "xla"


def cache_dir(environ=None) -> str | None:
    """The folder named by ``$MUMBO_JAX_CACHE`` (:func:`default_dir` when unset), or None
    when it says off."""
    environ = os.environ if environ is None else environ
    value = environ.get(ENV, str(default_dir()))
    return None if value.strip().lower() in _OFF else value


def enable(min_compile_time_s: float | None = None) -> str | None:
    """Switch JAX's persistent compilation cache on in :func:`cache_dir`, unless it is
    off or a cache folder is already configured (the user's, or an earlier call's).

    Args:
        min_compile_time_s: if given, ``jax_persistent_cache_min_compile_time_secs``
            (programs compiled faster than this are not written); None keeps JAX's.

    Returns:
        The cache folder in use (the user's own if they set one), or None when off.
    """
    import jax

    configured = jax.config.jax_compilation_cache_dir
    if configured:
        return configured
    folder = cache_dir()
    if folder is None:
        return None
    jax.config.update("jax_compilation_cache_dir", folder)
    if min_compile_time_s is not None:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", float(min_compile_time_s))
    # JAX decides whether to use a cache at its first compilation and keeps that decision:
    # a user's program compiled before (making the task, say) would leave the cache off
    from jax.experimental.compilation_cache import compilation_cache as jax_cache

    jax_cache.reset_cache()
    return folder
