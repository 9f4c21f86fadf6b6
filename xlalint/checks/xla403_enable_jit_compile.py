"""XLA403 enable-jit-compile: a tf.function with no XLA blocker runs without XLA.

A run rule: offered by the engine for each traced tf.function without ``jit_compile=True``
and without an error-severity finding.
"""

from __future__ import annotations

from xlalint.checks.base import Fix, Rule
from xlalint.results import Finding

RULE = Rule("XLA403", "enable-jit-compile", "info",
            "A tf.function with no XLA blocker runs without XLA: jit_compile=True is on offer.", stage="run",
            fix=Fix("enable-jit-compile", "unsafe", "add jit_compile=True (XLA changes numerics slightly)"))


def offer(entry: str, path: str, line: int) -> Finding:
    """The question users forget to ask is whether XLA is on at all."""
    return RULE.finding(f"`{entry}` has no XLA blocker but runs without XLA: it could use jit_compile=True",
                        "Add jit_compile=True to its tf.function and check speed and numerics (`xlalint --verify`).",
                        path, line, 1, entry, fixable=True)
