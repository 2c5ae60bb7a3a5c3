"""The Python examples of the README and of the docs pages, each run as written in a
FRESH interpreter (the tutorials, which are scripts, are run by tests/test_tutorials.py).

A block runs in its own subprocess (no conftest, so 64-bit mode is on only if the block
turns it on, as for a user who pastes it). Where a block prints a value, the printed
value is checked against an independent reference (scipy quadrature, a closed form,
the objective itself), not against a number copied from a previous run.
"""

import ast
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
from scipy import integrate, stats

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# the README, then the docs pages that carry its former examples (the tutorials' scripts
# run in tests/test_tutorials.py; other pages test their own examples); a block repeated
# on two pages runs once
PAGES = [README] + [ROOT / "docs" / p for p in ("getting-started.md", "concepts.md", "howto/tuning.md",
                                                 "howto/batches.md", "howto/configs-cli.md", "howto/gpus-sharding.md",
                                                 "howto/reproducibility.md", "howto/install.md")]
BLOCKS = list(dict.fromkeys(b for page in PAGES for b in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
                            if "--8<--" not in b))
X64 = "jax_enable_x64"


PROBE = "\nimport jax as _jax_probe\nprint('__x64__', bool(_jax_probe.config.jax_enable_x64))\n"


def run_block(code: str, tmp_path) -> tuple[list[str], bool]:
    """Run ``code`` in a fresh Python; return its stdout lines and whether 64-bit mode
    was on when it ended (fails with the block's stderr)."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64", "PYTHONPATH")}
    env["PYTHONPATH"] = str(ROOT)  # the checkout under test, whatever is installed
    proc = subprocess.run([sys.executable, "-c", code + PROBE], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, f"the block failed:\n{proc.stderr[-3000:]}"
    lines = proc.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("__x64__"), lines
    return lines[:-1], lines[-1].endswith("True")


def _values(line: str) -> list:
    """Python literals printed side by side on one line (dicts, lists, floats)."""
    out, depth, start = [], 0, None
    tokens = re.finditer(r"[{}\[\]]|[-+0-9.eE]+|\S", line)
    for t in tokens:
        ch = t.group()
        if ch in "{[":
            depth += 1
            start = t.start() if depth == 1 else start
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                out.append(ast.literal_eval(line[start:t.end()]))
        elif depth == 0:
            try:
                out.append(float(ch))
            except ValueError:
                pass
    return out


# ---------------------------------------------------------------- checks of printed values
# keyed by a line of the block, so a block that is rewritten without it is only run


def check_expected_improvement(lines):
    # E[max(g, 0)], g ~ N(0.5, 2^2), by quadrature of the definition
    ref, _ = integrate.quad(lambda g: g * stats.norm.pdf(g, 0.5, 2.0), 0.0, np.inf, epsabs=1e-13)
    assert float(lines[0]) == pytest.approx(ref, rel=1e-10)
    # p_min: the argmax frequencies of the same joint samples, counted here with numpy
    import jax

    with jax.enable_x64(True):
        samples = np.asarray(jax.random.normal(jax.random.PRNGKey(0), (4, 1000)))
    ref_p = np.bincount(np.argmax(samples, axis=0), minlength=4) / 1000
    printed = np.asarray([float(v) for v in re.findall(r"[-+]?\d*\.\d+(?:e[-+]?\d+)?|\d+", lines[1])])
    np.testing.assert_allclose(printed, ref_p, atol=1e-6)
    assert np.all(np.abs(ref_p - 0.25) < 0.05)  # "~ 1/4 each", as the comment says


def check_predict_cost(lines):
    # seconds = exp(0.1 x2 + 1.2 z): at x = (0, 0), z = 0 (the full data) the true cost is 1 s
    printed = np.asarray([float(v) for v in re.findall(r"[-+]?\d*\.?\d+(?:e[-+]?\d+)?", lines[-1])])
    assert printed.size == 1 and abs(np.log(printed[0])) < np.log(1.5), printed


def check_tune(lines):
    line = next(ln for ln in lines if ln.startswith("{'evaluations'"))  # the block's print (tune logs too)
    counts, evaluation_s, best = _values(line)
    assert counts["evaluations"] == 5 and counts["ok"] == 5 and counts["failed"] == 0
    assert evaluation_s >= 0
    # the best observed score at the target fidelity (1.0) is the objective at its x
    assert best["score"] == pytest.approx(-((best["x"]["lr"] - 0.01) ** 2), rel=1e-12, abs=1e-15)


def check_functional_api(lines):
    # the chosen x is one of the 1,000 candidates the block draws (same generator calls)
    rng = np.random.default_rng(0)
    rng.uniform(size=(30, 2)), rng.integers(0, 2, 30)
    cand = rng.uniform(size=(1000, 2))
    m = re.search(r"evaluate x = \[([^\]]*)\] at fidelity (\d+)", lines[-1])
    assert m, lines
    x = np.asarray([float(v) for v in m.group(1).split()])
    assert int(m.group(2)) in (0, 1)
    assert np.min(np.max(np.abs(cand - x), axis=1)) < 1e-6


CHECKS = {
    "baselines.expected_improvement(0.5, 4.0, 0.0)": check_expected_improvement,
    "print(costmodel.predict_cost(": check_predict_cost,
    "results = tune.tune(config, objective=objective, out=run_dir)": check_tune,
    'print(f"evaluate x = {cand[i]} at fidelity {f}")': check_functional_api,
}


# Blocks that call the numerical core without turning on 64-bit mode: pasted as written
# they run in float32 (the docs' "Precision" says the core needs float64); a known docs
# bug, owned by the sections' authors. Strict xfail: if the library starts enabling
# float64 itself the test XPASSes and fails, so the mark gets removed; once the block
# enables it, the condition is false and the test runs normally.
FLOAT32_BLOCKS = ("costmodel.fit_cost(",)


def _case(i, block):
    marks = []
    if X64 not in block and any(key in block for key in FLOAT32_BLOCKS):
        marks.append(pytest.mark.xfail(strict=True, reason=f"example block {i} never enables {X64}: it runs the "
                                                           "numerical core in float32"))
    return pytest.param(i, id=f"block{i}", marks=marks)


# each block is a fresh process that compiles a whole run (50-110 s on a loaded 2-core machine):
# CI runs them with the tutorials, after the docs build (`.ci/run`: pytest -m tutorial)
@pytest.mark.tutorial
@pytest.mark.parametrize("i", [_case(i, b) for i, b in enumerate(BLOCKS)])
def test_readme_block_runs_in_float64_and_prints_what_it_says(i, tmp_path):
    lines, x64 = run_block(BLOCKS[i], tmp_path)
    # the tuner runs its drivers inside jax.enable_x64 and leaves the global flag alone
    if "mumbo_jax" in BLOCKS[i] and "tune.tune(" not in BLOCKS[i]:
        assert x64, "the block ran the library in float32 (it never enables jax_enable_x64)"
    for key, check in CHECKS.items():
        if key in BLOCKS[i]:
            check(lines)


def test_readme_has_the_checked_examples():
    assert len(BLOCKS) >= 5
    missing = [key for key in CHECKS if not any(key in b for b in BLOCKS)]
    assert not missing, f"the README and docs lost (or renamed) the examples whose output is checked: {missing}"


def test_readme_is_short_and_has_the_quick_start():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    assert "pip install . && mumbo-jax run" in text and 'pip install ".[test]" && pytest' in text
    # no development-log residue: commit hashes, round or issue numbers, log file names
    assert not re.search(r"\b[0-9a-f]{7,40}\b", text.replace("0123456789abcdef", ""))
    assert not re.search(r"\b(issue|session|round) \d+", text, flags=re.I)
    assert not re.search(r"\.log\b", text)


def test_value_parser():
    assert _values("{'a': 1} 0.5 {'x': {'lr': 0.1}, 'score': -1e-3}") == [{"a": 1}, 0.5,
                                                                           {"x": {"lr": 0.1}, "score": -1e-3}]


def test_readme_quick_start_figures_come_from_the_committed_run():
    import json

    res = json.loads((ROOT / "data" / "quickstart" / "results.json").read_text())
    s = res["summary"]
    text = " ".join(README.read_text().split())
    q1, q3 = s["quartiles_final_regret"]
    assert f"median final regret {s['median_final_regret']:.1e} over the {len(s['n_evals'])} seeds" in text
    assert f"(quartiles {q1:.1e} and {q3:.1e})" in text
    assert f"{min(s['n_evals'])} to {max(s['n_evals'])} BO evaluations per seed" in text
