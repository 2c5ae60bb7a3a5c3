"""One-file extensions written from the how-tos alone, with the top-level names of
``mumbo_jax`` (tests/test_extension_surface.py runs them): a decision rule with a knob
(docs/howto/write-a-rule.md), a benchmark problem (docs/howto/own-problem.md) and a GP
model (docs/howto/write-a-model.md)."""
