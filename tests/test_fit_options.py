"""Buffer growth (geometric size classes), the ftol stop of the functional L-BFGS and the loop's
refit (BOSettings.fit: fit.restarts starts from the previous hyper-parameters)."""

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.runtime import xla_options
from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import stages
from mumbo_jax.gp import fitting as fit, models

from .bo_helpers import FAST, with_


def test_buffer_sizes_track_n():
    sizes = [stages.buffer_size(n) for n in range(0, 3001)]
    assert stages.buffer_size(3000) == 3072 and stages.buffer_size(10_000) == 10368
    assert sizes[0] == stages.MIN_BUFFER and stages.buffer_size(40) == 64 and stages.buffer_size(300) == 384
    for n, s in enumerate(sizes):
        assert s >= n + 1 and s % stages.BUFFER_STEP == 0
        if n >= 96:  # at most 1.67 times the rows held
            assert s <= 5 / 3 * (n + 1)
    assert sizes == sorted(sizes) and len(set(sizes)) <= 12  # a run from 0 to 3,000 points: at most 12 sizes
    # growing from a full buffer gives the next size; min_buffer is a floor
    assert stages.buffer_size(384) == 576 and stages.buffer_size(96) == 160 and stages.buffer_size(1000) == 1024
    assert stages.buffer_size(10, 256) == 256 and stages.buffer_size(256, 256) == 384


def test_ftol_stops_lbfgs_when_the_objective_stalls():
    """On a quadratic with a gradient tolerance it cannot meet, the ftol test is what
    stops the loop, and only once the decrease per iteration is that small."""
    scales = jnp.asarray([1.0, 30.0, 900.0])
    f = lambda p: 0.5 * jnp.sum(scales * (p["a"] - 1.0) ** 2) + 1.0
    run = jax.jit(lambda p, tol, ftol: fit.lbfgs(f, p, 500, tol, ftol), static_argnums=(2,))
    start = {"a": jnp.asarray([5.0, -3.0, 2.0])}
    _, v_exact = run(start, 1e-9, 0.0)
    _, v_ftol = run(start, 0.0, 1e-9)  # tol 0: only the ftol test (or the cap) can stop it
    assert float(v_ftol) - 1.0 <= 1e-8 and float(v_exact) - 1.0 <= 1e-12
    _, v_coarse = run(start, 0.0, 0.5)  # a coarse ftol stops early, far from the optimum
    assert float(v_coarse) - 1.0 > 1e-3


def test_lbfgs_returns_the_objective_at_its_point_from_the_line_search():
    """The value comes from the line search's state, not a last evaluation: it must be
    the objective at the returned point (a Rosenbrock valley, stopped at a few caps), and
    a start where the objective is NaN stops after one step with a NaN value."""
    f = lambda p: jnp.sum(100.0 * (p["a"][1:] - p["a"][:-1] ** 2) ** 2 + (1.0 - p["a"][:-1]) ** 2)
    start = {"a": jnp.asarray([-1.2, 1.0, 0.5])}
    for cap in (1, 2, 7, 40):
        p, v = jax.jit(lambda s: fit.lbfgs(f, s, cap, 1e-12))(start)
        np.testing.assert_allclose(float(v), float(f(p)), rtol=1e-12, atol=1e-15)
        assert float(v) < float(f(start))
    nan_start = {"a": jnp.asarray([jnp.nan, 1.0, 0.5])}
    _, v = jax.jit(lambda s: fit.lbfgs(f, s, 40, 1e-12))(nan_start)
    assert np.isnan(float(v))


def test_a_refit_runs_fit_restarts_starts_from_the_previous_params():
    """The loop's refit (fit.restarts starts: the previous hyper-parameters, the defaults,
    then random ones) is the functional fit from those starts."""
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(14, 1))
    z = np.asarray([0, 1] * 7, float)
    y = np.asarray([float(problems.objective(prob, jnp.asarray(xi), int(zi))) for xi, zi in zip(x, z)])
    b = stages.pad_buffers(x, z, y, 32)
    settings = with_(FAST, fit={"restarts": 3})
    key = jax.random.PRNGKey(0)
    prev_mask = b.mask.copy()
    prev_mask[13] = 0.0
    d = stages.as_params(models.default_params(task.spec))
    prev = stages.fit_stage(settings, task, b._replace(mask=prev_mask), d, key, True)
    post = stages.fit_stage(settings, task, b, prev.params, key, True)
    inits = fit.restart_inits(task.spec, key, 3, first=prev.params)
    # one program with the library's compile options, as the loop's: the two code generators
    # round differently, and 50 L-BFGS iterations amplify that past 1e-9 (measured 8e-8)
    ref = xla_options.jit(lambda p: fit.fit_from(task.spec, post.scaling, b.x, jnp.asarray(b.z, jnp.int32), b.y,
                                                 b.mask, p, settings.fit.max_iter, 1e-5)[0])(inits)
    for name in d:
        np.testing.assert_allclose(np.asarray(post.params[name]), np.asarray(ref[name]), rtol=1e-9, atol=1e-12)
    kept = stages.fit_stage(settings, task, b, prev.params, key, False)  # no refit: the previous params
    for name in d:
        np.testing.assert_array_equal(np.asarray(kept.params[name]), np.asarray(prev.params[name]))
