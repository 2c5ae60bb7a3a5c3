"""Decision rules as records (blackjax style), registered in one table.

A :class:`Rule` says what a BO strategy does, in one place:

* ``acquisition(ctx)``: the score it maximises, ``alpha(x [M, d], z [M]) -> [M]`` as a
  ``jax.tree_util.Partial`` built from a :class:`Context` (posterior, g*, key, ...);
* ``space``: over which fidelities that score is maximised, ``"all"`` or
  ``"target"`` (the target fidelity only);
* ``uses_gstar``: whether it needs samples of the max value g*;
* ``bound``: optional, a cheap upper bound of the score at every fidelity,
  ``b(x [M, d]) -> [M]``, built like ``acquisition``: from
  :data:`mumbo_jax.acquisition.maxvalue.PRUNE_FROM_ROWS` buffer rows the maximiser
  scores exactly only the candidates it cannot rule out (the same choice;
  :mod:`mumbo_jax.bo.bounds` has MUMBO's and MES's, and EI's, which the robust
  rules' target-only choice uses);
* ``second_stage``: for two-stage rules (MT-EI, MF-GP-UCB, BOCA) the function that,
  given the x of the first stage, chooses the fidelity;
* ``kinds``: the fidelity kinds it supports (``"discrete"``, ``"continuous"``);
* ``single_target``: whether g must be one fidelity (rules that evaluate the target
  itself, or whose fidelity rule compares against it);
* ``replays_history``: whether the rule adapts to its own BO evaluations (it then needs
  the initial design's size, carried explicitly by the drivers);
* ``options``: the rule's own knobs and their defaults (a read-only mapping; the
  acquisition reads them as ``ctx.options``), each a plain value or declared with
  :func:`option` (its doc, type and range: checked wherever a value is set, and listed
  by ``mumbo-jax config-help``). Every knob of a rule lives here: MUMBO's ``gain`` path,
  the UCB rules' ``beta``, MTBO's ``samples``, ``representers`` and ``fantasies``, the
  robust rules' ``share``, ``min_explained``, ``target_rule`` and ``trust``, ``mf_kg``'s
  ``n_best`` and ``n_random``. A run sets other values with
  ``BOSettings(options={"ucb": {"beta": 0.5}})`` (a config's ``[settings.options.ucb]``
  table); a variant with other defaults is another record, :meth:`Rule.with_options`,
  registered under its own name.

:data:`RULES` maps names to records; the loops, the config checks, ``compare`` and
``mumbo-jax list`` read it. :func:`register` adds a rule at run time (a file of one's
own, or a module of :mod:`mumbo_jax.rules_contrib`, which the table imports the first
time it is listed). :data:`STRATEGIES`, :data:`USES_GSTAR`, :data:`TARGET_ONLY`,
:data:`DISCRETE_ONLY` and :data:`CONTINUOUS_ONLY` are live views of the table (tuple-like:
``in``, iteration, ``len``, indexing, ``==`` with a tuple), so a registered rule appears
in every one of them and in every list built from them.

Where rules come from: the built-in rules below; any module that calls :func:`register`
when imported (the table lists rules in registration order); the modules of
:mod:`mumbo_jax.rules_contrib`; and the entry points of the group ``mumbo_jax.rules`` of
installed packages (each names a module that registers its rules on import). The last
two are imported once, the first time a name outside the table is looked up or the
table is listed, in every process (a spawned ``compare`` worker included).

Sources of the baselines are in :mod:`mumbo_jax.acquisition.baselines`.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib
import pkgutil
import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

import jax
import jax.numpy as jnp

from mumbo_jax import knobs
from mumbo_jax.acquisition import acquisitions, baselines, maxvalue
from mumbo_jax.bo import bounds, optimize
from mumbo_jax.bo.options import FrozenOptions
from mumbo_jax.bo.incumbent import N_ANCHORS, best_inputs, incumbent_by_rule
from mumbo_jax.registry import Names, Registry, check_name, frozen_options
from mumbo_jax.gp import marginal, moments, posterior

if TYPE_CHECKING:  # annotations only: settings imports this module
    from mumbo_jax.bo.settings import BOSettings, Task

__all__ = [
    "Context", "Rule", "RULES", "option", "FrozenOptions", "propose", "register", "unregister", "RuleNames", "ENTRY_POINT_GROUP", "CONTRIB_PACKAGE",
    "STRATEGIES", "USES_GSTAR", "TARGET_ONLY", "DISCRETE_ONLY", "CONTINUOUS_ONLY",
    "GAINS", "FIDELITY_GRID", "MTBO_POOL", "check_rule", "check_rule_for_task", "rule_for", "target_space",
    "mumbo_alpha", "mumbo_alpha_simpson", "mes_alpha", "random_alpha", "bo_evaluations",
    "mt_ei_fidelity", "mf_gp_ucb_fidelity", "boca_fidelity", "fidelity_choices", "costs_at",
]

GAINS = ("table", "simpson")
# grid of a continuous fidelity for the two-stage rules' fidelity choice
FIDELITY_GRID = 64
# uniform pool from which MTBO draws its representer points (in proportion to EI)
MTBO_POOL = 2000
SIMPSON_NODES = 101  # graded Simpson nodes of the direct MUMBO gain (~1e-7 from quad)


def option(default: Any, doc: str, *, type: type | None = None, **constraints) -> knobs.Field:
    """A rule's knob declared with its default, one sentence of documentation and its
    constraints (``low``, ``high``, ``low_open``, ``high_open``, ``choices``, ``cap`` as
    in :class:`mumbo_jax.knobs.Field`; ``traced=True``: a float that only enters
    arithmetic, taken by the programs as a traced number, so runs differing in it share
    them; the rule must then not call ``float()`` on it or branch on it), for :attr:`Rule.options`:
    ``Rule("ucb", ..., options={"beta": option(None, "...", type=float, low=0)})``.
    ``type`` defaults to the default's (give it for a default of None, which then
    means "unset"). Its name is the key it is given under."""
    kind = type if type is not None else builtins.type(default)
    if kind not in (bool, int, float, str):
        raise ValueError(f"option: give type= (bool, int, float or str) for the default {default!r}")
    return knobs.Field("", kind, doc, default=default, nullable=default is None, **constraints)




class Context(NamedTuple):
    """What a rule sees when it decides (inside the compiled decision): the task and the
    data, its own knobs and the maximiser's settings, not the whole
    :class:`mumbo_jax.bo.settings.BOSettings` (:meth:`from_settings` builds it from them).

    Attributes:
        task: :class:`mumbo_jax.bo.settings.Task` (model, target, fidelity space).
        post: the posterior fitted to the data so far.
        gstar: ``[N]`` samples of g* (zeros for rules without g*).
        key: PRNG key of the maximiser.
        n_design: scalar int, the number of buffer rows (the first ones) that hold the
            initial design (rules that replay their own history skip them), or None.
        cost: a learned cost ``c(x [M, d], z [M]) -> [M]`` or None (the task's known
            cost).
        options: the knobs of the rule deciding: its record's :attr:`Rule.options` with
            the run's values (``BOSettings.options``) over them (read at trace time;
            static).
        maximiser: :class:`mumbo_jax.bo.settings.MaximiserSettings`, for a rule that
            maximises a score of its own (the robust rules' target-only choice); None:
            the defaults.
    """

    task: Any
    post: posterior.Posterior
    gstar: jax.Array
    key: jax.Array
    n_design: jax.Array | None = None
    cost: Callable | None = None
    options: Mapping[str, Any] = FrozenOptions()
    maximiser: Any = None

    @classmethod
    def from_settings(cls, settings: BOSettings, task, post, gstar, key, n_design=None, cost=None) -> "Context":
        """The context of ``settings.strategy`` deciding under ``settings``: its options
        (:func:`rule_for`) and the maximiser's settings."""
        return cls(task, post, gstar, key, n_design, cost, rule_for(settings).options, settings.maximiser)


@dataclasses.dataclass(frozen=True)
class Rule:
    """One decision rule (see the module docstring for the fields).

    ``name`` is snake_case (``mf_kg``, not ``mf-kg``): the one spelling of the rule in
    settings, configs, ``compare`` labels and ``mumbo-jax list``.
    """

    name: str
    acquisition: Callable[[Context], Callable]
    space: str = "all"
    uses_gstar: bool = False
    second_stage: Callable | None = None
    bound: Callable[[Context], Callable] | None = None
    kinds: tuple = ("discrete", "continuous")
    single_target: bool = False
    replays_history: bool = False
    summary: str = ""
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict, hash=False)
    option_fields: Mapping[str, knobs.Field] = dataclasses.field(default_factory=dict, hash=False, repr=False,
                                                                 compare=False)

    def __post_init__(self):
        check_name(self.name, "rule")
        if not callable(self.acquisition):
            raise ValueError(f"rule {self.name!r}: acquisition must be callable, a function of a Context")
        options = frozen_options(self.options, "rule", self.name)
        declared = dict(self.option_fields)
        for k, v in options.items():
            if isinstance(v, knobs.Field):
                declared[k] = dataclasses.replace(v, name=k)
        unknown = sorted(set(declared) - set(options))
        if unknown:
            raise ValueError(f"rule {self.name!r}: option_fields names {unknown[0]!r}, which is not an option")
        values = {k: declared[k].default if isinstance(v, knobs.Field) else v for k, v in options.items()}
        for k, f in declared.items():
            values[k] = f.check(values[k], name=f"{self.name} option {k}")
        object.__setattr__(self, "options", FrozenOptions(values))
        object.__setattr__(self, "option_fields", types.MappingProxyType(declared))
        object.__setattr__(self, "kinds", tuple(self.kinds))
        if self.space not in ("all", "target"):
            raise ValueError(f"rule {self.name!r}: space must be 'all' or 'target', got {self.space!r}")
        if not set(self.kinds) <= {"discrete", "continuous"} or not self.kinds:
            raise ValueError(f"rule {self.name!r}: kinds must be among ('discrete', 'continuous')")

    def checked_options(self, changes: Mapping[str, Any]) -> dict:
        """``changes`` checked against the rule's knobs: ValueError for a knob it does not
        have or a value its :func:`option` declaration refuses; the values as checked."""
        unknown = sorted(set(changes) - set(self.options))
        if unknown:
            raise ValueError(f"rule {self.name!r} has no option {unknown[0]!r}"
                             f"{knobs.did_you_mean(unknown[0], self.options)}; its options: "
                             f"{', '.join(self.options) or 'none'}")
        fields = self.option_fields
        return {k: fields[k].check(v, name=f"{self.name} option {k}") if k in fields else v
                for k, v in changes.items()}

    def with_options(self, name: str | None = None, **changes) -> "Rule":
        """A copy with some knobs changed (and, to register it beside this one, a new
        ``name``); ValueError for a knob the rule does not have or a value out of range."""
        changes = self.checked_options(changes)
        return dataclasses.replace(self, name=name or self.name, options={**self.options, **changes})


