"""Apply the fixes of a report: compute new bytes, show diffs, write files atomically."""

from __future__ import annotations

import codecs
import os
import stat
import tempfile
from collections import defaultdict
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper

from xlalint.checks import fix_of
from xlalint.inputs.files import display_path, is_env_file
from xlalint.fixes.edits import FixTransformer
from xlalint.fixes.guard import CHANGED, Guard
from xlalint.fixes.source import Source, unified_diff
from xlalint.fixes.notebook import rewrite
from xlalint.inputs.notebooks import is_notebook, parse_notebook
from xlalint.core.results import Finding


@dataclass
class FixOutcome:
    path: str
    fixed: list[Finding]  # findings whose edit was made
    diff: bytes  # unified diff of the bytes --fix writes (b"" when nothing changes)
    error: str | None = None  # why the file was left alone


def _kind(finding: Finding) -> str:
    """The kind of ``finding``'s fix: every finding given to ``edit`` has one."""
    assert finding.fix is not None
    return finding.fix.kind


def _fix_text_file(old: str, findings: list[Finding]) -> tuple[str, list[Finding]]:
    """Shell scripts and Dockerfiles: each reported line as its rule's ``line_edit`` rewrites it."""
    lines = old.split("\n")
    fixed = []
    for f in findings:
        line_edit = fix_of(_kind(f)).line_edit
        new = line_edit(lines[f.line - 1]) if line_edit else None
        if new is not None:
            lines[f.line - 1] = new
            fixed.append(f)
    return "\n".join(lines), fixed


def edit(path: str, data: bytes, findings: list[Finding]) -> tuple[bytes, list[Finding]]:
    """``(new bytes, findings fixed)``; raises ValueError if the result would not parse."""
    if is_notebook(path):  # the edits of its module, written into the source strings of the edited lines
        bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
        text = data.decode("utf-8-sig")
        new, fixed = fix_python(path, parse_notebook(text).source, findings)
        return bom + rewrite(text, new).encode("utf-8"), fixed
    source = Source.decode(data)
    if not path.endswith(".py") and is_env_file(path):
        new, fixed = _fix_text_file(source.text, findings)
        return source.encode(new), fixed
    new, fixed = fix_python(path, source.text, findings)
    return source.encode(new), fixed


def fix_python(path: str, text: str, findings: list[Finding]) -> tuple[str, list[Finding]]:
    """``(new text, findings fixed)`` of Python source; raises ValueError if the result would not parse."""
    transformer = FixTransformer({(_kind(f), f.line): fix_of(_kind(f)) for f in findings})
    new = MetadataWrapper(cst.parse_module(text)).visit(transformer).code
    try:
        compile(new, path, "exec")
    except SyntaxError as error:
        raise ValueError(f"the fixed source would not parse ({error.msg} at line {error.lineno})") from error
    return new, [f for f in findings if (_kind(f), f.line) in transformer.done]


def apply_to_file(path: str, findings: list[Finding]) -> tuple[bytes, bytes, list[Finding]]:
    """``(old bytes, new bytes, findings fixed)`` for the file as it is now."""
    with open(path, "rb") as handle:
        old = handle.read()
    return (old, *edit(path, old, findings))


def _write_atomically(path: str, old: bytes, new: bytes) -> bool:
    """Temp file in the same directory with the file's owner and mode, renamed over it only if the
    file still holds ``old``: readers see old or new, never half. False when it changed meanwhile."""
    info = os.stat(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".xlalint-", suffix=".py")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(new)
        mine = os.stat(tmp)
        if (mine.st_uid, mine.st_gid) != (info.st_uid, info.st_gid):
            try:
                os.chown(tmp, info.st_uid, info.st_gid)
            except PermissionError as error:
                raise ValueError(f"cannot keep the file's owner and group ({error.strerror})") from error
        os.chmod(tmp, stat.S_IMODE(info.st_mode))
        with open(path, "rb") as handle:
            if handle.read() != old:
                os.unlink(tmp)
                return False
        os.replace(tmp, path)
        return True
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _fix_one(real: str, wanted: list[Finding], guard: Guard, write: bool) -> FixOutcome:
    paths = {f.path for f in wanted}
    shown = min(paths, key=lambda p: (os.path.islink(p), p))  # the target's own name when it was checked too
    refusal = guard.refusal(paths, real)
    if refusal:
        return FixOutcome(shown, [], b"", f"not fixed: {refusal}")
    with open(real, "rb") as handle:
        old = handle.read()
    if guard.changed(paths, old):
        return FixOutcome(shown, [], b"", f"not fixed: {CHANGED}")
    new, fixed = edit(real, old, wanted)
    if new == old:
        return FixOutcome(shown, fixed, b"")
    if write and not _write_atomically(real, old, new):
        return FixOutcome(shown, [], b"", f"not fixed: {CHANGED}")
    return FixOutcome(shown, fixed, unified_diff(display_path(real) if os.path.islink(shown) else shown, old, new))


def fix_files(findings: list[Finding], unsafe: bool, write: bool, guard: Guard | None = None) -> list[FixOutcome]:
    """Fix every fixable finding (safe ones, or all with ``unsafe``), one pass per file.

    A symbolic link is followed and its target edited in place; ``guard`` (default: no limits)
    says which files may be written."""
    by_file = defaultdict(list)
    for f in findings:
        if f.fix and (unsafe or f.fix.safety == "safe"):
            by_file[os.path.realpath(f.path)].append(f)
    outcomes = []
    for real, wanted in sorted(by_file.items()):
        try:
            outcomes.append(_fix_one(real, wanted, guard or Guard(), write))
        except (OSError, SyntaxError, UnicodeError, LookupError, cst.ParserSyntaxError, ValueError) as error:
            outcomes.append(FixOutcome(min(f.path for f in wanted), [], b"", f"not fixed: {error}"))
    return outcomes
