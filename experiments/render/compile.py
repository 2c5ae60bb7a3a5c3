"""The performance page, compilation: what compiling costs per buffer size and in a cold
run, under each change to what is compiled (``experiments/performance/bench_compile.py``,
``cold_run_split.py``, ``bench_linalg.py``, ``bench_draws.py``, ``bench_prefetch.py``,
``bench_fit_search.py``, ``bench_icm_fit.py``, ``bench_size_classes.py``; data under
``data/compile/`` and ``data/``).
"""

from __future__ import annotations

from .common import _load


def render_icm_fit(root, rel=None):
    """The two ICM Grams in the same fit (``python experiments/performance/bench_icm_fit.py``)."""
    data = _load(root, rel or "data/bench_icm_fit.json")
    names = {"dense": "dense (`ICMModel.gram`)", "tinygp": "tinygp (`kernels.ICM`)"}
    lines = ["| n | Gram | trace + lower | XLA compile | fit | best objective |", "|---|---|---|---|---|---|"]
    for r in data["results"]:
        for kind in ("dense", "tinygp"):
            v = r[kind]
            ratio = f" ({v['fit_s'] / r['dense']['fit_s']:.2f}x)" if kind == "tinygp" else ""
            lines.append(f"| {r['n']} | {names[kind]} | {v['lower_s']:.1f} s | {v['compile_s']:.1f} s | "
                         f"{v['fit_s']:.3g} s{ratio} | {v['loss']:.6f} |")
    return "\n".join(lines) + "\n"


def _compile_split_rows(root, first_column, files):
    """Table lines of ``bench_compile.py`` records: one row per n of each (file, label)."""
    lines = [f"| {first_column} | n | first ask (compiles) | trace + lower | XLA compile | of which the "
             "maximisation | of which the fit | warm ask |", "|---|---|---|---|---|---|---|---|"]
    for name, label in files:
        data = _load(root, f"data/compile/{name}")
        for r in data["rows"]:
            programs = dict(r["programs"])
            lines.append(f"| {label} | {r['n']} | {r['cold_s']:.1f} s | {r['trace'] + r['lower']:.1f} s | "
                         f"{r['xla']:.1f} s | {programs.get('jit(_maximise)', 0):.1f} s | "
                         f"{programs.get('jit(_fit)', 0):.1f} s | {r['warm_s']:.3f} s |")
    return lines


def render_compile_polish(root, rel=None):
    """The maximisation with fewer copies of the acquisition, one buffer size at a time
    (``taskset -c 1 python experiments/performance/bench_compile.py --ns 20,40,300,1000 --reps 3
    --set maximiser.gradient=exact|differences --out ...``; the first rows with the code before,
    from a git worktree), and a cold run's share of compiling (``cold_run_split.py --rerun
    --gradient exact|differences``)."""
    lines = _compile_split_rows(root, "code", (
        ("compile_split_robust_before_polish.json", "before: the acquisition traced 4 times per maximiser"),
        ("compile_split_robust_polish_exact.json", "each point once, autodiff"),
        ("compile_split_robust_polish_differences.json", "each point once, forward differences"),
        ("compile_split_robust_base_block_128.json", "each point once, autodiff, direct forms to 128 rows (the default)")))
    lines += ["", "| first run | code | wall | again, compiled | lost to compiling | compiled (trace, lower, XLA) "
              "| programs compiled | BO evaluations |", "|---|---|---|---|---|---|---|---|"]
    for name, label in (("cold_run_split_hartmann3_prefetch_off.json", "before"),
                        ("cold_run_split_hartmann3_exact.json", "each point once, autodiff"),
                        ("cold_run_split_hartmann3_differences.json", "each point once, forward differences"),
                        ("cold_run_split_hartmann3_base_block_128.json",
                         "each point once, autodiff, direct forms to 128 rows (the default)")):
        r = _load(root, f"data/compile/{name}")
        lines.append(f"| `mumbo-jax run {r['config']} --seeds {r['seeds']}` | {label} | {r['wall_s']:.1f} s | "
                     f"{r['warm_wall_s']:.1f} s | {r['lost_to_compiling_s']:.1f} s ({100 * r['lost_share']:.0f} %) | "
                     f"{r['compile_s']:.1f} s | {r['programs_compiled']} | "
                     f"{', '.join(str(v) for v in r['bo_evaluations'])} |")
    return "\n".join(lines) + "\n"


