"""The op graph of one traced entry: ops and the tensors between them, as plain adjacency.

Nodes are ops (id ``"function:op_name"``), each the exported record itself (type,
attrs, inputs with dtypes/shapes/arg names, outputs, innermost user frame, Keras layer).
Edges are tensors (``src -> dst``). Function records say which nodes are each function's
inputs and outputs, so rules can follow values into and out of while/cond bodies and nested
calls. Built from plain JSON, so rules run and are tested without TensorFlow. The adjacency is
kept in dicts rather than a networkx graph: building one for a 10,000-op training step cost more
than all the rules together, and the rules need only neighbours, ancestors and a topological order.
"""

from __future__ import annotations

from collections.abc import Set
from functools import cached_property

from xlalint.core.gc_pause import gc_paused
from xlalint.core.wire import Function, Graph, check_format


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
        self._nodes: dict[str, dict] = {node["id"]: node for node in data["nodes"]}  # type: ignore[misc]
        self._analyses: dict = {}

    @cached_property
    def _succ(self) -> dict[str, dict[str, None]]:
        """src -> the ops reading it, each once, in the order they were traced (built on first use, as are
        the maps below: most rules on most graphs never need them)."""
        succ: dict[str, dict[str, None]] = {node_id: {} for node_id in self._nodes}
        for node_id, node in self._nodes.items():
            for inp in node["inputs"]:
                if inp["src"] in succ:
                    succ[inp["src"]][node_id] = None
        return succ

    @cached_property
    def _pred(self) -> dict[str, dict[str, None]]:
        """dst -> the ops it reads, each once."""
        return {node_id: {inp["src"]: None for inp in node["inputs"] if inp["src"] in self._nodes}
                for node_id, node in self._nodes.items()}

    @cached_property
    def _callers(self) -> dict[str, list[tuple[str, str]]]:
        callers: dict[str, list[tuple[str, str]]] = {}
        for node_id, node in self._nodes.items():
            for attr, names in node["calls"].items():
                for name in names:
                    callers.setdefault(name, []).append((node_id, attr))
        return callers

    @cached_property
    def _by_name(self) -> dict[tuple[str, str], str]:
        return {(n["function"], n["name"]): node_id for node_id, n in self._nodes.items()}

    def nodes(self):
        """Node records in trace order."""
        return iter(self._nodes.values())

    def node(self, node_id: str) -> dict:
        return self._nodes[node_id]

    def __contains__(self, node_id: str) -> bool:
        return node_id in self._nodes

    def find(self, function: str, op_name: str) -> dict | None:
        node_id = self._by_name.get((function, op_name))
        return self._nodes[node_id] if node_id else None

    def consumers(self, node_id: str) -> list[dict]:
        """Ops that read an output of ``node_id``."""
        return [self._nodes[n] for n in self._succ[node_id]]

    def predecessors(self, node_id: str):
        """Ids of the ops whose outputs ``node_id`` reads."""
        return iter(self._pred[node_id])

    def ancestors(self, node_id: str) -> set[str]:
        """Ids of every op ``node_id`` depends on through tensors (itself excluded unless on a cycle)."""
        seen: set[str] = set()
        stack = [node_id]
        while stack:
            for src in self._pred[stack.pop()]:
                if src not in seen:
                    seen.add(src)
                    stack.append(src)
        return seen

    def reached_from(self, starts: Set[str]) -> frozenset[str]:
        """``starts`` and every op that reads one of them through tensors, directly or not (one pass in
        topological order: what each op reads is decided before it)."""
        reached: set[str] = set()
        for node_id in self.topological_order:
            if node_id in starts or not reached.isdisjoint(self._pred[node_id]):
                reached.add(node_id)
        return frozenset(reached)

    def callers(self, function: str) -> list[tuple[str, str]]:
        """``(node_id, attr)`` of the ops that call ``function`` (e.g. a While's ``body``)."""
        return self._callers.get(function, [])

    def enclosing(self, node: dict) -> list[dict]:
        """The ops that run the function ``node`` lives in (a loop, a branch, a call), then the ops that run
        theirs, up to the entry's function: innermost first, the first caller at each level."""
        chain: list[dict] = []
        function, seen = node["function"], set()
        while function != self.root and function not in seen:
            seen.add(function)
            callers = self.callers(function)
            if not callers:
                break
            caller = self._nodes[callers[0][0]]
            chain.append(caller)
            function = caller["function"]
        return chain

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
    def position(self) -> dict[str, int]:
        """Each op's place in trace order."""
        return {node_id: position for position, node_id in enumerate(self._nodes)}

    @cached_property
    def topological_order(self) -> list[str]:
        """Op ids, each after every op it reads: trace order, where TensorFlow created each op after
        its inputs (always, for a graph without cycles); else networkx's sort, which refuses a cycle."""
        if self._in_trace_order():
            return list(self._nodes)
        import networkx as nx

        return list(nx.topological_sort(nx.DiGraph({src: list(dsts) for src, dsts in self._succ.items()})))

    def _in_trace_order(self) -> bool:
        """Every op comes after the ops it reads (explicit loops: this runs over every tensor)."""
        seen: set[str] = set()
        nodes = self._nodes
        for node_id, node in nodes.items():
            for inp in node["inputs"]:
                if inp["src"] not in seen and inp["src"] in nodes:
                    return False
            seen.add(node_id)
        return True

    @cached_property
    def runtime_nodes(self) -> frozenset[str]:
        """Ops that depend on an argument; the rest TensorFlow constant-folds before XLA sees them."""
        runtime: set[str] = set()
        for node_id in self.topological_order:
            node = self._nodes[node_id]
            if node["type"] == "Placeholder":
                runtime.add(node_id)
                continue
            for inp in node["inputs"]:
                if inp["src"] in runtime:
                    runtime.add(node_id)
                    break
        return frozenset(runtime)

    def __len__(self) -> int:
        return len(self._nodes)
