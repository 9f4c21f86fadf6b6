"""Small questions about libcst nodes, asked by the index, the positions and the source rules."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields

import libcst as cst

# Fields that hold only whitespace, comments or punctuation: never a call, import or definition.
_TRIVIA = frozenset({"lpar", "rpar", "comma", "leading_lines", "lines_after_decorators", "semicolon", "colon",
                     "equal", "dot", "lbrace", "rbrace", "lbracket", "rbracket", "operator", "header", "footer",
                     "newline", "first_colon", "second_colon", "separator", "comment", "empty_lines",
                     "asynchronous", "posonly_ind", "trailing_whitespace"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(node: cst.CSTNode) -> tuple[str, ...]:
    """The names of ``node``'s fields that can hold code (trivia left out), cached per node type."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(
            f.name for f in fields(node) if f.name not in _TRIVIA and not f.name.startswith("whitespace"))
    return names


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node``'s child nodes that can hold code, in source order."""
    found = []
    for name in child_fields(node):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, cst.CSTNode))
    return found


def dotted(expr) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


def keyword(arg: cst.Arg) -> str | None:
    """The keyword of ``k=v``, None for a positional argument."""
    return arg.keyword.value if arg.keyword else None


def assign_targets(node: cst.Assign | cst.AugAssign) -> list:
    return [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]


def strings(expr: cst.CSTNode) -> list[str]:
    """Every string literal in ``expr`` (f-string text included)."""
    found, stack = [], [expr]
    while stack:
        node = stack.pop()
        if (isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower()
                and isinstance(value := node.evaluated_value, str)):  # always a str without the b prefix
            found.append(value)
        elif isinstance(node, cst.FormattedStringText):
            found.append(node.value)
        else:
            stack.extend(children(node))
    return found


def calls_run_by(node: cst.CSTNode) -> Iterator[cst.Call]:
    """The calls in ``node`` that run with it (not those in functions or classes it defines)."""
    stack = [node]
    while stack:
        node = stack.pop()
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(node, cst.Call):
                yield node
            stack.extend(children(node))
