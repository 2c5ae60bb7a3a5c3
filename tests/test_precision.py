"""float64 or a clear error: every numerical entry point of gp/ and acquisition/.

tests/conftest.py enables x64 for the whole suite, so the honest test of what a user
meets with JAX's default float32 runs in a fresh Python process that never enables it.
"""

import importlib
import json
import subprocess
import sys
import textwrap

import jax
import pytest

from mumbo_jax.gp import precision

MODULES = ["mumbo_jax.gp." + m for m in ("precision", "kernels", "modelbase", "models", "fitting", "posterior", "moments", "costmodel",
                                               "linalg", "marginal")] + [
    "mumbo_jax.acquisition." + m for m in ("maxvalue", "acquisitions", "baselines")] + ["mumbo_jax.runtime.draws"]

# Public names that do not check, and why: the checker itself; tinygp kernels, the
# model's, gp.linalg's and gp.fitting's dense pure algebra (the Matern Gram, the Gaussian
# density: they compute in the dtype they are given and run only inside checked entry
# points); pure-Python specs, constructors and constants; types.
EXEMPT = {
    "mumbo_jax.gp.precision": {"PrecisionError", "X64_FIX", "x64_enabled", "require_x64"},
    "mumbo_jax.gp.kernels": {"EuclideanDistance", "matern52_ard", "matern52_scalar", "ICM", "icm_matrix",
                             "ar1_coefficients", "AR1", "ContinuousProduct", "fabolas_basis", "FabolasBasis",
                             "linear_basis", "BasisKernel", "ICMDiscrepancy", "Masked", "matern52_gram", "matern52_cross"},
    "mumbo_jax.gp.modelbase": {"NOISE_FLOOR", "ModelSpec", "DiscreteModel", "ContinuousModel", "Scaling", "check_bounds",
                               "check_noise", "check_count", "lengthscale_misfit", "check_in_box", "check_data"},
    "mumbo_jax.gp.models": {"MODELS", "DiscreteModel", "ContinuousModel", "ICMModel", "ICMDiscModel", "AR1Model",
                            "ProductModel", "FabolasModel", "BasisKernelModel", "LinearBasisModel", "TaskBasisModel",
                            "KINDS", "DISCRETE_KINDS", "BASIS_KINDS", "ICM_KINDS", "DEFAULT_TARGET_FLOOR", "icm_disc_model", "icm_kappa",
                            "CONTINUOUS_KINDS", "ENTRY_POINT_GROUP", "register", "unregister", "kinds_for",
                            "default_kind", "model_options", "floor_kinds", "build_model",
                            "absorb_target_floor",
                            "discrepancy_variance", "ModelSpec", "check_bounds", "icm_model",
                            "ar1_model", "product_model", "fabolas_model", "basis_model", "basis_size", "basis_chol",
                            "default_params", "random_params", "build_kernel", "noise_variances",
                            "signal_variances", "log_prior", "Scaling", "make_scaling", "scale_inputs",
                            "check_inputs", "check_in_box", "check_data"},
    "mumbo_jax.gp.fitting": {"RESTARTS", "MAX_ITER", "WARM_STEP", "lbfgs", "restart_inits", "starts_batching", "gaussian_nll", "matern52_gram"},
    "mumbo_jax.gp.linalg": {"BASE_BLOCK", "TRI_MATMUL_BLOCK", "cholesky_symmetric", "tri_inv", "lower_gram", "tri_matmul"},
    "mumbo_jax.gp.posterior": {"Target", "target_fidelity", "target_value", "task_mean", "Posterior",
                               "Masked", "noise_index", "masked_gp", "observation_diag", "covariance", "standardise", "internal_target",
                               "check_target", "evaluated_inputs"},
    "mumbo_jax.gp.moments": {"Moments", "target_part", "CHUNK"},
    "mumbo_jax.gp.marginal": {"WARMUP", "MAX_DOUBLINGS", "is_stacked", "first", "stack", "n_samples", "map_params", "mean_over_samples"},
    "mumbo_jax.gp.costmodel": {"PREDICTIONS", "CostModel", "continuous_cost_model", "discrete_cost_model",
                               "cost_model_for", "FittedCost"},
    # can_move_quartiles: a comparison of means and bounds in the dtype it is given, used
    # inside sample_gstar (checked)
    "mumbo_jax.acquisition.maxvalue": {"GSTAR_METHODS", "FLOOR_NOISE_SD", "PRUNE_FROM_ROWS", "PRUNE_BOUND_ROWS", "can_move_quartiles",
                                       "default_grid_size"},
    "mumbo_jax.acquisition.acquisitions": set(),
    "mumbo_jax.runtime.draws": {"STREAM_LENGTH"},
    "mumbo_jax.acquisition.baselines": {"MF_GAMMA_COEFF", "MF_ZETA_FACTOR", "BOCA_COEFF", "BOCA_MAX_COST_RATIO",
                                        "boca_exponent", "n_observations", "MTBOState"},
}