# --------------------------------------------------------------------------- scores


def _mumbo_table(post, target, gstar, x, z):
    m = moments.joint_moments(post, x, z, target)
    return acquisitions.mumbo_gain(m.mu_g, m.var_g, m.mu_y, m.var_y, m.cov, gstar)


def _mumbo_simpson(post, target, gstar, x, z):
    m = moments.joint_moments(post, x, z, target)
    return acquisitions.mumbo_gain_simpson(m.mu_g, m.var_g, m.mu_y, m.var_y, m.cov, gstar, n_nodes=SIMPSON_NODES)


def _mes(post, target, gstar, x, z):
    mu, var = moments.target_moments(post, x, target)
    return acquisitions.mes_gain(mu, var, gstar)


def mumbo_alpha(post, target, gstar, x, z):
    """MUMBO's gain ``[M]`` at inputs ``x [M, d]`` and fidelities ``z [M]`` (table path).
    A stacked posterior (hyper-parameter samples, :mod:`mumbo_jax.gp.marginal`) with
    ``gstar [S, N]``: the mean of the per-sample gains."""
    return marginal.mean_over_samples(lambda p, g: _mumbo_table(p, target, g, x, z), post, gstar)


def mumbo_alpha_simpson(post, target, gstar, x, z):
    """MUMBO's gain ``[M]`` by direct vmapped Simpson quadrature (the reference path);
    averaged over the samples of a stacked posterior."""
    return marginal.mean_over_samples(lambda p, g: _mumbo_simpson(p, target, g, x, z), post, gstar)


