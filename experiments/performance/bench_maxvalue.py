"""Time the Gumbel max-value sampler on a 30,000-point grid (N = 10 samples).

Run pinned to one core, as the BO loop's numbers are quoted:

    taskset -c 0 /work/venv/bin/python experiments/performance/bench_maxvalue.py

Prints the median wall time after compilation (also for the quartile bisection alone and
for the exact sampler on a 1,000-point grid, for scale).
"""

import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

try:
    import mumbo_jax  # noqa: F401  (installed, or run from the repository root)
except ImportError:  # a plain checkout: import the package beside this script
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from mumbo_jax.acquisition.maxvalue import exact_max_samples, gumbel_max_samples, max_value_quantiles


def median_time(fn, *args, repeats=30):
    jax.block_until_ready(fn(*args))  # compile + warm up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    m, n = 30_000, 10
    rng = np.random.default_rng(0)
    # A posterior-like grid: smooth-ish means, variances spanning two decades.
    mean = jnp.asarray(rng.normal(size=m))
    var = jnp.asarray(rng.uniform(0.01, 1.0, size=m))
    key = jax.random.key(0)
    floor = jnp.asarray(0.5)

    sampler = jax.jit(gumbel_max_samples, static_argnames=("n_samples",))
    t = median_time(lambda k, mu, v, f: sampler(k, mu, v, n_samples=n, floor=f),
                    key, mean, var, floor)
    print(f"gumbel_max_samples  M={m:,} N={n}: median {t * 1e3:.2f} ms")

    t = median_time(jax.jit(max_value_quantiles), mean, var)
    print(f"max_value_quantiles M={m:,} (3 quartiles): median {t * 1e3:.2f} ms")

    m_exact = 1_000
    x = np.linspace(0.0, 1.0, m_exact)
    cov = jnp.asarray(np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / 0.1**2))
    mu = jnp.asarray(np.sin(6 * x))
    ex = jax.jit(exact_max_samples, static_argnames=("n_samples",))
    t = median_time(lambda k, a, c: ex(k, a, c, n_samples=n), key, mu, cov, repeats=10)
    print(f"exact_max_samples   M={m_exact:,} N={n}: median {t * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
