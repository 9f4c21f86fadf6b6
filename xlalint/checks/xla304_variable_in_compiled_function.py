"""XLA304 variable-in-compiled-function: a jit_compile function creates a variable TensorFlow cannot lift out.

A run rule (``xlalint run`` only): a ``tf.function`` may create its variables in its first
trace; TensorFlow then lifts their initial values out of the function. When an initial value
depends on the function's arguments it cannot, and it initializes the variable behind a ``cond``
inside the function instead, which it refuses under XLA ("We failed to lift variable creations
out of this tf.function, so this tf.function cannot be run on XLA"). Reported at the line that
created the variable, with the function's ``def`` as a related place.
"""

from __future__ import annotations

from xlalint.checks.base import CapturedContext, Rule, captured_site
from xlalint.inputs.files import display_path
from xlalint.core.results import Related


def check_captured(ctx: CapturedContext):
    for record in ctx.captured:
        if record.get("jit_compile") is not True or not record.get("unliftable"):
            continue
        name, (path, line) = record["name"], captured_site(record)
        made = record.get("variables") or [[record["path"], record["line"], name]]
        yield RULE.finding(
            f"`{name}` (jit_compile=True) creates a variable whose initial value depends on its arguments: "
            "TensorFlow cannot lift it out of the function and refuses to run the function with XLA "
            f"(TensorFlow: {record['unliftable']})",
            "Create the variable outside the function (in __init__ or build(), from shapes known there), or "
            "start it from a value that does not depend on the arguments and assign() them in the function.",
            display_path(made[0][0]), made[0][1], 1, name,
            related=(Related(path, line, f"`{name}` is compiled with XLA"),) if (path, line) != (
                display_path(made[0][0]), made[0][1]) else ())


RULE = Rule("XLA304", "variable-in-compiled-function", "error",
            "A jit_compile function creates a variable from its arguments: TensorFlow cannot lift it out and "
            "refuses to run the function with XLA (xlalint run).",
            stage="captured", check_captured=check_captured)
