"""Random numbers that compile small: Philox bits from XLA's random-bit generator.

Every ``jax.random`` draw in a program is compiled code of its own (threefry's rounds,
the counters, the conversion to floats): XLA's CPU compiler spends 0.1-0.3 s on each
``uniform``, ``normal`` or ``bernoulli`` of a decision program, and the library compiles
its decision programs once per buffer size (``experiments/performance/bench_draws.py``).
XLA's random-bit generator (``jax.lax.rng_bit_generator``) runs from the runtime's own
code instead. The maximiser and the g* sampler draw here: Philox 4x32-10, named (not the
backend's default algorithm, so every backend draws the same bits), keyed by the data of
an ordinary ``jax.random`` key. A key and a stream number give the same numbers every
time; the streams of one key are disjoint stretches of one Philox counter
(:data:`STREAM_LENGTH` numbers each), so one key serves several independent draws
without a threefry ``split`` or ``fold_in``.

The bits are 64-bit integers: every function needs ``jax_enable_x64``.
``rng_bit_generator`` under ``vmap`` would draw the first key's numbers for the whole
batch; :func:`bits` carries its own batching rule, which draws each key's in turn.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from mumbo_jax.gp.precision import require_x64

__all__ = ["STREAM_LENGTH", "bits", "uniform", "normal", "bernoulli"]

_STREAM_BITS = 40
STREAM_LENGTH = 2**_STREAM_BITS  # 64-bit numbers per stream of a key
_MAX_STREAMS = 2 ** (64 - _STREAM_BITS)


def _key_data(key) -> jax.Array:
    """``[2]`` uint32: a typed key's data, or a raw ``PRNGKey``."""
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    if key.shape != (2,) or key.dtype != jnp.uint32:
        raise ValueError(f"expected a threefry jax.random key (uint32 data of shape (2,)), got {key.dtype} "
                         f"{tuple(key.shape)}")
    return key


@functools.lru_cache(maxsize=None)
def _generator(n: int):
    """``f(data [2] uint32, stream uint64) -> [n] uint64``, batched key by key under vmap."""

    @jax.custom_batching.custom_vmap
    def draw(data, stream):
        words = data.astype(jnp.uint64)
        philox_key = words[0] | (words[1] << jnp.uint64(32))
        state = jnp.stack([philox_key, stream << jnp.uint64(_STREAM_BITS)])  # (key, counter)
        return lax.rng_bit_generator(state, (n,), jnp.uint64, algorithm=lax.RandomAlgorithm.RNG_PHILOX)[1]

    @draw.def_vmap
    def _draw_each(axis_size, in_batched, data, stream):
        data = data if in_batched[0] else jnp.broadcast_to(data, (axis_size, *data.shape))
        stream = stream if in_batched[1] else jnp.broadcast_to(stream, (axis_size,))
        return lax.map(lambda args: draw(*args), (data, stream)), True

    return draw


def bits(key, n: int, stream=0) -> jax.Array:
    """``[n]`` uint64 random bits of ``key``'s stream ``stream`` (an int below 2^24,
    static or traced). The first m of n bits are the m bits of the same key and stream.
    Needs 64-bit types (:func:`mumbo_jax.gp.precision.require_x64`)."""
    require_x64("drawing random numbers with mumbo_jax.runtime.draws")
    if isinstance(stream, (int, np.integer)) and not 0 <= int(stream) < _MAX_STREAMS:
        raise ValueError(f"stream must be in [0, {_MAX_STREAMS}), got {stream}")
    if int(n) > STREAM_LENGTH:
        raise ValueError(f"a stream holds {STREAM_LENGTH} numbers, {n} asked")
    return _generator(int(n))(_key_data(key), jnp.asarray(stream, jnp.uint64))


def uniform(key, shape, dtype=jnp.float64, stream=0) -> jax.Array:
    """Uniform numbers in the open interval (0, 1): the top 53 bits of each draw plus one
    half, times 2^-53 (never 0 or 1, so logs and inverse CDFs stay finite)."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    b = bits(key, math.prod(shape), stream)
    u = ((b >> jnp.uint64(11)).astype(jnp.float64) + 0.5) * 2.0**-53
    u = u.astype(dtype)
    if jnp.finfo(dtype).bits < 64:  # rounding to a shorter float can reach 1
        u = jnp.minimum(u, 1.0 - jnp.finfo(dtype).epsneg)
    return u.reshape(shape)


def normal(key, shape, dtype=jnp.float64, stream=0) -> jax.Array:
    """Standard normal numbers: the inverse normal CDF of :func:`uniform`."""
    u = uniform(key, shape, jnp.float64, stream)
    return (np.sqrt(2.0) * lax.erf_inv(2.0 * u - 1.0)).astype(dtype)


def bernoulli(key, p, shape, stream=0) -> jax.Array:
    """Booleans, True with probability ``p``."""
    return uniform(key, shape, jnp.float64, stream) < p
