"""XLA106 dynamic-shape-blocker: a bounded dynamic size reaches an op that fails on it under XLA.

The size comes from a data-dependent op (``tf.boolean_mask``, 1-argument ``tf.where``...) or from
an If/Case whose branches return different shapes (``tf.image.rot90``). Measured on TF 2.21 CPU:
a reshape to a fully static shape fails; cumsum/cumprod along a dynamic axis crashes the process or
returns a wrong result; a roll along a dynamic axis fails to compile or returns a wrong result; an
FFT of any dynamic dimension fails to compile. XLA drops those three before it sees the size when
nothing reads their value (not even its shape); a reshape fails in the bridge, read or not.
See rules/XLA106/README.md.
"""

from __future__ import annotations

from xlalint.analyses.api_names import call_name, describe
from xlalint.analyses.data_dependent import bounded_source
from xlalint.analyses.liveness import kept_nodes
from xlalint.analyses.values import small_value
from xlalint.checks.base import Context, Hit, Rule
from xlalint.core.opgraph import BRANCH_OPS, OpGraph

ALONG_AXIS = {"Cumsum": "crashes the process or returns a wrong result",
              "Cumprod": "crashes the process or returns a wrong result",
              "Roll": "fails to compile or returns a wrong result"}
FFT_OPS = frozenset({"FFT", "FFT2D", "FFT3D", "IFFT", "IFFT2D", "IFFT3D",
                     "RFFT", "RFFT2D", "RFFT3D", "IRFFT", "IRFFT2D", "IRFFT3D"})


def _dynamic_axes(graph: OpGraph, node: dict, shape: list) -> bool:
    """A cumulative op or roll works along a dimension XLA knows only by its bound (or an unknown axis)."""
    axis = next((i for i in node["inputs"] if i["arg"] == "axis"), None)
    value = small_value(graph, axis["src"]) if axis else None
    if value is None:
        return node["type"] != "Roll"
    return any(shape[a % len(shape)] is None for a in value if -len(shape) <= a < len(shape))


def _what(graph: OpGraph, node: dict, shape: list) -> str | None:
    """What breaks at ``node``, or None where it accepts a bounded dynamic input."""
    op_type = node["type"]
    if op_type == "Reshape":
        target = next((i for i in node["inputs"] if i["arg"] == "shape"), None)
        value = small_value(graph, target["src"]) if target else None
        return None if value is None or -1 in value else f"a reshape to the fixed shape {value}"
    if op_type in ALONG_AXIS:
        if not _dynamic_axes(graph, node, shape):
            return None
        return f"{describe(op_type)} along that dimension, which {ALONG_AXIS[op_type]}"
    if op_type in FFT_OPS:
        return f"{describe(op_type)}, which XLA cannot compile with a dynamic dimension"
    return None


def check(graph: OpGraph, ctx: Context):
    checked = frozenset({"Reshape", *ALONG_AXIS, *FFT_OPS})
    for node in graph.nodes():
        if node["type"] not in checked or not node["inputs"]:
            continue
        data = node["inputs"][0]
        shape = data.get("shape")
        if shape is None or None not in shape:
            continue
        if node["type"] != "Reshape" and node["id"] not in kept_nodes(graph):
            continue
        what = _what(graph, node, shape)
        source = bounded_source(graph, data["src"]) if what else None
        if source is None:
            continue
        origin = ("a value from branches that return different shapes" if source["type"] in BRANCH_OPS
                  else "a value with a data-dependent size")
        yield Hit(
            "XLA106",
            f"{origin} reaches {what}: XLA sees its upper bound, not its size",
            "Keep fixed shapes: a mask (3-argument tf.where, multiply by the mask) instead of "
            "tf.boolean_mask/tf.where(cond), branches that return the same shape, or pad back to a "
            "fixed size with tf.tensor_scatter_nd_update.",
            node=node["id"], api=call_name(node["type"]),
        )


RULE = Rule("XLA106", "dynamic-shape-blocker", "error",
            "A bounded dynamic size reaches an op XLA cannot compile or run with it.", check=check)
