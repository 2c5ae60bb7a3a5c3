"""The tuning run: the loop around :class:`mumbo_jax.bo.loop.AskTell` that evaluates,
journals, tells and prints; :func:`tune` starts a run and :func:`resume` continues one.

Journal and resume: the header (the configuration) is synced before the first
evaluation and every evaluation is appended and fsync'ed as soon as it returns
(:mod:`mumbo_jax.run.journal`). :func:`resume` (``mumbo-jax resume RUN_DIR``) replays the
journal through ``AskTell.from_state`` (the told data and the last fitted
hyper-parameters) and continues: the keys of BO step k are ``fold_in(key(seed), k)``,
so the resumed optimiser proposes what the killed one would have, and no finished
evaluation is lost or redone. The evaluation that was running at the kill is redone.

Failures: an objective that raises, returns NaN/inf, text or a malformed value, or
overruns ``time_limit_s`` is recorded as failed (with the error and traceback) and never
told to the model. ``retries`` re-evaluates the same point that many more times; a
point that still fails is abandoned and replaced by a uniform random point at the same
fidelity (deterministic in the seed): ``AskTell`` would otherwise propose the same point
again, since its data did not change; a later proposal at an abandoned point (within
:data:`SAME_POINT_TOL` of the box) is replaced the same way, without evaluating it. An
abandoned design point is replaced by the same point at every fidelity.
``max_consecutive_failures`` stops a run whose objective is broken (the results say
``aborted``; the CLI exits 1). A failed evaluation counts towards the evaluation budget
and costs its fidelity's configured cost. Limitation: the model knows nothing of
failures, so a failing region that looks unexplored keeps attracting proposals near,
not at, the failed points; avoiding it needs a failure model in the decision rule.

Wall-clock accounting: each record carries ``eval_s`` (the objective), ``ask_s`` (the
optimiser: fit, g* sampling, maximisation, split in ``timings``) and ``other_s`` (the
rest: journal writes, replay, worker starts, printing); they add up to ``elapsed_s``,
the run's wall-clock summed over sessions. Time between the last record and a kill is
lost (it is not in the journal).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import sys
import time
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from mumbo_jax.run.journal import JOURNAL_NAME, Journal, JournalError
from mumbo_jax.run.output import prepare_output
from mumbo_jax.run.schema import ConfigError
from mumbo_jax.run.tune import objective as obj
from mumbo_jax.run.tune.config import TuneConfig, load_tune_config, make_tune_task, parse_tune_config
from mumbo_jax.run.tune.results import PLOT_NAME, RESULTS_NAME, best_at_target, plot_tuning, results_from_journal
from mumbo_jax.run.tune.worker import Worker, objective_ref, resolve_objective, worker_ref

__all__ = ["tune", "resume", "replay", "stop_reason", "next_point", "design_cost", "SAME_POINT_TOL", "FORMAT",
           "CONSECUTIVE_FAILURES"]

FORMAT = 1  # journal format version
CONSECUTIVE_FAILURES = "consecutive failed evaluations"  # in the stop reason of an aborted run


# ---------------------------------------------------------------------------- the run


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _fmt(v, spec=".4g") -> str:
    return "n/a" if v is None else format(v, spec)


def replay(task, settings, seed: int, evals: list[dict], learn_cost: bool = False):
    """An :class:`~mumbo_jax.bo.loop.AskTell` holding the journal's successful evaluations
    and the last recorded hyper-parameters (the warm start of the next fit)."""
    from mumbo_jax.bo import loop
    from mumbo_jax.gp import models

    ok = [r for r in evals if r["status"] == "ok"]
    params = next((r["params"] for r in reversed(evals) if r.get("params") is not None), None)
    if params is None:  # plain numpy from the start: the fit then compiles once, not twice
        params = {k: np.asarray(v).tolist() for k, v in models.default_params(task.spec).items()}
    state = {"seed": seed, "x": [r["u"] for r in ok], "z": [r["z"] for r in ok], "y": [r["y"] for r in ok],
             "costs": [r["cost"] for r in ok], "params": params}
    cost_model = None
    if learn_cost:
        from mumbo_jax.gp import costmodel

        cost_model = costmodel.cost_model_for(task)
    return loop.AskTell.from_state(task, settings, state, cost_model=cost_model)


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


def design_cost(cfg: TuneConfig, opt) -> float:
    """The configured cost of the optimiser's whole initial design."""
    return float(sum(cfg.cost_of(z) for _, z in opt.design))


