"""Ops whose output size depends on data values, and whether XLA still knows that size when compiling.

Two sources of bounded dynamic sizes (XLA knows an upper bound, not the size): data-dependent ops
(``Where``, ``Unique``...), and If/Case ops whose branches return different static shapes (XLA
pads the result to the largest; measured on TF 2.21: ``tf.image.rot90(x, 1)`` of a ``[2, 16, 3]``
image is ``f32[<=16,<=16,3]``, its ``If`` compiles both branches even on a constant predicate,
while a ``Case`` on a constant index compiles only the taken branch and stays static).
"""

from __future__ import annotations

from collections import deque

from xlalint.analyses.branches import CASE_OPS, compiled_functions, taken_branch
from xlalint.analyses.values import CONSTANT, SPECIALIZED, ValueTracer, constant_inputs
from xlalint.core.opgraph import BRANCH_OPS, PASS_THROUGH, OpGraph
from xlalint.core.support import SupportTable

DATA_DEPENDENT = frozenset({
    "Where", "Unique", "UniqueV2", "UniqueWithCounts", "UniqueWithCountsV2",
    "NonMaxSuppressionV3", "DynamicPartition", "DenseToSparseSetOperation",
})


def _root_arguments(graph: OpGraph, node_id: str) -> set[str] | None:
    """The entry's arguments a value depends on; None if it also reads a variable."""
    ancestors = graph.ancestors(node_id) | {node_id}
    if any(graph.node(a)["type"] == "ReadVariableOp" for a in ancestors):
        return None
    arguments = set(graph.functions[graph.root]["inputs"][: graph.num_args])
    return ancestors & arguments


def _forced_arguments(graph: OpGraph, support: SupportTable) -> set[str]:
    """Arguments XLA must bake in as constants because a shape/axis input depends on them."""
    forced: set[str] = set()
    for node, inp, value in constant_inputs(graph, support):
        if value.verdict == SPECIALIZED and node["function"] == graph.root:
            forced |= _root_arguments(graph, inp["src"]) or set()
    return forced


def _known_when_compiling(graph: OpGraph, node: dict, tracer: ValueTracer, forced: set[str]) -> bool:
    """All inputs are constants, or depend only on arguments XLA bakes in: the shape is static."""
    for inp in node["inputs"]:
        verdict = tracer.value(inp["src"], inp["index"]).verdict
        if verdict == CONSTANT:
            continue
        arguments = _root_arguments(graph, inp["src"]) if node["function"] == graph.root else None
        if verdict != SPECIALIZED or not arguments or not arguments <= forced:
            return False
    return True


def dynamic_size_ops(graph: OpGraph, support: SupportTable, device: str) -> list[dict]:
    """Data-dependent ops XLA compiles (with a bounded dynamic size) whose size is not known when
    compiling, once per graph, table and device."""
    return graph.analysis(("dynamic_size_ops", id(support), device),
                          lambda: list(_dynamic_size_ops(graph, support, device)))


def _dynamic_size_ops(graph: OpGraph, support: SupportTable, device: str):
    tracer = ValueTracer(graph, support.metadata_ops)
    forced = None
    for node in graph.nodes():
        if node["type"] in DATA_DEPENDENT and support.has_op(device, node["type"]):
            forced = _forced_arguments(graph, support) if forced is None else forced
            if not _known_when_compiling(graph, node, tracer, forced):
                yield node


def _branch_output_dynamic(graph: OpGraph, node: dict, index: int, depth: int = 0) -> bool:
    """Output ``index`` of a compiled If/Case is bounded-dynamic: its branches return different static
    sizes in some dimension, or a branch returns a bounded-dynamic branch output itself."""
    if depth > 20 or node["type"] in CASE_OPS and taken_branch(graph, node):
        return False
    sizes: list[set[int]] = []
    for names in node["calls"].values():
        for name in names:
            outputs = graph.functions[name]["outputs"]
            if index >= len(outputs):
                return False
            src, at = outputs[index]
            while graph.node(src)["type"] in PASS_THROUGH and graph.node(src)["inputs"]:
                src, at = graph.node(src)["inputs"][0]["src"], graph.node(src)["inputs"][0]["index"]
            inner = graph.node(src)
            if inner["type"] in BRANCH_OPS and _branch_output_dynamic(graph, inner, at, depth + 1):
                return True
            shape = inner["outputs"][at]["shape"] if at < len(inner["outputs"]) else None
            if shape is None:
                return False
            sizes = sizes or [set() for _ in shape]
            if len(shape) != len(sizes):
                return False
            for known, size in zip(sizes, shape):
                if size is not None:
                    known.add(size)
    return any(len(known) > 1 for known in sizes)


def bounded_branch_ops(graph: OpGraph) -> frozenset[str]:
    """Compiled If/Case ops with a bounded-dynamic output, once per graph."""
    def compute():
        functions = compiled_functions(graph)
        return frozenset(
            node["id"] for node in graph.nodes()
            if node["type"] in BRANCH_OPS and node["function"] in functions
            and any(_branch_output_dynamic(graph, node, i) for i in range(len(node["outputs"]))))
    return graph.analysis("bounded_branch_ops", compute)


def _bounded_values(graph: OpGraph) -> frozenset[str]:
    """The ops that are a bounded source or read one through tensors, once per graph."""
    def compute():
        sources = bounded_branch_ops(graph) | {n["id"] for n in graph.nodes() if n["type"] in DATA_DEPENDENT}
        return graph.reached_from(sources)
    return graph.analysis("bounded_values", compute)


def bounded_source(graph: OpGraph, node_id: str) -> dict | None:
    """The op a value's bounded-dynamic size comes from (a data-dependent op, or an If/Case whose
    branches differ in shape), or None."""
    if node_id not in _bounded_values(graph):
        return None
    branches = bounded_branch_ops(graph)
    seen, pending = {node_id}, deque([node_id])
    while pending:  # nearest first
        current = pending.popleft()
        if graph.node(current)["type"] in DATA_DEPENDENT or current in branches:
            return graph.node(current)
        for src in sorted(set(graph.predecessors(current)) - seen):
            seen.add(src)
            pending.append(src)
    return None
