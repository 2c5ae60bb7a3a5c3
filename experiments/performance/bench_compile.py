"""Compilation per buffer size: which programs XLA compiles for one decision, for how long,
and how much of a process's memory-map budget they take.

    taskset -c 1 python experiments/performance/bench_compile.py [--strategy robust] [--ns 20,40,70]
        [--reps 1] [--set maximiser.gradient=exact] [--out data/compile_split.json]

For each n (a fresh process state per n is not needed: each n is a new buffer size) an
:class:`mumbo_jax.bo.asktell.AskTell` (Hartmann-3, the design of
``bench_decision.design``, default settings but ``--strategy``) is told n points and asked
once cold (compiling) and then warm (the median of ``--reps`` asks; ``--set RECORD.FIELD=VALUE``
changes one setting, as in ``bench_decision.py``). Prints, per n: the cold and warm ask in seconds, JAX's
tracing / lowering / XLA-compile seconds (``jax.monitoring`` durations), the XLA compile
seconds of each program over 0.3 s (``jax_log_compiles``), and the memory maps the
process gained (``/proc/self/maps``; see :mod:`mumbo_jax.runtime.programs`). The persistent
compilation cache is off (``MUMBO_JAX_CACHE=off``) so every program compiles. Run it on an
idle core: compile seconds scale with the load.
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
import time

import numpy as np

os.environ["MUMBO_JAX_CACHE"] = "off"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_log_compiles", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments" / "performance"))

import bench_decision  # noqa: E402

from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax.bo import asktell  # noqa: E402
from mumbo_jax.runtime import programs

# timed asks only: no background compiling of the next buffer size (mumbo_jax.runtime.prefetch)
os.environ.setdefault("MUMBO_JAX_PREFETCH", "off")

EVENTS = {"/jax/core/compile/jaxpr_trace_duration": "trace", "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
          "/jax/core/compile/backend_compile_duration": "xla"}
_durations: dict = collections.defaultdict(float)
_programs: list = []


def _on_duration(event, duration, **_):
    if event in EVENTS:
        _durations[EVENTS[event]] += duration


class _CompileLog(logging.Handler):
    def emit(self, record):
        m = re.search(r"Finished XLA compilation of (.*?) in ([0-9.e-]+) sec", record.getMessage())
        if m and float(m.group(2)) > 0.3:
            _programs.append((m.group(1), round(float(m.group(2)), 2)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strategy", default="robust")
    ap.add_argument("--ns", default="20,40,70")
    ap.add_argument("--reps", type=int, default=1, help="warm asks per n (their median is reported)")
    ap.add_argument("--set", action="append", default=[], metavar="RECORD.FIELD=VALUE")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    jax.monitoring.register_event_duration_secs_listener(_on_duration)
    logging.getLogger("jax").addHandler(_CompileLog())
    logging.getLogger("jax").setLevel(logging.WARNING)
    ns = [int(v) for v in args.ns.split(",")]
    settings = bench_decision.settings_from_sets(args.set, ap.error, strategy=args.strategy)
    task, x, z, y = bench_decision.design(max(ns))
    rows = []
    for n in ns:
        opt = asktell.AskTell(task, settings, seed=0)
        for i in range(n):
            opt.tell(x[i], int(z[i]), float(y[i]))
        _durations.clear(), _programs.clear()
        maps0 = programs.maps_in_use()
        t0 = time.perf_counter()
        proposal = opt.ask()
        cold = time.perf_counter() - t0
        opt.cancel(*proposal)
        warms = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            opt.cancel(*opt.ask())
            warms.append(time.perf_counter() - t0)
        warm = float(np.median(warms))
        maps1 = programs.maps_in_use()
        row = dict(n=n, cold_s=round(cold, 2), warm_s=round(warm, 3), **{k: round(v, 2) for k, v in _durations.items()},
                   programs=list(_programs), maps_added=None if maps0 is None else maps1 - maps0)
        rows.append(row)
        print(f"n={n}: cold ask {cold:.1f} s (trace {row.get('trace', 0)}, lower {row.get('lower', 0)}, XLA "
              f"{row.get('xla', 0)} s), warm ask {warm:.3f} s, +{row['maps_added']} memory maps", flush=True)
        for name, s in _programs:
            print(f"    {s:6.2f} s  {name}")
    if args.out:
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(json.dumps(dict(strategy=args.strategy, sets=args.set, reps=args.reps, rows=rows,
                                                          xla_flags=os.environ.get("XLA_FLAGS")), indent=1) + "\n")


if __name__ == "__main__":
    main()
