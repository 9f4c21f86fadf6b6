"""XLA201 tensor-array-grows: a TensorArray(dynamic_size=True) certainly grows; XLA silently cuts it short."""

from __future__ import annotations

from xlalint.analyses.api_names import call_name
from xlalint.analyses.tensor_lists import HINT, GrowingWrite, growing_writes, list_reader, unwritten_empty_reads
from xlalint.checks.base import Context, Hit, Rule, enclosing_places
from xlalint.core.opgraph import OpGraph
from xlalint.core.tables import version_key

# Measured with bench/version_matrix.py: TensorFlow 2.16's XLA refuses to compile a write that grows an array that
# starts empty, where 2.17 to 2.21 compile it and return the array empty.
EMPTY_REFUSED_BEFORE = (2, 17)


def check(graph: OpGraph, ctx: Context):
    for write in growing_writes(graph):
        if write.kind == "maybe":
            continue
        message = _message(write, ctx)
        reader = list_reader(graph, write.node)
        read: tuple[tuple[str, str], ...] = (
            (reader["id"], "the list is read here: where XLA's shorter list shows (or fails)"),) if reader else ()
        if write.fails is not None:
            read = ((write.fails["id"], "XLA fails to compile this op"), *enclosing_places(graph, write.fails),
                    *(r for r in read if r[0] != write.fails["id"]))
        yield Hit("XLA201", message, HINT, node=write.node["id"], api="write", related=read)
    for node in unwritten_empty_reads(graph):
        yield Hit("XLA201", "this reads a TensorArray that starts empty (size 0) and that nothing writes before: "
                  "under XLA the list has no rows, and this read fails to compile whether its value is needed or not",
                  HINT, node=node["id"], api=call_name(node["type"]), related=enclosing_places(graph, node))


def _message(write: GrowingWrite, ctx: Context) -> str:
    if write.kind == "push":
        size = f" ({write.smallest})" if write.smallest is not None else ""
        return (f"this push appends to a tensor list that starts full (made from a tensor or reserved with a "
                f"size{size}); under XLA the list keeps that size and the pushed element is dropped, without an error")
    what = (f"this write goes past the initial size ({write.smallest}) of a TensorArray(dynamic_size=True)"
            if write.kind == "past" else "this write grows a TensorArray(dynamic_size=True) that starts empty")
    if write.kind == "empty" and version_key(ctx.support.tensorflow)[:2] < EMPTY_REFUSED_BEFORE:
        return (f"{what}; with TensorFlow {ctx.support.tensorflow} XLA refuses to compile it (\"Update dim size 1 "
                "greater than dynamic slice dimension: 0\"); later releases compile it and return the array empty, "
                "without an error")
    if write.fails is not None:
        return (f"{what}; under XLA the list has no rows, and {write.fails['type']} after it fails to compile, "
                "whether its value is needed or not (reading an element of an empty list fails, and a gather from "
                "it has one element's shape, a rank less than TensorFlow's)")
    if write.kind == "past":
        return (f"{what}; under XLA the array keeps that size and the write is dropped or lands on its last "
                "element, without an error")
    return f"{what}; under XLA the array keeps size 0 and comes back empty or cut short, without an error"


RULE = Rule("XLA201", "tensor-array-grows", "error",
            "A TensorArray(dynamic_size=True) grows past its initial size: XLA silently returns a cut-down result.",
            check=check)
