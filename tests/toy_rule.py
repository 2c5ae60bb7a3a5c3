r"""A toy decision rule with one knob, written as a user would write one: this file and
its test (tests/test_toy_rule.py) are all it takes; nothing else in the library changes.

``variance_reduction``: the reduction of the posterior variance of the target g(x) that
observing y at (x, z) would bring, raised to the knob ``power``, per unit cost:

    alpha(x, z) = (Var g(x) - Var(g(x) | y(x, z)))^power = (Cov(g(x), y)^2 / Var y)^power.

``power`` < 1 shrinks the differences between candidates, so the division by cost
weighs more and cheap fidelities win more often; ``power`` > 1 the reverse.
"""

import jax
import jax.numpy as jnp

from mumbo_jax.bo.rules import Context, Rule, register
from mumbo_jax.gp import marginal, moments


def variance_reduction(post, target, power, x, z):
    """``[M]`` (Cov(g, y)^2 / Var y)^power at ``x [M, d]``, ``z [M]`` (units of y^2)."""

    def one(p):
        m = moments.joint_moments(p, x, z, target)
        return jnp.square(m.cov) / m.var_y

    reduction = marginal.mean_over_samples(one, post)
    return jnp.power(jnp.maximum(reduction, 1e-300), power)


def acquisition(ctx: Context):
    return jax.tree_util.Partial(variance_reduction, ctx.post, ctx.task.target, float(ctx.options["power"]))


VARIANCE_REDUCTION = register(Rule(
    "variance_reduction", acquisition, space="all", options={"power": 1.0},
    summary="the drop in Var g(x) from observing y(x, z), to a power, per unit cost (a toy rule)",
))
