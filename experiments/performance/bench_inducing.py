"""The inducing-point decision posterior (``approx.inducing``) against the exact one, at large n.

    taskset -c 1 env XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
        python experiments/performance/bench_inducing.py [--ns 1000,3000] [--ms 128,256,512] [--keys 5]

MUMBO (the paper's rule, default levers) on the fixed Hartmann-3 data of
``bench_decision.py`` (3 fidelities, n points, a MUMBO-shaped design), hyper-parameters
from one full fit. For each n and each m, over ``--keys`` decision keys:

* seconds of the decision stages (building the stand-in, g*, the maximisation) on the
  exact posterior and on the stand-in of m rows (each after an untimed call);
* how well the stand-in decides: the exact posterior's MUMBO score (gain per unit cost,
  its own g* samples) at the stand-in's choice over its score at the exact choice (1:
  as good; the maximiser itself is random, so the exact rule's own choice under another
  key is given too), whether the fidelity is the same, and the relative error of the
  median g* sample;
* the largest error of the stand-in's mean and sd of g at 2,000 random points, in sd of
  the exact posterior.

Appends to ``data/long_run/inducing.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
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
from mumbo_jax.bo import rules, stages  # noqa: E402
from mumbo_jax.bo.settings import BOSettings  # noqa: E402
from mumbo_jax.gp import models, moments, sparse  # noqa: E402

os.environ.setdefault("MUMBO_JAX_PREFETCH", "off")
OUT = ROOT / "data" / "long_run" / "inducing.json"


def clocked(fn):
    jax.block_until_ready(fn())  # compiles
    t0 = time.perf_counter()
    out = jax.block_until_ready(fn())
    return time.perf_counter() - t0, out


def exact_score(settings, task, post, gstar, x, z):
    """The exact posterior's score (gain per unit cost) of MUMBO at ``(x [d], z)``."""
    ctx = rules.Context.from_settings(settings, task, post, gstar, jax.random.PRNGKey(0), stages.as_count(18), None)
    acq = rules.RULES[settings.strategy].acquisition(ctx)
    zq = jnp.asarray([z]).astype(jnp.int32)
    return float(acq(jnp.asarray(x)[None, :], zq)[0] / task.space.cost(zq)[0])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ns", default="1000,3000")
    p.add_argument("--ms", default="128,256,512")
    p.add_argument("--keys", type=int, default=5)
    p.add_argument("--out", default=str(OUT))
    a = p.parse_args(argv)
    settings = BOSettings(strategy="mumbo", recommendation={"rule": "global"})
    ns, ms = [int(v) for v in a.ns.split(",")], [int(v) for v in a.ms.split(",")]
    task, x, z, y = design(max(ns))
    rows = []
    for n in ns:
        b = stages.pad_buffers(x[:n], z[:n].astype(float), y[:n], stages.buffer_size(n))
        params = stages.as_params(models.default_params(task.spec))
        post = stages.fit_stage(settings, task, b, params, jax.random.PRNGKey(1), True, True)
        n0 = stages.as_count(18)

        def decide(p, key):
            g = stages.gstar_stage(settings, task, p, jax.random.fold_in(key, 1))
            return g, stages.maximise_stage(settings, task, p, g, key, None, n0)

        keys = [jax.random.PRNGKey(100 + i) for i in range(a.keys)]
        t_exact, _ = clocked(lambda: decide(post, keys[0]))
        exact = [decide(post, k) for k in keys]
        xq = np.random.default_rng(0).uniform(size=(2000, 3))
        mu_e, var_e = moments.target_moments(post, xq, task.target)
        for m in ms:
            t_build, _ = clocked(lambda: sparse.inducing_posterior(post, m))
            sp = sparse.inducing_posterior(post, m)
            t_sparse, _ = clocked(lambda: decide(sp, keys[0]))
            ratios, same_z, gstar_err, own = [], [], [], []
            for i, k in enumerate(keys):
                g_e, prop_e = exact[i]
                g_s, prop_s = decide(sp, k)
                s_e = exact_score(settings, task, post, g_e, prop_e.x, int(prop_e.z))
                s_s = exact_score(settings, task, post, g_e, prop_s.x, int(prop_s.z))
                ratios.append(s_s / s_e)
                same_z.append(int(prop_s.z) == int(prop_e.z))
                gstar_err.append(abs(float(jnp.median(g_s)) - float(jnp.median(g_e))) / abs(float(jnp.median(g_e))))
                _, prop_o = exact[(i + 1) % len(keys)]  # the exact rule's choice under another key
                own.append(exact_score(settings, task, post, g_e, prop_o.x, int(prop_o.z)) / s_e)
            mu_s, var_s = moments.target_moments(sp, xq, task.target)
            sd_e = np.sqrt(np.asarray(var_e))
            r = {"n": n, "m": m, "used_rows": int(np.sum(np.asarray(sp.mask))), "exact_decision_s": t_exact,
                 "stand_in_build_s": t_build, "stand_in_decision_s": t_sparse,
                 "speedup": t_exact / (t_build + t_sparse),
                 "score_ratio_median": statistics.median(ratios), "score_ratio_min": min(ratios),
                 "exact_other_key_ratio_median": statistics.median(own), "same_fidelity": sum(same_z) / len(same_z),
                 "gstar_median_rel_err": statistics.median(gstar_err),
                 "mean_err_in_sd_max": float(np.max(np.abs(np.asarray(mu_s) - np.asarray(mu_e)) / sd_e)),
                 "sd_ratio_median": float(np.median(np.sqrt(np.asarray(var_s)) / sd_e))}
            rows.append(r)
            print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}), flush=True)
    out = pathlib.Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs = json.loads(out.read_text()) if out.exists() else []
    runs.append({"command": "python experiments/performance/bench_inducing.py " + " ".join(argv or sys.argv[1:]),
                 "jax": jax.__version__, "loadavg": os.getloadavg(), "rows": rows})
    out.write_text(json.dumps(runs, indent=1) + "\n")
    print(f"appended to {out}")


if __name__ == "__main__":
    main()
