"""The models' cross-covariance (what the posterior's moments at candidates and g*'s
grid are built from) against the tinygp kernel of ``build_kernel``, the independent
form of the same covariance: the ICM model's dense form must equal it to rounding."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

from mumbo_jax.gp import kernels, models  # noqa: E402

BOUNDS = [(0.0, 1.0)] * 3


def _spec(kind):
    if kind in ("icm", "icm_disc", "ar1"):
        return {"icm": models.icm_model, "icm_disc": models.icm_disc_model, "ar1": models.ar1_model}[kind](BOUNDS, 3)
    return models.product_model(BOUNDS)


@pytest.mark.parametrize("kind", ["icm", "icm_disc", "ar1", "product"])
def test_cross_equals_the_tinygp_kernel(kind):
    spec = _spec(kind)
    params = models.random_params(spec, jax.random.PRNGKey(3))
    k = jax.random.split(jax.random.PRNGKey(0), 4)
    xa, xb = jax.random.uniform(k[0], (40, 3)), jax.random.uniform(k[1], (25, 3))
    if spec.discrete:
        za, zb = jax.random.randint(k[2], (40,), 0, 3), jax.random.randint(k[3], (25,), 0, 3)
    else:
        za, zb = jax.random.uniform(k[2], (40,)), jax.random.uniform(k[3], (25,))
    xb = xb.at[0].set(xa[0])  # a coincident pair: r = 0
    got = spec.cross(params, xa, za, xb, zb)
    want = models.build_kernel(spec, params)((xa, za), (xb, zb))
    assert got.shape == (40, 25)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-13, atol=1e-14)


def test_matern52_cross_closed_form():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(size=(6, 2)), rng.uniform(size=(4, 2))
    r = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
    want = (1 + np.sqrt(5) * r + 5 / 3 * r**2) * np.exp(-np.sqrt(5) * r)
    np.testing.assert_allclose(np.asarray(kernels.matern52_cross(jnp.asarray(a), jnp.asarray(b))), want, rtol=1e-13)
