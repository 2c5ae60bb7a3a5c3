"""Settings records are pytrees: their structure (counts, choices, switches) is the static
key of the compiled programs, their ``traced`` numbers are traced arguments.

Two settings that differ only in a number share the decision program; a change of
structure compiles a new one (JAX's compile log counts the programs).
``experiments/performance/bench_traced_settings.py`` counts a sweep's programs before
and after (docs/performance.md, Compilation)."""

import contextlib
import logging
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax import knobs
from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo import optimize, rules, stages
from mumbo_jax.gp import moments
from mumbo_jax.bo.settings import RECORDS, BOSettings, FitSettings, MaximiserSettings
from tests.bo_helpers import FAST, with_

# the numbers the programs take as traced arguments; every other field is structure
TRACED = {"maximiser": ("learning_rate",), "fit": ("warm_ftol", "refit_growth")}


class _Compiles(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.names = []

    def emit(self, record):
        match = re.search(r"Finished XLA compilation of (?:jit\()?([\w<>]+)", record.getMessage())
        if match:
            self.names.append(match.group(1))


@contextlib.contextmanager
def compiles():
    """The names of the programs XLA compiles inside the block."""
    handler, logger = _Compiles(), logging.getLogger("jax")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        with jax.log_compiles(True):
            yield handler.names
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_records_declare_their_traced_numbers():
    for name, cls in RECORDS.items():
        assert knobs.traced_fields(cls) == TRACED.get(name, ()), name
        for k in knobs.fields(cls):
            assert not k.traced or k.type is float and not k.nullable, f"{name}.{k.name}: only plain floats are traced"
    leaves, tree = jax.tree_util.tree_flatten(BOSettings(maximiser={"learning_rate": 0.05}, fit={"warm_ftol": 0.0}))
    assert leaves == [0.05, 0.0, FitSettings().refit_growth]
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(BOSettings())[0]]
    assert paths == [".maximiser.learning_rate", ".fit.warm_ftol", ".fit.refit_growth"]
    # the structure alone keys the programs: another number, the same tree
    assert jax.tree_util.tree_structure(BOSettings(maximiser={"learning_rate": 0.1})) == tree
    assert jax.tree_util.tree_structure(BOSettings(maximiser={"n_starts": 4})) != tree
    assert jax.tree_util.tree_unflatten(tree, leaves) == BOSettings(maximiser={"learning_rate": 0.05},
                                                                     fit={"warm_ftol": 0.0})


def test_a_record_of_tracers_is_not_rechecked():
    seen = []

    @jax.jit
    def f(settings):
        seen.append(type(settings.maximiser.learning_rate))
        # a copy with another structural field inside the program: the traced number is kept as it is
        other = settings.replace(maximiser={"n_starts": 3})
        return other.maximiser.learning_rate * 2

    assert float(f(BOSettings(maximiser={"learning_rate": 0.05}))) == pytest.approx(0.1)
    assert seen and issubclass(seen[0], jax.core.Tracer)
    # the checks still run on numbers, and an integer for a float field becomes a float
    with pytest.raises(ValueError, match="maximiser.learning_rate must be > 0"):
        MaximiserSettings(learning_rate=0.0)
    with pytest.raises(ValueError, match="fit.warm_ftol must be a number"):
        FitSettings(warm_ftol="small")
    assert type(MaximiserSettings(learning_rate=1).learning_rate) is float
    assert type(MaximiserSettings(learning_rate=np.float64(0.5)).learning_rate) is float


@pytest.fixture(scope="module")
def decision():
    """Currin after its initial design, fitted, with g* drawn: (task, post, gstar, keys, n_design)."""
    prob = problems.get_problem("currin")
    task = tasks.problem_task(prob)
    x0, z0 = stages.initial_design(task, jax.random.PRNGKey(0))
    y0 = jax.vmap(lambda x, z: problems.objective(prob, x, z))(x0, z0.astype(jnp.int32))
    state = stages.init(task, np.asarray(x0), np.asarray(z0), np.asarray(y0))
    keys = stages.step_keys(jax.random.PRNGKey(1), 0)
    post = stages.fit_stage(FAST, task, state.buffers, state.params, keys[0])
    gstar = stages.gstar_stage(FAST, task, post, keys[1])
    return task, post, gstar, keys[2], state.n_design


