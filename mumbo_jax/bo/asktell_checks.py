"""What users hand to :class:`mumbo_jax.bo.asktell.AskTell`, checked: an initial design,
real numbers, seeds and a saved state (:meth:`AskTell.state_dict`), each a ValueError
naming the field on any problem."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from mumbo_jax.bo.settings import Task
from mumbo_jax.gp import models

__all__ = ["BOX_TOL", "STATE_KEYS", "OPTIONAL_KEYS", "check_design", "real", "seed", "check_state", "check_schedule"]

BOX_TOL = 1e-9  # x this far outside the box (fraction of its width) is rounding: clipped, not rejected


def check_design(task: Task, design):
    """A user's initial design ``(x [n0, d], z [n0])``, validated against the task."""
    try:
        x0, z0 = design
    except (TypeError, ValueError):
        raise ValueError("design must be a pair (x [n0, d], z [n0])") from None
    x0, z0 = np.asarray(x0, float), np.asarray(z0, float).reshape(-1)
    if x0.ndim != 2 or x0.shape[0] < 1:
        raise ValueError(f"design x must have shape [n0, {task.spec.dim}] with n0 >= 1, got {x0.shape}")
    models.check_inputs(task.spec, x0, z0, "design x", "design z")
    b = np.asarray(task.spec.bounds)
    if np.any(x0 < b[:, 0]) or np.any(x0 > b[:, 1]):
        raise ValueError("design x lies outside the search box")
    return jnp.asarray(x0), jnp.asarray(z0)


def real(name: str, v, allow_none=False) -> float | None:
    """A finite real number from a Python/numpy scalar or a 1-element array."""
    if v is None and allow_none:
        return None
    if isinstance(v, (str, bytes, bool, np.bool_)):
        raise ValueError(f"{name} must be a real number, got {type(v).__name__} {v!r}")
    a = np.asarray(v)
    if a.size != 1 or not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise ValueError(f"{name} must be a real number (or a 1-element array), got {type(v).__name__} "
                         f"with shape {a.shape} and dtype {a.dtype}")
    f = float(a.reshape(()))
    if not np.isfinite(f):
        raise ValueError(f"{name} must be finite, got {f}")
    return f


def seed(v, name="seed") -> int:
    """A seed: an integer in [0, 2**32) (a numpy integer is fine; 1.5 or True is not)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {type(v).__name__} {v!r}")
    if not 0 <= int(v) < 2 ** 32:
        raise ValueError(f"{name} must be in [0, 2**32), got {v}")
    return int(v)


STATE_KEYS = ("seed", "x", "z", "y", "costs", "params")  # required
OPTIONAL_KEYS = ("pending", "design_done", "asked_told", "failed", "refits")


def _state_list(state, key: str, n: int | None = None) -> list:
    v = state.get(key, [])
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"state[{key!r}] must be a list, got {type(v).__name__}")
    if n is not None and len(v) != n:
        raise ValueError(f"state[{key!r}] has {len(v)} entries but state['x'] has {n} rows: one per evaluation")
    return list(v)


def check_state(opt, state) -> dict:
    """``state`` (:meth:`AskTell.state_dict`) checked field by field against ``opt``'s
    task: a ValueError naming the field (``state['y'][3]: ...``) on any problem."""
    if not isinstance(state, dict):
        raise ValueError(f"state must be a dict (AskTell.state_dict()), got {type(state).__name__}")
    missing = [k for k in STATE_KEYS if k not in state]
    if missing:
        raise ValueError(f"state is missing {', '.join(map(repr, missing))} (AskTell.state_dict() has "
                         f"{', '.join(STATE_KEYS)})")
    unknown = set(state) - set(STATE_KEYS) - set(OPTIONAL_KEYS)
    if unknown:
        raise ValueError(f"state has unknown keys {sorted(map(str, unknown))}")
    xs = _state_list(state, "x")
    n = len(xs)
    out = {"x": [], "z": [], "y": [], "costs": []}
    zs, ys, cs = (_state_list(state, k, n) for k in ("z", "y", "costs"))
    for i in range(n):
        try:
            x, z = opt._checked_point(xs[i], zs[i])
        except ValueError as e:
            raise ValueError(f"state['x'][{i}] / state['z'][{i}]: {e}") from None
        y = real(f"state['y'][{i}]", ys[i])
        c = real(f"state['costs'][{i}]", cs[i])
        if c <= 0:
            raise ValueError(f"state['costs'][{i}] must be > 0, got {c}")
        out["x"].append(x), out["z"].append(z), out["y"].append(y), out["costs"].append(c)
    out["pending"] = []
    for i, p in enumerate(_state_list(state, "pending")):
        if not isinstance(p, dict) or "x" not in p or "z" not in p:
            raise ValueError(f"state['pending'][{i}] must be a dict with x, z (and design_index), got {p!r}")
        try:
            x, z = opt._checked_point(p["x"], p["z"])
        except ValueError as e:
            raise ValueError(f"state['pending'][{i}]: {e}") from None
        d = p.get("design_index")
        if d is not None:
            d = seed(d, f"state['pending'][{i}]['design_index']")
            if d >= opt.n_design:
                raise ValueError(f"state['pending'][{i}]['design_index'] must be < {opt.n_design} (the design's "
                                 f"size), got {d}")
        out["pending"].append((x, z, d))
    if "design_done" in state:
        done = _state_list(state, "design_done")
        for i, d in enumerate(done):
            if seed(d, f"state['design_done'][{i}]") >= opt.n_design:
                raise ValueError(f"state['design_done'][{i}] must be < {opt.n_design} (the design's size), got {d}")
        out["design_done"] = {int(d) for d in done}
    for key in ("asked_told", "failed"):
        out[key] = []
        for i, pair in enumerate(_state_list(state, key)):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError(f"state[{key!r}][{i}] must be a pair [x, z], got {pair!r}")
            try:
                out[key].append(opt._checked_point(*pair))
            except ValueError as e:
                raise ValueError(f"state[{key!r}][{i}]: {e}") from None
    out["refits"] = check_schedule(state.get("refits", [None, None]), n)
    params = state["params"]
    defaults = models.default_params(opt.task.spec)
    if not isinstance(params, dict) or set(params) != set(defaults):
        got = sorted(params) if isinstance(params, dict) else type(params).__name__
        raise ValueError(f"state['params'] must be a dict with the model's keys {sorted(defaults)}, got {got}")
    out["params"] = {}
    for k, v in params.items():
        try:
            a = np.asarray(v, float)
        except (TypeError, ValueError):
            raise ValueError(f"state['params'][{k!r}] must be numbers, got {v!r}") from None
        want = np.shape(defaults[k])
        if a.shape != want and a.shape[1:] != want:
            raise ValueError(f"state['params'][{k!r}] must have shape {want} (or [samples, *{want}]), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"state['params'][{k!r}] must be finite")
        out["params"][k] = a
    return out


def check_schedule(v, n: int) -> tuple:
    """``state['refits']``: ``[anchor, cold]`` of :class:`mumbo_jax.bo.refits.Schedule`,
    each None or a row count in [1, n]."""
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        raise ValueError(f"state['refits'] must be a pair [anchor, cold] (row counts or null), got {v!r}")
    out = []
    for name, c in zip(("anchor", "cold"), v):
        if c is not None:
            c = seed(c, f"state['refits'] {name}")
            if not 1 <= c <= n:
                raise ValueError(f"state['refits'] {name} must be a row count in [1, {n}] (the evaluations told), "
                                 f"got {c}")
        out.append(c)
    return tuple(out)
