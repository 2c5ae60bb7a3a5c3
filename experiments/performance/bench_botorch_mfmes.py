"""One decision, or one step inside a run, of mumbo-jax's MUMBO beside BoTorch's
multi-fidelity MES on the same data, against the number of observations.

    taskset -c 0 python experiments/performance/bench_botorch_mfmes.py --botorch-python /path/to/venv/bin/python
        [--ns 20,40,100,200,300,1000] [--reps 1] [--mumbo-reps 3] [--effort tutorial|matched]
        [--in-run] [--strategy mumbo] [--out data/large_n/botorch_mfmes.json]

Data: ``bench_decision.design`` (Hartmann-3, 3 fidelities with costs 100 / 10 / 1, the
paper's initial design then points mostly at the cheap fidelities, noisy values), the
first n points. BoTorch is never a dependency of mumbo-jax: it runs in the Python given
by ``--botorch-python`` (a scratch environment: ``python3 -m venv /tmp/botorch-venv &&
/tmp/botorch-venv/bin/pip install torch==2.13.0 botorch``), one process per n.

One decision (the default mode). mumbo-jax (the strategy ``mumbo``, default settings):
a fresh ``AskTell`` told n - 1 points asks once untimed (compiles, fits), then is told
the n-th point and the next ``ask()`` is timed, its fit starting from the hyper-parameters
fitted on n - 1 points (``bench_decision.py --start previous``; every ask refits below
500 observations), median of ``--mumbo-reps`` repeats from the same state. BoTorch, as in
its multi-fidelity MES tutorial: a ``SingleTaskMultiFidelityGP`` with the fidelity as a
last input (z = 0, 1, 2 -> s = 1, 0.5, 0) fitted by ``fit_gpytorch_mll`` from its initial
hyper-parameters, then ``qMultiFidelityMaxValueEntropy`` (a candidate set of 1,000 random
x at the target, cost-aware with the known costs, projected to the target) maximised by
``optimize_acqf_mixed`` over the three fidelities (5 restarts from 128 raw samples,
``batch_limit`` 5, ``maxiter`` 200). ``--effort matched`` gives BoTorch's maximiser
mumbo-jax's effort instead: 2,000 raw samples and 8 restarts per fidelity (the max-value
candidate set stays 1,000: one the size of mumbo-jax's g* grid, 30,000 points, ran out of
the 23 GB of memory of the machine measured on). A decision is the fit and the maximisation.

``--in-run``: a step inside a run on both sides. mumbo-jax (:func:`mumbo_in_run`): an
``AskTell`` told n - 2 points asks untimed with a full refit (as after a run's full
refit), tells one point and asks untimed (the step at n - 1, which compiles the append
program), tells the n-th and times the next ``ask()``: as a run sees it, a refit with
every start from the previous hyper-parameters below ``fit.incremental_from`` (500), and
from there an append of the new point to the carried posterior (the thinned refit
schedule, ``fit.refit_growth``). Beside it the amortised cost, the refits spread over
the steps between them as ``bench_long_run.py`` does (:func:`mumbo_in_run`). BoTorch, as
its tutorials' loops: the model fitted on n - 1 points (untimed), then, timed, a new
model on n points given that model's ``state_dict`` (``load_state_dict`` before
``fit_gpytorch_mll``, so its fit starts from the previous hyper-parameters; the
``Standardize`` statistics are left out, so the new model's are those of its n points)
and the acquisition maximisation above. BoTorch refits at every step, so its step is its
amortised cost.

Torch and JAX use one thread each; pin the process to one core. At each n the two sides
run one after the other, so that a change in the machine's load falls on both; each side
records wall seconds and the CPU seconds of its process (``time.process_time``), which a
loaded machine inflates less. mumbo-jax runs with the library's compile options and
persistent cache on, as the CLI's runs, and no prefetch thread; compiling is never timed.
Different models and optimisers: the comparison is of the cost of one decision, not of
the decisions.

Prints, per n, both sides' seconds (wall and CPU) and their ratios; writes the JSON at
``--out`` and its plot to ``docs/figures/`` under the JSON's name (the performance page
shows ``botorch_mfmes_matched.png`` and ``botorch_mfmes_in_run.png``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
# timed asks only: no background compiling of the next buffer size (mumbo_jax.runtime.prefetch)
os.environ.setdefault("MUMBO_JAX_PREFETCH", "off")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _figure(out) -> pathlib.Path:
    """Where the plot of the JSON at ``out`` goes: ``docs/figures/<its name>.png``, beside the
    figures the pages show."""
    return ROOT / "docs" / "figures" / (pathlib.Path(out).stem + ".png")


sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments" / "performance"))

BOTORCH_SCRIPT = r'''
import json, statistics, sys, time
import numpy as np
import torch
from botorch.acquisition import qMultiFidelityMaxValueEntropy
from botorch.acquisition.cost_aware import InverseCostWeightedUtility
from botorch.acquisition.utils import project_to_target_fidelity
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskMultiFidelityGP
from botorch.models.deterministic import GenericDeterministicModel
from botorch.models.transforms.outcome import Standardize
from botorch.optim.optimize import optimize_acqf_mixed
from gpytorch.mlls import ExactMarginalLogLikelihood
import botorch

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
args = json.loads(sys.argv[1])
data = np.load(args["data"])
costs = torch.tensor(args["costs"])
S_OF_Z = torch.tensor([1.0, 0.5, 0.0])
d = data["x"].shape[1]
bounds = torch.tensor([[0.0] * (d + 1), [1.0] * (d + 1)])


def cost_of(Xs):
    z = torch.round((1.0 - Xs[..., -1]) * 2.0).long().clamp(0, 2)
    return costs[z][..., None]


utility = InverseCostWeightedUtility(cost_model=GenericDeterministicModel(cost_of, num_outputs=1))
project = lambda Xs: project_to_target_fidelity(X=Xs, target_fidelities={d: 1.0}, d=d + 1)


def model_on(n, state=None):
    """The tutorial's model on the first n points, fitted by fit_gpytorch_mll; with ``state``
    (an earlier model's state_dict) its fit starts from those hyper-parameters (its first
    attempt runs from the values loaded), as the tutorials' loops do."""
    X = torch.cat([torch.tensor(data["x"][:n]), S_OF_Z[torch.tensor(data["z"][:n]).long()][:, None]], dim=1)
    Y = torch.tensor(data["y"][:n])[:, None]
    model = SingleTaskMultiFidelityGP(X, Y, data_fidelities=[d], outcome_transform=Standardize(m=1))
    if state is not None:
        model.load_state_dict(state, strict=False)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return model


