"""Display-only split suggestion for a ``jit_compile=True`` function with blockers.

Inside such a function nothing can opt out of XLA (tensorflow#63632), so the only
remedy is to split it: the statements that hold blockers run in a plain function,
the runs of statements around them stay compiled.
"""

from __future__ import annotations

import ast

from xlalint.inputs.files import parse_python


def _statement_lines(source: str, def_line: int) -> list[tuple[int, int]] | None:
    """``(first, last)`` line of each statement of the body of the function defined at ``def_line`` (a nested
    decorated function from its ``def``); None where there is no such function or its body follows the colon on
    the header's line (then there is nothing to split). Python's own parser: ``a; b`` is two statements on one
    line, which fall in the same run."""
    tree, _ = parse_python(source)
    if tree is None:
        return None
    lines = source.split("\n")
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == def_line:
            first = node.body[0]
            if lines[first.lineno - 1].encode()[:first.col_offset].strip():  # ``def f(x): return x``
                return None
            return [(s.lineno, s.end_lineno or s.lineno) for s in node.body]
    return None


def _lines(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def split_suggestion(source: str, def_line: int, blocker_lines: set[int], shift: int = 0) -> str | None:
    """"keep lines 8-9 compiled, run line 10 without XLA, ..." or None when no split helps; the lines
    named are ``shift`` less than the source's (a notebook names the lines of the function's cell)."""
    statements = _statement_lines(source, def_line)
    if not statements:
        return None
    runs: list[list] = []  # [blocked, first, last]
    for first, last in statements:
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