def render_compile_lbfgs(root, rel=None):
    """The fit's L-BFGS with the objective compiled once against optax's (zoom line search):
    one buffer size at a time and a cold run (``bench_compile.py``, ``cold_run_split.py``; the
    code before's rows are the last change's), and the fits themselves on the same data
    (``taskset -c 1 python experiments/performance/bench_fit_search.py``)."""
    lines = _compile_split_rows(root, "fit", (
        ("compile_split_robust_base_block_128.json", "optax's L-BFGS, the objective in 3 places"),
        ("compile_split_robust_lbfgs_once.json", "the objective compiled once (the default)")))
    lines += ["", "| first run | fit | wall | again, compiled | lost to compiling | XLA seconds of the fit "
              "| programs compiled | BO evaluations |", "|---|---|---|---|---|---|---|---|"]
    for name, label in (("cold_run_split_hartmann3_base_block_128.json", "optax's L-BFGS"),
                        ("cold_run_split_hartmann3_lbfgs_once.json", "the objective compiled once (the default)")):
        r = _load(root, f"data/compile/{name}")
        fit_xla = r.get("xla_by_program", {}).get("jit(_fit)", [0, 0.0])[1]
        lines.append(f"| `mumbo-jax run {r['config']} --seeds {r['seeds']}` | {label} | {r['wall_s']:.1f} s | "
                     f"{r['warm_wall_s']:.1f} s | {r['lost_to_compiling_s']:.1f} s ({100 * r['lost_share']:.0f} %) | "
                     f"{fit_xla:.1f} s | {r['programs_compiled']} | "
                     f"{', '.join(str(v) for v in r['bo_evaluations'])} |")
    d = _load(root, "data/compile/fit_line_search.json")
    lines += ["", "| n | buffer rows | the fit's XLA compile, optax's L-BFGS | objective compiled once |",
              "|---|---|---|---|"]
    for r in d["compile"]:
        lines.append(f"| {r['n']} | {r['buffer_rows']} | {r['zoom']['xla_s']:.2f} s | {r['once']['xla_s']:.2f} s |")
    s = d["summary"]
    lines += ["", "| fits | lower objective, optax's L-BFGS | lower, objective compiled once | tied (within 1e-6) "
              "| median difference (once - optax) | fit seconds in all, optax / once |", "|---|---|---|---|---|---|",
              f"| {s['fits']} | {s['zoom_lower']} | {s['once_lower']} | {s['ties']} | {s['median_difference']:+.3g} | "
              f"{s['zoom_fit_s']:.2f} s / {s['once_fit_s']:.2f} s |"]
    return "\n".join(lines) + "\n"


def render_base_block(root, rel=None):
    """The blocked algebra with direct forms up to 64 rows and up to 128
    (``taskset -c 1 python experiments/performance/bench_linalg.py --ns 320,1024,3072`` with
    ``linalg.BASE_BLOCK`` at each value)."""
    runs = {b: {r["rows"]: r for r in _load(root, f"data/compile/bench_linalg_base_block_{b}.json")["rows"]}
            for b in (64, 128)}
    lines = ["| rows | objective + gradient, to 64 rows | to 128 rows | L^-1 K (512 points), to 64 rows | to 128 rows |",
             "|---|---|---|---|---|"]
    for n in sorted(runs[64]):
        a, b = runs[64][n], runs[128][n]
        lines.append(f"| {n} | {1e3 * a['objective_s']:.1f} ms | {1e3 * b['objective_s']:.1f} ms | "
                     f"{1e3 * a['tri_matmul_s']:.1f} ms | {1e3 * b['tri_matmul_s']:.1f} ms |")
    return "\n".join(lines) + "\n"


