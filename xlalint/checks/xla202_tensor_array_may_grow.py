"""XLA202 tensor-array-may-grow: a TensorArray(dynamic_size=True) whose size or index is known only at run time."""

from __future__ import annotations

from xlalint.analyses.tensor_lists import HINT, growing_writes
from xlalint.checks.base import Context, Hit, Rule
from xlalint.core.opgraph import OpGraph


def check(graph: OpGraph, ctx: Context):
    for write in growing_writes(graph):
        if write.kind != "maybe":
            continue
        size = "an initial size known only at run time" if write.smallest is None else \
            f"initial size {write.smallest}"
        yield Hit("XLA202", f"this write may grow a TensorArray(dynamic_size=True) with {size}: under XLA a "
                  "write past that size is dropped or lands on the last element, without an error",
                  HINT + " If the loop never writes past the initial size, dynamic_size=True is not needed.",
                  node=write.node["id"], api="write")


RULE = Rule("XLA202", "tensor-array-may-grow", "warning",
            "A TensorArray(dynamic_size=True) may grow at run time: XLA would silently cut the result short.",
            check=check)
