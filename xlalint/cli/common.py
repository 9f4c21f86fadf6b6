"""What the check, run and merge commands share: usage errors, interrupts, the baseline, fixes, exit codes."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from typing import NoReturn

from xlalint.ci.baseline import BaselineError, apply_baseline, read_baseline, with_fingerprints, write_baseline
from xlalint.report import EMITTERS
from xlalint.core.results import Report
from xlalint.core.tables import outside_range

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageParser(argparse.ArgumentParser):
    """Usage errors are one line on stderr and exit 2 (``--help`` shows the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def add_format_flag(parser: argparse.ArgumentParser) -> None:
    """``--format``: the report's output format (the check, run and merge commands)."""
    parser.add_argument("--format", choices=list(EMITTERS), default="text", help="output format (default: text)")


def add_config_flag(parser: argparse.ArgumentParser) -> None:
    """``--config``: the pyproject.toml to read instead of searching for one (the check and run commands)."""
    parser.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of searching")


def add_fix_flags(parser: argparse.ArgumentParser, where: str) -> None:
    """``--fix``, ``--unsafe-fixes``, ``--diff`` and ``--fix-outside`` (of ``where``: the files it may edit)."""
    parser.add_argument("--fix", action="store_true", help="apply safe fixes to the files")
    parser.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: unsafe fixes too")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    parser.add_argument("--fix-outside", action="store_true",
                        help=f"with --fix or --diff: also edit files outside {where} (e.g. a helper module a "
                        "checked file imports, or the target of a symbolic link)")


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived: unwinding stops every worker the run started."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signal = signal.Signals(signum)


_held: list[int] | None = None  # signals that arrived while an interrupt was held off (interrupts_held)


@contextlib.contextmanager
def signals_interrupt():
    """Turn SIGINT and SIGTERM (what CI and `timeout` send) into Interrupted while the run lasts."""
    def interrupt(signum, frame):
        if _held is not None:
            _held.append(signum)
            return
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def interrupts_held():
    """Hold an interrupt off until the block ends (then raise it): an import cut short in the middle leaves
    modules half made, and the report that follows the interrupt would need them."""
    global _held
    _held = []
    try:
        yield
    finally:
        held, _held = _held, None
    if held:
        raise Interrupted(held[0])


def say_if_outside_range(tensorflow: str | None, quiet: bool) -> None:
    """Once per command, on stderr: the TensorFlow that traced is outside the checked releases (``tables.outside_range``)."""
    note = None if quiet else outside_range(tensorflow)
    if note:
        print(f"xlalint: {note}", file=sys.stderr)


def known_baseline(parser: argparse.ArgumentParser, args, baseline: str | None) -> list[dict] | None:
    """The records of ``--baseline``, read before the long run: a bad file is a usage error at once."""
    try:
        return read_baseline(baseline) if baseline and not args.write_baseline else None
    except BaselineError as error:
        parser.error(str(error))


def apply_baseline_flags(parser: argparse.ArgumentParser, report: Report, args, options,
                         known: list[dict] | None) -> None:
    """Fingerprint the findings; --write-baseline records them (all then known); --baseline keeps only new ones."""
    report.findings = with_fingerprints(report.findings, options.root)
    baseline = options.baseline
    try:
        if args.write_baseline:
            count = write_baseline(args.write_baseline, report.findings)
            if not args.quiet:
                print(f"xlalint: recorded {count} finding(s) in {args.write_baseline}", file=sys.stderr)
            known, baseline = read_baseline(args.write_baseline), args.write_baseline
    except BaselineError as error:  # the baseline file could not be written
        parser.error(str(error))
    if known is not None and baseline:
        report.findings, report.baseline = apply_baseline(report.findings, known, baseline)


def exit_code(report, strict: bool = False) -> int:
    """Errors fail the run; what could not be traced (entries, files without entry points) only with ``strict``."""
    errors = [e for e in report.errors if not e.notice]
    if not report.entries and errors:
        return EXIT_USAGE
    unchecked = any(e.verdict == "unknown" for e in report.entries) or len(errors) < len(report.errors)
    if not report.ok or errors or (strict and unchecked):
        return EXIT_FINDINGS
    return EXIT_OK


def final_exit_code(report, min_coverage: float | None, strict: bool) -> int:
    """``exit_code``, failing too (said on stderr) when XLA coverage is under ``min_coverage``."""
    from xlalint.engine.coverage import below  # the rules: imported once the run is under way

    failure = below(report, min_coverage) if min_coverage else None
    if failure:
        print(f"xlalint: {failure}", file=sys.stderr)
    return max(exit_code(report, strict), EXIT_FINDINGS if failure else EXIT_OK)


def fix_and_report(report, args, paths: list[str], strict: bool) -> int:
    """--diff prints the bytes the fixes would write; --fix writes them and reports what is left."""
    from xlalint.fixes import Guard, fix_files

    guard = Guard(roots=None if args.fix_outside else paths, sources=report.sources)
    outcomes = fix_files(report.findings, unsafe=args.unsafe_fixes, write=args.fix and not args.diff, guard=guard)
    for outcome in outcomes:
        if outcome.error:
            print(f"{outcome.path}: {outcome.error}", file=sys.stderr)
    if args.diff:
        sys.stdout.flush()
        sys.stdout.buffer.write(b"".join(o.diff for o in outcomes))  # raw bytes: CRLF lines keep their \r
        return EXIT_FINDINGS if any(o.diff for o in outcomes) else EXIT_OK
    fixed = {id(f) for o in outcomes for f in o.fixed}
    report.findings = [f for f in report.findings if id(f) not in fixed]
    hidden = sum(1 for f in report.findings if f.fix and f.fix.safety == "unsafe")
    print(EMITTERS[args.format](report))
    note = f"fixed {len(fixed)} finding(s) in {sum(bool(o.fixed) for o in outcomes)} file(s)"
    if hidden and not args.unsafe_fixes:
        note += f"; {hidden} more with --unsafe-fixes"
    print(f"xlalint: {note}", file=sys.stderr)
    return exit_code(report, strict)
