"""XLA901 missed-blocker: with ``--verify``, XLA failed on an entry xlalint found no blocker in.

A run rule: a disagreement with the compiler is an xlalint bug, so it is a finding of its own,
with both sides in the message.
"""

from __future__ import annotations

from xlalint.checks.base import Rule
from xlalint.opgraph import OpGraph
from xlalint.results import Finding
from xlalint.sourcemap import Location, column, locate

RULE = Rule("XLA901", "missed-blocker", "error",
            "XLA failed to compile or run an entry that xlalint found no blocker in.", stage="run")
REPORT_BUG = "This is an xlalint bug: please report it with the output of --save-graphs."


def unverifiable(verify: dict) -> bool:
    return bool(verify["error"]) and verify["error"].startswith("cannot verify")


def check(graph: OpGraph, entry: str, verify: dict, findings: list[Finding], fallback: Location,
          display) -> list[Finding]:
    """XLA failed where xlalint saw no blocker: the finding at the op XLA named, when it is in the graph."""
    if verify["compiled"] or unverifiable(verify) or any(f.severity == "error" for f in findings):
        return []
    node = next((n for n in graph.nodes() if n["type"] == verify["error_op"]), None)
    where = locate(graph, node, fallback) if node else fallback
    message = f"xlalint found no blocker, but XLA on {verify['device']} failed: {verify['error']}"
    return [RULE.finding(message, REPORT_BUG, display(where.path), where.line,
                         column(where.path, where.line, None), entry, node)]
