"""mumbo-jax: multi-fidelity and multi-task Bayesian optimisation with MUMBO.

Four layers, imports pointing down only:

* :mod:`mumbo_jax.gp`: kernels, model specs, hyper-parameter fits, posteriors and the
  joint moments of (g, y);
* :mod:`mumbo_jax.acquisition`: max-value samples g*, MUMBO/MES gains, the baselines;
* :mod:`mumbo_jax.bo`: the maximiser over X x Z, decision rules, ask/tell and the
  compiled loop;
* :mod:`mumbo_jax.benchmarks` (problems, real tuning tasks) and :mod:`mumbo_jax.run`
  (configs, CLI, compare, crash-safe tuning) on top.

Every numerical piece is a pure function over pytrees that jit-compiles and vmaps. The
numerical core needs float64: call ``jax.config.update("jax_enable_x64", True)`` before
using the library (the CLI does it for you).

The extension surface is here too: a decision rule (:class:`Rule`, its :class:`Context`,
:func:`mean_over_samples` over hyper-parameter samples, :func:`register_rule`), a batch
rule (:func:`register_batch_rule`), a recommendation rule
(:func:`register_recommendation_rule`), a model (:class:`DiscreteModel` /
:class:`ContinuousModel`, :func:`register_model`) and a benchmark problem
(:func:`discrete_problem` / :func:`continuous_problem`, :func:`register_problem`); each is
then a name that configurations, ``mumbo-jax run`` and ask/tell accept (docs/howto/). The
runtime machinery (compile options, caches, prefetching, timing) is not exported here.

The top-level names load on first use (PEP 562): ``import mumbo_jax`` alone starts
nothing heavy (the command line checks a run folder's lock before JAX starts), and the
first name used imports them all, with the registrations they make (the robust rules).
"""

import importlib
import warnings
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# home module of each top-level name; ("public", "attribute") where the two differ
_HOMES = {
    "mumbo_jax.acquisition.acquisitions": ("cost_weighted", "mes_gain", "mumbo_gain"),
    "mumbo_jax.acquisition.fantasy": ("kriging_believer_batch", "kriging_believer_gain", "pending_moments"),
    "mumbo_jax.acquisition.gibbon": ("gibbon_batch", "gibbon_batch_gain", "gibbon_quality"),
    "mumbo_jax.acquisition.maxvalue": ("exact_max_samples", "gumbel_max_samples", "sample_gstar"),
    "mumbo_jax.bo.asktell": ("AskTell",),
    "mumbo_jax.bo.compiled": ("Benchmark", "History", "run_compiled"),
    "mumbo_jax.bo.optimize": ("FidelitySpace", "Proposal", "continuous_fidelity", "discrete_fidelities", "maximise"),
    "mumbo_jax.bo.rules": ("RULES", "Rule", "Context", "check_rule", ("register_rule", "register"),
                           ("rule_option", "option")),
    "mumbo_jax.bo.batch": ("BatchRule", "BatchContext", ("register_batch_rule", "register")),
    "mumbo_jax.bo.incumbent": ("IncumbentRule", ("register_recommendation_rule", "register")),
    "mumbo_jax.bo.settings": ("BatchSettings", "BOSettings", "FitSettings", "GstarSettings", "MaximiserSettings",
                              "MCMCSettings", "RecommendationSettings", "Task", "make_task"),
    "mumbo_jax.gp.fitting": ("fit", "fit_params", "neg_log_marginal"),
    "mumbo_jax.gp.marginal": ("mean_over_samples",),
    "mumbo_jax.gp.models": ("MODELS", "ModelSpec", "DiscreteModel", "ContinuousModel", ("register_model", "register"),
                            "ar1_model", "basis_model", "default_params", "fabolas_model", "icm_disc_model",
                            "icm_model", "product_model"),
    "mumbo_jax.gp.precision": ("PrecisionError", "require_x64"),
    "mumbo_jax.gp.posterior": ("Posterior", "Target", "condition", "target_fidelity", "target_value", "task_mean"),
    "mumbo_jax.gp.moments": ("Moments", "joint_moments", "joint_moments_fidelities", "predict", "target_joint",
                             "target_moments"),
    "mumbo_jax.benchmarks.problems": ("Problem", "continuous_problem", "discrete_problem",
                                      ("register_problem", "register")),
}
_LAZY = frozenset(n[0] if isinstance(n, tuple) else n for names in _HOMES.values() for n in names)
# old top-level names: they still work, with a DeprecationWarning naming the new one
_RENAMED = {"register": "register_rule"}
# names that are gone: the error says where their content lives now
_REMOVED = {"RuleSettings": "rules' knobs are each rule's Rule.options; a run sets them with "
                            "BOSettings(options={rule name: {knob: value}}) ([settings.options.<rule>] in a config)"}