# Run without x64. Inputs that need a posterior are built inside `jax.enable_x64(True)`
# and then used outside it, as a user who forgot the flag in one place would.
SCRIPT = textwrap.dedent('''
    import json
    import jax, jax.numpy as jnp, numpy as np
    from mumbo_jax.gp import costmodel, fitting, marginal, models, moments, posterior, precision
    from mumbo_jax.acquisition import acquisitions as acq, baselines as bl, maxvalue as mv
    from mumbo_jax.runtime import draws

    assert not jax.config.jax_enable_x64
    spec = models.icm_model([(0.0, 1.0)], 2)
    x = np.linspace(0.0, 1.0, 6)[:, None]
    z = np.array([0, 1] * 3)
    y = np.sin(5 * x[:, 0])
    key = jax.random.PRNGKey(0)
    t = posterior.target_fidelity(0)
    cm = costmodel.continuous_cost_model([(0.0, 1.0)], (0.0, 1.0))
    with jax.enable_x64(True):
        params = models.default_params(spec)
        x_, z_, y_, mask = models.check_data(spec, x, z, y)
        scaling = models.make_scaling(spec, y_, mask)
        inits = fitting.restart_inits(spec, key, 2)
        post = posterior.condition(spec, params, x, z, y)
        cpost = posterior.condition(cm.spec, models.default_params(cm.spec), x, x[:, 0], y)
        state = bl.mtbo_state(key, post, t, 4, 16, 3, 20)
        zeta = jnp.zeros(2)
    fitted = costmodel.FittedCost(cm, cpost)
    xc, zc = x[:3], z[:3]
    m, v, g = np.zeros(3), np.ones(3), np.array([1.0, 2.0])
    F, M = np.zeros((2, 3)), np.ones((2, 3))
    calls = {
        "mumbo_jax.gp.fitting.neg_log_marginal": lambda: fitting.neg_log_marginal(spec, params, scaling, x_, z_, y_, mask),
        "mumbo_jax.gp.fitting.neg_log_marginal_reference": lambda: fitting.neg_log_marginal_reference(
            spec, params, scaling, x_, z_, y_, mask),
        "mumbo_jax.gp.fitting.fit_from": lambda: fitting.fit_from(spec, scaling, x_, z_, y_, mask, inits, 5, 1e-5),
        "mumbo_jax.gp.fitting.fit_params": lambda: fitting.fit_params(spec, x, z, y, key),
        "mumbo_jax.gp.fitting.fit": lambda: fitting.fit(spec, x, z, y, key),
        "mumbo_jax.gp.marginal.nuts_samples": lambda: marginal.nuts_samples(spec, scaling, x_, z_, y_, mask, params, key,
                                                                            2, 2, 1),
        "mumbo_jax.gp.marginal.target_moments": lambda: marginal.target_moments(post, xc, t),
        "mumbo_jax.gp.marginal.target_joint": lambda: marginal.target_joint(post, xc, t),
        "mumbo_jax.gp.posterior.condition": lambda: posterior.condition(spec, params, x, z, y),
        "mumbo_jax.gp.moments.joint_moments": lambda: moments.joint_moments(post, xc, zc, t),
        "mumbo_jax.gp.moments.joint_moments_fidelities": lambda: moments.joint_moments_fidelities(post, xc, [0, 1], t),
        "mumbo_jax.gp.moments.target_moments": lambda: moments.target_moments(post, xc, t),
        "mumbo_jax.gp.moments.target_moments_where": lambda: moments.target_moments_where(
            post, xc, t, lambda m, v: m > 0, 4),
        "mumbo_jax.gp.moments.target_moments_bound": lambda: moments.target_moments_bound(post, xc, t, 4),
        "mumbo_jax.gp.moments.incumbent": lambda: moments.incumbent(post, t),
        "mumbo_jax.gp.posterior.loo_zscores": lambda: posterior.loo_zscores(post),
        "mumbo_jax.gp.posterior.loo_log_density": lambda: posterior.loo_log_density(post),
        "mumbo_jax.gp.posterior.recondition": lambda: posterior.recondition(post, post.mask),
        "mumbo_jax.gp.moments.target_joint": lambda: moments.target_joint(post, xc, t),
        "mumbo_jax.gp.moments.predict": lambda: moments.predict(post, xc, zc),
        "mumbo_jax.gp.costmodel.fit_cost": lambda: costmodel.fit_cost(cm, x, x[:, 0], np.exp(y)),
        "mumbo_jax.gp.costmodel.log_cost_moments": lambda: costmodel.log_cost_moments(fitted, xc, xc[:, 0]),
        "mumbo_jax.gp.costmodel.predict_cost": lambda: costmodel.predict_cost(fitted, xc, xc[:, 0]),
        "mumbo_jax.gp.costmodel.cost_function": lambda: costmodel.cost_function(fitted),
        "mumbo_jax.runtime.draws.bits": lambda: draws.bits(key, 4),
        "mumbo_jax.runtime.draws.uniform": lambda: draws.uniform(key, 4),
        "mumbo_jax.runtime.draws.normal": lambda: draws.normal(key, 4),
        "mumbo_jax.runtime.draws.bernoulli": lambda: draws.bernoulli(key, 0.5, 4),
        "mumbo_jax.acquisition.maxvalue.max_value_quantiles": lambda: mv.max_value_quantiles(m, v),
        "mumbo_jax.acquisition.maxvalue.fit_gumbel": lambda: mv.fit_gumbel(m, v),
        "mumbo_jax.acquisition.maxvalue.gumbel_max_samples": lambda: mv.gumbel_max_samples(key, m, v, 4),
        "mumbo_jax.acquisition.maxvalue.exact_max_samples": lambda: mv.exact_max_samples(key, m, np.eye(3), 4),
        "mumbo_jax.acquisition.maxvalue.gstar_floor": lambda: mv.gstar_floor(post, t),
        "mumbo_jax.acquisition.maxvalue.sample_gstar": lambda: mv.sample_gstar(key, post, t, 4, n_grid=50),
        "mumbo_jax.acquisition.acquisitions.mumbo_gain": lambda: acq.mumbo_gain(m, v, m, v, 0.5 * v, g),
        "mumbo_jax.acquisition.acquisitions.mumbo_gain_simpson": lambda: acq.mumbo_gain_simpson(m, v, m, v, 0.5 * v, g),
        "mumbo_jax.acquisition.acquisitions.mes_gain": lambda: acq.mes_gain(m, v, g),
        "mumbo_jax.acquisition.acquisitions.mes_gain_bound": lambda: acq.mes_gain_bound(m, v, g),
        "mumbo_jax.acquisition.acquisitions.cost_weighted": lambda: acq.cost_weighted(v, 2 * v),
        "mumbo_jax.acquisition.acquisitions.esg_gain": lambda: acq.esg_gain(m, 0.5 * v),
        "mumbo_jax.acquisition.acquisitions.esg_gain_simpson": lambda: acq.esg_gain_simpson(m, 0.5 * v),
        "mumbo_jax.acquisition.acquisitions.mes_per_sample": lambda: acq.mes_per_sample(m),
        "mumbo_jax.acquisition.acquisitions.ratio_table": lambda: acq.ratio_table(),
        "mumbo_jax.acquisition.baselines.expected_improvement": lambda: bl.expected_improvement(m, v, 0.5),
        "mumbo_jax.acquisition.baselines.ucb": lambda: bl.ucb(m, v, 2.0),
        "mumbo_jax.acquisition.baselines.ucb_beta": lambda: bl.ucb_beta(2, 10),
        "mumbo_jax.acquisition.baselines.mf_gp_ucb_bound": lambda: bl.mf_gp_ucb_bound(F, M, np.zeros(2), 2.0),
        "mumbo_jax.acquisition.baselines.mf_gp_ucb_fidelity": lambda: bl.mf_gp_ucb_fidelity(v, 2.0, v, v),
        "mumbo_jax.acquisition.baselines.boca_fidelity": lambda: bl.boca_fidelity(m, v, v, v, 2.0, 2.0, 1.0, 0.2, 1.0),
        "mumbo_jax.acquisition.baselines.mf_gp_ucb_gamma_exponents": lambda: bl.mf_gp_ucb_gamma_exponents(z, z > -1, [10.0, 1.0]),
        "mumbo_jax.acquisition.baselines.boca_coefficient": lambda: bl.boca_coefficient(z == 0, z > -1),
        "mumbo_jax.acquisition.baselines.pmin_from_samples": lambda: bl.pmin_from_samples(F),
        "mumbo_jax.acquisition.baselines.pmin_entropy": lambda: bl.pmin_entropy(v / 3),
        "mumbo_jax.acquisition.baselines.pmin_after_fantasy": lambda: bl.pmin_after_fantasy(F, m, v[:2], 1.0, 0.5),
        "mumbo_jax.acquisition.baselines.mtbo_gain": lambda: bl.mtbo_gain(m, np.eye(3), np.ones((2, 3)), v[:2], np.ones((3, 5)), np.ones(5), np.zeros(3), np.ones(3) / 3),
        "mumbo_jax.acquisition.baselines.robust_cholesky": lambda: bl.robust_cholesky(jnp.eye(3)),
        "mumbo_jax.acquisition.baselines.gauss_hermite": lambda: bl.gauss_hermite(5),
        "mumbo_jax.acquisition.baselines.incumbent_value": lambda: bl.incumbent_value(post, t),
        "mumbo_jax.acquisition.baselines.fidelity_incumbent": lambda: bl.fidelity_incumbent(post, 1),
        "mumbo_jax.acquisition.baselines.ei_alpha": lambda: bl.ei_alpha(post, t, 0.5, xc, zc),
        "mumbo_jax.acquisition.baselines.ucb_alpha": lambda: bl.ucb_alpha(post, t, 2.0, xc, zc),
        "mumbo_jax.acquisition.baselines.fidelity_ei": lambda: bl.fidelity_ei(post, xc, zc, 0.5),
        "mumbo_jax.acquisition.baselines.mf_gp_ucb_thresholds": lambda: bl.mf_gp_ucb_thresholds(post, 2),
        "mumbo_jax.acquisition.baselines.mf_gp_ucb_alpha": lambda: bl.mf_gp_ucb_alpha(post, zeta, 2.0, xc, zc),
        "mumbo_jax.acquisition.baselines.data_range": lambda: bl.data_range(post),
        "mumbo_jax.acquisition.baselines.mtbo_state": lambda: bl.mtbo_state(key, post, t, 4, 16, 3, 20),
        "mumbo_jax.acquisition.baselines.mtbo_alpha": lambda: bl.mtbo_alpha(post, t, state, xc, zc),
        "mumbo_jax.acquisition.baselines.prior_information_gap": lambda: bl.prior_information_gap(post, x[0], m, 1.0),
        # exempt constructors work without x64 (pure Python)
        "works:icm_model": lambda: models.icm_model([(0.0, 1.0)], 2),
        "works:basis_model": lambda: models.basis_model([(0.0, 1.0)], fidelity_bounds=(0.0, 1.0)),
        "works:continuous_cost_model": lambda: costmodel.continuous_cost_model([(0.0, 1.0)], (0.0, 1.0)),
        "works:target_fidelity": lambda: posterior.target_fidelity(1),
    }
    out = {}
    for name, call in calls.items():
        try:
            call()
            out[name] = "returned"
        except precision.PrecisionError as err:
            out[name] = "PrecisionError: " + str(err)
        except Exception as err:  # anything else is a failure the test reports
            out[name] = type(err).__name__ + ": " + str(err)
    print("RESULT" + json.dumps(out))
''')


