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

import mumbo_jax as mj  # noqa: E402

STEPS = int(os.environ.get("MUMBO_TUTORIAL_STEPS", "8"))


def objective(x, z):
    """Maximised; at z = 1 the target, at smaller z a biased, cheaper version."""
    return -((x[0] - 0.3) ** 2) - 0.5 * (1.0 - z) * x[0]


def cost(z):
    return 0.1 + z**2


spec = mj.product_model(bounds=[(0.0, 1.0)], fidelity_bounds=(0.0, 1.0))
space = mj.continuous_fidelity((0.0, 1.0), cost=lambda z: 0.1 + jnp.asarray(z) ** 2)
task = mj.make_task(spec, mj.target_value(1.0), space)
opt = mj.AskTell(task, mj.BOSettings(strategy="mumbo"), seed=0)

spent = 0.0
for step in range(opt.n_design + STEPS):
    x, z = opt.ask()
    opt.tell(x, z, objective(x, z))
    if step >= opt.n_design:
        spent += cost(z)
        print(f"step {step - opt.n_design + 1}: z = {z:.3f} (cost {cost(z):.3f}), x = {x[0]:.3f}")
x_best, mean = opt.incumbent()
print(f"cost spent {spent:.2f}; recommended x = {x_best[0]:.3f} (the optimum is 0.3), predicted g = {mean:.4f}")