def __getattr__(name):
    if name in _LAZY:
        for module, names in _HOMES.items():  # all at once, in this order (as eager imports would)
            home = importlib.import_module(module)
            for n in names:
                public, attr = n if isinstance(n, tuple) else (n, n)
                globals()[public] = getattr(home, attr)
        return globals()[name]
    if name in _RENAMED:
        new = _RENAMED[name]
        warnings.warn(f"mumbo_jax.{name} is renamed mumbo_jax.{new} (beside register_batch_rule, "
                      "register_recommendation_rule, register_problem and register_model); the old name will be "
                      "removed", DeprecationWarning, stacklevel=2)
        return __getattr__(new)
    if name in _REMOVED:
        raise AttributeError(f"mumbo_jax.{name} is gone: {_REMOVED[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _LAZY)


if TYPE_CHECKING:  # the same names, for type checkers and editors
    from mumbo_jax.acquisition.acquisitions import cost_weighted, mes_gain, mumbo_gain
    from mumbo_jax.acquisition.fantasy import kriging_believer_batch, kriging_believer_gain, pending_moments
    from mumbo_jax.acquisition.gibbon import gibbon_batch, gibbon_batch_gain, gibbon_quality
    from mumbo_jax.acquisition.maxvalue import exact_max_samples, gumbel_max_samples, sample_gstar
    from mumbo_jax.benchmarks.problems import Problem, continuous_problem, discrete_problem
    from mumbo_jax.benchmarks.problems import register as register_problem
    from mumbo_jax.bo.asktell import AskTell
    from mumbo_jax.bo.batch import BatchContext, BatchRule
    from mumbo_jax.bo.batch import register as register_batch_rule
    from mumbo_jax.bo.compiled import Benchmark, History, run_compiled
    from mumbo_jax.bo.incumbent import IncumbentRule
    from mumbo_jax.bo.incumbent import register as register_recommendation_rule
    from mumbo_jax.bo.optimize import FidelitySpace, Proposal, continuous_fidelity, discrete_fidelities, maximise
    from mumbo_jax.bo.rules import RULES, Context, Rule, check_rule
    from mumbo_jax.bo.rules import option as rule_option
    from mumbo_jax.bo.rules import register as register_rule
    from mumbo_jax.bo.settings import (BatchSettings, BOSettings, FitSettings, GstarSettings, MaximiserSettings,
                                       MCMCSettings, RecommendationSettings, Task, make_task)
    from mumbo_jax.gp.fitting import fit, fit_params, neg_log_marginal
    from mumbo_jax.gp.marginal import mean_over_samples
    from mumbo_jax.gp.models import (
        MODELS,
        ContinuousModel,
        DiscreteModel,
        ModelSpec,
        ar1_model,
        basis_model,
        default_params,
        fabolas_model,
        icm_disc_model,
        icm_model,
        product_model,
    )
    from mumbo_jax.gp.models import register as register_model
    from mumbo_jax.gp.precision import PrecisionError, require_x64
    from mumbo_jax.gp.moments import (
        Moments,
        joint_moments,
        joint_moments_fidelities,
        predict,
        target_joint,
        target_moments,
    )
    from mumbo_jax.gp.posterior import (
        Posterior,
        Target,
        condition,
        target_fidelity,
        target_value,
        task_mean,
    )

__all__ = [
    # gp
    "ModelSpec", "DiscreteModel", "ContinuousModel", "MODELS", "register_model",
    "icm_model", "icm_disc_model", "ar1_model", "product_model", "fabolas_model", "basis_model",
    "default_params", "PrecisionError", "require_x64",
    "fit", "fit_params", "neg_log_marginal",
    "Posterior", "Moments", "Target", "condition", "predict", "joint_moments", "joint_moments_fidelities",
    "target_moments", "target_joint", "target_fidelity", "target_value", "task_mean", "mean_over_samples",
    # acquisition
    "sample_gstar", "gumbel_max_samples", "exact_max_samples", "mumbo_gain", "mes_gain", "cost_weighted",
    "gibbon_batch", "gibbon_batch_gain", "gibbon_quality", "kriging_believer_batch", "kriging_believer_gain",
    "pending_moments",
    # bo
    "FidelitySpace", "Proposal", "discrete_fidelities", "continuous_fidelity", "maximise",
    "Task", "make_task", "BOSettings", "GstarSettings", "MaximiserSettings", "FitSettings",
    "RecommendationSettings", "BatchSettings", "MCMCSettings", "AskTell", "run_compiled", "Benchmark", "History",
    # extensions: decision, batch and recommendation rules (models and problems above and below)
    "Rule", "RULES", "Context", "check_rule", "register_rule", "rule_option",
    "BatchRule", "BatchContext", "register_batch_rule", "IncumbentRule", "register_recommendation_rule",
    # benchmarks
    "Problem", "discrete_problem", "continuous_problem", "register_problem",
    "__version__",
]