def mes_alpha(post, target, gstar, x, z):
    """MES gain ``[M]`` of observing g itself at ``x [M, d]`` (z is ignored); averaged
    over the samples of a stacked posterior."""
    return marginal.mean_over_samples(lambda p, g: _mes(p, target, g, x, z), post, gstar)


def _mes_bound(ctx: Context):
    return jax.tree_util.Partial(bounds.mes_bound, ctx.post, ctx.task.target, ctx.gstar)


def random_alpha(key, x, z):
    """i.i.d. uniform scores: the maximiser's best random candidate is a uniform draw."""
    u = jax.random.uniform(jax.random.fold_in(key, 0), x.shape[:1])
    return u + 0.0 * jnp.sum(x, axis=-1)


def _beta(ctx: Context):
    """The UCB coefficient: the rule's option ``beta`` or, unset, Kandasamy et al.'s
    0.2 d log(2 t), t = the number of observations."""
    if ctx.options["beta"] is not None:
        return jnp.asarray(ctx.options["beta"], float)
    return baselines.ucb_beta(ctx.task.spec.dim, baselines.n_observations(ctx.post))


def _eta(ctx: Context):
    """EI's threshold: the incumbent's posterior mean of g."""
    return incumbent_by_rule(ctx.post, ctx.task.target)[1]


