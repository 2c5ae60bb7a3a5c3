"""The paper's real tasks as tabulated problems (mumbo_jax.benchmarks.problems.real):
the interpolation, the stored optima, the costs, the combined FASTCV target, tracing, and
table entries recomputed with scikit-learn."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.benchmarks import hpo, tasks
from mumbo_jax.benchmarks import problems as P
from mumbo_jax.benchmarks.problems import real

SVM, CV, CV1 = (P.get_problem(n) for n in P.SUITES["real"])


def _nodes(grid, n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, len(grid), size=(n, 2))


def test_suite_and_records():
    assert P.SUITES["real"] == ("svm_fabolas", "fastcv_svm", "fastcv_svm_cv")
    assert SVM.fidelity_kind == "continuous" and SVM.fidelity_bounds == (0.0, 1.0) and SVM.target_fidelity == 1.0
    assert CV.n_fidelities == 10 and CV.costs == (1.0,) * 10 and CV.target_weights == (0.1,) * 10
    assert CV1.n_fidelities == 1 and CV1.costs == (10.0,) and CV1.target_weights is None
    for p in (SVM, CV, CV1):
        assert not p.maximise and np.array_equal(p.bounds, [[-10.0, 10.0], [-10.0, 10.0]])


def test_svm_interpolation_reproduces_the_table_at_nodes():
    grid, err, _ = real.svm_table()
    assert err.shape == (7, len(grid), len(grid))
    for k in range(7):
        u = k / 6
        assert real.fraction_of(u) == pytest.approx(2.0 ** (k - 6), rel=1e-14)
        for i, j in _nodes(grid, 12, k):
            assert float(SVM.f(jnp.array([grid[i], grid[j]]), u)) == pytest.approx(err[k, i, j], abs=1e-14)
    # between nodes: bilinear in x, linear in u (a midpoint is the mean of its corners)
    i, j, k = 3, 4, 2
    x = jnp.array([(grid[i] + grid[i + 1]) / 2, grid[j]])
    want = 0.5 * (err[k, i, j] + err[k, i + 1, j])
    assert float(SVM.f(x, k / 6)) == pytest.approx(want, abs=1e-14)
    want = 0.25 * (err[k, i, j] + err[k, i + 1, j] + err[k + 1, i, j] + err[k + 1, i + 1, j])
    assert float(SVM.f(x, (k + 0.5) / 6)) == pytest.approx(want, abs=1e-14)


def test_fastcv_interpolation_reproduces_the_table_at_nodes():
    grid, err = real.fastcv_table()
    assert err.shape == (10, len(grid), len(grid))
    for i, j in _nodes(grid, 15, 0):
        x = jnp.array([grid[i], grid[j]])
        for k in (0, 3, 9):
            assert float(CV.f(x, k)) == pytest.approx(err[k, i, j], abs=1e-14)
        assert float(P.target_value(CV, x)) == pytest.approx(err[:, i, j].mean(), abs=1e-14)
        assert float(P.target_value(CV1, x)) == pytest.approx(err[:, i, j].mean(), abs=1e-14)


def test_stored_optima_are_the_best_table_entries():
    grid, err, _ = real.svm_table()
    assert SVM.optimum_value == err[-1].min()
    assert float(P.target_value(SVM, jnp.asarray(SVM.optimum_location))) == SVM.optimum_value
    assert set(SVM.optimum_location) <= set(grid)
    _, cv = real.fastcv_table()
    targets = [float(P.target_value(CV, jnp.array([a, b]))) for a in grid for b in grid]
    assert CV.optimum_value == min(targets)
    assert CV1.optimum_value == cv.mean(axis=0).min()
    assert CV1.optimum_value == pytest.approx(CV.optimum_value, abs=1e-15)
    for p in (CV, CV1):
        assert float(P.target_value(p, jnp.asarray(p.optimum_location))) == pytest.approx(p.optimum_value, abs=1e-15)
        assert float(P.simple_regret(p, jnp.asarray(p.optimum_location))) <= 1e-15
    # piecewise-bilinear: nothing between the nodes is lower (a dense check)
    u = np.linspace(-10, 10, 161)
    X = jnp.asarray(np.stack(np.meshgrid(u, u), -1).reshape(-1, 2))
    assert float(jnp.min(jax.vmap(lambda x: P.target_value(SVM, x))(X))) >= SVM.optimum_value - 1e-15
    assert float(jnp.min(jax.vmap(lambda x: P.target_value(CV, x))(X))) >= CV.optimum_value - 1e-15


def test_costs():
    _, _, sec = real.svm_table()
    t0, c, alpha = real.svm_cost_model()
    assert float(P.cost(SVM, 1.0)) == pytest.approx(10.0, rel=1e-14)
    s = 2.0 ** np.arange(-6, 1)
    nodes = [float(P.cost(SVM, k / 6)) for k in range(7)]
    np.testing.assert_allclose(nodes, 10.0 * (t0 + c * s**alpha) / (t0 + c), rtol=1e-12)
    # the fit follows the measured seconds within a factor 1.5 at every fraction
    assert np.all(np.abs(np.log((t0 + c * s**alpha) / sec)) < np.log(1.5))
    z = jnp.linspace(0.0, 1.0, 61)
    c = jax.jit(jax.vmap(lambda z: P.cost(SVM, z)))(z)
    assert bool(jnp.all(jnp.diff(c) > 0)), "more data costs more"
    assert float(c[0]) < 0.1  # the measured times: 1/64 of the data is two orders cheaper
    assert [float(P.cost(CV, k)) for k in range(10)] == [1.0] * 10
    assert float(P.cost(CV1, 0)) == 10.0


def test_jit_vmap_and_traced_fidelities():
    grid, _, _ = real.svm_table()
    X = jnp.asarray(np.random.default_rng(1).uniform(-10, 10, size=(9, 2)))
    zs = jnp.linspace(0.0, 1.0, 9)
    eager = jnp.stack([SVM.f(x, z) for x, z in zip(X, zs)])
    np.testing.assert_allclose(jax.jit(jax.vmap(SVM.f))(X, zs), eager, rtol=1e-14)
    ks = jnp.arange(9, dtype=jnp.int32)
    eager = jnp.stack([CV.f(x, int(k)) for x, k in zip(X, ks)])
    np.testing.assert_allclose(jax.jit(jax.vmap(CV.f))(X, ks), eager, rtol=1e-14)
    np.testing.assert_allclose(jax.vmap(lambda x: P.target_value(CV, x))(X),
                               jax.vmap(lambda x: P.target_value(CV1, x))(X), atol=1e-15)
    g = jax.grad(lambda x: P.objective(SVM, x, 1.0))(X[0])
    assert bool(jnp.all(jnp.isfinite(g)))
    with pytest.raises(ValueError, match="fidelity"):
        CV.f(X[0], 10)
    with pytest.raises(ValueError, match="integer"):
        CV.f(X[0], 1.0)


def test_the_fold_mean_target_reaches_the_task_and_the_benchmark():
    task = tasks.problem_task(CV)
    assert task.target_z == tuple(range(10)) and task.target_w == (0.1,) * 10
    assert tasks.problem_task(SVM).target_z == (1.0,)
    x = jnp.asarray(CV.optimum_location)
    value, regret = tasks.problem_benchmark(CV).score(x)
    assert float(value) == pytest.approx(CV.optimum_value) and float(regret) <= 1e-15


def test_target_weights_are_checked():
    import dataclasses

    with pytest.raises(ValueError, match="one entry per fidelity"):
        dataclasses.replace(CV, target_weights=(0.5, 0.5))
    with pytest.raises(ValueError, match="discrete"):
        dataclasses.replace(SVM, target_weights=(1.0,))


def test_table_entries_recomputed_with_scikit_learn():
    """One entry of each table, trained again (small fits: 1/64 of the SVM data, one fold)."""
    grid, err, _ = real.svm_table()
    obj = hpo.SubsetSVM(hpo.digits_split(seed=0), seed=0)
    i, j = 12 * len(grid) // 20, 8 * len(grid) // 20  # log2 C, log2 gamma near (2, -2)
    got, _ = obj((grid[i], grid[j]), -6.0)
    assert got == pytest.approx(err[0, i, j], abs=1e-12)
    cv_grid, cv = real.fastcv_table()
    fold = hpo.fastcv_svm(seed=0)
    i, j = _nodes(cv_grid, 1, 7)[0]
    got, _ = fold((cv_grid[i], cv_grid[j]), 4)
    assert got == pytest.approx(cv[4, i, j], abs=1e-12)
