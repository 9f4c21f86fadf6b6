"""XLA105 loop-shape-change: a while loop hands a loop variable back with another shape (it grows by a
concat/pad of itself, or changes by a known amount: xlalint.analyses.loop_shapes), or a loop
variable enters with a data-dependent size XLA knows when compiling and the body makes it again
with a bounded one.

The second: when XLA bakes an argument's value in (a size computed from it, XLA102), a
``tf.boolean_mask`` of it before the loop gets a static size, while the body, compiled on its own,
sees the argument as a value and makes the same mask with a bounded size. Measured on TF 2.21
CPU: "Input and output shapes of loop body do not match: (... s32[8,1] ...) vs. (... s32[<=12,1]
...)". The same happens when the first value is made from constants. Not when the body itself needs
the argument's value (a ``tf.repeat`` by counts from it): XLA then passes the value into the body as
a constant, and the body's selection is static too (measured: it compiles).
"""

from __future__ import annotations

from xlalint.analyses.data_dependent import DATA_DEPENDENT, bounded_source, dynamic_size_ops
from xlalint.analyses.loop_shapes import loop_shapes
from xlalint.analyses.values import SPECIALIZED, constant_inputs
from xlalint.checks.base import Context, Hit, Rule, enclosing_places
from xlalint.core.opgraph import WHILE_OPS, OpGraph

GROWING_OPS = frozenset({"ConcatV2", "Concat", "Pad", "PadV2", "MirrorPad"})


def _grows(graph: OpGraph, while_node: dict, position: int) -> bool:
    """The body returns loop variable ``position`` from a concat/pad of itself."""
    (body,) = while_node["calls"]["body"]
    src = graph.body_result(while_node, position)
    return (graph.node(src)["type"] in GROWING_OPS
            and graph.functions[body]["inputs"][position] in graph.ancestors(src))


def _given_as_constants(graph: OpGraph, body: str, node_id: str, ctx: Context) -> bool:
    """Every argument of ``body`` that ``node_id`` reads is one the body needs as a compile-time
    constant: XLA passes the caller's constant in, and ``node_id`` is sized when compiling."""
    arguments = set(graph.functions[body]["inputs"])
    needed: set[str] = set()
    for node, inp, value in constant_inputs(graph, ctx.support):
        if node["function"] == body and value.verdict == SPECIALIZED:
            needed |= (graph.ancestors(inp["src"]) | {inp["src"]}) & arguments
    read = graph.ancestors(node_id) & arguments
    return bool(read) and read <= needed


def _static_then_bounded(graph: OpGraph, while_node: dict, position: int, dynamic: frozenset[str],
                         ctx: Context) -> bool:
    """Loop variable ``position`` starts as a data-dependent op XLA sizes when compiling, and the
    body returns it from one XLA sizes only at run time."""
    first = bounded_source(graph, while_node["inputs"][position]["src"])
    if first is None or first["type"] not in DATA_DEPENDENT or first["id"] in dynamic:
        return False
    again = bounded_source(graph, graph.body_result(while_node, position))
    (body,) = while_node["calls"]["body"]
    return again is not None and again["id"] in dynamic and not _given_as_constants(graph, body, again["id"], ctx)


def check(graph: OpGraph, ctx: Context):
    """A loop variable's body hands it back with another shape than it entered with: it grows (concat/pad
    of itself) or changes by a known amount, which XLA cannot compile. Or it enters with a data-dependent
    size XLA knows when compiling and the body makes it with a bounded one."""
    dynamic: frozenset[str] | None = None
    shapes = loop_shapes(graph)
    for node in graph.nodes():
        if node["type"] not in WHILE_OPS:
            continue
        for position, (inp, out) in enumerate(zip(node["inputs"], node["outputs"])):
            before, after = inp.get("shape"), out.get("shape")
            if inp["dtype"] in ("variant", "resource") or before is None:
                continue
            if None in before:
                if dynamic is None:
                    dynamic = frozenset(n["id"] for n in dynamic_size_ops(graph, ctx.support, ctx.device))
                if _static_then_bounded(graph, node, position, dynamic, ctx):
                    yield Hit(
                        "XLA105",
                        f"loop variable {position} of the while loop enters with a data-dependent size that "
                        "XLA knows when compiling (made from constants or from an argument whose value it bakes "
                        "in) and the body makes it again with a size known only at run time: XLA needs every "
                        "loop variable to keep its shape",
                        "Make the value the same way on both sides: compute it inside the loop only, or keep the "
                        "argument's value out of shapes (XLA102) so that both sizes stay dynamic, or use a "
                        "fixed-size form (a mask multiply or 3-argument tf.where).",
                        node=node["id"], api="while_loop", related=enclosing_places(graph, node),
                    )
                    break
                if bounded_source(graph, inp["src"]) is not None:
                    continue
            elif after == before:
                continue
            if _grows(graph, node, position) or shapes.keeps(node, position) is False:
                yield Hit(
                    "XLA105",
                    f"loop variable {position} of the while loop enters with shape {before} and the body hands "
                    f"it back with another one (shape invariants let TensorFlow through: {after}): XLA compiles "
                    "the body once, for the shape the variable enters with, and needs every loop variable to "
                    "keep it",
                    "Pad to the final size before the loop and write into it (tf.tensor_scatter_nd_update, "
                    "a TensorArray of fixed size), instead of growing or cutting a tensor in the loop.",
                    node=node["id"], api="while_loop", related=enclosing_places(graph, node),
                )
                break


RULE = Rule("XLA105", "loop-shape-change", "error", "A while loop changes the shape of a loop variable.",
            check=check)
