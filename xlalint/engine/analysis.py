"""One run: files -> tracing (or the cache) -> every rule's findings -> selected once -> one report.

``xlalint.engine.plan`` sorts the files and starts the tracing; ``analyze`` takes each result as it
comes, in the run's order, so the analysis of one file overlaps the tracing of the next.

The passes beside this module call the rules through the registry, one stage each:
``entry_findings`` (graph and entry rules on a traced entry), ``source_scan`` (source rules on a
Python file, text rules on a shell script or Dockerfile) and, once every file is in, ``selection``
(which findings are reported, the entries' verdicts, the selection rules).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import libcst

from xlalint.autocluster.judge import judge_entry, judged_by_name
from xlalint.checks import RULES, CapturedContext, hooks
from xlalint.engine.coverage import auto_jit_sites, count_ops
from xlalint.engine.entries import NO_GRAPH, CheckedFile, entry_findings, libcst_source
from xlalint.inputs.files import collect_files, display_path, record_sources
from xlalint.core.gc_pause import gc_paused
from xlalint.engine.keras_decision import EntryFacts, entry_facts
from xlalint.inputs.notebooks import in_cells
from xlalint.core.opgraph import OpGraph
from xlalint.core.results import Entry, FileError, Finding, Report, one_per_place
from xlalint.engine.analysis_cache import Answer
from xlalint.engine.plan import Plan
from xlalint.engine.scan_ahead import ScanAhead
from xlalint.engine.saved_graphs import save_entry
from xlalint.engine.selection import PENDING, Produced, select
from xlalint.settings.table import Options
from xlalint.ci.shards import OWN, TEXT, ShardRun
from xlalint.source.api_table import load_table
from xlalint.source.sourcemap import Location
from xlalint.engine.static_fallback import untraced
from xlalint.engine.static import check_files
from xlalint.engine.source_pass import scan_source, scan_text
from xlalint.source.suppressions import SuppressionIndex
from xlalint.core.support import installed_tensorflow, load_support
from xlalint.core.tables import used
from xlalint.core.wire import CapturedRecord, EntryRecord, FileResult, captured_records

NOTHING_FOUND = ("no entry point found: give a tf.function an input_signature, define a Keras model "
                 "(or a zero-argument build_model() returning one), or name a function with specs: "
                 "`xlalint FILE::fn --spec \"float32[8,16]\"`")


def analyze(plan: Plan, options: Options) -> Report:
    """Check the files of ``plan`` (``xlalint.engine.plan``), each as its traced result comes in while the
    next ones trace; per-file problems become ``report.errors``, never exceptions."""
    report = plan.report
    produced: list[Produced] = []
    for path in plan.texts:
        produced += _from(report, path, map(Produced, scan_text(path, display_path(path))), TEXT)
    checked: list[str] = []
    scanned = [r["path"] for r in plan.requests if not r.get("saved_model") and r["path"] not in plan.analysed]
    ahead = ScanAhead(scanned, lambda path: by_source(path, options, static=True))
    try:
        for request, result in plan.answers():
            _analyse(report, request, result, plan, options, ahead, produced, checked)
    finally:
        ahead.stop()
    suppressions = SuppressionIndex()
    report.findings = in_cells(one_per_place(select(report, produced, options, suppressions, checked)))
    if report.shard:
        report.shard.used_comments = [(display_path(path), line) for path, line in suppressions.used()]
    report.entries = in_cells(report.entries)
    record_sources(report.sources, (f.path for f in report.findings))
    if report.tensorflow:
        report.tables = load_support(report.tensorflow).tables_used(report.tensorflow)
    return report


def _analyse(report: Report, request, result: FileResult | None, plan: Plan, options: Options, ahead: ScanAhead,
             produced: list[Produced], checked: list[str]) -> None:
    """One file's findings, traced and from its source (scanned ahead), or as stored (``result`` None), added to
    ``produced``."""
    path = request["path"]
    if result is None:
        answer = plan.analysed.pop(path)
    else:
        answer = _answer(report, request, result, plan, options, ahead)
        if plan.analyses and not result["error"]:
            plan.analyses.put(request, result.get("deps", []), answer, report.tensorflow)
    first = len(report.entries)
    report.entries += answer.entries
    report.errors += answer.errors
    produced += _from(report, path, (Produced(f, tuple(first + i for i in ids), site)
                                     for f, ids, site in answer.produced))
    if answer.checked:
        checked.append(path)


def _answer(report: Report, request, result: FileResult, plan: Plan, options: Options, ahead: ScanAhead) -> Answer:
    """What the analysis of one file adds to the run (the entries its findings count for, by their index among the
    file's own: a negative one is another file's)."""
    path = request["path"]
    first, errors = len(report.entries), len(report.errors)
    # No collection while a file is analysed: it would walk the file's records again and again (a third
    # of the analysis of a ResNet50 step); what the analysis leaves in cycles is collected after it.
    with gc_paused():
        support = load_support(report.tensorflow) if report.tensorflow else None  # a file with an error needs none
        traced = file_findings(report, result, support, options, path in plan.explicit)
        traced += captured_findings(report, captured_records(result["entries"]))
        own = traced + ([] if request.get("saved_model") else list(map(Produced, source_findings(
            path, options, result["entries"], tuple(p.finding for p in traced), ahead.take(path)))))
    answer = Answer(report.entries[first:], report.errors[errors:],
                    [(p.finding, tuple(i - first for i in p.entries), p.entry_site) for p in own],
                    checked=not request.get("saved_model") and not result["error"])
    del report.entries[first:], report.errors[errors:]
    return answer


def captured_findings(report: Report, records: list[CapturedRecord]) -> list[Produced]:
    """The captured rules' findings on what a run (``xlalint run``, or a file's import in the check command) saw of
    each captured function, counted for its entry. No records (a file whose import called no compiled function):
    no rule is asked."""
    if not records:
        return []
    entries = {(e.path, e.name, e.line): i for i, e in enumerate(report.entries)}
    sites = {r["name"]: (r["path"], r["line"]) for r in records}
    ctx = CapturedContext(tuple(records))
    produced = []
    for finding in (f for check in hooks("check_captured") for f in check(ctx)):
        site = sites.get(finding.entry)
        index = entries.get((display_path(site[0]), finding.entry, site[1])) if site else None
        produced.append(Produced(finding, () if index is None else (index,), site))
    return produced


def _from(report: Report, path: str, produced, phase: int = OWN) -> list[Produced]:
    """``produced`` by checking ``path``, which a shard's report remembers (xlalint.ci.shards)."""
    produced = list(produced)
    if report.shard:
        report.shard.produced((p.finding for p in produced), path, phase)
    return produced


