"""XLA103 dynamic-output-shape: the op's output shape depends on data values."""

from __future__ import annotations

import networkx as nx

from xlalint.checks.api_names import call_name, describe
from xlalint.checks.base import Context, Hit, Rule
from xlalint.checks.constant_inputs import CONSTANT, SPECIALIZED, ValueTracer, small_value, constant_inputs
from xlalint.opgraph import OpGraph

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


def _forced_arguments(graph: OpGraph, ctx: Context) -> set[str]:
    """Arguments XLA must bake in as constants because a shape/axis input depends on them."""
    forced: set[str] = set()
    for node, inp, verdict, _ in constant_inputs(graph, ctx):
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


def check(graph: OpGraph, ctx: Context):
    tracer = ValueTracer(graph, ctx.support.metadata_ops)
    forced = None
    for node in graph.nodes():
        if node["type"] in DATA_DEPENDENT and ctx.support.has_op(ctx.device, node["type"]):
            forced = _forced_arguments(graph, ctx) if forced is None else forced
            if _known_when_compiling(graph, node, tracer, forced):
                continue
            yield Hit(
                "XLA103",
                f"{describe(node['type'])} has a data-dependent output shape: XLA pads it to an upper bound, "
                "and ops after it that need a static shape can fail or be slow",
                "Prefer fixed-size forms: a mask multiply or the 3-argument tf.where instead of "
                "tf.boolean_mask/tf.where(cond), padded variants of unique/NMS, tf.gather with fixed indices.",
                node=node["id"], api=call_name(node["type"]),
            )


def _from_data_dependent(graph: OpGraph, node_id: str) -> bool:
    return any(graph.node(a)["type"] in DATA_DEPENDENT for a in nx.ancestors(graph.graph, node_id))


def blocking_consumers(graph: OpGraph, ctx: Context):
    """XLA106: a value with a data-dependent (bounded) dimension reaches an op that fails on it
    under XLA: a reshape to a fully static shape (XLA sees the bound, not the real size), or
    cumsum/cumprod (the process crashes). See rules/XLA103/README.md."""
    for node in graph.nodes():
        op_type = node["type"]
        if op_type not in ("Reshape", "Cumsum", "Cumprod") or not node["inputs"]:
            continue
        data = node["inputs"][0]
        if data.get("shape") is None or None not in data["shape"] or not _from_data_dependent(graph, data["src"]):
            continue
        if op_type == "Reshape":
            target = next((i for i in node["inputs"] if i["arg"] == "shape"), None)
            value = small_value(graph, target["src"]) if target else None
            if value is None or -1 in value:
                continue
            what = f"a reshape to the fixed shape {value}"
        else:
            what = f"{describe(op_type)}, which crashes the process on bounded dynamic shapes"
        yield Hit(
            "XLA106",
            f"a value with a data-dependent size reaches {what}: XLA sees its upper bound, not its size",
            "Keep fixed shapes: a mask (3-argument tf.where, multiply by the mask) instead of "
            "tf.boolean_mask/tf.where(cond), or pad back to a fixed size with tf.tensor_scatter_nd_update.",
            node=node["id"], api=call_name(op_type),
        )


BLOCKING = Rule("XLA106", "dynamic-shape-blocker", "error",
                "A data-dependent size reaches an op XLA cannot compile or run with it.", blocking_consumers)
RULE = Rule("XLA103", "dynamic-output-shape", "warning",
            "The op's output shape depends on data; XLA handles it only as a bounded dynamic shape.", check)
