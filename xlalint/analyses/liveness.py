"""Ops whose values XLA drops before it runs its shape passes: nothing the entry keeps reads them.

TensorFlow's bridge (tf2xla) lowers every op of the function, so an op it refuses (XLA001) or a
reshape whose element count does not match the bound (XLA106) fails even when its value is never
used. XLA's dead-code elimination then removes the instructions no result needs before dynamic
sizes are propagated, so what breaks only there (a cumsum, roll or FFT of a bounded dynamic
size) breaks only when something reads the value. Reading its shape counts: ``tf.shape`` of a
bounded value becomes ``GetDimensionSize`` of it, which keeps it alive (measured on TF 2.21 CPU:
the FFT then fails to compile, the size read after a cumsum is wrong).

An op is kept when a path of tensors leads from it to a result of its function, to a stateful op
(TensorFlow orders those with control edges and runs them), or to an op that calls a function.
Results of functions other than the entry's own count as kept: their callers are not followed.
"""

from __future__ import annotations

from xlalint.core.opgraph import OpGraph


def kept_nodes(graph: OpGraph) -> frozenset[str]:
    """Ops whose values something the entry runs may read, once per graph."""
    return graph.analysis("kept_nodes", lambda: frozenset(_kept(graph)))


def _kept(graph: OpGraph) -> set[str]:
    sinks = {src for function in graph.functions.values() for src, _ in function["outputs"]}
    sinks |= {n["id"] for n in graph.nodes() if n.get("stateful") or n["calls"]}
    kept = {s for s in sinks if s in graph}
    stack = list(kept)
    while stack:
        for src in graph.predecessors(stack.pop()):
            if src not in kept:
                kept.add(src)
                stack.append(src)
    return kept