def by_source(path: str, options: Options, static: bool) -> list[Finding]:
    """The source rules' findings on one file, judged for the XLA mode of each function; ``static``: the graph
    rules' by-API-name stand-ins too. Nothing for a file libcst cannot read (its error is the trace's to report;
    a deeply nested one is only traced)."""
    source = libcst_source(path)
    if source is None:
        return []
    try:
        scan = scan_source(display_path(path), source, load_table(), options.device, static=static)
    except (libcst.ParserSyntaxError, RecursionError):
        return []
    return judged_by_name(scan.findings, scan.functions, path, options.mode, options.device)


def source_findings(path: str, options: Options, entries: Sequence[Mapping[str, Any]] | None = None,
                    traced: tuple[Finding, ...] = (), found: list[Finding] | None = None) -> list[Finding]:
    """The source rules' findings (XLA4xx...): what the source says, whatever was traced (no TensorFlow);
    given the file's ``entries``, also the graph rules' by-API-name stand-ins where no traced entry
    reached (never less than ``--static``; ``traced``: the trace's findings; ``found``: ``by_source``'s, when
    made already)."""
    if found is None:
        found = by_source(path, options, static=entries is not None)
    if entries is None:
        return found
    stand_ins = [f for f in found if RULES[f.code].stage != "source"]
    return [f for f in found if RULES[f.code].stage == "source"] + untraced(stand_ins, entries, list(traced))


