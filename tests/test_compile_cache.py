"""The compiled driver's programs go into JAX's persistent compilation cache: a second
identical run in a fresh process compiles nothing (no host callbacks in any program)."""

import json
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

    settings = BOSettings(strategy="random", n_candidates=50, n_starts=2, n_polish_steps=2, fit_restarts=1,
                          fit_max_iter=5)
    h = tasks.run_problem(problems.get_problem("forrester"), 1e9, [0], settings, max_evals=2)
    print(json.dumps({"requests": counts["/jax/compilation_cache/compile_requests_use_cache"],
                      "hits": counts["/jax/compilation_cache/cache_hits"], "x": h.x.tolist()}))
""")


def _run(cache_dir):
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(cache_dir)], capture_output=True, text=True, timeout=600,
                         env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_run_in_a_fresh_process_compiles_nothing(tmp_path):
    first = _run(tmp_path)
    second = _run(tmp_path)
    assert first["requests"] >= 5 and first["hits"] == 0  # the stages, the design, the small eager ops
    assert second["requests"] == first["requests"]
    assert second["hits"] == second["requests"]  # every program came from the cache
    assert second["x"] == first["x"]