SAME_POINT_TOL = 1e-3  # proposals this close (fraction of the box, max-norm) to an abandoned point are skipped


def _fallback(cfg: TuneConfig, evals: list[dict], z, replaces, point: int, ask_s=0.0, timings=None) -> dict:
    """A uniform random point at fidelity ``z``: the ``i``-th fallback of the run
    draws from ``default_rng([seed, i])``, so a resumed run draws the same points."""
    n_fallbacks = sum(1 for r in evals if r["source"] == "fallback" and r["attempt"] == 0)
    rng = np.random.default_rng([cfg.seed, n_fallbacks, 0x6d756d62])
    b = np.asarray([p.internal_bounds for p in cfg.parameters])
    u = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=len(b))
    return {"u": u.tolist(), "z": z, "source": "fallback", "point": point, "attempt": 0, "ask_s": ask_s,
            "timings": timings, "replaces": replaces}


def _known_failure(cfg: TuneConfig, evals: list[dict], u, z) -> bool:
    """Whether ``(u, z)`` is (within :data:`SAME_POINT_TOL`) a point abandoned earlier."""
    b = np.asarray([p.internal_bounds for p in cfg.parameters])
    width = b[:, 1] - b[:, 0]
    zw = 1.0 if cfg.discrete else cfg.fidelity_bounds[1] - cfg.fidelity_bounds[0]
    for r in evals:
        if r["status"] == "failed" and r["attempt"] >= cfg.retries:
            if (abs(float(r["z"]) - float(z)) / zw <= (0 if cfg.discrete else SAME_POINT_TOL)
                    and np.max(np.abs(np.asarray(r["u"]) - np.asarray(u)) / width) <= SAME_POINT_TOL):
                return True
    return False


def next_point(cfg: TuneConfig, task, opt, evals: list[dict]) -> dict:
    """What to evaluate next: a retry of a failed point, a random replacement for an
    abandoned one, or the optimiser's ask (initial design, then the strategy).

    Failed evaluations never reach the model, so the optimiser's data (and its step
    key) are unchanged after a failure and it would propose the same point again:
    an abandoned point is replaced by a random point at the same fidelity, and a later
    proposal at an abandoned point is skipped the same way (without evaluating it)."""
    last = evals[-1] if evals else None
    point = 0 if last is None else last["point"] + 1
    if last is not None and last["status"] == "failed":
        if last["attempt"] < cfg.retries:
            return {"u": last["u"], "z": last["z"], "source": last["source"], "point": last["point"],
                    "attempt": last["attempt"] + 1, "ask_s": 0.0, "timings": None, "replaces": last.get("replaces")}
        return _fallback(cfg, evals, last["z"], last["u"], point)
    in_design, n_timings = opt.in_initial_design, len(opt.timings)
    t0 = time.perf_counter()
    u, z = opt.ask()
    ask_s = time.perf_counter() - t0
    timings = opt.timings[-1]._asdict() if len(opt.timings) > n_timings else None
    u, replaces = [float(v) for v in u], None
    if in_design:
        # the design evaluates each x at every fidelity: an x abandoned at one fidelity
        # is replaced by the same replacement at the others (it would likely fail again)
        replaced = {tuple(r["replaces"]): r["u"] for r in evals if r.get("replaces") is not None}
        while tuple(u) in replaced:
            replaces, u = replaces or u, replaced[tuple(u)]
    elif _known_failure(cfg, evals, u, z):
        return _fallback(cfg, evals, z, u, point, ask_s, timings)
    return {"u": u, "z": z, "source": "design" if in_design else "bo", "replaces": replaces,
            "point": point, "attempt": 0, "ask_s": ask_s, "timings": timings}


