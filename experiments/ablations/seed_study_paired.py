"""Paired seed studies of changes meant to keep the decisions' quality: a variant against
the reference on the same seeds, through ``experiments/studies/robust.py``.

    python experiments/ablations/seed_study_paired.py xla_options [--seeds 20] [--jobs 2]
    python experiments/ablations/seed_study_paired.py warm_refits [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py large_n_algebra [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py large_n_algebra_unreliable [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py warm_step [--seeds 20] [--jobs 2]
    python experiments/ablations/seed_study_paired.py warm_iter [--seeds 20] [--jobs 2]
    python experiments/ablations/seed_study_paired.py draws [--seeds 20] [--jobs 2]
    python experiments/ablations/seed_study_paired.py draws_unreliable [--seeds 20] [--jobs 2]
    python experiments/ablations/seed_study_paired.py polish_gradient [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py base_block [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py polish_gradient_unreliable [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py base_block_unreliable [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py polish_once [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py polish_once_unreliable [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py lbfgs_once [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py lbfgs_once_unreliable [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py small_n_thinning [--seeds 10] [--jobs 2]
    python experiments/ablations/seed_study_paired.py small_n_thinning_unreliable [--seeds 10] [--jobs 2]

* ``xla_options``: the library's compile options (:data:`mumbo_jax.runtime.xla_options.FAST_COMPILE`)
  against XLA's defaults (``MUMBO_JAX_XLA_OPTIONS=default``): the default rule
  (``robust``, default settings) on Currin, Hartmann-3 and Borehole, at most 60
  evaluations (the paper budgets of robust.py).
* ``large_n_algebra``: the library before its large-n algebra (the commit before it, run
  from a git worktree under ``.worktrees/``) against this tree: the default rule on Currin,
  Hartmann-3 and Borehole, at most 60 evaluations (a change that means to compute the same
  numbers, rounded differently).
* ``warm_refits``: warm-only refits from 60 observations on (``fit.warm_from = 60``,
  ``cold_every = 10``, ``warm_iter = 10``) against a full refit at every step: the default
  rule on Hartmann-3, 150 evaluations (a budget of 1e6 that the evaluation cap reaches
  first: the runs grow to 168 observations, so 108 of their refits are past ``warm_from``).
* ``warm_step``: warm-only refits from 60 observations on, as in ``warm_refits``, before
  (a worktree of the commit before) and after their first L-BFGS step became
  ``fitting.WARM_STEP`` long and ``fit.warm_ftol`` stopped them: the default rule on
  Hartmann-3, 100 evaluations (runs of up to 118 observations, 58 refits warm or cold
  past ``warm_from``).
* ``warm_iter``: warm-only refits from 60 observations on with at most 5 L-BFGS
  iterations each against 10 (``fit.warm_iter``), the rest as in ``warm_step``.
* ``draws``: the maximiser's candidates and g*'s grid and samples drawn by
  :mod:`mumbo_jax.runtime.draws` (Philox from XLA's random-bit generator, cheaper to compile), and
  the fit's L-BFGS taking its start's value and its end's from the line search's state
  (two traces of the objective instead of three), against the code before both (a
  worktree: jax.random's threefry): the default rule on Currin, Hartmann-3 and Borehole,
  at most 60 evaluations. Other random numbers, so the runs part early;
  ``draws_unreliable``: the same on the unreliable suite.
* ``polish_gradient``: the maximiser's polish on forward differences (``maximiser.gradient =
  "differences"``: a smaller program to compile) against autodiff (``"exact"``, the
  default): the default rule on Currin, Hartmann-3 and Borehole, at most 60 evaluations.
* ``base_block``: the blocked algebra's direct forms up to 128 rows
  (:data:`mumbo_jax.gp.linalg.BASE_BLOCK`) against 64 (the code before, a worktree): the
  default rule on Currin, Hartmann-3 and Borehole, at most 60 evaluations (the same
  numbers, rounded differently from 65 rows on).
* ``polish_gradient_unreliable``, ``base_block_unreliable``: the same two on the unreliable suite.
* ``polish_once``: the polish evaluating each point once (its last point's value from the
  gradient's forward pass, the final score from the polish) with the direct forms to 128
  rows, against the code before both (a worktree): the default rule on Currin, Hartmann-3
  and Borehole, at most 60 evaluations (the same numbers, rounded differently);
  ``polish_once_unreliable``: the same on the unreliable suite.
* ``lbfgs_once``: the fit's L-BFGS with one evaluation site (:mod:`mumbo_jax.gp.lbfgs`,
  a strong-Wolfe line search in the same loop) against optax's ``lbfgs()`` with its zoom
  line search (the code before, a worktree): the default rule on Currin, Hartmann-3 and
  Borehole, at most 60 evaluations (other fits, so the runs part early);
  ``lbfgs_once_unreliable``: the same on the unreliable suite.
* ``small_n_thinning``: the thinned refit schedule from the first BO step with every refit
  below ``fit.warm_from`` running every start (``fit.incremental_from = 1`` at the default
  ``fit.refit_growth = 0.05``: a full refit each time the data grow by 5 %, appends
  between) against the schedule before it
  (a full refit at every step below 500 observations): the default rule on Currin,
  Hartmann-3 and Borehole at robust.py's paper budgets, at most 400 evaluations (no cap
  binds); ``small_n_thinning_unreliable``: the same on the unreliable suite.

Deterministic single-thread XLA flags (set by robust.py). The runs go to
``data/<study>/<variant>/`` (a run already there is kept; more ``--seeds`` append;
``--compare-only`` compares the runs there; the run files are working files, not
committed), the comparison, per problem, to ``data/<study>/seed_study.json`` (committed;
the performance page renders it): the final regret of
each seed under both, the two-sided Wilcoxon signed-rank p of the paired log-regrets
(floored at 1e-12), and for how many BO evaluations each seed's two runs stay together.
Changes that compile or fit differently part the runs at some step (rounding is amplified
by the maximiser): the question is whether the outcomes differ beyond the paired test's noise.
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
PAPER = ("currin", "hartmann3", "borehole")
UNRELIABLE = ("unrel_forrester_biased", "unrel_currin_negated", "unrel_hartmann3_noisy")


def _code_before(problems, commit, before="before", after="after"):
    """The default rule at most 60 evaluations: the code at ``commit`` (a git worktree)
    against this tree's."""
    return dict(problems=problems, max_evals=60, variants={before: ({}, [], commit), after: ({}, [])})


