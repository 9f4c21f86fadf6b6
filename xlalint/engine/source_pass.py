"""The source pass over one file, without importing TensorFlow: every source rule's hook.

A Python file is parsed and indexed once (``xlalint.source``); each rule's ``check_source`` reads
the index and yields pending findings, which are then placed all at once (``positions``). Under
``--static`` every ``check_source`` runs (graph rules give their by-API-name stand-ins); in a traced
run only the source rules'. A shell script or Dockerfile goes through every ``check_text``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from xlalint.checks import SourceContext, hooks
from xlalint.core.results import Finding
from xlalint.source.index import Index
from xlalint.source.positions import Positions


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


def scan_source(path: str, source: str, table: dict, device: str = "gpu", static: bool = True) -> FileScan:
    """Compiled functions and findings of one file (``path`` as given in the findings); ``static``:
    the graph rules' stand-ins too. Raises ``libcst.ParserSyntaxError``."""
    module = cst.parse_module(source)
    index = Index(module)
    ctx = SourceContext(device, table)
    pending = [p for check in hooks("check_source", None if static else "source") for p in check(index, ctx)]
    compiled = index.compiled
    where = Positions(module, source, index.parents)([c.definition.node for c in compiled] + [p.node for p in pending])
    scan = FileScan([CompiledFunction(c.definition.name, where[id(c.definition.node)][0], c.kind, c.jit)
                     for c in compiled])
    for p in pending:
        line, col = where[id(p.node)]
        finding = p.rule.finding(p.message, p.hint, path, line, col, p.entry, fixable=p.rule.stage == "source")
        scan.findings.append(replace(finding, op_type=p.op_type))
    scan.findings.sort(key=lambda f: (f.line, f.col, f.code, f.entry))
    return scan


def scan_text(path: str, shown_path: str) -> list[Finding]:
    """The findings of every ``check_text`` in the shell script or Dockerfile at ``path`` (an
    unreadable one has nothing to say)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return []
    return [f for check in hooks("check_text") for f in check(shown_path, text)]
