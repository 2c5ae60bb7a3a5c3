"""A benchmark problem, from docs/howto/own-problem.md: a 2-d bowl to maximise, its
optimum 0 at (0.3, 0.7); fidelity 0 (the target) costs 10, the cheap fidelity 1 costs 1
and is the bowl tilted (its optimum moved)."""

import jax.numpy as jnp

import mumbo_jax as mj


def bowl(x):
    return -jnp.sum((x - jnp.asarray([0.3, 0.7])) ** 2)


def tilted_bowl(x):
    return bowl(x) + 0.2 * x[0]


TOY_BOWL = mj.register_problem(mj.discrete_problem(
    "toy_bowl",
    [bowl, tilted_bowl],  # one function per fidelity, target first
    bounds=[[0.0, 1.0], [0.0, 1.0]],
    costs=[10.0, 1.0],
    optimum_value=0.0,
    optimum_location=[0.3, 0.7],
    maximise=True,
))
