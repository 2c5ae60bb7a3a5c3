"""A recommendation that never points where evaluations fail.

The recommendation rules (:mod:`mumbo_jax.bo.incumbent`) read a model of the successful
evaluations alone, which knows nothing of where evaluations fail: its believed optimum
can lie inside a failing region (an objective that diverges for large learning rates,
with its unconstrained optimum among them). :func:`checked` vets the rule's x against
the failures told to an :class:`~mumbo_jax.bo.asktell.AskTell`
(:meth:`~mumbo_jax.bo.asktell.AskTell.tell_failure`):

* x within ``BOX_TOL`` of the box width of a failed x (at any fidelity), or
* the failure classifier (:meth:`~mumbo_jax.bo.asktell.AskTell.failure_classifier`, a GP
  on +1 success / -1 failure) not sure of success at x at the target: its mean less
  :data:`SURE_SD` sd at or below 0 (stricter than the proposals' test, mean below 0: a
  proposal that fails costs one evaluation, a recommendation that fails costs the user's
  final run)

replaces it by the best successful point: the x evaluated at the target with the best
posterior mean of g (the ``"target"`` rule; every successful x while none is at the
target), with an :class:`UnsafeRecommendationWarning` that says so. The reason is kept
in ``AskTell.recommendation_note`` (``None`` when the rule's x stands).
"""

from __future__ import annotations

import warnings

import numpy as np

from mumbo_jax.bo import stages
from mumbo_jax.bo.asktell_checks import BOX_TOL
from mumbo_jax.gp import moments

__all__ = ["SURE_SD", "UnsafeRecommendationWarning", "checked", "unsafe_reason"]

SURE_SD = 2.0  # a recommended x needs the classifier's mean - SURE_SD sd above 0 (success)


class UnsafeRecommendationWarning(UserWarning):
    """The recommendation rule's x lies where evaluations fail: the best successful
    point is recommended instead."""


def unsafe_reason(opt, x) -> str | None:
    """Why ``x [d]`` must not be recommended by ``opt`` (an AskTell), or ``None``: it is a
    failed x, or the failure classifier is not sure of success there at the target."""
    if not opt.failed:
        return None
    b = np.asarray(opt.task.spec.bounds)
    tol = BOX_TOL * (b[:, 1] - b[:, 0])
    for fx, fz in opt.failed:
        if np.all(np.abs(np.asarray(fx) - x) <= tol):
            return f"an evaluation at x={list(map(float, fx))} (fidelity {fz}) failed"
    if not opt.y:
        return None
    z_target = float(np.asarray(opt.task.target_z).reshape(-1)[0])
    mean, var = moments.predict(opt.failure_classifier(), np.asarray(x, float)[None, :], np.asarray([z_target]))
    mean, sd = float(np.asarray(mean)[0]), float(np.sqrt(max(float(np.asarray(var)[0]), 0.0)))
    if mean - SURE_SD * sd <= 0.0:
        return (f"the failure model (a GP classifier of the told and failed points) is not sure of success there "
                f"(mean {mean:.3g}, sd {sd:.3g} on the +1 success / -1 failure scale)")
    return None


def checked(opt, post, buffers, x, mu, sd):
    """``(x [d] numpy, mean, sd)`` of the rule's recommendation ``(x, mu, sd)`` on
    ``post`` (the model of ``buffers``, the successful evaluations), or of the best
    successful point where :func:`unsafe_reason` objects (module docstring); sets
    ``opt.recommendation_note``."""
    x = np.asarray(x, float)
    reason = unsafe_reason(opt, x)
    opt.recommendation_note = None
    if reason is None:
        return x, float(mu), float(sd)
    fx, fmu, fsd = stages.recommend(opt.task, post, buffers.x, "target", opt.settings.recommendation.calibrated)
    fx = np.asarray(fx, float)
    note = (f"the {opt.settings.recommendation.rule!r} rule's x={x.tolist()} is not recommended: {reason}; "
            f"recommending the best successful point x={fx.tolist()} instead")
    opt.recommendation_note = note
    warnings.warn(note, UnsafeRecommendationWarning, stacklevel=3)
    return fx, float(fmu), float(fsd)
