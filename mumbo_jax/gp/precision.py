"""The library's one precision rule: the numerical core runs in float64.

JAX defaults to float32. In float32 the GP fits reach other optima, small-noise Gram
matrices fail to factorise, the max-value samples move (g* 1.987 instead of 2.015 on one
test problem) and MUMBO's Simpson-filled table overflows; none of that is an error JAX
reports. So every numerical entry point of :mod:`mumbo_jax.gp` and
:mod:`mumbo_jax.acquisition` calls :func:`require_x64` first and raises
:class:`PrecisionError` with the one line that fixes it. The library never flips the
global flag itself (as tinygp and optax, it leaves that to the program that imports it);
``bo/`` and ``run/`` call :func:`require_x64` at their own entry points, and the CLI
enables x64 before it does anything.

The check reads JAX's configuration (thread-local: ``with jax.enable_x64(True):`` counts)
and costs nothing under ``jit``: it runs once, when the function is traced.
"""

from __future__ import annotations

import jax

__all__ = ["PrecisionError", "X64_FIX", "x64_enabled", "require_x64"]

X64_FIX = "jax.config.update('jax_enable_x64', True)"


class PrecisionError(RuntimeError):
    """JAX runs in 32-bit mode, which mumbo-jax's numerics do not support."""


def x64_enabled() -> bool:
    """Whether JAX currently creates float64 arrays (the global flag or an enclosing
    ``jax.enable_x64(True)`` context)."""
    return bool(jax.config.jax_enable_x64)


def require_x64(where: str = "using mumbo-jax") -> None:
    """Raise :class:`PrecisionError` unless 64-bit floats are enabled.

    Args:
        where: what the caller was about to do, completing the sentence "call ... before
            <where>", e.g. ``"calling mumbo_gain"``.

    Raises:
        PrecisionError: saying exactly what to do: ``jax.config.update('jax_enable_x64',
            True)`` at the start of the program, before any JAX array is created.
    """
    if not x64_enabled():
        raise PrecisionError(
            f"mumbo-jax needs 64-bit floats: call {X64_FIX} before {where} (at the start of "
            "your program, before creating any JAX arrays); in float32 its fits, max-value "
            "samples and gains come out silently wrong"
        )
