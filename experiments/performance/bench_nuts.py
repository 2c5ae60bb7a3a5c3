"""Overhead of hyper-parameter marginalisation by NUTS (the target: "within 3x of
MUMBO-10, MCMC included"): one decision with and without a refit, per setting.

    taskset -c 1 env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
        python experiments/performance/bench_nuts.py [--ns 40,100] [--reps 3] [--refit-every 5]

Settings: ``paper`` (MUMBO-10 as the paper runs it: uniform candidates, the best evaluated
mean as the recommendation), ``defaults`` (today's BOSettings), ``nuts4`` and ``nuts8``
(the defaults with ``hmc_samples`` = 4 / 8, as the ablation's ``nuts4`` / ``nuts`` levers).
For each n an :class:`mumbo_jax.bo.asktell.AskTell` is told n points of
``bench_decision``'s fixed Hartmann-3 design; ``ask()`` is timed after one untimed call
(compilation), median of ``--reps``, with a refit (the hyper-parameters fitted from the
previous fit, NUTS redrawn) and without (conditioning on the previous samples only).
A step's overhead in a run that refits every ``--refit-every`` steps is
``(refit + (r - 1) no-refit) / r``; the ratios to ``defaults`` and to ``paper`` are printed
and everything is written to ``data/nuts/bench_nuts.json``.
"""

from __future__ import annotations

import os

import argparse
import dataclasses
import json
import pathlib
import platform
import statistics
import sys

import jax

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments" / "performance"))

from bench_decision import design, timed_asks  # noqa: E402

from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax.bo import asktell  # noqa: E402
from mumbo_jax.bo.settings import BOSettings  # noqa: E402

# timed asks only: no background compiling of the next buffer size (mumbo_jax.runtime.prefetch)
os.environ.setdefault("MUMBO_JAX_PREFETCH", "off")

SETTINGS = {
    "paper": BOSettings(strategy="mumbo", maximiser={"boundary_frac": 0.0, "local_frac": 0.0},
                        recommendation={"rule": "mean", "calibration": "none"}),
    "defaults": BOSettings(strategy="mumbo", recommendation={"rule": "global"}),
    "nuts4": BOSettings(strategy="mumbo", recommendation={"rule": "global"},
                        mcmc={"samples": 4, "warmup": 30, "max_doublings": 4}),
    "nuts8": BOSettings(strategy="mumbo", recommendation={"rule": "global"},
                        mcmc={"samples": 8, "warmup": 50, "max_doublings": 4}),
}


def bench(task, settings, x, z, y, n, reps):
    """Median seconds of ``ask()`` with and without a refit at n told points, both from
    the hyper-parameters (samples) of a first, untimed fit."""
    out, fitted = {}, None
    for refit in (True, False):
        s = settings if refit else dataclasses.replace(settings, refit_every=10**6)  # k > 0: never refits
        opt = asktell.AskTell(task, s, seed=0)
        for i in range(n):
            opt.tell(x[i], z[i], y[i])
        if fitted is None:
            xa, za = opt.ask()  # compilation and the first fit
            opt.cancel(xa, za)
            fitted = opt.params
        else:
            opt.params = fitted
            xa, za = opt.ask()  # compilation
            opt.cancel(xa, za)
        totals, _ = timed_asks(opt, fitted, reps)
        out["refit_s" if refit else "no_refit_s"] = statistics.median(totals)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ns", default="40,100")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--refit-every", type=int, default=5)
    p.add_argument("--out", default=str(ROOT / "data" / "nuts" / "bench_nuts.json"))
    args = p.parse_args(argv)
    ns = [int(v) for v in args.ns.split(",")]
    task, x, z, y = design(max(ns))
    r = args.refit_every
    rows = []
    for n in ns:
        for name, s in SETTINGS.items():
            t = bench(task, s, x, z, y, n, args.reps)
            t["step_s"] = (t["refit_s"] + (r - 1) * t["no_refit_s"]) / r
            rows.append({"n": n, "setting": name, **t})
            print(f"n={n:4d} {name:9s} refit {t['refit_s']:.3f} s  no refit {t['no_refit_s']:.3f} s  "
                  f"step (refit every {r}) {t['step_s']:.3f} s", flush=True)
    print(f"\nratios of a step (refit every {r}) and of a refitting ask:")
    for n in ns:
        by = {row["setting"]: row for row in rows if row["n"] == n}
        for name in ("nuts4", "nuts8"):
            print(f"n={n:4d} {name}: step {by[name]['step_s'] / by['defaults']['step_s']:.1f}x defaults, "
                  f"{by[name]['step_s'] / by['paper']['step_s']:.1f}x paper MUMBO-10; refit ask "
                  f"{by[name]['refit_s'] / by['defaults']['refit_s']:.1f}x defaults")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": " ".join(sys.argv), "machine": platform.processor() or platform.machine(),
                               "refit_every": r, "reps": args.reps, "rows": rows}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
