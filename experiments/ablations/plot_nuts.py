"""Plot the NUTS lever (``mcmc.samples``) against the default on the six same-code problems.

    python experiments/ablations/plot_nuts.py

Reads ``data/ablations/s10b_*.json`` (rows ``mumbo+faces+local+inc_global+cal``, the
default, and its ``+nuts4`` / ``+nuts`` variants, each sample's g* on its share of one
grid; ``+nuts`` on Currin and Hartmann-3 only) and draws, per problem, the coverage of the
95 % interval at the recommendation and the median regret at the budget, to
``data/nuts/nuts_vs_default.png`` (no page shows it: the levers table of RESULTS.md
gives the numbers).
"""

from __future__ import annotations

import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT = "mumbo+faces+local+inc_global+cal"
ROWS = {DEFAULT: "default (MAP)", DEFAULT + "+nuts4": "NUTS, 4 samples", DEFAULT + "+nuts": "NUTS, 8 samples"}
import sys  # noqa: E402

sys.path.insert(0, str(ROOT))
from mumbo_jax.run import compare  # noqa: E402

FILES = ["hartmann3_b150", "currin_b200", "borehole_b200", "forrester_b200", "perdikaris_b100", "branin_aug_b100"]


def budget(name: str) -> float:
    return float(name.rsplit("_b", 1)[1])


def main():
    data = {f: json.loads((ROOT / "data" / "ablations" / f"s10b_{f}_s0-9.json").read_text())["variants"]
            for f in FILES}
    fig, (ax_c, ax_r) = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.8 / len(ROWS)
    for j, (row, label) in enumerate(ROWS.items()):
        xs = np.arange(len(FILES)) + (j - 1) * width
        cov = [100 * data[f][row]["summary"]["coverage"] if row in data[f] else np.nan for f in FILES]
        reg = [np.median([compare.regret_at_cost(s["cost_spent"], s["regret"], budget(f))
                          for s in data[f][row]["per_seed"]]) if row in data[f] else np.nan for f in FILES]
        ax_c.bar(xs, cov, width, label=label)
        ax_r.bar(xs, np.maximum(reg, 1e-9), width, label=label)
    for ax in (ax_c, ax_r):
        ax.set_xticks(np.arange(len(FILES)), [f.rsplit("_b", 1)[0] for f in FILES], rotation=30, ha="right")
    ax_c.axhline(90, color="k", lw=0.8, ls="--")
    ax_c.set_ylabel("coverage of the 95 % interval (%)")
    ax_c.set_title("interval at the recommendation (target: >= 90 %)")
    ax_r.set_yscale("log")
    ax_r.set_ylabel("median simple regret at the budget (10 seeds)")
    ax_r.set_title("regret at the budget (the tables' last cost column)")
    ax_c.legend(fontsize=8)
    fig.tight_layout()
    out = ROOT / "data" / "nuts" / "nuts_vs_default.png"
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
