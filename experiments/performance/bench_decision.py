"""Cost of ONE BO decision (``AskTell.ask()``) against the number of observations.

    taskset -c 1 env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
        python experiments/performance/bench_decision.py [--ns 20,40,100,150,200,300] [--reps 5] [--label defaults]
        [--set fit.restarts=4 --set gstar.samples=5] [--objective tinygp] [--pow2-buffers]
        [--start fitted]

For each n a fresh :class:`mumbo_jax.bo.asktell.AskTell` (strategy ``mumbo``, default
settings unless ``--set``, Hartmann-3, seed 0) is told n points of a fixed design shaped
like a MUMBO run: the paper's initial design (6 x, every fidelity) then points mostly at
the cheap fidelities (z = 2: 70 %, z = 1: 25 %, z = 0: 5 %), half uniform and half near
the optimum. ``ask()`` (a full refit from the default hyper-parameters, g*, the
maximisation) is timed after one untimed call (compilation), median of ``--reps`` (each
proposal cancelled before the next ``ask()``, so none is pending: otherwise each repeat
would condition on the earlier repeats' pending points), and
split into fit / g* / maximisation (``AskTell.timings``). All n in one process, one after
another. Prints the table and ask(n=300) / ask(n=40); appends the run to
``data/bench_decision.json`` (``--out``), from which ``experiments/render_results.py``
renders the README's table (``<!-- render: decision -->``, the runs of the last command
with a given label).

A fresh ``AskTell``'s hyper-parameters are the defaults, so its fit's two starts are the
same and run once; ``--start fitted`` starts the fit from
the hyper-parameters of the untimed call and the defaults, two distinct starts;
``--start previous`` makes the untimed call on the first n - 1 points and then tells the
n-th, so the timed fit starts where a run's next step does (with ``--set fit.warm_from=1
--set fit.cold_every=1000000`` it measures a warm-only refit); ``--start converged`` makes
that untimed call's fit a full refit (at n >= fit.warm_from the ``previous`` start is a
10-iteration warm fit from the defaults, far from converged, which a run's fits never are).

``--set RECORD.FIELD=VALUE`` changes one field of a :class:`mumbo_jax.bo.settings.BOSettings`
record (the flat names of older runs, ``fit_restarts=4``, are read too). The table's
``fit_ftol`` row measured a lever that left the library; it runs with the library at the
git tag ``ablation-levers`` (``git checkout ablation-levers``).

Baselines in the same process: ``--objective tinygp`` fits with the tinygp objective
(:func:`mumbo_jax.gp.fitting.neg_log_marginal_reference`), ``--pow2-buffers`` pads to
the next power of two instead of the size classes.
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
import numpy as np

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax.benchmarks import problems, tasks  # noqa: E402
from mumbo_jax.bo import asktell, stages  # noqa: E402
from mumbo_jax.bo.settings import BOSettings, old_keys  # noqa: E402
from mumbo_jax.gp import fitting  # noqa: E402

# timed asks only: no background compiling of the next buffer size (mumbo_jax.runtime.prefetch)
os.environ.setdefault("MUMBO_JAX_PREFETCH", "off")

OUT = ROOT / "data" / "bench_decision.json"


def design(n_max: int, seed: int = 0):
    """The fixed told data: ``(task, x [n_max, 3], z [n_max], y [n_max])`` (maximisation)."""
    prob = problems.get_problem("hartmann3")
    task = tasks.problem_task(prob)
    opt = asktell.AskTell(task, BOSettings(), seed=seed)
    xs = [np.asarray(x) for x, _ in opt.design]
    zs = [int(z) for _, z in opt.design]
    rng = np.random.default_rng(seed)
    xstar = np.asarray(prob.optimum_location)
    while len(xs) < n_max:
        x = np.clip(xstar + 0.12 * rng.standard_normal(3), 0.0, 1.0) if len(xs) % 2 else rng.uniform(size=3)
        xs.append(x)
        zs.append(int(rng.choice(3, p=[0.05, 0.25, 0.70])))
    x, z = np.stack(xs[:n_max]), np.asarray(zs[:n_max])
    y = np.asarray([float(problems.noisy_objective(prob, jax.random.PRNGKey(i), xi, int(zi)))
                    for i, (xi, zi) in enumerate(zip(x, z))])
    return task, x, z, y


def timed_asks(opt, start, reps):
    """``reps`` timed ``ask()`` calls, each fitting from the hyper-parameters ``start``
    and cancelled before the next (the same n told points, nothing pending):
    ``(wall seconds [reps], the stage timings of each)``."""
    totals, stages = [], []
    for _ in range(reps):
        opt.params = start
        opt.timings.clear()
        t0 = time.perf_counter()
        xa, za = opt.ask()
        totals.append(time.perf_counter() - t0)
        opt.cancel(xa, za)
        stages.append(opt.timings[-1])
    return totals, stages


def bench_n(task, settings, x, z, y, n, reps, start_from="defaults"):
    opt = asktell.AskTell(task, settings, seed=0)
    told = n - 1 if start_from in ("previous", "converged") else n
    for i in range(told):
        opt.tell(x[i], z[i], y[i])
    start = opt.params
    if start_from == "converged":  # the untimed fit is a full one, whatever the refit schedule says
        opt.settings = dataclasses.replace(settings, fit=dataclasses.replace(settings.fit, warm_from=0))
    t0 = time.perf_counter()
    x_next, z_next = opt.ask()  # compilation (and a first run)
    first = time.perf_counter() - t0
    opt.settings = settings
    opt.cancel(x_next, z_next)  # every timed ask() sees the same n told points and nothing pending
    if start_from in ("fitted", "previous", "converged"):  # as in a run: the last fit's hyper-parameters, then the defaults
        start = opt.params
    if told < n:  # previous: the hyper-parameters fitted on the first n - 1 points, as at the next step
        opt.tell(x[n - 1], z[n - 1], y[n - 1])
    totals, stages = timed_asks(opt, start, reps)
    med = lambda f: statistics.median(getattr(t, f) for t in stages)
    return {"n": n, "buffer_rows": stages.buffer_size(n), "first_call_s": first, "ask_s": statistics.median(totals),
            "fit_s": med("fit"), "gstar_s": med("gstar"), "maximise_s": med("maximise"), "ask_all_s": totals,
            "proposal": {"x": np.asarray(x_next).tolist(), "z": float(z_next)}}


def _value(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v, v)


def parse_sets(sets, error) -> dict:
    """``{record: {field: value}}`` from ``RECORD.FIELD=VALUE`` strings (a rule's knob:
    ``options.RULE.KNOB=VALUE``; the flat names of older runs, ``fit_restarts=4``, are read
    too); ``error(message)`` on a bad key."""
    overrides, old = {}, old_keys()
    for kv in sets:
        key, value = kv.split("=", 1)
        if "." in key:
            record, name = key.split(".", 1)
        elif key in old:
            record, name = old[key]
        else:
            error(f"--set {key}: not RECORD.FIELD of BOSettings (a removed lever runs with the library at the git "
                  "tag ablation-levers)")
        if record == "options" and "." in name:  # a rule's knob: options.RULE.KNOB=VALUE
            rule, name = name.split(".", 1)
            overrides.setdefault(record, {}).setdefault(rule, {})[name] = _value(value)
        else:
            overrides.setdefault(record, {})[name] = _value(value)
    return overrides


def settings_from_sets(sets, error, **fields) -> BOSettings:
    """``BOSettings(**fields)`` with each ``RECORD.FIELD=VALUE`` of ``sets`` applied
    (:func:`parse_sets`)."""
    return BOSettings(**fields, **parse_sets(sets, error))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ns", default="20,40,100,150,200,300")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--label", default="defaults")
    p.add_argument("--set", action="append", default=[], metavar="RECORD.FIELD=VALUE",
                   help="a field of a BOSettings record, e.g. fit.restarts=4")
    p.add_argument("--objective", choices=["dense", "tinygp"], default="dense")
    p.add_argument("--pow2-buffers", action="store_true")
    p.add_argument("--start", choices=["defaults", "fitted", "previous", "converged"], default="defaults",
                   help="the fit's first start: the defaults (a fresh AskTell: both starts are the defaults, run "
                        "once), the hyper-parameters of the untimed first ask() (fitted on the same n points), or "
                        "(previous) those fitted on the first n - 1 points, as at the step after (the last two: "
                        "two distinct starts, as a step inside a run); converged: as previous, the fit on the "
                        "first n - 1 points a full refit (all starts, max_iter), so that a warm-only refit goes on "
                        "from a converged fit, as after a run's full refits")
    p.add_argument("--code", default=None, help="which code ran, for the tables (e.g. 'before the warm step')")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    ns = [int(v) for v in args.ns.split(",")]
    if min(ns) < 20:
        p.error("every n must be >= 20 (the design has 18 rows)")
    overrides = parse_sets(args.set, p.error)
    settings = BOSettings(**overrides)
    if args.objective == "tinygp":  # before any tracing
        fitting.neg_log_marginal = fitting.neg_log_marginal_reference
    if args.pow2_buffers:
        stages.buffer_size = lambda n, min_buffer=stages.MIN_BUFFER: max(min_buffer, 1 << int(n).bit_length())
    task, x, z, y = design(max(ns))
    rows = []
    load = os.getloadavg()
    print(f"{'n':>4} {'rows':>5} {'ask s':>8} {'fit s':>8} {'g* s':>7} {'max s':>7} {'1st call s':>10}", flush=True)
    for n in ns:
        r = bench_n(task, settings, x, z, y, n, args.reps, args.start)
        rows.append(r)
        print(f"{n:4d} {r['buffer_rows']:5d} {r['ask_s']:8.3f} {r['fit_s']:8.3f} {r['gstar_s']:7.3f} "
              f"{r['maximise_s']:7.3f} {r['first_call_s']:10.2f}", flush=True)
    by_n = {r["n"]: r for r in rows}
    ratio = by_n[300]["ask_s"] / by_n[40]["ask_s"] if 40 in by_n and 300 in by_n else None
    if ratio is not None:
        print(f"ask(n=300) / ask(n=40) = {ratio:.2f}; ask(n=300) = {by_n[300]['ask_s']:.3f} s "
              f"(targets: <= 3, <= 1 s)")
    command = " ".join(["python experiments/performance/bench_decision.py", *(argv if argv is not None else sys.argv[1:])])
    out = pathlib.Path(args.out)
    runs = json.loads(out.read_text()) if out.exists() else []
    runs.append({"label": args.label, "command": command, "settings": overrides, "objective": args.objective,
                 "pow2_buffers": args.pow2_buffers, "start": args.start, "time": time.strftime("%Y-%m-%d %H:%M:%S"),
                 "machine": platform.node(), "cpu_count": os.cpu_count(), "device": jax.default_backend(),
                 "jax": jax.__version__, "loadavg_start": load, "loadavg_end": os.getloadavg(), "reps": args.reps,
                 "rows": rows, "ratio_300_40": ratio, "effective_fit": dataclasses.asdict(settings.fit),
                 **({"code": args.code} if args.code else {})})
    out.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
