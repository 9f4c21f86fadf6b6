"""The run commands listed under ``run`` in ``[tool.xlalint]``, and one report of all their runs.

``xlalint run`` with no SCRIPT runs each listed command from the config file's directory, one after
another, and reports them together: every finding once, every entry once (its worst verdict), one
``run`` object per command under ``runs``; the exit code is that of the report, so the worst.
"""

from __future__ import annotations

from xlalint.core.results import Report, one_per_place
from xlalint.settings.table import run_command_words

SEVERITY = {"unknown": 0, "compatible": 1, "runs": 2, "incompatible": 3}  # a later run's verdict wins if worse


def listed_command(command: str) -> tuple[str | None, str | None, list[str]]:
    """``(script, module, the script's arguments)`` of one listed command."""
    words = run_command_words(command)
    if words[0] == "-m":
        return None, words[1], words[2:]
    return words[0], None, words[1:]


def together(reports: list[Report], commands: list[str]) -> Report:
    """One report of the runs of ``commands`` (their reports, in order)."""
    merged = Report(device=reports[0].device, tensorflow=next((r.tensorflow for r in reports if r.tensorflow), None),
                    tables=next((r.tables for r in reports if r.tables), None))
    entries: dict = {}
    for report in reports:
        merged.findings += report.findings
        merged.errors += report.errors
        for entry in report.entries:
            key = (entry.path, entry.name, entry.line)
            if key not in entries or SEVERITY[entry.verdict] > SEVERITY[entries[key].verdict]:
                entries[key] = entry
    merged.findings = one_per_place(merged.findings)
    merged.entries = list(entries.values())
    merged.runs = [{"command": command, **(report.run or {})} for command, report in zip(commands, reports)]
    return merged
