"""Old names tell the user the new one: a flat BOSettings keyword names its record's
field, an old flat config loads with one visible line from the CLI, and a config for
another command names that command."""

import subprocess
import sys
from pathlib import Path

import pytest

from mumbo_jax.bo.settings import BOSettings, old_keys
from mumbo_jax.run import cli
from mumbo_jax.run.config import ConfigError, parse_compare_config, parse_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("old", sorted(old_keys()))
def test_every_old_flat_keyword_names_its_new_field(old):
    record, name = old_keys()[old]
    with pytest.raises(TypeError) as e:
        BOSettings(**{old: 1})
    assert f"{old} is now {record}.{name}" in str(e.value)
    assert f"BOSettings({record}={{'{name}': 1}})" in str(e.value)


def test_old_keywords_together_and_through_replace():
    with pytest.raises(TypeError, match=r"n_gstar is now gstar\.samples, fit_restarts is now fit\.restarts; write "
                                        r"BOSettings\(gstar=\{'samples': -1\}, fit=\{'restarts': 2\}\)"):
        BOSettings(n_gstar=-1, fit_restarts=2)
    with pytest.raises(TypeError, match=r"incumbent_rule is now recommendation\.rule"):
        BOSettings().replace(incumbent_rule="mean")
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):  # other names: Python's message
        BOSettings(bogus=1)
    assert BOSettings(gstar={"samples": 3}).gstar.samples == 3  # the new spelling still builds


OLD_FLAT = """\
[run]
problem = "forrester"
budget = 5
[acquisition]
n_gstar = 4
"""


def test_cli_prints_one_line_for_an_old_flat_config(tmp_path):
    """In a fresh process (Python's default filters, which hide DeprecationWarning): the
    run is refused afterwards for its output folder, but the note comes first, on one line."""
    (tmp_path / "old.toml").write_text(OLD_FLAT)
    (tmp_path / "out").write_text("a file, not a folder")  # stops the command right after loading
    proc = subprocess.run([sys.executable, "-m", "mumbo_jax", "run", "old.toml", "--out", "out"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "MUMBO_JAX_CACHE": "off", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if "old key names" in line]
    assert len(notes) == 1, proc.stderr
    assert "old.toml" in notes[0] and "n_gstar is deprecated; use samples in [settings.gstar]" in notes[0]
    assert "DeprecationWarning" not in proc.stderr


def test_cli_is_silent_for_a_current_config(tmp_path, capsys):
    (tmp_path / "new.toml").write_text('[run]\nproblem = "forrester"\nbudget = 5\n[settings.gstar]\nsamples = 4\n')
    (tmp_path / "out").write_text("")
    assert cli.main(["run", str(tmp_path / "new.toml"), "--out", str(tmp_path / "out")]) == 2
    assert "old key names" not in capsys.readouterr().err


TUNE = {"objective": {"function": "m:f"}, "parameters": {"a": {"low": 0.0, "high": 1.0}},
        "run": {"strategy": "random"}}


@pytest.mark.parametrize("parse, data, hint", [
    (parse_config, TUNE, "mumbo-jax tune FILE"),
    (parse_config, {"compare": {"problem": "forrester", "budget": 5, "strategies": ["random"]}},
     "mumbo-jax compare FILE"),
    (parse_compare_config, {"run": {"problem": "forrester", "budget": 5}}, "mumbo-jax run FILE"),
    (parse_compare_config, TUNE, "mumbo-jax tune FILE"),
])
def test_a_config_for_another_command_names_it(parse, data, hint):
    with pytest.raises(ConfigError, match=f"t.toml: this is a .*: run it with `{hint}`"):
        parse(data, source="t.toml")


def test_run_given_the_shipped_tune_example_suggests_tune(capsys):
    assert cli.main(["run", "tune_example"]) == 2
    err = capsys.readouterr().err
    assert "tuning configuration" in err and "`mumbo-jax tune FILE`" in err and "unknown section" not in err
