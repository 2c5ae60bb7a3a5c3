import os

# The test processes run with the CLI's deterministic XLA CPU flags (single-threaded Eigen),
# set here before JAX's backend starts. Otherwise every in-process `cli.main(...)` would set
# XLA_FLAGS in a worker whose XLA has long started (and whose other threads may be reading
# the environment): the flags would have no effect and the write is a needless hazard. The
# subprocesses the tests start (CLI, README and tutorial scripts) inherit them, as a user's
# `mumbo-jax` process sets them for itself; tests of the flag logic pass their own environment.
from mumbo_jax.run.cli import deterministic_xla_flags  # noqa: E402 (imports no XLA backend)

deterministic_xla_flags()

# ---------------------------------------------------------------- one BLAS thread per process
# numpy's and scipy's OpenBLAS start a thread per core. With two test processes on CI's two
# cores (and the tests' subprocesses beside them) its threads wait on each other: an
# iteration of scipy's L-BFGS-B on a 6-d problem took 5 ms, and the multistart references
# ran 7x slower than with one thread (measured on the 2-core machine under load:
# tests/test_problems.py's 40 hartmann6 starts, 8.6 s -> 1.2 s). The references' matrices
# are small, so one thread loses nothing. numpy is already loaded here (pytest's plugins
# import it), so the limit is set through threadpoolctl (scikit-learn, of the test extra,
# depends on it); the subprocesses the tests start read the variable.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
try:
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
except ImportError:  # the variable alone: effective only where numpy is not loaded yet
    pass

import jax

# The numerical core is written for float64 (see README, "Precision").
jax.config.update("jax_enable_x64", True)
# The compiled loop's step clock uses host callbacks inside a while_loop, which can hang
# the CPU client under asynchronous dispatch (jax-ml/jax#25861).
jax.config.update("jax_cpu_enable_async_dispatch", False)
# The library's compile options and its release of compiled programs near the memory-map
# limit are opt-in (mumbo_jax.runtime.process_options); the test processes run with both, as the CLI
# does (the decisions' replay reference was written with the options). The cache and
# prefetching are set below; tests/test_side_effects.py checks the defaults in a fresh process.
from mumbo_jax.runtime import xla_options  # noqa: E402
from mumbo_jax.runtime import programs  # noqa: E402

xla_options.enable()
programs.enable()


import pytest

# The CLI keeps compiled programs in a persistent cache (MUMBO_JAX_CACHE); tests that call
# it in-process would switch that cache on for the whole session (and share it with other
# processes). Tests of the cache set their own folder in a subprocess.
os.environ["MUMBO_JAX_CACHE"] = "off"
# Ask/tell compiles the next buffer size in the background by default (mumbo_jax.runtime.prefetch):
# in tests that ask a few times it would compile a size nobody uses, on the cores the other
# worker needs. tests/test_prefetch.py switches it on where it is tested.
os.environ["MUMBO_JAX_PREFETCH"] = "off"


# ---------------------------------------------------------------- one compilation cache per run
# The test processes of one run (the xdist workers and every process they start: the CLI,
# README, sharding and tutorial scripts) share JAX's persistent compilation cache in one
# fresh folder, so a program compiled by one worker is read, not compiled, by the other, and
# again after a worker drops its programs (below). Measured on the idle 2-core machine: the
# default run took 13 min 8 s with it and 14 min 16 s without. The folder is made by the
# first process (the xdist controller, or a single pytest process) and removed when it ends;
# MUMBO_TEST_XLA_CACHE=<folder> names one to keep, MUMBO_TEST_XLA_CACHE=off runs without.
# Entries are written and read under JAX's file lock (its LRU cache with a size limit, which
# needs the `filelock` package of the test extra), so no process reads a half-written entry.
_CACHE_ENV = "MUMBO_TEST_XLA_CACHE"
_CACHE_DIR = os.environ.get(_CACHE_ENV, "").strip()
_OWN_CACHE = None
if not _CACHE_DIR:
    import tempfile

    _CACHE_DIR = _OWN_CACHE = tempfile.mkdtemp(prefix="mumbo-test-xla-")
    os.environ[_CACHE_ENV] = _CACHE_DIR  # the workers and subprocesses inherit it
