"""The libcst pass of ``--static`` over one file, without importing TensorFlow.

Parses the file, indexes it (``index``), finds its compiled functions (``compiled``), reports the
calls they make of APIs the shipped table lists (``api_calls``: XLA001, XLA103) and runs every
source rule's ``check_source`` on the index (XLA107, XLA401, XLA402...); then places all findings
at once (``positions``). Import aliases are resolved with a map of the file's imports; calls on
objects (``dataset.map``, ``rt.to_tensor``) are not resolved.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from xlalint.checks import RULES
from xlalint.results import Finding
from xlalint.static.api_calls import ApiCalls
from xlalint.static.index import Index
from xlalint.static.positions import Positions


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


def scan_source(path: str, source: str, table: dict, device: str = "gpu") -> FileScan:
    """Compiled functions and findings of one file (``path`` as given in the findings);
    raises ``libcst.ParserSyntaxError``."""
    module = cst.parse_module(source)
    index = Index(module)
    pending = ApiCalls(index, table, device).check()
    pending += [p for rule in RULES.values() if rule.check_source for p in rule.check_source(index)]
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
