"""The performance page, large n and long runs: one decision at large n (CPU and GPU), the
large-n algebra, amortised steps inside a run, the inducing-point stand-in, and mumbo-jax
beside BoTorch's MF-MES (data under ``data/large_n/``, ``data/long_run/``, ``data/gpu/``).
"""

from __future__ import annotations

from .common import _cpu_wall, _load


def render_gpu_large_n(root, rel=None):
    """One decision at large n on a GPU (``bash experiments/performance/gpu_large_n.sh``;
    ``rel``: the file under data/gpu)."""
    runs = _load(root, f"data/gpu/{rel or 'decision_large_n_h200.json'}")
    lines = ["| n | buffer rows | start of the fit | decision | fit | g* | maximisation | first call (compiles) |",
             "|---|---|---|---|---|---|---|---|"]
    for run in runs:
        start = "fitted (two starts)" if run["start"] == "fitted" else "default hyper-parameters"
        for r in run["rows"]:
            lines.append(f"| {r['n']} | {r['buffer_rows']} | {start} | {r['ask_s']:.3f} s | {r['fit_s']:.3f} s | "
                         f"{r['gstar_s']:.3f} s | {r['maximise_s']:.3f} s | {r['first_call_s']:.0f} s |")
    return "\n".join(lines) + "\n"



