"""What a tuning run issues next, and what a journal says is still owed.

Every evaluation a run hands to a worker is journaled twice: an ``issued`` record (with
an ``id``) when it is handed out and an ``eval`` record (the same ``id``) when it
finishes. Each carries ``holds``: the optimiser's pending point it stands for (the
asked point itself, or for a retry or a random replacement the asked point it
replaces), so that a result is told to :class:`~mumbo_jax.bo.asktell.AskTell` as the
pending point's result (or, for a replacement, the pending point is cancelled and the
replacement told as the user's own evaluation).

After a crash: an issued record without a result was lost with the crash and is issued
again (``reissue_of``); a failed evaluation whose retry or replacement was never
issued gets it; every finished evaluation is replayed, never repeated
(:func:`unfinished`). Journals written before issued records existed (sequential runs)
are read as before: only their last evaluation can be owed a retry.

Failures: ``retries`` re-evaluates the same point that many more times; a point that
still fails is abandoned and replaced by a uniform random point at the same fidelity
(deterministic in the seed): with ``[objective] failures = "ignore"`` the model never
sees failures, so its data would not change and it would propose the same point again
(with ``"impute"`` it sees them as pessimistic values and moves away); a later proposal at an abandoned
point (within :data:`SAME_POINT_TOL` of the box) is replaced the same way, without
evaluating it. An abandoned design point is replaced by the same point at every
fidelity.
"""

from __future__ import annotations

import time

import numpy as np

from mumbo_jax.run.tune.config import TuneConfig

__all__ = ["SAME_POINT_TOL", "CONSECUTIVE_FAILURES", "stop_reason", "issue_block", "design_cost", "fallback",
           "known_failure", "ask_point", "follow_up", "reissue", "unfinished", "first_results", "pending_holds",
           "last_params", "last_refits"]

SAME_POINT_TOL = 1e-3  # proposals this close (fraction of the box, max-norm) to an abandoned point are skipped
CONSECUTIVE_FAILURES = "consecutive failed evaluations"  # in the stop reason of an aborted run


def stop_reason(cfg: TuneConfig, evals: list[dict], elapsed: float) -> str | None:
    """Why the run stops now (a budget is spent, or the objective failed
    ``max_consecutive_failures`` times in a row), or ``None`` to go on."""
    if cfg.budget_evaluations is not None and len(evals) >= cfg.budget_evaluations:
        return f"evaluation budget reached ({len(evals)} evaluations)"
    spent = sum(r["cost"] for r in evals)
    if cfg.budget_cost is not None and spent >= cfg.budget_cost:
        return f"cost budget reached ({spent:.6g} of {cfg.budget_cost:g})"
    if cfg.budget_wall_clock_s is not None and elapsed >= cfg.budget_wall_clock_s:
        return f"wall-clock budget reached ({elapsed:.1f} s of {cfg.budget_wall_clock_s:g} s)"
    run = 0
    for r in reversed(evals):
        if r["status"] != "failed":
            break
        run += 1
    if run >= cfg.max_consecutive_failures:
        return f"stopped after {run} {CONSECUTIVE_FAILURES} (max_consecutive_failures); see the journal"
    return None


def issue_block(cfg: TuneConfig, evals: list[dict], in_flight: list[dict], elapsed: float) -> str | None:
    """Why no further evaluation may be issued now: :func:`stop_reason`, or a budget
    that the evaluations in flight will spend (counted at their configured cost)."""
    reason = stop_reason(cfg, evals, elapsed)
    if reason is not None or not in_flight:
        return reason
    if cfg.budget_evaluations is not None and len(evals) + len(in_flight) >= cfg.budget_evaluations:
        return f"evaluation budget reached ({len(evals) + len(in_flight)} evaluations)"
    spent = sum(r["cost"] for r in evals) + sum(cfg.cost_of(r["z"]) for r in in_flight)
    if cfg.budget_cost is not None and spent >= cfg.budget_cost:
        return f"cost budget reached ({spent:.6g} of {cfg.budget_cost:g})"
    return None


def design_cost(cfg: TuneConfig, opt) -> float:
    """The configured cost of the optimiser's whole initial design."""
    return float(sum(cfg.cost_of(z) for _, z in opt.design))


def fallback(cfg: TuneConfig, evals: list[dict], issued: list[dict], z, replaces, holds, ask_s=0.0,
             timings=None) -> dict:
    """A uniform random point at fidelity ``z``: the ``i``-th fallback of the run draws
    from ``default_rng([seed, i])``, so a resumed run draws the same points."""
    n_fallbacks = (sum(1 for r in evals if "id" not in r and r["source"] == "fallback" and r["attempt"] == 0)
                   + sum(1 for r in issued if r["source"] == "fallback" and r["attempt"] == 0
                         and r.get("reissue_of") is None))
    rng = np.random.default_rng([cfg.seed, n_fallbacks, 0x6d756d62])
    b = np.asarray(cfg.internal_bounds)
    u = cfg.snap(b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=len(b)))
    return {"u": [float(v) for v in u], "z": z, "source": "fallback", "attempt": 0, "ask_s": ask_s,
            "timings": timings, "replaces": replaces, "holds": holds}


def known_failure(cfg: TuneConfig, evals: list[dict], u, z) -> bool:
    """Whether ``(u, z)`` is (within :data:`SAME_POINT_TOL`) a point abandoned earlier."""
    b = np.asarray(cfg.internal_bounds)
    width = b[:, 1] - b[:, 0]
    zw = 1.0 if cfg.discrete else cfg.fidelity_bounds[1] - cfg.fidelity_bounds[0]
    for r in evals:
        if r["status"] == "failed" and r["attempt"] >= cfg.retries:
            if (abs(float(r["z"]) - float(z)) / zw <= (0 if cfg.discrete else SAME_POINT_TOL)
                    and np.max(np.abs(np.asarray(r["u"]) - np.asarray(u)) / width) <= SAME_POINT_TOL):
                return True
    return False


