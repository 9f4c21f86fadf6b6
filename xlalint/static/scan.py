"""The libcst pass of ``--static``: XLA blockers found by API name, without importing TensorFlow.

Compiled functions are those under ``@tf.function`` (any arguments), module functions passed to
``tf.function(fn, ...)`` and the ``train_step``/``test_step``/``predict_step``/``call`` methods
of Keras Model/Layer subclasses. Each call in them (or in same-file module functions they call)
of an API the shipped table lists is a finding at the call: XLA001 when the API creates an op
with no XLA kernel, XLA103 when it creates one with a data-dependent output shape; calls of
stateless APIs on literal arguments are left out, as TensorFlow folds them before XLA. Anywhere in
the file: XLA107 (a loop's Python number passed to a decorated tf.function without input_signature,
outside compiled functions), XLA401 (``experimental_compile=``) and XLA402 (``TF_XLA_FLAGS`` with
``--tf_xla_enable_xla_devices`` set from Python). Import aliases are resolved with a map of the
file's imports; calls on objects (``dataset.map``, ``rt.to_tensor``) are not resolved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from xlalint.analyses.data_dependent import DATA_DEPENDENT
from xlalint.checks import RULES
from xlalint.checks.xla001_unsupported_op import HOST_CALLBACKS, PRINTING
from xlalint.results import Finding
from xlalint.static.api_table import ApiInfo, lookup, no_kernel

STATIC = "static: by API name, not traced"
TF_FUNCTION = frozenset({"tf.function", "tf.compat.v1.function"})
KERAS_METHODS = frozenset({"train_step", "test_step", "predict_step", "call"})
KERAS_BASES = frozenset({"keras.Model", "keras.Sequential", "keras.Layer", "keras.models.Model",
                         "keras.models.Sequential", "keras.layers.Layer"})
HOST_ARGUMENTS = frozenset({"func", "py_func", "generator"})  # keyword names of host callbacks
ENV_SETTERS = frozenset({"os.environ.setdefault", "os.environ.update", "os.putenv"})
DEVICES_FLAG = re.compile(r"--tf_xla_enable_xla_devices(?!=(?:false|0)\b)", re.IGNORECASE)
_SITE_NAMES = frozenset({"function", "setdefault", "update", "putenv"})  # calls to look at once imports are known
# Fields that hold only whitespace, comments or punctuation: never a call, import or definition.
_TRIVIA = frozenset({"lpar", "rpar", "comma", "leading_lines", "lines_after_decorators", "semicolon", "colon",
                     "equal", "dot", "lbrace", "rbrace", "lbracket", "rbracket", "operator", "header", "footer",
                     "newline", "first_colon", "second_colon", "separator", "comment", "empty_lines",
                     "asynchronous", "posonly_ind", "trailing_whitespace"})
_FIELDS: dict[type, tuple[str, ...]] = {}


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
    name: str  # qualified within the file: "fn", "Model.call", "outer.inner"
    node: cst.FunctionDef
    cls: str | None  # the class it is a method of
    module_level: bool


@dataclass(frozen=True)
class _Site:
    node: cst.CSTNode
    owner: str  # the enclosing function, or "<module>"


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(
            f.name for f in fields(node) if f.name not in _TRIVIA and not f.name.startswith("whitespace"))
    found = []
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, cst.CSTNode))
    return found


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


def _calls(node: cst.CSTNode):
    """The calls in ``node`` that run with it (not those in functions or classes it defines)."""
    stack = [node]
    while stack:
        node = stack.pop()
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(node, cst.Call):
                yield node
            stack.extend(_children(node))


def _number_argument(function: str, arg: cst.Arg, jit: bool) -> "_Pending":
    number = arg.value.value
    compiles = ", and XLA compiles each trace again" if jit else ""
    return _Pending("XLA107", f"`{function}` gets the Python number `{number}`, a new value on every pass of the "
                    f"loop: tf.function traces it again for each value{compiles}",
                    f"Pass `tf.constant({number})` or give `{function}` an input_signature, so one trace "
                    "(and one compilation) serves every value.", arg, function)


def _keyword(arg: cst.Arg) -> str | None:
    return arg.keyword.value if arg.keyword else None


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
        head, _, rest = (_dotted(expr) or "").partition(".")
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
    """One walk over the module: imports, functions, classes, calls and assignments to look at
    again, and each node's parent."""

    def __init__(self, module: cst.Module):
        self.aliases = Aliases()
        self.defs: list[_Def] = []
        self.classes: list[tuple[str, cst.ClassDef]] = []
        self.calls: list[_Site] = []
        self.assigns: list[_Site] = []
        self.loops: list[cst.For | cst.CompFor] = []  # statements and comprehension clauses
        self.parents: dict[int, cst.CSTNode] = {}
        stack = [(module, "", None, "<module>")]
        while stack:
            node, scope, cls, owner = stack.pop()
            inner = (scope, cls, owner)
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                self.aliases.add(node)
            elif isinstance(node, cst.FunctionDef):
                name = f"{scope}.{node.name.value}" if scope else node.name.value
                self.defs.append(_Def(name, node, cls, not scope))
                inner = (name, None, name)
            elif isinstance(node, cst.ClassDef):
                name = f"{scope}.{node.name.value}" if scope else node.name.value
                self.classes.append((name, node))
                inner = (name, name, owner)
            elif isinstance(node, cst.Call) and (_called_name(node) in _SITE_NAMES or any(
                    _keyword(a) == "experimental_compile" for a in node.args)):
                self.calls.append(_Site(node, owner))
            elif isinstance(node, (cst.For, cst.CompFor)):
                self.loops.append(node)
            elif isinstance(node, (cst.Assign, cst.AugAssign)) and any(
                    isinstance(t, cst.Subscript) for t in _assign_targets(node)):
                self.assigns.append(_Site(node, owner))
            children = _children(node)
            for child in reversed(children):
                self.parents[id(child)] = node
                stack.append((child, *inner))


