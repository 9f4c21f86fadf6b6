"""Build op graphs by hand for fast, TensorFlow-free rule tests."""

from __future__ import annotations

from xlalint.checks import Context, run_checks
from xlalint.core.opgraph import OpGraph
from xlalint.core.support import load_support
from xlalint.core.wire import FORMAT

SUPPORT = load_support("2.21.0")


class GraphBuilder:
    def __init__(self, root: str = "f"):
        self.root = root
        self.functions: dict[str, dict] = {root: {"inputs": [], "outputs": []}}
        self.nodes: list[dict] = []
        self.num_args = 0

    def op(self, name, op_type, inputs=(), dtype="float32", shape=(), function=None, line=1,
           args=None, attrs=None, calls=None, outputs=1, stateful=False, value=None):
        """Add an op; ``inputs`` are node ids or ``(node_id, index)`` pairs; an input has its source's
        dtype and shape (int32 scalar for a source added later); ``value``: a small constant's value."""
        function = function or self.root
        node_id = f"{function}:{name}"
        pairs = [(i, 0) if isinstance(i, str) else i for i in inputs]
        self.nodes.append({
            "id": node_id, "name": name, "type": op_type, "function": function,
            "attrs": attrs or {}, "calls": calls or {},
            "inputs": [{"src": src, "index": idx, "arg": (args or [None] * len(pairs))[k], **self._output(src, idx)}
                       for k, (src, idx) in enumerate(pairs)],
            "outputs": [{"dtype": dtype, "shape": list(shape)}] * outputs,
            "frames": [["/src/model.py", line, function]], "layer": None,
            **({"stateful": True} if stateful else {}),
            **({"value": list(value)} if value is not None else {}),
        })
        return node_id

    def _output(self, node_id, index) -> dict:
        source = next((n for n in self.nodes if n["id"] == node_id), None)
        return dict(source["outputs"][index]) if source else {"dtype": "int32", "shape": []}

    def arg(self, name, dtype="float32", shape=(), function=None):
        function = function or self.root
        node_id = self.op(name, "Placeholder", dtype=dtype, shape=shape, function=function)
        self.functions.setdefault(function, {"inputs": [], "outputs": []})["inputs"].append(node_id)
        if function == self.root:
            self.num_args += 1
        return node_id

    def function(self, name, outputs):
        self.functions.setdefault(name, {"inputs": [], "outputs": []})["outputs"] = [
            [o, 0] if isinstance(o, str) else list(o) for o in outputs]

    def const(self, name, value, dtype="int32", function=None):
        """A small integer constant (a shape, an axis, an index) with its value."""
        return self.op(name, "Const", dtype=dtype, shape=[len(value)] if len(value) != 1 else [],
                       function=function, value=value)

    def build(self) -> OpGraph:
        return OpGraph({"format": FORMAT, "root": self.root, "num_args": self.num_args, "functions": self.functions,
                        "nodes": self.nodes})


def hits(graph, device="cpu", signature=(), kind="function", keras_layers=()) -> list[tuple[str, str | None]]:
    """``(code, op name)`` of every graph rule's hit, sorted (op name None: the entry itself)."""
    ctx = Context(SUPPORT, device, "f", signature, kind, keras_layers)
    return sorted((hit.code, graph.node(hit.node)["name"] if hit.node else None) for hit in run_checks(graph, ctx))
