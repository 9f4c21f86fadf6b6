"""XLA902 false-blocker: with ``--verify``, XLA compiled and ran an entry xlalint reported blockers in.

An entry rule. A result that differs under XLA is what the XLA2xx rules predict, so it is no
disagreement.
"""

from __future__ import annotations

from xlalint.checks.base import EntryContext, Rule
from xlalint.checks.xla901_missed_blocker import REPORT_BUG, unverifiable
from xlalint.inputs.files import display_path
from xlalint.source.sourcemap import column


def check_entry(entry: EntryContext):
    """XLA compiled and ran (with the same result) what xlalint blocked."""
    verify = entry.record.get("verify")
    codes = sorted({f.code for f in entry.findings if f.severity == "error"})
    if not verify or not verify["compiled"] or unverifiable(verify) or not codes or verify.get("allclose") is False:
        return
    name, path, line = entry.record["name"], entry.path, entry.record["line"]
    message = f"xlalint reported {', '.join(codes)}, but XLA on {verify['device']} compiled and ran `{name}`"
    yield RULE.finding(message, REPORT_BUG, display_path(path), line, column(path, line, None), name)


RULE = Rule("XLA902", "false-blocker", "warning",
            "XLA compiled and ran an entry that xlalint reported blockers in.", stage="entry",
            check_entry=check_entry)
