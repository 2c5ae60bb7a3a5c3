"""Per-step overheads, measured on the host around the compiled stages.

Nothing here runs inside a compiled program (no host callbacks), so JAX's persistent
compilation cache can keep every program of a run: the drivers call
``block_until_ready`` after each stage and record the wall time between.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import jax

__all__ = ["Timings", "StepClock", "timed"]


class Timings(NamedTuple):
    """Seconds of one decision's stages."""

    fit: float
    gstar: float
    maximise: float


def timed(fn, *args, **kwargs):
    """``(fn(*args, **kwargs), seconds)``, waiting for the result's arrays."""
    t0 = time.perf_counter()
    out = jax.block_until_ready(fn(*args, **kwargs))
    return out, time.perf_counter() - t0


class StepClock:
    """The compiled driver's record of per-step overheads, and its progress hook.

    :func:`mumbo_jax.bo.compiled.run_compiled` calls :meth:`record` after each step of
    each seed and then ``on_step(seed, k, info)`` with ``info`` = ``{"running", "spent",
    "z", "regret"}`` (``running`` False once the seed has stopped: that report's ``k`` is
    its number of BO evaluations). With seeds in lock-step (``batching="vmap"``) a
    stage's time is that of the whole batch."""

    def __init__(self, on_step=None):
        self.times: dict = {}
        self.on_step = on_step

    def record(self, seed: int, k: int, timings: Timings) -> None:
        self.times[(int(seed), int(k))] = timings

    def report(self, seed: int, k: int, info: dict) -> None:
        if self.on_step is not None:
            self.on_step(int(seed), int(k), info)

    def overheads(self, seed: int, n_steps: int) -> list[dict]:
        """``[{fit, gstar, maximise, total}]`` seconds for steps 0..n_steps-1 of ``seed``
        (None where a step was not timed)."""
        out = []
        for k in range(n_steps):
            t = self.times.get((int(seed), k))
            if t is None:
                out.append({"fit": None, "gstar": None, "maximise": None, "total": None})
            else:
                out.append({**t._asdict(), "total": t.fit + t.gstar + t.maximise})
        return out
