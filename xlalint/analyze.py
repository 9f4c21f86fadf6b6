"""One run: files -> worker traces -> op graphs -> rules -> findings at user lines."""

from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass, field, replace
from typing import Callable

from xlalint.cache import DEFAULT_MAX_MB, ResultCache
from xlalint.checks import RULES, Context, run_checks
from xlalint.checks import xla402_xla_devices_flag, xla403_enable_jit_compile, xla801_unused_suppression
from xlalint.checks import xla901_missed_blocker, xla902_false_blocker
from xlalint.coverage import count_ops
from xlalint.files import collect_files, display_path, is_env_file, is_saved_model, precheck, read_source
from xlalint.fixes.guard import file_digest
from xlalint.fixes.split import split_suggestion
from xlalint.opgraph import OpGraph
from xlalint.results import Entry, FileError, Finding, Report
from xlalint.sourcemap import Location, column, locate
from xlalint.static.limits import refusal
from xlalint.suppressions import SuppressionIndex
from xlalint.support import installed_tensorflow, load_support
from xlalint.wire import FORMAT
from xlalint.worker_client import WorkerError, run_worker

SOURCE_CODES = frozenset(code for code, rule in RULES.items() if rule.stage == "source")
NOTHING_FOUND = ("no entry point found: give a tf.function an input_signature, define a Keras model "
                 "(or a zero-argument build_model() returning one), or name a function with specs: "
                 "`xlalint FILE::fn --spec \"float32[8,16]\"`")


# The graph of an entry that could not be traced: the rules that need no trace (XLA301) still run.
NO_GRAPH = {"format": FORMAT, "root": "-", "num_args": 0, "functions": {"-": {"inputs": [], "outputs": []}}, "nodes": []}


@dataclass
class Options:
    device: str = "gpu"
    timeout: float = 120.0
    max_memory: int = 8192  # MB of resident memory per tracing worker; 0: no limit
    select: tuple[str, ...] = tuple(RULES)  # rule codes to report
    targets: dict[str, dict[str, list[str] | None]] = field(default_factory=dict)  # path -> name -> specs
    only_named: set[str] = field(default_factory=set)  # files given only as FILE::NAME: no discovery
    save_graphs: str | None = None  # directory for each traced entry's op graph (JSON)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)  # glob (from root) -> code prefixes
    root: str = "."  # where per-file-ignores globs start (the config file's directory)
    skip_untraceable: bool = False  # named files without TensorFlow or entry points are skipped quietly
    progress: Callable[[str], None] | None = None  # told each file as tracing starts
    verify: str | None = None  # "auto", "cpu" or "gpu": also compile and run each entry there
    cache_dir: str | None = None  # where per-file results are cached; None: no cache
    cache_max_mb: int = DEFAULT_MAX_MB  # least recently used results go beyond this; 0: no limit
    jobs: int = 1  # tracing workers run in parallel
    mode: str = "jit"  # "autocluster": also predict TensorFlow's auto-clustering per entry

    def ignored(self, path: str, code: str) -> bool:
        rel = os.path.relpath(os.path.abspath(path), self.root)
        return any(fnmatch.fnmatch(rel, glob) and any(code.startswith(p) for p in prefixes)
                   for glob, prefixes in self.per_file_ignores.items())


def _findings_for_entry(raw: dict, path: str, support, options: Options, graph: OpGraph | None = None) -> list[Finding]:
    graph = graph if graph is not None else OpGraph(raw["graph"])
    ctx = Context(support, options.device, raw["name"], tuple(raw["signature"]), raw["kind"],
                  tuple(raw.get("keras_layers", ())))
    fallback = Location(path, raw["line"])
    findings = _rule_findings(graph, ctx, raw, fallback, options)
    if raw["kind"] == "tf.function" and raw.get("jit_compile") is not True and \
            not any(f.severity == "error" for f in findings):
        findings += _offer_jit_compile(raw, path, options)
    if raw.get("jit_compile") is True:
        findings = _with_split_suggestion(findings, path, raw["line"])
    if raw.get("verify"):
        for disagreement in (xla901_missed_blocker.check, xla902_false_blocker.check):
            findings += disagreement(graph, raw["name"], raw["verify"], findings, fallback, display_path)
    return findings


def _with_split_suggestion(findings: list[Finding], path: str, def_line: int) -> list[Finding]:
    """Under jit_compile=True there is no escape hatch: say how to split the function."""
    here = display_path(path)
    blockers = {f.line for f in findings if f.severity == "error" and f.path == here}
    source = _libcst_source(path) if blockers else None
    try:
        suggestion = split_suggestion(source, def_line, blockers) if source else None
    except RecursionError:  # nested calls: libcst's copy of the tree follows fewer levels than its scan
        suggestion = None
    if not suggestion:
        return findings
    return [replace(f, hint=f"{f.hint} Inside jit_compile=True nothing can opt out of XLA: {suggestion}.")
            if f.severity == "error" and f.path == here else f for f in findings]


def _libcst_source(path: str) -> str | None:
    """The file's text for a libcst pass, or None where the pass cannot be run (or would not end soon)."""
    source, error = read_source(path)
    return None if error or refusal(source) else source


