"""The robust-default study: every strategy on equal levers, the suite and the paper.

One JSON file per (problem, strategy) in ``--out`` (``<problem>__<strategy>.json``),
per seed: the recommendation's regret, mean and sd after every evaluation, the regret of
the best point measured AT the target so far (initial design included), the cost spent,
the fidelities queried and the per-step overhead by stage. Every strategy shares the
model, the fit, the maximiser and the recommendation rule (``--incumbent``, default
"robust"); only the decision rule differs. A file already there is kept (rerun after an
interruption to finish the rest); a rerun with more ``--seeds`` runs only the seeds a
file lacks and appends them (seeds are independent, so 10 + 10 seeds equal 20). Deterministic: the script sets single-thread XLA CPU
flags itself unless XLA_FLAGS is set.

    python experiments/studies/robust.py --suite unreliable --problems currin,borehole \
        --strategies robust,mumbo,ei,mes,mt_ei,mf_gp_ucb --seeds 10 --jobs 2

Then ``python experiments/studies/robust_report.py`` renders the tables and plots.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

DETERMINISTIC = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
os.environ.setdefault("XLA_FLAGS", DETERMINISTIC)
# the (problem, strategy) processes share their compiled fit programs through JAX's cache
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "mumbo-jax-robust"))

ROOT = Path(__file__).resolve().parents[2]
# the paper's problems at 10 target evaluations' worth of budget (the paper's figures run
# to 200 on Currin and Borehole: hundreds of cheap evaluations, beyond a screen's time);
# the suite's budgets are in its configs. A seed stopped by --max-evals is marked.
PAPER_BUDGET = {"currin": 100.0, "borehole": 100.0, "hartmann3": 1000.0, "forrester": 100.0}
# --paper-budgets: the budgets of the paper's figures (2 (a), (b), (d)), for uncapped runs
FIGURE_BUDGET = {"currin": 200.0, "borehole": 200.0, "hartmann3": 1500.0}
# problem by problem, the comparisons a screen needs most first (a run cut short by time
# loses the rest)
ORDER = ("robust_mes", "robust", "ei", "mes", "mumbo", "mt_ei", "mf_gp_ucb", "boca", "robust_mt_ei")
CONTINUOUS_TWO_STAGE = {"mf_gp_ucb": "boca", "robust_mf_gp_ucb": None}


# variants studied before any becomes a rule of the library: registered in the study's own
# process only. robust_trust3: the robust rule whose guard lets MUMBO's cheap queries through
# once the leave-one-out advantage reaches 3 nats (mumbo_jax.bo.robust, trust); robust_mfc:
# the robust rule whose target-only choice is made on the multi-fidelity model's posterior
# of g while the leave-one-out advantage is at least 0 (robust_mfc3: 3) nats (mf_choice);
# robust_ucb_mfc: MF-GP-UCB behind the guard, its own x chosen while the advantage is >= 0
STUDY_RULES = {"robust_trust3": dict(inner="mumbo", trust=3.0), "robust_mfc": dict(inner="mumbo", mf_choice=0.0),
               "robust_mfc3": dict(inner="mumbo", mf_choice=3.0),
               "robust_ucb_mfc": dict(inner="mf_gp_ucb", mf_choice=0.0, mf_target="inner")}


def _register_study_rule(strategy: str) -> None:
    from mumbo_jax.bo import robust, rules

    if strategy in STUDY_RULES and strategy not in rules.RULES:
        spec = dict(STUDY_RULES[strategy])
        rules.register(robust.robust(rules.RULES[spec.pop("inner")], name=strategy, **spec))


def code_version() -> str:
    """The commit the study runs at (``git describe --always --dirty``: ``-dirty`` where
    tracked files differ from it), recorded with every seed so that a table names what
    produced it and ``reproduce.py`` can tell a record of other code from a regression."""
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def stack() -> dict:
    """The numerical stack a seed ran on: a seed reproduces bit for bit only on the same
    JAX release and processor (XLA compiles for the host's instruction set)."""
    import platform

    import jax
    cpu = platform.processor() or platform.machine()
    try:  # the model name says more than "x86_64"
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"jax": jax.__version__, "backend": jax.default_backend(), "cpu": cpu}


