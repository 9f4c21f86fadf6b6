"""XLA110 function-made-per-iteration: a new tf.function object of one definition, again and again.

A run rule (``xlalint run`` only): each ``tf.function`` object keeps its own traces, so wrapping
the same Python function anew (``tf.function(step)`` in a loop, a decorated ``def`` inside it)
traces it, and XLA compiles it, once per object. Reported at the ``def`` once the run called
``MIN_OBJECTS`` objects of it, with the lines that made them. A method's copy per instance does
not count.
"""

from __future__ import annotations

from xlalint.checks.base import CapturedContext, Rule, captured_site
from xlalint.inputs.files import display_path
from xlalint.core.results import Related

MIN_OBJECTS = 3


def check_captured(ctx: CapturedContext):
    for record in ctx.captured:
        objects = record.get("functions", 0)
        if objects < MIN_OBJECTS:
            continue
        compiled = " and compiled by XLA" if record.get("jit_compile") is True else ""
        made = tuple(Related(display_path(path), line, f"a new tf.function of `{record['name']}` made here, in "
                             f"`{function}()`") for path, line, function in record.get("made_at", ()))
        yield RULE.finding(
            f"`{record['name']}` is made into a new tf.function again and again: the run called {objects} of them, "
            f"each traced{compiled} on its first call",
            "Make the tf.function once, outside the loop (decorate the def at module level or build it in "
            "__init__), and call that one object.",
            *captured_site(record), 1, record["name"], related=made)


RULE = Rule("XLA110", "function-made-per-iteration", "warning",
            "The same function is made into a new tf.function again and again: each one traced and compiled anew "
            "(xlalint run).",
            stage="captured", check_captured=check_captured)
