"""XLA204 list-length-after-pop: under XLA a tensor list keeps its length when elements are popped."""

from __future__ import annotations

from xlalint.analyses.api_names import describe
from xlalint.analyses.tensor_lists import sized_after_pop
from xlalint.checks.base import Context, Hit, Rule
from xlalint.core.opgraph import OpGraph


def check(graph: OpGraph, ctx: Context):
    for node in sized_after_pop(graph):
        yield Hit(
            "XLA204",
            f"{describe(node['type'])} reads a tensor list after elements were popped from it: under XLA "
            "the list keeps its size (popped elements still count and are still stacked), without an error",
            "Keep the count yourself (a counter decremented at each pop) and slice the stacked tensor to it, "
            "or build the result with tf.TensorArray of a fixed size.",
            node=node["id"],
        )


RULE = Rule("XLA204", "list-length-after-pop", "error",
            "A tensor list's length or stack read after a pop: XLA silently keeps the popped elements.",
            check=check)
