"""The state the stages after flattening share (``Model``): the flattened ops and what each stage learns."""

from __future__ import annotations

from xlalint.autocluster.flatten import Flattener
from xlalint.core.opgraph import OpGraph
from xlalint.core.support import SupportTable


class Model:
    """The entry's flattened ops (``units``, by qualified name) and edges, Grappler's fusions
    (``group``, ``fused``, ``composed``) and why each non-candidate is one (``reason``)."""

    def __init__(self, graph: OpGraph, support: SupportTable, device: str):
        self.graph, self.support, self.device = graph, support, device
        flat = Flattener(graph)
        flat.run()
        self.units = flat.units
        self.consumers: dict[str, list[str]] = {k: [] for k in self.units}
        for src, dst in sorted(flat.edges, key=lambda e: (self.units[e[1]].order, self.units[e[0]].order)):
            self.consumers[src].append(dst)
        self.edges = flat.edges
        self.control = flat.control
        self.group: dict[str, str] = {k: k for k in self.units}  # unit -> representative (Grappler fusions)
        self.fused: dict[str, tuple[str, list[str]]] = {}  # rep -> (fused op type, member keys)
        self.composed: dict[str, list[str]] = {}  # rep -> members of a _UnaryOpsComposition
        self.reason: dict[str, str] = {}  # rep -> why it is not a compilation candidate
        # rep -> what else would keep it out, for ops excluded by jit_scope(compile_ops=False) (None: nothing)
        self.scoped: dict[str, str | None] = {}

    def represented(self) -> dict[str, list[str]]:
        """Representative -> the units it stands for (itself, or the ops Grappler fused into it)."""
        members: dict[str, list[str]] = {}
        for key in self.units:
            members.setdefault(self.group[key], []).append(key)
        return members
