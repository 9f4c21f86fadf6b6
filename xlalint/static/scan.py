"""The libcst pass of ``--static``: XLA blockers found by API name, without importing TensorFlow.

Compiled functions are those under ``@tf.function`` (any arguments), module functions passed to
``tf.function(fn, ...)`` and the ``train_step``/``test_step``/``predict_step``/``call`` methods
of Keras Model/Layer subclasses. Each call in them (or in same-file module functions they call)
of an API the shipped table lists is a finding at the call: XLA001 when the API creates an op
with no XLA kernel, XLA103 when it creates one with a data-dependent output shape. Anywhere in
the file: XLA401 (``experimental_compile=``) and XLA402 (``TF_XLA_FLAGS`` with
``--tf_xla_enable_xla_devices`` set from Python). Import aliases are resolved with a map of the
file's imports; calls on objects (``dataset.map``, ``rt.to_tensor``) are not resolved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from xlalint.checks import dynamic_output_shape, unsupported_op
from xlalint.checks.base import Rule
from xlalint.results import Finding
from xlalint.static.api_table import ApiInfo, lookup, no_kernel

EXPERIMENTAL_COMPILE = Rule(
    "XLA401", "experimental-compile", "warning",
    "`experimental_compile=` is the deprecated name of `jit_compile=`.", None)
XLA_DEVICES_FLAG = Rule(
    "XLA402", "xla-devices-flag", "warning",
    "TF_XLA_FLAGS=--tf_xla_enable_xla_devices only creates XLA devices: it does not turn on "
    "auto-clustering (--tf_xla_auto_jit=2 does).", None)
NEW_RULES = (EXPERIMENTAL_COMPILE, XLA_DEVICES_FLAG)
_RULES = {r.code: r for r in (unsupported_op.RULE, dynamic_output_shape.RULE, *NEW_RULES)}

STATIC = "static: by API name, not traced"
TF_FUNCTION = frozenset({"tf.function", "tf.compat.v1.function"})
KERAS_METHODS = frozenset({"train_step", "test_step", "predict_step", "call"})
KERAS_BASES = frozenset({"keras.Model", "keras.Sequential", "keras.Layer", "keras.models.Model",
                         "keras.models.Sequential", "keras.layers.Layer"})
HOST_ARGUMENTS = frozenset({"func", "py_func", "generator"})  # keyword names of host callbacks
ENV_SETTERS = frozenset({"os.environ.setdefault", "os.environ.update", "os.putenv"})
DEVICES_FLAG = re.compile(r"--tf_xla_enable_xla_devices(?!=(?:false|0)\b)", re.IGNORECASE)
# Calls worth a second look once all imports are known: tf.function(...) and environment setters.
_SITE_NAMES = frozenset({"function", "setdefault", "update", "putenv"})


@dataclass(frozen=True)
class CompiledFunction:
    name: str  # "fn", "Model.train_step"
    line: int
    kind: str  # "tf.function" | "keras"
    jit_compile: bool  # jit_compile=True (or experimental_compile=True) is set


@dataclass
class FileScan:
    functions: list[CompiledFunction] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class _Def:
    name: str  # qualified within the file
    node: cst.FunctionDef
    top: cst.CSTNode  # the module-level statement holding it
    cls: str | None  # the class whose method it is
    module_level: bool


@dataclass(frozen=True)
class _Site:
    node: cst.CSTNode
    top: cst.CSTNode
    owner: str  # the enclosing function, or "<module>"


def _children(node: cst.CSTNode):
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, cst.CSTNode))


def _dotted(expr) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


def _called_name(call: cst.Call) -> str | None:
    """Last name of what is called, looking through ``f(...)(...)``."""
    func = call.func
    while isinstance(func, cst.Call):
        func = func.func
    return func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)


def _strings(expr: cst.CSTNode) -> list[str]:
    """Every string literal in ``expr`` (f-string text included)."""
    found, stack = [], [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower():
            found.append(node.evaluated_value)
        elif isinstance(node, cst.FormattedStringText):
            found.append(node.value)
        else:
            stack.extend(_children(node))
    return found


def _assign_targets(node: cst.Assign | cst.AugAssign) -> list:
    return [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]


def _is_true(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


class Aliases:
    """Local names bound by the file's imports -> the dotted names they stand for."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def add(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = _dotted(alias.name)
                local = alias.asname.name.value if alias.asname else full.split(".")[0]
                self.names[local] = full if alias.asname else local
        elif not node.relative and node.module is not None and not isinstance(node.names, cst.ImportStar):
            module = _dotted(node.module)
            for alias in node.names:
                local = alias.asname.name.value if alias.asname else alias.name.value
                self.names[local] = f"{module}.{alias.name.value}"

    def qualify(self, expr) -> str | None:
        """``tensorflow.strings.length`` for ``tf.strings.length`` under ``import tensorflow as tf``."""
        dotted = _dotted(expr)
        head, _, rest = (dotted or "").partition(".")
        base = self.names.get(head)
        return None if base is None else (f"{base}.{rest}" if rest else base)

    def tf_api(self, expr) -> str | None:
        """The public name (``tf.strings.length``) of a TensorFlow API, else None."""
        qualified = self.qualify(expr) or ""
        for prefix in ("tensorflow.compat.v2.", "tensorflow."):
            if qualified.startswith(prefix):
                return "tf." + qualified[len(prefix):]
        return None

    def is_keras_base(self, expr) -> bool:
        qualified = self.qualify(expr) or ""
        for prefix in ("tensorflow.keras.", "tensorflow.compat.v2.keras.", "tf_keras."):
            if qualified.startswith(prefix):
                qualified = "keras." + qualified[len(prefix):]
        return qualified in KERAS_BASES


