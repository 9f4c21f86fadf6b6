"""XLA001 unsupported-op: the op has no XLA kernel on the target device.

Under --static, by API name: each call a compiled function makes of an API whose op has no XLA
kernel on the device (``check_source``). Under auto-clustering the op can be left out of the
clusters: the fix wraps its statement in ``jit_scope(compile_ops=False)``.
"""

from __future__ import annotations

import libcst as cst

from xlalint.analyses.api_names import call_name, describe
from xlalint.analyses.branches import compiled_nodes
from xlalint.analyses.folding import HOST_CALLBACKS, folded_nodes
from xlalint.checks.base import BY_API_NAME, Context, Fix, Hit, NodeEdit, Pending, Rule, SourceContext, layer_names
from xlalint.core.opgraph import BRANCH_OPS, OpGraph
from xlalint.source.api_calls import compiled_api_calls
from xlalint.source.api_table import ApiInfo
from xlalint.source.index import Index

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
            related=_branches_given_its_resource(graph, node),
            fixable=ctx.mode == "autocluster",
        )
    yield from _gpu_kernels(graph, ctx)


def _branches_given_its_resource(graph: OpGraph, node: dict) -> tuple[tuple[str, str], ...]:
    """The conds around an op that reads a resource (a lookup table) its branch is given as an argument. XLA
    cannot pass such a resource into a branch, and the compiler fails at the cond before it reaches the op
    (measured on TF 2.21 CPU: "Uninitialized arguments", naming the cond; in a loop body or a called function
    it names the op)."""
    arguments = set(graph.functions[node["function"]]["inputs"]) if node["function"] in graph.functions else set()
    if not any(inp["dtype"] == "resource" and inp["src"] in arguments for inp in node["inputs"]):
        return ()
    return tuple((outer["id"], "the compiler reports the failure at this cond, which hands the resource to its "
                  "branch: XLA cannot (\"Uninitialized arguments\")")
                 for outer in graph.enclosing(node) if outer["type"] in BRANCH_OPS)


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
            fixable=ctx.mode == "autocluster",
        )


def check_source(index: Index, ctx: SourceContext):
    for call in compiled_api_calls(index, ctx.table, ctx.device):
        info = call.info
        if info.unsupported:
            yield Pending(RULE, f"`{call.api}` ({', '.join(info.unsupported)}) has no XLA kernel on {ctx.device} "
                          f"({BY_API_NAME})", _static_hint(info, ctx.device), call.node, call.entry, info.unsupported[0])


def _static_hint(info: ApiInfo, device: str) -> str:
    ops = set(info.unsupported)
    if ops & HOST_CALLBACKS:
        return ("Python callbacks run on the host and cannot be compiled: move the call out of the "
                "compiled function, or write it with TensorFlow ops.")
    if ops & PRINTING:
        return "Printing needs the host: return the values and print them outside the compiled function."
    if any("Dataset" in op for op in ops):
        return "Build and iterate the tf.data pipeline outside the compiled function; pass each batch in."
    if ".strings." in info.api or any("String" in op for op in ops):
        return "XLA has no string type: process strings in the input pipeline, before the compiled function."
    return (f"Move the call out of the compiled function or use ops XLA compiles (`xlalint ops --device "
            f"{device}`); run without --static for the traced verdict.")


JIT_SCOPE = "tf.xla.experimental.jit_scope(compile_ops=False)"


def _is_jit_scope(node) -> bool:
    return isinstance(node, cst.With) and any(
        "jit_scope" in cst.Module([]).code_for_node(item.item) for item in node.items)


def _wrap_in_jit_scope(statement: cst.SimpleStatementLine, ancestors: tuple) -> cst.With | None:
    """Only the statement at the line, so the rest stays clustered; nothing inside a jit_scope already."""
    if any(_is_jit_scope(a) for a in ancestors):
        return None
    return cst.With(items=[cst.WithItem(cst.parse_expression(JIT_SCOPE))],
                    body=cst.IndentedBlock(body=[statement.with_changes(leading_lines=())]),
                    leading_lines=statement.leading_lines)


# Offered under auto-clustering only (Hit.fixable): jit_compile=True has no way to leave an op out.
RULE = Rule("XLA001", "unsupported-op", "error", "The op has no XLA kernel on the target device.", check=check,
            check_source=check_source, never_clustered=True,
            fix=Fix("jit-scope", "safe", "wrap the statement in jit_scope(compile_ops=False)",
                    node_edit=NodeEdit(cst.SimpleStatementLine, _wrap_in_jit_scope)))
