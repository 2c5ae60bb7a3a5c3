"""The tuning run: the loop around :class:`mumbo_jax.bo.asktell.AskTell` that evaluates,
journals, tells and prints; :func:`tune` starts a run and :func:`resume` continues one.

Parallel evaluations: ``[workers] n`` evaluations are in flight at once
(:mod:`mumbo_jax.run.tune.executors`: local worker processes or a Dask cluster); each ask
while others run conditions the decision on them (``AskTell``'s pending points);
results are journaled and told in the order they finish.

Journal and resume: the header (the configuration) is synced before the first
evaluation; each evaluation is journaled (appended and fsync'ed) when it is handed out
(``issued``, with an id) and when it finishes (``eval``, the same id)
(:mod:`mumbo_jax.run.journal`, :mod:`mumbo_jax.run.tune.schedule`). :func:`resume`
(``mumbo-jax resume RUN_DIR``) replays the finished evaluations through
``AskTell.from_state`` (the told data, the evaluations still owed as pending points and
the last fitted hyper-parameters), issues again the evaluations that were in flight at
the crash (issued, never finished) and continues; no finished evaluation is lost or
repeated. With one worker the keys of BO step k are ``fold_in(key(seed), k)``, so the
resumed optimiser proposes what the killed one would have.

Failures (:mod:`mumbo_jax.run.tune.schedule`): an objective that raises, returns
NaN/inf, text or a malformed value, overruns ``time_limit_s``, or whose worker dies is
recorded as failed (with the error and traceback); it is retried ``retries`` times,
then replaced by a random point at the same fidelity. ``max_consecutive_failures``
stops a run whose objective is broken (the results say ``aborted``; the CLI exits 1),
and so does a run in which no evaluation succeeded. A failed evaluation counts towards
the evaluation budget and costs its fidelity's configured cost. With ``[objective]
failures = "impute"`` (the default) every failed evaluation is told to the model as a
pessimistic value (the worst score so far minus a margin,
:meth:`~mumbo_jax.bo.asktell.AskTell.tell_failure`), so the optimiser steers away from
a failing region; ``"ignore"`` keeps failures from the model (a failing region that
looks unexplored then keeps attracting proposals).

Wall-clock accounting: each record carries ``eval_s`` (the objective), ``ask_s`` (the
optimiser: fit, g* sampling, maximisation, split in ``timings``) and ``other_s`` (the
rest: journal writes, replay, worker starts, printing); they add up to ``elapsed_s``,
the run's wall-clock summed over sessions (with several workers the evaluations
overlap: ``eval_s`` then no longer adds up to the wall-clock). Time between the last
record and a kill is lost (it is not in the journal).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import concurrent.futures
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from mumbo_jax.run.journal import JOURNAL_NAME, Journal, JournalError
from mumbo_jax.run.lock import check_free, run_lock
from mumbo_jax.run.x64 import with_x64
from mumbo_jax.run.output import prepare_output
from mumbo_jax.run.schema import ConfigError
from mumbo_jax.run.tune import objective as obj
from mumbo_jax.run.tune.config import MAX_WORKERS, TuneConfig, load_tune_config, make_tune_task, \
    parse_tune_config
from mumbo_jax.run.tune import executors, schedule
from mumbo_jax.run.tune.results import PLOT_NAME, RESULTS_NAME, best_at_target, plot_tuning, results_from_journal
from mumbo_jax.run.tune.schedule import (CONSECUTIVE_FAILURES, SAME_POINT_TOL, design_cost, last_params,
                                         last_refits, stop_reason)
from mumbo_jax.run.tune.warm import read_warm_start
from mumbo_jax.run.tune.worker import Worker, objective_ref, resolve_objective, worker_ref

__all__ = ["tune", "resume", "replay", "stop_reason", "design_cost", "SAME_POINT_TOL", "FORMAT",
           "CONSECUTIVE_FAILURES"]

FORMAT = 1  # journal format version
NO_SUCCESS = "no evaluation succeeded"  # in the stop reason of a run without a result (aborted: exit 1)


# ---------------------------------------------------------------------------- the run


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _fmt(v, spec=".4g") -> str:
    return "n/a" if v is None else format(v, spec)


def _fmt_value(v, spec: str) -> str:
    """A parameter value for progress lines (a float formatted, an int or a choice as is)."""
    return format(v, spec) if isinstance(v, float) else str(v)


def replay(task, settings, seed: int, evals: list[dict], learn_cost: bool = False, pending=(), records=None,
           pending_mode: str = "believer", failures: str = "ignore", warm=()):
    """An :class:`~mumbo_jax.bo.asktell.AskTell` holding the journal's successful evaluations,
    the pending points ``pending`` (``{"u", "z", "design_index"}`` dicts, see
    :func:`~mumbo_jax.run.tune.schedule.pending_holds`), the last recorded
    hyper-parameters of ``records`` (default ``evals``; the warm start of the next fit)
    and, with ``failures = "impute"``, the failed evaluations
    (:meth:`~mumbo_jax.bo.asktell.AskTell.tell_failure`). ``warm``: the run's warm-start
    records (:mod:`mumbo_jax.run.tune.warm`), told first."""
    from mumbo_jax.bo.asktell import AskTell
    from mumbo_jax.gp import models

    ok = [*warm, *schedule.first_results(r for r in evals if r["status"] == "ok")]
    params = last_params(evals if records is None else records)
    if params is None:  # plain numpy from the start: the fit then compiles once, not twice
        params = {k: np.asarray(v).tolist() for k, v in models.default_params(task.spec).items()}
    state = {"seed": seed, "x": [r["u"] for r in ok], "z": [r["z"] for r in ok], "y": [r["y"] for r in ok],
             "costs": [r["cost"] for r in ok], "params": params,
             "pending": [{"x": h["u"], "z": h["z"], "design_index": h.get("design_index")} for h in pending],
             "failed": ([[r["u"], r["z"]] for r in evals if r["status"] == "failed"] if failures == "impute"
                        else [])}
    refits = last_refits(evals if records is None else records)  # the refit schedule (mumbo_jax.bo.refits)
    if refits is not None and all(c is None or c <= len(ok) for c in refits):
        state["refits"] = refits
    cost_model = None
    if learn_cost:
        from mumbo_jax.gp import costmodel

        cost_model = costmodel.cost_model_for(task)
    return AskTell.from_state(task, settings, state, cost_model=cost_model, pending=pending_mode)


class _Run:
    """The imperative shell around AskTell: issue, evaluate, journal, tell, print."""

    def __init__(self, cfg: TuneConfig, objective, run_dir: Path, journal: Journal, records: list[dict], stream,
                 executor=None, started=None):
        self.cfg, self.objective, self.run_dir, self.journal = cfg, objective, run_dir, journal
        self.records = list(records)
        self.evals = [r for r in records if r.get("type") == "eval"]
        self.issued = [r for r in records if r.get("type") == "issued"]
        self.warm = [r for r in records if r.get("type") == "warm"]
        self.stream = stream
        self.warnings: list[str] = []
        self.user_executor, self.started = executor, started

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
                     "n_evaluations": len(self.evals), "pid": os.getpid(), "workers": cfg.workers,
                     "executor": cfg.executor if self.user_executor is None else "user"})
        task = make_tune_task(cfg)
        lost, owed = schedule.unfinished(self.evals, self.issued)
        opt = replay(task, cfg.settings(), cfg.seed, self.evals, cfg.learn_cost,
                     pending=schedule.pending_holds(lost, owed), records=self.records, pending_mode=cfg.pending,
                     failures=cfg.failures, warm=self.warm)
        self.check_design_budget(opt)
        if self.evals or lost:
            n_ok = sum(r["status"] == "ok" for r in self.evals)
            self.say(f"resuming (session {session}): replayed {len(self.evals)} journaled evaluations "
                     f"({n_ok} ok) at {offset:.1f} s of wall-clock"
                     + (f"; issuing again {len(lost)} lost with the crash" if lost else ""))
        queue = [("reissue", r) for r in lost] + [("follow", r) for r in owed]
        submit, close = self.start_executor()
        in_flight, prev, self.session = {}, offset, session
        try:
            while True:
                while len(in_flight) < cfg.workers:
                    if schedule.issue_block(cfg, self.evals, list(in_flight.values()), elapsed()) is not None:
                        break
                    if not queue and not opt.asks_design and not opt.x:
                        break  # more workers than design points: the first BO step waits for a result
                    rec = self.issue(self.next_point(queue, opt), opt, elapsed())
                    in_flight[submit(rec)] = rec
                if not in_flight:
                    break
                done, _ = concurrent.futures.wait(in_flight, return_when=concurrent.futures.FIRST_COMPLETED)
                for fut in sorted(done, key=lambda f: in_flight[f]["id"]):
                    rec = in_flight.pop(fut)
                    prev = self.complete(rec, executors.outcome_of(fut), opt, queue, prev, elapsed())
        finally:
            close()
        reason = stop_reason(cfg, self.evals, elapsed()) or "budget reached"
        aborted = CONSECUTIVE_FAILURES in reason
        if self.evals and not any(r["status"] == "ok" for r in self.evals):
            reason, aborted = f"{reason}, and {NO_SUCCESS}", True
        self.say(f"stopping: {reason}")
        return self.finish({"type": "end", "reason": reason, "aborted": aborted,
                            "time": _now(), "session": session, "elapsed_s": elapsed()}, opt)

    def start_executor(self):
        """``(submit(issued record) -> future, close())`` for the configured executor."""
        cfg = self.cfg
        if self.user_executor is not None or cfg.workers > 1 or cfg.executor == "dask":
            ref = worker_ref(self.objective)
            if self.user_executor is not None:
                ex, close, isolate = self.user_executor, (lambda: None), cfg.isolate
            else:
                ex, name, close = self.started or executors.make_executor(cfg)
                isolate = cfg.isolate or cfg.executor == "process"
                self.say(f"  evaluations on {name}")
            return (lambda rec: ex.submit(executors.evaluate_remote, ref, cfg.base_dir, rec["x"], rec["fidelity"],
                                          cfg.time_limit_s, isolate, self.outcome_path(rec))), close
        isolate = cfg.isolate or cfg.time_limit_s is not None
        worker = Worker(worker_ref(self.objective), cfg.base_dir, cfg.time_limit_s) if isolate else None
        fn = None if isolate else (self.objective if callable(self.objective)
                                   else resolve_objective(self.objective, cfg.base_dir))
        inline = executors.InlineExecutor()
        evaluate = (lambda x, f: worker.evaluate(x, f)) if worker else (lambda x, f: obj.evaluate(fn, x, f))
        return (lambda rec: inline.submit(evaluate, rec["x"], rec["fidelity"])), (worker.close if worker else
                                                                                  (lambda: None))

    def outcome_path(self, rec: dict) -> str:
        """Where a remote evaluation keeps its outcome: ``RUN_DIR/outcomes/<id>.json`` of
        the first issue of the evaluation (a reissue after a crash reads the original's)."""
        by_id = {r["id"]: r for r in self.issued}
        first = rec
        while first.get("reissue_of") is not None and first["reissue_of"] in by_id:
            first = by_id[first["reissue_of"]]
        return str((self.run_dir / executors.OUTCOMES / f"{first['id']}.json").resolve())

    def next_point(self, queue: list, opt) -> dict:
        """A lost evaluation again, a retry or replacement of a failed one, or the optimiser's ask."""
        if queue:
            kind, r = queue.pop(0)
            if kind == "reissue":
                return schedule.reissue(r)
            return schedule.follow_up(self.cfg, self.evals, self.issued, r)
        return schedule.ask_point(self.cfg, opt, self.evals, self.issued)

    def issue(self, point: dict, opt, now: float) -> dict:
        """Journal an evaluation as handed out (an ``issued`` record with a new id)."""
        cfg = self.cfg
        numbers = [r["point"] for r in [*self.evals, *self.issued]]
        if point.get("point") is None:
            point["point"] = 1 + max(numbers, default=-1)
        x = cfg.values_of(point["u"])
        rec = {"type": "issued", "id": 1 + max((r["id"] for r in self.issued), default=-1),
               "point": point["point"], "attempt": point["attempt"], "source": point["source"],
               "replaces": point.get("replaces"), "u": point["u"], "z": point["z"], "x": x,
               "fidelity": cfg.fidelity_value(point["z"]), "holds": point.get("holds"),
               "follows": point.get("follows"), "reissue_of": point.get("reissue_of"), "ask_s": point["ask_s"],
               "timings": point["timings"], "params": self.params(opt) if point["source"] == "bo" else None,
               "refits": list(opt.schedule) if point["source"] == "bo" else None,
               "session": self.session, "elapsed_s": now}
        self.append(rec)
        self.issued.append(rec)
        return rec

    @staticmethod
    def params(opt) -> dict:
        return {k: np.asarray(v).tolist() for k, v in opt.params.items()}

    def complete(self, issued: dict, outcome: dict, opt, queue: list, prev: float, now: float) -> float:
        """Journal a finished evaluation, tell it to the optimiser (or queue what follows
        a failure) and print its line; returns ``now``."""
        cfg, point = self.cfg, issued
        ok = outcome["status"] == "ok"
        score = outcome.get("score") if ok else None
        y = None if score is None else (score if cfg.maximise else -score)
        reported = outcome.get("cost") if ok else None
        if reported is not None:
            cost = reported
        else:  # a learned cost model learns from the measured seconds
            cost = outcome["eval_s"] if cfg.learn_cost else cfg.cost_of(point["z"])
        if ok:
            self.tell(opt, point, y, cost)
        elif cfg.failures == "impute":
            opt.tell_failure(np.asarray(point["u"]), point["z"])
        rec = {"type": "eval", "n": len(self.evals), "id": point["id"], "point": point["point"],
               "attempt": point["attempt"], "source": point["source"], "replaces": point.get("replaces"),
               "status": outcome["status"], "x": point["x"], "u": point["u"],
               "z": point["z"], "fidelity": point["fidelity"], "score": score, "y": y, "cost": cost,
               "cost_reported": reported is not None, "reused": bool(outcome.get("reused", False)),
               "error": outcome.get("error"),
               "traceback": outcome.get("traceback"), "timed_out": bool(outcome.get("timed_out", False)),
               "eval_s": outcome["eval_s"], "ask_s": point["ask_s"], "timings": point["timings"],
               "other_s": max(now - prev - outcome["eval_s"] - point["ask_s"], 0.0), "elapsed_s": now,
               "session": self.session, "holds": point.get("holds"), "params": self.params(opt),
               "refits": list(opt.schedule)}
        self.append(rec)
        self.evals.append(rec)
        if not ok:
            queue.append(("follow", rec))
        self.progress(rec)
        return now

    @staticmethod
    def tell(opt, point: dict, y, cost):
        """Tell a result: the pending point it holds, or (a replacement) cancel that
        pending point and tell the replacement as the user's own evaluation."""
        holds = point.get("holds")
        if holds is not None and (list(holds["u"]) != list(point["u"]) or holds["z"] != point["z"]):
            try:
                opt.cancel(np.asarray(holds["u"]), holds["z"])
            except ValueError:  # already cancelled (e.g. by an earlier replacement)
                pass
        opt.tell(np.asarray(point["u"]), point["z"], y, cost)

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
        xs = " ".join(f"{k}={_fmt_value(v, '.4g')}" for k, v in r["x"].items())
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
            opt = replay(make_tune_task(cfg), cfg.settings(), cfg.seed, self.evals, cfg.learn_cost,
                         failures=cfg.failures, warm=self.warm)
        incumbent = None
        # AskTell.incumbent derives its key from the BO step count, negative (an error)
        # while the initial design is incomplete: no model incumbent before that
        if any(r["status"] == "ok" for r in self.evals) and not opt.in_initial_design:
            from mumbo_jax.bo.safe_recommendation import UnsafeRecommendationWarning

            t0 = time.perf_counter()
            if not opt.failed:  # failures="ignore": the recommendation still steers clear of them
                for r in self.evals:
                    if r["status"] == "failed":
                        opt.tell_failure(np.asarray(r["u"]), r["z"])
            with warnings.catch_warnings():  # the fallback is said in the results and the summary
                warnings.simplefilter("ignore", UnsafeRecommendationWarning)
                u, mu = opt.incumbent()
            incumbent = {"x": cfg.values_of(u),
                         "u": [float(v) for v in u], "predicted_score": mu if cfg.maximise else -mu,
                         "fit_s": time.perf_counter() - t0, "note": opt.recommendation_note}
        results = results_from_journal(cfg, self.records, incumbent, run_dir=str(self.run_dir))
        results["warnings"] = list(self.warnings)
        results["warm_start"] = len(self.warm)
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
            xs = ", ".join(f"{k}={_fmt_value(v, '.6g')}" for k, v in incumbent["x"].items())
            self.say(f"  incumbent (best predicted at the target): {xs}; predicted score "
                     f"{incumbent['predicted_score']:.6g}")
            if incumbent["note"]:
                self.say(f"  (the best successful evaluation, not the model's optimum: {incumbent['note']})")
        best = results["best_observed"]
        if best is not None:
            xs = ", ".join(f"{k}={_fmt_value(v, '.6g')}" for k, v in best["x"].items())
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


def _with_workers(cfg: TuneConfig, workers=None, executor=None, scheduler=None) -> TuneConfig:
    """``cfg`` with the command line's --workers/--executor/--scheduler applied."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(f"--workers must be a positive integer (evaluations at once), got {workers!r}")
    if workers is not None and workers > MAX_WORKERS:
        raise ConfigError(f"--workers must be <= {MAX_WORKERS} (evaluations at once), got {workers}")
    if executor is not None and executor not in executors.EXECUTORS:
        raise ConfigError(f"--executor must be one of {', '.join(executors.EXECUTORS)}, got {executor!r}")
    changes = {k: v for k, v in (("workers", workers), ("executor", executor), ("scheduler", scheduler))
               if v is not None}
    if scheduler is not None and executor is None:
        changes["executor"] = "dask"
    cfg = dataclasses.replace(cfg, **changes)
    if cfg.executor == "dask" and not cfg.scheduler:
        raise ConfigError("--executor dask needs --scheduler ADDRESS (or [workers] scheduler), e.g. tcp://host:8786")
    return cfg


def _connect(cfg: TuneConfig, user_executor):
    """The Dask executor, connected now (a bad address is a ConfigError before any
    evaluation), or ``None``."""
    if user_executor is None and cfg.executor == "dask":
        return executors.make_executor(cfg)
    return None


@with_x64
def tune(config, objective: Callable | str | None = None, out=None, stream=None, workers=None, executor=None,
         scheduler=None, warm_start=None) -> dict:
    """Start a journaled tuning run and run it to its budget.

    Args:
        config: a :class:`TuneConfig`, TOML-like plain data, or a path to a TOML file.
        objective: a callable ``f(x: dict, fidelity) -> score | (score, cost) | dict``, or
            a ``"module:function"`` string; default ``[objective] function``.
        out: the run folder (default ``[run] out``); it must not hold a journal yet.
        stream: where progress goes (default stdout).
        workers: evaluations at once (overrides ``[workers] n``).
        executor: ``"process"`` or ``"dask"`` (overrides ``[workers] executor``), or any
            :class:`concurrent.futures.Executor` instance (its evaluations run
            :func:`mumbo_jax.run.tune.executors.evaluate_remote`; ``workers`` of them at once).
        scheduler: the Dask scheduler's address (implies ``executor="dask"``).
        warm_start: earlier evaluations to tell the optimiser first: paths of other
            runs' journals or of CSV files (:mod:`mumbo_jax.run.tune.warm`).

    Returns:
        The results dict (also written to ``RUN_DIR/results.json``).

    Raises:
        ConfigError: invalid configuration or an objective that cannot be loaded.
        JournalError: the run folder already holds a run (use :func:`resume`).
    """
    import jax

    cfg = _as_config(config)
    user_executor = executor if isinstance(executor, concurrent.futures.Executor) else None
    cfg = _with_workers(cfg, workers, None if user_executor is not None else executor, scheduler)
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
    if cfg.isolate or cfg.workers > 1 or cfg.executor == "dask" or user_executor is not None:
        worker_ref(objective)
    warm = read_warm_start(cfg, [warm_start] if isinstance(warm_start, (str, Path)) else warm_start)
    run_dir = Path(cfg.out)
    check_free(run_dir)  # a live holder is named (RunLockedError) before "already holds a run"
    if (run_dir / JOURNAL_NAME).exists():
        raise JournalError(f"{run_dir} already holds a run ({JOURNAL_NAME}): `mumbo-jax resume {run_dir}` continues "
                           "it; choose another output folder for a new run")
    prepare_output(run_dir)  # a folder we can write, before any evaluation
    stream = sys.stdout if stream is None else stream
    with run_lock(run_dir, "mumbo-jax tune", say=lambda m: print(m, file=stream, flush=True)):
        return _start(cfg, objective, ref, run_dir, stream, user_executor, warm)


def _start(cfg: TuneConfig, objective, ref, run_dir: Path, stream, user_executor, warm=()) -> dict:
    """The body of :func:`tune` once the run folder is locked: the journal and the run."""
    import jax

    if (run_dir / JOURNAL_NAME).exists():  # made by a writer that finished while we waited for the lock
        raise JournalError(f"{run_dir} already holds a run ({JOURNAL_NAME}): `mumbo-jax resume {run_dir}` continues "
                           "it; choose another output folder for a new run")
    started = _connect(cfg, user_executor)  # an unreachable scheduler fails before the journal exists
    from mumbo_jax import __version__

    header = {"format": FORMAT, "created": _now(), "mumbo_jax": __version__, "jax": jax.__version__,
              "config": cfg.to_dict(), "source": cfg.source, "base_dir": cfg.base_dir, "objective": ref,
              "warm_start": sorted({r["source"] for r in warm})}
    try:
        journal = Journal.create(run_dir / JOURNAL_NAME, header)
        for r in warm:  # before any evaluation: a resumed run replays them first
            journal.append(r)
    except BaseException:
        if started is not None:
            started[2]()
        raise
    with journal:
        print(f"mumbo-jax tune: {cfg.describe()}\n  objective {ref or repr(objective)}"
              f"{f', time limit {cfg.time_limit_s:g} s (worker process)' if cfg.time_limit_s else ''}"
              f"\n  run folder {run_dir}/ (every evaluation is journaled and synced; "
              f"`mumbo-jax resume {run_dir}` continues a killed run)", file=stream, flush=True)
        if warm:
            print(f"  warm start: {len(warm)} earlier evaluations told first ({', '.join(header['warm_start'])})",
                  file=stream, flush=True)
        return _Run(cfg, objective, run_dir, journal, list(warm), stream, user_executor, started).run()


@with_x64
def resume(run_dir, objective: Callable | str | None = None, stream=None, workers=None, executor=None,
           scheduler=None) -> dict:
    """Continue a run from its journal (after a crash, a kill or a Ctrl-C), or rewrite
    the results of a finished one.

    Args:
        run_dir: the run folder (holding ``journal.jsonl``).
        objective: needed only when the run's objective was a callable that cannot be
            imported by name (then pass the same callable again).
        stream: where progress goes (default stdout).
        workers, executor, scheduler: as for :func:`tune`; default: the run's own
            ``[workers]`` (a new scheduler address after a cluster restart, say).

    Raises:
        JournalError: no usable journal (a torn last line is only warned about).
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise JournalError(f"{run_dir}: no such run folder")
    stream = sys.stdout if stream is None else stream
    if not (run_dir / JOURNAL_NAME).is_file():
        raise JournalError(f"{run_dir / JOURNAL_NAME}: no journal here (is this a run folder made by "
                           "`mumbo-jax tune`?)")
    prepare_output(run_dir)  # writable: the lock, results.json, the plot
    with run_lock(run_dir, "mumbo-jax resume", say=lambda m: print(m, file=stream, flush=True)):
        return _continue(run_dir, objective, stream, workers, executor, scheduler)


def _continue(run_dir: Path, objective, stream, workers, executor, scheduler) -> dict:
    """The body of :func:`resume` once the run folder is locked."""
    journal, header, records = Journal.reopen(run_dir / JOURNAL_NAME)
    with journal:
        if header.get("format") != FORMAT:
            raise JournalError(f"{journal.path}: journal format {header.get('format')!r}, this version reads {FORMAT}")
        try:
            cfg = parse_tune_config(header["config"], source=header.get("source"), base_dir=header.get("base_dir"))
        except ConfigError as e:
            raise JournalError(f"{journal.path}: the header's configuration is invalid: {e}") from None
        cfg = dataclasses.replace(cfg, out=str(run_dir))
        user_executor = executor if isinstance(executor, concurrent.futures.Executor) else None
        cfg = _with_workers(cfg, workers, None if user_executor is not None else executor, scheduler)
        if objective is None:
            objective = header.get("objective")
            if objective is None:
                raise ConfigError("this run's objective was a Python callable that cannot be imported by name; "
                                  "resume it from Python: mumbo_jax.run.tune.resume(run_dir, objective=f)")
        if isinstance(objective, str):
            resolve_objective(objective, cfg.base_dir)
        prepare_output(run_dir)  # still writable (results.json, the plot)
        started = _connect(cfg, user_executor)
        print(f"mumbo-jax resume: {run_dir}/ ({sum(r.get('type') == 'eval' for r in records)} evaluations in the "
              f"journal)\n  {cfg.describe()}", file=stream, flush=True)
        return _Run(cfg, objective, run_dir, journal, records, stream, user_executor, started).run()

