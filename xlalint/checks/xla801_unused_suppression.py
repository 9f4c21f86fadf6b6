"""XLA801 unused-suppression: an ``# xlalint: ignore`` comment that suppresses nothing.

A run rule: reported by the engine once a file's findings are known (docs/suppressions.md).
"""

from __future__ import annotations

from xlalint.checks.base import Rule
from xlalint.results import Finding
from xlalint.suppressions import ALL, SuppressionIndex

RULE = Rule("XLA801", "unused-suppression", "info", "An `# xlalint: ignore` comment that suppresses nothing.",
            stage="run")


def unused(path: str, shown_path: str, suppressions: SuppressionIndex, select) -> list[Finding]:
    """One finding per comment that suppressed nothing, when every code it names was checked."""
    found = []
    for item in suppressions.unused(path):
        if all(any(code.startswith(prefix) for code in select) for prefix in item.codes):
            listed = ", ".join(item.codes) if item.codes != ALL else "all codes"
            found.append(RULE.finding(f"unused suppression ({listed}): nothing is reported here",
                                      "Remove the comment, or name the codes it should cover.", shown_path, item.line))
    return found
