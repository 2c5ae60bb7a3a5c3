"""What a BO run is: the decision rule's settings and the task it optimises.

:class:`BOSettings` holds the strategy's name, the run's values of rules' knobs
(``options``: rule name -> knob -> value, over each :attr:`mumbo_jax.bo.rules.Rule.options`)
and a few small records, grouped as a user thinks of them: ``gstar`` (:class:`GstarSettings`, the
samples of g*), ``maximiser`` (:class:`MaximiserSettings`), ``fit``
(:class:`FitSettings`), ``recommendation`` (:class:`RecommendationSettings`), ``batch``
(:class:`BatchSettings`), ``mcmc`` (:class:`MCMCSettings`) and ``approx``
(:class:`ApproxSettings`). Every settings record is defined here, in one place; the
numerical modules keep their own defaults as plain constants (``mumbo_jax.gp.fitting``,
``mumbo_jax.gp.marginal``, ``mumbo_jax.bo.optimize``), which the records' defaults name.

Every record is a pytree (:func:`mumbo_jax.knobs.record`): its structure (counts,
choices, switches: whatever sets a shape or a Python branch of a program, and the
strategy) is the static key of the compiled programs, its numbers declared
``traced=True`` (``maximiser.learning_rate``, ``fit.warm_ftol``, ``fit.refit_growth``)
are traced arguments, so settings that differ in a number share the programs. In the
rules' options (``options``) the knobs declared ``traced`` are traced (UCB's ``beta``, the
robust guard's ``share``, ``min_explained``, ``trust`` and ``mf_choice``) and the rest is structure.

Every default is documented once, in its record's field metadata
(:func:`mumbo_jax.knobs.knob`), which the configuration schema, ``mumbo-jax config-help``
and the docs render. Build settings as ``BOSettings(strategy="ei",
fit=FitSettings(restarts=4))`` or, equivalently, with a dict for a record
(``fit={"restarts": 4}``: the other fields keep their defaults);
:meth:`BOSettings.replace` changes some fields of a copy the same way.

:class:`Task` (the model over X x Z, the target g and the fidelity space with its costs)
is bundled and checked by :func:`make_task`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax import knobs
from mumbo_jax.acquisition import maxvalue
from mumbo_jax.bo import batch, optimize, robust, rules  # noqa: F401 (robust registers the robust rules)
from mumbo_jax.bo.incumbent import INCUMBENT_RULES
from mumbo_jax.gp import fitting, marginal, models, posterior
from mumbo_jax.knobs import knob

__all__ = ["BOSettings", "GstarSettings", "MaximiserSettings", "FitSettings",
           "RecommendationSettings", "BatchSettings", "MCMCSettings", "ApproxSettings", "RECORDS", "MOVED_TO_OPTIONS", "Task", "make_task", "old_keys",
           "moved_option_message"]


@knobs.record
@dataclasses.dataclass(frozen=True)
class MaximiserSettings:
    """How the acquisition is maximised over X x Z (mumbo_jax.bo.optimize.maximise)."""

    n_candidates: int = knob(optimize.N_CANDIDATES, "Random candidates scored per fidelity.", low=1, cap=200_000,
                             old="n_candidates")
    n_starts: int = knob(optimize.N_STARTS, "Best candidates polished by projected Adam (at most n_candidates).", low=1,
                         cap=10_000, old="n_starts")
    polish_steps: int = knob(optimize.POLISH_STEPS, "Adam steps per start.", low=1, cap=100_000, old="n_polish_steps")
    learning_rate: float = knob(optimize.LEARNING_RATE, "Adam step on the unit cube.", low=0, low_open=True, old="learning_rate",
                                traced=True)
    boundary_frac: float = knob(optimize.BOUNDARY_FRAC, "Fraction of the random candidates moved onto the box's faces, edges and "
                                "corners (snap_to_faces); 0: uniform candidates only. Measured with local_frac "
                                "and the global recommendation in docs/RESULTS.md, Levers tried.", low=0, high=1,
                                old="boundary_frac")
    local_frac: float = knob(optimize.LOCAL_FRAC, "Fraction of the random candidates drawn near the best evaluated x "
                             "(near_anchors; the anchors are the N_ANCHORS best posterior means of g), at several "
                             "scales; boundary_frac + local_frac <= 1.", low=0, high=1, old="local_frac")
    gradient: str = knob(optimize.GRADIENT, "How the polish takes the acquisition's gradient: 'exact', automatic "
                         "differentiation; 'differences', forward differences from one batched evaluation of "
                         "d + 1 points: one copy of the acquisition in the program instead of its forward and "
                         "reverse passes, about 1.5 s less to compile per buffer size, 5-14 % more per warm "
                         "step below 1000 observations (docs/performance.md, Compilation).", choices=optimize.GRADIENTS)

    def __post_init__(self):
        knobs.check(self, "maximiser.")
        if self.boundary_frac + self.local_frac > 1.0:
            raise ValueError(f"maximiser.boundary_frac + maximiser.local_frac must be at most 1, got "
                             f"{self.boundary_frac} + {self.local_frac}")
        optimize.check_n_starts(self.n_starts, self.n_candidates)  # target-only rules score one fidelity


@knobs.record
@dataclasses.dataclass(frozen=True)
class FitSettings:
    """How the hyper-parameters are fitted (maximum marginal likelihood, L-BFGS)."""

    restarts: int = knob(fitting.RESTARTS, "L-BFGS starts of a refit (the previous hyper-parameters, the defaults, then random "
                         "perturbations). The refit dominates a step's cost: every start runs until the gradient "
                         "test or max_iter, and on noiseless data the likelihood keeps rising slowly as the noise "
                         "shrinks, so most starts run all max_iter iterations.", low=1, cap=1_000, old="fit_restarts")
    max_iter: int = knob(fitting.MAX_ITER, "L-BFGS iterations per start.", low=1, cap=100_000, old="fit_max_iter")
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
                            "Full refits never stop this way.", low=0, high=1, traced=True)
    refit_growth: float = knob(0.05, "From incremental_from observations on, the BO loops refit only when the data "
                               "have grown by this fraction since the last refit (a warm refit; one that runs all "
                               "restarts once they have grown by (1 + refit_growth) ** cold_every), and append each "
                               "evaluation between refits to the factor in O(n^2), holding the hyper-parameters, the "
                               "y scaling and the noise of the last refit (mumbo_jax.bo.refits). 0: every step as "
                               "refit_every says, conditioning afresh.", low=0, high=10, traced=True)
    incremental_from: int = knob(500, "With refit_growth > 0: observations from which the refits thin out; below, "
                                 "every step refits as refit_every says (at small n the hyper-parameters move with "
                                 "every point, and warm-only refits there kept Forrester seeds in a poor basin).",
                                 low=1, cap=100_000_000)

    def __post_init__(self):
        knobs.check(self, "fit.")


@knobs.record
@dataclasses.dataclass(frozen=True)
class MCMCSettings:
    """Marginalised hyper-parameters: NUTS samples (BlackJAX) instead of the MAP alone."""

    samples: int = knob(0, "0: the hyper-parameters are a point estimate (MAP). S >= 2: at every refit, after the "
                        "MAP fit, NUTS draws S - 1 samples of their posterior; with the MAP as sample 0 the S "
                        "posteriors are conditioned in one vmap, g* is sampled under each (each on 1/S of the "
                        "default grid), the acquisition is averaged over them and the recommendation uses the "
                        "mixture's moments. Rules that sample g* only, one evaluation per step.", low=0,
                        cap=100_000, old="hmc_samples")
    warmup: int = knob(marginal.WARMUP, "NUTS window-adaptation steps per refit (step size and mass matrix).", low=0,
                       cap=100_000, old="hmc_warmup")
    max_doublings: int = knob(marginal.MAX_DOUBLINGS, "NUTS tree depth: at most 2 ** depth leapfrog steps per draw.", low=0, cap=20,
                              old="hmc_max_doublings")

    def __post_init__(self):
        knobs.check(self, "mcmc.")
        if self.samples == 1:
            raise ValueError("mcmc.samples must be 0 (MAP hyper-parameters) or at least 2 (the MAP and NUTS "
                             "draws), got 1")
        if self.samples and (self.warmup < 1 or self.max_doublings < 1):
            raise ValueError(f"mcmc.warmup and mcmc.max_doublings must be >= 1 with mcmc.samples > 0, got "
                             f"{self.warmup} and {self.max_doublings}")


@knobs.record
@dataclasses.dataclass(frozen=True)
class GstarSettings:
    """Samples of g*, the max value of the target (Wang & Jegelka's Gumbel fit)."""

    samples: int = knob(10, "Samples of g* per step (MUMBO-10: 10).", low=1, cap=10_000, old="n_gstar")
    method: str = knob("gumbel", "gumbel (Gumbel fit to the marginals' max on a random grid) or exact.",
                       choices=maxvalue.GSTAR_METHODS, old="gstar_method")
    grid: int | None = knob(None, "Random grid size per posterior; unset: the sampler's default, 10,000 d, shared "
                            "out over the mcmc.samples posteriors when there are several.", low=1,
                            cap=1_000_000, old="gstar_grid")

    def __post_init__(self):
        knobs.check(self, "gstar.")


@knobs.record
@dataclasses.dataclass(frozen=True)
class RecommendationSettings:
    """Which x is recommended, and the interval reported there (mumbo_jax.bo.incumbent)."""

    rule: str = knob("robust", "robust (the default: global's maximiser where, under the model that predicts the "
                     "target's own observations better and under the target-only model, its lower bound beats "
                     "the best point measured at the target, once the target has 2(d + 1) observations, else "
                     "that point), global (the maximiser of the "
                     "posterior mean of g over the box; the paper configs'), mean (the evaluated x with the best "
                     "posterior mean of g, the paper's protocol), target (the best mean among x evaluated at the "
                     "target), lcb (the evaluated x with the best mu_g - 2 sd_g), global_lcb (the maximiser of "
                     "mu_g - 2 sd_g over the box), global_safe (global's maximiser where the model is sure it beats "
                     "mean's x, else that x) or global_guard (global's maximiser where its lower bound beats the "
                     "mean at target's x, else that x).", choices=lambda: tuple(INCUMBENT_RULES), old="incumbent_rule")
    calibration: str = knob("loo", "loo widens the model's sd of g at the recommendation by the root mean square "
                            "of the leave-one-out z-scores of the target's observations (never narrower); none: "
                            "the model's own sd. Decisions do not depend on it.", choices=("loo", "none"),
                            old="interval_calibration")

    def __post_init__(self):
        knobs.check(self, "recommendation.")

    @property
    def calibrated(self) -> bool:
        """Whether the recommendation's sd is widened (``calibration = "loo"``)."""
        return self.calibration == "loo"


def _batch_rule_names() -> tuple:
    return tuple(batch.BATCH_RULES)


@knobs.record
@dataclasses.dataclass(frozen=True)
class BatchSettings:
    """Synchronous batches of the compiled loop (mumbo_jax.bo.batch)."""

    size: int = knob(1, "Evaluations chosen per BO step by the compiled loop (run, compare); 1: one per step.",
                     low=1, cap=1_000, old="batch_size")
    rule: str = knob("believer", "How a batch of size > 1 is built: believer (the default; kriging believer, "
                     "any rule: level with sequential MUMBO and ahead of both GIBBON forms on Currin and "
                     "Hartmann-3, docs/RESULTS.md), gibbon (GIBBON's batch bound, greedy over a candidate set; "
                     "rules that sample g*), gibbon_kb (GIBBON choosing among the believer's slots and uniform "
                     "candidates), gibbon_seq (the sequential decision, then GIBBON's greedy slots given it as "
                     "pending) or gibbon_mumbo (GIBBON's greedy batch with MUMBO's gain as each point's own term).",
                     choices=_batch_rule_names, old="batch_rule")

    def __post_init__(self):
        knobs.check(self, "batch.")


@knobs.record
@dataclasses.dataclass(frozen=True)
class ApproxSettings:
    """Approximations for runs with thousands of observations (off by default)."""

    inducing: int = knob(0, "0: exact decisions. m >= 1: from approx.from_rows observations on, g* and the rule's "
                         "acquisition see an inducing-point posterior of m rows (mumbo_jax.gp.sparse: the DTC "
                         "predictive, rows chosen by pivoted Cholesky), O(m^2) a prediction instead of O(n^2); the "
                         "fit, the refit schedule and the recommendation stay exact. Not for rules that replay "
                         "their own evaluations (mf_gp_ucb, boca, the robust rules) nor batches.", low=0,
                         cap=100_000)
    from_rows: int = knob(1000, "With approx.inducing > 0: observations from which the decisions use the "
                          "inducing-point posterior.", low=1, cap=100_000_000)

    def __post_init__(self):
        knobs.check(self, "approx.")


# the records of BOSettings: field name -> record class, in order
RECORDS = {"gstar": GstarSettings, "maximiser": MaximiserSettings, "fit": FitSettings,
           "recommendation": RecommendationSettings, "batch": BatchSettings, "mcmc": MCMCSettings,
           "approx": ApproxSettings}


def _record(name):
    return dataclasses.field(default_factory=RECORDS[name])


@knobs.record
@dataclasses.dataclass(frozen=True)
class BOSettings:
    """Settings of the decision rule: the strategy and one record per concern (a pytree:
    the strategy and the records' structure static, their ``traced`` numbers leaves).

    Attributes:
        strategy: a name in :data:`mumbo_jax.bo.rules.RULES`: ``"robust"`` (the
            default: MUMBO behind a target-only EI sequence, cheap queries only where the
            target's own observations say they pay; :mod:`mumbo_jax.bo.robust`; chosen on
            problems held out from its design, docs/RESULTS.md, "A robust default"),
            ``"mumbo"`` (the paper's multi-fidelity rule, unguarded), ``"mes"``,
            ``"random"``, a baseline of :mod:`mumbo_jax.acquisition.baselines` (``"ei"``,
            ``"ucb"``, ``"mt_ei"``, ``"mf_gp_ucb"``, ``"boca"``, ``"mtbo"``) or another
            registered rule (``robust_mt_ei``, ``mf_kg``, ...).
        options: the run's values of rules' knobs, ``{rule name: {knob: value}}``, over
            the defaults of each rule's :attr:`mumbo_jax.bo.rules.Rule.options`
            (``{"ucb": {"beta": 0.5}}``, ``{"mtbo": {"samples": 200}}``,
            ``{"mumbo": {"gain": "simpson"}}``); the strategy reads its own entry. Each
            rule must be registered and each value pass the knob's checks; a value equal
            to the default is dropped (the settings compare equal without it).
        gstar: :class:`GstarSettings`, the samples of g*.
        maximiser: :class:`MaximiserSettings`.
        fit: :class:`FitSettings`, the fit and refit schedule.
        recommendation: :class:`RecommendationSettings`.
        batch: :class:`BatchSettings`.
        mcmc: :class:`MCMCSettings`.
        approx: :class:`ApproxSettings`, approximations for thousands of observations.

    A record may be given as a dict of its fields (the others keep their defaults). A
    flat name of before the records (``n_gstar``, ``fit_restarts``, ...; :func:`old_keys`)
    is a TypeError that names its field today (``gstar.samples``).

    Examples:
        >>> from mumbo_jax import BOSettings
        >>> BOSettings().strategy, BOSettings().recommendation.rule  # the defaults
        ('robust', 'robust')
        >>> s = BOSettings(strategy="mumbo", gstar={"samples": 5})  # the paper's MUMBO-5
        >>> s.gstar.samples, s.fit.restarts  # the other fields keep their defaults
        (5, 2)
        >>> s.replace(fit={"restarts": 4}).fit.restarts
        4
    """

    def __new__(cls, *args, **kwargs):
        if isinstance(kwargs.get("rule"), Mapping):  # RuleSettings, before the knobs moved to the rules
            moved = [k for k in kwargs["rule"] if k in MOVED_TO_OPTIONS]
            raise TypeError(moved_option_message(moved[0], kwargs["rule"][moved[0]]) if moved else
                            "BOSettings(rule=...) is gone: rules' knobs are their options, "
                            "BOSettings(options={rule name: {knob: value}})")
        if "rule" in kwargs:
            raise TypeError("BOSettings(rule=...) is gone: rules' knobs are their options, "
                            "BOSettings(options={rule name: {knob: value}})")
        flat = [k for k in kwargs if k in MOVED_TO_OPTIONS]
        if flat:
            raise TypeError(moved_option_message(flat[0], kwargs[flat[0]]))
        unknown = set(kwargs) - {f.name for f in dataclasses.fields(cls)}
        old = old_keys() if unknown else {}
        moved = [k for k in kwargs if k in unknown and k in old]
        if moved:
            where = ", ".join(f"{k} is now {old[k][0]}.{old[k][1]}" for k in moved)
            records: dict = {}
            for k in moved:
                records.setdefault(old[k][0], {})[old[k][1]] = kwargs[k]
            spelled = ", ".join(f"{r}={fields!r}" for r, fields in records.items())
            raise TypeError(f"{cls.__name__}() got the old flat keyword{'s' * (len(moved) > 1)} "
                            f"{', '.join(map(repr, moved))}: {where}; write {cls.__name__}({spelled})")
        return super().__new__(cls)

    strategy: str = "robust"
    options: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=rules.FrozenOptions,
                                                                 metadata={"traced": True})
    gstar: GstarSettings = _record("gstar")
    maximiser: MaximiserSettings = _record("maximiser")
    fit: FitSettings = _record("fit")
    recommendation: RecommendationSettings = _record("recommendation")
    batch: BatchSettings = _record("batch")
    mcmc: MCMCSettings = _record("mcmc")
    approx: ApproxSettings = _record("approx")

    def replace(self, **changes) -> "BOSettings":
        """A copy with some fields changed; a record may be given as a dict of some of
        its fields, merged over its current value
        (``s.replace(fit={"restarts": 4})``)."""
        return knobs.replace(self, **changes)

    def __post_init__(self):
        for name, cls in RECORDS.items():
            value = getattr(self, name)
            if isinstance(value, dict):
                try:
                    value = cls(**value)
                except TypeError as e:
                    names = ", ".join(f.name for f in dataclasses.fields(cls))
                    raise ValueError(f"{name}: {e} (its fields: {names})") from None
                object.__setattr__(self, name, value)
            if not isinstance(value, cls):
                raise ValueError(f"{name} must be a {cls.__name__} (or a dict of its fields), got "
                                 f"{type(value).__name__}")
        if not isinstance(self.strategy, str) or self.strategy not in rules.RULES:
            raise ValueError(f"unknown strategy {self.strategy!r}; allowed: {rules.STRATEGIES}")
        batch.check_batch_rule(self.batch.rule, self.strategy, self.batch.size)
        rule = rules.RULES[self.strategy]
        if self.mcmc.samples:
            if not rule.uses_gstar:
                raise ValueError(f"mcmc.samples > 0 needs a rule that samples g* ({', '.join(rules.USES_GSTAR)}); "
                                 f"strategy {self.strategy!r} does not")
            if self.batch.size > 1:
                raise ValueError("mcmc.samples > 0 needs batch.size = 1 (batches on marginalised "
                                 "hyper-parameters are not built)")
        if self.approx.inducing and (rule.replays_history or self.batch.size > 1):
            raise ValueError(f"approx.inducing > 0 needs a rule that reads only the posterior's predictions and "
                             f"batch.size = 1; strategy {self.strategy!r} with batch.size {self.batch.size} "
                             "replays its evaluations or builds batches on the data rows: set approx.inducing = 0")
        object.__setattr__(self, "options", _checked_options(self.options))


