"""The soak study's objective (:mod:`experiments.soak_study`): the tuning demo, slowed
down, that logs every evaluation it completes.

Each call sleeps ``SOAK_SLEEP`` seconds (default 0.2) times the fidelity, then appends
one JSON line ``{"x", "fidelity", "pid", "t"}`` to the file ``SOAK_LOG`` (one ``write``
of a whole line in append mode: lines of concurrent workers never interleave) and
returns the demo's accuracy. A call killed before it returns leaves no line, so the
log counts the evaluations that were paid for in full.
"""

from __future__ import annotations

import json
import os
import time

from mumbo_jax.benchmarks.examples import train_demo

__all__ = ["objective"]


def objective(x: dict, fidelity) -> float:
    """:func:`mumbo_jax.benchmarks.examples.train_demo`, slowed and logged."""
    time.sleep(float(os.environ.get("SOAK_SLEEP", "0.2")) * float(fidelity))
    score = train_demo(x, fidelity)
    line = json.dumps({"x": x, "fidelity": fidelity, "pid": os.getpid(), "t": time.time()}) + "\n"
    fd = os.open(os.environ["SOAK_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    return score
