"""What a BO run is: the decision rule's settings and the task it optimises.

:class:`BOSettings` (static, hashable: one compiled program per settings) and
:class:`Task` (the model over X x Z, the target g and the fidelity space with its
costs), bundled and checked by :func:`make_task`.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.acquisition import maxvalue
from mumbo_jax.bo import incumbent, optimize, robust, rules  # noqa: F401 (robust registers the robust rules)
from mumbo_jax.gp import models, posterior

__all__ = ["BOSettings", "Task", "make_task"]


@dataclasses.dataclass(frozen=True)
class BOSettings:
    """Static settings of the decision rule.

    Attributes:
        strategy: a name in :data:`mumbo_jax.bo.rules.RULES`: ``"robust"`` (the
            default: MUMBO behind a target-only EI sequence, cheap queries only where the
            target's own observations say they pay; :mod:`mumbo_jax.bo.robust`),
            ``"mumbo"`` (the paper's multi-fidelity rule, unguarded), ``"mes"``
            (max-value entropy search at the target only), ``"random"`` (uniform x at the
            target), a baseline of :mod:`mumbo_jax.acquisition.baselines` (``"ei"``,
            ``"ucb"``, ``"mt_ei"``, ``"mf_gp_ucb"``, ``"boca"``, ``"mtbo"``) or another
            registered rule (``robust_mt_ei``, ``mf_kg``, ...). The robust default was
            chosen on problems held out from its design (docs/RESULTS.md, "A robust default").
        gain: MUMBO's gain path, ``"table"`` (the fast default) or ``"simpson"``
            (direct vmapped Simpson quadrature, the reference); None: the rule's own
            default. Only for rules with a gain path (``"mumbo"``).
        n_gstar: samples of g* per step.
        gstar_method: ``"gumbel"`` or ``"exact"``.
        gstar_grid: random grid size for g* per posterior (None: the sampler's default,
            10,000 d, shared out over the ``hmc_samples`` posteriors when there are several).
        n_candidates: random candidates scored per fidelity.
        n_starts: best candidates polished by projected Adam (at most n_candidates).
        n_polish_steps: Adam steps per start.
        learning_rate: Adam step on the unit cube.
        fit_restarts: L-BFGS starts of a full refit (previous params, defaults, random).
            The refit dominates a step's cost inside the compiled loop; the warm start
            from the previous step usually converges in a few iterations.
        fit_max_iter: L-BFGS iterations per start.
        fit_ftol: > 0: each L-BFGS start also stops when an iteration lowers the
            objective by at most fit_ftol relative (scipy's ftol test, e.g. 1e-9). 0 (the
            default): no such test. Off because it changed some runs' decisions (no loss
            in the refit seed study) without a measured gain in a decision's time
            (experiments/performance/bench_decision.py).
        full_refit_every: refits at BO steps k with k % full_refit_every == 0 (and an
            ask/tell refit from the default hyper-parameters) run all fit_restarts starts;
            the others run L-BFGS from the previous hyper-parameters only (a warm start).
            1 (the default): every refit is full. Off because the refit seed study
            found warm-only refits leave Forrester seeds at the local
            optimum: the fresh start from the defaults is what gets them out.
        refit_every: refit the hyper-parameters at BO steps k with
            ``k % refit_every == 0``; the steps between condition on all the data with the
            previous hyper-parameters (one Cholesky). 1 (the default) refits every step;
            long runs with hundreds of observations use 10-25, where a refit costs
            seconds and the hyper-parameters barely move from step to step.
        ucb_beta: UCB coefficient of ``"ucb"``, ``"mf_gp_ucb"`` and ``"boca"`` (None:
            Kandasamy et al.'s 0.2 d log(2 t), t = observations so far).
        mtbo_samples: ``"mtbo"``: Monte Carlo samples of g at the representer points
            (the paper's MTBO-N).
        mtbo_representers: ``"mtbo"``: representer points (drawn in proportion to EI).
        mtbo_fantasies: ``"mtbo"``: Gauss-Hermite nodes over the fantasised observation.
        incumbent_rule: how the recommendation is chosen (:mod:`mumbo_jax.bo.incumbent`):
            ``"robust"`` (the default: ``"global"``'s maximiser where, under the model that
            predicts the target's own observations better and under the target-only model,
            its lower bound beats the best point measured at the target, else that point),
            ``"global"`` (the maximiser of the posterior mean of g over the
            whole box, evaluated or not), ``"mean"`` (the evaluated x with the best
            posterior mean of g, the paper's protocol),
            ``"target"`` (the best mean among x evaluated at the target itself; all x
            while none is), ``"lcb"`` (the evaluated x with the best mu_g - 2 sd_g) or
            ``"global_lcb"`` (the maximiser of mu_g - 2 sd_g over the box, evaluated x
            included) or ``"global_safe"`` (``"global"``'s maximiser where the model is
            sure it beats ``"mean"``'s x, else that x) or ``"global_guard"``
            (``"global"``'s maximiser where its lower bound mu_g - 2 sd_g beats the mean at
            ``"target"``'s x, else that x).
        interval_calibration: ``"loo"`` (the default) widens the model's sd of g at the
            recommendation (the interval the benchmark loops record and
            :meth:`mumbo_jax.bo.asktell.AskTell.recommendation` reports) by the root mean
            square of the leave-one-out z-scores of the target's observations
            (:func:`mumbo_jax.bo.incumbent.interval_scale`; never narrower); ``"none"``:
            the model's own sd. Decisions do not depend on it.
        protect_target: rules that choose a fidelity: when the recommended x (by
            ``incumbent_rule``) has never been evaluated at the target, evaluate it there
            instead of the acquisition's choice. Off by default (the ablation
            found no gain on 3-seed screens).
        boundary_frac: fraction in [0, 1] of the maximiser's random candidates moved onto
            the box's faces, edges and corners (:func:`mumbo_jax.bo.optimize.snap_to_faces`);
            0.25 by default (0: uniform candidates only).
        local_frac: fraction in [0, 1] of the maximiser's random candidates drawn near the
            best evaluated x (:func:`mumbo_jax.bo.optimize.near_anchors`, the
            :data:`mumbo_jax.bo.incumbent.N_ANCHORS` best posterior means of g), at
            several scales; 0.25 by default. ``boundary_frac + local_frac <= 1``.
            The three defaults (global recommendation, face and local candidates) are
            the measured combination: docs/RESULTS.md, "Levers tried".
        batch_size: evaluations chosen per BO step by the compiled loop
            (:func:`mumbo_jax.bo.compiled.run_compiled`; synchronous batches,
            :mod:`mumbo_jax.bo.batch`). 1 (the default): one evaluation per step.
        batch_rule: how a batch of ``batch_size > 1`` is built: ``"believer"`` (the
            default; kriging believer: the rule's own proposal, each slot on the
            posterior conditioned on the earlier slots at their mean; any rule),
            ``"gibbon"`` (GIBBON's batch bound, greedy over a candidate set; rules that
            sample g*), ``"gibbon_kb"`` (GIBBON choosing among the believer's slots and
            the uniform candidates) or ``"gibbon_seq"`` (the sequential decision, then
            GIBBON's greedy slots given it as pending) or ``"gibbon_mumbo"`` (GIBBON's greedy
            batch with MUMBO's gain as each point's own term). The believer is the default because it was level
            with sequential MUMBO and ahead of both GIBBON forms on Currin and Hartmann-3
            (docs/RESULTS.md, Synchronous batches).
        batch_polish: ``"gibbon"`` batches: also move the greedy batch jointly by
            gradient ascent of the dense batch gain (:func:`mumbo_jax.bo.batch.polish_batch`).
            Off: on Currin (10 seeds, budget 200) it ended at 0.021 median regret against
            4.6e-4 without (docs/RESULTS.md, Synchronous batches).
        batch_rescaled_repulsion: ``"gibbon"`` batches: divide a slot's repulsion
            (log-det) term by m^2, m the points already in the batch, as GIBBON's
            authors recommend for batches (Trieste's ``rescaled_repulsion``).
        batch_marginal_cost: ``"gibbon"`` / ``"gibbon_mumbo"`` batches: slot k maximises
            its own gain increment per unit of its own cost, as the believer's slots do,
            instead of the batch's gain per unit of the batch's cost (which, once a cheap
            slot is in, makes every dearer slot look poor).
        hmc_samples: 0 (the default): the hyper-parameters are a point estimate (MAP).
            ``S >= 2``: at every refit, after the MAP fit, BlackJAX's NUTS draws S - 1
            samples from their posterior (:func:`mumbo_jax.gp.marginal.nuts_samples`);
            with the MAP as sample 0 the S posteriors are conditioned in one vmap, g* is
            sampled under each (each on 1/S of the default grid), the acquisition is averaged over them and the
            recommendation uses the mixture's moments. Rules that
            sample g* only (``mumbo``, ``mes``), one evaluation per step.
        target_floor_cv: 0 (the default): the task's model is fitted as it is. ``f > 0``
            (ICM kinds): every refit also fits the model with the target's own variance
            floored at ``f`` of its shared variance (``ModelSpec.target_floor``) and keeps
            whichever of the two fits predicts the target's own observations better, by
            their leave-one-out log density (:func:`mumbo_jax.gp.posterior.loo_log_density`).
            Twice the fit's cost; MAP only (not with ``hmc_samples``). Off by default: on
            the benchmarks the target's left-out points almost always favoured the plain
            fit (docs/RESULTS.md, "A floor chosen by leave-one-out").
        hmc_warmup: NUTS window-adaptation steps per refit (step size and mass matrix).
        hmc_max_doublings: NUTS tree depth: at most 2 ** depth leapfrog steps per draw.
    """

    strategy: str = "robust"
    n_gstar: int = 10
    gstar_method: str = "gumbel"
    gstar_grid: int | None = None
    n_candidates: int = 2000
    n_starts: int = 8
    n_polish_steps: int = 40
    learning_rate: float = 0.03
    fit_restarts: int = 2
    fit_max_iter: int = 50
    fit_ftol: float = 0.0
    full_refit_every: int = 1
    refit_every: int = 1
    ucb_beta: float | None = None
    mtbo_samples: int = 50
    mtbo_representers: int = 50
    mtbo_fantasies: int = 5
    gain: str | None = None
    incumbent_rule: str = "robust"
    interval_calibration: str = "loo"
    protect_target: bool = False
    boundary_frac: float = 0.25
    local_frac: float = 0.25
    batch_size: int = 1
    batch_rule: str = "believer"
    batch_polish: bool = False
    batch_rescaled_repulsion: bool = False
    batch_marginal_cost: bool = False
    hmc_samples: int = 0
    hmc_warmup: int = 50
    hmc_max_doublings: int = 4
    target_floor_cv: float = 0.0

    @property
    def calibrated_interval(self) -> bool:
        """Whether the recommendation's sd is widened (``interval_calibration = "loo"``)."""
        return self.interval_calibration == "loo"

    def __post_init__(self):
        if self.strategy not in rules.RULES:
            raise ValueError(f"unknown strategy {self.strategy!r}; allowed: {rules.STRATEGIES}")
        if self.gstar_method not in maxvalue.GSTAR_METHODS:
            raise ValueError(f"unknown gstar_method {self.gstar_method!r}; allowed: {maxvalue.GSTAR_METHODS}")
        for name in ("n_gstar", "n_candidates", "n_starts", "n_polish_steps", "fit_restarts", "fit_max_iter",
                     "full_refit_every", "refit_every", "mtbo_samples", "mtbo_representers", "mtbo_fantasies",
                     "batch_size"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not (isinstance(self.fit_ftol, (int, float)) and not isinstance(self.fit_ftol, bool)
                and 0 <= self.fit_ftol < 1):
            raise ValueError(f"fit_ftol must be a number in [0, 1), got {self.fit_ftol!r}")
        if self.ucb_beta is not None and not (isinstance(self.ucb_beta, (int, float))
                                              and not isinstance(self.ucb_beta, bool)
                                              and 0 <= self.ucb_beta < float("inf")):
            raise ValueError(f"ucb_beta must be a finite number >= 0 or None, got {self.ucb_beta!r}")
        if self.interval_calibration not in ("loo", "none"):
            raise ValueError(f"interval_calibration must be 'loo' or 'none', got {self.interval_calibration!r}")
        incumbent.check_incumbent_rule(self.incumbent_rule)
        if not isinstance(self.protect_target, bool):
            raise ValueError(f"protect_target must be true or false, got {self.protect_target!r}")
        optimize.check_candidate_fraction(self.boundary_frac, "boundary_frac")
        optimize.check_candidate_fraction(self.local_frac, "local_frac")
        if self.boundary_frac + self.local_frac > 1.0:
            raise ValueError(f"boundary_frac + local_frac must be at most 1, got {self.boundary_frac} + "
                             f"{self.local_frac}")
        for name in ("batch_polish", "batch_rescaled_repulsion", "batch_marginal_cost"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        from mumbo_jax.bo import batch  # the batch rules' registry (batch.py imports this module)
        batch.check_batch_rule(self.batch_rule, self.strategy, self.batch_size)
        for name in ("hmc_samples", "hmc_warmup", "hmc_max_doublings"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
        if self.hmc_samples:
            if self.hmc_samples == 1:
                raise ValueError("hmc_samples must be 0 (MAP hyper-parameters) or at least 2 (the MAP and NUTS "
                                 "draws), got 1")
            if not rules.RULES[self.strategy].uses_gstar:
                raise ValueError(f"hmc_samples > 0 needs a rule that samples g* ({', '.join(rules.USES_GSTAR)}); "
                                 f"strategy {self.strategy!r} does not")
            if self.batch_size > 1:
                raise ValueError("hmc_samples > 0 needs batch_size = 1 (batches on marginalised "
                                 "hyper-parameters are not built)")
            if self.hmc_warmup < 1 or self.hmc_max_doublings < 1:
                raise ValueError(f"hmc_warmup and hmc_max_doublings must be >= 1 with hmc_samples > 0, got "
                                 f"{self.hmc_warmup} and {self.hmc_max_doublings}")
        f = self.target_floor_cv
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0.0 <= f < float("inf"):
            raise ValueError(f"target_floor_cv must be a finite number >= 0, got {f!r}")
        if f > 0 and self.hmc_samples:
            raise ValueError("target_floor_cv > 0 chooses between two MAP fits; it does not combine with "
                             f"hmc_samples = {self.hmc_samples} (set one of them to 0)")
        optimize.check_n_starts(self.n_starts, self.n_candidates)  # target-only rules score one fidelity
        if self.strategy == "mtbo" and self.mtbo_representers > rules.MTBO_POOL:
            raise ValueError(f"mtbo_representers must be <= {rules.MTBO_POOL}, got {self.mtbo_representers}")
        if self.gain is not None:
            if self.gain not in rules.GAINS:
                raise ValueError(f"unknown gain {self.gain!r}; allowed: {rules.GAINS}")
            if rules.RULES[self.strategy].gain is None:
                raise ValueError(f"strategy {self.strategy!r} has no gain path; gain applies to 'mumbo' only")


@functools.partial(jax.tree_util.register_dataclass, data_fields=["space"],
                   meta_fields=["spec", "target_z", "target_w"])
@dataclasses.dataclass(frozen=True)
class Task:
    """What is optimised: the model over X x Z, the target g and the fidelity space.

    Attributes:
        spec: the GP model (its bounds are the search box).
        target_z, target_w: the :class:`mumbo_jax.gp.posterior.Target` as tuples (static).
        space: :class:`mumbo_jax.bo.optimize.FidelitySpace` with the cost model.
    """

    spec: models.ModelSpec
    target_z: tuple
    target_w: tuple
    space: optimize.FidelitySpace

    @property
    def target(self) -> posterior.Target:
        return posterior.Target(jnp.asarray(self.target_z), jnp.asarray(self.target_w))


def make_task(spec: models.ModelSpec, target: posterior.Target, space: optimize.FidelitySpace) -> Task:
    """Bundle a model, a target and a fidelity space (checked for consistency)."""
    posterior.check_target(spec, target)
    if spec.discrete != (space.n_fidelities is not None):
        raise ValueError("a discrete model needs discrete fidelities and a continuous model a continuous one")
    if spec.discrete and space.n_fidelities != spec.n_fidelities:
        raise ValueError(f"the model has {spec.n_fidelities} fidelities but the cost model {space.n_fidelities}")
    z = tuple(np.asarray(target.z).tolist())
    return Task(spec, z, tuple(float(w) for w in np.asarray(target.weights)), space)
