"""The library's decisions on fixed seeds, replayed against a reference written before a
refactor: the inputs and fidelities that ask/tell chooses after the initial design and the
final recommendation, on the paper's problems for the paper's rule and the default.

A refactor that means to change nothing (settings as records, models as types, rules in
registries) must reproduce them (on the JAX release that wrote the reference: another
release, or other compile options (:mod:`mumbo_jax.xla_options`), compiles other rounding,
and the test skips); a change that means to change decisions regenerates the
reference with ``python tests/test_decisions.py --write`` and says so in its commit.

The CI run checks two cases; ``pytest -m slow tests/test_decisions.py`` checks every case
(every paper problem under MUMBO and the default, every built-in rule on Currin, two asks per step with a pending point).
"""

import json
import pathlib
import sys

import jax
import jaxlib
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax import BOSettings, FitSettings, GstarSettings, MaximiserSettings
from mumbo_jax import xla_options

REFERENCE = pathlib.Path(__file__).parent / "data" / "decisions_reference.json"
N_BO_STEPS = 3

# (problem, rule, batch size): the first two run in CI
FAST_CASES = [("currin", "mumbo", 1), ("currin", "robust", 1)]  # share the fit and g* programs
SLOW_CASES = [
    ("forrester", "mumbo", 1), ("forrester", "robust", 1),
    ("hartmann3", "robust", 1), ("hartmann3", "mumbo", 1),
    ("borehole", "mumbo", 1), ("borehole", "robust", 1),
    ("currin_continuous", "mumbo", 1),
    ("currin", "ei", 1), ("currin", "mes", 1), ("currin", "mt_ei", 1), ("currin", "mf_gp_ucb", 1),
    ("currin_continuous", "boca", 1), ("currin", "mtbo", 1), ("currin", "random", 1), ("currin", "ucb", 1),
    ("currin", "mf_gibbon", 1), ("currin", "mf_kg", 1),
    ("currin", "mumbo", 2),
]


def _settings(rule: str) -> BOSettings:
    """Small, fast settings; every value spelled out so that a change of defaults does not
    change the replay."""
    return BOSettings(strategy=rule, gstar=GstarSettings(samples=5, grid=500),
                      maximiser=MaximiserSettings(n_candidates=200, n_starts=2, polish_steps=5),
                      fit=FitSettings(restarts=2, max_iter=30))


def decisions(problem: str, rule: str, batch_size: int) -> dict:
    """The BO decisions (x, z) after the design and the final recommendation, seed 0. With
    ``batch_size`` > 1 each step asks that many times before telling (pending points)."""
    jax.config.update("jax_enable_x64", True)
    prob = problems.get_problem(problem)
    opt = AskTell(tasks.problem_task(prob), _settings(rule), seed=0)

    def evaluate(x, z):
        opt.tell(x, z, float(problems.objective(prob, jax.numpy.asarray(x), z)))

    for _ in range(opt.n_design):
        evaluate(*opt.ask())
    chosen = []
    for _ in range(N_BO_STEPS):
        asked = [opt.ask() for _ in range(batch_size)]
        for x, z in asked:
            chosen.append((np.asarray(x, float).tolist(), float(z)))
            evaluate(x, z)
    x_rec, mean, sd = opt.recommendation()
    return {"x": [c[0] for c in chosen], "z": [c[1] for c in chosen],
            "recommendation": np.asarray(x_rec, float).tolist(), "mean": float(mean), "sd": float(sd)}


def _key(problem, rule, batch_size):
    return f"{problem}/{rule}/batch{batch_size}"


def _check(problem, rule, batch_size):
    data = json.loads(REFERENCE.read_text())
    written = data["_written_with"]
    if written.get("xla_options") != xla_options.OPTIONS:
        pytest.skip(f"reference written with compile options {written.get('xla_options')}; this process "
                    f"compiles with {xla_options.OPTIONS} (${xla_options.ENV})")
    if (jax.__version__, jaxlib.__version__) != (written["jax"], written["jaxlib"]):
        # another XLA compiles other rounding, which the maximiser amplifies: the replay is a
        # check of refactors on one stack, not of agreement across JAX releases
        pytest.skip(f"reference written with jax {written['jax']}, jaxlib {written['jaxlib']}; this is "
                    f"{jax.__version__}, {jaxlib.__version__}")
    reference = data[_key(problem, rule, batch_size)]
    got = decisions(problem, rule, batch_size)
    assert got["z"] == reference["z"], f"fidelities changed: {got['z']} vs {reference['z']}"
    np.testing.assert_allclose(got["x"], reference["x"], rtol=0, atol=1e-6, err_msg="inputs changed")
    np.testing.assert_allclose(got["recommendation"], reference["recommendation"], rtol=0, atol=1e-6,
                               err_msg="recommendation changed")
    np.testing.assert_allclose([got["mean"], got["sd"]], [reference["mean"], reference["sd"]],
                               rtol=1e-6, atol=1e-9, err_msg="recommendation's prediction changed")


@pytest.mark.parametrize("problem,rule,batch_size", FAST_CASES)
def test_decisions_match_the_reference(problem, rule, batch_size):
    _check(problem, rule, batch_size)


@pytest.mark.slow
@pytest.mark.parametrize("problem,rule,batch_size", SLOW_CASES)
def test_every_case_matches_the_reference(problem, rule, batch_size):
    _check(problem, rule, batch_size)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/test_decisions.py --write  (rewrites the reference)")
    from mumbo_jax.run.cli import deterministic_xla_flags

    deterministic_xla_flags()  # the test processes' flags (tests/conftest.py), before JAX starts
    out = {"_written_with": {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                             "xla_options": xla_options.OPTIONS}}
    for case in FAST_CASES + SLOW_CASES:
        out[_key(*case)] = decisions(*case)
        print(_key(*case), out[_key(*case)]["z"], flush=True)
    REFERENCE.parent.mkdir(exist_ok=True)
    REFERENCE.write_text(json.dumps(out, indent=1) + "\n")