# study: problems, evaluation cap, (reference, variant) -> (environment, robust.py flags[, commit])
STUDIES = {
    "xla_options": dict(problems=PAPER, max_evals=60, variants={
        "default": ({"MUMBO_JAX_XLA_OPTIONS": "default"}, []),
        "fast": ({"MUMBO_JAX_XLA_OPTIONS": "fast"}, [])}),
    "warm_refits": dict(problems=("hartmann3",), max_evals=150, budget=1e6, variants={
        "cold": ({}, []),
        "warm": ({}, ["--fit", json.dumps({"warm_from": 60, "cold_every": 10, "warm_iter": 10})])}),
    # the code before the large-n algebra (a git worktree at that commit) against this tree's
    "large_n_algebra": _code_before(PAPER, "b9b797c"),
    # the same on problems beyond the paper's: cheap sources that mislead (the unreliable suite)
    "large_n_algebra_unreliable": _code_before(UNRELIABLE, "b9b797c"),
    # warm-only refits from 60 observations, as in warm_refits: the code before the warm
    # refit's short first step and ftol test (a worktree) against this tree's
    "warm_step": dict(problems=("hartmann3",), max_evals=100, budget=1e6, variants={
        "before": ({}, ["--fit", json.dumps({"warm_from": 60, "cold_every": 10, "warm_iter": 10})], "3a978e3"),
        "after": ({}, ["--fit", json.dumps({"warm_from": 60, "cold_every": 10, "warm_iter": 10})])}),
    # warm-only refits from 60 observations: 5 L-BFGS iterations per warm refit against 10
    "warm_iter": dict(problems=("hartmann3",), max_evals=100, budget=1e6, variants={
        "ten": ({}, ["--fit", json.dumps({"warm_from": 60, "cold_every": 10, "warm_iter": 10})]),
        "five": ({}, ["--fit", json.dumps({"warm_from": 60, "cold_every": 10, "warm_iter": 5})])}),
    # the maximiser's candidates and g*'s grid drawn from mumbo_jax.runtime.draws (Philox) instead of
    # jax.random's threefry: the code before (a worktree) against this tree's
    "draws": _code_before(PAPER, "612c945", "threefry", "philox"),
    "draws_unreliable": _code_before(UNRELIABLE, "612c945", "threefry", "philox"),
    # the polish's gradient by forward differences against autodiff (the default)
    "polish_gradient": dict(problems=PAPER, max_evals=60, variants={
        "exact": ({}, ["--maximiser", json.dumps({"gradient": "exact"})]),
        "differences": ({}, ["--maximiser", json.dumps({"gradient": "differences"})])}),
    # the blocked algebra's direct forms up to 128 rows against 64 (the code before, a worktree)
    "base_block": _code_before(PAPER, "a514533", "b64", "b128"),
    "polish_gradient_unreliable": dict(problems=UNRELIABLE, max_evals=60, variants={
        "exact": ({}, ["--maximiser", json.dumps({"gradient": "exact"})]),
        "differences": ({}, ["--maximiser", json.dumps({"gradient": "differences"})])}),
    "base_block_unreliable": _code_before(UNRELIABLE, "a514533", "b64", "b128"),
    "polish_once": _code_before(PAPER, "27a01b9", "before", "once"),
    "polish_once_unreliable": _code_before(UNRELIABLE, "27a01b9", "before", "once"),
    # the fit's L-BFGS with the objective compiled once (mumbo_jax.gp.lbfgs) against optax's
    # lbfgs with its zoom line search (the code before, a worktree)
    "lbfgs_once": _code_before(PAPER, "2afe2f5", "zoom", "once"),
    "lbfgs_once_unreliable": _code_before(UNRELIABLE, "2afe2f5", "zoom", "once"),
    # full refits only when the data have grown by 5 %, from the first BO step, against
    # every-step refits below 500 observations
    "small_n_thinning": dict(problems=PAPER, max_evals=400, variants={
        "every_step": ({}, ["--fit", json.dumps({"incremental_from": 500})]),
        "thinned": ({}, ["--fit", json.dumps({"incremental_from": 1})])}),
    "small_n_thinning_unreliable": dict(problems=UNRELIABLE, max_evals=400, variants={
        "every_step": ({}, ["--fit", json.dumps({"incremental_from": 500})]),
        "thinned": ({}, ["--fit", json.dumps({"incremental_from": 1})])}),
}