class _Index:
    """One walk over the module: imports, functions, classes, and calls/assignments to revisit."""

    def __init__(self, module: cst.Module):
        self.aliases = Aliases()
        self.defs: list[_Def] = []
        self.classes: list[tuple[str, cst.ClassDef]] = []
        self.calls: list[_Site] = []
        self.assigns: list[_Site] = []
        stack = [(stmt, stmt, "", None, "<module>") for stmt in reversed(module.body)]
        while stack:
            node, top, scope, cls, owner = stack.pop()
            inner = (scope, cls, owner)
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                self.aliases.add(node)
            elif isinstance(node, cst.FunctionDef):
                name = f"{scope}.{node.name.value}" if scope else node.name.value
                self.defs.append(_Def(name, node, top, cls, not scope))
                inner = (name, None, name)
            elif isinstance(node, cst.ClassDef):
                name = f"{scope}.{node.name.value}" if scope else node.name.value
                self.classes.append((name, node))
                inner = (name, name, owner)
            elif isinstance(node, cst.Call) and (_called_name(node) in _SITE_NAMES or any(
                    a.keyword and a.keyword.value == "experimental_compile" for a in node.args)):
                self.calls.append(_Site(node, top, owner))
            elif isinstance(node, (cst.Assign, cst.AugAssign)) and any(
                    isinstance(t, cst.Subscript) for t in _assign_targets(node)):
                self.assigns.append(_Site(node, top, owner))
            stack.extend((child, top, *inner) for child in reversed(list(_children(node))))


class _Positions:
    """1-based line and column of nodes, computed only for the module-level statements asked about."""

    def __init__(self, module: cst.Module):
        self.module = module
        self.starts: dict[int, int] | None = None
        self.maps: dict[int, object] = {}

    def __call__(self, node: cst.CSTNode, top: cst.CSTNode) -> tuple[int, int]:
        if self.starts is None:
            self.starts, line = {}, len(self.module.header)
            for stmt in self.module.body:
                self.starts[id(stmt)] = line
                line += self.module.code_for_node(stmt).count("\n")
        if id(top) not in self.maps:
            alone = self.module.with_changes(body=[top], header=[], footer=[])
            self.maps[id(top)] = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
        start = self.maps[id(top)][node].start
        return self.starts[id(top)] + start.line, start.column + 1


def _hint(info: ApiInfo, device: str) -> str:
    ops = set(info.unsupported)
    if ops & unsupported_op.HOST_CALLBACKS:
        return ("Python callbacks run on the host and cannot be compiled: move the call out of the "
                "compiled function, or write it with TensorFlow ops.")
    if ops & unsupported_op.PRINTING:
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
    return sum(1 for a in call.args if not (a.keyword and a.keyword.value == "name"))


