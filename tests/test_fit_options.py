"""Issue 10's fit options and buffer growth: 32-row buffers, the ftol stop of L-BFGS
(BOSettings.fit_ftol, off by default) and warm-only refits between full refits
(BOSettings.full_refit_every, 1 by default: every refit full)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import asktell, kernel, settings as bo_settings
from mumbo_jax.gp import fitting as fit, models

from .bo_helpers import FAST, drive, with_


def test_buffer_sizes_track_n():
    sizes = [kernel.buffer_size(n) for n in range(0, 2000)]
    assert sizes[0] == kernel.MIN_BUFFER and kernel.buffer_size(300) == 320 and kernel.buffer_size(40) == 64
    for n, s in enumerate(sizes):
        assert s >= n + 1 and s % kernel.BUFFER_STEP == 0
        if n >= 256:
            assert s <= 1.125 * (n + 1) + kernel.BUFFER_STEP
    assert sizes == sorted(sizes) and len(set(sizes[:512])) == 16  # one compilation per 32 rows up to 512
    # growing from a full buffer gives the next size; min_buffer is a floor
    assert kernel.buffer_size(320) == 352 and kernel.buffer_size(512) == 576
    assert kernel.buffer_size(10, 256) == 256 and kernel.buffer_size(256, 256) == 288


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


def test_full_refit_schedule_and_checks():
    s = bo_settings.BOSettings(full_refit_every=3)
    assert [bool(kernel.full_refit_at(s, k)) for k in range(7)] == [True, False, False, True, False, False, True]
    assert all(kernel.full_refit_at(bo_settings.BOSettings(), k) for k in range(5))  # the default: always full
    task = tasks.problem_task(problems.get_problem("forrester"))
    d = kernel.as_params(models.default_params(task.spec))
    assert kernel.are_defaults(task, d)
    assert not kernel.are_defaults(task, {**d, "log_ls": d["log_ls"] + 0.1})
    with pytest.raises(ValueError, match="full_refit_every must be a positive integer"):
        bo_settings.BOSettings(full_refit_every=0)
    for bad in (-1e-9, 1.0, True, "1e-9"):
        with pytest.raises(ValueError, match="fit_ftol must be a number in"):
            bo_settings.BOSettings(fit_ftol=bad)


def test_warm_refit_is_one_start_from_the_previous_params():
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(14, 1))
    z = np.asarray([0, 1] * 7, float)
    y = np.asarray([float(problems.objective(prob, jnp.asarray(xi), int(zi))) for xi, zi in zip(x, z)])
    b = kernel.pad_buffers(x, z, y, 32)
    settings = with_(FAST, fit_restarts=3)
    key = jax.random.PRNGKey(0)
    prev_mask = b.mask.copy()
    prev_mask[13] = 0.0
    d = kernel.as_params(models.default_params(task.spec))
    prev = kernel.fit_stage(settings, task, b._replace(mask=prev_mask), d, key, True, True)
    full = kernel.fit_stage(settings, task, b, prev.params, key, True, True)
    warm = kernel.fit_stage(settings, task, b, prev.params, key, True, False)
    nlml = lambda p: float(fit.neg_log_marginal(task.spec, p, full.scaling, b.x, jnp.asarray(b.z, jnp.int32),
                                                b.y, b.mask))
    # the full refit includes the warm start among its starts: it can only do better
    assert nlml(full.params) <= nlml(warm.params) + 1e-9 * abs(nlml(warm.params))
    assert nlml(warm.params) <= nlml(prev.params)
    # a warm refit is the first start of a full refit alone: from the defaults it is the
    # restart that a full refit's first lane runs
    single = fit.fit_from(task.spec, full.scaling, b.x, jnp.asarray(b.z, jnp.int32), b.y, b.mask,
                          jax.tree_util.tree_map(lambda a: a[None], prev.params), settings.fit_max_iter, 1e-5)[0]
    for name in d:
        np.testing.assert_allclose(np.asarray(warm.params[name]), np.asarray(single[name]), rtol=1e-9, atol=1e-12)


def test_ask_tell_refits_fully_on_schedule_and_from_the_defaults(monkeypatch):
    prob = problems.get_problem("forrester")
    opt = asktell.AskTell(tasks.problem_task(prob), with_(FAST, full_refit_every=2), seed=0)
    while opt.in_initial_design:
        x, z = opt.ask()
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
    calls = []
    fit_stage = kernel.fit_stage
    monkeypatch.setattr(kernel, "fit_stage", lambda *a: calls.append(bool(a[-1])) or fit_stage(*a))
    drive(opt, prob, 3)
    assert calls == [True, False, True]
    opt.params = kernel.as_params(models.default_params(opt.task.spec))  # a resumed optimiser that never fitted
    opt.ask()
    assert calls[-1] is True and len(calls) == 4  # k = 3 is off the schedule: full because of the defaults
