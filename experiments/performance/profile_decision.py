"""Where one decision's time goes at n observations: the fit's objective
evaluations and their unit cost, the g* stage's pieces and the maximisation.

    taskset -c 1 env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
        python experiments/performance/profile_decision.py [--ns 40,300] [--reps 5]

Uses the told data of ``experiments/performance/bench_decision.py`` (Hartmann-3, seed 0) and prints,
per n: the number of objective (value and gradient) evaluations a fresh ``ask()``'s fit
makes per L-BFGS start (counted by a host callback in a separate, instrumented trace),
the time of one evaluation, of its Cholesky and of the posterior's conditioning, the
g* stage split into the grid's moments and the Gumbel fit, and the three stages of
``ask()``. Appends the run to ``data/profile_decision.json`` (``--out``), rendered
in the README by ``experiments/render_results.py`` (``<!-- render: profile_decision -->``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments" / "performance"))

from bench_decision import design, timed_asks  # noqa: E402
from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax.acquisition import maxvalue  # noqa: E402
from mumbo_jax.bo import asktell, stages  # noqa: E402
from mumbo_jax.bo.settings import BOSettings  # noqa: E402
from mumbo_jax.gp import fitting, models, moments, posterior  # noqa: E402

# timed asks only: no background compiling of the next buffer size (mumbo_jax.runtime.prefetch)
os.environ.setdefault("MUMBO_JAX_PREFETCH", "off")


def clock(fn, reps):
    jax.block_until_ready(fn())
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def count_evaluations(task, settings, buffers, params, key):
    """Objective evaluations per start of one full refit (instrumented trace)."""
    calls = []
    original = fitting.neg_log_marginal

    def counted(spec, p, *args):
        jax.debug.callback(lambda: calls.append(1))
        return original(spec, p, *args)

    spec = task.spec
    scaling = models.make_scaling(spec, buffers.y, buffers.mask)
    counts = []
    inits = fitting.restart_inits(spec, key, settings.fit.restarts, first=params)
    fitting.neg_log_marginal = counted
    try:
        for r in range(settings.fit.restarts):
            one = jax.tree_util.tree_map(lambda a: a[r:r + 1], inits)
            calls.clear()
            jax.block_until_ready(fitting.fit_from(spec, scaling, buffers.x, buffers.z, buffers.y, buffers.mask,
                                                   one, settings.fit.max_iter, 1e-5))
            counts.append(len(calls))
    finally:
        fitting.neg_log_marginal = original
    return counts


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ns", default="40,300")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", default=str(ROOT / "data" / "profile_decision.json"))
    args = p.parse_args(argv)
    load = os.getloadavg()
    rows_out = []
    ns = [int(v) for v in args.ns.split(",")]
    settings = BOSettings(strategy="mumbo", recommendation={"rule": "global"})
    task, x, z, y = design(max(ns))
    spec = task.spec
    for n in ns:
        opt = asktell.AskTell(task, settings, seed=0)
        for i in range(n):
            opt.tell(x[i], z[i], y[i])
        start = opt.params
        buffers = stages.pad_buffers(x[:n], z[:n], y[:n], stages.buffer_size(n))
        rows = buffers.x.shape[0]
        k = n - opt.n_design
        k_fit, k_gstar, k_max = stages.step_keys(opt.loop_key, k)
        counts = count_evaluations(task, settings, buffers, stages.as_params(start), k_fit)
        scaling = models.make_scaling(spec, buffers.y, buffers.mask)
        params = stages.as_params(start)
        vg = jax.jit(jax.value_and_grad(lambda p: fitting.neg_log_marginal(spec, p, scaling, buffers.x, buffers.z,
                                                                          buffers.y, buffers.mask)))
        t_eval = clock(lambda: vg(params), args.reps * 4)
        a = np.asarray(buffers.x)
        cov = jnp.asarray(np.exp(-np.sum((a[:, None] - a[None]) ** 2, -1)) + np.eye(rows))
        chol = jax.jit(jnp.linalg.cholesky)
        t_chol = clock(lambda: chol(cov), args.reps * 4)
        t_cond = clock(lambda: posterior.condition(spec, params, buffers.x, buffers.z, buffers.y, buffers.mask,
                                                   scaling), args.reps)
        post = posterior.condition(spec, params, buffers.x, buffers.z, buffers.y, buffers.mask, scaling)
        n_grid = maxvalue.default_grid_size(spec.dim, "gumbel")
        grid = jax.random.uniform(jax.random.PRNGKey(0), (n_grid + rows, spec.dim))
        t_moments = clock(lambda: moments.target_moments(post, grid, task.target), args.reps)
        mean, var = moments.target_moments(post, grid, task.target)
        t_gumbel = clock(lambda: maxvalue.gumbel_max_samples(k_gstar, mean, var, 10, n_bisect=44), args.reps)
        opt.cancel(*opt.ask())
        totals, split = timed_asks(opt, start, args.reps)
        med = lambda f: statistics.median(getattr(t, f) for t in split)
        print(f"n = {n} ({rows} rows): ask {statistics.median(totals):.3f} s = fit {med('fit'):.3f} + "
              f"g* {med('gstar'):.3f} + max {med('maximise'):.3f}")
        print(f"  fit: evaluations per start {counts} (value+grad, {settings.fit.max_iter} iterations max); "
              f"one evaluation {1e3 * t_eval:.2f} ms (its Cholesky alone {1e3 * t_chol:.2f} ms); "
              f"conditioning {1e3 * t_cond:.2f} ms")
        print(f"  g*: grid moments ({n_grid} + {rows} points) {1e3 * t_moments:.1f} ms, Gumbel fit + samples "
              f"{1e3 * t_gumbel:.1f} ms", flush=True)
        rows_out.append({"n": n, "buffer_rows": rows, "ask_s": statistics.median(totals), "fit_s": med("fit"),
                         "gstar_s": med("gstar"), "maximise_s": med("maximise"), "evaluations_per_start": counts,
                         "evaluation_ms": 1e3 * t_eval, "cholesky_ms": 1e3 * t_chol, "condition_ms": 1e3 * t_cond,
                         "grid_points": n_grid + rows, "grid_moments_ms": 1e3 * t_moments,
                         "gumbel_ms": 1e3 * t_gumbel})
    command = " ".join(["python experiments/performance/profile_decision.py", *(argv if argv is not None else sys.argv[1:])])
    out = pathlib.Path(args.out)
    runs = json.loads(out.read_text()) if out.exists() else []
    runs.append({"command": command, "time": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": platform.node(),
                 "cpu_count": os.cpu_count(), "device": jax.default_backend(), "jax": jax.__version__,
                 "loadavg_start": load, "loadavg_end": os.getloadavg(), "reps": args.reps, "rows": rows_out})
    out.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
