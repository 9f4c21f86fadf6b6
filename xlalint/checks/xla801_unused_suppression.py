"""XLA801 unused-suppression: an ``# xlalint: ignore`` comment that suppresses nothing.

A selection rule: once every finding of the run has met the suppression comments, one finding per
comment that suppressed nothing, when every code it names was checked (docs/suppressions.md).
Its findings are selected like any other, but comments do not suppress them.
"""

from __future__ import annotations

from xlalint.checks.base import Rule, SelectedContext
from xlalint.inputs.files import display_path
from xlalint.source.suppressions import ALL


def check_selected(ctx: SelectedContext):
    for path in ctx.files:
        for item in ctx.suppressions.unused(path):
            if all(any(code.startswith(prefix) for code in ctx.select) for prefix in item.codes):
                listed = ", ".join(item.codes) if item.codes != ALL else "all codes"
                yield RULE.finding(f"unused suppression ({listed}): nothing is reported here",
                                   "Remove the comment, or name the codes it should cover.", display_path(path),
                                   item.line)


RULE = Rule("XLA801", "unused-suppression", "info", "An `# xlalint: ignore` comment that suppresses nothing.",
            stage="selected", check_selected=check_selected)
