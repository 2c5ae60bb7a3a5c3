"""The performance page, paired seed studies: a change meant to keep the decisions' quality
against the code before it, paired by seed (``experiments/ablations/seed_study_paired.py
STUDY``; ``data/STUDY/seed_study.json``).
"""

from __future__ import annotations

import numpy as np

from .common import _load, _num


STUDY_LABELS = {"warm_step": {"before": "the earlier warm refits", "after": "short first step and ftol"},
                "warm_iter": {"ten": "10 warm iterations", "five": "5 warm iterations"},
                "draws": {"threefry": "the code before", "philox": "Philox draws, two fit traces"},
                "draws_unreliable": {"threefry": "the code before", "philox": "Philox draws, two fit traces"},
                "polish_gradient": {"exact": "autodiff", "differences": "forward differences"},
                "base_block": {"b64": "direct forms to 64 rows", "b128": "direct forms to 128 rows"}}
STUDY_LABELS["polish_gradient_unreliable"] = STUDY_LABELS["polish_gradient"]
STUDY_LABELS["base_block_unreliable"] = STUDY_LABELS["base_block"]
STUDY_LABELS["polish_once"] = STUDY_LABELS["polish_once_unreliable"] = {
    "before": "the code before", "once": "each point once, direct forms to 128 rows"}
STUDY_LABELS["lbfgs_once"] = STUDY_LABELS["lbfgs_once_unreliable"] = {
    "zoom": "optax's L-BFGS (zoom line search)", "once": "the objective compiled once"}
STUDY_LABELS["small_n_thinning"] = STUDY_LABELS["small_n_thinning_unreliable"] = {
    "every_step": "a full refit every step below 500", "thinned": "full refits on 5 % growth"}


def render_paired_seed_study(root, study):
    """A paired seed study (``python experiments/ablations/seed_study_paired.py STUDY``)."""
    d = _load(root, f"data/{study}/seed_study.json")
    ref, var = d["reference"], d["variant"]
    label = {"default": "XLA's defaults", "fast": "the library's options", "cold": "full refits",
             "warm": "warm-only refits", "before": "the earlier algebra", "after": "the large-n algebra"}
    label.update(STUDY_LABELS.get(study, {}))
    name = lambda v: label.get(v, v)
    lines = [f"`{d['command']}` (the default rule, at most {d['max_evals']} evaluations; final regret of the "
             "recommendation, paired by seed; \"together\": BO evaluations before the two runs of a seed part, "
             "median over seeds):", "",
             f"| problem | budget | seeds | median final regret, {name(ref)} | median final regret, {name(var)} | "
             f"{name(var)}: lower / higher | Wilcoxon p | together for | fit seconds per run (compiling "
             f"included), {name(ref)} / {name(var)} |",
             "|---|---|---|---|---|---|---|---|---|"]
    for p, r in d["problems"].items():
        together = [len(r["evaluations"][ref]) and (t if t is not None else n)
                    for t, n in zip(r["together_for"], r["evaluations"][ref])]
        lines.append(f"| {p} | {r['budget']:g} | {len(r['seeds'])} | {_num(r['median'][ref])} | "
                     f"{_num(r['median'][var])} | {r['variant_lower']} / {r['variant_higher']} | "
                     f"{r['wilcoxon_p']:.2f} | {float(np.median(together)):.0f} | "
                     f"{r['fit_s'][ref]:.0f} / {r['fit_s'][var]:.0f} |")
    return "\n".join(lines) + "\n"

