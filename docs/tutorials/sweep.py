"""Tutorial: a compiled sweep over seeds, and its plot.

``run_problem`` runs the whole BO loop for several seeds with a handful of compiled XLA
programs (fit, g*, maximisation, evaluate-and-append) shared by every step and seed. The
result is a ``History`` of numpy arrays with a leading seed axis.

    python docs/tutorials/sweep.py                  # 5 seeds, budget 100 (a few minutes)
    MUMBO_TUTORIAL_STEPS=2 python docs/tutorials/sweep.py    # CI: 2 seeds, tiny budget
"""

import os

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from mumbo_jax.benchmarks import problems, tasks  # noqa: E402
import mumbo_jax as mj  # noqa: E402

TINY = os.environ.get("MUMBO_TUTORIAL_STEPS") is not None
SEEDS = [0, 1] if TINY else [0, 1, 2, 3, 4]
BUDGET = 10.0 if TINY else 100.0  # cost spent after the initial design
OUT = os.environ.get("MUMBO_TUTORIAL_OUT", ".")  # where the plot goes

problem = problems.get_problem("forrester")  # the paper's 1-D Forrester, 3 fidelities, costs 10/5/2
settings = mj.BOSettings(strategy="mumbo")  # the paper's MUMBO (the library's default is "robust")
if TINY:  # the same rule with smaller g* and candidate sets: only to keep CI short
    settings = settings.replace(gstar=mj.GstarSettings(samples=5, grid=500),
                                maximiser=mj.MaximiserSettings(n_candidates=200, n_starts=2, polish_steps=5))
hist = tasks.run_problem(problem, BUDGET, SEEDS, settings, max_evals=5 if TINY else 60)

for s, seed in enumerate(SEEDS):
    n = int(hist.n_evals[s])
    shares = np.bincount(hist.z[s, :n].astype(int), minlength=3) / max(n, 1)
    print(f"seed {seed}: {n} evaluations, cost spent {hist.cost_spent[s, n]:g}, final regret "
          f"{hist.regret[s, n]:.2e}, share per fidelity {np.round(shares, 2).tolist()}")

# regret of the recommendation against cost spent: each seed's step curve, and their median
grid = np.linspace(0.0, BUDGET, 101)
fig, ax = plt.subplots(figsize=(5, 3.5))
on_grid = []
for s in range(len(SEEDS)):
    n = int(hist.n_evals[s])
    cost, regret = hist.cost_spent[s, : n + 1], hist.regret[s, : n + 1]
    ax.step(cost, regret, where="post", color="C0", alpha=0.25, lw=0.8)
    # the regret in force at each cost of the grid: the last step at or below it
    on_grid.append(regret[np.maximum(np.searchsorted(cost, grid, side="right") - 1, 0)])
ax.plot(grid, np.median(on_grid, axis=0), color="C0", lw=2, label=f"median over {len(SEEDS)} seeds")
ax.set_yscale("log")
ax.set_xlabel("cost spent after the initial design")
ax.set_ylabel("simple regret of the recommendation")
ax.set_title(f"{settings.strategy} on Forrester")
ax.legend(fontsize="small")
fig.tight_layout()
fig.savefig(os.path.join(OUT, "sweep.png"), dpi=100)
print("plot: sweep.png")
