"""Default output: findings grouped by file, then errors, then a summary."""

from __future__ import annotations

from collections import Counter
from itertools import groupby

from xlalint.results import Report

COLORS = {"error": "31", "warning": "33", "info": "36", "path": "1", "hint": "2"}


def _paint(text: str, role: str, color: bool) -> str:
    return f"\033[{COLORS[role]}m{text}\033[0m" if color else text


def emit(report: Report, color: bool = False) -> str:
    """Human-readable report; ``color`` adds ANSI colours (the CLI sets it for a TTY without NO_COLOR)."""
    out: list[str] = []
    ordered = sorted(report.findings, key=lambda f: (f.path, f.line, f.col, f.code))
    for path, findings in groupby(ordered, key=lambda f: f.path):
        out.append(_paint(path, "path", color))
        for f in findings:
            tag = _paint(f"{f.code} [{f.severity}]", f.severity, color)
            out.append(f"  {f.path}:{f.line}:{f.col}: {tag} {f.message}  ({f.entry})")
            out.append(_paint(f"      hint: {f.hint}", "hint", color))
        out.append("")
    for error in report.errors:
        out.append(f"{error.path}: error: {error.message}")
    for entry in report.entries:
        if entry.verdict == "unknown":
            out.append(f"{entry.path}:{entry.line}: `{entry.name}` not checked: {entry.error}")
    if report.errors or any(e.verdict == "unknown" for e in report.entries):
        out.append("")
    out.extend(_summary(report))
    return "\n".join(out)


def _summary(report: Report) -> list[str]:
    if not report.entries and not report.errors:
        return ["nothing to check: no file with TensorFlow entry points found"]
    verdicts = Counter(e.verdict for e in report.entries)
    lines = [
        f"{len(report.entries)} entries checked for XLA on {report.device}: "
        f"{verdicts['compatible']} compatible, {verdicts['incompatible']} incompatible, "
        f"{verdicts['unknown']} not traceable; {len(report.errors)} file errors"
    ]
    ready = [f"{e.path}::{e.name}" for e in report.entries if e.verdict == "compatible"]
    if ready:
        lines.append("ready for jit_compile=True: " + ", ".join(ready))
    codes = Counter(f.code for f in report.findings)
    if codes:
        lines.append("findings: " + ", ".join(f"{code} x{n}" for code, n in sorted(codes.items())))
    return lines
