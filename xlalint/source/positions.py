"""1-based line and column of the nodes findings point at, without libcst's PositionProvider."""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from xlalint.source.syntax import assign_targets, child_fields


def leftmost_name(node: cst.CSTNode) -> cst.Name | None:
    """The name a node's code starts with: ``tf`` in ``tf.print(x)``, the keyword of ``k=v``."""
    while True:
        if isinstance(node, cst.Name):
            return node
        if isinstance(node, cst.FunctionDef):
            return node.name
        if isinstance(node, cst.Arg) and node.keyword:
            return node.keyword
        if isinstance(node, (cst.Assign, cst.AugAssign)):
            node = assign_targets(node)[0]
        elif isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        elif isinstance(node, cst.Call):
            node = node.func
        else:
            return None


class Positions:
    """1-based line and column of nodes.

    libcst's PositionProvider would cost most of the pass (it generates the code with a record for
    every node, after one more full visit). Instead the leftmost name of each node asked about is
    renamed to a marker of the same length, the code is generated once, and the markers are found
    in it: with every length unchanged, their offsets are the nodes' own.
    """

    MARKERS = (0xA000, 0xA48C)  # Yi syllables: identifier characters hardly ever in source code
    IN_SOURCE = re.compile("[\ua000-\ua48c]")

    def __init__(self, module: cst.Module, source: str, parents: dict[int, cst.CSTNode]):
        self.module, self.source, self.parents = module, source, parents

    def __call__(self, nodes: list[cst.CSTNode]) -> dict[int, tuple[int, int]]:
        if not nodes:
            return {}
        leaves = {id(n): leftmost_name(n) for n in nodes}
        unique = list({id(leaf): leaf for leaf in leaves.values() if leaf is not None}.values())
        first, last = self.MARKERS
        if None in leaves.values() or len(unique) > last - first or self.IN_SOURCE.search(self.source):
            return self.slow(nodes)
        replaced: dict[int, cst.CSTNode] = {id(leaf): leaf.with_changes(value=chr(first + i) * len(leaf.value))
                                            for i, leaf in enumerate(unique)}
        self.rebuild_ancestors(unique, replaced)
        module = replaced[id(self.module)]
        assert isinstance(module, cst.Module)  # the module's copy: with_changes keeps a node's type
        code = module.code
        found = {}
        for i, leaf in enumerate(unique):
            offset = code.index(chr(first + i))
            found[id(leaf)] = (code.count("\n", 0, offset) + 1, offset - code.rfind("\n", 0, offset))
        return {key: found[id(leaf)] for key, leaf in leaves.items()}

    def rebuild_ancestors(self, leaves: Sequence[cst.CSTNode], replaced: dict[int, cst.CSTNode]) -> None:
        """Copy every ancestor of ``leaves`` with the replaced children, deepest first, up to the module."""
        depth: dict[int, tuple[int, cst.CSTNode]] = {}
        for leaf in leaves:
            chain, node = [], self.parents.get(id(leaf))
            while node is not None:
                chain.append(node)
                node = self.parents.get(id(node))
            for level, ancestor in enumerate(reversed(chain)):
                depth[id(ancestor)] = (level, ancestor)
        for _, ancestor in sorted(depth.values(), key=lambda item: -item[0]):
            changes: dict[str, cst.CSTNode | Sequence[cst.CSTNode]] = {}
            for name in child_fields(ancestor):
                value = getattr(ancestor, name)
                if isinstance(value, cst.CSTNode) and id(value) in replaced:
                    changes[name] = replaced[id(value)]
                elif isinstance(value, (list, tuple)) and any(id(v) in replaced for v in value):
                    changes[name] = type(value)(replaced.get(id(v), v) for v in value)
            replaced[id(ancestor)] = ancestor.with_changes(**changes)

    def slow(self, nodes: list[cst.CSTNode]) -> dict[int, tuple[int, int]]:
        positions = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        starts = {id(n): positions[leftmost_name(n) or n].start for n in nodes}
        return {key: (start.line, start.column + 1) for key, start in starts.items()}
