"""A notebook's module, edited, written back into the notebook's JSON text: only the source strings of
the changed lines are replaced, so every other byte of the file stays as it was."""

from __future__ import annotations

import json
import re

from xlalint.fixes.source import changed_blocks
from xlalint.inputs.notebooks import Cell, NotebookError, body, parse_notebook


def rewrite(text: str, new_source: str) -> str:
    """The notebook ``text`` with ``new_source`` (an edit of its module) written into its cells: only the
    JSON strings of changed lines are replaced; raises ``NotebookError`` for an edit of a magic line or
    one that spans cells."""
    notebook = parse_notebook(text)
    old = [line for cell in notebook.cells for line in cell.code]
    new = new_source.split("\n")
    if new and new[-1] == "":
        new.pop()
    owner = [cell for cell in notebook.cells for _ in cell.code]
    parts: dict[int, list[str]] = {cell.number: [] for cell in notebook.cells}
    by_number = {cell.number: cell for cell in notebook.cells}
    for i1, i2, j1, j2 in changed_blocks(old, new):
        if old[i1:i2] == new[j1:j2] or i2 - i1 == j2 - j1 > 1:  # (line-for-line edits: one line at a time)
            for i, j in zip(range(i1, i2), range(j1, j2)):
                cell = owner[i]
                if old[i] == new[j]:
                    parts[cell.number].append(cell.lines[i - cell.first + 1])
                elif _is_magic(cell, i):
                    raise NotebookError("an edit would change a magic or shell line")
                else:
                    parts[cell.number].append(new[j] + "\n")
            continue
        cells = {owner[i].number for i in range(i1, i2)} or {_insertion_cell(owner, i1)}
        if len(cells) > 1:
            raise NotebookError("an edit spans several cells")
        if any(_is_magic(owner[i], i) for i in range(i1, i2)):
            raise NotebookError("an edit would change a magic or shell line")
        parts[cells.pop()].extend(line + "\n" for line in new[j1:j2])
    edits = []
    for number, lines in parts.items():
        cell = by_number[number]
        if lines == list(cell.lines):
            continue
        if lines:  # the cell's last line keeps its old ending (none, usually)
            last_ending = cell.lines[-1][len(body(cell.lines[-1])):] if cell.lines else ""
            lines[-1] = body(lines[-1]) + last_ending
            lines[:-1] = [line if line != body(line) else line + "\n" for line in lines[:-1]]
        edits.extend(_token_edits(text, cell, "".join(lines)))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _is_magic(cell: Cell, index: int) -> bool:
    """Whether module line ``index`` (0-based) stands in for IPython syntax."""
    return cell.code[index - cell.first + 1] != body(cell.lines[index - cell.first + 1])


def _insertion_cell(owner: list[Cell], index: int) -> int:
    """The cell a line inserted before module line ``index`` (0-based) goes to: the next line's, or the last."""
    return owner[min(index, len(owner) - 1)].number


def _token_edits(text: str, cell: Cell, new_text: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) edits of the cell's source strings in ``text``."""
    ascii_only = not any(ord(c) > 127 for c in text) and bool(re.search(r"\\u(00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])", text))

    def encode(value: str) -> str:
        return json.dumps(value, ensure_ascii=ascii_only)

    if not cell.listed or not cell.tokens:
        if not cell.tokens:
            raise NotebookError(f"cell {cell.number} has no source to edit")
        start, end = cell.tokens[0]
        return [(start, end, encode(new_text))]
    old = [json.loads(text[s:e]) for s, e in cell.tokens]
    new = new_text.splitlines(keepends=True)  # as nbformat writes a source list
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    changed_old, changed_new = cell.tokens[head:len(old) - tail], new[head:len(new) - tail]
    separator = _separator(text, cell.tokens)
    replacement = separator.join(encode(value) for value in changed_new)
    if changed_old:
        return [(changed_old[0][0], changed_old[-1][1], replacement)]
    if not changed_new:
        return []
    if head:  # inserted after the string before
        at = cell.tokens[head - 1][1]
        return [(at, at, separator + replacement)]
    at = cell.tokens[0][0]
    return [(at, at, replacement + separator)]


def _separator(text: str, tokens) -> str:
    """What stands between two strings of a source list in this file (a comma, a newline, indentation)."""
    if len(tokens) > 1:
        return text[tokens[0][1]:tokens[1][0]]
    start = tokens[0][0]
    line_start = text.rfind("\n", 0, start) + 1
    indent = text[line_start:start]
    return ",\n" + indent if not indent.strip() else ", "
