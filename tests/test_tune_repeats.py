"""A cost-10 target point paid for twice in a row: the root cause and the fix.

In the tuning example (robust strategy, train_demo, a deterministic objective) the ICM fit
reached a mode where the target's own variance vanished (log_kappa[0] = -2298), the
target copied the cheap fidelity with a negative weight, and the target's noise variance
was learned as 2.4 times the standardised variance of y: every target measurement was
"noise", the model kept predicting g = 1.02 at the corner learning_rate 1e-4,
weight_decay 0.1 after measuring 0.60 there, and the next decision measured the corner
at the target again (the same score). ``[objective] deterministic = true`` holds the
noise at its floor: a measured point then pins g, and no such mode exists."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.benchmarks.examples import train_demo_accuracy
from mumbo_jax.bo import asktell, stages
from mumbo_jax.gp import marginal
from mumbo_jax.run.tune.config import make_tune_task, parse_tune_config
from tests.test_tuning import config

FRACTIONS = (1.0, 0.1)
# the example's evaluations before the repeat: (log10 learning_rate, log10 weight_decay, fidelity)
ROWS = [(-0.777109, -5.421095, 0), (-1.355614, -1.043066, 0), (-2.869914, -4.222556, 0), (-1.898972, -4.386958, 0),
        (-0.777109, -5.421095, 1), (-1.355614, -1.043066, 1), (-2.869914, -4.222556, 1), (-1.898972, -4.386958, 1),
        (-2.722211, -5.10382, 1), (-2.244893, -4.133306, 1), (-1.658553, -6.0, 1), (-3.168742, -6.0, 1),
        (-4.0, -1.0, 1), (-4.0, -1.0, 0)]
# the hyper-parameters the example's fit reached at that step
DEGENERATE = {"W": [[0.5689312942974731, 0.5689312942974731], [-0.7488939002745469, -0.7488939002745469]],
              "log_kappa": [-2297.9320694439184, -18.46292778941842],
              "log_ls": [-0.023970298949518572, 0.4712406735056888],
              "log_noise": [0.8686565067177282, -102.4543642411913]}
CORNER = np.asarray([-4.0, -1.0])


def told(deterministic: bool):
    obj = {"function": "mumbo_jax.benchmarks.examples:train_demo", "direction": "maximise",
           "deterministic": deterministic}
    cfg = parse_tune_config(config(objective=obj, settings=None))
    opt = asktell.AskTell(make_tune_task(cfg), cfg.settings(), seed=0)
    for a, b, z in ROWS:
        opt.tell([a, b], z, train_demo_accuracy(10 ** a, 10 ** b, FRACTIONS[z]))
    return opt, cfg


def corner_moments(opt, refit):
    """The model's g at the corner conditioned on the example's hyper-parameters
    (``refit`` False) or refitted from them (a warm start, as the example's next step)."""
    params = stages.as_params({k: np.asarray(v) for k, v in DEGENERATE.items()})
    post = stages.fit_stage(opt.settings, opt.task, opt.buffers(), params, jax.random.PRNGKey(0), refit)
    mu, var = marginal.target_moments(post, jnp.asarray(CORNER[None]), opt.task.target)
    return post, float(mu[0]), float(var[0])


def test_learned_noise_can_explain_the_target_away():
    opt, cfg = told(False)
    assert not cfg.deterministic and opt.task.spec.noise is None
    post, mu, var = corner_moments(opt, False)
    measured = opt.y[-1]
    assert float(post.noise[0]) > 1.0  # standardised: more than all the variance of y
    assert mu - measured > 0.3 and np.sqrt(var) < 0.01  # sure of a value 0.4 above the measurement


def test_a_deterministic_objective_pins_g_at_a_measured_point():
    opt, cfg = told(True)
    assert cfg.deterministic and opt.task.spec.noise == (0.0, 0.0)
    assert parse_tune_config(cfg.to_dict()).deterministic
    post, mu, var = corner_moments(opt, True)
    assert float(np.max(post.noise)) <= 1e-5
    assert abs(mu - opt.y[-1]) < 1e-3


def test_a_deterministic_objective_is_not_measured_twice_at_the_target():
    opt, _ = told(True)
    opt.params = stages.as_params({k: np.asarray(v) for k, v in DEGENERATE.items()})  # the example's warm start
    x, z = opt.ask()
    same = [np.allclose(x, xi, atol=1e-6) and z == zi for xi, zi in zip(opt.x, opt.z)]
    assert not any(same), (x, z)
