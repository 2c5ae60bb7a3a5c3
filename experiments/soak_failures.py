"""How often a tuning run proposes points that fail, with and without the failure model.

Runs the shipped ``tune_example`` (its objective diverges for learning rates above 0.3;
``learning_rate = 1`` is the edge of its box) over seeds, once with ``[objective]
failures = "impute"`` (failed evaluations told to the model as pessimistic values) and
once with ``"ignore"``, and counts, after the initial design, the optimiser's proposals
at the edge (``learning_rate >= 0.99``) and in the failing region (``> 0.3``), the
failed evaluations, and the true accuracy at the target of the final recommendation
(:func:`mumbo_jax.benchmarks.examples.train_demo_accuracy`; the optimum is 0.95).

    python experiments/soak_failures.py --seeds 0 1 2 --out runs/failures
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path


def one(failures: str, seed: int, out: Path) -> dict:
    """One run of the shipped example; its counts."""
    import dataclasses

    from mumbo_jax.benchmarks.examples import DIVERGES_ABOVE, train_demo_accuracy
    from mumbo_jax.run import tune
    from mumbo_jax.run.config import find_config

    cfg = tune.load_tune_config(find_config("tune_example"))
    cfg = dataclasses.replace(cfg, failures=failures, seed=seed)
    res = tune.tune(cfg, out=out / f"{failures}-{seed}", stream=io.StringIO())
    bo = [e for e in res["evaluations"] if e["source"] == "bo"]
    inc = res["incumbent"]["x"] if res.get("incumbent") else None
    return {"failures": failures, "seed": seed, "evaluations": res["counts"]["evaluations"],
            "bo_proposals": len(bo), "edge_proposals": sum(e["x"]["learning_rate"] >= 0.99 for e in bo),
            "failing_region_proposals": sum(e["x"]["learning_rate"] > DIVERGES_ABOVE for e in bo),
            "failed": res["counts"]["failed"],
            "recommendation_accuracy": None if inc is None else
            train_demo_accuracy(inc["learning_rate"], inc["weight_decay"], 1.0),
            "best_observed": res["best_observed"]["score"] if res["best_observed"] else None}


def main(argv=None) -> int:
    import jax

    jax.config.update("jax_enable_x64", True)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--modes", nargs="+", default=["impute", "ignore"], choices=["impute", "ignore"])
    p.add_argument("--out", default="runs/failures")
    a = p.parse_args(argv)
    out = Path(a.out)
    rows = []
    for mode in a.modes:
        for seed in a.seeds:
            rows.append(one(mode, seed, out))
            print(json.dumps(rows[-1]), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "failures.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
