"""mumbo_jax.runtime.tracing.is_concrete: the one test of "are these values known now"."""

import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.runtime.tracing import is_concrete

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "mumbo_jax"


def test_concrete_values_and_tracers():
    assert is_concrete(jnp.ones(3), np.ones(2), 1.0, None, {"a": jnp.zeros(2), "b": [1, 2]})
    assert is_concrete()
    seen = []

    def f(x, y):
        seen.append((is_concrete(x), is_concrete(y), is_concrete(y, x), is_concrete({"x": x}),
                     is_concrete(jnp.zeros(()))))
        return x

    jax.jit(f)(jnp.ones(2), 3.0)
    jax.vmap(f, in_axes=(0, None))(jnp.ones((2, 2)), 3.0)
    jax.grad(lambda x: f(x, 1.0).sum())(jnp.ones(2))
    # jit traces everything (a new array too); vmap and grad only what they map or differentiate
    assert seen == [(False, False, False, False, False), (False, True, False, False, True),
                    (False, True, False, False, True)]


def test_the_package_tests_for_tracers_in_one_place():
    """No module but runtime/tracing.py asks ``isinstance(..., Tracer)`` itself."""
    found = [str(p.relative_to(PACKAGE)) for p in sorted(PACKAGE.rglob("*.py"))
             if "Tracer" in p.read_text(encoding="utf-8") and p.name != "tracing.py"]
    assert not found, found
