"""XLA402 xla-devices-flag: ``TF_XLA_FLAGS=--tf_xla_enable_xla_devices`` turns nothing on.

That flag only creates XLA_CPU/XLA_GPU devices; it compiles nothing. A source rule: in Python
sources ``check_source`` finds ``os.environ`` assignments and ``setdefault``/``update``/``putenv``
calls that set it; in shell scripts and Dockerfiles ``check_text`` does, line by line. The fix
(unsafe: it turns auto-clustering on) writes ``--tf_xla_auto_jit=2`` instead, in either.
"""

from __future__ import annotations

import re

import libcst as cst

from xlalint.checks.base import Fix, NodeEdit, Pending, Rule, SourceContext
from xlalint.core.results import Finding
from xlalint.source.index import Aliases, Index
from xlalint.source.syntax import assign_targets, keyword, strings

FLAG, AUTO_JIT_FLAG = "--tf_xla_enable_xla_devices", "--tf_xla_auto_jit=2"
DEVICES_FLAG = re.compile(r"(--tf_xla_enable_xla_devices)(?!=(?:false|0)\b)", re.IGNORECASE)
SETS_FLAG = re.compile(r"TF_XLA_FLAGS\b.*?" + DEVICES_FLAG.pattern, re.IGNORECASE)
ENV_SETTERS = frozenset({"os.environ.setdefault", "os.environ.update", "os.putenv"})
MESSAGE = ("TF_XLA_FLAGS sets --tf_xla_enable_xla_devices: that only creates XLA_CPU/XLA_GPU devices, "
           "it does not compile anything with XLA")
HINT = ("For auto-clustering set TF_XLA_FLAGS=--tf_xla_auto_jit=2; better, compile the functions "
        "you want with tf.function(jit_compile=True).")


def _flags_value(aliases: Aliases, node: cst.Call | cst.Assign | cst.AugAssign) -> cst.CSTNode | None:
    """The value ``node`` gives TF_XLA_FLAGS in the environment, if it sets it."""
    if isinstance(node, (cst.Assign, cst.AugAssign)):
        for target in assign_targets(node):
            if (isinstance(target, cst.Subscript) and aliases.qualify(target.value) == "os.environ"
                    and any(s == "TF_XLA_FLAGS" for e in target.slice for s in strings(e))):
                return node.value
        return None
    if aliases.qualify(node.func) not in ENV_SETTERS or not node.args:
        return None
    first = node.args[0]
    if keyword(first) == "TF_XLA_FLAGS":  # os.environ.update(TF_XLA_FLAGS=...)
        return first.value
    if isinstance(first.value, cst.Dict):  # os.environ.update({"TF_XLA_FLAGS": ...})
        return next((e.value for e in first.value.elements
                     if isinstance(e, cst.DictElement) and strings(e.key) == ["TF_XLA_FLAGS"]), None)
    if strings(first.value) == ["TF_XLA_FLAGS"] and len(node.args) > 1:  # setdefault / putenv
        return node.args[1].value
    return None


def check_source(index: Index, ctx: SourceContext):
    for site in index.assigns + index.calls:
        value = _flags_value(index.aliases, site.node)
        if value is not None and any(DEVICES_FLAG.search(s) for s in strings(value)):
            yield Pending(RULE, MESSAGE, HINT, site.node, site.owner)


def check_text(path: str, text: str) -> list[Finding]:
    """The lines of a shell script or Dockerfile that set the flag."""
    findings = []
    for number, line in enumerate(text.splitlines(), 1):
        match = SETS_FLAG.search(line)
        if match and not line.lstrip().startswith("#"):
            findings.append(RULE.finding(MESSAGE, HINT, path, number, match.start(1) + 1, "<file>", fixable=True))
    return findings


def _auto_jit_string(string: cst.SimpleString, ancestors: tuple) -> cst.SimpleString | None:
    return string.with_changes(value=string.value.replace(FLAG, AUTO_JIT_FLAG)) if FLAG in string.value else None


def _auto_jit_line(line: str) -> str | None:
    return line.replace(FLAG, AUTO_JIT_FLAG) if FLAG in line else None


RULE = Rule("XLA402", "xla-devices-flag", "warning",
            "TF_XLA_FLAGS=--tf_xla_enable_xla_devices only creates XLA devices: it does not turn on "
            "auto-clustering (--tf_xla_auto_jit=2 does).", stage="source", check_source=check_source,
            check_text=check_text,
            fix=Fix("auto-jit-flag", "unsafe", "use --tf_xla_auto_jit=2, which turns auto-clustering on",
                    node_edit=NodeEdit(cst.SimpleString, _auto_jit_string), line_edit=_auto_jit_line))
