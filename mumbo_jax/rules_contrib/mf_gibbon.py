r"""Sequential multi-fidelity GIBBON: the rule ``mf_gibbon``.

GIBBON (Moss, Leslie, Gonzalez & Rayson 2021, JMLR 22(235)) bounds the information an
observation y = f(x, z) + eps carries about the max value g* of the target from below,
replacing MUMBO's extended-skew-Gaussian entropy by the entropy of a Gaussian of the
same variance (the largest entropy at that variance). For one candidate (q = 1), per
sample of g* (the same (gamma, rho) as MUMBO, paper eq. 4 of Moss et al. 2020):

    gamma = (g* - mu_g(x)) / sigma_g(x),      rho = Corr(y(x, z), g(x)),
    m = phi(gamma) / Phi(gamma),
    Q(gamma, rho) = -1/2 log(1 - rho^2 m (gamma + m))          (nats, >= 0),
    alpha(x, z) = (1/N) sum_{g*} Q(gamma, rho),

and the rule maximises alpha(x, z) / cost(x, z) over X x Z, as MUMBO does. This is
BoTorch's ``qMultiFidelityLowerBoundMaxValueEntropy`` at q = 1 (the mean over g*
outside the logarithm). 1 - m (gamma + m) = Var(theta | theta <= gamma) is the
truncated normal's variance, so Q = -1/2 log(Var(y | g <= g*) / Var(y)); for every g*
sample 0 <= Q <= MUMBO's gain, with equality at rho = 0 and the gap -> 0 relative to
the gain as gamma -> +inf (the truncation stops mattering). Closed form: no quadrature,
about the cost of MES per candidate.

The maths lives in :mod:`mumbo_jax.acquisition.gibbon` (the batch form's per-point term,
:func:`mumbo_jax.acquisition.gibbon.gibbon_quality`, numerically stable for gamma down
to -1e100 and |rho| -> 1); this module only wraps it as a rule and registers it through
the public API (:func:`mumbo_jax.bo.rules.register`).
"""

from __future__ import annotations

import jax

from mumbo_jax.acquisition import gibbon
from mumbo_jax.bo.rules import Context, Rule, register
from mumbo_jax.gp import marginal, moments, posterior

__all__ = ["mf_gibbon_gain", "MF_GIBBON"]


def _gain(post, target, gstar, x, z):
    m = moments.joint_moments(post, x, z, target)
    return gibbon.gibbon_quality(m.mu_g, m.var_g, m.mu_y, m.var_y, m.cov, gstar)


def mf_gibbon_gain(post: posterior.Posterior, target: posterior.Target, gstar, x, z):
    r"""GIBBON's lower bound on the information about g* of observing y at (x, z).

    Args:
        post: the posterior (a stacked posterior of hyper-parameter samples averages
            the per-sample gains, as MUMBO does, with ``gstar [S, N]``).
        target: what g is.
        gstar: ``[N]`` max-value samples (units of y).
        x: ``[M, d]`` inputs in the search box; z: ``[M]`` fidelities.

    Returns:
        ``[M]`` mean over g* of -1/2 log(1 - rho^2 m (gamma + m)), nats; finite and
        >= 0 everywhere.
    """
    return marginal.mean_over_samples(lambda p, g: _gain(p, target, g, x, z), post, gstar)


def _acquisition(ctx: Context):
    return jax.tree_util.Partial(mf_gibbon_gain, ctx.post, ctx.task.target, ctx.gstar)


MF_GIBBON = register(Rule(
    "mf_gibbon", _acquisition, space="all", uses_gstar=True,
    summary="GIBBON's lower bound on the information about g* per unit cost, over X x Z (Moss et al. 2021)",
))
