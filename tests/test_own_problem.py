"""A problem of one's own: the public helpers build and check it, the entry-point group
``mumbo_jax.problems`` brings it to the command line, and the worked example of
docs/howto/own-problem.md runs through ``mumbo-jax run`` and ``compare`` as written."""

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems as P

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "howto" / "own-problem.md"


def blocks() -> dict[str, str]:
    """The page's code blocks that carry a file name: ``{name: text}``."""
    return dict(re.findall(r'```\w+ title="([^"]+)"\n(.*?)```', PAGE.read_text(), flags=re.S))


def branin(x, xp=np):
    """Branin in numpy (the reference) or, with ``xp=jnp``, in JAX."""
    b, c, t = 5.1 / (4 * np.pi ** 2), 5 / np.pi, 1 / (8 * np.pi)
    return (x[1] - b * x[0] ** 2 + c * x[0] - 6) ** 2 + 10 * (1 - t) * xp.cos(x[0]) + 10


def jbranin(x):
    return branin(x, jnp)


def test_discrete_problem_evaluates_each_fidelity_as_given():
    cheap = lambda x, xp=np: 2.0 * x[0] - 5.0 + branin(x, xp)  # noqa: E731
    p = P.discrete_problem("t_branin", [jbranin, lambda x: cheap(x, jnp)],
                           [[-5.0, 10.0], [0.0, 15.0]], [10.0, 1.0], 0.39788735772973816, [np.pi, 2.275])
    rng = np.random.default_rng(0)
    for x in rng.uniform([-5, 0], [10, 15], size=(5, 2)):
        # numpy reference; objective is the maximisation form (-f: minimised)
        np.testing.assert_allclose(float(P.objective(p, jnp.asarray(x), 0)), -branin(x), rtol=1e-12)
        np.testing.assert_allclose(float(P.objective(p, jnp.asarray(x), 1)), -cheap(x), rtol=1e-12)
    assert P.cost(p, 1) == 1.0 and p.target_fidelity == 0 and p.noise_variances == (0.0, 0.0)
    assert float(P.simple_regret(p, jnp.asarray([np.pi, 2.275]))) < 1e-12
    with pytest.raises(ValueError, match="fidelity 2 out of range"):
        P.objective(p, jnp.zeros(2), 2)


def test_continuous_problem_targets_the_upper_end():
    f = lambda x, z: -((x[0] - 0.3) ** 2) * (1 + z)  # noqa: E731
    p = P.continuous_problem("t_cont", f, [[0.0, 1.0]], lambda z: 0.1 + z ** 2, 0.0, [0.3], maximise=True)
    assert p.target_fidelity == 1.0 and float(P.cost(p, 0.5)) == pytest.approx(0.35)
    np.testing.assert_allclose(float(P.target_value(p, jnp.asarray([0.5]))), -0.08, rtol=1e-12)


@pytest.mark.parametrize("change, match", [
    ({"name": "my branin"}, "name must be a name"),
    ({"bounds": [[1.0, 0.0], [0.0, 15.0]]}, "bounds must be"),
    ({"costs": [10.0, 0.0]}, "costs must be finite numbers > 0"),
    ({"costs": [10.0]}, "f must be a function f\\(x, z\\) or a list of 1 functions"),
    ({"optimum_location": [20.0, 2.0]}, "optimum_location must be a point of the box"),
    ({"optimum_value": -0.39788735772973816}, "the target at optimum_location is 0.3978"),
    ({"noise_variances": [0.0]}, "noise_variances must be 2 finite numbers"),
])
def test_bad_fields_are_named(change, match):
    fields = dict(name="t_bad", f=[jbranin] * 2, bounds=[[-5.0, 10.0], [0.0, 15.0]],
                  costs=[10.0, 1.0], optimum_value=0.39788735772973816, optimum_location=[np.pi, 2.275])
    fields.update(change)
    with pytest.raises(ValueError, match=match):
        P.discrete_problem(**fields)


def install(site: Path, module: str, entry: str):
    """What ``pip install`` of the page's package leaves for importlib.metadata: the
    module and a dist-info with the entry point (no network, no build)."""
    site.mkdir(exist_ok=True)
    (site / "my_problems.py").write_text(module)
    info = site / "my_problems-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-problems\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[mumbo_jax.problems]\n{entry}\n")


def cli(args, cwd, site):
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{site}", "MUMBO_JAX_CACHE": "off"}
    return subprocess.run([sys.executable, "-m", "mumbo_jax", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


@pytest.mark.tutorial  # the page's worked example, run as written (about 95 s): CI runs it with the tutorials
def test_the_worked_example_runs_through_run_and_compare(tmp_path):
    page = blocks()
    assert set(page) == {"my_problems.py", "pyproject.toml", "run.toml", "compare.toml"}
    declared = tomllib.loads(page["pyproject.toml"])["project"]["entry-points"]["mumbo_jax.problems"]
    entry = "\n".join(f"{k} = {v}" for k, v in declared.items())
    site = tmp_path / "site"
    install(site, page["my_problems.py"], entry)
    (tmp_path / "run.toml").write_text(page["run.toml"])
    (tmp_path / "compare.toml").write_text(page["compare.toml"])

    listed = cli(["list"], tmp_path, site)
    assert listed.returncode == 0 and re.search(r"my_branin +d=2 +2 discrete fidelities, costs 10, 1", listed.stdout)

    run = cli(["run", "run.toml", "--seeds", "1", "--max-evals", "2"], tmp_path, site)
    assert run.returncode == 0, run.stderr[-3000:]
    res = json.loads((tmp_path / "runs" / "run" / "results.json").read_text())
    assert res["problem"]["name"] == "my_branin" and res["problem"]["optimum_value"] == 0.39788735772973816
    assert res["seeds"][0]["n_evals"] == 2 and (tmp_path / "runs" / "run" / "regret.png").is_file()
    # the regret is measured against the page's optimum: recompute it at the incumbent (numpy Branin)
    seed = res["seeds"][0]
    np.testing.assert_allclose(seed["final_regret"], branin(np.asarray(seed["incumbent_x"][-1])) - 0.39788735772973816,
                               rtol=1e-9, atol=1e-12)

    cmp = cli(["compare", "compare.toml", "--seeds", "2", "--max-evals", "2", "--strategies", "ei,random",
               "--workers", "2"], tmp_path, site)
    assert cmp.returncode == 0, cmp.stderr[-3000:]
    out = tmp_path / "runs" / "compare"
    table = (out / "table.md").read_text()
    assert "| ei |" in table and "| random |" in table and (out / "comparison.png").is_file()
    cres = json.loads((out / "results.json").read_text())
    assert cres["problem"] == "my_branin" and set(cres["strategies"]) == {"ei", "random"}


def test_an_unknown_problem_still_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown problem 'no_such_problem'; allowed problems: .*forrester"):
        P.get_problem("no_such_problem")


def test_a_config_with_an_unknown_problem_says_how_to_add_one():
    from mumbo_jax.run.config import ConfigError, parse_config

    with pytest.raises(ConfigError, match=r"\[run\] problem: unknown problem 'my_branin'.*allowed: forrester, .*"
                                          r"discrete_problem .*entry point of the group 'mumbo_jax.problems'"):
        parse_config({"run": {"problem": "my_branin", "budget": 5}}, source="x.toml")
