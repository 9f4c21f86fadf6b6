"""The libcst transformer that performs every requested edit of one file in a single pass.

Edits, by kind:
* ``jit-compile-keyword``: ``experimental_compile=`` -> ``jit_compile=`` in any call (safe);
* ``enable-jit-compile``: add ``jit_compile=True`` to the ``tf.function`` decorator of the
  ``def`` at a line (unsafe: XLA changes numerics slightly);
* ``auto-jit-flag``: ``--tf_xla_enable_xla_devices`` -> ``--tf_xla_auto_jit=2`` in string
  literals at a line (unsafe: turns auto-clustering on);
* ``jit-scope``: wrap the statement at a line (only that one, so the rest stays clustered) in
  ``with tf.xla.experimental.jit_scope(compile_ops=False):`` (safe: auto-clustering leaves
  its ops out, nothing else changes); skipped when already inside such a block.
Comments and formatting elsewhere are kept; every edit is idempotent.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

DEVICES_FLAG, AUTO_JIT_FLAG = "--tf_xla_enable_xla_devices", "--tf_xla_auto_jit=2"


def _is_tf_function(expr: cst.BaseExpression) -> bool:
    """``tf.function``, ``tensorflow.function`` or a bare imported ``function``."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "function"
    return isinstance(expr, cst.Name) and expr.value == "function"


def _with_jit_keyword(call: cst.Call) -> cst.Call:
    """The call with ``jit_compile=True`` (replacing a jit_compile or experimental_compile value)."""
    true = cst.Name("True")
    keywords = ("jit_compile", "experimental_compile")
    args = [a.with_changes(value=true, keyword=cst.Name("jit_compile")) if a.keyword and a.keyword.value in keywords
            else a for a in call.args]
    if not any(a.keyword and a.keyword.value in keywords for a in call.args):
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(cst.Arg(value=true, keyword=cst.Name("jit_compile"),
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    return call.with_changes(args=args)


JIT_SCOPE = "tf.xla.experimental.jit_scope(compile_ops=False)"


def _is_jit_scope(with_node: cst.With) -> bool:
    return any("jit_scope" in cst.Module([]).code_for_node(item.item) for item in with_node.items)


class FixTransformer(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, requests: set[tuple[str, int]]):
        super().__init__()
        self.requests = requests  # {(kind, line)}
        self.kinds = {kind for kind, _ in requests}
        self.done: set[tuple[str, int]] = set()
        self._scopes = 0  # depth inside jit_scope blocks

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if "jit-compile-keyword" in self.kinds and updated.keyword and updated.keyword.value == "experimental_compile":
            line = self._line(original)
            if ("jit-compile-keyword", line) in self.requests:
                self.done.add(("jit-compile-keyword", line))
                return updated.with_changes(keyword=cst.Name("jit_compile"))
        return updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        key = ("enable-jit-compile", self._line(original.name))
        if key not in self.requests:
            return updated
        decorators = []
        for decorator in updated.decorators:
            expr = decorator.decorator
            if isinstance(expr, cst.Call) and _is_tf_function(expr.func):
                decorator = decorator.with_changes(decorator=_with_jit_keyword(expr))
                self.done.add(key)
            elif _is_tf_function(expr):
                decorator = decorator.with_changes(decorator=_with_jit_keyword(cst.Call(func=expr)))
                self.done.add(key)
            decorators.append(decorator)
        return updated.with_changes(decorators=decorators)

    def visit_With(self, node: cst.With) -> None:
        self._scopes += _is_jit_scope(node)

    def leave_With(self, original: cst.With, updated: cst.With) -> cst.With:
        self._scopes -= _is_jit_scope(original)
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        key = ("jit-scope", self._line(original))
        if key not in self.requests or self._scopes:
            return updated
        self.done.add(key)
        inner = updated.with_changes(leading_lines=())
        return cst.With(items=[cst.WithItem(cst.parse_expression(JIT_SCOPE))],
                        body=cst.IndentedBlock(body=[inner]), leading_lines=updated.leading_lines)

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        key = ("auto-jit-flag", self._line(original))
        if key in self.requests and DEVICES_FLAG in updated.value:
            self.done.add(key)
            return updated.with_changes(value=updated.value.replace(DEVICES_FLAG, AUTO_JIT_FLAG))
        return updated
