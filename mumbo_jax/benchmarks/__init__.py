"""Benchmark problems (the paper's Appendix B and more) and real tuning tasks."""

__all__: list[str] = []  # a namespace of modules; the public API is re-exported by mumbo_jax
