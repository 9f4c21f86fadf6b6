"""Stage 1: the entry's ops as TensorFlow has them when it clusters (``Flattener``).

Nested ``tf.function`` calls are inlined (``inline_function_utils.cc``): their ops are
named ``<call op>/<op>``. ``While``/``If``/``Case`` built by tf.while_loop, tf.cond or
autograph are lowered to Switch/Merge (``lower_functional_ops.cc``): the op stays as a
barrier no cluster crosses, and each body, condition or branch is a region of its own
(``<while op>/body/<op>``, ``/cond/``, ``<if op>/then/``, ``/else/``, ``<case op>/branch<i>/``).
Raw functional loops (``..._Wrapper`` bodies) stay one op. Small captured tensors are
arguments. The automatic control dependencies ``auto_control_deps.py`` adds are put back
(the export has no control edges), and ops that feed neither an output nor a stateful op
are pruned, as TensorFlow prunes a function body.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from xlalint.autocluster.tables import CONTROL_FLOW, DROPPED_OPS, RESOURCE_READS, is_stateful
from xlalint.core.opgraph import CALL_OPS, OpGraph


def _lowered(node: dict) -> bool:
    """Whether TensorFlow lowers this While/If/Case to Switch/Merge before clustering.

    tf.while_loop/tf.cond/tf.switch_case (and autograph) set ``_lower_using_switch_merge``;
    raw ``functional_ops.While``/``If`` (ctc_loss, Defun-era code) do not, and their bodies are
    ``..._Wrapper`` functions. The attr itself is not exported, so its trace stands in for it.
    """
    for record in (node.get("xla_attrs") or {}, node["attrs"]):
        if isinstance(record.get("_lower_using_switch_merge"), bool):
            return record["_lower_using_switch_merge"]
    return not any(name.endswith("_Wrapper") for names in node["calls"].values() for name in names)


@dataclass
class Unit:
    """One op of the flattened graph (``key`` is its qualified name)."""

    key: str
    node: dict
    region: int
    order: int
    kind: str = "op"  # "op" | "arg" (function argument) | "control_flow" (lowered While/If/Case)
    folded: bool = False  # Grappler turns it into a constant
    removed: bool = False  # Grappler deletes it, its users read its input (x*1, Floor(Floor(x)))
    inputs: list = field(default_factory=list)  # unit keys of data inputs (None: from nowhere)

    @property
    def type(self) -> str:
        return self.node["type"]


class Flattener:
    """Inline calls, lower control flow, add automatic control dependencies."""

    def __init__(self, graph: OpGraph):
        self.graph = graph
        self.units: dict[str, Unit] = {}
        self.edges: set[tuple[str, str]] = set()  # data edges
        self.control: set[tuple[str, str]] = set()  # automatic control dependencies
        self.regions = 0
        self.region_parent: dict[int, str | None] = {}  # region -> the lowered control-flow op owning it
        self.sinks: dict[int, set[str]] = {}  # region -> what must run: outputs, stateful ops
        self.by_function: dict[str, list[dict]] = {}
        self.trace_index: dict[str, int] = {}
        for i, node in enumerate(graph.nodes()):
            self.by_function.setdefault(node["function"], []).append(node)
            self.trace_index[node["id"]] = i

    def run(self) -> None:
        self._expand(self.graph.root, "", self._new_region(None), None, depth=0)
        self._prune()

    def _new_region(self, parent: str | None) -> int:
        self.regions += 1
        self.region_parent[self.regions - 1] = parent
        self.sinks[self.regions - 1] = set()
        return self.regions - 1

    def _prune(self) -> None:
        """Drop ops nothing needs (TensorFlow prunes a function body to its outputs and stateful ops)."""
        preds: dict[str, list[str]] = {}
        for src, dst in self.edges | self.control:
            preds.setdefault(dst, []).append(src)
        alive: set[str] = set()
        done: set[int] = set()
        while True:
            todo = [r for r, parent in self.region_parent.items()
                    if r not in done and (parent is None or parent in alive)]
            if not todo:
                break
            stack: list = []
            for region in todo:
                done.add(region)
                stack.extend(k for k in self.sinks[region] if k not in alive)
            alive.update(stack)
            while stack:
                for src in preds.get(stack.pop(), ()):
                    if src not in alive:
                        alive.add(src)
                        stack.append(src)
        self.units = {k: u for k, u in self.units.items() if k in alive}
        self.edges = {e for e in self.edges if e[0] in alive and e[1] in alive}
        self.control = {e for e in self.control if e[0] in alive and e[1] in alive}

    def _ordered(self, function: str) -> list[dict]:
        """The function's ops, each after the ops it reads, the earliest traced first where several are ready
        (trace order itself when it already is one); trace order where the ops read each other in a cycle."""
        nodes = self.by_function.get(function, [])
        by_id = {n["id"]: n for n in nodes}
        waiting = {n["id"]: {i["src"] for i in n["inputs"] if i["src"] in by_id} for n in nodes}
        readers: dict[str, list[str]] = {}
        for node_id, sources in waiting.items():
            for src in sources:
                readers.setdefault(src, []).append(node_id)
        ready = [(self.trace_index[i], i) for i, sources in waiting.items() if not sources]
        heapq.heapify(ready)
        order = []
        while ready:
            _, node_id = heapq.heappop(ready)
            order.append(by_id[node_id])
            for reader in readers.get(node_id, ()):
                waiting[reader].discard(node_id)
                if not waiting[reader]:
                    heapq.heappush(ready, (self.trace_index[reader], reader))
        return order if len(order) == len(nodes) else nodes

    def _add(self, key: str, node: dict, region: int, kind: str = "op") -> str:
        self.units[key] = Unit(key, node, region, len(self.units), kind)
        return key

    def _expand(self, function: str, prefix: str, region: int, arg_sources: list | None,
                depth: int) -> list:
        """Add ``function``'s ops; returns the unit key behind each of its outputs."""
        record = self.graph.functions.get(function, {"inputs": [], "outputs": []})
        inputs = record["inputs"]
        local: dict[str, object] = {}  # node id -> unit key, or list of keys per output (inlined call)

        def source(inp: dict):
            value = local.get(inp["src"])
            if isinstance(value, list):
                return value[inp["index"]] if inp["index"] < len(value) else None
            return value

        stateful_chain: str | None = None
        last_write: dict[str, str] = {}
        reads: dict[str, list[str]] = {}
        must_run: list[str] = []
        for node in self._ordered(function):
            op_type, nid = node["type"], node["id"]
            sources = [source(i) for i in node["inputs"]]
            if op_type in DROPPED_OPS:
                continue
            # Arguments: placeholders, and small captured tensors (Const ops listed as inputs, which
            # TensorFlow passes in as _Arg at run time: they are not constants to Grappler).
            if nid in inputs:
                position = inputs.index(nid)
                if arg_sources is not None:
                    local[nid] = arg_sources[position] if position < len(arg_sources) else None
                else:
                    local[nid] = self._add(prefix + node["name"], node, region, "arg")
                continue
            callee = (node["calls"].get("f") or [None])[0]
            if op_type in CALL_OPS and callee in self.graph.functions and depth < 10:
                local[nid] = self._expand(callee, f"{prefix}{node['name']}/", region, sources, depth + 1)
                continue
            key = prefix + node["name"]
            if op_type in CONTROL_FLOW and _lowered(node):
                self._add(key, node, region, "control_flow")
                for attr, role in CONTROL_FLOW[op_type]:
                    for i, body in enumerate(node["calls"].get(attr, [])):
                        if body in self.graph.functions and depth < 10:
                            name = f"{role}{i}" if role == "branch" else role
                            self._expand(body, f"{key}/{name}/", self._new_region(key), None, depth + 1)
            else:
                self._add(key, node, region)
            local[nid] = key
            unit = self.units[key]
            unit.inputs = sources
            self.edges.update((s, key) for s in sources if s is not None)
            # Automatic control dependencies, as tf.function adds them.
            resources = [s for s, i in zip(sources, node["inputs"]) if s is not None and i["dtype"] == "resource"]
            if is_stateful(op_type) and not resources:
                if stateful_chain is not None:
                    self.control.add((stateful_chain, key))
                stateful_chain = key
            for resource in dict.fromkeys(resources):
                if op_type in RESOURCE_READS:
                    if resource in last_write:
                        self.control.add((last_write[resource], key))
                    reads.setdefault(resource, []).append(key)
                else:
                    for before in [last_write.get(resource), *reads.pop(resource, [])]:
                        if before is not None and before != key:
                            self.control.add((before, key))
                    last_write[resource] = key
            if (is_stateful(op_type) or (resources and op_type not in RESOURCE_READS)):
                must_run.append(key)
        outputs = [source({"src": src, "index": index}) for src, index in record["outputs"]]
        for out in outputs:
            if out is not None and out in self.units and self.units[out].kind == "op":
                self.control.update((op, out) for op in must_run if op != out)
        if arg_sources is None:  # an inlined call's outputs matter only if the caller uses them
            self.sinks[region].update(o for o in outputs if o is not None)
        self.sinks[region].update(must_run)
        return outputs
