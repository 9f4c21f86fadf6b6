"""Findings and file errors as LSP diagnostics, each published to the document (or notebook cell) it is in."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from lsprotocol import types
from pygls.uris import from_fs_path

from xlalint.core.results import FileError, Finding
from xlalint.lsp.documents import Buffer
from xlalint.report.sarif import help_uri, project_url

SOURCE = "xlalint"
SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
            "info": types.DiagnosticSeverity.Information}
WORD = re.compile(r"[\w.]+")
RULES_FOLDER = Path(__file__).resolve().parents[2] / "rules"  # a source checkout's rule pages


@lru_cache(maxsize=None)
def rule_page(code: str) -> str | None:
    """Where the rule's page is: on the project's site when the package names one, else the checkout's file."""
    page = help_uri(code, project_url())
    if page:
        return page
    local = RULES_FOLDER / code / "README.md"
    return local.as_uri() if local.is_file() else None


def line_range(lines: list[str], line: int, col: int = 0) -> types.Range:
    """From a 0-based line and 1-based column (0: the line's first character) to the end of the word there,
    or of the line's text when no word starts there."""
    body = lines[line].rstrip("\r\n") if 0 <= line < len(lines) else ""
    start = col - 1 if col > 0 else len(body) - len(body.lstrip())
    word = WORD.match(body, start)
    end = word.end() if word else len(body.rstrip())
    return types.Range(types.Position(line, start), types.Position(line, max(end, start)))


def diagnostics(buffer: Buffer, findings: list[Finding], errors: Sequence[FileError] = ()) -> dict[str, list]:
    """Each of the buffer's documents with its diagnostics (an empty list clears a document's)."""
    out: dict[str, list[types.Diagnostic]] = {uri: [] for uri in buffer.documents}
    for finding in findings:
        uri, line = buffer.place(finding.line)
        out[uri].append(diagnostic(buffer, finding, uri, line))
    first = buffer.documents[0]
    for error in errors:
        out[first].append(types.Diagnostic(line_range(buffer.lines(first), 0), error.message, source=SOURCE,
                                           severity=types.DiagnosticSeverity.Information if error.notice
                                           else types.DiagnosticSeverity.Error))
    return out


def diagnostic(buffer: Buffer, finding: Finding, uri: str, line: int) -> types.Diagnostic:
    page = rule_page(finding.code)
    return types.Diagnostic(
        range=line_range(buffer.lines(uri), line, finding.col), message=finding.message, source=SOURCE,
        severity=SEVERITY[finding.severity], code=finding.code,
        code_description=types.CodeDescription(href=page) if page else None,
        related_information=[types.DiagnosticRelatedInformation(_location(buffer, r.path, r.line), r.message)
                             for r in finding.related] or None,
        data={"hint": finding.hint, "fix": finding.fix.safety if finding.fix else None})


def _location(buffer: Buffer, path: str, line: int) -> types.Location:
    """A related place: in the buffer itself (a notebook's cell), or a line of another file."""
    if os.path.abspath(path) == buffer.path:
        uri, at = buffer.place(line)
        return types.Location(uri, line_range(buffer.lines(uri), at))
    position = types.Position(max(line - 1, 0), 0)
    return types.Location(from_fs_path(os.path.abspath(path)) or path, types.Range(position, position))
