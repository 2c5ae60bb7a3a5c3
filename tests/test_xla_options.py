"""The library's compile options (mumbo_jax.runtime.xla_options): parsed from the environment,
accepted by this JAX, applied to the programs the library compiles at the top level and
left out where a library function is traced inside another program."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.runtime import xla_options
from mumbo_jax.gp import models, moments, posterior


def test_the_environment_chooses_the_options():
    assert xla_options.compiler_options({}) == xla_options.FAST_COMPILE
    assert xla_options.compiler_options({xla_options.ENV: " Fast "}) == xla_options.FAST_COMPILE
    assert xla_options.compiler_options({xla_options.ENV: "default"}) is None
    with pytest.raises(ValueError, match="MUMBO_JAX_XLA_OPTIONS='fastest'"):
        xla_options.compiler_options({xla_options.ENV: "fastest"})


def test_this_jax_accepts_the_options():
    # a JAX whose XLA dropped the option fails here first ("No such compile option"):
    # MUMBO_JAX_XLA_OPTIONS=default is then the way out (the module's docstring)
    f = jax.jit(lambda v: jnp.sin(v) @ v, compiler_options=xla_options.FAST_COMPILE)
    np.testing.assert_allclose(f(jnp.eye(3)), np.sin(np.eye(3)) @ np.eye(3))


def test_options_reach_top_level_programs_only(monkeypatch):
    # an option XLA does not know makes the top-level compile fail: proof that it is passed
    monkeypatch.setattr(xla_options, "OPTIONS", {"xla_no_such_option_for_this_test": True})
    monkeypatch.setattr(xla_options, "_accepted", {jax.default_backend(): True})  # skip the probe
    f = xla_options.jit(lambda v: jnp.cos(v) * 2.0)
    with pytest.raises(Exception, match="No such compile option"):
        f(jnp.ones(3))
    # traced inside the user's program (jit, vmap, grad) it is a plain jax.jit: no error
    np.testing.assert_allclose(jax.jit(f)(jnp.ones(3)), 2 * np.cos(np.ones(3)))
    np.testing.assert_allclose(jax.vmap(f)(jnp.ones(3)), 2 * np.cos(np.ones(3)))
    np.testing.assert_allclose(jax.grad(lambda v: f(v).sum())(jnp.ones(3)), -2 * np.sin(np.ones(3)))


def test_a_backend_that_does_not_know_the_options_compiles_without_them(monkeypatch):
    # as a GPU build of JAX: "No such compile option" from the probe, then XLA's defaults
    monkeypatch.setattr(xla_options, "OPTIONS", {"xla_no_such_option_for_this_test": True})
    monkeypatch.setattr(xla_options, "_accepted", {})
    f = xla_options.jit(lambda v: jnp.cos(v) * 2.0)
    np.testing.assert_allclose(f(jnp.ones(3)), 2 * np.cos(np.ones(3)))
    assert xla_options.active_options() is None
    assert xla_options._accepted == {jax.default_backend(): False}


def test_a_library_program_inside_a_users_jit_matches_its_top_level_call():
    # the same function traced two ways (with the options at the top level, plain inside
    # the user's jit): the same moments up to the two code generators' rounding
    spec = models.icm_model([[0.0, 1.0], [0.0, 1.0]], n_fidelities=2)
    rng = np.random.default_rng(0)
    x, z = rng.uniform(size=(12, 2)), rng.integers(0, 2, 12)
    y = np.sin(3 * x[:, 0]) + 0.2 * z
    post = posterior.condition(spec, models.default_params(spec), x, z, y)
    xc = rng.uniform(size=(5, 2))
    target = posterior.target_fidelity(0)
    top = moments.target_moments(post, xc, target)
    inside = jax.jit(lambda p, v: moments.target_moments(p, v, target))(post, jnp.asarray(xc))
    np.testing.assert_allclose(inside, top, rtol=1e-10, atol=1e-12)
    assert xla_options._top_level()
    seen = []
    jax.jit(lambda v: (seen.append(xla_options._top_level()), v)[1])(1.0)
    assert seen == [False]


def test_the_options_are_off_until_enabled(monkeypatch):
    monkeypatch.setattr(xla_options, "OPTIONS", None)
    monkeypatch.setattr(xla_options, "_accepted", {jax.default_backend(): True})
    f = xla_options.jit(lambda v: jnp.cos(v) * 2.0)
    monkeypatch.setenv(xla_options.ENV, "default")
    assert xla_options.enable() is None and xla_options.active_options() is None
    monkeypatch.delenv(xla_options.ENV)
    assert xla_options.enable() == xla_options.FAST_COMPILE == xla_options.active_options()
    xla_options.disable()
    assert xla_options.active_options() is None
    monkeypatch.setattr(xla_options, "OPTIONS", {"xla_no_such_option_for_this_test": True})
    with pytest.raises(Exception, match="No such compile option"):  # on: the top-level program gets them
        f(jnp.ones(3))
    xla_options.disable()  # off again: a plain jax.jit
    np.testing.assert_allclose(f(jnp.ones(3)), 2 * np.cos(np.ones(3)))


def test_without_jax_trace_state_the_public_checks_tell_a_trace(monkeypatch):
    # a JAX that no longer has the private trace_state_clean: the fallback's answers
    monkeypatch.setattr(xla_options, "_trace_state_clean", [None])
    assert xla_options._top_level((jnp.ones(2),))
    seen = []
    jax.jit(lambda v: (seen.append(xla_options._top_level((v,))), v)[1])(1.0)
    jax.jit(lambda v: (seen.append(xla_options._top_level(())), v)[1])(1.0)  # closed-over constants only
    jax.vmap(lambda v: (seen.append(xla_options._top_level((v,))), v)[1])(jnp.ones(2))
    jax.grad(lambda v: (seen.append(xla_options._top_level((v,))), v)[1])(1.0)
    assert seen == [False, False, False, False]
    monkeypatch.setattr(xla_options, "OPTIONS", {"xla_no_such_option_for_this_test": True})
    monkeypatch.setattr(xla_options, "_accepted", {jax.default_backend(): True})
    f = xla_options.jit(lambda v: jnp.cos(v) * 2.0)
    with pytest.raises(Exception, match="No such compile option"):
        f(jnp.ones(3))
    np.testing.assert_allclose(jax.jit(f)(jnp.ones(3)), 2 * np.cos(np.ones(3)))
    np.testing.assert_allclose(jax.vmap(f)(jnp.ones(3)), 2 * np.cos(np.ones(3)))
    np.testing.assert_allclose(jax.grad(lambda v: f(v).sum())(jnp.ones(3)), -2 * np.sin(np.ones(3)))
