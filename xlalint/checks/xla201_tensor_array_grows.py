"""XLA201 tensor-array-grows: a TensorArray(dynamic_size=True) certainly grows; XLA silently cuts it short."""

from __future__ import annotations

from xlalint.analyses.tensor_lists import HINT, growing_writes, list_reader
from xlalint.checks.base import Context, Hit, Rule
from xlalint.core.opgraph import OpGraph


def check(graph: OpGraph, ctx: Context):
    for write in growing_writes(graph):
        if write.kind == "maybe":
            continue
        if write.kind == "push":
            size = f" ({write.smallest})" if write.smallest is not None else ""
            message = (f"this push appends to a tensor list that starts full (made from a tensor or reserved with a "
                       f"size{size}); under XLA the list keeps that size and the pushed element is dropped, without "
                       "an error")
        elif write.kind == "past":
            message = (f"this write goes past the initial size ({write.smallest}) of a TensorArray(dynamic_size="
                       "True); under XLA the array keeps that size and the write is dropped or lands on its last "
                       "element, without an error")
        else:
            message = ("this write grows a TensorArray(dynamic_size=True) that starts empty; under XLA the array "
                       "keeps size 0 and comes back empty or cut short, without an error")
        reader = list_reader(graph, write.node)
        read = ((reader["id"], "the list is read here: where XLA's shorter list shows (or fails)"),) if reader else ()
        yield Hit("XLA201", message, HINT, node=write.node["id"], api="write", related=read)


RULE = Rule("XLA201", "tensor-array-grows", "error",
            "A TensorArray(dynamic_size=True) grows past its initial size: XLA silently returns a cut-down result.",
            check=check)
