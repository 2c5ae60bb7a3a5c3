"""BO machinery: the maximiser over X x Z, decision rules, ask/tell, the compiled loop."""

__all__: list[str] = []  # a namespace of modules; the public API is re-exported by mumbo_jax
