"""XLA002 unsupported-dtype: a kernel exists, but not for this dtype (string arguments too).

Under --static: a ``tf.string`` spec in the ``input_signature`` of a ``@tf.function``: XLA has no
string type, whatever the body does (``check_source``).
"""

from __future__ import annotations

import libcst as cst

from xlalint.analyses.api_names import call_name, describe
from xlalint.analyses.branches import compiled_nodes
from xlalint.analyses.folding import folded_nodes
from xlalint.checks.base import BY_API_NAME, Context, Hit, Pending, Rule, SourceContext
from xlalint.core.opgraph import CALL_OPS, PASS_THROUGH, OpGraph
from xlalint.source.index import Def, Index
from xlalint.source.syntax import keyword

NO_XLA_TYPE = frozenset({"string", "variant"})
STRING_ARGUMENT_HINT = ("Convert strings to numbers (ids, hashes, decoded values) before the compiled function "
                        "and pass those in.")


def _argument_hits(graph: OpGraph, ctx: Context):
    root = graph.functions[graph.root]
    for node_id in root["inputs"][: graph.num_args]:
        node = graph.node(node_id)
        dtype = node["outputs"][0]["dtype"]
        if dtype in NO_XLA_TYPE:
            yield Hit(
                "XLA002",
                f"argument `{node['name']}` of `{ctx.entry}` is a {dtype} tensor; XLA has no {dtype} type",
                STRING_ARGUMENT_HINT,
                node=node_id,
            )


def _result_hits(graph: OpGraph, ctx: Context, folded: frozenset[str]):
    """A string result of the entry that XLA would have to return: made from constants (folded), so no
    string op is reported for it (measured: ``tf.strings.as_string(tf.shape(x))`` returned fails on
    ``_Retval``)."""
    for src, index in graph.functions[graph.root]["outputs"]:
        node = graph.node(src)
        dtype = node["outputs"][index]["dtype"] if index < len(node["outputs"]) else None
        while node["type"] in CALL_OPS or (node["type"] in PASS_THROUGH and node["inputs"]):
            if node["type"] in CALL_OPS:  # a nested tf.function's result: what it returns
                src, index = graph.functions[node["calls"]["f"][0]]["outputs"][index]
            else:
                src, index = node["inputs"][0]["src"], node["inputs"][0]["index"]
            node = graph.node(src)
        if dtype in NO_XLA_TYPE and src in folded:
            yield Hit(
                "XLA002",
                f"`{ctx.entry}` returns a {dtype} tensor; XLA has no {dtype} type, even for a constant",
                "Return numbers (ids, lengths, codes) and make the strings outside the compiled function.",
                node=src,
            )


# Measured on TF 2.21 CPU: a kernel that accepts the dtype, but fails for rank-1 tensors of these dtypes
# (XLA's sort-based shuffle: "Expected comparison type SIGNED"); rank 2 and more, and integers, compile.
RANK_ONE_FAILS = {"RandomShuffle": frozenset({"float16", "bfloat16", "float32", "float64"})}


def _rank_one_hits(graph: OpGraph, ctx: Context):
    for node in compiled_nodes(graph):
        failing = RANK_ONE_FAILS.get(node["type"])
        shape = node["inputs"][0]["shape"] if failing and node["inputs"] else None
        if failing and shape is not None and len(shape) == 1 and node["inputs"][0]["dtype"] in failing:
            dtype = node["inputs"][0]["dtype"]
            yield Hit(
                "XLA002",
                f"{describe(node['type'])} of a rank-1 {dtype} tensor does not compile on {ctx.device} "
                "(XLA's shuffle fails on it: \"Expected comparison type SIGNED\")",
                "Shuffle indices instead (tf.random.shuffle(tf.range(n))) and gather, or shuffle a [n, 1] tensor.",
                node=node["id"], api=call_name(node["type"]),
            )


def _reported_upstream(node: dict, runtime: frozenset[str]) -> bool:
    """A runtime string value comes from a string argument or a string op, reported there; the op
    itself is at fault only where string *constants* meet other runtime values (``tf.gather(names, i)``)."""
    return any(inp["dtype"] in NO_XLA_TYPE and inp["src"] in runtime for inp in node["inputs"])


def check(graph: OpGraph, ctx: Context):
    yield from _argument_hits(graph, ctx)
    yield from _result_hits(graph, ctx, folded_nodes(graph))
    yield from _rank_one_hits(graph, ctx)
    for node in compiled_nodes(graph):
        if not ctx.support.has_op(ctx.device, node["type"]):
            continue  # XLA001's finding
        mismatch = ctx.support.dtype_mismatch(ctx.device, node["type"], node["attrs"])
        if mismatch and mismatch[1] in NO_XLA_TYPE and (
                node["id"] in folded_nodes(graph) or _reported_upstream(node, graph.runtime_nodes)):
            continue
        if mismatch:
            attr, dtype = mismatch
            yield Hit(
                "XLA002",
                f"{describe(node['type'])} has no XLA kernel for {dtype} ({attr}={dtype}) on {ctx.device}",
                f"Cast to a supported dtype around this op (`xlalint ops --device {ctx.device} "
                f"{node['type']}` lists them).",
                node=node["id"],
                api=call_name(node["type"]),
            )


def check_source(index: Index, ctx: SourceContext):
    for compiled in index.compiled:
        if compiled.decorator is not None:
            yield from _string_specs(index, compiled.decorator, compiled.definition)


def _string_specs(index: Index, decorator, fn: Def):
    """A finding for each ``tf.string`` spec of the decorator's ``input_signature``."""
    signature = next((a.value for a in getattr(decorator, "args", ()) if keyword(a) == "input_signature"), None)
    if not isinstance(signature, (cst.List, cst.Tuple)):
        return
    params = [p.name.value for p in fn.node.params.params if p.name.value not in ("self", "cls")]
    for position, element in enumerate(signature.elements):
        spec = element.value
        if not isinstance(spec, cst.Call) or index.aliases.tf_api(spec.func) != "tf.TensorSpec":
            continue
        dtype = next((a.value for a in spec.args if keyword(a) == "dtype"), None)
        if dtype is None and len(spec.args) > 1 and spec.args[1].keyword is None:
            dtype = spec.args[1].value
        if dtype is not None and index.aliases.tf_api(dtype) == "tf.string":
            name = f"`{params[position]}`" if position < len(params) else str(position + 1)
            yield Pending(RULE, f"argument {name} of `{fn.name}` is a string tensor (input_signature); XLA has no "
                          f"string type ({BY_API_NAME})", STRING_ARGUMENT_HINT, spec, fn.name)


RULE = Rule("XLA002", "unsupported-dtype", "error", "The op's XLA kernel does not accept this dtype.",
            check=check, check_source=check_source, never_clustered=True)
