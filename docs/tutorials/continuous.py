"""Tutorial: a continuous fidelity.

The fidelity z is a number in [0, 1] (1 is the target: e.g. the fraction of a data set
used to train), with a known cost 0.1 + z^2. The model is a product kernel over X x Z;
MUMBO chooses x and z together.

    python docs/tutorials/continuous.py
    MUMBO_TUTORIAL_STEPS=2 python docs/tutorials/continuous.py
"""

import os

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import mumbo_jax as mj  # noqa: E402

STEPS = int(os.environ.get("MUMBO_TUTORIAL_STEPS", "8"))
OUT = os.environ.get("MUMBO_TUTORIAL_OUT", ".")  # where the plot goes


def objective(x, z):
    """Maximised; at z = 1 the target, at smaller z a biased, cheaper version."""
    return -((x[0] - 0.3) ** 2) - 0.5 * (1.0 - z) * x[0]


def cost(z):
    return 0.1 + z**2


spec = mj.product_model(bounds=[(0.0, 1.0)], fidelity_bounds=(0.0, 1.0))
space = mj.continuous_fidelity((0.0, 1.0), cost=lambda z: 0.1 + jnp.asarray(z) ** 2)
task = mj.make_task(spec, mj.target_value(1.0), space)
opt = mj.AskTell(task, mj.BOSettings(strategy="mumbo"), seed=0)

spent, where = 0.0, []
for step in range(opt.n_design + STEPS):
    x, z = opt.ask()
    opt.tell(x, z, objective(x, z))
    where.append((x[0], z, step >= opt.n_design))
    if step >= opt.n_design:
        spent += cost(z)
        print(f"step {step - opt.n_design + 1}: z = {z:.3f} (cost {cost(z):.3f}), x = {x[0]:.3f}")
x_best, mean = opt.incumbent()
print(f"cost spent {spent:.2f}; recommended x = {x_best[0]:.3f} (the optimum is 0.3), predicted g = {mean:.4f}")

# where the evaluations went: the design (grey) and MUMBO's choices (numbered), over x and z
fig, ax = plt.subplots(figsize=(5, 3.5))
design = [(a, b) for a, b, bo in where if not bo]
chosen = [(a, b) for a, b, bo in where if bo]
ax.scatter(*zip(*design), color="0.6", label="initial design")
ax.scatter(*zip(*chosen), color="C0", label="MUMBO's decisions")
for k, (a, b) in enumerate(chosen, 1):
    ax.annotate(str(k), (a, b), textcoords="offset points", xytext=(4, 2), fontsize="x-small")
ax.axvline(0.3, color="k", ls=":", lw=1, label="the optimum at z = 1")
ax.axvline(float(x_best[0]), color="C3", lw=1, label="the recommendation")
ax.set_xlabel("x")
ax.set_ylabel("fidelity z (cost 0.1 + z^2)")
ax.legend(fontsize="x-small")
fig.tight_layout()
fig.savefig(os.path.join(OUT, "continuous.png"), dpi=100)
print("plot: continuous.png")
