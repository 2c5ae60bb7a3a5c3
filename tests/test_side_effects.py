"""A library user's process is left as it was: importing mumbo_jax, making an AskTell and
running its design and a first BO decision change none of JAX's process-wide settings
(the compilation cache and its options), reset no cache, clear no compiled program and
start no thread. The CLI's opt-in (mumbo_jax.runtime.process_options.enable) switches them on."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import json, sys, threading
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    CONFIG = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
              "jax_persistent_cache_min_entry_size_bytes", "jax_compilation_cache_max_size",
              "jax_enable_compilation_cache", "jax_enable_x64")

    def config():
        return {name: getattr(jax.config, name) for name in CONFIG}

    user = jax.jit(lambda v: jnp.sin(v) * 2.0)
    user(jnp.arange(3.0)).block_until_ready()  # the user's own compiled program
    from jax.experimental.compilation_cache import compilation_cache as jax_cache
    resets = []
    reset_cache = jax_cache.reset_cache
    jax_cache.reset_cache = lambda: resets.append(1) or reset_cache()  # counts resets of JAX's cache
    before = {"config": config(), "threads": threading.active_count(),
              "thread_names": sorted(t.name for t in threading.enumerate())}

    import mumbo_jax
    from mumbo_jax.benchmarks import problems, tasks
    if sys.argv[1:] == ["enable"]:
        import mumbo_jax.runtime.process_options
        mumbo_jax.runtime.process_options.enable()

    prob = problems.get_problem("forrester")
    settings = mumbo_jax.BOSettings(strategy="ei", maximiser={"n_candidates": 50, "n_starts": 2, "polish_steps": 2},
                                    fit={"restarts": 1, "max_iter": 5})
    opt = mumbo_jax.AskTell(tasks.problem_task(prob), settings, seed=0)
    while opt.asks_design:
        x, z = opt.ask()
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
    x, z = opt.ask()  # a first BO decision
    opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
    after = {"config": config(), "threads": threading.active_count(),
             "thread_names": sorted(t.name for t in threading.enumerate())}
    print(json.dumps({"before": before, "after": after, "user_programs": user._cache_size(),
                      "cache_resets": len(resets),
                      "prefetching": opt._prefetcher.on}))
""")


def _run(tmp_path, *args):
    root = pathlib.Path(__file__).resolve().parents[1]
    # a user's environment: none of the test run's settings for JAX or the library
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "MUMBO_JAX_", "MUMBO_TEST_"))}
    env.update(JAX_PLATFORMS="cpu", HOME=str(tmp_path), PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, timeout=600,
                         env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_asktell_leaves_the_users_process_as_it_was(tmp_path):
    got = _run(tmp_path)
    assert got["after"]["config"] == got["before"]["config"]
    assert got["before"]["config"]["jax_compilation_cache_dir"] is None
    assert got["after"]["threads"] == got["before"]["threads"], got["after"]["thread_names"]
    assert got["cache_resets"] == 0 and not got["prefetching"]
    assert got["user_programs"] == 1  # the user's compiled program is still held
    assert not (tmp_path / ".cache").exists()  # nothing written under the user's home


def test_the_opt_in_switches_them_on(tmp_path):
    # the same script after mumbo_jax.runtime.process_options.enable(), as the CLI calls it: the test
    # above can fail (it sees the cache folder and the prefetch thread when they are on)
    got = _run(tmp_path, "enable")
    assert got["after"]["config"]["jax_compilation_cache_dir"] == str(tmp_path / ".cache" / "mumbo-jax" / "xla")
    assert got["cache_resets"] == 1 and got["prefetching"]
