"""Seeds sharded over devices (mumbo_jax.runtime.sharding, run_compiled(batching="shard")):
the same decisions as one device. Runs in a subprocess with four host CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=4``); the device count is fixed when
the backend starts, so the pytest process itself cannot have them."""

import os
import subprocess
import sys
import textwrap
import types

import jax
import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.runtime import sharding

SCRIPT = textwrap.dedent('''
    import jax
    jax.config.update("jax_enable_x64", True)
    import numpy as np
    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo import compiled
    from mumbo_jax.runtime import sharding
    import sys
    from tests.bo_helpers import FAST, with_

    settings = with_(FAST, strategy=sys.argv[1])
    assert len(jax.devices()) == 4, jax.devices()
    prob = problems.get_problem("forrester")
    task = tasks.problem_task(prob)
    seeds = [0, 1, 2]  # padded to 4 lanes, one per device
    mesh = sharding.seed_mesh()
    layout = sharding.seed_sharding(mesh)

    # the lock-step programs follow the data: one seed per device
    keys = sharding.put(np.stack([jax.random.PRNGKey(s) for s in range(4)]), layout)
    state = compiled.initial_states(task, tasks.problem_benchmark(prob), keys, 32)[0]
    shards = state.buffers.x.addressable_shards
    assert len({s.device for s in shards}) == 4 and all(s.data.shape[0] == 1 for s in shards), shards

    # the reference: seeds one after another on one device (batching "map", the CPU default
    # and the programs of ask/tell): it compiles in ~60 % of the time of the lock-step
    # "vmap" programs, and tests/test_loop.py checks that "map" and "vmap" agree to 1e-10
    one = tasks.run_problem(prob, 1e9, seeds, settings, max_evals=3, batching="map")
    four = tasks.run_problem(prob, 1e9, seeds, settings, max_evals=3, batching="shard")
    np.testing.assert_array_equal(four.n_evals, one.n_evals)
    np.testing.assert_array_equal(four.z, one.z)
    # to rounding: the devices reduce in another order, and the maximiser's Adam polish
    # carries a last-digit difference to a few 1e-9 in x
    for field in ("x", "y"):
        np.testing.assert_allclose(getattr(four, field), getattr(one, field), rtol=0, atol=1e-7, err_msg=field)
    # the recommendation (incumbent_rule "global": an Adam search of the posterior mean that
    # stops before convergence where the mean is flat) moves further: up to 1.1e-4 in regret
    for field in ("regret", "incumbent_x"):
        np.testing.assert_allclose(getattr(four, field), getattr(one, field), rtol=0, atol=1e-3, err_msg=field)
    print("max |dx|", float(np.max(np.abs(four.x - one.x))))
''')


@pytest.mark.slow  # ~53 s of the default run (a 4-device subprocess compiling two drivers)
@pytest.mark.parametrize("strategy", ["ei", "mumbo"])
def test_sharded_seeds_make_the_decisions_of_one_device(strategy):
    """The contract (one seed per device; padded lanes; the decisions, y and the
    recommendation of seeds run one after another on one device) on EI, the cheapest
    lock-step programs to compile, and on MUMBO (g* sampling and the gain under sharding
    too); under ``-m slow``. The default run keeps the mesh's checks
    (:func:`test_mesh_checks`) and the lock-step programs sharding runs on one device
    (tests/test_loop.py, lock-step batching against ask/tell)."""
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # ~1 minute on an idle 2-core machine; the limit only guards against a hang (a loaded
    # machine took over 10 minutes, and a 600 s limit failed the test there)
    r = subprocess.run([sys.executable, "-c", SCRIPT, strategy], env=env, cwd=root, capture_output=True, text=True,
                       timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "max |dx|" in r.stdout
    print(r.stdout)


def test_mesh_checks(monkeypatch):
    for var in ("MUMBO_COORDINATOR", "MUMBO_NUM_PROCESSES", "MUMBO_PROCESS_ID"):
        monkeypatch.delenv(var, raising=False)
    mesh = sharding.seed_mesh()
    four = types.SimpleNamespace(shape={sharding.SEED_AXIS: 4})  # what padded_count reads of a mesh
    assert [sharding.padded_count(n, four) for n in (1, 4, 5, 8, 9)] == [4, 4, 8, 8, 12]
    with pytest.raises(ValueError, match="needs at least one device"):
        sharding.seed_mesh([])
    with pytest.raises(ValueError, match="process_id must be in"):
        sharding.initialize("localhost:1234", 2, 2)
    with pytest.raises(ValueError, match="number of processes"):
        sharding.initialize("localhost:1234")
    assert sharding.initialize() is False  # one process: nothing to start
    with pytest.raises(ValueError, match="need a coordinator"):
        sharding.initialize(None, 2, 0)
    with pytest.raises(ValueError, match="an axis named 'seeds'"):
        sharding.seed_sharding(jax.sharding.Mesh(np.asarray(jax.devices()), ("x",)))
    prob = problems.get_problem("forrester")
    with pytest.raises(ValueError, match="a mesh is for batching='shard'"):
        tasks.run_problem(prob, 10.0, [0], batching="vmap", mesh=mesh)
    with pytest.raises(ValueError, match="batching must be 'map', 'vmap' or 'shard'"):
        tasks.run_problem(prob, 10.0, [0], batching="pmap")


TWO_PROCESSES = textwrap.dedent('''
    import sys
    import numpy as np
    from mumbo_jax.runtime import sharding
    pid, port, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    assert sharding.initialize(f"localhost:{port}", 2, pid)
    import jax
    jax.config.update("jax_enable_x64", True)
    from mumbo_jax.benchmarks import problems, tasks
    from tests.bo_helpers import FAST
    assert jax.process_count() == 2 and len(jax.devices()) == 2 and len(jax.local_devices()) == 1
    prob = problems.get_problem("forrester")
    h = tasks.run_problem(prob, 1e9, [0, 1], FAST, max_evals=3, batching="shard")
    if pid == 0:
        one = tasks.run_problem(prob, 1e9, [0, 1], FAST, max_evals=3, batching="vmap")
        np.savez(out, x=h.x, z=h.z, regret=h.regret, x1=one.x, z1=one.z, regret1=one.regret)
    print("done", pid, flush=True)
''')


@pytest.mark.slow
def test_two_processes_shard_the_seeds(tmp_path):
    """jax.distributed on one machine: two CPU processes, one device each, one seed each."""
    import socket

    with socket.socket() as s:
        s.bind(("localhost", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=1"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = tmp_path / "h.npz"
    procs = [subprocess.Popen([sys.executable, "-c", TWO_PROCESSES, str(i), str(port), str(out)], env=env, cwd=root,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (o, e) in zip(procs, results):
        assert p.returncode == 0, e[-3000:]
    h = np.load(out)
    np.testing.assert_array_equal(h["z"], h["z1"])
    np.testing.assert_allclose(h["x"], h["x1"], rtol=0, atol=1e-7)
    np.testing.assert_allclose(h["regret"], h["regret1"], rtol=0, atol=1e-3)  # the global recommendation: see above
