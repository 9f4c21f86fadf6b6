"""After ``--verify``: say so when the compiler disagrees with xlalint's static verdict.

A disagreement is a bug in xlalint, so it is a finding of its own (XLA901 when XLA
failed where xlalint saw no blocker, XLA902 when XLA compiled what xlalint blocked and gave the
same result; a different result is what the XLA2xx rules predict), with both sides in the message.
"""

from __future__ import annotations

from xlalint.checks import RULES
from xlalint.opgraph import OpGraph
from xlalint.results import Finding
from xlalint.sourcemap import Location, column, locate

REPORT_BUG = "This is an xlalint bug: please report it with the output of --save-graphs."


def _finding(code: str, message: str, where: Location, entry: str, node: dict | None, display) -> Finding:
    rule = RULES[code]
    return Finding(code, rule.name, rule.severity, message, REPORT_BUG, display(where.path), where.line,
                   column(where.path, where.line, None), entry, node and node["type"], node and node["name"])


def agreement_findings(graph: OpGraph, entry: str, verify: dict, findings: list[Finding],
                       fallback: Location, display) -> list[Finding]:
    """XLA901/XLA902 for one verified entry, or nothing when both sides agree (or it could not run)."""
    blocked = any(f.severity == "error" for f in findings)
    if verify["error"] and verify["error"].startswith("cannot verify"):
        return []
    if not verify["compiled"] and not blocked:
        node = next((n for n in graph.nodes() if n["type"] == verify["error_op"]), None)
        where = locate(graph, node, fallback) if node else fallback
        message = (f"xlalint found no blocker, but XLA on {verify['device']} failed: {verify['error']}")
        return [_finding("XLA901", message, where, entry, node, display)]
    if verify["compiled"] and blocked and verify.get("allclose") is not False:
        codes = ", ".join(sorted({f.code for f in findings if f.severity == "error"}))
        message = f"xlalint reported {codes}, but XLA on {verify['device']} compiled and ran `{entry}`"
        return [_finding("XLA902", message, fallback, entry, None, display)]
    return []
