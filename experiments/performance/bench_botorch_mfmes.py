"""One decision of mumbo-jax's MUMBO beside one of BoTorch's multi-fidelity MES on the same
data, against the number of observations: the side-by-side of the per-decision cost.

    taskset -c 1 python experiments/performance/bench_botorch_mfmes.py --botorch-python /path/to/venv/bin/python
        [--ns 20,40,100,200,300,1000] [--reps 1] [--out docs/data/large_n/botorch_mfmes.json]

Data: ``bench_decision.design`` (Hartmann-3, 3 fidelities with costs 100 / 10 / 1, the
paper's initial design then points mostly at the cheap fidelities, noisy values), the
first n points. BoTorch is never a dependency of mumbo-jax: it runs in the Python given
by ``--botorch-python`` (``pip install botorch`` in a scratch environment).

mumbo-jax: ``bench_decision.bench_n`` with ``--start previous`` (the strategy ``mumbo``,
default settings): ``AskTell.ask()`` on n points with the fit starting from the
hyper-parameters fitted on the first n - 1, as at a run's next step (from 500
observations a warm-only refit, the default), after one untimed call that compiles.

BoTorch, as in its multi-fidelity MES tutorial: a ``SingleTaskMultiFidelityGP`` with the
fidelity as a last input (z = 0, 1, 2 -> s = 1, 0.5, 0) fitted by ``fit_gpytorch_mll``,
then ``qMultiFidelityMaxValueEntropy`` (a candidate set of 1,000 random x at the target,
cost-aware with the known costs, projected to the target) maximised by
``optimize_acqf_mixed`` over the three fidelities (5 restarts from 128 raw samples,
``batch_limit`` 5, ``maxiter`` 200). ``--effort matched`` gives BoTorch's maximiser
mumbo-jax's effort instead: 2,000 raw samples and 8 restarts per fidelity (the max-value
candidate set stays 1,000: one the size of mumbo-jax's g* grid, 30,000 points, ran out of
the 23 GB of memory of the machine measured on). A decision is the fit and the maximisation. Torch
and JAX use one thread each; pin the process to one core. Different models and
optimisers: the comparison is of the cost of one decision, not of the decisions.

Prints, per n, both decisions' seconds and their ratio; writes the JSON and a plot
(``--out`` with ``.png``).
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

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
# timed asks only: no background compiling of the next buffer size (mumbo_jax.bo.prefetch)
os.environ.setdefault("MUMBO_JAX_PREFETCH", "off")

ROOT = pathlib.Path(__file__).resolve().parents[2]
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


def decide(n, seed):
    torch.manual_seed(seed)
    X = torch.cat([torch.tensor(data["x"][:n]), S_OF_Z[torch.tensor(data["z"][:n]).long()][:, None]], dim=1)
    Y = torch.tensor(data["y"][:n])[:, None]
    t0 = time.perf_counter()
    model = SingleTaskMultiFidelityGP(X, Y, data_fidelities=[d], outcome_transform=Standardize(m=1))
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    fit_s = time.perf_counter() - t0
    m = args["candidates"]
    candidates = torch.cat([torch.rand(m, d), torch.ones(m, 1)], dim=1)
    acq = qMultiFidelityMaxValueEntropy(model, candidates, cost_aware_utility=utility, project=project)
    cand, _ = optimize_acqf_mixed(acq, bounds=bounds, fixed_features_list=[{d: float(s)} for s in S_OF_Z], q=1,
                                  num_restarts=args["restarts"], raw_samples=args["raw_samples"],
                                  options={"batch_limit": 5, "maxiter": 200})
    return time.perf_counter() - t0, fit_s, cand


rows = []
for n in args["ns"]:
    runs = [decide(n, r) for r in range(args["reps"])]
    total = statistics.median(r[0] for r in runs)
    rows.append({"n": n, "decision_s": total, "fit_s": statistics.median(r[1] for r in runs),
                 "decision_all_s": [r[0] for r in runs], "proposal": runs[-1][2].tolist()})
    print(json.dumps({"progress": rows[-1]["n"], "decision_s": total}), file=sys.stderr, flush=True)
print(json.dumps({"torch": torch.__version__, "botorch": botorch.__version__, "rows": rows}))
'''


EFFORT = {  # BoTorch's knobs: (max-value candidate set, raw samples and restarts per fidelity)
    "tutorial": dict(candidates=1000, raw_samples=128, restarts=5),
    # mumbo-jax's maximiser defaults: 2,000 candidates per fidelity, 8 starts (a max-value
    # candidate set the size of the g* grid, 30,000, was killed for memory on a 23 GB machine)
    "matched": dict(candidates=1000, raw_samples=2000, restarts=8),
}


def bench_botorch(python: str, x, z, y, costs, ns, reps, effort: str) -> dict:
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        data = pathlib.Path(tmp) / "data.npz"
        np.savez(data, x=x, z=z, y=y)
        args = {"data": str(data), "costs": list(costs), "ns": ns, "reps": reps, **EFFORT[effort]}
        proc = subprocess.run([python, "-c", BOTORCH_SCRIPT, json.dumps(args)], capture_output=True, text=True,
                              env=dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"))
    if proc.returncode != 0:
        raise SystemExit(f"the BoTorch side failed (exit code {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


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
    ax.set_ylabel("seconds per decision (one core)")
    ax.set_title("One decision, Hartmann-3, 3 fidelities")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--botorch-python", required=True)
    ap.add_argument("--ns", default="20,40,100,200,300,1000")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--effort", choices=sorted(EFFORT), default="tutorial",
                    help="BoTorch's search effort: its tutorial's, or matched to mumbo-jax's defaults")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    ns = [int(v) for v in args.ns.split(",")]

    import jax
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    import bench_decision
    from mumbo_jax.bo.settings import BOSettings

    task, x, z, y = bench_decision.design(max(ns))
    costs = [float(c) for c in np.asarray(task.space.cost(np.arange(3)))]
    print(f"BoTorch side ({args.botorch_python}) ...", flush=True)
    botorch = bench_botorch(args.botorch_python, x, np.asarray(z), np.asarray(y), costs, ns, args.reps, args.effort)
    by_n = {r["n"]: r for r in botorch["rows"]}
    rows = []
    print(f"{'n':>5} {'mumbo-jax s':>12} {'BoTorch s':>10} {'ratio':>7}", flush=True)
    for n in ns:
        mj = bench_decision.bench_n(task, BOSettings(strategy="mumbo"), x, z, y, n, max(args.reps, 1), "previous")
        b = by_n[n]
        rows.append({"n": n, "mumbo_jax_s": mj["ask_s"], "mumbo_jax": mj, "botorch_s": b["decision_s"],
                     "botorch_fit_s": b["fit_s"], "ratio": b["decision_s"] / mj["ask_s"]})
        print(f"{n:5d} {mj['ask_s']:12.3f} {b['decision_s']:10.1f} {rows[-1]['ratio']:7.0f}", flush=True)
    if args.out:
        out = pathlib.Path(args.out)
        command = (f"python experiments/performance/bench_botorch_mfmes.py --botorch-python PY --ns {args.ns} "
                   f"--reps {args.reps} --effort {args.effort} --out {args.out}")
        out.write_text(json.dumps({"command": command,
                                   "time": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": platform.node(),
                                   "jax": jax.__version__, "torch": botorch["torch"], "botorch": botorch["botorch"],
                                   "xla_flags": os.environ["XLA_FLAGS"], "reps": args.reps, "effort": args.effort,
                                   "botorch_settings": EFFORT[args.effort], "rows": rows},
                                  indent=1) + "\n")
        plot(rows, out.with_suffix(".png"))


if __name__ == "__main__":
    main()
