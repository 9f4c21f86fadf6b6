"""What libcst is not given: files Python cannot compile, and expressions nested too deeply.

libcst walks, copies and prints a tree by recursion, a few Python frames a level: under Python's
default recursion limit it follows about 320 levels (a ``1+1+...`` chain of 320 terms), and its
parse time grows with the square of the depth beyond that (seconds for a 4,000-term chain). So
the file is first parsed by Python (in C, milliseconds) and its depth measured there.
"""

from __future__ import annotations

import ast

from xlalint.inputs.files import parse_python

MAX_DEPTH = 250  # syntax-tree levels; leaves room for the callers' own frames
TOO_DEEP = ("nested more deeply than the static pass follows (long chains of `and`, `or` or joined strings "
            "nest too); run without --static to trace it")


def refusal(source: str) -> str | None:
    """Why ``source`` is not given to libcst, or None."""
    tree, error = parse_python(source)
    if tree is None:
        return error
    line = _deeper_than(tree, MAX_DEPTH)
    if line is not None:
        return (f"an expression at line {line} is nested more than {MAX_DEPTH} levels deep, deeper than the "
                "static pass follows; run without --static to trace it")
    return None


def _deeper_than(tree: ast.AST, limit: int) -> int | None:
    """The line of a node more than ``limit`` levels down ``tree``, or None (level by level: fast)."""
    level = [tree]
    for _ in range(limit):
        below: list[ast.AST] = []
        for node in level:
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, list):
                    below.extend(v for v in value if isinstance(v, ast.AST))
                elif isinstance(value, ast.AST) and not isinstance(value, ast.expr_context):
                    below.append(value)
        if not below:
            return None
        level = below
    return next((node.lineno for node in level if hasattr(node, "lineno")), 1)
