"""Shared pieces of the BO tests: one set of small settings (so the test files share
compiled programs within a pytest run) and a driver for ask/tell."""

import jax.numpy as jnp

from mumbo_jax.benchmarks import problems
from mumbo_jax.bo.settings import BOSettings

# small enough to compile and run quickly; the maximiser still polishes and the fit converges
# cheap levers for tests; the rule and recommendation pinned to MUMBO's (the defaults before
# the robust rule), which most loop tests were written against: tests/test_robust.py and
# tests/test_defaults.py test the robust defaults
FAST = BOSettings(strategy="mumbo", incumbent_rule="global", n_gstar=5, n_candidates=200, n_starts=2,
                  n_polish_steps=5, fit_restarts=2, fit_max_iter=30, gstar_grid=500, mtbo_samples=20,
                  mtbo_representers=10, mtbo_fantasies=3)


def with_(settings, **changes):
    return BOSettings(**{**settings.__dict__, **changes})


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
