"""FABOLAS-style SVM tuning on digits (paper Section 4.2).

C and gamma of an RBF SVM (log2 in [-10, 10]) on scikit-learn's digits (training
images nudged to ~5400, see :func:`mumbo_jax.benchmarks.hpo.digits_split`), the training fraction
s in [1/64, 1] as a continuous fidelity (the model sees z = log2 s), the full data as
the target. Three tuners, each under the same wall-clock budget, counting everything
(evaluations and our own overhead):

* ``mumbo``: FABOLAS' model (basis (z, (1-z)^2) times Matern-5/2), the paper's design
  (10 random settings at 1/64, 1/32, 1/16, 1/8 of the data), then MUMBO per unit of
  the LEARNED cost (a GP on log seconds, :mod:`mumbo_jax.gp.costmodel`);
* ``ei``: expected improvement at the full data (2 d random settings first);
* ``random``: random search at the full data (no model, no overhead).

The incumbent is the evaluated setting with the best posterior mean at s = 1 (the best
validation error seen, for random search); its test error (trained on all training
data, scored on held-out digits) is computed after the runs. JIT compilation happens in
an untimed warm-up first (it is a one-off per process: ~1 min on the shared machine).

    python experiments/paper/fabolas_svm.py                         # 3 seeds x 40 s (~9 min)
    python experiments/paper/fabolas_svm.py --seeds 5 --budget 300  # the longer study (~80 min)

Writes ``data/fabolas_svm.json`` and ``docs/fabolas_svm.png`` and prints
a table (mean test error at a quarter, half and all of the budget, evaluations, mean
data fraction, overhead share).
"""

from __future__ import annotations

import argparse
import dataclasses
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

from mumbo_jax.gp import costmodel, models, posterior
from mumbo_jax.benchmarks import hpo
from mumbo_jax.bo import optimize, rules
from mumbo_jax.bo import settings as bo_settings
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.settings import BOSettings, Task

ROOT = pathlib.Path(__file__).resolve().parents[2]
METHODS = ("mumbo", "ei", "random")
SETTINGS = BOSettings(strategy="mumbo", recommendation={"rule": "global"}, gstar={"samples": 5},
                      maximiser={"n_candidates": 1000, "n_starts": 8, "polish_steps": 30},
                      fit={"restarts": 2, "max_iter": 50})


def full_data_strategy() -> str:
    """EI at the full data if the library has it, else MES at the target."""
    return "ei" if "ei" in rules.STRATEGIES else "mes"


def make_task(obj: hpo.SubsetSVM) -> Task:
    spec = models.fabolas_model(obj.bounds, obj.fidelity_bounds)
    # a placeholder known cost (2^z, proportional to the data size): every tell passes
    # the measured seconds, and MUMBO divides by the learned cost instead
    space = optimize.continuous_fidelity(obj.fidelity_bounds, _data_size_cost)
    return bo_settings.make_task(spec, posterior.target_value(obj.target_fidelity), space)


def _data_size_cost(z):
    return 2.0**z


def _optimiser(method, task, settings, seed, n_design_settings):
    if method == "mumbo":
        design = hpo.subset_design(task.spec.bounds, n_design_settings, seed=seed)
        return AskTell(task, settings, seed, cost_model=costmodel.cost_model_for(task), design=design)
    rng = np.random.default_rng(seed)
    b = np.asarray(task.spec.bounds)
    x0 = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=(2 * task.spec.dim, task.spec.dim))
    design = (x0, np.full(x0.shape[0], float(task.target_z[0])))
    return AskTell(task, dataclasses.replace(settings, strategy=full_data_strategy()), seed, design=design)


def warm_up(task, settings, methods, n_design_settings):
    """Compile the programs a timed run uses (buffer size 64 for MUMBO after its 40-point
    design, 32 for EI) on made-up data: compilation is not part of the tuners' cost. A
    run that outgrows these buffers compiles the next size inside its timed loop."""
    rng = np.random.default_rng(123)
    b = np.asarray(task.spec.bounds)
    t0 = time.perf_counter()
    for method in methods:
        if method == "random":
            continue
        sizes = (4 * n_design_settings + 1,) if method == "mumbo" else (2 * task.spec.dim + 1,)
        for n in sizes:
            opt = _optimiser(method, task, settings, 0, n_design_settings)
            for n_tell in (n, 1):  # two asks: the second warm-starts from the first's fit
                for _ in range(n_tell):
                    x = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=b.shape[0])
                    z = rng.uniform(*task.spec.fidelity_bounds) if method == "mumbo" else 0.0
                    opt.tell(x, z, -rng.uniform(), float(np.exp(z)))
                opt.ask()
    return time.perf_counter() - t0


