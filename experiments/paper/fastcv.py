"""FASTCV: K-fold cross-validation folds as K tasks (paper Section 4.3).

The target g(x) is the mean loss over the K folds (``posterior.task_mean(K)``) under an
ICM model over K tasks; each multi-task query fits ONE model on K-1 folds and scores
the held-out fold. Three tuners, compared by the number of model fits (as the paper
does: a K-fold CV evaluation counts K fits):

* ``mumbo``: MUMBO over (x, fold), all folds of equal cost;
* ``mt_ei``: FASTCV's two-stage EI (x by EI of the fold-mean target, then the fold
  with the largest fold-specific EI at that x; the library's ``"mt_ei"`` strategy);
* ``cv_ei``: standard BO, EI on the K-fold CV mean, every query evaluates all K folds.

All three start from the same 2 d random settings evaluated on every fold. Tasks:

* ``--model svm``: RBF SVM (log2 C, log2 gamma in [-10, 10]), 10-fold CV error on 200
  random digits (folds of 20 images disagree); test error on the other 1597 digits;
* ``--model gbm``: gradient boosting (log10 learning rate, max depth, subsample),
  5-fold CV log-loss on 300 breast-cancer cases; test log-loss on the other 269.

    python experiments/paper/fastcv.py --model svm     # 2 seeds, 30 fits after the design (~10 min)
    python experiments/paper/fastcv.py --model gbm     # 2 seeds, 30 fits after the design (~10 min)
    python experiments/paper/fastcv.py --model svm --seeds 5 --fits 150   # the longer study (~1.5 h)

The incumbent is the evaluated setting with the best posterior mean of g; its exact CV
mean and held-out loss are computed after the runs. Writes
``data/fastcv_<model>.json`` and ``docs/fastcv_<model>.png``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_cpu_enable_async_dispatch", False)

from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax.benchmarks import hpo
from mumbo_jax.bo import optimize, rules
from mumbo_jax.bo import settings as bo_settings
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.settings import BOSettings, Task
from mumbo_jax.gp import models, posterior

ROOT = pathlib.Path(__file__).resolve().parents[2]
METHODS = ("mumbo", "mt_ei", "cv_ei")
SETTINGS = BOSettings(strategy="mumbo", recommendation={"rule": "global"}, gstar={"samples": 5},
                      maximiser={"n_candidates": 500, "n_starts": 6, "polish_steps": 25},
                      fit={"restarts": 2, "max_iter": 50})
MODELS = {"svm": (hpo.fastcv_svm, 30), "gbm": (hpo.fastcv_gbm, 30)}


def _two_stage_strategy() -> str:
    if "mt_ei" not in rules.STRATEGIES:
        raise SystemExit("this library has no 'mt_ei' strategy")
    return "mt_ei"


def make_task(obj: hpo.KFoldObjective, method: str) -> Task:
    """Multi-task: ICM over K folds, target the fold mean, every fold costs one fit.
    Standard BO: one task (the CV mean), each query costs K fits."""
    k = obj.n_folds
    if method == "cv_ei":
        return bo_settings.make_task(models.icm_model(obj.bounds, 1, rank=1), posterior.target_fidelity(0),
                                     optimize.discrete_fidelities([float(k)]))
    return bo_settings.make_task(models.icm_model(obj.bounds, k, rank=2), posterior.task_mean(k),
                                 optimize.discrete_fidelities(np.ones(k)))


def run(method, obj, fits, seed, settings=SETTINGS, log=print):
    """One run: the design (2 d settings on every fold), then BO until ``fits`` more
    model fits. ``trace`` holds ``(fits so far, incumbent x)`` after each decision."""
    import dataclasses

    strategy = {"mumbo": "mumbo", "mt_ei": _two_stage_strategy(), "cv_ei": "ei"}[method]
    task = make_task(obj, method)
    opt = AskTell(task, dataclasses.replace(settings, strategy=strategy), seed)
    k = obj.n_folds
    n_fits, evals, trace = 0, [], []
    t_start = time.perf_counter()
    n_design_fits = None
    while n_design_fits is None or n_fits < n_design_fits + fits:
        t0 = time.perf_counter()
        x, z = opt.ask()
        overhead = time.perf_counter() - t0
        decision = not opt.in_initial_design or n_design_fits is not None
        if decision and n_design_fits is None:
            n_design_fits = n_fits
        if opt.last_fit is not None:
            trace.append((n_fits, np.asarray(opt.incumbent()[0]).tolist()))  # the fit of this ask, reused
        if method == "cv_ei":
            t1 = time.perf_counter()
            val, seconds = obj.cv_mean(x), time.perf_counter() - t1
            n_fits += k
        else:
            val, seconds = obj(x, z)
            n_fits += 1
        opt.tell(x, z, -val)
        evals.append({"x": np.asarray(x).tolist(), "fold": int(z), "loss": val, "seconds": seconds,
                      "overhead": overhead if decision else 0.0, "decision": decision, "fits": n_fits})
    trace.append((n_fits, np.asarray(opt.incumbent()[0]).tolist()))  # all the data, the last hyper-parameters
    over = [e["overhead"] for e in evals if e["decision"]]
    log(f"  {method} seed {seed}: {n_fits} fits ({n_design_fits} in the design), {len(opt.timings)} decisions, "
        f"median overhead {np.median(over):.2f} s, {time.perf_counter() - t_start:.0f} s")
    return {"method": method, "seed": seed, "evals": evals, "trace": trace, "design_fits": n_design_fits}


def curves(run_, obj, grid):
    """Incumbent's exact CV mean and held-out loss at each fit count of ``grid``."""
    cv, test = np.full(len(grid), np.nan), np.full(len(grid), np.nan)
    for n, x in run_["trace"]:
        sel = np.asarray(grid) >= n
        cv[sel], test[sel] = obj.cv_mean(x), obj.test_loss(x)
    return cv, test


