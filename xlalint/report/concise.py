"""``--format concise``: one line per finding and per error (and per auto-clustered entry)."""

from __future__ import annotations

from xlalint.report.modes import mode_phrase
from xlalint.core.results import Report


def emit(report: Report) -> str:
    lines = [f"{f.where}: {f.code} {f.message}"
             for f in sorted(report.findings, key=lambda f: (f.path, f.line, f.col, f.code))]
    lines += [f"{e.path}: {'notice' if e.notice else 'error'}: {e.message}" for e in report.errors]
    lines += [f"{e.where}: not checked: {e.error}" for e in report.entries if e.verdict == "unknown"]
    lines += [f"{e.where}: {phrase}" for e in report.entries if (phrase := mode_phrase(e))]
    return "\n".join(lines)
