"""Tutorial: the functional pipeline under jit and vmap.

kernel -> posterior -> joint moments of (g, y) -> samples of the max value g* ->
MUMBO's gain per unit cost, each a pure function over pytrees. The whole decision is one
jitted function; vmap runs it for several data sets at once.

    python docs/tutorials/functional.py
"""

import os

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

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

# the same decision for four data sets at once: vmap over a leading axis. Each data set
# puts the target's peak elsewhere (centre c_k), so each asks for a different candidate.
centres = np.array([[0.2, 0.2], [0.8, 0.2], [0.2, 0.8], [0.8, 0.8]])
ys = jnp.stack([jnp.asarray(np.exp(-8 * ((x - c) ** 2).sum(1)) - 0.3 * z * x[:, 0]) for c in centres])
keys = jax.random.split(jax.random.PRNGKey(2), 4)
idx, fid, _ = jax.vmap(decide, in_axes=(None, None, 0, 0))(jnp.asarray(x), jnp.asarray(z), ys, keys)
for c, a, b in zip(centres, idx, fid):
    print(f"data set with its peak at {c}: evaluate x = {np.round(np.asarray(cand[a]), 3)} at fidelity {int(b)}")
assert len({(int(a), int(b)) for a, b in zip(idx, fid)}) > 1  # different data, different decisions

# the gain is differentiable in the candidate: the maximiser polishes with its gradient
post = mj.fit(spec, jnp.asarray(x), jnp.asarray(z), jnp.asarray(y), jax.random.PRNGKey(0))
gstar = mj.sample_gstar(jax.random.PRNGKey(3), post, target, n_samples=10)


def gain_at(xc, fidelity):
    m = mj.joint_moments(post, xc[None], jnp.asarray([fidelity]), target)
    return mj.mumbo_gain(m.mu_g, m.var_g, m.mu_y, m.var_y, m.cov, gstar)[0]


g = jax.grad(gain_at)(cand[i], int(f))
assert np.all(np.isfinite(np.asarray(g)))
print(f"d gain / d x at the chosen candidate: {np.round(np.asarray(g), 6)}")

# the first data set's score (gain per unit cost) over the candidates, per fidelity
m = mj.joint_moments_fidelities(post, cand, jnp.arange(2), target)
score = np.asarray(mj.cost_weighted(mj.mumbo_gain(m.mu_g, m.var_g, m.mu_y, m.var_y, m.cov, gstar), costs))
fig, axes = plt.subplots(1, 2, figsize=(8, 3.5), sharey=True, layout="constrained")
for k, ax in enumerate(axes):
    pts = ax.scatter(cand[:, 0], cand[:, 1], c=score[k], s=6,
                     norm=matplotlib.colors.PowerNorm(0.3, vmin=0, vmax=score.max()))
    ax.scatter(x[z == k, 0], x[z == k, 1], marker="x", color="r", label=f"data at fidelity {k}")
    if int(f) == k:
        ax.scatter(*np.asarray(cand[i]), marker="*", s=200, color="w", edgecolor="k", label="the decision")
    ax.set_title(f"fidelity {k} (cost {float(costs[k, 0]):g})")
    ax.set_xlabel("x[0]")
    ax.legend(fontsize="x-small", loc="lower left", framealpha=0.9)
axes[0].set_ylabel("x[1]")
fig.colorbar(pts, ax=axes, label="MUMBO gain per unit cost")
fig.savefig(os.path.join(os.environ.get("MUMBO_TUTORIAL_OUT", "."), "functional.png"), dpi=100)
print("plot: functional.png")
