"""Hover: on a finding's line its rule, message and hint; on a compiled function's line the XLA mode its program
runs it in and where that was decided (known once a save has traced it)."""

from __future__ import annotations

from xlalint.core.results import Entry, Finding

MODES = {"jit_compile": "compiled whole by XLA (jit_compile)", "auto-clustering": "run under auto-clustering",
         "as-if-jit_compile": "judged as if it had jit_compile=True"}


def hover_text(findings: list[Finding], entries: list[Entry]) -> str | None:
    """Markdown for what is on one line; None when nothing is."""
    parts = [f"**{f.code}** `{f.name}` ({f.severity}): {f.message}" + (f"\n\n{f.hint}" if f.hint else "")
             for f in findings]
    for entry in entries:
        if entry.xla_mode:
            where = f", decided at {entry.xla_mode_source}" if entry.xla_mode_source else ""
            parts.append(f"`{entry.name}`: {MODES.get(entry.xla_mode, entry.xla_mode)}{where}"
                         + (f"\n\n{entry.xla_mode_note}" if entry.xla_mode_note else ""))
        parts.append(f"`{entry.name}`: {entry.verdict}" + (f" ({entry.error})" if entry.error else ""))
    return "\n\n---\n\n".join(parts) or None
