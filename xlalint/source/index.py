"""The libcst index of one file: its imports, definitions, calls, assignments and loops, found in
one walk, and the analyses source rules share (computed once per file through ``Index.analysis``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Generic, TypeVar

import libcst as cst

from xlalint.source.compiled import Compiled, find_compiled
from xlalint.source.limits import refusal
from xlalint.source.positions import Positions
from xlalint.source.syntax import children, dotted


class Aliases:
    """Local names bound by the file's imports -> the dotted names they stand for."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def add(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full, asname = alias.evaluated_name, alias.evaluated_alias
                local = asname if asname else full.split(".")[0]
                self.names[local] = full if asname else local
        elif not node.relative and node.module is not None and not isinstance(node.names, cst.ImportStar):
            module = dotted(node.module)
            for alias in node.names:
                self.names[alias.evaluated_alias or alias.evaluated_name] = f"{module}.{alias.evaluated_name}"

    def qualify(self, expr) -> str | None:
        """``tensorflow.strings.length`` for ``tf.strings.length`` under ``import tensorflow as tf``."""
        head, _, rest = (dotted(expr) or "").partition(".")
        base = self.names.get(head)
        return None if base is None else (f"{base}.{rest}" if rest else base)

    def tf_api(self, expr) -> str | None:
        """The public name (``tf.strings.length``) of a TensorFlow API, else None."""
        qualified = self.qualify(expr) or ""
        for prefix in ("tensorflow.compat.v2.", "tensorflow."):
            if qualified.startswith(prefix):
                return "tf." + qualified[len(prefix):]
        return None


@dataclass(frozen=True)
class Def:
    name: str  # qualified within the file: "fn", "Model.call", "outer.inner"
    node: cst.FunctionDef
    cls: str | None  # the class it is a method of
    module_level: bool


NodeT = TypeVar("NodeT", bound=cst.CSTNode)


@dataclass(frozen=True)
class Site(Generic[NodeT]):
    node: NodeT  # a call, or an assignment
    owner: str  # the enclosing function, or "<module>"


class Index:
    """One walk over the module: imports, functions, classes, calls, assignments and loops (statements
    and comprehension clauses), and each node's parent."""

    def __init__(self, module: cst.Module):
        self.aliases = Aliases()
        self.defs: list[Def] = []
        self.classes: list[tuple[str, cst.ClassDef]] = []
        self.calls: list[Site[cst.Call]] = []
        self.assigns: list[Site[cst.Assign | cst.AugAssign]] = []
        self.loops: list[cst.For | cst.CompFor] = []
        self.parents: dict[int, cst.CSTNode] = {}
        stack: list[tuple[cst.CSTNode, str, str | None, str]] = [(module, "", None, "<module>")]
        while stack:
            node, scope, cls, owner = stack.pop()
            inner = (scope, cls, owner)
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                self.aliases.add(node)
            elif isinstance(node, cst.FunctionDef):
                name = f"{scope}.{node.name.value}" if scope else node.name.value
                self.defs.append(Def(name, node, cls, not scope))
                inner = (name, None, name)
            elif isinstance(node, cst.ClassDef):
                name = f"{scope}.{node.name.value}" if scope else node.name.value
                self.classes.append((name, node))
                inner = (name, name, owner)
            elif isinstance(node, cst.Call):
                self.calls.append(Site(node, owner))
            elif isinstance(node, (cst.For, cst.CompFor)):
                self.loops.append(node)
            elif isinstance(node, (cst.Assign, cst.AugAssign)):
                self.assigns.append(Site(node, owner))
            found = children(node)
            for child in reversed(found):
                self.parents[id(child)] = node
                stack.append((child, *inner))
        self.module_defs = {d.name: d for d in self.defs if d.module_level}
        self._analyses: dict = {}

    def analysis(self, key, compute):
        """A derived result computed once per file: analyses that several rules share."""
        if key not in self._analyses:
            self._analyses[key] = compute()
        return self._analyses[key]

    @cached_property
    def compiled(self) -> list[Compiled]:
        """The file's compiled functions, in file order."""
        return find_compiled(self)

    def wrapped(self, call: cst.Call) -> Def | None:
        """The module function named by ``call``'s first, positional argument, if any."""
        first = call.args[0] if call.args and not call.args[0].keyword else None
        name = dotted(first.value) if first else None
        return self.module_defs.get(name) if name is not None else None

    def inside(self, node: cst.CSTNode, defs: set[int]) -> bool:
        """Whether ``node`` is in the body of one of the functions ``defs`` (ids of FunctionDef nodes)."""
        parent = self.parents.get(id(node))
        while parent is not None and id(parent) not in defs:
            parent = self.parents.get(id(parent))
        return parent is not None

    def comprehension(self, clause: cst.CompFor) -> cst.CSTNode:
        """The comprehension a ``for`` clause belongs to (its element is what each pass runs)."""
        node = self.parents[id(clause)]
        while isinstance(node, cst.CompFor):
            node = self.parents[id(node)]
        return node


def decorated_tf_functions(source: str) -> list[tuple[str, int]]:
    """``(name, def line)`` of each function ``source`` decorates with ``tf.function`` (any arguments), by line;
    none where libcst is not given the source (``limits.refusal``) or cannot parse it."""
    if refusal(source):
        return []
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError):
        return []
    index = Index(module)
    decorated = [c.definition for c in index.compiled if c.decorator is not None]
    where = Positions(module, source, index.parents)([d.node for d in decorated])
    return sorted(((d.node.name.value, where[id(d.node)][0]) for d in decorated), key=lambda item: item[1])
