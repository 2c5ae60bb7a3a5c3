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

The top-level names load on first use (PEP 562): ``import mumbo_jax`` alone starts
nothing heavy (the command line checks a run folder's lock before JAX starts), and the
first name used imports them all, with the registrations they make (the robust rules).
"""

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# home module of each top-level name
_HOMES = {
    "mumbo_jax.acquisition.acquisitions": ("cost_weighted", "mes_gain", "mumbo_gain"),
    "mumbo_jax.acquisition.fantasy": ("kriging_believer_batch", "kriging_believer_gain", "pending_moments"),
    "mumbo_jax.acquisition.gibbon": ("gibbon_batch", "gibbon_batch_gain", "gibbon_quality"),
    "mumbo_jax.acquisition.maxvalue": ("exact_max_samples", "gumbel_max_samples", "sample_gstar"),
    "mumbo_jax.bo.asktell": ("AskTell",),
    "mumbo_jax.bo.compiled": ("Benchmark", "History", "run_compiled"),
    "mumbo_jax.bo.optimize": ("FidelitySpace", "Proposal", "continuous_fidelity", "discrete_fidelities", "maximise"),
    "mumbo_jax.bo.rules": ("RULES", "Rule", "check_rule", "register"),
    "mumbo_jax.bo.settings": ("BatchSettings", "BOSettings", "FitSettings", "GstarSettings", "MaximiserSettings",
                              "MCMCSettings", "RecommendationSettings", "RuleSettings", "Task", "make_task"),
    "mumbo_jax.bo.timing": ("StepClock",),
    "mumbo_jax.gp.fitting": ("fit", "fit_params", "neg_log_marginal"),
    "mumbo_jax.gp.models": ("ModelSpec", "ar1_model", "basis_model", "default_params", "fabolas_model",
                            "icm_disc_model", "icm_model", "product_model"),
    "mumbo_jax.gp.precision": ("PrecisionError", "require_x64"),
    "mumbo_jax.gp.posterior": ("Moments", "Posterior", "Target", "condition", "joint_moments",
                               "joint_moments_fidelities", "predict", "target_fidelity", "target_joint",
                               "target_moments", "target_value", "task_mean"),
}
_LAZY = frozenset(n for names in _HOMES.values() for n in names)


def __getattr__(name):
    if name in _LAZY:
        for module, names in _HOMES.items():  # all at once, in this order (as eager imports would)
            home = importlib.import_module(module)
            globals().update((n, getattr(home, n)) for n in names)
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _LAZY)


if TYPE_CHECKING:  # the same names, for type checkers and editors
    from mumbo_jax.acquisition.acquisitions import cost_weighted, mes_gain, mumbo_gain
    from mumbo_jax.acquisition.fantasy import kriging_believer_batch, kriging_believer_gain, pending_moments
    from mumbo_jax.acquisition.gibbon import gibbon_batch, gibbon_batch_gain, gibbon_quality
    from mumbo_jax.acquisition.maxvalue import exact_max_samples, gumbel_max_samples, sample_gstar
    from mumbo_jax.bo.asktell import AskTell
    from mumbo_jax.bo.compiled import Benchmark, History, run_compiled
    from mumbo_jax.bo.optimize import FidelitySpace, Proposal, continuous_fidelity, discrete_fidelities, maximise
    from mumbo_jax.bo.rules import RULES, Rule, check_rule, register
    from mumbo_jax.bo.settings import (BatchSettings, BOSettings, FitSettings, GstarSettings, MaximiserSettings,
                                       MCMCSettings, RecommendationSettings, RuleSettings, Task, make_task)
    from mumbo_jax.bo.timing import StepClock
    from mumbo_jax.gp.fitting import fit, fit_params, neg_log_marginal
    from mumbo_jax.gp.models import (
        ModelSpec,
        ar1_model,
        basis_model,
        default_params,
        fabolas_model,
        icm_disc_model,
        icm_model,
        product_model,
    )
    from mumbo_jax.gp.precision import PrecisionError, require_x64
    from mumbo_jax.gp.posterior import (
        Moments,
        Posterior,
        Target,
        condition,
        joint_moments,
        joint_moments_fidelities,
        predict,
        target_fidelity,
        target_joint,
        target_moments,
        target_value,
        task_mean,
    )

__all__ = [
    # gp
    "ModelSpec", "icm_model", "icm_disc_model", "ar1_model", "product_model", "fabolas_model", "basis_model",
    "default_params", "PrecisionError", "require_x64",
    "fit", "fit_params", "neg_log_marginal",
    "Posterior", "Moments", "Target", "condition", "predict", "joint_moments", "joint_moments_fidelities",
    "target_moments", "target_joint", "target_fidelity", "target_value", "task_mean",
    # acquisition
    "sample_gstar", "gumbel_max_samples", "exact_max_samples", "mumbo_gain", "mes_gain", "cost_weighted",
    "gibbon_batch", "gibbon_batch_gain", "gibbon_quality", "kriging_believer_batch", "kriging_believer_gain",
    "pending_moments",
    # bo
    "FidelitySpace", "Proposal", "discrete_fidelities", "continuous_fidelity", "maximise",
    "Task", "make_task", "BOSettings", "RuleSettings", "GstarSettings", "MaximiserSettings", "FitSettings",
    "RecommendationSettings", "BatchSettings", "MCMCSettings", "AskTell", "run_compiled", "Benchmark", "History",
    "StepClock",
    "Rule", "RULES", "check_rule", "register",
    "__version__",
]
