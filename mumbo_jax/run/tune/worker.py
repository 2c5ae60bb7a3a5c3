"""The driver's side of a worker process: one evaluation at a time under a time limit.

The worker is :mod:`mumbo_jax.run.tune.objective` run as a script (a fresh Python that
imports only the objective's module). It is given the driver's pid and dies with the
driver (``PR_SET_PDEATHSIG`` on Linux, a parent-pid watchdog thread everywhere), so a
``kill -9`` of ``mumbo-jax tune`` never leaves an evaluation running beside a resumed
run. POSIX only (``select`` on a pipe).
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time

from mumbo_jax.run.schema import ConfigError
from mumbo_jax.run.tune import objective as obj

__all__ = ["Worker", "objective_ref", "worker_ref", "resolve_objective"]


def resolve_objective(ref: str, base_dir: str | None = None):
    """The callable named by ``"package.module:function"`` or ``"path/file.py:function"``
    (a relative path is relative to ``base_dir``); ``function`` may be dotted
    (``module:Class.method``). Raises :class:`ConfigError` naming what failed."""
    try:
        return obj.resolve(ref, base_dir)
    except obj.ObjectiveError as e:
        raise ConfigError(f"[objective] {e}") from None


def objective_ref(fn) -> str | None:
    """``module:qualname`` of a callable if importing it gives the same object (so a
    resumed run or a worker process can find it), else ``None``."""
    mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not mod or not qual or "<" in qual or mod == "__main__":
        return None
    try:
        return f"{mod}:{qual}" if resolve_objective(f"{mod}:{qual}") is fn else None
    except ConfigError:
        return None


def worker_ref(objective) -> str:
    """The name a worker process imports the objective by (:class:`ConfigError` if it
    has none)."""
    ref = objective if isinstance(objective, str) else objective_ref(objective)
    if ref is None:
        raise ConfigError("[objective] with time_limit_s or isolate the objective runs in a worker process, which "
                          f"imports it by name: {objective!r} is not importable (define it at module level in an "
                          "importable module or file, and give 'module:function' or 'path/file.py:function')")
    return ref


class Worker:
    """One worker process (started lazily, replaced after a kill or a crash).
    ``time_limit`` of ``None`` waits forever.

    Attributes:
        proc: the running :class:`subprocess.Popen`, or ``None``.
    """

    START_TIMEOUT_S = 120.0

    def __init__(self, objective: str, base_dir, time_limit: float | None):
        self.objective, self.base_dir, self.time_limit = objective, base_dir, time_limit
        self.proc = None

    def _wait(self, timeout) -> bool:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return bool(ready)

    def _start(self):
        self.proc = subprocess.Popen([sys.executable, obj.__file__, str(os.getpid())], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        obj.send(self.proc.stdin, {"sys_path": list(sys.path), "objective": self.objective, "base_dir": self.base_dir})
        if not self._wait(self.START_TIMEOUT_S):
            self._kill()
            raise RuntimeError(f"the worker process did not load the objective within {self.START_TIMEOUT_S:g} s")
        try:
            kind, msg = obj.receive(self.proc.stdout)
        except EOFError:
            code = self.proc.wait(5)
            self._kill()
            raise RuntimeError(f"the worker process died while loading the objective (exit code {code})") from None
        if kind == "error":
            self._kill()
            raise ConfigError(f"[objective] the worker process could not load the objective: {msg}")

    def _kill(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for pipe in (self.proc.stdin, self.proc.stdout):
                try:
                    pipe.close()
                except OSError:  # stdin still held bytes for the dead process: closing flushes them
                    pass
        self.proc = None

    def evaluate(self, x: dict, fidelity) -> dict:
        """The outcome dict of one evaluation (as :func:`objective.evaluate`); an overrun
        or a dying worker is a failed outcome, never an exception."""
        if self.proc is None or self.proc.poll() is not None:
            self._kill()
            self._start()
        t0 = time.perf_counter()
        try:
            obj.send(self.proc.stdin, (x, fidelity))
        except (BrokenPipeError, OSError):
            pass  # it died; the read below reports it
        if not self._wait(self.time_limit):
            self._kill()
            return {"status": "failed", "timed_out": True, "traceback": None, "eval_s": time.perf_counter() - t0,
                    "error": f"TimeoutError: the evaluation exceeded the time limit of {self.time_limit:g} s "
                             "(its worker process was killed)"}
        try:
            _, outcome = obj.receive(self.proc.stdout)
        except EOFError:
            code = self.proc.wait(5)
            self._kill()
            return {"status": "failed", "traceback": None, "eval_s": time.perf_counter() - t0,
                    "error": f"WorkerDied: the worker process died during the evaluation (exit code {code})"}
        outcome["eval_s"] = time.perf_counter() - t0  # as seen from here (includes the pipe)
        return outcome

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                obj.send(self.proc.stdin, None)
                self.proc.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()
