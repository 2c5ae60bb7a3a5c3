"""Tutorial: the functional pipeline under jit and vmap.

kernel -> posterior -> joint moments of (g, y) -> samples of the max value g* ->
MUMBO's gain per unit cost, each a pure function over pytrees. The whole decision is one
jitted function; vmap runs it for several data sets at once.

    python docs/tutorials/functional.py
"""

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import mumbo_jax as mj  # noqa: E402

# data on two fidelities of a 2-D problem (fidelity 0 is the target, 1 is cheap)
rng = np.random.default_rng(0)
x = rng.uniform(size=(30, 2))
z = rng.integers(0, 2, 30)
y = np.sin(6 * x[:, 0]) + x[:, 1] ** 2 - 0.3 * z * x[:, 0]

spec = mj.icm_model(bounds=[(0, 1), (0, 1)], n_fidelities=2, rank=2)
target = mj.target_fidelity(0)
costs = jnp.asarray([[10.0], [1.0]])  # per fidelity
cand = jnp.asarray(rng.uniform(size=(1000, 2)))


@jax.jit
def decide(x, z, y, key):
    """Fit, sample g*, score every candidate at every fidelity: the best (index, fidelity)."""
    k_fit, k_gstar = jax.random.split(key)
    post = mj.fit(spec, x, z, y, k_fit, n_restarts=2)  # marginal likelihood, L-BFGS
    gstar = mj.sample_gstar(k_gstar, post, target, n_samples=10)  # Gumbel max-value samples
    m = mj.joint_moments_fidelities(post, cand, jnp.arange(2), target)  # fields [2, 1000]
    alpha = mj.mumbo_gain(m.mu_g, m.var_g, m.mu_y, m.var_y, m.cov, gstar)
    score = mj.cost_weighted(alpha, costs)  # information about g* per unit cost
    best = jnp.argmax(score)
    return best % cand.shape[0], best // cand.shape[0], jnp.max(score)


i, f, s = decide(jnp.asarray(x), jnp.asarray(z), jnp.asarray(y), jax.random.PRNGKey(1))
print(f"evaluate x = {np.asarray(cand[i])} at fidelity {int(f)} (gain per unit cost {float(s):.4f})")

# the same decision for four data sets at once: vmap over a leading axis
ys = jnp.stack([jnp.asarray(y + 0.3 * k * np.cos(5 * x[:, 1])) for k in range(4)])
keys = jax.random.split(jax.random.PRNGKey(2), 4)
idx, fid, _ = jax.vmap(decide, in_axes=(None, None, 0, 0))(jnp.asarray(x), jnp.asarray(z), ys, keys)
print("four data sets:", [(int(a), int(b)) for a, b in zip(idx, fid)])

# the gain is differentiable in the candidate: the maximiser polishes with its gradient
post = mj.fit(spec, jnp.asarray(x), jnp.asarray(z), jnp.asarray(y), jax.random.PRNGKey(0))
gstar = mj.sample_gstar(jax.random.PRNGKey(3), post, target, n_samples=10)


def gain_at(xc, fidelity):
    m = mj.joint_moments(post, xc[None], jnp.asarray([fidelity]), target)
    return mj.mumbo_gain(m.mu_g, m.var_g, m.mu_y, m.var_y, m.cov, gstar)[0]


g = jax.grad(gain_at)(cand[i], int(f))
assert np.all(np.isfinite(np.asarray(g)))
print(f"d gain / d x at the chosen candidate: {np.asarray(g)}")
