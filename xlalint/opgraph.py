"""The op graph of one traced entry as a networkx ``DiGraph``.

Nodes are ops (id ``"function:op_name"``) carrying the exported record (type,
attrs, inputs with dtypes/shapes/arg names, outputs, innermost user frame, Keras layer).
Edges are tensors (``src -> dst`` with the ports that connect them). Function
records say which nodes are each function's inputs and outputs, so rules can
follow values into and out of while/cond bodies and nested calls. Built from
plain JSON, so rules run and are tested without TensorFlow.
"""

from __future__ import annotations

from functools import cached_property

import networkx as nx

from xlalint.gc_pause import gc_paused
from xlalint.wire import Function, Graph, check_format


WHILE_OPS = frozenset({"While", "StatelessWhile"})
BRANCH_OPS = frozenset({"If", "StatelessIf", "Case", "StatelessCase"})  # the predicate/index comes first
CALL_OPS = frozenset({"PartitionedCall", "StatefulPartitionedCall"})
PASS_THROUGH = frozenset({"Identity", "IdentityN"})


class OpGraph:
    @gc_paused()
    def __init__(self, data: Graph):
        check_format(data)
        self.data = data  # the record it was built from
        self.root: str = data["root"]
        self.num_args: int = data["num_args"]
        self.functions: dict[str, Function] = data["functions"]
        self.graph = nx.DiGraph()
        for node in data["nodes"]:
            self.graph.add_node(node["id"], **node)
        for node in data["nodes"]:
            for port, inp in enumerate(node["inputs"]):
                if inp["src"] in self.graph:
                    edge = self.graph.get_edge_data(inp["src"], node["id"])
                    ports = (edge or {}).get("ports", []) + [(inp["index"], port)]
                    self.graph.add_edge(inp["src"], node["id"], ports=ports)
        self._callers: dict[str, list[tuple[str, str]]] = {}
        for node in data["nodes"]:
            for attr, names in node["calls"].items():
                for name in names:
                    self._callers.setdefault(name, []).append((node["id"], attr))
        self._by_name = {(n["function"], n["name"]): n["id"] for n in data["nodes"]}
        self._analyses: dict = {}

    def nodes(self):
        """Node records in trace order."""
        return (self.graph.nodes[n] for n in self.graph.nodes)

    def node(self, node_id: str) -> dict:
        return self.graph.nodes[node_id]

    def find(self, function: str, op_name: str) -> dict | None:
        node_id = self._by_name.get((function, op_name))
        return self.graph.nodes[node_id] if node_id else None

    def consumers(self, node_id: str) -> list[dict]:
        """Ops that read an output of ``node_id``."""
        return [self.graph.nodes[n] for n in self.graph.successors(node_id)]

    def callers(self, function: str) -> list[tuple[str, str]]:
        """``(node_id, attr)`` of the ops that call ``function`` (e.g. a While's ``body``)."""
        return self._callers.get(function, [])

    def argument_source(self, caller: dict, position: int) -> dict | None:
        """The input of a While/If/Case/call op that becomes argument ``position`` of the function it
        calls (for a While: the value the loop starts with); None for any other op."""
        offset = 1 if caller["type"] in BRANCH_OPS else 0
        if caller["type"] in WHILE_OPS | BRANCH_OPS | CALL_OPS and position + offset < len(caller["inputs"]):
            return caller["inputs"][position + offset]
        return None

    def body_result(self, while_node: dict, position: int) -> str:
        """The op a While's body returns as loop variable ``position``, past identities."""
        (body,) = while_node["calls"]["body"]
        src, _ = self.functions[body]["outputs"][position]
        while self.node(src)["type"] in PASS_THROUGH and self.node(src)["inputs"]:
            src = self.node(src)["inputs"][0]["src"]
        return src

    def analysis(self, key, compute):
        """A derived result computed once per graph: analyses that several rules share."""
        if key not in self._analyses:
            self._analyses[key] = compute()
        return self._analyses[key]

    @cached_property
    def runtime_nodes(self) -> frozenset[str]:
        """Ops that depend on an argument; the rest TensorFlow constant-folds before XLA sees them."""
        runtime: set[str] = set()
        for node_id in nx.topological_sort(self.graph):
            node = self.graph.nodes[node_id]
            if node["type"] == "Placeholder" or any(inp["src"] in runtime for inp in node["inputs"]):
                runtime.add(node_id)
        return frozenset(runtime)

    def __len__(self) -> int:
        return self.graph.number_of_nodes()
