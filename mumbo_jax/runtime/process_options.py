"""The process-wide behaviours the library leaves off until its caller switches them on.

Importing :mod:`mumbo_jax` and driving :class:`~mumbo_jax.bo.asktell.AskTell` or
:func:`~mumbo_jax.bo.compiled.run_compiled` changes nothing in the process beyond the
programs they compile: JAX's configuration, its caches and the thread count stay as the
user left them. Four behaviours make the library's own processes faster, and each touches
something the whole process shares, so each is opt-in:

* the persistent compilation cache (:func:`mumbo_jax.runtime.compilation_cache.enable`): sets
  JAX's cache folder and resets JAX's cache;
* the faster-compiling XLA CPU options on the library's programs
  (:func:`mumbo_jax.runtime.xla_options.enable`);
* compiling the next buffer size on a background thread (:func:`mumbo_jax.runtime.prefetch.enable`:
  ask/tell's default becomes on; ``run_compiled``'s stays off);
* clearing JAX's in-memory programs when the process nears the kernel's memory-map limit
  (:func:`mumbo_jax.runtime.programs.enable`).

:func:`enable` switches all four on. Every ``mumbo-jax`` command (``run``, ``compare`` and
its worker processes, ``tune``, ``resume``) and the benchmark scripts call it first; a
script that wants their speed calls it too::

    import mumbo_jax.runtime.process_options

    mumbo_jax.runtime.process_options.enable()
"""

from __future__ import annotations

__all__ = ["enable", "disable"]


def enable(cache: bool = True, compile_options: bool = True, prefetch: bool = True,
           release_programs: bool = True, min_compile_time_s: float | None = None) -> dict:
    """Switch on the process-wide behaviours named (all by default).

    Args:
        cache: JAX's persistent compilation cache (``$MUMBO_JAX_CACHE``, default
            ``~/.cache/mumbo-jax/xla``; ``off`` keeps it off; a folder the user set for
            JAX is kept).
        compile_options: the library's XLA compile options (``$MUMBO_JAX_XLA_OPTIONS``).
        prefetch: each driver's own prefetch default (``$MUMBO_JAX_PREFETCH``).
        release_programs: clearing JAX's caches near the memory-map limit.
        min_compile_time_s: the cache's ``jax_persistent_cache_min_compile_time_secs``
            (None keeps JAX's; the CLI passes 0).

    Returns:
        ``{"cache": folder or None, "compile_options": options or None, "prefetch": bool,
        "release_programs": bool}``: what is in force for the switches named.
    """
    from mumbo_jax.runtime import compilation_cache, xla_options
    from mumbo_jax.runtime import prefetch as prefetch_module
    from mumbo_jax.runtime import programs

    out = {}
    if cache:
        out["cache"] = compilation_cache.enable(min_compile_time_s=min_compile_time_s)
    if compile_options:
        out["compile_options"] = xla_options.enable()
    if prefetch:
        prefetch_module.enable()
        out["prefetch"] = True
    if release_programs:
        programs.enable()
        out["release_programs"] = True
    return out


def disable() -> None:
    """Switch the compile options, prefetch defaults and program release back off (for
    programs compiled from now on). JAX's cache folder, once set, stays: JAX reads it at
    its first compilation."""
    from mumbo_jax.runtime import xla_options
    from mumbo_jax.runtime import prefetch, programs

    xla_options.disable()
    prefetch.disable()
    programs.disable()