def render_compile(root, rel=None):
    """XLA compile per buffer size under XLA's default compile options and the library's
    (``python experiments/performance/bench_compile.py --ns 40,300 --out ...``, the first
    with ``MUMBO_JAX_XLA_OPTIONS=default``), and a cold run's share of compiling
    (``python experiments/performance/cold_run_split.py``)."""
    lines = _compile_split_rows(root, "compile options", (
        ("compile_split_robust_xla_defaults.json", "XLA's defaults (`MUMBO_JAX_XLA_OPTIONS=default`)"),
        ("compile_split_robust_library_options.json", "the library's (fusion emitters off)"),
        ("compile_split_robust_large_n_algebra.json", "the library's, after the large-n algebra"),
        ("compile_split_robust_before_draws.json", "before the draws, on a slower machine"),
        ("compile_split_robust_draws.json", "Philox draws, used restarts, two fit traces (the slower machine)")))
    lines += ["", "| first run | compile options | buffers | wall | compiling | share | programs compiled | "
              "BO evaluations |", "|---|---|---|---|---|---|---|---|"]
    growth = {"steps": "steps of 32 rows (the library's)", "doubling": "32, 64, 128, ... rows (experiment)"}
    for name, options in (("cold_run_split_hartmann3.json", "XLA's defaults"),
                          ("cold_run_split_hartmann3_doubling.json", "XLA's defaults"),
                          ("cold_run_split_hartmann3_library_options.json", "the library's"),
                          ("cold_run_split_hartmann3_large_n_algebra.json", "the library's, after the large-n algebra"),
                          ("compile/cold_run_split_hartmann3_before_draws.json", "before the draws, on a slower machine"),
                          ("compile/cold_run_split_hartmann3_draws.json",
                           "Philox draws, used restarts, two fit traces (the slower machine)")):
        cold = _load(root, f"data/{name}")
        lines.append(f"| `mumbo-jax run {cold['config']} --seeds {cold['seeds']}` | {options} | "
                     f"{growth[cold.get('growth', 'steps')]} | "
                     f"{cold['wall_s']:.0f} s | {cold['compile_s']:.0f} s | {100 * cold['compile_share']:.0f} % | "
                     f"{cold['programs_compiled']} | {', '.join(str(v) for v in cold['bo_evaluations'])} |")
    before = _load(root, "data/compile/cold_run_split_hartmann3_before_draws.json").get("xla_by_program", {})
    after = _load(root, "data/compile/cold_run_split_hartmann3_draws.json").get("xla_by_program", {})
    lines += ["", "| program (the slower machine's cold runs) | compiled, before / after | XLA seconds, before the draws | "
              "XLA seconds, Philox draws |", "|---|---|---|---|"]
    for name, (count, secs) in before.items():
        count_after, secs_after = after.get(name, (0, 0.0))
        lines.append(f"| `{name}` | {count} / {count_after} | {secs:.1f} s | {secs_after:.1f} s |")
    return "\n".join(lines) + "\n"


def render_draws(root, rel=None):
    """What one random draw costs XLA's compiler, jax.random against mumbo_jax.runtime.draws
    (``python experiments/performance/bench_draws.py --out data/compile/draws.json``)."""
    data = _load(root, "data/compile/draws.json")
    lines = ["| program | compile | one call |", "|---|---|---|"]
    lines += [f"| {r['program']} | {r['compile_s']:.2f} s | {1e3 * r['run_s']:.2f} ms |" for r in data["rows"]]
    return "\n".join(lines) + "\n"