def _leftmost_name(node: cst.CSTNode) -> cst.Name | None:
    """The name a node's code starts with: ``tf`` in ``tf.print(x)``, the keyword of ``k=v``."""
    while True:
        if isinstance(node, cst.Name):
            return node
        if isinstance(node, cst.FunctionDef):
            return node.name
        if isinstance(node, cst.Arg) and node.keyword:
            return node.keyword
        if isinstance(node, (cst.Assign, cst.AugAssign)):
            node = _assign_targets(node)[0]
        elif isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        elif isinstance(node, cst.Call):
            node = node.func
        else:
            return None


class _Positions:
    """1-based line and column of nodes.

    libcst's PositionProvider would cost most of the pass (it generates the code with a record for
    every node, after one more full visit). Instead the leftmost name of each node asked about is
    renamed to a marker of the same length, the code is generated once, and the markers are found
    in it: with every length unchanged, their offsets are the nodes' own.
    """

    MARKERS = (0xA000, 0xA48C)  # Yi syllables: identifier characters hardly ever in source code
    IN_SOURCE = re.compile("[\ua000-\ua48c]")

    def __init__(self, module: cst.Module, source: str, parents: dict[int, cst.CSTNode]):
        self.module, self.source, self.parents = module, source, parents

    def __call__(self, nodes: list[cst.CSTNode]) -> dict[int, tuple[int, int]]:
        if not nodes:
            return {}
        leaves = {id(n): _leftmost_name(n) for n in nodes}
        unique = list({id(leaf): leaf for leaf in leaves.values() if leaf is not None}.values())
        first, last = self.MARKERS
        if None in leaves.values() or len(unique) > last - first or self.IN_SOURCE.search(self.source):
            return self.slow(nodes)
        replaced = {id(leaf): leaf.with_changes(value=chr(first + i) * len(leaf.value))
                    for i, leaf in enumerate(unique)}
        self.rebuild_ancestors(unique, replaced)
        code = replaced[id(self.module)].code
        found = {}
        for i, leaf in enumerate(unique):
            offset = code.index(chr(first + i))
            found[id(leaf)] = (code.count("\n", 0, offset) + 1, offset - code.rfind("\n", 0, offset))
        return {key: found[id(leaf)] for key, leaf in leaves.items()}

    def rebuild_ancestors(self, leaves: list[cst.CSTNode], replaced: dict[int, cst.CSTNode]) -> None:
        """Copy every ancestor of ``leaves`` with the replaced children, deepest first, up to the module."""
        depth: dict[int, tuple[int, cst.CSTNode]] = {}
        for leaf in leaves:
            chain, node = [], self.parents.get(id(leaf))
            while node is not None:
                chain.append(node)
                node = self.parents.get(id(node))
            for level, ancestor in enumerate(reversed(chain)):
                depth[id(ancestor)] = (level, ancestor)
        for _, ancestor in sorted(depth.values(), key=lambda item: -item[0]):
            changes = {}
            for name in _FIELDS[type(ancestor)]:
                value = getattr(ancestor, name)
                if isinstance(value, cst.CSTNode) and id(value) in replaced:
                    changes[name] = replaced[id(value)]
                elif isinstance(value, (list, tuple)) and any(id(v) in replaced for v in value):
                    changes[name] = type(value)(replaced.get(id(v), v) for v in value)
            replaced[id(ancestor)] = ancestor.with_changes(**changes)

    def slow(self, nodes: list[cst.CSTNode]) -> dict[int, tuple[int, int]]:
        positions = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        starts = {id(n): positions[_leftmost_name(n) or n].start for n in nodes}
        return {key: (start.line, start.column + 1) for key, start in starts.items()}


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
    return sum(1 for a in call.args if _keyword(a) != "name")