def _checkout(commit: str) -> pathlib.Path:
    """A detached git worktree of this repository at ``commit`` (made once, kept under
    ``.worktrees/``, which git ignores): the library as it was, to run a variant with."""
    path = ROOT / ".worktrees" / commit
    if not path.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), commit], check=True)
    return path


def run(study: str, variant: str, seeds: int, jobs: int) -> None:
    spec = STUDIES[study]
    env, flags, *commit = spec["variants"][variant]
    code = _checkout(commit[0]) if commit else ROOT
    subprocess.run([sys.executable, str(code / "experiments" / "studies" / "robust.py"),
                    "--problems", ",".join(spec["problems"]), "--strategies", "robust", "--seeds", str(seeds),
                    "--max-evals", str(spec["max_evals"]), "--jobs", str(jobs),
                    *(["--budget", str(spec["budget"])] if "budget" in spec else []),
                    "--out", str(ROOT / "data" / study / variant), *flags],
                   env=dict(os.environ, **env, **({"PYTHONPATH": str(code)} if commit else {})), check=True)


def together_for(a: dict, b: dict) -> int | None:
    """BO evaluations before two runs of one seed part: the first at which the fidelity
    differs or the recommendation's regret after it differs by more than 1e-6 relative
    (the study files keep no inputs); None: they never part."""
    za, zb = np.asarray(a["z"]), np.asarray(b["z"])
    ra, rb = np.asarray(a["regret"], float), np.asarray(b["regret"], float)
    n = min(len(za), len(zb))
    for i in range(n):
        if za[i] != zb[i] or abs(ra[i + 1] - rb[i + 1]) > 1e-6 * max(abs(ra[i + 1]), abs(rb[i + 1]), 1e-12):
            return i
    return None if len(za) == len(zb) else n


