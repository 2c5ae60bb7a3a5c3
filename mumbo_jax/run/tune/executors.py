"""Where a tuning run's evaluations run: the executor choice (``[workers]``,
``mumbo-jax tune --workers N --executor process|dask --scheduler ADDRESS``).

Every executor is a :class:`concurrent.futures.Executor`; the run submits
:func:`evaluate_remote` (a module-level function: picklable by reference) and keeps at
most ``[workers] n`` evaluations in flight.

* ``inline`` (one worker, the default): the evaluation runs in the driver (or its one
  isolated worker process with ``time_limit_s``/``isolate``), exactly as a sequential run.
* ``process`` (``n > 1``): a local pool of ``n`` isolated worker processes
  (:class:`mumbo_jax.run.tune.worker.Worker`, one per pool thread): time limits are
  enforced by killing the process, a dying process is a failed evaluation, and every
  worker dies with the driver (``PR_SET_PDEATHSIG`` + a parent watchdog), so a
  ``kill -9`` of the driver never leaves an evaluation running beside a resumed run.
* ``dask``: the executor of a ``dask.distributed.Client`` connected to
  ``[workers] scheduler`` (tasks submitted with ``pure=False``: a retry of the same
  point is a new task). The objective runs in the Dask worker process (in an isolated
  child process of it with ``time_limit_s``/``isolate``). A Dask worker that dies is
  retried by Dask on another worker; when Dask gives up (``KilledWorker``) the
  evaluation is a failure under the run's retry rules.

Paid once: a remote evaluation writes its outcome to ``RUN_DIR/outcomes/<id>.json``
(atomically, where the worker can reach the run folder: the same machine or a shared
file system) and a task of the same evaluation that finds that file returns it instead
of running the objective again. So an evaluation that finished on a Dask worker is not
paid again when Dask recomputes it (its worker died before handing the result over),
nor when ``resume`` issues again an evaluation that was in flight at a ``kill -9`` of
the driver and finished after it (the reissue reads the outcome of the original id).

Any other :class:`concurrent.futures.Executor` can be passed to
:func:`mumbo_jax.run.tune.tune` (``executor=``); it must be able to run
:func:`evaluate_remote` (the objective importable by name where it runs).
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import threading
from typing import Callable

from mumbo_jax.run.schema import ConfigError
from mumbo_jax.run.tune import objective as obj
from mumbo_jax.run.tune.worker import Worker, resolve_objective

__all__ = ["EXECUTORS", "InlineExecutor", "WorkerPool", "evaluate_remote", "make_executor", "outcome_of",
           "close_workers", "CONNECT_TIMEOUT_S"]

EXECUTORS = ("process", "dask")
CONNECT_TIMEOUT_S = 10.0

_local = threading.local()  # this thread's isolated worker and resolved objectives


class InlineExecutor(concurrent.futures.Executor):
    """Runs each submitted call at once, in the calling thread (a sequential run)."""

    def submit(self, fn, /, *args, **kwargs):
        fut = concurrent.futures.Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001 - handed to the caller through the future
            fut.set_exception(e)
        return fut


def _thread_worker(ref: str, base_dir, time_limit) -> Worker:
    key = (ref, base_dir, time_limit)
    workers = getattr(_local, "workers", None)
    if workers is None:
        workers = _local.workers = {}
    if key not in workers:
        workers[key] = Worker(ref, base_dir, time_limit)
        with _ALL_LOCK:
            _ALL_WORKERS.append(workers[key])
    return workers[key]


_ALL_LOCK = threading.Lock()
_ALL_WORKERS: list[Worker] = []


OUTCOMES = "outcomes"  # RUN_DIR/outcomes/<id>.json: each remote evaluation's outcome, written where it ran


def read_outcome(path) -> dict | None:
    """The outcome stored at ``path`` by :func:`evaluate_remote`, or ``None`` (absent,
    unreadable, or not an outcome)."""
    if path is None:
        return None
    try:
        with open(path) as fh:
            out = json.load(fh)
    except (OSError, ValueError):
        return None
    return out if isinstance(out, dict) and out.get("status") in ("ok", "failed") else None


def _store_outcome(path, outcome: dict):
    """Write ``outcome`` to ``path`` atomically (a temporary file and a rename); a
    folder this worker cannot write is not an error (the outcome is still returned)."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as fh:
            json.dump(outcome, fh, allow_nan=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        pass


def evaluate_remote(ref: str, base_dir, x: dict, fidelity, time_limit=None, isolate=False,
                    outcome_path=None) -> dict:
    """One evaluation of the objective named ``ref`` wherever this runs: the outcome
    dict of :func:`mumbo_jax.run.tune.objective.evaluate` (never raises for a failing
    objective). With ``isolate`` (or a ``time_limit``) the objective runs in this
    thread's isolated worker process.

    ``outcome_path``: where this evaluation's outcome is kept (``RUN_DIR/outcomes/<id>.json``):
    if it is there already (an earlier task of the same evaluation finished) it is
    returned with ``"reused": True`` and the objective does not run; otherwise the new
    outcome is stored there."""
    done = read_outcome(outcome_path)
    if done is not None:
        return {**done, "reused": True}
    if isolate or time_limit is not None:
        out = _thread_worker(ref, base_dir, time_limit).evaluate(x, fidelity)
    else:
        fns = getattr(_local, "fns", None)
        if fns is None:
            fns = _local.fns = {}
        if (ref, base_dir) not in fns:
            fns[(ref, base_dir)] = resolve_objective(ref, base_dir)
        out = obj.evaluate(fns[(ref, base_dir)], x, fidelity)
    if outcome_path is not None:
        _store_outcome(outcome_path, out)
    return out


class WorkerPool(concurrent.futures.ThreadPoolExecutor):
    """``n`` isolated worker processes, one per pool thread (the local ``process``
    executor): submit :func:`evaluate_remote` with ``isolate=True``. ``shutdown`` stops
    the threads and their processes."""

    def __init__(self, n: int):
        super().__init__(max_workers=n, thread_name_prefix="mumbo-worker")

    def shutdown(self, wait=True, *, cancel_futures=False):
        super().shutdown(wait=False, cancel_futures=cancel_futures)
        close_workers()  # an evaluation still running (a Ctrl-C) ends now, as a failure nobody reads
        super().shutdown(wait=wait)
        close_workers()


def close_workers():
    """Close every isolated worker process started by :func:`evaluate_remote` here."""
    with _ALL_LOCK:
        workers = list(_ALL_WORKERS)
        _ALL_WORKERS.clear()
    for w in workers:
        w.close()


def _dask_executor(scheduler: str, timeout: float):
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError("[workers] executor = 'dask' needs dask.distributed: pip install 'dask[distributed]' (the workers extra: pip install '.[workers]' in the mumbo-jax checkout)") \
            from None
    try:
        client = Client(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise ConfigError(f"[workers] cannot reach the Dask scheduler at {scheduler!r} within {timeout:g} s "
                          f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'no answer'})") from None
    return client.get_executor(pure=False), client.close


def make_executor(cfg) -> tuple[concurrent.futures.Executor, str, Callable[[], None]]:
    """``(executor, name, close)`` for a :class:`~mumbo_jax.run.tune.config.TuneConfig`:
    inline for one local worker, :class:`WorkerPool` for several, Dask for
    ``executor = "dask"``. ``close()`` releases it (workers, client)."""
    if cfg.executor == "dask":
        if not cfg.scheduler:
            raise ConfigError("[workers] executor = 'dask' needs scheduler = 'tcp://host:port' (or --scheduler)")
        ex, close_client = _dask_executor(cfg.scheduler, cfg.connect_timeout_s)

        def close():
            ex.shutdown(wait=False)
            close_client()

        return ex, f"dask ({cfg.scheduler}, {cfg.workers} in flight)", close
    if cfg.workers == 1:
        return InlineExecutor(), "inline", lambda: None
    pool = WorkerPool(cfg.workers)
    return pool, f"{cfg.workers} local worker processes", lambda: pool.shutdown(wait=True, cancel_futures=True)


def outcome_of(future: concurrent.futures.Future) -> dict:
    """The outcome dict of a finished evaluation future; an exception of the executor
    (a Dask worker lost for good, a pool torn down) is a failed outcome."""
    try:
        return future.result()
    except concurrent.futures.CancelledError:
        return {"status": "failed", "traceback": None, "eval_s": 0.0,
                "error": "Cancelled: the executor cancelled the evaluation"}
    except Exception as e:  # noqa: BLE001 - every executor error is a failed evaluation
        name = type(e).__name__
        text = str(e).splitlines()[0] if str(e) else ""
        if name == "KilledWorker":
            text = f"WorkerDied: the Dask worker running the evaluation died ({text})"
        else:
            text = f"{name}: {text}"
        return {"status": "failed", "traceback": None, "eval_s": 0.0, "error": text}
