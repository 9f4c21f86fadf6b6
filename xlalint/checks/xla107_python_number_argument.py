"""XLA107 python-number-argument: a loop passes a new Python number to a tf.function on every pass.

A source rule, in full and ``--static`` mode: a loop variable bound to Python numbers (``range``, the
index of ``enumerate``, a literal list of numbers) passed to a decorated module-level tf.function
without ``input_signature``, outside compiled functions (a loop in one is unrolled once, when it
is traced).
"""

from __future__ import annotations

import libcst as cst

from xlalint.checks.base import Pending, Rule, SourceContext
from xlalint.source.index import Index
from xlalint.source.syntax import calls_run_by, keyword


def _python_numbers(loop: cst.For | cst.CompFor) -> set[str]:
    """Names the loop binds to Python numbers: ``for i in range(...)``, the index of
    ``for i, x in enumerate(...)``, ``for lr in (0.1, 0.01)``."""
    target, source = loop.target, loop.iter
    called = source.func.value if isinstance(source, cst.Call) and isinstance(source.func, cst.Name) else None
    if called == "range" and isinstance(target, cst.Name):
        return {target.value}
    if called == "enumerate" and isinstance(target, (cst.Tuple, cst.List)) and target.elements \
            and isinstance(target.elements[0].value, cst.Name):
        return {target.elements[0].value.value}
    if isinstance(source, (cst.List, cst.Tuple)) and source.elements and isinstance(target, cst.Name) and all(
            isinstance(e.value, (cst.Integer, cst.Float)) for e in source.elements):
        return {target.value}
    return set()


def _retraced(index: Index) -> dict[str, bool]:
    """Decorated tf.functions (not methods) without input_signature: name -> jit_compile."""
    return {c.definition.node.name.value: c.jit for c in index.compiled
            if c.decorator is not None and c.definition.cls is None and not (
                isinstance(c.decorator, cst.Call) and any(keyword(a) == "input_signature" for a in c.decorator.args))}


def check_source(index: Index, ctx: SourceContext):
    retraced = _retraced(index)
    compiled_defs = {id(c.definition.node) for c in index.compiled}
    for loop in index.loops if retraced else ():
        numbers = _python_numbers(loop)
        if not numbers or index.inside(loop, compiled_defs):
            continue
        for call in calls_run_by(loop.body if isinstance(loop, cst.For) else index.comprehension(loop)):
            name = call.func.value if isinstance(call.func, cst.Name) else None
            if name is None or name not in retraced:
                continue
            for arg in call.args:
                if isinstance(arg.value, cst.Name) and arg.value.value in numbers:
                    yield _finding(name, arg, arg.value.value, retraced[name])


def _finding(function: str, arg: cst.Arg, number: str, jit: bool) -> Pending:
    compiles = ", and XLA compiles each trace again" if jit else ""
    return Pending(RULE, f"`{function}` gets the Python number `{number}`, a new value on every pass of the "
                   f"loop: tf.function traces it again for each value{compiles}",
                   f"Pass `tf.constant({number})` or give `{function}` an input_signature, so one trace "
                   "(and one compilation) serves every value.", arg, function)

RULE = Rule("XLA107", "python-number-argument", "warning",
            "A loop passes a new Python number to a tf.function on every pass: one trace and one XLA "
            "compilation per value.", stage="source", check_source=check_source)
