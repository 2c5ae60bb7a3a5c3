"""Does the thinned refit schedule need its guard at small n? A paired seed study on Forrester.

    env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
        python experiments/studies/refit_guard_forrester.py [--seeds 20] [--budget 200]

MUMBO on the 1-D Forrester problem (3 fidelities, costs 10/5/2; the quick start's job,
the problem on which warm-only refits at small n once kept seeds in a poor basin) with
the paper's levers, twice per seed:

* ``guarded``: the library's schedule (``fit.refit_growth = 0.05`` from
  ``fit.incremental_from = 500`` observations: below that every step refits, as
  without the thinned schedule);
* ``unguarded``: the thinned schedule from the first BO step (``incremental_from = 1``,
  ``refit_growth = 0.25``, ``warm_from = 1``: a warm-only refit each time the data grow
  by a quarter, one with every start only after (1.25)^cold_every, appends between);
* ``full_05`` / ``full_10`` / ``full_25``: thinned from the first BO step, but every
  refit runs every start (``incremental_from = 1``, ``refit_growth = 0.05`` / ``0.1`` /
  ``0.25``, ``warm_from`` left at 500): a full refit each time the data grow by 5 %, a
  tenth or a quarter, appends between.

``--variants`` chooses which run (``guarded`` always does: it is the reference); each
other variant is compared with it, paired by seed.

Prints the median final regret of each, the seed split and a paired two-sided Wilcoxon
test on log regret (scipy) against ``guarded``, and writes ``--out``
(``data/long_run/refit_guard_forrester.json``).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax import BOSettings  # noqa: E402
from mumbo_jax.benchmarks import problems, tasks  # noqa: E402

VARIANTS = {
    "guarded": {},
    "unguarded": {"incremental_from": 1, "refit_growth": 0.25, "warm_from": 1},
    "full_05": {"incremental_from": 1, "refit_growth": 0.05},
    "full_10": {"incremental_from": 1, "refit_growth": 0.1},
    "full_25": {"incremental_from": 1, "refit_growth": 0.25},
}
FLOOR = 1e-12  # the log of a zero regret


def compare(reference, other) -> dict:
    """Paired by seed: on how many seeds each is lower, the two-sided Wilcoxon p of the
    log regrets (scipy) and the ratio of the medians (other / reference)."""
    from scipy.stats import wilcoxon

    g, u = np.asarray(reference), np.asarray(other)
    diff = np.log(np.maximum(u, FLOOR)) - np.log(np.maximum(g, FLOOR))
    p_value = float(wilcoxon(diff).pvalue) if np.any(diff != 0) else 1.0
    return {"lower": int(np.sum(diff < 0)), "higher": int(np.sum(diff > 0)), "ties": int(np.sum(diff == 0)),
            "wilcoxon_p": p_value, "median_ratio": float(np.median(u) / max(np.median(g), FLOOR))}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--budget", type=float, default=200.0)
    p.add_argument("--max-evals", type=int, default=400)
    p.add_argument("--out", default=str(ROOT / "data" / "long_run" / "refit_guard_forrester.json"))
    p.add_argument("--variants", default="guarded,unguarded",
                   help=f"comma-separated, of {', '.join(VARIANTS)} (guarded, the reference, always runs)")
    a = p.parse_args(argv)
    chosen = ["guarded"] + [v for v in a.variants.split(",") if v and v != "guarded"]
    unknown = sorted(set(chosen) - set(VARIANTS))
    if unknown:
        p.error(f"unknown variant {unknown[0]!r}; choose from {', '.join(VARIANTS)}")

    prob = problems.get_problem("forrester")
    seeds = list(range(a.seeds))
    result = {"command": "python experiments/studies/refit_guard_forrester.py " + " ".join(argv or sys.argv[1:]),
              "problem": "forrester", "strategy": "mumbo", "budget": a.budget, "seeds": seeds, "variants": {}}
    for name in chosen:
        fit = VARIANTS[name]
        settings = BOSettings(strategy="mumbo", recommendation={"rule": "global"}, fit=fit)
        t0 = time.perf_counter()
        h = tasks.run_problem(prob, a.budget, seeds, settings, max_evals=a.max_evals)
        n = h.n_evals
        final = np.asarray([h.regret[i, n[i]] for i in range(len(seeds))])
        spent = np.asarray([h.cost_spent[i, n[i]] for i in range(len(seeds))])
        result["variants"][name] = {"fit": fit, "final_regret": final.tolist(), "bo_evaluations": n.tolist(),
                                    "cost_spent": spent.tolist(), "stopped_by_cap": int(np.sum(spent < a.budget)),
                                    "wall_s": time.perf_counter() - t0}
        print(f"{name:>10}: median final regret {np.median(final):.3g} (quartiles {np.quantile(final, 0.25):.3g}, "
              f"{np.quantile(final, 0.75):.3g}), BO evaluations {int(n.min())}-{int(n.max())}, "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    ref = result["variants"]["guarded"]["final_regret"]
    result["comparisons"] = {}
    for name in chosen[1:]:
        c = compare(ref, result["variants"][name]["final_regret"])
        result["comparisons"][name] = c
        print(f"{name}: lower than guarded on {c['lower']}, higher on {c['higher']}, ties {c['ties']}; "
              f"Wilcoxon p = {c['wilcoxon_p']:.3g}; median ratio {c['median_ratio']:.3g}; "
              f"wall {result['variants'][name]['wall_s']:.0f} s against {result['variants']['guarded']['wall_s']:.0f} s")
    if "unguarded" in result["comparisons"]:  # the first study's form
        c = result["comparisons"]["unguarded"]
        result["comparison"] = {"unguarded_lower": c["lower"], "guarded_lower": c["higher"], "ties": c["ties"],
                                "wilcoxon_p": c["wilcoxon_p"], "median_ratio_unguarded_over_guarded": c["median_ratio"]}
    out = pathlib.Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
