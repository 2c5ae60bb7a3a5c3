"""Cheap upper bounds of the rules' scores, for the maximiser's pruned scoring.

A rule's ``bound`` (:class:`mumbo_jax.bo.rules.Rule`) is ``b(x [M, d]) -> [M]``, at least
its score ``alpha(x, z)`` at every fidelity z; from
:data:`mumbo_jax.acquisition.maxvalue.PRUNE_FROM_ROWS` buffer rows
:func:`mumbo_jax.bo.optimize.pruned_scores` scores exactly only the candidates whose bound
can reach the best starts, so the maximiser makes the choice it makes without one. Both
bounds here evaluate the score at g's exact mean and at a variance it cannot exceed: g's
variance given the first :data:`mumbo_jax.acquisition.maxvalue.PRUNE_BOUND_ROWS` rows of
the data (:func:`mumbo_jax.gp.moments.target_moments_bound`), about
``(PRUNE_BOUND_ROWS / n)^2`` of an exact prediction's work.
"""

from __future__ import annotations

__all__ = ["BOUND_SLACK", "mes_bound", "ei_bound"]

from mumbo_jax.acquisition import acquisitions, baselines, maxvalue
from mumbo_jax.gp import marginal, moments

# relative allowance for rounding: the bicubic gain table's error, and the bound's mean
# taken by another path than the score's, are far below it
BOUND_SLACK = 1e-3


def mes_bound(post, target, gstar, x):
    """``[M]``: at least MUMBO's and MES's gain at ``x [M, d]`` at every fidelity
    (:func:`mumbo_jax.acquisition.acquisitions.mes_gain_bound`, which says why); the mean
    over a stacked posterior's samples."""
    def one(p, g):
        mean, var_bound = moments.target_moments_bound(p, x, target, maxvalue.PRUNE_BOUND_ROWS)
        return acquisitions.mes_gain_bound(mean, var_bound, g)
    return marginal.mean_over_samples(one, post, gstar) * (1.0 + BOUND_SLACK)


def ei_bound(post, target, eta, x):
    """``[M]``: at least the EI of g over ``eta`` at ``x [M, d]``
    (:func:`mumbo_jax.acquisition.baselines.ei_alpha`): EI grows with the variance at a
    given mean."""
    mean, var_bound = moments.target_moments_bound(post, x, target, maxvalue.PRUNE_BOUND_ROWS)
    return baselines.expected_improvement(mean, var_bound, eta) * (1.0 + BOUND_SLACK)
