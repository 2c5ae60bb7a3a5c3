"""A seed study of the fit's speed-ups: which piece changes MUMBO's decisions, and for worse?

    taskset -c 1 env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
        python experiments/ablations/seed_study_fit_speed.py --variant dense [--problems forrester,hartmann3]

One variant per process (each compiles its own programs; ``--variant all`` runs them
one after another in subprocesses):

* ``tinygp``: the objective before the dense fit (tinygp's GP,
  :func:`mumbo_jax.gp.fitting.neg_log_marginal_reference`, autodiff gradient);
* ``dense``: the defaults (the dense ICM objective with its closed-form gradient);
* ``ftol``: + ``fit_ftol=1e-9`` (L-BFGS stops on a relative decrease below 1e-9);
* ``warm``: + ``full_refit_every=10`` (warm-only refits between full refits);
* ``ftol_warm``: both (a variant that was not adopted);
  (``ftol``, ``warm`` and ``ftol_warm`` measure levers that left the library: they run with
  the library at the git tag ``ablation-levers``, ``git checkout ablation-levers``);
* ``pow2``: the defaults with buffers padded to the next power of two instead of 32-row steps.
* ``linalg10c``: the defaults with the blocked-inverse fit (the fit's inverses by blocked
  triangular products, the Matern Gram's closed-form gradient, g*'s grid in chunks): the
  same objective and moments to rounding; against ``dense`` (recorded before it).

Studies (MUMBO, ``tests/bo_helpers.FAST`` settings, the compiled driver): Forrester,
budget 60, at most 25 evaluations, seeds 0-11 (tests/test_bo_study.py's setup);
Hartmann-3, budget 300, at most 40 evaluations, seeds 0-4; ``hartmann3_long``: budget
2000, at most 80 evaluations, seeds 0-4 (up to 98 rows: 96 or 128 with 32-row buffers,
128 with power-of-two ones; for ``pow2`` against ``dense``). Writes each variant's final
regrets and decisions to ``data/fit_speed_seed_study.json`` (merged by variant) and prints
the summary with the largest |dx| against ``dense``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax.benchmarks import problems, tasks  # noqa: E402
from mumbo_jax.bo import stages  # noqa: E402
from mumbo_jax.gp import fitting  # noqa: E402
from tests.bo_helpers import FAST, with_  # noqa: E402

OUT = ROOT / "data" / "fit_speed_seed_study.json"
VARIANTS = {"tinygp": {}, "dense": {}, "ftol": {"fit_ftol": 1e-9}, "warm": {"full_refit_every": 10},
            "ftol_warm": {"fit_ftol": 1e-9, "full_refit_every": 10}, "pow2": {}, "linalg10c": {}}
STUDIES = {"forrester": dict(budget=60.0, max_evals=25, seeds=list(range(12))),
           "hartmann3": dict(budget=300.0, max_evals=40, seeds=list(range(5))),
           "hartmann3_long": dict(budget=2000.0, max_evals=80, seeds=list(range(5)))}


def run_variant(variant: str, names) -> dict:
    if variant == "tinygp":  # before any tracing: fit_from looks the objective up when traced
        fitting.neg_log_marginal = fitting.neg_log_marginal_reference
    if variant == "pow2":  # the driver grows buffers through stages.buffer_size
        stages.buffer_size = lambda n, min_buffer=stages.MIN_BUFFER: max(min_buffer, 1 << int(n).bit_length())
    if VARIANTS[variant]:  # fit_ftol, full_refit_every: levers that left the library
        raise SystemExit(f"variant {variant!r} measures a lever removed from the library; it runs with the library "
                         "at the git tag ablation-levers (git checkout ablation-levers)")
    settings = with_(FAST)
    out = {}
    for name in names:
        study = STUDIES[name]
        t0 = time.perf_counter()
        h = tasks.run_problem(problems.get_problem(name.split("_")[0]), study["budget"], study["seeds"], settings,
                              max_evals=study["max_evals"])
        final = [float(h.regret[s, h.n_evals[s]]) for s in range(len(study["seeds"]))]
        out[name] = {"seeds": study["seeds"], "final_regret": final, "n_evals": h.n_evals.tolist(),
                     "x": h.x.tolist(), "z": h.z.tolist(), "wall_s": time.perf_counter() - t0}
        print(f"{variant:10} {name:10} median final regret {np.median(final):.3g}  max {np.max(final):.3g}  "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return out


def summary(data: dict):
    for name in STUDIES:
        base = data.get("dense", {}).get(name)
        for variant, res in data.items():
            if name not in res:
                continue
            r = res[name]
            final = np.asarray(r["final_regret"])
            line = (f"{name:10} {variant:10} median {np.median(final):9.3g}  max {final.max():9.3g}  "
                    f"seeds with regret > 1: {int(np.sum(final > 1))}/{len(final)}")
            if base is not None:
                same_z = np.asarray(r["z"]) == np.asarray(base["z"])
                dx = np.abs(np.asarray(r["x"]) - np.asarray(base["x"]))
                first = [int(np.argmax(~row)) if not row.all() else -1 for row in same_z]
                line += f"  max|dx| vs dense {dx.max():.2g}; first differing z per seed {first}"
            print(line)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variant", default="all", choices=["all", *VARIANTS])
    p.add_argument("--problems", default="forrester,hartmann3")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    names = args.problems.split(",")
    out = pathlib.Path(args.out)
    if args.variant == "all":
        for v in VARIANTS:
            subprocess.run([sys.executable, __file__, "--variant", v, "--problems", args.problems, "--out", args.out],
                           check=True)
    else:
        res = run_variant(args.variant, names)
        data = json.loads(out.read_text()) if out.exists() else {}
        data.setdefault(args.variant, {}).update(res)
        out.write_text(json.dumps(data) + "\n")
    summary(json.loads(out.read_text()))


if __name__ == "__main__":
    main()