def ask_point(cfg: TuneConfig, opt, evals: list[dict], issued: list[dict]) -> dict:
    """The optimiser's next point (initial design, then the strategy, given the
    evaluations in flight), or a random replacement when it proposes an abandoned
    point; a design point abandoned at another fidelity is replaced by that point's
    replacement."""
    in_design, n_timings = opt.asks_design, len(opt.timings)
    t0 = time.perf_counter()
    u, z = opt.ask()
    ask_s = time.perf_counter() - t0
    asked = opt.pending()[-1]
    holds = {"u": [float(v) for v in asked.x], "z": asked.z, "design_index": asked.design_index}
    timings = opt.timings[-1]._asdict() if len(opt.timings) > n_timings else None
    u, replaces = [float(v) for v in u], None
    if cfg.snaps:  # integers rounded, categoricals one-hot: the model is told the point evaluated
        u = [float(v) for v in cfg.snap(u)]
    if in_design:
        replaced = {tuple(r["replaces"]): r["u"] for r in [*evals, *issued] if r.get("replaces") is not None}
        while tuple(u) in replaced:
            replaces, u = replaces or u, replaced[tuple(u)]
    elif known_failure(cfg, evals, u, z):
        return fallback(cfg, evals, issued, z, u, holds, ask_s, timings)
    return {"u": u, "z": z, "source": "design" if in_design else "bo", "replaces": replaces, "attempt": 0,
            "ask_s": ask_s, "timings": timings, "holds": holds}


def follow_up(cfg: TuneConfig, evals: list[dict], issued: list[dict], failed: dict) -> dict:
    """What follows the failed evaluation ``failed``: a retry of the same point (same
    ``point`` number) while ``retries`` allow, else a random replacement."""
    if failed["attempt"] < cfg.retries:
        point = {"u": failed["u"], "z": failed["z"], "source": failed["source"], "point": failed["point"],
                 "attempt": failed["attempt"] + 1, "ask_s": 0.0, "timings": None,
                 "replaces": failed.get("replaces"), "holds": failed.get("holds")}
    else:
        point = fallback(cfg, evals, issued, failed["z"], failed["u"], failed.get("holds"))
        if failed["source"] == "design":  # the design point's replacement at another fidelity, if any
            same = [r["u"] for r in [*evals, *issued] if r["source"] == "fallback" and r.get("replaces") == failed["u"]]
            if same:
                point["u"] = same[0]
    point["follows"] = failed.get("id")
    return point


def reissue(lost: dict) -> dict:
    """The point of an issued record lost with a crash, to be issued again as it was."""
    keys = ("u", "z", "source", "point", "attempt", "replaces", "holds", "follows")
    return {**{k: lost.get(k) for k in keys}, "ask_s": 0.0, "timings": None, "reissue_of": lost["id"]}


def unfinished(evals: list[dict], issued: list[dict]) -> tuple[list[dict], list[dict]]:
    """``(lost, owed)``: issued records without a result and not issued again (lost with
    a crash), and failed evaluations whose retry or replacement was never issued. An
    evaluation reissued after one crash is owed by its reissue alone, so a second crash
    issues it again only if the reissue was lost too."""
    done = {r["id"] for r in evals if "id" in r}
    reissued = {r.get("reissue_of") for r in issued}  # issued again after an earlier crash: its reissue stands for it
    lost = [r for r in issued if r["id"] not in done and r["id"] not in reissued]
    followed = {r.get("follows") for r in issued}
    owed = [r for r in evals if r["status"] == "failed" and "id" in r and r["id"] not in followed]
    if evals and not issued and evals[-1]["status"] == "failed" and "id" not in evals[-1]:
        owed.append(evals[-1])  # a journal of a sequential run written before issued records
    return lost, owed


def first_results(evals):
    """The ``eval`` records ``evals`` (an iterable, in journal order) less any second
    result of the same evaluation, matched by point number, attempt, source and whether
    it replaces a point: journals written before reissued evaluations were tracked
    across two crashes can hold two results of one issued point. Records without an
    ``id`` or a ``point`` (older journals) are all kept. A generator, in order."""
    seen = set()
    for r in evals:
        key = (r.get("point"), r.get("attempt"), r.get("source"), r.get("replaces") is not None)
        if "id" in r and r.get("point") is not None and key in seen:
            continue
        seen.add(key)
        yield r


def pending_holds(lost: list[dict], owed: list[dict]) -> list[dict]:
    """The optimiser's pending points after a crash: those the lost and owed
    evaluations stand for (each once)."""
    out, seen = [], set()
    for r in [*lost, *owed]:
        h = r.get("holds")
        if h is not None and (tuple(h["u"]), h["z"]) not in seen:
            seen.add((tuple(h["u"]), h["z"]))
            out.append(h)
    return out


def last_params(records: list[dict]):
    """The last recorded hyper-parameters (an issued BO point records those of its ask),
    or ``None``."""
    return next((r["params"] for r in reversed(records) if r.get("params") is not None), None)


def last_refits(records: list[dict]):
    """The last recorded refit schedule (``[anchor, cold]`` of
    :class:`mumbo_jax.bo.refits.Schedule`, recorded beside the hyper-parameters), or
    ``None`` (journals written before it was recorded)."""
    return next((r["refits"] for r in reversed(records) if r.get("refits") is not None), None)
