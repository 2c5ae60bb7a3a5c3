"""The guard that keeps a process's compiled programs under the kernel's memory-map limit
(mumbo_jax.runtime.programs): past the share it clears JAX's caches, once per new buffer size."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mumbo_jax.bo import stages
from mumbo_jax.runtime import programs


def _fresh_program():
    f = jax.jit(lambda v: jnp.sin(v) + 1.0)
    f(jnp.ones(3))
    assert f._cache_size() == 1
    return f


@pytest.mark.skipif(programs.maps_in_use() is None, reason="no /proc (not Linux)")
def test_maps_are_counted_and_compiled_programs_hold_some():
    before = programs.maps_in_use()
    fs = [jax.jit(lambda v, k=k: jnp.cos(v) * k) for k in range(20)]
    for f in fs:
        f(jnp.ones(5)).block_until_ready()
    assert programs.maps_in_use() > before  # XLA maps memory for each program's code
    assert programs.map_limit() > 0


def test_caches_are_cleared_only_past_the_share(monkeypatch):
    monkeypatch.setattr(programs, "_warned", [False])
    f = _fresh_program()
    assert not programs.release_if_crowded(0.5, maps=500, limit=1000)
    assert f._cache_size() == 1  # at the share: kept
    with pytest.warns(RuntimeWarning, match="memory maps"):
        assert programs.release_if_crowded(0.5, maps=501, limit=1000)
    assert f._cache_size() == 0  # cleared: it compiles again when called
    assert float(f(jnp.ones(3))[0]) == pytest.approx(np.sin(1.0) + 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per process
        assert programs.release_if_crowded(0.5, maps=900, limit=1000)
    monkeypatch.setattr(programs, "maps_in_use", lambda: None)  # no /proc: nothing counted, nothing done
    assert not programs.release_if_crowded(0.5, limit=1000)
    monkeypatch.setattr(programs, "map_limit", lambda: None)
    assert not programs.release_if_crowded(0.5, maps=900)


def test_the_drivers_check_once_per_new_buffer_size(monkeypatch):
    calls = []
    monkeypatch.setattr(programs, "release_if_crowded", lambda *a, **k: calls.append(1) or False)
    monkeypatch.setattr(programs, "_last_size", [None])
    x, z, y = np.zeros((3, 2)), np.zeros(3), np.zeros(3)
    stages.pad_buffers(x, z, y, 32)
    stages.pad_buffers(x, z, y, 32)  # the same size: no new programs, no check
    assert len(calls) == 1
    state = stages.State(stages.pad_buffers(x, z, y, 32), jnp.asarray(3, jnp.int32), None, None, None)
    stages.grow(state, 64)
    assert len(calls) == 2
    stages.pad_buffers(x, z, y, 32)  # a new run starting small again
    assert len(calls) == 3


def test_off_by_default_a_crowded_process_is_warned_not_cleared(monkeypatch):
    # a library user's process: the user's compiled programs are theirs to drop
    monkeypatch.setattr(programs, "_warned", [False])
    monkeypatch.setattr(programs, "_enabled", [False])
    monkeypatch.setattr(programs, "_last_size", [None])
    monkeypatch.setattr(programs, "maps_in_use", lambda: 900)
    monkeypatch.setattr(programs, "map_limit", lambda: 1000)
    f = _fresh_program()
    with pytest.warns(RuntimeWarning, match=r"programs.enable\(\)"):
        programs.on_buffer_size(32)
    assert f._cache_size() == 1  # kept
    programs.enable()  # the CLI's opt-in
    assert programs.enabled()
    programs.on_buffer_size(64)
    assert f._cache_size() == 0  # cleared
