"""64-bit floats for the library's own drivers, without touching the global flag.

The numerical core needs float64 (:mod:`mumbo_jax.gp.precision`). The drivers that own
a whole computation (:func:`mumbo_jax.run.tune.tune`, ``resume``,
:func:`mumbo_jax.run.runner.run_config`, :func:`mumbo_jax.run.compare.run_compare`) run
inside ``jax.enable_x64(True)`` (JAX's thread-local context) and leave the process-wide
``jax_enable_x64`` flag as the caller set it; objects a user keeps and calls later
(:class:`mumbo_jax.bo.asktell.AskTell`) check the flag when they are constructed instead.
"""

from __future__ import annotations

import functools

__all__ = ["with_x64"]


def with_x64(fn):
    """Decorate ``fn`` to run inside ``jax.enable_x64(True)`` (the global flag is left
    unchanged; the context is thread-local)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import jax

        with jax.enable_x64(True):
            return fn(*args, **kwargs)

    return wrapper
