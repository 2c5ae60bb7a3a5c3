import jax

# The numerical core is written for float64 (see README, "Precision").
jax.config.update("jax_enable_x64", True)
# The compiled loop's step clock uses host callbacks inside a while_loop, which can hang
# the CPU client under asynchronous dispatch (jax-ml/jax#25861).
jax.config.update("jax_cpu_enable_async_dispatch", False)