def test_a_numeric_knob_shares_the_decision_program_and_structure_compiles_anew(decision):
    task, post, gstar, key, n_design = decision
    # no candidates on the box's faces (a corner, where the projected polish cannot move, won on Currin)
    base = with_(FAST, maximiser={"boundary_frac": 0.0})
    with compiles() as names:
        for rate in (0.01, 0.02, 0.05, 0.1, 0.3):  # five learning rates, a fit tolerance, the g* grid
            s = with_(base, maximiser={"learning_rate": rate}, fit={"warm_ftol": rate / 10}, gstar={"grid": 400})
            stages.maximise_stage(s, task, post, gstar, key, None, n_design)
    assert names.count("_maximise") <= 1, names  # once (none where an earlier test compiled it)
    with compiles() as names:
        stages.maximise_stage(with_(base, maximiser={"polish_steps": 3}), task, post, gstar, key, None, n_design)
    assert names.count("_maximise") == 1, names



def test_the_traced_learning_rate_is_the_polish_step():
    """Inside one program the record's learning rate is a tracer, and the polish reads it:
    on a quadratic peaked inside the box, five rates give five points, one compilation."""
    space = optimize.discrete_fidelities([1.0])
    bounds = jnp.asarray([[0.0, 1.0], [0.0, 1.0]])
    acq = jax.tree_util.Partial(lambda x, z: -jnp.sum((x - 0.37) ** 2, axis=-1))

    @jax.jit
    def best(m, b):
        return optimize.maximise_with(m, jax.random.PRNGKey(0), acq, b, space).x

    small = MaximiserSettings(n_candidates=16, n_starts=2, polish_steps=3, boundary_frac=0.0, local_frac=0.0)
    with compiles() as names:
        xs = [np.asarray(best(knobs.replace(small, learning_rate=r), bounds)) for r in (0.001, 0.003, 0.01, 0.03, 0.1)]
    assert names.count("best") == 1, names
    assert len({tuple(np.round(x, 12)) for x in xs}) == 5


def test_a_rules_float_option_is_traced_and_shares_the_program(decision):
    """The rules' options declared traced (UCB's beta, the robust guard's share) are leaves
    of the settings: five values compile the maximisation once and change the decision; a
    structural option (MUMBO's gain) is the static key, and so is a float option a rule
    did not declare traced (the toy rule's scale, which it passes through float())."""
    task, post, gstar, key, n_design = decision
    base = with_(FAST, maximiser={"boundary_frac": 0.0}, strategy="ucb")
    leaves = jax.tree_util.tree_leaves(with_(base, options={"ucb": {"beta": 0.5}}))
    assert 0.5 in [float(v) for v in leaves if np.ndim(v) == 0]
    with compiles() as names:
        xs = [np.asarray(stages.maximise_stage(with_(base, options={"ucb": {"beta": b}}), task, post, gstar, key,
                                               None, n_design).x) for b in (0.05, 0.2, 1.0, 4.0, 16.0)]
    assert names.count("_maximise") <= 1, names
    assert len({tuple(np.round(x, 9)) for x in xs}) > 1  # the traced beta reaches the score
    robust = with_(FAST, strategy="robust")
    with compiles() as names:
        for share in (0.1, 0.2, 0.3, 0.4, 0.6):
            stages.maximise_stage(with_(robust, options={"robust": {"share": share}}), task, post, gstar, key, None,
                                  n_design)
    assert names.count("_maximise") <= 1, names
    with compiles() as names:
        stages.maximise_stage(with_(FAST, strategy="mumbo", options={"mumbo": {"gain": "simpson"}}), task, post,
                              gstar, key, None, n_design)
    assert names.count("_maximise") == 1, names
    toy = rules.Rule("toy_scale", lambda ctx: jax.tree_util.Partial(_scaled_ei, ctx.post, ctx.task.target,
                                                                      float(ctx.options["scale"])),
                     space="target", single_target=True, options={"scale": rules.option(1.0, "A factor.", low=0)})
    rules.register(toy)
    try:
        settings = with_(FAST, strategy="toy_scale", maximiser={"boundary_frac": 0.0})
        assert not [v for v in jax.tree_util.tree_leaves(with_(settings, options={"toy_scale": {"scale": 2.0}}))
                    if np.ndim(v) == 0 and float(v) == 2.0]
        stages.maximise_stage(with_(settings, options={"toy_scale": {"scale": 2.0}}), task, post, gstar, key, None,
                              n_design)
    finally:
        rules.unregister("toy_scale")


def _scaled_ei(post, target, scale, x, z):
    from mumbo_jax.acquisition import baselines
    return scale * baselines.ei_alpha(post, target, moments.incumbent(post, target)[1], x, z)