def _rule_findings(graph: OpGraph, ctx: Context, raw: dict, fallback: Location, options: Options) -> list[Finding]:
    findings = {}
    for hit in run_checks(graph, ctx, options.select):
        rule = RULES[hit.code]
        node = graph.node(hit.node) if hit.node else None
        where = locate(graph, node, fallback) if node else Location(*hit.site) if hit.site else fallback
        message = f"{hit.message} ({where.note})" if where.note else hit.message
        finding = rule.finding(message, hit.hint, display_path(where.path), where.line,
                               column(where.path, where.line, hit.api), raw["name"], node)
        findings.setdefault((finding.code, finding.path, finding.line, finding.op_type, finding.message), finding)
    return list(findings.values())


def analyze(paths: list[str], options: Options) -> Report:
    """Check ``paths``; per-file problems become ``report.errors``, never exceptions."""
    report = Report(device=options.device)
    files, report.errors = collect_files(paths)
    _record_sources(report.sources, files)
    explicit = set() if options.skip_untraceable else (
        {os.path.abspath(p) for p in paths if os.path.isfile(p)} | set(options.targets))
    requests = []
    suppressions = SuppressionIndex()
    for path in files:
        if is_env_file(path) and not path.endswith(".py"):
            report.findings.extend(f for f in env_findings(path) if keep(f, options, suppressions))
            continue
        if is_saved_model(path):
            requests.append({"path": path, "saved_model": True, "targets": [], "discover": True})
            continue
        error, skip = precheck(path, path in explicit)
        if error:
            report.errors.append(FileError(display_path(path), error))
        elif not skip:
            targets = options.targets.get(path, {})
            requests.append({"path": path, "targets": [{"name": n, "specs": s} for n, s in targets.items()],
                             "discover": path not in options.only_named,
                             "verify": options.verify and {"device": None if options.verify == "auto" else options.verify}})
    if not requests:
        return report
    tensorflow = installed_tensorflow()
    cache = ResultCache(options.cache_dir, tensorflow, options.cache_max_mb) if options.cache_dir else None
    results = {r["path"]: cache.get(r) for r in requests} if cache else {}
    missing = [r for r in requests if results.get(r["path"]) is None]
    if missing:
        try:
            if hasattr(options.progress, "expect"):
                options.progress.expect(len(missing))  # "[i/n]" lines need n
            traced = run_worker(missing, options.timeout, options.progress, options.jobs, options.max_memory)
            if hasattr(options.progress, "done"):
                options.progress.done()
        except WorkerError as error:
            message = str(error)
            if "TensorFlow cannot be imported" in message:
                message = ("TensorFlow is not installed or cannot be imported; install it with "
                           f"`pip install 'xlalint[tf]'` or your own TensorFlow build ({message})")
            report.errors.extend(FileError(display_path(r["path"]), message) for r in requests)
            return report
        tensorflow = traced.tensorflow
        results.update(traced.files)
        for request in missing:
            if cache:
                cache.put(request, traced.files[request["path"]])
    report.tensorflow = tensorflow
    support = load_support(tensorflow)
    for request in requests:
        result = results[request["path"]]
        _collect_file(report, result, support, options, request["path"] in explicit, suppressions)
        if not request.get("saved_model"):
            report.findings.extend(source_findings(request["path"], options, suppressions))
        if not result["error"] and not request.get("saved_model"):
            report.findings.extend(_unused_suppressions(request["path"], suppressions, options))
    _record_sources(report.sources, (f.path for f in report.findings))
    return report


def _record_sources(sources: dict[str, str], paths) -> None:
    """SHA-256 of each file's bytes, first as analysis reads it: --fix leaves a file that changed since alone.

    Checked files are hashed before tracing; files only imported (outside the checked paths) when
    their findings are placed."""
    for path in map(os.path.abspath, paths):
        if path not in sources and (digest := file_digest(path)):
            sources[path] = digest


def _offer_jit_compile(raw: dict, path: str, options: Options) -> list[Finding]:
    if "XLA403" not in options.select:
        return []
    return [xla403_enable_jit_compile.offer(raw["name"], display_path(path), raw["line"])]


def _autocluster(graph: OpGraph, support, options: Options, fallback: Location) -> dict:
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


