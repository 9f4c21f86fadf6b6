"""Command line: ``xlalint [options] PATH[::NAME] ...`` and ``xlalint ops``."""

from __future__ import annotations

import argparse
import os
import select
import sys
from dataclasses import replace
from pathlib import Path

from xlalint.tracing.cache import clear
from xlalint.cli.common import (EXIT_FINDINGS, EXIT_OK, Interrupted, UsageParser, add_config_flag, add_fix_flags,
                                add_format_flag, apply_baseline_flags, final_exit_code, fix_and_report,
                                interrupts_held, known_baseline, say_if_outside_range, signals_interrupt)
from xlalint.settings.config import ConfigError, config_targets, find_config, load_config
from xlalint.report import EMITTERS
from xlalint.core.results import Report
from xlalint.cli.progress import progress_for
from xlalint.core.specs import SpecError, parse_spec
from xlalint.settings import table as settings
from xlalint.settings.table import BY_NAME, SETTINGS, VERIFY_DEVICES, Options
from xlalint.core.support import cache_dir
from xlalint.version import VERSION

def _verify_alone(argv: list[str]) -> list[str]:
    """``--verify m.py`` verifies m.py on the default device: a value that names no device stays a path."""
    argv = list(argv)
    for i, token in enumerate(argv[:-1]):
        if token == "--":
            break
        if token == "--verify" and argv[i + 1] not in VERIFY_DEVICES:
            argv[i] = "--verify=auto"
    return argv


def _check_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="xlalint",
        description="Find what keeps TensorFlow code from compiling under XLA, with the line to change.",
        epilog="Also: `xlalint ops [--device D] [OP ...]` prints the XLA support table; `xlalint run SCRIPT "
        "[ARGS ...]` runs a training script up to its compiled steps and checks them there; `xlalint merge "
        "REPORT ...` joins the JSON reports of --shard runs; `xlalint server` is the language server for editors. "
        "Settings can live in pyproject.toml under [tool.xlalint]; flags override them. "
        "Exit codes: 0 nothing blocks XLA, 1 error findings or files that could not be checked (with "
        "--strict also entries that could not be traced and files without entry points), 2 usage error "
        "or no file could be checked.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH[::NAME]",
                        help="files or directories; FILE::NAME traces that function or model only "
                        "(default: the entries in [tool.xlalint], else .)")
    parser.add_argument("--spec", action="append", default=[], metavar="DTYPE[DIMS]",
                        help='argument spec for every FILE::NAME given, in order, e.g. "float32[8,224,224,3]"')
    add_format_flag(parser)
    parser.add_argument("--static", action="store_true",
                        help="fast mode for pre-commit: find blockers by API name with libcst; never imports "
                        "TensorFlow or runs your code (fewer findings than the full analysis)")
    add_fix_flags(parser, "the given paths")
    parser.add_argument("--no-cache", action="store_true", help="trace every file again")
    parser.add_argument("--clear-cache", action="store_true",
                        help="delete the cached results, then check the PATHs given, if any")
    parser.add_argument("--write-baseline", metavar="FILE",
                        help="record this run's findings in FILE; later runs with --baseline FILE report only new ones")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress on stderr (otherwise a status line on a terminal, one line per file in logs)")
    add_config_flag(parser)
    parser.add_argument("--version", action="version", version=f"xlalint {VERSION}")
    settings.add_flags(parser.add_argument_group("settings", "each also a [tool.xlalint] key where one is named"))
    return parser


def _cache_directory(args) -> str:
    return args.cache_dir or str(cache_dir() / "results")


def _targets(paths: list[str], specs: list[str]) -> tuple[list[str], dict[str, dict[str, list[str] | None]], set[str]]:
    """Paths, named targets per file, and the files given only as FILE::NAME (trace just those)."""
    plain: list[str] = []
    targets: dict[str, dict[str, list[str] | None]] = {}
    whole: set[str] = set()
    for item in paths:
        path, sep, name = item.partition("::")
        plain.append(path)
        if sep:
            targets.setdefault(os.path.abspath(path), {})[name] = specs or None
        else:
            whole.add(os.path.abspath(path))
    return plain, targets, set(targets) - whole


def _options(args, parser) -> tuple[list[str], Options]:
    """The paths to check and the run's options: flags, else [tool.xlalint], else the defaults."""
    given = {setting.name: getattr(args, setting.name) for setting in SETTINGS if setting.flags and not setting.run_only}
    try:
        for spec in args.spec:
            parse_spec(spec)
        config = load_config(Path(args.config) if args.config else find_config(args.paths))
        from_config = {k: v for k, v in config.values.items() if not (args.static and k == "min_coverage")}
        values = settings.merge(given, from_config)
        values["cache_dir"] = None if args.no_cache else _cache_directory(args)
        run = settings.options(values, root=str(config.root), progress=progress_for(sys.stderr, args.quiet))
    except (SpecError, ConfigError, ValueError) as error:
        parser.error(str(error))
    if args.spec and not any("::" in p for p in args.paths):
        parser.error("--spec needs a target named as FILE::NAME")
    declared = config_targets(config)
    paths, targets, only_named = _targets(args.paths or list(declared) or ["."], args.spec)
    for path, named in declared.items():  # the config's entries join whenever their file is checked
        for name, specs in named.items():
            targets.setdefault(path, {}).setdefault(name, specs)
    return paths, replace(run, targets=targets, only_named=only_named)


EXIT_READER_GONE = 141  # what a shell shows for a writer that SIGPIPE ended (128 + 13)


def main(argv: list[str] | None = None) -> int:
    """The command line. ``xlalint ... | head`` ends quietly once the reader is gone; SIGPIPE keeps Python's
    setting (ignored), so that a write to a server that died is an error xlalint handles, not its end."""
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except BrokenPipeError:
        if not reader_gone(sys.stdout):
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the flush at exit must not fail again
        return EXIT_READER_GONE