def render_prefetch(root, rel=None):
    """Compiling the next buffer size in the background, off against on: an ask/tell run
    with a waiting black box (``python experiments/performance/bench_prefetch.py --out
    data/compile/prefetch.json``, then ``prefetch_repeat.json``) and a first ``mumbo-jax run hartmann3 --seeds 1``
    (``python experiments/performance/cold_run_split.py --prefetch off|on --rerun``)."""
    runs = [_load(root, f"data/compile/{name}.json") for name in ("prefetch", "prefetch_repeat")]
    data = runs[0]
    lines = [f"Ask/tell on {data['problem']}, {data['evals']} BO evaluations, the black box waiting "
             f"{data['sleep_s']:g} s after its formula, an empty cache, {data['cpu_count']} cores, two runs of the "
             f"command; the same decisions with and without: "
             f"{'yes' if all(r['same_decisions'] for r in runs) else 'no'}.", "",
             "| run | background compile | wall | inside ask() | first ask at each buffer size | longest ask |",
             "|---|---|---|---|---|---|"]
    for i, run in enumerate(runs, 1):
        for r in run["rows"]:
            first = ", ".join(f"{b} rows {v:.1f} s" for b, v in r["first_ask_per_buffer_s"].items())
            lines.append(f"| {i} | {r['prefetch']} | {r['wall_s']:.0f} s | {r['ask_s']:.1f} s | {first} | "
                         f"{r['longest_ask_s']:.1f} s |")
    lines += ["", "`mumbo-jax run hartmann3 --seeds 1`, an empty cache, 2 cores; \"lost\": the wall time minus that of "
              "the same run again in the process, every program compiled:", "",
              "| background compile | wall | again, compiled | lost to compiling | compiling on the run's thread | "
              "compiling in the background | the same decisions |", "|---|---|---|---|---|---|---|"]
    for setting in ("off", "on"):
        r = _load(root, f"data/compile/cold_run_split_hartmann3_prefetch_{setting}.json")
        lines.append(f"| {setting} | {r['wall_s']:.1f} s | {r['warm_wall_s']:.1f} s | {r['lost_to_compiling_s']:.1f} s "
                     f"({100 * r['lost_share']:.0f} %) | {r['compile_s']:.1f} s | {r['background_compile_s']:.1f} s | "
                     f"{'yes' if r['same_decisions'] else 'no'} |")
    return "\n".join(lines) + "\n"



def render_size_classes(root, rel):
    """Sizes met and padding of the buffer size classes against the earlier 32-row steps
    (``experiments/performance/bench_size_classes.py``)."""
    data = _load(root, f"data/{rel}")
    lines = [f"`{data['command']}`:", "", "| buffers | run | sizes compiled | B^2 / n^2 over the run | "
             "B^3 / n^3 over the run | largest B / n (n >= 96) |", "|---|---|---|---|---|---|"]
    for r in data["rows"]:
        lines.append(f"| {r['rule']} | {r['n0']} to {r['n_max']} points | {r['sizes']} | "
                     f"{r['quadratic_cost_ratio']:.2f} | {r['cubic_cost_ratio']:.2f} | "
                     f"{r['worst_rows_ratio_from_96']:.2f} |")
    return "\n".join(lines) + "\n"



def render_traced_settings(root, rel=None):
    """Programs compiled by one decision at five values of a numeric settings knob, before
    the settings were split into structure and traced numbers and after
    (``experiments/performance/bench_traced_settings.py --lock-step``, the first run with
    ``--library`` a worktree of the commit before; ``data/compile/traced_settings_{before,after}.json``)."""
    runs = [("before", _load(root, "data/compile/traced_settings_before.json")),
            ("traced numbers", _load(root, "data/compile/traced_settings_after.json"))]
    names = ("_fit", "_gstar", "_maximise", "_fit_all", "_gstar_all", "_maximise_all")
    lines = ["| knob swept over 5 values | code | " + " | ".join(f"`{n}`" for n in names) + " | total |",
             "|---|---|" + "---|" * (len(names) + 1)]
    for knob in runs[-1][1]["knobs"]:
        for label, data in runs:
            entry = data["knobs"][knob]
            values = entry["values"]
            counts = [entry["programs"].get(n, 0) for n in names]
            lines.append(f"| `{knob}` ({values[0]:g} ... {values[-1]:g}) | {label} | "
                         + " | ".join(str(c) for c in counts) + f" | {sum(counts)} |")
    return "\n".join(lines) + "\n"
