"""mumbo-jax: multi-fidelity and multi-task Bayesian optimisation with MUMBO.

The numerical core expects float64: call
``jax.config.update("jax_enable_x64", True)`` before using the library.
"""
