"""Where the robust guard's time goes at n observations: its pieces, each compiled alone.

    taskset -c 1 env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \\
        python experiments/performance/profile_guard.py [--n 1000] [--reps 3]

On the told data of ``bench_decision.py`` (Hartmann-3, 3 fidelities, seed 0; the first 18
rows the design), after one fitted MUMBO decision: the target-only model (a masked
refactorisation of the whole buffer), the leave-one-out advantage, the interval scale, the
pseudo-observation model, the target-only EI choice and the whole guard. Prints the best of
``--reps`` calls after compiling, and how many buffer rows are at the target.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments" / "performance"))

from bench_decision import design  # noqa: E402
from bench_linalg import clock  # noqa: E402
from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()

from mumbo_jax.bo import incumbent, optimize, robust, rules, stages  # noqa: E402
from mumbo_jax.bo.settings import BOSettings  # noqa: E402
from mumbo_jax.gp import reliability  # noqa: E402

N_DESIGN = 18


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    task, x, z, y = design(args.n)
    state = stages.init(task, jnp.asarray(x), jnp.asarray(z, float), jnp.asarray(y), n_design=N_DESIGN)
    post, _ = stages.decide(BOSettings(strategy="mumbo"), task, state, jax.random.PRNGKey(0))
    settings = BOSettings(strategy="robust")
    ctx = rules.Context.from_settings(settings, task, post, jnp.zeros(settings.gstar.samples),
                                      jax.random.PRNGKey(3), jnp.asarray(N_DESIGN), None)
    target = task.target
    sf = jax.jit(lambda p: robust.pseudo_posterior(p, target, N_DESIGN))(post)
    prop = optimize.Proposal(jnp.asarray(x[0]), jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0))
    print(f"n = {args.n}, buffer rows {post.x.shape[0]}, at the target {int(jnp.sum(reliability.target_rows(post, target)))}")
    pieces = [
        ("target-only model", lambda p: reliability.target_only(p, target).chol_inv, (post,)),
        ("leave-one-out advantage", lambda p: reliability.loo_advantage(p, target), (post,)),
        ("interval scale", lambda p: incumbent.interval_scale(p, target), (post,)),
        ("pseudo-observation model", lambda p: robust.pseudo_posterior(p, target, N_DESIGN).chol_inv, (post,)),
        ("target-only EI choice", lambda s: robust.target_only_choice(ctx, s), (sf,)),
        ("the whole guard", lambda q: robust.guard(ctx, q).x, (prop,)),
    ]
    for name, fn, fn_args in pieces:
        print(f"| {name} | {clock(jax.jit(fn), *fn_args, reps=args.reps):.3f} s |", flush=True)


if __name__ == "__main__":
    main()
