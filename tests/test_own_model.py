"""A model written outside the package is one class: it fits, predicts (against dense
numpy GP algebra), is a static ``jit`` argument and drives ask/tell like the built-in ones."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import tinygp

import mumbo_jax
from mumbo_jax.benchmarks import problems
from mumbo_jax.gp import kernels, models, moments

from .bo_helpers import FAST


@dataclasses.dataclass(frozen=True, kw_only=True)
class SquaredExpICM(models.DiscreteModel):
    """Rank-1 coregionalisation of a squared-exponential kernel, one noise variance:
    k((x,i),(x',j)) = exp(-|(x - x') / l|^2 / 2) (w_i w_j + [i = j] kappa_i)."""

    kind = "se_icm"

    def default_params(self):
        L = self.n_fidelities
        return {"log_noise": jnp.full(1, jnp.log(1e-3)), "log_ls": jnp.full(self.dim, jnp.log(0.3)),
                "w": jnp.full(L, 0.7), "log_kappa": jnp.full(L, jnp.log(0.1))}

    def coregionalisation(self, params):
        return jnp.outer(params["w"], params["w"]) + jnp.diag(jnp.exp(params["log_kappa"]))

    def build_kernel(self, params):
        kx = tinygp.transforms.Linear(1.0 / jnp.exp(params["log_ls"]), tinygp.kernels.ExpSquared())
        return kernels.ICM(kx, self.coregionalisation(params))

    def signal_variances(self, params):
        return jnp.diag(self.coregionalisation(params))


def _data(n=30, seed=0):
    prob = problems.get_problem("forrester")
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 1))
    z = rng.integers(0, 3, n)
    y = np.asarray([float(problems.objective(prob, jnp.asarray(xi), int(zi))) for xi, zi in zip(x, z)])
    return x, z, y


def test_own_model_fits_and_predicts_like_numpy():
    spec = SquaredExpICM(bounds=[(0.0, 1.0)], n_fidelities=3)
    assert spec.kind == "se_icm" and spec.discrete and spec.n_noise == 1 and hash(spec) == hash(
        SquaredExpICM(bounds=((0.0, 1.0),), n_fidelities=3))
    x, z, y = _data()
    post = mumbo_jax.fit(spec, x, z, y, jax.random.PRNGKey(0), n_restarts=3, max_iter=100)
    p = jax.tree_util.tree_map(np.asarray, post.params)
    # the fit improved on the defaults
    scaling = spec.make_scaling(jnp.asarray(y))
    nlml = lambda q: float(mumbo_jax.neg_log_marginal(spec, q, scaling, jnp.asarray(x), jnp.asarray(z),
                                                      jnp.asarray(y), jnp.ones(len(y))))
    assert nlml(post.params) < nlml(spec.default_params()) - 1.0

    # prediction at the target against a dense numpy GP with the fitted hyper-parameters
    xs = np.linspace(0.0, 1.0, 9)[:, None]
    mean, var = moments.predict(post, xs, np.zeros(9, int))

    def k(x1, z1, x2, z2):
        r2 = np.sum(((x1[:, None, :] - x2[None, :, :]) / np.exp(p["log_ls"])) ** 2, axis=-1)
        B = np.outer(p["w"], p["w"]) + np.diag(np.exp(p["log_kappa"]))
        return np.exp(-0.5 * r2) * B[np.ix_(z1, z2)]

    ys = (y - y.mean()) / y.std()
    noise = spec.noise_floor + np.exp(p["log_noise"][0])
    K = k(x, z, x, z) + noise * np.eye(len(y))
    ks = k(xs, np.zeros(9, int), x, z)
    mean_np = y.mean() + y.std() * ks @ np.linalg.solve(K, ys)
    var_np = y.std() ** 2 * (np.diag(k(xs, np.zeros(9, int), xs, np.zeros(9, int))) - np.sum(
        ks * np.linalg.solve(K, ks.T).T, axis=1))
    np.testing.assert_allclose(mean, mean_np, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(var, var_np, rtol=1e-6, atol=1e-9)

    # a static jit argument, as the built-in models; the joint moments MUMBO needs
    objective = jax.jit(mumbo_jax.neg_log_marginal, static_argnums=0)
    np.testing.assert_allclose(float(objective(spec, post.params, scaling, jnp.asarray(x), jnp.asarray(z),
                                               jnp.asarray(y), jnp.ones(len(y)))), nlml(post.params),
                               rtol=1e-7)  # one fused program against op by op; the fitted noise is at its floor
    # (1e-9), so their rounding differs by the factor's condition number times 1e-16
    mom = mumbo_jax.joint_moments(post, xs, np.ones(9, int), mumbo_jax.target_fidelity(0))
    assert np.all(np.isfinite(np.asarray(mom.cov))) and np.all(np.asarray(mom.var_y) > 0)


def test_own_model_drives_asktell():
    spec = SquaredExpICM(bounds=[(0.0, 1.0)], n_fidelities=3)
    prob = problems.get_problem("forrester")
    task = mumbo_jax.make_task(spec, mumbo_jax.target_fidelity(0), mumbo_jax.discrete_fidelities(prob.costs))
    opt = mumbo_jax.AskTell(task, FAST, seed=0)
    for _ in range(opt.n_design + 2):
        x, z = opt.ask()
        assert 0.0 <= float(np.asarray(x)[0]) <= 1.0 and z in (0, 1, 2)
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
    assert set(opt.params) == set(spec.default_params())


def test_builtin_models_keep_their_names():
    """The names configs and saved runs use (``model = "icm"``) are the classes' ``kind``."""
    b = [(0.0, 1.0)]
    built = [models.icm_model(b, 2), models.icm_disc_model(b, 2), models.ar1_model(b, 2), models.product_model(b),
             models.fabolas_model(b), models.basis_model(b, fidelity_bounds=(0.0, 1.0)),
             models.basis_model(b, n_fidelities=2)]
    assert [m.kind for m in built] == ["icm", "icm_disc", "ar1", "product", "fabolas", "linear_basis", "task_basis"]
    assert all(isinstance(m, models.ModelSpec) and models.MODELS[m.kind] is type(m) for m in built)
    assert models.KINDS == ("icm", "ar1", "product", "fabolas", "linear_basis", "task_basis", "icm_disc")
    assert models.DISCRETE_KINDS == ("icm", "ar1", "task_basis", "icm_disc")
    assert models.ICM_KINDS == ("icm", "icm_disc") and models.BASIS_KINDS == ("linear_basis", "task_basis")
