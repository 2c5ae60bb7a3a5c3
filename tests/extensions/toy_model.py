"""A GP model, from docs/howto/write-a-model.md: rank-1 coregionalisation of a
squared-exponential kernel with one noise variance, registered as ``se_icm`` so that a
configuration may name it (``model = "se_icm"``)."""

import dataclasses

import jax.numpy as jnp
import tinygp

import mumbo_jax as mj
from mumbo_jax.gp import kernels


@mj.register_model
@dataclasses.dataclass(frozen=True, kw_only=True)
class SquaredExpICM(mj.DiscreteModel):
    """k((x,i),(x',j)) = exp(-|(x - x') / l|^2 / 2) (w_i w_j + [i = j] kappa_i)."""

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
