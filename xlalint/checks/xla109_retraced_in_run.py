"""XLA109 retraced-in-run: a tf.function traced again and again while the script ran.

A run rule (``xlalint run`` only): the run traces a captured function again whenever a call
brings a signature TensorFlow's cache has not seen (a new shape, a new Python number) and counts
the traces. From ``MIN_TRACES`` on, one finding at the ``def`` names the arguments that changed,
with the values or shapes seen. Under ``jit_compile=True`` each trace is also an XLA compilation.
"""

from __future__ import annotations

import re

from xlalint.checks.base import CapturedContext, Rule, captured_site

MIN_TRACES = 3
SHOWN = 3  # values shown per argument
_TENSOR = re.compile(r"^'?[a-z0-9]+\[[^\]]*\]'?$")  # a tensor's description: float32[8,None]


def _changed(trace_args: list) -> list[tuple[str, list[str]]]:
    """``(argument, the descriptions it had, in order)`` for each argument whose description changed."""
    seen: dict[str, list[str]] = {}
    for arguments in trace_args:
        for name, description in arguments:
            values = seen.setdefault(name, [])
            if description not in values:
                values.append(description)
    return [(name, values) for name, values in seen.items() if len(values) > 1]


def _said(name: str, values: list[str]) -> str:
    what = "shape" if all(_TENSOR.match(v) for v in values) else "value"
    shown = ", ".join(v.strip("'") for v in values[:SHOWN]) + (", ..." if len(values) > SHOWN else "")
    return f"a new {what} of `{name}` ({shown})"


def check_captured(ctx: CapturedContext):
    for record in ctx.captured:
        traces = record.get("traces", 1)
        if traces < MIN_TRACES:
            continue
        changes = _changed(record.get("trace_args", []))
        what = "; ".join(_said(name, values) for name, values in changes) or "new arguments"
        compiled = ", each trace one more XLA compilation" if record.get("jit_compile") is True else ""
        shapes = any(_TENSOR.match(v) for _, values in changes for v in values)
        hint = ("Pad or bucket the inputs to a few fixed shapes" if shapes else
                "Pass the changing Python numbers as tensors (tf.constant, or a tf.Variable you assign)") + \
            ", so that one trace serves every call."
        yield RULE.finding(f"`{record['name']}` was traced {traces} times in this run{compiled}: {what}", hint,
                           *captured_site(record), 1, record["name"])


RULE = Rule("XLA109", "retraced-in-run", "warning",
            "A tf.function was traced again and again in the run (new shapes or Python numbers): one XLA "
            "compilation per trace (xlalint run).",
            stage="captured", check_captured=check_captured)
