"""Tutorial: parallel evaluations on Dask workers.

``mumbo_jax.run.tune`` keeps several evaluations in flight and tells the model each
result as it finishes; a decision made while others are still running conditions on them
(kriging believer). Any ``concurrent.futures.Executor`` works; here a Dask
``LocalCluster`` (``pip install ".[workers]"`` in the mumbo-jax checkout). Every evaluation is journaled:
``tune.resume(run_dir, ...)`` continues a killed run.

    python docs/tutorials/dask_workers.py
    MUMBO_TUTORIAL_STEPS=2 python docs/tutorials/dask_workers.py
"""

import os
import tempfile

import jax

jax.config.update("jax_enable_x64", True)

from mumbo_jax.run import tune  # noqa: E402

try:
    from distributed import Client, LocalCluster
except ImportError:  # the workers extra is not installed
    print("dask.distributed is not installed: pip install '.[workers]' in the mumbo-jax checkout (or pip install 'dask[distributed]')")
    raise SystemExit(0)

STEPS = int(os.environ.get("MUMBO_TUTORIAL_STEPS", "8"))

config = {
    # the objective by name, so that a worker process can import it
    "objective": {"function": "mumbo_jax.benchmarks.examples:train_demo", "direction": "maximise"},
    "parameters": {"learning_rate": {"low": 1e-4, "high": 1.0, "log": True},
                   "weight_decay": {"low": 1e-6, "high": 1e-1, "log": True}},
    "fidelity": {"kind": "discrete", "costs": [10.0, 1.0], "values": [1.0, 0.1]},
    "budget": {"evaluations": 8 + STEPS},  # the initial design is 2 d = 4 points x 2 fidelities
}

if __name__ == "__main__":
    run_dir = os.path.join(tempfile.mkdtemp(), "run")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        executor = client.get_executor()
        results = tune.tune(config, out=run_dir, executor=executor, workers=2)
    print(results["counts"], "best at the target:", results["best_observed"])
    print(f"journal: {run_dir}/journal.jsonl")
