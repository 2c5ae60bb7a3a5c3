"""The XLA options every program of the library compiles with, and the ``jit`` that applies them.

On a CPU, XLA's older code generator for fused loops (``xla_cpu_use_fusion_emitters=false``)
compiles the library's decision programs in about a third less time than the default one,
and they run as fast (docs/performance.md, "Compilation"). A BO run compiles its fit,
g* and maximisation once per buffer size, so this is time a user waits for at every new
size. The option is the CPU compiler's: where the backend does not know it (a GPU build
of JAX, or a later XLA that dropped it) the library compiles with XLA's defaults
(:func:`active_options`, probed once per backend).

The option is set per program (``jax.jit(..., compiler_options=...)``), not through
``XLA_FLAGS``: a user's own programs keep XLA's defaults, and the process's flags are left
alone. JAX accepts compile options only on the outermost ``jit`` of a program, so the
library's :func:`jit` holds two jitted versions of a function and calls the one with the
options only when no trace is active (a library function called inside the user's own
``jit``, ``vmap`` or ``grad``, or inside another library program, is traced as a plain
``jax.jit`` and compiles with the caller's options).

``MUMBO_JAX_XLA_OPTIONS=default`` (read at import) compiles the library's programs with
XLA's defaults too, to compare or to rule the option out. The two code generators round
differently, so fixed-seed decisions differ between them after some steps; a paired seed
study found the outcomes alike (docs/performance.md).
"""

from __future__ import annotations

import functools
import os

import jax
from jax._src import core as jax_core  # trace_state_clean: no public equivalent

__all__ = ["ENV", "FAST_COMPILE", "OPTIONS", "compiler_options", "active_options", "jit"]

ENV = "MUMBO_JAX_XLA_OPTIONS"
FAST_COMPILE = {"xla_cpu_use_fusion_emitters": False}


def compiler_options(environ=None) -> dict | None:
    """:data:`FAST_COMPILE`, or None (XLA's defaults) when ``$MUMBO_JAX_XLA_OPTIONS`` is
    ``default``. Any other value is an error that names the variable."""
    environ = os.environ if environ is None else environ
    value = environ.get(ENV, "fast").strip().lower()
    if value in ("", "fast"):
        return dict(FAST_COMPILE)
    if value == "default":
        return None
    raise ValueError(f"{ENV}={environ[ENV]!r}: expected 'fast' (the library's compile options) "
                     "or 'default' (XLA's defaults)")


def _top_level() -> bool:
    """Whether no JAX trace is active (the call compiles a program of its own)."""
    return jax_core.trace_state_clean()


_accepted: dict = {}  # backend -> whether its compiler knows OPTIONS (probed once)


def active_options() -> dict | None:
    """:data:`OPTIONS` where the default backend's compiler knows them, else None.

    Probed once per backend with a one-line program: the option is XLA's CPU compiler's
    (a GPU build of JAX answers "No such compile option"), and a later XLA may drop it."""
    if OPTIONS is None:
        return None
    backend = jax.default_backend()
    if backend not in _accepted:
        try:
            jax.jit(lambda v: v + 1, compiler_options=OPTIONS).lower(1).compile()
            _accepted[backend] = True
        except Exception as err:  # jax.errors.JaxRuntimeError: INVALID_ARGUMENT
            if "No such compile option" not in str(err):
                raise
            _accepted[backend] = False
    return OPTIONS if _accepted[backend] else None


def jit(fun=None, /, **jit_kwargs):
    """``jax.jit`` (same keyword arguments) with the library's compile options on the
    programs it compiles at the top level (where the backend knows them,
    :func:`active_options`). Usable as ``@jit`` and ``@functools.partial(jit, ...)``."""
    if fun is None:
        return functools.partial(jit, **jit_kwargs)
    nested = jax.jit(fun, **jit_kwargs)
    if OPTIONS is None:
        return nested
    top = jax.jit(fun, compiler_options=OPTIONS, **jit_kwargs)
    pick = lambda: top if _top_level() and active_options() is not None else nested

    @functools.wraps(fun)
    def call(*args, **kwargs):
        return pick()(*args, **kwargs)

    call.lower = lambda *args, **kwargs: pick().lower(*args, **kwargs)
    return call


#: the options :func:`jit` compiles with where the backend knows them (read once, at import)
OPTIONS = compiler_options()
