"""A decision rule with one knob, from docs/howto/write-a-rule.md: ``toy_sd`` scores x by
the posterior standard deviation of the target g at x, times the knob ``scale``, at the
target fidelity (pure exploration; a toy). ``toy_sd_wide`` is the same rule with
``scale = 2``, a variant under its own name; a run sets another value with
``[settings.options.toy_sd] scale = 3`` (``BOSettings(options={"toy_sd": {"scale": 3.0}})``)."""

import jax
import jax.numpy as jnp

import mumbo_jax as mj


def sd_score(post, target, scale, x, z):
    """``[M]``: ``scale`` times the sd of g at ``x [M, d]`` (box units; ``z`` is the target)."""

    def one(p):
        _, var = mj.target_moments(p, x, target)
        return jnp.sqrt(var)

    return scale * mj.mean_over_samples(one, post)  # a stacked posterior: the mean over its samples


def acquisition(ctx: mj.Context):
    return jax.tree_util.Partial(sd_score, ctx.post, ctx.task.target, float(ctx.options["scale"]))


TOY_SD = mj.register_rule(mj.Rule(
    "toy_sd", acquisition, space="target", single_target=True,
    options={"scale": mj.rule_option(1.0, "The factor on the sd of g.", low=0, low_open=True)},
    summary="the posterior sd of g at the target fidelity, times a knob (a toy rule)",
))
TOY_SD_WIDE = mj.register_rule(TOY_SD.with_options(name="toy_sd_wide", scale=2.0))
