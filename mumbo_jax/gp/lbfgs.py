"""L-BFGS whose compiled program holds the objective once.

optax's ``lbfgs()`` evaluates the objective in three places: at the start, and in each
of the two branches of its zoom line search (widening the interval, zooming into it).
Each place is compiled code of its own, and in the fit the objective with its gradient
is most of the program: three copies of the Cholesky factor, L^-1 and K^-1 per buffer
size. Here one ``lax.while_loop`` step evaluates the objective once, at a trial point
chosen by branch-free arithmetic, and then decides what the evaluation was: the start,
a rejected trial (the interval shrinks or widens) or an accepted step (the direction is
updated by optax's :func:`optax.scale_by_lbfgs`).

The line search is the bracketing strong-Wolfe search of Nocedal & Wright (Algorithms
3.5 and 3.6; sufficient decrease ``c1 = 1e-4``, curvature ``c2 = 0.9``, optax's zoom
defaults), its trials by safeguarded cubic interpolation between the interval's ends,
bisection where that is not finite (a trial where the objective is NaN, a Cholesky
failure, counts as too high). After :data:`MAX_TRIALS` trials without a strong-Wolfe
point it takes the best point found if it lowered the objective, else it stops.
A step whose curvature pair is not positive (only possible after that fallback)
clears the L-BFGS memory rather than storing a pair that would make the next direction
ascend, and a direction that does not descend all the same restarts from the gradient.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from jax.flatten_util import ravel_pytree

__all__ = ["minimize", "C1", "C2", "MAX_TRIALS"]

C1, C2 = 1e-4, 0.9
MAX_TRIALS = 30
_EXPAND = 2.0  # a trial that still descends steeply doubles the step


def _cubic_step(a, fa, sa, b, fb, sb):
    """Minimiser of the cubic through ``(a, fa, sa)`` and ``(b, fb, sb)`` (values and
    slopes along the line), kept at least a tenth of the interval from either end;
    the interval's middle where the cubic has no finite minimiser."""
    d1 = sa + sb - 3.0 * (fa - fb) / (a - b)
    d2 = jnp.sign(b - a) * jnp.sqrt(jnp.maximum(d1 * d1 - sa * sb, 0.0))
    step = b - (b - a) * (sb + d2 - d1) / (sb - sa + 2.0 * d2)
    low, high = jnp.minimum(a, b), jnp.maximum(a, b)
    margin = 0.1 * (high - low)
    usable = jnp.isfinite(step) & (d1 * d1 - sa * sb >= 0.0)
    return jnp.where(usable, jnp.clip(step, low + margin, high - margin), 0.5 * (a + b))


