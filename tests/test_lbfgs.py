"""The fit's L-BFGS (mumbo_jax.gp.lbfgs): optima against closed forms, one traced copy of
the objective, and the line search's handling of NaN regions and kinks."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from scipy.optimize import minimize as scipy_minimize

from mumbo_jax.gp import lbfgs


def _rosenbrock(p):
    a = p["a"]
    return jnp.sum(100.0 * (a[1:] - a[:-1] ** 2) ** 2 + (1.0 - a[:-1]) ** 2)


@pytest.mark.parametrize("dim", [2, 5])
def test_reaches_the_rosenbrock_minimum(dim):
    start = {"a": jnp.asarray([-1.2, 1.0, 0.5, -0.3, 0.8][:dim])}
    p, v = jax.jit(lambda s: lbfgs.minimize(_rosenbrock, s, 200, 1e-10))(start)
    np.testing.assert_allclose(np.asarray(p["a"]), np.ones(dim), atol=1e-6)  # the closed-form minimum
    assert float(v) < 1e-12
    np.testing.assert_allclose(float(v), float(_rosenbrock(p)), rtol=1e-12, atol=1e-20)


def test_reaches_an_ill_conditioned_quadratic_minimum_and_matches_scipy():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    hess = q @ np.diag(np.logspace(0, 5, 6)) @ q.T
    centre = rng.standard_normal(6)
    f = lambda p: 0.5 * (p["x"] - centre) @ jnp.asarray(hess) @ (p["x"] - centre) + 2.0
    p, v = jax.jit(lambda s: lbfgs.minimize(f, s, 500, 1e-9))({"x": jnp.zeros(6)})
    np.testing.assert_allclose(np.asarray(p["x"]), centre, atol=1e-8)  # H^-1 (H c) = c
    ref = scipy_minimize(lambda x: float(f({"x": jnp.asarray(x)})), np.zeros(6),
                         jac=lambda x: np.asarray(jax.grad(lambda y: f({"x": y}))(jnp.asarray(x))),
                         method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 2000})
    assert float(v) <= ref.fun + 1e-9


def test_the_program_holds_the_objective_once():
    """Tracing the loop traces the objective once (optax's lbfgs with its zoom line search:
    three times, each compiled code of its own)."""
    traces = []

    def f(p):
        traces.append(1)
        return _rosenbrock(p)

    start = {"a": jnp.asarray([-1.2, 1.0])}
    jax.jit(lambda s: lbfgs.minimize(f, s, 50, 1e-8)).lower(start)
    assert len(traces) == 1
    traces.clear()

    def with_optax(s):
        opt = optax.lbfgs()
        value, grad = jax.value_and_grad(f)(s)
        state = optax.tree.set(opt.init(s), value=value, grad=grad)
        return opt.update(grad, state, s, value=value, grad=grad, value_fn=f)

    jax.jit(with_optax).lower(start)
    assert len(traces) == 3  # what the single evaluation site replaces


def test_a_nan_region_shrinks_the_step_and_the_minimum_beside_it_is_found():
    """The objective is NaN beyond 2 (a failed Cholesky factor, say) and smallest at 1.9:
    a trial in the NaN region counts as too high."""
    f = lambda p: jnp.where(p["x"][0] < 2.0, (p["x"][0] - 1.9) ** 2 * 1e3, jnp.nan)
    p, v = jax.jit(lambda s: lbfgs.minimize(f, s, 100, 1e-10))({"x": jnp.asarray([-5.0])})
    assert np.isfinite(float(v))
    np.testing.assert_allclose(float(p["x"][0]), 1.9, atol=1e-6)


def test_a_kink_never_raises_the_objective():
    """At the kink of |x - 0.3| no point meets the curvature condition: the line search
    falls back to its best point or stops, and never returns a higher value."""
    f = lambda p: jnp.abs(p["x"][0] - 0.3) + 0.01 * p["x"][1] ** 2
    start = {"x": jnp.asarray([4.0, 1.0])}
    p, v = jax.jit(lambda s: lbfgs.minimize(f, s, 100, 1e-12))(start)
    assert np.isfinite(float(v)) and float(v) < float(f(start))
    assert abs(float(p["x"][0]) - 0.3) < 1e-2
    np.testing.assert_allclose(float(v), float(f(p)), rtol=1e-12)


def test_more_iterations_never_end_higher_and_a_nan_start_stops():
    f = _rosenbrock
    start = {"a": jnp.asarray([-1.2, 1.0, 0.5])}
    run = jax.jit(lambda s, cap: lbfgs.minimize(f, s, cap, 1e-12))
    values = [float(run(start, cap)[1]) for cap in (0, 1, 2, 5, 10, 40)]
    assert values[0] == pytest.approx(float(f(start)))  # a cap of 0 returns the start
    assert all(b <= a for a, b in zip(values, values[1:])) and values[-1] < 1e-3
    p, v = run({"a": jnp.asarray([jnp.nan, 1.0, 0.5])}, 40)
    assert np.isnan(float(v))