if _CACHE_DIR.lower() not in ("off", "0", "none", "false"):
    os.makedirs(_CACHE_DIR, exist_ok=True)
    # programs that compile in under 0.2 s are cheaper to compile than to read back
    _settings = [("jax_compilation_cache_dir", _CACHE_DIR), ("jax_persistent_cache_min_compile_time_secs", 0.2)]
    try:
        import filelock  # noqa: F401 (JAX locks the folder with it once a size limit is set)

        _settings.append(("jax_compilation_cache_max_size", 8 * 2**30))
    except ImportError:  # unlocked: a half-written entry fails to load and is compiled instead
        pass
    for _name, _value in _settings:
        jax.config.update(_name, _value)
        os.environ[_name.upper()] = str(_value)


def pytest_unconfigure(config):
    # the process that made the folder removes it (workers inherit the name, not the folder)
    if _OWN_CACHE and not os.environ.get("PYTEST_XDIST_WORKER"):
        import shutil

        shutil.rmtree(_OWN_CACHE, ignore_errors=True)


# ---------------------------------------------------------------- a hung test fails, with stacks
# pytest-timeout (pyproject: timeout, timeout_method = "thread") ends a test that runs past
# the limit, printing every thread's stack, so a hang costs minutes of CI, not its whole
# limit. The long studies marked `slow` are exempt.
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("slow") is not None and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(0))


# ---------------------------------------------------------------- compiled programs, released
# A worker keeps every program it compiles, and XLA maps memory for each one's code (about
# 1,100 maps per buffer size of the default rule, 2,100 before the library's compile options); a CI run and a local run lost a worker to a
# segmentation fault inside XLA's compiler some 900 tests in, past the kernel's
# vm.max_map_count (65,530), with about 20,000 maps at 15 % of the run. Between test files,
# once a worker holds 30 % of its limit, its compiled programs are dropped (the library's
# own guard, mumbo_jax.runtime.programs, acts at 50 %). Programs a later file needs compile again.
_MAP_SHARE = 0.3


def pytest_runtest_teardown(item, nextitem):
    if nextitem is not None and nextitem.path == item.path:
        return
    from mumbo_jax.runtime import programs

    maps, limit = programs.maps_in_use(), programs.map_limit()
    if maps is not None and limit and maps > _MAP_SHARE * limit:
        jax.clear_caches()


# ---------------------------------------------------------------- where the test time goes
# MUMBO_TEST_COMPILE_REPORT=<file.jsonl>: every test appends one line with its wall seconds and
# the seconds JAX spent tracing, lowering and compiling in this process during it (what
# shared fixtures and shared settings can save; each xdist worker compiles for itself).
_REPORT = os.environ.get("MUMBO_TEST_COMPILE_REPORT", "").strip()
if _REPORT:
    import json
    import time

    from jax import monitoring

    _COMPILE_EVENTS = ("/jax/core/compile/backend_compile_duration", "/jax/core/compile/jaxpr_trace_duration",
                       "/jax/core/compile/jaxpr_to_mlir_module_duration")
    _compile_s = [0.0]

    def _on_duration(event, duration, **_):
        if event in _COMPILE_EVENTS:
            _compile_s[0] += duration

    monitoring.register_event_duration_secs_listener(_on_duration)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        c0, t0 = _compile_s[0], time.perf_counter()
        yield
        with open(_REPORT, "a") as f:
            f.write(json.dumps({"test": item.nodeid, "wall_s": round(time.perf_counter() - t0, 3),
                                "compile_s": round(_compile_s[0] - c0, 3), "pid": os.getpid()}) + "\n")

    def pytest_runtest_logreport(report):
        if report.failed:  # as it happens, not only in the summary at the end
            with open(_REPORT, "a") as f:
                f.write(json.dumps({"test": report.nodeid, "failed": report.when,
                                    "error": str(report.longrepr)[-2000:]}) + "\n")


