"""What compiling costs an ask/tell run whose black box takes time, with and without
compiling the next buffer size in the background (``mumbo_jax.runtime.prefetch``).

    python experiments/performance/bench_prefetch.py [--problem hartmann3] [--evals 70]
        [--sleep 1.0] [--out data/compile/prefetch.json]

Each setting runs in a fresh process with an empty persistent compilation cache and the
CLI's deterministic single-thread XLA flags: ``AskTell`` with the default rule on the
problem's task, seed 0, ``--evals`` BO evaluations, the black box the problem's
objective followed by ``--sleep`` seconds of waiting (a training job elsewhere). Prints,
per setting, the run's wall time, the seconds spent inside ``ask()`` (the user's wait),
the asks that found a new buffer size and the longest ask, and whether both settings
made the same decisions. Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def child(args):
    from mumbo_jax.run import cli

    cli.deterministic_xla_flags()  # before JAX starts, as the commands do
    import jax
    import jax.numpy as jnp
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    from mumbo_jax.runtime import process_options

    process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release
    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo import stages
    from mumbo_jax.bo.asktell import AskTell
    from mumbo_jax.bo.settings import BOSettings

    problem = problems.get_problem(args.problem)
    opt = AskTell(tasks.problem_task(problem), BOSettings(), seed=0, prefetch=args.prefetch == "on")
    f = jax.jit(lambda x, z: problems.objective(problem, x, z))
    asks, decisions = [], []
    t0 = time.perf_counter()
    while len(opt.x) < opt.n_design + args.evals:
        t = time.perf_counter()
        x, z = opt.ask()
        seconds = time.perf_counter() - t
        if opt.pending()[-1].design_index is None:  # a BO decision, not a design point
            asks.append({"rows": len(opt.x), "buffer": stages.buffer_size(len(opt.x)), "seconds": seconds})
        y = float(f(jnp.asarray(x), z))
        time.sleep(args.sleep)
        opt.tell(x, z, y)
        decisions.append([list(map(float, x)), float(z)])
    wall = time.perf_counter() - t0
    first = {}
    for a in asks:
        first.setdefault(a["buffer"], a["seconds"])
    print(json.dumps({"prefetch": args.prefetch, "wall_s": wall, "ask_s": sum(a["seconds"] for a in asks),
                      "first_ask_per_buffer_s": first, "longest_ask_s": max(a["seconds"] for a in asks),
                      "asks": len(asks), "decisions": decisions}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problem", default="hartmann3")
    ap.add_argument("--evals", type=int, default=70, help="BO evaluations after the initial design")
    ap.add_argument("--sleep", type=float, default=1.0, help="seconds the black box waits after its formula")
    ap.add_argument("--out", default="")
    ap.add_argument("--child", choices=("on", "off"), default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        args.prefetch = args.child
        return child(args)
    rows = []
    for setting in ("off", "on"):
        env = dict(os.environ, MUMBO_JAX_CACHE=tempfile.mkdtemp(prefix="mumbo-prefetch-"))
        out = subprocess.run([sys.executable, __file__, "--child", setting, "--problem", args.problem, "--evals",
                              str(args.evals), "--sleep", str(args.sleep)], env=env, capture_output=True, text=True,
                             check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        r = rows[-1]
        print(f"prefetch {setting}: {r['wall_s']:.1f} s wall, {r['ask_s']:.1f} s inside ask() over {r['asks']} asks, "
              f"longest {r['longest_ask_s']:.1f} s; first ask at each buffer size: "
              + ", ".join(f"{b} rows {s:.1f} s" for b, s in r["first_ask_per_buffer_s"].items()), flush=True)
    same = rows[0]["decisions"] == rows[1]["decisions"]
    print(f"same decisions: {same}; time inside ask(): {rows[0]['ask_s']:.1f} s off, {rows[1]['ask_s']:.1f} s on")
    if args.out:
        import jax

        record = {"command": "python experiments/performance/bench_prefetch.py " + " ".join(argv or sys.argv[1:]),
                  "time": time.strftime("%Y-%m-%d %H:%M:%S"), "cpu_count": os.cpu_count(), "jax": jax.__version__,
                  "loadavg_end": list(os.getloadavg()), "problem": args.problem, "evals": args.evals,
                  "sleep_s": args.sleep, "same_decisions": same,
                  "rows": [{k: v for k, v in r.items() if k != "decisions"} for r in rows]}
        pathlib.Path(args.out).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
