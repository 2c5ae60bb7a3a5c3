"""The incumbent: the evaluated x with the best posterior mean of the target g.

The BO layer's view of :func:`mumbo_jax.gp.posterior.incumbent` (the one copy): both
loops record it after every fit.
"""

from __future__ import annotations

from mumbo_jax.gp import posterior

__all__ = ["evaluated_inputs", "incumbent"]


def evaluated_inputs(post: posterior.Posterior):
    """``[n, d]`` evaluated inputs in box units: :func:`mumbo_jax.gp.posterior.evaluated_inputs`."""
    return posterior.evaluated_inputs(post)


def incumbent(post: posterior.Posterior, target: posterior.Target):
    """``(index, value)`` of the best posterior mean of g at an evaluated x
    (:func:`mumbo_jax.gp.posterior.incumbent`).

    Index the drivers' own buffers with ``index`` to get the evaluated x exactly."""
    return posterior.incumbent(post, target)