def _checked_options(options) -> "rules.FrozenOptions":
    """``BOSettings.options`` checked (registered rules, their knobs, the knobs' ranges) and
    frozen, values equal to a rule's default dropped."""
    if not isinstance(options, Mapping):
        raise ValueError(f"options must be a mapping of rule names to their knobs' values, got "
                         f"{type(options).__name__}")
    out = {}
    for name, given in options.items():
        if name not in rules.RULES:
            raise ValueError(f"options: unknown rule {name!r}{knobs.did_you_mean(name, rules.STRATEGIES)}; "
                             f"allowed: {', '.join(rules.STRATEGIES)}")
        if not isinstance(given, Mapping):
            raise ValueError(f"options[{name!r}] must be a mapping of {name}'s knobs to values, got {given!r}")
        rule = rules.RULES[name]
        checked = rule.checked_options(given)
        changed = {k: v for k, v in checked.items() if knobs.is_array(v)  # traced: kept, checked when set
                   or v != rule.options[k] or type(v) is not type(rule.options[k])}
        if changed:
            fields = rule.option_fields
            out[name] = rules.FrozenOptions(changed, traced=[k for k in changed if k in fields and fields[k].traced])
    return rules.FrozenOptions(out)


# the knobs of RuleSettings, which held rules' knobs before they moved to each rule's
# Rule.options: old name -> the option's name today
MOVED_TO_OPTIONS = {"gain": "gain", "ucb_beta": "beta", "mtbo_samples": "samples",
                    "mtbo_representers": "representers", "mtbo_fantasies": "fantasies"}


def moved_option_message(old: str, value, config: bool = False) -> str:
    """One line naming the home today of the knob ``rule.<old>`` (a ``RuleSettings``
    field before the rules' knobs moved to their options), and how to write it."""
    new = MOVED_TO_OPTIONS[old]
    owners = [name for name, rule in rules.RULES.items() if new in rule.options]
    example = owners[0] if owners else "<rule>"
    how = (f"[settings.options.{example}] {new} = {value!r}" if config
           else f"options={{{example!r}: {{{new!r}: {value!r}}}}}")
    return (f"rule.{old} is now the option {new!r} of the rules that read it ({', '.join(owners)}): write {how}, "
            f"one entry per rule")


def old_keys() -> dict:
    """``{flat name: (record, field)}``: the names the settings had before they were
    grouped into records (``fit_restarts`` -> ``("fit", "restarts")``), from the
    records' field metadata. Old configuration keys load through it (with a
    DeprecationWarning naming the new key)."""
    return {k.old: (name, k.name) for name, cls in RECORDS.items() for k in knobs.fields(cls) if k.old}


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
