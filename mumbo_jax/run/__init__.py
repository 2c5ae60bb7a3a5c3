"""Applications: config files, the CLI, strategy comparisons, crash-safe tuning."""

__all__: list[str] = []  # a namespace of modules; the public API is re-exported by mumbo_jax
