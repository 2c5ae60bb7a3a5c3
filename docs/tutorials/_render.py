"""Regenerate what the tutorial pages show: run each tutorial script (or those named) as
a user would, with its full budget, and keep its printed output and its plot.

    python docs/tutorials/_render.py [asktell functional ...]

For each script ``NAME.py`` it writes ``output/NAME.txt`` (the script's stdout) and the
script's plot ``NAME.png`` is copied to ``output/NAME.png``; ``output/NAME.sha256`` records the sha256 of the
script that produced them, and tests/test_tutorials.py fails when a script changes
without its output being regenerated (the pages never show pasted or stale output).
"""

import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "output"


def script_hash(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def render(name: str) -> None:
    script = HERE / f"{name}.py"
    env = {k: v for k, v in os.environ.items() if k not in ("MUMBO_TUTORIAL_STEPS", "JAX_ENABLE_X64")}
    env.update(MUMBO_TUTORIAL_OUT=".", MPLBACKEND="Agg", PYTHONPATH=str(HERE.parents[1]))
    with tempfile.TemporaryDirectory() as work:  # run folders a script makes stay out of docs/
        proc = subprocess.run([sys.executable, str(script)], cwd=work, env=env, capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(f"{name} failed:\n{proc.stderr[-4000:]}")
        shutil.copy(pathlib.Path(work) / f"{name}.png", OUT / f"{name}.png")
    (OUT / f"{name}.txt").write_text(proc.stdout)
    (OUT / f"{name}.sha256").write_text(script_hash(script) + "\n")
    print(f"{name}: output/{name}.txt, output/{name}.png")


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    names = sys.argv[1:] or sorted(p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_"))
    for n in names:
        render(n)
