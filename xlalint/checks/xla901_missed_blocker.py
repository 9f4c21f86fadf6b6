"""XLA901 missed-blocker: with ``--verify``, XLA failed on an entry xlalint found no blocker in.

An entry rule: a disagreement with the compiler is an xlalint bug, so it is a finding of its own,
with both sides in the message.
"""

from __future__ import annotations

from xlalint.checks.base import EntryContext, Rule
from xlalint.inputs.files import display_path
from xlalint.source.sourcemap import Location, column, locate
from xlalint.core.wire import VerifyRecord

REPORT_BUG = "This is an xlalint bug: please report it with the output of --save-graphs."


def unverifiable(verify: VerifyRecord) -> bool:
    return (verify["error"] or "").startswith("cannot verify")


def check_entry(entry: EntryContext):
    """XLA failed where xlalint saw no blocker: the finding at the op XLA named, when it is in the graph."""
    verify = entry.record.get("verify")
    if not verify or verify["compiled"] or unverifiable(verify) or entry.blocked:
        return
    node = next((n for n in entry.graph.nodes() if n["type"] == verify["error_op"]), None)
    fallback = Location(entry.path, entry.record["line"])
    where = locate(entry.graph, node, fallback) if node else fallback
    message = f"xlalint found no blocker, but XLA on {verify['device']} failed: {verify['error']}"
    yield RULE.finding(message, REPORT_BUG, display_path(where.path), where.line,
                       column(where.path, where.line, None), entry.record["name"], node)


RULE = Rule("XLA901", "missed-blocker", "error",
            "XLA failed to compile or run an entry that xlalint found no blocker in.", stage="entry",
            check_entry=check_entry)
