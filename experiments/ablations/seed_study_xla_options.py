"""Do the library's compile options change its decisions' quality? A paired seed study.

    python experiments/ablations/seed_study_xla_options.py [--seeds 10] [--jobs 2]

Runs the default rule (``robust``, default settings) on Currin, Hartmann-3 and Borehole
through ``experiments/studies/robust.py`` twice, on the same seeds: once with XLA's default
compile options (``MUMBO_JAX_XLA_OPTIONS=default``) and once with the library's
(:data:`mumbo_jax.xla_options.FAST_COMPILE`). Deterministic single-thread XLA flags (set
by robust.py). The runs go to ``docs/data/xla_options/<variant>/`` (a run already there is
kept); the comparison, per problem, to ``docs/data/xla_options/seed_study.json``: the final
regret of each seed under both, the two-sided Wilcoxon signed-rank p of the paired
log-regrets, and for how many evaluations each seed's decisions stay the same (same
fidelity, inputs within 1e-6). The two options compile other rounding, which the
maximiser amplifies, so the decisions part at some step: the question is whether the
outcomes differ beyond the paired test's noise.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
from scipy import stats

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "data" / "xla_options"
PROBLEMS = ("currin", "hartmann3", "borehole")
VARIANTS = ("default", "fast")  # MUMBO_JAX_XLA_OPTIONS
MAX_EVALS = 60


def run(variant: str, seeds: int, jobs: int) -> None:
    env = dict(os.environ, MUMBO_JAX_XLA_OPTIONS=variant)
    subprocess.run([sys.executable, str(ROOT / "experiments" / "studies" / "robust.py"),
                    "--problems", ",".join(PROBLEMS), "--strategies", "robust", "--seeds", str(seeds),
                    "--max-evals", str(MAX_EVALS), "--jobs", str(jobs), "--out", str(OUT / variant)],
                   env=env, check=True)


def same_steps(a: dict, b: dict) -> int | None:
    """Evaluations after the design on which two runs of one seed decide alike (None: all)."""
    za, zb = np.asarray(a["z"]), np.asarray(b["z"])
    n = min(len(za), len(zb))
    for i in range(n):
        if za[i] != zb[i]:
            return i
    return None if len(za) == len(zb) else n


def compare(seeds: int) -> dict:
    out = {"command": "python experiments/ablations/seed_study_xla_options.py", "max_evals": MAX_EVALS,
           "problems": {}}
    for p in PROBLEMS:
        runs = {v: json.loads((OUT / v / f"{p}__robust.json").read_text()) for v in VARIANTS}
        by_seed = {v: {r["seed"]: r for r in runs[v]["seeds"]} for v in VARIANTS}
        common = sorted(set(by_seed["default"]) & set(by_seed["fast"]))[:seeds]
        final = {v: np.array([by_seed[v][s]["regret"][-1] for s in common]) for v in VARIANTS}
        floor = 1e-12  # a regret of exactly 0 (Borehole's optimum on the box) compares as the floor
        la, lb = (np.log10(np.maximum(final[v], floor)) for v in VARIANTS)
        diff = lb - la
        p_value = float(stats.wilcoxon(la, lb).pvalue) if np.any(diff != 0) else 1.0
        out["problems"][p] = {
            "budget": runs["fast"]["budget"], "seeds": common,
            "final_regret": {v: final[v].tolist() for v in VARIANTS},
            "median": {v: float(np.median(final[v])) for v in VARIANTS},
            "fast_lower": int(np.sum(diff < 0)), "fast_higher": int(np.sum(diff > 0)), "wilcoxon_p": p_value,
            "same_decisions_for": [same_steps(by_seed["default"][s], by_seed["fast"][s]) for s in common],
            "wall_s": {v: runs[v]["wall_s"] for v in VARIANTS},
        }
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2, help="processes per variant")
    ap.add_argument("--compare-only", action="store_true", help="only compare the runs already there")
    args = ap.parse_args(argv)
    if not args.compare_only:
        for v in VARIANTS:
            run(v, args.seeds, args.jobs)
    result = compare(args.seeds)
    (OUT / "seed_study.json").write_text(json.dumps(result, indent=1) + "\n")
    for p, r in result["problems"].items():
        print(f"{p}: median final regret {r['median']['default']:.3g} (XLA defaults) vs {r['median']['fast']:.3g} "
              f"(library options); lower {r['fast_lower']}, higher {r['fast_higher']}, Wilcoxon p {r['wilcoxon_p']:.2f}; "
              f"same decisions for {r['same_decisions_for']}")


if __name__ == "__main__":
    main()
