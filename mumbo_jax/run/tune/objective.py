"""Evaluating a tuning objective: loading it, calling it, checking what it returns; and
the main of the worker process that does this under a time limit
(:class:`mumbo_jax.run.tune.worker.Worker` starts it).

The worker is started as a script by path (``python .../objective.py``), not with
:mod:`multiprocessing`: it imports only the objective's module (not mumbo_jax, nor JAX
unless the objective does) and never re-runs the caller's ``__main__``. It speaks
length-prefixed pickles over its stdin/stdout; the objective's own prints go to stderr.
It never outlives its driver (:func:`watch_parent`: ``PR_SET_PDEATHSIG`` on Linux, and
on every platform a thread that exits when the parent pid changes).
This module uses only the standard library.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import pickle
import signal
import struct
import sys
import threading
import time
import traceback
from pathlib import Path

__all__ = ["ObjectiveError", "BadReturn", "resolve", "parse_return", "evaluate", "send", "receive", "watch_parent",
           "main", "TRACEBACK_CHARS", "PARENT_POLL_S"]

TRACEBACK_CHARS = 4000


class ObjectiveError(Exception):
    """The objective cannot be loaded (bad reference, import error, not callable)."""


def resolve(ref: str, base_dir: str | None = None):
    """The callable named by ``"package.module:function"`` or ``"path/file.py:function"``
    (a relative path is relative to ``base_dir``); ``function`` may be dotted."""
    mod_name, _, attr = ref.rpartition(":")
    if not mod_name or not attr:
        raise ObjectiveError(f"function must be 'module:function' or 'path/file.py:function', got {ref!r}")
    try:
        if mod_name.endswith(".py"):
            path = Path(mod_name)
            if not path.is_absolute():
                path = Path(base_dir or ".") / path
            if not path.is_file():
                raise ObjectiveError(f"function {ref!r}: no file {path}")
            name = "_mumbo_objective_" + "".join(c if c.isalnum() else "_" for c in str(path.resolve()))
            module = sys.modules.get(name)
            if module is None:
                spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[name]
                    raise
        else:
            module = importlib.import_module(mod_name)
    except ObjectiveError:
        raise
    except Exception as e:
        raise ObjectiveError(f"function {ref!r}: cannot import {mod_name!r} ({type(e).__name__}: {e})") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ObjectiveError(f"function {ref!r}: {mod_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ObjectiveError(f"function {ref!r} is not callable")
    return obj


class BadReturn(ValueError):
    """The objective returned something that is not a finite score (and positive cost)."""


MAX_ABS_SCORE = 1e100  # mumbo_jax.bo.told_values.MAX_ABS_Y (not imported: workers import no JAX)


def _number(v, what: str) -> float:
    # float() would accept "0.5" and True: a score must be a number, not text or a flag
    if isinstance(v, (str, bytes, bool)):
        raise BadReturn(f"the objective's {what} must be a number, got {type(v).__name__} {str(v)[:80]!r}")
    try:
        return float(v)  # Python, numpy and 0-d JAX numbers
    except (TypeError, ValueError):
        raise BadReturn(f"the objective's {what} must be a number, got {type(v).__name__} {str(v)[:80]}") from None


def parse_return(ret) -> tuple[float, float | None]:
    """``score`` | ``(score, cost)`` | ``{"score": s, "cost": c}`` -> ``(score, cost or None)``."""
    cost = None
    if isinstance(ret, dict):
        if "score" not in ret:
            raise BadReturn(f"the objective returned a dict without 'score' (keys {sorted(map(str, ret))})")
        extra = set(ret) - {"score", "cost"}
        if extra:
            raise BadReturn(f"the objective returned unknown keys {sorted(map(str, extra))}; allowed: score, cost")
        score, cost = ret["score"], ret.get("cost")
    elif isinstance(ret, (tuple, list)):
        if len(ret) != 2:
            raise BadReturn(f"the objective returned a sequence of length {len(ret)}; expected (score, cost)")
        score, cost = ret
    else:
        score = ret
    score = _number(score, "score")
    if not math.isfinite(score):
        raise BadReturn(f"the objective returned a non-finite score ({score})")
    if abs(score) > MAX_ABS_SCORE:
        raise BadReturn(f"the objective returned score {score:.6g}; scores beyond {MAX_ABS_SCORE:g} in magnitude "
                        "overflow the model (rescale the objective, e.g. its logarithm)")
    if cost is not None:
        cost = _number(cost, "cost")
        if not (math.isfinite(cost) and cost > 0):
            raise BadReturn(f"the objective returned cost {cost}; it must be finite and > 0")
    return score, cost


def evaluate(fn, x: dict, fidelity) -> dict:
    """Call the objective: an outcome dict ``{status: "ok", score, cost, eval_s}`` or
    ``{status: "failed", error, traceback, eval_s}``. Never raises an ``Exception``
    (``KeyboardInterrupt`` and ``SystemExit`` pass)."""
    t0 = time.perf_counter()
    try:
        score, cost = parse_return(fn(dict(x), fidelity))
        return {"status": "ok", "score": score, "cost": cost, "eval_s": time.perf_counter() - t0}
    except BadReturn as e:
        return {"status": "failed", "error": f"ValueError: {e}", "traceback": None, "eval_s": time.perf_counter() - t0}
    except Exception as e:
        return {"status": "failed", "error": f"{type(e).__name__}: {e}",
                "traceback": traceback.format_exc()[-TRACEBACK_CHARS:], "eval_s": time.perf_counter() - t0}


# ---------------------------------------------------------------------------- the pipe

_HEAD = struct.Struct("<Q")


def send(fh, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    fh.write(_HEAD.pack(len(data)) + data)
    fh.flush()


def _read_exactly(fh, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = fh.read(n - len(buf))
        if not chunk:
            raise EOFError("the pipe closed")
        buf += chunk
    return buf


def receive(fh):
    (n,) = _HEAD.unpack(_read_exactly(fh, _HEAD.size))
    return pickle.loads(_read_exactly(fh, n))


PARENT_POLL_S = 0.2  # how often the watchdog thread checks that the driver is alive
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def watch_parent(parent_pid: int, use_prctl: bool = True, poll_s: float = PARENT_POLL_S) -> str:
    """Make this process die with its parent ``parent_pid`` (the tuning driver), so that
    a ``kill -9`` of the driver never leaves an evaluation running beside a resumed run.

    On Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` has the kernel kill us when the parent
    dies; everywhere a daemon thread polls ``os.getppid()`` (a dead parent's children
    are re-parented) and exits the process with code 1. Returns how: ``"prctl+poll"`` or
    ``"poll"``. If the parent is already gone, exits at once."""
    how = "poll"
    if use_prctl and sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                how = "prctl+poll"
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:  # died before the watch was set up
        os._exit(1)

    def poll():
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=poll, name="mumbo-parent-watch", daemon=True).start()
    return how


def main(argv=None):
    """Worker loop, ``python objective.py DRIVER_PID``: ``{"sys_path", "objective",
    "base_dir"}`` first, then ``(x, fidelity)`` requests answered by outcomes, until
    ``None`` or end of input."""
    argv = sys.argv[1:] if argv is None else argv
    if argv:  # first of all: never outlive the driver
        watch_parent(int(argv[0]))
    proto_in = sys.stdin.buffer
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # the objective's prints must not corrupt the protocol
    sys.stdout = sys.stderr
    init = receive(proto_in)
    sys.path[:] = init["sys_path"]
    try:
        fn = resolve(init["objective"], init["base_dir"])
    except BaseException as e:
        send(proto_out, ("error", f"{type(e).__name__}: {e}"))
        return
    send(proto_out, ("ready", None))
    while True:
        try:
            msg = receive(proto_in)
        except EOFError:
            return
        if msg is None:
            return
        send(proto_out, ("done", evaluate(fn, *msg)))


if __name__ == "__main__":
    main()