def render_large_n(root, rel):
    """One decision at large n with a full refit and a warm-only one
    (``experiments/performance/bench_decision.py --start previous`` or ``converged``; a row
    is warm-only where n >= ``fit.warm_from``; "code": the run's ``--code``, else "earlier"
    for runs before the large-n algebra, which record only the settings they changed, and
    "current" for the runs after it; ``rel``: the file under data)."""
    runs = _load(root, f"data/{rel}")
    lines = ["| device | code | refit | n | buffer rows | decision | fit | g* | maximisation | first call (compiles) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        # runs since the large-n algebra record the fit settings in effect (defaults included)
        fit = run.get("effective_fit") or run["settings"].get("fit", {})
        device = f"{run['device'].upper()} (jax {run['jax']})"
        code = run.get("code") or ("current" if "effective_fit" in run else "earlier")
        for r in run["rows"]:
            if fit.get("warm_from") and r["n"] >= fit["warm_from"] and fit.get("cold_every", 10) > 1:
                cap = run.get("effective_warm_iter") or min(fit.get("warm_iter", 10), fit.get("max_iter", 50))
                refit = f"warm start only, at most {cap} iterations"
                if run.get("start") == "converged":
                    refit += ", after a full refit"
            else:
                refit = "every start"
            lines.append(f"| {device} | {code} | {refit} | {r['n']} | {r['buffer_rows']} | {r['ask_s']:.3f} s | "
                         f"{r['fit_s']:.3f} s | {r['gstar_s']:.3f} s | {r['maximise_s']:.3f} s | "
                         f"{r['first_call_s']:.0f} s |")
    return "\n".join(lines) + "\n"


def render_botorch_mfmes(root, rel):
    """One decision of mumbo-jax beside BoTorch's MF-MES
    (``experiments/performance/bench_botorch_mfmes.py``; ``rel``: the folder under data
    holding ``botorch_mfmes_tutorial.json`` and ``botorch_mfmes_matched.json``)."""
    runs = {e: _load(root, f"data/{rel}/botorch_mfmes_{e}.json") for e in ("tutorial", "matched")}
    lines = ["| n | buffer rows | mumbo-jax MUMBO | BoTorch MF-MES, tutorial effort | ratio | "
             "BoTorch MF-MES, matched effort | ratio |", "|---|---|---|---|---|---|---|"]
    matched = {r["n"]: r for r in runs["matched"]["rows"]}
    for r in runs["tutorial"]["rows"]:
        m = matched[r["n"]]
        lines.append(f"| {r['n']} | {r['mumbo_jax']['buffer_rows']} | {r['mumbo_jax_s']:.3f} s | "
                     f"{r['botorch_s']:.1f} s | {r['ratio']:.0f} | {m['botorch_s']:.1f} s | {m['ratio']:.0f} |")
    return "\n".join(lines) + "\n"


def render_bench_linalg(root, rel):
    """The fit's objective and L^-1 K at large n before and after the large-n algebra
    (``experiments/performance/bench_linalg.py`` at two commits; ``rel``: the folder under
    data holding ``bench_linalg_before.json`` and ``bench_linalg_after.json``)."""
    before, after = (_load(root, f"data/{rel}/bench_linalg_{w}.json") for w in ("before", "after"))
    old = {r["rows"]: r for r in before["rows"]}
    lines = ["| rows | objective + gradient, before | after | before / after | L^-1 K (512 points), plain product | "
             "tri_matmul | plain / tri_matmul |", "|---|---|---|---|---|---|---|"]
    for r in after["rows"]:
        b = old[r["rows"]]
        lines.append(f"| {r['rows']} | {b['objective_s'] * 1e3:.1f} ms | {r['objective_s'] * 1e3:.1f} ms | "
                     f"{b['objective_s'] / r['objective_s']:.2f} | {r['plain_product_s'] * 1e3:.1f} ms | "
                     f"{r['tri_matmul_s'] * 1e3:.1f} ms | {r['plain_product_s'] / r['tri_matmul_s']:.2f} |")
    return "\n".join(lines) + "\n"



def render_long_run(root, rel):
    """Amortised seconds per step inside a run against n, every run of
    ``experiments/performance/bench_long_run.py`` with its note (``rel``: the file under data)."""
    lines = []
    for run in _load(root, f"data/{rel}"):
        note = f"; {run['note']}" if run.get("note") else ""
        lines += ([""] if lines else []) + [
            f"`{run['command']}` (jax {run['jax']}, load average {run['loadavg'][0]:.1f}{note}):", "",
            "| n | buffer rows | step between refits | its appends | warm refit (fit) | full refit (fit) | "
            "amortised step | every step a refit (before) | before / amortised |",
            "|---|---|---|---|---|---|---|---|---|"]
        lines += _long_run_rows(run)
    return "\n".join(lines) + "\n"


def _long_run_rows(run):
    lines = []
    for r in run["rows"]:
        step = f"{r['step_s']:.3f} s" if r["incremental"] else "(every step refits)"
        app = f"{r['step_append_s']:.4f} s" if r["incremental"] else "-"
        lines.append(f"| {r['n']} | {r['buffer_rows']} | {step} | {app} | {r['warm_refit_fit_s']:.3f} s | "
                     f"{r['cold_refit_fit_s']:.3f} s | {r['amortised_s']:.3f} s | {r['every_step_refit_s']:.3f} s | "
                     f"{r['every_step_refit_s'] / r['amortised_s']:.2f} |")
    return lines



def render_inducing(root, rel):
    """The inducing-point stand-in against exact decisions, every run of
    ``experiments/performance/bench_inducing.py`` (``rel``: the file under data)."""
    lines = ["| n | m | exact decision | stand-in (build + decision) | speed-up | exact score of the stand-in's "
             "choice / of the exact choice (median, min) | the exact rule under another key | same fidelity | "
             "largest mean error (exact sd) | sd / exact sd (median) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for run in _load(root, f"data/{rel}"):
        for r in run["rows"]:
            lines.append(f"| {r['n']} | {r['m']} | {r['exact_decision_s']:.2f} s | "
                         f"{r['stand_in_build_s'] + r['stand_in_decision_s']:.2f} s | {r['speedup']:.1f}x | "
                         f"{r['score_ratio_median']:.3f}, {r['score_ratio_min']:.3f} | "
                         f"{r['exact_other_key_ratio_median']:.2f} | {r['same_fidelity']:.0%} | "
                         f"{r['mean_err_in_sd_max']:.1f} | {r['sd_ratio_median']:.2f} |")
    return "\n".join(lines) + "\n"



def render_pruned_scoring(root, rel):
    """One maximisation with every candidate scored and with the pruned scoring, every
    run of ``experiments/performance/bench_pruned_scoring.py`` (``rel``: the file under data)."""
    lines = []
    for run in _load(root, f"data/{rel}"):
        lines += [f"jax {run['jax']}, load average {run['load_average']:.1f}:", "",
                  "| n | buffer rows | rule | every candidate scored | pruned | ratio | same choice | "
                  "pruned, 1 polish step of 40 |", "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {r['n']} | {r['buffer_rows']} | {r['rule']} | {r['every_s']:.3f} s | {r['pruned_s']:.3f} s | "
                  f"{r['every_s'] / r['pruned_s']:.2f} | {'yes' if r['same_choice'] else 'no'} | "
                  f"{r['pruned_one_polish_step_s']:.3f} s |" for r in run["rows"]]
        lines.append("")
    return "\n".join(lines)


def render_botorch_fresh(root, rel):
    """One decision of mumbo-jax beside BoTorch's MF-MES in CPU and wall seconds
    (``experiments/performance/bench_botorch_mfmes.py``; ``rel``: the file under data)."""
    run = _load(root, f"data/{rel}")
    lines = ["| n | buffer rows | mumbo-jax MUMBO, CPU s (wall) | BoTorch qMF-MES, CPU s (wall) | ratio, CPU (wall) | "
             "target 100x |", "|---|---|---|---|---|---|"]
    for r in run["rows"]:
        cpu = r["botorch_cpu_s"] / r["mumbo_jax_cpu_s"]
        lines.append(f"| {r['n']} | {r['mumbo_jax']['buffer_rows']} | {_cpu_wall(r['mumbo_jax_cpu_s'], r['mumbo_jax_s'])} "
                     f"| {_cpu_wall(r['botorch_cpu_s'], r['botorch_s'])} | {cpu:.0f}x ({r['ratio']:.0f}x) | "
                     f"{'met' if cpu >= 100 else 'missed'} |")
    return "\n".join(lines) + "\n"


def render_botorch_in_run(root, rel):
    """A step inside a run on both sides, mumbo-jax amortised over its refit schedule
    (``bench_botorch_mfmes.py --in-run``; ``rel``: the file under data)."""
    run = _load(root, f"data/{rel}")
    lines = ["| n | mumbo-jax: the step at n | its CPU s (wall) | mumbo-jax amortised, CPU s (wall) | BoTorch step, "
             "CPU s (wall) | BoTorch's warm fit, wall s (its cold fit on n - 1) | ratio, amortised, CPU (wall) | "
             "target 100x |", "|---|---|---|---|---|---|---|---|"]
    for r in run["rows"]:
        m, b = r["mumbo_jax"], r["botorch"]
        cpu = r["ratio_amortised_cpu"]
        lines.append(f"| {r['n']} | {m['step_kind']} | {_cpu_wall(m['step']['cpu_s'], m['step']['wall_s'])} | "
                     f"{_cpu_wall(r['mumbo_jax_amortised_cpu_s'], r['mumbo_jax_amortised_s'])} | "
                     f"{_cpu_wall(r['botorch_cpu_s'], r['botorch_s'])} | {r['botorch_fit_s']:.2g} "
                     f"({b['previous_fit_s']:.3g}) | {cpu:.0f}x ({r['ratio_amortised']:.0f}x) | "
                     f"{'met' if cpu >= 100 else 'missed'} |")
    return "\n".join(lines) + "\n"

