"""XLA104 unknown-dims: the entry's signature has unknown dimensions."""

from __future__ import annotations

from xlalint.checks.base import Context, Hit, Rule
from xlalint.core.opgraph import OpGraph


def _shape_text(shape) -> str:
    return "<unknown rank>" if shape is None else "[" + ", ".join("None" if d is None else str(d) for d in shape) + "]"


def check(graph: OpGraph, ctx: Context):
    root = graph.functions[graph.root]
    # Models (Keras, SavedModel signatures) take whole batches: a free batch dimension is expected.
    first_dim = 0 if ctx.kind in ("function", "tf.function") else 1
    unknown = []
    for node_id, spec in zip(root["inputs"], ctx.signature):
        if spec["shape"] is None or None in spec["shape"][first_dim:]:
            unknown.append(f"`{graph.node(node_id)['name']}`: {spec['dtype']}{_shape_text(spec['shape'])}")
    if unknown:
        yield Hit(
            "XLA104",
            f"`{ctx.entry}` has arguments with unknown dimensions ({', '.join(unknown)}): "
            "XLA compiles one program per concrete shape and recompiles for every new shape",
            "Fix the shapes in the signature, or pad/bucket inputs to a few sizes.",
        )


RULE = Rule("XLA104", "unknown-dims", "warning",
            "The entry's signature has unknown dimensions: one compilation per input shape.", check=check)
