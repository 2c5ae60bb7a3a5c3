"""The settings of a hyper-parameter fit: :class:`FitSettings` (maximum marginal
likelihood by L-BFGS, and how often the BO loops refit) and :class:`MCMCSettings`
(NUTS samples of the hyper-parameters instead of a point estimate).

The defaults are the BO loops' and those of the functional entry points
(:func:`mumbo_jax.gp.fitting.fit`, :func:`mumbo_jax.gp.marginal.nuts_samples`): a
model rebuilt from the functional pieces fits as the loop does.
"""

from __future__ import annotations

import dataclasses

from mumbo_jax import knobs
from mumbo_jax.knobs import knob

__all__ = ["FitSettings", "MCMCSettings"]


@dataclasses.dataclass(frozen=True)
class FitSettings:
    """How the hyper-parameters are fitted (maximum marginal likelihood, L-BFGS)."""

    restarts: int = knob(2, "L-BFGS starts of a refit (the previous hyper-parameters, the defaults, then random "
                         "perturbations). The refit dominates a step's cost: every start runs until the gradient "
                         "test or max_iter, and on noiseless data the likelihood keeps rising slowly as the noise "
                         "shrinks, so most starts run all max_iter iterations.", low=1, cap=1_000, old="fit_restarts")
    max_iter: int = knob(50, "L-BFGS iterations per start.", low=1, cap=100_000, old="fit_max_iter")
    refit_every: int = knob(1, "Below incremental_from observations (or with refit_growth = 0) the BO loops refit "
                            "at steps k with k % refit_every == 0; the steps between condition on all the data with "
                            "the previous hyper-parameters (one Cholesky). 1 refits every step.", low=1,
                            cap=1_000_000, old="refit_every")
    warm_from: int = knob(500, "0: every refit runs all its restarts. N >= 1: a refit with at least N observations "
                          "runs only the warm start (L-BFGS from the previous hyper-parameters) for at most "
                          "warm_iter iterations, except every cold_every-th refit, which runs all restarts for "
                          "max_iter. The default keeps full refits below 500 observations and makes the runs that "
                          "reach thousands (every L-BFGS iteration an O(n^3) factorisation) about 5x cheaper per "
                          "decision; warm-only refits at small n kept Forrester seeds in a poor basin "
                          "(docs/performance.md, Refits at large n).", low=0, cap=100_000_000)
    cold_every: int = knob(10, "With warm_from: every cold_every-th refit (counted in refits, from the first "
                           "BO step) runs all restarts; from incremental_from observations on (refit_growth > 0), "
                           "the first refit after the data grew by (1 + refit_growth) ** cold_every since the last "
                           "such.", low=1, cap=1_000_000)
    warm_iter: int = knob(5, "With warm_from: L-BFGS iterations of a warm-only refit (at most max_iter): the "
                          "fit goes on from where the last one stopped, its first step 0.01 long in the log "
                          "hyper-parameters (fitting.WARM_STEP) rather than optax's unit step. 5 tied 10 on "
                          "Hartmann-3 (20 seeds, warm refits from 60 observations) at half the fit's cost.",
                          low=1, cap=100_000)
    warm_ftol: float = knob(1e-9, "With warm_from: a warm-only refit also stops when an L-BFGS iteration lowers the "
                            "negative log marginal likelihood by at most warm_ftol * max(|value|, 1) (scipy "
                            "L-BFGS-B's ftol test); 0: no such test. From a converged fit one or two iterations "
                            "reach it; on noiseless data, where the likelihood keeps rising as the noise shrinks, "
                            "warm refits run their warm_iter iterations (docs/performance.md, Refits at large n). "
                            "Full refits never stop this way.", low=0, high=1)
    refit_growth: float = knob(0.05, "From incremental_from observations on, the BO loops refit only when the data "
                               "have grown by this fraction since the last refit (a warm refit; one that runs all "
                               "restarts once they have grown by (1 + refit_growth) ** cold_every), and append each "
                               "evaluation between refits to the factor in O(n^2), holding the hyper-parameters, the "
                               "y scaling and the noise of the last refit (mumbo_jax.bo.refits). 0: every step as "
                               "refit_every says, conditioning afresh.", low=0, high=10)
    incremental_from: int = knob(500, "With refit_growth > 0: observations from which the refits thin out; below, "
                                 "every step refits as refit_every says (at small n the hyper-parameters move with "
                                 "every point, and warm-only refits there kept Forrester seeds in a poor basin).",
                                 low=1, cap=100_000_000)

    def __post_init__(self):
        knobs.check(self, "fit.")


@dataclasses.dataclass(frozen=True)
class MCMCSettings:
    """Marginalised hyper-parameters: NUTS samples (BlackJAX) instead of the MAP alone."""

    samples: int = knob(0, "0: the hyper-parameters are a point estimate (MAP). S >= 2: at every refit, after the "
                        "MAP fit, NUTS draws S - 1 samples of their posterior; with the MAP as sample 0 the S "
                        "posteriors are conditioned in one vmap, g* is sampled under each (each on 1/S of the "
                        "default grid), the acquisition is averaged over them and the recommendation uses the "
                        "mixture's moments. Rules that sample g* only, one evaluation per step.", low=0,
                        cap=100_000, old="hmc_samples")
    warmup: int = knob(50, "NUTS window-adaptation steps per refit (step size and mass matrix).", low=0,
                       cap=100_000, old="hmc_warmup")
    max_doublings: int = knob(4, "NUTS tree depth: at most 2 ** depth leapfrog steps per draw.", low=0, cap=20,
                              old="hmc_max_doublings")

    def __post_init__(self):
        knobs.check(self, "mcmc.")
        if self.samples == 1:
            raise ValueError("mcmc.samples must be 0 (MAP hyper-parameters) or at least 2 (the MAP and NUTS "
                             "draws), got 1")
        if self.samples and (self.warmup < 1 or self.max_doublings < 1):
            raise ValueError(f"mcmc.warmup and mcmc.max_doublings must be >= 1 with mcmc.samples > 0, got "
                             f"{self.warmup} and {self.max_doublings}")
