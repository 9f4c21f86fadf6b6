"""Build op graphs by hand for fast, TensorFlow-free rule tests."""

from __future__ import annotations

from xlalint.opgraph import OpGraph
from xlalint.wire import FORMAT


class GraphBuilder:
    def __init__(self, root: str = "f"):
        self.root = root
        self.functions: dict[str, dict] = {root: {"inputs": [], "outputs": []}}
        self.nodes: list[dict] = []
        self.num_args = 0

    def op(self, name, op_type, inputs=(), dtype="float32", shape=(), function=None, line=1,
           args=None, attrs=None, calls=None, outputs=1):
        """Add an op; ``inputs`` are node ids or ``(node_id, index)`` pairs."""
        function = function or self.root
        node_id = f"{function}:{name}"
        pairs = [(i, 0) if isinstance(i, str) else i for i in inputs]
        self.nodes.append({
            "id": node_id, "name": name, "type": op_type, "function": function,
            "attrs": attrs or {}, "calls": calls or {},
            "inputs": [{"src": src, "index": idx, "arg": (args or [None] * len(pairs))[k],
                        "dtype": "int32", "shape": []} for k, (src, idx) in enumerate(pairs)],
            "outputs": [{"dtype": dtype, "shape": list(shape)}] * outputs,
            "frames": [["/src/model.py", line, function]], "layer": None,
        })
        return node_id

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

    def build(self) -> OpGraph:
        return OpGraph({"format": FORMAT, "root": self.root, "num_args": self.num_args, "functions": self.functions,
                        "nodes": self.nodes})
