"""XLA101 non-constant-shape-input: a shape/size/axis input that can never be a compile-time constant."""

from __future__ import annotations

from xlalint.analyses.api_names import call_name, describe
from xlalint.analyses.values import NEVER, constant_inputs, unsized_lists
from xlalint.checks.base import Context, Hit, Rule, value_origin
from xlalint.core.opgraph import OpGraph


def check(graph: OpGraph, ctx: Context):
    for node in unsized_lists(graph):
        yield Hit(
            "XLA101",
            f"{describe(node['type'])} needs a fixed number of elements under XLA, but it has none (-1): "
            "a while loop differentiated (or a TensorArray grown) without maximum_iterations",
            "Give the tf.while_loop a maximum_iterations (an upper bound known in Python).",
            node=node["id"], api="while_loop",
        )
    for node, inp, value in constant_inputs(graph, ctx.support):
        if value.verdict == NEVER:
            yield Hit(
                "XLA101",
                f"input `{inp['arg']}` of {describe(node['type'])} must be a compile-time constant, "
                f"but it comes from {value.reason}",
                "Compute it from static shapes and constants (tf.shape is static under XLA), "
                "or move this op out of the compiled function.",
                node=node["id"], api=call_name(node["type"]), related=value_origin(value),
            )


RULE = Rule("XLA101", "non-constant-shape-input", "error",
            "A shape/size/axis input can never be a compile-time constant.", check=check)
