import jax

# The numerical core is written for float64 (see README, "Precision").
jax.config.update("jax_enable_x64", True)
