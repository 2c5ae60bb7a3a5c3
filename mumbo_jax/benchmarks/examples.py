"""Cheap synthetic black boxes for the tuning runner's examples and tests.

:func:`train_demo` imitates tuning a model's learning rate and weight decay with the
fraction of the training data as the fidelity. It is cheap (microseconds) and
deterministic, and it fails like real training does: a learning rate above
:data:`DIVERGES_ABOVE` "diverges" and raises. Used by ``configs/tune_example.toml``,
the README and ``tests/test_tuning.py``.
"""

from __future__ import annotations

import math
import os
import time

__all__ = ["DIVERGES_ABOVE", "train_demo", "train_demo_accuracy", "slow_train_demo"]

DIVERGES_ABOVE = 0.3  # learning rates above this "diverge"


def train_demo_accuracy(learning_rate: float, weight_decay: float, fraction: float) -> float:
    """The demo's validation accuracy (in (0, 1)) before any failure check.

    At the full data (``fraction = 1``) the optimum is ``learning_rate = 0.01``,
    ``weight_decay = 1e-4`` with accuracy 0.95. Less data lowers the accuracy and shifts
    the best learning rate up (small data likes larger steps), so the cheap fidelities
    are correlated with the target but biased.
    """
    a = math.log10(learning_rate) + 2.0 - 0.6 * (1.0 - fraction)
    b = math.log10(weight_decay) + 4.0
    loss = 0.06 * a * a + 0.012 * b * b + 0.004 * math.sin(3.0 * a) ** 2
    return 0.95 - 0.25 * (1.0 - fraction) ** 2 - loss


def train_demo(x: dict, fidelity) -> float:
    """Validation accuracy of a pretend training run (maximise it).

    Args:
        x: ``{"learning_rate": ..., "weight_decay": ...}`` (use log scales for both).
        fidelity: the fraction of the training data used, in (0, 1].

    Raises:
        FloatingPointError: the learning rate is above :data:`DIVERGES_ABOVE` (training
            "diverged"), a simulated failure the runner records and steps around.
    """
    lr, wd, frac = float(x["learning_rate"]), float(x["weight_decay"]), float(fidelity)
    if not 0.0 < frac <= 1.0:
        raise ValueError(f"fidelity must be a fraction of the data in (0, 1], got {fidelity!r}")
    if lr > DIVERGES_ABOVE:
        raise FloatingPointError(f"training diverged (loss = inf) at learning_rate = {lr:.3g}")
    return train_demo_accuracy(lr, wd, frac)


def slow_train_demo(x: dict, fidelity) -> float:
    """:func:`train_demo` that sleeps ``MUMBO_DEMO_SLEEP`` seconds (default 0.2) times
    the fidelity first: a stand-in for an expensive evaluation (crash tests)."""
    time.sleep(float(os.environ.get("MUMBO_DEMO_SLEEP", "0.2")) * float(fidelity))
    return train_demo(x, fidelity)
