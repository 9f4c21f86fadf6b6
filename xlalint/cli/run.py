"""``xlalint run [OPTIONS] SCRIPT [ARGS...]`` and ``xlalint run [OPTIONS] -m MODULE [ARGS...]``.

Options come before the script; everything after it is the script's own ``sys.argv[1:]``. With no
script, the commands given with ``--command`` (else those listed under ``run`` in ``[tool.xlalint]``) run,
on one server and ``--jobs`` at a time, reported together (``run/listed.py``).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from pathlib import Path

from xlalint.settings import table as settings
from xlalint.cli.common import (Interrupted, UsageParser, add_config_flag, add_fix_flags, add_format_flag,
                                apply_baseline_flags, final_exit_code, fix_and_report, known_baseline,
                                say_if_outside_range, signals_interrupt)
from xlalint.settings.config import Config, ConfigError, find_config, load_config
from xlalint.inputs.files import read_source
from xlalint.inputs.module_files import module_file
from xlalint.inputs.notebooks import is_notebook
from xlalint.report import EMITTERS
from xlalint.core.results import Report
from xlalint.run.listed import listed_command, together
from xlalint.core.wire import DEFAULT_PATIENCE
from xlalint.settings.table import COUNT, SECONDS, SettingError

DEFAULT_RUN_TIMEOUT_S = 120.0

FLAGS = ("device", "select", "ignore", "baseline", "min_coverage", "strict", "save_graphs",
         "first_step", "jobs")  # settings that `run` takes
PATHS = ("baseline", "write_baseline", "save_graphs")  # flags naming files, from the working directory
FROM_CONFIG = ("device", "select", "ignore", "per_file_ignores", "strict", "jobs")  # what it reads from [tool.xlalint]


def _parser() -> UsageParser:
    parser = UsageParser(
        prog="xlalint run",
        usage="xlalint run [OPTIONS] SCRIPT [ARGS...] | xlalint run [OPTIONS] -m MODULE [ARGS...] | "
              "xlalint run [OPTIONS] [--command COMMAND ...]",
        description="Run a training script as `python SCRIPT ARGS` would, up to the first call of each "
        "tf.function (and Keras step); check what XLA would compile there, without compiling or training.",
        epilog="The run works in a scratch copy of the working directory: your files stay as they are, "
        "network access stops the run. Exit codes as for `xlalint`. See docs/run.md.")
    parser.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as `python -m MODULE`")
    parser.add_argument("--command", action="append", metavar="COMMAND",
                        help="a command to run, `SCRIPT ARGS...` or `-m MODULE ARGS...` in one quoted word, as "
                        "`run` lists them in [tool.xlalint] (whose list it replaces); repeat it for several")
    add_format_flag(parser)
    parser.add_argument("--run-timeout", type=SECONDS.from_text, default=DEFAULT_RUN_TIMEOUT_S, metavar="SECONDS",
                        help=f"budget for the script's run, TensorFlow's import not counted (default: "
                        f"{DEFAULT_RUN_TIMEOUT_S:g})")
    parser.add_argument("--patience", type=COUNT.from_text, default=DEFAULT_PATIENCE, metavar="N",
                        help="stop once the captured functions were called N times each with nothing new "
                        f"traced (default: {DEFAULT_PATIENCE})")
    add_fix_flags(parser, "the working directory and the script's folder")
    parser.add_argument("--write-baseline", metavar="FILE", help="record this run's findings in FILE")
    add_config_flag(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="no notes on stderr")
    settings.add_flags(parser.add_argument_group("settings", "as for `xlalint`"), FLAGS, FROM_CONFIG)
    return parser


def split_command(argv: list[str], parser) -> tuple[list[str], list[str]]:
    """``(xlalint's options with the script or -m MODULE, the script's ARGS)``. A long option's value is joined to
    it (``--command=VALUE``): argparse would take a value that starts with ``-`` (``--command "-m pkg.train"``,
    ``--write-baseline -found.json``) for an option of its own."""
    actions = parser._actions  # noqa: SLF001
    flags = {s for action in actions if action.nargs == 0 for s in action.option_strings}
    valued = {s for action in actions if action.nargs is None for s in action.option_strings if s.startswith("--")}
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "-m":
            return argv[:i + 2], argv[i + 2:]
        if token == "--" or not token.startswith("-"):
            start = i + 1 if token == "--" else i
            return argv[:i] + argv[start:start + 1], argv[start + 1:]
        if token in valued and i + 1 < len(argv):
            argv = [*argv[:i], f"{token}={argv[i + 1]}", *argv[i + 2:]]
        i += 1 if token in flags or "=" in argv[i] else 2
    return argv, []


def _module_file(parser: UsageParser, module: str) -> str:
    """The file ``-m MODULE`` runs, found without running the user's code (no package imported)."""
    if not all(module.split(".")):
        parser.error(f"no module named {module!r}: its name has an empty part")
    file = module_file(module, os.getcwd())
    if file is None:
        parser.error(f"no module named {module!r} to run, from {os.getcwd()} (a package needs a __main__.py)")
    return file


def _script_of(parser: UsageParser, script: str | None, module: str | None, command: str = "") -> str:
    """The file that runs: the script, or the module's file; a missing one is a usage error."""
    said = f"run command {command!r}: " if command else ""
    if script and not os.path.isfile(script):
        parser.error(f"{said}no such script: {script}")
    if script and is_notebook(script) and (unreadable := read_source(script)[1]):
        parser.error(f"{said}{script}: {unreadable}")
    return _module_file(parser, module) if module else str(script)