@dataclass(frozen=True)
class _Pending:
    """A finding whose position is computed with all the others, at the end."""

    code: str
    message: str
    hint: str
    node: cst.CSTNode
    entry: str
    op_type: str | None = None


class _Scanner:
    def __init__(self, path: str, source: str, table: dict, device: str):
        self.path, self.table, self.device = path, table, device
        self.module = cst.parse_module(source)
        self.index = _Index(self.module)
        self.aliases = self.index.aliases
        self.positions = _Positions(self.module, source, self.index.parents)
        self.missing = no_kernel(table, device)
        self.module_defs = {d.name: d for d in self.index.defs if d.module_level}
        self.compiled_names: set[str] = set()
        self.pending: list[_Pending] = []

    def is_tf_function(self, expr) -> bool:
        """``tf.function`` itself, or a call of it (``tf.function(...)``)."""
        return self.aliases.tf_api(expr.func if isinstance(expr, cst.Call) else expr) in TF_FUNCTION

    @staticmethod
    def jit(expr) -> bool:
        return isinstance(expr, cst.Call) and any(
            _keyword(a) in ("jit_compile", "experimental_compile") and isinstance(a.value, cst.Name)
            and a.value.value == "True" for a in expr.args)

    def compiled(self) -> list[tuple[_Def, str, bool]]:
        """``(function, kind, jit_compile)`` of every compiled function, in file order."""
        found: dict[str, tuple[_Def, str, bool]] = {}
        keras: set[str] = set()
        for name, node in self.index.classes:
            if any(self.aliases.is_keras_base(b.value) or _dotted(b.value) in keras for b in node.bases):
                keras.add(name)
        for d in self.index.defs:
            tf_function = next((dec.decorator for dec in d.node.decorators if self.is_tf_function(dec.decorator)),
                               None)
            if tf_function is not None:
                found[d.name] = (d, "tf.function", self.jit(tf_function))
            elif d.cls in keras and d.node.name.value in KERAS_METHODS:
                found[d.name] = (d, "keras", False)
        for site in self.index.calls:  # fast = tf.function(fn, ...) or tf.function(...)(fn)
            call = site.node
            wrapper = next((c for c in (call, call.func) if isinstance(c, cst.Call) and self.is_tf_function(c)),
                           None)
            if wrapper is not None and call.args and _keyword(call.args[0]) is None:
                target = self.module_defs.get(_dotted(call.args[0].value))
                if target is not None and target.name not in found:
                    found[target.name] = (target, "tf.function", self.jit(wrapper))
        order = {d.name: i for i, d in enumerate(self.index.defs)}
        return sorted(found.values(), key=lambda item: order[item[0].name])

    def scan_compiled(self, fn: _Def) -> None:
        """Report the calls of ``fn`` and of the module functions it calls, directly or not."""
        queue, seen = [fn], {fn.name}
        while queue:
            for helper in self.scan_body(queue.pop(0), fn.name):
                if helper.name not in seen:
                    seen.add(helper.name)
                    queue.append(helper)

    def scan_body(self, fn: _Def, entry: str) -> list[_Def]:
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
                helper = self.module_defs.get(node.func.value) if isinstance(node.func, cst.Name) else None
                if helper is not None and helper.name not in self.compiled_names:
                    helpers.append(helper)
            stack.extend(child for child in _children(node) if id(child) not in skip)
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
        return (isinstance(expr, cst.Call) and self.aliases.tf_api(expr.func) == "tf.constant"
                and all(self.is_constant(a.value) for a in expr.args))

    def check_call(self, call: cst.Call, entry: str, host_names: set[str]) -> frozenset[int]:
        """Report ``call`` if the table lists its API; return the ids of arguments that run on the host."""
        api = self.aliases.tf_api(call.func)
        keywords = {_keyword(a): a.value.evaluated_value for a in call.args
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
            self.pending.append(_Pending(
                "XLA001", f"`{api}` ({', '.join(info.unsupported)}) has no XLA kernel on {self.device} ({STATIC})",
                _hint(info, self.device), call, entry, info.unsupported[0]))
        else:
            op = next(o for o in info.ops if o in DATA_DEPENDENT)
            self.pending.append(_Pending(
                "XLA103", f"`{api}` ({op}) has a data-dependent output shape: XLA pads it to an upper bound, "
                f"and ops after it that need a static shape can fail or be slow ({STATIC})",
                "Prefer fixed-size forms: a mask multiply or the 3-argument tf.where instead of "
                "tf.boolean_mask/tf.where(cond), padded unique/NMS variants.", call, entry, op))
        if not set(info.unsupported) & HOST_CALLBACKS:
            return frozenset()
        callbacks = [a for i, a in enumerate(call.args) if (i == 0 and a.keyword is None)
                     or _keyword(a) in HOST_ARGUMENTS]
        host_names.update(a.value.value for a in callbacks if isinstance(a.value, cst.Name))
        return frozenset(map(id, callbacks))

    def check_experimental_compile(self) -> None:
        for site in self.index.calls:
            call = site.node
            if not (isinstance(call, cst.Call) and self.is_tf_function(call)):
                continue
            first = call.args[0] if call.args and not call.args[0].keyword else None
            wrapped = self.module_defs.get(_dotted(first.value)) if first else None
            for arg in call.args:
                if _keyword(arg) == "experimental_compile":
                    self.pending.append(_Pending(
                        "XLA401", "`experimental_compile=` is the deprecated name of `jit_compile=`",
                        "Write `jit_compile=` instead: it means the same, and the old name may go away.",
                        arg, wrapped.name if wrapped else site.owner))

    def retraced(self, compiled: list[tuple[_Def, str, bool]]) -> dict[str, bool]:
        """Decorated tf.functions (not methods) without input_signature: name -> jit_compile."""
        found = {}
        for d, _, jit in compiled:
            decorator = next((dec.decorator for dec in d.node.decorators if self.is_tf_function(dec.decorator)), None)
            if decorator is not None and d.cls is None and not (isinstance(decorator, cst.Call) and any(
                    _keyword(a) == "input_signature" for a in decorator.args)):
                found[d.node.name.value] = jit
        return found

    def check_python_number_arguments(self, compiled: list[tuple[_Def, str, bool]]) -> None:
        """XLA107: a loop's Python number passed to a tf.function that has no input_signature."""
        retraced = self.retraced(compiled)
        compiled_defs = {id(d.node) for d, _, _ in compiled}
        for loop in self.index.loops if retraced else ():
            numbers = _python_numbers(loop)
            if not numbers or self.inside(loop, compiled_defs):
                continue  # a loop inside a compiled function is unrolled once, when that function is traced
            for call in _calls(loop.body if isinstance(loop, cst.For) else self.comprehension(loop)):
                name = call.func.value if isinstance(call.func, cst.Name) else None
                for arg in call.args if name in retraced else ():
                    if isinstance(arg.value, cst.Name) and arg.value.value in numbers:
                        self.pending.append(_number_argument(name, arg, retraced[name]))

    def comprehension(self, clause: cst.CompFor) -> cst.CSTNode:
        """The comprehension a ``for`` clause belongs to (its element is what each pass runs)."""
        node = self.index.parents[id(clause)]
        while isinstance(node, cst.CompFor):
            node = self.index.parents[id(node)]
        return node

    def inside(self, node: cst.CSTNode, defs: set[int]) -> bool:
        """Whether ``node`` is in the body of one of the functions ``defs`` (ids of FunctionDef nodes)."""
        parent = self.index.parents.get(id(node))
        while parent is not None and id(parent) not in defs:
            parent = self.index.parents.get(id(parent))
        return parent is not None

    def check_xla_devices_flag(self) -> None:
        for site in self.index.assigns + self.index.calls:
            value = self.tf_xla_flags_value(site.node)
            if value is not None and any(DEVICES_FLAG.search(s) for s in _strings(value)):
                self.pending.append(_Pending(
                    "XLA402", "TF_XLA_FLAGS sets --tf_xla_enable_xla_devices: that only creates XLA_CPU/XLA_GPU "
                    "devices, it does not compile anything with XLA",
                    "For auto-clustering set TF_XLA_FLAGS=--tf_xla_auto_jit=2; better, compile the functions "
                    "you want with tf.function(jit_compile=True).", site.node, site.owner))

    def tf_xla_flags_value(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The value ``node`` gives TF_XLA_FLAGS in the environment, if it sets it."""
        if isinstance(node, (cst.Assign, cst.AugAssign)):
            for target in _assign_targets(node):
                if (isinstance(target, cst.Subscript) and self.aliases.qualify(target.value) == "os.environ"
                        and any(s == "TF_XLA_FLAGS" for e in target.slice for s in _strings(e))):
                    return node.value
            return None
        if self.aliases.qualify(node.func) not in ENV_SETTERS or not node.args:
            return None
        first = node.args[0]
        if _keyword(first) == "TF_XLA_FLAGS":  # os.environ.update(TF_XLA_FLAGS=...)
            return first.value
        if isinstance(first.value, cst.Dict):  # os.environ.update({"TF_XLA_FLAGS": ...})
            return next((e.value for e in first.value.elements
                         if isinstance(e, cst.DictElement) and _strings(e.key) == ["TF_XLA_FLAGS"]), None)
        if _strings(first.value) == ["TF_XLA_FLAGS"] and len(node.args) > 1:  # setdefault / putenv
            return node.args[1].value
        return None

    def run(self) -> FileScan:
        compiled = self.compiled()
        self.compiled_names = {d.name for d, _, _ in compiled}
        for d, _, _ in compiled:
            self.scan_compiled(d)
        self.check_experimental_compile()
        self.check_python_number_arguments(compiled)
        self.check_xla_devices_flag()
        where = self.positions([d.node for d, _, _ in compiled] + [p.node for p in self.pending])
        scan = FileScan([CompiledFunction(d.name, where[id(d.node)][0], kind, jit) for d, kind, jit in compiled])
        for p in self.pending:
            line, col = where[id(p.node)]
            finding = RULES[p.code].finding(p.message, p.hint, self.path, line, col, p.entry,
                                            fixable=RULES[p.code].stage == "source")
            scan.findings.append(replace(finding, op_type=p.op_type))
        scan.findings.sort(key=lambda f: (f.line, f.col, f.code, f.entry))
        return scan


def scan_source(path: str, source: str, table: dict, device: str = "gpu") -> FileScan:
    """Compiled functions and findings of one file; raises ``libcst.ParserSyntaxError``."""
    return _Scanner(path, source, table, device).run()


def scan_file(path: str, source: str, table: dict, device: str = "gpu") -> list[Finding]:
    """The static findings of one file (``path`` is used as given in the findings)."""
    return scan_source(path, source, table, device).findings
