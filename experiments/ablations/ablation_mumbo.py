"""Ablation of MUMBO's robustness levers against the two-stage baselines.

    taskset -c 1 python experiments/ablations/ablation_mumbo.py --problems hartmann3 --seeds 3 --budget 150 \
        --levers base,fit,floor,disc,inc_target,protect --baselines mt_ei,mf_gp_ucb,ei

Each variant is ``mumbo`` plus zero or more levers joined by ``+`` (``base`` = MUMBO-10
as the paper runs it, with ``boundary_frac = local_frac = 0`` and
``incumbent_rule = "mean"``, ``interval_calibration = "none"`` and the plain ICM (``target_floor = 0``) whatever the library's defaults; ``--base-defaults`` starts from today's defaults instead). Levers:

* ``fit``: 4 L-BFGS restarts (previous, defaults, 2 random) x 200 iterations instead of 2 x 50.
* ``floor``: ICM whose target-specific variance kappa_0 is floored at 5 % of the shared
  target variance (W W^T)_00 (``ModelSpec.target_floor``), so cheap fidelities cannot be
  fitted as perfectly correlated with the target (rho <= 0.976).
* ``floor20`` / ``floor1``: the same with a 20 % / 1 % floor (rho <= 0.91 / 0.995);
  ``nofloor``: the plain ICM (no floor; the library's default too).
* ``floorcv`` / ``floorcv5``: every refit fits both the plain ICM and the ICM with a 1 % /
  5 % floor and keeps the one whose leave-one-out log density of the target's own
  observations is higher (``BOSettings.target_floor_cv``).
* ``disc``: ICM plus a target-only discrepancy GP with its own ARD lengthscales and
  variance (``icm_disc``), floored at 5 % of (W W^T)_00.
* ``inc_target``: recommend the best posterior mean of g among x evaluated AT THE TARGET.
* ``inc_global``: recommend the maximiser of the posterior mean of g over the whole box
  (``incumbent_rule = "global"``); ``STRATEGY+inc_global`` applies it to a baseline.
* ``inc_gsafe`` / ``inc_gsafe1``: recommend the global maximiser only where its
  posterior mean beats the best evaluated x's by more than 2 (1) sd of the difference,
  widened by the leave-one-out scale (``incumbent_rule = "global_safe"``).
* ``inc_guard``: recommend the global maximiser only where its lower bound mu_g - 2 sd_g
  (sd widened by the leave-one-out scale) beats the posterior mean at the best x evaluated
  AT THE TARGET; else that x (``incumbent_rule = "global_guard"``).
* ``inc_glcb``: recommend the maximiser of mu_g - 2 sd_g over the box, evaluated x
  included (``incumbent_rule = "global_lcb"``).
* ``lcb``: recommend the evaluated x with the best lower bound mu_g - 2 sd_g.
* ``faces``: a quarter of the maximiser's random candidates snapped onto the box's
  faces/edges/corners (``BOSettings.boundary_frac``).
* ``nuts``: hyper-parameters marginalised by BlackJAX NUTS at every refit
  (``BOSettings.hmc_samples = 8``: the MAP and 7 draws after 50 warm-up steps, trees of at
  most 16 leapfrog steps); g*, MUMBO and the recommendation's moments averaged over the
  8 posteriors. ``nuts4``: 4 samples (the MAP and 3 draws) after 30 warm-up steps.
* ``local``: a quarter of the maximiser's random candidates drawn near the 4 best evaluated
  x (posterior mean of g) at scales 0.1 / 0.03 / 0.01 / 0.003 of the box
  (``BOSettings.local_frac``).
* ``exact``: g* sampled from joint posterior draws on a grid (``gstar_method = "exact"``)
  instead of the Gumbel approximation, which treats the grid points as independent.
* ``q4gibbon`` / ``q4kb``: synchronous batches of 4 evaluations per step built
  by GIBBON's batch bound or by the kriging believer (``BOSettings.batch_size = 4``,
  ``batch_rule``), the model refitted every batch; ``q4gibbonpol``: GIBBON with the joint
  gradient polish of the batch (``batch_polish``); ``q4gibbonresc``: GIBBON with its
  repulsion term divided by m^2 (``batch_rescaled_repulsion``); ``q4gibbonseq``: the
  sequential decision first, then GIBBON's slots given it as pending (``"gibbon_seq"``);
  ``q4gibbonmumbo``: GIBBON's greedy batch with MUMBO's gain as each point's own term
  (``"gibbon_mumbo"``); ``q4gibbonmc`` / ``q4gibbonmumbomc``: either with each slot
  chosen by its own gain per unit of its own cost (``batch_marginal_cost``).
* ``cal``: the recorded sd of g at the recommendation widened by the root mean square of
  the leave-one-out z-scores of the target's observations (``interval_calibration =
  "loo"``); decisions and regrets are those without it, only the coverage changes.
* ``protect``: when the recommended x (best posterior mean) has no target evaluation,
  query it at the target (a target-protecting rule).

The levers are named by the flat setting names they had when they were measured
(``fit_restarts`` is ``BOSettings.fit.restarts``, ...: :func:`mumbo_jax.bo.settings.old_keys`).
The levers that left the library as dead ends (``floorcv``, ``floorcv5``, ``protect``,
``q4gibbonpol``, ``q4gibbonresc``, ``q4gibbonmc``, ``q4gibbonmumbomc``) run with the
library at the git tag ``ablation-levers`` (``git checkout ablation-levers``); here they
raise.

Baselines (``mt_ei``, ``mf_gp_ucb``, ``ei``, ...) run with the same model and fit settings
as ``base``. Output: one JSON per problem under data/ablations/ with per-seed
curves, the fidelity of every evaluation, and per-step overheads; a summary is printed
(median regret at cost checkpoints, fraction of evaluations at the target, overhead).
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
try:
    jax.config.update("jax_cpu_enable_async_dispatch", False)
except AttributeError:
    pass

try:
    import mumbo_jax  # noqa: F401
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax.benchmarks import problems, tasks  # noqa: E402
from mumbo_jax.bo import incumbent  # noqa: E402
from mumbo_jax.bo.compiled import backend_batching  # noqa: E402
from mumbo_jax.bo.settings import BOSettings, old_keys  # noqa: E402
from mumbo_jax.runtime.timing import StepClock  # noqa: E402
from mumbo_jax.run import compare  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[2] / "data" / "ablations"

# lever -> (settings overrides, model kind or None, spec overrides)
LEVERS = {
    "base": ({}, None, {}),
    "fit": ({"fit_restarts": 4, "fit_max_iter": 200}, None, {}),
    "floor": ({}, None, {"target_floor": 0.05}),
    "floor20": ({}, None, {"target_floor": 0.2}),
    "floor1": ({}, None, {"target_floor": 0.01}),
    "nofloor": ({}, None, {"target_floor": 0.0}),
    "floorcv": ({"target_floor_cv": 0.01}, None, {"target_floor": 0.0}),
    "floorcv5": ({"target_floor_cv": 0.05}, None, {"target_floor": 0.0}),
    "disc": ({}, "icm_disc", {"target_floor": 0.05}),
    "inc_target": ({"incumbent_rule": "target"}, None, {}),
    "lcb": ({"incumbent_rule": "lcb"}, None, {}),
    "inc_global": ({"incumbent_rule": "global"}, None, {}),
    "inc_glcb": ({"incumbent_rule": "global_lcb"}, None, {}),
    "inc_guard": ({"incumbent_rule": "global_guard"}, None, {}),
    "inc_gsafe": ({"incumbent_rule": "global_safe"}, None, {}),
    "inc_gsafe1": ({"incumbent_rule": "global_safe"}, None, {}),  # with SAFE_SD = 1 (run_variant)
    "protect": ({"protect_target": True}, None, {}),
    "cal": ({"interval_calibration": "loo"}, None, {}),
    "faces": ({"boundary_frac": 0.25}, None, {}),
    "local": ({"local_frac": 0.25}, None, {}),
    "exact": ({"gstar_method": "exact"}, None, {}),
    "nuts": ({"hmc_samples": 8, "hmc_warmup": 50, "hmc_max_doublings": 4}, None, {}),
    "nuts4": ({"hmc_samples": 4, "hmc_warmup": 30, "hmc_max_doublings": 4}, None, {}),
    # synchronous batches of 4, refitted every batch (4 evaluations; base: every 5)
    "q4gibbon": ({"batch_size": 4, "batch_rule": "gibbon", "refit_every": 1}, None, {}),
    "q4kb": ({"batch_size": 4, "batch_rule": "believer", "refit_every": 1}, None, {}),
    "q4gibbonkb": ({"batch_size": 4, "batch_rule": "gibbon_kb", "refit_every": 1}, None, {}),
    "q4gibbonseq": ({"batch_size": 4, "batch_rule": "gibbon_seq", "refit_every": 1}, None, {}),
    "q4gibbonmumbo": ({"batch_size": 4, "batch_rule": "gibbon_mumbo", "refit_every": 1}, None, {}),
    "q4gibbonmc": ({"batch_size": 4, "batch_rule": "gibbon", "batch_marginal_cost": True, "refit_every": 1},
                   None, {}),
    "q4gibbonmumbomc": ({"batch_size": 4, "batch_rule": "gibbon_mumbo", "batch_marginal_cost": True,
                         "refit_every": 1}, None, {}),
    "q4gibbonresc": ({"batch_size": 4, "batch_rule": "gibbon", "batch_rescaled_repulsion": True, "refit_every": 1},
                     None, {}),
    "q4gibbonpol": ({"batch_size": 4, "batch_rule": "gibbon", "batch_polish": True, "refit_every": 1}, None, {}),
}


def _records(flat: dict) -> dict:
    """The levers' flat setting names (the names of docs/RESULTS.md's tables) as
    BOSettings records; a lever removed from the library raises, naming where it runs."""
    old, out = old_keys(), {}
    for key, value in flat.items():
        if key not in old:
            raise ValueError(f"{key} was removed from the library (a dead end, docs/RESULTS.md); this lever runs "
                             "with the library at the git tag ablation-levers (git checkout ablation-levers)")
        record, name = old[key]
        out.setdefault(record, {})[name] = value
    return out


def build(problem, variant: str, common: dict):
    """(settings, task) of a variant: 'mumbo[+lever...]' levers or a baseline strategy."""
    parts = variant.split("+")
    strategy = "mumbo" if parts[0] in LEVERS else parts[0]
    levers = [p for p in parts if p in LEVERS]
    unknown = [p for p in parts[1:] if p not in LEVERS]
    if unknown:
        raise ValueError(f"unknown levers {unknown}; allowed {sorted(LEVERS)}")
    kw, model = dict(common), None
    spec_kw = dict(kw.pop("_spec", {}))
    for lev in levers:
        s, m, sp = LEVERS[lev]
        kw.update(s)
        model = m or model
        spec_kw.update(sp)
    settings = BOSettings(strategy=strategy, **_records(kw))
    task = tasks.problem_task(problem, model)
    if spec_kw:
        spec = dataclasses.replace(task.spec, **spec_kw)
        task = dataclasses.replace(task, spec=spec)
    return settings, task


def partial_writer(path, variant):
    """A ``run_compiled`` progress callback that saves each seed's curve so far to
    ``path`` (called when the buffers grow): a run killed at a time limit keeps them."""
    def write(h):
        h = jax.tree_util.tree_map(np.asarray, h)
        rows = [{"n_evals": int(n), "cost_spent": c[:int(n) + 1].tolist(), "regret": r[:int(n) + 1].tolist(),
                 "z": z[:int(n)].tolist()} for n, c, r, z in zip(h.n_evals, h.cost_spent, h.regret, h.z)]
        old = json.loads(path.read_text()) if path.is_file() else {}
        old[variant] = rows
        path.write_text(json.dumps(old))
    return write


def run_variant(problem, variant, seeds, budget, max_evals, common, partial=None):
    settings, task = build(problem, variant, common)
    # the global_safe rule's margin is a module constant read when its program is traced
    incumbent.SAFE_SD = 1.0 if "inc_gsafe1" in variant.split("+") else 2.0
    jax.clear_caches()
    clock = StepClock()
    t0 = time.perf_counter()
    h = tasks.run_problem(problem, budget, seeds, settings, task=task, max_evals=max_evals, clock=clock,
                          progress=partial and partial_writer(partial, variant), **backend_batching())
    h = jax.tree_util.tree_map(np.asarray, h)
    wall = time.perf_counter() - t0
    per_seed = []
    sign = 1.0 if problem.maximise else -1.0
    for i, seed in enumerate(seeds):
        n = int(h.n_evals[i])
        z = h.z[i, :n]
        over = [o["total"] for o in clock.overheads(seed, n)]
        # is the true target value at the recommendation inside the model's 95 % interval?
        truth = sign * h.incumbent_value[i, :n + 1]
        covered = np.abs(h.incumbent_mean[i, :n + 1] - truth) <= 1.96 * h.incumbent_sd[i, :n + 1]
        per_seed.append({
            "covered": covered.astype(int).tolist(), "pred_mean": h.incumbent_mean[i, :n + 1].tolist(),
            "pred_sd": h.incumbent_sd[i, :n + 1].tolist(),
            "seed": int(seed), "n_evals": n,
            "cost_spent": h.cost_spent[i, :n + 1].tolist(), "regret": h.regret[i, :n + 1].tolist(),
            "z": np.round(z, 6).tolist(), "n_target": int(np.sum(np.abs(z - float(task.target_z[0])) < 1e-9)),
            "overheads": over,
        })
    return {"variant": variant, "settings": dataclasses.asdict(settings), "model": task.spec.kind,
            "spec": dataclasses.asdict(task.spec), "wall_s": wall, "per_seed": per_seed}


def summarise(rec, checkpoints):
    ps = rec["per_seed"]
    row = {}
    for c in checkpoints:
        row[f"r@{c:g}"] = float(np.median([compare.regret_at_cost(s["cost_spent"], s["regret"], c) for s in ps]))
    row["r_final"] = float(np.median([s["regret"][-1] for s in ps]))
    # worst rise of the recommendation's regret during a run (above its running minimum)
    row["worst_rise"] = float(max(np.nanmax(np.asarray(s["regret"]) - np.fmin.accumulate(np.asarray(s["regret"])))
                                  for s in ps))
    if all("covered" in s for s in ps):  # results written before the coverage was recorded have none
        row["coverage"] = float(np.mean(np.concatenate([s["covered"] for s in ps])))
    row["frac_target"] = float(np.sum([s["n_target"] for s in ps]) / max(1, np.sum([s["n_evals"] for s in ps])))
    over = [o for s in ps for o in s["overheads"][1:] if o is not None]  # step 0 compiles
    row["step_s"] = float(np.median(over)) if over else float("nan")
    row["wall_s"] = rec["wall_s"]
    return row


def report(paths):
    """Print a markdown table per results file (``--report FILE ...``)."""
    for path in paths:
        res = json.loads(pathlib.Path(path).read_text())
        rows = {v: r["summary"] for v, r in res["variants"].items()}
        keys = list(next(iter(rows.values())).keys())
        print(f"\n{res['problem']}, budget {res['budget']:g}, seeds {res['seeds']}\n")
        print("| variant | " + " | ".join(keys) + " |")
        print("|---" * (len(keys) + 1) + "|")
        for v, row in rows.items():
            print(f"| {v} | " + " | ".join(f"{row[k]:.3g}" for k in keys) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default="hartmann3")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seed0", type=int, default=0)
    ap.add_argument("--budget", type=float, default=150.0)
    ap.add_argument("--max-evals", type=int, default=120)
    ap.add_argument("--levers", default="base", help="comma-separated variants, e.g. base,fit,disc+fit")
    ap.add_argument("--baselines", default="", help="comma-separated strategies, e.g. mt_ei,mf_gp_ucb,ei")
    ap.add_argument("--refit-every", type=int, default=5)
    ap.add_argument("--checkpoints", default="25,50,100")
    ap.add_argument("--tag", default="screen")
    ap.add_argument("--base-defaults", action="store_true", help="variants start from today's BOSettings defaults")
    ap.add_argument("--partial", action="store_true",
                    help="save each seed's curve so far to TAG_..._partial.json whenever the buffers grow")
    ap.add_argument("--report", nargs="*", default=None, help="print tables of these results files and exit")
    args = ap.parse_args()
    if args.report is not None:
        return report(args.report)
    seeds = list(range(args.seed0, args.seed0 + args.seeds))
    # "base" is MUMBO as the paper runs it: the candidate-set levers off and the
    # paper's recommendation, whatever the library's defaults (``--base-defaults`` runs
    # today's defaults instead)
    common = {"refit_every": args.refit_every}
    if not args.base_defaults:
        common.update(boundary_frac=0.0, local_frac=0.0, incumbent_rule="mean", interval_calibration="none",
                      _spec={"target_floor": 0.0})
    variants = [("mumbo" if v == "base" else "mumbo+" + v) for v in args.levers.split(",") if v]
    variants += [b for b in args.baselines.split(",") if b]
    checkpoints = [float(c) for c in args.checkpoints.split(",")] + [args.budget]
    OUT.mkdir(parents=True, exist_ok=True)
    for name in args.problems.split(","):
        problem = problems.get_problem(name)
        path = OUT / f"{args.tag}_{name}_b{args.budget:g}_s{args.seed0}-{seeds[-1]}.json"
        results = json.loads(path.read_text()) if path.is_file() else {
            "problem": name, "budget": args.budget, "seeds": seeds, "max_evals": args.max_evals,
            "refit_every": args.refit_every, "variants": {}}
        for v in variants:
            partial = path.with_name(path.stem + "_partial.json") if args.partial else None
            rec = run_variant(problem, v, seeds, args.budget, args.max_evals, common, partial)
            rec["summary"] = summarise(rec, checkpoints)
            results["variants"][v] = rec
            path.write_text(json.dumps(results))
            print(name, v, json.dumps({k: (round(x, 5) if isinstance(x, float) else x)
                                       for k, x in rec["summary"].items()}), flush=True)


if __name__ == "__main__":
    main()
