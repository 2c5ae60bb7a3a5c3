"""The fit's and the predictions' dense algebra at large n, on one core: one evaluation of
the fit's objective with its gradient, and the whitened cross-covariance L^-1 K of a
block of 512 predictions by :func:`mumbo_jax.gp.linalg.tri_matmul` against the plain
product.

    taskset -c 1 python experiments/performance/bench_linalg.py [--ns 320,1024,2048,3072] [--out FILE]

The objective is :func:`mumbo_jax.gp.fitting.neg_log_marginal` of the ICM model on the
Hartmann-3 design of ``bench_decision.design`` (n - 24 points in a buffer of n rows; the
default hyper-parameters), value and gradient in one compiled program; the product is of
a random lower-triangular [n, n] factor and a random [n, 512] block (the g* grid's chunk,
:data:`mumbo_jax.gp.moments.CHUNK`). Minimum of 5 calls after one compiling call. Run
it at two commits to compare code (the figures in docs/performance.md, "Refits at large
n", come from this script at the commit before the change and after it).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments" / "performance"))

import bench_decision  # noqa: E402

from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax.bo import asktell, stages  # noqa: E402
from mumbo_jax.bo.settings import BOSettings  # noqa: E402
from mumbo_jax.gp import fitting, linalg, models  # noqa: E402
from mumbo_jax.runtime.xla_options import jit  # noqa: E402

# timed asks only: no background compiling of the next buffer size (mumbo_jax.runtime.prefetch)
os.environ.setdefault("MUMBO_JAX_PREFETCH", "off")


def clock(fn, *args, reps: int = 5) -> float:
    """Minimum seconds of ``reps`` calls after one (compiling) call."""
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return min(times)


def objective_seconds(rows: int) -> float:
    task, x, z, y = bench_decision.design(rows - 24)
    b = stages.pad_buffers(x, z, y, rows)
    params = jax.tree_util.tree_map(jnp.asarray, asktell.AskTell(task, BOSettings(), seed=0).params)
    scaling = models.make_scaling(task.spec, b.y, b.mask)
    objective = jit(jax.value_and_grad(
        lambda p: fitting.neg_log_marginal(task.spec, p, scaling, b.x, b.z, b.y, b.mask)))
    return clock(objective, params)


def product_seconds(rows: int) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    li = jnp.asarray(np.tril(rng.standard_normal((rows, rows))))
    block = jnp.asarray(rng.standard_normal((rows, 512)))
    plain = clock(jit(lambda a, b: a @ b), li, block)
    if not hasattr(linalg, "tri_matmul"):  # a commit before it
        return plain, float("nan")
    return plain, clock(jit(linalg.tri_matmul), li, block)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", default="320,1024,2048,3072")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    rows = []
    print(f"{'rows':>6} {'objective+gradient':>19} {'plain L^-1 K':>13} {'tri_matmul':>11} {'ratio':>6}")
    for n in (int(v) for v in args.ns.split(",")):
        obj = objective_seconds(n)
        plain, tri = product_seconds(n)
        rows.append(dict(rows=n, objective_s=obj, plain_product_s=plain, tri_matmul_s=tri))
        print(f"{n:>6} {obj * 1e3:>16.1f} ms {plain * 1e3:>10.1f} ms {tri * 1e3:>8.1f} ms {plain / tri:>6.2f}", flush=True)
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(dict(jax=jax.__version__, xla_flags=os.environ["XLA_FLAGS"],
                                                          rows=rows), indent=1) + "\n")


if __name__ == "__main__":
    main()