def compare(study: str, seeds: int) -> dict:
    spec = STUDIES[study]
    ref, var = spec["variants"]
    out = {"command": f"python experiments/ablations/seed_study_paired.py {study} --seeds {seeds}",
           "max_evals": spec["max_evals"], "reference": ref, "variant": var, "problems": {}}
    for p in spec["problems"]:
        runs = {v: json.loads((ROOT / "data" / study / v / f"{p}__robust.json").read_text())
                for v in (ref, var)}
        by_seed = {v: {r["seed"]: r for r in runs[v]["seeds"]} for v in runs}
        common = sorted(set(by_seed[ref]) & set(by_seed[var]))[:seeds]
        final = {v: np.array([by_seed[v][s]["regret"][-1] for s in common]) for v in runs}
        la, lb = (np.log10(np.maximum(final[v], 1e-12)) for v in (ref, var))
        diff = lb - la
        out["problems"][p] = {
            "budget": runs[var]["budget"], "seeds": common,
            "final_regret": {v: final[v].tolist() for v in runs},
            "median": {v: float(np.median(final[v])) for v in runs},
            "variant_lower": int(np.sum(diff < 0)), "variant_higher": int(np.sum(diff > 0)),
            "wilcoxon_p": float(stats.wilcoxon(la, lb).pvalue) if np.any(diff != 0) else 1.0,
            "together_for": [together_for(by_seed[ref][s], by_seed[var][s]) for s in common],
            "evaluations": {v: [by_seed[v][s]["n_evals"] for s in common] for v in runs},
            # seconds of the fit and of whole decisions over a run (compilation included; the seeds
            # run in lock-step, so each seed's figure is its batch's), median over seeds
            "fit_s": {v: float(np.median([sum(o["fit"] for o in by_seed[v][s]["overheads"]) for s in common]))
                      for v in runs},
            "decisions_s": {v: float(np.median([sum(o["total"] for o in by_seed[v][s]["overheads"])
                                                for s in common])) for v in runs},
        }
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study", choices=sorted(STUDIES))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=1, help="processes per variant (the variants run one after another)")
    ap.add_argument("--compare-only", action="store_true", help="only compare the runs already there")
    args = ap.parse_args(argv)
    variants = list(STUDIES[args.study]["variants"])
    if not args.compare_only:
        for v in variants:
            run(args.study, v, args.seeds, args.jobs)
    result = compare(args.study, args.seeds)
    (ROOT / "data" / args.study / "seed_study.json").write_text(json.dumps(result, indent=1) + "\n")
    ref, var = variants
    for p, r in result["problems"].items():
        print(f"{p}: median final regret {r['median'][ref]:.3g} ({ref}) vs {r['median'][var]:.3g} ({var}); "
              f"{var} lower on {r['variant_lower']} seeds, higher on {r['variant_higher']}, Wilcoxon p "
              f"{r['wilcoxon_p']:.2f}; together for {r['together_for']} BO evaluations")


if __name__ == "__main__":
    main()
