"""Baselines: record today's findings, then report only new ones (adopting xlalint on old code).

A finding's fingerprint is a hash of its code, file (relative to the project root), entry, op type
and the text of its line with whitespace collapsed: not its line number, so edits elsewhere in the
file keep it. Identical findings on identical lines are told apart by their order in the file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field, replace

from xlalint.inputs.files import read_source
from xlalint.inputs.notebooks import is_notebook
from xlalint.core.results import Finding
from xlalint.version import VERSION

FORMAT = 1  # the baseline file's "version"
FIELDS = ("code", "path", "line", "entry", "op_type", "message")  # kept for people reading the file


class BaselineError(ValueError):
    """A baseline file that cannot be read; the message names it."""


@dataclass
class BaselineOutcome:
    """What ``--baseline`` did to a run: findings it hid, and recorded ones that are gone."""

    path: str
    unchanged: list[Finding] = field(default_factory=list)
    fixed: list[dict] = field(default_factory=list)  # the baseline's records, as written

    def to_json(self) -> dict:
        return {"path": self.path, "unchanged": len(self.unchanged), "fixed": self.fixed}


def _line_text(path: str, line: int, cache: dict) -> str:
    if path not in cache and is_notebook(path):  # the line of its module, as findings count them
        cache[path] = (read_source(path)[0] or "").splitlines()
    if path not in cache:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                cache[path] = handle.read().splitlines()
        except OSError:
            cache[path] = []
    lines = cache[path]
    return " ".join(lines[line - 1].split()) if 0 < line <= len(lines) else ""


def with_fingerprints(findings: list[Finding], root: str) -> list[Finding]:
    """The findings with ``fingerprint`` set; paths in the hash are relative to ``root``, with ``/``."""
    cache: dict[str, list[str]] = {}
    seen: Counter = Counter()
    out = list(findings)
    for i in sorted(range(len(findings)), key=lambda i: _place(findings[i])):
        f = findings[i]
        where = os.path.relpath(os.path.abspath(f.path), root).replace(os.sep, "/")
        key = "\0".join((f.code, where, f.entry, f.op_type or "", _line_text(f.path, f.line, cache)))
        digest = hashlib.sha256(key.encode()).hexdigest()[:32]
        seen[digest] += 1
        out[i] = replace(f, fingerprint=f"{digest}:{seen[digest]}")
    return out


def _place(f: Finding) -> tuple:
    return f.path, f.line, f.col, f.code


def write_baseline(path: str, findings: list[Finding]) -> int:
    """Record ``findings`` (fingerprinted) in ``path``; returns how many."""
    records = sorted(({"fingerprint": f.fingerprint, **{k: getattr(f, k) for k in FIELDS}} for f in findings),
                     key=lambda r: (r["path"], r["line"], r["code"], r["fingerprint"]))
    data = {"version": FORMAT, "xlalint": VERSION, "findings": records}
    try:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2)
            out.write("\n")
    except OSError as error:
        raise BaselineError(f"{path}: cannot write it: {error.strerror or error}") from error
    return len(records)


def read_baseline(path: str) -> list[dict]:
    """The records of a baseline file; a missing or malformed one is a ``BaselineError``."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise BaselineError(f"{path}: cannot read the baseline: {error.strerror or error} "
                            "(write one with --write-baseline)") from error
    except (ValueError, UnicodeDecodeError) as error:
        raise BaselineError(f"{path}: not a baseline file: {error}") from error
    records = data.get("findings") if isinstance(data, dict) and data.get("version") == FORMAT else None
    if not isinstance(records, list) or not all(isinstance(r, dict) and isinstance(r.get("fingerprint"), str)
                                                for r in records):
        raise BaselineError(f"{path}: not an xlalint baseline (version {FORMAT}) file")
    return records


def apply_baseline(findings: list[Finding], records: list[dict], path: str) -> tuple[list[Finding], BaselineOutcome]:
    """Split fingerprinted ``findings`` into new ones and those the baseline knows; list what went away."""
    known = Counter(r["fingerprint"] for r in records)
    new, outcome = [], BaselineOutcome(path)
    for f in findings:
        if known[f.fingerprint] > 0:
            known[f.fingerprint] -= 1
            outcome.unchanged.append(f)
        else:
            new.append(f)
    for record in records:
        if known[record["fingerprint"]] > 0:
            known[record["fingerprint"]] -= 1
            outcome.fixed.append(record)
    return new, outcome


def summary_lines(outcome: BaselineOutcome) -> list[str]:
    """What the baseline hid, and each recorded finding that went away, for the text report."""
    lines = [f"baseline {outcome.path}: {len(outcome.unchanged)} recorded finding(s) not shown, "
             f"{len(outcome.fixed)} fixed"]
    lines += [f"  fixed: {r.get('path')}:{r.get('line')} {r.get('code')} {r.get('message')}" for r in outcome.fixed]
    if outcome.fixed:
        lines.append(f"  refresh it: xlalint --write-baseline {outcome.path} (with the same paths)")
    return lines