def _budget(problem: str, override: float | None = None, figures: bool = False) -> float:
    if override:
        return float(override)
    if figures and problem in FIGURE_BUDGET:
        return FIGURE_BUDGET[problem]
    if problem in PAPER_BUDGET:
        return PAPER_BUDGET[problem]
    import tomllib
    cfg = tomllib.loads((ROOT / "configs" / f"{problem}.toml").read_text())
    return float(cfg["run"]["budget"])


def run_one(problem: str, strategy: str, seeds: list[int], incumbent: str, max_evals: int, fast: bool,
            budget: float | None = None, fit: dict | None = None, maximiser: dict | None = None,
            figures: bool = False) -> dict:
    import jax
    jax.config.update("jax_enable_x64", True)
    from mumbo_jax.runtime import process_options

    process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release
    import numpy as np

    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo import stages
    from mumbo_jax.bo.compiled import run_compiled
    from mumbo_jax.bo.settings import BOSettings
    from mumbo_jax.runtime.timing import StepClock

    pb = problems.get_problem(problem)
    task, bench = tasks.problem_task(pb), tasks.problem_benchmark(pb)
    levers = dict(maximiser={"n_candidates": 500, "polish_steps": 15}, fit={"max_iter": 30}) if fast else {}
    if fit:  # --fit: fields of the fit record for every strategy alike
        levers["fit"] = {**levers.get("fit", {}), **fit}
    if maximiser:  # --maximiser: fields of the maximiser record for every strategy alike
        levers["maximiser"] = {**levers.get("maximiser", {}), **maximiser}
    _register_study_rule(strategy)
    settings = BOSettings(strategy=strategy, recommendation={"rule": incumbent}, **levers)
    budget = _budget(problem, budget, figures)
    clock = StepClock()
    t0 = time.time()
    h = run_compiled(bench, task, budget, seeds, settings, max_evals=max_evals, clock=clock)
    wall = time.time() - t0
    z_target = float(task.target_z[0])
    version, ran_on = code_version(), stack()
    score = jax.jit(jax.vmap(lambda x: bench.score(x)[1]))
    out = []
    for i, seed in enumerate(seeds):
        n = int(h.n_evals[i])
        design_key = jax.random.split(jax.random.PRNGKey(int(seed)))[0]
        x0, z0 = stages.initial_design(task, design_key)
        zs = h.z[i, :n]
        if len(task.target_z) > 1:  # a combined target (FASTCV's fold mean): known once all its fidelities are
            best0, bo_regret = _combined_best(np.asarray(x0), np.asarray(z0), h.x[i, :n], zs, task.target_z, score)
        else:
            on0 = np.abs(np.asarray(z0) - z_target) < 1e-9
            best0 = float(np.min(np.asarray(score(jnp_rows(x0[on0])))))
            on = np.abs(zs - z_target) < 1e-9
            bo_regret = np.full(n, np.inf)
            if on.any():
                bo_regret[on] = np.asarray(score(jnp_rows(h.x[i, :n][on])))
        best = np.minimum.accumulate(np.concatenate([[best0], bo_regret]))
        out.append({
            "seed": int(seed), "n_evals": n, "cost_spent": h.cost_spent[i, :n + 1].tolist(),
            "regret": h.regret[i, :n + 1].tolist(), "best_regret": best.tolist(),
            "value": h.incumbent_value[i, :n + 1].tolist(), "mean": h.incumbent_mean[i, :n + 1].tolist(),
            "sd": h.incumbent_sd[i, :n + 1].tolist(), "z": zs.tolist(), "initial_cost": float(h.initial_cost[i]),
            "overheads": clock.overheads(int(seed), n), "code": version, "stack": ran_on,
        })
    extra = {"target_fidelities": [float(z) for z in task.target_z]} if len(task.target_z) > 1 else {}
    return {"problem": problem, "strategy": strategy, "incumbent_rule": incumbent, "budget": budget,
            "max_evals": max_evals, "target_z": z_target, **extra, "maximise": pb.maximise if hasattr(pb, "maximise") else None,
            "levers": _levers(settings),
            "wall_s": wall, "xla_flags": os.environ.get("XLA_FLAGS"), "seeds": out}


# the shared levers under the flat names the study's files have always used: flat name ->
# (settings record, field). reproduce.py rebuilds a record's settings from the same table.
LEVERS = {"n_candidates": ("maximiser", "n_candidates"), "n_polish_steps": ("maximiser", "polish_steps"),
          "fit_max_iter": ("fit", "max_iter"), "fit_restarts": ("fit", "restarts"),
          "boundary_frac": ("maximiser", "boundary_frac"), "local_frac": ("maximiser", "local_frac"),
          "polish_gradient": ("maximiser", "gradient")}
