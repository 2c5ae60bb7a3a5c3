"""One ICM kernel or two: the hyper-parameter fit with the ICM model's dense Gram against
the same fit with tinygp's ICM kernel.

    taskset -c 1 env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \\
        python experiments/performance/bench_icm_fit.py [--ns 100,300] [--reps 5] [--restarts 8] [--max-iter 200]

The ICM covariance exists twice: :class:`mumbo_jax.gp.kernels.ICM` (a tinygp kernel,
what the posterior and every acquisition use) and the dense form of
:meth:`mumbo_jax.gp.models.ICMModel.gram` (pairwise differences broadcast, B by one-hot
products, the Matern's gradient in closed form: :func:`mumbo_jax.gp.kernels.matern52_gram`),
which only the fit uses. This script fits Hartmann-3 data (the decision benchmark's
design: 3 fidelities, mostly cheap points, ``bench_decision.design``) with ``--restarts``
L-BFGS starts of at most ``--max-iter`` iterations (``fit_params``' defaults 8 x 200)
through :func:`mumbo_jax.gp.fitting.fit_from`, jitted, for two models that differ only in
their Gram: ``dense`` (:class:`~mumbo_jax.gp.models.ICMModel`, the library's) and
``tinygp`` (a subclass whose ``gram`` is the base class's, tinygp's kernel through
``Masked``): the objective, the closed-form Cholesky gradient, L-BFGS and the starts are
the same. Reports per n the trace + lower time, XLA compile time, and the median fit time
of ``--reps`` (the variants interleaved), with the best objective each reaches; writes
``data/bench_icm_fit.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import platform
import statistics
import sys
import time

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments" / "performance"))

from bench_decision import design  # noqa: E402

from mumbo_jax.gp import fitting, models  # noqa: E402

OUT = ROOT / "data" / "bench_icm_fit.json"


@dataclasses.dataclass(frozen=True, kw_only=True)
class TinygpICM(models.ICMModel):
    """The ICM model with tinygp's kernel in the fit too (the one-kernel alternative)."""

    gram = models.ModelSpec.gram


def compiled_fit(spec, scaling, x, z, y, mask, inits, max_iter):
    """``(compiled fit, trace + lower seconds, compile seconds)``."""
    fun = jax.jit(lambda scaling, x, z, y, mask, inits: fitting.fit_from(spec, scaling, x, z, y, mask, inits,
                                                                           max_iter, 1e-5))
    t0 = time.perf_counter()
    lowered = fun.lower(scaling, x, z, y, mask, inits)
    t1 = time.perf_counter()
    compiled = lowered.compile()
    return compiled, t1 - t0, time.perf_counter() - t1


def bench_n(n, x_all, z_all, y_all, reps, restarts, max_iter):
    x, z, y = jnp.asarray(x_all[:n]), jnp.asarray(z_all[:n], jnp.int32), jnp.asarray(y_all[:n])
    mask = jnp.ones(n)
    rows = {}
    for name, cls in (("dense", models.ICMModel), ("tinygp", TinygpICM)):
        spec = cls(bounds=[(0.0, 1.0)] * 3, n_fidelities=3)
        scaling = spec.make_scaling(y, mask)
        inits = fitting.restart_inits(spec, jax.random.PRNGKey(0), restarts)
        fit, lower_s, compile_s = compiled_fit(spec, scaling, x, z, y, mask, inits, max_iter)
        rows[name] = {"fit": fit, "args": (scaling, x, z, y, mask, inits), "lower_s": lower_s,
                      "compile_s": compile_s, "fit_all_s": []}
        jax.block_until_ready(fit(*rows[name]["args"]))  # first run (untimed)
    for _ in range(reps):
        for name, r in rows.items():
            t0 = time.perf_counter()
            params, loss, losses = jax.block_until_ready(r["fit"](*r["args"]))
            r["fit_all_s"].append(time.perf_counter() - t0)
            r["loss"], r["losses"] = float(loss), [float(v) for v in losses]
    out = {}
    for name, r in rows.items():
        out[name] = {"lower_s": r["lower_s"], "compile_s": r["compile_s"], "fit_s": statistics.median(r["fit_all_s"]),
                     "fit_all_s": r["fit_all_s"], "loss": r["loss"], "losses": r["losses"]}
    return {"n": n, "restarts": restarts, "max_iter": max_iter, **out}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ns", default="100,300")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--restarts", type=int, default=8)
    p.add_argument("--max-iter", type=int, default=200)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    ns = [int(v) for v in args.ns.split(",")]
    _, x, z, y = design(max(ns))
    results = []
    print("   n | variant | lower s | compile s |  fit s | best objective")
    for n in ns:
        res = bench_n(n, x, z, y, args.reps, args.restarts, args.max_iter)
        results.append(res)
        for name in ("dense", "tinygp"):
            r = res[name]
            print(f"{n:4d} | {name:7s} | {r['lower_s']:7.2f} | {r['compile_s']:9.2f} | {r['fit_s']:6.3f} | {r['loss']:.6f}")
        print(f"     tinygp / dense fit time: {res['tinygp']['fit_s'] / res['dense']['fit_s']:.2f}x")
    run = {"command": " ".join(["python", "experiments/performance/bench_icm_fit.py", *(argv or sys.argv[1:])]),
           "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}",
           "affinity": sorted(os.sched_getaffinity(0)), "xla_flags": os.environ.get("XLA_FLAGS", ""),
           "jax": jax.__version__, "results": results}
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.out).write_text(json.dumps(run, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
