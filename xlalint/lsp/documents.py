"""What the server checks of an open document: its file's path, the Python module xlalint reads, and where each
line of that module is in the editor (a notebook's lines are in its cells, each cell a document of its own)."""

from __future__ import annotations

import functools

import os
from dataclasses import dataclass

from xlalint.inputs.notebooks import Cell, NotebookModule, cells_module, split_lines


@dataclass(frozen=True)
class Buffer:
    """An open Python file or notebook as the editor holds it now (saved or not)."""

    key: str  # the text document's URI, or the notebook document's
    path: str  # absolute path of its file
    source: str  # the Python module checked: the text, or a notebook's code cells as one module
    cell_uris: tuple[str, ...] = ()  # a notebook's code cells' documents, in order
    module: NotebookModule | None = None  # a notebook's cells as one module

    @classmethod
    def text(cls, uri: str, path: str, source: str) -> Buffer:
        return cls(uri, os.path.abspath(path), source)

    @classmethod
    def notebook(cls, uri: str, path: str, cells: list[tuple[str, str]]) -> Buffer:
        """``cells``: each code cell's document URI and text, in order."""
        module = cells_module([text for _, text in cells])
        return cls(uri, os.path.abspath(path), module.source, tuple(u for u, _ in cells), module)

    @property
    def documents(self) -> tuple[str, ...]:
        """The documents diagnostics are published to."""
        return self.cell_uris or (self.key,)

    def place(self, line: int) -> tuple[str, int]:
        """``(document URI, 0-based line)`` of a 1-based line of the module."""
        cell = self.cell(line)
        if cell is None:
            return self.key, line - 1
        return self.cell_uris[cell.number - 1], line - cell.first

    def cell(self, line: int) -> Cell | None:
        """The notebook cell holding a 1-based module line (its last cell past the end); None for a text file."""
        if self.module is None:
            return None
        return self.module.cell_at(line) or self.module.cells[-1]

    def module_line(self, uri: str, line: int) -> int:
        """The 1-based module line of a 0-based line of one of its documents."""
        if self.module is None:
            return line + 1
        return self.module.cells[self.cell_uris.index(uri)].first + line

    @functools.cached_property
    def _text_lines(self) -> list[str]:
        return split_lines(self.source)

    def lines(self, uri: str) -> list[str]:
        """The lines of one of its documents as the editor has them (endings kept; a text file's split once)."""
        if self.module is None:
            return self._text_lines
        return list(self.module.cells[self.cell_uris.index(uri)].lines)