def _mumbo(ctx: Context):
    path = mumbo_alpha_simpson if ctx.options["gain"] == "simpson" else mumbo_alpha
    return jax.tree_util.Partial(path, ctx.post, ctx.task.target, ctx.gstar)


def _mes_rule(ctx: Context):
    return jax.tree_util.Partial(mes_alpha, ctx.post, ctx.task.target, ctx.gstar)


def _random(ctx: Context):
    return jax.tree_util.Partial(random_alpha, ctx.key)


def _ei(ctx: Context):
    return jax.tree_util.Partial(baselines.ei_alpha, ctx.post, ctx.task.target, _eta(ctx))


def _ucb(ctx: Context):
    return jax.tree_util.Partial(baselines.ucb_alpha, ctx.post, ctx.task.target, _beta(ctx))


def _mtbo(ctx: Context):
    o = ctx.options
    state = baselines.mtbo_state(jax.random.fold_in(ctx.key, 11), ctx.post, ctx.task.target, o["representers"],
                                 o["samples"], o["fantasies"], MTBO_POOL)
    return jax.tree_util.Partial(baselines.mtbo_alpha, ctx.post, ctx.task.target, state)


def _target_index(ctx: Context) -> int:
    return int(ctx.task.target_z[0])


def _mf_gp_ucb_thresholds(ctx: Context):
    return baselines.mf_gp_ucb_thresholds(ctx.post, ctx.task.space.n_fidelities, _target_index(ctx))