def _commands(parser: UsageParser, args, script_args: list[str]) -> tuple[list[tuple], Config]:
    """``([(file, script, module, ARGS, command)], config)``: the one given, else those of ``--command``, else
    those ``run`` lists in [tool.xlalint] (then the working directory becomes the config file's; paths given
    stay as meant)."""
    if args.module and args.script:
        parser.error("give a SCRIPT or -m MODULE (one of them)")
    if args.command and (args.module or args.script):
        parser.error("give a SCRIPT, -m MODULE or --command (one of them)")
    given = args.script or args.module
    file = _script_of(parser, args.script, args.module) if given else None
    try:
        config = load_config(Path(args.config) if args.config else find_config([file] if file else []))
    except ConfigError as error:
        parser.error(str(error))
    if given:
        return [(file, args.script, args.module, script_args, None)], config
    listed = args.command or config.values.get("run")
    if not listed:
        parser.error("give a SCRIPT, -m MODULE or --command, or list run commands under `run` in [tool.xlalint]")
    if not args.command:
        for name in PATHS:
            if getattr(args, name):
                setattr(args, name, os.path.abspath(getattr(args, name)))
        os.chdir(config.root)
    commands = []
    for command in listed:
        try:
            script, module, argv = listed_command(command)
        except SettingError:  # only a --command can be malformed here: the config's list was read already
            parser.error(f"--command {command!r}: give a quoted `SCRIPT ARGS...` or `-m MODULE ARGS...`")
        commands.append((_script_of(parser, script, module, command), script, module, argv, command))
    return commands, config


def _run_all(server, commands: list[tuple], jobs: int, args, first_step: bool) -> list[dict]:
    """Each command's result, in order, ``jobs`` runs at a time (each thread with its own server, a clone of one
    that imported TensorFlow); the first exception of a run is raised here, once the others have ended."""
    def one(command: tuple) -> dict:
        file, script, module, script_argv, _ = command
        if not args.quiet:
            print(f"xlalint run: running {file} up to its compiled steps (budget {args.run_timeout:g}s)",
                  file=sys.stderr)
        return server.run(script, module, script_argv, args.run_timeout, args.patience, first_step)

    if jobs == 1:
        return [one(command) for command in commands]
    server.pool.start_origin()  # in this thread, which outlives the jobs' threads
    todo: queue.Queue = queue.Queue()
    for number in range(len(commands)):
        todo.put(number)
    results: dict[int, dict] = {}
    failures: list[BaseException] = []

    def work() -> None:
        while not failures:
            try:
                number = todo.get_nowait()
            except queue.Empty:
                return
            try:
                results[number] = one(commands[number])
            except BaseException as error:  # noqa: BLE001 - raised in the caller's thread
                failures.append(error)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.2)  # short waits: an interrupt reaches this thread at once
    if failures:
        raise failures[0]
    return [results[number] for number in range(len(commands))]


def main(argv: list[str]) -> int:
    parser = _parser()
    parser.add_argument("script", nargs="?", metavar="SCRIPT", help="the training script (none: those listed "
                        "under `run` in [tool.xlalint])")
    ours, script_args = split_command(argv, parser)
    args = parser.parse_args(ours)
    commands, config = _commands(parser, args, script_args)
    try:
        values = settings.merge({name: getattr(args, name) for name in FLAGS},
                                {name: value for name, value in config.values.items() if name in FROM_CONFIG})
        options = settings.options(values, root=str(config.root))
    except ValueError as error:
        parser.error(str(error))
    known = known_baseline(parser, args, options.baseline)
    from xlalint.run.client import RunServer
    from xlalint.run.report import run_report
    from xlalint.process.scratch import ScratchError

    reports = []
    jobs = min(options.jobs, len(commands))
    with RunServer([(file, module) for file, _, module, *_ in commands], jobs) as server:  # TensorFlow imported once
        try:
            with signals_interrupt():
                results = _run_all(server, commands, jobs, args, options.first_step)
        except ScratchError as error:
            parser.error(str(error))
        except Interrupted as stop:
            print(EMITTERS[args.format](Report(device=options.device, interrupted=stop.signal.name)))
            return 128 + stop.signal
        for (file, *_), result in zip(commands, results):
            if result.get("hooks_supported") is False and not args.quiet:
                print(f"xlalint run: TensorFlow {result['tensorflow']} with Keras {result['keras']} is not a "
                      "release whose hooks were checked; results may be incomplete (docs/run.md)", file=sys.stderr)
            reports.append(run_report(result, file, options))
    listed = [command for *_, command in commands]
    report = together(reports, listed) if listed[0] else reports[0]
    say_if_outside_range(report.tensorflow, args.quiet)
    apply_baseline_flags(parser, report, args, options, known)
    if args.diff or args.fix:
        report.sources = {path: digest for each in reports for path, digest in each.sources.items()}
        roots = [os.getcwd(), *{os.path.dirname(os.path.abspath(file)) for file, *_ in commands}]
        return fix_and_report(report, args, roots, options.strict)
    print(EMITTERS[args.format](report))
    return final_exit_code(report, options.min_coverage, options.strict)
