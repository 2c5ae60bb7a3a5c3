"""Write (or check) data/heldout_suite.json, the manifest that freezes the ``ho`` suite.

The manifest lists, per problem of :mod:`mumbo_jax.benchmarks.problems.heldout`, its source
(paper and equation), box, costs, noise, optimum and the kind of its cheap source with the
numbers that justify the label (the correlation of the fidelities over a 4096-point scrambled
Sobol sample of the box, seed 0, and the target regret of the cheap source's minimiser,
multistart L-BFGS-B, as a share of the target's range over that sample), and the sha256 of
heldout.py. ``tests/test_heldout_suite.py`` fails when heldout.py changes and the manifest
does not: a change to the frozen suite is deliberate, visible in the diff, and says why.

    python experiments/studies/heldout_manifest.py           # rewrite the manifest
    python experiments/studies/heldout_manifest.py --check   # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "data" / "heldout_suite.json"
MODULE = ROOT / "mumbo_jax" / "benchmarks" / "problems" / "heldout.py"

# Where each formula comes from (paper, equation/table); kept here, not in the module, so
# that the provenance notes can be corrected without touching the frozen functions.
SOURCES = {
    "ho_bohachevsky": "Dong, Song, Wang & Huang (2015), Struct. Multidisc. Optim. 51:1267-1280, "
                      "doi:10.1007/s00158-014-1213-9, test function 'Bohachevsky' (high- and low-fidelity pair)",
    "ho_booth": "Dong et al. (2015), ibid., test function 'Booth'",
    "ho_himmelblau": "Dong et al. (2015), ibid., test function 'Himmelblau'",
    "ho_sixhump": "Dong et al. (2015), ibid., test function 'six-hump camel-back'",
    "ho_rastrigin": "Mainini et al. (2022), arXiv:2204.07867, shifted-rotated Rastrigin (D = 2) with the "
                    "resolution error e_r(z, phi), Theta(phi) = 1 - 1e-4 phi; target phi = 10000, cheap phi = 2500",
    "ho_paciorek_noisy": "Toal (2015), Struct. Multidisc. Optim. 51:1223-1245, doi:10.1007/s00158-014-1209-5, "
                         "adjustable Paciorek pair, A = 0.25; Gaussian noise of variance 0.25 on the cheap source "
                         "(our level: Toal's pair is noise-free)",
    "ho_trid4": "Toal (2015), ibid., adjustable Trid pair at A = 1 (low fidelity with the factor i as in mf2's "
                "code), in d = 4 (Toal: d = 10) on [-d^2, d^2]^d",
    "ho_trid8_anti": "Toal (2015), ibid., adjustable Trid pair at A = 0, in d = 8 on [-d^2, d^2]^d",
}
COST_CONVENTION = ("costs 10 (target) and 1 (cheap source) for every problem: the sources study surrogate "
                   "accuracy and give no query costs; the 10:1 ratio is the unreliable suite's convention")
N_SOBOL, N_STARTS = 4096, 32
# the one run of the suite (not yet made): 30 seeds, the default levers (no --fast), the
# library's default recommendation, a cap no seed can reach (budget 300 / cheapest cost 1)
RUN_COMMAND = ("python experiments/studies/robust.py --suite ho --heldout-final --seeds 30 --max-evals 300 "
               "--strategies robust,mumbo,ei,mes,mt_ei,mf_gp_ucb --jobs 2 --out data/heldout_ho")


def module_sha256() -> str:
    return hashlib.sha256(MODULE.read_bytes()).hexdigest()


def source_statistics(problem, n_starts: int = N_STARTS) -> dict:
    """``{"correlation", "cheap_minimiser", "cheap_minimiser_regret", "regret_share"}`` of the
    problem's cheap source (fidelity 1) against its target (noise-free values)."""
    import jax
    import numpy as np
    from scipy.optimize import minimize
    from scipy.stats import qmc

    lo, hi = problem.lower, problem.upper
    X = lo + qmc.Sobol(problem.dim, seed=0).random(N_SOBOL) * (hi - lo)
    target = np.asarray(jax.jit(jax.vmap(lambda x: problem.f(x, 0)))(X))
    cheap = np.asarray(jax.jit(jax.vmap(lambda x: problem.f(x, 1)))(X))
    vg = jax.jit(jax.value_and_grad(lambda u: problem.f(lo + u * (hi - lo), 1)))
    best = (np.inf, None)
    for u0 in np.random.default_rng(0).uniform(size=(n_starts, problem.dim)):
        res = minimize(lambda u: tuple(np.asarray(a, float) for a in vg(u)), u0, jac=True, method="L-BFGS-B",
                       bounds=[(0.0, 1.0)] * problem.dim)
        if res.fun < best[0]:
            best = (float(res.fun), lo + res.x * (hi - lo))
    x_cheap = best[1]
    regret = float(problem.f(x_cheap, 0)) - problem.optimum_value
    return {"correlation": round(float(np.corrcoef(target, cheap)[0, 1]), 4),
            "cheap_minimiser": [round(float(v), 4) for v in x_cheap],
            "cheap_minimiser_regret": round(regret, 6),
            "regret_share": round(regret / float(target.max() - target.min()), 4)}


def build() -> dict:
    import jax
    jax.config.update("jax_enable_x64", True)
    from mumbo_jax.benchmarks.problems import heldout, suite

    problems = []
    for p in suite("ho"):
        problems.append({
            "name": p.name, "dim": p.dim, "bounds": p.bounds.tolist(), "costs": list(p.costs),
            "noise_variances": list(p.noise_variances), "maximise": p.maximise,
            "optimum_value": p.optimum_value, "optimum_location": p.optimum_location.tolist(),
            "source_kind": heldout.SOURCE_KIND[p.name], "source": SOURCES[p.name], "reference": p.reference,
            "statistics": source_statistics(p),
        })
    return {
        "suite": "ho",
        "purpose": "held-out TEST problems (issue 41, item 4): chosen from the literature and frozen before any "
                   "strategy ran on them, none used to screen or tune a lever; run once, with 30 seeds and the "
                   "default levers, after the default is final",
        "frozen_module": "mumbo_jax/benchmarks/problems/heldout.py",
        "module_sha256": module_sha256(),
        "costs": COST_CONVENTION,
        "statistics": f"correlation: Pearson, fidelity 1 against 0 over a {N_SOBOL}-point scrambled Sobol sample "
                      f"of the box (scipy.stats.qmc, seed 0); cheap_minimiser: best of {N_STARTS} L-BFGS-B starts "
                      "on fidelity 1; regret_share: its target regret over the target's range on the sample",
        "run_command": RUN_COMMAND,
        "problems": problems,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if the manifest's sha256 is not heldout.py's")
    args = ap.parse_args(argv)
    if args.check:
        ok = json.loads(MANIFEST.read_text())["module_sha256"] == module_sha256()
        print("manifest up to date" if ok else "heldout.py changed: the manifest is stale")
        return 0 if ok else 1
    MANIFEST.write_text(json.dumps(build(), indent=1) + "\n")
    print(f"wrote {MANIFEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
