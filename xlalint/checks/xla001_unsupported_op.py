"""XLA001 unsupported-op: the op has no XLA kernel on the target device."""

from __future__ import annotations

from xlalint.analyses.api_names import call_name, describe
from xlalint.analyses.branches import compiled_nodes
from xlalint.analyses.folding import HOST_CALLBACKS, folded_nodes
from xlalint.checks.base import Context, Fix, Hit, Rule, layer_names
from xlalint.opgraph import OpGraph

# Function arguments: XLA sees them as _Arg; their dtypes are XLA002's business.
ALWAYS_COMPILED = frozenset({"Placeholder"})
PRINTING = frozenset({"PrintV2", "Print", "StringFormat"})


def _hint(node: dict, device: str) -> str:
    op_type = node["type"]
    layer = node.get("layer")
    if layer and not layer["user_code"]:
        return (f"The Keras `{layer['class']}` layer cannot be compiled: apply it in the tf.data input "
                "pipeline (dataset.map) and feed its output to the model.")
    if op_type in HOST_CALLBACKS:
        return ("Python callbacks run on the host and cannot be compiled: move the call out of the "
                "compiled function, or write the computation with TensorFlow ops.")
    if op_type == "StringFormat":  # tf.strings.format; the one inside tf.print is reported as tf.print
        return ("XLA has no string type: build the string with tf.strings.format outside the compiled "
                "function, from values it returns.")
    if op_type in PRINTING:
        return ("Printing needs the host: drop tf.print from the compiled function, return the values "
                "and print them outside, or use tf.debugging asserts (compiled as no-ops).")
    if "Dataset" in op_type or "Iterator" in op_type:
        return "Iterate the tf.data pipeline outside the compiled function and pass each batch in."
    if any(t["dtype"] == "string" for t in node["inputs"] + node["outputs"]):
        return "XLA has no string type: do string processing in the input pipeline, before the compiled function."
    return (f"Move it out of the compiled function, or rewrite it with ops that have XLA kernels "
            f"(`xlalint ops --device {device}` lists them).")


def _part_of_print(graph: OpGraph, node: dict) -> bool:
    """tf.print makes StringFormat + PrintV2: report the pair once, as tf.print."""
    consumers = graph.consumers(node["id"])
    return node["type"] == "StringFormat" and bool(consumers) and all(c["type"] == "PrintV2" for c in consumers)


def check(graph: OpGraph, ctx: Context):
    folded = folded_nodes(graph)
    for node in compiled_nodes(graph):
        op_type = node["type"]
        if op_type in ALWAYS_COMPILED or ctx.support.has_op(ctx.device, op_type) or _part_of_print(graph, node) \
                or node["id"] in folded:
            continue
        yield Hit(
            "XLA001",
            f"{describe(op_type)} has no XLA kernel on {ctx.device}",
            _hint(node, ctx.device),
            node=node["id"],
            api=call_name(op_type),
        )
    yield from _gpu_kernels(graph, ctx)


def _gpu_kernels(graph: OpGraph, ctx: Context):
    """Layers traced here (on a CPU) that Keras runs as another op on a GPU, e.g. LSTM as CudnnRNNV3."""
    if ctx.device != "gpu":
        return
    traced = {node["type"] for node in graph.nodes()}  # traced where Keras saw a GPU: the op is in the graph
    sites: dict[tuple, tuple[dict, dict, set]] = {}  # one finding per construction line (Bidirectional: two layers)
    for node in graph.nodes():
        layer = node.get("layer") or {}
        kernel = layer.get("gpu_kernel")
        if kernel and kernel not in traced and not ctx.support.has_op(ctx.device, kernel):
            sites.setdefault((layer["file"], layer["line"]), (node, layer, set()))[2].add(layer["name"])
    for node, layer, names in sites.values():
        yield Hit(
            "XLA001",
            f"on a GPU, Keras runs the {layer['class']} {layer_names(names)} as {layer['gpu_kernel']} (cuDNN), "
            "which has no XLA kernel on gpu",
            f"Pass use_cudnn=False to the {layer['class']} so that XLA compiles its loop instead.",
            node=node["id"],
            api=layer["class"],
        )


# Under auto-clustering (only) the op can be left out of the clusters: the fix wraps its statement.
RULE = Rule("XLA001", "unsupported-op", "error", "The op has no XLA kernel on the target device.", check=check,
            fix=Fix("jit-scope", "safe", "wrap the statement in jit_scope(compile_ops=False)"))
