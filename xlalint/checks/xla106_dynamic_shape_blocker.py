"""XLA106 dynamic-shape-blocker: a data-dependent (bounded) size reaches an op that fails on it under XLA.

A reshape to a fully static shape (XLA sees the bound, not the real size), or cumsum/cumprod (the
process crashes). See rules/XLA106/README.md.
"""

from __future__ import annotations

from xlalint.analyses.api_names import call_name, describe
from xlalint.analyses.data_dependent import from_data_dependent
from xlalint.analyses.values import small_value
from xlalint.checks.base import Context, Hit, Rule
from xlalint.opgraph import OpGraph


def check(graph: OpGraph, ctx: Context):
    for node in graph.nodes():
        op_type = node["type"]
        if op_type not in ("Reshape", "Cumsum", "Cumprod") or not node["inputs"]:
            continue
        data = node["inputs"][0]
        if data.get("shape") is None or None not in data["shape"] or not from_data_dependent(graph, data["src"]):
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


RULE = Rule("XLA106", "dynamic-shape-blocker", "error",
            "A data-dependent size reaches an op XLA cannot compile or run with it.", check=check)
