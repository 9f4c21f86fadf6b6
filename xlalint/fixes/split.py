"""Display-only split suggestion for a ``jit_compile=True`` function with blockers.

Inside such a function nothing can opt out of XLA (tensorflow#63632), so the only
remedy is to split it: the statements that hold blockers run in a plain function,
the runs of statements around them stay compiled.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider


class _BodyRanges(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, def_line: int):
        self.def_line = def_line
        self.statements: list[tuple[int, int]] | None = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if self.get_metadata(PositionProvider, node.name).start.line == self.def_line:
            body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
            self.statements = [(self.get_metadata(PositionProvider, s).start.line,
                                self.get_metadata(PositionProvider, s).end.line) for s in body]
            return False
        return True


def _lines(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def split_suggestion(source: str, def_line: int, blocker_lines: set[int], shift: int = 0) -> str | None:
    """"keep lines 8-9 compiled, run line 10 without XLA, ..." or None when no split helps; the lines
    named are ``shift`` less than the source's (a notebook names the lines of the function's cell)."""
    visitor = _BodyRanges(def_line)
    try:
        MetadataWrapper(cst.parse_module(source)).visit(visitor)
    except cst.ParserSyntaxError:
        return None
    if not visitor.statements:
        return None
    runs: list[list] = []  # [blocked, first, last]
    for first, last in visitor.statements:
        blocked = any(first <= line <= last for line in blocker_lines)
        if runs and runs[-1][0] == blocked:
            runs[-1][2] = last
        else:
            runs.append([blocked, first, last])
    if all(blocked for blocked, _, _ in runs):
        return None  # every statement holds a blocker: drop jit_compile instead
    if not any(blocked for blocked, _, _ in runs):
        return None  # the blockers sit in functions it calls: which of its lines reach them is not known here
    parts = [f"{'run' if blocked else 'keep'} {_lines(first - shift, last - shift)} "
             f"{'without XLA' if blocked else 'compiled'}" for blocked, first, last in runs]
    return "split the function: " + ", then ".join(parts)
