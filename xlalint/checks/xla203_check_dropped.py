"""XLA203 check-dropped: XLA compiles tf.debugging.Assert and check_numerics as no-ops, so a failing check passes.

A check in a branch that a compile-time predicate never takes (``tf.image.rot90``'s own guard) never
fails, with or without XLA: not reported.
"""

from __future__ import annotations

from xlalint.analyses.branches import compiled_nodes, never_taken
from xlalint.checks.base import Context, Hit, Rule
from xlalint.core.opgraph import OpGraph

# Measured on TF 2.21 CPU: each raises InvalidArgumentError without XLA and returns with it.
CHECKS = {"Assert": "assert", "CheckNumerics": "check_numerics", "CheckNumericsV2": "check_numerics"}


def check(graph: OpGraph, ctx: Context):
    for node in compiled_nodes(graph):
        if node["type"] in CHECKS and not never_taken(graph, node["function"]):
            yield Hit(
                "XLA203",
                f"XLA compiles this check ({CHECKS[node['type']]}) as a no-op: "
                "where TensorFlow raises InvalidArgumentError, the compiled function returns its result "
                "without an error",
                "Check outside the compiled function: return the condition (or the values) and assert "
                "on them after the call, or validate the inputs before it.",
                node=node["id"], api=CHECKS[node["type"]],
            )


RULE = Rule("XLA203", "check-dropped", "warning",
            "A tf.debugging assertion or check_numerics is dropped under XLA: a failing check passes silently.",
            check=check)
