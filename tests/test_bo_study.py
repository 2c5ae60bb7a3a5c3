"""A short study, under -m slow: MUMBO against random search on Forrester over a few seeds (the
full studies are in experiments/ and tests/test_studies.py under -m slow)."""

import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from tests.bo_helpers import FAST, with_

SEEDS = [0, 1, 2, 3]


@pytest.mark.slow  # ~15 s of the default run: a small study, as the others in test_studies
def test_mumbo_beats_random_search_on_forrester():
    """Budget 60 after the design: MUMBO spends it on cheap fidelities (7-21 evaluations),
    random search gets 6 target evaluations. Measured (seeds 0-5): MUMBO's median final
    regret 5.6e-4, random search's 5.1; MUMBO ahead on every seed."""
    prob = problems.get_problem("forrester")
    final = {}
    for strategy in ("mumbo", "random"):
        h = tasks.run_problem(prob, 60.0, SEEDS, with_(FAST, strategy=strategy), max_evals=25)
        final[strategy] = np.asarray([h.regret[s, h.n_evals[s]] for s in range(len(SEEDS))])
        assert np.all(np.isfinite(final[strategy]))
    assert np.median(final["mumbo"]) < 0.01 * np.median(final["random"]), final
    assert np.sum(final["mumbo"] < final["random"]) >= 3, final  # paired by seed
