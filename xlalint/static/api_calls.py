"""XLA001 and XLA103 by API name: the calls a compiled function makes of APIs the shipped table lists.

Also XLA002 for a ``tf.string`` spec in the ``input_signature`` of a ``@tf.function``: XLA has no
string type, whatever the body does.

Each call in a compiled function (or in the same-file module functions it calls, directly or not) of
an API whose op has no XLA kernel on the device is an XLA001, of one whose op has a data-dependent
output shape an XLA103. Calls of stateless APIs on literal arguments are left out (TensorFlow folds
them before XLA), and so are the Python callbacks handed to host-callback APIs.
"""

from __future__ import annotations

import libcst as cst

from xlalint.analyses.data_dependent import DATA_DEPENDENT
from xlalint.checks.xla001_unsupported_op import HOST_CALLBACKS, PRINTING
from xlalint.checks.xla001_unsupported_op import RULE as XLA001
from xlalint.checks.xla002_unsupported_dtype import RULE as XLA002, STRING_ARGUMENT_HINT
from xlalint.checks.xla103_dynamic_output_shape import RULE as XLA103
from xlalint.static.api_table import ApiInfo, lookup, no_kernel
from xlalint.static.index import Def, Index, Pending
from xlalint.static.syntax import children, keyword

STATIC = "static: by API name, not traced"
HOST_ARGUMENTS = frozenset({"func", "py_func", "generator"})  # keyword names of host callbacks


class ApiCalls:
    """The XLA001/XLA103 findings of one file's compiled functions on one device."""

    def __init__(self, index: Index, table: dict, device: str):
        self.index, self.table, self.device = index, table, device
        self.missing = no_kernel(table, device)
        self.compiled_names = {c.definition.name for c in index.compiled}
        self.pending: list[Pending] = []

    def check(self) -> list[Pending]:
        for compiled in self.index.compiled:
            self.scan_compiled(compiled.definition)
            if compiled.decorator is not None:
                self.check_signature(compiled.decorator, compiled.definition)
        return self.pending

    def check_signature(self, decorator, fn: Def) -> None:
        """XLA002 for each ``tf.string`` spec of the decorator's ``input_signature``."""
        signature = next((a.value for a in getattr(decorator, "args", ()) if keyword(a) == "input_signature"), None)
        if not isinstance(signature, (cst.List, cst.Tuple)):
            return
        params = [p.name.value for p in fn.node.params.params if p.name.value not in ("self", "cls")]
        for position, element in enumerate(signature.elements):
            spec = element.value
            if not isinstance(spec, cst.Call) or self.index.aliases.tf_api(spec.func) != "tf.TensorSpec":
                continue
            dtype = next((a.value for a in spec.args if keyword(a) == "dtype"), None)
            if dtype is None and len(spec.args) > 1 and spec.args[1].keyword is None:
                dtype = spec.args[1].value
            if dtype is not None and self.index.aliases.tf_api(dtype) == "tf.string":
                name = f"`{params[position]}`" if position < len(params) else str(position + 1)
                self.pending.append(Pending(
                    XLA002, f"argument {name} of `{fn.name}` is a string tensor (input_signature); XLA has no "
                    f"string type ({STATIC})", STRING_ARGUMENT_HINT, spec, fn.name))

    def scan_compiled(self, fn: Def) -> None:
        """Report the calls of ``fn`` and of the module functions it calls, directly or not."""
        queue, seen = [fn], {fn.name}
        while queue:
            for helper in self.scan_body(queue.pop(0), fn.name):
                if helper.name not in seen:
                    seen.add(helper.name)
                    queue.append(helper)

    def scan_body(self, fn: Def, entry: str) -> list[Def]:
        """Report the calls in ``fn``'s body, nested functions included, host callbacks excluded;
        return the module functions it calls."""
        helpers, host_names, nested = [], set(), []
        stack = [fn.node.body]
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
        """Report ``call`` if the table lists its API; return the ids of arguments that run on the host."""
        api = self.index.aliases.tf_api(call.func)
        keywords = {keyword(a): a.value.evaluated_value for a in call.args
                    if a.keyword and isinstance(a.value, cst.SimpleString)}
        info = lookup(self.table, api, self.missing, keywords) if api else None
        if info is None:
            return frozenset()
        count = _argument_count(call)
        if info.max_args is not None and (count is None or count > info.max_args):
            return frozenset()
        if not info.stateful and call.args and all(self.is_constant(a.value) for a in call.args):
            return frozenset()
        if info.unsupported:
            self.pending.append(Pending(
                XLA001, f"`{api}` ({', '.join(info.unsupported)}) has no XLA kernel on {self.device} ({STATIC})",
                _hint(info, self.device), call, entry, info.unsupported[0]))
        else:
            op = next(o for o in info.ops if o in DATA_DEPENDENT)
            self.pending.append(Pending(
                XLA103, f"`{api}` ({op}) has a data-dependent output shape: XLA pads it to an upper bound, "
                f"and ops after it that need a static shape can fail or be slow ({STATIC})",
                "Prefer fixed-size forms: a mask multiply or the 3-argument tf.where instead of "
                "tf.boolean_mask/tf.where(cond), padded unique/NMS variants.", call, entry, op))
        if not set(info.unsupported) & HOST_CALLBACKS:
            return frozenset()
        callbacks = [a for i, a in enumerate(call.args) if (i == 0 and a.keyword is None)
                     or keyword(a) in HOST_ARGUMENTS]
        host_names.update(a.value.value for a in callbacks if isinstance(a.value, cst.Name))
        return frozenset(map(id, callbacks))


def _hint(info: ApiInfo, device: str) -> str:
    ops = set(info.unsupported)
    if ops & HOST_CALLBACKS:
        return ("Python callbacks run on the host and cannot be compiled: move the call out of the "
                "compiled function, or write it with TensorFlow ops.")
    if ops & PRINTING:
        return "Printing needs the host: return the values and print them outside the compiled function."
    if any("Dataset" in op for op in ops):
        return "Build and iterate the tf.data pipeline outside the compiled function; pass each batch in."
    if ".strings." in info.api or any("String" in op for op in ops):
        return "XLA has no string type: process strings in the input pipeline, before the compiled function."
    return (f"Move the call out of the compiled function or use ops XLA compiles (`xlalint ops --device "
            f"{device}`); run without --static for the traced verdict.")


def _argument_count(call: cst.Call) -> int | None:
    """Arguments given, ``name=`` aside; None with ``*args``/``**kwargs``."""
    if any(a.star for a in call.args):
        return None
    return sum(1 for a in call.args if keyword(a) != "name")
