"""XLA2xx: constructs that XLA compiles and runs, returning a different result without an error.

A ``TensorArray(dynamic_size=True)`` writes with ``resize_if_index_out_of_bounds``; XLA keeps the
list at its initial size and drops a write past it or puts it on the last element
(tensorflow#119375, #127528). A write is certain to be lost when its index is a constant at or past
the initial size, or when the array starts empty (XLA201); it may be lost when either is only
known at run time (XLA202).
"""

from __future__ import annotations

from xlalint.checks.base import Context, Hit, Rule
from xlalint.checks.constant_inputs import small_value
from xlalint.opgraph import PASS_THROUGH, WHILE_OPS, OpGraph

HANDLE_UPDATES = frozenset({"TensorListSetItem", "TensorListPushBack", "TensorListPopBack"})
HINT = ("Create the TensorArray with its final size and dynamic_size=False (bound the loop with "
        "maximum_iterations and size the array to it), or build the result with a tensor of that size.")


def _input(node: dict, arg: str) -> dict | None:
    return next((i for i in node["inputs"] if i["arg"] == arg), None)


def _initial_sizes(graph: OpGraph, src: str, index: int, seen: set) -> list[int | None]:
    """Initial sizes of the lists a handle may come from (None: not a constant; [] : not found)."""
    if (src, index) in seen:
        return []
    seen.add((src, index))
    node = graph.node(src)
    op_type = node["type"]
    if op_type == "TensorListReserve":
        size = _input(node, "num_elements")
        value = small_value(graph, size["src"]) if size else None
        return [value[0] if value else None]
    if op_type == "TensorListFromTensor":
        shape = node["inputs"][0]["shape"]
        return [shape[0] if shape else None]
    if op_type == "EmptyTensorList":
        return [0]
    if op_type in HANDLE_UPDATES or op_type in PASS_THROUGH:
        handle = _input(node, "input_handle") or node["inputs"][0]
        return _initial_sizes(graph, handle["src"], handle["index"], seen)
    if op_type in WHILE_OPS:  # a handle out of a loop is the one that went in
        inp = node["inputs"][index]
        return _initial_sizes(graph, inp["src"], inp["index"], seen)
    if op_type == "Placeholder" and node["function"] != graph.root:
        position = graph.functions[node["function"]]["inputs"].index(src)
        sources = [graph.argument_source(graph.node(caller_id), position)
                   for caller_id, _ in graph.callers(node["function"])]
        return [size for inp in sources if inp for size in _initial_sizes(graph, inp["src"], inp["index"], seen)]
    return [None]


def check(graph: OpGraph, ctx: Context):
    for node in graph.nodes():
        if node["type"] != "TensorListSetItem" or not node["attrs"].get("resize_if_index_out_of_bounds"):
            continue
        handle = _input(node, "input_handle")
        sizes = _initial_sizes(graph, handle["src"], handle["index"], set()) or [None]
        index = _input(node, "index")
        value = small_value(graph, index["src"]) if index else None
        known = None not in sizes
        smallest = min(sizes) if known else None
        if value is not None and known:
            if value[0] < smallest:
                continue  # within the initial size: XLA writes it as TensorFlow does
            yield Hit("XLA201", f"this write goes past the initial size ({smallest}) of a TensorArray(dynamic_size="
                      "True); under XLA the array keeps that size and the write is dropped or lands on its last "
                      "element, without an error", HINT, node=node["id"], api="write")
        elif known and smallest == 0:
            yield Hit("XLA201", "this write grows a TensorArray(dynamic_size=True) that starts empty; under XLA the "
                      "array keeps size 0 and comes back empty or cut short, without an error",
                      HINT, node=node["id"], api="write")
        else:
            size = f"initial size {smallest}" if known else "an initial size known only at run time"
            yield Hit("XLA202", f"this write may grow a TensorArray(dynamic_size=True) with {size}: under XLA a "
                      "write past that size is dropped or lands on the last element, without an error",
                      HINT + " If the loop never writes past the initial size, dynamic_size=True is not needed.",
                      node=node["id"], api="write")


RULE = Rule("XLA201", "tensor-array-grows", "error",
            "A TensorArray(dynamic_size=True) grows past its initial size: XLA silently returns a cut-down result.",
            check)
MAY_GROW = Rule("XLA202", "tensor-array-may-grow", "warning",
                "A TensorArray(dynamic_size=True) may grow at run time: XLA would silently cut the result short.",
                check)
