"""Command line: ``xlalint [options] PATH[::NAME] ...`` and ``xlalint ops``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from xlalint import __version__
from xlalint.analyze import Options, analyze, static_report
from xlalint.files import display_path
from xlalint.checks import resolve_codes
from xlalint.config import MODES, ConfigError, config_targets, find_config, load_config
from xlalint.report import EMITTERS
from xlalint.specs import SpecError, parse_spec
from xlalint.support import DEVICES, cache_dir

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="xlalint",
        description="Find what keeps TensorFlow code from compiling under XLA, with the line to change.",
        epilog="Also: `xlalint ops [--device D] [OP ...]` prints the XLA support table. "
        "Settings can live in pyproject.toml under [tool.xlalint]; flags override them. "
        "Exit codes: 0 nothing blocks XLA, 1 findings or files that could not be checked, 2 usage error "
        "or no file could be checked.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH[::NAME]",
                        help="files or directories; FILE::NAME traces that function or model only "
                        "(default: the entries in [tool.xlalint], else .)")
    parser.add_argument("--spec", action="append", default=[], metavar="DTYPE[DIMS]",
                        help='argument spec for every FILE::NAME given, in order, e.g. "float32[8,224,224,3]"')
    parser.add_argument("--device", choices=DEVICES, help="target XLA device (default: gpu)")
    parser.add_argument("--mode", choices=MODES,
                        help="jit (default): what if each entry had jit_compile=True; autocluster: also predict "
                        "the clusters TF_XLA_FLAGS=--tf_xla_auto_jit=2 would form (docs/autocluster.md)")
    parser.add_argument("--format", choices=list(EMITTERS), default="text", help="output format (default: text)")
    parser.add_argument("--timeout", type=float, help="seconds to import and trace one file (default: 120)")
    parser.add_argument("--max-memory", type=int, metavar="MB",
                        help="resident memory a tracing worker may use; a file that needs more gets an error "
                        "(default: 8192; 0: no limit)")
    parser.add_argument("--select", metavar="CODES", help="comma-separated rule codes or prefixes to run")
    parser.add_argument("--ignore", metavar="CODES", help="comma-separated rule codes or prefixes to skip")
    parser.add_argument("--skip-untraceable", action="store_true",
                        help="skip named files without TensorFlow or entry points instead of reporting them "
                        "(for pre-commit, which passes every changed file)")
    parser.add_argument("--static", action="store_true",
                        help="fast mode for pre-commit: find blockers by API name with libcst; never imports "
                        "TensorFlow or runs your code (fewer findings than the full analysis)")
    parser.add_argument("--verify", nargs="?", const="auto", choices=("auto", "cpu", "gpu"),
                        help="also compile and run each entry with and without XLA (on the GPU when there "
                        "is one, else the CPU; or the device given) and report agreement, numerics, "
                        "compile time, step time, memory")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes to the files")
    parser.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: unsafe fixes too")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    parser.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                        help="trace files in N worker processes at once (default: 1)")
    parser.add_argument("--no-cache", action="store_true", help="trace every file again")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="where results of unchanged files are kept (default: ~/.cache/xlalint/results)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of searching")
    parser.add_argument("--save-graphs", metavar="DIR",
                        help="write each traced entry's op graph as JSON (for bug reports and TF-free tests)")
    parser.add_argument("--version", action="version", version=f"xlalint {__version__}")
    return parser


def _codes_list(text: str | None) -> list[str] | None:
    return None if text is None else [p.strip() for p in text.split(",") if p.strip()]


def _targets(paths: list[str], specs: list[str]) -> tuple[list[str], dict, set]:
    """Paths, named targets per file, and the files given only as FILE::NAME (trace just those)."""
    plain, targets, whole = [], {}, set()
    for item in paths:
        path, sep, name = item.partition("::")
        plain.append(path)
        if sep:
            targets.setdefault(os.path.abspath(path), {})[name] = specs or None
        else:
            whole.add(os.path.abspath(path))
    return plain, targets, set(targets) - whole


def _show_progress(path: str) -> None:
    sys.stderr.write(f"\rxlalint: tracing {display_path(path)}\033[K")
    sys.stderr.flush()


def _options(args, parser) -> tuple[list[str], Options]:
    try:
        for spec in args.spec:
            parse_spec(spec)
        config = load_config(Path(args.config) if args.config else find_config(args.paths))
        codes = resolve_codes(_codes_list(args.select) or config.select,
                              _codes_list(args.ignore) or config.ignore)
    except (SpecError, ConfigError, ValueError) as error:
        parser.error(str(error))
    if args.max_memory is not None and args.max_memory < 0:
        parser.error("--max-memory must be a number of MB, or 0 for no limit")
    if args.spec and not any("::" in p for p in args.paths):
        parser.error("--spec needs a target named as FILE::NAME")
    declared = config_targets(config)
    paths, targets, only_named = _targets(args.paths or list(declared) or ["."], args.spec)
    for path, named in declared.items():  # the config's entries join whenever their file is checked
        for name, specs in named.items():
            targets.setdefault(path, {}).setdefault(name, specs)
    options = Options(
        device=args.device or config.device or "gpu",
        timeout=args.timeout or config.timeout or 120.0,
        max_memory=next(m for m in (args.max_memory, config.max_memory, Options.max_memory) if m is not None),
        select=codes, targets=targets, only_named=only_named, save_graphs=args.save_graphs,
        per_file_ignores={glob: [c.upper() for c in codes_] for glob, codes_ in config.per_file_ignores.items()},
        root=str(config.root), skip_untraceable=args.skip_untraceable,
        progress=None if args.quiet or not sys.stderr.isatty() else _show_progress, verify=args.verify,
        cache_dir=None if args.no_cache else (args.cache_dir or str(cache_dir() / "results")),
        jobs=max(1, args.jobs), mode=args.mode or config.mode or "jit",
    )
    return paths, options


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `xlalint ... | head` ends quietly
    if argv and argv[0] == "ops" and not os.path.exists("ops"):
        return _ops_main(argv[1:])
    parser = _check_parser()
    args = parser.parse_args(argv)
    paths, options = _options(args, parser)
    if args.static and (args.verify or args.save_graphs or args.spec or any("::" in p for p in args.paths)):
        parser.error("--static checks source text only: FILE::NAME, --spec, --verify and --save-graphs need tracing")
    report = static_report(paths, options) if args.static else analyze(paths, options)
    if options.progress:
        sys.stderr.write("\r\033[K")
    if args.diff or args.fix:
        return _fix(report, args)
    if args.format == "text":
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        print(EMITTERS["text"](report, color=color))
    else:
        print(EMITTERS[args.format](report))
    return _exit_code(report)


def _exit_code(report) -> int:
    if not report.entries and report.errors:
        return EXIT_USAGE
    if not report.ok or report.errors or any(e.verdict == "unknown" for e in report.entries):
        return EXIT_FINDINGS
    return EXIT_OK


def _fix(report, args) -> int:
    """--diff prints what the fixes would change; --fix applies them and reports what is left."""
    from xlalint.fixes import fix_files

    outcomes = fix_files(report.findings, unsafe=args.unsafe_fixes, write=args.fix and not args.diff)
    for outcome in outcomes:
        if outcome.error:
            print(f"{outcome.path}: {outcome.error}", file=sys.stderr)
    if args.diff:
        print("".join(o.diff for o in outcomes), end="")
        return EXIT_FINDINGS if any(o.diff for o in outcomes) else EXIT_OK
    fixed = {id(f) for o in outcomes for f in o.fixed}
    report.findings = [f for f in report.findings if id(f) not in fixed]
    hidden = sum(1 for f in report.findings if f.fix and f.fix["safety"] == "unsafe")
    print(EMITTERS[args.format](report))
    note = f"fixed {len(fixed)} finding(s) in {sum(bool(o.fixed) for o in outcomes)} file(s)"
    if hidden and not args.unsafe_fixes:
        note += f"; {hidden} more with --unsafe-fixes"
    print(f"xlalint: {note}", file=sys.stderr)
    return _exit_code(report)


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
