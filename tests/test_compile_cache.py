"""The compiled driver's programs go into JAX's persistent compilation cache: a second
identical run in a fresh process compiles nothing (no host callbacks in any program)."""

import pytest
import json
import pathlib
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import json, sys
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_compilation_cache_dir", sys.argv[1])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    counts = {"/jax/compilation_cache/compile_requests_use_cache": 0, "/jax/compilation_cache/cache_hits": 0}

    def listen(event, **kw):
        if event in counts:
            counts[event] += 1

    jax.monitoring.register_event_listener(listen)
    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo.settings import BOSettings

    settings = BOSettings(strategy="random", maximiser={"n_candidates": 50, "n_starts": 2, "polish_steps": 2},
                          fit={"restarts": 1, "max_iter": 5})
    h = tasks.run_problem(problems.get_problem("forrester"), 1e9, [0], settings, max_evals=2)
    print(json.dumps({"requests": counts["/jax/compilation_cache/compile_requests_use_cache"],
                      "hits": counts["/jax/compilation_cache/cache_hits"], "x": h.x.tolist()}))
""")


def _run(cache_dir):
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(cache_dir)], capture_output=True, text=True, timeout=600,
                         env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # ~14 s of the default run (two CLI processes); the API's cache on and off stays in CI
def test_second_run_in_a_fresh_process_compiles_nothing(tmp_path):
    first = _run(tmp_path)
    second = _run(tmp_path)
    assert first["requests"] >= 5 and first["hits"] == 0  # the stages, the design, the small eager ops
    assert second["requests"] == first["requests"]
    assert second["hits"] == second["requests"]  # every program came from the cache
    assert second["x"] == first["x"]


API_SCRIPT = textwrap.dedent("""
    import json, sys
    import jax
    jax.config.update("jax_enable_x64", True)
    counts = {"/jax/compilation_cache/compile_requests_use_cache": 0, "/jax/compilation_cache/cache_hits": 0}

    def listen(event, **kw):
        if event in counts:
            counts[event] += 1

    jax.monitoring.register_event_listener(listen)
    # every program goes to disk, however fast this machine compiles it (JAX's default keeps
    # only programs that took 1 s; the library's decision programs take about that)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    import jax.numpy as jnp
    jnp.sin(jnp.arange(3.0)).block_until_ready()  # a program of the user's first: JAX decides on a cache here
    if "enable" in sys.argv[1:]:  # the opt-in (the CLI's, through mumbo_jax.runtime.process_options.enable)
        from mumbo_jax.runtime import compilation_cache
        compilation_cache.enable()
    from mumbo_jax.benchmarks import problems, tasks
    from mumbo_jax.bo.asktell import AskTell
    from mumbo_jax.bo.settings import BOSettings

    prob = problems.get_problem("forrester")
    settings = BOSettings(strategy="ei", maximiser={"n_candidates": 50, "n_starts": 2, "polish_steps": 2},
                          fit={"restarts": 1, "max_iter": 5})
    opt = AskTell(tasks.problem_task(prob), settings, seed=0)
    while opt.asks_design:
        x, z = opt.ask()
        opt.tell(x, z, float(problems.objective(prob, jnp.asarray(x), z)))
    if "design-only" not in sys.argv[1:]:
        x, z = opt.ask()  # a BO decision: the fit, the maximiser
    print(json.dumps({"requests": counts["/jax/compilation_cache/compile_requests_use_cache"],
                      "hits": counts["/jax/compilation_cache/cache_hits"], "x": [float(v) for v in x],
                      "dir": jax.config.jax_compilation_cache_dir}))
""")


def _run_api(env_cache, *args, home=None):
    env = {"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin", "HOME": str(home or env_cache.parent),
           "MUMBO_JAX_CACHE": str(env_cache)}
    out = subprocess.run([sys.executable, "-c", API_SCRIPT, *args], capture_output=True, text=True, timeout=600,
                         env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_api_keeps_its_programs_on_disk_once_enabled_and_off_means_off(tmp_path):
    """``compilation_cache.enable()`` switches the cache on (after a user's own program has
    compiled): a second process loads the decision's programs from the folder and decides
    the same. ``MUMBO_JAX_CACHE=off`` writes nothing; without ``enable()`` AskTell leaves
    JAX's cache alone."""
    first = _run_api(tmp_path / "xla", "enable")
    assert first["dir"] == str(tmp_path / "xla") and first["requests"] >= 3
    assert any((tmp_path / "xla").iterdir())  # the design's, fit's and maximiser's programs went to disk
    second = _run_api(tmp_path / "xla", "enable")
    assert second["hits"] >= 3 and second["x"] == first["x"]
    # off, and not enabled: the AskTell and its design (where the cache was switched on
    # before it became opt-in) without the BO decision, whose programs go to disk above
    off = _run_api(pathlib.Path("off"), "enable", "design-only", home=tmp_path)
    assert off["dir"] is None and off["hits"] == 0
    default = _run_api(tmp_path / "unused", "design-only", home=tmp_path)
    assert default["dir"] is None and default["hits"] == 0
    assert not (tmp_path / ".cache").exists() and not (tmp_path / "unused").exists()
