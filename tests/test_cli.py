"""The command line: a tiny end-to-end run, and bad input rejected before any work."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mumbo_jax.run import cli, plots
from tests.bo_helpers import FAST_RECOMMENDATION_TOML, FAST_TOML

TINY = """\
# a tiny smoke run
[run]
problem = "forrester"
strategy = "mumbo"
budget = 10
seeds = 1
max_evals = 3

""" + FAST_TOML + FAST_RECOMMENDATION_TOML

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """One end-to-end run shared by the checks below: (exit code, stdout, out dir)."""
    tmp = tmp_path_factory.mktemp("cli")
    config = tmp / "tiny.toml"
    config.write_text(TINY)
    out = tmp / "out"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli.main(["run", str(config), "--out", str(out)])
    return code, buf.getvalue(), out


def test_run_exit_code_and_files(tiny_run):
    code, stdout, out = tiny_run
    assert code == 0
    assert (out / "results.json").is_file()
    png = out / "regret.png"
    assert png.is_file() and png.read_bytes()[:8] == PNG_MAGIC
    # one live progress line for the run (tqdm) and a line per finished seed
    assert "seeds done 1/1" in stdout and "cost " in stdout and "seed 0 done:" in stdout
    assert "AFTER the initial design" in stdout  # the budget rule, where the user looks
    assert "median final regret" in stdout and str(out / "results.json") in stdout and str(png) in stdout


def test_run_results_json(tiny_run):
    _, _, out = tiny_run
    res = json.loads((out / "results.json").read_text())
    assert res["config"]["run"]["problem"] == "forrester"
    assert res["config"]["run"]["out"] == str(out)  # the --out override is recorded
    assert res["settings"]["maximiser"]["n_candidates"] == 200
    assert res["config"]["settings"]["maximiser"]["n_candidates"] == 200  # the config as given, by record
    assert res["problem"]["optimum_value"] == pytest.approx(-6.0207400557670825)
    assert res["wall_time_s"] > 0
    (seed,) = res["seeds"]
    n = seed["n_evals"]
    assert 1 <= n <= 3
    assert len(seed["evaluations"]) == n
    assert len(seed["cost_spent"]) == len(seed["regret"]) == len(seed["incumbent_x"]) == n + 1
    costs = [e["cost"] for e in seed["evaluations"]]
    assert all(c in (10.0, 5.0, 2.0) for c in costs)
    assert [c for c in costs] == [(10.0, 5.0, 2.0)[e["z"]] for e in seed["evaluations"]]
    assert np.allclose(np.cumsum([0.0] + costs), seed["cost_spent"])
    # the run stops once the budget is spent or max_evals is reached
    assert seed["cost_spent"][-1] >= 10 or n == 3
    assert all(r is not None and r >= 0 for r in seed["regret"])
    assert seed["final_regret"] == seed["regret"][-1]
    assert seed["initial_cost"] == pytest.approx(2 * (10 + 5 + 2))  # 2 d points at every fidelity
    for e in seed["evaluations"]:
        assert len(e["x"]) == 1 and 0.0 <= e["x"][0] <= 1.0 and math.isfinite(e["y"])
    assert len(seed["overheads"]) == n
    for o in seed["overheads"]:
        assert set(o) == {"fit", "gstar", "maximise", "total"}
        assert o["total"] == pytest.approx(o["fit"] + o["gstar"] + o["maximise"])
        assert all(v >= 0 for v in o.values())
    assert res["summary"]["median_final_regret"] == pytest.approx(seed["final_regret"])
    assert res["complete"] and res["summary"]["statistic"] == "median over seeds"


def test_run_results_include_the_initial_design_and_a_csv(tiny_run):
    """results.json has the design's evaluations (2 d points at each of 3 fidelities),
    consistent with the loop's own initial_cost; evaluations.csv has every evaluation."""
    import csv

    _, _, out = tiny_run
    res = json.loads((out / "results.json").read_text())
    (seed,) = res["seeds"]
    design = seed["initial_design"]
    assert [e["z"] for e in design] == [0, 0, 1, 1, 2, 2]
    assert sum(e["cost"] for e in design) == pytest.approx(seed["initial_cost"])
    for e in design:  # noiseless and minimised: y = -f(x, z), Forrester's closed forms (Appendix B)
        (x,) = e["x"]
        f0 = (6 * x - 2) ** 2 * math.sin(12 * x - 4)
        f = [f0, 0.75 * f0 + 3 * (x - 0.5) + 2, 0.5 * f0 + 5 * (x - 0.5) + 2][e["z"]]
        assert e["y"] == pytest.approx(-f, rel=1e-9, abs=1e-12)
    rows = list(csv.DictReader((out / "evaluations.csv").open()))
    assert len(rows) == len(design) + seed["n_evals"]
    assert [r["phase"] for r in rows] == ["design"] * len(design) + ["bo"] * seed["n_evals"]
    bo = rows[len(design):]
    assert [float(r["cost_spent"]) for r in bo] == pytest.approx(seed["cost_spent"][1:])
    assert [float(r["x0"]) for r in bo] == pytest.approx([e["x"][0] for e in seed["evaluations"]])


