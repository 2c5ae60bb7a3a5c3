"""What one random draw costs XLA's CPU compiler: jax.random (threefry) against
mumbo_jax.runtime.draws (Philox from XLA's random-bit generator), as the maximiser draws them.

    taskset -c 1 python experiments/performance/bench_draws.py [--reps 3] [--out data/compile/draws.json]

Each row jits one small program (the library's compile options, a fresh in-memory cache,
the persistent cache off) and reports the seconds of ``lower().compile()``, the median of
``--reps`` compiles, and the seconds of one call after it. The maximiser's candidates are
2,000 x 3 uniforms, 500 x 3 face coins (two Bernoulli arrays) and 500 x 3 normals.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import time

os.environ["MUMBO_JAX_CACHE"] = "off"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from mumbo_jax.runtime import draws, xla_options  # noqa: E402


def _threefry_candidates(key):
    k_x, _ = jax.random.split(key)
    u = jax.random.uniform(k_x, (2000, 3))
    k_which, k_side = jax.random.split(jax.random.fold_in(k_x, 1))
    which = jax.random.bernoulli(k_which, 0.5, (500, 3))
    side = jax.random.bernoulli(k_side, 0.5, (500, 3))
    noise = jax.random.normal(jax.random.fold_in(k_x, 2), (500, 3))
    return u, which, side, noise


def _draws_candidates(key):
    u = draws.uniform(key, (2000, 3), stream=0)
    which, side = draws.bernoulli(key, 0.5, (2, 500, 3), stream=1)
    noise = draws.normal(key, (500, 3), stream=2)
    return u, which, side, noise


PROGRAMS = {
    "uniform 2000 x 3: jax.random": lambda k: jax.random.uniform(k, (2000, 3)),
    "uniform 2000 x 3: draws": lambda k: draws.uniform(k, (2000, 3)),
    "normal 500 x 3: jax.random": lambda k: jax.random.normal(k, (500, 3)),
    "normal 500 x 3: draws": lambda k: draws.normal(k, (500, 3)),
    "the maximiser's candidates: jax.random": _threefry_candidates,
    "the maximiser's candidates: draws": _draws_candidates,
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    key = jax.random.PRNGKey(0)
    rows = []
    for name, fun in PROGRAMS.items():
        compiles = []
        for _ in range(args.reps):
            jax.clear_caches()
            lowered = jax.jit(fun, compiler_options=xla_options.active_options()).lower(key)
            t0 = time.perf_counter()
            program = lowered.compile()
            compiles.append(time.perf_counter() - t0)
        jax.block_until_ready(program(key))
        t0 = time.perf_counter()
        jax.block_until_ready(program(key))
        run = time.perf_counter() - t0
        rows.append(dict(program=name, compile_s=round(statistics.median(compiles), 3), run_s=round(run, 5)))
        print(f"{name:42s} compile {rows[-1]['compile_s']:6.3f} s   run {run * 1e3:7.3f} ms", flush=True)
    if args.out:
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(json.dumps(dict(reps=args.reps, rows=rows, jax=jax.__version__,
                                                          xla_flags=os.environ.get("XLA_FLAGS")), indent=1) + "\n")


if __name__ == "__main__":
    main()
