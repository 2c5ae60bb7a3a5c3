"""mumbo-jax: multi-fidelity and multi-task Bayesian optimisation with MUMBO.

A functional core: model spec -> fitted posterior -> joint moments of (g, y) ->
samples of the max value g* -> MUMBO's information gain. Every piece is a pure
function over pytrees that jit-compiles and vmaps.

The numerical core expects float64: call
``jax.config.update("jax_enable_x64", True)`` before using the library.
"""

from mumbo_jax.acquisitions import cost_weighted, mes_gain, mumbo_gain
from mumbo_jax.fitting import fit, fit_params, neg_log_marginal
from mumbo_jax.maxvalue import exact_max_samples, gumbel_max_samples, sample_gstar
from mumbo_jax.models import (
    ModelSpec,
    ar1_model,
    default_params,
    fabolas_model,
    icm_model,
    product_model,
)
from mumbo_jax.posterior import (
    Moments,
    Posterior,
    Target,
    condition,
    joint_moments,
    joint_moments_fidelities,
    predict,
    target_fidelity,
    target_joint,
    target_moments,
    target_value,
    task_mean,
)

__version__ = "0.1.0"
