"""Decision overhead of MUMBO-N against MTBO-N as the number of samples N grows.

    python experiments/paper/overhead_mumbo_vs_mtbo.py                       # Hartmann-3 and Hartmann-6
    python experiments/paper/overhead_mumbo_vs_mtbo.py --problems hartmann6 --samples 1 10 50 200 1000

On a posterior fitted to a random design (``--points`` per fidelity) the script times
one decision of each strategy, the hyper-parameter fit excluded (it is the same for
both): MUMBO-N = sampling N values of g* plus maximising MUMBO / cost; MTBO-N = drawing
the representer points and maximising the entropy-search gain / cost with N Monte Carlo
samples of g at the representers. Both use the same maximiser settings (the library
defaults: 2,000 candidates per fidelity, 8 starts x 40 Adam steps). Each time is the
median of ``--repeats`` calls after a compiling call. Prints a table, writes the rows to
``data/overhead_mumbo_vs_mtbo.json`` (``--out``; RESULTS.md's table is rendered from
it by ``experiments/render_results.py``) and draws ``docs/figures/overhead_mumbo_vs_mtbo.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

try:
    import mumbo_jax  # noqa: F401
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from mumbo_jax.gp import fitting
from mumbo_jax.bo import rules, stages
from mumbo_jax.bo.settings import BOSettings
from mumbo_jax.benchmarks import problems, tasks  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "data" / "overhead_mumbo_vs_mtbo.json"
FIG = ROOT / "docs" / "figures" / "overhead_mumbo_vs_mtbo.png"


def _posterior(name, per_fidelity, key):
    prob = problems.get_problem(name)
    task = tasks.problem_task(prob)
    x, z = stages.initial_design(task, jax.random.PRNGKey(key), per_fidelity)
    zp = z.astype(int) if prob.is_discrete else z
    y = jax.vmap(lambda a, b: problems.objective(prob, a, b))(x, zp)
    post = fitting.fit(task.spec, x, zp, y, jax.random.PRNGKey(key + 1), n_restarts=2, max_iter=100)
    return task, post, int(x.shape[0])


def _time_decision(settings, task, post, repeats):
    def once(i):
        k1, k2 = jax.random.split(jax.random.PRNGKey(100 + i))
        t0 = time.perf_counter()
        g = jax.block_until_ready(stages.gstar_stage(settings, task, post, k1))
        prop = jax.block_until_ready(stages.maximise_stage(settings, task, post, g, k2))
        return time.perf_counter() - t0, prop

    once(-1)  # compile
    times = [once(i)[0] for i in range(repeats)]
    return float(np.median(times))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=["hartmann3", "hartmann6"])
    ap.add_argument("--samples", nargs="+", type=int, default=[1, 10, 50, 200])
    ap.add_argument("--points", type=int, default=None, help="design points per fidelity (default 4 d)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    load_start = os.getloadavg()

    rows = []
    for name in args.problems:
        prob = problems.get_problem(name)
        per = args.points or 4 * prob.dim
        task, post, n = _posterior(name, per, 0)
        print(f"{name}: posterior on {n} observations ({per} per fidelity)", flush=True)
        for N in args.samples:
            for strategy in ("mumbo", "mtbo"):
                kw = {"gstar": {"samples": N}} if strategy == "mumbo" else {"options": {"mtbo": {"samples": N}}}
                settings = BOSettings(strategy=strategy, **kw)
                t = _time_decision(settings, task, post, args.repeats)
                row = {"problem": name, "strategy": strategy, "samples": N, "observations": n,
                       "decision_s": t, "n_candidates": settings.maximiser.n_candidates,
                       "mtbo_representers": rules.rule_for(settings).options["representers"],
                       "mtbo_fantasies": rules.rule_for(settings).options["fantasies"]}
                rows.append(row)
                print(f"  {strategy.upper()}-{N}: {t:.3f} s per decision", flush=True)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": "python experiments/paper/overhead_mumbo_vs_mtbo.py " + " ".join(argv or sys.argv[1:]),
                               "device": jax.devices()[0].device_kind, "jax": jax.__version__,
                               "cpu_count": os.cpu_count(), "loadavg_start": load_start,
                               "loadavg_end": os.getloadavg(), "repeats": args.repeats, "rows": rows}, indent=1) + "\n")

    print("\n| problem | N | MUMBO-N (s) | MTBO-N (s) | MTBO / MUMBO |\n|---|---|---|---|---|")
    for name in args.problems:
        for N in args.samples:
            a = next(r["decision_s"] for r in rows if r["problem"] == name and r["samples"] == N and r["strategy"] == "mumbo")
            b = next(r["decision_s"] for r in rows if r["problem"] == name and r["samples"] == N and r["strategy"] == "mtbo")
            print(f"| {name} | {N} | {a:.3f} | {b:.3f} | {b / a:.1f} |")

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for i, name in enumerate(args.problems):
        for strategy, ls in (("mumbo", "-"), ("mtbo", "--")):
            pts = [(r["samples"], r["decision_s"]) for r in rows if r["problem"] == name and r["strategy"] == strategy]
            ax.plot(*zip(*pts), ls=ls, marker="o", color=f"C{i}", label=f"{strategy.upper()}-N, {name}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("samples N (g* for MUMBO, Monte Carlo samples of g for MTBO)")
    ax.set_ylabel("seconds per decision (fit excluded)")
    ax.set_title("decision overhead as the samples grow")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    FIG.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(FIG)
    print(f"figure: {FIG}")


if __name__ == "__main__":
    main()
