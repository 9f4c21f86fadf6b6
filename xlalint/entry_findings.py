"""The findings of one traced entry: graph rules at the user's lines, then the run rules that follow.

No TensorFlow here: a saved graph (``--save-graphs``) gives the same findings as a fresh trace.
"""

from __future__ import annotations

from dataclasses import replace

from xlalint.checks import RULES, Context, run_checks
from xlalint.checks import xla403_enable_jit_compile, xla901_missed_blocker, xla902_false_blocker
from xlalint.files import display_path, read_source
from xlalint.fixes.split import split_suggestion
from xlalint.notebooks import place_of
from xlalint.opgraph import OpGraph
from xlalint.results import Finding
from xlalint.settings import Options
from xlalint.sourcemap import Location, column, locate
from xlalint.static.limits import refusal
from xlalint.support import load_support
from xlalint.wire import FORMAT, EntryRecord

NOWHERE = Location("", 0)  # an op with no user line has no related place
# The graph of an entry that could not be traced: the rules that need no trace (XLA301) still run.
NO_GRAPH = {"format": FORMAT, "root": "-", "num_args": 0, "functions": {"-": {"inputs": [], "outputs": []}}, "nodes": []}


def findings_for_traced_entry(raw: EntryRecord, path: str, tensorflow: str, options: Options) -> list[Finding]:
    """The rules' findings on one traced entry, e.g. one written by ``save_entry`` (no TensorFlow needed)."""
    return entry_findings(raw, path, load_support(tensorflow), options)


def entry_findings(raw: EntryRecord, path: str, support, options: Options, graph: OpGraph | None = None) -> list[Finding]:
    """Every finding of one entry, before suppressions; ``path`` is the file the entry was found in."""
    graph = graph if graph is not None else OpGraph(raw["graph"])
    ctx = Context(support, options.device, raw["name"], tuple(raw["signature"]), raw["kind"],
                  tuple(raw.get("keras_layers", ())))
    fallback = Location(path, raw["line"])
    # Every graph rule runs: whether the entry is blocked (the XLA403 offer, XLA901/902) must not
    # depend on which codes are shown; --select/--ignore apply to what is reported.
    findings = _rule_findings(graph, ctx, raw, fallback)
    if raw["kind"] == "tf.function" and raw.get("jit_compile") is not True and \
            not any(f.severity == "error" for f in findings) and not _verify_failed(raw.get("verify")):
        findings += _offer_jit_compile(raw, path, options)
    if raw.get("jit_compile") is True:
        findings = _with_split_suggestion(findings, path, raw["line"])
    if raw.get("verify"):
        for disagreement in (xla901_missed_blocker.check, xla902_false_blocker.check):
            findings += disagreement(graph, raw["name"], raw["verify"], findings, fallback, display_path)
    return [f for f in findings if f.code in options.select]


def _rule_findings(graph: OpGraph, ctx: Context, raw: dict, fallback: Location) -> list[Finding]:
    findings = {}
    for hit in run_checks(graph, ctx):
        rule = RULES[hit.code]
        node = graph.node(hit.node) if hit.node else None
        where = locate(graph, node, fallback) if node else Location(*hit.site) if hit.site else fallback
        message = f"{hit.message} ({where.note})" if where.note else hit.message
        related = tuple({**r, "path": display_path(r["path"])} for r in where.related + _related_ops(graph, hit, where))
        finding = rule.finding(message, hit.hint, display_path(where.path), where.line,
                               column(where.path, where.line, hit.api), raw["name"], node, related=related)
        findings.setdefault((finding.code, finding.path, finding.line, finding.op_type, finding.message), finding)
    return list(findings.values())


def _related_ops(graph: OpGraph, hit, primary: Location) -> tuple[dict, ...]:
    """The places of the ops a hit names as related, at the user's lines (none where it has no line of
    its own, or where it is the finding's own line)."""
    places = []
    for node_id, message in hit.related:
        where = locate(graph, graph.node(node_id), NOWHERE)
        if where.path and (where.path, where.line) != (primary.path, primary.line):
            places.append({"path": where.path, "line": where.line, "message": message})
    return tuple(places)


def _verify_failed(verify: dict | None) -> bool:
    """``--verify`` saw the compiled function fail, or return other values: no XLA403 offer then."""
    return bool(verify) and (not verify["compiled"] or verify["allclose"] is False)


def _offer_jit_compile(raw: dict, path: str, options: Options) -> list[Finding]:
    if "XLA403" not in options.select:
        return []
    return [xla403_enable_jit_compile.offer(raw["name"], display_path(path), raw["line"])]


def _with_split_suggestion(findings: list[Finding], path: str, def_line: int) -> list[Finding]:
    """Under jit_compile=True there is no escape hatch: say how to split the function."""
    here = display_path(path)
    blockers = {f.line for f in findings if f.severity == "error" and f.path == here}
    source = libcst_source(path) if blockers else None
    try:
        cell = place_of(path, def_line)  # in a notebook, the lines of the function's cell are named
        suggestion = split_suggestion(source, def_line, blockers, def_line - cell["line"] if cell else 0) \
            if source else None
    except RecursionError:  # nested calls: libcst's copy of the tree follows fewer levels than its scan
        suggestion = None
    if not suggestion:
        return findings
    return [replace(f, hint=f"{f.hint} Inside jit_compile=True nothing can opt out of XLA: {suggestion}.")
            if f.severity == "error" and f.path == here else f for f in findings]


def libcst_source(path: str) -> str | None:
    """The file's text for a libcst pass, or None where the pass cannot be run (or would not end soon)."""
    source, error = read_source(path)
    return None if error or refusal(source) else source


def autocluster(graph: OpGraph, support, options: Options, fallback: Location) -> dict:
    """The predicted clusters, each splitter placed at the user's line."""
    from xlalint.autocluster import predict_clusters

    predicted = predict_clusters(graph, support, options.device)
    splitters = []
    for splitter in predicted["splitters"]:
        node_id = splitter.pop("node", None)
        where = locate(graph, graph.node(node_id), fallback) if node_id in graph.graph else fallback
        splitters.append({**splitter, "path": display_path(where.path), "line": where.line})
    return {"clusters": predicted["clusters"], "compiled_ops": predicted["compiled_ops"],
            "total_ops": predicted["total_ops"], "splitters": splitters}


def with_jit_scope_fix(finding: Finding) -> Finding:
    """Under auto-clustering an unsupported op can be left out: offer the narrowest jit_scope."""
    if finding.code != "XLA001" or finding.fix or not finding.path.endswith((".py", ".ipynb")):
        return finding
    return replace(finding, fix=RULES["XLA001"].fix.to_json())
