"""Speed of one MUMBO step's pieces on a 3-fidelity ICM posterior (100 points, 3-D).

    taskset -c 0 python experiments/performance/bench_acquisition.py [--repeats 20] [--out data/speed.json]

Prints the median wall time after compilation of
  (a) MUMBO (N = 10 g*) on 10,000 candidates at each of the 3 fidelities, joint
      moments included (target <= 250 ms on one core of the 2-core dev machine);
  (b) Gumbel g* sampling on its 30,000-point grid: the grid's posterior of g plus the
      in-graph Gumbel fit (target <= 100 ms);
  (c) one hyper-parameter fit with 8 restarts (target <= 2 s).
Data: Hartmann-3 with its three fidelities (Appendix B of the paper), 100 random points.
Writes the times, the device and the machine's load average to ``--out`` (the README's
"Speed" table is rendered from it by ``experiments/render_results.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

try:
    import mumbo_jax  # noqa: F401
except ImportError:  # a plain checkout: import the package beside this script
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from mumbo_jax.acquisition import acquisitions, maxvalue
from mumbo_jax.gp import fitting as fit, models, moments, posterior
from mumbo_jax.benchmarks import problems


def median_time(fn, repeats):
    jax.block_until_ready(fn())  # compile and warm up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--fit-batching", choices=("auto", "scan", "vmap", "both"), default="auto",
                        help="how (c)'s 8 starts run (fitting.fit_from): auto = scan on CPU, vmap on "
                             "an accelerator; both: time each")
    parser.add_argument("--fit-max-iter", default="200",
                        help="comma list of L-BFGS iteration caps for (c): 200 is fit_params' default, "
                             "50 the BO loop's (BOSettings.fit_max_iter)")
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parents[2] / "data" / "speed.json"))
    args = parser.parse_args()

    load_start = os.getloadavg()
    prob = problems.get_problem("hartmann3")
    key = jax.random.PRNGKey(0)
    n, n_cand, n_gstar = 100, 10_000, 10
    x = problems.sample_inputs(prob, key, n)
    z = jnp.asarray(np.random.default_rng(0).integers(0, 3, n))
    y = jax.vmap(lambda xi, zi: problems.objective(prob, xi, zi))(x, z)
    spec = models.icm_model(prob.bounds, 3)
    target = posterior.target_fidelity(0)

    batchings = {"auto": [fit.starts_batching()], "both": ["scan", "vmap"]}.get(args.fit_batching, [args.fit_batching])
    iters = [int(i) for i in args.fit_max_iter.split(",")]
    t_fits = {f"{b}, max_iter {it}": median_time(
        lambda: fit.fit_params(spec, x, z, y, key, n_restarts=8, max_iter=it, batching=b)[1],
        max(3, args.repeats // 4)) for b in batchings for it in iters}
    t_fit = min(v for k, v in t_fits.items() if k.endswith(f"max_iter {iters[0]}"))
    post = fit.fit(spec, x, z, y, key, n_restarts=8)

    gstar = maxvalue.sample_gstar(key, post, target, n_samples=n_gstar)
    cand = problems.sample_inputs(prob, jax.random.PRNGKey(1), n_cand)
    fids = jnp.arange(3)

    @jax.jit
    def mumbo_all_fidelities(post, cand, gstar):
        m = moments.joint_moments_fidelities(post, cand, fids, target)
        return acquisitions.mumbo_gain(m.mu_g, m.var_g, m.mu_y, m.var_y, m.cov, gstar)

    @jax.jit
    def moments_only(post, cand):
        return moments.joint_moments_fidelities(post, cand, fids, target)

    t_a = median_time(lambda: mumbo_all_fidelities(post, cand, gstar), args.repeats)
    t_mom = median_time(lambda: moments_only(post, cand), args.repeats)
    t_b = median_time(lambda: maxvalue.sample_gstar(key, post, target, n_samples=n_gstar), args.repeats)
    grid_mean, grid_var = moments.target_moments(post, problems.sample_inputs(prob, key, 30_000), target)
    t_b_fit = median_time(
        lambda: maxvalue.gumbel_max_samples(key, grid_mean, grid_var, n_gstar), args.repeats
    )

    print(f"device: {jax.devices()[0].device_kind}, jax {jax.__version__}")
    print(f"(a) MUMBO N={n_gstar}, {n_cand:,} candidates x 3 fidelities: {t_a * 1e3:8.1f} ms"
          f"  (target <= 250 ms; {t_a / (3 * n_cand) * 1e6:.2f} us per (x, z);"
          f" joint moments alone {t_mom * 1e3:.1f} ms)")
    print(f"(b) Gumbel g* on 30,000-point grid:              {t_b * 1e3:8.1f} ms"
          f"  (target <= 100 ms; Gumbel fit alone {t_b_fit * 1e3:.1f} ms)")
    for b, t in t_fits.items():
        print(f"(c) hyper-parameter fit, 8 restarts ({b}):      {t * 1e3:8.1f} ms  (target <= 2000 ms on a CPU core, "
              f"100 ms on a GPU)")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "command": "taskset -c 0 python experiments/performance/bench_acquisition.py", "repeats": args.repeats,
        "device": jax.devices()[0].device_kind, "jax": jax.__version__, "cpu_count": os.cpu_count(),
        "loadavg_start": load_start, "loadavg_end": os.getloadavg(),
        "observations": n, "candidates": n_cand, "fidelities": 3, "n_gstar": n_gstar,
        "mumbo_s": t_a, "joint_moments_s": t_mom, "gstar_s": t_b, "gumbel_fit_s": t_b_fit, "fit_8_restarts_s": t_fit,
        "fit_8_restarts_s_by_batching": t_fits,
    }, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
