"""Map an op to the user's source: file, line and the column of the call.

The line is the innermost frame of the user's own code in the op's traceback
(the line the compiler names: "The op is created at"), with two refinements: a
gradient op points at the forward op it differentiates, and an op of a built-in
Keras layer points at the line that constructed the layer. Each keeps the
compiler's line as a related place: the gradient call that made the backward
op, the line that called the layer; a call written over several lines is placed at
its first line, the compiler's (its last) related. The column comes from Python's own parser (``ast``, which follows any
file Python imports): the call on that line whose name matches the op's API
(e.g. ``numpy_function``), else the first call on the line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache

from xlalint.inputs.files import parse_python, read_source
from xlalint.core.opgraph import OpGraph
from xlalint.core.results import Related

GRADIENT_SCOPES = ("gradient_tape/", "gradients/")


@dataclass(frozen=True)
class Location:
    path: str
    line: int
    note: str = ""  # e.g. "in the backward pass of MatMul"
    related: tuple[Related, ...] = ()  # other places that explain it


def _forward_op(graph: OpGraph, node: dict) -> dict | None:
    """The forward op a gradient op differentiates, found by its name scope."""
    name = node["name"]
    for scope in GRADIENT_SCOPES:
        if name.startswith(scope):
            parts = name[len(scope):].split("/")
            for end in range(len(parts) - 1, 0, -1):
                prefix = "/".join(parts[:end])
                forward = graph.find(node["function"], prefix)
                if forward is None and node["type"].endswith("Grad"):  # scope/OpGrad -> scope/Op
                    forward = graph.find(node["function"], f"{prefix}/{node['type'][:-len('Grad')]}")
                if forward is not None:
                    return forward
    return None


def _also_at(node: dict, where: Location, message: str) -> tuple[Related, ...]:
    """The op's own line (its innermost user frame, the compiler's line) as a related place of ``where``; an op
    of a built-in Keras layer has it from the layer's call (``called_at``: older saved graphs lack it)."""
    own = node["frames"][-1][:2] if node["frames"] else (node.get("layer") or {}).get("called_at")
    if not own:
        return ()
    path, line = own[0], own[1]
    return () if (path, line) == (where.path, where.line) else (Related(path, line, message),)


def locate(graph: OpGraph, node: dict, fallback: Location) -> Location:
    forward = _forward_op(graph, node)
    if forward is not None:
        where = locate(graph, forward, fallback)
        return Location(where.path, where.line, f"in the backward pass of {forward['type']}",
                        where.related + _also_at(node, where, "the gradient call that makes this backward op"))
    layer = node.get("layer")
    if layer and not layer["user_code"]:
        where = Location(layer["file"], layer["line"], f"in layer `{layer['name']}` ({layer['class']})")
        return Location(where.path, where.line, where.note, _also_at(
            node, where, f"the Keras layer `{layer['name']}` ({layer['class']}) is called here"))
    if node["frames"]:
        path, line, _ = node["frames"][-1]
        built = () if not layer or (layer["file"], layer["line"]) == (path, line) else (
            Related(layer["file"], layer["line"],
                    f"the Keras layer `{layer['name']}` ({layer['class']}) is constructed here"),)
        start = call_start(path, line)  # a call over several lines: at its first, the compiler's (last) one related
        ends = () if start == line else (Related(path, line, "the call ends here, the line the compiler names"),)
        return Location(path, start, related=built + ends)
    if layer:
        return Location(layer["file"], layer["line"], f"in layer `{layer['name']}` ({layer['class']})")
    return Location(fallback.path, fallback.line, f"node `{node['name']}` in function `{node['function']}`")


@dataclass
class _Calls:
    """Every call of a file: (column, name) by start line, and its (first, last) line span."""

    calls: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    spans: list[tuple[int, int]] = field(default_factory=list)


@lru_cache(maxsize=256)
def _calls(path: str) -> _Calls:
    found = _Calls()
    source, error = read_source(path)  # newlines read as "\n", as Python counts lines
    tree = parse_python(source)[0] if error is None else None
    if tree is None:
        return found
    lines = source.split("\n")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            column = len(lines[node.lineno - 1].encode()[:node.col_offset].decode(errors="ignore")) + 1
            found.calls.setdefault(node.lineno, []).append((column, name))
            found.spans.append((node.lineno, node.end_lineno or node.lineno))  # parsed nodes always have an end
    return found


def call_start(path: str, line: int) -> int:
    """For a line where no call starts but a multi-line call ends (a traceback of a call spread
    over several lines gives its last line): the first line of the innermost such call."""
    spans = _calls(path).spans
    if any(start == line for start, _ in spans):
        return line
    ending = [s for s in spans if s[1] == line and s[0] < line]
    return max(ending)[0] if ending else line


def column(path: str, line: int, call_name: str | None) -> int:
    """1-based column of the call on ``line`` named like ``call_name`` (``gather``, ``reduce_sum``
    for ``sum``), else of the first call on the line, else 1."""
    calls = sorted(_calls(path).calls.get(line, []))
    for col, name in calls:
        if call_name and (name == call_name or name.endswith("_" + call_name)):
            return col
    return calls[0][0] if calls else 1
