"""What every renderer shares: reading the committed data, number formats, the paired test."""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
ALPHA = 0.05


def _compare_module():
    try:
        from mumbo_jax.run import compare
    except ImportError:  # a plain checkout: the package beside this script
        sys.path.insert(0, str(ROOT))
        from mumbo_jax.run import compare
    return compare


def _load(root, rel):
    path = pathlib.Path(root) / rel
    if not path.is_file():
        raise ValueError(f"{rel} not found: the data behind this table is not committed")
    return json.loads(path.read_text())


def _jsonl(root, rel):
    path = pathlib.Path(root) / rel
    if not path.is_file():
        raise ValueError(f"{rel} not found: the data behind this table is not committed")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _num(v: float) -> str:
    """A regret for prose-like tables: 3 significant digits from 0.01 up, else 1.3e-4."""
    if v == 0 or abs(v) >= 0.01:
        return f"{v:.3g}"
    mant, exp = f"{v:.1e}".split("e")
    return f"{mant}e{int(exp)}"


def _load_note(rec) -> str:
    la = rec.get("loadavg_start") or rec.get("loadavg")
    return "" if la is None else f", load average {la[0]:.1f}"



def _device(r) -> str:
    return "2-core CPU, one core" if r["device"] == "cpu" else f"one {r['device']} GPU"


def _machine(d) -> str:
    return f"the {d['cpu_count']}-core CPU" if d["device"] == "cpu" else f"one {d['device']}"



def _stopped_mark(seeds, cost) -> str:
    """`` †k`` when k of ``seeds`` stopped before spending ``cost`` (else empty)."""
    k = sum(1 for s in seeds if float(s["cost_spent"][-1]) < cost - 1e-9)
    return f" †{k}" if k else ""


def _paired_p(a, b):
    """``(seeds where a < b, seeds where a > b, two-sided Wilcoxon signed-rank p)`` of
    paired regrets, the test on their log10 (as ``mumbo-jax compare`` and the protocol:
    regrets span orders of magnitude; floored at 1e-12; p = 1 when they never differ)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    la, lb = np.log10(np.maximum(a, 1e-12)), np.log10(np.maximum(b, 1e-12))
    p = 1.0 if np.all(la == lb) else _compare_module().wilcoxon_p(la - lb)
    return int(np.sum(a < b)), int(np.sum(a > b)), p



def _cpu_wall(cpu, wall, fmt=".3g"):
    return f"{cpu:{fmt}} ({wall:{fmt}})"

