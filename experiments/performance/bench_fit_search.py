"""The fit's L-BFGS with the objective compiled once against optax's ``lbfgs()`` (zoom line
search, the objective in three places): compile seconds, fit seconds (the fastest of 3 runs) and the objective
each reaches on the same data.

    taskset -c 1 python experiments/performance/bench_fit_search.py [--seeds 0,1,2]
        [--ns 10,26,...] [--compile-ns 40,300,1000] [--out data/compile/fit_line_search.json]

Data: ``bench_decision.design`` (Hartmann-3, 3 fidelities) for each seed, the first n
points in the loop's buffer (``stages.buffer_size``); the fit: two starts (the defaults
and one random start, ``fitting.restart_inits``), at most 50 iterations each, gradient
tolerance 1e-5, as a full refit of the BO loops runs them (``fitting.fit_from``). The
optax reference is defined here, as the library ran it before; it is not part of the
library. Prints one line per (seed, n) and a summary: on how many fits each reached the
lower objective (a difference under 1e-6 is a tie), the median difference, and the
summed fit seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ["MUMBO_JAX_CACHE"] = "off"

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments" / "performance"))

from bench_decision import design  # noqa: E402
from mumbo_jax.runtime import xla_options  # noqa: E402
from mumbo_jax.bo import stages  # noqa: E402
from mumbo_jax.gp import fitting, models  # noqa: E402


def optax_lbfgs(fun, init, max_iter, tol, ftol=0.0):
    """optax's L-BFGS with its zoom line search in a while_loop: the start's value and
    gradient computed before the loop, the rest from the line search's state."""
    opt = optax.lbfgs()

    def step(carry):
        params, state, _ = carry
        value, grad = optax.tree.get(state, "value"), optax.tree.get(state, "grad")
        updates, state = opt.update(grad, state, params, value=value, grad=grad, value_fn=fun)
        return optax.apply_updates(params, updates), state, value

    def keep_going(carry):
        _, state, _ = carry
        count = optax.tree.get(state, "count")
        go = (count < max_iter) & (optax.tree.norm(optax.tree.get(state, "grad")) >= tol)
        return (count == 0) | (go & jnp.isfinite(optax.tree.get(state, "value")))

    value, grad = jax.value_and_grad(fun)(init)
    state = optax.tree.set(opt.init(init), value=value, grad=grad)
    params, state, _ = jax.lax.while_loop(keep_going, step, (init, state, jnp.asarray(jnp.inf)))
    return params, optax.tree.get(state, "value")


SEARCHES = {"zoom": optax_lbfgs, "once": fitting.lbfgs}


def buffers(X, Z, Y, n):
    N = stages.buffer_size(n)
    x, z, y, m = np.zeros((N, X.shape[1])), np.zeros(N, int), np.zeros(N), np.zeros(N)
    x[:n], z[:n], y[:n], m[:n] = X[:n], Z[:n], Y[:n], 1.0
    return tuple(map(jnp.asarray, (x, z, y, m)))


def fit_program(spec, search, data):
    x, z, y, m = data
    scaling = models.make_scaling(spec, y, m)

    def fit(inits):
        objective = lambda p: fitting.neg_log_marginal(spec, p, scaling, x, z, y, m)
        run = lambda p: search(objective, p, 50, 1e-5)
        params, losses = fitting._run_starts(run, inits)
        return jnp.min(jnp.where(jnp.isfinite(losses), losses, jnp.inf))

    return jax.jit(fit, compiler_options=xla_options.active_options())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--ns", default=",".join(str(n) for n in range(10, 330, 16)))
    ap.add_argument("--compile-ns", default="40,300,1000")
    ap.add_argument("--out", default=str(ROOT / "data" / "compile" / "fit_line_search.json"))
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    ns = [int(n) for n in args.ns.split(",")]
    compile_ns = [int(n) for n in args.compile_ns.split(",")] if args.compile_ns else []
    n_max = max(ns + compile_ns)

    compiles = []
    task, X, Z, Y = design(n_max, seed=0)
    inits = fitting.restart_inits(task.spec, jax.random.PRNGKey(0), 2)
    for n in compile_ns:
        row = {"n": n, "buffer_rows": stages.buffer_size(n)}
        for name, search in SEARCHES.items():
            t0 = time.perf_counter()
            lowered = fit_program(task.spec, search, buffers(X, Z, Y, n)).lower(inits)
            t1 = time.perf_counter()
            lowered.compile()
            row[name] = {"trace_lower_s": t1 - t0, "xla_s": time.perf_counter() - t1}
        compiles.append(row)
        print(f"compile n={n}: zoom {row['zoom']['xla_s']:.2f} s XLA, once {row['once']['xla_s']:.2f} s", flush=True)

    fits = []
    for seed in seeds:
        task, X, Z, Y = design(max(ns), seed=seed)
        inits = fitting.restart_inits(task.spec, jax.random.PRNGKey(seed), 2)
        for n in ns:
            row = {"seed": seed, "n": n}
            for name, search in SEARCHES.items():
                f = fit_program(task.spec, search, buffers(X, Z, Y, n))
                loss = float(jax.block_until_ready(f(inits)))
                times = []
                for _ in range(3):
                    t0 = time.perf_counter()
                    jax.block_until_ready(f(inits))
                    times.append(time.perf_counter() - t0)
                row[name] = {"loss": loss, "fit_s": min(times)}
            fits.append(row)
            print(f"seed {seed} n={n}: zoom {row['zoom']['loss']:.4f} ({row['zoom']['fit_s']:.3f} s), "
                  f"once {row['once']['loss']:.4f} ({row['once']['fit_s']:.3f} s)", flush=True)

    diff = [r["once"]["loss"] - r["zoom"]["loss"] for r in fits]
    summary = {"fits": len(fits), "once_lower": sum(d < -1e-6 for d in diff), "zoom_lower": sum(d > 1e-6 for d in diff),
               "ties": sum(abs(d) <= 1e-6 for d in diff), "median_difference": statistics.median(diff),
               "zoom_fit_s": sum(r["zoom"]["fit_s"] for r in fits), "once_fit_s": sum(r["once"]["fit_s"] for r in fits)}
    print(f"{summary['fits']} fits: the objective lower with one site in {summary['once_lower']}, with zoom in "
          f"{summary['zoom_lower']}, tied in {summary['ties']}; median difference (once - zoom) "
          f"{summary['median_difference']:+.3g}; fit seconds zoom {summary['zoom_fit_s']:.2f}, "
          f"once {summary['once_fit_s']:.2f}")
    out = {"command": "python experiments/performance/bench_fit_search.py", "jax": jax.__version__,
           "optax": optax.__version__, "compile": compiles, "fits": fits, "summary": summary}
    pathlib.Path(args.out).write_text(json.dumps(out, indent=1))
    print("wrote", args.out)


if __name__ == "__main__":
    main()
