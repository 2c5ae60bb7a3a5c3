"""The ``unreliable`` problem suite: registry and suite API, shapes, costs, optima, configs, and
the claim each problem's docstring makes about its cheap source (reliable, or how not)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import qmc

from mumbo_jax.benchmarks import problems as P
from mumbo_jax.run.config import load_config

ROOT = Path(__file__).resolve().parents[1]
NAMES = P.SUITES["unreliable"]
PAPER = {"forrester", "currin", "hartmann3", "hartmann6", "borehole", "rosenbrock", "currin_continuous"}
EARLIER = {"park", "branin_aug", "perdikaris"}

# Written out from the docstrings: the registered problem whose target each one shares
# (fidelity 0, or z = 1), and the kind of its cheap source.
SAME_TARGET = {
    "unrel_forrester_reliable": "forrester",
    "unrel_forrester_biased": "forrester",
    "unrel_branin_reliable": "branin_aug",
    "unrel_branin_anti": "branin_aug",
    "unrel_hartmann3_reliable": "hartmann3",
    "unrel_hartmann3_noisy": "hartmann3",
    "unrel_hartmann3_twotask": "hartmann3",
    "unrel_currin_negated": "currin",
    "unrel_hartmann3_partial": "hartmann3",
    "unrel_branin_continuous": "branin_aug",
}
KIND = {
    "unrel_forrester_reliable": "reliable",
    "unrel_forrester_biased": "bias",
    "unrel_branin_reliable": "reliable",
    "unrel_branin_anti": "anti-correlation",
    "unrel_hartmann3_reliable": "reliable",
    "unrel_hartmann3_noisy": "noise",
    "unrel_hartmann3_twotask": "two-task",
    "unrel_currin_negated": "anti-correlation",
    "unrel_hartmann3_partial": "partial",
    "unrel_branin_continuous": "reliable",
}


def _cheap(p):
    """The cheapest fidelity: index 1, or z = 0 for the continuous problem."""
    return 1 if p.is_discrete else 0.0


@functools.lru_cache(maxsize=None)
def _sobol(name, n=4096):
    """A scrambled Sobol sample of the box (``[n, d]``) with the target and cheap values
    in maximisation form (``[n]`` each)."""
    p = P.get_problem(name)
    u = qmc.Sobol(p.dim, scramble=True, seed=0).random(n)
    X = jnp.asarray(p.lower + u * (p.upper - p.lower))
    target = np.asarray(jax.vmap(lambda x: P.objective(p, x, p.target_fidelity))(X))
    cheap = np.asarray(jax.vmap(lambda x: P.objective(p, x, _cheap(p)))(X))
    return np.asarray(X), target, cheap


def _corr(a, b):
    return float(np.corrcoef(a, b)[0, 1])


@functools.lru_cache(maxsize=None)
def _maximise(name, fidelity, n_starts=30):
    """Multistart L-BFGS-B maximiser of ``objective(p, ., fidelity)`` over the box: (x, value)."""
    p = P.get_problem(name)
    lo, width = jnp.asarray(p.lower), jnp.asarray(p.upper - p.lower)
    value_and_grad = jax.jit(jax.value_and_grad(lambda u: -P.objective(p, lo + u * width, fidelity)))

    def fun(u):
        v, g = value_and_grad(jnp.asarray(u))
        return float(v), np.asarray(g, dtype=np.float64)

    starts = np.random.default_rng(7).uniform(size=(n_starts, p.dim))
    best = min((minimize(fun, u0, jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * p.dim,
                         options={"maxiter": 1000, "ftol": 1e-14, "gtol": 1e-10}) for u0 in starts),
               key=lambda r: r.fun)
    return np.asarray(p.lower + best.x * (p.upper - p.lower)), -float(best.fun)


def _target_range(name):
    _, target, _ = _sobol(name)
    return float(target.max() - target.min())


def _cheap_optimum_regret(name):
    """The cheap source's maximiser (maximisation form) and its regret at the target."""
    p = P.get_problem(name)
    x, _ = _maximise(name, _cheap(p))
    return x, float(P.simple_regret(p, jnp.asarray(x)))


# --------------------------------------------------------------------------
# The suite and its registry entries
# --------------------------------------------------------------------------
def test_suite_lists_the_registered_problems_in_order():
    problems = P.suite("unreliable")
    assert tuple(p.name for p in problems) == NAMES
    assert all(P.get_problem(p.name) is p for p in problems)
    assert len(NAMES) >= 8 and len(set(NAMES)) == len(NAMES)
    assert set(NAMES) == set(KIND) == set(P.SOURCE_KIND)
    assert not set(NAMES) & (PAPER | EARLIER)  # new definitions, none of the paper's


def test_unknown_suite_raises():
    with pytest.raises(ValueError, match="unknown suite 'reliable'.*unreliable"):
        P.suite("reliable")