class _Run:
    """The imperative shell around AskTell: evaluate, journal, tell, print."""

    def __init__(self, cfg: TuneConfig, objective, run_dir: Path, journal: Journal, records: list[dict], stream):
        self.cfg, self.objective, self.run_dir, self.journal = cfg, objective, run_dir, journal
        self.records = list(records)
        self.evals = [r for r in records if r.get("type") == "eval"]
        self.stream = stream
        self.warnings: list[str] = []

    def say(self, *args):
        print(*args, file=self.stream, flush=True)

    def run(self) -> dict:
        cfg = self.cfg
        ended = next((r for r in self.records if r.get("type") == "end"), None)
        if ended is not None:
            self.say(f"the run already finished ({ended['reason']}); rewriting its results")
            return self.finish(None)
        offset = max([r.get("elapsed_s", 0.0) for r in self.records] + [0.0])
        t_session = time.perf_counter()
        elapsed = lambda: offset + time.perf_counter() - t_session
        session = 1 + sum(r.get("type") == "session" for r in self.records)
        self.append({"type": "session", "session": session, "time": _now(), "elapsed_s": offset,
                     "n_evaluations": len(self.evals), "pid": os.getpid()})
        task = make_tune_task(cfg)
        opt = replay(task, cfg.settings(), cfg.seed, self.evals, cfg.learn_cost)
        self.check_design_budget(opt)
        if self.evals:
            n_ok = sum(r["status"] == "ok" for r in self.evals)
            self.say(f"resuming (session {session}): replayed {len(self.evals)} journaled evaluations "
                     f"({n_ok} ok) at {offset:.1f} s of wall-clock")
        isolate = cfg.isolate or cfg.time_limit_s is not None
        worker = Worker(worker_ref(self.objective), cfg.base_dir, cfg.time_limit_s) if isolate else None
        fn = None if isolate else (self.objective if callable(self.objective)
                                   else resolve_objective(self.objective, cfg.base_dir))
        prev = offset
        try:
            while True:
                reason = stop_reason(cfg, self.evals, elapsed())
                if reason is not None:
                    break
                point = next_point(cfg, task, opt, self.evals)
                x = {p.name: p.from_internal(u) for p, u in zip(cfg.parameters, point["u"])}
                fidelity = cfg.fidelity_value(point["z"])
                outcome = worker.evaluate(x, fidelity) if worker else obj.evaluate(fn, x, fidelity)
                ok = outcome["status"] == "ok"
                score = outcome.get("score") if ok else None
                y = None if score is None else (score if cfg.maximise else -score)
                reported = outcome.get("cost") if ok else None
                if reported is not None:
                    cost = reported
                else:  # a learned cost model learns from the measured seconds
                    cost = outcome["eval_s"] if cfg.learn_cost else cfg.cost_of(point["z"])
                if ok:
                    opt.tell(np.asarray(point["u"]), point["z"], y, cost)
                now = elapsed()
                rec = {"type": "eval", "n": len(self.evals), "point": point["point"], "attempt": point["attempt"],
                       "source": point["source"], "replaces": point.get("replaces"),
                       "status": outcome["status"], "x": x, "u": point["u"],
                       "z": point["z"], "fidelity": fidelity, "score": score, "y": y, "cost": cost,
                       "cost_reported": reported is not None, "error": outcome.get("error"),
                       "traceback": outcome.get("traceback"), "timed_out": bool(outcome.get("timed_out", False)),
                       "eval_s": outcome["eval_s"], "ask_s": point["ask_s"], "timings": point["timings"],
                       "other_s": max(now - prev - outcome["eval_s"] - point["ask_s"], 0.0), "elapsed_s": now,
                       "session": session, "params": opt.state_dict()["params"]}
                self.append(rec)
                self.evals.append(rec)
                prev = now
                self.progress(rec)
        finally:
            if worker is not None:
                worker.close()
        self.say(f"stopping: {reason}")
        return self.finish({"type": "end", "reason": reason, "aborted": CONSECUTIVE_FAILURES in reason,
                            "time": _now(), "session": session, "elapsed_s": elapsed()}, opt)

    def check_design_budget(self, opt):
        """Warn when the cost budget ends inside the initial design (no BO step)."""
        cfg, cost = self.cfg, design_cost(self.cfg, opt)
        if cfg.budget_cost is not None and cfg.budget_cost < cost:
            msg = (f"warning: the cost budget {cfg.budget_cost:g} is smaller than the initial design's cost "
                   f"{cost:g} ({opt.n_design} evaluations: 2 d points at every fidelity; tuning budgets include "
                   "the design): the run stops inside the design, before any BO step; raise [budget] cost above "
                   f"{cost:g} for the optimiser to choose points")
            self.warnings.append(msg)
            self.say(msg)

    def append(self, record: dict):
        self.journal.append(record)
        self.records.append(record)

    def progress(self, r: dict):
        cfg = self.cfg
        xs = " ".join(f"{k}={v:.4g}" for k, v in r["x"].items())
        z = cfg.describe_fidelity(r["z"])
        spent = sum(e["cost"] for e in self.evals)
        budget = f"/{cfg.budget_cost:g}" if cfg.budget_cost is not None else ""
        n_budget = f"/{cfg.budget_evaluations}" if cfg.budget_evaluations is not None else ""
        head = f"[{r['n'] + 1}{n_budget}] {r['source']:8s} fidelity {z:>6s}  {xs}"
        times = f"eval {r['eval_s']:.2f} s, optimiser {r['ask_s']:.2f} s"
        if r["status"] == "ok":
            best = best_at_target(cfg, self.evals)
            self.say(f"{head} -> {r['score']:.6g}  ({times}) | cost {spent:.5g}{budget} | "
                     f"best at target {_fmt(best and best['score'], '.6g')}")
        else:
            nxt = (f"retry {r['attempt'] + 1}/{cfg.retries} next" if r["attempt"] < cfg.retries
                   else "point abandoned: a random point at the same fidelity next")
            self.say(f"{head} -> FAILED: {r['error'][:200]}  ({times}; {nxt}) | cost {spent:.5g}{budget}")

    def finish(self, end: dict | None, opt=None) -> dict:
        cfg = self.cfg
        if end is not None:
            self.append(end)
        if opt is None:
            opt = replay(make_tune_task(cfg), cfg.settings(), cfg.seed, self.evals, cfg.learn_cost)
        incumbent = None
        # AskTell.incumbent derives its key from the BO step count, negative (an error)
        # while the initial design is incomplete: no model incumbent before that
        if any(r["status"] == "ok" for r in self.evals) and not opt.in_initial_design:
            t0 = time.perf_counter()
            u, mu = opt.incumbent()
            incumbent = {"x": {p.name: p.from_internal(v) for p, v in zip(cfg.parameters, u)},
                         "u": [float(v) for v in u], "predicted_score": mu if cfg.maximise else -mu,
                         "fit_s": time.perf_counter() - t0}
        results = results_from_journal(cfg, self.records, incumbent, run_dir=str(self.run_dir))
        results["warnings"] = list(self.warnings)
        path = self.run_dir / RESULTS_NAME
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(results, indent=1, allow_nan=False) + "\n")
        os.replace(tmp, path)  # atomic: a crash never leaves half a results file
        png = plot_tuning(results, self.run_dir / PLOT_NAME)
        w, c = results["wall_clock"], results["counts"]
        self.say(f"done: {c['evaluations']} evaluations ({c['ok']} ok, {c['failed']} failed), cost "
                 f"{results['cost']['spent']:.6g}, wall-clock {w['total_s']:.1f} s = evaluation {w['evaluation_s']:.1f} s "
                 f"+ optimiser {w['optimiser_s']:.1f} s + other {w['other_s']:.1f} s")
        if incumbent is not None:
            xs = ", ".join(f"{k}={v:.6g}" for k, v in incumbent["x"].items())
            self.say(f"  incumbent (best predicted at the target): {xs}; predicted score "
                     f"{incumbent['predicted_score']:.6g}")
        best = results["best_observed"]
        if best is not None:
            xs = ", ".join(f"{k}={v:.6g}" for k, v in best["x"].items())
            self.say(f"  best observed at the target: {xs}; score {best['score']:.6g}")
        self.say(f"  results: {path}\n  plot:    {png}\n  journal: {self.journal.path}")
        return results


