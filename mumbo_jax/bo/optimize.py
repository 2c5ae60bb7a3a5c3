"""Maximise a cost-weighted acquisition over X x Z.

An acquisition is a function ``alpha(x [M, d], z [M]) -> [M]`` (x in the units of the
search box), given as a ``jax.tree_util.Partial`` so that its arrays (a posterior, g*
samples) are traced arguments and a new posterior does not recompile the maximiser. :func:`maximise` scores a random candidate set at every discrete
fidelity (or at random values of a continuous one) in one vectorised call, takes the
best few as starts and polishes them with box-projected Adam (optax) in one vmap,
returning the best (x, z) of alpha / cost. Given a cheap upper bound of the acquisition
(a rule's ``bound``), it scores exactly only the candidates that can be among the starts
(:func:`pruned_scores`): the same starts, fewer O(n^2) predictions at large n.

For a discrete fidelity the polish moves x only; for a continuous fidelity z is one
more bounded coordinate.

The maximiser's knobs are a settings record, :class:`mumbo_jax.bo.settings.MaximiserSettings`
(``BOSettings.maximiser``; :func:`maximise_with` takes it); its defaults are this module's
constants (:data:`N_CANDIDATES` ...), :func:`maximise`'s, so a loop rebuilt from the
functional pieces maximises as the loop does.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Callable, NamedTuple

__all__ = ["GRADIENTS", "DIFFERENCE_STEP", "N_CANDIDATES", "N_STARTS", "POLISH_STEPS", "LEARNING_RATE",
           "BOUNDARY_FRAC", "LOCAL_FRAC", "GRADIENT", "Proposal", "FidelitySpace", "discrete_fidelities",
           "continuous_fidelity", "restrict", "check_n_starts", "check_candidate_fraction", "polish", "snap_to_faces",
           "LOCAL_SCALES", "near_anchors", "PRUNE_CHUNK", "pruned_scores", "maximise", "maximise_with"]

import jax
import jax.numpy as jnp
import numpy as np
import optax

from mumbo_jax.runtime import draws
from mumbo_jax.runtime.tracing import is_concrete
from mumbo_jax.runtime.xla_options import jit

if TYPE_CHECKING:  # annotations only: the settings import this module
    from mumbo_jax.bo.settings import MaximiserSettings

GRADIENTS = ("differences", "exact")  # how the polish takes the acquisition's gradient
# the differences' step on the unit cube: truncation ~1e-6 and rounding ~1e-10 of the gradient's
# scale in float64, far below what changes an Adam step
DIFFERENCE_STEP = 1e-6
# the maximiser's defaults: maximise's and the BO loops' (mumbo_jax.bo.settings.MaximiserSettings)
N_CANDIDATES = 2000
N_STARTS = 8
POLISH_STEPS = 40
LEARNING_RATE = 0.03
BOUNDARY_FRAC = 0.25
LOCAL_FRAC = 0.25
GRADIENT = "exact"


class Proposal(NamedTuple):
    """The maximiser's choice.

    Attributes:
        x: ``[d]`` the chosen input.
        z: the fidelity (int index, or float value for a continuous fidelity).
        score: alpha(x, z) / cost(z) at the choice.
        alpha: alpha(x, z).
    """

    x: jax.Array
    z: jax.Array
    score: jax.Array
    alpha: jax.Array


@functools.partial(jax.tree_util.register_dataclass, data_fields=["cost"],
                   meta_fields=["n_fidelities", "bounds", "choices"])
@dataclasses.dataclass(frozen=True)
class FidelitySpace:
    """Where z lives and what it costs (a pytree: the cost's arrays are traced).

    Attributes:
        n_fidelities: number of discrete fidelities 0..F-1, or ``None``.
        bounds: ``(lower, upper)`` of a continuous fidelity, or ``None``.
        cost: ``cost(z [M]) -> [M]`` positive costs, a ``jax.tree_util.Partial``.
        choices: the discrete fidelities the maximiser scores (``None``: all of
            0..F-1); :func:`restrict` makes a space that queries one fidelity only.
    """

    n_fidelities: int | None
    bounds: tuple | None
    cost: Callable
    choices: tuple | None = None

    @property
    def fidelities(self):
        """``[F']`` the discrete fidelities to score (None for a continuous space)."""
        if self.n_fidelities is None:
            return None
        return jnp.arange(self.n_fidelities) if self.choices is None else jnp.asarray(self.choices)

    @property
    def n_choices(self) -> int:
        """How many fidelities the maximiser scores (1 for a continuous space)."""
        if self.n_fidelities is None:
            return 1
        return self.n_fidelities if self.choices is None else len(self.choices)


def restrict(space: FidelitySpace, z) -> FidelitySpace:
    """The space with one fidelity only: the discrete index ``z`` or the continuous
    value ``z`` (a degenerate interval), at the same cost function."""
    if space.n_fidelities is not None:
        if int(z) != z or not 0 <= int(z) < space.n_fidelities:
            raise ValueError(f"fidelity {z!r} does not exist; the space has 0..{space.n_fidelities - 1}")
        return FidelitySpace(space.n_fidelities, None, space.cost, (int(z),))
    lo, hi = space.bounds
    if not lo <= float(z) <= hi:
        raise ValueError(f"fidelity {z!r} is outside the fidelity bounds {space.bounds}")
    return FidelitySpace(None, (float(z), float(z)), space.cost)


def check_n_starts(n_starts: int, n_candidates: int, n_fidelities: int = 1) -> None:
    """ValueError unless ``n_starts`` of the ``n_candidates * n_fidelities`` scored
    candidates can be polished (the one copy of this check: :func:`maximise` and
    :class:`mumbo_jax.bo.settings.MaximiserSettings` call it)."""
    if n_starts > n_candidates * n_fidelities:
        raise ValueError(f"n_starts ({n_starts}) exceeds the number of scored candidates "
                         f"({n_candidates * n_fidelities} = n_candidates {n_candidates} x {n_fidelities} fidelities)")


def _table_cost(costs, z):
    return costs[z]


def discrete_fidelities(costs) -> FidelitySpace:
    """Fidelities 0..F-1 with known costs ``costs[f]`` (> 0)."""
    costs = jnp.asarray(costs, dtype=float)
    if costs.ndim != 1 or costs.shape[0] < 1:
        raise ValueError(f"costs must be a 1-D list with one cost per fidelity, got shape {tuple(costs.shape)}")
    if is_concrete(costs) and not bool(jnp.all(costs > 0) & jnp.all(jnp.isfinite(costs))):
        raise ValueError(f"costs must be finite and > 0, got {costs.tolist()}")
    return FidelitySpace(int(costs.shape[0]), None, jax.tree_util.Partial(_table_cost, costs))


def continuous_fidelity(bounds, cost: Callable) -> FidelitySpace:
    """A continuous fidelity in ``bounds`` with a known, traceable cost ``cost(z)``
    (vectorised over z; wrapped in ``jax.tree_util.Partial`` if it is not one)."""
    lo, hi = float(bounds[0]), float(bounds[1])
    if not lo < hi:
        raise ValueError(f"fidelity bounds must have lower < upper, got {bounds}")
    if not isinstance(cost, jax.tree_util.Partial):
        cost = jax.tree_util.Partial(cost)
    return FidelitySpace(None, (lo, hi), cost)


def check_candidate_fraction(fraction, name: str) -> float:
    """A fraction of the maximiser's candidates (``boundary_frac``, ``local_frac``) as a
    float; ValueError naming ``name`` unless it is a number in [0, 1]."""
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0.0 <= fraction <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {fraction!r}")
    return float(fraction)


def snap_to_faces(key, u, fraction: float, stream: int = 0):
    """The first ``round(fraction * C)`` of the candidates ``u [C, d]`` (unit cube) with
    each coordinate moved to 0 or 1 with probability 1/2 (its side by a fair coin):
    points on the box's faces, edges and corners, where uniform candidates never land
    (Borehole's optimum is a corner). ``fraction`` is static; 0 returns ``u``. The coins
    are ``key``'s stream ``stream`` (:mod:`mumbo_jax.runtime.draws`)."""
    n = int(round(fraction * u.shape[0]))
    if n == 0:
        return u
    which, side = draws.bernoulli(key, 0.5, (2, n, u.shape[1]), stream)
    side = side.astype(u.dtype)
    return u.at[:n].set(jnp.where(which, side, u[:n]))


def _safe_score(alpha, cost):
    score = alpha / cost
    return jnp.where(jnp.isfinite(score), score, -jnp.inf)


def polish(objective, v0, n_steps, learning_rate, has_aux=False, gradient="exact"):
    """Projected Adam on the unit cube minimising ``objective(v)`` from ``v0`` (``[D]`` in
    [0, 1]); returns the best point visited and its value (Adam need not decrease
    monotonically), and with ``has_aux`` (``objective`` returns ``(value, aux)``) the aux
    at that point as well. Where no point has a value below ``inf`` (NaN or ``inf``
    everywhere) that is ``v0``, ``inf`` and an aux of zeros: no NaN is passed on.

    The ``n_steps + 1`` points visited (the start, then each step's) are each evaluated
    once, with the gradient: the objective is not traced again for the last point (the
    last step's update is unused). ``gradient`` (one of :data:`GRADIENTS`): ``"exact"``
    by autodiff; ``"differences"`` by forward differences of step :data:`DIFFERENCE_STEP`
    (backward where the step would leave the cube), the point and its ``D`` neighbours in
    one vmapped call of ``objective``: one copy of it in the program instead of its forward
    and reverse passes."""
    if gradient not in GRADIENTS:
        raise ValueError(f"gradient must be one of {GRADIENTS}, got {gradient!r}")
    opt = optax.adam(learning_rate)
    fun = objective if has_aux else (lambda v: (objective(v), ()))
    if gradient == "exact":
        value_and_grad = jax.value_and_grad(fun, has_aux=True)
    else:
        def value_and_grad(v):
            on_axis = jnp.eye(v.shape[0], dtype=bool)
            h = jnp.where(v + DIFFERENCE_STEP <= 1.0, DIFFERENCE_STEP, -DIFFERENCE_STEP)
            points = jnp.concatenate([v[None], jnp.where(on_axis, v + h, v)])
            vals, auxs = jax.vmap(fun)(points)  # [D + 1]
            grad = (vals[1:] - vals[0]) / h
            return (vals[0], jax.tree_util.tree_map(lambda a: a[0], auxs)), grad

    def step(carry, _):
        v, state, best_v, best_val, best_aux = carry
        (val, aux), grad = value_and_grad(v)
        grad = jnp.where(jnp.isfinite(grad), grad, 0.0)
        better = val < best_val
        best_v, best_val = jnp.where(better, v, best_v), jnp.where(better, val, best_val)
        best_aux = jax.tree_util.tree_map(lambda a, b: jnp.where(better, a, b), aux, best_aux)
        updates, state = opt.update(grad, state, v)
        v = optax.projections.projection_box(optax.apply_updates(v, updates), 0.0, 1.0)
        return (v, state, best_v, best_val, best_aux), None

    aux_shape = jax.eval_shape(fun, v0)[1]
    aux0 = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), aux_shape)
    init = (v0, opt.init(v0), v0, jnp.asarray(jnp.inf, v0.dtype), aux0)
    (_, _, best_v, best_val, best_aux), _ = jax.lax.scan(step, init, None, length=n_steps + 1)
    return (best_v, best_val, best_aux) if has_aux else (best_v, best_val)


