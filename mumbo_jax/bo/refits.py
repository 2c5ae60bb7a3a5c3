"""When the BO loops refit the hyper-parameters, and the posterior they carry between refits.

Below ``fit.incremental_from`` observations (and with ``fit.refit_growth = 0``) every
step refits as :func:`mumbo_jax.bo.stages.refit_at` says and conditions afresh. From
there on the schedule thins as n grows: a refit when the data have grown by the
fraction ``fit.refit_growth`` since the last fresh factorisation (a warm refit, or a
full one once they have grown by ``(1 + refit_growth) ** fit.cold_every``), and between
refits each new evaluation is appended to the carried posterior's factor in O(n^2)
(:mod:`mumbo_jax.gp.update`) with the hyper-parameters, the y scaling and the noise of
the last refit held: exact for that model, which the next refit replaces.

At small n the hyper-parameters move with every point and a refit costs little, so the
first ``incremental_from`` observations keep the every-step refits (warm-only refits at
small n kept Forrester seeds in a poor basin; docs/performance.md).

Both drivers call :func:`plan` and :func:`step_posterior`, so they make the same
decisions; the appends are replayed in a fixed order and buffer size (row r in the
buffer that holds r + 1 rows), so an ask/tell run restored from its state rebuilds the
carried posterior bit for bit from the last fresh factorisation (:class:`Schedule`).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import numpy as np

from mumbo_jax.bo import stages
from mumbo_jax.bo.settings import BOSettings, Task
from mumbo_jax.gp import posterior, update
from mumbo_jax.runtime.xla_options import jit

__all__ = ["FactorUpdateWarning", "Schedule", "incremental", "plan", "after", "extend", "step_posterior", "believe"]


class FactorUpdateWarning(UserWarning):
    """An appended observation was (numerically) dependent on the earlier ones: the
    posterior was refactorised from scratch instead of updated."""


class Schedule(NamedTuple):
    """The refit schedule's memory (plain ints; part of an ask/tell state).

    Attributes:
        anchor: rows of the last fresh factorisation (a refit, or a step that conditioned
            afresh); ``None`` before the first BO step.
        cold: rows at the last refit that ran all its starts (``None``: none yet).
    """

    anchor: int | None = None
    cold: int | None = None


def incremental(settings: BOSettings, n: int) -> bool:
    """Whether a step with ``n`` observations is in the thinned regime (appends between
    refits): ``fit.refit_growth > 0``, ``n >= fit.incremental_from`` and MAP
    hyper-parameters (``mcmc.samples = 0``)."""
    f = settings.fit
    return f.refit_growth > 0 and n >= f.incremental_from and not settings.mcmc.samples


def plan(settings: BOSettings, k: int, n: int, schedule: Schedule) -> tuple[bool, bool, bool]:
    """``(refit, cold, append)`` for BO step ``k`` with ``n`` observations: whether it
    refits, whether a refit runs all its starts, and whether it appends the new rows to
    the carried posterior instead (no refit, no refactorisation)."""
    if not incremental(settings, n) or schedule.anchor is None:
        return bool(stages.refit_at(settings, k)), bool(stages.cold_at(settings, k, n)), False
    f = settings.fit
    growth = 1.0 + f.refit_growth
    if n < schedule.anchor * growth:
        return False, False, True
    cold = (not f.warm_from or n < f.warm_from or schedule.cold is None
            or n >= schedule.cold * growth ** f.cold_every)
    return True, bool(cold), False


def after(schedule: Schedule, n: int, refit: bool, cold: bool, append: bool) -> Schedule:
    """The schedule after a step with ``n`` observations that did what :func:`plan` said."""
    if append:
        return schedule
    return Schedule(n, n if refit and cold else schedule.cold)


@jit
def _append_row(post, buffers, r):
    return update.append(post, r, buffers.x[r], buffers.z[r], buffers.y[r])


@jit
def _append_row_all(post, buffers, r):  # seeds in lock-step: a leading seed axis
    return jax.vmap(lambda p, b: update.append(p, r, b.x[r], b.z[r], b.y[r]))(post, buffers)


def extend(post: posterior.Posterior, buffers: stages.Buffers, start: int, stop: int, size: int,
           min_buffer: int = stages.MIN_BUFFER, batched: bool = False) -> posterior.Posterior:
    """``post`` (conditioned on the first ``start`` rows of ``buffers``) with rows
    ``start .. stop - 1`` appended one by one, row r in the buffer size that holds
    r + 1 rows, then padded to ``size`` rows. One :class:`FactorUpdateWarning` where an
    append had to refactorise. ``batched``: a leading seed axis (lock-step seeds)."""
    lead = int(batched)
    step = _append_row_all if batched else _append_row
    for r in range(start, stop):
        need = stages.buffer_size(r, min_buffer)
        if post.mask.shape[lead] < need:
            post = update.grow(post, need)
        rows = buffers if buffers.x.shape[lead] == need else _rows(buffers, need, lead)
        post, exact = step(post, rows, r)
        if not bool(jax.numpy.all(exact)):
            warnings.warn(f"observation {r} is (numerically) a repeat of earlier ones with no noise to tell them "
                          "apart: the posterior was refactorised from scratch instead of updated",
                          FactorUpdateWarning, stacklevel=2)
    return update.grow(post, size) if post.mask.shape[lead] < size else post


def _rows(buffers: stages.Buffers, size: int, lead: int) -> stages.Buffers:
    """The first ``size`` rows of ``buffers`` (those the appends read)."""
    return stages.Buffers(*(jax.lax.slice_in_dim(a, 0, size, axis=lead) for a in buffers))


def step_posterior(settings: BOSettings, task: Task, buffers: stages.Buffers, n: int, params: dict, key,
                   plan_: tuple, carried: tuple | None, fit=None, min_buffer: int = stages.MIN_BUFFER,
                   batched: bool = False):
    """The posterior of one BO step with ``n`` observations in ``buffers``, as
    :func:`plan` said: the carried ``(posterior, rows)`` extended to the ``n`` rows
    (``append``), or a fit (a refit or a fresh conditioning) by ``fit(refit, cold)``
    (default :func:`mumbo_jax.bo.stages.fit_stage` on ``buffers``)."""
    refit, cold, append = plan_
    if append:
        post, start = carried
        return extend(post, buffers, start, n, buffers.x.shape[int(batched)], min_buffer, batched)
    if fit is None:
        return stages.fit_stage(settings, task, buffers, params, key, refit, cold)
    return fit(refit, cold)


def believe(task: Task, post: posterior.Posterior, buffers: stages.Buffers, n: int, x_pending,
            z_pending) -> posterior.Posterior:
    """:func:`mumbo_jax.bo.stages.believe_stage` by appends: the pending evaluations
    ``(x [P, d], z [P])`` added to a copy of ``post`` (which holds the ``n`` rows of
    ``buffers``) at their posterior mean, in O(P n^2) rather than a new factorisation;
    the same posterior (a kriging believer's mean at one pending point does not move
    the means at the others). ``post`` itself is left as it was."""
    rows = stages.believer_rows(task, post, buffers, n, x_pending, z_pending)
    return extend(post, rows, n, int(np.sum(rows.mask)), rows.x.shape[0])
