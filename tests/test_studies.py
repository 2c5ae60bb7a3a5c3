"""The regret targets of the BO loop as slow studies (`pytest -m slow`); CI runs the short
versions in test_loop.py."""

import numpy as np
import pytest

from mumbo_jax.bo.settings import BOSettings
from mumbo_jax.benchmarks import problems, tasks


@pytest.mark.slow
@pytest.mark.parametrize("name,budget,target", [("forrester", 200.0, 1e-3), ("currin", 200.0, 1e-2)])
def test_median_regret_over_ten_seeds(name, budget, target):
    h = tasks.run_problem(problems.get_problem(name), budget, list(range(10)),
                           BOSettings(strategy="mumbo", recommendation={"rule": "global"}), max_evals=100)
    n = np.asarray(h.n_evals)
    final = np.asarray([float(h.regret[s, n[s]]) for s in range(10)])
    spent = np.asarray([float(h.cost_spent[s, n[s]]) for s in range(10)])
    assert np.all(spent >= budget), "the evaluation cap stopped a seed before the budget"
    assert np.median(final) <= target, final
