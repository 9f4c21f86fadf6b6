"""XLA105 loop-shape-change: a while loop grows a loop variable (concat/pad of itself)."""

from __future__ import annotations

import networkx as nx

from xlalint.checks.base import Context, Hit, Rule
from xlalint.opgraph import WHILE_OPS, OpGraph

GROWING_OPS = frozenset({"ConcatV2", "Concat", "Pad", "PadV2", "MirrorPad"})


def _grows(graph: OpGraph, while_node: dict, position: int) -> bool:
    """The body returns loop variable ``position`` from a concat/pad of itself."""
    (body,) = while_node["calls"]["body"]
    src = graph.body_result(while_node, position)
    return (graph.node(src)["type"] in GROWING_OPS
            and graph.functions[body]["inputs"][position] in nx.ancestors(graph.graph, src))


def check(graph: OpGraph, ctx: Context):
    """A loop variable enters a while loop with a static shape, leaves it with a less known one,
    and the body makes it with concat/pad from itself: it grows, which XLA cannot compile."""
    for node in graph.nodes():
        if node["type"] not in WHILE_OPS:
            continue
        for position, (inp, out) in enumerate(zip(node["inputs"], node["outputs"])):
            before, after = inp.get("shape"), out.get("shape")
            if inp["dtype"] in ("variant", "resource") or before is None or None in before:
                continue
            if after != before and _grows(graph, node, position):
                yield Hit(
                    "XLA105",
                    f"loop variable {position} of the while loop enters with shape {before} and may leave "
                    f"with {after}: XLA needs every loop variable to keep its shape",
                    "Pad to the final size before the loop and write into it (tf.tensor_scatter_nd_update, "
                    "a TensorArray of fixed size), instead of growing a tensor with tf.concat.",
                    node=node["id"], api="while_loop",
                )
                break


RULE = Rule("XLA105", "loop-shape-change", "error", "A while loop changes the shape of a loop variable.",
            check=check)
