"""Time of one greedy GIBBON batch (q = 4) on a fitted 3-fidelity Hartmann-3 posterior.

    taskset -c 0 python experiments/performance/bench_gibbon.py [--repeats 10] [--n-extra 30]

Data: the BO loop's initial design for Hartmann-3 (``mumbo_jax.benchmarks.tasks.problem_task``
and ``initial_design``: 2 d = 6 points at each of the 3 fidelities) plus ``--n-extra``
random points at random fidelities, hyper-parameters fitted by ``fit`` (ICM, 4
restarts), N = 10 Gumbel g* samples. Candidates: 2,000 uniform x at each fidelity
(6,000 pairs). Prints the median wall time after compilation of
  (a) the GIBBON batch, no pending points, no costs;
  (b) the same with the problem's costs (gain per unit cost of the batch);
  (c) the same with 2 pending evaluations;
  (d) the kriging-believer batch (the baseline), q = 4;
  (e) for scale: one MUMBO scoring of the 6,000 pairs (joint moments + ``mumbo_gain``).
"""

from __future__ import annotations

import argparse
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

from mumbo_jax.acquisition import acquisitions, fantasy, gibbon, maxvalue  # noqa: E402
from mumbo_jax.benchmarks import problems, tasks  # noqa: E402
from mumbo_jax.bo import stages  # noqa: E402
from mumbo_jax.gp import fitting, moments  # noqa: E402


def median_time(fn, repeats):
    t0 = time.perf_counter()
    jax.block_until_ready(fn())  # compile and warm up
    first = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), first


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--n-extra", type=int, default=30)
    parser.add_argument("--q", type=int, default=4)
    parser.add_argument("--n-candidates", type=int, default=2000, help="per fidelity")
    args = parser.parse_args()

    prob = problems.get_problem("hartmann3")
    task = tasks.problem_task(prob)
    key = jax.random.PRNGKey(0)
    k_design, k_extra, k_z, k_fit, k_gstar, k_cand = jax.random.split(key, 6)
    x0, z0 = stages.initial_design(task, k_design)
    x1 = problems.sample_inputs(prob, k_extra, args.n_extra)
    z1 = jax.random.randint(k_z, (args.n_extra,), 0, prob.n_fidelities).astype(float)
    x, z = jnp.concatenate([x0, x1]), jnp.concatenate([z0, z1])
    y = jax.vmap(lambda xi, zi: problems.objective(prob, xi, zi.astype(int)))(x, z)
    post = fitting.fit(task.spec, x, z, y, k_fit, n_restarts=4)
    target = task.target
    gstar = maxvalue.sample_gstar(k_gstar, post, target, 10)

    xs = problems.sample_inputs(prob, k_cand, args.n_candidates)
    n_fid = prob.n_fidelities
    xc = jnp.tile(xs, (n_fid, 1))
    zc = jnp.repeat(jnp.arange(n_fid), args.n_candidates)
    cost = jnp.asarray(prob.costs)[zc]
    xp, zp = xs[:2], jnp.asarray([0, 1])
    q = args.q

    print(f"Hartmann-3, {x.shape[0]} observations, {xc.shape[0]} candidate pairs "
          f"({args.n_candidates} x {n_fid} fidelities), q = {q}, N = {gstar.shape[0]} g*; "
          f"device {jax.devices()[0].device_kind}")
    cases = {
        "GIBBON batch": lambda: gibbon.gibbon_batch(post, target, gstar, xc, zc, q).index,
        "GIBBON batch, cost-aware": lambda: gibbon.gibbon_batch(post, target, gstar, xc, zc, q, cost=cost).index,
        "GIBBON batch, 2 pending": lambda: gibbon.gibbon_batch(post, target, gstar, xc, zc, q, xp, zp).index,
        "kriging-believer batch": lambda: fantasy.kriging_believer_batch(post, target, gstar, xc, zc, q).index,
        "one MUMBO scoring (q=1)": lambda: acquisitions.mumbo_gain(
            *moments.joint_moments(post, xc, zc, target), gstar),
    }
    for name, fn in cases.items():
        med, first = median_time(fn, args.repeats)
        print(f"  {name:28s} {1e3 * med:8.1f} ms  (first call incl. compile {first:6.2f} s)")
    b = gibbon.gibbon_batch(post, target, gstar, xc, zc, q, cost=cost)
    print("  cost-aware batch: z =", np.asarray(b.z).tolist(), "gains =", np.round(np.asarray(b.gain), 4).tolist())


if __name__ == "__main__":
    main()
