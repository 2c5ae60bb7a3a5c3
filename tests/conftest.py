import jax

# The numerical core is written for float64 (see README, "Precision").
jax.config.update("jax_enable_x64", True)
# The compiled loop's step clock uses host callbacks inside a while_loop, which can hang
# the CPU client under asynchronous dispatch (jax-ml/jax#25861).
jax.config.update("jax_cpu_enable_async_dispatch", False)

import os

# The CLI keeps compiled programs in a persistent cache (MUMBO_JAX_CACHE); tests that call
# it in-process would switch that cache on for the whole session (and share it with other
# processes). Tests of the cache set their own folder in a subprocess.
os.environ["MUMBO_JAX_CACHE"] = "off"
