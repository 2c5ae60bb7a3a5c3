"""Time mumbo_gain for 30,000 candidates x 10 g* samples (300,000 (gamma, rho) pairs).

Run pinned to one core:  taskset -c 0 /work/venv/bin/python experiments/performance/bench_gain.py
Prints the median wall time of the jitted default (table) path and of the direct
Simpson reference path, after compilation, plus mes_gain for scale.
"""
import os
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from mumbo_jax.acquisition.acquisitions import mes_gain, mumbo_gain, mumbo_gain_simpson  # noqa: E402


def median_time(fn, args, repeats):
    fn(*args).block_until_ready()  # compile + warm up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args).block_until_ready()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main(m=30_000, n=10):
    rng = np.random.default_rng(0)
    mu_g = rng.normal(size=m)
    var_g = rng.uniform(0.01, 1.0, size=m)
    noise = rng.choice([0.0, 0.01, 0.1, 1.0], size=m)
    var_f = rng.uniform(0.01, 1.0, size=m)
    corr = rng.uniform(-1.0, 1.0, size=m)
    cov = corr * np.sqrt(var_g * var_f)
    gstar = np.sort(rng.normal(2.0, 0.3, size=n))
    args = tuple(jnp.asarray(a) for a in (mu_g, var_g, mu_g, var_f + noise, cov, gstar))

    t0 = time.perf_counter()
    mumbo_gain(*args).block_until_ready()
    print(f"first call (table build + compile): {time.perf_counter() - t0:.3f} s")

    table = jax.jit(mumbo_gain)
    simpson = jax.jit(mumbo_gain_simpson)
    mes = jax.jit(mes_gain)
    print(f"pairs: {m} candidates x {n} g* = {m * n}")
    print(f"mumbo_gain (table, default)  median {1e3 * median_time(table, args, 21):8.2f} ms")
    print(f"mumbo_gain_simpson (101 nodes) median {1e3 * median_time(simpson, args, 3):8.2f} ms")
    print(f"mes_gain                      median "
          f"{1e3 * median_time(mes, (args[0], args[1], args[5]), 21):8.2f} ms")
    diff = np.abs(np.asarray(table(*args)) - np.asarray(simpson(*args)))
    print(f"max |table - simpson| over the benchmark: {diff.max():.2e}")


if __name__ == "__main__":
    main()