def run_bo(method, obj, task, budget, seed, settings=SETTINGS, n_design_settings=10, log=print,
           max_evals=None):
    """One timed run (until ``budget`` seconds or ``max_evals`` evaluations). Returns a
    dict of per-evaluation records; ``trace`` holds ``(elapsed seconds, incumbent x)``
    after each decision past the design; ``optimiser`` the AskTell."""
    opt = _optimiser(method, task, settings, seed, n_design_settings)
    evals, trace = [], []
    start = time.perf_counter()
    while time.perf_counter() - start < budget and (max_evals is None or len(evals) < max_evals):
        t0 = time.perf_counter()
        x, z = opt.ask()
        if opt.last_fit is not None and not opt.in_initial_design:
            x_inc, _ = opt.incumbent()  # the fit of this ask, reused
            trace.append((time.perf_counter() - start, np.asarray(x_inc).tolist()))
        t1 = time.perf_counter()
        err, seconds = obj(x, z)
        t2 = time.perf_counter()
        opt.tell(x, z, -err, seconds)
        t3 = time.perf_counter()
        evals.append({"x": np.asarray(x).tolist(), "z": float(z), "error": err, "seconds": seconds,
                      "overhead": (t1 - t0) + (t3 - t2), "elapsed": t3 - start})
    log(f"  {method} seed {seed}: {len(evals)} evaluations ({len(evals) - opt.n_design} after the design), "
        f"mean fraction {np.mean([2 ** e['z'] for e in evals]):.3f}, "
        f"overhead {sum(e['overhead'] for e in evals):.1f} s of {evals[-1]['elapsed']:.1f} s")
    return {"method": method, "seed": seed, "evals": evals, "trace": trace, "optimiser": opt}


def run_random(obj, budget, seed, log=print, max_evals=None):
    """Random search at the full data; the incumbent is the best validation error."""
    rng = np.random.default_rng(10_000 + seed)
    b = np.asarray(obj.bounds)
    evals, trace, best = [], [], (np.inf, None)
    start = time.perf_counter()
    while time.perf_counter() - start < budget and (max_evals is None or len(evals) < max_evals):
        t0 = time.perf_counter()
        x = b[:, 0] + (b[:, 1] - b[:, 0]) * rng.uniform(size=b.shape[0])
        t1 = time.perf_counter()
        err, seconds = obj(x, obj.target_fidelity)
        t2 = time.perf_counter()
        if err < best[0]:
            best = (err, x.tolist())
        trace.append((time.perf_counter() - start, best[1]))
        evals.append({"x": x.tolist(), "z": obj.target_fidelity, "error": err, "seconds": seconds,
                      "overhead": (t1 - t0) + (time.perf_counter() - t2), "elapsed": time.perf_counter() - start})
    log(f"  random seed {seed}: {len(evals)} evaluations in {evals[-1]['elapsed']:.1f} s")
    return {"method": "random", "seed": seed, "evals": evals, "trace": trace}


def curve(run, obj, grid):
    """Test error of the incumbent at each time of ``grid``: the model's incumbent after
    each decision; before the first decision (the design), the setting with the best
    validation error so far (at any fraction); NaN before the first evaluation."""
    out = np.full(len(grid), np.nan)
    first = run["trace"][0][0] if run["trace"] else np.inf
    best = (np.inf, None)
    for e in run["evals"]:
        if e["elapsed"] >= first:
            break
        if e["error"] < best[0]:
            best = (e["error"], e["x"])
        out[np.asarray(grid) >= e["elapsed"]] = obj.test_error(best[1])
    for t, x in run["trace"]:
        out[np.asarray(grid) >= t] = obj.test_error(x)
    return out


