"""``--format gitlab``: a GitLab code-quality report (a JSON array of issues) for merge-request widgets."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from xlalint.report.sarif import source_root
from xlalint.core.results import Report

SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def _path(path: str, root: Path) -> str:
    """Relative to the repository root with ``/``, as GitLab matches it against the merge request's files."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return absolute.as_posix()


def _issue(check: str, description: str, severity: str, path: str, line: int, fingerprint: str) -> dict:
    return {"type": "issue", "check_name": check, "description": description, "severity": severity,
            "fingerprint": fingerprint, "location": {"path": path, "lines": {"begin": line}}}


def _digest(*parts) -> str:
    return hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:32]


def emit(report: Report) -> str:
    root = source_root()
    issues = []
    for f in sorted(report.findings, key=lambda f: (f.path, f.line, f.col, f.code)):
        path = _path(f.path, root)
        issues.append(_issue(f.code, f"{f.code} {f.cell_prefix}{f.message}. {f.hint}", SEVERITY[f.severity], path, f.file_line,
                             f.fingerprint or _digest(f.code, path, f.line, f.col, f.message)))
    for e in report.errors:
        path = _path(e.path, root)
        issues.append(_issue("xlalint/no-entry-point" if e.notice else "xlalint/file-error", e.message,
                             "info" if e.notice else "major", path, 1, _digest("error", path, e.message)))
    for entry in report.entries:
        if entry.verdict == "unknown":
            path = _path(entry.path, root)
            issues.append(_issue("xlalint/not-checked", f"`{entry.name}` not checked: {entry.error}", "minor", path,
                                 entry.line, _digest("unknown", path, entry.name)))
    return json.dumps(issues, indent=2)
