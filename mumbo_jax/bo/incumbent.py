"""The incumbent: the evaluated x with the best posterior mean of the target g.

The one copy of this computation in the BO layer: both loops record it after every
fit, and EI / MT-EI use its value as their threshold eta.
"""

from __future__ import annotations

import jax.numpy as jnp

from mumbo_jax.gp import posterior

__all__ = ["evaluated_inputs", "incumbent"]


def evaluated_inputs(post: posterior.Posterior):
    """``[n, d]`` the posterior's training inputs back in the units of the search box
    (the posterior keeps them on the unit cube); padding rows included."""
    return post.scaling.x_lower + post.scaling.x_width * post.x


def incumbent(post: posterior.Posterior, target: posterior.Target):
    """``(index, value)``: the buffer row of the evaluated x with the best posterior
    mean of g (padding excluded by the mask) and that mean (units of y).

    Index the drivers' own buffers with ``index`` to get the evaluated x exactly."""
    mu, _ = posterior.target_moments(post, evaluated_inputs(post), target)
    mu = jnp.where(post.mask > 0, mu, -jnp.inf)
    i = jnp.argmax(mu)
    return i, mu[i]
