"""mumbo_jax.runtime.draws: Philox bits keyed by jax.random keys, their streams, their batching
rule, and the distributions built on them (against scipy's)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from mumbo_jax.runtime import draws

jax.config.update("jax_enable_x64", True)


def test_a_key_and_stream_give_the_same_bits_eagerly_and_under_jit():
    key = jax.random.PRNGKey(3)
    a = draws.bits(key, 100, 2)
    b = jax.jit(lambda k: draws.bits(k, 100, 2))(key)
    assert a.dtype == jnp.uint64 and a.shape == (100,)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # typed keys carry the same data
    np.testing.assert_array_equal(np.asarray(draws.bits(jax.random.key(3), 100, 2)), np.asarray(a))


def test_streams_and_keys_differ_and_a_shorter_draw_is_a_prefix():
    key = jax.random.PRNGKey(0)
    s0, s1 = np.asarray(draws.bits(key, 1000, 0)), np.asarray(draws.bits(key, 1000, 1))
    other = np.asarray(draws.bits(jax.random.PRNGKey(1), 1000, 0))
    assert len(np.intersect1d(s0, s1)) == 0 and len(np.intersect1d(s0, other)) == 0
    np.testing.assert_array_equal(np.asarray(draws.bits(key, 37, 0)), s0[:37])


def _per_key(keys, streams, n):
    return np.stack([np.asarray(draws.bits(k, n, s)) for k, s in zip(keys, streams)])


def test_vmap_draws_each_keys_own_bits():
    # lax.rng_bit_generator's own batching would give every key the first key's bits
    keys = jax.random.split(jax.random.PRNGKey(5), 4)
    got = jax.vmap(lambda k: draws.bits(k, 9, 1))(keys)
    np.testing.assert_array_equal(np.asarray(got), _per_key(keys, [1] * 4, 9))
    assert len({tuple(r) for r in np.asarray(got)}) == 4
    # batched streams of one key, and a vmap inside jit inside vmap
    streams = jnp.arange(3)
    got = jax.vmap(lambda s: draws.bits(keys[0], 5, s))(streams)
    np.testing.assert_array_equal(np.asarray(got), _per_key([keys[0]] * 3, [0, 1, 2], 5))
    nested = jax.vmap(jax.jit(jax.vmap(lambda k, s: draws.bits(k, 4, s), in_axes=(None, 0))), in_axes=(0, None))
    got = nested(keys, streams)
    for i, k in enumerate(keys):
        np.testing.assert_array_equal(np.asarray(got[i]), _per_key([k] * 3, [0, 1, 2], 4))


def test_uniform_is_inside_the_open_unit_interval_and_uniform():
    u = np.asarray(draws.uniform(jax.random.PRNGKey(11), (4000, 5)))
    assert u.shape == (4000, 5) and u.dtype == np.float64
    assert u.min() > 0.0 and u.max() < 1.0
    assert stats.kstest(u.ravel(), "uniform").pvalue > 1e-3
    # the columns are not copies of one another
    assert abs(np.corrcoef(u[:, 0], u[:, 1])[0, 1]) < 0.1
    u32 = np.asarray(draws.uniform(jax.random.PRNGKey(11), (4000,), jnp.float32))
    assert u32.dtype == np.float32 and u32.max() < 1.0 and u32.min() > 0.0


def test_normal_and_bernoulli_against_scipy():
    z = np.asarray(draws.normal(jax.random.PRNGKey(2), (20_000,)))
    assert np.all(np.isfinite(z))
    assert stats.kstest(z, "norm").pvalue > 1e-3
    coin = np.asarray(draws.bernoulli(jax.random.PRNGKey(2), 0.3, (20_000,), stream=4))
    assert coin.dtype == bool
    assert stats.binomtest(int(coin.sum()), coin.size, 0.3).pvalue > 1e-3
    assert draws.uniform(jax.random.PRNGKey(0), ()).shape == ()


def test_bad_keys_and_streams_are_named():
    with pytest.raises(ValueError, match="threefry jax.random key"):
        draws.bits(jnp.zeros(3, jnp.uint32), 4)
    with pytest.raises(ValueError, match="stream must be in"):
        draws.bits(jax.random.PRNGKey(0), 4, stream=-1)
    with pytest.raises(ValueError, match="stream must be in"):
        draws.bits(jax.random.PRNGKey(0), 4, stream=2**24)


def test_a_stream_is_a_stretch_of_the_philox_counter():
    """The layout the streams rely on: XLA's Philox state is (key, counter) and the counter
    advances by one per two 64-bit outputs, so stream s, which starts at counter s * 2^40,
    cannot reach stream s + 1 within STREAM_LENGTH numbers."""
    from jax import lax

    key = jax.random.PRNGKey(9)
    words = np.asarray(key).astype(np.uint64)
    philox_key = int(words[0] | (words[1] << np.uint64(32)))

    def at(counter, n):
        state = jnp.asarray([philox_key, counter], jnp.uint64)
        return np.asarray(lax.rng_bit_generator(state, (n,), jnp.uint64, algorithm=lax.RandomAlgorithm.RNG_PHILOX)[1])

    np.testing.assert_array_equal(np.asarray(draws.bits(key, 6, 0)), at(0, 6))
    np.testing.assert_array_equal(at(0, 6)[2:], at(1, 4))  # one counter step = two outputs
    np.testing.assert_array_equal(np.asarray(draws.bits(key, 4, 3)), at(3 * 2**40, 4))