class _Scanner:
    def __init__(self, path: str, source: str, table: dict, device: str):
        self.path, self.table, self.device = path, table, device
        self.module = cst.parse_module(source)
        self.index = _Index(self.module)
        self.aliases = self.index.aliases
        self.position = _Positions(self.module)
        self.missing = no_kernel(table, device)
        self.module_defs = {d.name: d for d in self.index.defs if d.module_level}
        self.findings: list[Finding] = []

    def finding(self, code: str, message: str, hint: str, node, top, entry: str, op_type=None) -> None:
        rule = _RULES[code]
        line, col = self.position(node, top)
        self.findings.append(Finding(code, rule.name, rule.severity, message, hint, self.path, line, col,
                                     entry, op_type=op_type))

    # Which functions are compiled

    def tf_function_call(self, call) -> bool:
        return isinstance(call, cst.Call) and self.aliases.tf_api(call.func) in TF_FUNCTION

    def compiled(self) -> list[tuple[_Def, str, bool]]:
        """``(function, kind, jit_compile)`` of every compiled function, in file order."""
        found: dict[str, tuple[_Def, str, bool]] = {}
        keras = set()
        for name, node in self.index.classes:
            if any(self.aliases.is_keras_base(b.value) or _dotted(b.value) in keras for b in node.bases):
                keras.add(name)
        for d in self.index.defs:
            for decorator in d.node.decorators:
                expr = decorator.decorator
                if self.aliases.tf_api(expr) in TF_FUNCTION or self.tf_function_call(expr):
                    found[d.name] = (d, "tf.function", self.jit(expr))
            if d.name not in found and d.cls in keras and d.node.name.value in KERAS_METHODS:
                found[d.name] = (d, "keras", False)
        for site in self.index.calls:
            call, inner = site.node, site.node.func
            wrapper = call if self.tf_function_call(call) else inner if self.tf_function_call(inner) else None
            target = self.module_defs.get(_dotted(call.args[0].value)) if wrapper and call.args else None
            if target and not call.args[0].keyword and target.name not in found:
                found[target.name] = (target, "tf.function", self.jit(wrapper))
        order = {d.name: i for i, d in enumerate(self.index.defs)}
        return sorted(found.values(), key=lambda item: order[item[0].name])

    @staticmethod
    def jit(expr) -> bool:
        return isinstance(expr, cst.Call) and any(
            a.keyword and a.keyword.value in ("jit_compile", "experimental_compile") and _is_true(a.value)
            for a in expr.args)

    # Calls in compiled functions

    def scan_compiled(self, fn: _Def) -> None:
        queue, seen = [fn], {fn.name}
        while queue:
            current = queue.pop(0)
            for helper in self.scan_body(current, fn.name):
                if helper.name not in seen:
                    seen.add(helper.name)
                    queue.append(helper)

    def scan_body(self, fn: _Def, entry: str) -> list[_Def]:
        """Report the calls in ``fn``'s body (nested functions included, host callbacks excluded);
        return the module functions it calls."""
        helpers, host_names, nested = [], set(), []
        stack = [fn.node.body]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.FunctionDef):
                nested.append(node)
                continue
            skip = frozenset()
            if isinstance(node, cst.Call):
                skip = self.check_call(node, fn.top, entry, host_names)
                helper = self.module_defs.get(_dotted(node.func)) if isinstance(node.func, cst.Name) else None
                if helper is not None and helper.name not in self.compiled_names:
                    helpers.append(helper)
            stack.extend(child for child in _children(node) if id(child) not in skip)
            while not stack and nested:
                inner = nested.pop()
                if inner.name.value not in host_names:
                    stack.append(inner.body)
        return helpers

    def check_call(self, call: cst.Call, top, entry: str, host_names: set) -> frozenset[int]:
        """Report ``call`` if its API is in the table; return the ids of arguments not to descend into."""
        api = self.aliases.tf_api(call.func)
        info = lookup(self.table, api, self.missing) if api else None
        if info is None:
            return frozenset()
        count = _argument_count(call)
        if info.max_args is not None and (count is None or count > info.max_args):
            return frozenset()
        if info.unsupported:
            ops = ", ".join(info.unsupported)
            self.finding("XLA001", f"`{api}` ({ops}) has no XLA kernel on {self.device} ({STATIC})",
                         _hint(info, self.device), call, top, entry, info.unsupported[0])
        else:
            op = next(o for o in info.ops if o in dynamic_output_shape.DATA_DEPENDENT)
            self.finding("XLA103", f"`{api}` ({op}) has a data-dependent output shape: XLA pads it to an upper "
                         f"bound, and ops after it that need a static shape can fail or be slow ({STATIC})",
                         "Prefer fixed-size forms: a mask multiply or the 3-argument tf.where instead of "
                         "tf.boolean_mask/tf.where(cond), padded unique/NMS variants.", call, top, entry, op)
        if not set(info.unsupported) & unsupported_op.HOST_CALLBACKS:
            return frozenset()
        callbacks = [a for i, a in enumerate(call.args)
                     if (a.keyword is None and i == 0) or (a.keyword and a.keyword.value in HOST_ARGUMENTS)]
        host_names.update(a.value.value for a in callbacks if isinstance(a.value, cst.Name))
        return frozenset(map(id, callbacks))

    # Anywhere in the file

    def check_experimental_compile(self) -> None:
        for site in self.index.calls:
            call = site.node
            if not self.tf_function_call(call):
                continue
            for arg in call.args:
                if arg.keyword and arg.keyword.value == "experimental_compile":
                    target = _dotted(call.args[0].value) if call.args and not call.args[0].keyword else None
                    self.finding("XLA401", "`experimental_compile=` is the deprecated name of `jit_compile=`",
                                 "Write `jit_compile=` instead: same meaning, and the old name may go away.",
                                 arg, site.top, target if target in self.module_defs else site.owner)

    def check_xla_devices_flag(self) -> None:
        for site in self.index.assigns + self.index.calls:
            value = self.tf_xla_flags_value(site.node)
            if value is not None and any(DEVICES_FLAG.search(s) for s in _strings(value)):
                self.finding("XLA402", "TF_XLA_FLAGS sets --tf_xla_enable_xla_devices: that only creates "
                             "XLA_CPU/XLA_GPU devices, it does not compile anything with XLA",
                             "For auto-clustering set TF_XLA_FLAGS=--tf_xla_auto_jit=2; better, compile "
                             "the functions you want with tf.function(jit_compile=True).",
                             site.node, site.top, site.owner)

    def tf_xla_flags_value(self, node) -> cst.CSTNode | None:
        """The value given to TF_XLA_FLAGS by ``node``, if it sets it in ``os.environ``."""
        if isinstance(node, (cst.Assign, cst.AugAssign)):
            for target in _assign_targets(node):
                if (isinstance(target, cst.Subscript) and self.aliases.qualify(target.value) == "os.environ"
                        and any(s == "TF_XLA_FLAGS" for e in target.slice for s in _strings(e))):
                    return node.value
            return None
        if self.aliases.qualify(node.func) not in ENV_SETTERS or not node.args:
            return None
        first = node.args[0]
        if first.keyword and first.keyword.value == "TF_XLA_FLAGS":  # os.environ.update(TF_XLA_FLAGS=...)
            return first.value
        if isinstance(first.value, cst.Dict):  # os.environ.update({"TF_XLA_FLAGS": ...})
            return next((e.value for e in first.value.elements
                         if isinstance(e, cst.DictElement) and _strings(e.key) == ["TF_XLA_FLAGS"]), None)
        if _strings(first.value) == ["TF_XLA_FLAGS"] and len(node.args) > 1:
            return node.args[1].value
        return None

    def run(self) -> FileScan:
        compiled = self.compiled()
        self.compiled_names = {d.name for d, _, _ in compiled}
        scan = FileScan()
        for d, kind, jit in compiled:
            scan.functions.append(CompiledFunction(d.name, self.position(d.node.name, d.top)[0], kind, jit))
            self.scan_compiled(d)
        self.check_experimental_compile()
        self.check_xla_devices_flag()
        scan.findings = sorted(self.findings, key=lambda f: (f.line, f.col, f.code, f.entry))
        return scan


def scan_source(path: str, source: str, table: dict, device: str = "gpu") -> FileScan:
    """Compiled functions and findings of one file; raises ``libcst.ParserSyntaxError``."""
    return _Scanner(path, source, table, device).run()


def scan_file(path: str, source: str, table: dict, device: str = "gpu") -> list[Finding]:
    """The static findings of one file (``path`` is used as given in the findings)."""
    return scan_source(path, source, table, device).findings