# ---------------------------------------------------------------------------- entry points


def _as_config(config) -> TuneConfig:
    if isinstance(config, TuneConfig):
        return config
    if isinstance(config, Mapping):
        return parse_tune_config(config)
    return load_tune_config(config)


def tune(config, objective: Callable | str | None = None, out=None, stream=None) -> dict:
    """Start a journaled tuning run and run it to its budget.

    Args:
        config: a :class:`TuneConfig`, TOML-like plain data, or a path to a TOML file.
        objective: a callable ``f(x: dict, fidelity) -> score | (score, cost) | dict``, or
            a ``"module:function"`` string; default ``[objective] function``.
        out: the run folder (default ``[run] out``); it must not hold a journal yet.
        stream: where progress goes (default stdout).

    Returns:
        The results dict (also written to ``RUN_DIR/results.json``).

    Raises:
        ConfigError: invalid configuration or an objective that cannot be loaded.
        JournalError: the run folder already holds a run (use :func:`resume`).
    """
    import jax

    jax.config.update("jax_enable_x64", True)
    cfg = _as_config(config)
    if out is not None:
        cfg = dataclasses.replace(cfg, out=str(out))
    if objective is None:
        if cfg.objective is None:
            raise ConfigError("no objective: give [objective] function = 'module:function' or pass objective=")
        objective = cfg.objective
    if isinstance(objective, str):
        resolve_objective(objective, cfg.base_dir)  # fail before anything is written
        ref = objective
    elif callable(objective):
        ref = objective_ref(objective)
    else:
        raise ConfigError(f"objective must be a callable or a 'module:function' string, got {type(objective).__name__}")
    cfg = dataclasses.replace(cfg, objective=ref)
    if cfg.isolate:
        worker_ref(objective)
    run_dir = Path(cfg.out)
    if (run_dir / JOURNAL_NAME).exists():
        raise JournalError(f"{run_dir} already holds a run ({JOURNAL_NAME}): `mumbo-jax resume {run_dir}` continues "
                           "it; choose another output folder for a new run")
    prepare_output(run_dir)  # a folder we can write, before any evaluation
    from mumbo_jax import __version__

    header = {"format": FORMAT, "created": _now(), "mumbo_jax": __version__, "jax": jax.__version__,
              "config": cfg.to_dict(), "source": cfg.source, "base_dir": cfg.base_dir, "objective": ref}
    stream = sys.stdout if stream is None else stream
    with Journal.create(run_dir / JOURNAL_NAME, header) as journal:
        print(f"mumbo-jax tune: {cfg.describe()}\n  objective {ref or repr(objective)}"
              f"{f', time limit {cfg.time_limit_s:g} s (worker process)' if cfg.time_limit_s else ''}"
              f"\n  run folder {run_dir}/ (every evaluation is journaled and synced; "
              f"`mumbo-jax resume {run_dir}` continues a killed run)", file=stream, flush=True)
        return _Run(cfg, objective, run_dir, journal, [], stream).run()


