"""``xlalint merge REPORT... [--format F] [-o FILE]``: one report from the reports of a run's shards."""

from __future__ import annotations

import json
from pathlib import Path

from xlalint.settings import table as settings
from xlalint.cli.common import EXIT_FINDINGS, EXIT_OK, UsageParser, add_format_flag, final_exit_code
from xlalint.ci.merge import MergeError, merge
from xlalint.report import EMITTERS


def main(argv: list[str]) -> int:
    parser = UsageParser(prog="xlalint merge", description="Join the reports of a run's shards (--shard K/N) into "
                     "one: JSON reports into the report one run over every file gives, in any format; SARIF "
                     "reports into one SARIF run.",
                     epilog="Exit codes as for `xlalint`: 0 nothing blocks XLA, 1 error findings or files "
                     "that could not be checked, 2 usage error or reports that cannot be merged.")
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="every shard's report, once each")
    add_format_flag(parser)
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    settings.add_flags(parser.add_argument_group("settings", "as for `xlalint`"), ("min_coverage", "strict"), ())
    args = parser.parse_args(argv)
    try:
        report = merge(args.reports)
    except MergeError as error:
        parser.error(str(error))
    if isinstance(report, str) and (args.format != "sarif" or args.min_coverage or args.strict):
        parser.error("SARIF reports merge into --format sarif only, without --min-coverage or --strict "
                     "(merge the shards' JSON reports for those)")
    text = report if isinstance(report, str) else EMITTERS[args.format](report)
    if args.output:
        try:
            Path(args.output).write_text(text + "\n", encoding="utf-8")
        except OSError as error:
            parser.error(f"{args.output}: cannot write it: {error.strerror or error}")
    else:
        print(text)
    if isinstance(report, str):
        return _sarif_exit_code(json.loads(report))
    return final_exit_code(report, args.min_coverage, bool(args.strict))


def _sarif_exit_code(sarif: dict) -> int:
    """1 when a new result is an error or a file could not be checked, as the shards' own runs."""
    [run] = sarif["runs"]
    failed = any(r["level"] == "error" and r.get("baselineState") != "unchanged" for r in run["results"])
    unchecked = any(n["level"] == "error" for n in run["invocations"][0]["toolExecutionNotifications"])
    return EXIT_FINDINGS if failed or unchecked else EXIT_OK
