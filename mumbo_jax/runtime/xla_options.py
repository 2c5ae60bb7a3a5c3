"""The XLA options the library's programs may compile with, and the ``jit`` that applies them.

On a CPU, XLA's older code generator for fused loops (``xla_cpu_use_fusion_emitters=false``)
compiles the library's decision programs in about a third less time than the default one,
and they run as fast (docs/performance.md, "Compilation"). A BO run compiles its fit,
g* and maximisation once per buffer size, so this is time a user waits for at every new
size.

Off unless switched on: a library user's process compiles every program with XLA's
defaults until :func:`enable` is called. The CLI (every ``mumbo-jax`` command) and the
benchmark scripts switch it on (:func:`mumbo_jax.runtime.process_options.enable`), so their runs
compile with the faster options. The option is the CPU compiler's: where the backend does
not know it (a GPU build of JAX, or a later XLA that dropped it) the library compiles with
XLA's defaults (:func:`active_options`, probed once per backend).

The option is set per program (``jax.jit(..., compiler_options=...)``), not through
``XLA_FLAGS``: a user's own programs keep XLA's defaults, and the process's flags are left
alone. JAX accepts compile options only on the outermost ``jit`` of a program, so the
library's :func:`jit` holds two jitted versions of a function and calls the one with the
options only when no trace is active (a library function called inside the user's own
``jit``, ``vmap`` or ``grad``, or inside another library program, is traced as a plain
``jax.jit`` and compiles with the caller's options). Whether a trace is active is JAX's
``trace_state_clean``, which JAX does not export: it is looked up when the options are
first used, and a JAX without it falls back on public checks (:func:`_top_level`).

``MUMBO_JAX_XLA_OPTIONS=default`` (read by :func:`enable`) keeps XLA's defaults even where
the options are switched on, to compare or to rule the option out. The two code generators
round differently, so fixed-seed decisions differ between them after some steps; a paired
seed study found the outcomes alike (docs/performance.md).
"""

from __future__ import annotations

import functools
import os

import jax

from mumbo_jax.runtime.tracing import is_concrete

__all__ = ["ENV", "FAST_COMPILE", "compiler_options", "enable", "disable", "active_options", "jit"]

ENV = "MUMBO_JAX_XLA_OPTIONS"
FAST_COMPILE = {"xla_cpu_use_fusion_emitters": False}

#: the options :func:`jit` compiles with where the backend knows them: None (XLA's defaults)
#: until :func:`enable`
OPTIONS: dict | None = None


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


def enable(environ=None) -> dict | None:
    """Compile the library's top-level programs from now on with :func:`compiler_options`
    (``$MUMBO_JAX_XLA_OPTIONS``). Programs compiled before keep theirs. Returns the
    options switched on (None: XLA's defaults)."""
    global OPTIONS
    OPTIONS = compiler_options(environ)
    return OPTIONS


def disable() -> None:
    """Back to XLA's defaults for the library's programs compiled from now on."""
    global OPTIONS
    OPTIONS = None


_trace_state_clean: list = []  # [JAX's trace_state_clean, or None where this JAX has none]


def _jax_trace_state_clean():
    if not _trace_state_clean:
        try:  # not exported by JAX: looked up only once the options are switched on
            from jax._src import core as jax_core

            _trace_state_clean.append(getattr(jax_core, "trace_state_clean", None))
        except ImportError:
            _trace_state_clean.append(None)
    return _trace_state_clean[0]


def _top_level(args=()) -> bool:
    """Whether no JAX trace is active (the call compiles a program of its own).

    JAX's ``trace_state_clean`` where this JAX has it; otherwise public checks: no
    argument is a tracer (``vmap``, ``grad``) and a new array is not one (``jit``,
    ``scan``, ``eval_shape`` stage every operation out)."""
    clean = _jax_trace_state_clean()
    if clean is not None:
        return clean()
    if not is_concrete(args):
        return False
    return is_concrete(jax.numpy.zeros(()))


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
    """``jax.jit`` (same keyword arguments) with the library's compile options, once
    switched on (:func:`enable`), on the programs it compiles at the top level (where the
    backend knows them, :func:`active_options`). Usable as ``@jit`` and
    ``@functools.partial(jit, ...)``."""
    if fun is None:
        return functools.partial(jit, **jit_kwargs)
    nested = jax.jit(fun, **jit_kwargs)
    tops: dict = {}  # options (as a sorted tuple) -> the jax.jit compiled with them

    def pick(args):
        if OPTIONS is None or not _top_level(args):
            return nested
        options = active_options()
        if options is None:
            return nested
        key = tuple(sorted(options.items()))
        if key not in tops:
            tops[key] = jax.jit(fun, compiler_options=options, **jit_kwargs)
        return tops[key]

    @functools.wraps(fun)
    def call(*args, **kwargs):
        return pick((args, kwargs))(*args, **kwargs)

    call.lower = lambda *args, **kwargs: pick((args, kwargs)).lower(*args, **kwargs)
    return call
