"""Merge the GPU runs of Hartmann-6 (``bash experiments/ablations/gpu_hartmann6_6000.sh``: ``gpu6k_``,
``gpu6km_``, ``gpu6ku_``, ``gpu6n_``) into the files that docs/RESULTS.md renders:

* ``gpu6kall_hartmann6_b6000_s0-4.json``: the default, MT-EI and MF-GP-UCB at cost 6000
  (the default first: the table's paired tests compare with it), table columns at cost
  25 / 50 / 100 / 600 / 2000 / 4000 / 6000;
* ``gpu6n600_hartmann6_b600_s0-4.json``: the default's runs cut where they first spent
  cost 600 (its decisions do not depend on the budget, so this is its cost-600 run) and
  the NUTS lever's cost-600 run.

    python experiments/ablations/merge_gpu_hartmann6.py
    python experiments/ablations/merge_gpu_hartmann6.py --plot-only   # redraw from gpu6kall_*

and plots regret against cost at 6000 (each seed thin, the median thick) to
``docs/figures/hartmann6_regret_vs_cost.png`` (shown by docs/RESULTS.md). The run files
merged are not kept: the merged ones hold every row.
"""

import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2] / "data" / "ablations"
DEFAULT = "mumbo+faces+local+inc_global+cal"


def load(tag, budget):
    return json.loads((ROOT / f"{tag}_hartmann6_b{budget}_s0-4.json").read_text())


def cut(rec, budget, target_z=0.0):
    """``rec`` with each seed's run ended at the first evaluation that spent ``budget``."""
    seeds = []
    for s in rec["per_seed"]:
        n = int(np.argmax(np.asarray(s["cost_spent"]) >= budget)) if s["cost_spent"][-1] >= budget else s["n_evals"]
        z = s["z"][:n]
        seeds.append(dict(s, n_evals=n, z=z, n_target=int(sum(abs(v - target_z) < 1e-9 for v in z)),
                          overheads=s["overheads"][:n],
                          **{k: s[k][:n + 1] for k in ("covered", "pred_mean", "pred_sd", "cost_spent", "regret")}))
    return dict(rec, per_seed=seeds)


def main():
    full = [load(t, 6000) for t in ("gpu6k", "gpu6km", "gpu6ku")]
    merged = dict(full[0], variants={v: r for p in full for v, r in p["variants"].items()},
                  table_checkpoints=[25, 50, 100, 600, 2000, 4000, 6000])
    (ROOT / "gpu6kall_hartmann6_b6000_s0-4.json").write_text(json.dumps(merged))
    nuts = load("gpu6n", 600)
    short = dict(nuts, variants={DEFAULT: cut(full[0]["variants"][DEFAULT], 600), **nuts["variants"]})
    (ROOT / "gpu6n600_hartmann6_b600_s0-4.json").write_text(json.dumps(short))
    plot(merged)


def plot(merged):
    grid = np.geomspace(1, 6000, 300)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (name, rec), colour in zip(merged["variants"].items(), ["C0", "C1", "C2"]):
        curves = []
        for s in rec["per_seed"]:
            c, r = np.asarray(s["cost_spent"]), np.asarray(s["regret"])
            idx = np.searchsorted(c, grid, side="right") - 1  # the recommendation after spending <= cost
            curve = np.where(idx >= 0, r[np.clip(idx, 0, None)], np.nan)
            curves.append(curve)
            ax.plot(grid, curve, color=colour, lw=0.6, alpha=0.35)
        label = "MUMBO (the default)" if name == DEFAULT else name
        ax.plot(grid, np.nanmedian(curves, axis=0), color=colour, lw=2.2, label=label + " (median)")
    ax.set(xscale="log", yscale="log", xlabel="cost spent after the design (target costs 1000)",
           ylabel="simple regret of the recommendation",
           title="Hartmann-6, 4 fidelities, 5 seeds, one H100")
    ax.legend(fontsize=8)
    out = ROOT.parents[1] / "docs" / "figures" / "hartmann6_regret_vs_cost.png"
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    import sys

    if "--plot-only" in sys.argv[1:]:
        plot(load("gpu6kall", 6000))
    else:
        main()