def minimize(fun, init, max_iter, tol, ftol=0.0):
    """Minimise ``fun`` (a pytree -> scalar) from ``init`` by L-BFGS.

    Stops after ``max_iter`` steps, when the gradient norm falls below ``tol``, on a
    non-finite value, when a line search finds no lower point, and (``ftol`` > 0) when
    a step lowers the objective by at most ``ftol * max(|f|, 1)`` (scipy L-BFGS-B's
    ``ftol`` test). ``max_iter``, ``tol`` and ``ftol`` may be traced.

    Returns:
        ``(params, value)``: the last accepted point and the objective there (from the
        evaluation that accepted it; NaN when ``fun(init)`` is not finite).
    """
    x0, unravel = ravel_pytree(init)
    value_and_grad = jax.value_and_grad(lambda v: fun(unravel(v)))
    tx = optax.scale_by_lbfgs()
    fresh = tx.init(x0)
    zero = jnp.zeros((), x0.dtype)
    inf = jnp.asarray(jnp.inf, x0.dtype)
    check_ftol = not (isinstance(ftol, (int, float)) and ftol == 0)

    carry = dict(
        started=jnp.asarray(False), done=jnp.asarray(False), count=jnp.asarray(0, jnp.int32),
        x=x0, f=inf, g=jnp.zeros_like(x0), previous=inf, d=jnp.zeros_like(x0), slope=zero,
        step=zero, lo=zero, f_lo=inf, s_lo=zero, g_lo=jnp.zeros_like(x0), hi=inf, f_hi=inf, s_hi=zero,
        trials=jnp.asarray(0, jnp.int32), tx_state=fresh,
    )

    def keep_going(c):
        go = ~c["done"] & jnp.isfinite(c["f"]) & (c["count"] < max_iter) & (jnp.linalg.norm(c["g"]) >= tol)
        if check_ftol:
            scale = jnp.maximum(jnp.maximum(jnp.abs(c["f"]), jnp.abs(c["previous"])), 1.0)
            go = go & ((c["count"] == 0) | (ftol <= 0) | ((c["previous"] - c["f"]) > ftol * scale))
        return ~c["started"] | go

    def body(c):
        # the one evaluation: the start (step 0 along a zero direction) or a trial
        trial = c["x"] + c["step"] * c["d"]
        f_t, g_t = value_and_grad(trial)
        s_t = g_t @ c["d"]
        finite = jnp.isfinite(f_t) & jnp.all(jnp.isfinite(g_t))
        too_high = ~finite | (f_t > c["f"] + C1 * c["step"] * c["slope"]) | (f_t >= c["f_lo"])
        wolfe = ~too_high & (jnp.abs(s_t) <= C2 * jnp.abs(c["slope"]))
        first = ~c["started"]
        out_of_trials = ~first & ~wolfe & (c["trials"] + 1 >= MAX_TRIALS)
        fallback = out_of_trials & (c["lo"] > 0)  # the best trial lowered the objective: take it
        accept = first | wolfe | fallback

        # the accepted point: the trial, or the interval's low end on the fallback
        x_new = jnp.where(fallback, c["x"] + c["lo"] * c["d"], trial)
        f_new = jnp.where(fallback, c["f_lo"], f_t)
        g_new = jnp.where(fallback, c["g_lo"], g_t)
        # the L-BFGS direction at it, or from a cleared memory (the scaled gradient) at the
        # start, after a pair with non-positive curvature, or where the memory's direction
        # does not descend (rounding): the line search then always has a lower point to find
        direction, state = tx.update(g_new, c["tx_state"], x_new)
        restart_direction, restart_state = tx.update(g_new, fresh, x_new)
        curvature = (g_new - c["g"]) @ (x_new - c["x"])
        restart = first | ~(curvature > 0) | ~((g_new @ direction) > 0)
        d_new = -jnp.where(restart, restart_direction, direction)
        state = jax.tree_util.tree_map(lambda a, b: jnp.where(restart, a, b), restart_state, state)
        slope_new = g_new @ d_new

        # a rejected trial narrows [lo, hi] (or moves lo out while the slope stays steep)
        hi_to_lo = ~too_high & (s_t * (c["hi"] - c["lo"]) >= 0)
        hi = jnp.where(too_high, c["step"], jnp.where(hi_to_lo, c["lo"], c["hi"]))
        f_hi = jnp.where(too_high, f_t, jnp.where(hi_to_lo, c["f_lo"], c["f_hi"]))
        s_hi = jnp.where(too_high, s_t, jnp.where(hi_to_lo, c["s_lo"], c["s_hi"]))
        lo = jnp.where(too_high, c["lo"], c["step"])
        f_lo = jnp.where(too_high, c["f_lo"], f_t)
        s_lo = jnp.where(too_high, c["s_lo"], s_t)
        g_lo = jnp.where(too_high, c["g_lo"], g_t)
        next_step = jnp.where(jnp.isinf(hi), _EXPAND * lo, _cubic_step(lo, f_lo, s_lo, hi, f_hi, s_hi))

        rejected = dict(lo=lo, f_lo=f_lo, s_lo=s_lo, g_lo=g_lo, hi=hi, f_hi=f_hi, s_hi=s_hi,
                        step=next_step, trials=c["trials"] + 1)
        accepted = dict(lo=zero, f_lo=f_new, s_lo=slope_new, g_lo=g_new, hi=inf, f_hi=inf, s_hi=zero,
                        step=jnp.ones_like(zero), trials=jnp.asarray(0, jnp.int32))
        search = jax.tree_util.tree_map(lambda a, r: jnp.where(accept, a, r), accepted, rejected)
        keep = lambda new, old: jax.tree_util.tree_map(lambda a, b: jnp.where(accept, a, b), new, old)
        return dict(
            search,
            started=jnp.asarray(True),
            done=out_of_trials & ~fallback,
            count=c["count"] + jnp.where(accept & ~first, 1, 0).astype(jnp.int32),
            x=keep(x_new, c["x"]), f=keep(f_new, c["f"]), g=keep(g_new, c["g"]),
            previous=keep(c["f"], c["previous"]), d=keep(d_new, c["d"]), slope=keep(slope_new, c["slope"]),
            tx_state=keep(state, c["tx_state"]),
        )

    c = jax.lax.while_loop(keep_going, body, carry)
    return unravel(c["x"]), c["f"]
