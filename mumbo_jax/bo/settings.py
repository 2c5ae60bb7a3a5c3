"""What a BO run is: the decision rule's settings and the task it optimises.

:class:`BOSettings` (static, hashable: one compiled program per settings) holds the
strategy's name and a few small records, grouped as a user thinks of them: ``rule``
(:class:`RuleSettings`, knobs of single rules), ``gstar`` (:class:`GstarSettings`, the
samples of g*), ``maximiser`` (:class:`mumbo_jax.bo.optimize.MaximiserSettings`), ``fit``
(:class:`mumbo_jax.gp.fit_settings.FitSettings`), ``recommendation``
(:class:`RecommendationSettings`), ``batch`` (:class:`BatchSettings`), ``mcmc``
(:class:`mumbo_jax.gp.fit_settings.MCMCSettings`) and ``approx``
(:class:`ApproxSettings`).

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

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax import knobs
from mumbo_jax.acquisition import maxvalue
from mumbo_jax.bo import batch, optimize, robust, rules  # noqa: F401 (robust registers the robust rules)
from mumbo_jax.bo.incumbent import INCUMBENT_RULES
from mumbo_jax.bo.optimize import MaximiserSettings
from mumbo_jax.gp import models, posterior
from mumbo_jax.gp.fit_settings import FitSettings, MCMCSettings
from mumbo_jax.knobs import knob

__all__ = ["BOSettings", "RuleSettings", "GstarSettings", "MaximiserSettings", "FitSettings",
           "RecommendationSettings", "BatchSettings", "MCMCSettings", "ApproxSettings", "RECORDS", "Task", "make_task", "old_keys"]


@dataclasses.dataclass(frozen=True)
class RuleSettings:
    """Knobs of single rules (each is read by the rules it names only)."""

    gain: str | None = knob(None, "MUMBO's gain path: table (the fast default) or simpson (direct vmapped Simpson "
                            "quadrature, the reference); unset: the rule's own default. Rules with a gain path "
                            "only (mumbo).", choices=lambda: rules.GAINS, old="gain")
    ucb_beta: float | None = knob(None, "beta of ucb, mf_gp_ucb and boca, which score mu + sqrt(beta) sd "
                                  "(beta multiplies the variance, not the sd); unset: Kandasamy et al.'s "
                                  "0.2 d log(2 t), t = observations so far.", low=0, old="ucb_beta")
    mtbo_samples: int = knob(50, "mtbo: Monte Carlo samples of g at the representer points (the paper's MTBO-N).",
                             low=1, cap=100_000, old="mtbo_samples")
    mtbo_representers: int = knob(50, "mtbo: representer points (drawn in proportion to EI from a uniform pool "
                                  "of MTBO_POOL).", low=1, high=rules.MTBO_POOL, old="mtbo_representers")
    mtbo_fantasies: int = knob(5, "mtbo: Gauss-Hermite nodes over the fantasised observation.", low=1, cap=1_000,
                               old="mtbo_fantasies")

    def __post_init__(self):
        knobs.check(self, "rule.")


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


@dataclasses.dataclass(frozen=True)
class RecommendationSettings:
    """Which x is recommended, and the interval reported there (mumbo_jax.bo.incumbent)."""

    rule: str = knob("robust", "robust (the default: global's maximiser where, under the model that predicts the "
                     "target's own observations better and under the target-only model, its lower bound beats "
                     "the best point measured at the target, else that point), global (the maximiser of the "
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
RECORDS = {"rule": RuleSettings, "gstar": GstarSettings, "maximiser": MaximiserSettings, "fit": FitSettings,
           "recommendation": RecommendationSettings, "batch": BatchSettings, "mcmc": MCMCSettings,
           "approx": ApproxSettings}


def _record(name):
    return dataclasses.field(default_factory=RECORDS[name])


@dataclasses.dataclass(frozen=True)
class BOSettings:
    """Static settings of the decision rule: the strategy and one record per concern.

    Attributes:
        strategy: a name in :data:`mumbo_jax.bo.rules.RULES`: ``"robust"`` (the
            default: MUMBO behind a target-only EI sequence, cheap queries only where the
            target's own observations say they pay; :mod:`mumbo_jax.bo.robust`; chosen on
            problems held out from its design, docs/RESULTS.md, "A robust default"),
            ``"mumbo"`` (the paper's multi-fidelity rule, unguarded), ``"mes"``,
            ``"random"``, a baseline of :mod:`mumbo_jax.acquisition.baselines` (``"ei"``,
            ``"ucb"``, ``"mt_ei"``, ``"mf_gp_ucb"``, ``"boca"``, ``"mtbo"``) or another
            registered rule (``robust_mt_ei``, ``mf_kg``, ...).
        rule: :class:`RuleSettings`, knobs of single rules (gain path, UCB's beta, MTBO).
        gstar: :class:`GstarSettings`, the samples of g*.
        maximiser: :class:`mumbo_jax.bo.optimize.MaximiserSettings`.
        fit: :class:`mumbo_jax.gp.fit_settings.FitSettings`, the fit and refit schedule.
        recommendation: :class:`RecommendationSettings`.
        batch: :class:`BatchSettings`.
        mcmc: :class:`mumbo_jax.gp.fit_settings.MCMCSettings`.
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
    rule: RuleSettings = _record("rule")
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
        if self.rule.gain is not None and rule.gain is None:
            raise ValueError(f"strategy {self.strategy!r} has no gain path; rule.gain applies to 'mumbo' only")


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
