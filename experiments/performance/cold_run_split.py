"""How much of a cold run is compilation: ``mumbo-jax run <config> --seeds 1`` in this
process with an empty persistent compilation cache, JAX's tracing, lowering and XLA
compile seconds summed from ``jax.monitoring`` against the run's wall time.

    taskset -c 1 python experiments/performance/cold_run_split.py [--config hartmann3] [--seeds 1]
        [--growth steps|doubling] [--prefetch auto|on|off] [--rerun] [--gradient differences|exact]
        [--out data/cold_run_split.json]

Prints the wall seconds, the compile seconds (trace / lower / XLA), their share of the wall
time, the number of programs XLA compiled and the BO evaluations per seed. The cache
folder is a fresh temporary one (``MUMBO_JAX_CACHE``), so every program compiles, as on a
user's first run; the CLI's deterministic single-thread XLA flags apply. Run it on an idle
core: compile seconds scale with the load.

``--growth doubling`` is an experiment, not a library setting: buffers of 32, 64, 128, ...
rows (powers of two) in place of the library's steps of 32 rows, so a run compiles fewer
buffer sizes and each decision pays for up to twice its rows in the fit. ``--gradient``
runs a copy of the config with ``maximiser.gradient`` set.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import os
import pathlib
import re
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

EVENTS = {"/jax/core/compile/jaxpr_trace_duration": "trace", "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
          "/jax/core/compile/backend_compile_duration": "xla"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="hartmann3")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--growth", choices=("steps", "doubling"), default="steps")
    ap.add_argument("--prefetch", choices=("auto", "on", "off"), default="auto",
                    help="MUMBO_JAX_PREFETCH: compile the next buffer size in the background (auto: with 2+ cores)")
    ap.add_argument("--rerun", action="store_true",
                    help="run again in the same process (every program compiled) to measure what compiling cost")
    ap.add_argument("--gradient", choices=("differences", "exact"), default=None,
                    help="the maximiser's polish gradient (maximiser.gradient; default: the config's)")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)

    work = pathlib.Path(tempfile.mkdtemp(prefix="mumbo-cold-run-"))
    os.environ["MUMBO_JAX_CACHE"] = str(work / "xla")  # empty: a first run
    os.environ["MUMBO_JAX_PREFETCH"] = args.prefetch
    from mumbo_jax.run import cli
    from mumbo_jax.run.config import find_config

    config = args.config
    if args.gradient:  # a copy of the config with maximiser.gradient set
        text = find_config(args.config).read_text()
        if "[settings.maximiser]\n" not in text:
            text += "\n[settings.maximiser]\n"
        text = text.replace("[settings.maximiser]\n", f'[settings.maximiser]\ngradient = "{args.gradient}"\n', 1)
        config = str(work / f"{pathlib.Path(args.config).stem}.toml")
        pathlib.Path(config).write_text(text)

    cli.deterministic_xla_flags()  # before JAX starts, as the command does
    import jax

    if args.growth == "doubling":
        from mumbo_jax.bo import stages

        def doubling(n, min_buffer=stages.MIN_BUFFER):
            size = max(int(min_buffer), 32)
            while size < int(n) + 1:
                size *= 2
            return size

        stages.buffer_size = doubling  # every caller reads stages.buffer_size

    seconds: dict = collections.defaultdict(float)
    background: dict = collections.defaultdict(float)  # the same, on the prefetch's threads
    compiled = [0]

    def on_duration(event, duration, **_):
        if event in EVENTS:  # listeners run on the thread that compiles
            (seconds if threading.current_thread() is threading.main_thread() else background)[EVENTS[event]] += duration
            compiled[0] += event.endswith("backend_compile_duration")

    jax.monitoring.register_event_duration_secs_listener(on_duration)
    per_program: dict = collections.defaultdict(lambda: [0, 0.0])  # name -> [programs, XLA seconds]

    class CompileLog(logging.Handler):
        def emit(self, record):
            m = re.search(r"Finished XLA compilation of (.*?) in ([0-9.e-]+) sec", record.getMessage())
            if m:
                per_program[m.group(1)][0] += 1
                per_program[m.group(1)][1] += float(m.group(2))

    jax.config.update("jax_log_compiles", True)
    logging.getLogger("jax").addHandler(CompileLog())
    logging.getLogger("jax").setLevel(logging.WARNING)
    logging.getLogger("jax").propagate = False  # the compile log is counted, not printed
    out = work / "run"
    t0 = time.perf_counter()
    code = cli.main(["run", config, "--seeds", str(args.seeds), "--out", str(out)])
    wall = time.perf_counter() - t0
    if code != 0:
        raise SystemExit(f"the run failed with exit code {code}")
    result = json.loads((out / "results.json").read_text())
    n_evals = [s["n_evals"] for s in result["seeds"]]
    compile_s = sum(seconds.values())
    bg_s = sum(background.values())
    extra = {}
    if bg_s or args.prefetch != "auto":
        extra.update(prefetch=args.prefetch, background_compile_s=round(bg_s, 1),
                     background_xla_s=round(background["xla"], 1))
    if args.rerun:  # the same run with every program in memory: wall minus this is what compiling cost
        t1 = time.perf_counter()
        if cli.main(["run", config, "--seeds", str(args.seeds), "--out", str(work / "rerun")]) != 0:
            raise SystemExit("the rerun failed")
        warm = time.perf_counter() - t1
        rerun = json.loads((work / "rerun" / "results.json").read_text())
        extra.update(warm_wall_s=round(warm, 1), lost_to_compiling_s=round(wall - warm, 1),
                     lost_share=round((wall - warm) / wall, 3),
                     same_decisions=[s["evaluations"] for s in rerun["seeds"]] == [s["evaluations"] for s in result["seeds"]])
    from mumbo_jax.bo import stages as _stages  # the buffer sizes the run met (n0 design rows, then its evaluations)
    n0 = len(result["seeds"][0]["initial_design"])
    sizes = sorted({_stages.buffer_size(n) for n in range(n0, n0 + max(n_evals) + 1)})
    row = dict(config=args.config, seeds=args.seeds, growth=args.growth, gradient=args.gradient, buffer_sizes=sizes,
               wall_s=round(wall, 1), compile_s=round(compile_s, 1),
               compile_share=round(compile_s / wall, 3), **{k: round(v, 1) for k, v in seconds.items()},
               programs_compiled=compiled[0], bo_evaluations=n_evals, jax=jax.__version__, **extra,
               xla_flags=os.environ.get("XLA_FLAGS"),
               xla_by_program={k: [c, round(t, 1)] for k, (c, t) in sorted(per_program.items(), key=lambda kv: -kv[1][1])
                               if t >= 0.5})
    print(f"{args.config}, {args.seeds} seed(s), buffers by {args.growth} ({len(sizes)} sizes: {sizes}), cold cache: "
          f"{wall:.1f} s wall, {compile_s:.1f} s compiling "
          f"({100 * compile_s / wall:.0f} %: trace {seconds['trace']:.1f}, lower {seconds['lower']:.1f}, "
          f"XLA {seconds['xla']:.1f}), {compiled[0]} programs compiled, BO evaluations {n_evals}")
    if extra:
        print("  " + ", ".join(f"{k} {v}" for k, v in extra.items()))
    for name, (count, secs) in row["xla_by_program"].items():
        print(f"  {name}: {count} compiled, {secs:.1f} s XLA")
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(row, indent=1) + "\n")


if __name__ == "__main__":
    main()
