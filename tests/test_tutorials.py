"""Every tutorial script of docs/tutorials runs as written, with a tiny budget
(MUMBO_TUTORIAL_STEPS=2), in a fresh interpreter on the checkout under test.

Marked ``tutorial`` and left out of the default run (pyproject addopts) for time: CI runs
them after the docs build (`.ci/run`: ``pytest -m tutorial``)."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "docs" / "tutorials").glob("*.py"))


@pytest.mark.tutorial
@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_tutorial_script_runs(script, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64", "PYTHONPATH")}
    env.update(PYTHONPATH=str(ROOT), MUMBO_TUTORIAL_STEPS="2", MUMBO_TUTORIAL_OUT=str(tmp_path), MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, f"{script.name} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip(), f"{script.name} printed nothing"


def test_every_tutorial_script_is_on_a_page():
    """Each script is included (pymdownx.snippets) by a page of docs/tutorials."""
    pages = "".join(p.read_text() for p in (ROOT / "docs" / "tutorials").glob("*.md"))
    assert SCRIPTS
    for script in SCRIPTS:
        assert f'--8<-- "tutorials/{script.name}"' in pages, script.name
