"""The findings of one traced entry: the graph rules' at the user's lines, then the entry rules'.

No TensorFlow here: a saved graph (``--save-graphs``) gives the same findings as a fresh trace.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xlalint.checks import RULES, Context, EntryContext, hooks, run_checks
from xlalint.inputs.files import display_path, read_source
from xlalint.engine.keras_decision import EntryFacts, entry_facts
from xlalint.fixes.split import split_suggestion
from xlalint.inputs.notebooks import place_of
from xlalint.core.opgraph import OpGraph
from xlalint.core.results import Finding, Related
from xlalint.settings.table import Options
from xlalint.source.sourcemap import Location, column, locate
from xlalint.source.limits import refusal
from xlalint.core.support import load_support
from xlalint.core.wire import FORMAT, EntryRecord, Graph

NOWHERE = Location("", 0)  # an op with no user line has no related place
# The graph of an entry that could not be traced: the rules that need no trace (XLA301) still run.
NO_GRAPH: Graph = {"format": FORMAT, "root": "-", "num_args": 0, "functions": {"-": {"inputs": [], "outputs": []}}, "nodes": []}


@dataclass(frozen=True)
class CheckedFile:
    """The file entries were found in: its path as read, and as the report shows it."""

    path: str
    shown: str

    @classmethod
    def at(cls, path: str) -> CheckedFile:
        return cls(path, display_path(path))


def findings_for_traced_entry(raw: EntryRecord, path: str, tensorflow: str, options: Options) -> list[Finding]:
    """Every finding of one traced entry, e.g. one written by ``save_entry`` (no TensorFlow needed)."""
    facts = entry_facts(raw, path, options)
    return entry_findings(raw, CheckedFile.at(path), load_support(tensorflow), options, facts)


def entry_findings(raw: EntryRecord, file: CheckedFile, support, options: Options, facts: EntryFacts,
                   graph: OpGraph | None = None) -> list[Finding]:
    """Every finding of one entry of ``file``, unselected; ``options`` as its rules see them."""
    graph = graph if graph is not None else OpGraph(raw["graph"] or NO_GRAPH)
    ctx = Context(support, options.device, raw["name"], tuple(raw["signature"]), raw["kind"],
                  tuple(raw.get("keras_layers", ())), options.mode, keras=facts.keras)
    findings = _rule_findings(graph, ctx, raw, Location(file.path, raw["line"]))
    if facts.xla_off:  # Keras will not compile it: its ops block nothing, the decision is said
        findings = [f for f in findings if RULES[f.code].said_when_off]
    if raw.get("jit_compile") is True:
        findings = _with_split_suggestion(findings, file, raw["line"])
    entry = EntryContext(raw, graph, file.path, tuple(findings), facts.jit_compile)
    return findings + [f for check in hooks("check_entry") for f in check(entry)]


def _rule_findings(graph: OpGraph, ctx: Context, raw: EntryRecord, fallback: Location) -> list[Finding]:
    findings: dict[tuple, Finding] = {}
    for hit in run_checks(graph, ctx):
        rule = RULES[hit.code]
        node = graph.node(hit.node) if hit.node else None
        where = locate(graph, node, fallback) if node else Location(*hit.site) if hit.site else fallback
        message = f"{hit.message} ({where.note})" if where.note else hit.message
        related = tuple(replace(r, path=display_path(r.path)) for r in where.related + _related_ops(graph, hit, where))
        finding = rule.finding(message, hit.hint, display_path(where.path), where.line,
                               column(where.path, where.line, hit.api), raw["name"], node,
                               fixable=hit.fixable and where.path.endswith((".py", ".ipynb")), related=related)
        findings.setdefault((finding.code, finding.path, finding.line, finding.op_type, finding.message), finding)
    return list(findings.values())


def _related_ops(graph: OpGraph, hit, primary: Location) -> tuple[Related, ...]:
    """The places of the ops a hit names as related, at the user's lines (none where it has no line of
    its own, or where it is the finding's own line)."""
    places = []
    for node_id, message in hit.related:
        where = locate(graph, graph.node(node_id), NOWHERE)
        if where.path and (where.path, where.line) != (primary.path, primary.line):
            places.append(Related(where.path, where.line, message))
    return tuple(places)


def _with_split_suggestion(findings: list[Finding], file: CheckedFile, def_line: int) -> list[Finding]:
    """Under jit_compile=True there is no escape hatch: say how to split the function."""
    blockers = {f.line for f in findings if f.severity == "error" and f.path == file.shown}
    source = libcst_source(file.path) if blockers else None
    try:
        cell = place_of(file.path, def_line)  # in a notebook, the lines of the function's cell are named
        suggestion = split_suggestion(source, def_line, blockers, def_line - cell["line"] if cell else 0) \
            if source else None
    except RecursionError:  # nested calls: libcst's copy of the tree follows fewer levels than its scan
        suggestion = None
    if not suggestion:
        return findings
    return [replace(f, hint=f"{f.hint} Inside jit_compile=True nothing can opt out of XLA: {suggestion}.")
            if f.severity == "error" and f.path == file.shown else f for f in findings]


def libcst_source(path: str) -> str | None:
    """The file's text for a libcst pass, or None where the pass cannot be run (or would not end soon)."""
    source, error = read_source(path)
    return None if error or refusal(source) else source