def summarise(runs, obj, total_fits):
    grid = np.arange(total_fits + 1)
    table = {}
    for method in dict.fromkeys(r["method"] for r in runs):
        mine = [r for r in runs if r["method"] == method]
        cv, test = map(np.stack, zip(*[curves(r, obj, grid) for r in mine]))
        row = {}
        for name, c in (("cv", cv), ("test", test)):
            row[f"{name}_mean"] = np.nanmean(c, 0).tolist()
            row[f"{name}_se"] = (np.nanstd(c, 0) / np.sqrt(max(len(mine), 1))).tolist()
            row[f"final_{name}_per_seed"] = c[:, -1].tolist()
        row["median_overhead_s"] = float(np.median([e["overhead"] for r in mine for e in r["evals"] if e["decision"]]))
        table[method] = row
    return grid, table


def plot(grid, table, path, title, loss_name, design_fits):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = {"mumbo": "MUMBO (one fold per query)", "mt_ei": "FASTCV two-stage EI",
              "cv_ei": "EI on the full K-fold CV"}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, kind, ylabel in ((axes[0], "cv", f"incumbent's K-fold CV {loss_name}"),
                             (axes[1], "test", f"incumbent's held-out {loss_name}")):
        for method, row in table.items():
            m, se = np.asarray(row[f"{kind}_mean"]), np.asarray(row[f"{kind}_se"])
            ax.plot(grid, m, label=labels.get(method, method))
            ax.fill_between(grid, m - se, m + se, alpha=0.2)
        ax.axvline(design_fits, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("model fits (a K-fold CV evaluation counts K)")
        ax.set_ylabel(ylabel)
        ax.set_xlim(design_fits, grid[-1])
    axes[0].legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="svm")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--fits", type=int, default=None, help="model fits after the initial design")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--out", default=None)
    ap.add_argument("--figure", default=None)
    args = ap.parse_args(argv)
    make, default_fits = MODELS[args.model]
    fits = args.fits or default_fits
    methods = [m for m in args.methods.split(",") if m]
    for m in methods:
        if m not in METHODS:
            raise SystemExit(f"unknown method {m!r}; allowed: {METHODS}")
    obj = make()
    d, k = obj.dim, obj.n_folds
    design_fits = 2 * d * k
    print(f"{args.model}: {len(obj.y)} cases in {k} folds, {len(obj.y_test)} held out; design {2 * d} settings x "
          f"{k} folds = {design_fits} fits, then {fits} fits", flush=True)
    runs = []
    for seed in range(args.seeds):
        for method in methods:
            runs.append(run(method, obj, fits, seed, log=lambda s: print(s, flush=True)))
    loss_name = "error" if args.model == "svm" else "log-loss"
    grid, table = summarise(runs, obj, design_fits + fits)
    print(f"\n| tuner | CV {loss_name} after {design_fits + fits // 2} fits | after {design_fits + fits} fits "
          f"| held-out {loss_name} after {design_fits + fits} fits | median overhead (s) |")
    print("|---|---|---|---|---|")
    mid = design_fits + fits // 2
    for method, row in table.items():
        print(f"| {method} | {row['cv_mean'][mid]:.4f} +- {row['cv_se'][mid]:.4f} "
              f"| {row['cv_mean'][-1]:.4f} +- {row['cv_se'][-1]:.4f} "
              f"| {row['test_mean'][-1]:.4f} +- {row['test_se'][-1]:.4f} | {row['median_overhead_s']:.2f} |")
    out = pathlib.Path(args.out or ROOT / "data" / f"fastcv_{args.model}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"model": args.model, "seeds": args.seeds, "fits": fits, "design_fits": design_fits,
                               "settings": SETTINGS.__dict__, "grid": grid.tolist(), "table": table,
                               "runs": runs}))
    fig = pathlib.Path(args.figure or ROOT / "docs" / f"fastcv_{args.model}.png")
    fig.parent.mkdir(parents=True, exist_ok=True)
    plot(grid, table, fig, f"FASTCV, {args.model} {k}-fold CV, {args.seeds} seeds (mean +- s.e.)", loss_name,
         design_fits)
    print(f"wrote {out} and {fig}")


if __name__ == "__main__":
    sys.exit(main())
