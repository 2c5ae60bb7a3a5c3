"""The maximiser's pruned scoring at large n: seconds of one maximisation with and without it.

    taskset -c 1 env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \\
        python experiments/performance/bench_pruned_scoring.py [--ns 1000,3000] [--rules mumbo,robust] [--reps 3]

On the told data of ``bench_decision.py`` (Hartmann-3, 3 fidelities, seed 0; the first 18
rows the design), after one fitted MUMBO decision and one draw of g*: the rule's proposal
(``rules.propose``: the maximisation, and for the robust default its guard) with every
candidate scored (``maxvalue.PRUNE_FROM_ROWS`` raised above the buffer) and with the
scores pruned by the rule's bound (:mod:`mumbo_jax.bo.bounds`), best of ``--reps`` calls
after compiling (the two interleaved), and whether both chose the same (x, z). Appends the rows to
``data/long_run/pruned_scoring.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import pathlib
import platform
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments" / "performance"))

from bench_decision import design  # noqa: E402
from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()

from mumbo_jax.acquisition import maxvalue  # noqa: E402
from mumbo_jax.bo import robust, rules, stages  # noqa: E402, F401  (robust registers the default)
from mumbo_jax.bo.settings import BOSettings  # noqa: E402

N_DESIGN = 18
OUT = ROOT / "data" / "long_run" / "pruned_scoring.json"


def interleaved(fns, args, reps):
    """``[(best seconds of reps calls, the result)]`` of each compiled function in ``fns``,
    the calls interleaved (one of each per round), so that a machine's changing load
    falls on all alike."""
    outs = [jax.block_until_ready(f(*args)) for f in fns]
    best = [float("inf")] * len(fns)
    for _ in range(reps):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            jax.block_until_ready(f(*args))
            best[i] = min(best[i], time.perf_counter() - t0)
    return list(zip(best, outs))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", default="1000,3000")
    ap.add_argument("--rules", default="mumbo,robust")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    rows, prune_from = [], maxvalue.PRUNE_FROM_ROWS
    print("| n | buffer rows | rule | every candidate scored | pruned | ratio | same choice | pruned, 1 polish step |")
    print("|---|---|---|---|---|---|---|---|")
    for n in [int(v) for v in args.ns.split(",")]:
        task, x, z, y = design(n)
        state = stages.init(task, jnp.asarray(x), jnp.asarray(z, float), jnp.asarray(y), n_design=N_DESIGN)
        post, _ = stages.decide(BOSettings(strategy="mumbo"), task, state, jax.random.PRNGKey(0))
        gstar = maxvalue.sample_gstar(jax.random.PRNGKey(1), post, task.target, 10)
        for name in args.rules.split(","):
            settings = BOSettings(strategy=name)

            def choose(p, g, key, settings=settings):
                prop = rules.propose(settings, task, p, g, key, n_design=N_DESIGN)
                return prop.x, prop.z

            one_step = BOSettings(strategy=name, maximiser={"polish_steps": 1})
            compiled = []
            for threshold, s in ((10**9, settings), (prune_from, settings), (prune_from, one_step)):
                maxvalue.PRUNE_FROM_ROWS = threshold  # read when propose is traced (lowered here)
                compiled.append(jax.jit(functools.partial(choose, settings=s)).lower(
                    post, gstar, jax.random.PRNGKey(2)).compile())
            maxvalue.PRUNE_FROM_ROWS = prune_from
            (t_all, (x_all, z_all)), (t_pr, (x_pr, z_pr)), (t_one, _) = interleaved(
                compiled, (post, gstar, jax.random.PRNGKey(2)), args.reps)
            same = bool(np.allclose(np.asarray(x_all), np.asarray(x_pr), rtol=1e-9, atol=1e-12)
                        and float(z_all) == float(z_pr))
            row = {"n": n, "buffer_rows": int(post.x.shape[0]), "rule": name, "every_s": t_all, "pruned_s": t_pr,
                   "pruned_one_polish_step_s": t_one, "same_choice": same}
            rows.append(row)
            print(f"| {n} | {row['buffer_rows']} | {name} | {t_all:.3f} s | {t_pr:.3f} s | {t_all / t_pr:.2f} | "
                  f"{'yes' if same else 'NO'} | {t_one:.3f} s |", flush=True)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    old = json.loads(out.read_text()) if out.exists() else []
    old.append({"jax": jax.__version__, "machine": platform.processor() or platform.machine(),
                "load_average": os.getloadavg()[0], "xla_flags": os.environ.get("XLA_FLAGS"), "rows": rows})
    out.write_text(json.dumps(old, indent=1))


if __name__ == "__main__":
    main()
