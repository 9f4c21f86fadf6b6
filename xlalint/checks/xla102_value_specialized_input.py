"""XLA102 value-specialized-input: a shape/size/axis input XLA bakes in, recompiling for every new value."""

from __future__ import annotations

from xlalint.analyses.api_names import call_name, describe
from xlalint.analyses.values import SPECIALIZED, constant_inputs
from xlalint.checks.base import Context, Hit, Rule, value_origin
from xlalint.core.opgraph import OpGraph


def check(graph: OpGraph, ctx: Context):
    for node, inp, value in constant_inputs(graph, ctx.support):
        if value.verdict == SPECIALIZED:
            yield Hit(
                "XLA102",
                f"input `{inp['arg']}` of {describe(node['type'])} depends on {value.reason}: XLA compiles it as a "
                "constant and recompiles for every new value",
                "Derive it from static shapes, make it a Python constant, or pad to a few fixed sizes.",
                node=node["id"], api=call_name(node["type"]), related=value_origin(value),
            )


RULE = Rule("XLA102", "value-specialized-input", "warning",
            "A shape/size/axis input depends on runtime values: one compilation per value.", check=check)
