"""Tutorial: your own black box with ask/tell.

A function of two inputs that you can evaluate at three fidelities (0 is the target,
cost 100; 1 and 2 are cheaper approximations, costs 10 and 1). MUMBO decides where and at
which fidelity to evaluate next; you evaluate and tell it the result.

    python docs/tutorials/asktell.py            # 10 BO steps after the initial design
    MUMBO_TUTORIAL_STEPS=2 python docs/tutorials/asktell.py   # what CI runs
"""

import json
import os

import jax

jax.config.update("jax_enable_x64", True)  # the numerical core needs float64

import mumbo_jax as mj  # noqa: E402

STEPS = int(os.environ.get("MUMBO_TUTORIAL_STEPS", "10"))
COSTS = [100.0, 10.0, 1.0]


def black_box(x, z):
    """Your expensive function at fidelity z (maximised). The cheap fidelities are
    shifted and tilted copies of the target."""
    target = -((x[0] - 1.0) ** 2 + (x[1] - 3.0) ** 2)
    return target - 0.5 * z * (x[0] - 1.0) + 0.1 * z


# the model over X x Z (an ICM over 3 fidelities), the target (fidelity 0) and the costs
spec = mj.icm_model(bounds=[(-5.0, 5.0), (0.0, 10.0)], n_fidelities=3)
task = mj.make_task(spec, mj.target_fidelity(0), mj.discrete_fidelities(COSTS))
settings = mj.BOSettings(strategy="mumbo")  # the library defaults
opt = mj.AskTell(task, settings, seed=0)

spent = 0.0
for step in range(opt.n_design + STEPS):  # the initial design (2 d points per fidelity), then BO
    x, z = opt.ask()
    y = black_box(x, z)
    opt.tell(x, z, y)
    if step >= opt.n_design:
        spent += COSTS[z]
        x_best, mean, sd = opt.recommendation()
        print(f"step {step - opt.n_design + 1}: evaluated fidelity {z} at x = ({x[0]:.3f}, {x[1]:.3f}), "
              f"cost spent {spent:g}; recommend ({x_best[0]:.3f}, {x_best[1]:.3f}), "
              f"predicted g = {mean:.3f} +- {1.96 * sd:.3f}")

fit_s, gstar_s, maximise_s = opt.timings[-1]
print(f"last decision: fit {fit_s:.2f} s, g* {gstar_s:.2f} s, maximisation {maximise_s:.2f} s")

# the optimiser's state is plain data: save it, restore it, and it makes the same decision
saved = json.dumps(opt.state_dict())
restored = mj.AskTell.from_state(task, settings, json.loads(saved))
x_next, z_next = opt.ask()
x_again, z_again = restored.ask()
assert z_next == z_again and max(abs(a - b) for a, b in zip(x_next, x_again)) < 1e-9
print(f"restored from {len(saved)} bytes of JSON: the same next decision (fidelity {z_next})")
