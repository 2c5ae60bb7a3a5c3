"""Tutorial: your own black box with ask/tell.

A function of two inputs that you can evaluate at three fidelities (0 is the target,
cost 100; 1 and 2 are cheaper approximations, costs 10 and 1). The optimiser, with the
library's default strategy, decides where and at which fidelity to evaluate next; you
evaluate and tell it the result.

    python docs/tutorials/asktell.py            # 20 BO steps after the initial design
    MUMBO_TUTORIAL_STEPS=2 python docs/tutorials/asktell.py   # what CI runs
"""

import json
import os

import jax

jax.config.update("jax_enable_x64", True)  # the numerical core needs float64

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import mumbo_jax as mj  # noqa: E402

STEPS = int(os.environ.get("MUMBO_TUTORIAL_STEPS", "20"))
OUT = os.environ.get("MUMBO_TUTORIAL_OUT", ".")  # where the plot goes
COSTS = [100.0, 10.0, 1.0]


def black_box(x, z):
    """Your expensive function at fidelity z (maximised; the target's maximum is 0 at
    x = (1, 3)). The cheap fidelities are shifted and tilted copies of the target."""
    target = -((x[0] - 1.0) ** 2 + (x[1] - 3.0) ** 2)
    return target - 0.5 * z * (x[0] - 1.0) + 0.1 * z


# the model over X x Z (an ICM over 3 fidelities), the target (fidelity 0) and the costs
spec = mj.icm_model(bounds=[(-5.0, 5.0), (0.0, 10.0)], n_fidelities=3)
task = mj.make_task(spec, mj.target_fidelity(0), mj.discrete_fidelities(COSTS))
settings = mj.BOSettings()  # the library's defaults: the robust rule and recommendation
opt = mj.AskTell(task, settings, seed=0)
print(f"strategy {settings.strategy!r}, recommendation {settings.recommendation.rule!r}; "
      f"initial design: {opt.n_design} evaluations")

spent, trace = 0.0, []
for step in range(opt.n_design + STEPS):  # the initial design (2 d points per fidelity), then BO
    x, z = opt.ask()
    y = black_box(x, z)
    opt.tell(x, z, y)
    if step >= opt.n_design:
        spent += COSTS[z]
        x_best, mean, sd = opt.recommendation()
        true = black_box(x_best, 0)  # only a tutorial knows the truth: the regret is -true
        trace.append((spent, z, mean, sd, true))
        print(f"step {step - opt.n_design + 1:2d}: fidelity {z} at x = ({x[0]:6.3f}, {x[1]:6.3f}), "
              f"cost spent {spent:5g}; recommend ({x_best[0]:6.3f}, {x_best[1]:6.3f}), "
              f"predicted g = {mean:7.3f} +- {1.96 * sd:.3f}, true g = {true:7.3f}")

# the restored optimiser makes the same decision: its state is plain JSON
saved = json.dumps(opt.state_dict())
restored = mj.AskTell.from_state(task, settings, json.loads(saved))
x_next, z_next = opt.ask()
x_again, z_again = restored.ask()
assert z_next == z_again and max(abs(a - b) for a, b in zip(x_next, x_again)) < 1e-9
print(f"restored from {len(saved)} bytes of JSON: the same next decision (fidelity {z_next})")

# the recommendation's predicted and true value against the cost spent, and what was bought
fig, ax = plt.subplots(figsize=(6, 3.5))
cost, fid, mean, sd, true = (list(c) for c in zip(*trace))
ax.errorbar(cost, mean, yerr=[1.96 * s for s in sd], fmt="o-", ms=3, capsize=2, label="predicted g, 95 % interval")
ax.plot(cost, true, "k.--", label="true g at the recommendation")
for f, marker in zip(range(3), "^sx"):
    at = [c for c, k in zip(cost, fid) if k == f]
    ax.plot(at, [ax.get_ylim()[0]] * len(at), marker, ls="", color=f"C{f + 1}",
            label=f"an evaluation at fidelity {f} (cost {COSTS[f]:g})")
ax.axhline(0.0, color="0.5", lw=0.8)
ax.set_xlabel("cost spent after the initial design")
ax.set_ylabel("g at the recommendation")
ax.legend(fontsize="x-small", loc="lower right")
fig.tight_layout()
fig.savefig(os.path.join(OUT, "asktell.png"), dpi=100)
print("plot: asktell.png")