def _mf_gp_ucb(ctx: Context):
    zeta, _ = _mf_gp_ucb_thresholds(ctx)
    return jax.tree_util.Partial(baselines.mf_gp_ucb_alpha, ctx.post, zeta, _beta(ctx))


# --------------------------------------------------------------------------- second stages


def bo_evaluations(post: posterior.Posterior, n_design):
    """``[B]`` bool: buffer rows that are BO evaluations. Both loops fill the buffers in
    order, the ``n_design`` rows of the initial design first, so the rules that adapt to
    their own history can replay it."""
    return (jnp.arange(post.mask.shape[0]) >= n_design) & (post.mask > 0)


def fidelity_choices(task):
    """Fidelities a second stage chooses from: every discrete one, or a grid of a
    continuous one (target included)."""
    space = task.space
    if space.n_fidelities is not None:
        return space.fidelities
    lo, hi = space.bounds
    return jnp.concatenate([jnp.linspace(lo, hi, FIDELITY_GRID), jnp.asarray(task.target_z[:1], float)])


def costs_at(ctx: Context, x, zs):
    """Cost of querying ``x [d]`` at each of ``zs [G]`` (learned c(x, z) or known c(z))."""
    if ctx.cost is not None:
        return ctx.cost(jnp.broadcast_to(x, (zs.shape[0], x.shape[0])), zs)
    return ctx.task.space.cost(zs)


def _sd_at(post, x, zs):
    _, var = moments.predict(post, jnp.broadcast_to(x, (zs.shape[0], x.shape[0])), zs)
    return jnp.sqrt(var)


def mt_ei_fidelity(ctx: Context, first: optimize.Proposal) -> optimize.Proposal:
    """MT-EI (Swersky et al. 2013): at the first stage's x, the fidelity with the largest
    EI_z(x) / cost(z), EI_z over the best posterior mean of f(., z) at the evaluated x."""
    post, x = ctx.post, first.x
    zs = fidelity_choices(ctx.task)
    costs = costs_at(ctx, x, zs)
    etas = jax.vmap(lambda z: baselines.fidelity_incumbent(post, z))(zs)
    ei = baselines.fidelity_ei(post, jnp.broadcast_to(x, (zs.shape[0], x.shape[0])), zs, etas)
    i = jnp.argmax(ei / costs)
    return optimize.Proposal(x, zs[i], ei[i] / costs[i], ei[i])


def mf_gp_ucb_fidelity(ctx: Context, first: optimize.Proposal) -> optimize.Proposal:
    """MF-GP-UCB (Kandasamy et al. 2016): the cheapest fidelity whose sqrt(beta) sd at x
    exceeds its threshold gamma, the thresholds escalated by replaying the run's own
    BO evaluations (:func:`mumbo_jax.acquisition.baselines.mf_gp_ucb_gamma_exponents`)."""
    post, task, x = ctx.post, ctx.task, first.x
    target = _target_index(ctx)
    zs = fidelity_choices(task)
    costs = costs_at(ctx, x, zs)
    _, gamma = _mf_gp_ucb_thresholds(ctx)
    e = baselines.mf_gp_ucb_gamma_exponents(post.z, bo_evaluations(post, ctx.n_design),
                                            task.space.cost(task.space.fidelities), target)
    gamma = gamma * jnp.power(5.0, e)
    i = baselines.mf_gp_ucb_fidelity(_sd_at(post, x, zs), _beta(ctx), gamma, costs, target)
    return optimize.Proposal(x, i.astype(zs.dtype), first.alpha / costs[i], first.alpha)


