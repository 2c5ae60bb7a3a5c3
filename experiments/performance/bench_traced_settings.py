"""How many programs a sweep over one numeric settings knob compiles.

    python experiments/performance/bench_traced_settings.py [--values 0.01,0.02,0.03,0.05,0.1]
        [--knobs maximiser.learning_rate,fit.warm_ftol] [--lock-step] [--library DIR] [--out FILE]

For each knob, in a process whose compiled programs are cleared first
(``jax.clear_caches``), one decision is made for every value of the knob on the same data
(Currin, the paper's initial design, MUMBO with the tests' small settings and no
candidates on the box's faces, where the polish cannot move):
``stages.fit_stage``, ``stages.gstar_stage`` and ``stages.maximise_stage`` at the settings
with that value. With ``--lock-step`` the compiled driver's vmapped stages
(``compiled._fit_all``, ``_gstar_all``, ``_maximise_all``, two seeds) run too. JAX logs
every XLA compilation (``jax_log_compiles``); the script counts them per program and
prints the counts of the stage programs for each knob, and each value's proposal (to
compare the decisions of two commits; on this data the best candidate is a corner of the
box at the cheap fidelity, which no learning rate moves).

``--library DIR`` imports ``mumbo_jax`` from ``DIR`` (a git worktree of another commit,
``git worktree add /tmp/before <commit>``): the same sweep against the library before
the settings were split into structure and traced numbers, where every value of a
numeric knob compiled the programs that take the settings anew. ``--out`` writes the
counts as JSON.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

STAGE_PROGRAMS = ("_fit", "_gstar", "_maximise", "_fit_all", "_gstar_all", "_maximise_all")


class CompileCounter(logging.Handler):
    """Counts JAX's "Finished XLA compilation of jit(NAME)" log records per NAME."""

    PATTERN = re.compile(r"Finished XLA compilation of (?:jit\()?([\w<>.]+)\)?")

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.counts = collections.Counter()

    def emit(self, record):
        match = self.PATTERN.search(record.getMessage())
        if match:
            self.counts[match.group(1)] += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--values", default="",
                        help="comma-separated values, the same for every knob (default: five per knob)")
    parser.add_argument("--knobs", default="maximiser.learning_rate,fit.warm_ftol")
    parser.add_argument("--lock-step", action="store_true", help="also the compiled driver's vmapped stages")
    parser.add_argument("--library", default=str(ROOT), help="the repository whose mumbo_jax is measured")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(pathlib.Path(args.library).resolve()))

    import jax
    import jax.numpy as jnp
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    import mumbo_jax
    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo import compiled, stages
    from mumbo_jax.bo.settings import BOSettings

    library = pathlib.Path(mumbo_jax.__file__).resolve().parents[1]
    commit = subprocess.run(["git", "-C", str(library), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"mumbo_jax from {library} (commit {commit or '?'}), JAX {jax.__version__}")

    defaults = {"maximiser.learning_rate": [0.01, 0.02, 0.03, 0.05, 0.1],
                "fit.warm_ftol": [0.0, 1e-12, 1e-9, 1e-6, 1e-3],
                "fit.refit_growth": [0.0, 0.02, 0.05, 0.1, 0.2]}
    base = BOSettings(strategy="mumbo", gstar={"samples": 5, "grid": 500},
                      maximiser={"n_candidates": 200, "n_starts": 2, "polish_steps": 5, "boundary_frac": 0.0},
                      fit={"restarts": 2, "max_iter": 30, "warm_from": 1},
                      recommendation={"rule": "global"})
    prob = problems.get_problem("currin")
    task = tasks.problem_task(prob)
    x0, z0 = stages.initial_design(task, jax.random.PRNGKey(0))
    y0 = jax.vmap(lambda x, z: problems.objective(prob, x, z))(x0, z0.astype(jnp.int32))
    state = stages.init(task, np.asarray(x0), np.asarray(z0), np.asarray(y0))
    keys = stages.step_keys(jax.random.PRNGKey(1), 0)
    seeds = jax.tree_util.tree_map(lambda a: jnp.stack([a, a]), state)  # two seeds in lock-step
    seed_keys = [jnp.stack([k, jax.random.fold_in(k, 1)]) for k in keys]

    counter = CompileCounter()
    logging.getLogger("jax").addHandler(counter)
    logging.getLogger("jax").setLevel(logging.WARNING)
    jax.config.update("jax_log_compiles", True)

    results = {"library": str(library), "commit": commit, "jax": jax.__version__, "knobs": {}}
    for knob in args.knobs.split(","):
        record, field = knob.split(".")
        values = [float(v) for v in args.values.split(",")] if args.values else defaults[knob]
        jax.clear_caches()
        counter.counts.clear()
        proposals = []
        for value in values:
            settings = base.replace(**{record: {field: value}})
            post = stages.fit_stage(settings, task, state.buffers, state.params, keys[0], True, False)
            gstar = stages.gstar_stage(settings, task, post, keys[1])
            prop = stages.maximise_stage(settings, task, post, gstar, keys[2], None, state.n_design)
            proposals.append([float(v) for v in np.atleast_1d(prop.x)] + [float(prop.z)])
            if args.lock_step:
                posts = compiled._fit_all(settings, task, seeds, seed_keys[0], True, False)
                gstars = compiled._gstar_all(settings, task, posts, seed_keys[1])
                jax.block_until_ready(compiled._maximise_all(settings, task, posts, gstars, seed_keys[2],
                                                             seeds.n_design))
        stage_counts = {name: counter.counts.get(name, 0) for name in STAGE_PROGRAMS
                        if name in counter.counts or not name.endswith("_all") or args.lock_step}
        results["knobs"][knob] = {"values": values, "programs": stage_counts,
                                  "all_compilations": sum(counter.counts.values()), "proposals": proposals}
        print(f"\n{knob} over {values}:")
        print("  programs compiled: " + ", ".join(f"{n} {c}" for n, c in stage_counts.items())
              + f" (all compilations, small eager ones included: {sum(counter.counts.values())})")
        for value, p in zip(values, proposals):
            print(f"  {value:<8g} proposal x, z = {np.round(p, 6).tolist()}")
    if args.out:
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
