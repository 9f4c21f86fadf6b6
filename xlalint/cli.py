"""Command line: ``xlalint [options] PATH[::NAME] ...`` and ``xlalint ops``."""

from __future__ import annotations

import argparse
import os
import sys

from xlalint import __version__
from xlalint.analyze import Options, analyze
from xlalint.checks import RULES
from xlalint.report import EMITTERS
from xlalint.specs import SpecError, parse_spec
from xlalint.support import DEVICES

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="xlalint",
        description="Find what keeps TensorFlow code from compiling under XLA, with the line to change.",
        epilog="Also: `xlalint ops [--device D] [OP ...]` prints the XLA support table. "
        "Exit codes: 0 nothing blocks XLA, 1 findings or files that could not be checked, 2 usage error "
        "or nothing could be checked.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH[::NAME]",
                        help="files or directories; FILE::NAME traces that function or model only")
    parser.add_argument("--spec", action="append", default=[], metavar="DTYPE[DIMS]",
                        help='argument spec for every FILE::NAME given, in order, e.g. "float32[8,224,224,3]"')
    parser.add_argument("--device", choices=DEVICES, default="gpu", help="target XLA device (default: gpu)")
    parser.add_argument("--format", choices=list(EMITTERS), default="text", help="output format (default: text)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds to import and trace one file (default: 120)")
    parser.add_argument("--select", metavar="CODES", help="comma-separated rule codes or prefixes to run")
    parser.add_argument("--save-graphs", metavar="DIR",
                        help="write each traced entry's op graph as JSON (for bug reports and TF-free tests)")
    parser.add_argument("--version", action="version", version=f"xlalint {__version__}")
    return parser


def _select(text: str | None, parser) -> tuple[str, ...] | None:
    if not text:
        return None
    prefixes = [p.strip().upper() for p in text.split(",") if p.strip()]
    codes = tuple(code for code in RULES if any(code.startswith(p) for p in prefixes))
    if not codes:
        parser.error(f"--select {text!r} matches no rule (known: {', '.join(RULES)})")
    return codes


def _targets(paths: list[str], specs: list[str]) -> tuple[list[str], dict, set]:
    """Paths, named targets per file, and files given plainly as well (discover all there)."""
    plain, targets, whole = [], {}, set()
    for item in paths:
        path, sep, name = item.partition("::")
        plain.append(path)
        if sep:
            targets.setdefault(os.path.abspath(path), {})[name] = specs or None
        else:
            whole.add(os.path.abspath(path))
    return plain, targets, whole


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "ops" and not os.path.exists("ops"):
        return _ops_main(argv[1:])
    parser = _check_parser()
    args = parser.parse_args(argv)
    try:
        for spec in args.spec:
            parse_spec(spec)
    except SpecError as error:
        parser.error(str(error))
    if args.spec and not any("::" in p for p in args.paths):
        parser.error("--spec needs a target named as FILE::NAME")
    paths, targets, whole = _targets(args.paths, args.spec)
    options = Options(device=args.device, timeout=args.timeout, select=_select(args.select, parser),
                      targets=targets, discover=whole, save_graphs=args.save_graphs)
    report = analyze(paths, options)
    print(EMITTERS[args.format](report))
    if not report.entries:
        return EXIT_USAGE
    if not report.ok or report.errors or any(e.verdict == "unknown" for e in report.entries):
        return EXIT_FINDINGS
    return EXIT_OK


def _ops_main(argv: list[str]) -> int:
    from xlalint.ops_table import render
    from xlalint.support import installed_tensorflow, load_support

    parser = argparse.ArgumentParser(prog="xlalint ops", description="Print the XLA support table.")
    parser.add_argument("ops", nargs="*", metavar="OP", help="op types to show (default: all)")
    parser.add_argument("--device", choices=DEVICES, default="gpu")
    args = parser.parse_args(argv)
    text, code = render(load_support(installed_tensorflow()), args.device, args.ops)
    print(text)
    return code