@pytest.fixture(scope="module")
def without_x64():
    """{entry point: outcome} from a fresh process with JAX's default float32."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))
    return json.loads(line[len("RESULT"):])


def test_every_numerical_entry_point_says_how_to_enable_x64(without_x64):
    expected = "mumbo-jax needs 64-bit floats: call jax.config.update('jax_enable_x64', True) before "
    bad = {k: v for k, v in without_x64.items() if not k.startswith("works:") and not v.startswith(
        "PrecisionError: " + expected)}
    assert not bad, bad
    works = {k: v for k, v in without_x64.items() if k.startswith("works:")}
    assert works and all(v == "returned" for v in works.values()), works


def test_every_public_name_is_checked_or_exempt(without_x64):
    """A new public function must either check (and be called in SCRIPT) or be listed
    in EXEMPT with a reason: this test fails until someone decides."""
    checked = {k for k in without_x64 if not k.startswith("works:")}
    for modname in MODULES:
        mod = importlib.import_module(modname)
        public = set(mod.__all__)
        mine = {k.rsplit(".", 1)[1] for k in checked if k.rsplit(".", 1)[0] == modname}
        assert mine <= public, (modname, mine - public)
        assert not (mine & EXEMPT[modname]), (modname, mine & EXEMPT[modname])
        assert public == mine | EXEMPT[modname], (modname, public - mine - EXEMPT[modname])


def test_require_x64_names_the_fix_and_honours_the_context():
    precision.require_x64("anything")  # conftest enabled x64: no error
    assert precision.x64_enabled()
    with jax.enable_x64(False):
        assert not precision.x64_enabled()
        with pytest.raises(precision.PrecisionError) as info:
            precision.require_x64("calling my_function")
    msg = str(info.value)
    assert "jax.config.update('jax_enable_x64', True) before calling my_function" in msg
    assert isinstance(info.value, RuntimeError)