# ---------------------------------------------------------------- xdist: longest files first
# `--dist loadfile` (pyproject addopts) hands whole files to the workers in the order of
# xdist's scheduler: by number of tests, so files of one or two long tests (the sharding
# subprocess, the compile-cache subprocesses) came last, after the short files, and one
# worker ran them while the other had nothing left. Here the files go out longest first
# (seconds measured on the idle 2-core machine with the shared compilation cache; a file not
# listed, a new one, weighs 3 s a test), so the short files fill in at the end. Order only:
# every test runs, whole files per worker.

FILE_SECONDS = {
    "test_loop.py": 110, "test_gibbon.py": 80, "test_problems.py": 73, "test_readme.py": 62,
    "test_acquisitions.py": 54, "test_strategies.py": 54, "test_robust.py": 49, "test_baselines.py": 48,
    "test_maxvalue.py": 46, "test_costmodel.py": 46, "test_optimize.py": 43, "test_tuning.py": 40,
    "test_mf_gibbon.py": 40, "test_mf_kg.py": 39, "test_nuts.py": 37, "test_posterior.py": 37, "test_fit.py": 36,
    "test_batch.py": 33, "test_fit_dense.py": 33, "test_compile_cache.py": 31, "test_linalg.py": 30,
    "test_own_model.py": 26, "test_tune_failures.py": 24, "test_compare.py": 24, "test_unreliable_problems.py": 23,
    "test_cli.py": 23, "test_fit_options.py": 20, "test_tuning_async.py": 18, "test_toy_rule.py": 18,
    "test_rules.py": 18, "test_entry_guards.py": 18, "test_toy_batch_rule.py": 16,
    "test_tune_parameter_kinds.py": 14, "test_sigint.py": 14, "test_calibration.py": 13, "test_precision.py": 13,
    "test_decisions.py": 13, "test_run_lock.py": 9, "test_asktell_async.py": 8, "test_real_tasks.py": 7,
    "test_tune_warm_start.py": 7, "test_fuzz_inputs.py": 7, "test_floor_cv.py": 6, "test_asktell.py": 6,
    "test_programs.py": 5, "test_results.py": 4, "test_run_resume.py": 4, "test_cli_commands.py": 4,
    "test_asktell_state.py": 2, "test_layers.py": 1, "test_hpo.py": 1, "test_robust_report.py": 1,
    "test_target_floor.py": 1, "test_config.py": 1, "test_input_bounds.py": 1, "test_journal.py": 1,
    "test_docs.py": 1, "test_defaults.py": 1, "test_sharding.py": 1, "test_tune_reissue.py": 1, "test_schema.py": 1,
    "test_outcome_store.py": 1,
    # files not weighed on the idle machine (3 s a test put test_sparse.py, four long tests,
    # among the short files at the end): estimated from single-process runs on the loaded
    # machine, its seconds over 3 (the ratio for the files above measured both ways)
    "test_own_problem.py": 50, "test_sparse.py": 45, "test_prefetch.py": 45, "test_heldout_suite.py": 50,
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    if not hasattr(LoadFileScheduling, "_assign_work_unit"):  # a private hook: xdist's own order if it moves
        return None

    class LongestFirst(LoadFileScheduling):
        def _assign_work_unit(self, node):
            # a worker that replaces a crashed one is rescheduled (by xdist, when the crashed
            # worker's tests go back to the queue) before its collection is in: xdist 3.8
            # then raises KeyError (an INTERNALERROR that ends the run); it gets work when
            # its collection arrives
            if node not in self.registered_collections:
                return
            if not getattr(self, "_longest_first", False):
                def seconds(item):
                    scope, tests = item
                    return FILE_SECONDS.get(scope.rpartition("/")[2], 3 * len(tests))
                order = sorted(self.workqueue.items(), key=lambda item: -seconds(item))
                self.workqueue.clear()
                self.workqueue.update(order)
                self._longest_first = True
            super()._assign_work_unit(node)

    return LongestFirst(config, log)
