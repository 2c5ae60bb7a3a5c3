"""Where MUMBO evaluates on Hartmann-3, and what its own model would recommend.

    python experiments/ablations/diag_recommendation.py SEED

Part 1 (compiled loop, budget 150, ``refit_every = 5``, ``local_frac = 0.25``): MT-EI and
MUMBO's last 20 evaluations (distance to the optimiser, fidelity), and the model's bias
and sd at the final recommendation. Part 2 (ask/tell, MUMBO, the same settings): every
10 evaluations, the regret of the paper's recommendation (the evaluated x with the best
posterior mean of g) against that of the maximiser of the posterior mean of g over the
box (``incumbent_rule = "global"``'s search). Output: printed.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from mumbo_jax.runtime import process_options  # noqa: E402
process_options.enable()  # as the mumbo-jax commands: compilation cache, compile options, prefetch, program release

from mumbo_jax.benchmarks import problems, tasks  # noqa: E402
from mumbo_jax.bo import incumbent, optimize  # noqa: E402
from mumbo_jax.bo.asktell import AskTell  # noqa: E402
from mumbo_jax.bo.settings import BOSettings  # noqa: E402

BUDGET = 150.0


def part1(prob, seed):
    xs = np.asarray(prob.optimum_location)
    for strategy, kw in (("mt_ei", {}), ("mumbo", {"local_frac": 0.25})):
        h = tasks.run_problem(prob, BUDGET, [seed], BOSettings(strategy=strategy, fit={"refit_every": 5}, **kw),
                              max_evals=120)
        n = int(h.n_evals[0])
        d = np.linalg.norm(h.x[0, :n] - xs, axis=1)
        truth = -prob.optimum_value - h.regret[0, n]  # maximisation convention (minimised problem)
        print(f"{strategy}: {n} evaluations, final regret {h.regret[0, n]:.1e}")
        print("  distance to x* (last 20):", np.round(d[-20:], 3).tolist())
        print("  fidelity (last 20):", h.z[0, n - 20:n].astype(int).tolist())
        print(f"  recommendation: distance {np.linalg.norm(h.incumbent_x[0, n] - xs):.4f}, model mean - truth "
              f"{h.incumbent_mean[0, n] - truth:.3f}, model sd {h.incumbent_sd[0, n]:.1e}")


def part2(prob, seed):
    task = tasks.problem_task(prob)
    opt = AskTell(task, BOSettings(strategy="mumbo", fit={"refit_every": 5}, maximiser={"local_frac": 0.25}), seed=seed)
    spent, bounds = 0.0, jnp.asarray(prob.bounds)
    while spent < BUDGET:
        design = opt.in_initial_design
        x, z = opt.ask()
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
        if design:
            continue
        spent += float(problems.cost(prob, z))
        if len(opt.x) % 10 == 0 or spent >= BUDGET:
            post = opt.last_fit[1]
            x_eval, _ = opt.incumbent()
            x_glob, _, _ = incumbent.recommend(post, task.target, bounds, "global", opt.last_fit[2].x)
            print(f"cost {spent:5.0f}: evaluated-x recommendation regret "
                  f"{float(problems.simple_regret(prob, jnp.asarray(x_eval))):.1e}, posterior-mean maximiser "
                  f"regret {float(problems.simple_regret(prob, x_glob)):.1e}", flush=True)


if __name__ == "__main__":
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    prob = problems.get_problem("hartmann3")
    part1(prob, seed)
    part2(prob, seed)
