"""Code actions: a finding's fix, as the very edit ``xlalint --fix`` makes (``xlalint.fixes``), and a comment that
suppresses it on its line. In a notebook the module's edit is cut into its cells: a fix touches only its cell."""

from __future__ import annotations

import libcst as cst
from lsprotocol import types

from xlalint.core.results import Finding
from xlalint.fixes.apply import edit, fix_python
from xlalint.fixes.source import changed_blocks
from xlalint.inputs.notebooks import split_lines
from xlalint.lsp.documents import Buffer
from xlalint.source.suppressions import COMMENT

FIX_ALL = "source.fixAll.xlalint"


def fixed_text(buffer: Buffer, findings: list[Finding]) -> str:
    """The buffer's module after the fixes of ``findings``; raises ValueError (and what ``--fix`` reports) when
    they cannot be made."""
    if buffer.module is not None:
        return fix_python(buffer.path, buffer.source, findings)[0]
    return edit(buffer.path, buffer.source.encode("utf-8"), findings)[0].decode("utf-8")


def fix_edits(buffer: Buffer, new_source: str) -> dict[str, list[types.TextEdit]]:
    """The buffer's change to ``new_source`` as the fewest line edits, per document (cell)."""
    old, new = split_lines(buffer.source), split_lines(new_source)
    edits: dict[str, list[types.TextEdit]] = {}
    for i1, i2, j1, j2 in changed_blocks(old, new):
        if old[i1:i2] == new[j1:j2]:
            continue
        uri, first = buffer.place(i1 + 1)
        lines = buffer.lines(uri)
        edits.setdefault(uri, []).append(_replace(lines, first, first + (i2 - i1), "".join(new[j1:j2])))
    return edits


def _replace(lines: list[str], first: int, end: int, text: str) -> types.TextEdit:
    """Lines ``first`` to ``end`` (0-based, end excluded) of a document replaced by ``text`` (whole lines)."""
    start = types.Position(first, 0)
    if end < len(lines):
        return types.TextEdit(types.Range(start, types.Position(end, 0)), text)
    if lines and not lines[-1].endswith(("\n", "\r")):  # the document's last line has no ending: keep it so
        last = types.Position(len(lines) - 1, len(lines[-1]))
        text = text[:-1] if text.endswith("\n") else text
        if first >= len(lines):
            start, text = last, "\n" + text
        return types.TextEdit(types.Range(start, last), text)
    return types.TextEdit(types.Range(start, types.Position(len(lines), 0)), text)


def suppress_edit(buffer: Buffer, finding: Finding) -> tuple[str, types.TextEdit] | None:
    """``# xlalint: ignore[CODE]`` on the finding's line (its code added to one there); None when one there
    already ignores every code."""
    uri, line = buffer.place(finding.line)
    body = buffer.lines(uri)[line].rstrip("\r\n")
    found = COMMENT.search(body)
    if found and found.group(1) == "ignore":
        if found.group(2) is None:
            return None
        at = types.Position(line, found.end(2))
        return uri, types.TextEdit(types.Range(at, at), f", {finding.code}" if found.group(2).strip() else finding.code)
    at = types.Position(line, len(body))
    return uri, types.TextEdit(types.Range(at, at), f"  # xlalint: ignore[{finding.code}]")


def actions(buffer: Buffer, findings: list[Finding], every_fix: list[Finding]) -> list[types.CodeAction]:
    """The code actions for ``findings`` (those under the cursor), then one that fixes ``every_fix`` safe fix of
    the buffer (``--fix``)."""
    out = []
    for finding in findings:
        if finding.fix:
            title = f"xlalint: {finding.fix.description} ({finding.code}, {finding.fix.safety} fix)"
            out += _action(buffer, title, types.CodeActionKind.QuickFix, [finding], finding.fix.safety == "safe")
        suppress = suppress_edit(buffer, finding)
        if suppress:
            uri, text_edit = suppress
            out.append(types.CodeAction(f"xlalint: suppress {finding.code} on this line", types.CodeActionKind.QuickFix,
                                        edit=types.WorkspaceEdit(changes={uri: [text_edit]})))
    safe = [f for f in every_fix if f.fix and f.fix.safety == "safe"]
    if safe:
        out += _action(buffer, "xlalint: fix all safe fixes (--fix)", FIX_ALL, safe, False)
    return out


def _action(buffer: Buffer, title: str, kind: str, findings: list[Finding], preferred: bool) -> list[types.CodeAction]:
    try:
        changes = fix_edits(buffer, fixed_text(buffer, findings))
    except (ValueError, SyntaxError, UnicodeError, cst.ParserSyntaxError) as error:
        return [types.CodeAction(title, kind, disabled=types.CodeActionDisabled(reason=str(error)))]
    if not changes:
        return []
    return [types.CodeAction(title, kind, is_preferred=preferred or None, edit=types.WorkspaceEdit(changes=changes))]
