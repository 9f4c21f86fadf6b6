"""What a run reports, decided once, at its end.

Rules produce every finding, and every rule sees them all (whether an entry is blocked never
depends on ``--select``). Here, once per run: the selected codes, ``per-file-ignores`` and the
``# xlalint: ignore`` comments keep or drop each finding; each entry's verdict follows from the
findings kept for it; and the selection rules (unused suppressions) read the comments' use.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, replace
from typing import Iterable

from xlalint.checks import SelectedContext, hooks
from xlalint.core.results import Finding, Report
from xlalint.settings.table import Options
from xlalint.source.suppressions import SuppressionIndex

PENDING = "pending"  # an entry's verdict until its findings are selected


@dataclass(frozen=True)
class Produced:
    """A finding as a rule produced it, with what selecting it needs to know."""

    finding: Finding
    entries: tuple[int, ...] = ()  # the indexes in ``report.entries`` of the entries whose verdicts it counts for
    entry_site: tuple[str, int] | None = None  # (file, def line) of its traced entry: a comment there covers it


def verdict(findings: Iterable[Finding]) -> str:
    """"incompatible" exactly when an error-severity finding is reported for the entry."""
    return "incompatible" if any(f.severity == "error" for f in findings) else "compatible"


def ignored(options: Options, path: str, code: str) -> bool:
    """``per-file-ignores``: a glob (from ``options.root``) that matches the file lists a prefix of ``code``."""
    rel = os.path.relpath(os.path.abspath(path), options.root)
    return any(fnmatch.fnmatch(rel, glob) and any(code.startswith(p) for p in prefixes)
               for glob, prefixes in options.per_file_ignores.items())


def _kept(produced: Produced, options: Options, suppressions: SuppressionIndex | None) -> bool:
    f = produced.finding
    if f.code not in options.select or ignored(options, f.path, f.code):
        return False
    if suppressions is None:
        return True
    return not suppressions.suppressed(f.path, f.line, f.code) and not (
        produced.entry_site and suppressions.suppressed(*produced.entry_site, f.code))


def select(report: Report, produced: list[Produced], options: Options, suppressions: SuppressionIndex | None,
           checked: Iterable[str] = ()) -> list[Finding]:
    """The findings the run reports, in the order produced, then the selection rules' on ``checked`` files;
    sets each pending verdict of ``report.entries``. ``suppressions`` None: comments are not read.

    A selection rule's findings are about the comments themselves: selected, never suppressed."""
    kept = [p for p in produced if _kept(p, options, suppressions)]
    for i, entry in enumerate(report.entries):
        if entry.verdict == PENDING:
            report.entries[i] = replace(entry, verdict=verdict(p.finding for p in kept if i in p.entries))
    findings = [p.finding for p in kept]
    if suppressions is not None:
        ctx = SelectedContext(tuple(checked), suppressions, tuple(options.select))
        findings += [f for check in hooks("check_selected") for f in check(ctx) if f.code in options.select]
    return findings
