"""XLA108 partial-last-batch: a dataset batched without ``drop_remainder=True`` feeds a compiled function.

A run rule (``xlalint run`` only): the run ties each ``for`` loop's elements (and each batch
Keras' ``fit`` takes) to the ``batch``/``padded_batch`` of its dataset. When that batch keeps a
smaller last batch (the dataset's size is not a multiple of the batch size, or is not known) and
its elements reach a ``jit_compile=True`` function, the last batch's new shape makes TensorFlow
trace and XLA compile the function again (tensorflow#81896). Reported at the ``batch`` call; the fix (unsafe: each epoch
then drops the last examples) adds ``drop_remainder=True`` there.
"""

from __future__ import annotations

import libcst as cst

from xlalint.checks.base import CapturedContext, Fix, NodeEdit, Rule, captured_site, with_keyword
from xlalint.inputs.files import display_path
from xlalint.core.results import Related
from xlalint.source.sourcemap import column
from xlalint.core.specs import signature_text

BATCHES = ("batch", "padded_batch")


def check_captured(ctx: CapturedContext):
    for record in ctx.captured:
        if record.get("jit_compile") is not True:
            continue
        for batch in record.get("batches", ()):
            path, line, _ = batch["site"]
            size = (f"{batch['size']} elements in batches of {batch['batch_size']} leave {batch['left']}"
                    if batch["left"] is not None else f"batches of {batch['batch_size']} from a dataset of unknown size")
            name = record["name"]
            yield RULE.finding(
                f"the last batch of this dataset is smaller ({size}): `{name}` (jit_compile=True) gets a new shape "
                f"then, and TensorFlow traces it and XLA compiles it again; the dataset's spec is "
                f"({signature_text(batch['relaxed'])})",
                "Batch with drop_remainder=True (each epoch then leaves out the last examples), or pad the last "
                "batch to the full size.",
                display_path(path), line, column(path, line, "batch"), name, fixable=True,
                related=(Related(*captured_site(record), f"`{name}` is compiled with XLA"),))


def _drop_remainder(call: cst.Call, ancestors: tuple) -> cst.Call | None:
    if not isinstance(call.func, cst.Attribute) or call.func.attr.value not in BATCHES:
        return None
    return with_keyword(call, "drop_remainder")


def _name(call: cst.Call):
    """A chained call's ``batch`` name: the line the run saw it called on."""
    return call.func.attr if isinstance(call.func, cst.Attribute) else call


RULE = Rule("XLA108", "partial-last-batch", "warning",
            "A dataset batched without drop_remainder=True feeds a jit_compile function: XLA compiles it again "
            "for the smaller last batch (xlalint run).",
            stage="captured", check_captured=check_captured,
            fix=Fix("drop-remainder", "unsafe", "batch with drop_remainder=True (each epoch drops the last examples)",
                    node_edit=NodeEdit(cst.Call, _drop_remainder, anchor=_name)))
