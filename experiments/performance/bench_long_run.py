"""Amortised seconds per BO step inside a long run, against n: the thinned refit schedule.

    taskset -c 1 env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
        python experiments/performance/bench_long_run.py [--ns 100,300,1000,3000] [--steps 4]
        [--set RECORD.FIELD=VALUE ...] [--label defaults] [--plot data/long_run/long_run.png]

For each n an :class:`mumbo_jax.bo.asktell.AskTell` (the default rule unless ``--set``,
Hartmann-3, 3 fidelities, seed 0) is told the first n points of the fixed MUMBO-shaped
design of ``bench_decision.py``, and its refits are timed as a run meets them at n:

* a refit with every start (``cold``, forced with ``fit.warm_from = 0``) and a warm-only
  refit (``warm``): the fit stage's seconds (each after an untimed call at the same buffer
  size, so nothing compiles);
* ``--steps`` steps between refits: tell one more point, ``ask()`` (the appends, g*, the
  maximisation), median seconds (the first step at a size is untimed: it compiles the
  append program).

The amortised cost of a step follows from the schedule (``fit.refit_growth`` g,
``fit.cold_every`` c): one warm refit per g n steps and one full refit per
((1 + g)^c - 1) n steps,

    amortised = step + warm / (g n) + (cold - warm) / (((1 + g)^c - 1) n)

(below ``fit.warm_from`` every refit of the thinned schedule runs every start:
amortised = step + cold / (g n); below ``fit.incremental_from`` every step refits with every start: amortised = the
step's decision + cold). Beside it, the schedule before the thinned refits (every step a
refit: warm-only from ``fit.warm_from`` with every ``fit.cold_every``-th one a full refit,
amortised the same way; else every start) for the ratio. Prints the table
and the log-log slope of the amortised cost; appends the rows to
``data/long_run/long_run.json`` and plots them (``--plot``). Compile time is excluded.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import platform
import statistics
import sys
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments" / "performance"))

from bench_decision import design, parse_sets  # noqa: E402
from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax.bo import asktell, refits, stages  # noqa: E402
from mumbo_jax.bo.settings import BOSettings  # noqa: E402

os.environ.setdefault("MUMBO_JAX_PREFETCH", "off")  # timed asks only: nothing compiles in the background
OUT = ROOT / "data" / "long_run" / "long_run.json"


def _ask_timed(opt, schedule=None):
    """One ``ask()`` (cancelled after) with the schedule set as given: ``(seconds, fit seconds)``."""
    if schedule is not None:
        opt.schedule, opt._carry = schedule, None if schedule.anchor is None else opt._carry
    opt.timings.clear()
    t0 = time.perf_counter()
    x, z = opt.ask()
    wall = time.perf_counter() - t0
    opt.cancel(x, z)
    return wall, opt.timings[-1].fit


def bench_n(task, settings, x, z, y, n, steps):
    f = settings.fit
    opt = asktell.AskTell(task, settings, seed=0)
    for i in range(n):
        opt.tell(x[i], z[i], y[i])
    params0 = opt.params
    # a refit with every start: untimed (compiles), then timed from the same start
    t0 = time.perf_counter()
    opt.settings = settings.replace(fit={"warm_from": 0})  # a full refit (and the compiles)
    _ask_timed(opt, refits.Schedule())
    opt.settings = settings
    first = time.perf_counter() - t0
    fitted = opt.params
    # the refit with every start, whatever n (at n >= fit.warm_from the every-step schedule would
    # make this step's refit a warm one unless k % cold_every == 0)
    opt.settings, opt.params = settings.replace(fit={"warm_from": 0}), params0
    cold_wall, cold_fit = _ask_timed(opt, refits.Schedule())
    opt.settings = settings
    # a warm-only refit from the fitted hyper-parameters, as the schedule's refits between full ones
    warm_settings = settings.replace(fit={"warm_from": 1, "cold_every": 1_000_000, "refit_every": 1,
                                          "refit_growth": 0.0})
    opt.settings, opt.params = warm_settings, fitted
    warm_wall, warm_fit = _ask_timed(opt, refits.Schedule())
    opt.settings = settings
    # steps between refits: the carried posterior of a refit at n, one more point told per step
    opt.params = fitted
    opt.schedule, opt._carry = refits.Schedule(n, n), None
    step_walls, step_fits = [], []
    for j in range(steps + 1):
        opt.tell(x[n + j], z[n + j], y[n + j])
        wall, fit = _ask_timed(opt)
        if j:  # the first one compiled the append program of this size
            step_walls.append(wall), step_fits.append(fit)
    step = statistics.median(step_walls)
    g, c = f.refit_growth, f.cold_every
    if refits.incremental(settings, n) and (not f.warm_from or n < f.warm_from):
        amortised = step + cold_fit / (g * n)  # below warm_from every refit of the schedule is a full one
    elif refits.incremental(settings, n):
        amortised = step + warm_fit / (g * n) + max(cold_fit - warm_fit, 0.0) / (((1 + g) ** c - 1) * n)
    else:
        amortised = cold_wall
    # every step a refit, as before the thinned schedule: warm-only from warm_from observations, with
    # every cold_every-th a full one
    before = (warm_wall + (cold_wall - warm_wall) / c) if n >= f.warm_from else cold_wall
    return {"n": n, "buffer_rows": stages.buffer_size(n), "first_call_s": first, "cold_refit_fit_s": cold_fit,
            "cold_ask_s": cold_wall, "warm_refit_fit_s": warm_fit, "warm_ask_s": warm_wall, "step_s": step,
            "step_append_s": statistics.median(step_fits), "steps_s": step_walls, "amortised_s": amortised,
            "every_step_refit_s": before, "incremental": refits.incremental(settings, n)}


def slope(rows, key):
    """Least-squares slope of log(seconds) against log(n)."""
    if len(rows) < 2:
        return float("nan")
    a = np.log([r["n"] for r in rows])
    b = np.log([r[key] for r in rows])
    return float(np.polyfit(a, b, 1)[0])


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = [r["n"] for r in rows]
    thin = [r for r in rows if r["incremental"]]  # below incremental_from every step refits: no step between
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(ns, [r["amortised_s"] for r in rows], "o-", label=f"amortised step (slope {slope(rows, 'amortised_s'):.2f})")
    ax.loglog([r["n"] for r in thin], [r["step_s"] for r in thin], "s--",
              label=f"step between refits (slope {slope(thin, 'step_s'):.2f})")
    ax.loglog(ns, [r["every_step_refit_s"] for r in rows], "^:", label="every step a refit (before)")
    ax.set_xlabel("observations n")
    ax.set_ylabel("seconds per BO step (one CPU core)")
    ax.set_title("Hartmann-3, default rule: cost of a step inside a run")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ns", default="100,300,1000,3000")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--label", default="defaults")
    p.add_argument("--set", action="append", default=[], metavar="RECORD.FIELD=VALUE")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--plot", default=str(OUT.with_suffix(".png")))
    p.add_argument("--replot", action="store_true", help="only redraw the plot of the last run in --out")
    args = p.parse_args(argv)
    if args.replot:
        return plot(json.loads(pathlib.Path(args.out).read_text())[-1]["rows"], pathlib.Path(args.plot))
    ns = [int(v) for v in args.ns.split(",")]
    settings = BOSettings(**parse_sets(args.set, p.error))
    task, x, z, y = design(max(ns) + args.steps + 1)
    rows = []
    print(f"{'n':>5} {'rows':>5} {'step s':>8} {'append s':>9} {'warm fit s':>10} {'cold fit s':>10} "
          f"{'amortised s':>11} {'before s':>9} {'ratio':>6}", flush=True)
    for n in ns:
        r = bench_n(task, settings, x, z, y, n, args.steps)
        rows.append(r)
        print(f"{n:5d} {r['buffer_rows']:5d} {r['step_s']:8.3f} {r['step_append_s']:9.4f} {r['warm_refit_fit_s']:10.3f} "
              f"{r['cold_refit_fit_s']:10.3f} {r['amortised_s']:11.3f} {r['every_step_refit_s']:9.3f} "
              f"{r['every_step_refit_s'] / r['amortised_s']:6.2f}", flush=True)
    thin = [r for r in rows if r["incremental"]]
    print(f"slope of the amortised step against n (log-log): {slope(rows, 'amortised_s'):.2f}; of the step between "
          f"refits: {slope(thin, 'step_s'):.2f}")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs = json.loads(out.read_text()) if out.exists() else []
    runs.append({"label": args.label, "sets": args.set, "jax": jax.__version__, "machine": platform.machine(),
                 "loadavg": os.getloadavg(), "command": "python experiments/performance/bench_long_run.py "
                 + " ".join(argv if argv is not None else sys.argv[1:]), "rows": rows})
    out.write_text(json.dumps(runs, indent=1) + "\n")
    print(f"appended to {out}")
    if args.plot:
        plot(rows, pathlib.Path(args.plot))


if __name__ == "__main__":
    main()
