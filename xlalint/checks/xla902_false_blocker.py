"""XLA902 false-blocker: with ``--verify``, XLA compiled and ran an entry xlalint reported blockers in.

A run rule. A result that differs under XLA is what the XLA2xx rules predict, so it is no
disagreement.
"""

from __future__ import annotations

from xlalint.checks.base import Rule
from xlalint.checks.xla901_missed_blocker import REPORT_BUG, unverifiable
from xlalint.opgraph import OpGraph
from xlalint.results import Finding
from xlalint.sourcemap import Location, column

RULE = Rule("XLA902", "false-blocker", "warning",
            "XLA compiled and ran an entry that xlalint reported blockers in.", stage="run")


def check(graph: OpGraph, entry: str, verify: dict, findings: list[Finding], fallback: Location,
          display) -> list[Finding]:
    """XLA compiled and ran (with the same result) what xlalint blocked."""
    codes = sorted({f.code for f in findings if f.severity == "error"})
    if not verify["compiled"] or unverifiable(verify) or not codes or verify.get("allclose") is False:
        return []
    message = f"xlalint reported {', '.join(codes)}, but XLA on {verify['device']} compiled and ran `{entry}`"
    return [RULE.finding(message, REPORT_BUG, display(fallback.path), fallback.line,
                         column(fallback.path, fallback.line, None), entry)]
