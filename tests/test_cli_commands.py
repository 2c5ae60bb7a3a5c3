"""The command line's conveniences and its guards: --version, list, config-help, shipped
configs by name, overrides, an unwritable output folder (exit 2 before any work), a
strategy that does not fit the fidelity kind, and results written as seeds finish."""

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import asktell, compiled, rules
from mumbo_jax.bo.compiled import History
from mumbo_jax.run import cli, config, runner
from mumbo_jax.run.config import ConfigError, parse_config
from mumbo_jax.run.tune import parse_tune_config

ROOT = Path(__file__).resolve().parents[1]
UNWRITABLE = "/proc/mumbo-no-such-dir/out"  # /proc refuses new entries, even to root

TINY = """\
[run]
problem = "forrester"
budget = 10
seeds = 2
max_evals = 3
"""

TUNE = """\
[objective]
function = "mumbo_jax.benchmarks.examples:train_demo"
direction = "maximise"
[parameters]
learning_rate = {low = 1e-4, high = 1.0, log = true}
[fidelity]
kind = "discrete"
costs = [10.0, 1.0]
[budget]
evaluations = 2
"""


def one_line_error(capsys, *words):
    err = capsys.readouterr().err
    assert err.startswith("mumbo-jax: error: ") and err.count("\n") == 1, err
    for w in words:
        assert w in err, (w, err)
    return err


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if any BO work starts."""
    def boom(*a, **k):
        raise AssertionError("BO work started")
    monkeypatch.setattr(tasks, "run_problem", boom)
    monkeypatch.setattr(asktell, "AskTell", boom)


def test_version(capsys):
    from mumbo_jax import __version__

    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.strip() == f"mumbo-jax {__version__}"


def test_list_shows_every_problem_and_strategy_with_its_fidelity_kinds(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for p in problems.PROBLEMS.values():
        (line,) = [ln for ln in lines if ln.split()[:1] == [p.name]]
        assert f"d={p.dim}" in line
        if p.is_discrete:
            assert f"{p.n_fidelities} discrete fidelities, costs " + ", ".join(f"{c:g}" for c in p.costs) in line
        else:
            assert "continuous fidelity" in line
    block = out.split("strategies (fidelity kinds they support):")[1].split("compare presets")[0].splitlines()
    for s in rules.STRATEGIES:
        (line,) = [ln for ln in block if ln.split()[:1] == [s]]
        expect = ("discrete only" if s in rules.DISCRETE_ONLY else "continuous only"
                  if s in rules.CONTINUOUS_ONLY else "discrete and continuous")
        assert expect in line
    assert all(label in out for label in config.STRATEGY_PRESETS)
    assert all(name in out.split("shipped configs")[1] for name in config.packaged_configs())


def test_config_help_covers_every_key(capsys):
    from mumbo_jax.run.tune import TUNE_SECTIONS

    assert cli.main(["config-help", "tune"]) == 0
    out = capsys.readouterr().out
    for section in TUNE_SECTIONS:
        assert f"[{section.name}]" in out
        assert all(f"  {f.name} " in out for f in section.fields)
    assert "INCLUDE" in out  # the tuning budget rule
    assert cli.main(["config-help", "run"]) == 0
    assert "AFTER the initial design" in capsys.readouterr().out  # the run budget rule


def test_shipped_configs_are_found_by_name_and_match_the_repository(tmp_path, monkeypatch):
    shipped = config.packaged_configs()
    repo = {p.stem: p for p in (ROOT / "configs").glob("*.toml")}
    assert shipped.keys() == repo.keys()
    assert all(shipped[k].read_bytes() == repo[k].read_bytes() for k in repo)
    monkeypatch.chdir(tmp_path)  # no configs/ folder here
    assert config.find_config("forrester") == shipped["forrester"]
    assert config.find_config("configs/forrester.toml") == shipped["forrester"]
    assert config.find_config("tune_example.toml") == shipped["tune_example"]
    with pytest.raises(ConfigError, match="not found, and not the name of a shipped config .*forrester"):
        config.find_config("forester")


def test_run_by_name_with_overrides(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(runner, "run_config", lambda cfg, **k: seen.append(cfg))
    out = tmp_path / "o"
    assert cli.main(["run", "forrester", "--seeds", "2", "--budget", "5", "--max-evals", "3", "--out", str(out)]) == 0
    assert cli.main(["run", "--out", str(out)]) == 0  # the default: forrester as shipped
    a, b = seen
    assert (a.problem, a.seeds, a.budget, a.max_evals, a.out) == ("forrester", 2, 5.0, 3, str(out))
    assert (b.problem, b.budget, b.seeds) == ("forrester", 200.0, 10)
    assert Path(a.source) == config.packaged_configs()["forrester"]


@pytest.mark.parametrize("args", [["--budget", "0"], ["--budget", "x"], ["--max-evals", "0"]])
def test_bad_overrides_are_argument_errors(args, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["run", "forrester"] + args)
    assert info.value.code == 2 and args[0] in capsys.readouterr().err


def test_installed_wheel_ships_the_configs(tmp_path):
    """`pip wheel .`: the wheel holds every config of configs/ as package data."""
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = tmp_path.glob("mumbo_jax-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for p in (ROOT / "configs").glob("*.toml"):
        assert f"mumbo_jax/run/configs/{p.name}" in names


# ---------------------------------------------------------------------------- bug 1: output folder


def test_unwritable_output_fails_before_any_work(tmp_path, capsys, no_work):
    cfg = tmp_path / "tiny.toml"
    cfg.write_text(TINY)
    assert cli.main(["run", str(cfg), "--out", UNWRITABLE]) == 2
    one_line_error(capsys, UNWRITABLE, "not writable")
    tune_cfg = tmp_path / "tune.toml"
    tune_cfg.write_text(TUNE)
    assert cli.main(["tune", str(tune_cfg), "--out", UNWRITABLE]) == 2
    one_line_error(capsys, UNWRITABLE, "not writable")
    assert cli.main(["compare", "compare_currin", "--out", UNWRITABLE]) == 2
    one_line_error(capsys, UNWRITABLE, "not writable")
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    assert cli.main(["run", str(cfg), "--out", str(a_file)]) == 2
    one_line_error(capsys, "exists and is not a folder")


def test_unwritable_output_in_a_fresh_process(tmp_path):
    cfg = tmp_path / "tiny.toml"
    cfg.write_text(TINY)
    proc = subprocess.run([sys.executable, "-m", "mumbo_jax", "run", str(cfg), "--out", UNWRITABLE],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def history(n_seeds: int, n: int, max_evals: int, d: int = 1) -> History:
    """A finished History of ``n`` BO evaluations per seed (costs 2, regret halving)."""
    k = np.arange(max_evals + 1, dtype=float)
    rep = lambda a: np.repeat(a[None], n_seeds, axis=0)
    return History(
        x=rep(np.full((max_evals, d), 0.5)), z=rep(np.full(max_evals, 2.0)), y=rep(np.zeros(max_evals)),
        cost=rep(np.full(max_evals, 2.0)), cost_spent=rep(np.where(k <= n, 2.0 * k, np.nan)),
        incumbent_x=rep(np.full((max_evals + 1, d), 0.5)), incumbent_value=rep(np.zeros(max_evals + 1)),
        regret=rep(np.where(k <= n, 0.5 ** k, np.nan)), incumbent_mean=rep(np.zeros(max_evals + 1)),
        incumbent_sd=rep(np.ones(max_evals + 1)), n_evals=np.full(n_seeds, n), initial_cost=np.full(n_seeds, 34.0))


def test_run_writes_each_finished_seed_before_a_late_failure(tmp_path, monkeypatch):
    """Seed 0 finishes, seed 1 fails: results.json and evaluations.csv hold seed 0."""
    calls = []

    def fake_run(problem, budget, seeds, settings, **kw):
        calls.append(list(seeds))
        if len(calls) == 2:
            raise RuntimeError("late failure")
        return history(len(seeds), 2, kw["max_evals"])

    monkeypatch.setattr(tasks, "run_problem", fake_run)
    monkeypatch.setattr(compiled, "backend_batching", lambda: {"batching": "map", "min_buffer": 32})
    cfg = tmp_path / "tiny.toml"
    cfg.write_text(TINY)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="late failure"):
        cli.main(["run", str(cfg), "--out", str(out)])
    assert calls == [[0], [1]]
    res = json.loads((out / "results.json").read_text())
    assert not res["complete"] and [s["seed"] for s in res["seeds"]] == [0]
    assert res["seeds"][0]["regret"] == [1.0, 0.5, 0.25]
    rows = (out / "evaluations.csv").read_text().splitlines()
    assert len(rows) == 1 + 6 + 2  # header, 2 d points at 3 fidelities, 2 BO evaluations


# ---------------------------------------------------------------------------- bug 2: strategy vs fidelity kind


@pytest.mark.parametrize("problem, strategy, words", [
    ("forrester", "boca", "'boca' needs a continuous fidelity; 'forrester' has discrete ones"),
    ("currin_continuous", "mf_gp_ucb", "'mf_gp_ucb' needs discrete fidelities; 'currin_continuous' has a continuous"),
])
def test_run_config_rejects_a_strategy_for_the_other_fidelity_kind(problem, strategy, words):
    with pytest.raises(ConfigError) as info:
        parse_config({"run": {"problem": problem, "budget": 10, "strategy": strategy}}, source="c.toml")
    assert str(info.value).startswith("c.toml: [run] strategy: ") and words in str(info.value)


@pytest.mark.parametrize("fidelity, strategy, words", [
    ({"kind": "discrete", "costs": [10.0, 1.0]}, "boca", "'boca' needs a continuous fidelity; [fidelity] kind is"),
    ({"kind": "continuous", "bounds": [0.1, 1.0]}, "mf_gp_ucb", "'mf_gp_ucb' needs discrete fidelities"),
])
def test_tune_config_rejects_a_strategy_for_the_other_fidelity_kind(fidelity, strategy, words):
    data = {"objective": {"direction": "maximise"}, "parameters": {"a": {"low": 0.0, "high": 1.0}},
            "fidelity": fidelity, "budget": {"evaluations": 3}, "run": {"strategy": strategy}}
    with pytest.raises(ConfigError) as info:
        parse_tune_config(data, source="t.toml")
    assert str(info.value).startswith("t.toml: [run] strategy: ") and words in str(info.value)


def test_cli_strategy_misfit_exit_2_before_any_work(tmp_path, capsys, no_work):
    run_cfg = tmp_path / "r.toml"
    run_cfg.write_text(TINY + 'strategy = "boca"\n')
    assert cli.main(["run", str(run_cfg), "--out", str(tmp_path / "o")]) == 2
    one_line_error(capsys, "r.toml", "needs a continuous fidelity")
    tune_cfg = tmp_path / "t.toml"
    tune_cfg.write_text(TUNE + '[run]\nstrategy = "boca"\n')
    assert cli.main(["tune", str(tune_cfg), "--out", str(tmp_path / "t")]) == 2
    one_line_error(capsys, "t.toml", "needs a continuous fidelity")
    assert not (tmp_path / "o").exists() and not (tmp_path / "t").exists()


# ---------------------------------------------------------------------------- the plotted statistic


def test_regret_quantiles_are_numpys_over_the_seeds_present():
    """The run plot draws the median and quartiles the summary reports: numpy's
    quantiles of the step-interpolated curves, over the seeds with data at each cost."""
    from mumbo_jax.run import plots

    curves = [(np.array([0.0, 1.0, 3.0]), np.array([4.0, 2.0, 1.0])),
              (np.array([0.0, 2.0]), np.array([8.0, 0.5])),
              (np.array([0.0, 0.5, 4.0]), np.array([1.0, 0.25, 0.125])),
              (np.array([np.nan]), np.array([np.nan]))]  # a seed without data
    grid, q = plots.regret_quantiles(curves, n_grid=9, max_cost=4.0)
    on_grid = np.stack([plots.step_interpolate(c, r, grid) for c, r in curves[:3]])
    np.testing.assert_allclose(q, np.quantile(on_grid, [0.25, 0.5, 0.75], axis=0))
    assert q[1, -1] == 0.5  # median of the final regrets (1.0, 0.5, 0.125)
    with pytest.raises(ValueError, match="statistic must be 'median' or 'mean'"):
        plots.plot_regret(curves[:1], "unused.png", statistic="mode")