WARM_LEVERS = {"fit_warm_from": ("fit", "warm_from"), "fit_cold_every": ("fit", "cold_every"),
               "fit_warm_iter": ("fit", "warm_iter")}  # recorded where warm refits are on
SCHEDULE_LEVERS = {"fit_refit_growth": ("fit", "refit_growth"),
                   "fit_incremental_from": ("fit", "incremental_from")}  # recorded where not the default
ALL_LEVERS = {**LEVERS, **WARM_LEVERS, **SCHEDULE_LEVERS}


def _levers(settings) -> dict:
    """The shared levers under their flat names (:data:`LEVERS`): the warm-refit ones where
    ``fit.warm_from`` is set, the refit schedule's where it is not the default (so that
    records written before these were recorded still extend)."""
    from mumbo_jax.bo.settings import BOSettings

    default = BOSettings()
    value = lambda s, rec, field: getattr(getattr(s, rec), field)
    out = {flat: value(settings, *where) for flat, where in LEVERS.items()}
    if settings.fit.warm_from:
        out.update({flat: value(settings, *where) for flat, where in WARM_LEVERS.items()})
    out.update({flat: value(settings, *where) for flat, where in SCHEDULE_LEVERS.items()
                if value(settings, *where) != value(default, *where)})
    return out


def _combined_best(x0, z0, xs, zs, target_z, score):
    """For a target that combines several fidelities: ``(regret of the best design point,
    [n] regret of each BO evaluation that completes the target at its x, else inf)``: a
    point's target value is measured once every fidelity of the target has been evaluated
    at exactly that x (FASTCV: all K folds), design included."""
    import numpy as np
    need = {float(z) for z in target_z}
    seen: dict = {}
    for x, z in zip(x0, z0):
        seen.setdefault(tuple(np.asarray(x).tolist()), set()).add(float(z))
    full0 = [k for k, v in seen.items() if need <= v]
    best0 = float(np.min(np.asarray(score(jnp_rows(np.asarray(full0)))))) if full0 else float("inf")
    regret = np.full(len(zs), np.inf)
    for j, (x, z) in enumerate(zip(xs, zs)):
        key = tuple(np.asarray(x).tolist())
        had = need <= seen.get(key, set())
        seen.setdefault(key, set()).add(float(z))
        if not had and need <= seen[key]:
            regret[j] = float(np.asarray(score(jnp_rows(np.asarray([key]))))[0])
    return best0, regret


def _missing_seeds(path: Path, n_seeds: int) -> bool:
    """Whether the file of one (problem, strategy) lacks some of seeds 0 .. n_seeds - 1
    (a file with fewer seeds is extended by the next run with more)."""
    if not path.exists():
        return True
    return bool(set(range(n_seeds)) - {r["seed"] for r in json.loads(path.read_text())["seeds"]})