def resume(run_dir, objective: Callable | str | None = None, stream=None) -> dict:
    """Continue a run from its journal (after a crash, a kill or a Ctrl-C), or rewrite
    the results of a finished one.

    Args:
        run_dir: the run folder (holding ``journal.jsonl``).
        objective: needed only when the run's objective was a callable that cannot be
            imported by name (then pass the same callable again).
        stream: where progress goes (default stdout).

    Raises:
        JournalError: no usable journal (a torn last line is only warned about).
    """
    import jax

    jax.config.update("jax_enable_x64", True)
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise JournalError(f"{run_dir}: no such run folder")
    stream = sys.stdout if stream is None else stream
    journal, header, records = Journal.reopen(run_dir / JOURNAL_NAME)
    with journal:
        if header.get("format") != FORMAT:
            raise JournalError(f"{journal.path}: journal format {header.get('format')!r}, this version reads {FORMAT}")
        try:
            cfg = parse_tune_config(header["config"], source=header.get("source"), base_dir=header.get("base_dir"))
        except ConfigError as e:
            raise JournalError(f"{journal.path}: the header's configuration is invalid: {e}") from None
        cfg = dataclasses.replace(cfg, out=str(run_dir))
        if objective is None:
            objective = header.get("objective")
            if objective is None:
                raise ConfigError("this run's objective was a Python callable that cannot be imported by name; "
                                  "resume it from Python: mumbo_jax.run.tune.resume(run_dir, objective=f)")
        if isinstance(objective, str):
            resolve_objective(objective, cfg.base_dir)
        prepare_output(run_dir)  # still writable (results.json, the plot)
        print(f"mumbo-jax resume: {run_dir}/ ({sum(r.get('type') == 'eval' for r in records)} evaluations in the "
              f"journal)\n  {cfg.describe()}", file=stream, flush=True)
        return _Run(cfg, objective, run_dir, journal, records, stream).run()