def boca_fidelity(ctx: Context, first: optimize.Proposal) -> optimize.Proposal:
    """BOCA (Kandasamy et al. 2017): the cheapest z on a grid whose sd, information gap and
    cost pass BOCA's tests, the threshold coefficient replayed from the run's history
    (:func:`mumbo_jax.acquisition.baselines.boca_coefficient`); else the target."""
    post, task, x = ctx.post, ctx.task, first.x
    zs = fidelity_choices(task)
    costs = costs_at(ctx, x, zs)
    z0 = jnp.asarray(task.target_z[0], float)
    xi = baselines.prior_information_gap(post, x, zs, z0)
    c0 = costs_at(ctx, x, z0[None])[0]
    zt = posterior.internal_target(post, task.target)[0]
    coeff = baselines.boca_coefficient(jnp.abs(post.z - zt) < 1e-9, bo_evaluations(post, ctx.n_design))
    z = baselines.boca_fidelity(zs, _sd_at(post, x, zs), xi, costs, c0, _beta(ctx), baselines.data_range(post),
                                baselines.boca_exponent(task.spec.dim), z0, coeff)
    i = jnp.argmin(jnp.abs(zs - z))
    return optimize.Proposal(x, z, first.alpha / costs[i], first.alpha)


# --------------------------------------------------------------------------- the table

# the knobs of the built-in rules (the defaults and checks of the RuleSettings of before)
GAIN = {"gain": option("table", "MUMBO's gain path: table (a bicubic table filled by Simpson's rule, the fast "
                       "default) or simpson (direct vmapped Simpson quadrature, the reference).", choices=GAINS)}
BETA = {"beta": option(None, "UCB's beta: the score is mu + sqrt(beta) sd (beta multiplies the variance, not the "
                       "sd); unset: Kandasamy et al.'s 0.2 d log(2 t), t = observations so far.", type=float, low=0,
                       traced=True)}
MTBO = {"samples": option(50, "Monte Carlo samples of g at the representer points (the paper's MTBO-N).", low=1,
                          cap=100_000),
        "representers": option(50, f"Representer points, drawn in proportion to EI from a uniform pool of "
                               f"{MTBO_POOL}.", low=1, high=MTBO_POOL),
        "fantasies": option(5, "Gauss-Hermite nodes over the fantasised observation.", low=1, cap=1_000)}

_BUILTIN = (
    Rule("mumbo", _mumbo, "all", uses_gstar=True, options=GAIN, bound=_mes_bound,
         summary="MUMBO's information gain about g* per unit cost, over X x Z"),
    Rule("mes", _mes_rule, "target", uses_gstar=True, single_target=True, bound=_mes_bound,
         summary="max-value entropy search at the target fidelity"),
    Rule("random", _random, "target", single_target=True, summary="uniform x at the target fidelity"),
    Rule("ei", _ei, "target", single_target=True, summary="expected improvement of g at the target"),
    Rule("ucb", _ucb, "target", single_target=True, options=BETA, summary="GP-UCB of g at the target"),
    Rule("mt_ei", _ei, "target", second_stage=mt_ei_fidelity,
         summary="Swersky et al.: x by EI of g, then the fidelity with the largest EI_z(x) per unit cost"),
    Rule("mf_gp_ucb", _mf_gp_ucb, "target", second_stage=mf_gp_ucb_fidelity, kinds=("discrete",),
         single_target=True, replays_history=True, options=BETA, summary="Kandasamy et al. (2016): discrete fidelities"),
    Rule("boca", _ucb, "target", second_stage=boca_fidelity, kinds=("continuous",), single_target=True,
         replays_history=True, options=BETA, summary="Kandasamy et al. (2017): a continuous fidelity"),
    Rule("mtbo", _mtbo, "all", options=MTBO,
         summary="entropy search over the optimum's location per unit cost, over X x Z"),
)

ENTRY_POINT_GROUP = "mumbo_jax.rules"  # installed packages register rules through this group
CONTRIB_PACKAGE = "mumbo_jax.rules_contrib"


