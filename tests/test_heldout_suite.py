"""The frozen held-out suite ``ho`` (mumbo_jax.benchmarks.problems.heldout; issue 41, item 4).

* the freeze: heldout.py's sha256 is the manifest's (data/heldout_suite.json), and the
  manifest's fields are the registry's;
* every function against independent references: plain-numpy formulas written here from the
  papers, hand-computed values, and the published optima;
* the optima, by multistart L-BFGS-B on the target;
* the kind of each cheap source (the correlation and the cheap minimiser's regret that the
  manifest records, recomputed);
* shapes, jit, vmap, traced fidelities, gradients, the noise;
* a smoke test: one seed, a tiny budget, the default strategy, through ``mumbo-jax run``
  and ``mumbo-jax compare`` (the python entry point ``cli.main``). No study runs here: the
  suite is run once, at the end (docs/problems.md).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import qmc

from mumbo_jax.benchmarks import problems as P
from mumbo_jax.benchmarks.problems import heldout
from tests.bo_helpers import FAST_TOML

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "data" / "heldout_suite.json"
MODULE = ROOT / "mumbo_jax" / "benchmarks" / "problems" / "heldout.py"
NAMES = list(heldout.SUITE)
EXCLUDED = {"forrester", "currin", "hartmann3", "hartmann6", "borehole", "rosenbrock", "park", "park91b",
            "branin_aug", "perdikaris", "branin_ackley", "svm_fabolas", "fastcv_svm", "fastcv_svm_cv",
            "currin_continuous"}


# --------------------------------------------------------------------------
# The freeze
# --------------------------------------------------------------------------
def test_module_is_frozen_by_the_manifest():
    """heldout.py may not change without the manifest: tuning on the test problems, or fixing
    one quietly, shows up as a manifest change in the diff (rewrite it with
    ``python experiments/studies/heldout_manifest.py`` and say why in the commit)."""
    manifest = json.loads(MANIFEST.read_text())
    sha = hashlib.sha256(MODULE.read_bytes()).hexdigest()
    assert manifest["module_sha256"] == sha, (
        "mumbo_jax/benchmarks/problems/heldout.py changed but data/heldout_suite.json did not: the held-out "
        "suite is frozen (issue 41). If the change is deliberate, rewrite the manifest with "
        "`python experiments/studies/heldout_manifest.py` and say why in the commit message.")


def test_manifest_matches_the_registry():
    manifest = json.loads(MANIFEST.read_text())
    assert manifest["suite"] == "ho" and P.SUITES["ho"] == heldout.SUITE
    assert [p["name"] for p in manifest["problems"]] == NAMES
    for entry in manifest["problems"]:
        p = P.get_problem(entry["name"])
        assert p.name.startswith("ho_") and p.is_discrete and p.n_fidelities == 2 and p.target_fidelity == 0
        assert (p.dim, list(p.costs), list(p.noise_variances), p.maximise) == (
            entry["dim"], entry["costs"], entry["noise_variances"], entry["maximise"])
        assert p.bounds.tolist() == entry["bounds"]
        assert p.optimum_value == entry["optimum_value"]
        assert p.optimum_location.tolist() == entry["optimum_location"]
        assert heldout.SOURCE_KIND[p.name] == entry["source_kind"]
        assert entry["source"] and p.reference == entry["reference"]


def test_suite_spans_the_kinds_and_dimensions_and_reuses_no_problem():
    kinds = set(heldout.SOURCE_KIND.values())
    assert {"reliable", "biased", "noisy", "anti-correlated"} <= kinds and set(heldout.SOURCE_KIND) == set(NAMES)
    dims = [P.get_problem(n).dim for n in NAMES]
    assert len(NAMES) >= 6 and min(dims) == 2 and max(dims) == 8 and all(2 <= d <= 8 for d in dims)
    assert not set(NAMES) & (EXCLUDED | set(P.SUITES["unreliable"]) | set(P.SUITES["heldout"]))


# --------------------------------------------------------------------------
# Independent references, written from the papers in plain numpy
# --------------------------------------------------------------------------
def _np_bohachevsky(x, z):
    def hf(a, b):
        return a * a + 2 * b * b - 0.3 * math.cos(3 * math.pi * a) - 0.4 * math.cos(4 * math.pi * b) + 0.7
    return hf(x[0], x[1]) if z == 0 else hf(0.7 * x[0], x[1]) + x[0] * x[1] - 12


def _np_booth(x, z):
    def hf(a, b):
        return (a + 2 * b - 7) ** 2 + (2 * a + b - 5) ** 2
    return hf(x[0], x[1]) if z == 0 else hf(0.4 * x[0], x[1]) + 1.7 * x[0] * x[1] - x[0] + 2 * x[1]


def _np_himmelblau(x, z):
    def hf(a, b):
        return (a * a + b - 11) ** 2 + (b * b + a - 7) ** 2
    return hf(x[0], x[1]) if z == 0 else hf(0.5 * x[0], 0.8 * x[1]) + x[1] ** 3 - (x[0] + 1) ** 2


def _np_sixhump(x, z):
    def hf(a, b):
        return (4 - 2.1 * a**2 + a**4 / 3) * a**2 + a * b + (-4 + 4 * b**2) * b**2
    return hf(x[0], x[1]) if z == 0 else hf(0.7 * x[0], 0.7 * x[1]) + x[0] * x[1] - 15


def _np_rastrigin(x, z):
    th = 0.2
    d = [x[0] - 0.1, x[1] - 0.1]
    r = [math.cos(th) * d[0] - math.sin(th) * d[1], math.sin(th) * d[0] + math.cos(th) * d[1]]
    phi = 10000.0 if z == 0 else 2500.0
    t = 1 - 0.0001 * phi
    base = sum(v * v + 1 - math.cos(10 * math.pi * v) for v in r)
    err = sum(t * math.cos(10 * math.pi * t * v + 0.5 * math.pi * t + math.pi) ** 2 for v in r)
    return base + err


def _np_paciorek(x, z):
    u = 1.0 / (x[0] * x[1])
    return math.sin(u) if z == 0 else math.sin(u) - 9 * 0.25**2 * math.cos(u)


def _np_trid(a):
    def f(x, z):
        d = len(x)
        if z == 0:
            return sum((x[i] - 1) ** 2 for i in range(d)) - sum(x[i] * x[i - 1] for i in range(1, d))
        # Toal's low fidelity, i = 2..d (1-based) weighting x_i x_{i-1}
        return sum((x[i] - a) ** 2 for i in range(d)) - (a - 0.65) * sum(
            (i + 1) * x[i] * x[i - 1] for i in range(1, d))
    return f


NP_REF = {"ho_bohachevsky": _np_bohachevsky, "ho_booth": _np_booth, "ho_himmelblau": _np_himmelblau,
          "ho_sixhump": _np_sixhump, "ho_rastrigin": _np_rastrigin, "ho_paciorek_noisy": _np_paciorek,
          "ho_trid4": _np_trid(1.0), "ho_trid8_anti": _np_trid(0.0)}

# values worked out by hand from the formulas (x, fidelity, value)
HAND = {
    # Bohachevsky at 0: 0 - 0.3 - 0.4 + 0.7 = 0; cheap: that, + 0 - 12; at (1, 1): 1 + 2 + 0.3 - 0.4 + 0.7
    "ho_bohachevsky": [((0.0, 0.0), 0, 0.0), ((0.0, 0.0), 1, -12.0), ((1.0, 1.0), 0, 3.6)],
    # Booth at (1, 3): 0; cheap: hf(0.4, 3) = 0.36 + 1.44 = 1.8, + 5.1 - 1 + 6 = 11.9
    "ho_booth": [((1.0, 3.0), 0, 0.0), ((1.0, 3.0), 1, 11.9), ((0.0, 0.0), 0, 74.0), ((0.0, 0.0), 1, 74.0)],
    # Himmelblau at (3, 2): 0; at 0: 121 + 49; cheap at 0: 170 + 0 - 1
    "ho_himmelblau": [((3.0, 2.0), 0, 0.0), ((0.0, 0.0), 0, 170.0), ((0.0, 0.0), 1, 169.0)],
    # six-hump at 0: 0; cheap at 0: -15; at (1, 1): (4 - 2.1 + 1/3) + 1 + 0 = 3.2333...
    "ho_sixhump": [((0.0, 0.0), 0, 0.0), ((0.0, 0.0), 1, -15.0), ((1.0, 1.0), 0, 4.0 - 2.1 + 1.0 / 3.0 + 1.0)],
    # Rastrigin at the shift: 0; cheap there: 2 * 0.75 cos^2(0.375 pi + pi) = 1.5 cos^2(3 pi / 8)
    "ho_rastrigin": [((0.1, 0.1), 0, 0.0), ((0.1, 0.1), 1, 1.5 * math.cos(3 * math.pi / 8) ** 2)],
    # Paciorek at (1, 1): sin 1; cheap: sin 1 - 0.5625 cos 1
    "ho_paciorek_noisy": [((1.0, 1.0), 0, math.sin(1.0)), ((1.0, 1.0), 1, math.sin(1.0) - 0.5625 * math.cos(1.0))],
    # Trid-4 at 0: 4; at 1: 0 - 3 = -3; cheap (A = 1) at 1: 0 - 0.35 (2 + 3 + 4) = -3.15
    "ho_trid4": [((0.0,) * 4, 0, 4.0), ((1.0,) * 4, 0, -3.0), ((1.0,) * 4, 1, -3.15)],
    # Trid-8 cheap (A = 0) at 1: 8 + 0.65 (2 + ... + 8) = 8 + 0.65 * 35 = 30.75
    "ho_trid8_anti": [((1.0,) * 8, 0, -7.0), ((1.0,) * 8, 1, 30.75)],
}

# the optima as published (closed forms or the papers' values), to the digits quoted
PUBLISHED_OPTIMUM = {
    "ho_bohachevsky": (0.0, (0.0, 0.0), 1e-12),
    "ho_booth": (0.0, (1.0, 3.0), 1e-12),
    "ho_himmelblau": (0.0, (3.0, 2.0), 1e-12),
    "ho_sixhump": (-1.0316, (0.0898, -0.7126), 1e-4),  # Dong et al. 2015 / the usual quote
    "ho_rastrigin": (0.0, (0.1, 0.1), 1e-12),
    "ho_paciorek_noisy": (-1.0, (0.46065886596178063,) * 2, 1e-12),  # mf2's x_opt, sqrt(2 / (3 pi))
    # Trid: -d (d + 4)(d - 1) / 6 at x_i = i (d + 1 - i)
    "ho_trid4": (-4 * 8 * 3 / 6, (4.0, 6.0, 6.0, 4.0), 1e-12),
    "ho_trid8_anti": (-8 * 12 * 7 / 6, tuple(i * (9 - i) for i in range(1, 9)), 1e-12),
}


def _sobol(p, n=4096):
    return p.lower + qmc.Sobol(p.dim, seed=0).random(n) * (p.upper - p.lower)


@pytest.mark.parametrize("name", NAMES)
def test_matches_numpy_reference_and_hand_values(name):
    p = P.get_problem(name)
    X = np.asarray(P.sample_inputs(p, jax.random.PRNGKey(3), 25))
    for z in (0, 1):
        got = np.asarray(jax.vmap(lambda x: p.f(x, z))(jnp.asarray(X)))
        want = np.array([NP_REF[name](list(x), z) for x in X])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-10)
    for x, z, value in HAND[name]:
        assert float(p.f(jnp.asarray(x), z)) == pytest.approx(value, rel=1e-12, abs=1e-12), (x, z)


@pytest.mark.parametrize("name", NAMES)
def test_published_optimum(name):
    p = P.get_problem(name)
    value, loc, tol = PUBLISHED_OPTIMUM[name]
    assert abs(p.optimum_value - value) <= tol * max(1.0, abs(value))
    np.testing.assert_allclose(p.optimum_location, loc, atol=max(tol, 1e-12))
    assert float(P.target_value(p, jnp.asarray(p.optimum_location))) == pytest.approx(p.optimum_value, abs=1e-12)
    assert float(P.simple_regret(p, jnp.asarray(p.optimum_location))) <= 1e-12


def test_himmelblau_has_four_minimisers_in_the_box():
    p = P.get_problem("ho_himmelblau")
    for x0 in ([-2.8, 3.1], [-3.8, -3.3], [3.6, -1.8]):
        res = minimize(lambda x: _np_himmelblau(x, 0), x0, method="BFGS", options={"gtol": 1e-12})
        assert res.fun < 1e-12 and np.all(np.abs(res.x) <= 4.0)
        assert float(P.target_value(p, jnp.asarray(res.x))) == pytest.approx(0.0, abs=1e-10)


# --------------------------------------------------------------------------
# The optima, numerically
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_multistart_finds_the_optimum_and_nothing_better(name):
    p = P.get_problem(name)
    lo, width = jnp.asarray(p.lower), jnp.asarray(p.upper - p.lower)
    vg = jax.jit(jax.value_and_grad(lambda u: P.target_value(p, lo + u * width)))

    def fun(u):
        v, g = vg(jnp.asarray(u))
        return float(v), np.asarray(g, dtype=np.float64)

    starts = np.random.default_rng(1234).uniform(size=(30, p.dim))
    vals = [minimize(fun, u0, jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * p.dim,
                     options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-11}).fun for u0 in starts]
    # and a dense Sobol sample: nothing below the optimum either
    sample = np.asarray(jax.jit(jax.vmap(lambda x: P.target_value(p, x)))(_sobol(p, 1 << 14)))
    scale = max(1.0, abs(p.optimum_value))
    assert min(vals) >= p.optimum_value - 1e-7 * scale and sample.min() >= p.optimum_value - 1e-9 * scale
    assert min(vals) <= p.optimum_value + 1e-6 * scale  # the search reaches it


# --------------------------------------------------------------------------
# The kinds of cheap source
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_source_kind_as_recorded(name):
    """The manifest's correlation is recomputed here; the label follows the thresholds of the
    module docstring from it and the recorded cheap minimiser's regret (recomputed at its
    point)."""
    p = P.get_problem(name)
    entry = {e["name"]: e for e in json.loads(MANIFEST.read_text())["problems"]}[name]
    stats = entry["statistics"]
    X = _sobol(p)
    target = np.asarray(jax.vmap(lambda x: p.f(x, 0))(jnp.asarray(X)))
    cheap = np.asarray(jax.vmap(lambda x: p.f(x, 1))(jnp.asarray(X)))
    corr = np.corrcoef(target, cheap)[0, 1]
    assert corr == pytest.approx(stats["correlation"], abs=1e-4)
    x_cheap = np.asarray(stats["cheap_minimiser"])
    # the recorded cheap minimiser is (to its 4 digits) no worse than the cheap source on the sample
    assert float(p.f(jnp.asarray(x_cheap), 1)) <= cheap.min() + 1e-3 * max(1.0, np.ptp(cheap))
    share = (float(p.f(jnp.asarray(x_cheap), 0)) - p.optimum_value) / np.ptp(target)
    assert share == pytest.approx(stats["regret_share"], abs=2e-3)
    kind = heldout.SOURCE_KIND[name]
    if kind == "reliable":
        assert corr >= 0.85 and share <= 0.02
    elif kind == "biased":
        assert corr >= 0.7 and share >= 0.10
    elif kind == "anti-correlated":
        assert corr <= -0.3 and share >= 0.5
    else:
        assert kind == "noisy"
        sd = math.sqrt(p.noise_variances[1])
        assert corr >= 0.85 and p.noise_variances[0] == 0.0 and sd >= 0.5 * cheap.std()
        rng = np.random.default_rng(0)
        observed = np.corrcoef(target, cheap + sd * rng.standard_normal(cheap.shape))[0, 1]
        assert 0.6 < observed < 0.85


# --------------------------------------------------------------------------
# JAX: shapes, jit, vmap, traced fidelity, gradients; the noise
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_jit_vmap_traced_fidelity_and_gradients(name):
    p = P.get_problem(name)
    X = jnp.asarray(np.asarray(P.sample_inputs(p, jax.random.PRNGKey(5), 8)) * 0.96
                    + 0.02 * (p.lower + p.upper))  # strictly inside the box
    for z in (0, 1):
        eager = jnp.stack([p.f(x, z) for x in X])
        batched = jax.vmap(lambda x: p.f(x, z))(X)
        jitted = jax.jit(jax.vmap(p.f, in_axes=(0, None)))(X, z)
        assert batched.shape == (8,) and batched.dtype == jnp.float64
        np.testing.assert_allclose(batched, eager, rtol=1e-13)
        np.testing.assert_allclose(jitted, eager, rtol=1e-13)
        G = jax.vmap(jax.grad(lambda x: P.objective(p, x, z)))(X)
        assert G.shape == X.shape and bool(jnp.all(jnp.isfinite(G)))
        h = 1e-6 * jnp.asarray(p.upper - p.lower)
        e = jnp.eye(p.dim)
        fd = jnp.array([(P.objective(p, X[0] + h[i] * e[i], z) - P.objective(p, X[0] - h[i] * e[i], z)) / (2 * h[i])
                        for i in range(p.dim)])
        np.testing.assert_allclose(G[0], fd, rtol=1e-5, atol=1e-6 * (1 + float(jnp.max(jnp.abs(fd)))))
    zz = jnp.tile(jnp.asarray([0, 1], dtype=jnp.int32), X.shape[0])
    grid = jax.jit(jax.vmap(p.f))(jnp.repeat(X, 2, axis=0), zz).reshape(-1, 2)
    for z in (0, 1):
        np.testing.assert_allclose(grid[:, z], jax.vmap(lambda x: p.f(x, z))(X), rtol=1e-13)
    np.testing.assert_allclose(jax.jit(lambda z: P.cost(p, z))(jnp.asarray([0, 1])), [10.0, 1.0])
    with pytest.raises(ValueError):
        p.f(X[0], 2)
    with pytest.raises(ValueError):
        p.f(jnp.zeros(p.dim + 1), 0)


def test_noisy_source_observations():
    p = P.get_problem("ho_paciorek_noisy")
    x = jnp.asarray([0.5, 0.7])
    keys = jax.random.split(jax.random.PRNGKey(0), 4000)
    ys = np.asarray(jax.vmap(lambda k: P.noisy_observation(p, k, x, 1))(keys))
    assert ys.mean() == pytest.approx(float(p.f(x, 1)), abs=4 * 0.5 / math.sqrt(4000))
    assert ys.var() == pytest.approx(heldout.PACIOREK_NOISY_VARIANCE, rel=0.1)
    target = np.asarray(jax.vmap(lambda k: P.noisy_observation(p, k, x, 0))(keys[:10]))
    np.testing.assert_array_equal(target, float(p.f(x, 0)))  # the target is noise-free
    for name in NAMES:  # the only noisy one
        assert (name == "ho_paciorek_noisy") == any(P.get_problem(name).noise_variances)


# --------------------------------------------------------------------------
# Smoke: the run and compare machinery, one seed, a tiny budget, the default strategy
# --------------------------------------------------------------------------
def test_the_study_refuses_the_suite_without_the_final_flag(tmp_path, monkeypatch):
    """experiments/studies/robust.py will not screen on the test suite: without
    --heldout-final it exits before running anything."""
    import importlib.util
    import os
    # the script sets these two by setdefault on import: set here, they are restored after the test
    for var in ("XLA_FLAGS", "JAX_COMPILATION_CACHE_DIR"):
        monkeypatch.setenv(var, os.environ.get(var, ""))
    spec = importlib.util.spec_from_file_location("robust_study", ROOT / "experiments" / "studies" / "robust.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for argv in (["--suite", "ho"], ["--problems", "ho_booth"], ["--suite", "unreliable", "--problems", "ho_trid4"]):
        with pytest.raises(SystemExit, match="frozen held-out suite"):
            mod.main(argv + ["--seeds", "1", "--out", str(tmp_path)])
    assert not list(tmp_path.glob("*.json")) and not list(tmp_path.glob("*.running"))


def test_configs_and_study_command():
    """Each problem has its run config (the study reads the budget there) and the study script
    knows the suite; nothing is run."""
    from mumbo_jax.run.config import load_config
    for name in NAMES:
        cfg = load_config(ROOT / "configs" / f"{name}.toml")
        assert cfg.problem == name and cfg.budget >= 100
    manifest = json.loads(MANIFEST.read_text())
    assert "--suite ho" in manifest["run_command"] and "--seeds 30" in manifest["run_command"]
    assert manifest["run_command"] in (ROOT / "docs" / "problems.md").read_text().replace("\n", " ")


def _smoke_run(name, tmp_path):
    """``mumbo-jax run`` on ``name``: one seed, 2 evaluations, the default strategy (the config
    has no ``strategy`` key); the record is complete and its regrets finite and >= 0."""
    from mumbo_jax.bo.settings import BOSettings
    from mumbo_jax.run import cli

    default = BOSettings().strategy
    p = P.get_problem(name)
    run_cfg = tmp_path / f"{name}.toml"
    run_cfg.write_text(f'[run]\nproblem = "{name}"\nbudget = {3 * p.costs[0]}\nseeds = 1\nmax_evals = 2\n' + FAST_TOML)
    assert cli.main(["run", str(run_cfg), "--out", str(tmp_path / f"run_{name}")]) == 0, name
    res = json.loads((tmp_path / f"run_{name}" / "results.json").read_text())
    assert "strategy" not in res["config"]["run"] or res["config"]["run"]["strategy"] == default
    (seed,) = res["seeds"]
    assert 1 <= seed["n_evals"] <= 2 and len(seed["regret"]) == seed["n_evals"] + 1
    assert all(r is not None and np.isfinite(r) and r >= 0.0 for r in seed["regret"]), name


# the largest box and the anti-correlated source in the default run; every problem, and
# compare, under -m slow (about 40 s a problem on the loaded 2-core machine)
SMOKE_IN_CI = "ho_trid8_anti"


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n == SMOKE_IN_CI else pytest.mark.slow) for n in NAMES])
def test_smoke_run_with_the_default_strategy(name, tmp_path, capsys):
    """A smoke test, not a result: the problem goes through the run machinery."""
    _smoke_run(name, tmp_path)
    capsys.readouterr()


@pytest.mark.slow
def test_smoke_compare_with_the_default_strategy(tmp_path, capsys):
    """``mumbo-jax compare`` on the noisy problem: the default rule and EI, one seed, 2
    evaluations each; complete records, finite regrets >= 0."""
    from mumbo_jax.bo.settings import BOSettings
    from mumbo_jax.run import cli

    default = BOSettings().strategy
    cmp_cfg = tmp_path / "compare.toml"
    cmp_cfg.write_text(f'[compare]\nproblem = "ho_paciorek_noisy"\nbudget = 30\nseeds = 1\nmax_evals = 2\n'
                       f'strategies = ["{default}", "ei"]\nout = "{tmp_path / "cmp"}"\n' + FAST_TOML)
    assert cli.main(["compare", str(cmp_cfg)]) == 0
    res = json.loads((tmp_path / "cmp" / "results.json").read_text())
    assert list(res["strategies"]) == [default, "ei"]
    for r in res["strategies"].values():
        (s,) = r["per_seed"]
        assert all(np.isfinite(v) and v >= 0 for v in s["regret"]) and len(s["regret"]) == len(s["z"]) + 1
    capsys.readouterr()