def test_source_kinds_as_documented():
    assert P.SOURCE_KIND == KIND
    for name in NAMES:  # each docstring says which
        doc = P.get_problem(name).f.__doc__
        says_reliable = re.search(r"(?<!UN)RELIABLE\b", doc) is not None
        says_unreliable = "UNRELIABLE" in doc
        assert says_reliable != says_unreliable, name
        assert says_unreliable == (KIND[name] != "reliable"), name


def test_suite_covers_the_required_kinds():
    kinds = set(KIND.values())
    assert {"reliable", "bias", "noise", "anti-correlation", "partial", "two-task"} <= kinds
    # at least three base functions with a reliable and an unreliable cheap source each
    bases = {}
    for name in NAMES:
        bases.setdefault(SAME_TARGET[name], set()).add(KIND[name] == "reliable")
    assert sum(flags == {True, False} for flags in bases.values()) >= 3
    assert any(not P.get_problem(n).is_discrete for n in NAMES)  # a continuous fidelity
    assert all(1 <= P.get_problem(n).dim <= 6 for n in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_target_is_the_base_function(name):
    """The target is exactly the target of the registered base problem, so the stored optimum
    is that problem's."""
    p, base = P.get_problem(name), P.get_problem(SAME_TARGET[name])
    assert p.maximise == base.maximise and np.array_equal(p.bounds, base.bounds)
    assert p.optimum_value == base.optimum_value
    X, _, _ = _sobol(name, 256)
    got = jax.vmap(lambda x: P.target_value(p, x))(jnp.asarray(X))
    want = jax.vmap(lambda x: P.target_value(base, x))(jnp.asarray(X))
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_shapes_dtypes_and_costs(name):
    p = P.get_problem(name)
    X = jnp.asarray(_sobol(name, 64)[0])
    zs = p.fidelities if p.is_discrete else (0.0, 0.5, 1.0)
    for z in zs:
        y = jax.jit(jax.vmap(p.f, in_axes=(0, None)))(X, z)
        assert y.shape == (64,) and y.dtype == jnp.float64
        assert bool(jnp.all(jnp.isfinite(y)))
    if p.is_discrete:
        assert p.costs == (10.0, 1.0) and p.target_fidelity == 0
    else:
        z = jnp.linspace(0.0, 1.0, 11)
        c = np.asarray(jax.vmap(lambda z: P.cost(p, z))(z))
        assert c[0] == pytest.approx(1.0) and c[-1] == pytest.approx(10.0)
        assert np.all(np.diff(c) > 0) and p.target_fidelity == 1.0
    # the cost of the target is ten times the cheapest
    assert float(P.cost(p, p.target_fidelity)) == pytest.approx(10.0 * float(P.cost(p, _cheap(p))))


# --------------------------------------------------------------------------
# Optima (in the problem's own sense), verified independently of the registry
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_optimum_verified_by_multistart_and_sample(name):
    p = P.get_problem(name)
    best_x, best = _maximise(name, p.target_fidelity)
    sign = 1.0 if p.maximise else -1.0
    stored = sign * p.optimum_value  # maximisation form
    scale = max(1.0, abs(p.optimum_value))
    assert abs(best - stored) <= 1e-7 * scale  # the search reaches the stored optimum ...
    _, target, _ = _sobol(name)
    assert target.max() <= stored + 1e-12 * scale  # ... and nothing sampled beats it
    assert float(P.objective(p, jnp.asarray(p.optimum_location), p.target_fidelity)) == pytest.approx(
        stored, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_stored_optimiser_is_a_kkt_point(name):
    """At the stored optimiser the gradient of the maximisation form vanishes on the free
    coordinates and points out of the box on the active bounds."""
    p = P.get_problem(name)
    x = jnp.asarray(p.optimum_location)
    g = np.asarray(jax.grad(lambda x: P.objective(p, x, p.target_fidelity))(x)) * (p.upper - p.lower)
    at_lo, at_hi = p.optimum_location == p.lower, p.optimum_location == p.upper
    free = ~(at_lo | at_hi)
    assert np.all(np.abs(g[free]) < 1e-5 * max(1.0, abs(p.optimum_value)))
    assert np.all(g[at_hi] >= 0) and np.all(g[at_lo] <= 0)


# --------------------------------------------------------------------------
# The cheap sources: each docstring's claim
# --------------------------------------------------------------------------
RELIABLE = [n for n in NAMES if KIND[n] == "reliable"]


@pytest.mark.parametrize("name", RELIABLE)
def test_reliable_sources_are_correlated_and_keep_the_optimum(name):
    _, target, cheap = _sobol(name)
    assert _corr(target, cheap) > 0.93
    _, regret = _cheap_optimum_regret(name)
    assert regret < 0.02 * _target_range(name)


def test_forrester_bias_moves_the_optimum_to_the_other_basin():
    name = "unrel_forrester_biased"
    x, regret = _cheap_optimum_regret(name)
    assert x[0] < 0.3 < 0.7 < P.get_problem(name).optimum_location[0]
    assert regret > 0.2 * _target_range(name)
    # the reliable Forrester source does not: its minimiser is next to the target's
    x_rel, _ = _cheap_optimum_regret("unrel_forrester_reliable")
    assert abs(x_rel[0] - P.get_problem(name).optimum_location[0]) < 0.02


@pytest.mark.parametrize("name", ["unrel_branin_anti", "unrel_currin_negated"])
def test_anti_correlated_sources(name):
    _, target, cheap = _sobol(name)
    assert _corr(target, cheap) < -0.9
    _, regret = _cheap_optimum_regret(name)
    assert regret > 0.9 * _target_range(name)  # the cheap optimum is near the target's worst


def test_noisy_source_is_the_reliable_mean_under_heavy_noise():
    p, rel = P.get_problem("unrel_hartmann3_noisy"), P.get_problem("unrel_hartmann3_reliable")
    assert (float(P.noise_variance(p, 0)), float(P.noise_variance(p, 1))) == (0.0, 1.0)
    X, target, cheap = _sobol(p.name)
    np.testing.assert_array_equal(cheap, _sobol(rel.name)[2])  # same noise-free values
    # observed: noise of sd 1 on a signal whose sd over the box is below that
    keys = jax.random.split(jax.random.PRNGKey(0), X.shape[0])
    y = np.asarray(jax.vmap(lambda k, x: P.noisy_objective(p, k, x, 1))(keys, jnp.asarray(X)))
    resid = y - cheap
    assert np.var(resid) == pytest.approx(1.0, rel=0.08)
    assert np.std(cheap) < 1.0
    assert _corr(target, y) < _corr(target, cheap) - 0.2  # the noise hides the good source
    t = np.asarray(jax.vmap(lambda k, x: P.noisy_objective(p, k, x, 0))(keys[:8], jnp.asarray(X[:8])))
    np.testing.assert_allclose(t, target[:8], rtol=1e-14)  # the target is noiseless


def test_two_task_auxiliary_is_correlated_with_its_optimum_elsewhere():
    name = "unrel_hartmann3_twotask"
    _, target, cheap = _sobol(name)
    assert 0.85 < _corr(target, cheap) < 0.95
    x, regret = _cheap_optimum_regret(name)
    assert regret > 0.1 * _target_range(name)
    assert np.linalg.norm(x - P.get_problem(name).optimum_location) > 0.05


def test_partial_source_informative_only_where_x3_below_edge():
    name = "unrel_hartmann3_partial"
    p = P.get_problem(name)
    X, target, cheap = _sobol(name)
    near, far = X[:, 2] < 0.5, X[:, 2] > 0.7
    assert _corr(target[near], cheap[near]) > 0.98
    assert abs(_corr(target, cheap)) < 0.3
    # beyond the edge it is flat (no information), where the target still varies
    assert np.std(cheap[far]) < 0.2 * np.std(target[far])
    assert p.optimum_location[2] > 0.7  # ... and where the target's optimum lies
    # on the informative part it is the reliable Hartmann-3 source
    rel = P.get_problem("unrel_hartmann3_reliable")
    inside = jnp.asarray(X[X[:, 2] < 0.3][:32])
    np.testing.assert_allclose(jax.vmap(lambda x: p.f(x, 1))(inside), jax.vmap(lambda x: rel.f(x, 1))(inside),
                               rtol=1e-2, atol=1e-3)
    # its optimum is the target's second well, in the informative part, far from optimal
    x, regret = _cheap_optimum_regret(name)
    assert x[2] < 0.6 and regret > 0.2 * _target_range(name)


def test_continuous_fidelity_tends_to_the_target():
    p = P.get_problem("unrel_branin_continuous")
    X = jnp.asarray(_sobol(p.name, 512)[0])
    target = np.asarray(jax.vmap(lambda x: p.f(x, 1.0))(X))
    gaps = [np.max(np.abs(np.asarray(jax.vmap(lambda x: p.f(x, z))(X)) - target)) for z in (0.0, 0.5, 0.9)]
    assert gaps[0] > gaps[1] > gaps[2] > 0.0  # closer as z -> 1
    np.testing.assert_allclose(target, jax.vmap(lambda x: P.target_value(P.get_problem("branin_aug"), x))(X),
                               rtol=1e-13)  # z = 1 is Branin itself


# --------------------------------------------------------------------------
# Configs
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_config_per_problem(name):
    cfg = load_config(ROOT / "configs" / f"{name}.toml")
    p = P.get_problem(name)
    assert cfg.problem == name and cfg.strategy == "mumbo"
    target_cost = float(P.cost(p, p.target_fidelity))
    assert cfg.budget == pytest.approx(15 * target_cost)  # 15 target evaluations' worth
