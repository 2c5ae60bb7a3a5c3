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
import shutil

import jax

jax.config.update("jax_enable_x64", True)

from mumbo_jax.run import tune  # noqa: E402

try:
    from distributed import Client, LocalCluster
except ImportError:  # the workers extra is not installed
    print("dask.distributed is not installed: pip install '.[workers]' in the mumbo-jax checkout (or pip install 'dask[distributed]')")
    raise SystemExit(0)

STEPS = int(os.environ.get("MUMBO_TUTORIAL_STEPS", "8"))
OUT = os.environ.get("MUMBO_TUTORIAL_OUT", ".")  # where the plot goes

config = {
    # the objective by name, so that a worker process can import it. train_demo "diverges"
    # (raises FloatingPointError) for a learning rate above 0.3, as real training can: such
    # an evaluation is journaled as failed, the model learns where failures happen, and
    # the run goes on. Its range reaches 1.0 on purpose, so that you see a failure.
    "objective": {"function": "mumbo_jax.benchmarks.examples:train_demo", "direction": "maximise"},
    "parameters": {"learning_rate": {"low": 1e-4, "high": 1.0, "log": True},
                   "weight_decay": {"low": 1e-6, "high": 1e-1, "log": True}},
    "fidelity": {"kind": "discrete", "costs": [10.0, 1.0], "values": [1.0, 0.1]},
    "budget": {"evaluations": 8 + STEPS},  # the initial design is 2 d = 4 points x 2 fidelities
}

if __name__ == "__main__":
    run_dir = os.path.join(OUT, "dask_tutorial_run")  # the run folder: journal, results, plot
    shutil.rmtree(run_dir, ignore_errors=True)  # this tutorial's own folder, from an earlier run
    # two workers in this process (threads): on a real cluster, pass the scheduler's address
    # to Client("tcp://HOST:8786") instead and the evaluations run on its machines
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        results = tune.tune(config, out=run_dir, executor=client.get_executor(), workers=2)
    counts = results["counts"]
    print(f"{counts['evaluations']} evaluations: {counts['ok']} succeeded, {counts['failed']} failed "
          f"(learning rate above 0.3: training diverged)")
    best = results["best_observed"]
    print(f"best at the target: score {best['score']:.4f} at "
          + ", ".join(f"{k} = {v:.3g}" for k, v in best["x"].items()))
    shutil.copy(os.path.join(run_dir, "tuning.png"), os.path.join(OUT, "dask_workers.png"))  # tune's own plot
    print("plot: dask_workers.png (the run folder also holds journal.jsonl and results.json)")
