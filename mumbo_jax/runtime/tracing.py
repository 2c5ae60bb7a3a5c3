"""Whether values are known now: the one test the library's checks use before they look at
an array's values.

Inside ``jax.jit``, ``vmap``, ``grad`` or ``lax.scan`` the arguments are tracers,
abstract stand-ins with a shape and a dtype but no values; checks that read values
(finite, positive, in range) run on concrete inputs only, so that the same entry points
trace unchanged.
"""

from __future__ import annotations

import jax

__all__ = ["is_concrete"]


def is_concrete(*values) -> bool:
    """True when no leaf of ``values`` (arrays, scalars, ``None`` or pytrees of them) is a
    JAX tracer, so that their values can be read (``np.asarray``) now."""
    return not any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(values))