def env_findings(path: str) -> list[Finding]:
    """XLA402 in a shell script or Dockerfile (unreadable ones have nothing to say)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return xla402_xla_devices_flag.scan_env_file(display_path(path), handle.read())
    except (OSError, UnicodeDecodeError):
        return []


def _with_jit_scope_fix(finding: Finding) -> Finding:
    """Under auto-clustering an unsupported op can be left out: offer the narrowest jit_scope."""
    if finding.code != "XLA001" or finding.fix or not finding.path.endswith(".py"):
        return finding
    return replace(finding, fix=RULES["XLA001"].fix.to_json())


def keep(finding: Finding, options: Options, suppressions: SuppressionIndex) -> bool:
    """Selected, not ignored for its file, and not suppressed by a comment."""
    return (finding.code in options.select and not options.ignored(finding.path, finding.code)
            and not suppressions.suppressed(finding.path, finding.line, finding.code))


def source_findings(path: str, options: Options, suppressions: SuppressionIndex) -> list[Finding]:
    """XLA107/XLA401/XLA402: what the source says, whatever was traced (the libcst pass, no TensorFlow)."""
    import libcst

    from xlalint.static.api_table import load_table
    from xlalint.static.scan import scan_source

    source = _libcst_source(path)
    if source is None:
        return []  # the file's own error is reported by the traced run; a deeply nested one is only traced
    try:
        scan = scan_source(display_path(path), source, load_table(), options.device)
    except (libcst.ParserSyntaxError, RecursionError):
        return []
    return [f for f in scan.findings if f.code in SOURCE_CODES and keep(f, options, suppressions)]


def _unused_suppressions(path: str, suppressions: SuppressionIndex, options: Options) -> list[Finding]:
    if "XLA801" not in options.select:
        return []
    return xla801_unused_suppression.unused(path, display_path(path), suppressions, options.select)


def static_report(paths: list[str], options: Options) -> Report:
    """``--static``: the libcst pass alone, with the same selection, ignores and suppressions."""
    from xlalint.static import run_static

    sources: dict[str, str] = {}
    _record_sources(sources, collect_files(paths)[0])
    report = run_static(paths, options.device)
    _record_sources(sources, (f.path for f in report.findings))
    report.sources = sources
    suppressions = SuppressionIndex()
    report.findings = [f for f in report.findings if keep(f, options, suppressions)]
    blocked = {(f.path, f.entry) for f in report.findings if f.severity == "error"}
    report.entries = [replace(e, verdict="incompatible" if (e.path, e.name) in blocked else "compatible")
                      for e in report.entries]
    return report


def save_entry(directory: str, path: str, raw: dict, tensorflow: str) -> None:
    """Write a traced entry (graph included) so rules can be rerun on it without TensorFlow.

    Source paths are written as ``display_path`` gives them (relative to the working directory).
    """
    os.makedirs(directory, exist_ok=True)
    stem = os.path.splitext(display_path(path))[0].strip(os.sep).replace(os.sep, "__")
    target = os.path.join(directory, f"{stem}.{raw['name']}.json")
    nodes = [{**node, "frames": [[display_path(f), line, fn] for f, line, fn in node["frames"]],
              "layer": node["layer"] and {**node["layer"], "file": display_path(node["layer"]["file"])}}
             for node in raw["graph"]["nodes"]]
    layers = [{**layer, "file": layer["file"] and display_path(layer["file"])} for layer in raw.get("keras_layers", ())]
    saved = {**raw, "graph": {**raw["graph"], "nodes": nodes}, "keras_layers": layers,
             "path": display_path(path), "tensorflow": tensorflow}
    with open(target, "w", encoding="utf-8") as out:
        json.dump(saved, out, indent=None, separators=(",", ":"))


def findings_for_traced_entry(raw: dict, path: str, tensorflow: str, options: Options) -> list[Finding]:
    """The rules' findings on one traced entry, e.g. one written by ``save_entry`` (no TensorFlow needed)."""
    return _findings_for_entry(raw, path, load_support(tensorflow), options)


def _collect_file(report: Report, result: dict, support, options: Options, explicit: bool,
                  suppressions: SuppressionIndex) -> None:
    """Add one file's entries and findings; a file found by a directory scan may have no entry."""
    path = display_path(result["path"])
    if result["error"]:
        report.errors.append(FileError(path, result["error"]))
        return
    if not result["entries"] and explicit:
        report.errors.append(FileError(path, NOTHING_FOUND))
        return
    for raw in result["entries"]:
        if raw["graph"] is None:
            report.entries.append(Entry(path, raw["name"], raw["line"], "unknown", raw["error"],
                                        jit_compile=raw.get("jit_compile")))
            if raw.get("keras_layers"):  # what Keras decides needs no trace (XLA301)
                report.findings.extend(
                    f for f in _findings_for_entry(raw, result["path"], support, options, OpGraph(NO_GRAPH))
                    if keep(f, options, suppressions))
            continue
        if options.save_graphs:
            save_entry(options.save_graphs, result["path"], raw, report.tensorflow)
        graph = OpGraph(raw["graph"])
        findings = [f for f in _findings_for_entry(raw, result["path"], support, options, graph)
                    if keep(f, options, suppressions)
                    and not suppressions.suppressed(result["path"], raw["line"], f.code)]
        blocked = any(f.severity == "error" for f in findings)
        clusters = None
        if options.mode == "autocluster":
            clusters = _autocluster(graph, support, options, Location(result["path"], raw["line"]))
            findings = [_with_jit_scope_fix(f) for f in findings]
        report.entries.append(Entry(path, raw["name"], raw["line"], "incompatible" if blocked else "compatible",
                                    verify=raw.get("verify"), autocluster=clusters, ops=count_ops(graph),
                                    jit_compile=raw.get("jit_compile")))
        report.findings.extend(findings)