class _Registry(Registry):
    """name -> :class:`Rule`, in registration order (:class:`mumbo_jax.registry.Registry`).
    The built-in rules are there from the start; the contributed and plug-in rules are
    imported the first time a name outside the table is looked up or the table is listed
    (module docstring)."""

    def __init__(self, rules):
        self._contrib_loaded = False
        super().__init__("rule", Rule, rules, entry_point_group=ENTRY_POINT_GROUP)

    def _load(self):
        if not self._contrib_loaded:
            self._contrib_loaded = True  # before importing: the modules register through this table
            package = importlib.import_module(CONTRIB_PACKAGE)
            for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
                if not info.name.startswith("_"):
                    importlib.import_module(f"{CONTRIB_PACKAGE}.{info.name}")
        super()._load()

    def __repr__(self) -> str:
        return f"RULES({', '.join(self)})"


RULES: Mapping[str, Rule] = _Registry(_BUILTIN)


def register(rule: Rule) -> Rule:
    """Add ``rule`` to :data:`RULES` under ``rule.name`` and return it.

    Every derived view (:data:`STRATEGIES`, ...), the config schema's choices, the
    compare presets and ``mumbo-jax list`` see it at once. Registering the same record
    again is a no-op (a module imported twice); another record under a taken name is a
    ValueError (:meth:`Rule.with_options` with ``name=...`` makes a variant): a name means
    one rule for the life of the process (compiled programs are cached by the settings,
    which name the rule).
    """
    return RULES.register(rule)


def unregister(name: str) -> Rule:
    """Remove a registered rule (not a built-in one) and return it; KeyError if absent.
    For tests and notebooks; a program compiled for it stays in JAX's cache, so do not
    register a different rule under the same name afterwards."""
    return RULES.unregister(name)


class RuleNames(Names):
    """The names of the registered rules that satisfy ``predicate(rule)``, in table
    order, recomputed at every use (a live view of :data:`RULES`; behaves as a tuple of
    str)."""

    def __init__(self, predicate: Callable[[Rule], bool], doc: str = ""):
        super().__init__(RULES, predicate, doc)


STRATEGIES = RuleNames(lambda r: True, "every rule's name")
USES_GSTAR = RuleNames(lambda r: r.uses_gstar, "rules that need samples of g*")
TARGET_ONLY = RuleNames(lambda r: r.space == "target" and r.second_stage is None,
                        "rules that only ever query the target fidelity")
DISCRETE_ONLY = RuleNames(lambda r: tuple(r.kinds) == ("discrete",), "rules for discrete fidelities only")
CONTINUOUS_ONLY = RuleNames(lambda r: tuple(r.kinds) == ("continuous",), "rules for a continuous fidelity only")


def check_rule(name: str, discrete: bool) -> Rule:
    """The record of strategy ``name``; ValueError (one line) if it does not exist or
    does not support the problem's kind of fidelity."""
    if name not in RULES:
        raise ValueError(f"unknown strategy {name!r}; allowed: {', '.join(STRATEGIES)}")
    rule = RULES[name]
    kind = "discrete" if discrete else "continuous"
    if kind not in rule.kinds:
        need = "discrete fidelities" if rule.kinds == ("discrete",) else "a continuous fidelity"
        has = "discrete fidelities" if discrete else "a continuous fidelity"
        raise ValueError(f"strategy {name!r} needs {need}; problem has {has}")
    return rule


def check_rule_for_task(name: str, task) -> Rule:
    """:func:`check_rule` for a :class:`mumbo_jax.bo.settings.Task`, plus the target: a
    rule with ``single_target`` needs g to be one fidelity (not FASTCV's mean)."""
    rule = check_rule(name, task.spec.discrete)
    if rule.single_target and len(task.target_z) != 1:
        raise ValueError(f"strategy {name!r} needs the target to be one fidelity: it evaluates the target, or "
                         f"tests the cheap data against the target's own observations, and this target combines "
                         f"{len(task.target_z)} and is never observed itself (use 'mumbo', 'mt_ei' or 'mtbo')")
    return rule


