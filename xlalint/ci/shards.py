"""``--shard K/N``: which files a shard checks, and where its results sit in the whole run's report.

A file belongs to shard ``1 + h % N``, where ``h`` is a SHA-256 of its path relative to the project
root (``/``-separated): every file is in exactly one shard, on every machine, and adding a file
moves no other. A shard's JSON report records, under ``"shard"``, the place each of its entries,
findings and errors has in the order a single run would report them, so that ``xlalint merge``
(xlalint.ci.merge) can interleave the shards' reports into exactly that run's report.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING

from xlalint.inputs.files import display_path
from xlalint.core.results import FileError, Finding, place_key

if TYPE_CHECKING:
    from xlalint.core.results import Report

SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
SITE = re.compile(r"(.*?)(?::cell \d+)?:\d+")  # "path:line" or "nb.ipynb:cell 3:2" (xlalint.core.results.place)
# the phases of a run's errors: paths that name nothing (every shard has them), files refused before
# tracing, files whose trace failed; and of its findings: those of shell scripts and Dockerfiles, those
# of Python files (traced or read), then the selection rules'
PATHS, BEFORE_TRACE, TRACED = 0, 1, 2
TEXT, OWN, SELECTED = 0, 1, 2


@dataclass(frozen=True)
class Shard:
    index: int  # 1..count
    count: int

    @property
    def name(self) -> str:
        return f"shard-{self.index}-of-{self.count}"

    def holds(self, path: str, root: str) -> bool:
        """Whether ``path`` is this shard's: by a hash of its path relative to ``root``."""
        relative = PurePath(os.path.relpath(os.path.abspath(path), root)).as_posix()
        digest = int.from_bytes(hashlib.sha256(relative.encode()).digest()[:8], "big")
        return digest % self.count == self.index - 1


def parse_shard(text: str) -> Shard:
    """``"K/N"`` with 1 <= K <= N; anything else is a ValueError."""
    match = SPEC.fullmatch(text)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise ValueError(f"not a shard K/N with 1 <= K <= N: {text!r}")
    return Shard(int(match[1]), int(match[2]))


@dataclass
class ShardRun:
    """One shard's run: its share of the files, and each result's place in the whole run's order."""

    shard: Shard
    positions: dict[str, int]  # display path -> the file's position among every file of the run
    origins: dict[tuple, list[int]] = field(default_factory=dict)  # place_key -> [phase, position of its file]
    error_phases: dict[tuple[str, str], int] = field(default_factory=dict)  # (path, message) -> phase
    # (path, line) of the suppression comments that suppressed something: one in another shard's file is
    # not unused (XLA801) there when a finding produced here, from a file of this shard, met it
    used_comments: list[tuple[str, int]] = field(default_factory=list)

    @classmethod
    def start(cls, report: Report, files: list[str], shard: Shard | None, root: str) -> list[str]:
        """The shard's files among the run's ``files`` (all of them without a shard); records the
        shard in ``report``, once the errors of the run's paths are in it."""
        if shard is None:
            return files
        report.shard = cls(shard, {display_path(path): i for i, path in enumerate(files)})
        report.shard.errors(report.errors, PATHS)
        return [path for path in files if shard.holds(path, root)]

    def produced(self, findings, path: str, phase: int) -> None:
        """``findings`` came from checking ``path`` (a finding produced twice keeps its first file)."""
        for finding in findings:
            self.origins.setdefault(place_key(finding), [phase, self.positions[display_path(path)]])

    def errors(self, errors: list[FileError], phase: int) -> None:
        for error in errors:
            self.error_phases.setdefault((error.path, error.message), phase)

    def _position(self, path: str) -> int:
        return self.positions.get(path, len(self.positions))

    def _site_position(self, site: str) -> int:
        match = SITE.fullmatch(site)
        return self._position(match[1] if match else site)

    def finding_key(self, finding: Finding) -> list[int]:
        return self.origins.get(place_key(finding)) or [SELECTED, self._position(finding.path)]

    def error_key(self, index: int, error: FileError) -> list[int]:
        phase = self.error_phases.get((error.path, error.message), TRACED)
        return [phase, index if phase == PATHS else self._position(error.path)]

    def block(self, report: Report) -> dict:
        """The ``"shard"`` object of the JSON report."""
        unchanged = report.baseline.unchanged if report.baseline else []
        return {
            "index": self.shard.index, "count": self.shard.count, "files": len(self.positions),
            "order": {"entries": [[OWN, self._position(e.path)] for e in report.entries],
                      "findings": [self.finding_key(f) for f in report.findings],
                      "errors": [self.error_key(i, e) for i, e in enumerate(report.errors)],
                      "unchanged": [self.finding_key(f) for f in unchanged],
                      "auto_jit": [[OWN, self._site_position(site)] for site in report.auto_jit]},
            "unchanged": [f.to_json() for f in unchanged],
            "auto_jit": report.auto_jit,
            "used_comments": [list(place) for place in self.used_comments],
        }
