"""Apply the fixes of a report: compute new sources, show diffs, write files atomically."""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from collections import defaultdict
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper

from xlalint.files import is_env_file
from xlalint.fixes.edits import AUTO_JIT_FLAG, DEVICES_FLAG, FixTransformer
from xlalint.results import Finding


@dataclass
class FixOutcome:
    path: str
    fixed: list[Finding]  # findings whose edit was made
    diff: str  # unified diff ("" when nothing changed)
    error: str | None = None  # why the file was left alone


def _fix_text_file(old: str, findings: list[Finding]) -> tuple[str, list[Finding]]:
    """Shell scripts and Dockerfiles: the flag replaced on the reported lines."""
    lines = old.splitlines(keepends=True)
    fixed = []
    for f in findings:
        if f.fix["kind"] == "auto-jit-flag" and DEVICES_FLAG in lines[f.line - 1]:
            lines[f.line - 1] = lines[f.line - 1].replace(DEVICES_FLAG, AUTO_JIT_FLAG)
            fixed.append(f)
    return "".join(lines), fixed


def apply_to_file(path: str, findings: list[Finding]) -> tuple[str, str, list[Finding]]:
    """``(old source, new source, findings fixed)``; raises ValueError if the result would not parse."""
    with open(path, encoding="utf-8") as handle:
        old = handle.read()
    if not path.endswith(".py") and is_env_file(path):
        new, fixed = _fix_text_file(old, findings)
        return old, new, fixed
    requests = {(f.fix["kind"], f.line) for f in findings}
    transformer = FixTransformer(requests)
    new = MetadataWrapper(cst.parse_module(old)).visit(transformer).code
    try:
        compile(new, path, "exec")
    except SyntaxError as error:
        raise ValueError(f"the fixed source would not parse ({error.msg} at line {error.lineno})") from error
    fixed = [f for f in findings if (f.fix["kind"], f.line) in transformer.done]
    return old, new, fixed


def _write_atomically(path: str, text: str) -> None:
    """Temp file in the same directory, same mode, then rename: readers see old or new, never half."""
    mode = stat.S_IMODE(os.stat(path).st_mode)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".xlalint-", suffix=".py")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def fix_files(findings: list[Finding], unsafe: bool, write: bool) -> list[FixOutcome]:
    """Fix every fixable finding (safe ones, or all with ``unsafe``), one pass per file."""
    by_path = defaultdict(list)
    for f in findings:
        if f.fix and (unsafe or f.fix["safety"] == "safe"):
            by_path[f.path].append(f)
    outcomes = []
    for path, wanted in sorted(by_path.items()):
        try:
            old, new, fixed = apply_to_file(path, wanted)
        except (OSError, UnicodeDecodeError, cst.ParserSyntaxError, ValueError) as error:
            outcomes.append(FixOutcome(path, [], "", f"not fixed: {error}"))
            continue
        diff = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))
        if write and new != old:
            _write_atomically(path, new)
        outcomes.append(FixOutcome(path, fixed, diff))
    return outcomes
