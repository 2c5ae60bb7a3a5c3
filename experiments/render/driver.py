"""The driver: every ``<!-- render: NAME ARG -->`` region of the pages rebuilt by the
renderer ``RENDERERS[NAME]`` from the data named by ARG, and ``table.md`` of every sweep
under ``docs/results/``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re

from .common import ROOT
from .compile import (render_base_block, render_compile, render_compile_lbfgs, render_compile_polish, render_draws,
                      render_icm_fit, render_prefetch, render_size_classes,
                      render_traced_settings)
from .large_n import (render_bench_linalg, render_botorch_fresh, render_botorch_in_run, render_botorch_mfmes,
                      render_gpu_large_n, render_inducing, render_large_n, render_long_run,
                      render_pruned_scoring)
from .seed_studies import render_paired_seed_study
from .speed import (render_bo_studies, render_compare_workers, render_decision, render_fit_speed_seed_study,
                    render_gpu_fit_speed, render_overhead_mtbo, render_profile_decision, render_speed,
                    render_step_overhead, render_sweep_timing)
from .studies import render_ablation, render_async_study, render_batch_study_defaults, render_fastcv
from .sweeps import compare_table, render_compare, render_summary, render_sweep, render_verdict

DOCS = ("README.md", "docs/RESULTS.md", "docs/performance.md", "docs/results/mumbo_more_problems.md")
MARKER = re.compile(r"(<!-- render: *([a-z_0-9]+)(?: +([A-Za-z0-9_./-]+))? *-->\n)(.*?)(<!-- /render -->)", re.S)

# NAME in a page's marker -> the renderer, by report section
RENDERERS = {
    # RESULTS: the paper's figures (sweeps.py)
    "compare": render_compare, "summary": render_summary, "sweep": render_sweep, "verdict": render_verdict,
    # RESULTS: levers, batches, asynchronous workers, tuning tasks (studies.py)
    "ablation": render_ablation, "batch_study_defaults": render_batch_study_defaults,
    "async_study": render_async_study, "fastcv": render_fastcv,
    # README and performance: speed (speed.py)
    "overhead_mtbo": render_overhead_mtbo, "speed": render_speed, "bo_studies": render_bo_studies,
    "step_overhead": render_step_overhead, "decision": render_decision, "profile_decision": render_profile_decision,
    "sweep_timing": render_sweep_timing, "compare_workers": render_compare_workers,
    "fit_speed_seed_study": render_fit_speed_seed_study, "gpu_fit_speed": render_gpu_fit_speed,
    # performance: compilation (compile.py)
    "icm_fit": render_icm_fit, "compile": render_compile, "compile_polish": render_compile_polish,
    "compile_lbfgs": render_compile_lbfgs, "base_block": render_base_block, "draws": render_draws,
    "prefetch": render_prefetch, "size_classes": render_size_classes,
    "traced_settings": render_traced_settings,
    # performance: large n, long runs, BoTorch (large_n.py)
    "gpu_large_n": render_gpu_large_n, "large_n": render_large_n, "bench_linalg": render_bench_linalg,
    "botorch_mfmes": render_botorch_mfmes, "long_run": render_long_run, "inducing": render_inducing,
    "pruned_scoring": render_pruned_scoring,
    "botorch_fresh": render_botorch_fresh, "botorch_in_run": render_botorch_in_run,
    # performance: paired seed studies (seed_studies.py)
    "paired_seed_study": render_paired_seed_study,
}


def render_text(text: str, root=ROOT) -> str:
    """``text`` with every marked region rebuilt from the data under ``root``."""
    def sub(m):
        name, arg = m.group(2), m.group(3)
        if name not in RENDERERS:
            raise ValueError(f"unknown renderer {name!r} in marker {m.group(1).strip()}; known: {sorted(RENDERERS)}")
        return m.group(1) + current_paths(RENDERERS[name](root, arg)) + m.group(5)

    return MARKER.sub(sub, text)


# the data records keep the command they were made with; the scripts have since moved into
# experiments/{paper,performance,studies}: a quoted command names today's path
MOVED = {
    "overhead_mumbo_vs_mtbo.py": "paper", "bench_acquisition.py": "performance", "bench_decision.py": "performance",
    "bench_nuts.py": "performance", "profile_decision.py": "performance", "bench_compare_workers.py": "performance",
    "async_study.py": "studies",
}
_MOVED_RE = re.compile(r"experiments/(" + "|".join(re.escape(k) for k in MOVED) + r")\b")


def current_paths(text: str) -> str:
    """``text`` with every old ``experiments/SCRIPT`` path replaced by the script's path today."""
    def sub(m):
        where = MOVED[m.group(1)]
        return "experiments/" + (where if "/" in where else f"{where}/{m.group(1)}")

    return _MOVED_RE.sub(sub, text)


def markers(text: str) -> list[tuple[str, str | None]]:
    return [(m.group(2), m.group(3)) for m in MARKER.finditer(text)]


def render_all(root=ROOT) -> dict[str, str]:
    """Every generated file: ``{path relative to root: its rendered text}``."""
    root = pathlib.Path(root)
    out = {doc: render_text((root / doc).read_text(), root) for doc in DOCS if (root / doc).is_file()}
    for res in sorted((root / "docs" / "results").glob("*/results.json")):
        out[str(res.parent.relative_to(root) / "table.md")] = compare_table(json.loads(res.read_text()))
    return out


def stale(root=ROOT) -> list[str]:
    root = pathlib.Path(root)
    return [rel for rel, text in render_all(root).items()
            if not (root / rel).is_file() or (root / rel).read_text() != text]


def main(argv=None, doc=__doc__):
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report files whose tables are stale (exit 1)")
    args = ap.parse_args(argv)
    if args.check:
        bad = stale()
        for rel in bad:
            print(f"stale: {rel}")
        return 1 if bad else 0
    for rel, text in render_all().items():
        path = ROOT / rel
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            print(f"rewrote {rel}")
    return 0