def maximise(model):
    m = args["candidates"]
    candidates = torch.cat([torch.rand(m, d), torch.ones(m, 1)], dim=1)
    acq = qMultiFidelityMaxValueEntropy(model, candidates, cost_aware_utility=utility, project=project)
    cand, _ = optimize_acqf_mixed(acq, bounds=bounds, fixed_features_list=[{d: float(s)} for s in S_OF_Z], q=1,
                                  num_restarts=args["restarts"], raw_samples=args["raw_samples"],
                                  options={"batch_limit": 5, "maxiter": 200})
    return cand


def decide(n, seed):
    """A fresh decision: the fit from the model's initial hyper-parameters, the maximisation."""
    torch.manual_seed(seed)
    t0, c0 = time.perf_counter(), time.process_time()
    model = model_on(n)
    fit_s = time.perf_counter() - t0
    cand = maximise(model)
    return time.perf_counter() - t0, fit_s, cand, time.process_time() - c0


def step(n, seed):
    """A step inside a run: the model of the step before (n - 1 points, untimed), then, timed,
    the model on n points fitted from its state_dict (its Standardize statistics excluded:
    the new model's are those of the n points) and the maximisation."""
    torch.manual_seed(seed)
    t0 = time.perf_counter()
    old = model_on(n - 1)
    step.previous_fit_s = time.perf_counter() - t0
    state = {k: v for k, v in old.state_dict().items() if not k.startswith("outcome_transform.")}
    t0, c0 = time.perf_counter(), time.process_time()
    model = model_on(n, state)
    fit_s = time.perf_counter() - t0
    cand = maximise(model)
    return time.perf_counter() - t0, fit_s, cand, time.process_time() - c0