def static_report(paths: list[str], options: Options, texts: Mapping[str, str] | None = None) -> Report:
    """``--static``: the source pass alone, with the same selection, ignores and suppressions; ``texts`` (absolute
    path -> Python source) are read in place of those files (an editor's buffers, ``xlalint server``)."""
    report = Report(device=options.device, tensorflow=load_table()["tensorflow"], tables=used(installed_tensorflow()))
    files, report.errors = collect_files(paths, options.excluded, texts or ())
    files = ShardRun.start(report, files, options.shard, options.root)
    record_sources(report.sources, files)
    report.auto_jit = auto_jit_sites(files)
    produced: list[Produced] = []
    for entries, findings, errors in check_files(files, options.device, options.mode, texts):
        first = len(report.entries)
        report.entries.extend(entries)
        produced += [Produced(f, tuple(first + i for i, e in enumerate(entries) if e.name == f.entry))
                     for f in findings]
        report.errors.extend(errors)
    report.findings = in_cells(select(report, produced, options, SuppressionIndex(texts)))
    report.entries = in_cells(report.entries)
    record_sources(report.sources, (f.path for f in report.findings))
    return report


def file_findings(report: Report, result: FileResult, support, options: Options, explicit: bool) -> list[Produced]:
    """Add one file's entries (verdicts pending) and return their findings; a file found by a
    directory scan may have no entry."""
    file = CheckedFile.at(result["path"])
    if result["error"]:
        report.errors.append(FileError(file.shown, result["error"]))
        return []
    if not result["entries"] and explicit:
        report.errors.append(FileError(file.shown, NOTHING_FOUND, notice=True))
        return []
    produced = []
    for raw in result["entries"]:
        for covered in raw.get("covers", ()):  # checked as part of this entry; what needs no trace is said as before
            produced += _untraced_findings(covered, file, support, options, entry_facts(covered, file.path, options))
        facts = entry_facts(raw, file.path, options)
        if raw["graph"] is None:
            report.entries.append(Entry(file.shown, raw["name"], raw["line"], "unknown", raw["error"],
                                        **facts.fields()))
            produced += _untraced_findings(raw, file, support, options, facts)
            continue
        site = (file.path, raw["line"])  # a comment on the entry's own line covers its findings too
        if options.save_graphs:
            save_entry(options.save_graphs, file.path, raw, report.tensorflow)
        graph = OpGraph(raw["graph"])
        findings = entry_findings(raw, file, support, facts.for_rules(options), facts, graph)
        findings, verdict, clusters = judge_entry(facts.mode, graph, findings, support, options.device,
                                                  Location(file.path, raw["line"]))
        produced += [Produced(f, (len(report.entries),), site) for f in findings]
        report.entries.append(Entry(file.shown, raw["name"], raw["line"], "runs" if verdict == "runs" else PENDING,
                                    verify=raw.get("verify"), autocluster=clusters, ops=count_ops(graph),
                                    **facts.fields()))
    return produced


def _untraced_findings(raw: EntryRecord, file: CheckedFile, support, options: Options,
                       facts: EntryFacts) -> list[Produced]:
    """The findings of an entry that has no trace of its own: what Keras decides needs none (XLA30x);
    they count for no entry's verdict, and a comment on the entry's line covers them."""
    if not (raw.get("keras_layers") or raw.get("keras")):
        return []
    return [Produced(f, (), (file.path, raw["line"]))
            for f in entry_findings(raw, file, support, facts.for_rules(options), facts, OpGraph(NO_GRAPH))]
