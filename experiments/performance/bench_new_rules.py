"""Per-decision overhead of the contributed rules ``mf_kg`` and ``mf_gibbon`` beside
``mumbo`` on the same Hartmann-3 data, and beside BoTorch's
``qMultiFidelityKnowledgeGradient`` when a Python with BoTorch is given.

    taskset -c 0 python experiments/performance/bench_new_rules.py [--ns 30,100] [--reps 5]
        [--botorch-python /path/to/venv/bin/python] [--out data/bench_new_rules.json]

Data: Hartmann-3 (3 fidelities, costs 100 / 10 / 1), the paper's initial design (6 x at
every fidelity) then points mostly at the cheap fidelities (z = 2: 70 %, 1: 25 %, 0: 5 %),
half uniform and half near the optimum, noisy values; the first n of them. One
hyper-parameter fit per n (shared by every rule: the fit does not depend on the rule).

What is timed, per rule (default ``BOSettings``: 2,000 candidates per fidelity, 8 starts,
40 polish steps): one decision after the fit, i.e. the g* stage (``stages.gstar_stage``;
zeros for ``mf_kg``) plus the maximisation stage (``stages.maximise_stage``: building the
rule's score, scoring every candidate, polishing), each compiled once by an untimed call,
then the median of ``--reps`` calls with fresh keys (``block_until_ready``).

BoTorch (``--botorch-python``; BoTorch is never a dependency of mumbo-jax): the same data
with the fidelity as a last input column (z = 0, 1, 2 -> s = 1, 0.5, 0); a
``SingleTaskMultiFidelityGP`` fitted once; per decision, as in BoTorch's multi-fidelity
KG tutorial, the current value (max of the target's posterior mean,
``optimize_acqf`` on ``PosteriorMean`` with s fixed at 1) then ``optimize_acqf_mixed``
of ``qMultiFidelityKnowledgeGradient`` (``--fantasies`` fantasies, cost-aware with the
known per-fidelity costs) over the three fidelities, ``--restarts`` restarts from
``--raw-samples`` raw samples. Different models and optimisers: the comparison is of the
cost of one decision, not of the decisions.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

# timed asks only: no background compiling of the next buffer size (mumbo_jax.runtime.prefetch)
os.environ.setdefault("MUMBO_JAX_PREFETCH", "off")

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "data" / "bench_new_rules.json"
RULES = ("mumbo", "mf_gibbon", "mf_kg")

BOTORCH_SCRIPT = r'''
import json, statistics, sys, time
import numpy as np
import torch
from botorch.acquisition import FixedFeatureAcquisitionFunction, PosteriorMean, qMultiFidelityKnowledgeGradient
from botorch.acquisition.cost_aware import InverseCostWeightedUtility
from botorch.acquisition.utils import project_to_target_fidelity
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskMultiFidelityGP
from botorch.models.deterministic import GenericDeterministicModel
from botorch.models.transforms.outcome import Standardize
from botorch.optim.optimize import optimize_acqf, optimize_acqf_mixed
from gpytorch.mlls import ExactMarginalLogLikelihood

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)  # as the JAX side: one pinned core
args = json.loads(sys.argv[1])
data = np.load(args["data"])
costs = torch.tensor(args["costs"])  # by fidelity index 0 (target), 1, 2
S_OF_Z = torch.tensor([1.0, 0.5, 0.0])
d = data["x"].shape[1]
bounds = torch.tensor([[0.0] * (d + 1), [1.0] * (d + 1)])
out = {"torch": torch.__version__}
import botorch
out["botorch"] = botorch.__version__
rows = []
for n in args["ns"]:
    X = torch.cat([torch.tensor(data["x"][:n]), S_OF_Z[torch.tensor(data["z"][:n]).long()][:, None]], dim=1)
    Y = torch.tensor(data["y"][:n])[:, None]
    t0 = time.perf_counter()
    model = SingleTaskMultiFidelityGP(X, Y, data_fidelities=[d], outcome_transform=Standardize(m=1))
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    fit_s = time.perf_counter() - t0

    def cost_of(Xs):
        s = Xs[..., -1]
        z = torch.round((1.0 - s) * 2.0).long().clamp(0, 2)
        return costs[z][..., None]

    utility = InverseCostWeightedUtility(cost_model=GenericDeterministicModel(cost_of, num_outputs=1))
    project = lambda Xs: project_to_target_fidelity(X=Xs, target_fidelities={d: 1.0}, d=d + 1)

    def decide(seed):
        torch.manual_seed(seed)
        cur = FixedFeatureAcquisitionFunction(PosteriorMean(model), d=d + 1, columns=[d], values=[1.0])
        _, current_value = optimize_acqf(cur, bounds=bounds[:, :-1], q=1, num_restarts=args["restarts"],
                                         raw_samples=args["raw_samples"])
        acq = qMultiFidelityKnowledgeGradient(model, num_fantasies=args["fantasies"], current_value=current_value,
                                              cost_aware_utility=utility, project=project)
        cand, _ = optimize_acqf_mixed(acq, bounds=bounds, fixed_features_list=[{d: float(s)} for s in S_OF_Z],
                                      q=1, num_restarts=args["restarts"], raw_samples=args["raw_samples"],
                                      options={"batch_limit": 5, "maxiter": 200})
        return cand

    t0 = time.perf_counter()
    decide(0)
    first = time.perf_counter() - t0
    times = []
    for r in range(args["reps"]):
        t0 = time.perf_counter()
        cand = decide(r + 1)
        times.append(time.perf_counter() - t0)
    rows.append({"n": n, "fit_s": fit_s, "first_s": first, "decision_s": statistics.median(times),
                 "decision_all_s": times, "proposal": cand.tolist()})
out["rows"] = rows
print(json.dumps(out))
'''


def design(n_max: int, seed: int = 0):
    """The fixed data: ``(task, x [n_max, 3], z [n_max], y [n_max])`` (maximisation)."""
    import jax
    import numpy as np

    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo import asktell
    from mumbo_jax.bo.settings import BOSettings

    prob = problems.get_problem("hartmann3")
    task = tasks.problem_task(prob)
    opt = asktell.AskTell(task, BOSettings(strategy="mumbo", recommendation={"rule": "global"}), seed=seed)
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
    return prob, task, x, z, y


def bench_mumbo_jax(task, x, z, y, ns, reps):
    import jax
    import numpy as np

    from mumbo_jax.bo import stages
    from mumbo_jax.bo.settings import BOSettings
    from mumbo_jax.gp import models

    rows = []
    for n in ns:
        base = BOSettings(strategy="mumbo", recommendation={"rule": "global"})
        buffers = stages.pad_buffers(x[:n], z[:n].astype(float), y[:n], stages.buffer_size(n))
        t0 = time.perf_counter()
        post = stages.fit_stage(base, task, buffers, models.default_params(task.spec), jax.random.PRNGKey(0))
        jax.block_until_ready(post)
        fit_s = time.perf_counter() - t0
        row = {"n": n, "buffer_rows": int(buffers.x.shape[0]), "fit_s": fit_s, "rules": {}}
        for name in RULES:
            settings = BOSettings(strategy=name)

            def decide(k):
                key = jax.random.PRNGKey(k)
                t0 = time.perf_counter()
                gstar = jax.block_until_ready(stages.gstar_stage(settings, task, post, jax.random.fold_in(key, 1)))
                t1 = time.perf_counter()
                prop = jax.block_until_ready(stages.maximise_stage(settings, task, post, gstar, key,
                                                                   n_design=np.int32(18)))
                return t1 - t0, time.perf_counter() - t1, prop

            t0 = time.perf_counter()
            decide(0)
            first = time.perf_counter() - t0
            parts = [decide(k + 1) for k in range(reps)]
            g = [p[0] for p in parts]
            m = [p[1] for p in parts]
            tot = [a + b for a, b in zip(g, m)]
            last = parts[-1][2]
            row["rules"][name] = {"first_call_s": first, "gstar_s": statistics.median(g),
                                  "maximise_s": statistics.median(m), "decision_s": statistics.median(tot),
                                  "decision_all_s": tot,
                                  "proposal": {"x": np.asarray(last.x).tolist(), "z": float(last.z),
                                               "alpha": float(last.alpha)}}
            print(f"n={n:4d} {name:10s} decision {statistics.median(tot) * 1e3:8.1f} ms "
                  f"(g* {statistics.median(g) * 1e3:7.1f}, maximise {statistics.median(m) * 1e3:8.1f}; "
                  f"first call {first:5.1f} s)", flush=True)
        rows.append(row)
    return rows


def bench_botorch(python, x, z, y, costs, ns, reps, fantasies, restarts, raw_samples):
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        np.savez(path, x=x, z=z, y=y)
        args = {"data": path, "costs": list(costs), "ns": ns, "reps": reps, "fantasies": fantasies,
                "restarts": restarts, "raw_samples": raw_samples}
        proc = subprocess.run([python, "-c", BOTORCH_SCRIPT, json.dumps(args)], capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", default="30,100")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--botorch-python", default=None, help="a Python with torch and botorch installed")
    ap.add_argument("--fantasies", type=int, default=32)
    ap.add_argument("--restarts", type=int, default=4)
    ap.add_argument("--raw-samples", type=int, default=64)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)

    import jax

    jax.config.update("jax_enable_x64", True)
    sys.path.insert(0, str(ROOT))
    from mumbo_jax.runtime import process_options

    process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release
    ns = [int(v) for v in args.ns.split(",")]
    prob, task, x, z, y = design(max(ns))
    result = {"problem": "hartmann3", "ns": ns, "reps": args.reps, "machine": platform.platform(),
              "cpu_affinity": sorted(os.sched_getaffinity(0)), "jax": jax.__version__,
              "mumbo_jax": bench_mumbo_jax(task, x, z, y, ns, args.reps)}
    if args.botorch_python:
        result["botorch"] = bench_botorch(args.botorch_python, x, z, y, prob.costs, ns, args.reps, args.fantasies,
                                          args.restarts, args.raw_samples)
        result["botorch_settings"] = {"fantasies": args.fantasies, "restarts": args.restarts,
                                      "raw_samples": args.raw_samples}
        bt = result["botorch"]
        if "rows" in bt:
            for r in bt["rows"]:
                print(f"n={r['n']:4d} botorch qMFKG decision {r['decision_s'] * 1e3:8.1f} ms "
                      f"(first call {r['first_s']:5.1f} s)", flush=True)
        else:
            print("botorch failed:", bt["error"], flush=True)
    else:
        result["botorch"] = "skipped: no --botorch-python given"
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.out).write_text(json.dumps(result, indent=1))
    print("written", args.out)


if __name__ == "__main__":
    main()