LOCAL_SCALES = (0.1, 0.03, 0.01, 0.003)  # sd of the local candidates, fractions of the box's width


def near_anchors(key, u, anchors, fraction: float, stream: int = 0):
    """The last ``round(fraction * C)`` of the candidates ``u [C, d]`` (unit cube) replaced by
    Gaussian perturbations of ``anchors [A, d]`` (unit cube; cycled), with sd cycling
    through :data:`LOCAL_SCALES` and clipped to the cube: the fine local search near the
    best points that uniform candidates in d dimensions almost never provide (BoTorch's
    initialiser samples around the best points for the same reason). ``fraction`` is
    static; 0 (or ``anchors`` None) returns ``u``. The perturbations are ``key``'s stream
    ``stream`` (:mod:`mumbo_jax.runtime.draws`)."""
    n = int(round(fraction * u.shape[0]))
    if n == 0 or anchors is None:
        return u
    i = jnp.arange(n)
    scale = jnp.asarray(LOCAL_SCALES, u.dtype)[i % len(LOCAL_SCALES)]
    centre = anchors[(i // len(LOCAL_SCALES)) % anchors.shape[0]]
    noise = draws.normal(key, (n, u.shape[1]), u.dtype, stream)
    return u.at[u.shape[0] - n:].set(jnp.clip(centre + scale[:, None] * noise, 0.0, 1.0))


PRUNE_CHUNK = 512  # candidates scored exactly per pass of the pruned scoring


def pruned_scores(acquisition, bound_score, x, z, cost, n_starts: int):
    """Candidates' scores ``alpha(x, z) / cost(z)`` ``[M]`` (``x [M, d]``, ``z [M]``),
    exact wherever they can be among the best ``n_starts``, ``-inf`` elsewhere.

    ``bound_score [M]`` bounds each score from above (``+inf``: unknown). The candidates
    are scored exactly :data:`PRUNE_CHUNK` at a time in the order of their bounds until
    the next bound is below the ``n_starts``-th best exact score, so the best
    ``n_starts`` and their order are those of scoring every candidate."""
    m = x.shape[0]
    bound_score = jnp.where(jnp.isnan(bound_score), jnp.inf, bound_score)
    blocks = -(-m // PRUNE_CHUNK)
    order = jnp.argsort(-bound_score, stable=True)
    order = jnp.concatenate([order, order[: blocks * PRUNE_CHUNK - m]])  # a short last chunk repeats points
    next_bound = bound_score[order]

    def more(state):
        b, scores = state
        kth = jax.lax.top_k(scores, n_starts)[0][-1]
        return (b < blocks) & (next_bound[jnp.minimum(b, blocks - 1) * PRUNE_CHUNK] >= kth)

    def exact_chunk(state):
        b, scores = state
        idx = jax.lax.dynamic_slice(order, (b * PRUNE_CHUNK,), (PRUNE_CHUNK,))
        return b + 1, scores.at[idx].set(_safe_score(acquisition(x[idx], z[idx]), cost(z[idx])))

    _, scores = jax.lax.while_loop(more, exact_chunk, (jnp.int32(0), jnp.full(m, -jnp.inf, x.dtype)))
    return scores


@functools.partial(jit, static_argnames=("n_candidates", "n_starts", "n_steps", "boundary_frac", "local_frac",
                                         "gradient"))
def _maximise(key, acquisition, bounds, space, n_candidates, n_starts, n_steps, learning_rate, boundary_frac=0.0,
              anchors=None, local_frac=0.0, gradient="exact", bound=None):
    lo, width = bounds[:, 0], bounds[:, 1] - bounds[:, 0]
    d = lo.shape[0]
    # four streams of one key (mumbo_jax.runtime.draws: no threefry split or fold_in to compile)
    u = draws.uniform(key, (n_candidates, d), lo.dtype, stream=0)
    u = snap_to_faces(key, u, boundary_frac, stream=1)  # no-op (same u) at 0
    if anchors is not None:
        u = near_anchors(key, u, (anchors - lo) / width, local_frac, stream=2)
    to_x = lambda u: lo + width * u

    def neg_score(x, z):  # one point: x [d], z scalar -> (-alpha / cost, alpha)
        alpha = acquisition(x[None], z[None])
        return -_safe_score(alpha, space.cost(z[None]))[0], alpha[0]

    if space.n_fidelities is not None:
        fids = space.fidelities

        def score_at(f):
            zz = jnp.full(n_candidates, f)
            return _safe_score(acquisition(to_x(u), zz), space.cost(zz))

        if bound is None:
            scores = jax.lax.map(score_at, fids)  # [F, C]
        else:  # exact scores only where they can reach the starts: the same starts
            f_all = jnp.repeat(fids, n_candidates)
            b = bound(to_x(u))  # [C], every fidelity's
            b_all = jnp.tile(b, fids.shape[0]) / space.cost(f_all)
            scores = pruned_scores(acquisition, b_all, jnp.tile(to_x(u), (fids.shape[0], 1)), f_all, space.cost,
                                   n_starts).reshape(fids.shape[0], n_candidates)
        _, idx = jax.lax.top_k(scores.reshape(-1), n_starts)
        start_u, start_z = u[idx % n_candidates], fids[idx // n_candidates]
        # z stays fixed while x is polished
        best_u, vals, alphas = jax.vmap(lambda v0, z: polish(lambda v: neg_score(to_x(v), z), v0, n_steps,
                                                              learning_rate, True, gradient))(start_u, start_z)
        i = jnp.argmin(vals)
        x, z = to_x(best_u[i]), start_z[i]
    else:
        zlo, zhi = space.bounds
        zu = draws.uniform(key, (n_candidates,), lo.dtype, stream=3)
        to_z = lambda t: zlo + (zhi - zlo) * t
        if bound is None:
            scores = _safe_score(acquisition(to_x(u), to_z(zu)), space.cost(to_z(zu)))
        else:
            scores = pruned_scores(acquisition, bound(to_x(u)) / space.cost(to_z(zu)), to_x(u), to_z(zu),
                                   space.cost, n_starts)
        _, idx = jax.lax.top_k(scores, n_starts)
        starts = jnp.concatenate([u[idx], zu[idx, None]], axis=1)  # [S, d + 1] on the unit cube
        # z is one more bounded coordinate
        best_v, vals, alphas = jax.vmap(lambda v0: polish(lambda v: neg_score(to_x(v[:d]), to_z(v[d])), v0,
                                                           n_steps, learning_rate, True, gradient))(starts)
        i = jnp.argmin(vals)
        x, z = to_x(best_v[i, :d]), to_z(best_v[i, d])

    alpha = alphas[i]  # the acquisition at the chosen point, from the polish's own evaluation
    return Proposal(x, z, alpha / space.cost(jnp.asarray(z)[None])[0], alpha)


def maximise(key, acquisition: Callable, bounds, space: FidelitySpace,
             n_candidates: int = N_CANDIDATES, n_starts: int = N_STARTS,
             n_steps: int = POLISH_STEPS, learning_rate: float = LEARNING_RATE,
             boundary_frac: float = BOUNDARY_FRAC, anchors=None,
             local_frac: float = LOCAL_FRAC, gradient: str = GRADIENT, bound: Callable | None = None) -> Proposal:
    """argmax over (x, z) of ``acquisition(x, z) / cost(z)``.

    The defaults are the module's constants, the BO loops' too
    (:class:`mumbo_jax.bo.settings.MaximiserSettings`); :func:`maximise_with` takes the record itself. The loops pass ``anchors``, the best evaluated x
    (:func:`mumbo_jax.bo.incumbent.best_inputs`); without anchors no candidate is local.

    Args:
        key: PRNG key for the random candidates.
        acquisition: ``alpha(x [M, d], z [M]) -> [M]``, differentiable in x (and in z
            for a continuous fidelity), as a ``jax.tree_util.Partial`` (a plain function
            is wrapped).
        bounds: ``[d, 2]`` box for x.
        space: :func:`discrete_fidelities` or :func:`continuous_fidelity`.
        n_candidates, n_starts, learning_rate, boundary_frac, local_frac, gradient: as in
            :class:`mumbo_jax.bo.settings.MaximiserSettings`; ``n_steps``: its ``polish_steps``.
        anchors: optional ``[A, d]`` points in box units (e.g. the best evaluated x)
            near which ``local_frac`` of the candidates are drawn (:func:`near_anchors`);
            no anchors: none.
        bound: optional ``b(x [M, d]) -> [M]``, an upper bound of ``acquisition(x, z)``
            at every fidelity z, much cheaper than it (a ``jax.tree_util.Partial``). The
            candidates are then scored exactly only where ``b / cost`` can reach the
            best ``n_starts`` (:func:`pruned_scores`): the same starts, the same choice.

    Returns:
        :class:`Proposal`.
    """
    if not isinstance(acquisition, jax.tree_util.Partial):
        acquisition = jax.tree_util.Partial(acquisition)
    bounds = jnp.asarray(bounds, dtype=float)
    if bounds.ndim != 2 or bounds.shape[1] != 2:
        raise ValueError(f"bounds must have shape [d, 2], got {tuple(bounds.shape)}")
    # on the host (numpy): under a trace jnp's comparison of a concrete closure would be a tracer
    if is_concrete(bounds) and bool(np.any(np.asarray(bounds)[:, 0] >= np.asarray(bounds)[:, 1])):
        raise ValueError("bounds: every lower bound must be below its upper bound")
    check_n_starts(n_starts, n_candidates, space.n_choices)
    boundary_frac = check_candidate_fraction(boundary_frac, "boundary_frac")
    local_frac = check_candidate_fraction(local_frac, "local_frac")
    if boundary_frac + local_frac > 1.0:
        raise ValueError(f"boundary_frac + local_frac must be at most 1, got {boundary_frac} + {local_frac}")
    if gradient not in GRADIENTS:
        raise ValueError(f"gradient must be one of {GRADIENTS}, got {gradient!r}")
    if anchors is not None:
        anchors = jnp.asarray(anchors, dtype=bounds.dtype)
        if anchors.ndim != 2 or anchors.shape[1] != bounds.shape[0] or anchors.shape[0] < 1:
            raise ValueError(f"anchors must have shape [A, {bounds.shape[0]}] with A >= 1, got {tuple(anchors.shape)}")
    if bound is not None and not isinstance(bound, jax.tree_util.Partial):
        bound = jax.tree_util.Partial(bound)
    return _maximise(key, acquisition, bounds, space, int(n_candidates), int(n_starts), int(n_steps),
                     learning_rate, boundary_frac, anchors, local_frac, gradient, bound)


def maximise_with(settings: MaximiserSettings, key, acquisition: Callable, bounds, space: FidelitySpace,
                  anchors=None, bound: Callable | None = None) -> Proposal:
    """:func:`maximise` with the knobs of a :class:`mumbo_jax.bo.settings.MaximiserSettings` record (the BO
    loops' call)."""
    return maximise(key, acquisition, bounds, space, settings.n_candidates, settings.n_starts,
                    settings.polish_steps, settings.learning_rate, settings.boundary_frac, anchors,
                    settings.local_frac, settings.gradient, bound)
