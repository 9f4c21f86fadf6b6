"""XLA103 dynamic-output-shape: the op's output shape depends on data values.

Under --static, by API name: each call a compiled function makes of an API whose op has a
data-dependent output shape (``check_source``).
"""

from __future__ import annotations

from xlalint.analyses.api_names import api_of, call_name, describe_node
from xlalint.analyses.data_dependent import DATA_DEPENDENT, dynamic_size_ops
from xlalint.checks.base import BY_API_NAME, Context, Hit, Pending, Rule, SourceContext
from xlalint.core.opgraph import OpGraph
from xlalint.source.api_calls import compiled_api_calls
from xlalint.source.index import Index


def check(graph: OpGraph, ctx: Context):
    for node in dynamic_size_ops(graph, ctx.support, ctx.device):
        yield Hit(
            "XLA103",
            f"{describe_node(node)} has a data-dependent output shape: XLA pads it to an upper bound, "
            "and ops after it that need a static shape can fail or be slow",
            "Prefer fixed-size forms: a mask multiply or the 3-argument tf.where instead of "
            "tf.boolean_mask/tf.where(cond), padded variants of unique/NMS, tf.gather with fixed indices.",
            node=node["id"], api=call_name(node["type"], api_of(node)),
        )


def check_source(index: Index, ctx: SourceContext):
    for call in compiled_api_calls(index, ctx.table, ctx.device):
        if not call.info.unsupported:  # an op without a kernel is XLA001's finding
            op = next(o for o in call.info.ops if o in DATA_DEPENDENT)
            yield Pending(RULE, f"`{call.api}` ({op}) has a data-dependent output shape: XLA pads it to an upper "
                          f"bound, and ops after it that need a static shape can fail or be slow ({BY_API_NAME})",
                          "Prefer fixed-size forms: a mask multiply or the 3-argument tf.where instead of "
                          "tf.boolean_mask/tf.where(cond), padded unique/NMS variants.", call.node, call.entry, op)


RULE = Rule("XLA103", "dynamic-output-shape", "warning",
            "The op's output shape depends on data; XLA handles it only as a bounded dynamic shape.", check=check,
            check_source=check_source)
