"""The ops XLA never sees because TensorFlow constant-folds them first (XLA001/XLA002 skip them).

Before compiling, TensorFlow's graph optimizer replaces constant subgraphs with their values
(common_runtime/constant_folding.cc, with the filter of XLA's compiler). An op is folded when every
input is a constant or folded, and the op is foldable: not stateful in the op registry (random ops,
prints, variables, queues, ``SampleDistortedBoundingBoxV2``...), no variant or resource values, not
``Shape``/``ShapeN``/``Size`` (XLA keeps those for dynamic dimensions), not control flow or a
function call, and a result of at most 10 MiB. Measured on TF 2.21 CPU beyond those rules: ops
whose output shape is not static on constants (``RaggedRange``, ``SegmentSum``,
``UniqueWithCounts``) and Python callbacks (even ``numpy_function(stateful=False)``) are not folded.
"""

from __future__ import annotations

import math

from xlalint.core.opgraph import BRANCH_OPS, CALL_OPS, WHILE_OPS, OpGraph

NOT_FOLDED = frozenset({"Shape", "ShapeN", "Size"}) | BRANCH_OPS | CALL_OPS | WHILE_OPS
HOST_CALLBACKS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})
MAX_FOLDED_BYTES = 10 * 1024 * 1024
_BYTES = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2,
          "complex128": 16}


def _small(tensor: dict) -> bool:
    size = math.prod(tensor["shape"]) * _BYTES.get(tensor["dtype"], 8 if "64" in tensor["dtype"] else 4)
    return size <= MAX_FOLDED_BYTES


def _foldable(node: dict) -> bool:
    outputs = node["outputs"]
    return (not node.get("stateful") and node["type"] not in NOT_FOLDED | HOST_CALLBACKS
            and bool(node["inputs"]) and bool(outputs)
            and all(o["shape"] is not None and None not in o["shape"] and _small(o) for o in outputs)
            and not any(t["dtype"] in ("resource", "variant") for t in node["inputs"] + outputs))


def folded_nodes(graph: OpGraph) -> frozenset[str]:
    """Constants and the ops TensorFlow folds into constants before XLA compiles, once per graph."""
    return graph.analysis("folded_nodes", lambda: frozenset(_folded(graph)))


def _folded(graph: OpGraph):
    folded: set[str] = set()
    for node_id in graph.topological_order:
        node = graph.node(node_id)
        if node["type"] == "Const":
            folded.add(node_id)
            continue
        for inp in node["inputs"]:  # a loop, not all(): it runs over every tensor of the graph
            if inp["src"] not in folded:
                break
        else:
            if _foldable(node):
                folded.add(node_id)
    return folded
