"""Ops whose output size depends on data values, and whether XLA still knows that size when compiling."""

from __future__ import annotations

import networkx as nx

from xlalint.analyses.values import CONSTANT, SPECIALIZED, ValueTracer, constant_inputs
from xlalint.opgraph import OpGraph
from xlalint.support import SupportTable

DATA_DEPENDENT = frozenset({
    "Where", "Unique", "UniqueV2", "UniqueWithCounts", "UniqueWithCountsV2",
    "NonMaxSuppressionV3", "DynamicPartition", "DenseToSparseSetOperation",
})


def _root_arguments(graph: OpGraph, node_id: str) -> set[str] | None:
    """The entry's arguments a value depends on; None if it also reads a variable."""
    ancestors = nx.ancestors(graph.graph, node_id) | {node_id}
    if any(graph.node(a)["type"] == "ReadVariableOp" for a in ancestors):
        return None
    arguments = set(graph.functions[graph.root]["inputs"][: graph.num_args])
    return ancestors & arguments


def _forced_arguments(graph: OpGraph, support: SupportTable) -> set[str]:
    """Arguments XLA must bake in as constants because a shape/axis input depends on them."""
    forced: set[str] = set()
    for node, inp, verdict, _ in constant_inputs(graph, support):
        if verdict == SPECIALIZED and node["function"] == graph.root:
            forced |= _root_arguments(graph, inp["src"]) or set()
    return forced


def _known_when_compiling(graph: OpGraph, node: dict, tracer: ValueTracer, forced: set[str]) -> bool:
    """All inputs are constants, or depend only on arguments XLA bakes in: the shape is static."""
    for inp in node["inputs"]:
        verdict, _ = tracer.value(inp["src"], inp["index"])
        if verdict == CONSTANT:
            continue
        arguments = _root_arguments(graph, inp["src"]) if node["function"] == graph.root else None
        if verdict != SPECIALIZED or not arguments or not arguments <= forced:
            return False
    return True


def dynamic_size_ops(graph: OpGraph, support: SupportTable, device: str):
    """Data-dependent ops XLA compiles (with a bounded dynamic size) whose size is not known when compiling."""
    tracer = ValueTracer(graph, support.metadata_ops)
    forced = None
    for node in graph.nodes():
        if node["type"] in DATA_DEPENDENT and support.has_op(device, node["type"]):
            forced = _forced_arguments(graph, support) if forced is None else forced
            if not _known_when_compiling(graph, node, tracer, forced):
                yield node


def from_data_dependent(graph: OpGraph, node_id: str) -> bool:
    return any(graph.node(a)["type"] in DATA_DEPENDENT for a in nx.ancestors(graph.graph, node_id))