def reader_gone(stream) -> bool:
    """Whether ``stream`` is a pipe whose reading end is closed (``poll`` reports an error on it)."""
    try:
        poller = select.poll()
        poller.register(stream.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll here, or no descriptor
        return False


def _main(argv: list[str]) -> int:
    if argv and argv[0] == "ops" and not os.path.exists("ops"):
        return _ops_main(argv[1:])
    if argv and argv[0] == "doctor" and not os.path.exists("doctor"):
        return _doctor_main(argv[1:])
    if argv and argv[0] == "merge" and not os.path.exists("merge"):
        from xlalint.cli.merge import main as merge_main

        return merge_main(argv[1:])
    if argv and argv[0] == "server" and not os.path.exists("server"):
        from xlalint.lsp.server import main as server_main

        return server_main(argv[1:])
    if argv and argv[0] == "run" and not os.path.exists("run"):
        from xlalint.cli.run import main as run_main

        return run_main(argv[1:])
    parser = _check_parser()
    args = parser.parse_intermixed_args(_verify_alone(argv))
    if args.clear_cache:
        files, size = clear(_cache_directory(args))
        if not args.quiet:
            print(f"xlalint: removed {files} cached file(s), {size / 2**20:.1f} MB", file=sys.stderr)
        if not args.paths:
            return EXIT_OK
    paths, options = _options(args, parser)
    if args.static and (args.verify or args.save_graphs or args.spec or any("::" in p for p in args.paths)
                        or options.min_coverage):
        parser.error("--static checks source text only: FILE::NAME, --spec, --verify, --save-graphs and "
                     "--min-coverage need tracing")
    known = known_baseline(parser, args, options.baseline)
    try:
        with signals_interrupt():
            report = _check(paths, options, args.static)
    except Interrupted as stop:  # every worker is gone by now: say the run was cut short
        report = Report(device=options.device, interrupted=stop.signal.name)
        if options.progress:
            options.progress.clear()
        print(EMITTERS[args.format](report))
        print(f"xlalint: run cut short by {stop.signal.name}", file=sys.stderr)
        return 128 + stop.signal
    if options.progress:
        options.progress.clear()
    say_if_outside_range(report.tensorflow, args.quiet)
    apply_baseline_flags(parser, report, args, options, known)
    if args.diff or args.fix:
        return fix_and_report(report, args, paths, options.strict)
    if args.format == "text":
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        from xlalint.report.text import emit as emit_text

        print(emit_text(report, color=color))
    else:
        print(EMITTERS[args.format](report))
    return final_exit_code(report, options.min_coverage, options.strict)


def _check(paths: list[str], options: Options, static: bool) -> Report:
    """The run's report; the tracing servers start importing TensorFlow before the analysis is imported."""
    if static:
        with interrupts_held():
            from xlalint.engine.analysis import static_report

        return static_report(paths, options)
    from xlalint.engine.plan import plan_run

    with plan_run(paths, options, _tracer(paths, options)) as plan:
        with interrupts_held():
            from xlalint.engine.analysis import analyze  # libcst, the rules: a second, while the servers start

        return analyze(plan, options)


def _tracer(paths: list[str], options: Options):
    """How the files are traced: on a running ``xlalint server``'s warm server for these paths where one answers
    (``xlalint.tracing.shared``; not with --verify, whose devices a server chose when it started, nor for more files
    than ``worth_sharing`` gives it at this ``--jobs``), else by servers of this run's own. The server is asked only
    once the files to trace are known: none is connected to when the cache answers every file."""
    from xlalint.tracing.workers import start_worker

    if options.verify:
        return start_worker

    def tracer(requests, timeout, progress=None, jobs=1, max_memory_mb=0):
        from xlalint.tracing.shared import SharedRun, find_shared, worth_sharing

        connection = find_shared(paths) if worth_sharing(len(requests), jobs) else None
        if connection is None:
            return start_worker(requests, timeout, progress, jobs, max_memory_mb)
        if options.progress:
            print("xlalint: tracing on the running xlalint server (XLALINT_NO_SERVER=1: not)", file=sys.stderr)
        return SharedRun(connection, requests, timeout, progress, max_memory_mb)

    return tracer


def _ops_main(argv: list[str]) -> int:
    from xlalint.cli.ops import render
    from xlalint.core.support import installed_tensorflow, load_support

    parser = UsageParser(prog="xlalint ops", description="Print the XLA support table.")
    parser.add_argument("ops", nargs="*", metavar="OP", help="op types to show (default: all)")
    device = BY_NAME["device"]
    parser.add_argument("--device", choices=device.choices, default=device.default)
    args = parser.parse_args(argv)
    text, code = render(load_support(installed_tensorflow()), args.device, args.ops)
    print(text)
    return code


def _doctor_main(argv: list[str]) -> int:
    from xlalint.doctor import CHOICES, diagnose
    from xlalint.doctor.render import text, to_json

    parser = argparse.ArgumentParser(
        prog="xlalint doctor", description="Check that XLA works in this environment; say what to change.",
        epilog="Exit codes: 0 XLA works on the required devices, 1 problems (each with its fix), 2 usage error.")
    parser.add_argument("--device", choices=CHOICES, default="all", help="devices to check (default: all)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--require", choices=CHOICES, metavar="DEVICE",
                        help=f"fail unless XLA works on this device ({', '.join(CHOICES)}); default: the --device "
                        "named, or every device present")
    args = parser.parse_args(argv)
    diagnosis = diagnose(args.device, args.require)
    print(text(diagnosis) if args.format == "text" else to_json(diagnosis))
    return EXIT_OK if diagnosis.ok else EXIT_FINDINGS