def jnp_rows(x):
    import jax.numpy as jnp
    return jnp.asarray(x, float).reshape(-1, x.shape[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="", help="a registered suite (e.g. unreliable)")
    ap.add_argument("--problems", default="", help="comma-separated extra problems")
    ap.add_argument("--strategies", default="robust,mumbo,ei,mes,mt_ei,mf_gp_ucb")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--incumbent", default="robust")
    ap.add_argument("--max-evals", type=int, default=150)
    ap.add_argument("--budget", type=float, default=None,
                    help="cost budget for every problem (default: the paper's or the config's)")
    ap.add_argument("--paper-budgets", action="store_true",
                    help="Currin, Borehole and Hartmann-3 at their figures' budgets (200, 200, 1500), not at "
                         "10 target evaluations' worth")
    ap.add_argument("--fast", action="store_true", help="cheaper maximiser and fit for every strategy alike")
    ap.add_argument("--fit", default="", help='fields of the fit record for every strategy alike, as JSON '
                                              '(e.g. \'{"warm_from": 60}\')')
    ap.add_argument("--maximiser", default="", help='fields of the maximiser record for every strategy alike, as '
                                                    'JSON (e.g. \'{"gradient": "exact"}\')')
    ap.add_argument("--out", default=str(ROOT / "data" / "robust"))
    ap.add_argument("--jobs", type=int, default=1, help="processes in parallel (one (problem, strategy) each)")
    ap.add_argument("--first", default="", help="strategies run on every problem before the others")
    ap.add_argument("--heldout-final", action="store_true",
                    help="allow the frozen held-out suite 'ho' (run it once, at the end, after the default is final)")
    ap.add_argument("--one", nargs=2, metavar=("PROBLEM", "STRATEGY"), help=argparse.SUPPRESS)
    ap.add_argument("--seed-list", default="", help="with --one: only these comma-separated seeds (a share "
                                                     "of the seeds for one process of another machine; "
                                                     "merge_records.py adds its file to the study's)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = [int(x) for x in args.seed_list.split(",")] if args.seed_list else list(range(args.seeds))
    if args.seed_list and not args.one:
        raise SystemExit("--seed-list goes with --one PROBLEM STRATEGY")
    if args.one:
        problem, strategy = args.one
        path = out / f"{problem}__{strategy}.json"
        old = json.loads(path.read_text()) if path.exists() else None
        done = {r["seed"] for r in old["seeds"]} if old else set()
        rec = run_one(problem, strategy, [s for s in seeds if s not in done], args.incumbent, args.max_evals,
                      args.fast, args.budget, json.loads(args.fit) if args.fit else None,
                      json.loads(args.maximiser) if args.maximiser else None, args.paper_budgets)
        if old:  # more seeds for a file already there: the same settings, the seeds appended
            same = ("incumbent_rule", "budget", "max_evals", "levers")
            if any(old[k] != rec[k] for k in same):
                raise SystemExit(f"{path}: its {same} differ from this run's; use another --out")
            rec["seeds"] = sorted(old["seeds"] + rec["seeds"], key=lambda r: r["seed"])
            rec["wall_s"] += old["wall_s"]
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(rec))
        tmp.replace(path)
        print(f"{problem} {strategy}: {rec['wall_s']:.0f} s", flush=True)
        return
    from mumbo_jax.benchmarks import problems
    names = list(problems.SUITES[args.suite]) if args.suite else []
    names += [p for p in args.problems.split(",") if p]
    frozen = sorted(set(names) & set(problems.SUITES["ho"]))
    if frozen and not args.heldout_final:  # the test suite is not a screen (issue 41, docs/problems.md)
        raise SystemExit(f"{', '.join(frozen)}: the frozen held-out suite 'ho' runs once, at the end, with the "
                         "final default (docs/problems.md); pass --heldout-final to run it")
    jobs = []
    for p in names:
        continuous = not problems.get_problem(p).fidelity_kind == "discrete"
        for s in args.strategies.split(","):
            if continuous and s in CONTINUOUS_TWO_STAGE:
                s = CONTINUOUS_TWO_STAGE[s]
                if s is None:
                    continue
            if _missing_seeds(out / f"{p}__{s}.json", args.seeds):
                jobs.append((p, s))
    rank = {p: i for i, p in enumerate(names)}
    first = set(args.first.split(",")) if args.first else set(ORDER)
    jobs.sort(key=lambda j: (j[1] not in first, rank[j[0]], ORDER.index(j[1]) if j[1] in ORDER else len(ORDER)))
    print(f"{len(jobs)} runs to do", flush=True)
    flags = (["--heldout-final"] if args.heldout_final else []) + ["--seeds", str(args.seeds), "--incumbent", args.incumbent, "--max-evals", str(args.max_evals),
             "--out", str(out)] + (["--fast"] if args.fast else []) + (["--fit", args.fit] if args.fit else []) + (
        ["--maximiser", args.maximiser] if args.maximiser else []) + (
        ["--budget", str(args.budget)] if args.budget else []) + (["--paper-budgets"] if args.paper_budgets else [])
    running: list = []
    while jobs or running:
        while jobs and len(running) < args.jobs:
            p, s = jobs.pop(0)
            claim = out / f"{p}__{s}.running"
            if not _missing_seeds(out / f"{p}__{s}.json", args.seeds):
                continue
            try:  # another launcher on the same folder may hold it
                fd = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                continue
            os.close(fd)
            running.append((subprocess.Popen([sys.executable, __file__, "--one", p, s] + flags), claim))
        time.sleep(0.5)
        for r, claim in running:
            if r.poll() is not None:
                claim.unlink(missing_ok=True)
        running = [(r, c) for r, c in running if r.poll() is None]


if __name__ == "__main__":
    main()
