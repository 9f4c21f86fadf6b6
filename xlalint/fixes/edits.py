"""Every requested edit of one Python file in a single libcst pass; the edits are the rules' own.

A rule's ``Fix`` gives a ``NodeEdit`` (``xlalint.checks.base``): which node type it changes and
how. This transformer visits the file once and, at each node of a requested type whose line is a
finding's, asks that edit for the new node. Positions are the original file's, so edits never
shift each other; comments and formatting elsewhere are kept, and every edit is idempotent.
"""

from __future__ import annotations

from typing import TypeVar

import libcst as cst
from libcst.metadata import PositionProvider

from xlalint.checks import Fix

NodeT = TypeVar("NodeT", bound=cst.CSTNode)


class FixTransformer(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, requests: dict[tuple[str, int], Fix]):
        super().__init__()
        self.requests = requests  # (kind, line) -> the rule's fix
        self.edits = {fix.kind: fix.node_edit for fix in requests.values() if fix.node_edit}
        self.done: set[tuple[str, int]] = set()
        self._ancestors: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self._ancestors.append(node)
        return super().on_visit(node)

    def on_leave(self, original: NodeT, updated: NodeT) -> NodeT | cst.RemovalSentinel | cst.FlattenSentinel[NodeT]:
        self._ancestors.pop()
        result = super().on_leave(original, updated)
        for kind, edit in self.edits.items():
            if not isinstance(original, edit.node_type) or not isinstance(result, edit.node_type):
                continue
            key = (kind, self.get_metadata(PositionProvider, edit.anchor(original)).start.line)
            if key in self.requests:
                changed = edit.change(result, tuple(self._ancestors))
                if changed is not None:
                    self.done.add(key)
                    result = changed
        return result
