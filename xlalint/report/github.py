"""``--format github``: GitHub Actions workflow commands, shown as annotations on pull requests."""

from __future__ import annotations

from xlalint.report.modes import mode_phrase
from xlalint.core.results import Report

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def emit(report: Report) -> str:
    lines = []
    for f in sorted(report.findings, key=lambda f: (f.path, f.line, f.col, f.code)):
        column = "" if f.cell else f"col={f.col},"  # a notebook's line is a line of its JSON: no column
        props = (f"file={_escape_property(f.path)},line={f.file_line},{column}"
                 f"title={_escape_property(f'{f.code} {f.name}')}")
        lines.append(f"::{LEVEL[f.severity]} {props}::{_escape_data(f'{f.cell_prefix}{f.message}. {f.hint}')}")
    for e in report.errors:
        lines.append(f"::{'notice' if e.notice else 'error'} file={_escape_property(e.path)},title=xlalint::"
                     f"{_escape_data(e.message)}")
    for entry in report.entries:
        if entry.verdict == "unknown":
            lines.append(f"::warning file={_escape_property(entry.path)},line={entry.line},title=xlalint::"
                         f"{_escape_data(f'`{entry.name}` not checked: {entry.error}')}")
    for entry in report.entries:
        if phrase := mode_phrase(entry):
            lines.append(f"::notice file={_escape_property(entry.path)},line={entry.line},title=xlalint XLA mode::"
                         f"{_escape_data(phrase)}")
    return "\n".join(lines)