def rule_for(settings) -> Rule:
    """The record of ``settings.strategy`` with the run's values of its knobs
    (``settings.options[strategy]``) over its defaults."""
    rule = RULES[settings.strategy]
    given = settings.options.get(settings.strategy)
    return rule if not given else dataclasses.replace(rule, options={**rule.options, **given})


def target_space(task) -> optimize.FidelitySpace:
    """The task's fidelity space restricted to its target fidelity (the first one of a
    combined target: the two-stage rules' first stage ignores z)."""
    return optimize.restrict(task.space, task.target_z[0])


# --------------------------------------------------------------------------- the proposal


def _per_unit_cost(acq, cost, x, z):
    """alpha(x, z) / c(x, z) for a cost that depends on x as well (a learned cost)."""
    return acq(x, z) / cost(x, z)


def _unit_cost(z):
    return jnp.ones(jnp.shape(z))

def propose(settings: BOSettings, task: Task, post: posterior.Posterior, gstar, key, cost=None,
            n_design=None) -> optimize.Proposal:
    """The next evaluation under ``settings.strategy``: the rule's score maximised over
    its space per unit cost.

    Reads the rule's record in :data:`mumbo_jax.bo.rules.RULES`, builds its acquisition,
    maximises it over X x (all fidelities or the target) with
    :func:`mumbo_jax.bo.optimize.maximise` and hands the result to the rule's second
    stage if it has one. Traceable; :func:`mumbo_jax.bo.stages.maximise_stage` is its
    compiled form.

    Args:
        settings: :class:`mumbo_jax.bo.settings.BOSettings` (static).
        task: :class:`mumbo_jax.bo.settings.Task`.
        post: the posterior fitted to the data so far.
        gstar: ``[N]`` samples of g* (ignored by rules without g*).
        key: PRNG key of the maximiser.
        cost: optional learned cost ``c(x [M, d], z [M]) -> [M]`` (a
            ``jax.tree_util.Partial``, e.g. :func:`mumbo_jax.gp.costmodel.cost_function`):
            the maximiser then scores ``alpha(x, z) / c(x, z)`` instead of dividing by
            the task's known ``cost(z)``. ``None`` keeps the known cost.
        n_design: scalar int, the number of initial-design rows at the start of the
            posterior's buffers. Rules with ``replays_history`` (MF-GP-UCB, BOCA) replay
            the BO evaluations after them and need it; the others ignore it.

    Returns:
        :class:`mumbo_jax.bo.optimize.Proposal`.
    """
    check_rule_for_task(settings.strategy, task)
    rule = rule_for(settings)
    if rule.replays_history and n_design is None:
        raise ValueError(f"strategy {rule.name!r} replays its own BO evaluations: pass n_design, the number of "
                         "initial-design rows in the posterior's data")
    ctx = Context(task, post, gstar, key, n_design, cost, rule.options, settings.maximiser)
    acq = rule.acquisition(ctx)
    space = target_space(task) if rule.space == "target" else task.space
    if cost is not None and rule.second_stage is None:
        acq = jax.tree_util.Partial(_per_unit_cost, acq, cost)
        space = optimize.FidelitySpace(space.n_fidelities, space.bounds, jax.tree_util.Partial(_unit_cost),
                                       space.choices)
    anchors = best_inputs(post, task.target, N_ANCHORS) if settings.maximiser.local_frac > 0 else None
    # below PRUNE_FROM_ROWS rows, or with a learned cost, every candidate is scored
    prune = rule.bound is not None and cost is None and post.x.shape[-2] >= maxvalue.PRUNE_FROM_ROWS
    bound = rule.bound(ctx) if prune else None
    first = optimize.maximise_with(settings.maximiser, key, acq, jnp.asarray(task.spec.bounds), space, anchors,
                                   bound)
    return first if rule.second_stage is None else rule.second_stage(ctx, first)
