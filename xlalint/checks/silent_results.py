"""XLA2xx: constructs that XLA compiles and runs, returning a different result without an error."""

from __future__ import annotations

from xlalint.checks.base import Context, Hit, Rule
from xlalint.opgraph import OpGraph


def check(graph: OpGraph, ctx: Context):
    # A TensorArray(dynamic_size=True) writes with resize_if_index_out_of_bounds: XLA keeps the list
    # at its initial size and clamps or drops the writes past it (tensorflow#119375, #127528).
    for node in graph.nodes():
        if node["type"] == "TensorListSetItem" and node["attrs"].get("resize_if_index_out_of_bounds"):
            yield Hit(
                "XLA201",
                "this write to a TensorArray(dynamic_size=True) grows it; under XLA the array keeps its "
                "initial size and writes past it are dropped or land on its last element, without an error",
                "Create the TensorArray with its final size and dynamic_size=False (bound the loop with "
                "maximum_iterations and size the array to it), or build the result with a tensor of that size.",
                node=node["id"], api="write",
            )


RULE = Rule("XLA201", "dynamic-size-tensor-array", "error",
            "A TensorArray(dynamic_size=True) grows: XLA silently returns a truncated or clamped result.", check)
