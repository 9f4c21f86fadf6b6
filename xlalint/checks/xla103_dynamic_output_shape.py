"""XLA103 dynamic-output-shape: the op's output shape depends on data values."""

from __future__ import annotations

from xlalint.analyses.api_names import call_name, describe
from xlalint.analyses.data_dependent import dynamic_size_ops
from xlalint.checks.base import Context, Hit, Rule
from xlalint.opgraph import OpGraph


def check(graph: OpGraph, ctx: Context):
    for node in dynamic_size_ops(graph, ctx.support, ctx.device):
        yield Hit(
            "XLA103",
            f"{describe(node['type'])} has a data-dependent output shape: XLA pads it to an upper bound, "
            "and ops after it that need a static shape can fail or be slow",
            "Prefer fixed-size forms: a mask multiply or the 3-argument tf.where instead of "
            "tf.boolean_mask/tf.where(cond), padded variants of unique/NMS, tf.gather with fixed indices.",
            node=node["id"], api=call_name(node["type"]),
        )


RULE = Rule("XLA103", "dynamic-output-shape", "warning",
            "The op's output shape depends on data; XLA handles it only as a bounded dynamic shape.", check=check)
