"""The calls compiled functions make of APIs the shipped table lists, on one device.

Each call in a compiled function (or in the same-file module functions it calls, directly or not)
of an API with an op that has no XLA kernel on the device, or an op with a data-dependent output
shape. Calls of stateless APIs on literal arguments are left out (TensorFlow folds them before
XLA), and so are the Python callbacks handed to host-callback APIs: they never run compiled.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from xlalint.analyses.folding import HOST_CALLBACKS
from xlalint.source.api_table import ApiInfo, lookup, no_kernel
from xlalint.source.index import Def, Index
from xlalint.source.syntax import children, keyword

HOST_ARGUMENTS = frozenset({"func", "py_func", "generator"})  # keyword names of host callbacks


@dataclass(frozen=True)
class ApiCall:
    """A call of a listed API that runs compiled, as part of the compiled function ``entry``."""

    api: str  # "tf.strings.length"
    info: ApiInfo
    node: cst.Call
    entry: str


def compiled_api_calls(index: Index, table: dict, device: str) -> list[ApiCall]:
    """The listed API calls of the file's compiled functions, in walk order (computed once per device)."""
    return index.analysis(("api_calls", device), lambda: _Walk(index, table, device).calls())


class _Walk:
    def __init__(self, index: Index, table: dict, device: str):
        self.index, self.table = index, table
        self.missing = no_kernel(table, device)
        self.compiled_names = {c.definition.name for c in index.compiled}
        self.found: list[ApiCall] = []

    def calls(self) -> list[ApiCall]:
        for compiled in self.index.compiled:
            self.scan_compiled(compiled.definition)
        return self.found

    def scan_compiled(self, fn: Def) -> None:
        """The calls of ``fn`` and of the module functions it calls, directly or not."""
        queue, seen = [fn], {fn.name}
        while queue:
            for helper in self.scan_body(queue.pop(0), fn.name):
                if helper.name not in seen:
                    seen.add(helper.name)
                    queue.append(helper)

    def scan_body(self, fn: Def, entry: str) -> list[Def]:
        """The calls in ``fn``'s body, nested functions included, host callbacks excluded;
        return the module functions it calls."""
        helpers: list[Def] = []
        host_names: set[str] = set()
        nested: list[cst.FunctionDef] = []
        stack: list[cst.CSTNode] = [fn.node.body]
        while stack or nested:
            if not stack:  # nested functions last, once the host callbacks' arguments are known
                inner = nested.pop()
                if inner.name.value not in host_names:
                    stack.append(inner.body)
                continue
            node = stack.pop()
            if isinstance(node, cst.FunctionDef):
                nested.append(node)
                continue
            skip: frozenset[int] = frozenset()
            if isinstance(node, cst.Call):
                skip = self.check_call(node, entry, host_names)
                helper = self.index.module_defs.get(node.func.value) if isinstance(node.func, cst.Name) else None
                if helper is not None and helper.name not in self.compiled_names:
                    helpers.append(helper)
            stack.extend(child for child in children(node) if id(child) not in skip)
        return helpers

    def is_constant(self, expr) -> bool:
        """A literal, or ``tf.constant`` of one: TensorFlow folds stateless ops on those before XLA."""
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
            return True
        if isinstance(expr, cst.Name):
            return expr.value in ("True", "False", "None")
        if isinstance(expr, cst.UnaryOperation):
            return self.is_constant(expr.expression)
        if isinstance(expr, (cst.List, cst.Tuple)):
            return all(isinstance(e, cst.Element) and self.is_constant(e.value) for e in expr.elements)
        return (isinstance(expr, cst.Call) and self.index.aliases.tf_api(expr.func) == "tf.constant"
                and all(self.is_constant(a.value) for a in expr.args))

    def check_call(self, call: cst.Call, entry: str, host_names: set[str]) -> frozenset[int]:
        """Record ``call`` if the table lists its API; return the ids of arguments that run on the host."""
        api = self.index.aliases.tf_api(call.func)
        if not api:
            return frozenset()
        keywords = {a.keyword.value: a.value.evaluated_value for a in call.args
                    if a.keyword and isinstance(a.value, cst.SimpleString)}
        info = lookup(self.table, api, self.missing, keywords)
        if info is None:
            return frozenset()
        count = _argument_count(call)
        if info.max_args is not None and (count is None or count > info.max_args):
            return frozenset()
        if not info.stateful and call.args and all(self.is_constant(a.value) for a in call.args):
            return frozenset()
        self.found.append(ApiCall(api, info, call, entry))
        if not set(info.unsupported) & HOST_CALLBACKS:
            return frozenset()
        callbacks = [a for i, a in enumerate(call.args) if (i == 0 and a.keyword is None)
                     or keyword(a) in HOST_ARGUMENTS]
        host_names.update(a.value.value for a in callbacks if isinstance(a.value, cst.Name))
        return frozenset(map(id, callbacks))


def _argument_count(call: cst.Call) -> int | None:
    """Arguments given, ``name=`` aside; None with ``*args``/``**kwargs``."""
    if any(a.star for a in call.args):
        return None
    return sum(1 for a in call.args if keyword(a) != "name")
