"""Shared pieces of the BO tests: one set of small settings (so the test files share
compiled programs within a pytest run) and a driver for ask/tell."""

import jax.numpy as jnp

from mumbo_jax.benchmarks import problems
from mumbo_jax import BOSettings, FitSettings, GstarSettings, MaximiserSettings, RecommendationSettings

# small enough to compile and run quickly; the maximiser still polishes and the fit converges
# cheap levers for tests; the rule and recommendation pinned to MUMBO's (the defaults before
# the robust rule), which most loop tests were written against: tests/test_robust.py and
# tests/test_defaults.py test the robust defaults
FAST = BOSettings(strategy="mumbo", recommendation=RecommendationSettings(rule="global"),
                  gstar=GstarSettings(samples=5, grid=500),
                  maximiser=MaximiserSettings(n_candidates=200, n_starts=2, polish_steps=5),
                  fit=FitSettings(restarts=2, max_iter=30),
                  options={"mtbo": {"samples": 20, "representers": 10, "fantasies": 3}})

# FAST as config tables, for the tests that go through a config file (run, compare): the same
# programs as the in-process tests, which the run's shared compilation cache then serves
# (tests/conftest.py); tests/test_config.py checks that it loads as FAST's records
FAST_TOML = """
[settings.gstar]
samples = 5
grid = 500
[settings.maximiser]
n_candidates = 200
n_starts = 2
polish_steps = 5
[settings.fit]
restarts = 2
max_iter = 30
"""
FAST_RECOMMENDATION_TOML = """
[settings.recommendation]
rule = "global"
"""


def with_(settings, **changes):
    """``settings`` with some fields changed (a record as a dict of some of its fields)."""
    return settings.replace(**changes)


def drive(opt, prob, n_steps):
    """Run ``opt`` through its design and ``n_steps`` BO steps: the BO ``(x, z)``."""
    chosen = []
    while len(chosen) < n_steps:
        design = opt.in_initial_design
        x, z = opt.ask()
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
        if not design:
            chosen.append((x, z))
    return chosen
