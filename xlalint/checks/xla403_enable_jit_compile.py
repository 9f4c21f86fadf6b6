"""XLA403 enable-jit-compile: a tf.function with no XLA blocker runs without XLA.

An entry rule: offered for each traced tf.function without ``jit_compile=True``, without an
error-severity finding of any rule (whatever ``--select`` shows), whose variables TensorFlow could
lift out of it (``xlalint run`` sees that; XLA304), and that ``--verify`` did not
see fail or return other values under XLA. The fix (unsafe: XLA changes numerics slightly) adds
``jit_compile=True`` to the ``tf.function`` decorator of the ``def`` at the line. Not offered where
the trace saw the function read variables on several devices (a distribution strategy's replicas,
XLA305): one XLA cluster runs on one device and cannot reach the others' variables.
"""

from __future__ import annotations

import libcst as cst

from xlalint.checks.base import EntryContext, Fix, NodeEdit, Rule, with_keyword
from xlalint.inputs.files import display_path
from xlalint.source.compiled import is_tf_function
from xlalint.source.index import Index


def check_entry(entry: EntryContext):
    """The question users forget to ask is whether XLA is on at all."""
    record = entry.record
    if record.get("resource_devices"):  # a distribution strategy's variables (XLA305)
        return
    verify = record.get("verify")
    if record["kind"] != "tf.function" or record.get("jit_compile") is True or entry.blocked or record.get(
            "unliftable") or (
            verify and (not verify["compiled"] or verify["allclose"] is False)):
        return
    name = record["name"]
    yield RULE.finding(f"`{name}` has no XLA blocker but runs without XLA: it could use jit_compile=True",
                       "Add jit_compile=True to its tf.function and check speed and numerics (`xlalint --verify`).",
                       display_path(entry.path), record["line"], 1, name, fixable=True)


def _with_jit_keyword(call: cst.Call) -> cst.Call:
    """The call with ``jit_compile=True`` (replacing a jit_compile or experimental_compile value)."""
    return with_keyword(call, "jit_compile", ("experimental_compile",))


def _enable_jit(fn: cst.FunctionDef, ancestors: tuple) -> cst.FunctionDef | None:
    aliases = Index(ancestors[0]).aliases  # the file's imports (ancestors[0]: its module)
    decorators, changed = [], False
    for decorator in fn.decorators:
        expr = decorator.decorator
        if is_tf_function(aliases, expr):
            call = expr if isinstance(expr, cst.Call) else cst.Call(func=expr)
            decorator, changed = decorator.with_changes(decorator=_with_jit_keyword(call)), True
        decorators.append(decorator)
    return fn.with_changes(decorators=decorators) if changed else None


RULE = Rule("XLA403", "enable-jit-compile", "info",
            "A tf.function with no XLA blocker runs without XLA: jit_compile=True is on offer.", stage="entry",
            check_entry=check_entry,
            fix=Fix("enable-jit-compile", "unsafe", "add jit_compile=True (XLA changes numerics slightly)",
                    node_edit=NodeEdit(cst.FunctionDef, _enable_jit, anchor=lambda fn: fn.name)))
