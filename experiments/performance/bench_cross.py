"""The candidates' moments at large n, two forms side by side in one process (interleaved,
the best of ``--reps``), on Hartmann-3's told data of ``bench_decision.py`` conditioned at
the model's default hyper-parameters:

1. the ICM cross-covariance ``[n, 512]``: tinygp's doubly vmapped kernel against the
   model's dense ``cross`` (:func:`mumbo_jax.gp.kernels.matern52_cross`);
2. g*'s grid moments (30,000 random points plus the data's x, all exact variances) and
   MUMBO's gain at ``--candidates`` x 3 fidelities (as the maximiser scores them), under
   the ICM model with either form of its cross-covariance.

    taskset -c 1 env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \\
        python experiments/performance/bench_cross.py [--ns 300,1000] [--reps 5] [--out FILE]

Prints seconds and ratios; ``--out`` writes them as JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import platform
import sys
import time

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments" / "performance"))

from bench_decision import design  # noqa: E402
from mumbo_jax.bo import rules, stages  # noqa: E402
from mumbo_jax.gp import models, moments, posterior  # noqa: E402
from mumbo_jax.gp.modelbase import ModelSpec  # noqa: E402


@dataclasses.dataclass(frozen=True, kw_only=True)
class TinygpCrossICM(models.ICMModel):
    """The ICM model with the cross-covariance of its tinygp kernel (the form before the dense one)."""

    cross = ModelSpec.cross


def best_of(fns: dict, reps: int) -> dict:
    """``{name: best seconds}``, the functions called in turn ``reps`` times after a warm call."""
    for f in fns.values():
        jax.block_until_ready(f())
    times = {k: [] for k in fns}
    for _ in range(reps):
        for k, f in fns.items():
            t0 = time.perf_counter()
            jax.block_until_ready(f())
            times[k].append(time.perf_counter() - t0)
    return {k: min(v) for k, v in times.items()}


def bench_n(n: int, candidates: int, reps: int) -> dict:
    task, x, z, y = design(n)
    spec = task.spec
    params = models.default_params(spec)
    size = stages.buffer_size(n)
    b = stages.pad_buffers(x, z, y, size)
    post = posterior.condition(spec, params, b.x, b.z, b.y, b.mask)
    xu, zu = post.x, post.z
    xb = jax.random.uniform(jax.random.PRNGKey(1), (512, 3), dtype=xu.dtype)
    zb = jnp.zeros(512, zu.dtype)
    kernel = models.build_kernel(spec, params)
    tinygp = jax.jit(lambda xa, za, xb, zb: kernel((xa, za), (xb, zb)))
    dense = jax.jit(lambda xa, za, xb, zb: spec.cross(params, xa, za, xb, zb))
    cross = best_of({"tinygp": lambda: tinygp(xu, zu, xb, zb), "dense": lambda: dense(xu, zu, xb, zb)}, reps)

    target = task.target
    plain = TinygpCrossICM(**{f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)})
    post_plain = posterior.condition(plain, params, b.x, b.z, b.y, b.mask)
    grid = jnp.concatenate([jax.random.uniform(jax.random.PRNGKey(3), (30_000, 3), dtype=xu.dtype),
                            jnp.asarray(x)])
    gstar = jnp.max(jnp.asarray(y)) + jnp.asarray([0.05, 0.1, 0.2, 0.3, 0.5])
    xc = jax.random.uniform(jax.random.PRNGKey(2), (candidates, 3), dtype=xu.dtype)
    fids = jnp.arange(3)
    grid_moments = jax.jit(lambda p: moments.target_moments(p, grid, target))
    scores = jax.jit(lambda p: jax.lax.map(lambda f: rules.mumbo_alpha(p, target, gstar, xc, jnp.full(candidates, f)),
                                           fids))
    both = best_of({"grid_tinygp": lambda: grid_moments(post_plain), "grid_dense": lambda: grid_moments(post),
                    "scores_tinygp": lambda: scores(post_plain), "scores_dense": lambda: scores(post)}, reps)
    row = {"n": n, "buffer_rows": size, "cross_512_s": cross, "cross_ratio": cross["tinygp"] / cross["dense"],
           "gstar_grid_s": {k[5:]: v for k, v in both.items() if k.startswith("grid")},
           "mumbo_candidates": candidates,
           "mumbo_scores_s": {k[7:]: v for k, v in both.items() if k.startswith("scores")}}
    r = lambda d: d["tinygp"] / d["dense"]
    print(f"n = {n} ({size} rows): cross [n, 512] tinygp {cross['tinygp'] * 1e3:.1f} ms, dense "
          f"{cross['dense'] * 1e3:.1f} ms ({row['cross_ratio']:.2f}x); g* grid moments "
          f"{both['grid_tinygp']:.3f} s -> {both['grid_dense']:.3f} s ({r(row['gstar_grid_s']):.2f}x); MUMBO at "
          f"{candidates} x 3 {both['scores_tinygp']:.3f} s -> {both['scores_dense']:.3f} s "
          f"({r(row['mumbo_scores_s']):.2f}x)", flush=True)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ns", default="300,1000")
    p.add_argument("--candidates", type=int, default=2000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    rows = [bench_n(int(n), a.candidates, a.reps) for n in a.ns.split(",")]
    if a.out:
        pathlib.Path(a.out).write_text(json.dumps({"machine": platform.processor() or platform.machine(),
                                                   "jax": jax.__version__, "load_average": os.getloadavg()[0],
                                                   "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
