"""The registry's old home: :mod:`mumbo_jax.registry` (shared by the rules, the problems
and the models, so it lives below every layer). Kept for imports not yet moved."""

from mumbo_jax.registry import Names, Registry, check_name, frozen_options

__all__ = ["Registry", "Names", "check_name", "frozen_options"]
