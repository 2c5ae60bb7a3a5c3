"""The command line, ``mumbo-jax COMMAND`` (or ``python -m mumbo_jax COMMAND``):

* ``run [CONFIG]``: a benchmark configuration (:mod:`mumbo_jax.run.runner`); CONFIG is a
  file or the name of a shipped config (default ``forrester``);
* ``compare CONFIG``: several strategies on one benchmark (:mod:`mumbo_jax.run.compare`);
* ``tune CONFIG`` / ``resume RUN_DIR``: crash-safe tuning of your own objective
  (:mod:`mumbo_jax.run.tune`);
* ``list``: the problems (dims, fidelities, costs), strategies (the fidelity kinds they
  support), compare presets and shipped configs;
* ``config-help [run|compare|tune]``: every key of a configuration, from its schema;
* ``--version``.

Exit codes: 0 done; 1 a tuning run aborted (its objective failed
``max_consecutive_failures`` times in a row, or no evaluation succeeded); 2 invalid
configuration, arguments or output folder, or a run folder in use by another command
(one line on stderr, before any work); 130 interrupted (Ctrl-C ends any command within a
second).

Before JAX starts, ``XLA_FLAGS`` is set to single-threaded CPU kernels (repeatable
runs) unless the user set it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import threading
import time
import tomllib
import warnings
from pathlib import Path

from mumbo_jax.run.schema import ConfigError  # light: nothing here may start JAX before main() checks the lock

__all__ = ["main", "list_text", "config_help", "deterministic_xla_flags", "DETERMINISTIC_XLA_FLAGS",
           "enable_compilation_cache"]

CONFIG_KINDS = ("run", "compare", "tune")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return value


def _parser() -> argparse.ArgumentParser:
    from mumbo_jax import __version__

    parser = argparse.ArgumentParser(
        prog="mumbo-jax", description="Multi-fidelity Bayesian optimisation with MUMBO, in JAX. "
                                      "Exit codes: 0 done, 1 tuning aborted, 2 bad input, 130 interrupted.")
    parser.add_argument("--version", action="version", version=f"mumbo-jax {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="run a benchmark configuration (TOML file or shipped name)",
                         description="Run a benchmark configuration; write results.json, evaluations.csv and "
                                     "regret.png. Budgets count the cost spent AFTER the initial design.")
    run.add_argument("config", nargs="?", default="forrester", metavar="CONFIG",
                     help="a TOML file or a shipped config name (mumbo-jax list); default: forrester")
    run.add_argument("--seeds", type=_positive_int, default=None, metavar="N", help="seeds 0..N-1 (overrides)")
    run.add_argument("--budget", type=_positive_float, default=None,
                     help="cost per seed after the initial design (overrides)")
    run.add_argument("--max-evals", type=_positive_int, default=None, metavar="N",
                     help="cap on BO evaluations per seed (overrides)")
    run.add_argument("--out", default=None, metavar="DIR", help="output folder (overrides [run] out)")
    run.add_argument("--resume", action="store_true",
                     help="keep the finished seeds of OUT/results.json (same configuration apart from --seeds) "
                          "and run only the missing ones")
    run.add_argument("--force", action="store_true",
                     help="overwrite an earlier run in OUT (or, with --resume, one of another configuration)")
    run.add_argument("--steps", "--all-seeds", dest="steps", action="store_true",
                     help="also print a line per BO step of every seed")
    run.add_argument("--shard", action="store_true",
                     help="seeds in lock-step, sharded over every device (of every process with --coordinator)")
    run.add_argument("--coordinator", default=None, metavar="HOST:PORT",
                     help="multi-process run: process 0's address (env MUMBO_COORDINATOR); implies --shard")
    run.add_argument("--num-processes", type=_positive_int, default=None, metavar="N",
                     help="multi-process run: processes in all (env MUMBO_NUM_PROCESSES)")
    run.add_argument("--process-id", type=int, default=None, metavar="I",
                     help="multi-process run: this process, 0..N-1 (env MUMBO_PROCESS_ID); process 0 writes the output")
    tune = sub.add_parser("tune", help="tune your own objective, crash-safe (journaled; see `resume`)",
                          description="Tune a Python objective from a TOML config (`mumbo-jax config-help tune`); "
                                      "every evaluation is journaled in the run folder. Budgets INCLUDE the "
                                      "initial design.")
    tune.add_argument("config", metavar="CONFIG", help="a TOML file or a shipped name (e.g. tune_example)")
    tune.add_argument("--out", default=None, metavar="RUN_DIR", help="run folder (overrides [run] out)")
    tune.add_argument("--warm-start", action="append", default=None, metavar="FILE",
                      help="earlier evaluations told to the optimiser first: another run's journal (or run folder) "
                           "or a CSV with a column per parameter and 'score' (optional 'z', 'cost'); repeatable")
    resume = sub.add_parser("resume", help="continue a killed or interrupted tuning run from its journal",
                            description="Continue a tuning run from RUN_DIR/journal.jsonl (or rewrite the "
                                        "results of a finished one).")
    resume.add_argument("run_dir", metavar="RUN_DIR", help="the run folder of `mumbo-jax tune`")
    for p in (tune, resume):
        p.add_argument("--workers", type=int, default=None, metavar="N",
                       help="evaluations at once (overrides [workers] n)")
        p.add_argument("--executor", default=None, choices=("process", "dask"),
                       help="where they run: local worker processes or a Dask cluster (overrides [workers] executor)")
        p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="the Dask scheduler, e.g. tcp://host:8786 (implies --executor dask)")
    cmp = sub.add_parser("compare", help="compare strategies on a benchmark over seeds (TOML)",
                         description="Run every strategy of a comparison config over the same seeds and write "
                                     "results.json, comparison.png and table.md.")
    cmp.add_argument("config", metavar="CONFIG", help="a TOML file or a shipped name (e.g. compare_currin)")
    cmp.add_argument("--seeds", type=_positive_int, default=None, metavar="N", help="seeds 0..N-1 (overrides)")
    cmp.add_argument("--budget", type=_positive_float, default=None,
                     help="cost after the initial design (overrides)")
    cmp.add_argument("--max-evals", type=_positive_int, default=None, metavar="N",
                     help="cap on BO evaluations per seed (overrides)")
    cmp.add_argument("--strategies", default=None, metavar="A,B,...",
                     help="run only these labels of the config, comma-separated")
    cmp.add_argument("--out", default=None, metavar="DIR", help="output folder (overrides [compare] out)")
    cmp.add_argument("--workers", type=_positive_int, default=1, metavar="N",
                     help="strategies run in N processes at once, each pinned to its own core; with fewer "
                     "strategies than N, each strategy's seeds are split over them (default 1)")
    cmp.add_argument("--resume", action="store_true",
                     help="keep the strategies already in OUT/results.json (same problem, budget, seeds, cap)")
    cmp.add_argument("--force", action="store_true",
                     help="overwrite an earlier comparison in OUT (or, with --resume, one of another configuration)")
    cmp.add_argument("--render-only", action="store_true",
                     help="only redraw table.md and comparison.png from OUT/results.json")
    sub.add_parser("list", help="list problems, strategies, compare presets and shipped configs")
    hlp = sub.add_parser("config-help", help="every key of a configuration: type, default, range, meaning")
    hlp.add_argument("kind", nargs="?", choices=CONFIG_KINDS, default=None, help="which configuration (default all)")
    hlp.add_argument("--markdown", action="store_true", help="markdown tables (as in the README)")
    return parser


def _error(message) -> int:
    print(f"mumbo-jax: error: {message}", file=sys.stderr)
    return 2


def _load_noting_old_keys(load, path):
    """``load(path)``, printing the DeprecationWarnings of old key names (which Python's
    default filters hide) as one line on stderr; other warnings are shown as usual."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = load(path)
    old = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)))
    for w in caught:
        if not issubclass(w.category, DeprecationWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if old:
        print(f"mumbo-jax: note: {path} uses old key names, read as today's (`mumbo-jax config-help` lists the "
              f"new ones): {'; '.join(old)}", file=sys.stderr, flush=True)
    return cfg


# ---------------------------------------------------------------------------- list, config-help


def list_text() -> str:
    """What ``mumbo-jax list`` prints."""
    from mumbo_jax.benchmarks import problems
    from mumbo_jax.bo import batch, incumbent, rules
    from mumbo_jax.gp import models
    from mumbo_jax.run import config

    lines = ["problems (fidelity 0 / the upper bound is the target):"]
    for p in problems.PROBLEMS.values():
        if p.is_discrete:
            fid = f"{p.n_fidelities} discrete fidelities, costs {', '.join(f'{c:g}' for c in p.costs)}"
        else:
            lo, hi = p.fidelity_bounds
            fid = (f"continuous fidelity in [{lo:g}, {hi:g}], costs {float(problems.cost(p, lo)):g} "
                   f"(z = {lo:g}) to {float(problems.cost(p, hi)):g} (z = {hi:g})")
        lines.append(f"  {p.name:<18} d={p.dim}  {fid}; {'max' if p.maximise else 'min'}imised, "
                     f"optimum {p.optimum_value:g}")
    lines.append("strategies (fidelity kinds they support):")
    for s, rule in rules.RULES.items():
        kinds = " and ".join(rule.kinds) + (" only" if len(rule.kinds) == 1 else "")
        target = ", queries the target only" if s in rules.TARGET_ONLY else ""
        lines.append(f"  {s:<10} {kinds}{target}")
    lines.append("compare presets (labels for [compare] strategies):")
    for label, preset in config.STRATEGY_PRESETS.items():
        extra = ", ".join(line for r, table in preset.items() if r != "strategy" for line in _dotted(r, table))
        lines.append(f"  {label:<15} {preset['strategy']}{f' ({extra})' if extra else ''}")
    lines.append("batch rules ([acquisition] batch_rule, for batch_size > 1):")
    lines += [f"  {name:<15} {rule.summary}" for name, rule in batch.BATCH_RULES.items()]
    lines.append("recommendation rules ([acquisition] incumbent_rule):")
    lines += [f"  {name:<15} {rule.summary}" for name, rule in incumbent.INCUMBENT_RULES.items()]
    lines.append("models (the model key of a config; the first of each fidelity kind is the default):")
    for kind, cls in models.MODELS.items():
        options = models.model_options(kind)
        lines.append(f"  {kind:<15} {'discrete fidelities' if cls.discrete else 'a continuous fidelity'}"
                     + (f"; options {', '.join(options)}" if options else ""))
    lines.append(f"shipped configs ({config.CONFIG_DIR}; `mumbo-jax run NAME`, `compare NAME`, `tune NAME`):")
    lines.append("  " + ", ".join(config.packaged_configs()))
    return "\n".join(lines)


def _dotted(prefix: str, value) -> list[str]:
    """``key = value`` for each value of a nested table, its keys dotted
    (``options.mtbo.samples = 200``)."""
    if isinstance(value, dict):
        return [line for k, v in value.items() for line in _dotted(f"{prefix}.{k}", v)]
    return [f"{prefix} = {value!r}"]


def config_help(kind: str | None = None, markdown: bool = False) -> str:
    """The reference of one configuration kind (or all), from the schemas."""
    from mumbo_jax.run import config, schema, settings_config
    from mumbo_jax.run.tune import config as tune_config

    options = settings_config.option_sections()  # the rules' knobs, from the table of rules
    sections = {"run": config.RUN_SECTIONS + options, "compare": config.COMPARE_SECTIONS[:-1] + options
                + config.COMPARE_SECTIONS[-1:], "tune": tune_config.TUNE_SECTIONS + options}
    render = schema.render_markdown if markdown else schema.render_text
    parts, seen = [], {}
    for name in ([kind] if kind else CONFIG_KINDS):
        title = f"mumbo-jax {name}"
        parts.append(f"#### `{title}`\n" if markdown else f"== {title} ==")
        new = [s for s in sections[name] if id(s) not in seen]  # the [settings.*] sections are shared
        parts.append(render(new))
        parts += [f"{'`' * markdown}[{s.name}]{'`' * markdown}: as for {seen[id(s)]} above.\n"
                  for s in sections[name] if id(s) in seen]
        seen.update({id(s): title for s in new})
    return "\n".join(parts).rstrip() + "\n"


# ---------------------------------------------------------------------------- commands


def _run_command(args) -> int:
    from mumbo_jax.run import runner
    from mumbo_jax.run.config import find_config, load_config
    from mumbo_jax.run.output import prepare_output

    try:
        cfg = _load_noting_old_keys(lambda path: load_config(path).replace(
            seeds=args.seeds, budget=args.budget, max_evals=args.max_evals, out=args.out), find_config(args.config))
        prepare_output(cfg.out)
    except ConfigError as e:
        return _error(e)
    from mumbo_jax.runtime import sharding
    try:
        multi = sharding.initialize(args.coordinator, args.num_processes, args.process_id)
    except ValueError as e:
        return _error(e)
    status: dict = {}
    _on_interrupt(lambda: _run_interrupted(args, cfg, status))
    try:
        runner.run_config(cfg, steps=args.steps, batching="shard" if (args.shard or multi) else None,
                          resume=args.resume, force=args.force, status=status)
    except ConfigError as e:
        return _error(e)
    except KeyboardInterrupt:
        return _interrupted()
    return 0


def _run_interrupted(args, cfg, status: dict) -> str:
    """The line a Ctrl-C of ``run`` prints: the files on disk (only those written) and
    the command that continues."""
    again = "mumbo-jax " + shlex.join([a for a in args.argv if a not in ("--force", "--resume")] + ["--resume"])
    out, done, files = Path(cfg.out), status.get("finished", []), status.get("files", [])
    if not files:
        return (f"mumbo-jax: interrupted before the first seed finished; no results were written to {out}/; "
                f"`{again}` starts again")
    return (f"mumbo-jax: interrupted; seed{'s' * (len(done) != 1)} {', '.join(map(str, done))} of {cfg.seeds} "
            f"finished, in {', '.join(str(out / f) for f in files)}; `{again}` runs the others")


def _tune_command(args) -> int:
    """``tune`` and ``resume``: exit 0 done, 1 aborted by consecutive failures, 2 bad
    config / journal / objective / output folder, 130 interrupted (the journal keeps
    every finished evaluation)."""
    from mumbo_jax.run import tune
    from mumbo_jax.run.config import find_config
    from mumbo_jax.run.journal import JournalError

    run_dir = getattr(args, "run_dir", None)
    _on_interrupt(lambda: _tune_interrupted(run_dir))
    try:
        if args.command == "tune":
            cfg = _load_noting_old_keys(tune.load_tune_config, find_config(args.config))
            run_dir = args.out or cfg.out
            results = tune.tune(cfg, out=run_dir, workers=args.workers, executor=args.executor,
                                scheduler=args.scheduler, warm_start=args.warm_start)
        else:
            results = tune.resume(run_dir, workers=args.workers, executor=args.executor, scheduler=args.scheduler)
    except (ConfigError, JournalError) as e:
        return _error(e)
    except KeyboardInterrupt:
        return _interrupted()
    if results["aborted"]:
        first = next((r["error"] for r in results["evaluations"] if r["status"] == "failed"), "")
        ok = results["counts"]["ok"]
        reason = results["stop_reason"] or ""
        print(f"mumbo-jax: error: the run was aborted: {reason}"
              + ("" if "no evaluation succeeded" in reason else
                 "; no evaluation succeeded" if ok == 0 else f"; {ok} evaluations succeeded before")
              + f" (first error: {first[:200]})", file=sys.stderr)
        return 1
    return 0


JOURNAL_NAME = "journal.jsonl"  # mumbo_jax.run.journal.JOURNAL_NAME, without importing it at Ctrl-C


def _tune_interrupted(run_dir) -> str:
    """The line a Ctrl-C of ``tune`` or ``resume`` prints."""
    if run_dir is None or not (Path(run_dir) / JOURNAL_NAME).is_file():
        return "mumbo-jax: interrupted before the run started; nothing was evaluated"
    return (f"mumbo-jax: interrupted; every finished evaluation is in {Path(run_dir) / JOURNAL_NAME}; "
            f"`mumbo-jax resume {shlex.quote(str(run_dir))}` continues")


def _compare_command(args) -> int:
    """``compare``: exit 0 done, 2 bad config, arguments or output folder, 130 interrupted."""
    from mumbo_jax.run import compare
    from mumbo_jax.run.config import find_config, load_compare_config
    from mumbo_jax.run.output import prepare_output

    try:
        cfg = _load_noting_old_keys(lambda path: load_compare_config(path).replace(
            seeds=args.seeds, budget=args.budget, max_evals=args.max_evals, out=args.out), find_config(args.config))
        only = None if args.strategies is None else [s.strip() for s in args.strategies.split(",") if s.strip()]
        if only is not None and (not only or any(s not in cfg.strategies for s in only)):
            raise ConfigError(f"--strategies {args.strategies!r}: labels must be among {', '.join(cfg.strategies)}")
        prepare_output(cfg.out)
    except ConfigError as e:
        return _error(e)
    if not args.render_only:
        _on_interrupt(lambda: _compare_interrupted(args, cfg))
    try:
        if args.render_only:
            compare.render(cfg.out)
        else:
            compare.run_compare(cfg, only=only, resume=args.resume, workers=args.workers, force=args.force)
    except ValueError as e:
        return _error(e)
    except KeyboardInterrupt:
        return _interrupted()
    return 0


def _compare_interrupted(args, cfg) -> str:
    """The line a Ctrl-C of ``compare`` prints."""
    again = "mumbo-jax " + shlex.join([a for a in args.argv if a not in ("--force", "--resume")] + ["--resume"])
    results = Path(cfg.out) / "results.json"
    if not results.is_file():
        return (f"mumbo-jax: interrupted before the first strategy finished; no results were written to "
                f"{cfg.out}/; `{again}` starts again")
    return f"mumbo-jax: interrupted; {results} holds the strategies that finished; `{again}` runs the others"


def enable_compilation_cache() -> str | None:
    """Keep compiled XLA programs on disk, as the library's drivers do
    (:func:`mumbo_jax.runtime.compilation_cache.enable`: ``$MUMBO_JAX_CACHE``, default
    ``~/.cache/mumbo-jax/xla``; ``off`` disables it; a folder configured for JAX is kept),
    writing every program, however fast it compiled (a CLI process runs only the library's
    programs). Returns the folder in use, or None."""
    from mumbo_jax.runtime import compilation_cache

    return compilation_cache.enable(min_compile_time_s=0.0)


# one XLA thread on CPU: XLA's multi-threaded Eigen kernels may reduce in another order
# from run to run; single-threaded, a run repeats to the last bit
DETERMINISTIC_XLA_FLAGS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def deterministic_xla_flags(environ=None) -> bool:
    """Set ``XLA_FLAGS`` to :data:`DETERMINISTIC_XLA_FLAGS` unless the user has set
    ``XLA_FLAGS`` (even to an empty string, which keeps XLA's multi-threaded defaults).
    Returns whether it set them. JAX reads ``XLA_FLAGS`` when its backend starts (the
    first computation), so this runs first thing in :func:`main`."""
    environ = os.environ if environ is None else environ
    if "XLA_FLAGS" in environ:
        return False
    environ["XLA_FLAGS"] = DETERMINISTIC_XLA_FLAGS
    return True


INTERRUPT_GRACE_S = 0.7  # after Ctrl-C, how long the main thread may take to stop by itself

# what a Ctrl-C prints, once: each command sets its message (what is on disk, how to
# continue); the main thread (KeyboardInterrupt) or the watcher, whichever comes first, prints it
_INTERRUPT = {"message": lambda: "mumbo-jax: interrupted", "once": threading.Lock()}


def _on_interrupt(message) -> None:
    """Set the line a Ctrl-C of the running command prints (``message()``, called then)."""
    _INTERRUPT["message"] = message


def _interrupted() -> int:
    """Print the command's interrupt line unless it was printed already; return 130."""
    if _INTERRUPT["once"].acquire(blocking=False):
        try:
            line = _INTERRUPT["message"]()
        except Exception:  # the message must never hide the interrupt
            line = "mumbo-jax: interrupted"
        print(line, file=sys.stderr, flush=True)
    return 130


def interrupt_watcher():
    """Make Ctrl-C (SIGINT) end the process within a second, even while the main thread
    is inside a long XLA computation (a compiled BO loop, a fit), where Python cannot
    raise KeyboardInterrupt until the computation returns.

    The signal's C handler writes to a wakeup pipe (:func:`signal.set_wakeup_fd`) whatever
    the main thread is doing; a daemon thread reading it gives the main thread
    :data:`INTERRUPT_GRACE_S` to stop by itself (KeyboardInterrupt, exit code 130), then
    ends the process with exit code 130. Either way the command's one line is printed
    once (what is on disk, and the command that continues), and the watcher releases the
    run-folder lock (its file removed) before it ends the process. Safe for every
    command: ``run`` and ``compare`` write their results (and ``run`` its plot)
    atomically after each seed or strategy, and a tuning journal
    survives a kill at any moment. Returns ``stop()``, which restores the previous
    wakeup fd and ends the thread (a no-op outside the main thread)."""
    from mumbo_jax.run import lock  # imported now: the watcher thread must not import while the main one may

    _INTERRUPT.update(message=lambda: "mumbo-jax: interrupted", once=threading.Lock())
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    # a parent that spawned this process with SIGINT blocked (a library's helper-process
    # launch blocks it around the fork) would leave Ctrl-C pending forever: unblock it here,
    # before JAX starts its threads (they inherit this thread's mask)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        previous = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except ValueError:
        os.close(r), os.close(w)
        return lambda: None

    def watch():
        while True:
            try:
                data = os.read(r, 64)
            except OSError:
                return
            if not data:
                return
            if int(signal.SIGINT) in data:
                time.sleep(INTERRUPT_GRACE_S)
                _interrupted()  # unless the main thread said it already
                lock.release_all()  # a command that ends removes its lock file, Ctrl-C included
                os._exit(130)

    thread = threading.Thread(target=watch, name="mumbo-jax-sigint", daemon=True)
    thread.start()

    def stop():
        signal.set_wakeup_fd(previous)
        os.close(w)
        thread.join(timeout=1.0)
        os.close(r)

    return stop


def _folder_of(args) -> Path | None:
    """The folder a writing command will lock, found without the heavy imports: the
    ``--out`` or ``RUN_DIR`` argument, else the config file's ``out`` or its default
    ``runs/<config stem>``. None when it cannot tell (the command's own checks decide)."""
    if args.command == "resume":
        return Path(args.run_dir)
    if getattr(args, "out", None):
        return Path(args.out)
    path = Path(args.config)
    if not path.exists():  # a shipped config by name, as config.find_config finds it
        stem = path.name[:-5] if path.name.endswith(".toml") else path.name
        path = Path(__file__).resolve().parent / "configs" / f"{stem}.toml"
        if Path(args.config).parent not in (Path("."), Path("configs")) or not path.is_file():
            return None
    try:
        with open(path, "rb") as fh:
            out = tomllib.load(fh).get("compare" if args.command == "compare" else "run", {}).get("out")
    except (OSError, ValueError, AttributeError):
        return None
    if out is None or (args.command == "tune" and out == ""):
        return Path("runs") / path.stem
    return Path(out) if isinstance(out, str) and out else None


def _refuse_if_held(args) -> int | None:
    """Refuse a writing command whose folder another process holds (exit 2, naming the
    holder: :func:`mumbo_jax.run.lock.check_free`) before JAX is imported; None: go on."""
    from mumbo_jax.run import lock

    if args.command not in ("run", "compare", "tune", "resume"):
        return None
    folder = _folder_of(args)
    if folder is None:
        return None
    try:
        lock.check_free(folder)
    except ConfigError as e:
        return _error(e)
    return None


def main(argv=None) -> int:
    """Entry point of ``mumbo-jax`` and ``python -m mumbo_jax``; returns the exit code.

    Before JAX starts: ``XLA_FLAGS`` single-threaded on CPU for repeatable runs, unless
    the user set ``XLA_FLAGS`` (:func:`deterministic_xla_flags`). Ctrl-C ends any
    command within a second (:func:`interrupt_watcher`)."""
    deterministic_xla_flags()
    args = _parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for the line that says how to continue
    refused = _refuse_if_held(args)  # before the heavy imports: a refusal takes a fraction of a second
    if refused is not None:
        return refused
    if args.command in ("run", "compare", "tune", "resume"):
        stop = interrupt_watcher()
        try:
            return _main(args)
        finally:
            stop()
    return _main(args)


def _main(args) -> int:
    import jax

    jax.config.update("jax_enable_x64", True)
    if args.command == "list":
        print(list_text())
        return 0
    if args.command == "config-help":
        print(config_help(args.kind, args.markdown), end="")
        return 0
    # the step clock's host callbacks inside the compiled while_loop can hang the CPU
    # client under asynchronous dispatch (jax-ml/jax#25861): dispatch synchronously
    jax.config.update("jax_cpu_enable_async_dispatch", False)
    enable_compilation_cache()
    from mumbo_jax.runtime import process_options  # the library's other opt-in process behaviours, as for the cache

    process_options.enable(cache=False)
    if args.command == "compare":
        return _compare_command(args)
    if args.command in ("tune", "resume"):
        return _tune_command(args)
    return _run_command(args)


if __name__ == "__main__":
    sys.exit(main())
