"""``# xlalint: ignore[CODE, ...]`` comments, as ruff's ``noqa`` and flake8 users expect.

* on a finding's line: suppresses the listed codes (all codes without a list) there;
* on a ``def`` line or one of its decorator lines: for the whole function body;
* ``# xlalint: ignore-file[CODE, ...]`` anywhere: for the whole file.

Codes match by prefix (``XLA1`` covers XLA101 and XLA102). A suppression that
suppresses nothing is reported (XLA801, info), so stale ones do not pile up.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from dataclasses import dataclass, field
from typing import Mapping

from xlalint.inputs.files import read_source

COMMENT = re.compile(r"#\s*xlalint:\s*(ignore-file|ignore)\b(?:\[([A-Za-z0-9_, ]*)\])?")
ALL = ("",)  # the empty prefix matches every code


@dataclass
class Suppression:
    line: int  # where the comment is
    codes: tuple[str, ...]
    first: int  # the lines it covers
    last: int
    used: bool = False

    def covers(self, line: int, code: str) -> bool:
        return self.first <= line <= self.last and any(code.startswith(c) for c in self.codes)


@dataclass
class FileSuppressions:
    items: list[Suppression] = field(default_factory=list)

    def suppress(self, line: int, code: str) -> bool:
        """True (and marks the suppressions used) when a comment covers ``code`` at ``line``."""
        hits = [s for s in self.items if s.covers(line, code)]
        for s in hits:
            s.used = True
        return bool(hits)


def _function_ranges(tree: ast.AST) -> dict[int, tuple[int, int]]:
    """Each def line and decorator line -> the (first, last) lines of that function."""
    ranges = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            for line in range(first, node.lineno + 1):
                ranges[line] = (first, node.end_lineno or node.lineno)  # parsed nodes always have an end
    return ranges


def parse(source: str) -> FileSuppressions:
    result = FileSuppressions()
    if not COMMENT.search(source):  # most files have none: no need to tokenize them
        return result
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        ranges = _function_ranges(ast.parse(source))
    except (tokenize.TokenError, SyntaxError, RecursionError):
        return result
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        match = COMMENT.search(token.string)
        if not match:
            continue
        kind, listed = match.groups()
        codes = tuple(c.strip().upper() for c in (listed or "").split(",") if c.strip()) or ALL
        line = token.start[0]
        if kind == "ignore-file":
            first, last = 1, 10**9
        else:
            first, last = ranges.get(line, (line, line))
        result.items.append(Suppression(line, codes, first, last))
    return result


class SuppressionIndex:
    """The suppressions of every file a run touches, read once, with their use tracked; ``texts`` (absolute path ->
    Python source) are read in place of those files."""

    def __init__(self, texts: Mapping[str, str] | None = None) -> None:
        self._files: dict[str, FileSuppressions] = {}
        self._texts = texts or {}

    def _get(self, path: str) -> FileSuppressions:
        path = os.path.abspath(path)
        if path not in self._files:
            source = self._texts.get(path)
            if source is None:
                source, _ = read_source(path)  # a notebook's code cells, as one module
            self._files[path] = parse(source) if source is not None else FileSuppressions()
        return self._files[path]

    def suppressed(self, path: str, line: int, code: str) -> bool:
        return self._get(path).suppress(line, code)

    def used(self) -> list[tuple[str, int]]:
        """(absolute path, line) of each comment that suppressed something."""
        return [(path, s.line) for path, found in self._files.items() for s in found.items if s.used]

    def unused(self, path: str) -> list[Suppression]:
        return [s for s in self._get(path).items if not s.used]