one = step if args.get("in_run") else decide
rows = []
for n in args["ns"]:
    runs = [one(n, r) for r in range(args["reps"])]
    total = statistics.median(r[0] for r in runs)
    rows.append({"n": n, "decision_s": total, "fit_s": statistics.median(r[1] for r in runs),
                 "decision_all_s": [r[0] for r in runs], "proposal": runs[-1][2].tolist(),
                 "decision_cpu_s": statistics.median(r[3] for r in runs)})
    if one is step:  # the untimed fit on n - 1 points from the initial hyper-parameters, for scale
        rows[-1]["previous_fit_s"] = step.previous_fit_s
    print(json.dumps({"progress": rows[-1]["n"], "decision_s": total}), file=sys.stderr, flush=True)
print(json.dumps({"torch": torch.__version__, "botorch": botorch.__version__, "rows": rows}))
'''


EFFORT = {  # BoTorch's knobs: (max-value candidate set, raw samples and restarts per fidelity)
    "tutorial": dict(candidates=1000, raw_samples=128, restarts=5),
    # mumbo-jax's maximiser defaults: 2,000 candidates per fidelity, 8 starts (a max-value
    # candidate set the size of the g* grid, 30,000, was killed for memory on a 23 GB machine)
    "matched": dict(candidates=1000, raw_samples=2000, restarts=8),
}


def bench_botorch(python: str, x, z, y, costs, ns, reps, effort: str, in_run: bool = False) -> dict:
    """BoTorch's side at each n of ``ns``, in a process of the ``python`` given: the JSON it prints."""
    with tempfile.TemporaryDirectory() as tmp:
        data = pathlib.Path(tmp) / "data.npz"
        np.savez(data, x=x, z=z, y=y)
        args = {"data": str(data), "costs": list(costs), "ns": ns, "reps": reps, "in_run": in_run, **EFFORT[effort]}
        proc = subprocess.run([python, "-c", BOTORCH_SCRIPT, json.dumps(args)], capture_output=True, text=True,
                              env=dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"))
    if proc.returncode != 0:
        raise SystemExit(f"the BoTorch side failed (exit code {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _timed_ask(opt):
    """One ``ask()``, cancelled after, the ask/tell state put back as it was before (the
    refit schedule, the carried posterior, the hyper-parameters), so that it can be repeated:
    ``(wall s, CPU s of the process, Timings, (x, z))``."""
    saved = opt.schedule, opt._carry, opt.params
    opt.timings.clear()
    t0, c0 = time.perf_counter(), time.process_time()
    xa, za = opt.ask()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    opt.cancel(xa, za)
    opt.schedule, opt._carry, opt.params = saved
    return wall, cpu, opt.timings[-1], (np.asarray(xa).tolist(), float(za))


def _median_asks(opt, reps: int) -> dict:
    """``reps`` repeats of the same ask (:func:`_timed_ask`): the medians, the stage split."""
    import statistics

    runs = [_timed_ask(opt) for _ in range(reps)]
    med = lambda i: statistics.median(r[i] for r in runs)
    return {"wall_s": med(0), "cpu_s": med(1), "wall_all_s": [r[0] for r in runs], "cpu_all_s": [r[1] for r in runs],
            "fit_s": statistics.median(r[2].fit for r in runs), "gstar_s": statistics.median(r[2].gstar for r in runs),
            "maximise_s": statistics.median(r[2].maximise for r in runs),
            "proposal": {"x": runs[-1][3][0], "z": runs[-1][3][1]}}


def mumbo_fresh(task, settings, x, z, y, n: int, reps: int) -> dict:
    """One decision as the performance page's table of decisions measures it (``bench_decision.bench_n`` with
    ``--start previous``): a fresh ``AskTell`` told n - 1 points asks once untimed
    (compiles, fits), the proposal cancelled, then it is told the n-th point and the next
    ``ask()`` (a refit starting from the hyper-parameters fitted on n - 1 points) is timed,
    ``reps`` times from the same state."""
    from mumbo_jax.bo import asktell, stages

    opt = asktell.AskTell(task, settings, seed=0)
    for i in range(n - 1):
        opt.tell(x[i], z[i], y[i])
    t0 = time.perf_counter()
    xa, za = opt.ask()
    first = time.perf_counter() - t0
    opt.cancel(xa, za)
    opt.tell(x[n - 1], z[n - 1], y[n - 1])
    return {"n": n, "buffer_rows": stages.buffer_size(n), "first_call_s": first, **_median_asks(opt, reps)}


def mumbo_in_run(task, settings, x, z, y, n: int, reps: int) -> dict:
    """mumbo-jax's step at ``n`` observations as a run meets it, and its amortised cost.

    The step: an ``AskTell`` told n - 2 points asks once untimed (a refit with every start,
    as a run's last full refit: compiles, and starts the refit schedule), tells one more
    point and asks untimed (the step at n - 1: from ``fit.incremental_from`` it compiles the
    append program), then tells the n-th point; the next ``ask()`` is timed, ``reps`` times
    from the same state (each proposal cancelled). Below ``fit.incremental_from`` it refits
    with every start from the previous hyper-parameters (every step does, so this is the
    amortised cost too); from there on it appends the new point to the carried posterior.

    The amortised cost in the thinned regime (``fit.refit_growth`` g, ``fit.cold_every`` c;
    ``bench_long_run.py``'s formula, with whole asks): one step in g n is a warm-only
    refit and one in ((1 + g)^c - 1) n a refit with every start, each measured as an
    ask on the same n points with that refit forced (the second of two: the first may
    compile), so

        amortised = step + (warm - step) / (g n) + (full - warm) / (((1 + g)^c - 1) n).
    """
    from mumbo_jax.bo import asktell, refits, stages

    opt = asktell.AskTell(task, settings.replace(fit={"warm_from": 0}), seed=0)
    for i in range(n - 2):
        opt.tell(x[i], z[i], y[i])
    t0 = time.perf_counter()
    xa, za = opt.ask()
    first = time.perf_counter() - t0
    opt.cancel(xa, za)
    opt.settings = settings
    opt.tell(x[n - 2], z[n - 2], y[n - 2])
    xa, za = opt.ask()
    opt.cancel(xa, za)
    opt.tell(x[n - 1], z[n - 1], y[n - 1])
    refit, cold, append = refits.plan(settings, len(opt.x) - opt.n_design, len(opt.x), opt.schedule)
    step = _median_asks(opt, reps)
    row = {"n": n, "buffer_rows": stages.buffer_size(n), "first_call_s": first, "step": step,
           "step_kind": ("full refit" if cold else "warm refit") if refit else ("append" if append else "no refit"),
           "incremental": refits.incremental(settings, n)}
    if not row["incremental"]:
        return {**row, "amortised_s": step["wall_s"], "amortised_cpu_s": step["cpu_s"]}
    # the refits of the thinned schedule at n, forced on the same state (no appends)
    opt.schedule, opt._carry = refits.Schedule(), None
    forced = {}
    for name, fit in (("full", {"warm_from": 0}),
                      ("warm", {"warm_from": 1, "cold_every": 1_000_000, "refit_growth": 0.0})):
        opt.settings = settings.replace(fit=fit)
        _timed_ask(opt)  # may compile
        forced[name] = _median_asks(opt, 1)
    opt.settings = settings
    f = settings.fit
    g, c = f.refit_growth, f.cold_every
    amortised = {}
    for key in ("wall_s", "cpu_s"):
        st, warm, full = step[key], forced["warm"][key], forced["full"][key]
        amortised[key] = st + max(warm - st, 0.0) / (g * n) + max(full - warm, 0.0) / (((1 + g) ** c - 1) * n)
    return {**row, "full_refit_ask": forced["full"], "warm_refit_ask": forced["warm"],
            "amortised_s": amortised["wall_s"], "amortised_cpu_s": amortised["cpu_s"]}


def _n_axis(ax, ns) -> None:
    """The observation counts measured as the x ticks, written plainly; room below the lowest point."""
    from matplotlib.ticker import NullFormatter

    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(min(ns) / 1.3, max(ns) * 1.3)
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo / 2.5, hi)


def plot_in_run(rows, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.2, 4.1))
    ns = [r["n"] for r in rows]
    ax.loglog(ns, [r["botorch_s"] for r in rows], "s-", color="C1",
              label="BoTorch qMF-MES: warm-started fit + optimize_acqf_mixed")
    ax.loglog(ns, [r["botorch_cpu_s"] for r in rows], "s:", color="C1", mfc="none", label="  the same, CPU seconds")
    ax.loglog(ns, [r["mumbo_jax_amortised_s"] for r in rows], "o-", color="C0",
              label="mumbo-jax MUMBO: amortised step (refits counted)")
    ax.loglog(ns, [r["mumbo_jax_amortised_cpu_s"] for r in rows], "o:", color="C0", mfc="none",
              label="  the same, CPU seconds")
    ax.loglog(ns, [r["mumbo_jax_s"] for r in rows], "^--", color="C2", alpha=0.7, zorder=1, ms=4,
              label="mumbo-jax MUMBO: the step at n (appends from 500)")
    for r in rows:
        ax.annotate(f"{r['ratio_amortised']:.0f}x", (r["n"], r["mumbo_jax_amortised_s"]), textcoords="offset points",
                    xytext=(0, -14), ha="center", fontsize=8)
    ax.set_xlabel("observations n")
    ax.set_ylabel("seconds per step (one core, loaded machine)")
    _n_axis(ax, ns)
    ax.set_title("A step inside a run, Hartmann-3, 3 fidelities")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot(rows, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ns = [r["n"] for r in rows]
    ax.loglog(ns, [r["mumbo_jax_s"] for r in rows], "o-", label="mumbo-jax MUMBO (ask)")
    ax.loglog(ns, [r["botorch_s"] for r in rows], "s-", label="BoTorch MF-MES (fit + optimize_acqf_mixed)")
    for r in rows:
        ax.annotate(f"{r['ratio']:.0f}x", (r["n"], r["mumbo_jax_s"]), textcoords="offset points", xytext=(0, -12),
                    ha="center", fontsize=8)
    ax.set_xlabel("observations n")
    ax.set_ylabel("seconds per decision (one core, loaded machine)")
    _n_axis(ax, ns)
    ax.set_title("One decision, Hartmann-3, 3 fidelities")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def _commit() -> str:
    """The checkout's commit, ``+`` where its tracked files differ from it (others' edits)."""
    git = lambda *a: subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True, text=True).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--botorch-python", required=True)
    ap.add_argument("--ns", default="20,40,100,200,300,1000")
    ap.add_argument("--reps", type=int, default=1, help="BoTorch's decisions (or steps) per n: their median")
    ap.add_argument("--mumbo-reps", type=int, default=3, help="mumbo-jax's repeats of the same ask per n: their median")
    ap.add_argument("--effort", choices=sorted(EFFORT), default="tutorial",
                    help="BoTorch's search effort: its tutorial's, or matched to mumbo-jax's defaults")
    ap.add_argument("--in-run", action="store_true",
                    help="a step inside a run on both sides (mumbo-jax: the ask after one more tell, with its "
                         "amortised cost; BoTorch: the fit from the previous model's state_dict, then the "
                         "maximisation) instead of one decision")
    ap.add_argument("--strategy", default="mumbo", help="mumbo-jax's rule (default mumbo, beside MF-MES)")
    ap.add_argument("--out", default="")
    ap.add_argument("--replot", action="store_true", help="only redraw the plot of the JSON at --out")
    args = ap.parse_args(argv)
    if args.replot:
        done = json.loads(pathlib.Path(args.out).read_text())
        return (plot_in_run if done.get("mode") == "in-run" else plot)(done["rows"], _figure(args.out))
    ns = [int(v) for v in args.ns.split(",")]
    if min(ns) < 20:
        ap.error("every n must be >= 20 (the design has 18 rows)")

    import dataclasses

    import jax

    jax.config.update("jax_enable_x64", True)
    import bench_decision
    import mumbo_jax.runtime.process_options
    from mumbo_jax.bo.settings import BOSettings

    # as the CLI's runs: the library's compile options and the persistent cache (compiling is
    # untimed here); no prefetch thread, no program release
    mumbo_jax.runtime.process_options.enable(prefetch=False, release_programs=False)
    settings = BOSettings(strategy=args.strategy)
    task, x, z, y = bench_decision.design(max(ns))
    costs = [float(c) for c in np.asarray(task.space.cost(np.arange(3)))]
    what = "step s" if args.in_run else "decision s"
    print(f"{'n':>5} {'mumbo-jax ' + what:>20} {'CPU s':>7} {'amortised s':>11} {'CPU s':>7} "
          f"{'BoTorch ' + what:>18} {'CPU s':>7} {'ratio':>6} {'ratio CPU':>9}  (ratios: amortised)", flush=True)
    rows, versions = [], {}
    for n in ns:  # the two sides one after the other at each n, so that a change of load hits both
        b = bench_botorch(args.botorch_python, x, np.asarray(z), np.asarray(y), costs, [n], args.reps, args.effort,
                          args.in_run)
        versions = {"torch": b["torch"], "botorch": b["botorch"]}
        b = b["rows"][0]
        if args.in_run:
            mj = mumbo_in_run(task, settings, x, z, y, n, args.mumbo_reps)
            wall, cpu = mj["amortised_s"], mj["amortised_cpu_s"]
            step_wall, step_cpu = mj["step"]["wall_s"], mj["step"]["cpu_s"]
        else:
            mj = mumbo_fresh(task, settings, x, z, y, n, args.mumbo_reps)
            wall = step_wall = mj["wall_s"]
            cpu = step_cpu = mj["cpu_s"]
        rows.append({"n": n, "mumbo_jax_s": step_wall, "mumbo_jax_cpu_s": step_cpu, "mumbo_jax_amortised_s": wall,
                     "mumbo_jax_amortised_cpu_s": cpu, "mumbo_jax": mj, "botorch_s": b["decision_s"],
                     "botorch_cpu_s": b["decision_cpu_s"], "botorch_fit_s": b["fit_s"], "botorch": b,
                     "ratio": b["decision_s"] / step_wall, "ratio_amortised": b["decision_s"] / wall,
                     "ratio_amortised_cpu": b["decision_cpu_s"] / cpu, "loadavg": os.getloadavg()})
        r = rows[-1]
        print(f"{n:5d} {step_wall:20.3f} {step_cpu:7.3f} {wall:11.3f} {cpu:7.3f} {b['decision_s']:18.1f} "
              f"{b['decision_cpu_s']:7.1f} {r['ratio_amortised']:6.0f} {r['ratio_amortised_cpu']:9.0f}"
              + (f"  (the step at n: {mj['step_kind']}, ratio {r['ratio']:.0f})" if args.in_run else ""), flush=True)
    if args.out:
        out = pathlib.Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        command = ("python experiments/performance/bench_botorch_mfmes.py --botorch-python PY"
                   + (" --in-run" if args.in_run else "") + f" --ns {args.ns} --reps {args.reps} "
                   f"--mumbo-reps {args.mumbo_reps} --effort {args.effort} --strategy {args.strategy} --out {args.out}")
        out.write_text(json.dumps({"command": command, "mode": "in-run" if args.in_run else "decision",
                                   "commit": _commit(), "time": time.strftime("%Y-%m-%d %H:%M:%S"),
                                   "machine": platform.node(), "jax": jax.__version__, **versions,
                                   "xla_flags": os.environ["XLA_FLAGS"], "reps": args.reps,
                                   "mumbo_reps": args.mumbo_reps, "effort": args.effort,
                                   "botorch_settings": EFFORT[args.effort], "strategy": args.strategy,
                                   "fit": dataclasses.asdict(settings.fit), "rows": rows}, indent=1) + "\n")
        (plot_in_run if args.in_run else plot)(rows, _figure(out))
        print(f"wrote {out} and {_figure(out)}")


if __name__ == "__main__":
    main()