def summarise(runs, obj, budget):
    grid = np.linspace(0, budget, 81)
    table = {}
    for method in dict.fromkeys(r["method"] for r in runs):
        mine = [r for r in runs if r["method"] == method]
        curves = np.stack([curve(r, obj, grid) for r in mine])
        # NaN until every seed has an incumbent (a mean over the seeds that started
        # early would jump when the others join)
        at = {f"{q:g}": float(np.mean(curves[:, int(round(q * (len(grid) - 1)))])) for q in (0.25, 0.5, 1.0)}
        ev = [r["evals"] for r in mine]
        table[method] = {
            "test_error_at_fraction_of_budget": at,
            "final_test_error_per_seed": curves[:, -1].tolist(),
            "evaluations": float(np.mean([len(e) for e in ev])),
            "mean_data_fraction": float(np.mean([np.mean([2 ** v["z"] for v in e]) for e in ev])),
            "overhead_share": float(np.mean([sum(v["overhead"] for v in e) / e[-1]["elapsed"] for e in ev])),
            "curve_mean": np.mean(curves, 0).tolist(),
            "curve_se": (np.std(curves, 0) / np.sqrt(len(mine))).tolist(),
        }
    return grid, table


def plot(grid, table, path, budget, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    labels = {"mumbo": "MUMBO / learned cost", "ei": f"{full_data_strategy().upper()} at full data",
              "random": "random search at full data"}
    for method, row in table.items():
        m, se = np.asarray(row["curve_mean"]), np.asarray(row["curve_se"])
        ax.plot(grid, m, label=labels.get(method, method))
        ax.fill_between(grid, m - se, m + se, alpha=0.2)
    ax.set_xlabel("wall-clock seconds (evaluations + overhead)")
    ax.set_ylabel("incumbent test error")
    ax.set_yscale("log")
    ax.set_xlim(0, budget)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def print_table(table, budget):
    print(f"\n| tuner | test error @ {budget / 4:g} s | @ {budget / 2:g} s | @ {budget:g} s | evaluations "
          "| mean fraction | overhead share |")
    print("|---|---|---|---|---|---|---|")
    for method, row in table.items():
        a = row["test_error_at_fraction_of_budget"]
        print(f"| {method} | {a['0.25']:.4f} | {a['0.5']:.4f} | {a['1']:.4f} | {row['evaluations']:.1f} "
              f"| {row['mean_data_fraction']:.3f} | {row['overhead_share']:.2f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget", type=float, default=40.0, help="wall-clock seconds per run")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--out", default=str(ROOT / "data" / "fabolas_svm.json"))
    ap.add_argument("--figure", default=str(ROOT / "docs" / "fabolas_svm.png"))
    ap.add_argument("--replot", action="store_true", help="redo the table and figure from --out's runs")
    args = ap.parse_args(argv)
    if args.replot:
        saved = json.loads(pathlib.Path(args.out).read_text())
        obj = hpo.SubsetSVM(hpo.digits_split(0))
        grid, table = summarise(saved["runs"], obj, saved["budget"])
        print_table(table, saved["budget"])
        saved.update(grid=grid.tolist(), table=table)
        pathlib.Path(args.out).write_text(json.dumps(saved))
        plot(grid, table, args.figure, saved["budget"], f"SVM on digits, {saved['seeds']} seeds (mean +- s.e.)")
        return
    methods = [m for m in args.methods.split(",") if m]
    for m in methods:
        if m not in METHODS:
            raise SystemExit(f"unknown method {m!r}; allowed: {METHODS}")
    obj = hpo.SubsetSVM(hpo.digits_split(0))
    task = make_task(obj)
    print(f"digits: {len(obj.split.y_train)} training, {len(obj.split.y_valid)} validation, "
          f"{len(obj.split.y_test)} test images; full-data baseline: {full_data_strategy()}", flush=True)
    print(f"warm-up (compilation) took {warm_up(task, SETTINGS, methods, 10):.1f} s", flush=True)
    runs = []
    for seed in range(args.seeds):
        for method in methods:
            log = lambda s: print(s, flush=True)
            runs.append(run_random(obj, args.budget, seed, log) if method == "random"
                        else run_bo(method, obj, task, args.budget, seed, log=log))
    t0 = time.perf_counter()
    grid, table = summarise(runs, obj, args.budget)
    print(f"offline test errors took {time.perf_counter() - t0:.1f} s")
    print_table(table, args.budget)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for r in runs:
        r.pop("optimiser", None)
    out.write_text(json.dumps({"budget": args.budget, "seeds": args.seeds, "full_data_strategy": full_data_strategy(),
                               "settings": SETTINGS.__dict__, "grid": grid.tolist(), "table": table, "runs": runs}))
    fig = pathlib.Path(args.figure)
    fig.parent.mkdir(parents=True, exist_ok=True)
    plot(grid, table, fig, args.budget, f"SVM on digits, {args.seeds} seeds (mean +- s.e.)")
    print(f"wrote {out} and {fig}")


if __name__ == "__main__":
    sys.exit(main())