def test_malformed_config_exits_2_and_writes_nothing(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text(TINY.replace("budget = 10", 'budget = "abc"'))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "mumbo_jax", "run", str(config), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "budget" in proc.stderr and "bad.toml" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert proc.stdout == ""
    assert not out.exists()


@pytest.mark.parametrize("text", ["[run\n", "[run]\nproblem = 'forrester'\nbudget = 1\nnoise = 3\n"])
def test_bad_config_in_process(tmp_path, capsys, text):
    config = tmp_path / "bad.toml"
    config.write_text(text)
    assert cli.main(["run", str(config), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mumbo-jax: error: ") and "bad.toml" in err
    assert not (tmp_path / "out").exists()


def test_missing_config_and_bad_seeds(tmp_path, capsys):
    assert cli.main(["run", str(tmp_path / "none.toml")]) == 2
    assert "none.toml" in capsys.readouterr().err
    config = tmp_path / "ok.toml"
    config.write_text(TINY)
    with pytest.raises(SystemExit) as info:  # argparse rejects it
        cli.main(["run", str(config), "--seeds", "0"])
    assert info.value.code == 2
    assert "--seeds" in capsys.readouterr().err


def test_step_interpolation_and_zero_regret(tmp_path):
    cost = np.array([0.0, 2.0, 12.0])
    regret = np.array([1.0, 0.5, 0.0])
    grid = np.array([0.0, 1.9, 2.0, 11.9, 12.0, 50.0])
    np.testing.assert_allclose(plots.step_interpolate(cost, regret, grid), [1.0, 1.0, 0.5, 0.5, 0.0, 0.0])
    g, mean, se = plots.regret_statistics([(cost, regret), (np.array([0.0, 5.0]), np.array([3.0, 1.0]))], n_grid=5)
    np.testing.assert_allclose(g, [0, 3, 6, 9, 12])
    np.testing.assert_allclose(mean, [2.0, 1.75, 0.75, 0.75, 0.5])
    np.testing.assert_allclose(se[0], np.std([1.0, 3.0], ddof=1) / np.sqrt(2))
    path = plots.plot_regret([(cost, regret)], tmp_path / "r.png", title="zero regret")
    assert path.read_bytes()[:8] == PNG_MAGIC
    path = plots.plot_regret({"a": [(cost, regret)], "b": [(cost, regret + 1)]}, tmp_path / "two.png")
    assert path.read_bytes()[:8] == PNG_MAGIC


def test_compilation_cache_follows_the_environment(monkeypatch, tmp_path):
    import jax

    from mumbo_jax.runtime import compilation_cache
    from mumbo_jax.run.cli import enable_compilation_cache

    before = jax.config.jax_compilation_cache_dir
    try:
        jax.config.update("jax_compilation_cache_dir", None)
        monkeypatch.setenv("MUMBO_JAX_CACHE", "off")
        assert enable_compilation_cache() is None and compilation_cache.enable() is None
        assert jax.config.jax_compilation_cache_dir is None
        monkeypatch.delenv("MUMBO_JAX_CACHE")
        assert compilation_cache.cache_dir() == str(compilation_cache.default_dir())
        monkeypatch.setenv("MUMBO_JAX_CACHE", str(tmp_path / "xla"))
        assert enable_compilation_cache() == str(tmp_path / "xla")
        assert jax.config.jax_compilation_cache_dir == str(tmp_path / "xla")
        # a folder already configured (the user's) is kept
        monkeypatch.setenv("MUMBO_JAX_CACHE", str(tmp_path / "other"))
        assert compilation_cache.enable() == str(tmp_path / "xla")
        assert jax.config.jax_compilation_cache_dir == str(tmp_path / "xla")
    finally:
        jax.config.update("jax_compilation_cache_dir", before)
        from jax.experimental.compilation_cache import compilation_cache as jax_cache
        jax_cache.reset_cache()


def test_regret_statistics_match_numpy_where_seeds_are_missing():
    import warnings

    from mumbo_jax.run import plots

    a = (np.array([0.0, 1.0, 2.0]), np.array([3.0, 2.0, 1.0]))
    b = (np.array([0.0, 2.0, 4.0]), np.array([4.0, 2.0, 1.0]))
    empty = (np.array([np.nan]), np.array([np.nan]))  # a seed with no finished step
    grid = np.linspace(0, 4, 9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's nanstd would warn with one seed of data
        _, mean, se = plots.regret_statistics([a, b, empty], n_grid=9, max_cost=4.0)
        _, mean1, se1 = plots.regret_statistics([a, empty], n_grid=9, max_cost=4.0)
    on_grid = np.stack([plots.step_interpolate(c, r, grid) for c, r in (a, b)])
    np.testing.assert_allclose(mean, on_grid.mean(axis=0))
    np.testing.assert_allclose(se, on_grid.std(axis=0, ddof=1) / np.sqrt(2))
    np.testing.assert_allclose(mean1, on_grid[0])
    np.testing.assert_array_equal(se1, 0.0)
